// ExecutionProfile: the typed profile of one execution, its JSON form (FORMAT.md §2) and
// Theano-style text tables.
#include "passlens/trace/ExecutionProfile.h"

#include "passlens/io/JsonFile.h"
#include "passlens/ir/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace passlens {

const char* stepKindName(StepKind k) {
    switch (k) {
    case StepKind::Kernel: return "kernel";
    case StepKind::Emulated: return "emulated";
    case StepKind::Transfer: return "transfer";
    case StepKind::Missing: return "n/a";
    }
    return "?";
}

const char* transferDirectionName(TransferDirection d) {
    switch (d) {
    case TransferDirection::HtoD: return "HtoD";
    case TransferDirection::DtoH: return "DtoH";
    case TransferDirection::DtoD: return "DtoD";
    }
    return "?";
}

const char* planPassName(PlanDecision::Pass p) {
    switch (p) {
    case PlanDecision::Pass::EpilogueFusion: return "epilogue_fusion";
    case PlanDecision::Pass::JoinInPlace: return "join_in_place";
    }
    return "?";
}

const ProfileNode* ExecutionProfile::find(NodeId id) const {
    for (const ProfileNode& n : nodes)
        if (n.node == id) return &n;
    return nullptr;
}

double ExecutionProfile::totalUs() const {
    std::map<NodeId, double> timed, transferred;
    for (const ProfileNode& n : nodes)
        if (n.timeUs) timed[n.node] = *n.timeUs;
    double t = 0;
    for (const ProfileTransfer& x : transfers) {
        if (x.implicit)
            t += x.timeUs; // not in its node's time
        else
            transferred[x.node] = x.timeUs;
    }
    for (const auto& [id, us] : timed) t += us;
    for (const auto& [id, us] : transferred)
        if (!timed.count(id)) t += us;
    return t;
}

namespace {
std::string fmt(const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string pad(std::string s, std::size_t w, bool right = true) {
    if (s.size() >= w) return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

const char* typeLetter(StepKind k) {
    switch (k) {
    case StepKind::Kernel: return "C";
    case StepKind::Emulated: return "E";
    case StepKind::Transfer: return "T";
    case StepKind::Missing: return "n/a";
    }
    return "?";
}
} // namespace

namespace {
// "nodes #3, #7" / "node #3"
std::string writersText(const ProfileNode& n) {
    std::string s = n.inPlaceWriters.size() == 1 ? "node " : "nodes ";
    for (std::size_t k = 0; k < n.inPlaceWriters.size(); ++k)
        s += (k ? ", #" : "#") + std::to_string(n.inPlaceWriters[k]);
    return s;
}
} // namespace

nlohmann::json ExecutionProfile::toJson() const {
    nlohmann::json j = {{"phase", phase},
                        {"device", device},
                        {"repeats", repeats},
                        {"warmup", warmup},
                        {"wall_us", wallUs},
                        {"wall_std_us", wallStdUs},
                        {"profiled_wall_us", profiledWallUs},
                        {"overhead_us", overheadUs()},
                        {"node_sum_us", nodeSumUs}};
    nlohmann::json ns = nlohmann::json::array(), notRun = nlohmann::json::array();
    for (const ProfileNode& n : nodes) {
        if (n.timeUs) {
            ns.push_back({{"node", n.node}, {"op", n.op}, {"kind", stepKindName(n.stepKind)}, {"time_us", *n.timeUs}});
        } else {
            nlohmann::json e = {{"node", n.node},
                                {"op", n.op},
                                {"kind", "n/a"},
                                {"reason", n.fusedInto ? "fused into node #" + std::to_string(*n.fusedInto)
                                           : n.inPlace ? "in place: inputs written into its output by " + writersText(n)
                                           : n.stepKind == StepKind::Missing ? std::string("no kernel")
                                                                             : std::string("not run")}};
            if (n.fusedInto) e["fused_into"] = *n.fusedInto;
            if (n.inPlace) e["written_by"] = n.inPlaceWriters;
            notRun.push_back(std::move(e));
        }
    }
    j["nodes"] = ns;
    if (!notRun.empty()) j["not_run"] = notRun;
    nlohmann::json ts = nlohmann::json::array();
    for (const ProfileTransfer& t : transfers) {
        nlohmann::json e = {{"node", t.node},
                            {"direction", transferDirectionName(t.direction)},
                            {"time_us", t.timeUs},
                            {"gb_per_s", t.gbPerS()}};
        if (t.bytes) e["bytes"] = *t.bytes;
        if (t.implicit) e["implicit"] = true;
        ts.push_back(std::move(e));
    }
    j["transfers"] = ts;
    nlohmann::json pl = nlohmann::json::array();
    for (const PlanDecision& d : plan)
        pl.push_back({{"node", d.node},
                      {"pass", planPassName(d.pass)},
                      {"applied", d.applied},
                      {"with", d.with},
                      {"decision", d.decision},
                      {"reason", d.reason}});
    j["plan"] = pl;
    if (!error.empty()) j["error"] = error;
    return j;
}

namespace {
// Readers of one key of a profile object; `where` is the object's place ("run.json.nodes[2]").
const nlohmann::json* field(const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    return it == o.end() || it->is_null() ? nullptr : &*it;
}
[[noreturn]] void bad(const std::string& where, const char* key, const std::string& why) {
    throw Error(where + "." + key + ": " + why);
}
std::string str(const nlohmann::json& o, const char* key, const std::string& where) {
    const nlohmann::json* v = field(o, key);
    if (!v) return {};
    if (!v->is_string()) bad(where, key, "expected a string");
    return v->get<std::string>();
}
double number(const nlohmann::json& o, const char* key, const std::string& where, bool required = false) {
    const nlohmann::json* v = field(o, key);
    if (!v) {
        if (required) bad(where, key, "missing");
        return 0;
    }
    if (!v->is_number()) bad(where, key, "expected a number");
    const double d = v->get<double>();
    if (!std::isfinite(d)) bad(where, key, "expected a finite number");
    return d;
}
double nonNegative(const nlohmann::json& o, const char* key, const std::string& where, bool required = false) {
    const double d = number(o, key, where, required);
    if (d < 0) bad(where, key, "expected a finite non-negative number");
    return d;
}
// A count stored in an integer of at most `max`: a number past it is refused, not converted
// (a double outside the target type's range is undefined behaviour).
double count(const nlohmann::json& o, const char* key, const std::string& where, double max) {
    const double d = nonNegative(o, key, where);
    if (d > max) bad(where, key, "expected a count of at most " + fmt("%.0f", max));
    return d;
}
NodeId nodeId(const nlohmann::json& v, const std::string& where, const char* key) {
    if (!v.is_number_integer()) bad(where, key, "expected an integer node id");
    return v.get<NodeId>();
}
std::vector<NodeId> nodeIds(const nlohmann::json& o, const char* key, const std::string& where) {
    std::vector<NodeId> ids;
    const nlohmann::json* v = field(o, key);
    if (!v) return ids;
    if (!v->is_array()) bad(where, key, "expected an array of node ids");
    for (const nlohmann::json& e : *v) ids.push_back(nodeId(e, where, key));
    return ids;
}
const nlohmann::json& objects(const nlohmann::json& o, const char* key, const std::string& where) {
    static const nlohmann::json empty = nlohmann::json::array();
    const nlohmann::json* v = field(o, key);
    if (!v) return empty;
    if (!v->is_array()) bad(where, key, "expected an array");
    for (std::size_t i = 0; i < v->size(); ++i)
        if (!(*v)[i].is_object()) throw Error(where + "." + key + "[" + std::to_string(i) + "]: expected an object");
    return *v;
}
// The op kind of a display string: "GpuElemwise{add}<gpuarray>" -> "GpuElemwise".
std::string kindOfOp(const std::string& op) { return op.substr(0, op.find_first_of("{<(")); }
} // namespace

ExecutionProfile ExecutionProfile::fromJson(const nlohmann::json& j, const std::string& label) {
    if (!j.is_object()) throw Error(label + ": expected a profile object");
    if (!field(j, "nodes") && !field(j, "transfers"))
        throw Error(label + ": a profile needs \"nodes\" or \"transfers\"");
    ExecutionProfile p;
    p.phase = str(j, "phase", label);
    if (p.phase.empty()) p.phase = "final";
    p.device = str(j, "device", label);
    p.repeats = static_cast<int>(count(j, "repeats", label, std::numeric_limits<int>::max()));
    p.warmup = static_cast<int>(count(j, "warmup", label, std::numeric_limits<int>::max()));
    p.wallUs = nonNegative(j, "wall_us", label);
    p.wallStdUs = nonNegative(j, "wall_std_us", label);
    p.profiledWallUs = nonNegative(j, "profiled_wall_us", label);
    p.nodeSumUs = nonNegative(j, "node_sum_us", label);
    p.error = str(j, "error", label);
    auto stepKindOf = [](const std::string& k) {
        return k == "emulated"   ? StepKind::Emulated
               : k == "transfer" ? StepKind::Transfer
               : k == "n/a"      ? StepKind::Missing
                                 : StepKind::Kernel;
    };
    // the keys every entry of "nodes" and "not_run" has
    auto readNode = [](const nlohmann::json& o, const std::string& w) {
        ProfileNode n;
        if (!field(o, "node")) bad(w, "node", "missing");
        n.node = nodeId(o["node"], w, "node");
        n.op = str(o, "op", w);
        n.kind = kindOfOp(n.op);
        return n;
    };
    const nlohmann::json& ns = objects(j, "nodes", label);
    for (std::size_t i = 0; i < ns.size(); ++i) {
        const std::string w = label + ".nodes[" + std::to_string(i) + "]";
        ProfileNode n = readNode(ns[i], w);
        n.stepKind = stepKindOf(str(ns[i], "kind", w));
        n.timeUs = nonNegative(ns[i], "time_us", w, true);
        p.nodes.push_back(std::move(n));
    }
    const nlohmann::json& nr = objects(j, "not_run", label);
    for (std::size_t i = 0; i < nr.size(); ++i) {
        const std::string w = label + ".not_run[" + std::to_string(i) + "]";
        ProfileNode n = readNode(nr[i], w);
        const std::string reason = str(nr[i], "reason", w);
        n.stepKind = reason == "no kernel" ? StepKind::Missing : StepKind::Kernel;
        if (const nlohmann::json* f = field(nr[i], "fused_into")) n.fusedInto = nodeId(*f, w, "fused_into");
        n.inPlaceWriters = nodeIds(nr[i], "written_by", w);
        n.inPlace = field(nr[i], "written_by") != nullptr;
        p.nodes.push_back(std::move(n));
    }
    const nlohmann::json& ts = objects(j, "transfers", label);
    for (std::size_t i = 0; i < ts.size(); ++i) {
        const std::string w = label + ".transfers[" + std::to_string(i) + "]";
        ProfileTransfer t;
        if (!field(ts[i], "node")) bad(w, "node", "missing");
        t.node = nodeId(ts[i]["node"], w, "node");
        // at most 2^53 (8 PiB): whole numbers a double holds exactly, within int64 and size_t
        if (field(ts[i], "bytes")) t.bytes = static_cast<std::size_t>(count(ts[i], "bytes", w, 9007199254740992.0));
        const std::string dir = str(ts[i], "direction", w);
        if (dir == "DtoH")
            t.direction = TransferDirection::DtoH;
        else if (dir == "DtoD")
            t.direction = TransferDirection::DtoD;
        else if (!dir.empty() && dir != "HtoD")
            bad(w, "direction", "expected \"HtoD\", \"DtoH\" or \"DtoD\", got \"" + dir + "\"");
        t.timeUs = nonNegative(ts[i], "time_us", w, true);
        if (const nlohmann::json* im = field(ts[i], "implicit")) {
            if (!im->is_boolean()) bad(w, "implicit", "expected true or false");
            t.implicit = im->get<bool>();
        }
        p.transfers.push_back(t);
    }
    const nlohmann::json& pl = objects(j, "plan", label);
    for (std::size_t i = 0; i < pl.size(); ++i) {
        const std::string w = label + ".plan[" + std::to_string(i) + "]";
        PlanDecision d;
        if (!field(pl[i], "node")) bad(w, "node", "missing");
        d.node = nodeId(pl[i]["node"], w, "node");
        const std::string pass = str(pl[i], "pass", w);
        if (pass == planPassName(PlanDecision::Pass::EpilogueFusion))
            d.pass = PlanDecision::Pass::EpilogueFusion;
        else if (pass == planPassName(PlanDecision::Pass::JoinInPlace))
            d.pass = PlanDecision::Pass::JoinInPlace;
        else
            bad(w, "pass", "expected \"epilogue_fusion\" or \"join_in_place\", got \"" + pass + "\"");
        if (const nlohmann::json* a = field(pl[i], "applied")) {
            if (!a->is_boolean()) bad(w, "applied", "expected true or false");
            d.applied = a->get<bool>();
        }
        d.with = nodeIds(pl[i], "with", w);
        d.decision = str(pl[i], "decision", w);
        d.reason = str(pl[i], "reason", w);
        p.plan.push_back(std::move(d));
    }
    return p;
}

ExecutionProfile ExecutionProfile::fromDocument(const nlohmann::json& doc, const std::string& label,
                                                const std::string& phase) {
    const nlohmann::json* list = nullptr;
    std::string where = label;
    if (doc.is_object() && doc.contains("profiles")) {
        list = &doc["profiles"];
        where += ": profiles";
        if (!list->is_array()) throw Error(where + ": expected an array");
    } else if (doc.is_array()) {
        list = &doc;
    }
    if (list == nullptr) return fromJson(doc, label);
    if (list->empty()) throw Error(where + ": no profile in this file");
    // a profile's phase: "final" when absent or not a string, as fromJson reads it
    auto phaseOf = [](const nlohmann::json& p) {
        const nlohmann::json* v = p.is_object() ? field(p, "phase") : nullptr;
        return v && v->is_string() && !v->get<std::string>().empty() ? v->get<std::string>() : std::string("final");
    };
    std::size_t pick = 0;
    if (!phase.empty())
        for (std::size_t i = 0; i < list->size(); ++i)
            if (phaseOf((*list)[i]) == phase) {
                pick = i;
                break;
            }
    return fromJson((*list)[pick], where + "[" + std::to_string(pick) + "]");
}

ExecutionProfile ExecutionProfile::load(const std::filesystem::path& path, const std::string& phase) {
    return fromDocument(readJsonFile(path), path.string(), phase);
}

std::string ExecutionProfile::text(std::size_t maxApplyRows) const {
    std::string s;
    s += "Function profiling\n==================\n";
    s += "  Message: phase " + phase + " on " + device + "\n";
    s += "  Time in " + std::to_string(repeats) + " calls (after " + std::to_string(warmup) +
         " warm-up): " + fmt("%.3f", wallUs * 1e-6 * repeats) + "s, " + fmt("%.1f", wallUs) + "us per call\n";
    s += "  Profiled calls: " + fmt("%.1f", profiledWallUs) + "us per call; profiler overhead " +
         fmt("%.1f", overheadUs()) + "us per call (" + fmt("%.1f", wallUs > 0 ? 100.0 * overheadUs() / wallUs : 0.0) +
         "%" +
         (std::abs(overheadUs()) <= wallStdUs ? "; within the runs' own spread of +-" + fmt("%.1f", wallStdUs) + "us"
                                              : std::string()) +
         ")\n";
    s += "  Sum of node times: " + fmt("%.1f", nodeSumUs) + "us per call (" +
         fmt("%.1f", profiledWallUs > 0 ? 100.0 * nodeSumUs / profiledWallUs : 0.0) +
         "% of the profiled call; the rest is the executor's own work)\n";
    if (!error.empty()) s += "  ERROR: " + error + "\n";
    s += "  Types: C = kernel, E = GPU op emulated on CPU, T = transfer, n/a = no kernel / not run\n\n";
    const double total = nodeSumUs > 0 ? nodeSumUs : 1;

    struct Agg {
        double t = 0;
        int apply = 0;
        std::string type;
    };
    auto table = [&](const char* title, const char* col, auto keyOf) {
        std::map<std::string, Agg> m;
        for (const ProfileNode& n : nodes) {
            Agg& a = m[keyOf(n)];
            a.t += n.timeUs.value_or(0);
            a.apply++;
            const std::string l = typeLetter(n.stepKind);
            if (a.type.empty())
                a.type = l;
            else if (a.type.find(l) == std::string::npos)
                a.type += "," + l;
        }
        std::vector<std::pair<std::string, Agg>> v(m.begin(), m.end());
        std::stable_sort(v.begin(), v.end(), [](auto& x, auto& y) { return x.second.t > y.second.t; });
        s += std::string(title) + "\n" + std::string(std::string(title).size(), '-') + "\n";
        s += "<% time> <sum %> <apply time> <time per call> <type> <#call> <#apply> <" + std::string(col) + ">\n";
        double cum = 0;
        for (const auto& [k, a] : v) {
            const double pct = 100.0 * a.t / total;
            cum += pct;
            s += "  " + pad(fmt("%.1f%%", pct), 6) + "  " + pad(fmt("%.1f%%", cum), 6) + "  " +
                 pad(fmt("%.3fs", a.t * 1e-6 * repeats), 9) + "  " +
                 pad(fmt("%.2fus", a.t / std::max(1, a.apply)), 11) + "  " + pad(a.type, 4, false) + " " +
                 pad(std::to_string(repeats * a.apply), 6) + " " + pad(std::to_string(a.apply), 5) + "  " + k + "\n";
        }
        s += "\n";
    };
    table("Class", "Class name", [](const ProfileNode& n) { return n.kind; });
    table("Ops", "Op name", [](const ProfileNode& n) { return n.op; });

    s += "Apply\n------\n<% time> <sum %> <apply time> <time per call> <type> <#call> <id> <Apply name>\n";
    std::vector<const ProfileNode*> order;
    for (const ProfileNode& n : nodes) order.push_back(&n);
    std::stable_sort(order.begin(), order.end(),
                     [](auto* a, auto* b) { return a->timeUs.value_or(-1) > b->timeUs.value_or(-1); });
    double cum = 0;
    std::size_t shown = 0;
    for (const ProfileNode* n : order) {
        if (shown++ >= maxApplyRows) {
            s += "   ... (" + std::to_string(order.size() - maxApplyRows) + " more Apply nodes)\n";
            break;
        }
        std::string pct = "n/a", cs = "", t = "n/a", per = "n/a";
        if (n->timeUs) {
            const double p = 100.0 * *n->timeUs / total;
            cum += p;
            pct = fmt("%.1f%%", p);
            cs = fmt("%.1f%%", cum);
            t = fmt("%.3fs", *n->timeUs * 1e-6 * repeats);
            per = fmt("%.2fus", *n->timeUs);
        }
        s += "  " + pad(pct, 6) + "  " + pad(cs, 6) + "  " + pad(t, 9) + "  " + pad(per, 11) + "  " +
             pad(typeLetter(n->stepKind), 4, false) + " " + pad(std::to_string(repeats), 6) + " " +
             pad(std::to_string(n->node), 5) + "  " + n->op + (n->name.empty() ? "" : " '" + n->name + "'") +
             (n->fusedInto ? " (fused into #" + std::to_string(*n->fusedInto) + ")" : "") +
             (n->inPlace ? " (in place: inputs written by " + writersText(*n) + ")" : "") + "\n";
    }
    if (!transfers.empty()) {
        s += "\nTransfers\n---------\n<direction> <bytes> <time per call> <GB/s> <id>\n";
        for (const ProfileTransfer& t : transfers)
            s += "  " + pad(transferDirectionName(t.direction), 4, false) + "  " +
                 pad(t.bytes ? std::to_string(*t.bytes) : std::string("?"), 10) + "  " +
                 pad(fmt("%.2fus", t.timeUs), 11) + "  " + pad(fmt("%.2f", t.gbPerS()), 7) + "  " +
                 std::to_string(t.node) +
                 (t.implicit
                      ? (t.direction == TransferDirection::DtoH ? " (implicit: its input)" : " (implicit: its output)")
                      : "") +
                 "\n";
    }
    if (!plan.empty()) {
        s += "\nPlan\n----\n";
        for (const PlanDecision& d : plan)
            s += std::string("  ") + (d.applied ? "+ " : "- ") + d.decision +
                 (d.reason.empty() ? "" : ": " + d.reason) + "\n";
    }
    return s;
}

} // namespace passlens
