#include "passlens/pipeline/OpenAndOptimize.h"

#include "passlens/io/GraphLoader.h"
#include "passlens/io/SessionFile.h"

namespace passlens {

bool isPipelineFile(const std::string& nameOrFile) {
    return nameOrFile.find(".json") != std::string::npos || nameOrFile.find('/') != std::string::npos;
}

Pipeline makePipeline(const PipelineRequest& request) {
    Pipeline p =
        isPipelineFile(request.pipeline) ? Pipeline::fromFile(request.pipeline) : Pipeline::builtin(request.pipeline);
    for (const auto& t : request.include) p.include(t);
    for (const auto& t : request.exclude) p.exclude(t);
    for (const auto& d : request.disabled) p.setEnabled(d, false);
    for (const auto& [phase, position] : request.moves) p.move(phase, position);
    return p;
}

OptimizedGraph optimizeGraph(std::unique_ptr<FunctionGraph> graph, const PipelineRequest& request) {
    const Pipeline p = makePipeline(request);
    OptimizedGraph out;
    out.trace = std::make_unique<Trace>(request.reasons);
    out.run = p.run(*graph, out.trace.get(), request.validate, request.cancel);
    out.trace->finish(out.run, *graph, p.buildContext().caps);
    out.graph = std::move(graph);
    return out;
}

OpenedTrace openAndOptimize(const std::filesystem::path& file, const PipelineRequest& request, bool pipelineGiven,
                            const std::function<void(const FunctionGraph& source)>& sourceLoaded) {
    OpenedTrace in;
    if (sniffFileKind(file) == FileKind::Session) {
        // either format (compact version 2 or FORMAT.md §2's JSON); the window's state comes back
        in.trace = std::make_unique<Trace>(SessionFile::load(file));
        if (in.trace->view().is_object()) in.view = in.trace->view();
        in.fromSession = true;
        in.pipeline = in.trace->pipelineName();
        in.sourcePath = in.trace->sourcePath().empty() ? file.string() : in.trace->sourcePath();
        if (pipelineGiven && request.pipeline != in.pipeline)
            in.warnings.push_back(file.string() + ": a session holds its pipeline ('" + in.pipeline +
                                  "'); --pipeline " + request.pipeline + " ignored");
        return in;
    }
    LoadedGraph loaded = loadGraphFile(file);
    if (sourceLoaded) sourceLoaded(*loaded.graph);
    OptimizedGraph optimized = optimizeGraph(std::move(loaded.graph), request);
    in.trace = std::move(optimized.trace);
    in.finalGraph = std::move(optimized.graph);
    in.pipeline = optimized.run.pipeline;
    in.run = std::move(optimized.run);
    in.sourcePath = file.string();
    in.warnings = std::move(loaded.warnings);
    return in;
}

} // namespace passlens
