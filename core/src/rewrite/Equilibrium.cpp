#include "passlens/rewrite/Equilibrium.h"

#include <algorithm>
#include <cstdio>
#include <deque>

namespace passlens {

namespace {
struct Importer final : GraphObserver {
    std::deque<Apply*>* queue = nullptr;
    bool enabled = false;
    void onImport(const FunctionGraph&, const Apply& n, std::string_view) override {
        if (enabled) queue->push_back(const_cast<Apply*>(&n));
    }
};
std::string pad(int n) { return std::string(static_cast<std::size_t>(n), ' '); }
} // namespace

Equilibrium::Equilibrium(std::string phaseName, std::vector<NodeRewriter> locals, EquilibriumConfig config)
    : m_locals(std::move(locals))
    , m_index(m_locals)
    , m_config(config) {
    name = std::move(phaseName);
}

bool Equilibrium::runCleanups(RewriteEngine& engine) {
    bool changed = false;
    for (auto& c : m_cleanups) changed |= c->apply(engine).changed;
    return changed;
}

PhaseResult Equilibrium::apply(RewriteEngine& engine) {
    FunctionGraph& g = engine.graph();
    m_abort.clear();
    m_passNodes.clear();
    m_passApplied.clear();
    m_nodesStart = m_nodesMax = g.nodeCount();
    const std::int64_t editsAtStart = engine.editCount();
    std::map<std::string, std::int64_t> processCount; // Theano's global_process_count
    std::size_t maxNbNodes = 0;
    bool aborted = false;
    bool fixedPoint = false; // a whole pass committed no edit
    for (int pass = 0; pass < m_config.maxPasses && !aborted; ++pass) {
        const std::int64_t passStart = engine.editCount();
        m_passNodes.push_back(g.nodeCount());
        m_passApplied.emplace_back();
        // 1. global members, each once; cleanups if anything changed
        for (auto& gl : m_globals) gl->apply(engine);
        if (engine.editCount() != passStart) runCleanups(engine);
        // 2. local members over an outputs-first worklist
        maxNbNodes = std::max(maxNbNodes, g.nodeCount());
        m_nodesMax = std::max(m_nodesMax, g.nodeCount());
        const double maxUse = static_cast<double>(maxNbNodes) * m_config.maxUseRatio;
        const auto& topo = g.toposort();
        std::deque<Apply*> q(topo.begin(), topo.end());
        Importer imp;
        imp.queue = &q;
        imp.enabled = !m_config.ignoreNewTrees;
        g.addObserver(&imp);
        while (!q.empty() && !aborted) {
            Apply* node = q.back();
            q.pop_back();
            if (!node->inGraph()) continue;
            for (std::size_t i : m_index.candidates(node->op(), m_config.dispatch)) {
                if (!node->inGraph()) break;
                const NodeRewriter& rw = m_locals[i];
                if (!m_config.dispatch && !rw.tracksOp(node->op())) {
                    engine.countTry(rw.name(), node);
                    continue;
                }
                if (!engine.tryRewrite(rw, *node)) continue;
                ++m_passApplied.back()[rw.name()];
                runCleanups(engine);
                if (static_cast<double>(++processCount[rw.name()]) > maxUse) {
                    char buf[512];
                    std::snprintf(buf, sizeof buf,
                                  "Equilibrium '%s' max'ed out by '%s' (applied %lld times > max_use %.0f = %zu nodes "
                                  "x max_use_ratio %g). "
                                  "Raise max_use_ratio in the pipeline file if the rewrites do converge.",
                                  name.c_str(), rw.name().c_str(), static_cast<long long>(processCount[rw.name()]),
                                  maxUse, maxNbNodes, m_config.maxUseRatio);
                    m_abort = buf;
                    if (engine.instrumentation()) engine.instrumentation()->message(m_abort);
                    aborted = true;
                    break;
                }
                // otherwise continue with the remaining rewrites on the same node
            }
        }
        g.removeObserver(&imp);
        // 3. final members, then cleanups
        if (!aborted) {
            const std::int64_t beforeFinal = engine.editCount();
            const std::map<std::string, RewriterStats> statsBefore = engine.stats();
            for (auto& f : m_finals) f->apply(engine);
            for (const auto& [n, st] : engine.stats()) { // final members count in the pass line too
                auto it = statsBefore.find(n);
                const std::int64_t d = st.applied - (it == statsBefore.end() ? 0 : it->second.applied);
                if (d > 0) m_passApplied.back()[n] += static_cast<int>(d);
            }
            if (engine.editCount() != beforeFinal) runCleanups(engine);
        }
        if (engine.editCount() == passStart) {
            fixedPoint = true;
            break;
        }
    }
    m_nodesEnd = g.nodeCount();
    if (!fixedPoint && !aborted) {
        m_abort = "Equilibrium '" + name + "' stopped after " + std::to_string(m_config.maxPasses) +
                  " passes without converging";
        if (engine.instrumentation()) engine.instrumentation()->message(m_abort);
    }
    return {engine.editCount() != editsAtStart, fixedPoint};
}

std::string Equilibrium::profile(const RewriteEngine& engine, int indent) const {
    char buf[512];
    const std::string p = pad(indent);
    std::string out = p + "EquilibriumOptimizer " + name + "\n";
    std::snprintf(buf, sizeof buf, "%s  %d passes\n%s  nb nodes (start, end,  max) %zu %zu %zu\n", p.c_str(), passes(),
                  p.c_str(), m_nodesStart, m_nodesEnd, m_nodesMax);
    out += buf;
    for (std::size_t i = 0; i < m_passNodes.size(); ++i) {
        std::vector<std::pair<int, std::string>> top;
        int total = 0;
        for (const auto& [n, c] : m_passApplied[i]) {
            top.emplace_back(c, n);
            total += c;
        }
        std::sort(top.rbegin(), top.rend());
        std::string t;
        for (std::size_t k = 0; k < top.size() && k < 5; ++k)
            t += (k ? ", " : "") + std::string("('") + top[k].second + "', " + std::to_string(top[k].first) + ")";
        std::snprintf(buf, sizeof buf, "%s    %zu - %d changes - %zu nodes - [%s]\n", p.c_str(), i, total,
                      m_passNodes[i], t.c_str());
        out += buf;
    }
    if (!m_abort.empty()) out += p + "  ABORTED: " + m_abort + "\n";
    out += p + "  times - times applied - nb node created - name:\n";
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& rw : m_locals) {
        auto it = engine.stats().find(rw.name());
        if (it != engine.stats().end() && it->second.applied) rows.emplace_back(it->second.timeUs, rw.name());
    }
    std::sort(rows.rbegin(), rows.rend());
    for (const auto& [t, n] : rows) {
        const auto& st = engine.stats().at(n);
        std::snprintf(buf, sizeof buf, "%s    %.6fs - %lld - %lld - %s\n", p.c_str(), t / 1e6,
                      static_cast<long long>(st.applied), static_cast<long long>(st.nodesCreated), n.c_str());
        out += buf;
    }
    double unusedTime = 0;
    int unused = 0;
    for (const auto& rw : m_locals) {
        auto it = engine.stats().find(rw.name());
        if (it != engine.stats().end() && !it->second.applied && it->second.timeUs > 0) {
            unusedTime += it->second.timeUs;
            ++unused;
        }
    }
    std::snprintf(buf, sizeof buf,
                  "%s  %.6fs - in %d optimization that were not used (display only those with a runtime > 0)\n",
                  p.c_str(), unusedTime / 1e6, unused);
    out += buf;
    return out;
}

} // namespace passlens
