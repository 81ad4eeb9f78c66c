#include "passlens/ir/DebugPrint.h"

#include "passlens/ir/FunctionGraph.h"

#include <unordered_map>

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

std::string debugprint(const FunctionGraph& g, const DebugPrintOptions& opt) {
    std::unordered_map<const Apply*, std::size_t> topoIndex;
    const auto& topo = g.toposort();
    for (std::size_t i = 0; i < topo.size(); ++i) topoIndex[topo[i]] = i;

    std::unordered_map<const void*, std::string> ids; // Apply* for owned vars, Variable* else
    std::unordered_map<const void*, bool> done;
    auto idOf = [&](const void* key) -> const std::string& {
        auto it = ids.find(key);
        if (it != ids.end()) return it->second;
        return ids.emplace(key, charFromNumber(ids.size())).first->second;
    };

    struct Frame {
        const Variable* var;
        std::string prefix, prefixChild;
        int depth;
    };
    std::string out;
    for (const Variable* root : g.outputs()) {
        std::vector<Frame> stack{{root, "", "", 0}};
        while (!stack.empty()) {
            Frame f = std::move(stack.back());
            stack.pop_back();
            const Variable* v = f.var;
            const Apply* a = v->owner();
            std::string typeStr = opt.printType ? " <" + v->type().str() + ">" : "";
            if (!a) {
                out += f.prefix + v->displayName() + " [id " + idOf(v) + "]" + typeStr + "\n";
                continue;
            }
            std::string opStr = a->op().str();
            if (a->nout() > 1) opStr += "." + std::to_string(v->index());
            const std::string& id = idOf(a);
            if (done[a]) {
                out += f.prefix + opStr + " [id " + id + "]" + typeStr + "\n";
                continue;
            }
            done[a] = true;
            out += f.prefix + opStr + " [id " + id + "]" + typeStr + " '" + v->name() + "'";
            if (opt.printToposort) out += " " + std::to_string(topoIndex[a]);
            out += "\n";
            if (opt.depth >= 0 && f.depth + 1 >= opt.depth) continue;
            const auto& ins = a->inputs();
            for (std::size_t i = ins.size(); i-- > 0;) {
                const bool last = i + 1 == ins.size();
                stack.push_back({ins[i], f.prefixChild + " |", f.prefixChild + (last ? "  " : " |"), f.depth + 1});
            }
        }
    }
    return out;
}

} // namespace passlens
