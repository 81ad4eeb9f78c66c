#pragma once
/// @file Encoding.h
/// SHA-256 and base64 through OpenSSL's libcrypto (session files: the source's digest, large
/// constants embedded as base64); UTF-8 validity of names read from binary formats.
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

namespace passlens {

/// Lower-case hex SHA-256 of a file's bytes. Throws passlens::Error when it cannot be read.
std::string sha256File(const std::filesystem::path& path);
std::string base64Encode(std::string_view bytes);
/// Throws passlens::Error("invalid base64") for malformed text.
std::string base64Decode(std::string_view text);

/// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points above
/// U+10FFFF), the only text nlohmann::json can write (else it throws type_error 316).
bool isValidUtf8(std::string_view s);
/// `s` with each byte that does not start a well-formed UTF-8 sequence written as `\xNN`
/// (two upper-case hex digits); valid text is returned unchanged. Used for names read from ONNX
/// files, whose protobuf strings are not checked.
std::string escapeInvalidUtf8(std::string_view s);
/// The code point of the well-formed UTF-8 sequence at s[i] (isValidUtf8's rule) and its length
/// in bytes; length 0 when s[i] starts none.
std::pair<char32_t, std::size_t> utf8CodePointAt(std::string_view s, std::size_t i);
/// Appends code point `cp` (at most U+10FFFF) to `out` as UTF-8.
void appendUtf8(std::string& out, char32_t cp);
/// `s` in double quotes as a C / JSON string literal would show it: `"` and `\` escaped, \n,
/// \t, \r, other control bytes and bytes that do not start well-formed UTF-8 as `\xNN`
/// (elements of string tensors: printed values, the inspector's and the CLI's output).
std::string quotedText(std::string_view s);

} // namespace passlens
