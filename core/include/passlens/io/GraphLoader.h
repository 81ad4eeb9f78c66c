#pragma once
/// @file GraphLoader.h
/// Opens any file PassLens reads (CLI.md: FILE), recognised by content, not extension.
#include "passlens/io/GraphJson.h"

#include <filesystem>

namespace passlens {

/// What a file holds, judged from its first bytes.
enum class FileKind { GraphJson, Session, Onnx, Unknown };

/// Loads an ONNX model, a graph JSON or a session file (its source graph). Throws
/// passlens::Error naming the file, the place and the reason for an empty file, a file of
/// another format (HTML, random bytes), invalid JSON or a bad graph; nothing half-loaded.
LoadedGraph loadGraphFile(const std::filesystem::path& path);

/// The kind of file by content ('{' starts JSON; otherwise ONNX protobuf is assumed).
FileKind sniffFileKind(const std::filesystem::path& path);

} // namespace passlens
