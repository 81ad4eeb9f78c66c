#pragma once
/// @file Merge.h
/// Theano's MergeOptimizer (gof/opt.py, THEANO_SEMANTICS §3.7): merges equal constants (same
/// type and bytes) and nodes with the same op and identical inputs, in topological order, so a
/// single pass merges whole duplicated subgraphs. An unseeded random node (Op::isUnseededRandom)
/// is never merged: two of them are two draws. Each merge is one replaceAllValidate with reason
/// "MergeOptimizer".
/// A pass that rejects no merge leaves no two nodes to merge: a node's inputs come from nodes
/// before it, merged before it is visited, and merges only redirect uses to variables already
/// there. So a pass on a graph no edit has touched since such a pass (RewriteEngine::
/// mergeComplete) returns at once, with the same (empty) result: merge1.1, merge1.2 and merge3
/// of the `theano` pipeline when the phases before them change nothing.
#include "passlens/rewrite/Phase.h"

namespace passlens {

class Merge final : public Phase {
public:
    explicit Merge(std::string phaseName = "merge") { name = std::move(phaseName); }
    PhaseResult apply(RewriteEngine& engine) override;
    std::string kind() const override { return "Merge"; }
    std::string profile(const RewriteEngine& engine, int indent) const override;

private:
    std::int64_t m_merged = 0, m_constants = 0, m_failed = 0;
};

} // namespace passlens
