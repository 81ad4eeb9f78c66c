#pragma once
/// @file DrawGraph.h
/// What gets drawn, as plain data: one node per Apply, graph input, constant and graph output,
/// one edge per use of a variable, with the category (location and kind) that selects the
/// style, the diff class and the timing share. Built from one graph (a step) or from two
/// (a diff, drawn as the union of both so every view shares one layout), then turned into DOT by
/// DotWriter and laid out by LayoutEngine. No Graphviz here.
#include <passlens/diff/GraphDiff.h>
#include <passlens/ir/FunctionGraph.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// Style category of a drawn node: location and kind.
enum class NodeCategory : std::uint8_t {
    HostOp,     ///< a Theano op running on the host
    GpuOp,      ///< an op running on a GPU (Gpu* kinds)
    Transfer,   ///< GpuFromHost, HostFromGpu, GpuToGpu
    OnnxHostOp, ///< an `Onnx<Type>` op: host only, no GPU counterpart
    Input,      ///< a graph input
    Constant,   ///< a graph constant
    Output,     ///< a graph output (one node per output index)
    Collapsed,  ///< a placeholder for hidden nodes in a focused view ("… 812 nodes")
    Group,      ///< a closed name scope standing for its nodes (ScopeGroups.h)
};

/// "host op", "GPU op", "transfer", "host-only ONNX op", "input", "constant", "output",
/// "collapsed", "scope".
const char* nodeCategoryName(NodeCategory c);

/// A secondary accent by op family (Theano's pydotprint: Elemwise pink, Alloc orange).
enum class OpAccent : std::uint8_t { None, Elemwise, Alloc };

/// A node's place on the timing overlay (applyTiming, TimingOverlay.h).
struct NodeTiming {
    double share = 0; ///< the fill: share of the time on the overlay's scale (linear or log, binned), in [0, 1]
    double us = 0;    ///< measured time, microseconds per run
};

struct DrawNode {
    std::string key;  ///< DOT node id: "n<NodeId>", "v<VarId>" (input, constant), "o<index>", "c<k>"
    NodeId node = -1; ///< the Apply's id, or -1
    VarId var = -1;   ///< the variable of an input, constant or output node, or -1
    NodeCategory category = NodeCategory::HostOp;
    OpAccent accent = OpAccent::None;
    NodeChange change = NodeChange::Unchanged; ///< diff class (Unchanged outside diffs)
    std::string title;                         ///< first line: op display string or variable name (raw UTF-8)
    std::string subtitle;                      ///< second line: "#42 · name", the type of an input (raw UTF-8)
    std::string detail;                        ///< third line: transfer size, timing (raw UTF-8); may be empty
    std::string transferDirection;             ///< "HtoD", "DtoH", "DtoD" for transfers
    std::optional<NodeTiming> timing;          ///< the timing overlay's; none: no timing for this node
    /// Full name (raw UTF-8): the Apply's name, else its first output's; for a Group the scope
    /// it stands for. Not drawn as such (subtitle carries a cut copy); name scopes come from it.
    std::string name;
    /// The open name scope the node is drawn in ("" at the top level): set by groupByScope.
    std::string scope;
    std::size_t hiddenCount = 0; ///< Collapsed, Group: how many nodes it stands for
    bool seed = false;           ///< part of the changed region (focused views keep it)
    /// Index in DrawGraph::clusters of the nested graph the node belongs to; -1 for the drawn
    /// graph itself. Nested nodes have `node` and `var` -1 (their ids are their graph's own).
    int cluster = -1;
    /// Key of the node this one repeats beside one of its consumers (stubFanOut: a value with
    /// many consumers drawn once per consumer, without a long edge); empty for every other node.
    std::string stubOf;
};

struct DrawEdge {
    std::string tail, head;                    ///< DrawNode keys
    int inputIndex = 0;                        ///< which input of the head (output index for output nodes)
    std::string label;                         ///< "float32[2,16,64]" (raw); empty when not labelled
    bool gpu = false;                          ///< the value lives on a GPU
    NodeChange change = NodeChange::Unchanged; ///< Added: only after; Removed: only before
    bool collapsed = false;                    ///< to or from a Collapsed placeholder
    /// The dashed edge from a node to one of its nested graphs: the cluster's index (the edge
    /// ends at the cluster's border, Graphviz's `lhead`); -1 for every other edge.
    int headCluster = -1;
    /// From a stub (DrawNode::stubOf): laid out with weight 0, so that the stub beside a
    /// consumer does not pull the consumer sideways (a chain of boxes stays straight).
    bool fromStub = false;
};

/// A nested graph (an OnnxIf branch, an OnnxLoop or Scan body) drawn as a Graphviz cluster
/// beside the node that owns it (DrawOptions::nestedGraphs).
struct DrawCluster {
    std::string key;   ///< DOT subgraph id: "cluster_<index>"
    std::string title; ///< "then_branch of OnnxIf #12 · name (31 nodes)" (raw UTF-8)
    int parent = -1;   ///< index of the enclosing cluster, -1 at the top level
    std::string owner; ///< key of the node whose nested graph this is
};

/// Caption text: "SOURCE · pipeline NAME · STEP (UNIT k of N)".
struct Caption {
    std::string source; ///< file name shown (no folder)
    std::string pipeline;
    std::string step;   ///< "phase gpuarray_opt", "event 17 (local_cut_gpu_transfers)", "final"
    int stepIndex = -1; ///< k, or -1 to omit "step k of N"
    int stepCount = -1; ///< N
    /// What k counts: "step" (the window: every applied rewrite and every phase end) or
    /// "phase" (passlens-cli render / report: the phases of the trace).
    std::string unit = "step";
    std::string note; ///< an extra line (e.g. "focused view: 812 of 5,000 nodes hidden")
    /// One line of text (raw UTF-8).
    std::string text() const;
};

/// The timing legend of an overlay (filled by applyTiming).
struct TimingLegend {
    bool present = false;
    bool logScale = false;
    bool continuous = false; ///< gradient: binUpperUs are the times at 5 evenly spaced colour stops
    double maxUs = 0, totalUs = 0;
    std::string device;
    /// Where the times were measured when that is not the graph drawn ("step 40"), said in the
    /// legend; empty when they are this graph's.
    std::string measuredOn;
    /// Upper bounds of the colour bins in microseconds (ascending); bin i covers
    /// (bounds[i-1], bounds[i]].
    std::vector<double> binUpperUs;
};

struct DrawGraph {
    std::vector<DrawNode> nodes;
    std::vector<DrawEdge> edges;
    std::vector<DrawCluster> clusters; ///< nested graphs, parents before children
    Caption caption;
    bool isDiff = false;
    std::optional<GraphDiff> diff;               ///< set for diffs: the summary table
    std::size_t nodesBefore = 0, nodesAfter = 0; ///< Apply counts of the two graphs (diffs)
    TimingLegend timing;
    bool focused = false;        ///< a focused view (see focusView)
    std::string focusAround;     ///< "the changed region", "the transfers", "the outputs"
    int focusHops = 0;           ///< hops shown around the seeds
    std::size_t hiddenNodes = 0; ///< nodes hidden by the focused view
    std::size_t totalNodes = 0;  ///< drawable nodes before focusing

    /// Index of the node with this key, or -1.
    int indexOf(const std::string& key) const;
    /// A copy of everything but the nodes and edges (caption, clusters, diff, timing, focus
    /// facts): the start of a view derived from this drawing (focusView, groupByScope).
    DrawGraph withoutElements() const;
};

/// What to draw and how much text.
struct DrawOptions {
    /// Constants as their own small nodes (true) or left out with a "+k constants" note on the
    /// consumer (false). Auto (nullopt): nodes while the graph has at most 400 Apply nodes.
    std::optional<bool> constantNodes;
    /// Label edges with dtype and shape: always (true), never (false), or nullopt: while there
    /// are at most 250 edges ("where space allows").
    std::optional<bool> edgeLabels;
    /// Longest title / name shown, in characters; longer text is cut with "…".
    std::size_t maxTitleChars = 120; ///< (the DOT writer wraps long titles onto up to 3 lines)
    std::size_t maxNameChars = 28;
    Caption caption;
    /// Nodes of the step's changed region (e.g. added by the phase's events): seeds of the
    /// focused view. Diffs use their added / removed / rewired nodes.
    std::vector<NodeId> focus;
    /// drawGraph: draw the nested graphs of the nodes (recursively, up to kMaxNestedDepth
    /// levels) as clusters with their own nodes, keys prefixed "s<cluster>_", each tied to its
    /// node by a dashed edge, as the window shows them when opened. Exports (passlens-cli render,
    /// report) set it; the window opens one nested graph at a time instead. Diffs ignore it.
    bool nestedGraphs = false;
};

/// Nested graphs deeper than this are not drawn (their owner still names them).
inline constexpr int kMaxNestedDepth = 16;

/// One graph (one step of a trace): inputs, constants (own boxes; a node with more than 6
/// constants used by it alone gets one "N constants" box), Apply nodes in topological order,
/// outputs; then, with DrawOptions::nestedGraphs, each nested graph's nodes as a cluster.
/// Cost linear in the graph; never throws for a well-formed graph.
DrawGraph drawGraph(const FunctionGraph& graph, const DrawOptions& options = {});

/// The union of `before` and `after` (the diff `d`, normally diff(before, after)) with every
/// node and edge classed: added, removed, rewired (nodes) and added / removed (edges); nodes of
/// both graphs keep one key, so before, after and overlay views share one layout. Never throws
/// for well-formed graphs.
DrawGraph drawDiff(const FunctionGraph& before, const FunctionGraph& after, const GraphDiff& d,
                   const DrawOptions& options = {});

/// A focused view of `g`: the seed nodes (DrawNode::seed; when none, the transfers; when none,
/// the outputs) plus everything within `hops` edges (either direction), at most `maxNodes`
/// (hops shrink, then the seeds are cut in topological order until it fits). Around stand-in
/// seeds (no changed region) the hops grow while the view stays within `maxNodes`. Every hidden
/// connected region becomes one Collapsed node "… N nodes" wired to the visible nodes it
/// touches; hidden regions touching nothing become one "… N more nodes". Never throws.
DrawGraph focusView(const DrawGraph& g, int hops = 2, std::size_t maxNodes = 400);

/// drawGraph(graph, options) when that drawing has at most `above` nodes, else exactly
/// focusView(drawGraph(graph, options), hops, maxNodes) (same nodes, edges, labels and "… N
/// nodes" placeholders), made without drawing the nodes the view hides: what it costs beyond a
/// pass over the graph's ids scales with the view, not with the graph (a step of a 20,000-node
/// graph in the window, LayoutEngine::layout's focused view made by the caller). Never throws
/// for a well-formed graph.
DrawGraph drawFocused(const FunctionGraph& graph, const DrawOptions& options, std::size_t above, int hops = 2,
                      std::size_t maxNodes = 400);

/// drawDiff(before, after, d, options) when that drawing has at most `above` nodes, else exactly
/// focusView(drawDiff(before, after, d, options), hops, maxNodes), made as drawFocused makes a
/// step's: the union of the two graphs' shapes is matched, classed and ordered on numbers, and
/// only the nodes the view shows get their text (a diff of two steps of a 20,000-node graph in
/// the window). Never throws for well-formed graphs.
DrawGraph drawDiffFocused(const FunctionGraph& before, const FunctionGraph& after, const GraphDiff& d,
                          const DrawOptions& options, std::size_t above, int hops = 2, std::size_t maxNodes = 400);

} // namespace passlens
