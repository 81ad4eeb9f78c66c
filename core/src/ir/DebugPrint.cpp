#include "passlens/ir/DebugPrint.h"

#include "passlens/ir/FunctionGraph.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace passlens {
namespace {
// Theano's char_from_number: base-26 with 'A' as zero (0 -> A, 25 -> Z, 26 -> BA).
std::string charFromNumber(std::size_t n) {
    if (n == 0) return "A";
    std::string s;
    while (n) {
        s.insert(s.begin(), static_cast<char>('A' + n % 26));
        n /= 26;
    }
    return s;
}
} // namespace

int debugprintDepth(const FunctionGraph& graph, int requested) {
    if (requested != DebugPrintOptions::kAutoDepth) return requested < 0 ? -1 : requested;
    return graph.nodeCount() > kDebugPrintFullNodes ? kDebugPrintLargeDepth : -1;
}

std::string debugprint(const FunctionGraph& g, const DebugPrintOptions& opt, DebugPrintSummary* summary) {
    const int depth = debugprintDepth(g, opt.depth);
    std::unordered_map<const Apply*, std::size_t> topoIndex;
    if (opt.printToposort) {
        const auto& topo = g.toposort();
        topoIndex.reserve(topo.size());
        for (std::size_t i = 0; i < topo.size(); ++i) topoIndex[topo[i]] = i;
    }

    std::unordered_map<const void*, std::string> ids; // Apply* for owned vars, Variable* else
    std::unordered_set<const Apply*> expanded;         // Theano's `done`: inputs already printed
    auto idOf = [&](const void* key) -> const std::string& {
        auto it = ids.find(key);
        if (it != ids.end()) return it->second;
        return ids.emplace(key, charFromNumber(ids.size())).first->second;
    };

    std::string out;
    std::size_t lines = 0;
    std::unordered_set<const Apply*> cut; // printed at the depth limit without their inputs
    // One line for `v` after `prefix`; true when its inputs are to be printed below it.
    auto printLine = [&](const Variable* v, const std::string& prefix, int level) {
        ++lines;
        out += prefix;
        const Apply* a = v->owner();
        if (!a) {
            out += v->displayName() + " [id " + idOf(v) + "]";
            if (opt.printType) out += " <" + v->type().str() + ">";
            out += "\n";
            return false;
        }
        out += a->op().str();
        if (a->nout() > 1) out += "." + std::to_string(v->index());
        out += " [id " + idOf(a) + "]";
        if (opt.printType) out += " <" + v->type().str() + ">";
        out += " '" + v->name() + "'";
        if (opt.printToposort) out += " " + std::to_string(topoIndex[a]);
        out += "\n";
        if (expanded.count(a) || a->inputs().empty()) return false;
        if (depth >= 0 && level + 1 >= depth) {
            cut.insert(a);
            return false;
        }
        expanded.insert(a);
        return true;
    };

    // Depth-first with an explicit stack; `prefixChild` is the prefix of the children of the
    // node on top of the stack (Theano's prefix_child), grown and shrunk by two characters.
    struct Frame {
        const Apply* node;
        std::size_t next; // the input printed next
    };
    std::vector<Frame> stack;
    std::string prefixChild, line;
    for (const Variable* root : g.outputs()) {
        if (depth == 0) break;
        if (!printLine(root, "", 0)) continue;
        stack.push_back({root->owner(), 0});
        while (!stack.empty()) {
            Frame& f = stack.back();
            const auto& ins = f.node->inputs();
            if (f.next == ins.size()) {
                stack.pop_back();
                if (!stack.empty()) prefixChild.resize(prefixChild.size() - 2);
                continue;
            }
            const std::size_t i = f.next++;
            const bool last = i + 1 == ins.size();
            line.assign(prefixChild).append(" |");
            if (printLine(ins[i], line, static_cast<int>(stack.size()))) {
                prefixChild += last ? "  " : " |";
                stack.push_back({ins[i]->owner(), 0});
            }
        }
    }
    if (summary) {
        std::size_t cutNodes = 0;
        for (const Apply* a : cut) cutNodes += !expanded.count(a);
        *summary = {lines, cutNodes, depth};
    }
    return out;
}

std::string debugprintCutNote(const DebugPrintSummary& summary, std::size_t nodes) {
    if (summary.cutNodes == 0) return {};
    return "debugprint cut at depth " + std::to_string(summary.depth) + " (graph of " + std::to_string(nodes) +
           " nodes): " + std::to_string(summary.cutNodes) + (summary.cutNodes == 1 ? " node's" : " nodes'") +
           " inputs not shown; --depth N sets the depth, --depth -1 prints everything";
}

std::string debugprintListing(const FunctionGraph& g, const DebugPrintOptions& options) {
    DebugPrintSummary summary;
    std::string text = debugprint(g, options, &summary);
    const std::string note = debugprintCutNote(summary, g.nodeCount());
    if (!note.empty()) text += "(" + note + ")\n";
    return text;
}

} // namespace passlens
