#pragma once
// Internal helpers shared by the CPU kernels.
#include "passlens/kernels/Executor.h"
#include "passlens/kernels/Kernel.h"

#include <passlens/ir/Error.h>
#include <passlens/ir/Subtensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace passlens::cpu {

/// Row-major strides (in elements) of a shape.
inline std::vector<std::int64_t> stridesOf(const Shape& s) {
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// Integer value of a scalar (or single-element) tensor input.
inline std::int64_t scalarInt(const KernelCall& c, int i) {
    const Tensor& t = c.in(i);
    if (t.numel() != 1) c.fail("input " + std::to_string(i) + " must be a scalar, got " + t.typeStr());
    return t.intAt(0);
}

/// Values of an integer vector input.
inline std::vector<std::int64_t> intVector(const KernelCall& c, int i) {
    const Tensor& t = c.in(i);
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.numel()));
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = t.intAt(static_cast<std::int64_t>(k));
    return v;
}

/// Output dtype of node output k as typed in the graph.
inline DType outDType(const KernelCall& c, int k = 0) { return c.node.output(k)->type().dtype(); }

/// Normalises an axis (negative counts from the end); fails naming the node.
inline int normAxis(const KernelCall& c, std::int64_t axis, int ndim) {
    const std::int64_t a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) c.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(ndim));
    return static_cast<int>(a);
}

/// The node's `axis` attribute (a list of axes, negative ones from the end; null: every axis) as
/// one flag per dim of a rank-`ndim` input: CAReduce and MaxAndArgmax, host and GPU kinds, on
/// the CPU and the CUDA backend. Fails naming the node for an axis out of range.
inline std::vector<bool> reducedAxes(const KernelCall& c, int ndim) {
    const auto& ax = c.op().attrs().at("axis");
    std::vector<bool> red(static_cast<std::size_t>(ndim), ax.is_null());
    if (!ax.is_null())
        for (const auto& a : ax) red[static_cast<std::size_t>(normAxis(c, a.get<std::int64_t>(), ndim))] = true;
    return red;
}

/// Copies `src` (any strides, in elements, of a tensor of dtype size `esize`) into a
/// contiguous buffer of shape `shape`. Used for transposes and slices.
void stridedCopy(const void* src, const std::vector<std::int64_t>& srcStrides, void* dst, const Shape& shape,
                 std::size_t esize);

/// `v` broadcast (NumPy rules, leading dims added) into a new tensor of shape `out` and dtype
/// `dt`; fails naming the node when the shapes do not broadcast.
Tensor broadcastToShape(const KernelCall& c, const Tensor& v, const Shape& out, DType dt);

/// The batch shape of a batched GEMM of `a` (..., M, K) by `b` (..., K, N): equal ranks >= 3,
/// equal inner dimensions, batch axes equal or 1 (a 1 is shared, as NumPy's matmul). Fails `c`
/// with the reason otherwise. BatchedDot / GemmBatch on the CPU and the CUDA backend.
Shape batchedGemmShape(const KernelCall& c, const Tensor& a, const Tensor& b);

/// Reduces x over the flagged axes with scalar add / mul / maximum / minimum (after the optional
/// pre op "sqr" or "abs") into a new tensor of dtype dt. Float32 accumulates in float32.
Tensor reduceTensor(const KernelCall& c, const Tensor& x, const std::vector<bool>& red, const std::string& scalar,
                    DType dt, const std::string& pre = {});

/// The |k| largest (k > 0) or smallest (k < 0) elements of x along `axis`, sorted from the most
/// extreme, equal values lower index first (ONNX TopK's order), NaN above every number: values
/// (x's dtype) and indices (idxDtype) of x's shape with |k| along the axis. TopKOp / GpuTopKOp
/// and OnnxTopK (defined with the latter in OnnxReduceKernels.cpp); fails `c` when |k| exceeds
/// the axis.
struct TopKResult {
    Tensor values, indices;
};
TopKResult topK(const KernelCall& c, const Tensor& x, int axis, std::int64_t k, DType idxDtype);
/// The index of the first maximum (isMax) or minimum of x over the flagged axes, counted
/// row-major over those axes (Theano's MaxAndArgmax, which sorts its axes), a NaN counting as the
/// extreme (NumPy's argmax: the first NaN); with `last`, the last such index (ONNX's
/// select_last_index). Returns the int64 indices, shaped as x less the flagged axes; `extreme`,
/// when not null, receives the values at those indices (x's dtype). Fails `c` when a flagged
/// axis is empty and the result is not. ArgMax / ArgMin and MaxAndArgmax on the CPU backend;
/// the CUDA kernel of GpuMaxAndArgmax follows it.
Tensor argExtreme(const KernelCall& c, const Tensor& x, const std::vector<bool>& red, bool isMax, bool last,
                  Tensor* extreme);

/// The part of x a Subtensor / IncSubtensor idx selects (core's resolveSubtensor, ir/Subtensor.h).
/// Symbolic "?" entries take the integer scalar inputs from `firstSym` on, in order. Fails naming
/// the node for out-of-bounds indices.
using passlens::SubtensorRegion;
SubtensorRegion subtensorRegion(const KernelCall& c, const Tensor& x, int firstSym);
/// Element strides (0 on broadcast axes) that read `y`, a C-contiguous tensor, over a region of
/// shape `dims` with NumPy's broadcasting from the trailing axes. Fails `c` when y does not
/// broadcast into it. IncSubtensor / AdvancedIncSubtensor on the CPU and the CUDA backend.
std::vector<std::int64_t> broadcastStridesInto(const KernelCall& c, const Tensor& y, const Shape& dims);

/// Sub-registration functions (one per source file).
void registerElemwise(KernelRegistry& r);
void registerShapeKernels(KernelRegistry& r);
void registerIndexKernels(KernelRegistry& r);
void registerReduceKernels(KernelRegistry& r);
void registerBlasKernels(KernelRegistry& r);
void registerConvKernels(KernelRegistry& r);
void registerOnnxKernels(KernelRegistry& r);
void registerOnnxControlKernels(KernelRegistry& r);

/// Registers `fn` for a host kind and (when not empty) its GPU counterpart on the CPU backend.
void addHostAndGpu(KernelRegistry& r, const std::string& host, const std::string& gpu, const KernelFn& fn);

} // namespace passlens::cpu
