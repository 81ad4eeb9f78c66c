#include "passlens/rewrite/Merge.h"

#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace passlens {

namespace {
bool sameConstant(const Variable* a, const Variable* b) {
    const TensorData& x = *a->constant();
    const TensorData& y = *b->constant();
    return a->type() == b->type() && x.loaded() && y.loaded() && x.bytes->size() == y.bytes->size() &&
           std::memcmp(x.bytes->data(), y.bytes->data(), x.bytes->size()) == 0;
}

// Nodes by signature (op, inputs): open addressing over a power-of-two table of node pointers
// with their hashes, so the pass allocates nothing per node. A stored node's inputs never change
// while the pass runs (they come from nodes earlier in the topological order, and a merge only
// redirects the clients of the node merged away, which come later), so the node itself is the key.
class SignatureTable {
public:
    explicit SignatureTable(std::size_t nodes) {
        std::size_t cap = 16;
        while (cap < nodes * 2) cap *= 2;
        m_slots.assign(cap, Slot{});
    }
    /// The stored node with n's op and inputs, or n itself after storing it.
    Apply*& find(Apply* n) {
        const std::uint64_t h = signature(*n);
        const std::size_t mask = m_slots.size() - 1;
        for (std::size_t i = static_cast<std::size_t>(h) & mask;; i = (i + 1) & mask) {
            Slot& s = m_slots[i];
            if (!s.node) {
                s = {h, n};
                return s.node;
            }
            if (s.hash == h && &s.node->op() == &n->op() && s.node->inputs() == n->inputs()) return s.node;
        }
    }

private:
    struct Slot {
        std::uint64_t hash = 0;
        Apply* node = nullptr;
    };
    static std::uint64_t signature(const Apply& n) {
        std::uint64_t h = reinterpret_cast<std::uintptr_t>(&n.op()) * 0x9e3779b97f4a7c15ull;
        for (const Variable* in : n.inputs()) {
            h ^= reinterpret_cast<std::uintptr_t>(in) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
            h *= 0xff51afd7ed558ccdull;
        }
        return h ^ (h >> 29);
    }
    std::vector<Slot> m_slots;
};
} // namespace

PhaseResult Merge::apply(RewriteEngine& engine) {
    FunctionGraph& g = engine.graph();
    m_merged = m_constants = m_failed = 0;
    // Nothing changed since a pass that merged all it found: this one would find nothing either
    // (no sort, no signature pass; see Merge.h).
    if (engine.mergeComplete()) return {};
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
    // Nodes: same op (interned: pointer) and identical inputs, in topological order. An unseeded
    // random node is a draw of its own: never merged (Theano's random ops each take their own
    // rng state input, so they never have identical inputs).
    const std::vector<Apply*> topo = g.toposort();
    SignatureTable seen(topo.size());
    for (Apply* n : topo) {
        if (!n->inGraph() || n->op().isUnseededRandom()) continue;
        Apply*& stored = seen.find(n);
        Apply* m = stored;
        if (!m->inGraph() || m == n) {
            stored = n;
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
    if (m_failed == 0) engine.setMergeComplete();
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
