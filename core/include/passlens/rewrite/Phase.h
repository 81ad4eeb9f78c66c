#pragma once
/// @file Phase.h
/// A whole-graph optimizer (Theano's Optimizer / GlobalOptimizer): one entry of a Pipeline.
#include "passlens/rewrite/RewriteEngine.h"

#include <memory>
#include <set>
#include <string>

namespace passlens {

/// What one run of a phase did. A rejected replacement counts as no change (it left no trace).
struct PhaseResult {
    bool changed = false;  ///< a replacement was applied (committed)
    bool converged = true; ///< reached its fixed point; false for an Equilibrium stopped by
                           ///< max_use or its pass limit while the graph was still changing
};

class Phase {
public:
    virtual ~Phase() = default;
    /// Runs once over the graph. Must not throw for a failing rewrite (the engine records it);
    /// may throw passlens::Error for a broken graph.
    virtual PhaseResult apply(RewriteEngine& engine) = 0;
    /// "Merge", "Walker", "Equilibrium", "GraphToGpu", ... (FORMAT.md §2 `kind`).
    virtual std::string kind() const = 0;
    /// Theano-style profile text of the last apply (THEANO_SEMANTICS §3.9), indented by `indent`.
    virtual std::string profile(const RewriteEngine&, int /*indent*/) const { return {}; }
    std::string name;
};

using PhasePtr = std::shared_ptr<Phase>;

} // namespace passlens
