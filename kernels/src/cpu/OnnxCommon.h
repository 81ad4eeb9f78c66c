#pragma once
// Helpers shared by the CPU kernels of the Onnx<Type> host ops (OnnxKernels.cpp and the
// Onnx*Kernels.cpp files, one per operator family). Internal to the CPU backend.
#include "CpuCommon.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace passlens::cpu {

namespace onnx {

using json = nlohmann::json;

/// ONNX input k of the node, counting absent optional inputs (the "inputs_present" and
/// "n_onnx_inputs" attributes the importer sets); nullptr when absent.
const Tensor* onnxIn(const KernelCall& c, int k);

/// ONNX input k of the node; fails naming the node when it is absent.
const Tensor& needIn(const KernelCall& c, int k);

/// The elements of an integer tensor, in row-major order.
std::vector<std::int64_t> intsOf(const Tensor& t);

/// The integer-list attribute `name`, or `dflt` when the node has none.
std::vector<std::int64_t> attrInts(const KernelCall& c, const char* name, std::vector<std::int64_t> dflt = {});

/// The DType of an ONNX TensorProto element type (onnx.proto DataType), nullopt for types the
/// CPU backend does not hold.
std::optional<DType> onnxDType(std::int64_t t);

/// The axes of a node: its "axes" attribute, else ONNX input `inputIndex` (opset 13+), else none.
inline std::vector<std::int64_t> axesOf(const KernelCall& c, int inputIndex) {
    if (c.op().has("axes")) return attrInts(c, "axes");
    if (const Tensor* t = onnxIn(c, inputIndex)) return intsOf(*t);
    return {};
}

/// y = f(x) element by element for a float32 / float64 x.
template <class F> Tensor mapFloats(const KernelCall& c, const Tensor& x, F f) {
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64)
        c.fail("needs a float32 or float64 input, got " + x.typeStr());
    Tensor y = c.allocate(x.dtype(), x.shape());
    const std::int64_t n = x.numel();
    if (x.dtype() == DType::Float32) {
        const float* xp = x.data<float>();
        float* yp = y.data<float>();
        for (std::int64_t i = 0; i < n; ++i) yp[i] = static_cast<float>(f(static_cast<double>(xp[i])));
    } else {
        const double* xp = x.data<double>();
        double* yp = y.data<double>();
        for (std::int64_t i = 0; i < n; ++i) yp[i] = f(xp[i]);
    }
    return y;
}

/// x's dims before `axis`, at it and after it.
struct AxisSplit {
    std::int64_t outer = 1, n = 1, inner = 1;
};

/// x split at `axis` into outer, axis and inner sizes.
inline AxisSplit splitAt(const Tensor& x, int axis) {
    AxisSplit s;
    for (int a = 0; a < x.ndim(); ++a) (a < axis ? s.outer : a == axis ? s.n : s.inner) *= x.dim(a);
    return s;
}

/// Calls f(lane, first) for every 1-d lane along the split axis: `lane` = outer * inner + inner
/// index, its elements at first + k * s.inner for k < s.n.
template <class F> void forEachLane(const AxisSplit& s, F f) {
    for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t i = 0; i < s.inner; ++i) f(o * s.inner + i, o * s.n * s.inner + i);
}

/// Advances a row-major multi-index over `shape`.
inline void nextIndex(std::vector<std::int64_t>& idx, const Shape& shape) {
    for (std::size_t a = idx.size(); a-- > 0;) {
        if (++idx[a] < shape[a]) return;
        idx[a] = 0;
    }
}

/// A float tensor's elements as doubles, and doubles stored back as `dt`.
inline Tensor storeDoubles(const KernelCall& c, const std::vector<double>& v, DType dt, const Shape& shape) {
    Tensor y = c.allocate(dt, shape);
    convertElements(v.data(), DType::Float64, y.rawData(), dt, y.numel());
    return y;
}

/// v clamped to the range of an int8, uint8 or int32 `dt` (unbounded for other dtypes).
inline double saturate(double v, DType dt) {
    const double lo = dt == DType::Int8    ? -128
                      : dt == DType::UInt8 ? 0
                      : dt == DType::Int32 ? -2147483648.0
                                           : -INFINITY;
    const double hi = dt == DType::Int8 ? 127 : dt == DType::UInt8 ? 255 : dt == DType::Int32 ? 2147483647.0 : INFINITY;
    return std::clamp(v, lo, hi);
}

} // namespace onnx

/// Registration of the Onnx kernels of one operator family each (called by registerOnnxKernels).
void registerOnnxShapeKernels(KernelRegistry& r);
void registerOnnxIndexKernels(KernelRegistry& r);
void registerOnnxReduceKernels(KernelRegistry& r);
void registerOnnxNormKernels(KernelRegistry& r);
void registerOnnxLinalgKernels(KernelRegistry& r);
void registerOnnxConvKernels(KernelRegistry& r);
void registerOnnxSamplingKernels(KernelRegistry& r);
void registerOnnxSignalKernels(KernelRegistry& r);
void registerOnnxRecurrentKernels(KernelRegistry& r);
void registerOnnxSequenceKernels(KernelRegistry& r);
void registerOnnxTrainingKernels(KernelRegistry& r);
void registerOnnxStringKernels(KernelRegistry& r);
void registerOnnxRandomKernels(KernelRegistry& r);

} // namespace passlens::cpu
