#pragma once
/// @file GraphToGpu.h
/// Theano's GraphToGPU (gpuarray/opt.py:325, THEANO_SEMANTICS §1.2): one topological pass that
/// builds the GPU version of the graph in a side mapping and swaps the graph outputs in a single
/// replaceAllValidate (reason "GraphToGPU"). Each lifter is tried through the RewriteEngine
/// (tryLifter: tries, declines with reasons, time) and each host node's decision is reported to
/// it (liftDecided); the reasons are worded in LiftReasons.h.
#include "passlens/gpu/LiftReasons.h"
#include "passlens/gpu/Lifters.h"
#include "passlens/rewrite/Phase.h"

namespace passlens {

class GraphToGpu final : public Phase {
public:
    /// `allocSpecialCase`: Theano's guess that moves an Alloc/AllocEmpty with no GPU input when
    /// a client's op has a lifter (the `theano` pipeline has it, `cleanup` does not).
    GraphToGpu(GpuCapabilities caps, bool allocSpecialCase, std::string phaseName = "gpuarray_graph_optimization");
    PhaseResult apply(RewriteEngine& engine) override;
    std::string kind() const override { return "GraphToGpu"; }
    std::string profile(const RewriteEngine& engine, int indent) const override;

private:
    GpuCapabilities m_caps;
    bool m_allocSpecialCase;
    double m_toposortUs = 0, m_totalUs = 0;
    std::map<std::string, std::int64_t> m_processCount, m_nodeCreated;
    /// The engine's time of each lifter tried, when the last apply began (its profile shows
    /// the time of that apply alone).
    std::map<std::string, double> m_timeBefore;
};

} // namespace passlens
