// The stable layout for stepping (LayoutEngine::layoutStable): positions that keep the previous
// drawing's nodes where they were and fit the new ones in around them, edge routes around the
// boxes, and the pinned DOT that hands both to nop2.
#include "passlens/layout/LayoutEngine.h"
#include "LayoutInternal.h"
#include "StableRoute.h"

#include <passlens/layout/GraphvizContext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <unordered_map>

namespace passlens {

namespace {

struct Box {
    double x0, y0, x1, y1; // centre +- half size, grown by the margins
    bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// A uniform grid over boxes: cells of kCell points hold the indices of the boxes touching them.
class BoxGrid {
public:
    static constexpr double kCell = 64;
    void add(const Box& b) {
        const auto id = static_cast<std::uint32_t>(m_boxes.size());
        m_boxes.push_back(b);
        forCells(b, [&](std::int64_t key) {
            m_cells[key].push_back(id);
            return true;
        });
    }
    bool free(const Box& b) const {
        return forCells(b, [&](std::int64_t key) {
            auto it = m_cells.find(key);
            if (it == m_cells.end()) return true;
            for (const std::uint32_t id : it->second)
                if (m_boxes[id].overlaps(b)) return false;
            return true;
        });
    }

private:
    template <typename F> bool forCells(const Box& b, F&& f) const {
        const auto cx0 = static_cast<std::int64_t>(std::floor(b.x0 / kCell)),
                   cx1 = static_cast<std::int64_t>(std::floor(b.x1 / kCell));
        const auto cy0 = static_cast<std::int64_t>(std::floor(b.y0 / kCell)),
                   cy1 = static_cast<std::int64_t>(std::floor(b.y1 / kCell));
        for (auto cx = cx0; cx <= cx1; ++cx)
            for (auto cy = cy0; cy <= cy1; ++cy)
                if (!f((cx << 32) ^ (cy & 0xffffffff))) return false;
        return true;
    }
    std::vector<Box> m_boxes;
    std::unordered_map<std::int64_t, std::vector<std::uint32_t>> m_cells;
};

// dot's separations as written by the DOT writer (nodesep=0.22, ranksep=0.32 inches), halved
// on each side of a box.
constexpr double kMarginX = 0.22 * 72 / 2, kMarginY = 0.32 * 72 / 2;
constexpr double kStepX = 12, kStepY = 12;
constexpr int kRingsX = 60, kRingsY = 30;

Box boxAt(const LayoutPoint& c, const LayoutNode& n) {
    return {c.x - n.width / 2 - kMarginX, c.y - n.height / 2 - kMarginY, c.x + n.width / 2 + kMarginX,
            c.y + n.height / 2 + kMarginY};
}

// Offsets of the search window ordered by cost |dx| + 2 |dy| (sideways first), then by
// position, so the search is deterministic.
const std::vector<std::pair<int, int>>& searchOrder() {
    static const std::vector<std::pair<int, int>> order = [] {
        std::vector<std::pair<int, int>> o;
        for (int dy = -kRingsY; dy <= kRingsY; ++dy)
            for (int dx = -kRingsX; dx <= kRingsX; ++dx) o.emplace_back(dx, dy);
        std::stable_sort(o.begin(), o.end(), [](auto a, auto b) {
            const double ca = std::abs(a.first) * kStepX + 2 * std::abs(a.second) * kStepY;
            const double cb = std::abs(b.first) * kStepX + 2 * std::abs(b.second) * kStepY;
            return ca < cb;
        });
        return o;
    }();
    return order;
}

} // namespace

std::vector<LayoutPoint> stablePositions(const LayoutResult& fresh, const LayoutResult& previous, std::size_t* pinned) {
    const std::size_t n = fresh.nodes.size();
    std::vector<LayoutPoint> pos(n);
    std::vector<char> placed(n, 0);
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) index.emplace(fresh.nodes[i].key, i);
    std::unordered_map<std::string, LayoutPoint> old;
    for (const LayoutNode& p : previous.nodes)
        if (p.category != NodeCategory::Collapsed) old.emplace(p.key, p.center);

    BoxGrid grid;
    std::size_t count = 0;
    LayoutPoint freshSum, oldSum;
    for (std::size_t i = 0; i < n; ++i) {
        const LayoutNode& node = fresh.nodes[i];
        if (node.category == NodeCategory::Collapsed) continue;
        auto it = old.find(node.key);
        if (it == old.end()) continue;
        pos[i] = it->second;
        placed[i] = 1;
        ++count;
        freshSum.x += node.center.x;
        freshSum.y += node.center.y;
        oldSum.x += it->second.x;
        oldSum.y += it->second.y;
        grid.add(boxAt(pos[i], node));
    }
    if (pinned != nullptr) *pinned = count;

    std::vector<std::vector<std::size_t>> neighbours(n);
    for (const LayoutEdge& e : fresh.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end() || t->second == h->second) continue;
        neighbours[t->second].push_back(h->second);
        neighbours[h->second].push_back(t->second);
    }

    auto place = [&](std::size_t i, LayoutPoint desired) {
        const LayoutNode& node = fresh.nodes[i];
        LayoutPoint chosen = desired;
        bool found = false;
        for (const auto& [dx, dy] : searchOrder()) {
            const LayoutPoint c{desired.x + dx * kStepX, desired.y + dy * kStepY};
            if (grid.free(boxAt(c, node))) {
                chosen = c;
                found = true;
                break;
            }
        }
        if (!found) { // the window is full: step right until free (terminates: boxes are finite)
            for (int k = kRingsX + 1; !found; ++k) {
                const LayoutPoint c{desired.x + k * kStepX, desired.y};
                if (grid.free(boxAt(c, node))) {
                    chosen = c;
                    found = true;
                }
            }
        }
        pos[i] = chosen;
        placed[i] = 1;
        grid.add(boxAt(chosen, node));
    };

    // New nodes next to placed neighbours, in waves (chains of new nodes follow each other).
    bool progress = true;
    while (progress) {
        progress = false;
        std::vector<std::pair<std::size_t, LayoutPoint>> wave;
        for (std::size_t i = 0; i < n; ++i) {
            if (placed[i]) continue;
            LayoutPoint sum;
            int k = 0;
            for (const std::size_t nb : neighbours[i]) {
                if (!placed[nb]) continue;
                sum.x += pos[nb].x + (fresh.nodes[i].center.x - fresh.nodes[nb].center.x);
                sum.y += pos[nb].y + (fresh.nodes[i].center.y - fresh.nodes[nb].center.y);
                ++k;
            }
            if (k > 0) wave.emplace_back(i, LayoutPoint{sum.x / k, sum.y / k});
        }
        for (const auto& [i, desired] : wave) place(i, desired);
        progress = !wave.empty();
    }
    // Whatever is left has no placed neighbour: keep dot's offset from the common centroid.
    const LayoutPoint shift = count > 0 ? LayoutPoint{(oldSum.x - freshSum.x) / static_cast<double>(count),
                                                      (oldSum.y - freshSum.y) / static_cast<double>(count)}
                                        : LayoutPoint{};
    for (std::size_t i = 0; i < n; ++i)
        if (!placed[i]) place(i, LayoutPoint{fresh.nodes[i].center.x + shift.x, fresh.nodes[i].center.y + shift.y});
    return pos;
}

} // namespace passlens

namespace passlens::stable {

namespace {

constexpr double kArrow = 10; // Graphviz's arrowhead length at arrowsize 1, points

void line(std::vector<LayoutPoint>& out, LayoutPoint a, LayoutPoint b) {
    out.push_back({a.x + (b.x - a.x) / 3, a.y + (b.y - a.y) / 3});
    out.push_back({a.x + 2 * (b.x - a.x) / 3, a.y + 2 * (b.y - a.y) / 3});
    out.push_back(b);
}

// A vertical S bend from a to b (a above b).
void bend(std::vector<LayoutPoint>& out, LayoutPoint a, LayoutPoint b) {
    const double mid = (a.y + b.y) / 2;
    out.push_back({a.x, mid});
    out.push_back({b.x, mid});
    out.push_back(b);
}

} // namespace

bool crosses(const std::vector<LayoutPoint>& s, const std::vector<Rect>& boxes, double margin) {
    for (std::size_t k = 0; k + 3 < s.size(); k += 3) {
        const LayoutPoint* c = &s[k];
        for (int i = 0; i <= 16; ++i) {
            const double t = i / 16.0, u = 1 - t;
            const double x = u * u * u * c[0].x + 3 * u * u * t * c[1].x + 3 * u * t * t * c[2].x + t * t * t * c[3].x;
            const double y = u * u * u * c[0].y + 3 * u * u * t * c[1].y + 3 * u * t * t * c[2].y + t * t * t * c[3].y;
            for (const Rect& r : boxes)
                if (x > r.x0 - margin && x < r.x1 + margin && y > r.y0 - margin && y < r.y1 + margin) return true;
        }
    }
    return false;
}

std::vector<LayoutPoint> route(const Rect& tail, const Rect& head, const std::vector<Rect>& obstacles, LayoutPoint& tip,
                               LayoutPoint& labelAt, double labelWidth, double tailAt, double headAt) {
    const LayoutPoint s{tail.x0 + (tail.x1 - tail.x0) * tailAt, tail.y0};
    tip = {head.x0 + (head.x1 - head.x0) * headAt, head.y1};
    const LayoutPoint e{tip.x, tip.y + kArrow};
    // only boxes near the route's span matter
    std::vector<Rect> near;
    const double top = std::max(s.y, e.y) + 4, bottom = std::min(s.y, e.y) - 4;
    auto same = [](const Rect& a, const Rect& b) {
        return a.x0 == b.x0 && a.y0 == b.y0 && a.x1 == b.x1 && a.y1 == b.y1;
    };
    for (const Rect& r : obstacles)
        if (r.y1 > bottom && r.y0 < top && !same(r, tail) && !same(r, head)) near.push_back(r);
    auto build = [&](double x) {
        std::vector<LayoutPoint> out{s};
        const double gap = std::min(24.0, (s.y - e.y) / 3);
        if (s.y - e.y < 30) { // short: one bend
            bend(out, s, e);
            return out;
        }
        const LayoutPoint p1{x, s.y - gap}, p2{x, e.y + gap};
        bend(out, s, p1);
        line(out, p1, p2);
        bend(out, p2, e);
        return out;
    };
    std::vector<double> xs{s.x, e.x, (s.x + e.x) / 2};
    for (int k = 1; k <= 60; ++k) {
        xs.push_back((s.x + e.x) / 2 + k * 12);
        xs.push_back((s.x + e.x) / 2 - k * 12);
    }
    std::vector<LayoutPoint> best;
    for (const double x : xs) {
        auto candidate = build(x);
        if (!crosses(candidate, near, 2)) {
            best = std::move(candidate);
            break;
        }
    }
    if (best.empty()) best = build((s.x + e.x) / 2);
    // the label right of the middle of the route
    const LayoutPoint& m = best[best.size() / 2];
    labelAt = {m.x + labelWidth / 2 + 3, m.y};
    return best;
}

} // namespace passlens::stable

namespace passlens::layoutinternal {

using gvinternal::ErrorCapture;

std::string pinnedDot(const std::string& dot, const DrawGraph& drawn, const std::vector<LayoutNode>& nodes,
                      const std::vector<LayoutPoint>& pos, const LayoutResult& previous) {
    ErrorCapture errors;
    errors.begin();
    GraphPtr graph(agmemread(dot.c_str()));
    if (!graph) throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot parse DOT", "no graph in input"));
    Agraph_t* g = graph.get();
    auto set = [&errors](void* obj, const char* name, const char* value) { setAttribute(errors, obj, name, value); };
    set(g, "splines", "true");
    std::unordered_map<std::string, LayoutPoint> kept; // key -> centre, nodes of `previous`
    for (const LayoutNode& n : previous.nodes)
        if (n.category != NodeCategory::Collapsed) kept.emplace(n.key, n.center);
    std::vector<stable::Rect> fresh; // boxes of the new nodes
    std::vector<stable::Rect> boxes;
    std::unordered_map<std::string, std::size_t> boxOf;
    char buffer[96];
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        Agnode_t* n = agnode(g, const_cast<char*>(nodes[i].key.c_str()), 0);
        if (n == nullptr) continue;
        std::snprintf(buffer, sizeof buffer, "%.3f,%.3f!", pos[i].x, pos[i].y);
        set(n, "pos", buffer);
        const stable::Rect box{pos[i].x - nodes[i].width / 2, pos[i].y - nodes[i].height / 2,
                               pos[i].x + nodes[i].width / 2, pos[i].y + nodes[i].height / 2};
        boxOf.emplace(nodes[i].key, boxes.size());
        boxes.push_back(box);
        if (!kept.contains(nodes[i].key)) fresh.push_back(box);
    }
    std::unordered_map<std::string, const LayoutEdge*> oldEdges; // "tail head index"
    for (const LayoutEdge& e : previous.edges)
        if (e.spline.size() >= 4) oldEdges.emplace(e.tail + ' ' + e.head + ' ' + std::to_string(e.inputIndex), &e);
    // where each routed edge leaves its tail and meets its head: spread by the other end's x
    // (tails) and by input index (heads), as dot's ports would
    std::unordered_map<std::string, std::vector<double>> outX; // tail -> heads' x
    std::unordered_map<std::string, std::vector<int>> inIndex; // head -> input indices
    for (const DrawEdge& e : drawn.edges) {
        auto h = boxOf.find(e.head);
        if (h == boxOf.end()) continue;
        outX[e.tail].push_back((boxes[h->second].x0 + boxes[h->second].x1) / 2);
        inIndex[e.head].push_back(e.inputIndex);
    }
    auto spread = [](std::vector<double> all, double v) {
        std::sort(all.begin(), all.end());
        const auto k = static_cast<double>(std::lower_bound(all.begin(), all.end(), v) - all.begin());
        return (k + 1) / (static_cast<double>(all.size()) + 1);
    };
    std::list<LayoutEdge> routedEdges;
    for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n))
        for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e)) {
            const std::string tail = agnameof(agtail(e)), head = agnameof(aghead(e));
            const char* index = agget(e, const_cast<char*>("pl_edge"));
            const long k = index != nullptr && *index != '\0' ? std::strtol(index, nullptr, 10) : -1;
            const DrawEdge* de = k >= 0 && static_cast<std::size_t>(k) < drawn.edges.size()
                                     ? &drawn.edges[static_cast<std::size_t>(k)]
                                     : nullptr;
            const LayoutEdge* reuse = nullptr;
            if (de != nullptr && kept.contains(tail) && kept.contains(head)) {
                auto it = oldEdges.find(tail + ' ' + head + ' ' + std::to_string(de->inputIndex));
                if (it != oldEdges.end() && !stable::crosses(it->second->spline, fresh, 0)) reuse = it->second;
            }
            if (reuse == nullptr) { // a new route around the boxes (Graphviz's own router is ~1 s here)
                auto t = boxOf.find(tail), h = boxOf.find(head);
                if (t == boxOf.end() || h == boxOf.end()) continue;
                const std::string label = de != nullptr ? de->label : std::string();
                LayoutEdge routed;
                LayoutPoint tip, labelAt;
                const double headX = (boxes[h->second].x0 + boxes[h->second].x1) / 2;
                const double tailAt = spread(outX[tail], headX);
                std::vector<double> inputs(inIndex[head].begin(), inIndex[head].end());
                const double headAt = spread(inputs, de != nullptr ? de->inputIndex : 0);
                routed.spline = stable::route(boxes[t->second], boxes[h->second], boxes, tip, labelAt,
                                              3.6 * static_cast<double>(label.size()), tailAt, headAt);
                routed.arrowTip = tip;
                if (!label.empty()) routed.labelPos = labelAt;
                routed.label = label;
                routedEdges.push_back(std::move(routed));
                reuse = &routedEdges.back();
            }
            const LayoutEdge& old = *reuse;
            std::string text;
            if (old.arrowTip) {
                std::snprintf(buffer, sizeof buffer, "e,%.3f,%.3f", old.arrowTip->x, old.arrowTip->y);
                text = buffer;
            }
            for (const LayoutPoint& p : old.spline) {
                std::snprintf(buffer, sizeof buffer, "%s%.3f,%.3f", text.empty() ? "" : " ", p.x, p.y);
                text += buffer;
            }
            set(e, "pos", text.c_str());
            if (old.labelPos && de != nullptr && !de->label.empty()) {
                std::snprintf(buffer, sizeof buffer, "%.3f,%.3f", old.labelPos->x, old.labelPos->y);
                set(e, "xlp", buffer);
            }
        }
    return dotText(g, errors, "the pinned DOT");
}

} // namespace passlens::layoutinternal
