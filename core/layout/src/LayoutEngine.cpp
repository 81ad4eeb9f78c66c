#include "passlens/layout/LayoutEngine.h"

#include <passlens/diff/GraphDiff.h>

#include "GraphvizInternal.h"
#include "LayoutInternal.h"

#include <passlens/layout/GraphvizContext.h>
#include <passlens/layout/ScopeGroups.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace passlens {

using gvinternal::ErrorCapture;
using gvinternal::graphvizMutex;
using gvinternal::RenderLength;
using layoutinternal::applyView;
using layoutinternal::Clock;
using layoutinternal::dotText;
using layoutinternal::layoutHere;
using layoutinternal::msSince;
using layoutinternal::pinnedDot;
using layoutinternal::Positioned;
using layoutinternal::readBox;
using layoutinternal::readGeometry;
using layoutinternal::readGeometryRecord;
using layoutinternal::RenderJob;
using layoutinternal::seconds;
using layoutinternal::setAttribute;
#if PASSLENS_LAYOUT_FORK
using layoutinternal::layoutIsolated;
#endif

std::optional<RenderFormat> parseRenderFormat(std::string_view name) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "svg") return RenderFormat::Svg;
    if (lower == "pdf") return RenderFormat::Pdf;
    if (lower == "png") return RenderFormat::Png;
    if (lower == "dot" || lower == "gv") return RenderFormat::Dot;
    return std::nullopt;
}

const char* renderFormatName(RenderFormat f) {
    switch (f) {
    case RenderFormat::Svg: return "svg";
    case RenderFormat::Pdf: return "pdf";
    case RenderFormat::Png: return "png";
    case RenderFormat::Dot: return "dot";
    }
    return "svg";
}

std::pair<double, double> LayoutResult::pixelSize(double dpi) const {
    // The DOT writer pads by 0.15 inch on every side (Graphviz's default is 4 points).
    const double pad = 0.15 * 72.0;
    return {std::ceil((width + 2 * pad) * dpi / 72.0), std::ceil((height + 2 * pad) * dpi / 72.0)};
}

namespace {

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
    for (const unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

// Graphviz's messages, one per line.
std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        auto end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        // Edge labels are external labels placed "where space allows": Graphviz reports the ones
        // it left out, which is the intent, not a problem.
        if (!line.empty() && line.find("exterior labels positioned") == std::string::npos)
            lines.push_back(std::move(line));
        start = end + 1;
    }
    return lines;
}

std::string optionsKey(const LayoutOptions& o) {
    return "|budget=" + std::to_string(o.budget.count()) + "|threshold=" + std::to_string(o.nodeThreshold) +
           "|hops=" + std::to_string(o.focusHops) + "|max=" + std::to_string(o.focusMaxNodes) +
           "|rankdir=" + o.dot.rankdir + "|legend=" + std::to_string(o.dot.legend) +
           "|caption=" + std::to_string(o.dot.caption) + "|fast=" + std::to_string(o.dot.fastAbove);
}

// render()'s and layoutAndRender's checks of a PNG: the dpi, and the size at that dpi of a
// drawing `box` (its width and height). Throws passlens::Error.
void checkDpi(double dpi) {
    if (!(dpi > 0) || dpi > 2400) throw Error("render: dpi must be in (0, 2400], got " + std::to_string(dpi));
}

void checkPngSize(const LayoutResult& box, double dpi) {
    const auto [w, h] = box.pixelSize(dpi);
    if (w > kMaxPngPixels || h > kMaxPngPixels) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "the PNG would be %.0f x %.0f px at %.0f dpi, past cairo's 32,767 px limit: export SVG or PDF "
                      "instead (or lower the dpi)",
                      w, h, dpi);
        throw Error(buf);
    }
}

// One layout of `dot` until `deadline`; with `job`, rendered by the same Graphviz process into
// `*rendered` (the geometry read only when the job asks for it). Lock taken here.
LayoutResult runLayout(const std::string& dot, const DrawGraph* drawn, const LayoutOptions& o,
                       Clock::time_point deadline, const CancelToken* cancel, double budgetMs,
                       const char* engine = "dot", const RenderJob* job = nullptr, std::string* rendered = nullptr) {
    if (cancel != nullptr && cancel->cancelled()) throw LayoutError(LayoutError::Kind::Cancelled, "layout cancelled");
    const auto start = Clock::now();
    // A budget already spent (0, or used up by an earlier attempt) stops before Graphviz starts,
    // in process too, where a running layout cannot be interrupted.
    if (start >= deadline)
        throw LayoutError(LayoutError::Kind::TimedOut, "layout past its budget of " + seconds(budgetMs));
    std::lock_guard lock(graphvizMutex());
    GVC_s* gvc = gvinternal::sharedContext();
    std::optional<Positioned> positioned;
#if PASSLENS_LAYOUT_FORK
    if (o.isolate) positioned = layoutIsolated(gvc, dot, engine, deadline, cancel, budgetMs, job);
#else
    (void)deadline;
    (void)budgetMs;
#endif
    if (!positioned) positioned = layoutHere(gvc, dot, engine, job);
    LayoutResult r;
    r.layoutMs = msSince(start);
    r.dot = dot;
    r.warnings = splitLines(positioned->warnings);
    if (job != nullptr) {
        readBox(positioned->bb.c_str(), r);
        if (positioned->pngTooLarge) checkPngSize(r, job->dpi);
        *rendered = std::move(positioned->rendered);
    }
    r.positionedDot = std::move(positioned->dot);
    if (job != nullptr && job->geometry && !positioned->geometry.empty())
        readGeometryRecord(positioned->geometry, drawn, r);
    else if (job == nullptr || job->geometry)
        readGeometry(r.positionedDot, drawn, r);
    if (drawn != nullptr) {
        r.focused = drawn->focused;
        r.isDiff = drawn->isDiff;
        r.hiddenNodes = drawn->hiddenNodes;
        r.totalNodes = drawn->totalNodes != 0 ? drawn->totalNodes : drawn->nodes.size();
    } else {
        r.totalNodes = r.nodes.size();
    }
    return r;
}

} // namespace

LayoutResult LayoutEngine::layoutDot(const std::string& dot, const LayoutOptions& options, const CancelToken* cancel) {
    const std::string key = dot + optionsKey(options) + "|raw";
    const std::uint64_t hash = fnv1a(key);
    if (options.cache)
        if (auto hit = cached(hash, key)) return *hit;
    const auto start = Clock::now();
    const double budgetMs = static_cast<double>(options.budget.count());
    LayoutResult r = runLayout(dot, nullptr, options, start + options.budget, cancel, budgetMs);
    if (options.cache) store(hash, key, r);
    return r;
}

namespace layoutinternal {

void setAttribute(const ErrorCapture& errors, void* obj, const char* name, const char* value) {
    if (agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value), const_cast<char*>("")) != 0)
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message(std::string("cannot set attribute ") + name));
}

std::string dotText(Agraph_t* g, const ErrorCapture& errors, const char* what) {
    char* text = nullptr;
    std::size_t size = 0;
    FILE* out = ::open_memstream(&text, &size);
    if (out == nullptr)
        throw LayoutError(LayoutError::Kind::Graphviz, std::string("cannot write ") + what + ": open_memstream failed");
    const int rc = agwrite(g, out);
    std::fclose(out);
    std::string result(text != nullptr ? text : "", size);
    std::free(text);
    if (rc != 0) throw LayoutError(LayoutError::Kind::Graphviz, errors.message(std::string("cannot write ") + what));
    return result;
}

} // namespace layoutinternal

namespace {

// `dot` with every node pinned at `pos` (points, in agnode order; nullopt: side by side on one
// row) and straight edges, for nop2. Lock held.
std::string pinnedStraight(const std::string& dot, const std::unordered_map<std::string, LayoutPoint>* pos) {
    ErrorCapture errors;
    errors.begin();
    GraphPtr graph(agmemread(dot.c_str()));
    if (!graph) throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot parse DOT", "no graph in input"));
    Agraph_t* g = graph.get();
    setAttribute(errors, g, "splines", "line");
    char buffer[64];
    double x = 0;
    for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
        LayoutPoint p{x, 0};
        x += 200;
        if (pos != nullptr)
            if (auto it = pos->find(agnameof(n)); it != pos->end()) p = it->second;
        std::snprintf(buffer, sizeof buffer, "%.3f,%.3f!", p.x, p.y);
        setAttribute(errors, n, "pos", buffer);
    }
    return dotText(g, errors, "the pinned DOT");
}

// The simple layout's ranks of `g`'s nodes (by index): by the longest path from the sources
// (nodes on a cycle after the rest, in draw order; a source one rank above its first consumer);
// `order`, `pred`, `succ`: the nodes in that order and their neighbours (self-loops left out).
struct SimpleRanks {
    std::vector<std::size_t> rank, order;
    std::vector<std::vector<std::size_t>> pred, succ;
};

SimpleRanks simpleRanks(const DrawGraph& g) {
    const std::size_t n = g.nodes.size();
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].key, i);
    SimpleRanks sr;
    auto& [rank, order, pred, succ] = sr;
    pred.resize(n);
    succ.resize(n);
    rank.assign(n, 0);
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end() || t->second == h->second) continue;
        succ[t->second].push_back(h->second);
        pred[h->second].push_back(t->second);
    }
    std::vector<std::size_t> indeg(n);
    for (std::size_t i = 0; i < n; ++i) indeg[i] = pred[i].size();
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i)
        if (indeg[i] == 0) ready.insert(i);
    std::vector<bool> done(n, false);
    while (order.size() < n) {
        if (ready.empty()) // a cycle: take the first node left
            for (std::size_t i = 0; i < n; ++i)
                if (!done[i]) {
                    ready.insert(i);
                    break;
                }
        const std::size_t i = *ready.begin();
        ready.erase(ready.begin());
        if (done[i]) continue;
        done[i] = true;
        order.push_back(i);
        for (std::size_t j : succ[i]) {
            rank[j] = std::max(rank[j], rank[i] + 1);
            if (indeg[j] > 0 && --indeg[j] == 0 && !done[j]) ready.insert(j);
        }
    }
    // Sources (inputs, constants, upstream placeholders) one rank above their first consumer,
    // not all on the top row.
    for (std::size_t i = 0; i < n; ++i) {
        if (!pred[i].empty() || succ[i].empty()) continue;
        std::size_t first = rank[succ[i].front()];
        for (std::size_t j : succ[i]) first = std::min(first, rank[j]);
        rank[i] = first > 0 ? first - 1 : 0;
    }
    return sr;
}

// The rank levels `g`'s edges cross in the simple layout's ranking, summed: about the virtual
// nodes dot adds for its edges (its network simplex ranking crosses at most as many), whose
// positioning takes dot most of its time when there are tens of thousands (a focused view of a
// 400-node chain whose "… N nodes" boxes tie into it along its length: ~19,000, 5 s of CPU).
std::size_t rankLevelsCrossed(const DrawGraph& g) {
    const SimpleRanks sr = simpleRanks(g);
    std::size_t crossed = 0;
    for (std::size_t i = 0; i < sr.succ.size(); ++i)
        for (std::size_t j : sr.succ[i])
            crossed += sr.rank[j] > sr.rank[i] + 1   ? sr.rank[j] - sr.rank[i] - 1
                       : sr.rank[i] > sr.rank[j] + 1 ? sr.rank[i] - sr.rank[j] - 1
                                                     : 0;
    return crossed;
}

// Node centres of the simple layout: simpleRanks, one row per rank ordered by the mean position
// of each node's predecessors in the rows above, boxes `size` (points) apart by dot's default node
// and rank separations. TB: ranks go down; LR: ranks go right.
std::unordered_map<std::string, LayoutPoint>
simplePositions(const DrawGraph& g, const std::unordered_map<std::string, LayoutPoint>& size, bool leftToRight) {
    const std::size_t n = g.nodes.size();
    const SimpleRanks sr = simpleRanks(g);
    const auto& [rank, order, pred, succ] = sr;
    std::size_t ranks = 0;
    for (std::size_t r : rank) ranks = std::max(ranks, r + 1);
    std::vector<std::vector<std::size_t>> rows(ranks);
    for (std::size_t i : order) rows[rank[i]].push_back(i);

    constexpr double kNodeSep = 0.22 * 72,
                     kRankSep = 0.5 * 72; // DotWriter's nodesep; a wider ranksep for straight edges
    auto extent = [&](std::size_t i) {
        auto it = size.find(g.nodes[i].key);
        const LayoutPoint s = it != size.end() ? it->second : LayoutPoint{54, 22};
        return leftToRight ? LayoutPoint{s.y, s.x} : s; // {along the row, across it}
    };
    std::vector<double> along(n, 0); // centre along the row
    std::unordered_map<std::string, LayoutPoint> pos;
    double across = 0; // top of the row
    for (auto& row : rows) {
        std::vector<double> key(n, 0);
        for (std::size_t i : row) {
            double sum = 0;
            std::size_t k = 0;
            for (std::size_t p : pred[i])
                if (rank[p] < rank[i]) {
                    sum += along[p];
                    ++k;
                }
            key[i] = k > 0 ? sum / static_cast<double>(k) : 0;
        }
        std::stable_sort(row.begin(), row.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
        double width = 0, thickness = 0;
        for (std::size_t i : row) {
            width += extent(i).x + kNodeSep;
            thickness = std::max(thickness, extent(i).y);
        }
        double x = -width / 2;
        for (std::size_t i : row) {
            const LayoutPoint e = extent(i);
            along[i] = x + e.x / 2;
            x += e.x + kNodeSep;
            const double mid = across + thickness / 2;
            pos[g.nodes[i].key] = leftToRight ? LayoutPoint{mid, -along[i]} : LayoutPoint{along[i], -mid};
        }
        across += thickness + kRankSep;
    }
    return pos;
}

// The layout of last resort, when dot ran past the budget: simplePositions with the boxes
// Graphviz gives the labels (a first nop2 pass with every node on one row), then nop2 with
// straight edges; nested graphs' clusters are left out (their nodes stay). In process and not
// budgeted: a few hundred milliseconds for a focused view. Lock taken here.
LayoutResult simpleLayout(const DrawGraph& drawing, const LayoutOptions& o) {
    const auto start = Clock::now();
    // nop2 draws clusters from the boxes dot computed for them, which this layout has not:
    // nested graphs' nodes are laid out with the rest.
    DrawGraph flat;
    if (!drawing.clusters.empty()) {
        flat = drawing;
        flat.clusters.clear();
    }
    const DrawGraph& drawn = drawing.clusters.empty() ? drawing : flat;
    const std::string dot = writeDot(drawn, o.dot);
    std::lock_guard lock(graphvizMutex());
    GVC_s* gvc = gvinternal::sharedContext();
    LayoutResult sized;
    readGeometry(layoutHere(gvc, pinnedStraight(dot, nullptr), "nop2").dot, nullptr, sized);
    std::unordered_map<std::string, LayoutPoint> size;
    for (const LayoutNode& n : sized.nodes) size.emplace(n.key, LayoutPoint{n.width, n.height});
    const auto pos = simplePositions(drawn, size, o.dot.rankdir == "LR");
    Positioned positioned = layoutHere(gvc, pinnedStraight(dot, &pos), "nop2");
    LayoutResult r;
    r.dot = dot;
    r.positionedDot = std::move(positioned.dot);
    r.warnings = splitLines(positioned.warnings);
    readGeometry(r.positionedDot, &drawn, r);
    r.focused = drawn.focused;
    r.isDiff = drawn.isDiff;
    r.hiddenNodes = drawn.hiddenNodes;
    r.totalNodes = drawn.totalNodes != 0 ? drawn.totalNodes : drawn.nodes.size();
    r.simple = true;
    r.layoutMs = msSince(start);
    return r;
}

// `g` with `note` added to its caption's note line.
DrawGraph withNote(DrawGraph g, const std::string& note) {
    g.caption.note += (g.caption.note.empty() ? "" : " \xC2\xB7 ") + note;
    return g;
}

} // namespace

namespace {

// Above this many rank levels crossed by its edges (rankLevelsCrossed), a focused view gets the
// simple layout without trying dot: 7,500 took dot 5 s of CPU, the views of a step, at most a
// few hundred.
constexpr std::size_t kMaxRankLevelsCrossed = 3000;

// `g` with the nodes that feed kStubFanOut or more others (not "… N nodes" boxes) drawn as stubs beside their consumers
// (stubFanOut), and a caption note saying so, when `g`'s edges cross more than
// kMaxRankLevelsCrossed rank levels and the stubs bring that under it; else nothing. A chain of
// 100 diamonds reading one shared weight crosses ~15,000 (dot: minutes; 205 nodes) and none with
// the weight's stubs. `crossed` is rankLevelsCrossed(g) when already known.
std::optional<DrawGraph> shortened(const DrawGraph& g, std::size_t crossed = 0) {
    if (crossed == 0) crossed = rankLevelsCrossed(g);
    if (crossed <= kMaxRankLevelsCrossed) return std::nullopt;
    DrawGraph stubbed = stubFanOut(g, kStubFanOut, false); // (a focused view's boxes: the simple layout)
    if (stubbed.nodes.size() == g.nodes.size()) return std::nullopt;
    if (rankLevelsCrossed(stubbed) > kMaxRankLevelsCrossed) return std::nullopt;
    std::set<std::string> repeated;
    for (const DrawNode& n : stubbed.nodes)
        if (!n.stubOf.empty()) repeated.insert(n.stubOf);
    return withNote(std::move(stubbed), groupThousands(repeated.size()) + " node" + (repeated.size() == 1 ? "" : "s") +
                                            " with " + std::to_string(kStubFanOut) +
                                            " or more consumers drawn again beside each (dashed)");
}

// Whether layout() draws the focused view of `g` straight away (above nodeThreshold).
bool focusedAtOnce(const DrawGraph& g, const LayoutOptions& options) {
    return g.nodes.size() > options.nodeThreshold && !g.focused;
}

// Whether `g` is the focused view of a drawing above nodeThreshold made by the caller
// (drawFocused): laid out as layout() lays out the one it makes itself.
bool madeFocused(const DrawGraph& g, const LayoutOptions& options) {
    return g.focused && g.totalNodes > options.nodeThreshold;
}

// layout()'s choice of what to draw within the budget: `g` (its DOT `fullDot`), or past
// nodeThreshold (`focused`: its focused view, when the caller made it already; `fullDot` is not
// read then) or fullShare of the budget its focused view, or past the budget the simple layout.
// With `job`, each dot layout also renders in its Graphviz process (into `*rendered`); a simple
// layout leaves `*rendered` empty. `start`: when the budget began.
LayoutResult chooseLayout(const DrawGraph& g, const std::string& fullDot, const LayoutOptions& options,
                          const CancelToken* cancel, Clock::time_point start, const RenderJob* job,
                          std::string* rendered, const DrawGraph* focused = nullptr) {
    const double budgetMs = static_cast<double>(options.budget.count());
    const std::size_t count = madeFocused(g, options) ? g.totalNodes : g.nodes.size();
    const std::string budgetText = "the " + seconds(budgetMs) + " budget";
    // Lays out `d` with what is left of the budget; past it, the simple layout of `d` with
    // `simpleNote` in its caption. Cancel and Graphviz errors go through.
    auto layoutOrSimple = [&](const DrawGraph& d, const std::string& simpleNote) {
        try {
            return runLayout(writeDot(d, options.dot), &d, options, start + options.budget, cancel, budgetMs, "dot",
                             job, rendered);
        } catch (const LayoutError& e) {
            if (e.kind() != LayoutError::Kind::TimedOut) throw;
            LayoutResult s = simpleLayout(withNote(d, simpleNote), options);
            s.budgetNote = simpleNote;
            return s;
        }
    };
    LayoutResult r;
    if (focusedAtOnce(g, options) || madeFocused(g, options)) {
        const DrawGraph computed =
            focused || g.focused ? DrawGraph{} : focusView(g, options.focusHops, options.focusMaxNodes);
        const DrawGraph& view = focused ? *focused : g.focused ? g : computed;
        // a view whose edges cross too many ranks would run past the budget into the simple
        // layout anyway: its high fan-out nodes as stubs, or else the simple layout at once
        const std::size_t crossed = rankLevelsCrossed(view);
        if (const std::optional<DrawGraph> stubbed = shortened(view, crossed)) {
            r = layoutOrSimple(*stubbed, "Graphviz's layout of the focused view ran past " + budgetText +
                                             ": simple layout drawn instead");
        } else if (crossed > kMaxRankLevelsCrossed) {
            const std::string note = "the focused view's edges cross " + groupThousands(crossed) +
                                     " rank levels, too many for Graphviz's layout: simple layout drawn instead";
            r = simpleLayout(withNote(view, note), options);
            r.budgetNote = note;
        } else {
            r = layoutOrSimple(view, "Graphviz's layout of the focused view ran past " + budgetText +
                                         ": simple layout drawn instead");
        }
        r.focusReason = groupThousands(count) + " nodes (threshold " + groupThousands(options.nodeThreshold) + ")";
    } else {
        const bool canFall = !g.focused && count > 1;
        const double share = canFall ? std::clamp(options.fullShare, 0.0, 1.0) : 1.0;
        const auto fullDeadline = start + std::chrono::duration_cast<Clock::duration>(options.budget * share);
        try {
            r = runLayout(fullDot, &g, options, fullDeadline, cancel, budgetMs * share, "dot", job, rendered);
        } catch (const LayoutError& e) {
            if (e.kind() != LayoutError::Kind::TimedOut) throw;
            if (!canFall) {
                r = layoutOrSimple(g, "Graphviz's layout ran past " + budgetText + ": simple layout drawn instead");
            } else {
                const std::string past = "the full layout ran past " + seconds(budgetMs * share);
                const DrawGraph focused = focusView(g, options.focusHops, options.focusMaxNodes);
                if (focused.hiddenNodes == 0) { // the focused view is the whole graph: dot already gave up on it
                    const std::string note = past + ": simple layout drawn instead";
                    r = simpleLayout(withNote(g, note), options);
                    r.budgetNote = note;
                } else {
                    const std::string note =
                        past + " (" + groupThousands(count) + " nodes): focused view drawn instead";
                    r = layoutOrSimple(withNote(focused, note),
                                       past + " and the focused view's past " + budgetText +
                                           ": simple layout of the focused view drawn instead");
                    if (r.budgetNote.empty()) r.budgetNote = note;
                    r.focusReason = past;
                }
            }
        }
    }
    r.layoutMs = msSince(start);
    return r;
}

} // namespace

LayoutResult LayoutEngine::layout(const DrawGraph& drawing, const LayoutOptions& options, const CancelToken* cancel) {
    const auto start = Clock::now();
    // a drawing whose long edges would take dot minutes: its high fan-out nodes as stubs
    const std::optional<DrawGraph> stubbed =
        focusedAtOnce(drawing, options) || madeFocused(drawing, options) ? std::nullopt : shortened(drawing);
    const DrawGraph& g = stubbed ? *stubbed : drawing;
    // Above the threshold only the focused view is laid out: only its DOT is written and keys
    // the cache (with the drawing's size, which its focus reason names), since writing and
    // hashing the DOT of a 20,000-node step cost more than laying out its view.
    std::optional<DrawGraph> focused;
    if (focusedAtOnce(g, options)) focused = focusView(g, options.focusHops, options.focusMaxNodes);
    const std::string dot = writeDot(focused ? *focused : g, options.dot);
    std::string key = dot + optionsKey(options);
    if (focused || madeFocused(g, options)) {
        key += "|focused view of " + std::to_string(focused ? g.nodes.size() : g.totalNodes);
    } else { // the seeds are not in the DOT but choose the focused view of a fallback
        key += "|seeds";
        for (const DrawNode& n : g.nodes)
            if (n.seed) key += " " + n.key;
    }
    const std::uint64_t hash = fnv1a(key);
    if (options.cache)
        if (auto hit = cached(hash, key)) return *hit;
    LayoutResult r = chooseLayout(g, focused ? std::string() : dot, options, cancel, start, nullptr, nullptr,
                                  focused ? &*focused : nullptr);
    if (options.cache && !r.simple) store(hash, key, r);
    return r;
}

RenderedLayout LayoutEngine::layoutAndRender(const DrawGraph& g, const RenderOptions& render,
                                             const LayoutOptions& options, const CancelToken* cancel) {
    const auto start = Clock::now();
    if (render.format == RenderFormat::Png) checkDpi(render.dpi);
    const RenderJob job{render.format, render.view, render.dpi, render.geometry};
    RenderedLayout out;
    const std::optional<DrawGraph> stubbed =
        focusedAtOnce(g, options) || madeFocused(g, options) ? std::nullopt : shortened(g);
    const DrawGraph& drawn = stubbed ? *stubbed : g;
    out.layout = chooseLayout(drawn, writeDot(drawn, options.dot), options, cancel, start, &job, &out.bytes);
    if (out.layout.simple) { // laid out in process by nop2 already: rendered the same way
        out.bytes = this->render(out.layout, render.format, render.view, render.dpi);
        if (!render.geometry) {
            out.layout.nodes.clear();
            out.layout.edges.clear();
            out.layout.captionPos.reset();
            out.layout.positionedDot.clear();
        }
    }
    return out;
}

namespace {

// layoutStable: up to this many drawn nodes, the new nodes' arrangement comes from a dot layout
// of the whole graph (cheap there), above it from a layout of the changed region only.
constexpr std::size_t kStableFullLayoutNodes = 200;

} // namespace

LayoutResult LayoutEngine::layoutStable(const DrawGraph& drawing, const LayoutResult& previous,
                                        const LayoutOptions& options, const CancelToken* cancel) {
    const auto start = Clock::now();
    // stubs as layout() draws them (the previous drawing has them too, under the same keys)
    const std::optional<DrawGraph> stubbed =
        drawing.focused || drawing.nodes.size() > options.nodeThreshold ? std::nullopt : shortened(drawing);
    const DrawGraph& g = stubbed ? *stubbed : drawing;
    std::unordered_map<std::string, const LayoutNode*> before;
    for (const LayoutNode& n : previous.nodes)
        if (n.category != NodeCategory::Collapsed) before.emplace(n.key, &n);
    std::size_t common = 0;
    for (const DrawNode& n : g.nodes) common += before.contains(n.key);
    if (previous.focused || g.focused || g.nodes.empty() || g.nodes.size() > options.nodeThreshold ||
        common * 2 < g.nodes.size())
        return layout(g, options, cancel);

    // Box sizes and the local arrangement of the new nodes: from a dot layout of the whole graph
    // while it is small, else of the new nodes and their neighbours only (the rest is pinned and
    // keeps its previous box), so a step of a 650-node graph costs a small layout, not a big one.
    LayoutResult fresh;
    if (g.nodes.size() <= kStableFullLayoutNodes) {
        fresh = layout(g, options, cancel);
    } else {
        std::unordered_set<std::string> keep;
        for (const DrawNode& n : g.nodes)
            if (!before.contains(n.key)) keep.insert(n.key);
        std::unordered_set<std::string> around = keep;
        for (const DrawEdge& e : g.edges) {
            if (keep.contains(e.tail)) around.insert(e.head);
            if (keep.contains(e.head)) around.insert(e.tail);
        }
        DrawGraph sub;
        for (const DrawNode& n : g.nodes)
            if (around.contains(n.key)) sub.nodes.push_back(n);
        for (const DrawEdge& e : g.edges)
            if (around.contains(e.tail) && around.contains(e.head)) sub.edges.push_back(e);
        LayoutOptions subOptions = options;
        subOptions.dot.legend = false;
        subOptions.dot.caption = false;
        const LayoutResult local = sub.nodes.empty() ? LayoutResult{} : layout(sub, subOptions, cancel);
        std::unordered_map<std::string, const LayoutNode*> placed;
        for (const LayoutNode& n : local.nodes) placed.emplace(n.key, &n);
        for (const DrawNode& n : g.nodes) {
            if (auto it = placed.find(n.key); it != placed.end())
                fresh.nodes.push_back(*it->second);
            else if (auto old = before.find(n.key); old != before.end())
                fresh.nodes.push_back(*old->second);
        }
        fresh.edges = local.edges;
        fresh.dot = writeDot(g, options.dot);
    }
    std::size_t pinned = 0;
    const std::vector<LayoutPoint> pos = stablePositions(fresh, previous, &pinned);
    std::string dot;
    {
        std::lock_guard lock(graphvizMutex());
        dot = pinnedDot(fresh.dot, g, fresh.nodes, pos, previous);
    }
    const double budgetMs = static_cast<double>(options.budget.count());
    LayoutResult r;
    try {
        r = runLayout(dot, &g, options, start + options.budget, cancel, budgetMs, "nop2");
    } catch (const LayoutError& e) {
        if (e.kind() != LayoutError::Kind::TimedOut) throw;
        // Past the budget: a fresh drawing, as layout() falls back (never TimedOut): the layout
        // of the whole graph made above, else one within what is left of the budget.
        if (g.nodes.size() <= kStableFullLayoutNodes) return fresh;
        LayoutOptions rest = options;
        rest.budget =
            std::max(std::chrono::milliseconds(0),
                     std::chrono::duration_cast<std::chrono::milliseconds>(start + options.budget - Clock::now()));
        return layout(g, rest, cancel);
    }
    // nop2 may translate the drawing (its box to the origin): undo that, so that pinned nodes
    // keep the previous drawing's coordinates exactly
    {
        std::unordered_map<std::string, std::size_t> at;
        for (std::size_t i = 0; i < fresh.nodes.size(); ++i) at.emplace(fresh.nodes[i].key, i);
        double dx = 0, dy = 0;
        for (const LayoutNode& n : r.nodes)
            if (auto it = at.find(n.key); it != at.end()) {
                dx = pos[it->second].x - n.center.x;
                dy = pos[it->second].y - n.center.y;
                break;
            }
        if (dx != 0 || dy != 0) {
            auto move = [dx, dy](LayoutPoint& p) {
                p.x += dx;
                p.y += dy;
            };
            for (LayoutNode& n : r.nodes) move(n.center);
            for (LayoutEdge& e : r.edges) {
                for (LayoutPoint& p : e.spline) move(p);
                if (e.arrowTip) move(*e.arrowTip);
                if (e.labelPos) move(*e.labelPos);
            }
            if (r.captionPos) move(*r.captionPos);
            r.x0 += dx;
            r.y0 += dy;
        }
    }
    r.dot = fresh.dot;
    r.stable = true;
    r.pinnedNodes = pinned;
    r.layoutMs = msSince(start);
    return r;
}

std::string LayoutEngine::render(const LayoutResult& layout, RenderFormat format, DiffView view, double dpi) const {
    if (layout.positionedDot.empty()) throw Error("render: the layout is empty (nothing was laid out)");
    if (format == RenderFormat::Png) {
        checkDpi(dpi);
        checkPngSize(layout, dpi);
    }
    std::lock_guard lock(graphvizMutex());
    GVC_s* gvc = gvinternal::sharedContext();
    ErrorCapture errors;
    errors.begin();
    GraphPtr graph(agmemread(layout.positionedDot.c_str()));
    if (!graph) throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot read the layout", "no graph"));
    Agraph_t* g = graph.get();
    if (const char* refused = applyView(g, view, format, dpi))
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message(std::string("cannot set attribute ") + refused));
    errors.begin();
    if (gvLayout(gvc, g, "nop2") != 0)
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot place the laid-out graph (nop2)"));
    const LayoutGuard guard(gvc, g);
    errors.begin();
    char* data = nullptr;
    RenderLength length = 0;
    const char* name = renderFormatName(format);
    const int rc = gvRenderData(gvc, g, name, &data, &length);
    const RenderDataPtr buffer(data);
    if (rc != 0 || buffer == nullptr)
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message(std::string("cannot render ") + name));
    return std::string(buffer.get(), static_cast<std::size_t>(length));
}

} // namespace passlens
