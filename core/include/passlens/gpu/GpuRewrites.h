#pragma once
/// @file GpuRewrites.h
/// The GPU node rewrites of gpuarray/opt.py and our backward pass (THEANO_SEMANTICS §1.3, §2).
#include "passlens/gpu/Lifters.h"
#include "passlens/rewrite/Phase.h"

namespace passlens {

/// op_lifter around one lifter (Theano's register_opt + op_lifter): fires on the tracked host
/// kind when an input comes from HostFromGpu (forward rule) or every client of every output is
/// a GpuFromHost (backward rule); the GPU outputs are wrapped in HostFromGpu.
NodeRewriter opLifter(const Lifter& lifter, const GpuCapabilities& caps);
/// All op_lifter rewrites of the lifter table.
std::vector<NodeRewriter> opLifters(const GpuCapabilities& caps);

/// local_cut_gpu_transfers (tracks GpuFromHost, GpuToGpu, HostFromGpu), every row of §2.4.
NodeRewriter localCutGpuTransfers(const std::string& name = "local_cut_gpu_transfers");
/// local_gpualloc_memset_0: GpuAlloc of a constant 0 -> GpuAlloc{memset_0=True}.
NodeRewriter localGpuAllocMemset0();
/// local_gpu_elemwise_careduce: GpuCAReduceCuda{any}(GpuElemwise{sqr|abs}(x)) -> pre_scalar_op.
NodeRewriter localGpuElemwiseCAReduce();
/// local_gpu_contiguous_gpu_contiguous.
NodeRewriter localGpuContiguousContiguous();
/// local_gpua_gemm_alpha_merge (alpha_merge of gpuarray/opt_util.py): GpuElemwise{mul} of a
/// single-client GpuGemm(z, a, x, y, b) and a constant c of its dtype with broadcastable axes
/// -> GpuGemm(z, c*a, x, y, c*b) (0 and 0 for c = 0; unchanged for c = 1; a host mul for a
/// variable alpha or beta).
NodeRewriter localGpuGemmAlphaMerge();
/// local_gpua_gemm_output_merge (output_merge of gpuarray/opt_util.py): GpuElemwise{add} of a
/// single-client GpuGemm(z, a, x, y, 0) and W of its dtype broadcasting as z does
/// -> GpuGemm(W, a, x, y, 1).
NodeRewriter localGpuGemmOutputMerge();

/// InputToGpuOptimizer (§2.2): x -> HostFromGpu(GpuFromHost(x)) for movable inputs.
class InputToGpu final : public Phase {
public:
    explicit InputToGpu(std::string phaseName = "InputToGpuArrayOptimizer") { name = std::move(phaseName); }
    PhaseResult apply(RewriteEngine& engine) override;
    std::string kind() const override { return "InputToGpu"; }
};

/// Our backward pass (planned in Theano's #4801, never merged; labelled as our extension):
/// out2in over host nodes with a lifter whose every client is a GpuFromHost; the node is lifted
/// and the transfers after it disappear.
std::vector<NodeRewriter> backwardLifters(const GpuCapabilities& caps);

/// GPU elemwise fusion (FusionOptimizer over GpuElemwise, §2.5): repeatedly, outputs first,
/// folds single-client GpuElemwise inputs of the same shape into one
/// GpuElemwise{composite, expr} within the kernel-argument budget; the expression is composed
/// as a ScalarExpr (elemwiseExpression of each node, ScalarExpr::withInputs) and `expr` is its text.
class GpuElemwiseFusion final : public Phase {
public:
    explicit GpuElemwiseFusion(std::string phaseName = "gpua_elemwise_fusion") { name = std::move(phaseName); }
    PhaseResult apply(RewriteEngine& engine) override;
    std::string kind() const override { return "Fusion"; }
};

} // namespace passlens
