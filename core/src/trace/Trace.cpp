#include "passlens/trace/Trace.h"

#include "passlens/io/SessionFile.h"
#include "passlens/ir/OpRegistry.h"
#include "passlens/ir/Error.h"
#include "passlens/rewrite/RewriteEngine.h"

#include <algorithm>
#include <map>

namespace passlens {

using json = nlohmann::json;

namespace {
// Orders an event's node definitions so that each comes after the definitions of its inputs
// (stable: an ordered list is unchanged). The graph delivers a replacement's imports at its
// commit, so a node imported early whose input a later pair of the same replacement changed
// reads its final inputs, which a node imported later may define.
void definitionsFirst(std::vector<NodeDef>& nodes) {
    if (nodes.size() < 2) return;
    // (output id, defining node), sorted by id: 16 bytes an output, no tree node each (GraphToGPU
    // defines every node of the graph in one event).
    std::vector<std::pair<VarId, std::size_t>> byOutput;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        for (const auto& o : nodes[i].outputs) byOutput.push_back({o.id, i});
    std::stable_sort(byOutput.begin(), byOutput.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t kept = 0;
    for (std::size_t i = 0; i < byOutput.size(); ++i) {
        if (i + 1 < byOutput.size() && byOutput[i + 1].first == byOutput[i].first) continue; // the last one wins
        byOutput[kept++] = byOutput[i];
    }
    byOutput.resize(kept);
    const auto producer = [&](VarId v) -> const std::size_t* {
        auto it =
            std::lower_bound(byOutput.begin(), byOutput.end(), v, [](const auto& p, VarId id) { return p.first < id; });
        return it != byOutput.end() && it->first == v ? &it->second : nullptr;
    };
    bool ordered = true;
    for (std::size_t i = 0; i < nodes.size() && ordered; ++i)
        for (VarId v : nodes[i].inputs)
            if (const std::size_t* p = producer(v); p && *p > i) ordered = false;
    if (ordered) return;
    std::vector<std::uint8_t> state(nodes.size(), 0); // 0 new, 1 on stack, 2 placed
    std::vector<NodeDef> out;
    out.reserve(nodes.size());
    for (std::size_t root = 0; root < nodes.size(); ++root) {
        if (state[root]) continue;
        std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};
        state[root] = 1;
        while (!stack.empty()) {
            auto& [i, next] = stack.back();
            if (next < nodes[i].inputs.size()) {
                const std::size_t* p = producer(nodes[i].inputs[next++]);
                if (p && state[*p] == 0) {
                    state[*p] = 1;
                    stack.push_back({*p, 0});
                }
                continue;
            }
            state[i] = 2;
            out.push_back(std::move(nodes[i]));
            stack.pop_back();
        }
    }
    nodes = std::move(out);
}

// Recreates a recorded node with its ids. Throws passlens::Error for an undefined input.
void recreateNode(FunctionGraph& g, const NodeDef& d) {
    std::vector<Variable*> ins;
    for (VarId v : d.inputs) {
        Variable* var = g.variable(v);
        if (!var)
            throw Error("node " + std::to_string(d.id) + " uses variable " + std::to_string(v) +
                        ", which nothing earlier defines");
        ins.push_back(var);
    }
    std::vector<VarId> outIds;
    std::vector<Type> types;
    for (const auto& o : d.outputs) {
        outIds.push_back(o.id);
        types.push_back(o.type);
    }
    g.hintNextIds(d.id, outIds);
    Apply* a = g.makeApply(*d.opPtr, ins, types, d.name);
    if (!d.tag.is_null()) a->tag = d.tag;
    for (std::size_t k = 0; k < d.outputs.size(); ++k) a->output(static_cast<int>(k))->setName(d.outputs[k].name);
}
} // namespace

void SeqByNode::set(NodeId id, int seq) {
    if (id < 0) {
        m_sparse[id] = seq;
        return;
    }
    const auto i = static_cast<std::uint64_t>(id);
    if (i >= m_dense.size()) {
        if (i >= m_denseLimit) {
            m_sparse[id] = seq;
            return;
        }
        m_dense.resize(static_cast<std::size_t>(
                           std::min<std::uint64_t>(m_denseLimit, std::max<std::uint64_t>(i + 1, 2 * m_dense.size()))),
                       0);
    }
    m_dense[static_cast<std::size_t>(i)] = seq;
}

int SeqByNode::get(NodeId id) const {
    if (id >= 0 && static_cast<std::uint64_t>(id) < m_dense.size()) {
        if (const int seq = m_dense[static_cast<std::size_t>(id)]) return seq;
    }
    auto it = m_sparse.find(id);
    return it == m_sparse.end() ? 0 : it->second;
}

void SeqByNode::clear() {
    m_dense.clear();
    m_dense.shrink_to_fit();
    m_sparse.clear();
    m_denseLimit = 0;
}

const char* statusName(EventStatus s) {
    switch (s) {
    case EventStatus::Applied: return "applied";
    case EventStatus::Rejected: return "rejected";
    case EventStatus::Declined: return "declined";
    }
    return "?";
}

std::optional<EventStatus> parseStatus(std::string_view name) {
    for (EventStatus s : {EventStatus::Applied, EventStatus::Rejected, EventStatus::Declined})
        if (name == statusName(s)) return s;
    return std::nullopt;
}

void Trace::pipelineBegin(std::string_view name, const FunctionGraph& g) {
    m_pipeline = std::string(name);
    m_events.clear();
    m_phases.clear();
    m_created.clear();
    m_removed.clear();
    m_created.allowDense(static_cast<std::size_t>(g.nodeIdLimit()));
    m_removed.allowDense(static_cast<std::size_t>(g.nodeIdLimit()));
    // About one event per node or fewer on large graphs: reserved capacity that is never
    // written costs no memory, and a reallocation would hold the old and the new array.
    m_events.reserve(g.nodeCount());
    capture(g);
    m_known.assign(static_cast<std::size_t>(g.varIdLimit()), false);
    for (const auto& i : m_sourceInputs) know(i.id);
    for (const auto& c : m_sourceConstants) know(c.id);
    for (const auto& n : m_sourceNodes)
        for (const auto& o : n.outputs) know(o.id);
    m_pending = RewriteEvent{};
}

void Trace::capture(const FunctionGraph& g) {
    m_sourceName = g.name;
    m_sourceInputs.clear();
    m_sourceConstants.clear();
    m_sourceNodes.clear();
    m_sourceOutputs.clear();
    for (const Variable* v : g.inputs()) m_sourceInputs.push_back({v->id(), v->type(), v->name(), v->tag.json()});
    for (const Variable* c : g.constants())
        m_sourceConstants.push_back(ConstantDef{c->id(), c->name(), c->type().location(), c->constant()});
    m_sourceNodes.reserve(g.nodeCount());
    for (const Apply* n : g.toposort()) {
        NodeDef d;
        d.id = n->id();
        d.opPtr = &n->op();
        d.name = n->name();
        if (!n->tag.empty()) d.tag = n->tag.json();
        d.inputs.reserve(n->inputs().size());
        for (const Variable* in : n->inputs()) d.inputs.push_back(in->id());
        for (const Variable* o : n->outputs()) d.outputs.push_back({o->id(), o->type(), o->name()});
        m_sourceNodes.push_back(std::move(d));
    }
    for (const Variable* o : g.outputs()) m_sourceOutputs.push_back(o->id());
}

void Trace::phaseBegin(const PhaseInfo& p, const FunctionGraph&) {
    m_currentPhase = p.name;
    PhaseRecord r;
    r.info = p;
    m_phases.push_back(r);
    m_pending = RewriteEvent{};
}

void Trace::phaseEnd(const PhaseInfo&, const FunctionGraph& g, bool changed, double timeUs) {
    if (m_phases.empty()) return;
    m_phases.back().changed = changed;
    m_phases.back().timeUs = timeUs;
    m_phases.back().nodesAfter = g.nodeCount();
}

void Trace::defineConstant(const Variable& v, RewriteEvent& e) {
    if (!v.isConstant() || known(v.id())) return;
    for (const auto& c : e.constants)
        if (c.id == v.id()) return;
    e.constants.push_back(ConstantDef{v.id(), v.name(), v.type().location(), v.constant()});
}

void Trace::onImport(const FunctionGraph& g, const Apply& n, std::string_view) {
    m_created.allowDense(static_cast<std::size_t>(g.nodeIdLimit()));
    NodeDef d;
    d.id = n.id();
    d.opPtr = &n.op();
    d.name = n.name();
    for (const Variable* in : n.inputs()) {
        d.inputs.push_back(in->id());
        defineConstant(*in, m_pending);
    }
    for (const Variable* o : n.outputs()) d.outputs.push_back({o->id(), o->type(), o->name()});
    m_pending.added.push_back(n.id());
    m_pending.nodes.push_back(std::move(d));
}

void Trace::onPrune(const FunctionGraph& g, const Apply& n, std::string_view) {
    m_removed.allowDense(static_cast<std::size_t>(g.nodeIdLimit()));
    m_pending.removed.push_back(n.id());
}

void Trace::onReplace(const FunctionGraph&, const Variable& a, const Variable& b, std::string_view) {
    m_pending.replaced.push_back({a.id(), b.id()});
    defineConstant(b, m_pending);
}

void Trace::rewriteApplied(std::string_view rewriter, const Apply* node, const Replacement&, double timeUs) {
    RewriteEvent e = std::move(m_pending);
    m_pending = RewriteEvent{};
    e.seq = static_cast<int>(m_events.size()) + 1;
    e.phase = m_currentPhase;
    e.rewriter = std::string(rewriter);
    e.status = EventStatus::Applied;
    e.node = node ? node->id() : -1;
    e.timeUs = timeUs;
    definitionsFirst(e.nodes);
    for (const auto& c : e.constants) know(c.id);
    for (const auto& d : e.nodes)
        for (const auto& o : d.outputs) know(o.id);
    for (NodeId id : e.added) m_created.set(id, e.seq);
    for (NodeId id : e.removed) m_removed.set(id, e.seq);
    if (!m_phases.empty()) {
        if (!m_phases.back().firstEvent) m_phases.back().firstEvent = e.seq;
        m_phases.back().lastEvent = e.seq;
    }
    m_events.push_back(std::move(e));
}

void Trace::rewriteRejected(std::string_view rewriter, const Apply* node, const std::string& error) {
    m_pending = RewriteEvent{};
    RewriteEvent e;
    e.seq = static_cast<int>(m_events.size()) + 1;
    e.phase = m_currentPhase;
    e.rewriter = std::string(rewriter);
    e.status = EventStatus::Rejected;
    e.node = node ? node->id() : -1;
    e.reason = error;
    if (!m_phases.empty()) {
        if (!m_phases.back().firstEvent) m_phases.back().firstEvent = e.seq;
        m_phases.back().lastEvent = e.seq;
    }
    m_events.push_back(std::move(e));
}

void Trace::rewriteDeclined(std::string_view rewriter, const Apply* node, const std::string& reason) {
    if (!m_recordDeclined) return;
    RewriteEvent e;
    e.seq = static_cast<int>(m_events.size()) + 1;
    e.phase = m_currentPhase;
    e.rewriter = std::string(rewriter);
    e.status = EventStatus::Declined;
    e.node = node ? node->id() : -1;
    e.reason = reason;
    m_events.push_back(std::move(e));
}

void Trace::finish(const PipelineRun& run, const FunctionGraph& finalGraph, const GpuCapabilities& caps) {
    m_pipelinePhases.clear();
    for (std::size_t i = 0; i < run.phases.size() && i < m_phases.size(); ++i) {
        const PhaseRun& pr = run.phases[i];
        PhaseRecord& rec = m_phases[i];
        m_pipelinePhases.push_back(pr.info);
        rec.changed = pr.changed;
        rec.timeUs = pr.timeUs;
        rec.nodesBefore = pr.nodesBefore;
        rec.nodesAfter = pr.nodesAfter;
        rec.rewriters.assign(pr.rewriters.begin(), pr.rewriters.end());
    }
    m_lifting = liftingReport(finalGraph, caps, run.graphToGpuDecisions);
}

int Trace::createdBy(NodeId id) const { return m_created.get(id); }
int Trace::removedBy(NodeId id) const { return m_removed.get(id); }

void Trace::know(VarId id) {
    const auto i = static_cast<std::size_t>(id); // ids of the recorded graph: 0 <= id
    if (i >= m_known.size()) m_known.resize(std::max(i + 1, 2 * m_known.size()), false);
    m_known[i] = true;
}
void Trace::allowDenseIds(std::size_t nodeRecords) {
    m_created.allowDense(2 * nodeRecords + 4096);
    m_removed.allowDense(2 * nodeRecords + 4096);
}

bool Trace::known(VarId id) const {
    return id >= 0 && static_cast<std::size_t>(id) < m_known.size() && m_known[static_cast<std::size_t>(id)];
}
int Trace::appliedCount() const {
    return static_cast<int>(std::count_if(m_events.begin(), m_events.end(),
                                          [](const RewriteEvent& e) { return e.status == EventStatus::Applied; }));
}
int Trace::lastEventOfPhase(std::size_t phaseIndex) const {
    int last = 0;
    for (std::size_t i = 0; i <= phaseIndex && i < m_phases.size(); ++i)
        if (m_phases[i].lastEvent) last = m_phases[i].lastEvent;
    return last;
}

std::unique_ptr<FunctionGraph> Trace::sourceGraph() const {
    auto g = std::make_unique<FunctionGraph>();
    g->name = m_sourceName;
    for (const auto& i : m_sourceInputs) {
        g->hintNextIds(-1, {i.id});
        Variable* v = g->addInput(i.type, i.name);
        v->tag = i.tag;
    }
    for (const auto& c : m_sourceConstants) {
        g->hintNextIds(-1, {c.id});
        g->addConstant(c.data, c.name, c.location);
    }
    for (const auto& d : m_sourceNodes) recreateNode(*g, d);
    std::vector<Variable*> outs;
    for (VarId v : m_sourceOutputs) outs.push_back(g->variable(v));
    g->setOutputs(outs);
    return g;
}

std::unique_ptr<FunctionGraph> Trace::graphAfter(int seq) const {
    std::unique_ptr<FunctionGraph> g;
    try {
        g = sourceGraph();
    } catch (const Error& err) { // a compact session's source records are checked as they replay
        throw Error(m_label + ": graph: cannot rebuild: " + err.what());
    }
    replay(*g, 0, seq);
    return g;
}

std::unique_ptr<FunctionGraph> Trace::graphAfter(int seq, const FunctionGraph& base, int baseSeq) const {
    if (baseSeq < 0 || baseSeq > seq)
        throw Error(m_label + ": the graph after event " + std::to_string(seq) +
                    " cannot continue from the one after event " + std::to_string(baseSeq));
    std::unique_ptr<FunctionGraph> g = base.copyWithHistory();
    replay(*g, baseSeq, seq);
    return g;
}

void Trace::replay(FunctionGraph& g, int fromSeq, int toSeq) const {
    const auto first = m_events.begin() + std::clamp<std::ptrdiff_t>(fromSeq, 0, std::ssize(m_events));
    for (auto it = first; it != m_events.end(); ++it) {
        const RewriteEvent& e = *it;
        if (e.seq > toSeq) break;
        if (e.status != EventStatus::Applied) continue;
        const std::string where = m_label + ": events[" + std::to_string(e.seq - 1) + "] (" + e.rewriter + ")";
        try {
            for (const ConstantDef& c : e.constants) {
                if (g.variable(c.id)) continue;
                g.hintNextIds(-1, {c.id});
                g.addConstant(c.data, c.name, c.location);
            }
            for (const NodeDef& d : e.nodes) {
                if (g.node(d.id)) continue; // a pruned node imported again
                recreateNode(g, d);
            }
            std::vector<std::pair<Variable*, Variable*>> pairs;
            for (const auto& [a, b] : e.replaced) {
                Variable* va = g.variable(a);
                Variable* vb = g.variable(b);
                if (!va || !vb) throw Error("replaces unknown variable " + std::to_string(va ? b : a));
                pairs.push_back({va, vb});
            }
            g.replaceAllValidate(pairs, e.rewriter);
        } catch (const Error& err) {
            throw Error(where + ": cannot replay: " + err.what());
        }
    }
}

std::unique_ptr<FunctionGraph> Trace::graphAfterPhase(const std::string& name) const {
    if (name == "source") return graphAfter(0);
    if (name == "final") return graphAfter(static_cast<int>(m_events.size()));
    for (std::size_t i = 0; i < m_phases.size(); ++i)
        if (m_phases[i].info.name == name) return graphAfter(lastEventOfPhase(i));
    std::string names;
    for (const auto& p : m_phases) names += (names.empty() ? "" : ", ") + p.info.name;
    throw Error("no phase '" + name + "' in this pipeline run (phases: source, " + names + ", final)");
}

json Trace::toSessionJson(const std::filesystem::path& source, const json& profiles) const {
    return SessionFile::toJson(*this, source, profiles);
}
std::string Trace::dumpSession(const json& doc) { return SessionFile::dumpJson(doc); }
void Trace::save(const std::filesystem::path& path, const std::filesystem::path& source, const json& profiles) const {
    SessionFile::save(*this, path, source, profiles);
}
Trace Trace::load(const std::filesystem::path& path) { return SessionFile::load(path); }
Trace Trace::fromSessionJson(const json& doc, const std::string& label, const std::filesystem::path& baseDir) {
    return SessionFile::fromJson(doc, label, baseDir);
}

} // namespace passlens
