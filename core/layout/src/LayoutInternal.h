#pragma once
// Internal to passlens_layout: the parts of LayoutEngine kept in their own files. The isolated
// layout's child and the in-process layout (LayoutIsolated.cpp), the layout server that forks the
// children (LayoutServer.cpp), the reader of a positioned DOT's
// geometry (LayoutGeometry.cpp), the stable layout's pinned DOT (StableLayout.cpp); the cache is
// LayoutCache.cpp. Includes Graphviz headers, so it
// never appears in a public header.

#include "GraphvizInternal.h"

#include <passlens/layout/LayoutEngine.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#define PASSLENS_LAYOUT_FORK 1
#else
#define PASSLENS_LAYOUT_FORK 0
#endif

namespace passlens::layoutinternal {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// "1.5 s" for a duration in milliseconds.
inline std::string seconds(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000.0);
    return buf;
}

/// What the Graphviz process that lays a drawing out also renders, from that very layout
/// (LayoutEngine::layoutAndRender): the diff view and the PNG dpi are set on the graph before the
/// layout (neither moves anything dot places), so the bytes are what `dot -T<format>` draws.
struct RenderJob {
    RenderFormat format = RenderFormat::Svg;
    DiffView view = DiffView::Overlay;
    double dpi = 96;      ///< PNG only
    bool geometry = true; ///< also read the geometry (geometryRecord)
};

/// A laid-out graph as Graphviz writes it ("dot" output: every position as an attribute),
/// Graphviz's messages while laying it out, and a RenderJob's output.
struct Positioned {
    std::string dot;      ///< without a RenderJob; with one, its DOT format's output
    std::string geometry; ///< a RenderJob with geometry: its geometryRecord
    std::string warnings;
    std::string rendered;     ///< the RenderJob's bytes
    std::string bb;           ///< the "bb" attribute gvLayout sets (whole points)
    bool pngTooLarge = false; ///< the RenderJob's PNG would pass kMaxPngPixels: not rendered
};

/// Loads the layout and text-layout plugins, the font machinery and the renderer of `format`
/// (svg, pdf, png: nullptr for none) in this process, once each, so a forked child never has to
/// dlopen or initialise fontconfig or cairo. Call with the lock held.
void warmUp(GVC_s* gvc, const RenderJob* job = nullptr);

/// Hides what `view` leaves out of a diff drawing (style=invis on the nodes and edges whose
/// `pl_change` is "added" for Before, "removed" for After, and on the edges into such nodes)
/// and sets `dpi` for a PNG. Returns the name of an attribute Graphviz refused, nullptr when all
/// were set. Lock held (or in a forked child).
const char* applyView(Agraph_t* g, DiffView view, RenderFormat format, double dpi);

/// In-process: parse `dot` (with `job`'s view and dpi), lay it out with `engine` ("dot",
/// "nop2"), return the positioned DOT and `job`'s rendering. Lock held. Throws
/// LayoutError(Graphviz).
Positioned layoutHere(GVC_s* gvc, const std::string& dot, const char* engine, const RenderJob* job = nullptr);

#if PASSLENS_LAYOUT_FORK
/// layoutHere in a child process, waiting until `deadline` or `cancel` (then the child is killed:
/// LayoutError TimedOut / Cancelled; a crash of Graphviz, a child killed by a signal, is
/// LayoutError Crashed). The deadline covers the layout, not `job`'s rendering (which cancel still
/// stops). On Linux the child is forked by this process's layout server (LayoutServer.cpp: a
/// fresh, single-threaded exec of this program, started on the first call), so the caller's
/// threads, locks and page tables are never copied; when the server cannot be started (twice),
/// by layoutForked. Lock held. nullopt when no child can be made.
std::optional<Positioned> layoutIsolated(GVC_s* gvc, const std::string& dot, const char* engine,
                                         Clock::time_point deadline, const CancelToken* cancel, double budgetMs,
                                         const RenderJob* job = nullptr);

/// layoutIsolated by a bare fork() of this process (after warmUp here): the path without a
/// layout server (not Linux, or the server unavailable). The child starts from this process's
/// Graphviz state (lock held), but also inherits every lock other threads held at the fork.
/// nullopt when fork is impossible.
std::optional<Positioned> layoutForked(GVC_s* gvc, const std::string& dot, const char* engine,
                                       Clock::time_point deadline, const CancelToken* cancel, double budgetMs,
                                       const RenderJob* job = nullptr);

/// Writes all of `data` to `fd` (retrying after EINTR and short writes); false on an error.
bool writeAll(int fd, const char* data, std::size_t size);

/// A layout child's whole life: lay out `dot` (with `job`'s view and dpi) with `engine`, write
/// 'L' to `fd` when the layout is done (the budget ends there), then 'O' + the outputs (warnings,
/// dot, geometry, rendered, bb, pngTooLarge) or 'E' + Graphviz's message, and _exit. Never takes
/// graphvizMutex (in a child forked by another thread, its owner is that thread) and never
/// returns.
[[noreturn]] void childLayout(GVC_s* gvc, const std::string& dot, const char* engine, const RenderJob* job, int fd);

/// How awaitLayoutChild stops a layout child and learns how it ended.
class ChildWatch {
public:
    virtual ~ChildWatch() = default;
    /// A descriptor to watch besides the result pipe (the layout server's socket), -1 for none.
    virtual int controlFd() const { return -1; }
    /// controlFd is readable (or at its end): take what came. May throw.
    virtual void onControl() {}
    /// Kill the child and wait until it has ended (past the deadline, cancelled).
    virtual void stop() = 0;
    /// The result pipe is at its end: wait for the child's end, return its wait status. May throw.
    virtual int status() = 0;
};

/// Reads childLayout's output from `fd` (and closes it) until its end, checking `cancel` and,
/// until the child says its layout is done, `deadline` every 25 ms: past either, `child.stop()`
/// and LayoutError Cancelled / TimedOut ("layout past its budget of <budgetMs>"). Then the
/// outputs; LayoutError Graphviz with the child's message, Crashed when the child was killed by a
/// signal or sent no (or a broken) result.
Positioned awaitLayoutChild(int fd, ChildWatch& child, Clock::time_point deadline, const CancelToken* cancel,
                            double budgetMs);

/// Publishes `pid` as the running layout child (LayoutServer.h's layoutChildPid) while alive.
class ChildPidScope {
public:
    explicit ChildPidScope(int pid);
    ~ChildPidScope();
    ChildPidScope(const ChildPidScope&) = delete;
    ChildPidScope& operator=(const ChildPidScope&) = delete;
};
#endif

/// Reads the geometry of a positioned DOT into `r` (box, caption, nodes, edges), mapping keys
/// back to `drawn` when given. Lock held. Throws LayoutError(Graphviz).
void readGeometry(const std::string& positioned, const DrawGraph* drawn, LayoutResult& r);

/// The geometry readGeometry reads from the "dot" output of a laid-out graph `g`, straight from
/// `g` (Graphviz's attach_attrs, as that output does, then the same attributes with the nodes in
/// the order agwrite writes them), as a compact record: no DOT text written or parsed. nullopt
/// for a graph with subgraphs (clusters), whose written order this does not reproduce: then the
/// positioned DOT is the way. Lock held (or in a forked child).
std::optional<std::string> geometryRecord(Agraph_t* g);

/// Reads a geometryRecord into `r` as readGeometry reads the positioned DOT of the same graph.
/// Throws LayoutError(Crashed) for a record that is not one.
void readGeometryRecord(const std::string& record, const DrawGraph* drawn, LayoutResult& r);

/// Sets a Graphviz attribute on a graph, node or edge (declaring it when new). Lock held.
/// Throws LayoutError(Graphviz).
void setAttribute(const gvinternal::ErrorCapture& errors, void* obj, const char* name, const char* value);

/// `g` written back as DOT text (`what` names it in messages). Lock held. Throws
/// LayoutError(Graphviz).
std::string dotText(Agraph_t* g, const gvinternal::ErrorCapture& errors, const char* what);

/// The stable layout's DOT for neato's nop2 (StableLayout.cpp): `dot` (the drawing `drawn`
/// written by writeDot, laid out as `nodes`) with every node pinned at `pos` (points, in the
/// order of `nodes`) and every edge's spline: the edges that `previous` drew between two kept
/// nodes keep their spline (and label place) unless it runs through a new node's box; the others
/// get stable::route. Lock held. Throws LayoutError(Graphviz).
std::string pinnedDot(const std::string& dot, const DrawGraph& drawn, const std::vector<LayoutNode>& nodes,
                      const std::vector<LayoutPoint>& pos, const LayoutResult& previous);

/// Reads a "bb" attribute ("llx,lly,urx,ury", commas or blanks) into r's box (x0, y0, width,
/// height). False, `r` unchanged, when it does not hold four numbers.
bool readBox(const char* bb, LayoutResult& r);

} // namespace passlens::layoutinternal
