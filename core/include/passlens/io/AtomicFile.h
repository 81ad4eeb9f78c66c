#pragma once
/// @file AtomicFile.h
/// Reading input files and writing outputs atomically (docs/RELIABILITY.md).
///
/// Writes go to a temporary file `.NAME.tmp<pid>.<n>` beside the file they replace, are flushed
/// to disk, then renamed over it, so a reader never sees a half-written file and a failed write
/// leaves the old file intact. A symlink at the output path stays a symlink (its target is
/// written, atomically beside the target); an existing file keeps its permission bits; a
/// character device or a FIFO with a reader is written directly, never replaced. Temporary
/// files in flight are removed when SIGINT, SIGTERM, SIGHUP or SIGXFSZ ends the process, and
/// a leftover of a killed run (its process gone, older than ten minutes) is removed by the
/// next write of the same file.
#include <filesystem>
#include <string>
#include <string_view>

namespace passlens {

/// Writes `bytes` to `path` atomically. Throws passlens::Error("PATH: cannot write: reason"),
/// e.g. for a directory, a socket or a FIFO without a reader at `path`.
void writeFileAtomic(const std::filesystem::path& path, std::string_view bytes);

/// Throws passlens::Error("PATH: no such file") or ("PATH: is a FIFO (named pipe), not a
/// regular file") unless `path` (symlinks followed) is a regular file. Never blocks.
void requireRegularFile(const std::filesystem::path& path);

/// Reads a whole regular file without blocking on a FIFO or device. Throws
/// passlens::Error("PATH: cannot read: reason") or the messages of requireRegularFile.
std::string readFile(const std::filesystem::path& path);

} // namespace passlens
