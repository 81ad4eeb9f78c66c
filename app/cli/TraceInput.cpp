#include "TraceInput.h"

#include <filesystem>
#include <iostream>

namespace passlens::cli {

OpenedTrace openTrace(const std::string& file, const std::string& pipeline, bool pipelineGiven) {
    PipelineRequest request;
    request.pipeline = pipeline;
    OpenedTrace in = openAndOptimize(file, request, pipelineGiven);
    for (const auto& w : in.warnings) std::cerr << "warning: " << w << "\n";
    if (in.run)
        for (const auto& m : in.run->messages) std::cerr << "warning: " << m << "\n";
    return in;
}

std::string sourceLabel(const OpenedTrace& in) { return std::filesystem::path(in.sourcePath).filename().string(); }

} // namespace passlens::cli
