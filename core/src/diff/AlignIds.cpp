#include "passlens/diff/GraphDiff.h"

#include <algorithm>
#include <unordered_map>

namespace passlens {

namespace {

// Structural key of a node of the reference: its interned op and its input variable ids.
struct NodeKey {
    const Op* op;
    std::vector<VarId> inputs;
    bool operator==(const NodeKey&) const = default;
};

struct NodeKeyHash {
    std::size_t operator()(const NodeKey& k) const {
        std::size_t h = std::hash<const void*>()(k.op);
        for (VarId v : k.inputs) h = h * 1000003u ^ std::hash<VarId>()(v);
        return h;
    }
};

// The largest node and variable ids seen in `g` (graph inputs, constants, every node's
// inputs and outputs).
void maxIds(const FunctionGraph& g, NodeId& node, VarId& var) {
    for (const Variable* v : g.inputs()) var = std::max(var, v->id());
    for (const Apply* n : g.toposort()) {
        node = std::max(node, n->id());
        for (const Variable* v : n->inputs()) var = std::max(var, v->id());
        for (const Variable* v : n->outputs()) var = std::max(var, v->id());
    }
}

} // namespace

AlignedGraph alignIds(const FunctionGraph& reference, const FunctionGraph& g) {
    NodeId maxNode = -1;
    VarId maxVar = -1;
    maxIds(reference, maxNode, maxVar);
    maxIds(g, maxNode, maxVar);
    NodeId nextNode = maxNode + 1;
    VarId nextVar = maxVar + 1;

    // The reference's variables by id (to reuse a shared input's or constant's id) and its
    // nodes by structure.
    std::unordered_map<VarId, const Variable*> refVars;
    std::unordered_map<NodeKey, const Apply*, NodeKeyHash> refNodes;
    for (const Variable* v : reference.inputs()) refVars.emplace(v->id(), v);
    for (const Apply* n : reference.toposort()) {
        NodeKey key{&n->op(), {}};
        for (const Variable* v : n->inputs()) {
            key.inputs.push_back(v->id());
            refVars.emplace(v->id(), v);
        }
        for (const Variable* v : n->outputs()) refVars.emplace(v->id(), v);
        refNodes.emplace(std::move(key), n);
    }

    AlignedGraph out;
    out.graph = std::make_unique<FunctionGraph>();
    FunctionGraph& a = *out.graph;
    a.sourcePath = g.sourcePath;
    std::unordered_map<const Variable*, Variable*> vmap;
    // A graph input keeps its id when the reference has the same input there.
    for (const Variable* v : g.inputs()) {
        const auto r = refVars.find(v->id());
        const bool same = r != refVars.end() && r->second->isInput() && r->second->type() == v->type();
        a.hintNextIds(-1, {same ? v->id() : nextVar++});
        Variable* nv = a.addInput(v->type(), v->name());
        nv->tag = v->tag;
        vmap.emplace(v, nv);
    }
    // The reference's constants by type and content: a constant both pipelines made alike
    // (the 0.0 that two GraphToGpu runs put on the GPU) takes the reference's id.
    std::unordered_multimap<std::uint64_t, const Variable*> refConstants;
    for (const auto& [id, v] : refVars)
        if (v->isConstant() && v->constant()->loaded()) refConstants.emplace(v->constant()->contentHash(), v);
    auto sameConstant = [](const Variable* x, const Variable* y) {
        const TensorData &p = *x->constant(), &q = *y->constant();
        return x->type() == y->type() &&
               (x->constant() == y->constant() || (p.loaded() && q.loaded() && *p.bytes == *q.bytes));
    };
    std::unordered_map<VarId, bool> constantTaken;
    auto mapped = [&](const Variable* v) -> Variable* {
        if (auto it = vmap.find(v); it != vmap.end()) return it->second;
        // a constant (the only variables without a producer that are not inputs): the
        // reference's constant with its id when one is equal, else a fresh id
        VarId id = -1;
        if (auto r = refVars.find(v->id());
            r != refVars.end() && r->second->isConstant() && !constantTaken[v->id()] && sameConstant(r->second, v))
            id = v->id();
        else if (v->constant()->loaded())
            for (auto [it, end] = refConstants.equal_range(v->constant()->contentHash()); it != end && id < 0; ++it)
                if (!constantTaken[it->second->id()] && sameConstant(it->second, v)) id = it->second->id();
        if (id >= 0) constantTaken[id] = true;
        a.hintNextIds(-1, {id >= 0 ? id : nextVar++});
        Variable* nv = a.addConstant(v->constant(), v->name(), v->type().location());
        nv->tag = v->tag;
        vmap.emplace(v, nv);
        return nv;
    };
    std::unordered_map<NodeId, bool> used; // a reference node is matched at most once
    for (const Apply* n : g.toposort()) {
        std::vector<Variable*> inputs;
        NodeKey key{&n->op(), {}};
        for (const Variable* v : n->inputs()) {
            Variable* m = mapped(v);
            inputs.push_back(m);
            key.inputs.push_back(m->id());
        }
        const Apply* match = nullptr;
        if (auto it = refNodes.find(key);
            it != refNodes.end() && !used[it->second->id()] && it->second->nout() == n->nout()) {
            match = it->second;
            for (int i = 0; i < n->nout() && match; ++i)
                if (!(match->output(i)->type() == n->output(i)->type())) match = nullptr;
        }
        std::vector<VarId> outIds;
        for (int i = 0; i < n->nout(); ++i) outIds.push_back(match ? match->output(i)->id() : nextVar++);
        const NodeId id = match ? match->id() : nextNode++;
        if (match) {
            used[match->id()] = true;
            ++out.matchedNodes;
        }
        a.hintNextIds(id, outIds);
        std::vector<Type> types;
        for (const Variable* v : n->outputs()) types.push_back(v->type());
        Apply* c = a.makeApply(n->op(), std::move(inputs), std::move(types), n->name());
        out.originalNode.emplace(c->id(), n->id());
        for (int i = 0; i < n->nout(); ++i) {
            c->output(i)->setName(n->output(i)->name());
            c->output(i)->tag = n->output(i)->tag;
            vmap.emplace(n->output(i), c->output(i));
        }
    }
    std::vector<Variable*> outputs;
    for (const Variable* v : g.outputs()) outputs.push_back(mapped(v));
    a.setOutputs(std::move(outputs));
    return out;
}

} // namespace passlens
