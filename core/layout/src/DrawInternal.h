#pragma once
// Internal to passlens_layout: what DrawGraph.cpp and FocusView.cpp share. A graph's drawing is
// first collected as its shape (which nodes and edges, in which order, without their text):
// drawGraph makes every element of it, drawFocused only those its focused view shows. The
// focused view itself is cut on indices (focusOn), from a shape or from a finished DrawGraph.
#include <passlens/layout/DrawGraph.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace passlens::drawinternal {

/// No drawn node (an edge from a variable no node of the drawing stands for).
inline constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

/// One node of a graph's drawing before its text is made.
struct ShapeNode {
    enum class Kind : std::uint8_t { Input, Constant, Folded, Apply, Output };
    Kind kind = Kind::Apply;
    NodeCategory category = NodeCategory::HostOp;
    bool seed = false;
    const Apply* apply = nullptr;  ///< Apply; Folded: the consumer of the folded constants
    const Variable* var = nullptr; ///< Input, Constant, Output
    int outputIndex = -1;          ///< Output
    int hiddenConstants = 0;       ///< Apply: constant inputs not drawn ("+k constants")
    int folded = 0;                ///< Folded: how many constants the box stands for
    std::int64_t foldedBytes = 0;  ///< Folded: their static size
    bool foldedGpu = false;        ///< Folded: one of them is on a GPU
};

/// One edge of a graph's drawing before its text is made.
struct ShapeEdge {
    std::size_t tail = kNone, head = kNone; ///< node indices (tail kNone: no drawn node has its key)
    const Variable* var = nullptr;          ///< the value carried; none for a folded-constants edge
    int inputIndex = 0;
};

/// What drawGraph draws of one graph (nested graphs aside), in drawGraph's order, with the seeds
/// of `options.focus` marked as drawGraph marks them.
struct Shape {
    std::vector<ShapeNode> nodes;
    std::vector<ShapeEdge> edges;
};

/// The shape of `g`'s drawing; constants as nodes or not as `constantNodes` says. Linear in `g`.
Shape collectShape(const FunctionGraph& g, bool constantNodes);
/// Input, constant and output boxes: the value boxes a seed node brings with it (markSeeds).
bool isValueBox(NodeCategory c);
/// Marks the seeds: the Apply nodes of `focus` and the input, constant and output boxes tied to
/// them by an edge (so a focused view never hides a graph output behind a "… 1 node" box).
void markSeeds(Shape& shape, const std::vector<NodeId>& focus);
/// The drawn node / edge of a shape element (labels as drawGraph makes them).
DrawNode makeNode(const ShapeNode& n, const DrawOptions& options);
DrawEdge makeEdge(const Shape& shape, const ShapeEdge& e);
/// Whether drawGraph labels edges, for a drawing with `edges` edges.
bool wantEdgeLabels(const DrawOptions& options, std::size_t edges);

/// A drawing reduced to what focusOn needs: each node's category and seed flag, and the edges
/// between drawn nodes (`source`: the edge's index in the caller's list), in drawing order.
struct FocusInput {
    struct Edge {
        std::size_t tail, head, source;
    };
    std::vector<NodeCategory> category;
    std::vector<bool> seed;
    std::vector<Edge> edges;
};

/// focusView's selection and folding (DrawGraph.h) on indices: `out` (the drawing without its
/// elements, e.g. DrawGraph::withoutElements()) gets the shown nodes (`node(i)`), the "… N
/// nodes" placeholders, the edges between shown nodes (`edge(source)`) and the collapsed edges,
/// and the focus facts; `totalNodes` is the drawing's node count before focusing.
DrawGraph focusOn(const FocusInput& in, int hops, std::size_t maxNodes, DrawGraph out, std::size_t totalNodes,
                  const std::function<DrawNode(std::size_t)>& node, const std::function<DrawEdge(std::size_t)>& edge);

} // namespace passlens::drawinternal
