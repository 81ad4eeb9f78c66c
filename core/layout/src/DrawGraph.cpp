#include "passlens/layout/DrawGraph.h"
#include "passlens/layout/ScopeGroups.h"

#include "DrawInternal.h"

#include <passlens/diff/GraphDiff.h>

#include <algorithm>
#include <cstdint>
#include <functional>
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

using drawinternal::kNone;
using drawinternal::Shape;
using drawinternal::ShapeEdge;
using drawinternal::ShapeNode;

// The drawing's nodes and edges of `shape`.
Parts materialize(const Shape& shape, const DrawOptions& o) {
    Parts p;
    p.nodes.reserve(shape.nodes.size());
    for (const ShapeNode& n : shape.nodes) p.nodes.push_back(drawinternal::makeNode(n, o));
    p.edges.reserve(shape.edges.size());
    for (const ShapeEdge& e : shape.edges) p.edges.push_back(drawinternal::makeEdge(shape, e));
    return p;
}

// Every node and edge of `g`'s drawing (nested graphs aside).
Parts collect(const FunctionGraph& g, const DrawOptions& o, bool constantNodes) {
    return materialize(drawinternal::collectShape(g, constantNodes), o);
}

void finishEdgeLabels(DrawGraph& g, const DrawOptions& o) {
    const bool labels = drawinternal::wantEdgeLabels(o, g.edges.size());
    if (!labels)
        for (DrawEdge& e : g.edges) e.label.clear();
}

std::string edgeIdentity(const DrawEdge& e) { return e.tail + ">" + e.head + "#" + std::to_string(e.inputIndex); }

// Kahn's topological order of the nodes 0..n-1 with successors `out`: ties broken by index;
// nodes on cycles (possible in a union of two graphs) keep their relative order at the end.
std::vector<std::size_t> kahnOrder(const std::vector<std::vector<std::size_t>>& out) {
    const std::size_t n = out.size();
    std::vector<int> indeg(n, 0);
    for (const auto& heads : out)
        for (std::size_t j : heads) ++indeg[j];
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
    return order;
}

// Orders nodes topologically along the edges (kahnOrder, ties broken by the current order).
void orderTopologically(DrawGraph& g) {
    const std::size_t n = g.nodes.size();
    std::unordered_map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) index.emplace(g.nodes[i].key, i);
    std::vector<std::vector<std::size_t>> out(n);
    for (const DrawEdge& e : g.edges) {
        auto t = index.find(e.tail), h = index.find(e.head);
        if (t == index.end() || h == index.end()) continue;
        out[t->second].push_back(h->second);
    }
    const std::vector<std::size_t> order = kahnOrder(out);
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

namespace drawinternal {

Shape collectShape(const FunctionGraph& g, bool constantNodes) {
    Shape p;
    // drawn node of each variable (inputs, constants) and Apply, by id: an edge's tail
    std::vector<std::size_t> ofVar(static_cast<std::size_t>(g.varIdLimit()), kNone);
    std::vector<std::size_t> ofApply(static_cast<std::size_t>(g.nodeIdLimit()), kNone);
    auto varSlot = [&ofVar](const Variable& v) -> std::size_t& {
        const auto id = static_cast<std::size_t>(v.id());
        if (id >= ofVar.size()) ofVar.resize(id + 1, kNone);
        return ofVar[id];
    };
    auto add = [&p](ShapeNode n) {
        p.nodes.push_back(n);
        return p.nodes.size() - 1;
    };
    // per variable id: placed as a node, a graph output, a constant's consumers, folded
    const auto vars = static_cast<std::size_t>(g.varIdLimit());
    std::vector<bool> placed(vars, false), outputVar(vars, false), folded(vars, false), owned(vars, false);
    auto flag = [](std::vector<bool>& f, const Variable& v) {
        const auto id = static_cast<std::size_t>(v.id());
        if (id >= f.size()) f.resize(id + 1, false);
        return f[id];
    };
    auto place = [&](const Variable& v) { // false when placed already
        if (flag(placed, v)) return false;
        placed[static_cast<std::size_t>(v.id())] = true;
        return true;
    };
    for (const Variable* in : g.inputs()) {
        if (!place(*in)) continue;
        ShapeNode n;
        n.kind = ShapeNode::Kind::Input;
        n.category = NodeCategory::Input;
        n.var = in;
        varSlot(*in) = add(n);
    }
    const auto& topo = g.toposort();
    // Constants used by exactly one node (and not an output), per consumer: a node with many of
    // them (weights captured by an OnnxIf, say) gets one "N constants" box instead of N.
    for (const Variable* out : g.outputs())
        if (!flag(outputVar, *out)) outputVar[static_cast<std::size_t>(out->id())] = true;
    std::vector<int> consumers(vars, 0);
    std::vector<NodeId> lastConsumer(vars, -1);
    for (const Apply* n : topo)
        for (const Variable* in : n->inputs()) {
            if (!in->isConstant()) continue;
            const auto id = static_cast<std::size_t>(in->id());
            if (id >= consumers.size()) {
                consumers.resize(id + 1, 0);
                lastConsumer.resize(id + 1, -1);
            }
            if (lastConsumer[id] != n->id()) {
                lastConsumer[id] = n->id();
                ++consumers[id];
            }
        }
    std::vector<const Variable*> own;
    for (const Apply* n : topo) {
        own.clear();
        for (const Variable* in : n->inputs())
            if (in->isConstant() && consumers[static_cast<std::size_t>(in->id())] == 1 && !flag(outputVar, *in) &&
                !flag(owned, *in)) {
                owned[static_cast<std::size_t>(in->id())] = true; // (its one consumer: counted once)
                own.push_back(in);
            }
        if (static_cast<int>(own.size()) > kFoldConstantsAbove)
            for (const Variable* c : own) {
                flag(folded, *c);
                folded[static_cast<std::size_t>(c->id())] = true;
            }
    }

    std::vector<const Variable*> constants;
    for (const Apply* n : topo)
        for (const Variable* in : n->inputs())
            if (in->isConstant() && !flag(folded, *in) && place(*in)) constants.push_back(in);
    for (const Variable* out : g.outputs())
        if (out->isConstant() && place(*out)) constants.push_back(out);
    if (constantNodes)
        for (const Variable* c : constants) {
            ShapeNode n;
            n.kind = ShapeNode::Kind::Constant;
            n.category = NodeCategory::Constant;
            n.var = c;
            varSlot(*c) = add(n);
        }
    // the tail of an edge carrying `v`: the node drawn with varKey(v)'s key, if any
    auto tailOf = [&](const Variable& v) {
        if (const Apply* owner = v.owner()) {
            const auto id = static_cast<std::size_t>(owner->id());
            return id < ofApply.size() ? ofApply[id] : kNone;
        }
        const auto id = static_cast<std::size_t>(v.id());
        return id < ofVar.size() ? ofVar[id] : kNone;
    };
    for (const Apply* a : topo) {
        ShapeNode d;
        d.kind = ShapeNode::Kind::Apply;
        d.category = categoryOf(a->op());
        d.apply = a;
        const std::size_t firstEdge = p.edges.size();
        ShapeNode k;
        k.kind = ShapeNode::Kind::Folded;
        k.category = NodeCategory::Constant;
        k.apply = a;
        for (int i = 0; i < a->nin(); ++i) {
            const Variable* in = a->input(i);
            if (in->isConstant() && !constantNodes) {
                ++d.hiddenConstants;
                continue;
            }
            if (flag(folded, *in)) {
                ++k.folded;
                const auto b = staticBytes(*in);
                k.foldedBytes += b > 0 ? b : 0;
                k.foldedGpu |= in->type().isGpu();
                continue;
            }
            p.edges.push_back({tailOf(*in), kNone, in, i});
        }
        if (k.folded > 0) {
            const std::size_t box = add(k);
            p.edges.push_back({box, kNone, nullptr, -1});
        }
        const std::size_t self = add(d);
        const auto id = static_cast<std::size_t>(a->id());
        if (id >= ofApply.size()) ofApply.resize(id + 1, kNone);
        ofApply[id] = self;
        for (std::size_t e = firstEdge; e < p.edges.size(); ++e) p.edges[e].head = self;
    }
    for (std::size_t i = 0; i < g.outputs().size(); ++i) {
        const Variable* v = g.outputs()[i];
        ShapeNode out;
        out.kind = ShapeNode::Kind::Output;
        out.category = NodeCategory::Output;
        out.var = v;
        out.outputIndex = static_cast<int>(i);
        const std::size_t self = add(out);
        if (v->isConstant() && !constantNodes) continue;
        p.edges.push_back({tailOf(*v), self, v, static_cast<int>(i)});
    }
    return p;
}

bool isValueBox(NodeCategory c) {
    return c == NodeCategory::Input || c == NodeCategory::Constant || c == NodeCategory::Output;
}

void markSeeds(Shape& shape, const std::vector<NodeId>& focus) {
    const std::set<NodeId> seeds(focus.begin(), focus.end());
    if (seeds.empty()) return;
    for (ShapeNode& n : shape.nodes)
        if (n.kind == ShapeNode::Kind::Apply && seeds.count(n.apply->id())) n.seed = true;
    auto isApply = [](const ShapeNode& n) { return n.kind == ShapeNode::Kind::Apply; };
    for (const ShapeEdge& e : shape.edges) {
        if (e.tail == kNone || e.head == kNone) continue;
        ShapeNode &t = shape.nodes[e.tail], &h = shape.nodes[e.head];
        if (t.seed && isApply(t) && isValueBox(h.category)) h.seed = true;
        if (h.seed && isApply(h) && isValueBox(t.category)) t.seed = true;
    }
}

DrawNode makeNode(const ShapeNode& n, const DrawOptions& o) {
    DrawNode d;
    switch (n.kind) {
    case ShapeNode::Kind::Input: d = inputNode(*n.var, o); break;
    case ShapeNode::Kind::Constant: d = constantNode(*n.var, o); break;
    case ShapeNode::Kind::Output: d = outputNode(n.outputIndex, *n.var, o); break;
    case ShapeNode::Kind::Folded:
        d.key = "k" + std::to_string(n.apply->id());
        d.category = NodeCategory::Constant;
        d.title = std::to_string(n.folded) + " constants";
        d.subtitle = bytesShort(n.foldedBytes) + (n.foldedGpu ? " on GPU" : "");
        break;
    case ShapeNode::Kind::Apply:
        d = applyNode(*n.apply, o);
        if (n.hiddenConstants > 0) {
            const std::string note =
                "+" + std::to_string(n.hiddenConstants) + (n.hiddenConstants == 1 ? " constant" : " constants");
            d.detail = d.detail.empty() ? note : d.detail + " \xC2\xB7 " + note;
        }
        break;
    }
    d.seed = n.seed;
    return d;
}

DrawEdge makeEdge(const Shape& shape, const ShapeEdge& e) {
    const ShapeNode& head = shape.nodes[e.head];
    const std::string headKey =
        head.kind == ShapeNode::Kind::Output ? "o" + std::to_string(head.outputIndex) : nodeKey(*head.apply);
    if (e.var) return edgeFor(*e.var, headKey, e.inputIndex);
    const ShapeNode& box = shape.nodes[e.tail]; // the folded constants of the head
    DrawEdge d;
    d.tail = "k" + std::to_string(box.apply->id());
    d.head = headKey;
    d.inputIndex = -1;
    d.gpu = box.foldedGpu;
    return d;
}

bool wantEdgeLabels(const DrawOptions& options, std::size_t edges) { return options.edgeLabels.value_or(edges <= 250); }

} // namespace drawinternal

DrawGraph drawGraph(const FunctionGraph& graph, const DrawOptions& options) {
    DrawGraph g;
    Shape shape = drawinternal::collectShape(graph, wantConstantNodes(options, graph.nodeCount()));
    drawinternal::markSeeds(shape, options.focus);
    Parts p = materialize(shape, options);
    g.nodes = std::move(p.nodes);
    g.edges = std::move(p.edges);
    if (options.nestedGraphs) {
        const std::size_t own = g.nodes.size();
        addNestedGraphs(g, graph, "", -1, options, 0);
        // a nested graph's first box is tied to its owner as value boxes are (markSeeds)
        if (!options.focus.empty()) {
            std::unordered_map<std::string, std::size_t> nested;
            for (std::size_t i = own; i < g.nodes.size(); ++i) nested.emplace(g.nodes[i].key, i);
            std::unordered_map<std::string, std::size_t> top;
            for (std::size_t i = 0; i < own; ++i) top.emplace(g.nodes[i].key, i);
            for (const DrawEdge& e : g.edges) {
                if (e.headCluster < 0) continue;
                auto t = top.find(e.tail);
                auto h = nested.find(e.head);
                if (t == top.end() || h == nested.end()) continue;
                DrawNode& head = g.nodes[h->second];
                if (g.nodes[t->second].seed && drawinternal::isValueBox(head.category)) head.seed = true;
            }
        }
    }
    g.caption = options.caption;
    g.totalNodes = g.nodes.size();
    finishEdgeLabels(g, options);
    return g;
}

DrawGraph drawFocused(const FunctionGraph& graph, const DrawOptions& options, std::size_t above, int hops,
                      std::size_t maxNodes) {
    if (options.nestedGraphs) { // the clusters are not part of the shape
        DrawGraph whole = drawGraph(graph, options);
        return whole.nodes.size() > above ? focusView(whole, hops, maxNodes) : whole;
    }
    Shape shape = drawinternal::collectShape(graph, wantConstantNodes(options, graph.nodeCount()));
    if (shape.nodes.size() <= above || shape.nodes.empty()) return drawGraph(graph, options);
    drawinternal::markSeeds(shape, options.focus);
    drawinternal::FocusInput in;
    in.category.reserve(shape.nodes.size());
    in.seed.reserve(shape.nodes.size());
    for (const ShapeNode& n : shape.nodes) {
        in.category.push_back(n.category);
        in.seed.push_back(n.seed);
    }
    in.edges.reserve(shape.edges.size());
    for (std::size_t k = 0; k < shape.edges.size(); ++k)
        if (shape.edges[k].tail != kNone) in.edges.push_back({shape.edges[k].tail, shape.edges[k].head, k});
    const bool labels = drawinternal::wantEdgeLabels(options, shape.edges.size());
    DrawGraph start;
    start.caption = options.caption;
    return drawinternal::focusOn(
        in, hops, maxNodes, std::move(start), shape.nodes.size(),
        [&](std::size_t i) { return drawinternal::makeNode(shape.nodes[i], options); },
        [&](std::size_t k) {
            DrawEdge e = drawinternal::makeEdge(shape, shape.edges[k]);
            if (!labels) e.label.clear();
            return e;
        });
}

namespace {

// An empty drawing of the diff `d` of `before` and `after`: its class, diff, caption and counts.
DrawGraph diffDrawing(const FunctionGraph& before, const FunctionGraph& after, const GraphDiff& d,
                      const DrawOptions& options) {
    DrawGraph g;
    g.isDiff = true;
    g.diff = d;
    g.caption = options.caption;
    g.nodesBefore = before.nodeCount();
    g.nodesAfter = after.nodeCount();
    return g;
}

} // namespace

DrawGraph drawDiff(const FunctionGraph& before, const FunctionGraph& after, const GraphDiff& d,
                   const DrawOptions& options) {
    DrawGraph g = diffDrawing(before, after, d, options);
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

namespace {

// A drawn node's key (DrawNode::key as makeNode makes it) as a number: its letter in the top
// byte, the id below, so the union of two shapes is matched without making the key strings.
std::uint64_t keyCode(char letter, std::int64_t id) {
    return (static_cast<std::uint64_t>(static_cast<unsigned char>(letter)) << 56) |
           (static_cast<std::uint64_t>(id) & ((std::uint64_t{1} << 56) - 1));
}
std::uint64_t varKeyCode(const Variable& v) { // varKey
    return v.owner() != nullptr ? keyCode('n', v.owner()->id()) : keyCode('v', v.id());
}
std::uint64_t nodeKeyCode(const ShapeNode& n) {
    switch (n.kind) {
    case ShapeNode::Kind::Input:
    case ShapeNode::Kind::Constant: return varKeyCode(*n.var);
    case ShapeNode::Kind::Output: return keyCode('o', n.outputIndex);
    case ShapeNode::Kind::Folded: return keyCode('k', n.apply->id());
    case ShapeNode::Kind::Apply: break;
    }
    return keyCode('n', n.apply->id());
}

// edgeIdentity as numbers: tail key, head key, input index.
struct EdgeCode {
    std::uint64_t tail = 0, head = 0;
    int inputIndex = 0;
    bool operator==(const EdgeCode& o) const { return tail == o.tail && head == o.head && inputIndex == o.inputIndex; }
};
struct EdgeCodeHash {
    std::size_t operator()(const EdgeCode& e) const {
        std::size_t h = std::hash<std::uint64_t>{}(e.tail);
        h ^= std::hash<std::uint64_t>{}(e.head) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        h ^= std::hash<int>{}(e.inputIndex) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
        return h;
    }
};
EdgeCode edgeCode(const Shape& shape, const ShapeEdge& e) { // makeEdge's tail, head and index
    EdgeCode c;
    c.tail = e.var != nullptr ? varKeyCode(*e.var) : nodeKeyCode(shape.nodes[e.tail]);
    c.head = nodeKeyCode(shape.nodes[e.head]);
    c.inputIndex = e.inputIndex;
    return c;
}

} // namespace

DrawGraph drawDiffFocused(const FunctionGraph& before, const FunctionGraph& after, const GraphDiff& d,
                          const DrawOptions& options, std::size_t above, int hops, std::size_t maxNodes) {
    const bool constantNodes = wantConstantNodes(options, std::max(before.nodeCount(), after.nodeCount()));
    const Shape sb = drawinternal::collectShape(before, constantNodes);
    const Shape sa = drawinternal::collectShape(after, constantNodes);
    // drawDiff's union on numbers: after's nodes, then before's that after lacks
    struct UnionNode {
        const Shape* shape;
        std::size_t index;
        NodeChange change;
        bool seed;
        std::uint64_t code;
    };
    std::unordered_map<std::uint64_t, std::size_t> inAfter;
    inAfter.reserve(sa.nodes.size() * 2);
    for (std::size_t i = 0; i < sa.nodes.size(); ++i) inAfter.emplace(nodeKeyCode(sa.nodes[i]), i);
    std::unordered_set<std::uint64_t> inBefore;
    inBefore.reserve(sb.nodes.size() * 2);
    for (const ShapeNode& n : sb.nodes) inBefore.insert(nodeKeyCode(n));
    std::vector<UnionNode> nodes;
    nodes.reserve(sa.nodes.size() + sb.nodes.size() / 8);
    for (std::size_t i = 0; i < sa.nodes.size(); ++i) {
        const ShapeNode& n = sa.nodes[i];
        const std::uint64_t code = nodeKeyCode(n);
        NodeChange change = NodeChange::Unchanged;
        if (n.kind == ShapeNode::Kind::Apply)
            change = d.changeOf(n.apply->id());
        else if (!inBefore.count(code))
            change = NodeChange::Added;
        nodes.push_back({&sa, i, change, false, code});
    }
    for (std::size_t i = 0; i < sb.nodes.size(); ++i) {
        const std::uint64_t code = nodeKeyCode(sb.nodes[i]);
        if (inAfter.count(code)) continue;
        nodes.push_back({&sb, i, NodeChange::Removed, false, code});
    }
    if (nodes.size() <= above || nodes.empty()) return drawDiff(before, after, d, options);
    for (UnionNode& u : nodes) {
        const ShapeNode& n = u.shape->nodes[u.index];
        u.seed = n.kind == ShapeNode::Kind::Apply && u.change != NodeChange::Unchanged;
        if (n.kind == ShapeNode::Kind::Output && u.change == NodeChange::Unchanged &&
            std::find(d.outputsChanged.begin(), d.outputsChanged.end(), n.outputIndex) != d.outputsChanged.end())
            u.change = NodeChange::Rewired;
    }
    // edges: union by (tail, head, input index)
    struct UnionEdge {
        const Shape* shape;
        std::size_t index;
        NodeChange change;
        EdgeCode code;
    };
    std::unordered_set<EdgeCode, EdgeCodeHash> edgesBefore, edgesAfter;
    edgesBefore.reserve(sb.edges.size() * 2);
    edgesAfter.reserve(sa.edges.size() * 2);
    std::vector<EdgeCode> codesBefore, codesAfter;
    codesBefore.reserve(sb.edges.size());
    codesAfter.reserve(sa.edges.size());
    for (const ShapeEdge& e : sb.edges) edgesBefore.insert(codesBefore.emplace_back(edgeCode(sb, e)));
    for (const ShapeEdge& e : sa.edges) edgesAfter.insert(codesAfter.emplace_back(edgeCode(sa, e)));
    std::vector<UnionEdge> edges;
    edges.reserve(sa.edges.size() + sb.edges.size() / 8);
    for (std::size_t k = 0; k < sa.edges.size(); ++k)
        edges.push_back(
            {&sa, k, edgesBefore.count(codesAfter[k]) ? NodeChange::Unchanged : NodeChange::Added, codesAfter[k]});
    for (std::size_t k = 0; k < sb.edges.size(); ++k)
        if (!edgesAfter.count(codesBefore[k])) edges.push_back({&sb, k, NodeChange::Removed, codesBefore[k]});

    // orderTopologically on indices: Kahn, ties by union order, nodes on cycles last
    const std::size_t n = nodes.size();
    std::unordered_map<std::uint64_t, std::size_t> index;
    index.reserve(n * 2);
    for (std::size_t i = 0; i < n; ++i) index.emplace(nodes[i].code, i);
    std::vector<std::pair<std::size_t, std::size_t>> ends(edges.size(), {kNone, kNone}); // union node indices
    std::vector<std::vector<std::size_t>> out(n);
    for (std::size_t k = 0; k < edges.size(); ++k) {
        auto t = index.find(edges[k].code.tail), h = index.find(edges[k].code.head);
        if (t == index.end() || h == index.end()) continue;
        ends[k] = {t->second, h->second};
        out[t->second].push_back(h->second);
    }
    const std::vector<std::size_t> order = kahnOrder(out);
    std::vector<std::size_t> position(n);
    for (std::size_t p = 0; p < n; ++p) position[order[p]] = p;

    drawinternal::FocusInput in;
    in.category.reserve(n);
    in.seed.reserve(n);
    for (std::size_t i : order) {
        in.category.push_back(nodes[i].shape->nodes[nodes[i].index].category);
        in.seed.push_back(nodes[i].seed);
    }
    for (std::size_t k = 0; k < edges.size(); ++k)
        if (ends[k].first != kNone) in.edges.push_back({position[ends[k].first], position[ends[k].second], k});
    const bool labels = drawinternal::wantEdgeLabels(options, edges.size());
    return drawinternal::focusOn(
        in, hops, maxNodes, diffDrawing(before, after, d, options), n,
        [&](std::size_t p) {
            const UnionNode& u = nodes[order[p]];
            DrawNode dn = drawinternal::makeNode(u.shape->nodes[u.index], options);
            dn.change = u.change;
            dn.seed = u.seed;
            return dn;
        },
        [&](std::size_t k) {
            const UnionEdge& u = edges[k];
            DrawEdge e = drawinternal::makeEdge(*u.shape, u.shape->edges[u.index]);
            e.change = u.change;
            if (!labels) e.label.clear();
            return e;
        });
}

} // namespace passlens
