#pragma once
/// @file TraceSteps.h
/// Naming the steps of a trace (CLI.md: a phase name, `source`, `final`, or an event number) and
/// rebuilding their graphs, for drawing a step or the diff between two steps.
#include "passlens/trace/Trace.h"

#include <memory>
#include <string>
#include <vector>

namespace passlens {

/// One step of a trace: the graph right after `event` (0 = the source graph).
struct TraceStep {
    enum class Kind { Source, Phase, Event, Final };
    Kind kind = Kind::Source;
    std::string name;  ///< phase name, "source", "final", or the event's rewriter
    int event = 0;     ///< the graph is the source with applied events 1..event
    int fromEvent = 0; ///< the step's own changes are the events in (fromEvent, event]
    int index = 0;     ///< k of "step k of N": phase index (1-based; source 0, final N) or event seq
    int count = 0;     ///< N: phases, or events for event steps
    /// "phase gpuarray_opt", "source", "final", "event 17 (local_cut_gpu_transfers, phase gpuarray_opt)".
    std::string label() const;
};

/// Parses a step: `source`, `final`, a phase name of the trace, or an event number (`17`,
/// `#17`, `event:17`). Throws passlens::Error naming the valid phases, or the valid event range.
TraceStep resolveStep(const Trace& trace, const std::string& spec);

/// A phase step by index into trace.phases().
TraceStep phaseStep(const Trace& trace, std::size_t phaseIndex);

/// The graph of a step. Throws passlens::Error when the events do not replay.
std::unique_ptr<FunctionGraph> graphAt(const Trace& trace, const TraceStep& step);

/// Nodes added by the applied events in (fromEvent, toEvent], ascending, without duplicates.
std::vector<NodeId> nodesAddedBetween(const Trace& trace, int fromEvent, int toEvent);

/// Where the applied events in (fromEvent, toEvent] changed `after` (the graph after toEvent, with
/// its removed nodes: Trace::graphAfter), ascending, without duplicates: the nodes they added
/// (nodesAddedBetween); when they added none but removed some (a transfer pair cut, a node
/// merged into an equal one), the surviving neighbours of what they removed: the producers of
/// the removed nodes' inputs, the producers of their replacements and the nodes that consume
/// the replacements. Empty when the events changed nothing. The seeds of a step's focused view.
std::vector<NodeId> changedRegion(const Trace& trace, const FunctionGraph& after, int fromEvent, int toEvent);

/// Splits "A..B" into its two sides. Throws passlens::Error("--diff: expected A..B") otherwise.
std::pair<std::string, std::string> splitDiffSpec(const std::string& spec);

} // namespace passlens
