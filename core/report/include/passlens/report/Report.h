#pragma once
/// @file Report.h
/// The browsable report of a trace (CLI.md `report`), shared by passlens-cli and the window: the
/// session file, one SVG per changed phase and per diff between consecutive changed steps, the
/// timing overlay of the final graph when a profile is given, and a self-contained index.html
/// (no network; works from disk) that steps through them with previous / next.
#include <passlens/trace/ExecutionProfile.h>
#include <passlens/trace/Trace.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

struct ReportOptions {
    std::filesystem::path sourcePath; ///< the model the trace started from (recorded in the session)
    std::string sourceLabel;          ///< its file name, for captions
    std::string pipeline;
    double budgetSeconds = 10;                         ///< layout budget per figure
    std::optional<ExecutionProfile> profile;           ///< a profile of the final graph (its timing figure)
    std::function<void(int step, int steps)> progress; ///< called per step (any thread)
};

struct ReportResult {
    std::vector<std::string> files; ///< written, in order
    std::size_t steps = 0;          ///< the source plus the changed phases
    int failures = 0;               ///< figures that could not be drawn (see warnings)
    std::vector<std::string> warnings;
};

/// Writes the report into `dir` (created). Every file is written atomically. Throws
/// passlens::Error naming the output path when the folder cannot be created or written, or the
/// trace does not replay; then the folders it created are removed (or, in a folder that was
/// there before, the files it wrote), so no report without index.html is left. A figure that
/// Graphviz cannot draw is a warning and a failure count, not an error.
ReportResult writeReport(const Trace& trace, const std::filesystem::path& dir, const ReportOptions& opt);

} // namespace passlens
