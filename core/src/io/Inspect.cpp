#include "passlens/io/Inspect.h"

#include "passlens/ir/DebugPrint.h"

#include <cstdio>
#include <functional>
#include <sstream>

namespace passlens {
namespace {
void forEachSubgraph(const FunctionGraph& g, const std::function<void(const Apply&, const Subgraph&, int)>& f,
                     int depth = 1) {
    for (const Apply* n : g.toposort())
        for (const Subgraph& s : n->op().subgraphs()) {
            f(*n, s, depth);
            forEachSubgraph(*s.graph, f, depth + 1);
        }
}

std::string hex(std::uint64_t v) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// The counts shared by the JSON and the text listing, in one pass over the graph.
struct Stats {
    std::size_t constants = 0, constantBytes = 0, subgraphNodes = 0;
    int subgraphs = 0;
};

Stats statsOf(const FunctionGraph& g) {
    Stats s;
    const auto consts = g.constants();
    s.constants = consts.size();
    for (const Variable* c : consts) s.constantBytes += c->constant()->byteSize();
    forEachSubgraph(g, [&](const Apply&, const Subgraph& sg, int) {
        ++s.subgraphs;
        s.subgraphNodes += sg.graph->nodeCount();
    });
    return s;
}
} // namespace

nlohmann::json inspectJson(const LoadedGraph& loaded, const std::string& file) {
    const FunctionGraph& g = *loaded.graph;
    nlohmann::json j;
    j["file"] = file;
    j["format"] = loaded.format;
    j["name"] = g.name;
    j["nodes"] = g.nodeCount();
    auto vars = [](const std::vector<Variable*>& vs) {
        nlohmann::json a = nlohmann::json::array();
        for (const Variable* v : vs) a.push_back({{"name", v->displayName()}, {"type", v->type().str()}});
        return a;
    };
    j["inputs"] = vars(g.inputs());
    j["outputs"] = vars(g.outputs());
    const Stats st = statsOf(g);
    j["constants"] = st.constants;
    j["constant_bytes"] = st.constantBytes;
    j["op_counts"] = g.opCounts();
    nlohmann::json topo = nlohmann::json::array();
    int transfers = 0;
    for (const Apply* n : g.toposort()) {
        topo.push_back(n->op().kind());
        if (n->op().isTransfer()) ++transfers;
    }
    j["toposort"] = topo;
    j["transfers"] = transfers;
    j["subgraphs"] = st.subgraphs;
    j["subgraph_nodes"] = st.subgraphNodes;
    j["fingerprint"] = hex(g.fingerprint());
    j["warnings"] = loaded.warnings;
    return j;
}

std::string inspectText(const LoadedGraph& loaded, const std::string& file, bool printTypes, int depth) {
    const FunctionGraph& g = *loaded.graph;
    const Stats st = statsOf(g);
    std::ostringstream os;
    os << file << " (" << loaded.format << (g.name.empty() ? "" : ", graph '" + g.name + "'") << ")\n";
    os << "  " << g.nodeCount() << " Apply nodes, " << g.inputs().size() << " inputs, " << g.outputs().size()
       << " outputs, " << st.constants << " constants (" << st.constantBytes << " bytes)";
    if (st.subgraphs > 0) os << ", " << st.subgraphs << " nested graphs with " << st.subgraphNodes << " nodes";
    os << "\n";
    for (const Variable* v : g.inputs()) os << "  input  " << v->displayName() << " : " << v->type().str() << "\n";
    for (const Variable* v : g.outputs()) os << "  output " << v->displayName() << " : " << v->type().str() << "\n";
    for (const auto& w : loaded.warnings) os << "  warning: " << w << "\n";
    os << "\n";
    DebugPrintOptions opt;
    opt.printType = printTypes;
    opt.depth = depth;
    os << debugprintListing(g, opt);
    forEachSubgraph(g, [&](const Apply& n, const Subgraph& s, int depth) {
        os << "\nInner graph " << s.attribute << " of " << n.op().str() << " #" << n.id()
           << (n.name().empty() ? "" : " '" + n.name() + "'") << " (depth " << depth << ", " << s.graph->nodeCount()
           << " nodes):\n";
        os << debugprintListing(*s.graph, opt);
    });
    os << "\nOp kinds:\n";
    for (const auto& [k, n] : g.opCounts()) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "  %6d  %s\n", n, k.c_str());
        os << buf;
    }
    return os.str();
}

} // namespace passlens
