#pragma once
/// @file Equilibrium.h
/// Theano's EquilibriumOptimizer (gof/opt.py:2312, THEANO_SEMANTICS §3.4): global members once per
/// pass, then the local members over an outputs-first worklist dispatched by tracks, then final
/// members, with cleanup members after any change; repeated until a pass changes nothing or a
/// rewrite exceeds max_use = (largest node count seen) x maxUseRatio applications.
#include "passlens/rewrite/LocalGroup.h"
#include "passlens/rewrite/Phase.h"

namespace passlens {

struct EquilibriumConfig {
    double maxUseRatio = 8.0;   ///< config.optdb.max_use_ratio
    bool ignoreNewTrees = true; ///< EquilibriumDB default
    bool dispatch = true;       ///< tracks dispatch; false tries every local rewrite on every node
    int maxPasses = 1000;       ///< safety net on top of max_use
};

class Equilibrium final : public Phase {
public:
    Equilibrium(std::string name, std::vector<NodeRewriter> locals, EquilibriumConfig config = {});
    void addGlobal(PhasePtr p) { m_globals.push_back(std::move(p)); }
    void addFinal(PhasePtr p) { m_finals.push_back(std::move(p)); }
    void addCleanup(PhasePtr p) { m_cleanups.push_back(std::move(p)); }

    PhaseResult apply(RewriteEngine& engine) override;
    std::string kind() const override { return "Equilibrium"; }
    std::string profile(const RewriteEngine& engine, int indent) const override;

    /// Non-empty when the last apply stopped before its fixed point: on max_use (names the
    /// rewrite that maxed out) or on maxPasses.
    const std::string& abortMessage() const { return m_abort; }
    int passes() const { return static_cast<int>(m_passNodes.size()); }
    const std::vector<NodeRewriter>& locals() const { return m_locals; }
    EquilibriumConfig& config() { return m_config; }

private:
    bool runCleanups(RewriteEngine& engine);
    std::vector<NodeRewriter> m_locals;
    TracksIndex m_index;
    EquilibriumConfig m_config;
    std::vector<PhasePtr> m_globals, m_finals, m_cleanups;
    // last apply
    std::string m_abort;
    std::vector<std::size_t> m_passNodes;
    std::vector<std::map<std::string, int>> m_passApplied;
    std::size_t m_nodesStart = 0, m_nodesEnd = 0, m_nodesMax = 0;
};

} // namespace passlens
