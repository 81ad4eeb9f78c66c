#pragma once
/// @file GraphDiff.h
/// The difference between two graphs of one trace (ARCHITECTURE.md core/diff), by stable node id:
/// which nodes were added, removed, rewired (same id, different inputs) or left unchanged, which
/// transfers were added or cut, and how many bytes cross between host and GPU per run before and
/// after. Plain data; no Graphviz (core/layout draws it).
#include "passlens/ir/FunctionGraph.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace passlens {

/// How a node differs between `before` and `after`.
enum class NodeChange : std::uint8_t {
    Unchanged, ///< in both graphs with the same op and the same input variables
    Added,     ///< only in `after`
    Removed,   ///< only in `before`
    Rewired,   ///< in both, but its inputs are other variables (or, for unrelated graphs, its op differs)
};

/// "unchanged", "added", "removed", "rewired".
const char* nodeChangeName(NodeChange c);

/// Bytes that transfer nodes move per run of a graph, from the static types of their outputs.
/// A transfer whose output shape is not fully known counts in `unknown*`, never as 0 bytes.
struct TransferBytes {
    std::int64_t hostToGpu = 0; ///< bytes out of GpuFromHost nodes of known size
    std::int64_t gpuToHost = 0; ///< bytes out of HostFromGpu nodes of known size
    std::int64_t gpuToGpu = 0;  ///< bytes out of GpuToGpu nodes of known size (not host<->GPU)
    int transfers = 0;          ///< GpuFromHost + HostFromGpu + GpuToGpu nodes
    int unknownHostGpu = 0;     ///< GpuFromHost / HostFromGpu nodes of unknown size
    int unknownGpuGpu = 0;      ///< GpuToGpu nodes of unknown size

    /// Bytes crossing host<->GPU (both directions) of the transfers whose size is known.
    std::int64_t crossing() const { return hostToGpu + gpuToHost; }
    /// True when every host<->GPU transfer has a known size.
    bool exact() const { return unknownHostGpu == 0; }
    /// "602,112 B (588.0 KiB) in 3 transfers", with "+ 2 of unknown size" when not exact.
    std::string str() const;
    bool operator==(const TransferBytes&) const = default;
};

/// Transfer traffic of one graph (nodes in the graph only).
TransferBytes transferBytes(const FunctionGraph& graph);

/// Output bytes of a variable from its static type, or -1 when its shape is not fully known.
std::int64_t staticBytes(const Variable& v);

/// "1,234,567 B (1.2 MiB)"; "0 B" for 0.
std::string formatBytes(std::int64_t bytes);

/// Digits in groups of three: 1234567 -> "1,234,567", -5000 -> "-5,000". Never throws.
std::string groupThousands(std::int64_t v);

/// The difference between two graphs. Node id lists are sorted ascending.
struct GraphDiff {
    std::vector<NodeId> added, removed, rewired, unchanged;
    std::vector<NodeId> transfersAdded; ///< transfer nodes in `added`
    std::vector<NodeId> transfersCut;   ///< transfer nodes in `removed`
    /// Graph outputs whose variable changed: output index.
    std::vector<int> outputsChanged;
    TransferBytes bytesBefore, bytesAfter;

    /// The change of node `id`; Unchanged for an id in neither graph.
    NodeChange changeOf(NodeId id) const;
    /// No node added, removed or rewired and no output changed.
    bool empty() const;
    /// Human summary: "+12 nodes, -9 nodes, 3 rewired; transfers +1 / -4; host<->GPU bytes per
    /// run 1.2 MiB -> 24 B".
    std::string summary() const;
    /// {"added": [ids], "removed", "rewired", "unchanged": n, "transfers_added", "transfers_cut",
    ///  "outputs_changed", "bytes_before": {...}, "bytes_after": {...}}.
    nlohmann::json toJson() const;
};

/// JSON of a TransferBytes: {"host_to_gpu", "gpu_to_host", "gpu_to_gpu", "crossing",
/// "transfers", "unknown_host_gpu", "unknown_gpu_gpu", "exact"}.
nlohmann::json transferBytesJson(const TransferBytes& t);

/// A copy of a graph whose ids line up with another graph's (see alignIds).
struct AlignedGraph {
    std::unique_ptr<FunctionGraph> graph;
    std::map<NodeId, NodeId> originalNode; ///< id in `graph` -> id in the graph it copies
    std::size_t matchedNodes = 0;          ///< nodes that took the reference's ids
};

/// A copy of `g` in which every node that equals a node of `reference` structurally (the same
/// interned op applied to the same variables, matched bottom-up from shared graph inputs and
/// constants) carries that node's id and output variable ids; every other node and variable
/// gets an id above all ids of both graphs. Two pipelines run on copies of one source graph
/// create their new nodes with unrelated ids; aligning one to the other makes diff() see the
/// nodes both created alike as unchanged (Tools > Compare). Throws passlens::Error only when
/// `g` itself cannot be rebuilt (never for a well-formed graph). Linear in the graph size.
AlignedGraph alignIds(const FunctionGraph& reference, const FunctionGraph& g);

/// Compares the nodes in `before` with the nodes in `after` by stable id (the two graphs are
/// meant to come from one trace, e.g. Trace::graphAfter(a) and graphAfter(b)). Never throws for
/// graphs that are well formed; cost is linear in the node and edge counts.
GraphDiff diff(const FunctionGraph& before, const FunctionGraph& after);

} // namespace passlens
