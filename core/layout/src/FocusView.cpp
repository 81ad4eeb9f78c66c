// focusView (DrawGraph.h): the changed region of a large drawing and a few hops around it, the
// rest folded into placeholder nodes.
#include "passlens/layout/DrawGraph.h"

#include "DrawInternal.h"

#include <passlens/diff/GraphDiff.h>

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace passlens {

namespace drawinternal {

DrawGraph focusOn(const FocusInput& in, int hops, std::size_t maxNodes, DrawGraph out, std::size_t totalNodes,
                  const std::function<DrawNode(std::size_t)>& node, const std::function<DrawEdge(std::size_t)>& edge) {
    const std::size_t n = in.category.size();
    maxNodes = std::max<std::size_t>(maxNodes, 1);
    // successors and predecessors of each node, in edge order (compressed rows)
    struct Adjacency {
        std::vector<std::size_t> start, to;
        const std::size_t* begin(std::size_t i) const { return to.data() + start[i]; }
        const std::size_t* end(std::size_t i) const { return to.data() + start[i + 1]; }
    };
    auto adjacency = [&](bool forward) {
        Adjacency a;
        a.start.assign(n + 1, 0);
        for (const FocusInput::Edge& e : in.edges) ++a.start[(forward ? e.tail : e.head) + 1];
        for (std::size_t i = 0; i < n; ++i) a.start[i + 1] += a.start[i];
        a.to.resize(in.edges.size());
        std::vector<std::size_t> fill(a.start.begin(), a.start.end() - 1);
        for (const FocusInput::Edge& e : in.edges) a.to[fill[forward ? e.tail : e.head]++] = forward ? e.head : e.tail;
        return a;
    };
    const Adjacency succ = adjacency(true), pred = adjacency(false);

    std::vector<std::size_t> seeds;
    std::string around = "the changed region";
    for (std::size_t i = 0; i < n; ++i)
        if (in.seed[i]) seeds.push_back(i);
    const bool explicitSeeds = !seeds.empty();
    if (seeds.empty()) {
        around = "the transfers";
        for (std::size_t i = 0; i < n; ++i)
            if (in.category[i] == NodeCategory::Transfer) seeds.push_back(i);
    }
    if (seeds.empty()) {
        around = "the outputs";
        for (std::size_t i = 0; i < n; ++i)
            if (in.category[i] == NodeCategory::Output) seeds.push_back(i);
    }
    if (seeds.empty()) seeds.push_back(n - 1);

    // A hub (a shared weight's transfer read by every block) is shown when reached but not
    // walked through: its hundreds of neighbours would fill the view at one hop, leaving the
    // seeds alone with one "… N nodes" box. Only when nothing but the seeds would show then are
    // hubs walked through, and the view filled in breadth-first order.
    const std::size_t hubDegree = std::max<std::size_t>(16, maxNodes / 8);
    auto isHub = [&](std::size_t i) {
        return static_cast<std::size_t>((succ.end(i) - succ.begin(i)) + (pred.end(i) - pred.begin(i))) > hubDegree;
    };
    bool throughHubs = false;
    int reached = 0; // the farthest hop expand's last call went
    auto expand = [&](const std::vector<std::size_t>& from, int k) {
        reached = 0;
        std::vector<int> dist(n, -1);
        std::deque<std::size_t> queue;
        std::vector<std::size_t> visible;
        for (std::size_t s : from) {
            if (dist[s] >= 0) continue;
            dist[s] = 0;
            queue.push_back(s);
            visible.push_back(s);
        }
        while (!queue.empty()) {
            const std::size_t i = queue.front();
            queue.pop_front();
            if (dist[i] >= k || (!throughHubs && isHub(i))) continue;
            for (const Adjacency* adj : {&succ, &pred})
                for (const std::size_t* j = adj->begin(i); j != adj->end(i); ++j)
                    if (dist[*j] < 0) {
                        const std::size_t jj = *j;
                        dist[jj] = dist[i] + 1;
                        reached = std::max(reached, dist[jj]);
                        queue.push_back(jj);
                        visible.push_back(jj);
                        if (visible.size() > maxNodes) return visible; // too many already
                    }
        }
        return visible;
    };

    std::vector<std::size_t> visible;
    int usedHops = std::max(hops, 0);
    // More changes than the view holds, spread over a deep graph (merge2 of the 20k block graph:
    // 2,222, one a block): a row of hundreds of unconnected seeds is unreadable, so the view is
    // one piece of the graph instead, breadth-first around the first change, with the changes
    // that fall in it.
    const bool manySeeds = explicitSeeds && seeds.size() > maxNodes;
    if (manySeeds) {
        const std::size_t all = seeds.size();
        visible = expand({seeds.front()}, std::numeric_limits<int>::max());
        usedHops = reached;
        if (visible.size() > maxNodes) visible.resize(maxNodes);
        std::vector<bool> inView(n, false);
        for (std::size_t i : visible) inView[i] = true;
        std::erase_if(seeds, [&](std::size_t i) { return !inView[i]; });
        around = "the first " + groupThousands(static_cast<std::int64_t>(seeds.size())) + " of " +
                 groupThousands(static_cast<std::int64_t>(all)) + " changed nodes";
    }
    for (; !manySeeds; --usedHops) {
        visible = expand(seeds, usedHops);
        if (visible.size() <= maxNodes || usedHops == 0) break;
    }
    if (visible.size() <= seeds.size() && hops > 0) { // only the seeds: through the hubs, cut to fit
        throughHubs = true;
        usedHops = 1;
        visible = expand(seeds, 1);
        if (visible.size() > maxNodes) visible.resize(maxNodes); // the seeds first, then breadth-first
    }
    // Without a changed region, show as much context around the stand-in seeds as fits.
    if (!explicitSeeds && visible.size() <= maxNodes) {
        for (int more = usedHops + 1; more < usedHops + 10000; ++more) {
            auto wider = expand(seeds, more);
            if (wider.size() > maxNodes || wider.size() == visible.size()) break;
            visible = std::move(wider);
            usedHops = more;
        }
    }
    if (visible.size() > maxNodes) {
        std::sort(seeds.begin(), seeds.end());
        seeds.resize(maxNodes);
        visible = seeds;
    }
    std::vector<bool> shown(n, false);
    for (std::size_t i : visible) shown[i] = true;

    // Hidden nodes that reach a visible node are upstream; the rest downstream or aside.
    std::vector<bool> upstream(n, false);
    {
        std::deque<std::size_t> queue;
        for (std::size_t i = 0; i < n; ++i)
            if (shown[i]) queue.push_back(i);
        while (!queue.empty()) {
            const std::size_t i = queue.front();
            queue.pop_front();
            for (const std::size_t* j = pred.begin(i); j != pred.end(i); ++j)
                if (!shown[*j] && !upstream[*j]) {
                    upstream[*j] = true;
                    queue.push_back(*j);
                }
        }
    }
    // Union-find over hidden nodes of the same side.
    std::vector<std::size_t> parent(n);
    std::iota(parent.begin(), parent.end(), std::size_t{0});
    auto find = [&parent](std::size_t x) {
        while (parent[x] != x) {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    };
    for (std::size_t i = 0; i < n; ++i) {
        if (shown[i]) continue;
        for (const std::size_t* j = succ.begin(i); j != succ.end(i); ++j)
            if (!shown[*j] && upstream[i] == upstream[*j]) parent[find(i)] = find(*j);
    }

    out.nodes.clear();
    out.edges.clear();
    out.hiddenNodes = 0;
    out.focused = true;
    out.focusAround = around;
    out.focusHops = usedHops;
    out.totalNodes = totalNodes;

    // Which hidden components touch the visible part.
    std::vector<bool> touches(n, false);
    for (const FocusInput::Edge& e : in.edges)
        if (shown[e.tail] != shown[e.head]) touches[find(shown[e.tail] ? e.head : e.tail)] = true;
    constexpr std::size_t kCategories = static_cast<std::size_t>(NodeCategory::Group) + 1;
    struct Component {
        std::size_t count = 0;
        std::array<int, kCategories> categories{};
    };
    std::map<std::size_t, Component> components; // root -> info
    Component orphans;
    std::size_t hidden = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (shown[i]) continue;
        ++hidden;
        const std::size_t r = find(i);
        Component& c = touches[r] ? components[r] : orphans;
        ++c.count;
        ++c.categories[static_cast<std::size_t>(in.category[i])];
    }
    out.hiddenNodes = hidden;

    // "3 host ops, 2 inputs, …": the two commonest categories (ties by name)
    auto describe = [](const Component& c) {
        std::vector<std::pair<int, std::string>> parts;
        for (std::size_t k = 0; k < kCategories; ++k)
            if (c.categories[k] > 0)
                parts.emplace_back(-c.categories[k], nodeCategoryName(static_cast<NodeCategory>(k)));
        std::sort(parts.begin(), parts.end());
        std::string s;
        for (std::size_t k = 0; k < parts.size() && k < 2; ++k) {
            if (!s.empty()) s += ", ";
            s += std::to_string(-parts[k].first) + " " + parts[k].second + (parts[k].first < -1 ? "s" : "");
        }
        if (parts.size() > 2) s += ", \xE2\x80\xA6";
        return s;
    };
    auto placeholder = [&](const std::string& key, const Component& c, bool more) {
        DrawNode d;
        d.key = key;
        d.category = NodeCategory::Collapsed;
        d.hiddenCount = c.count;
        d.title =
            "\xE2\x80\xA6 " + groupThousands(c.count) + (more ? " more" : "") + (c.count == 1 ? " node" : " nodes");
        d.subtitle = describe(c);
        return d;
    };

    // Visible nodes and placeholders, in the original order (a placeholder at its first node).
    std::map<std::size_t, std::string> placeholderKey;
    std::vector<std::string> shownKey(n); // the keys of the visible nodes, for collapsed edges
    int next = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (shown[i]) {
            out.nodes.push_back(node(i));
            shownKey[i] = out.nodes.back().key;
            continue;
        }
        const std::size_t r = find(i);
        if (!touches[r] || placeholderKey.count(r)) continue;
        const std::string key = "c" + std::to_string(next++);
        placeholderKey.emplace(r, key);
        out.nodes.push_back(placeholder(key, components[r], false));
    }
    if (orphans.count > 0) out.nodes.push_back(placeholder("c" + std::to_string(next++), orphans, true));

    std::set<std::pair<std::string, std::string>> collapsedEdges;
    for (const FocusInput::Edge& e : in.edges) {
        const bool ts = shown[e.tail], hs = shown[e.head];
        if (!ts && !hs) continue;
        DrawEdge drawn = edge(e.source);
        if (ts && hs) {
            out.edges.push_back(std::move(drawn));
            continue;
        }
        DrawEdge c;
        c.tail = ts ? drawn.tail : placeholderKey[find(e.tail)];
        c.head = hs ? drawn.head : placeholderKey[find(e.head)];
        c.inputIndex = 0;
        c.collapsed = true;
        c.gpu = drawn.gpu;
        if (collapsedEdges.insert({c.tail, c.head}).second) out.edges.push_back(std::move(c));
    }
    return out;
}

} // namespace drawinternal

DrawGraph focusView(const DrawGraph& g, int hops, std::size_t maxNodes) {
    const std::size_t n = g.nodes.size();
    if (n == 0) return g;
    std::unordered_map<std::string, std::size_t> index;
    index.reserve(n * 2);
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].key, i);
    drawinternal::FocusInput in;
    in.category.reserve(n);
    in.seed.reserve(n);
    for (const DrawNode& d : g.nodes) {
        in.category.push_back(d.category);
        in.seed.push_back(d.seed);
    }
    for (std::size_t k = 0; k < g.edges.size(); ++k) {
        auto t = index.find(g.edges[k].tail), h = index.find(g.edges[k].head);
        if (t != index.end() && h != index.end()) in.edges.push_back({t->second, h->second, k});
    }
    return drawinternal::focusOn(
        in, hops, maxNodes, g.withoutElements(), g.totalNodes != 0 ? g.totalNodes : n,
        [&g](std::size_t i) { return g.nodes[i]; }, [&g](std::size_t k) { return g.edges[k]; });
}

} // namespace passlens
