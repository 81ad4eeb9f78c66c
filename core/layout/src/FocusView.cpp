// focusView (DrawGraph.h): the changed region of a large drawing and a few hops around it, the
// rest folded into placeholder nodes.
#include "passlens/layout/DrawGraph.h"

#include <passlens/diff/GraphDiff.h>

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace passlens {

DrawGraph focusView(const DrawGraph& g, int hops, std::size_t maxNodes) {
    const std::size_t n = g.nodes.size();
    if (n == 0) return g;
    maxNodes = std::max<std::size_t>(maxNodes, 1);
    std::unordered_map<std::string, std::size_t> index;
    index.reserve(n * 2);
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].key, i);
    std::vector<std::vector<std::size_t>> succ(n), pred(n);
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end()) continue;
        succ[t->second].push_back(h->second);
        pred[h->second].push_back(t->second);
    }

    std::vector<std::size_t> seeds;
    std::string around = "the changed region";
    for (std::size_t i = 0; i < n; ++i)
        if (g.nodes[i].seed) seeds.push_back(i);
    const bool explicitSeeds = !seeds.empty();
    if (seeds.empty()) {
        around = "the transfers";
        for (std::size_t i = 0; i < n; ++i)
            if (g.nodes[i].category == NodeCategory::Transfer) seeds.push_back(i);
    }
    if (seeds.empty()) {
        around = "the outputs";
        for (std::size_t i = 0; i < n; ++i)
            if (g.nodes[i].category == NodeCategory::Output) seeds.push_back(i);
    }
    if (seeds.empty()) seeds.push_back(n - 1);

    auto expand = [&](const std::vector<std::size_t>& from, int k) {
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
            if (dist[i] >= k) continue;
            for (const auto* adj : {&succ[i], &pred[i]})
                for (std::size_t j : *adj)
                    if (dist[j] < 0) {
                        dist[j] = dist[i] + 1;
                        queue.push_back(j);
                        visible.push_back(j);
                        if (visible.size() > maxNodes) return visible; // too many already
                    }
        }
        return visible;
    };

    std::vector<std::size_t> visible;
    int usedHops = std::max(hops, 0);
    for (;; --usedHops) {
        visible = expand(seeds, usedHops);
        if (visible.size() <= maxNodes || usedHops == 0) break;
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
            for (std::size_t j : pred[i])
                if (!shown[j] && !upstream[j]) {
                    upstream[j] = true;
                    queue.push_back(j);
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
        for (std::size_t j : succ[i])
            if (!shown[j] && upstream[i] == upstream[j]) parent[find(i)] = find(j);
    }

    DrawGraph out = g.withoutElements();
    out.hiddenNodes = 0;
    out.focused = true;
    out.focusAround = around;
    out.focusHops = usedHops;
    out.totalNodes = g.totalNodes != 0 ? g.totalNodes : n;

    // Which hidden components touch the visible part.
    std::vector<bool> touches(n, false);
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end()) continue;
        if (shown[t->second] != shown[h->second]) touches[find(shown[t->second] ? h->second : t->second)] = true;
    }
    struct Component {
        std::size_t count = 0;
        std::map<std::string, int> categories;
        std::size_t firstNode = 0;
    };
    std::map<std::size_t, Component> components; // root -> info
    Component orphans;
    std::size_t hidden = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (shown[i]) continue;
        ++hidden;
        const std::size_t r = find(i);
        Component& c = touches[r] ? components[r] : orphans;
        if (c.count == 0) c.firstNode = i;
        ++c.count;
        ++c.categories[nodeCategoryName(g.nodes[i].category)];
    }
    out.hiddenNodes = hidden;

    auto describe = [](const Component& c) {
        std::vector<std::pair<int, std::string>> parts;
        for (const auto& [name, count] : c.categories) parts.emplace_back(-count, name);
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
    int next = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (shown[i]) {
            out.nodes.push_back(g.nodes[i]);
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
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end()) continue;
        const bool ts = shown[t->second], hs = shown[h->second];
        if (ts && hs) {
            out.edges.push_back(e);
            continue;
        }
        if (!ts && !hs) continue;
        DrawEdge c;
        c.tail = ts ? e.tail : placeholderKey[find(t->second)];
        c.head = hs ? e.head : placeholderKey[find(h->second)];
        c.inputIndex = 0;
        c.collapsed = true;
        c.gpu = e.gpu;
        if (collapsedEdges.insert({c.tail, c.head}).second) out.edges.push_back(std::move(c));
    }
    return out;
}

} // namespace passlens
