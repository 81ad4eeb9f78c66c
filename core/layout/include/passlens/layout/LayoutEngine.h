#pragma once
/// @file LayoutEngine.h
/// Layout through libgvc/libcgraph in process (agmemread + gvLayout "dot"), with a time budget,
/// cancellation, a focused-view fallback for large graphs and a cache; the result is plain data
/// (node boxes, edge splines, label positions) for the GUI, plus the positioned DOT from which
/// a shown layout is rendered again (gvLayout "nop2", so before / after / overlay views of a diff
/// share the same positions). A drawing laid out only to be exported is rendered by the Graphviz
/// process that laid it out instead (layoutAndRender): the export is `dot -T<format>` of its DOT.
///
/// Threads: every Graphviz call is serialised on the library's one Graphviz lock; a
/// LayoutEngine may be used from any thread (its cache has its own lock). With
/// `LayoutOptions::isolate` (the default on POSIX) the dot layout itself runs in a child
/// process, so that a budget overrun or a cancel stops it at once and a Graphviz crash becomes an
/// error instead of taking the application down. On Linux that child is forked by the layout
/// server: a fresh exec of the running program (posix_spawn of /proc/self/exe, turned into the
/// server by a static constructor of this library before `main`), single-threaded and small,
/// started by the first isolated layout and ended with the program; so the caller's threads,
/// locks and memory are never forked. Elsewhere, or when the server cannot be started (twice), the
/// caller forks the child itself.
#include <passlens/ir/CancelToken.h>
#include <passlens/ir/Error.h>
#include <passlens/layout/DotWriter.h>
#include <passlens/layout/DrawGraph.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

/// A point in Graphviz coordinates: points (1/72 inch), y up. A fresh dot layout has its
/// bounding box's lower-left corner at (0, 0); a stable layout (LayoutEngine::layoutStable) keeps
/// the coordinates of the layout it continues, so its box may start anywhere (LayoutResult::x0,
/// y0). A GUI with y down uses (x, -y): then a pinned node has the same scene position in both.
struct LayoutPoint {
    double x = 0, y = 0;
    bool operator==(const LayoutPoint&) const = default;
};

struct LayoutNode {
    std::string key; ///< DrawNode::key
    NodeId node = -1;
    VarId var = -1;
    NodeCategory category = NodeCategory::HostOp;
    OpAccent accent = OpAccent::None;
    NodeChange change = NodeChange::Unchanged;
    std::string title, subtitle, detail; ///< the label lines (raw UTF-8)
    std::string transferDirection;       ///< "HtoD", "DtoH", "DtoD" for transfers
    std::string name;                    ///< DrawNode::name (a Group: its scope)
    std::string scope;                   ///< DrawNode::scope: the open scope it is drawn in
    std::optional<NodeTiming> timing;    ///< DrawNode::timing: the overlay's share and time; none without
    bool seed = false;                   ///< part of the changed region
    LayoutPoint center;                  ///< centre of the box, points
    double width = 0, height = 0;        ///< box size, points
    std::size_t hiddenCount = 0;
    std::string stubOf; ///< DrawNode::stubOf: the key of the node this stub repeats, else empty
};

struct LayoutEdge {
    std::string tail, head; ///< LayoutNode keys
    int inputIndex = 0;
    NodeChange change = NodeChange::Unchanged;
    bool gpu = false;
    bool collapsed = false; ///< to or from a placeholder of the focused view
    /// The spline: a start point followed by groups of three (two control points and an end
    /// point) of cubic Bézier segments, points.
    std::vector<LayoutPoint> spline;
    std::optional<LayoutPoint> arrowTip; ///< where the arrowhead points (the head end)
    std::string label;                   ///< raw label text, empty when unlabelled
    std::optional<LayoutPoint> labelPos; ///< centre of the label when Graphviz placed one
};

/// A laid-out drawing. Copyable plain data.
struct LayoutResult {
    double width = 0, height = 0; ///< bounding box, points
    double x0 = 0, y0 = 0;        ///< the bounding box's lower-left corner, points
    std::vector<LayoutNode> nodes;
    std::vector<LayoutEdge> edges;
    std::optional<LayoutPoint> captionPos; ///< centre of the graph label (caption, legend)
    double layoutMs = 0;                   ///< wall time of the layout (0 when it came from the cache)
    bool fromCache = false;
    bool focused = false;        ///< the focused view replaced the full graph
    bool isDiff = false;         ///< DrawGraph::isDiff: a diff (or a comparison) was drawn
    std::string focusReason;     ///< why: "5,000 nodes (threshold 1,500)", "layout past 7.0 s"
    std::size_t hiddenNodes = 0; ///< nodes folded into placeholders
    std::size_t totalNodes = 0;  ///< drawable nodes of the full graph
    /// layoutStable: nodes kept where the previous layout had them (0 for a fresh dot layout).
    std::size_t pinnedNodes = 0;
    bool stable = false; ///< positions continue a previous layout (layoutStable)
    /// Graphviz's dot ran past the budget: the drawing (the focused view, or the graph when it
    /// has no smaller view) was placed by the simple layered layout, with straight edges.
    bool simple = false;
    /// What the budget changed, as the drawing's caption says it ("the full layout ran past
    /// 7.0 s (5,002 nodes): focused view drawn instead"); empty when the layout asked for (or the
    /// focused view above nodeThreshold) was drawn. passlens-cli prints it on stderr.
    std::string budgetNote;
    /// Graphviz's warnings for this layout (e.g. a label it could not parse), one per line.
    std::vector<std::string> warnings;
    std::string dot;           ///< the DOT that was laid out
    std::string positionedDot; ///< Graphviz's "dot" output: the DOT with positions
    /// Size of a PNG rendering at `dpi`, pixels (Graphviz adds a 4-point margin).
    std::pair<double, double> pixelSize(double dpi) const;
};

/// Why a layout produced no result.
class LayoutError : public Error {
public:
    enum class Kind { Graphviz, Cancelled, TimedOut, Crashed };
    LayoutError(Kind kind, const std::string& message)
        : Error(message)
        , m_kind(kind) {}
    Kind kind() const { return m_kind; }

private:
    Kind m_kind;
};

struct LayoutOptions {
    /// Wall-clock budget of one layout call, focused fallback included (default 10 s).
    std::chrono::milliseconds budget{10000};
    /// Above this many drawn nodes the focused view is laid out instead of the full graph.
    std::size_t nodeThreshold = 1500;
    /// Focused view: hops around the changed region and its maximum node count.
    int focusHops = 2;
    std::size_t focusMaxNodes = 400;
    /// Share of the budget the full layout may use before it is abandoned for the focused view
    /// (0: straight to the focused view, e.g. to test the fallback without a timing race).
    double fullShare = 0.7;
    /// Run the dot layout in a child process (POSIX; on Linux forked by the layout server, see
    /// the top of this file): hard budget, cancel, crash isolation. Off: in this process.
    bool isolate = true;
    /// Use the cache.
    bool cache = true;
    DotOptions dot;
};

/// Views of a diff drawing; all share the union's positions.
enum class DiffView {
    Overlay, ///< everything: added green, removed red dashed, rewired orange
    Before,  ///< the graph before: added nodes and edges hidden
    After,   ///< the graph after: removed nodes and edges hidden
};

/// "svg", "pdf", "png", "dot".
enum class RenderFormat { Svg, Pdf, Png, Dot };

/// Parses "svg" / "pdf" / "png" / "dot" (case-insensitive); nullopt otherwise.
std::optional<RenderFormat> parseRenderFormat(std::string_view name);
const char* renderFormatName(RenderFormat f);

/// cairo's largest surface side in pixels: PNG renderings above it are refused.
inline constexpr double kMaxPngPixels = 32767;

/// What LayoutEngine::layoutAndRender renders.
struct RenderOptions {
    RenderFormat format = RenderFormat::Svg;
    DiffView view = DiffView::Overlay; ///< hides the added or removed parts of a diff
    double dpi = 96;                   ///< PNG resolution (Graphviz's default is 96)
    /// Also return the layout's geometry (LayoutResult::nodes, edges, captionPos), read in the
    /// layout's process from the laid-out graph (from its positioned DOT when it has clusters).
    bool geometry = true;
};

/// A drawing laid out and rendered by the same Graphviz process (LayoutEngine::layoutAndRender).
struct RenderedLayout {
    /// The layout: with RenderOptions::geometry, the nodes, edges and box as layout() reads them
    /// (same values, same order); without, only the box (whole points). The focused / simple /
    /// budget fields and the warnings either way. positionedDot only for the DOT format (the
    /// view's hidden elements marked style=invis) or a drawing with clusters.
    LayoutResult layout;
    std::string bytes; ///< the rendering: SVG, PDF or PNG bytes, or the positioned DOT
};

/// Node centres for a stable layout: `fresh` is a dot layout of the new drawing, `previous` the
/// layout it continues. Returns one centre per `fresh.nodes` entry (same order): the previous
/// centre for a node whose key `previous` has (counted in `*pinned`), otherwise the mean over
/// already placed neighbours of (neighbour's centre + the offset dot gave the pair in `fresh`),
/// moved to the nearest spot where its box, grown by half of dot's node and rank separations,
/// overlaps no placed box (sideways moves cost half of vertical ones). Nodes with no placed
/// neighbour keep their fresh offset from the common nodes' centroid. Collapsed placeholders are
/// never pinned. Deterministic; O(nodes x search window); never throws.
std::vector<LayoutPoint> stablePositions(const LayoutResult& fresh, const LayoutResult& previous,
                                         std::size_t* pinned = nullptr);

class LayoutEngine {
public:
    /// `cacheEntries`: layouts kept (least recently used dropped first).
    explicit LayoutEngine(std::size_t cacheEntries = 24);
    ~LayoutEngine();
    LayoutEngine(const LayoutEngine&) = delete;
    LayoutEngine& operator=(const LayoutEngine&) = delete;

    /// Lays out `g`. Above `options.nodeThreshold` nodes, or when the full layout runs past
    /// `budget * fullShare`, lays out focusView(g, ...) instead (result.focused; after a
    /// timeout with a caption note saying so, result.budgetNote); a focused view the caller made
    /// of a drawing above the threshold (`g.focused`, `g.totalNodes` above it: drawFocused) is
    /// laid out as that one, with the same result and cache entry. When that too runs past the
    /// budget (or a budget of 0), the focused view (or `g` when it has none) gets the simple
    /// layered layout (result.simple: ranks by longest path, straight edges, not budgeted,
    /// linear in the drawing), so a drawing always comes back. Results are cached by
    /// (fingerprint of the drawn graph, i.e. its DOT text, and the layout options), simple
    /// layouts excepted, so stepping back to a graph is instant. Throws LayoutError: Cancelled
    /// when `cancel` is set, Crashed when Graphviz died in the child, Graphviz for Graphviz's
    /// own errors (its message included).
    LayoutResult layout(const DrawGraph& g, const LayoutOptions& options = {}, const CancelToken* cancel = nullptr);

    /// Lays out `g` as the successor of `previous` (normally the drawing of the step before):
    /// every node whose key `previous` also has keeps its exact position (points), new nodes go
    /// where a fresh dot layout of `g` puts them relative to their placed neighbours, moved to
    /// the nearest free spot (stablePositions), and the edges are routed around the boxes
    /// (Graphviz "nop2", splines). So stepping through rewrites moves only what changed, as the
    /// issue asks ("unchanged nodes keep their positions between consecutive steps").
    /// Falls back to the fresh layout (result.stable false) when either drawing is a focused view
    /// or fewer than half of `g`'s nodes are in `previous` (a phase that rebuilt the graph, such
    /// as GraphToGpu, is better drawn afresh), and when the routing runs past the budget (the
    /// fresh layout, or layout() within what is left of the budget: a drawing always comes back).
    /// Not cached (it depends on `previous`). Throws LayoutError as layout().
    LayoutResult layoutStable(const DrawGraph& g, const LayoutResult& previous, const LayoutOptions& options = {},
                              const CancelToken* cancel = nullptr);

    /// Lays out DOT text as is (no focused fallback). Throws LayoutError as layout().
    LayoutResult layoutDot(const std::string& dot, const LayoutOptions& options = {},
                           const CancelToken* cancel = nullptr);

    /// Renders a layout in `format` (svg, pdf, png: bytes; dot: the positioned DOT) without a
    /// new layout (Graphviz's "nop2" on the positioned DOT: the window exporting what it shows,
    /// stable layouts). `view` hides the added or removed parts of a diff. `dpi` applies to PNG
    /// (Graphviz's default is 96). Throws passlens::Error for a PNG past kMaxPngPixels (the
    /// message suggests SVG or PDF) and LayoutError(Graphviz) when Graphviz fails.
    std::string render(const LayoutResult& layout, RenderFormat format, DiffView view = DiffView::Overlay,
                       double dpi = 96) const;

    /// Lays out `g` as layout() does (budget, focused view, simple layout, cancel, the forked
    /// child) and renders the drawing in the same Graphviz process, from dot's own layout: the
    /// bytes are exactly what `dot -T<format>` draws from writeDot(g, options.dot) (the diff view's
    /// style=invis and the PNG dpi are set before the layout; neither moves what dot places). For
    /// exports laid out just to be rendered (passlens-cli render, report): no second Graphviz pass
    /// as render() makes. The budget covers the layout, not the rendering. A simple layout (past
    /// the budget) is rendered by render(). Not cached. Throws as layout() and render() (dpi
    /// outside (0, 2400], a PNG past kMaxPngPixels).
    RenderedLayout layoutAndRender(const DrawGraph& g, const RenderOptions& render, const LayoutOptions& options = {},
                                   const CancelToken* cancel = nullptr);

    /// Cache statistics.
    std::size_t cacheHits() const;
    std::size_t cacheMisses() const;
    void clearCache();

private:
    struct CacheEntry;
    std::optional<LayoutResult> cached(std::uint64_t hash, const std::string& key) const;
    void store(std::uint64_t hash, const std::string& key, const LayoutResult& result);
    std::size_t m_capacity;
    mutable std::mutex m_cacheMutex;
    mutable std::list<CacheEntry> m_cache; // most recent first
    mutable std::size_t m_hits = 0, m_misses = 0;
};

} // namespace passlens
