#include "passlens/io/Inspect.h"

#include "passlens/ir/DebugPrint.h"

#include <cstdio>
#include <functional>
#include <sstream>

namespace passlens {
namespace {
void forEachSubgraph(const FunctionGraph& g, const std::function<void(const Apply&, const Subgraph&, int)>& f, int depth = 1) {
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
    std::size_t bytes = 0;
    const auto consts = g.constants();
    for (const Variable* c : consts) bytes += c->constant()->byteSize();
    j["constants"] = consts.size();
    j["constant_bytes"] = bytes;
    j["op_counts"] = g.opCounts();
    nlohmann::json topo = nlohmann::json::array();
    int transfers = 0;
    for (const Apply* n : g.toposort()) {
        topo.push_back(n->op().kind());
        if (n->op().isTransfer()) ++transfers;
    }
    j["toposort"] = topo;
    j["transfers"] = transfers;
    int subgraphs = 0;
    std::size_t subNodes = 0;
    forEachSubgraph(g, [&](const Apply&, const Subgraph& s, int) { ++subgraphs; subNodes += s.graph->nodeCount(); });
    j["subgraphs"] = subgraphs;
    j["subgraph_nodes"] = subNodes;
    j["fingerprint"] = hex(g.fingerprint());
    j["warnings"] = loaded.warnings;
    return j;
}

std::string inspectText(const LoadedGraph& loaded, const std::string& file, bool printTypes) {
    const FunctionGraph& g = *loaded.graph;
    const nlohmann::json j = inspectJson(loaded, file);
    std::ostringstream os;
    os << file << " (" << loaded.format << (g.name.empty() ? "" : ", graph '" + g.name + "'") << ")\n";
    os << "  " << g.nodeCount() << " Apply nodes, " << g.inputs().size() << " inputs, "
       << g.outputs().size() << " outputs, " << j["constants"].get<std::size_t>() << " constants ("
       << j["constant_bytes"].get<std::size_t>() << " bytes)";
    if (j["subgraphs"].get<int>() > 0)
        os << ", " << j["subgraphs"].get<int>() << " nested graphs with " << j["subgraph_nodes"].get<std::size_t>() << " nodes";
    os << "\n";
    for (const Variable* v : g.inputs()) os << "  input  " << v->displayName() << " : " << v->type().str() << "\n";
    for (const Variable* v : g.outputs()) os << "  output " << v->displayName() << " : " << v->type().str() << "\n";
    for (const auto& w : loaded.warnings) os << "  warning: " << w << "\n";
    os << "\n";
    DebugPrintOptions opt;
    opt.printType = printTypes;
    os << debugprint(g, opt);
    forEachSubgraph(g, [&](const Apply& n, const Subgraph& s, int depth) {
        os << "\nInner graph " << s.attribute << " of " << n.op().str() << " #" << n.id()
           << (n.name().empty() ? "" : " '" + n.name() + "'") << " (depth " << depth << ", "
           << s.graph->nodeCount() << " nodes):\n";
        os << debugprint(*s.graph, opt);
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
