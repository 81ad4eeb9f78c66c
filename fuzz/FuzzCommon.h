#pragma once
/// @file FuzzCommon.h
/// What every PassLens fuzz target checks besides the sanitizers: a reader given bad input
/// throws passlens::Error whose text names the file and carries no raw library text (RELIABILITY.md,
/// "Reading"). Any other exception escapes LLVMFuzzerTestOneInput and libFuzzer reports it as a
/// crash ("deadly signal" after std::terminate).
#include <passlens/ir/Error.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unistd.h>

namespace passlens::fuzz {

/// Limits low enough for libFuzzer's -rss_limit_mb=2048 / -malloc_limit_mb: a tensor described
/// by the input is refused above 64 MiB (the reader's own check, PASSLENS_MAX_TENSOR_BYTES).
inline void setFuzzLimits() { ::setenv("PASSLENS_MAX_TENSOR_BYTES", "64M", 1); }

/// The file a target that reads paths writes each input to: one per process, in memory-backed
/// /dev/shm where it exists (else /tmp), named passlens-fuzz-PID + `suffix`.
inline std::filesystem::path scratchFile(const std::string& suffix) {
    const std::filesystem::path dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    return dir / ("passlens-fuzz-" + std::to_string(::getpid()) + suffix);
}

/// Aborts (a libFuzzer finding) when an error message does not start with `label` or shows raw
/// library text that is not in the input itself (messages quote the input).
inline void checkMessage(const passlens::Error& e, std::string_view label, std::string_view input) {
    const std::string_view m = e.what();
    const bool named = m.substr(0, label.size()) == label;
    bool raw = false;
    for (const std::string_view library : {"json.exception", "std::", "basic_string"})
        raw = raw || (m.find(library) != std::string_view::npos && input.find(library) == std::string_view::npos);
    if (!named || raw) {
        std::fprintf(stderr, "fuzz: bad error message (%s): %s\n",
                     named ? "raw library text" : "does not name the file", e.what());
        std::abort();
    }
}

} // namespace passlens::fuzz
