#pragma once
/// @file OpenAndOptimize.h
/// The one "open a file and run a pipeline" use case of the CLI (`optimize`, `render`, `report`,
/// `run`), the window (open, re-run) and the window's pipeline comparison: choosing the pipeline
/// (a built-in name or a pipeline file), running it on a graph with a Trace, and reopening a
/// session file instead of running anything.
#include "passlens/pipeline/Pipeline.h"
#include "passlens/trace/Trace.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// True when the `--pipeline` argument names a pipeline file (FORMAT.md §3) rather than a
/// built-in pipeline: it contains ".json" or a '/'.
bool isPipelineFile(const std::string& nameOrFile);

/// Which pipeline to run and how (CLI `--pipeline`, `--include`, `--exclude`; the window's
/// unchecked and moved phases).
struct PipelineRequest {
    std::string pipeline = "theano";     ///< built-in name or pipeline file (isPipelineFile)
    std::vector<std::string> include;    ///< Pipeline::include, in order
    std::vector<std::string> exclude;    ///< Pipeline::exclude, in order
    std::vector<std::string> disabled;   ///< phases that do not run (Pipeline::setEnabled)
    std::map<std::string, double> moves; ///< phase -> new position (Pipeline::move)
    bool reasons = false;                ///< record declined attempts (Trace's recordDeclined)
    bool validate = false;               ///< validate the graph after every phase
    /// Polled by the run (Pipeline::run): once cancelled, optimizeGraph and openAndOptimize
    /// throw Cancelled and return nothing. Null: never cancelled. Must outlive the call.
    const CancelToken* cancel = nullptr;
};

/// The pipeline a request names, with its includes, excludes, disabled phases and moves applied.
/// Throws passlens::Error for an unknown built-in name ("unknown pipeline ...") or a bad pipeline
/// file ("FILE: FIELD: reason", Pipeline::fromFile), or an unknown phase to move.
Pipeline makePipeline(const PipelineRequest& request);

/// A pipeline run on a graph, recorded.
struct OptimizedGraph {
    std::unique_ptr<Trace> trace;         ///< finished (Trace::finish) with the pipeline's capabilities
    std::unique_ptr<FunctionGraph> graph; ///< the graph after the last phase
    PipelineRun run;                      ///< its `messages` hold max_use aborts and failed phases
};

/// Runs the requested pipeline on `graph` (which becomes OptimizedGraph::graph) with a new
/// Trace. Throws passlens::Error as makePipeline does, Cancelled when request.cancel is
/// cancelled; a phase that fails is a run message.
OptimizedGraph optimizeGraph(std::unique_ptr<FunctionGraph> graph, const PipelineRequest& request);

/// FILE opened for debugging: a session reopened as it was recorded, or a model / graph JSON
/// loaded and optimized.
struct OpenedTrace {
    std::unique_ptr<Trace> trace;
    /// The graph after the pipeline; null for a session (Trace::graphAfterPhase("final") replays it).
    std::unique_ptr<FunctionGraph> finalGraph;
    std::optional<PipelineRun> run; ///< the run; none for a session
    std::string pipeline;           ///< the pipeline's name (a session's own)
    std::string sourcePath;         ///< the model the trace started from: FILE, or the session's source
    bool fromSession = false;
    /// The loader's warnings (ONNX import notes) and, for a session, that the requested
    /// pipeline is ignored; run messages stay in `run`.
    std::vector<std::string> warnings;
    /// A session's optional "view" object (the window's step, FORMAT.md §2 extension); null when
    /// absent or for a model.
    nlohmann::json view;
};

/// Opens FILE by content (GraphLoader's sniffFileKind): a session is reopened (its recorded
/// pipeline; `pipelineGiven` adds a warning when the request names another one); an ONNX model or
/// graph JSON is loaded and optimized with the request. Throws passlens::Error naming FILE, the
/// place and the reason ("FILE: no such file", "FILE: byte 0: not an ONNX model, ...",
/// "FILE: events[3]...: ...") or the pipeline file; nothing half-loaded is returned.
/// `sourceLoaded`, when set, is called on the calling thread with the loaded graph before the
/// pipeline runs on it (not for a session): the window draws a copy of the source meanwhile.
/// The graph is valid only during the call.
OpenedTrace openAndOptimize(const std::filesystem::path& file, const PipelineRequest& request,
                            bool pipelineGiven = false,
                            const std::function<void(const FunctionGraph& source)>& sourceLoaded = {});

} // namespace passlens
