#include "TraceInput.h"

#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/pipeline/Pipeline.h>

#include <filesystem>

namespace passlens::cli {

TraceInput openTrace(const std::string& file, const std::string& pipeline, bool pipelineGiven) {
    TraceInput in;
    if (!std::filesystem::exists(file)) throw Error(file + ": no such file");
    if (sniffFileKind(file) == FileKind::Session) {
        in.trace = Trace::load(file);
        in.fromSession = true;
        in.pipeline = in.trace.pipelineName();
        in.sourcePath = in.trace.sourcePath().empty() ? file : in.trace.sourcePath();
        if (pipelineGiven && pipeline != in.pipeline)
            in.warnings.push_back(file + ": a session holds its pipeline ('" + in.pipeline + "'); --pipeline " +
                                  pipeline + " ignored");
    } else {
        LoadedGraph loaded = loadGraphFile(file);
        in.warnings = loaded.warnings;
        const bool isFile = pipeline.find(".json") != std::string::npos || pipeline.find('/') != std::string::npos;
        const Pipeline p = isFile ? Pipeline::fromFile(pipeline) : Pipeline::builtin(pipeline);
        FunctionGraph& g = *loaded.graph;
        const PipelineRun run = p.run(g, &in.trace);
        in.trace.finish(run, g, p.buildContext().caps);
        in.pipeline = p.name();
        in.sourcePath = file;
        for (const auto& m : run.messages) in.warnings.push_back(m);
    }
    in.sourceLabel = std::filesystem::path(in.sourcePath).filename().string();
    return in;
}

} // namespace passlens::cli
