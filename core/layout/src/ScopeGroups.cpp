#include "passlens/layout/ScopeGroups.h"
#include "passlens/layout/DotWriter.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace passlens {

std::string nameScope(std::string_view name) {
    const auto slash = name.find_last_of('/');
    if (slash == std::string_view::npos) return {};
    std::string_view scope = name.substr(0, slash);
    while (!scope.empty() && scope.back() == '/') scope.remove_suffix(1);
    // "/Add" has only the root: no scope; "//features/x" keeps its own spelling
    if (scope.find_first_not_of('/') == std::string_view::npos) return {};
    return std::string(scope);
}

std::string parentScope(std::string_view scope) { return nameScope(scope); }

namespace {

std::string countText(std::size_t v) { return groupThousands(static_cast<std::int64_t>(v)); }

// The scope itself and every enclosing one, innermost first ("" excluded).
std::vector<std::string> scopeChain(const std::string& scope) {
    std::vector<std::string> chain;
    for (std::string s = scope; !s.empty(); s = parentScope(s)) chain.push_back(s);
    return chain;
}

std::string groupKey(const std::string& scope) {
    std::uint64_t h = 1469598103934665603ull; // FNV-1a: the same scope gets the same key in every step
    for (const unsigned char c : scope) h = (h ^ c) * 1099511628211ull;
    char buf[24];
    std::snprintf(buf, sizeof buf, "g%016llx", static_cast<unsigned long long>(h));
    return buf;
}

// The innermost scope enclosing both: "/a/b/c" and "/a/b/d" -> "/a/b"; "/a" and "/ab" -> "".
std::string commonScope(const std::string& a, const std::string& b) {
    if (a == b) return a;
    for (std::string s = a; !s.empty(); s = parentScope(s))
        if (b == s || (b.size() > s.size() && b.compare(0, s.size(), s) == 0 && b[s.size()] == '/')) return s;
    return {};
}

std::string lastPart(const std::string& scope) {
    const auto slash = scope.find_last_of('/');
    return slash == std::string::npos ? scope : scope.substr(slash + 1);
}

} // namespace

std::vector<std::string> nodeScopes(const DrawGraph& g) {
    const std::size_t n = g.nodes.size();
    std::vector<std::string> scope(n);
    std::unordered_map<std::string_view, std::size_t> index;
    index.reserve(n);
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].key, i);
    std::vector<std::vector<std::size_t>> producers(n), consumers(n);
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end() || e.headCluster >= 0) continue;
        producers[h->second].push_back(t->second);
        consumers[t->second].push_back(h->second);
    }
    auto inTopLevel = [&](std::size_t i) { return g.nodes[i].cluster < 0; };
    // An op with a name keeps its name's scope ("/Add" and "Gemm_3" are at the top level); only
    // ops without any name (inserted by a rewrite) inherit one.
    std::vector<char> named(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const DrawNode& d = g.nodes[i];
        if (!inTopLevel(i) || !isOp(d.category)) continue;
        scope[i] = nameScope(d.name);
        named[i] = !d.name.empty();
    }
    // Unnamed ops take a producer's scope: g.nodes is in topological order (drawGraph, drawDiff),
    // so one forward pass follows chains of inserted nodes; then a backward pass for the rest.
    std::vector<char> done(named);
    for (std::size_t i = 0; i < n; ++i) {
        if (done[i] || !inTopLevel(i) || !isOp(g.nodes[i].category)) continue;
        for (std::size_t p : producers[i])
            if (done[p] && isOp(g.nodes[p].category)) {
                scope[i] = scope[p];
                done[i] = 1;
                break;
            }
    }
    // ... and the rest (a transfer of a graph input) the scope their consumers share: a weight's
    // GpuFromHost read by every layer stays at the top level, not in the first layer's box.
    for (std::size_t k = n; k-- > 0;) {
        if (done[k] || !inTopLevel(k) || !isOp(g.nodes[k].category)) continue;
        for (std::size_t c : consumers[k]) {
            if (!done[c] || !isOp(g.nodes[c].category)) continue;
            scope[k] = done[k] ? commonScope(scope[k], scope[c]) : scope[c];
            done[k] = 1;
        }
    }
    // Constants: the scope all their consumers share.
    for (std::size_t i = 0; i < n; ++i) {
        if (g.nodes[i].category != NodeCategory::Constant || !inTopLevel(i) || consumers[i].empty()) continue;
        std::string shared = scope[consumers[i].front()];
        for (std::size_t c : consumers[i]) shared = commonScope(shared, scope[c]);
        scope[i] = shared;
    }
    return scope;
}

std::string scopedName(const Apply& n) { return !n.name().empty() || n.nout() == 0 ? n.name() : n.output(0)->name(); }

bool hasNameScopes(const FunctionGraph& graph) {
    const auto& nodes = graph.toposort();
    return std::any_of(nodes.begin(), nodes.end(), [](const Apply* n) { return !nameScope(scopedName(*n)).empty(); });
}

namespace {

// Drawn nodes per scope, at every level ("" excluded).
std::map<std::string, std::size_t> sizesOf(const std::vector<std::string>& scopes) {
    std::map<std::string, std::size_t> sizes;
    for (const std::string& s : scopes)
        for (const std::string& level : scopeChain(s)) ++sizes[level];
    return sizes;
}

} // namespace

std::map<std::string, std::size_t> scopeSizes(const DrawGraph& g) { return sizesOf(nodeScopes(g)); }

DrawGraph groupByScope(const DrawGraph& g, const ScopeGrouping& grouping) {
    const std::vector<std::string> scopes = nodeScopes(g);
    const std::map<std::string, std::size_t> sizes = sizesOf(scopes);
    if (sizes.empty()) return g;

    std::set<std::string> open = grouping.expanded;
    const std::unordered_set<NodeId> reveal(grouping.reveal.begin(), grouping.reveal.end());
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (g.nodes[i].node >= 0 && reveal.count(g.nodes[i].node))
            for (const std::string& level : scopeChain(scopes[i])) open.insert(level);

    // The box of each distinct scope (nodes share few): its outermost closed enclosing scope of
    // two or more nodes, or "" (drawn as themselves). `opScopes`: the scopes ops sit in.
    std::set<std::string> opScopes;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (isOp(g.nodes[i].category)) opScopes.insert(scopes[i]);
    std::map<std::string, std::string> boxOf;
    for (const std::string& s : scopes) boxOf.try_emplace(s);
    auto assign = [&] {
        for (auto& [scope, box] : boxOf) {
            const std::vector<std::string> chain = scopeChain(scope);
            box.clear();
            for (auto it = chain.rbegin(); it != chain.rend() && box.empty(); ++it)
                if (!open.count(*it) && sizes.at(*it) >= 2) box = *it;
        }
    };
    assign();
    if (grouping.openLoneScopes) {
        // A level with a single box and no op drawn as itself: open that box and look again.
        for (int guard = 0; guard < 64; ++guard) {
            std::set<std::string> boxes;
            bool loose = false;
            for (const auto& [scope, box] : boxOf) {
                if (!box.empty()) boxes.insert(box);
                loose = loose || (box.empty() && opScopes.count(scope));
            }
            if (boxes.size() != 1 || loose) break;
            open.insert(*boxes.begin());
            assign();
        }
    }
    std::vector<std::string> box(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i) box[i] = boxOf.at(scopes[i]);

    DrawGraph out = g.withoutElements();

    struct Members {
        std::size_t count = 0, added = 0, removed = 0, rewired = 0, seeds = 0;
        std::optional<NodeTiming> timing; // the timed members' summed time and highest share
        std::size_t at = 0;               // index in out.nodes
    };
    std::map<std::string, Members> groups;
    std::vector<std::string> keyOf(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
        const DrawNode& d = g.nodes[i];
        if (box[i].empty()) {
            keyOf[i] = d.key;
            out.nodes.push_back(d);
            out.nodes.back().scope = scopes[i];
            continue;
        }
        auto [it, fresh] = groups.try_emplace(box[i]);
        Members& m = it->second;
        if (fresh) {
            // the group stands where its first member (in topological order) stood
            m.at = out.nodes.size();
            DrawNode group;
            group.key = groupKey(box[i]);
            group.category = NodeCategory::Group;
            group.name = box[i];
            group.scope = parentScope(box[i]);
            out.nodes.push_back(std::move(group));
        }
        keyOf[i] = out.nodes[m.at].key;
        ++m.count;
        m.added += d.change == NodeChange::Added;
        m.removed += d.change == NodeChange::Removed;
        m.rewired += d.change == NodeChange::Rewired;
        m.seeds += d.seed && d.node >= 0;
        if (d.timing) {
            if (!m.timing) m.timing = NodeTiming{};
            m.timing->us += d.timing->us;
            m.timing->share = std::max(m.timing->share, d.timing->share);
        }
    }
    for (auto& [scope, m] : groups) {
        DrawNode& group = out.nodes[m.at];
        group.title = lastPart(scope) + "/";
        group.subtitle = scope + " \xC2\xB7 " + countText(m.count) + (m.count == 1 ? " node" : " nodes");
        group.hiddenCount = m.count;
        group.timing = m.timing;
        std::string detail;
        auto part = [&detail](std::size_t k, const char* what) {
            if (k == 0) return;
            if (!detail.empty()) detail += ", ";
            detail += countText(k) + " " + what;
        };
        if (g.isDiff) {
            part(m.added, "added");
            part(m.removed, "removed");
            part(m.rewired, "rewired");
            if (m.added + m.removed + m.rewired > 0)
                group.change = m.added == m.count     ? NodeChange::Added
                               : m.removed == m.count ? NodeChange::Removed
                                                      : NodeChange::Rewired;
        } else {
            part(m.seeds, "new"); // the step's changed region: nodes rewrites added up to this step
        }
        group.seed = m.seeds > 0 || group.change != NodeChange::Unchanged;
        group.detail = detail;
    }

    // Edges: inside a box dropped; between boxes merged per (tail, head).
    struct Merged {
        std::size_t index = 0, count = 0, added = 0, removed = 0;
    };
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) index.emplace(g.nodes[i].key, i);
    std::map<std::pair<std::string, std::string>, Merged> merged;
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end()) continue;
        const std::string& tail = keyOf[t->second];
        const std::string& head = keyOf[h->second];
        const bool grouped = !box[t->second].empty() || !box[h->second].empty();
        if (!grouped) {
            out.edges.push_back(e);
            continue;
        }
        if (tail == head) continue;
        auto [it, fresh] = merged.try_emplace({tail, head});
        Merged& m = it->second;
        if (fresh) {
            m.index = out.edges.size();
            DrawEdge c = e;
            c.tail = tail;
            c.head = head;
            c.inputIndex = 0;
            c.change = NodeChange::Unchanged;
            out.edges.push_back(std::move(c));
        }
        DrawEdge& c = out.edges[m.index];
        c.gpu = c.gpu || e.gpu;
        ++m.count;
        m.added += e.change == NodeChange::Added;
        m.removed += e.change == NodeChange::Removed;
    }
    for (auto& [ends, m] : merged) {
        DrawEdge& c = out.edges[m.index];
        if (m.count > 1) c.label = "\xC3\x97" + countText(m.count);
        c.change = m.added == m.count     ? NodeChange::Added
                   : m.removed == m.count ? NodeChange::Removed
                                          : NodeChange::Unchanged;
    }
    return stubFanOut(out);
}

DrawGraph stubFanOut(const DrawGraph& g, std::size_t minConsumers, bool collapsedToo) {
    const std::size_t n = g.nodes.size();
    std::unordered_map<std::string_view, std::size_t> index;
    index.reserve(n);
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].key, i);
    // The distinct consumers of every node, in drawing order.
    std::vector<std::vector<std::size_t>> heads(n);
    std::unordered_set<std::uint64_t> pairs;
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end() || e.headCluster >= 0) continue;
        if (g.nodes[t->second].cluster != g.nodes[h->second].cluster) continue;
        if (pairs.insert(static_cast<std::uint64_t>(t->second) * n + h->second).second)
            heads[t->second].push_back(h->second);
    }
    // stubAt[h]: the stubs drawn beside node h, as indexes of the nodes they repeat
    std::vector<std::vector<std::size_t>> stubAt(n);
    std::vector<std::size_t> keep(n, n); // the consumer a stubbed node stays beside
    bool any = false;
    for (std::size_t t = 0; t < n; ++t) {
        if (heads[t].size() < std::max<std::size_t>(minConsumers, 2)) continue;
        if (!collapsedToo && g.nodes[t].category == NodeCategory::Collapsed) continue;
        keep[t] = *std::min_element(heads[t].begin(), heads[t].end());
        for (std::size_t h : heads[t])
            if (h != keep[t]) stubAt[h].push_back(t);
        any = true;
    }
    if (!any) return g;
    auto stubKey = [&](std::size_t t, std::size_t h) { return g.nodes[t].key + "_" + g.nodes[h].key; };
    DrawGraph out = g.withoutElements();
    out.nodes.reserve(n);
    for (std::size_t h = 0; h < n; ++h) {
        for (std::size_t t : stubAt[h]) { // just before its consumer, so dot starts it there
            DrawNode stub = g.nodes[t];
            stub.key = stubKey(t, h);
            stub.stubOf = g.nodes[t].key;
            stub.scope = g.nodes[h].scope;
            stub.seed = false;
            out.nodes.push_back(std::move(stub));
        }
        out.nodes.push_back(g.nodes[h]);
    }
    out.edges.reserve(g.edges.size());
    for (const DrawEdge& e : g.edges) {
        DrawEdge c = e;
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t != index.end() && h != index.end() && e.headCluster < 0 && keep[t->second] != n &&
            h->second != keep[t->second] && g.nodes[t->second].cluster == g.nodes[h->second].cluster) {
            c.tail = stubKey(t->second, h->second);
            c.fromStub = true;
        }
        out.edges.push_back(std::move(c));
    }
    return out;
}

} // namespace passlens
