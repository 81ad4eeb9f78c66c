#pragma once
/// @file JsonFile.h
/// The one JSON reader of every JSON file PassLens reads (graph JSON, session, pipeline and
/// profile files): a syntax error or a nesting past kJsonMaxDepth becomes a passlens::Error
/// naming the file and the place, never a library message or a stack overflow.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace passlens {

/// Parses `text`. Throws passlens::Error("LABEL: byte N: invalid JSON: reason") for a syntax
/// error and ("LABEL: nodes[0].attrs.a.a...: JSON nested deeper than 256 levels ...") when arrays
/// and objects nest deeper than kJsonMaxDepth (Limits.h); the place is where the limit is passed.
nlohmann::json parseJson(const std::string& text, const std::string& label);

/// readFile (a regular file only) then parseJson, with the path as the label.
nlohmann::json readJsonFile(const std::filesystem::path& path);

/// The reason of a nlohmann::json exception without the library's "[json.exception.X.N] "
/// prefix, e.g. "type must be string, but is number", for a message that names file and place.
std::string jsonErrorReason(const nlohmann::json::exception& e);

} // namespace passlens
