#pragma once
/// @file AtomicFile.h
/// Atomic file writes for exports and saves: the bytes go to a temporary file in the same
/// folder, are flushed to disk, then renamed over the target, so a reader never sees a
/// half-written file and a failed write leaves the old file intact.
#include <filesystem>
#include <string>
#include <string_view>

namespace passlens {

/// Writes `bytes` to `path` atomically. Throws passlens::Error("PATH: cannot write: reason").
void writeFileAtomic(const std::filesystem::path& path, std::string_view bytes);

/// Reads a whole file. Throws passlens::Error("PATH: cannot read: reason").
std::string readFile(const std::filesystem::path& path);

} // namespace passlens
