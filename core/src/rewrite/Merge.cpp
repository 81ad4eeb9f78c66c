#include "passlens/rewrite/Merge.h"

#include <cstdio>
#include <cstring>
#include <unordered_map>

namespace passlens {

namespace {
bool sameConstant(const Variable* a, const Variable* b) {
    const TensorData& x = *a->constant();
    const TensorData& y = *b->constant();
    return a->type() == b->type() && x.loaded() && y.loaded() && x.bytes->size() == y.bytes->size() &&
           std::memcmp(x.bytes->data(), y.bytes->data(), x.bytes->size()) == 0;
}

struct KeyHash {
    std::size_t operator()(const std::vector<const void*>& k) const {
        std::size_t h = 1469598103934665603ull;
        for (const void* p : k) h = (h ^ reinterpret_cast<std::uintptr_t>(p)) * 1099511628211ull;
        return h;
    }
};
} // namespace

PhaseResult Merge::apply(RewriteEngine& engine) {
    FunctionGraph& g = engine.graph();
    m_merged = m_constants = m_failed = 0;
    // Constants first: equal type and bytes.
    std::unordered_map<std::uint64_t, std::vector<Variable*>> bySig;
    for (Variable* c : g.constants()) {
        const auto tc = std::chrono::steady_clock::now();
        if (!c->constant()->loaded()) continue;
        auto& bucket = bySig[c->constant()->contentHash() ^ c->type().hash()];
        Variable* canon = nullptr;
        for (Variable* o : bucket)
            if (sameConstant(o, c)) {
                canon = o;
                break;
            }
        if (!canon) {
            bucket.push_back(c);
            continue;
        }
        Replacement r;
        r.pairs.push_back({c, canon});
        if (engine.applyReplacement("MergeOptimizer", nullptr, r, elapsedUs(tc)))
            ++m_constants;
        else
            ++m_failed;
    }
    // Nodes: same op (interned: pointer) and identical inputs, in topological order.
    std::unordered_map<std::vector<const void*>, Apply*, KeyHash> seen;
    const std::vector<Apply*> topo = g.toposort();
    for (Apply* n : topo) {
        if (!n->inGraph()) continue;
        std::vector<const void*> key;
        key.reserve(n->inputs().size() + 1);
        key.push_back(&n->op());
        for (Variable* in : n->inputs()) key.push_back(in);
        auto [it, fresh] = seen.emplace(std::move(key), n);
        if (fresh) continue;
        Apply* m = it->second;
        if (!m->inGraph() || m == n) {
            it->second = n;
            continue;
        }
        Replacement r;
        for (int i = 0; i < n->nout(); ++i) r.pairs.push_back({n->output(i), m->output(i)});
        if (engine.applyReplacement("MergeOptimizer", n, r, 0)) {
            ++m_merged;
            for (int i = 0; i < m->nout(); ++i)
                if (m->output(i)->name().empty()) m->output(i)->setName(n->output(i)->name());
        } else {
            ++m_failed;
        }
    }
    return {m_merged + m_constants > 0};
}

std::string Merge::profile(const RewriteEngine&, int indent) const {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%sMergeOptimizer %s\n%s  nb fail=%5lld merged=%5lld constant=%5lld\n",
                  std::string(static_cast<std::size_t>(indent), ' ').c_str(), name.c_str(),
                  std::string(static_cast<std::size_t>(indent), ' ').c_str(), static_cast<long long>(m_failed),
                  static_cast<long long>(m_merged), static_cast<long long>(m_constants));
    return buf;
}

} // namespace passlens
