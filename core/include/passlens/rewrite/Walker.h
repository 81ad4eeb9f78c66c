#pragma once
/// @file Walker.h
/// Theano's TopoOptimizer (gof/opt.py): one sweep over the nodes in topological order, in2out
/// (inputs first) or out2in (outputs first); with ignoreNewTrees false, nodes created by a rewrite
/// are queued and visited in the same sweep.
#include "passlens/rewrite/LocalGroup.h"
#include "passlens/rewrite/Phase.h"

namespace passlens {

struct WalkerConfig {
    enum class Order { InToOut, OutToIn };
    Order order = Order::InToOut;
    bool ignoreNewTrees = false;
    bool dispatch = true; ///< honour tracks (Theano's TopoOptimizer calls every node; our
                          ///< transforms rely on their tracks, so dispatch is the default)
};

class Walker final : public Phase {
public:
    Walker(std::string name, std::vector<NodeRewriter> rewriters, WalkerConfig config = {});
    PhaseResult apply(RewriteEngine& engine) override;
    std::string kind() const override { return "Walker"; }
    std::string profile(const RewriteEngine& engine, int indent) const override;

    const std::vector<NodeRewriter>& rewriters() const { return m_rewriters; }

private:
    std::vector<NodeRewriter> m_rewriters;
    TracksIndex m_index;
    WalkerConfig m_config;
    // last apply
    std::size_t m_nodesStart = 0, m_nodesEnd = 0;
    std::int64_t m_changed = 0;
    double m_loopUs = 0;
};

/// in2out / out2in helpers of Theano (a LocalOptGroup when several rewrites are given).
PhasePtr in2out(std::string name, std::vector<NodeRewriter> rewriters, bool ignoreNewTrees = false);
PhasePtr out2in(std::string name, std::vector<NodeRewriter> rewriters, bool ignoreNewTrees = false);

} // namespace passlens
