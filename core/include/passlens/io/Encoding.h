#pragma once
/// @file Encoding.h
/// SHA-256 and base64 through OpenSSL's libcrypto (session files: the source's digest, large
/// constants embedded as base64).
#include <filesystem>
#include <string>
#include <string_view>

namespace passlens {

/// Lower-case hex SHA-256 of a file's bytes. Throws passlens::Error when it cannot be read.
std::string sha256File(const std::filesystem::path& path);
std::string base64Encode(std::string_view bytes);
/// Throws passlens::Error("invalid base64") for malformed text.
std::string base64Decode(std::string_view text);

} // namespace passlens
