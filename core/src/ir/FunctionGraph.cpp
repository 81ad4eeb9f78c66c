#include "passlens/ir/FunctionGraph.h"

#include "passlens/ir/Error.h"
#include "passlens/ir/OpRegistry.h"

#include <algorithm>
#include <utility>
#include <cmath>
#include <limits>
#include <functional>

namespace passlens {

struct FunctionGraph::UndoEntry {
    enum class Kind { Import, Prune, ChangeInput } kind;
    Apply* node; // imported/pruned node, or the client whose input changed (nullptr: output)
    int index = 0;
    Variable* old = nullptr;
};

struct FunctionGraph::PendingEvent {
    enum class Kind { Import, Prune, ChangeInput, Replace } kind;
    const Apply* node = nullptr; // imported / pruned node, or the client (nullptr: graph output)
    int index = 0;
    const Variable* a = nullptr; // old variable (ChangeInput, Replace)
    const Variable* b = nullptr; // new variable
    std::string_view reason;     // outlives the transaction: the caller's argument
};

void FunctionGraph::deliver(const PendingEvent& e) {
    for (auto* o : m_observers) {
        switch (e.kind) {
        case PendingEvent::Kind::Import: o->onImport(*this, *e.node, e.reason); break;
        case PendingEvent::Kind::Prune: o->onPrune(*this, *e.node, e.reason); break;
        case PendingEvent::Kind::ChangeInput: o->onChangeInput(*this, e.node, e.index, *e.a, *e.b, e.reason); break;
        case PendingEvent::Kind::Replace: o->onReplace(*this, *e.a, *e.b, e.reason); break;
        }
    }
}

void FunctionGraph::notify(PendingEvent e) {
    if (m_observers.empty()) return;
    if (m_recording)
        m_pending.push_back(e);
    else
        deliver(e);
}

namespace {
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}
} // namespace

std::string Variable::displayName() const {
    if (!m_name.empty()) return m_name;
    if (m_constant) return "TensorConstant" + m_constant->shortValue();
    if (m_owner) {
        if (m_owner->nout() > 1) return m_owner->op().str() + "." + std::to_string(m_index);
        return m_owner->op().str() + ".0";
    }
    return "<" + m_type.str() + ">";
}

FunctionGraph::FunctionGraph() = default;

std::uint32_t& FunctionGraph::clientSlot(Client c) {
    return c.node ? c.node->m_clientSlots[static_cast<std::size_t>(c.index)]
                  : m_outputSlots[static_cast<std::size_t>(c.index)];
}

void FunctionGraph::addClient(Variable* v, Client c) {
    ClientList& l = v->m_clients;
    clientSlot(c) = static_cast<std::uint32_t>(l.m_slots.size());
    l.m_slots.push_back(c);
    ++l.m_live;
}

void FunctionGraph::removeClient(Variable* v, Client c) {
    ClientList& l = v->m_clients;
    const std::size_t pos = clientSlot(c);
    if (pos >= l.m_slots.size() || !(l.m_slots[pos] == c)) return; // not attached
    l.m_slots[pos] = Client{nullptr, -1};
    --l.m_live;
    while (!l.m_slots.empty() && l.m_slots.back().index < 0) l.m_slots.pop_back();
    if (l.m_slots.size() - l.m_live <= l.m_live) return;
    // More holes than uses: squeeze them out (amortised O(1) per removal), keeping the order.
    std::size_t out = 0;
    for (const Client& u : l.m_slots)
        if (u.index >= 0) {
            clientSlot(u) = static_cast<std::uint32_t>(out);
            l.m_slots[out++] = u;
        }
    l.m_slots.resize(out);
}

void FunctionGraph::hintNextIds(NodeId node, std::vector<VarId> vars) {
    if (node >= 0 && node < static_cast<NodeId>(m_nodes.size()) && m_nodes[static_cast<std::size_t>(node)])
        throw Error("node id " + std::to_string(node) + " is already in use");
    for (VarId v : vars)
        if (v >= 0 && v < static_cast<VarId>(m_vars.size()) && m_vars[static_cast<std::size_t>(v)])
            throw Error("variable id " + std::to_string(v) + " is already in use");
    m_hintNode = node;
    m_hintVars.assign(vars.rbegin(), vars.rend()); // popped from the back
}

NodeId FunctionGraph::allocNodeId() {
    NodeId id = static_cast<NodeId>(m_nodes.size());
    if (m_hintNode >= 0) {
        id = m_hintNode;
        m_hintNode = -1;
    }
    if (id >= static_cast<NodeId>(m_nodes.size())) m_nodes.resize(static_cast<std::size_t>(id) + 1);
    return id;
}

VarId FunctionGraph::allocVarId() {
    VarId id = static_cast<VarId>(m_vars.size());
    if (!m_hintVars.empty()) {
        id = m_hintVars.back();
        m_hintVars.pop_back();
    }
    if (id >= static_cast<VarId>(m_vars.size())) m_vars.resize(static_cast<std::size_t>(id) + 1);
    return id;
}

Variable* FunctionGraph::placeVar(std::unique_ptr<Variable> v) {
    Variable* raw = v.get();
    m_vars[static_cast<std::size_t>(v->m_id)] = std::move(v);
    return raw;
}
FunctionGraph::~FunctionGraph() = default;

Variable* FunctionGraph::addInput(Type type, std::string nm) {
    auto v = std::make_unique<Variable>();
    v->m_id = allocVarId();
    v->m_type = std::move(type);
    v->m_name = std::move(nm);
    m_inputs.push_back(placeVar(std::move(v)));
    invalidate();
    return m_inputs.back();
}

Variable* FunctionGraph::addConstant(std::shared_ptr<const TensorData> data, std::string nm,
                                     std::optional<Location> loc) {
    auto v = std::make_unique<Variable>();
    v->m_id = allocVarId();
    v->m_type = Type(data->dtype, data->shape, loc.value_or(Location::host()));
    v->m_name = std::move(nm);
    v->m_constant = std::move(data);
    return placeVar(std::move(v));
}

Apply* FunctionGraph::makeApply(const Op& op, std::vector<Variable*> inputs,
                                std::optional<std::vector<Type>> outputTypes, std::string nm) {
    const OpKindInfo& info = op.info();
    const int n = static_cast<int>(inputs.size());
    if (n < info.minInputs || (info.maxInputs >= 0 && n > info.maxInputs)) {
        std::string want = info.maxInputs < 0 ? "at least " + std::to_string(info.minInputs)
                           : info.minInputs == info.maxInputs
                               ? std::to_string(info.minInputs)
                               : std::to_string(info.minInputs) + " to " + std::to_string(info.maxInputs);
        throw Error(op.str() + " takes " + want + " input" + (want == "1" ? "" : "s") + ", got " + std::to_string(n));
    }
    for (int i = 0; i < n; ++i) {
        Variable* v = inputs[static_cast<std::size_t>(i)];
        if (!v) throw Error(op.str() + ": input " + std::to_string(i) + " is null");
        if (v->m_id >= static_cast<VarId>(m_vars.size()) || m_vars[static_cast<std::size_t>(v->m_id)].get() != v)
            throw Error(op.str() + ": input " + std::to_string(i) + " belongs to another graph");
    }
    std::vector<Type> types;
    if (info.infer) {
        types = info.infer(op, inputs);
        if (outputTypes) {
            if (outputTypes->size() != types.size())
                throw Error(op.str() + " has " + std::to_string(types.size()) + " outputs, but " +
                            std::to_string(outputTypes->size()) + " were declared");
            for (std::size_t i = 0; i < types.size(); ++i) {
                if (!types[i].compatible((*outputTypes)[i]))
                    throw Error(op.str() + ": type mismatch on output " + std::to_string(i) + ": declared " +
                                (*outputTypes)[i].str() + ", inferred " + types[i].str());
                types[i] = types[i].merged((*outputTypes)[i]);
            }
        }
    } else {
        if (!outputTypes) throw Error(op.str() + " has no type rule: its output types must be given");
        types = std::move(*outputTypes);
    }
    auto node = std::make_unique<Apply>();
    node->m_id = allocNodeId();
    node->m_op = &op;
    node->m_inputs = std::move(inputs);
    node->m_clientSlots.assign(node->m_inputs.size(), 0);
    node->m_name = std::move(nm);
    for (std::size_t i = 0; i < types.size(); ++i) {
        auto v = std::make_unique<Variable>();
        v->m_id = allocVarId();
        v->m_type = std::move(types[i]);
        v->m_owner = node.get();
        v->m_index = static_cast<int>(i);
        node->m_outputs.push_back(placeVar(std::move(v)));
    }
    Apply* raw = node.get();
    m_nodes[static_cast<std::size_t>(raw->m_id)] = std::move(node);
    return raw;
}

Variable* FunctionGraph::apply(const Op& op, std::vector<Variable*> inputs, std::string nm) {
    return makeApply(op, std::move(inputs), std::nullopt, std::move(nm))->output(0);
}

void FunctionGraph::refineType(Variable* v, const Type& type) {
    if (!v->m_type.compatible(type))
        throw Error("type mismatch for " + v->displayName() + ": " + v->m_type.str() + " vs " + type.str());
    v->m_type = v->m_type.merged(type);
}

void FunctionGraph::setOutputs(std::vector<Variable*> outputs) {
    for (std::size_t i = 0; i < m_outputs.size(); ++i) removeClient(m_outputs[i], {nullptr, static_cast<int>(i)});
    m_outputs = std::move(outputs);
    m_outputSlots.assign(m_outputs.size(), 0);
    for (std::size_t i = 0; i < m_outputs.size(); ++i) {
        importVar(m_outputs[i], "init");
        addClient(m_outputs[i], {nullptr, static_cast<int>(i)});
    }
    m_undo.clear();
    invalidate();
    m_ranksValid = false;
}

Apply* FunctionGraph::node(NodeId id) const {
    if (id < 0 || id >= static_cast<NodeId>(m_nodes.size())) return nullptr;
    return m_nodes[static_cast<std::size_t>(id)].get();
}

Variable* FunctionGraph::variable(VarId id) const {
    if (id < 0 || id >= static_cast<VarId>(m_vars.size())) return nullptr;
    return m_vars[static_cast<std::size_t>(id)].get();
}

void FunctionGraph::importVar(Variable* v, std::string_view reason) {
    if (!v->m_owner || v->m_owner->m_inGraph) return;
    // Iterative post-order DFS over owners not yet in the graph.
    // Visit marks by epoch: no per-call allocation proportional to the graph.
    if (m_mark.size() < m_nodes.size()) m_mark.resize(m_nodes.size() * 2, 0);
    if (++m_epoch == 0) {
        std::fill(m_mark.begin(), m_mark.end(), 0);
        m_epoch = 1;
    }
    auto seen = [&](const Apply* a) -> std::uint32_t& { return m_mark[static_cast<std::size_t>(a->m_id)]; };
    std::vector<std::pair<Apply*, std::size_t>> stack{{v->m_owner, 0}};
    seen(v->m_owner) = m_epoch;
    while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < node->m_inputs.size()) {
            Variable* in = node->m_inputs[next++];
            Apply* o = in->m_owner;
            if (o && !o->m_inGraph && seen(o) != m_epoch) {
                seen(o) = m_epoch;
                stack.push_back({o, 0});
            }
            continue;
        }
        Apply* done = node;
        stack.pop_back();
        if (m_ranksValid) {
            // Rank between the inputs and the clients-to-be (m_pendingUpper), halving the gap.
            double lo = 0;
            for (auto* in : done->m_inputs) lo = std::max(lo, rankOf(in));
            const double hi = m_pendingUpper;
            double r = std::isinf(hi) ? lo + 1024.0 : lo + (hi - lo) / 2;
            if (!(r > lo) || (!std::isinf(hi) && !(r < hi))) m_ranksValid = false;
            if (m_rank.size() <= static_cast<std::size_t>(done->m_id)) m_rank.resize(m_nodes.size() * 2, 0.0);
            m_rank[static_cast<std::size_t>(done->m_id)] = r;
        }
        done->m_inGraph = true;
        for (std::size_t i = 0; i < done->m_inputs.size(); ++i)
            addClient(done->m_inputs[i], {done, static_cast<int>(i)});
        ++m_liveNodes;
        m_undo.push_back({UndoEntry::Kind::Import, done, 0, nullptr});
        invalidate();
        notify({PendingEvent::Kind::Import, done, 0, nullptr, nullptr, reason});
    }
}

void FunctionGraph::changeInput(Apply* node, int index, Variable* newVar, std::string_view reason) {
    Variable*& slot =
        node ? node->m_inputs[static_cast<std::size_t>(index)] : m_outputs[static_cast<std::size_t>(index)];
    Variable* old = slot;
    if (old == newVar) return;
    if (!old->type().compatible(newVar->type()))
        throw ReplacementError("type mismatch: cannot replace " + old->displayName() + " (" + old->type().str() +
                               ") by " + newVar->displayName() + " (" + newVar->type().str() + ")");
    importVar(newVar, reason);
    slot = newVar;
    removeClient(old, {node, index}); // before the new use takes over the client's slot index
    addClient(newVar, {node, index});
    m_undo.push_back({UndoEntry::Kind::ChangeInput, node, index, old});
    // The order follows owners only: swapping one constant or graph input for another (Merge's
    // constants) leaves it as it is.
    if (old->m_owner || newVar->m_owner) invalidate();
    notify({PendingEvent::Kind::ChangeInput, node, index, old, newVar, reason});
    if (old->m_owner) pruneIfUnused(old->m_owner, reason);
}

void FunctionGraph::pruneIfUnused(Apply* start, std::string_view reason) {
    std::vector<Apply*> work{start};
    while (!work.empty()) {
        Apply* n = work.back();
        work.pop_back();
        if (!n->m_inGraph) continue;
        bool used = false;
        for (auto* out : n->m_outputs)
            if (!out->m_clients.empty()) used = true;
        if (used) continue;
        n->m_inGraph = false;
        --m_liveNodes;
        for (std::size_t i = 0; i < n->m_inputs.size(); ++i) removeClient(n->m_inputs[i], {n, static_cast<int>(i)});
        m_undo.push_back({UndoEntry::Kind::Prune, n, 0, nullptr});
        invalidate();
        notify({PendingEvent::Kind::Prune, n, 0, nullptr, nullptr, reason});
        for (auto* in : n->m_inputs)
            if (in->m_owner && in->m_owner->m_inGraph) work.push_back(in->m_owner);
    }
}

void FunctionGraph::computeRanks() const {
    if (m_rank.size() < m_nodes.size()) m_rank.resize(m_nodes.size() * 2, 0.0);
    const auto& topo = toposort();
    for (std::size_t i = 0; i < topo.size(); ++i)
        m_rank[static_cast<std::size_t>(topo[i]->m_id)] = static_cast<double>(i + 1) * 1024.0;
    m_ranksValid = true;
}

double FunctionGraph::rankOf(const Variable* v) const {
    return v->m_owner && v->m_owner->m_inGraph ? m_rank[static_cast<std::size_t>(v->m_owner->m_id)] : 0.0;
}

void FunctionGraph::checkNoCycle(Variable* var, Variable* newVar) const {
    // A cycle needs a client X of var among newVar's ancestors. Ranks form a topological order
    // of the graph, so an in-graph node ranked below every client cannot descend from one:
    // the upward search stops there and only visits the region that could close a cycle.
    std::vector<const Apply*> clients; // usually a handful
    for (const Client& c : var->m_clients)
        if (c.node && std::find(clients.begin(), clients.end(), c.node) == clients.end()) clients.push_back(c.node);
    m_pendingUpper = std::numeric_limits<double>::infinity();
    if (clients.empty() || !newVar->m_owner) return;
    if (!m_ranksValid) computeRanks();
    for (const Apply* c : clients) m_pendingUpper = std::min(m_pendingUpper, m_rank[static_cast<std::size_t>(c->m_id)]);
    auto& mark = const_cast<std::vector<std::uint32_t>&>(m_mark);
    auto& epoch = const_cast<std::uint32_t&>(m_epoch);
    if (mark.size() < m_nodes.size()) mark.resize(m_nodes.size() * 2, 0);
    if (++epoch == 0) {
        std::fill(mark.begin(), mark.end(), 0);
        epoch = 1;
    }
    auto seen = [&](const Apply* a) { return std::exchange(mark[static_cast<std::size_t>(a->m_id)], epoch) == epoch; };
    std::vector<const Apply*> stack{newVar->m_owner};
    seen(newVar->m_owner);
    while (!stack.empty()) {
        const Apply* n = stack.back();
        stack.pop_back();
        if (std::find(clients.begin(), clients.end(), n) != clients.end())
            throw ReplacementError("replacing " + var->displayName() + " by " + newVar->displayName() +
                                   " would create a cycle through node #" + std::to_string(n->id()) + " (" +
                                   n->op().str() + ")");
        for (auto* in : n->m_inputs) {
            const Apply* o = in->m_owner;
            if (!o || seen(o)) continue;
            if (o->m_inGraph && m_rank[static_cast<std::size_t>(o->m_id)] < m_pendingUpper) continue;
            stack.push_back(o);
        }
    }
}

// One undoable edit session: rolls back to where it started unless committed; the outermost
// session clears the undo log (nested replace calls inside replaceAllValidate share it) and, on
// commit, delivers the session's edits to the observers. A rolled-back session delivers nothing.
class FunctionGraph::Transaction {
public:
    explicit Transaction(FunctionGraph& g)
        : m_g(g)
        , m_mark(g.m_undo.size())
        , m_eventMark(g.m_pending.size())
        , m_outer(!g.m_recording)
        , m_topoValid(g.m_topoValid)
        , m_topoGeneration(g.m_topoGeneration) {
        g.m_recording = true;
    }
    void commit() {
        m_committed = true;
        if (!m_outer) return;
        // The order sorted before the session began may still be the graph's, patched in place.
        if (m_topoValid && !m_g.m_topoValid && m_g.m_topoGeneration == m_topoGeneration && m_g.patchOrder(m_mark))
            m_g.m_topoValid = true;
        m_g.m_recording = false;
        m_g.clearUndo();
        std::vector<PendingEvent> events;
        events.swap(m_g.m_pending);
        for (const PendingEvent& e : events) m_g.deliver(e);
    }
    ~Transaction() {
        if (m_committed) return;
        m_g.rollback(m_mark);
        // The graph is as it was when the session began: so is its order, unless it was sorted
        // again in between (a rewrite that declines after edits must not cost the next pass a sort).
        if (m_topoValid && m_g.m_topoGeneration == m_topoGeneration) m_g.m_topoValid = true;
        m_g.m_pending.resize(m_eventMark);
        if (m_outer) {
            m_g.m_recording = false;
            m_g.clearUndo();
            m_g.m_pending.clear();
        }
    }

private:
    FunctionGraph& m_g;
    std::size_t m_mark;
    std::size_t m_eventMark;
    bool m_outer;
    bool m_topoValid;               // the cached order was valid at the start
    std::uint64_t m_topoGeneration; // and this was its generation
    bool m_committed = false;
};

void FunctionGraph::replace(Variable* var, Variable* newVar, std::string_view reason) {
    Transaction tx(*this);
    if (var == newVar || (!var->m_owner && !var->isInput() && var->m_clients.empty())) { // nothing to do
        tx.commit();
        return;
    }
    if (!var->type().compatible(newVar->type()))
        throw ReplacementError("type mismatch: cannot replace " + var->displayName() + " (" + var->type().str() +
                               ") by " + newVar->displayName() + " (" + newVar->type().str() + ")");
    checkNoCycle(var, newVar);
    if (m_ranksValid && newVar->m_owner && newVar->m_owner->m_inGraph && rankOf(newVar) >= m_pendingUpper)
        m_ranksValid = false; // an existing node now feeds lower-ranked clients
    notify({PendingEvent::Kind::Replace, nullptr, 0, var, newVar, reason});
    const std::vector<Client> clients = var->m_clients.toVector(); // imports add no redirections
    for (const Client& c : clients) changeInput(c.node, c.index, newVar, reason);
    tx.commit();
}

void FunctionGraph::replaceAllValidate(const std::vector<std::pair<Variable*, Variable*>>& pairs,
                                       std::string_view reason, const std::vector<const Apply*>& mustRemove) {
    Transaction tx(*this);
    try {
        // Acyclicity and types are checked by each replace (checkNoCycle, changeInput); one
        // producer per variable holds by construction. No full-graph walk per replacement.
        for (const auto& [a, b] : pairs) replace(a, b, reason);
        for (const Apply* n : mustRemove)
            if (n->m_inGraph)
                throw ReplacementError("node #" + std::to_string(n->m_id) + " (" + n->op().str() +
                                       ") should have been removed by the replacement but is still used");
    } catch (const ReplacementError&) {
        throw;
    } catch (const Error& e) { // a type rule or observer failing: still a rejected replacement
        throw ReplacementError(e.what());
    }
    tx.commit();
}

void FunctionGraph::clearUndo() {
    // A replacement of the whole graph (GraphToGPU) logs an entry per node: give that memory back
    // instead of keeping it for the graph's lifetime.
    if (m_undo.capacity() > 4096)
        std::vector<UndoEntry>().swap(m_undo);
    else
        m_undo.clear();
}

void FunctionGraph::rollback(std::size_t mark) {
    while (m_undo.size() > mark) {
        UndoEntry e = m_undo.back();
        m_undo.pop_back();
        switch (e.kind) {
        case UndoEntry::Kind::Import:
            e.node->m_inGraph = false;
            --m_liveNodes;
            for (std::size_t i = 0; i < e.node->m_inputs.size(); ++i)
                removeClient(e.node->m_inputs[i], {e.node, static_cast<int>(i)});
            break;
        case UndoEntry::Kind::Prune:
            e.node->m_inGraph = true;
            ++m_liveNodes;
            for (std::size_t i = 0; i < e.node->m_inputs.size(); ++i)
                addClient(e.node->m_inputs[i], {e.node, static_cast<int>(i)});
            break;
        case UndoEntry::Kind::ChangeInput: {
            Variable*& slot = e.node ? e.node->m_inputs[static_cast<std::size_t>(e.index)]
                                     : m_outputs[static_cast<std::size_t>(e.index)];
            Variable* cur = slot;
            removeClient(cur, {e.node, e.index});
            slot = e.old;
            addClient(e.old, {e.node, e.index});
            break;
        }
        }
    }
    invalidate();
}

const std::vector<Apply*>& FunctionGraph::toposort() const {
    if (m_topoValid) {
        if (m_topoHoles == 0) return m_topo;
        if (m_topoViewStale) { // one linear copy, no node touched
            m_topoView.clear();
            m_topoView.reserve(m_topo.size() - m_topoHoles);
            for (Apply* n : m_topo)
                if (n) m_topoView.push_back(n);
            m_topoViewStale = false;
        }
        return m_topoView;
    }
    m_topo.clear();
    m_topo.reserve(m_liveNodes);
    m_topoHoles = 0;
    std::vector<Apply*>().swap(m_topoView);
    if (m_topoPos.size() < m_nodes.size()) m_topoPos.resize(m_nodes.size());
    // 0 = unvisited, 1 = on stack, 2 = done; indexed by node id
    std::vector<std::uint8_t> state(m_nodes.size(), 0);
    std::vector<std::pair<Apply*, std::size_t>> stack;
    for (Variable* out : m_outputs) {
        if (!out->m_owner || state[static_cast<std::size_t>(out->m_owner->m_id)]) continue;
        stack.push_back({out->m_owner, 0});
        state[static_cast<std::size_t>(out->m_owner->m_id)] = 1;
        while (!stack.empty()) {
            auto& [n, next] = stack.back();
            if (next == 0) // fetch the inputs' owners together rather than one miss after the other
                for (const Variable* in : n->m_inputs)
                    if (in->m_owner) __builtin_prefetch(in->m_owner);
            if (next < n->m_inputs.size()) {
                Apply* o = n->m_inputs[next++]->m_owner;
                if (!o) continue;
                auto& s = state[static_cast<std::size_t>(o->m_id)];
                if (s == 1) {
                    std::string cyc;
                    bool in = false;
                    for (auto& [sn, _] : stack) {
                        if (sn == o) in = true;
                        if (in) cyc += (cyc.empty() ? "" : " -> ") + sn->op().str() + " #" + std::to_string(sn->m_id);
                    }
                    throw ReplacementError("the graph has a cycle: " + cyc);
                }
                if (s == 0) {
                    s = 1;
                    stack.push_back({o, 0});
                }
                continue;
            }
            state[static_cast<std::size_t>(n->m_id)] = 2;
            m_topoPos[static_cast<std::size_t>(n->m_id)] = static_cast<std::uint32_t>(m_topo.size());
            m_topo.push_back(n);
            stack.pop_back();
        }
    }
    m_topoValid = true;
    ++m_topoGeneration;
    return m_topo;
}

// toposort() is Theano's io_toposort as a depth-first walk from the outputs, inputs in order, each
// node placed after its inputs when first reached. A replacement keeps that order but for nodes
// substituted or removed in place when its net edits (undo entries from `mark`) are only:
//  - input changes between variables without owners (constants, graph inputs): not followed;
//  - node N replaced by a new node N' with the same inputs (the same variables, in order), every
//    use of N's outputs moved to N''s: the walk reaches N' when it reached N and does the same
//    below it, so N' takes N's place;
//  - removed nodes X whose uses moved to variables without owners, or to the outputs of a node
//    M with X's inputs placed before X (a merge: M and everything below it were placed before
//    the walk reached X), and whose inputs come from no owner, from other such removed nodes or
//    from M's inputs: reaching X placed X and removed nodes only, so X leaves a hole.
// Anything else (new subgraphs, rewired inputs between nodes) returns false: the next toposort()
// sorts. Whole-graph replacements (GraphToGPU) are not analysed (limit on the entries).
bool FunctionGraph::patchOrder(std::size_t mark) {
    constexpr std::size_t kMaxEntries = 512;
    if (m_undo.size() - mark > kMaxEntries) return false;
    struct SlotChange {
        Apply* client; // nullptr: graph output
        int index;
        Variable* before;
    };
    std::vector<Apply*> imported, pruned;
    std::vector<SlotChange> slots;
    const auto has = [](const std::vector<Apply*>& v, const Apply* a) {
        return std::find(v.begin(), v.end(), a) != v.end();
    };
    for (std::size_t k = mark; k < m_undo.size(); ++k) {
        const UndoEntry& e = m_undo[k];
        switch (e.kind) {
        case UndoEntry::Kind::Import:
            if (has(pruned, e.node)) return false;
            imported.push_back(e.node);
            break;
        case UndoEntry::Kind::Prune:
            if (has(imported, e.node)) return false;
            pruned.push_back(e.node);
            break;
        case UndoEntry::Kind::ChangeInput:
            if (std::none_of(slots.begin(), slots.end(),
                             [&](const SlotChange& s) { return s.client == e.node && s.index == e.index; }))
                slots.push_back({e.node, e.index, e.old}); // the first entry holds the value before
            break;
        }
    }
    const auto current = [&](const SlotChange& s) {
        return s.client ? s.client->m_inputs[static_cast<std::size_t>(s.index)]
                        : m_outputs[static_cast<std::size_t>(s.index)];
    };
    std::vector<const Apply*> rewired; // nodes whose inputs changed
    for (const SlotChange& s : slots) {
        if (current(s) == s.before || !s.client) continue;
        if (!s.client->m_inGraph || has(imported, s.client) || has(pruned, s.client)) return false;
        rewired.push_back(s.client);
    }
    std::vector<std::pair<Apply*, Apply*>> substituted; // (N, N')
    std::vector<std::pair<Apply*, Apply*>> merged;      // (X, M)
    std::vector<Apply*> toOwnerless;                    // X with a use moved to a variable without owner
    for (const SlotChange& s : slots) {
        Variable* after = current(s);
        if (after == s.before || (!s.before->m_owner && !after->m_owner)) continue;
        Apply* x = s.before->m_owner;
        if (!x || !has(pruned, x)) return false;
        Apply* y = after->m_owner;
        if (!y) {
            toOwnerless.push_back(x);
        } else if (has(imported, y)) {
            auto it = std::find_if(substituted.begin(), substituted.end(),
                                   [&](const auto& p) { return p.first == x || p.second == y; });
            if (it == substituted.end())
                substituted.emplace_back(x, y);
            else if (it->first != x || it->second != y)
                return false;
        } else {
            if (!y->m_inGraph || has(pruned, y) || std::find(rewired.begin(), rewired.end(), y) != rewired.end() ||
                y->m_inputs != x->m_inputs ||
                m_topoPos[static_cast<std::size_t>(y->m_id)] >= m_topoPos[static_cast<std::size_t>(x->m_id)])
                return false;
            merged.emplace_back(x, y);
        }
    }
    const auto substitutes = [&](const Apply* a) {
        return std::any_of(substituted.begin(), substituted.end(), [&](const auto& p) { return p.first == a; });
    };
    for (const Apply* n : imported) {
        auto it = std::find_if(substituted.begin(), substituted.end(), [&](const auto& p) { return p.second == n; });
        if (it == substituted.end() || !n->m_inGraph || n->m_inputs != it->first->m_inputs) return false;
    }
    for (Apply* x : pruned) {
        if (x->m_inGraph || m_topoPos.size() <= static_cast<std::size_t>(x->m_id) ||
            m_topo[m_topoPos[static_cast<std::size_t>(x->m_id)]] != x)
            return false;
        const bool isMerged = std::any_of(merged.begin(), merged.end(), [&](const auto& p) { return p.first == x; });
        if (substitutes(x)) {
            if (isMerged || has(toOwnerless, x)) return false;
            continue;
        }
        if (isMerged) continue; // x has the inputs of M, which was placed before x
        for (const Variable* in : x->m_inputs)
            if (in->m_owner && (!has(pruned, in->m_owner) || substitutes(in->m_owner))) return false;
    }
    for (const auto& [n, replacement] : substituted) {
        const std::uint32_t pos = m_topoPos[static_cast<std::size_t>(n->m_id)];
        if (m_topoPos.size() <= static_cast<std::size_t>(replacement->m_id)) m_topoPos.resize(m_nodes.size());
        m_topoPos[static_cast<std::size_t>(replacement->m_id)] = pos;
        m_topo[pos] = replacement;
    }
    for (Apply* x : pruned)
        if (!substitutes(x)) {
            m_topo[m_topoPos[static_cast<std::size_t>(x->m_id)]] = nullptr;
            ++m_topoHoles;
        }
    m_topoViewStale = true;
    return true;
}

std::vector<Variable*> FunctionGraph::constants() const {
    std::vector<Variable*> out;
    std::vector<bool> seen(m_vars.size(), false); // by variable id: one bit each, no hashing
    auto add = [&](Variable* v) {
        if (!v->isConstant()) return;
        const auto id = static_cast<std::size_t>(v->m_id);
        if (seen[id]) return;
        seen[id] = true;
        out.push_back(v);
    };
    for (Apply* n : toposort())
        for (Variable* in : n->m_inputs) add(in);
    for (Variable* o : m_outputs) add(o);
    return out;
}

std::uint64_t FunctionGraph::fingerprint() const {
    std::vector<std::uint64_t> h(m_vars.size(), 0);
    const std::hash<std::string> sh;
    for (std::size_t i = 0; i < m_inputs.size(); ++i)
        h[static_cast<std::size_t>(m_inputs[i]->m_id)] = mix(mix(0x1234, i), m_inputs[i]->m_type.hash());
    auto varHash = [&](const Variable* v) -> std::uint64_t {
        if (v->m_constant) return mix(mix(0xC0, v->m_type.hash()), v->m_constant->contentHash());
        return h[static_cast<std::size_t>(v->m_id)];
    };
    for (const Apply* n : toposort()) {
        // nested graphs count by their structure, not by their address in the op key
        std::uint64_t nh;
        if (n->op().subgraphs().empty()) {
            nh = mix(0xA99, sh(n->op().key()));
        } else {
            nh = mix(0xA99, sh(n->op().kind() + '\x1f' + n->op().attrs().dump()));
            for (const Subgraph& s : n->op().subgraphs()) nh = mix(mix(nh, sh(s.attribute)), s.graph->fingerprint());
        }
        for (const Variable* in : n->m_inputs) nh = mix(nh, varHash(in));
        for (const Variable* out : n->m_outputs)
            h[static_cast<std::size_t>(out->m_id)] =
                mix(mix(nh, static_cast<std::uint64_t>(out->m_index)), out->m_type.hash());
    }
    std::uint64_t f = mix(0xF00D, m_inputs.size());
    for (const Variable* o : m_outputs) f = mix(f, varHash(o));
    return f;
}

std::map<std::string, int> FunctionGraph::opCounts() const {
    std::map<std::string, int> c;
    for (const Apply* n : toposort()) ++c[n->op().kind()];
    return c;
}

void FunctionGraph::validate() const {
    for (const Apply* n : toposort()) { // throws on a cycle
        for (std::size_t i = 0; i < n->m_outputs.size(); ++i)
            if (n->m_outputs[i]->m_owner != n || n->m_outputs[i]->m_index != static_cast<int>(i))
                throw ReplacementError("variable " + n->m_outputs[i]->displayName() + " has a second producer: node #" +
                                       std::to_string(n->m_id));
        for (const Variable* in : n->m_inputs)
            if (in->m_owner && !in->m_owner->m_inGraph)
                throw ReplacementError("node #" + std::to_string(n->m_id) + " (" + n->op().str() + ") uses " +
                                       in->displayName() + " of a removed node");
    }
}

void FunctionGraph::addObserver(GraphObserver* observer) {
    if (std::find(m_observers.begin(), m_observers.end(), observer) == m_observers.end())
        m_observers.push_back(observer);
}

void FunctionGraph::removeObserver(GraphObserver* observer) {
    m_observers.erase(std::remove(m_observers.begin(), m_observers.end(), observer), m_observers.end());
}

std::unique_ptr<FunctionGraph> FunctionGraph::clone() const {
    auto g = std::make_unique<FunctionGraph>();
    g->name = name;
    g->sourcePath = sourcePath;
    auto copyConstant = [&](const Variable* c) {
        g->hintNextIds(-1, {c->id()});
        g->addConstant(c->constant(), c->name(), c->type().location())->tag = c->tag;
    };
    for (const Variable* in : m_inputs) {
        g->hintNextIds(-1, {in->id()});
        g->addInput(in->type(), in->name())->tag = in->tag;
    }
    for (const Variable* c : constants()) copyConstant(c);
    for (const Apply* n : toposort()) {
        std::vector<Variable*> ins;
        ins.reserve(n->inputs().size());
        for (const Variable* in : n->inputs()) ins.push_back(g->variable(in->id()));
        std::vector<VarId> outIds;
        std::vector<Type> types;
        for (const Variable* o : n->outputs()) {
            outIds.push_back(o->id());
            types.push_back(o->type());
        }
        g->hintNextIds(n->id(), outIds);
        Apply* a = g->makeApply(n->op(), std::move(ins), std::move(types), n->name());
        a->tag = n->tag;
        for (std::size_t k = 0; k < outIds.size(); ++k) {
            a->output(static_cast<int>(k))->setName(n->output(static_cast<int>(k))->name());
            a->output(static_cast<int>(k))->tag = n->output(static_cast<int>(k))->tag;
        }
    }
    std::vector<Variable*> outs;
    for (const Variable* o : m_outputs) {
        if (!g->variable(o->id()) && o->isConstant()) copyConstant(o); // a constant output no node uses
        outs.push_back(g->variable(o->id()));
    }
    g->setOutputs(std::move(outs));
    return g;
}

std::unique_ptr<FunctionGraph> FunctionGraph::copyWithHistory() const {
    if (m_recording || !m_pending.empty()) throw Error("cannot copy a graph in the middle of a replacement");
    auto g = std::make_unique<FunctionGraph>();
    g->name = name;
    g->sourcePath = sourcePath;
    g->m_vars.resize(m_vars.size());
    g->m_nodes.resize(m_nodes.size());
    for (std::size_t i = 0; i < m_vars.size(); ++i)
        if (const Variable* v = m_vars[i].get()) {
            auto c = std::make_unique<Variable>();
            c->m_id = v->m_id;
            c->m_type = v->m_type;
            c->m_name = v->m_name;
            c->m_index = v->m_index;
            c->m_constant = v->m_constant;
            c->tag = v->tag;
            g->m_vars[i] = std::move(c);
        }
    for (std::size_t i = 0; i < m_nodes.size(); ++i)
        if (const Apply* n = m_nodes[i].get()) {
            auto c = std::make_unique<Apply>();
            c->m_id = n->m_id;
            c->m_op = n->m_op;
            c->m_clientSlots = n->m_clientSlots;
            c->m_name = n->m_name;
            c->m_inGraph = n->m_inGraph;
            c->tag = n->tag;
            g->m_nodes[i] = std::move(c);
        }
    const auto var = [&](const Variable* v) { return g->m_vars[static_cast<std::size_t>(v->m_id)].get(); };
    const auto node = [&](const Apply* a) { return a ? g->m_nodes[static_cast<std::size_t>(a->m_id)].get() : nullptr; };
    for (std::size_t i = 0; i < m_vars.size(); ++i)
        if (const Variable* v = m_vars[i].get()) {
            Variable* c = g->m_vars[i].get();
            c->m_owner = node(v->m_owner);
            c->m_clients.m_slots.reserve(v->m_clients.m_slots.size());
            for (const Client& u : v->m_clients.m_slots)
                c->m_clients.m_slots.push_back(u.index < 0 ? Client{nullptr, -1} : Client{node(u.node), u.index});
            c->m_clients.m_live = v->m_clients.m_live;
        }
    for (std::size_t i = 0; i < m_nodes.size(); ++i)
        if (const Apply* n = m_nodes[i].get()) {
            Apply* c = g->m_nodes[i].get();
            c->m_inputs.reserve(n->m_inputs.size());
            for (const Variable* in : n->m_inputs) c->m_inputs.push_back(var(in));
            c->m_outputs.reserve(n->m_outputs.size());
            for (const Variable* o : n->m_outputs) c->m_outputs.push_back(var(o));
        }
    for (const Variable* in : m_inputs) g->m_inputs.push_back(var(in));
    for (const Variable* o : m_outputs) g->m_outputs.push_back(var(o));
    g->m_outputSlots = m_outputSlots;
    g->m_liveNodes = m_liveNodes;
    g->m_rank = m_rank;
    g->m_ranksValid = m_ranksValid;
    g->m_pendingUpper = m_pendingUpper;
    g->m_mark = m_mark;
    g->m_epoch = m_epoch;
    return g;
}

} // namespace passlens
