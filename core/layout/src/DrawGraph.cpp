#include "passlens/layout/DrawGraph.h"
#include "passlens/layout/ScopeGroups.h"

#include <passlens/diff/GraphDiff.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace passlens {

const char* nodeCategoryName(NodeCategory c) {
    switch (c) {
    case NodeCategory::HostOp: return "host op";
    case NodeCategory::GpuOp: return "GPU op";
    case NodeCategory::Transfer: return "transfer";
    case NodeCategory::OnnxHostOp: return "host-only ONNX op";
    case NodeCategory::Input: return "input";
    case NodeCategory::Constant: return "constant";
    case NodeCategory::Output: return "output";
    case NodeCategory::Collapsed: return "collapsed";
    case NodeCategory::Group: return "scope";
    }
    return "host op";
}

std::string Caption::text() const {
    std::string s;
    auto add = [&s](const std::string& part) {
        if (part.empty()) return;
        if (!s.empty()) s += "\xE2\x80\x82\xC2\xB7\xE2\x80\x82"; // " · " with en spaces (SVG keeps them)
        s += part;
    };
    add(source);
    if (!pipeline.empty()) add("pipeline " + pipeline);
    std::string st = step;
    if (stepIndex >= 0 && stepCount > 0) {
        st += (st.empty() ? "" : " ") + std::string("(") + unit + " " + std::to_string(stepIndex) + " of " +
              std::to_string(stepCount) + ")";
    }
    add(st);
    return s;
}

DrawGraph DrawGraph::withoutElements() const {
    DrawGraph out;
    out.clusters = clusters;
    out.caption = caption;
    out.isDiff = isDiff;
    out.diff = diff;
    out.nodesBefore = nodesBefore;
    out.nodesAfter = nodesAfter;
    out.timing = timing;
    out.focused = focused;
    out.focusAround = focusAround;
    out.focusHops = focusHops;
    out.hiddenNodes = hiddenNodes;
    out.totalNodes = totalNodes;
    return out;
}

int DrawGraph::indexOf(const std::string& key) const {
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].key == key) return static_cast<int>(i);
    return -1;
}

namespace {

// Cuts UTF-8 text to at most `maxChars` code points, ending with "…" when cut. Never splits a
// multi-byte sequence (invalid bytes count as one character each).
std::string cutText(const std::string& s, std::size_t maxChars) {
    if (maxChars == 0) return {};
    std::size_t chars = 0, i = 0;
    std::size_t cutAt = std::string::npos;
    while (i < s.size()) {
        if (chars == maxChars - 1 && cutAt == std::string::npos) cutAt = i;
        const unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t len = 1;
        if (c >= 0xF0 && c < 0xF8)
            len = 4;
        else if (c >= 0xE0)
            len = 3;
        else if (c >= 0xC0)
            len = 2;
        if (c >= 0xF8 || (c >= 0x80 && c < 0xC0)) len = 1;
        if (i + len > s.size()) len = 1;
        i += len;
        ++chars;
        if (chars > maxChars) return s.substr(0, cutAt) + "\xE2\x80\xA6"; // …
    }
    return s;
}

std::string typeLabel(const Type& t) {
    std::string s(dtypeName(t.dtype()));
    if (!t.rankKnown()) {
        s += "[*]";
    } else {
        s += '[';
        for (std::size_t i = 0; i < t.dims().size(); ++i) {
            if (i) s += ',';
            const auto d = t.dims()[i];
            s += d < 0 ? std::string("?") : std::to_string(d);
        }
        s += ']';
    }
    if (t.isGpu() && !t.location().context.empty()) s += "@" + t.location().context;
    return s;
}

NodeCategory categoryOf(const Op& op) {
    if (op.isTransfer()) return NodeCategory::Transfer;
    if (op.isOnnx()) return NodeCategory::OnnxHostOp;
    if (op.isGpu()) return NodeCategory::GpuOp;
    return NodeCategory::HostOp;
}

OpAccent accentOf(const Op& op) {
    const std::string& k = op.kind();
    if (k.find("Elemwise") != std::string::npos) return OpAccent::Elemwise;
    if (k.find("Alloc") != std::string::npos) return OpAccent::Alloc;
    return OpAccent::None;
}

std::string nodeKey(const Apply& n) { return "n" + std::to_string(n.id()); }
std::string varKey(const Variable& v) {
    if (v.owner() != nullptr) return nodeKey(*v.owner());
    return "v" + std::to_string(v.id());
}

std::string bytesShort(std::int64_t b) {
    std::string s = formatBytes(b);
    // "602,112 B (588.0 KiB)" -> "588.0 KiB"; "24 B" stays.
    const auto open = s.find('(');
    if (open != std::string::npos) return s.substr(open + 1, s.size() - open - 2);
    return s;
}

DrawNode applyNode(const Apply& n, const DrawOptions& o) {
    DrawNode d;
    d.key = nodeKey(n);
    d.node = n.id();
    d.category = categoryOf(n.op());
    d.accent = accentOf(n.op());
    d.title = cutText(n.op().str(), o.maxTitleChars);
    d.subtitle = "#" + std::to_string(n.id());
    if (!n.name().empty()) d.subtitle += " \xC2\xB7 " + cutText(n.name(), o.maxNameChars);
    d.name = scopedName(n);
    if (!n.op().subgraphs().empty()) {
        // Nested graphs (OnnxIf branches, OnnxLoop bodies) are not drawn inline: name them.
        std::string nested;
        for (const Subgraph& sg : n.op().subgraphs()) {
            if (!nested.empty()) nested += ", ";
            nested += cutText(sg.attribute, 16);
            if (sg.graph) nested += " (" + std::to_string(sg.graph->nodeCount()) + ")";
        }
        d.detail = "nested: " + nested;
    }
    if (d.category == NodeCategory::Transfer) {
        const std::string& k = n.op().kind();
        d.transferDirection = k == "GpuFromHost" ? "HtoD" : k == "HostFromGpu" ? "DtoH" : "DtoD";
        std::int64_t bytes = 0;
        bool known = true;
        for (const Variable* out : n.outputs()) {
            const auto b = staticBytes(*out);
            if (b < 0)
                known = false;
            else
                bytes += b;
        }
        d.detail =
            d.transferDirection + " \xC2\xB7 " + (known ? bytesShort(bytes) : std::string("size unknown")) + " per run";
    }
    return d;
}

DrawNode inputNode(const Variable& v, const DrawOptions& o) {
    DrawNode d;
    d.key = varKey(v);
    d.var = v.id();
    d.category = NodeCategory::Input;
    d.title = v.name().empty() ? std::string("(unnamed input)") : cutText(v.name(), o.maxNameChars);
    d.subtitle = typeLabel(v.type());
    if (v.type().isGpu()) d.subtitle += " on GPU";
    return d;
}

DrawNode constantNode(const Variable& v, const DrawOptions& o) {
    DrawNode d;
    d.key = varKey(v);
    d.var = v.id();
    d.category = NodeCategory::Constant;
    if (!v.name().empty())
        d.title = cutText(v.name(), o.maxNameChars);
    else if (v.constant() && v.constant()->loaded()) {
        std::string value = v.constant()->shortValue(4);
        // "{0.0}" -> "0.0" for scalars; "{...}" stays.
        if (v.constant()->numElements() == 1 && value.size() > 2 && value.front() == '{' && value.back() == '}')
            value = value.substr(1, value.size() - 2);
        d.title = value.find("...") != std::string::npos ? std::string("constant") : cutText(value, o.maxNameChars);
    } else
        d.title = "constant";
    d.subtitle = typeLabel(v.type());
    if (v.type().isGpu()) d.subtitle += " on GPU";
    return d;
}

DrawNode outputNode(int index, const Variable& v, const DrawOptions& o) {
    DrawNode d;
    d.key = "o" + std::to_string(index);
    d.var = v.id();
    d.category = NodeCategory::Output;
    d.title = v.name().empty() ? "output " + std::to_string(index) : cutText(v.name(), o.maxNameChars);
    if (!v.name().empty()) d.subtitle = "output " + std::to_string(index);
    return d;
}

DrawEdge edgeFor(const Variable& v, const std::string& head, int index) {
    DrawEdge e;
    e.tail = varKey(v);
    e.head = head;
    e.inputIndex = index;
    e.label = typeLabel(v.type());
    if (v.owner() != nullptr && v.owner()->nout() > 1) e.label = "." + std::to_string(v.index()) + " " + e.label;
    e.gpu = v.type().isGpu();
    return e;
}

bool wantConstantNodes(const DrawOptions& o, std::size_t applyCount) {
    return o.constantNodes.value_or(applyCount <= 400);
}

// Everything one graph contributes: nodes (in draw order) and edges.
struct Parts {
    std::vector<DrawNode> nodes;
    std::vector<DrawEdge> edges;
};

// A node with more than this many constant inputs of its own gets them folded into one box.
constexpr int kFoldConstantsAbove = 6;

Parts collect(const FunctionGraph& g, const DrawOptions& o, bool constantNodes) {
    Parts p;
    std::unordered_set<VarId> placed;
    for (const Variable* in : g.inputs()) {
        if (!placed.insert(in->id()).second) continue;
        p.nodes.push_back(inputNode(*in, o));
    }
    const auto& topo = g.toposort();
    // Constants used by exactly one node (and not an output), per consumer: a node with many of
    // them (weights captured by an OnnxIf, say) gets one "N constants" box instead of N.
    std::unordered_map<VarId, std::unordered_set<NodeId>> consumers;
    std::unordered_set<VarId> outputVars;
    for (const Variable* out : g.outputs()) outputVars.insert(out->id());
    for (const Apply* n : topo)
        for (const Variable* in : n->inputs())
            if (in->isConstant()) consumers[in->id()].insert(n->id());
    std::unordered_map<NodeId, std::vector<const Variable*>> own;
    for (const Apply* n : topo) {
        std::unordered_set<VarId> seen;
        for (const Variable* in : n->inputs())
            if (in->isConstant() && consumers[in->id()].size() == 1 && !outputVars.count(in->id()) &&
                seen.insert(in->id()).second)
                own[n->id()].push_back(in);
    }
    std::unordered_set<VarId> folded;
    for (const auto& [id, list] : own)
        if (static_cast<int>(list.size()) > kFoldConstantsAbove)
            for (const Variable* c : list) folded.insert(c->id());

    std::vector<const Variable*> constants;
    for (const Apply* n : topo)
        for (const Variable* in : n->inputs())
            if (in->isConstant() && !folded.count(in->id()) && placed.insert(in->id()).second) constants.push_back(in);
    for (const Variable* out : g.outputs())
        if (out->isConstant() && placed.insert(out->id()).second) constants.push_back(out);
    if (constantNodes)
        for (const Variable* c : constants) p.nodes.push_back(constantNode(*c, o));
    for (const Apply* n : topo) {
        DrawNode d = applyNode(*n, o);
        int hiddenConsts = 0;
        int foldedHere = 0;
        std::int64_t foldedBytes = 0;
        bool foldedGpu = false;
        for (int i = 0; i < n->nin(); ++i) {
            const Variable* in = n->input(i);
            if (in->isConstant() && !constantNodes) {
                ++hiddenConsts;
                continue;
            }
            if (folded.count(in->id())) {
                ++foldedHere;
                const auto b = staticBytes(*in);
                foldedBytes += b > 0 ? b : 0;
                foldedGpu |= in->type().isGpu();
                continue;
            }
            p.edges.push_back(edgeFor(*in, d.key, i));
        }
        if (hiddenConsts > 0) {
            const std::string note =
                "+" + std::to_string(hiddenConsts) + (hiddenConsts == 1 ? " constant" : " constants");
            d.detail = d.detail.empty() ? note : d.detail + " \xC2\xB7 " + note;
        }
        if (foldedHere > 0) {
            DrawNode k;
            k.key = "k" + std::to_string(n->id());
            k.category = NodeCategory::Constant;
            k.title = std::to_string(foldedHere) + " constants";
            k.subtitle = bytesShort(foldedBytes) + (foldedGpu ? " on GPU" : "");
            p.nodes.push_back(std::move(k));
            DrawEdge e;
            e.tail = "k" + std::to_string(n->id());
            e.head = d.key;
            e.inputIndex = -1;
            e.gpu = foldedGpu;
            p.edges.push_back(std::move(e));
        }
        p.nodes.push_back(std::move(d));
    }
    for (std::size_t i = 0; i < g.outputs().size(); ++i) {
        const Variable* v = g.outputs()[i];
        p.nodes.push_back(outputNode(static_cast<int>(i), *v, o));
        if (v->isConstant() && !constantNodes) continue;
        p.edges.push_back(edgeFor(*v, p.nodes.back().key, static_cast<int>(i)));
    }
    return p;
}

void finishEdgeLabels(DrawGraph& g, const DrawOptions& o) {
    const bool labels = o.edgeLabels.value_or(g.edges.size() <= 250);
    if (!labels)
        for (DrawEdge& e : g.edges) e.label.clear();
}

std::string edgeIdentity(const DrawEdge& e) { return e.tail + ">" + e.head + "#" + std::to_string(e.inputIndex); }

// Orders nodes topologically along the edges (Kahn, ties broken by the current order); nodes
// on cycles (possible in a union of two graphs) keep their relative order at the end.
void orderTopologically(DrawGraph& g) {
    const std::size_t n = g.nodes.size();
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].key, i);
    std::vector<std::vector<std::size_t>> out(n);
    std::vector<int> indeg(n, 0);
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end()) continue;
        out[t->second].push_back(h->second);
        ++indeg[h->second];
    }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i)
        if (indeg[i] == 0) ready.insert(i);
    std::vector<std::size_t> order;
    std::vector<bool> done(n, false);
    order.reserve(n);
    while (!ready.empty()) {
        const std::size_t i = *ready.begin();
        ready.erase(ready.begin());
        order.push_back(i);
        done[i] = true;
        for (std::size_t j : out[i])
            if (--indeg[j] == 0) ready.insert(j);
    }
    for (std::size_t i = 0; i < n; ++i)
        if (!done[i]) order.push_back(i);
    std::vector<DrawNode> sorted;
    sorted.reserve(n);
    for (std::size_t i : order) sorted.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(sorted);
}

// The nested graphs of `graph`'s nodes as clusters of `out`, recursively; `prefix` is the key
// prefix of `graph`'s own nodes, `parent` its cluster (-1: the drawn graph).
void addNestedGraphs(DrawGraph& out, const FunctionGraph& graph, const std::string& prefix, int parent,
                     const DrawOptions& o, int depth) {
    if (depth >= kMaxNestedDepth) return;
    for (const Apply* n : graph.toposort())
        for (const Subgraph& sg : n->op().subgraphs()) {
            if (!sg.graph) continue;
            const int k = static_cast<int>(out.clusters.size());
            DrawCluster c;
            c.key = "cluster_" + std::to_string(k);
            c.parent = parent;
            c.owner = prefix + nodeKey(*n);
            c.title = cutText(sg.attribute, 32) + " of " + cutText(n->op().str(), 40) + " #" + std::to_string(n->id()) +
                      (n->name().empty() ? std::string() : " \xC2\xB7 " + cutText(n->name(), o.maxNameChars)) + " (" +
                      std::to_string(sg.graph->nodeCount()) + (sg.graph->nodeCount() == 1 ? " node)" : " nodes)");
            out.clusters.push_back(c);
            const std::string inner = "s" + std::to_string(k) + "_";
            Parts p = collect(*sg.graph, o, wantConstantNodes(o, sg.graph->nodeCount()));
            const std::string first = p.nodes.empty() ? std::string() : inner + p.nodes.front().key;
            for (DrawNode& d : p.nodes) {
                d.key = inner + d.key;
                d.cluster = k;
                d.node = -1;
                d.var = -1;
                out.nodes.push_back(std::move(d));
            }
            for (DrawEdge& e : p.edges) {
                e.tail = inner + e.tail;
                e.head = inner + e.head;
                out.edges.push_back(std::move(e));
            }
            if (!first.empty()) {
                DrawEdge e;
                e.tail = c.owner;
                e.head = first;
                e.inputIndex = -1;
                e.headCluster = k;
                out.edges.push_back(std::move(e));
            }
            addNestedGraphs(out, *sg.graph, inner, k, o, depth + 1);
        }
}

} // namespace

DrawGraph drawGraph(const FunctionGraph& graph, const DrawOptions& options) {
    DrawGraph g;
    Parts p = collect(graph, options, wantConstantNodes(options, graph.nodeCount()));
    g.nodes = std::move(p.nodes);
    g.edges = std::move(p.edges);
    if (options.nestedGraphs) addNestedGraphs(g, graph, "", -1, options, 0);
    g.caption = options.caption;
    g.totalNodes = g.nodes.size();
    const std::set<NodeId> focus(options.focus.begin(), options.focus.end());
    if (!focus.empty()) {
        std::unordered_map<std::string, DrawNode*> byKey;
        for (DrawNode& d : g.nodes) {
            if (d.node >= 0 && focus.count(d.node)) d.seed = true;
            byKey.emplace(d.key, &d);
        }
        // the input, constant and output boxes of a seed node come with it (a focused view
        // never hides a graph output behind a "… 1 node" box next to the node that makes it)
        auto isValueBox = [](const DrawNode* d) {
            return d->category == NodeCategory::Input || d->category == NodeCategory::Constant ||
                   d->category == NodeCategory::Output;
        };
        for (const DrawEdge& e : g.edges) {
            auto t = byKey.find(e.tail), h = byKey.find(e.head);
            if (t == byKey.end() || h == byKey.end()) continue;
            if (t->second->seed && t->second->node >= 0 && isValueBox(h->second)) h->second->seed = true;
            if (h->second->seed && h->second->node >= 0 && isValueBox(t->second)) t->second->seed = true;
        }
    }
    finishEdgeLabels(g, options);
    return g;
}

DrawGraph drawDiff(const FunctionGraph& before, const FunctionGraph& after, const GraphDiff& d,
                   const DrawOptions& options) {
    DrawGraph g;
    g.isDiff = true;
    g.diff = d;
    g.caption = options.caption;
    g.nodesBefore = before.nodeCount();
    g.nodesAfter = after.nodeCount();
    const bool constantNodes = wantConstantNodes(options, std::max(before.nodeCount(), after.nodeCount()));
    Parts pb = collect(before, options, constantNodes);
    Parts pa = collect(after, options, constantNodes);

    // Nodes: after's, then before's that after lacks (removed nodes, dropped constants).
    std::unordered_map<std::string, std::size_t> inAfter;
    for (std::size_t i = 0; i < pa.nodes.size(); ++i) inAfter.emplace(pa.nodes[i].key, i);
    std::unordered_set<std::string> inBefore;
    for (const DrawNode& n : pb.nodes) inBefore.insert(n.key);

    for (DrawNode& n : pa.nodes) {
        if (n.node >= 0)
            n.change = d.changeOf(n.node);
        else if (!inBefore.count(n.key))
            n.change = NodeChange::Added;
        g.nodes.push_back(std::move(n));
    }
    for (DrawNode& n : pb.nodes) {
        if (inAfter.count(n.key)) continue;
        n.change = NodeChange::Removed;
        g.nodes.push_back(std::move(n));
    }
    for (DrawNode& n : g.nodes) {
        n.seed = n.node >= 0 && n.change != NodeChange::Unchanged;
        // An output whose variable changed is rewired.
        if (n.category == NodeCategory::Output && n.change == NodeChange::Unchanged &&
            std::find(d.outputsChanged.begin(), d.outputsChanged.end(), std::stoi(n.key.substr(1))) !=
                d.outputsChanged.end())
            n.change = NodeChange::Rewired;
    }

    // Edges: union by (tail, head, input index).
    std::unordered_set<std::string> edgesBefore, edgesAfter;
    for (const DrawEdge& e : pb.edges) edgesBefore.insert(edgeIdentity(e));
    for (const DrawEdge& e : pa.edges) edgesAfter.insert(edgeIdentity(e));
    for (DrawEdge& e : pa.edges) {
        if (!edgesBefore.count(edgeIdentity(e))) e.change = NodeChange::Added;
        g.edges.push_back(std::move(e));
    }
    for (DrawEdge& e : pb.edges) {
        if (edgesAfter.count(edgeIdentity(e))) continue;
        e.change = NodeChange::Removed;
        g.edges.push_back(std::move(e));
    }
    orderTopologically(g);
    g.totalNodes = g.nodes.size();
    finishEdgeLabels(g, options);
    return g;
}

} // namespace passlens
