#include "passlens/io/SessionFile.h"

#include "passlens/io/AtomicFile.h"
#include "passlens/io/Encoding.h"
#include "passlens/io/Failure.h"
#include "passlens/io/GraphJson.h"
#include "passlens/io/JsonFile.h"
#include "passlens/ir/Error.h"
#include "passlens/trace/Trace.h"

#include <algorithm>
#include <map>

namespace passlens {

namespace {
using json = nlohmann::json;

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
    if (const std::string why = d->bytesProblem(bytes); !why.empty()) throw Error(where + ": data " + why);
    d->bytes = std::make_shared<const std::string>(std::move(bytes));
    return d;
}

// The array member `key` of `o`, or an empty array when it is missing or not an array.
const json& arr(const json& o, const char* key) {
    static const json kEmpty = json::array();
    auto it = o.find(key);
    return it == o.end() || !it->is_array() ? kEmpty : *it;
}
} // namespace

GraphJsonWriteOptions SessionFile::graphWriteOptions() {
    GraphJsonWriteOptions o;
    o.withIds = true;
    o.base64 = true;
    o.inlineLimit = 64;
    return o;
}

json SessionFile::metaJson(const Trace& trace, const std::filesystem::path& source, const json& profiles,
                           const json& view, unsigned version) {
    json doc = json::object();
    doc["format"] = "passlens.session";
    doc["version"] = version;
    json src = {{"path", source.string()}};
    std::error_code ec;
    if (!source.empty() && std::filesystem::is_regular_file(source, ec)) src["sha256"] = sha256File(source);
    doc["source"] = src;
    json ph = json::array();
    for (const auto& p : trace.m_phases)
        ph.push_back({{"name", p.info.name}, {"position", p.info.position}, {"kind", p.info.kind}});
    doc["pipeline"] = {{"name", trace.m_pipeline}, {"phases", ph}};
    json phases = json::array();
    for (const auto& p : trace.m_phases) {
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
    for (const auto& l : trace.m_lifting) // nodes left on the host, with their reasons
        if (!l.lifted) lifting.push_back({{"node", l.node}, {"op", l.op}, {"lifted", l.lifted}, {"reason", l.reason}});
    doc["lifting"] = lifting;
    doc["profiles"] = profiles.is_array() && !profiles.empty() ? profiles : trace.m_profiles;
    if (view.is_object()) doc["view"] = view;
    return doc;
}

json SessionFile::toJson(const Trace& trace, const std::filesystem::path& source, const json& profiles) {
    json doc = metaJson(trace, source, profiles, nullptr, 1);
    doc["graph"] = writeGraphJson(*trace.sourceGraph(), graphWriteOptions());
    json evs = json::array();
    for (const auto& e : trace.m_events) {
        MemoryReserve::throwIfSpent(); // out of memory surfaces here, not in a destructor
        json j = {
            {"seq", e.seq},       {"phase", e.phase},     {"rewriter", e.rewriter}, {"status", statusName(e.status)},
            {"node", e.node},     {"removed", e.removed}, {"added", e.added},       {"reason", e.reason},
            {"time_us", e.timeUs}};
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
                const json& attrs = d.opPtr->attrs();
                json nd = json::array({d.id, d.opPtr->kind(), attrs.empty() ? json(nullptr) : attrs, d.inputs, outs});
                if (!d.name.empty()) nd.push_back(d.name);
                if (!d.opPtr->subgraphs().empty()) {
                    json subs = json::object();
                    for (const Subgraph& s : d.opPtr->subgraphs())
                        subs[s.attribute] = writeGraphJson(*s.graph, graphWriteOptions());
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
    return doc;
}

std::string SessionFile::dumpJson(const json& doc) {
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

Trace SessionFile::fromJson(const json& doc, const std::string& label, const std::filesystem::path& baseDir) {
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
    readMeta(t, doc, label);
    // The place being read, for a message about a value of the wrong type or shape.
    std::string at = "events";
    std::size_t nodeRecords = t.m_sourceNodes.size();
    try {
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
            const auto status = parseStatus(j.value("status", "applied"));
            if (!status) throw fail(w + ".status", "must be applied, rejected or declined");
            e.status = *status;
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
                const std::string kind = nd[1].get<std::string>();
                const json attrs = nd[2].is_null() ? json::object() : nd[2];
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
                d.opPtr = &Op::get(kind, attrs, std::move(subs));
                e.nodes.push_back(std::move(d));
            }
            at = w + ".constants";
            for (const auto& c : arr(j, "constants")) {
                const Type ty = Type::parse(c.at("type").get<std::string>());
                e.constants.push_back(
                    ConstantDef{c.at("id").get<VarId>(), c.value("name", ""), ty.location(),
                                constantFromJson(c.at("value"), ty, label + ": " + w + ".constants")});
            }
            nodeRecords += e.nodes.size();
            t.allowDenseIds(nodeRecords);
            for (NodeId id : e.added) t.m_created.set(id, e.seq);
            for (NodeId id : e.removed) t.m_removed.set(id, e.seq);
            t.m_events.push_back(std::move(e));
        }
    } catch (const json::exception& e) {
        throw fail(at, jsonErrorReason(e));
    } catch (const Error& e) { // a type string, an op or base64 data of an event
        const std::string what = e.what();
        if (what.starts_with(label + ": ")) throw;
        throw fail(at, what);
    }
    return t;
}

void SessionFile::readMeta(Trace& t, const json& doc, const std::string& label) {
    std::string at = "source";
    try {
        if (doc.contains("source") && doc["source"].is_object()) t.m_sourcePath = doc["source"].value("path", "");
        at = "pipeline";
        if (doc.contains("pipeline") && doc["pipeline"].is_object()) t.m_pipeline = doc["pipeline"].value("name", "");
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
        at = "view";
        if (doc.contains("view") && doc["view"].is_object()) t.m_view = doc["view"];
    } catch (const json::exception& e) {
        throw Error(label + ": " + at + ": " + jsonErrorReason(e));
    }
}

void SessionFile::save(const Trace& trace, const std::filesystem::path& path, const std::filesystem::path& source,
                       const json& profiles, const json& view, Format format) {
    if (format == Format::Compact) {
        writeFileAtomic(path, toCompact(trace, source, profiles, view));
        return;
    }
    json doc = toJson(trace, source, profiles);
    if (view.is_object()) doc["view"] = view;
    writeFileAtomic(path, dumpJson(doc));
}

Trace SessionFile::load(const std::filesystem::path& path) {
    return read(readFile(path), path.string(),
                path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

Trace SessionFile::read(std::string_view bytes, const std::string& label, const std::filesystem::path& baseDir) {
    if (isCompact(bytes)) return fromCompact(bytes, label, baseDir);
    return fromJson(parseJson(std::string(bytes), label), label, baseDir);
}

} // namespace passlens
