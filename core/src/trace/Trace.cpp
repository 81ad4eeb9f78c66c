#include "passlens/trace/Trace.h"

#include "passlens/io/AtomicFile.h"
#include "passlens/io/Encoding.h"
#include "passlens/io/Failure.h"
#include "passlens/io/GraphJson.h"
#include "passlens/io/JsonFile.h"
#include "passlens/ir/OpRegistry.h"
#include "passlens/ir/Error.h"
#include "passlens/rewrite/RewriteEngine.h"

#include <algorithm>
#include <map>

namespace passlens {

namespace {
using json = nlohmann::json;

GraphJsonWriteOptions sessionWriteOptions() {
    GraphJsonWriteOptions o;
    o.withIds = true;
    o.base64 = true;
    o.inlineLimit = 64;
    return o;
}

json constantValueJson(const TensorData& t) {
    if (!t.loaded()) return {{"missing", t.missing}};
    return {{"base64", base64Encode(*t.bytes)}};
}

std::shared_ptr<TensorData> constantFromJson(const json& j, const Type& t, const std::string& where) {
    auto d = std::make_shared<TensorData>();
    d->dtype = t.dtype();
    d->shape = t.dims();
    if (j.contains("missing")) {
        d->missing = j["missing"].get<std::string>();
        return d;
    }
    if (!j.contains("base64") || !j["base64"].is_string())
        throw Error(where + ": expected {\"base64\": ...} or {\"missing\": ...}");
    std::string bytes = base64Decode(j["base64"].get<std::string>());
    if (bytes.size() != d->byteSize())
        throw Error(where + ": data has " + std::to_string(bytes.size()) + " bytes, the type needs " +
                    std::to_string(d->byteSize()));
    d->bytes = std::make_shared<const std::string>(std::move(bytes));
    return d;
}
} // namespace

namespace {
// Orders an event's node definitions so that each comes after the definitions of its inputs
// (stable: an ordered list is unchanged). The graph delivers a replacement's imports at its
// commit, so a node imported early whose input a later pair of the same replacement changed
// reads its final inputs, which a node imported later may define.
void definitionsFirst(std::vector<NodeDef>& nodes) {
    if (nodes.size() < 2) return;
    std::map<VarId, std::size_t> producer;
    for (std::size_t i = 0; i < nodes.size(); ++i)
        for (const auto& o : nodes[i].outputs) producer[o.id] = i;
    bool ordered = true;
    for (std::size_t i = 0; i < nodes.size() && ordered; ++i)
        for (VarId v : nodes[i].inputs)
            if (auto it = producer.find(v); it != producer.end() && it->second > i) ordered = false;
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
                auto it = producer.find(nodes[i].inputs[next++]);
                if (it != producer.end() && state[it->second] == 0) {
                    state[it->second] = 1;
                    stack.push_back({it->second, 0});
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
    Apply* a = g.makeApply(d.opPtr ? *d.opPtr : Op::get(d.op, d.attrs), ins, types, d.name);
    a->tag = d.tag;
    for (std::size_t k = 0; k < d.outputs.size(); ++k) a->output(static_cast<int>(k))->setName(d.outputs[k].name);
}
} // namespace

void Trace::pipelineBegin(std::string_view name, const FunctionGraph& g) {
    m_pipeline = std::string(name);
    m_events.clear();
    m_phases.clear();
    m_created.clear();
    m_removed.clear();
    capture(g);
    m_known.clear();
    for (const auto& i : m_sourceInputs) m_known.insert(i.id);
    for (const auto& c : m_sourceConstants) m_known.insert(c.id);
    for (const auto& n : m_sourceNodes)
        for (const auto& o : n.outputs) m_known.insert(o.id);
    m_pending = RewriteEvent{};
}

void Trace::capture(const FunctionGraph& g) {
    m_sourceName = g.name;
    m_sourceInputs.clear();
    m_sourceConstants.clear();
    m_sourceNodes.clear();
    m_sourceOutputs.clear();
    for (const Variable* v : g.inputs()) m_sourceInputs.push_back({v->id(), v->type(), v->name(), v->tag});
    for (const Variable* c : g.constants())
        m_sourceConstants.push_back(ConstantDef{c->id(), c->name(), c->type().location(), c->constant()});
    m_sourceNodes.reserve(g.nodeCount());
    for (const Apply* n : g.toposort()) {
        NodeDef d;
        d.id = n->id();
        d.opPtr = &n->op();
        d.op = n->op().kind();
        d.name = n->name();
        d.tag = n->tag;
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
    if (!v.isConstant() || m_known.count(v.id())) return;
    for (const auto& c : e.constants)
        if (c.id == v.id()) return;
    e.constants.push_back(ConstantDef{v.id(), v.name(), v.type().location(), v.constant()});
}

void Trace::onImport(const FunctionGraph&, const Apply& n, std::string_view) {
    NodeDef d;
    d.id = n.id();
    d.opPtr = &n.op();
    d.op = n.op().kind();
    d.name = n.name();
    for (const Variable* in : n.inputs()) {
        d.inputs.push_back(in->id());
        defineConstant(*in, m_pending);
    }
    for (const Variable* o : n.outputs()) d.outputs.push_back({o->id(), o->type(), o->name()});
    m_pending.added.push_back(n.id());
    m_pending.nodes.push_back(std::move(d));
}

void Trace::onPrune(const FunctionGraph&, const Apply& n, std::string_view) { m_pending.removed.push_back(n.id()); }

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
    e.status = "applied";
    e.node = node ? node->id() : -1;
    e.timeUs = timeUs;
    definitionsFirst(e.nodes);
    for (const auto& c : e.constants) m_known.insert(c.id);
    for (const auto& d : e.nodes)
        for (const auto& o : d.outputs) m_known.insert(o.id);
    for (NodeId id : e.added) m_created[id] = e.seq;
    for (NodeId id : e.removed) m_removed[id] = e.seq;
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
    e.status = "rejected";
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
    e.status = "declined";
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

int Trace::createdBy(NodeId id) const {
    auto it = m_created.find(id);
    return it == m_created.end() ? 0 : it->second;
}
int Trace::removedBy(NodeId id) const {
    auto it = m_removed.find(id);
    return it == m_removed.end() ? 0 : it->second;
}
int Trace::appliedCount() const {
    return static_cast<int>(
        std::count_if(m_events.begin(), m_events.end(), [](const RewriteEvent& e) { return e.status == "applied"; }));
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
    auto g = sourceGraph();
    for (const RewriteEvent& e : m_events) {
        if (e.seq > seq) break;
        if (e.status != "applied") continue;
        const std::string where = m_label + ": events[" + std::to_string(e.seq - 1) + "] (" + e.rewriter + ")";
        try {
            for (const ConstantDef& c : e.constants) {
                if (g->variable(c.id)) continue;
                g->hintNextIds(-1, {c.id});
                g->addConstant(c.data, c.name, c.location);
            }
            for (const NodeDef& d : e.nodes) {
                if (g->node(d.id)) continue; // a pruned node imported again
                recreateNode(*g, d);
            }
            std::vector<std::pair<Variable*, Variable*>> pairs;
            for (const auto& [a, b] : e.replaced) {
                Variable* va = g->variable(a);
                Variable* vb = g->variable(b);
                if (!va || !vb) throw Error("replaces unknown variable " + std::to_string(va ? b : a));
                pairs.push_back({va, vb});
            }
            g->replaceAllValidate(pairs, e.rewriter);
        } catch (const Error& err) {
            throw Error(where + ": cannot replay: " + err.what());
        }
    }
    return g;
}

std::unique_ptr<FunctionGraph> Trace::graphAfterPhase(const std::string& name) const {
    if (name == "source") return graphAfter(0);
    if (name == "final") return graphAfter(static_cast<int>(m_events.size()));
    for (std::size_t i = 0; i < m_phases.size(); ++i)
        if (m_phases[i].info.name == name) return graphAfter(lastEventOfPhase(i));
    std::string names;
    for (const auto& p : m_phases) names += (names.empty() ? "" : ", ") + p.info.name;
    throw Error("no phase '" + name + "' in this session (phases: source, " + names + ", final)");
}

json Trace::toSessionJson(const std::filesystem::path& source, const json& profiles) const {
    json doc = json::object();
    doc["format"] = "passlens.session";
    doc["version"] = 1;
    json src = {{"path", source.string()}};
    std::error_code ec;
    if (!source.empty() && std::filesystem::is_regular_file(source, ec)) src["sha256"] = sha256File(source);
    doc["source"] = src;
    json ph = json::array();
    for (const auto& p : m_phases)
        ph.push_back({{"name", p.info.name}, {"position", p.info.position}, {"kind", p.info.kind}});
    doc["pipeline"] = {{"name", m_pipeline}, {"phases", ph}};
    doc["graph"] = writeGraphJson(*sourceGraph(), sessionWriteOptions());
    json evs = json::array();
    for (const auto& e : m_events) {
        MemoryReserve::throwIfSpent(); // out of memory surfaces here, not in a destructor
        json j = {{"seq", e.seq},       {"phase", e.phase},   {"rewriter", e.rewriter},
                  {"status", e.status}, {"node", e.node},     {"removed", e.removed},
                  {"added", e.added},   {"reason", e.reason}, {"time_us", e.timeUs}};
        json rep = json::array();
        for (const auto& [a, b] : e.replaced) rep.push_back({a, b});
        j["replaced"] = rep;
        if (!e.nodes.empty()) {
            json nodes = json::array();
            for (const auto& d : e.nodes) {
                json outs = json::array();
                // compact: [id, op, attrs|null, [inputs], [[out id, type, name?]...], name?]
                for (const auto& o : d.outputs) {
                    json oj = json::array({o.id, o.type.str()});
                    if (!o.name.empty()) oj.push_back(o.name);
                    outs.push_back(std::move(oj));
                }
                const json& attrs = d.opPtr ? d.opPtr->attrs() : d.attrs;
                json nd = json::array({d.id, d.op, attrs.empty() ? json(nullptr) : attrs, d.inputs, outs});
                if (!d.name.empty()) nd.push_back(d.name);
                if (d.opPtr && !d.opPtr->subgraphs().empty()) {
                    json subs = json::object();
                    for (const Subgraph& s : d.opPtr->subgraphs())
                        subs[s.attribute] = writeGraphJson(*s.graph, sessionWriteOptions());
                    if (d.name.empty()) nd.push_back("");
                    nd.push_back(subs);
                }
                nodes.push_back(nd);
            }
            j["nodes"] = nodes;
        }
        if (!e.constants.empty()) {
            json cs = json::array();
            for (const auto& c : e.constants)
                cs.push_back({{"id", c.id},
                              {"name", c.name},
                              {"type", Type(c.data->dtype, c.data->shape, c.location).str()},
                              {"value", constantValueJson(*c.data)}});
            j["constants"] = cs;
        }
        evs.push_back(std::move(j));
    }
    doc["events"] = evs;
    json phases = json::array();
    for (const auto& p : m_phases) {
        json rws = json::array();
        for (const auto& [n, st] : p.rewriters)
            rws.push_back({{"name", n},
                           {"tried", st.tried},
                           {"applied", st.applied},
                           {"rejected", st.rejected},
                           {"nodes_created", st.nodesCreated},
                           {"time_us", st.timeUs}});
        phases.push_back({{"name", p.info.name},
                          {"position", p.info.position},
                          {"kind", p.info.kind},
                          {"changed", p.changed},
                          {"time_us", p.timeUs},
                          {"nodes_before", p.nodesBefore},
                          {"nodes_after", p.nodesAfter},
                          {"first_event", p.firstEvent},
                          {"last_event", p.lastEvent},
                          {"rewriters", rws}});
    }
    doc["phases"] = phases;
    json lifting = json::array();
    for (const auto& l : m_lifting) // nodes left on the host, with their reasons
        if (!l.lifted) lifting.push_back({{"node", l.node}, {"op", l.op}, {"lifted", l.lifted}, {"reason", l.reason}});
    doc["lifting"] = lifting;
    doc["profiles"] = profiles.is_array() && !profiles.empty() ? profiles : m_profiles;
    return doc;
}

std::string Trace::dumpSession(const json& doc) {
    // Member by member, without a reordered copy of the document (half the peak memory).
    static constexpr const char* kFirst[] = {"format", "version", "source", "pipeline"};
    std::string out = "{";
    auto put = [&](const std::string& key, const json& value) {
        MemoryReserve::throwIfSpent();
        if (out.size() > 1) out += ',';
        out += json(key).dump();
        out += ':';
        out += value.dump();
    };
    for (const char* first : kFirst)
        if (doc.contains(first)) put(first, doc[first]);
    for (auto it = doc.begin(); it != doc.end(); ++it)
        if (std::find_if(std::begin(kFirst), std::end(kFirst), [&](const char* f) { return it.key() == f; }) ==
            std::end(kFirst))
            put(it.key(), it.value());
    out += "}\n";
    MemoryReserve::throwIfSpent();
    return out;
}

void Trace::save(const std::filesystem::path& path, const std::filesystem::path& source, const json& profiles) const {
    writeFileAtomic(path, dumpSession(toSessionJson(source, profiles)));
}

Trace Trace::load(const std::filesystem::path& path) {
    const json doc = readJsonFile(path);
    return fromSessionJson(doc, path.string(),
                           path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

Trace Trace::fromSessionJson(const json& doc, const std::string& label, const std::filesystem::path& baseDir) {
    auto fail = [&](const std::string& where, const std::string& why) {
        return Error(label + ": " + where + ": " + why);
    };
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != "passlens.session")
        throw fail("format", "not a session file: expected \"format\": \"passlens.session\"");
    if (!doc.contains("version") || doc["version"] != 1)
        throw fail("version", "unsupported session version (this build reads version 1)");
    if (!doc.contains("graph")) throw fail("graph", "missing");
    Trace t;
    t.m_label = label;
    t.capture(*readGraphJson(doc["graph"], label + ": graph", baseDir).graph); // names the place of any problem
    // The place being read, for a message about a value of the wrong type or shape.
    std::string at = "source";
    try {
        if (doc.contains("source") && doc["source"].is_object()) t.m_sourcePath = doc["source"].value("path", "");
        at = "pipeline";
        if (doc.contains("pipeline") && doc["pipeline"].is_object()) t.m_pipeline = doc["pipeline"].value("name", "");
        static const json kEmpty = json::array();
        auto arr = [](const json& o, const char* key) -> const json& {
            auto it = o.find(key);
            return it == o.end() || !it->is_array() ? kEmpty : *it;
        };
        const json& evs = arr(doc, "events");
        std::map<std::string, Type> typeCache;
        for (std::size_t i = 0; i < evs.size(); ++i) {
            const json& j = evs[i];
            const std::string w = "events[" + std::to_string(i) + "]";
            at = w;
            RewriteEvent e;
            e.seq = j.at("seq").get<int>();
            if (e.seq != static_cast<int>(i) + 1) throw fail(w + ".seq", "expected " + std::to_string(i + 1));
            e.phase = j.value("phase", "");
            e.rewriter = j.value("rewriter", "");
            e.status = j.value("status", "applied");
            if (e.status != "applied" && e.status != "rejected" && e.status != "declined")
                throw fail(w + ".status", "must be applied, rejected or declined");
            e.node = j.value("node", NodeId(-1));
            for (const auto& x : arr(j, "removed")) e.removed.push_back(x.get<NodeId>());
            for (const auto& x : arr(j, "added")) e.added.push_back(x.get<NodeId>());
            e.reason = j.value("reason", "");
            e.timeUs = j.value("time_us", 0.0);
            for (const auto& p : arr(j, "replaced")) e.replaced.push_back({p.at(0).get<VarId>(), p.at(1).get<VarId>()});
            const json& nds = arr(j, "nodes");
            for (std::size_t k = 0; k < nds.size(); ++k) {
                const json& nd = nds[k];
                at = w + ".nodes[" + std::to_string(k) + "]";
                // [id, op, attrs|null, [inputs], [[out id, type, name?]...], name?, subgraphs?]
                if (!nd.is_array() || nd.size() < 5) throw fail(at, "expected [id, op, attrs, inputs, outputs, name?]");
                NodeDef d;
                d.id = nd[0].get<NodeId>();
                d.op = nd[1].get<std::string>();
                d.attrs = nd[2].is_null() ? json::object() : nd[2];
                d.inputs = nd[3].get<std::vector<VarId>>();
                if (nd.size() > 5) d.name = nd[5].get<std::string>();
                for (const auto& o : nd[4]) {
                    const std::string& ts = o.at(1).get_ref<const std::string&>();
                    auto tc = typeCache.find(ts);
                    if (tc == typeCache.end()) tc = typeCache.emplace(ts, Type::parse(ts)).first;
                    d.outputs.push_back(
                        {o.at(0).get<VarId>(), tc->second, o.size() > 2 ? o[2].get<std::string>() : std::string()});
                }
                std::vector<Subgraph> subs;
                if (nd.size() > 6) {
                    if (!nd[6].is_object()) throw fail(at, "subgraphs: expected an object");
                    for (auto it = nd[6].begin(); it != nd[6].end(); ++it)
                        subs.push_back(
                            {it.key(),
                             std::shared_ptr<const FunctionGraph>(
                                 readGraphJson(it.value(), label + ": " + at + ".subgraphs." + it.key(), baseDir)
                                     .graph)});
                }
                d.opPtr = &Op::get(d.op, d.attrs, std::move(subs));
                e.nodes.push_back(std::move(d));
            }
            at = w + ".constants";
            for (const auto& c : arr(j, "constants")) {
                const Type ty = Type::parse(c.at("type").get<std::string>());
                e.constants.push_back(
                    ConstantDef{c.at("id").get<VarId>(), c.value("name", ""), ty.location(),
                                constantFromJson(c.at("value"), ty, label + ": " + w + ".constants")});
            }
            for (NodeId id : e.added) t.m_created[id] = e.seq;
            for (NodeId id : e.removed) t.m_removed[id] = e.seq;
            t.m_events.push_back(std::move(e));
        }
        const json& phs = arr(doc, "phases");
        for (std::size_t i = 0; i < phs.size(); ++i) {
            const json& p = phs[i];
            at = "phases[" + std::to_string(i) + "]";
            PhaseRecord r;
            r.info = PhaseInfo{p.value("name", ""), p.value("position", 0.0), p.value("kind", "")};
            r.changed = p.value("changed", false);
            r.timeUs = p.value("time_us", 0.0);
            r.nodesBefore = p.value("nodes_before", std::size_t(0));
            r.nodesAfter = p.value("nodes_after", std::size_t(0));
            r.firstEvent = p.value("first_event", 0);
            r.lastEvent = p.value("last_event", 0);
            for (const auto& rw : arr(p, "rewriters")) {
                RewriterStats st;
                st.tried = rw.value("tried", 0);
                st.applied = rw.value("applied", 0);
                st.rejected = rw.value("rejected", 0);
                st.nodesCreated = rw.value("nodes_created", 0);
                st.timeUs = rw.value("time_us", 0.0);
                r.rewriters.push_back({rw.value("name", ""), st});
            }
            t.m_phases.push_back(std::move(r));
        }
        at = "lifting";
        for (const auto& l : arr(doc, "lifting"))
            t.m_lifting.push_back(LiftingEntry{l.value("node", NodeId(-1)), l.value("op", ""), l.value("lifted", false),
                                               l.value("reason", "")});
        at = "profiles";
        t.m_profiles = doc.value("profiles", json::array());
    } catch (const json::exception& e) {
        throw fail(at, jsonErrorReason(e));
    } catch (const Error& e) { // a type string, an op or base64 data of an event
        const std::string what = e.what();
        if (what.starts_with(label + ": ")) throw;
        throw fail(at, what);
    }
    return t;
}

} // namespace passlens
