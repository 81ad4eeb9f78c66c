#pragma once
/// @file GraphToGpu.h
/// Theano's GraphToGPU (gpuarray/opt.py:325, THEANO_SEMANTICS §1.2): one topological pass that
/// builds the GPU version of the graph in a side mapping and swaps the graph outputs in a single
/// replaceAllValidate (reason "GraphToGPU").
#include "passlens/gpu/Lifters.h"
#include "passlens/rewrite/Phase.h"

namespace passlens {

/// Why a node of the graph GraphToGpu saw did or did not move.
struct LiftDecision {
    NodeId node = -1; ///< the node as seen, or its host clone when a lifter refused a node with a GPU input
    bool lifted = false;
    std::string lifter; ///< when lifted
    std::string reason; ///< when not lifted, or how (e.g. "Alloc special case")
};

class GraphToGpu final : public Phase {
public:
    /// `allocSpecialCase`: Theano's guess that moves an Alloc/AllocEmpty with no GPU input when
    /// a client's op has a lifter (the `theano` pipeline has it, `cleanup` does not).
    GraphToGpu(GpuCapabilities caps, bool allocSpecialCase, std::string phaseName = "gpuarray_graph_optimization");
    PhaseResult apply(RewriteEngine& engine) override;
    std::string kind() const override { return "GraphToGpu"; }
    std::string profile(const RewriteEngine& engine, int indent) const override;
    const std::vector<LiftDecision>& decisions() const { return m_decisions; }

private:
    GpuCapabilities m_caps;
    bool m_allocSpecialCase;
    std::vector<LiftDecision> m_decisions;
    double m_toposortUs = 0, m_totalUs = 0;
    std::map<std::string, std::int64_t> m_processCount, m_nodeCreated;
    std::map<std::string, double> m_timeUs;
};

} // namespace passlens
