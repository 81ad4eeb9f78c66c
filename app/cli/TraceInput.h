#pragma once
// Opening FILE for render / report: a session is reopened (Trace::load); a model or graph is
// optimized with the named pipeline first, as `optimize` does.
#include <passlens/trace/Trace.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace passlens::cli {

struct TraceInput {
    Trace trace;
    std::string sourcePath;  ///< the model the trace started from (FILE, or the session's source)
    std::string sourceLabel; ///< its file name, for captions
    std::string pipeline;
    bool fromSession = false;
    std::vector<std::string> warnings;
};

/// Throws passlens::Error naming FILE for anything that cannot be read or optimized.
TraceInput openTrace(const std::string& file, const std::string& pipeline, bool pipelineGiven);

} // namespace passlens::cli
