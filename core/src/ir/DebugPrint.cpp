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

// The depth-first walk of a debugprint to `depth` (-1: all): `line(v, prefix)` is called for
// every line in order and returns false to stop the walk. Theano's `done` set is `expanded`:
// an Apply whose inputs were listed once is not expanded again. Iterative, with one prefix
// string grown and shrunk by two characters per level (Theano's prefix_child).
struct Walk {
    std::unordered_set<const Apply*> expanded;
    std::unordered_set<const Apply*> cut; // met at the depth limit, inputs not listed there
    std::size_t lines = 0;

    template <class Line> void run(const FunctionGraph& g, int depth, Line&& line) {
        // Lists `v`; true when its inputs are to be listed below it.
        auto visit = [&](const Variable* v, const std::string& prefix, int level, bool& stop) {
            ++lines;
            if (!line(v, prefix)) {
                stop = true;
                return false;
            }
            const Apply* a = v->owner();
            if (!a || expanded.count(a) || a->inputs().empty()) return false;
            if (depth >= 0 && level + 1 >= depth) {
                cut.insert(a);
                return false;
            }
            expanded.insert(a);
            return true;
        };
        struct Frame {
            const Apply* node;
            std::size_t next; // the input listed next
        };
        std::vector<Frame> stack;
        std::string prefixChild, prefix;
        bool stop = false;
        for (const Variable* root : g.outputs()) {
            if (depth == 0 || stop) return;
            if (!visit(root, "", 0, stop)) continue;
            stack.push_back({root->owner(), 0});
            while (!stack.empty() && !stop) {
                Frame& f = stack.back();
                const auto& ins = f.node->inputs();
                if (f.next == ins.size()) {
                    stack.pop_back();
                    if (!stack.empty()) prefixChild.resize(prefixChild.size() - 2);
                    continue;
                }
                const std::size_t i = f.next++;
                const bool last = i + 1 == ins.size();
                prefix.assign(prefixChild).append(" |");
                if (visit(ins[i], prefix, static_cast<int>(stack.size()), stop)) {
                    prefixChild += last ? "  " : " |";
                    stack.push_back({ins[i]->owner(), 0});
                }
            }
        }
    }
};
} // namespace

int debugprintDepth(const FunctionGraph& graph, int requested) {
    if (requested != DebugPrintOptions::kAutoDepth) return requested < 0 ? -1 : requested;
    // A dry run of the whole listing, stopped once it is past the limit: O(limit) at most.
    std::size_t bytes = 0;
    Walk w;
    w.run(graph, -1, [&](const Variable* v, const std::string& prefix) {
        bytes += prefix.size() + 24 +
                 (v->owner() ? v->owner()->op().str().size() + v->name().size() : v->displayName().size());
        return bytes <= kDebugPrintFullBytes;
    });
    return bytes > kDebugPrintFullBytes ? kDebugPrintLargeDepth : -1;
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
    auto idOf = [&](const void* key) -> const std::string& {
        auto it = ids.find(key);
        if (it != ids.end()) return it->second;
        return ids.emplace(key, charFromNumber(ids.size())).first->second;
    };
    std::string out;
    Walk w;
    w.run(g, depth, [&](const Variable* v, const std::string& prefix) {
        out += prefix;
        const Apply* a = v->owner();
        if (!a) {
            out += v->displayName() + " [id " + idOf(v) + "]";
            if (opt.printType) out += " <" + v->type().str() + ">";
            out += "\n";
            return true;
        }
        out += a->op().str();
        if (a->nout() > 1) out += "." + std::to_string(v->index());
        out += " [id " + idOf(a) + "]";
        if (opt.printType) out += " <" + v->type().str() + ">";
        out += " '" + v->name() + "'";
        if (opt.printToposort) out += " " + std::to_string(topoIndex[a]);
        out += "\n";
        return true;
    });
    if (summary) {
        std::size_t cutNodes = 0;
        for (const Apply* a : w.cut) cutNodes += !w.expanded.count(a);
        *summary = {w.lines, cutNodes, depth};
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
