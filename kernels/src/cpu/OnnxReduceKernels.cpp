// CPU kernels of the ONNX reductions and per-axis ops (Reduce*, Softmax / LogSoftmax, ArgMax / ArgMin,
// Hardmax, CumSum, TopK).
#include "OnnxCommon.h"

#include <cmath>
#include <numeric>

namespace passlens::cpu {

namespace {

using namespace onnx;

// ReduceX: `scalar` over the axes (attribute or input 1) of pre(x) ("sqr", "abs" or "exp"), then
// post (sqrt, log) for ReduceL2, ReduceLogSum, ReduceLogSumExp; mean divides by the count.
KernelFn onnxReduce(const std::string& scalar, bool mean, const std::string& pre = {},
                    double (*post)(double) = nullptr) {
    return [scalar, mean, pre, post](KernelCall& c) {
        const Tensor x = pre == "exp" ? mapFloats(c, c.in(0), static_cast<double (*)(double)>(std::exp)) : c.in(0);
        std::vector<std::int64_t> axes = axesOf(c, 1);
        const bool keep = c.op().intAttr("keepdims", 1) != 0;
        if (axes.empty() && c.op().intAttr("noop_with_empty_axes", 0)) {
            c.outputs[0] = c.in(0);
            return;
        }
        std::vector<bool> red(static_cast<std::size_t>(x.ndim()), axes.empty());
        for (auto a : axes) red[static_cast<std::size_t>(normAxis(c, a, x.ndim()))] = true;
        const DType dt = x.dtype();
        Tensor y = reduceTensor(c, x, red, scalar, dt, pre == "exp" ? std::string() : pre);
        if (post) y = mapFloats(c, y, post);
        if (mean) {
            std::int64_t cnt = 1;
            for (int a = 0; a < x.ndim(); ++a)
                if (red[static_cast<std::size_t>(a)]) cnt *= x.dim(a);
            visitDType(dt, "ReduceMean", [&](auto z) {
                using T = decltype(z);
                T* p = y.data<T>();
                for (std::int64_t i = 0; i < y.numel(); ++i)
                    p[i] = cnt ? static_cast<T>(p[i] / static_cast<T>(cnt)) : T(0);
            });
        }
        if (keep) {
            Shape s;
            for (int a = 0; a < x.ndim(); ++a) s.push_back(red[static_cast<std::size_t>(a)] ? 1 : x.dim(a));
            y = y.reshaped(s);
        }
        c.outputs[0] = std::move(y);
    };
}

void onnxSoftmax(KernelCall& c, bool logSm) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const std::int64_t len = x.dim(axis);
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + axis + 1, x.shape().end()));
    if (x.dtype() != DType::Float32) c.fail("needs float32, got " + x.typeStr());
    Tensor y = c.allocate(x.dtype(), x.shape());
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            const std::int64_t b = o * len * inner + i;
            float mx = -INFINITY;
            for (std::int64_t k = 0; k < len; ++k) mx = std::max(mx, xp[b + k * inner]);
            double s = 0;
            for (std::int64_t k = 0; k < len; ++k) s += std::exp(xp[b + k * inner] - mx);
            for (std::int64_t k = 0; k < len; ++k)
                yp[b + k * inner] = logSm ? xp[b + k * inner] - mx - static_cast<float>(std::log(s))
                                          : static_cast<float>(std::exp(xp[b + k * inner] - mx) / s);
        }
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- along one axis

// ArgMax / ArgMin: int64 index of the first (or, with select_last_index, last) extreme along
// `axis` (argExtreme), which is kept as size 1 with keepdims.
void onnxArgExtreme(KernelCall& c, bool isMax) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    const bool keep = c.op().intAttr("keepdims", 1) != 0, last = c.op().intAttr("select_last_index", 0) != 0;
    std::vector<bool> red(static_cast<std::size_t>(x.ndim()), false);
    red[static_cast<std::size_t>(axis)] = true;
    Tensor y = argExtreme(c, x, red, isMax, last, nullptr);
    if (keep) {
        Shape out = x.shape();
        out[static_cast<std::size_t>(axis)] = 1;
        y = y.reshaped(out);
    }
    c.outputs[0] = std::move(y);
}

// Hardmax (opset 13): 1 at the first maximum along `axis` (default -1), 0 elsewhere.
void onnxHardmax(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const AxisSplit s = splitAt(x, axis);
    Tensor y = Tensor::zeros(x.dtype(), x.shape(), c.ctx.pool.get());
    visitDType(x.dtype(), "Hardmax", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        T* yp = y.data<T>();
        forEachLane(s, [&](std::int64_t, std::int64_t first) {
            if (s.n == 0) return;
            std::int64_t best = 0;
            for (std::int64_t k = 1; k < s.n; ++k)
                if (xp[first + k * s.inner] > xp[first + best * s.inner]) best = k;
            yp[first + best * s.inner] = T(1);
        });
    });
    c.outputs[0] = std::move(y);
}

// CumSum: running sums along the axis given by input 1, `exclusive` and `reverse` as in ONNX.
void onnxCumSum(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, scalarInt(c, 1), x.ndim());
    const bool exclusive = c.op().intAttr("exclusive", 0) != 0, reverse = c.op().intAttr("reverse", 0) != 0;
    const AxisSplit s = splitAt(x, axis);
    Tensor y = c.allocate(x.dtype(), x.shape());
    visitDType(x.dtype(), "CumSum", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        T* yp = y.data<T>();
        forEachLane(s, [&](std::int64_t, std::int64_t first) {
            T acc = T(0);
            for (std::int64_t kk = 0; kk < s.n; ++kk) {
                const std::int64_t e = first + (reverse ? s.n - 1 - kk : kk) * s.inner;
                if (exclusive) {
                    yp[e] = acc;
                    acc = static_cast<T>(acc + xp[e]);
                } else {
                    acc = static_cast<T>(acc + xp[e]);
                    yp[e] = acc;
                }
            }
        });
    });
    c.outputs[0] = std::move(y);
}

// TopK: the K largest (or smallest) values along `axis` and their int64 indices, sorted; equal
// values keep the lower index first, as the ONNX reference does (TopKOp's kernel, topK).
void onnxTopK(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const std::int64_t k = scalarInt(c, 1);
    const AxisSplit s = splitAt(x, axis);
    if (k < 0 || k > s.n)
        c.fail("K " + std::to_string(k) + " out of range for axis " + std::to_string(axis) + " of " + x.typeStr());
    TopKResult r = topK(c, x, axis, c.op().intAttr("largest", 1) != 0 ? k : -k, DType::Int64);
    c.outputs[0] = std::move(r.values);
    if (c.outputs.size() > 1) c.outputs[1] = std::move(r.indices);
}

} // namespace

TopKResult topK(const KernelCall& c, const Tensor& x, int axis, std::int64_t k, DType idxDtype) {
    const bool largest = k >= 0;
    const std::int64_t kk = largest ? k : -k;
    const AxisSplit s = splitAt(x, axis);
    if (kk > s.n)
        c.fail("k " + std::to_string(k) + " is larger than axis " + std::to_string(axis) + " of " + x.typeStr());
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = kk;
    TopKResult r{c.allocate(x.dtype(), out), c.allocate(DType::Int64, out)};
    visitDType(x.dtype(), "TopK", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        T* vp = r.values.data<T>();
        std::int64_t* ip = r.indices.data<std::int64_t>();
        std::vector<std::int64_t> order(static_cast<std::size_t>(s.n));
        forEachLane(s, [&](std::int64_t lane, std::int64_t first) {
            const T* p = xp + first;
            // a total order: more extreme first, NaN above every number, then the lower index
            const auto before = [&](std::int64_t a, std::int64_t b) {
                const T va = p[a * s.inner], vb = p[b * s.inner];
                if constexpr (std::is_floating_point_v<T>) {
                    const bool na = std::isnan(va), nb = std::isnan(vb);
                    if (na || nb) return na != nb ? (largest ? na : nb) : a < b;
                }
                if (va != vb) return largest ? va > vb : va < vb;
                return a < b;
            };
            std::iota(order.begin(), order.end(), 0);
            std::partial_sort(order.begin(), order.begin() + kk, order.end(), before);
            const std::int64_t o = lane / s.inner, i = lane % s.inner;
            for (std::int64_t j = 0; j < kk; ++j) {
                const std::int64_t e = (o * kk + j) * s.inner + i;
                vp[e] = p[order[static_cast<std::size_t>(j)] * s.inner];
                ip[e] = order[static_cast<std::size_t>(j)];
            }
        });
    });
    if (idxDtype != DType::Int64) {
        Tensor idx = c.allocate(idxDtype, out);
        convertElements(r.indices.rawData(), DType::Int64, idx.rawData(), idxDtype, r.indices.numel());
        r.indices = std::move(idx);
    }
    return r;
}

void registerOnnxReduceKernels(KernelRegistry& r) {
    r.add("OnnxReduceMean", Backend::Cpu, onnxReduce("add", true));
    r.add("OnnxReduceSum", Backend::Cpu, onnxReduce("add", false));
    r.add("OnnxReduceMax", Backend::Cpu, onnxReduce("maximum", false));
    r.add("OnnxReduceMin", Backend::Cpu, onnxReduce("minimum", false));
    r.add("OnnxReduceProd", Backend::Cpu, onnxReduce("mul", false));
    r.add("OnnxSoftmax", Backend::Cpu, [](KernelCall& c) { onnxSoftmax(c, false); });
    r.add("OnnxLogSoftmax", Backend::Cpu, [](KernelCall& c) { onnxSoftmax(c, true); });
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"ReduceL1", onnxReduce("add", false, "abs")},
        {"ReduceL2", onnxReduce("add", false, "sqr", static_cast<double (*)(double)>(std::sqrt))},
        {"ReduceSumSquare", onnxReduce("add", false, "sqr")},
        {"ReduceLogSum", onnxReduce("add", false, {}, static_cast<double (*)(double)>(std::log))},
        {"ReduceLogSumExp", onnxReduce("add", false, "exp", static_cast<double (*)(double)>(std::log))},
        {"ArgMax", [](KernelCall& c) { onnxArgExtreme(c, true); }},
        {"ArgMin", [](KernelCall& c) { onnxArgExtreme(c, false); }},
        {"Hardmax", onnxHardmax},
        {"CumSum", onnxCumSum},
        {"TopK", onnxTopK},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
