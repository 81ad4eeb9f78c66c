#pragma once
/// @file Merge.h
/// Theano's MergeOptimizer (gof/opt.py, THEANO_SEMANTICS §3.7): merges equal constants (same
/// type and bytes) and nodes with the same op and identical inputs, in topological order, so a
/// single pass merges whole duplicated subgraphs. An unseeded random node (Op::isUnseededRandom)
/// is never merged: two of them are two draws. Each merge is one replaceAllValidate with reason
/// "MergeOptimizer".
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
