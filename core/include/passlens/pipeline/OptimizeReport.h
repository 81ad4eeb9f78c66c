#pragma once
/// @file OptimizeReport.h
/// What `passlens-cli optimize` prints (CLI.md), shared with the GUI: the JSON document and the
/// human text with Theano's optimizer profile (THEANO_SEMANTICS §3.9).
#include "passlens/pipeline/Pipeline.h"
#include "passlens/trace/Trace.h"

#include <nlohmann/json.hpp>

namespace passlens {

/// `{"pipeline", "phases": [...], "final": {"nodes", "op_counts", "toposort", "transfers"},
/// "rewriters": [...], "lifting": [...], "events", "messages"}`. A phase that stopped before
/// its fixed point (an Equilibrium on max_use) carries `"converged": false`.
nlohmann::json optimizeJson(const PipelineRun& run, const FunctionGraph& finalGraph, const Trace& trace);
/// Phase table, the optimizer profile, the nodes left on the host with their reasons, the final
/// graph's op counts and transfers.
std::string optimizeText(const PipelineRun& run, const FunctionGraph& finalGraph, const Trace& trace);

} // namespace passlens
