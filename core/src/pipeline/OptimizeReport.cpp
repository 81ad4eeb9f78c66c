#include "passlens/pipeline/OptimizeReport.h"

#include <cstdio>
#include <map>

namespace passlens {

namespace {
int transfers(const FunctionGraph& g) {
    int n = 0;
    for (const Apply* a : g.toposort()) n += a->op().isTransfer();
    return n;
}
} // namespace

nlohmann::json optimizeJson(const PipelineRun& run, const FunctionGraph& g, const Trace& trace) {
    using json = nlohmann::json;
    json j;
    j["pipeline"] = run.pipeline;
    json phases = json::array();
    for (const auto& p : run.phases) {
        phases.push_back({{"name", p.info.name},
                          {"position", p.info.position},
                          {"kind", p.info.kind},
                          {"changed", p.changed},
                          {"applied", p.applied},
                          {"rejected", p.rejected},
                          {"nodes_before", p.nodesBefore},
                          {"nodes_after", p.nodesAfter},
                          {"time_us", p.timeUs}});
        if (!p.converged) phases.back()["converged"] = false; // an Equilibrium stopped before its fixed point
    }
    j["phases"] = phases;
    json topo = json::array();
    for (const Apply* a : g.toposort()) topo.push_back(a->op().kind());
    j["final"] = {
        {"nodes", g.nodeCount()}, {"op_counts", g.opCounts()}, {"toposort", topo}, {"transfers", transfers(g)}};
    json rws = json::array();
    for (const auto& [n, st] : run.rewriters) {
        auto ph = run.rewriterPhase.find(n);
        rws.push_back({{"name", n},
                       {"phase", ph == run.rewriterPhase.end() ? "" : ph->second},
                       {"tried", st.tried},
                       {"applied", st.applied},
                       {"rejected", st.rejected},
                       {"nodes_created", st.nodesCreated},
                       {"time_us", st.timeUs}});
    }
    j["rewriters"] = rws;
    json lifting = json::array();
    for (const auto& l : trace.lifting())
        lifting.push_back({{"node", l.node}, {"op", l.op}, {"lifted", l.lifted}, {"reason", l.reason}});
    j["lifting"] = lifting;
    j["events"] = trace.events().size();
    j["attempts"] = run.attempts;
    j["time_us"] = run.totalUs;
    j["messages"] = run.messages;
    return j;
}

std::string optimizeText(const PipelineRun& run, const FunctionGraph& g, const Trace& trace) {
    std::string out;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "Pipeline %s: %zu -> %zu nodes in %.3f ms, %d rewrites applied, %zu events recorded\n\n",
                  run.pipeline.c_str(), run.nodesBefore, run.nodesAfter, run.totalUs / 1000.0, trace.appliedCount(),
                  trace.events().size());
    out += buf;
    out += "  position  phase                           kind         changed  applied  rejected  nodes         time\n";
    for (const auto& p : run.phases) {
        std::snprintf(buf, sizeof buf, "  %8.3f  %-30s  %-11s  %-7s  %7lld  %8lld  %5zu->%-5zu  %8.3f ms\n",
                      p.info.position, p.info.name.c_str(), p.info.kind.c_str(), p.changed ? "yes" : "-",
                      static_cast<long long>(p.applied), static_cast<long long>(p.rejected), p.nodesBefore,
                      p.nodesAfter, p.timeUs / 1000.0);
        out += buf;
    }
    out += "\n" + run.profileText();
    // nodes left on the host, grouped by reason
    std::map<std::string, std::vector<std::string>> host;
    int lifted = 0;
    for (const auto& l : trace.lifting()) {
        if (l.lifted)
            ++lifted;
        else
            host[l.reason].push_back(l.op + " #" + std::to_string(l.node));
    }
    std::size_t onHost = 0;
    for (const auto& [r, v] : host) onHost += v.size();
    std::snprintf(buf, sizeof buf, "\nLifting: %d node%s on the GPU, %zu left on the host\n", lifted,
                  lifted == 1 ? "" : "s", onHost);
    out += buf;
    for (const auto& [reason, nodes] : host) {
        out += "  " + reason + ":\n   ";
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            if (i == 12) {
                out += " ... (" + std::to_string(nodes.size() - 12) + " more)";
                break;
            }
            out += " " + nodes[i];
        }
        out += "\n";
    }
    std::snprintf(buf, sizeof buf, "\nFinal graph: %zu nodes, %d transfers\n", g.nodeCount(), transfers(g));
    out += buf;
    for (const auto& [k, n] : g.opCounts()) {
        std::snprintf(buf, sizeof buf, "  %6d  %s\n", n, k.c_str());
        out += buf;
    }
    return out;
}

} // namespace passlens
