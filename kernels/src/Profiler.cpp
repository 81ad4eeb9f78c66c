// Profiler: warm-up, unprofiled and profiled repeats, per-node and per-transfer means, overhead,
// FORMAT.md §2 JSON and Theano-style text tables.
#include "passlens/kernels/Profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace passlens {

namespace {
using Clock = std::chrono::steady_clock;

TransferDirection directionOf(const Apply& n) {
    const std::string& k = n.op().kind();
    if (k == "GpuFromHost") return TransferDirection::HtoD;
    if (k == "HostFromGpu") return TransferDirection::DtoH;
    return TransferDirection::DtoD;
}

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

ProfileReport profileExecutor(Executor& exec, const std::vector<Tensor>& inputs, const ProfileOptions& options,
                              const std::string& phase) {
    ProfileReport rep;
    rep.phase = phase;
    rep.device = exec.deviceDescription();
    rep.warmup = std::max(0, options.warmup);
    rep.repeats = std::max(1, options.repeats);
    const auto& steps = exec.steps();
    const std::size_t ns = steps.size();
    std::vector<double> sum(ns, 0.0);
    std::vector<std::size_t> bytes(ns, 0);
    std::vector<bool> ran(ns, false), fused(ns, false);
    auto fill = [&]() {
        double total = 0;
        for (std::size_t i = 0; i < ns; ++i) {
            const ExecStep& s = steps[i];
            ProfileNode n;
            n.node = s.node->id();
            n.kind = s.node->op().kind();
            n.op = s.node->op().str();
            n.name = s.node->name();
            n.stepKind = s.kind;
            if (ran[i] && fused[i] && s.fusedInto >= 0) {
                n.fusedInto = steps[static_cast<std::size_t>(s.fusedInto)].node->id();
            } else if (ran[i] && fused[i] && s.joinInPlace) {
                n.inPlace = true;
                for (const ExecStep& w : steps)
                    if (w.joinStep == static_cast<int>(i)) n.inPlaceWriters.push_back(w.node->id());
            } else if (ran[i]) {
                n.timeUs = sum[i];
                total += sum[i];
                if (s.kind == StepKind::Transfer)
                    rep.transfers.push_back({n.node, bytes[i], directionOf(*s.node), sum[i]});
            }
            rep.nodes.push_back(std::move(n));
        }
        rep.nodeSumUs = total;
    };
    try {
        for (int i = 0; i < rep.warmup; ++i) exec.run(inputs);
        // unprofiled and profiled runs alternate, so a machine that speeds up or slows down
        // during the measurement moves both means alike and the overhead stays their difference
        RunTimings tm;
        double wall = 0, plain = 0, plainSq = 0;
        for (int i = 0; i < rep.repeats; ++i) {
            const auto t0 = Clock::now();
            exec.run(inputs);
            const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
            plain += us;
            plainSq += us * us;
            exec.run(inputs, &tm);
            wall += tm.totalUs;
            for (std::size_t k = 0; k < ns; ++k) {
                sum[k] += tm.stepUs[k];
                bytes[k] = tm.stepBytes[k];
                if (k < tm.stepFused.size() && tm.stepFused[k]) fused[k] = true;
            }
        }
        rep.wallUs = plain / rep.repeats;
        rep.wallStdUs = std::sqrt(std::max(0.0, plainSq / rep.repeats - rep.wallUs * rep.wallUs));
        rep.profiledWallUs = wall / rep.repeats;
        for (std::size_t k = 0; k < ns; ++k) {
            sum[k] /= rep.repeats;
            ran[k] = true;
        }
    } catch (const std::exception& e) {
        rep.error = e.what();
        // one timed run up to the failure, for the nodes that can run
        RunTimings tm;
        std::fill(sum.begin(), sum.end(), 0.0);
        try {
            exec.run(inputs, &tm);
        } catch (const std::exception&) {}
        for (std::size_t k = 0; k < ns && k < tm.stepUs.size(); ++k) {
            sum[k] = tm.stepUs[k];
            bytes[k] = tm.stepBytes[k];
        }
        // steps up to (not including) the failing one ran
        for (std::size_t k = 0; k < ns; ++k) {
            if (steps[k].kind == StepKind::Missing || rep.error.find(describeNode(*steps[k].node)) != std::string::npos)
                break;
            ran[k] = k < tm.stepUs.size() && !std::isnan(tm.stepUs[k]); // NaN: a device time that was not recorded
        }
        rep.repeats = 0;
    }
    fill();
    return rep;
}

namespace {
// "nodes #3, #7" / "node #3"
std::string writersText(const ProfileNode& n) {
    std::string s = n.inPlaceWriters.size() == 1 ? "node " : "nodes ";
    for (std::size_t k = 0; k < n.inPlaceWriters.size(); ++k)
        s += (k ? ", #" : "#") + std::to_string(n.inPlaceWriters[k]);
    return s;
}
} // namespace

nlohmann::json ProfileReport::toJson() const {
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
            notRun.push_back({{"node", n.node},
                              {"op", n.op},
                              {"kind", "n/a"},
                              {"reason", n.fusedInto ? "fused into node #" + std::to_string(*n.fusedInto)
                                         : n.inPlace ? "in place: inputs written into its output by " + writersText(n)
                                         : n.stepKind == StepKind::Missing ? std::string("no kernel")
                                                                           : std::string("not run")}});
        }
    }
    j["nodes"] = ns;
    if (!notRun.empty()) j["not_run"] = notRun;
    nlohmann::json ts = nlohmann::json::array();
    for (const ProfileTransfer& t : transfers)
        ts.push_back({{"node", t.node},
                      {"bytes", t.bytes},
                      {"direction", transferDirectionName(t.direction)},
                      {"time_us", t.timeUs},
                      {"gb_per_s", t.gbPerS()}});
    j["transfers"] = ts;
    if (!error.empty()) j["error"] = error;
    return j;
}

std::string ProfileReport::text(std::size_t maxApplyRows) const {
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
            s += "  " + pad(transferDirectionName(t.direction), 4, false) + "  " + pad(std::to_string(t.bytes), 10) +
                 "  " + pad(fmt("%.2fus", t.timeUs), 11) + "  " + pad(fmt("%.2f", t.gbPerS()), 7) + "  " +
                 std::to_string(t.node) + "\n";
    }
    return s;
}

} // namespace passlens
