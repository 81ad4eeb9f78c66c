#include "passlens/rewrite/Walker.h"

#include <cstdio>
#include <deque>

namespace passlens {

namespace {
// Queues nodes imported during a sweep (Theano's Updater feature).
struct Importer final : GraphObserver {
    std::deque<Apply*>* queue = nullptr;
    const Apply* current = nullptr;
    bool enabled = true;
    void onImport(const FunctionGraph&, const Apply& n, std::string_view) override {
        if (enabled && &n != current) queue->push_back(const_cast<Apply*>(&n));
    }
};

std::string pad(int n) { return std::string(static_cast<std::size_t>(n), ' '); }
} // namespace

Walker::Walker(std::string phaseName, std::vector<NodeRewriter> rewriters, WalkerConfig config)
    : m_rewriters(std::move(rewriters))
    , m_index(m_rewriters)
    , m_config(config) {
    name = std::move(phaseName);
}

PhaseResult Walker::apply(RewriteEngine& engine) {
    FunctionGraph& g = engine.graph();
    const auto t0 = std::chrono::steady_clock::now();
    m_nodesStart = g.nodeCount();
    m_changed = 0;
    const auto& topo = g.toposort();
    std::deque<Apply*> q(topo.begin(), topo.end());
    Importer imp;
    imp.queue = &q;
    imp.enabled = !m_config.ignoreNewTrees;
    g.addObserver(&imp);
    while (!q.empty()) {
        Apply* node;
        if (m_config.order == WalkerConfig::Order::InToOut) {
            node = q.front();
            q.pop_front();
        } else {
            node = q.back();
            q.pop_back();
        }
        if (!node->inGraph()) continue;
        imp.current = node;
        for (std::size_t i : m_index.candidates(node->op(), m_config.dispatch)) {
            const NodeRewriter& rw = m_rewriters[i];
            if (!m_config.dispatch && !rw.tracksOp(node->op())) {
                engine.countTry(rw.name(), node);
                continue;
            }
            if (engine.tryRewrite(rw, *node)) {
                ++m_changed;
                break; // one process_node per visit (Theano's LocalOptGroup: first result wins)
            }
        }
    }
    g.removeObserver(&imp);
    m_nodesEnd = g.nodeCount();
    m_loopUs = elapsedUs(t0);
    return {m_changed > 0};
}

std::string Walker::profile(const RewriteEngine& engine, int indent) const {
    char buf[256];
    std::string out = pad(indent) + "TopoOptimizer " + name + " (" +
                      (m_config.order == WalkerConfig::Order::InToOut ? "in_to_out" : "out_to_in") + ")\n";
    std::snprintf(buf, sizeof buf, "%s  nb_node (start, end, changed) (%zu, %zu, %lld)\n", pad(indent).c_str(),
                  m_nodesStart, m_nodesEnd, static_cast<long long>(m_changed));
    out += buf;
    std::snprintf(buf, sizeof buf, "%s  loop time %.6fs\n", pad(indent).c_str(), m_loopUs / 1e6);
    out += buf;
    for (const auto& rw : m_rewriters) {
        auto it = engine.stats().find(rw.name());
        if (it == engine.stats().end() || !it->second.applied) continue;
        std::snprintf(buf, sizeof buf, "%s  %.6fs - %lld - %lld - %s\n", pad(indent).c_str(), it->second.timeUs / 1e6,
                      static_cast<long long>(it->second.applied), static_cast<long long>(it->second.nodesCreated),
                      rw.name().c_str());
        out += buf;
    }
    return out;
}

PhasePtr in2out(std::string name, std::vector<NodeRewriter> rewriters, bool ignoreNewTrees) {
    return std::make_shared<Walker>(std::move(name), std::move(rewriters),
                                    WalkerConfig{WalkerConfig::Order::InToOut, ignoreNewTrees, true});
}

PhasePtr out2in(std::string name, std::vector<NodeRewriter> rewriters, bool ignoreNewTrees) {
    return std::make_shared<Walker>(std::move(name), std::move(rewriters),
                                    WalkerConfig{WalkerConfig::Order::OutToIn, ignoreNewTrees, true});
}

} // namespace passlens
