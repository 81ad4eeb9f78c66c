#pragma once
/// @file Inspect.h
/// The listing and statistics of `passlens-cli inspect` (CLI.md), shared by the CLI and the GUI.
#include "passlens/io/GraphJson.h"
#include "passlens/ir/DebugPrint.h"

#include <nlohmann/json.hpp>

#include <string>

namespace passlens {

/// `{"file", "format", "name", "nodes", "inputs": [{"name","type"}], "outputs": [...],
/// "constants", "constant_bytes", "op_counts": {kind: n}, "toposort": [kind...],
/// "transfers", "subgraphs", "fingerprint", "warnings": [...]}`. `nodes` counts the top-level
/// graph's Apply nodes; nested graphs are counted in `subgraph_nodes`.
nlohmann::json inspectJson(const LoadedGraph& loaded, const std::string& file);

/// Human listing: a header with counts, the debugprint of the graph (and of nested graphs
/// after it, as Theano prints inner graphs) to `depth` (DebugPrintOptions::depth; by default
/// the whole graph while that takes at most kDebugPrintFullBytes, else depth
/// kDebugPrintLargeDepth, with a note under a listing that was cut), and the op-kind histogram.
/// Linear in the graph.
std::string inspectText(const LoadedGraph& loaded, const std::string& file, bool printTypes,
                        int depth = DebugPrintOptions::kAutoDepth);

} // namespace passlens
