// Reductions and scans: CAReduce / GpuCAReduceCuda (pre_scalar_op sqr, abs), MaxAndArgmax /
// GpuMaxAndArgmax (and the argExtreme of ONNX's ArgMax / ArgMin), CumOp, Softmax, LogSoftmax,
// TopKOp.
#include "CpuCommon.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace passlens::cpu {

namespace {

enum class Red { Add, Mul, Max, Min };
enum class Pre { None, Sqr, Abs };

template <class A> A identityOf(Red r) {
    switch (r) {
    case Red::Add: return A(0);
    case Red::Mul: return A(1);
    case Red::Max:
        return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                    : std::numeric_limits<A>::lowest();
    case Red::Min:
        return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                    : std::numeric_limits<A>::max();
    }
    return A(0);
}

template <class A> inline A combine(Red r, A acc, A v) {
    switch (r) {
    case Red::Add: return acc + v;
    case Red::Mul: return acc * v;
    case Red::Max: return v > acc || v != v ? v : acc;
    case Red::Min: return v < acc || v != v ? v : acc;
    }
    return acc;
}

template <class A> inline A preOp(Pre p, A v) {
    switch (p) {
    case Pre::None: return v;
    case Pre::Sqr: return v * v;
    case Pre::Abs: return v < 0 ? -v : v;
    }
    return v;
}

// Reduces x (values converted to A) over the flagged dims into acc (kept dims in order).
template <class A, class T>
void reduceInto(const T* x, const Shape& shape, const std::vector<bool>& red, A* acc, Red r, Pre p) {
    // coalesce adjacent dims of the same class; drop size-1 dims
    std::vector<std::int64_t> dims;
    std::vector<bool> flags;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] == 1) continue;
        if (!dims.empty() && flags.back() == red[a]) {
            dims.back() *= shape[a];
            continue;
        }
        dims.push_back(shape[a]);
        flags.push_back(red[a]);
    }
    const std::int64_t n = shapeNumel(shape);
    if (n == 0) return;
    if (dims.empty()) {
        acc[0] = combine(r, acc[0], preOp(p, static_cast<A>(x[0])));
        return;
    }
    const std::size_t nd = dims.size();
    // output strides of kept dims
    std::vector<std::int64_t> ost(nd, 0);
    std::int64_t s = 1;
    for (std::size_t a = nd; a-- > 0;)
        if (!flags[a]) {
            ost[a] = s;
            s *= dims[a];
        }
    const std::int64_t inner = dims.back();
    const bool innerReduced = flags.back();
    const std::int64_t outer = n / inner;
    std::vector<std::int64_t> idx(nd, 0);
    std::int64_t oo = 0;
    const T* xp = x;
    for (std::int64_t o = 0; o < outer; ++o) {
        if (innerReduced && r == Red::Add && p == Pre::None) {
            // 8 partial sums (vectorisable; a fixed order, so results are deterministic)
            A part[8] = {};
            std::int64_t i = 0;
            for (; i + 8 <= inner; i += 8)
                for (int k = 0; k < 8; ++k) part[k] += static_cast<A>(xp[i + k]);
            A a = acc[oo];
            for (; i < inner; ++i) a += static_cast<A>(xp[i]);
            acc[oo] = a + (((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7])));
        } else if (innerReduced) {
            A a = acc[oo];
            for (std::int64_t i = 0; i < inner; ++i) a = combine(r, a, preOp(p, static_cast<A>(xp[i])));
            acc[oo] = a;
        } else {
            A* ap = acc + oo;
            if (r == Red::Add && p == Pre::None)
                for (std::int64_t i = 0; i < inner; ++i) ap[i] += static_cast<A>(xp[i]);
            else
                for (std::int64_t i = 0; i < inner; ++i) ap[i] = combine(r, ap[i], preOp(p, static_cast<A>(xp[i])));
        }
        xp += inner;
        for (std::size_t a = nd - 1; a-- > 0;) {
            ++idx[a];
            oo += ost[a];
            if (idx[a] < dims[a]) break;
            oo -= ost[a] * idx[a];
            idx[a] = 0;
        }
    }
}

} // namespace

Tensor reduceTensor(const KernelCall& c, const Tensor& x, const std::vector<bool>& red, const std::string& scalar,
                    DType dt, const std::string& pre) {
    const Red r = scalar == "add" ? Red::Add : scalar == "mul" ? Red::Mul : scalar == "maximum" ? Red::Max : Red::Min;
    const Pre p = pre == "sqr" ? Pre::Sqr : pre == "abs" ? Pre::Abs : Pre::None;
    Shape out;
    for (int a = 0; a < x.ndim(); ++a)
        if (!red[static_cast<std::size_t>(a)]) out.push_back(x.dim(a));
    if ((r == Red::Max || r == Red::Min) && x.numel() == 0 && shapeNumel(out) > 0)
        c.fail("cannot take the " + scalar + " of an empty axis of " + x.typeStr());
    Tensor y = c.allocate(dt, out);
    const std::int64_t m = y.numel();
    auto go = [&](auto accZero) {
        using A = decltype(accZero);
        std::vector<A> acc(static_cast<std::size_t>(std::max<std::int64_t>(m, 1)), identityOf<A>(r));
        visitDType(x.dtype(), "reduction", [&](auto z) {
            using T = decltype(z);
            reduceInto<A, T>(x.data<T>(), x.shape(), red, acc.data(), r, p);
        });
        visitDType(dt, "reduction", [&](auto z) {
            using T = decltype(z);
            T* yp = y.data<T>();
            for (std::int64_t i = 0; i < m; ++i) yp[i] = static_cast<T>(acc[static_cast<std::size_t>(i)]);
        });
    };
    if (dt == DType::Float32)
        go(float{});
    else if (isFloat(dt))
        go(double{});
    else if (dt == DType::UInt64)
        go(std::uint64_t{});
    else
        go(std::int64_t{});
    return y;
}

namespace {

void careduce(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::string s = c.op().str("scalar");
    const Red r = s == "add" ? Red::Add : s == "mul" ? Red::Mul : s == "maximum" ? Red::Max : Red::Min;
    Pre p = Pre::None;
    if (c.op().has("pre_scalar_op") && c.op().attrs()["pre_scalar_op"].is_string()) {
        const std::string ps = c.op().str("pre_scalar_op");
        if (ps == "sqr")
            p = Pre::Sqr;
        else if (ps == "abs")
            p = Pre::Abs;
        else
            c.fail("unsupported pre_scalar_op '" + ps + "'");
    }
    const std::vector<bool> red = reducedAxes(c, x.ndim());
    std::string pre;
    if (p == Pre::Sqr) pre = "sqr";
    if (p == Pre::Abs) pre = "abs";
    (void)r;
    c.outputs[0] = reduceTensor(c, x, red, s, outDType(c), pre);
}

void cumOp(KernelCall& c) {
    Tensor x = c.in(0);
    const bool mul = c.op().str("mode") == "mul";
    const auto& axAttr = c.op().attrs().at("axis");
    int axis;
    if (axAttr.is_null()) {
        x = x.reshaped({x.numel()});
        axis = 0;
    } else {
        axis = normAxis(c, axAttr.get<std::int64_t>(), x.ndim());
    }
    const DType dt = outDType(c);
    Tensor y = c.allocate(dt, x.shape());
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const std::int64_t len = x.ndim() ? x.dim(axis) : 1;
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + std::min(axis + 1, x.ndim()), x.shape().end()));
    Tensor xs = x;
    if (x.dtype() != dt) {
        xs = c.allocate(dt, x.shape());
        convertElements(x.rawData(), x.dtype(), xs.rawData(), dt, x.numel());
    }
    visitDType(dt, "CumOp", [&](auto z) {
        using T = decltype(z);
        const T* xp = xs.data<T>();
        T* yp = y.data<T>();
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < inner; ++i) {
                T acc = mul ? T(1) : T(0);
                for (std::int64_t k = 0; k < len; ++k) {
                    const std::int64_t e = (o * len + k) * inner + i;
                    acc = mul ? static_cast<T>(acc * xp[e]) : static_cast<T>(acc + xp[e]);
                    yp[e] = acc;
                }
            }
    });
    c.outputs[0] = std::move(y);
}

// Whether v takes the place of the best value b so far (argExtreme): a NaN best stays (with
// `last`, the last NaN takes over), a NaN v wins, else the strict comparison, or equality too
// with `last`.
template <class T> inline bool replacesBest(T v, T b, bool isMax, bool last) {
    if (b != b) return last && v != v;
    if (v != v) return true;
    return (isMax ? v > b : v < b) || (last && v == b);
}

void maxAndArgmax(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<bool> red = reducedAxes(c, x.ndim());
    Tensor mx;
    c.outputs[1] = argExtreme(c, x, red, true, false, &mx);
    c.outputs[0] = std::move(mx);
}

template <class T>
void softmaxLines(const T* x, T* y, std::int64_t outer, std::int64_t len, std::int64_t inner, bool logSm) {
    std::vector<T> tmp(static_cast<std::size_t>(len));
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            const T* xp = x + o * len * inner + i;
            T* yp = y + o * len * inner + i;
            T mx = -std::numeric_limits<T>::infinity();
            for (std::int64_t k = 0; k < len; ++k) mx = std::max(mx, xp[k * inner]);
            double sum = 0;
            for (std::int64_t k = 0; k < len; ++k) {
                const T e = std::exp(xp[k * inner] - mx);
                tmp[static_cast<std::size_t>(k)] = e;
                sum += e;
            }
            if (logSm) {
                const T ls = static_cast<T>(std::log(sum));
                for (std::int64_t k = 0; k < len; ++k) yp[k * inner] = xp[k * inner] - mx - ls;
            } else {
                const T inv = static_cast<T>(1.0 / sum);
                for (std::int64_t k = 0; k < len; ++k) yp[k * inner] = tmp[static_cast<std::size_t>(k)] * inv;
            }
        }
}

void softmaxImpl(KernelCall& c, bool logSm) {
    const Tensor& x = c.in(0);
    if (!isFloat(x.dtype())) c.fail("needs a float input, got " + x.typeStr());
    const int axis = x.ndim() == 0 ? 0 : normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + std::min(axis, x.ndim())));
    const std::int64_t len = x.ndim() ? x.dim(axis) : 1;
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + std::min(axis + 1, x.ndim()), x.shape().end()));
    Tensor y = c.reuseOrAllocate(0, x.dtype(), x.shape());
    if (x.dtype() == DType::Float32)
        softmaxLines<float>(x.data<float>(), y.data<float>(), outer, len, inner, logSm);
    else if (x.dtype() == DType::Float64)
        softmaxLines<double>(x.data<double>(), y.data<double>(), outer, len, inner, logSm);
    else
        c.fail("dtype " + std::string(dtypeName(x.dtype())) + " is not supported");
    c.outputs[0] = std::move(y);
}

// TopKOp / GpuTopKOp: k from input 1, outputs as the return_* flags say.
void topKOp(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() == 0) c.fail("needs a tensor of rank >= 1, got " + x.typeStr());
    TopKResult r = topK(c, x, normAxis(c, c.op().intAttr("axis", -1), x.ndim()), scalarInt(c, 1),
                        *parseDType(c.op().str("idx_dtype")));
    std::size_t o = 0;
    if (c.op().boolAttr("return_values", true)) c.outputs[o++] = std::move(r.values);
    if (c.op().boolAttr("return_indices", true)) c.outputs[o] = std::move(r.indices);
}

} // namespace

Tensor argExtreme(const KernelCall& c, const Tensor& x, const std::vector<bool>& red, bool isMax, bool last,
                  Tensor* extreme) {
    const std::vector<std::int64_t> st = stridesOf(x.shape());
    Shape kept, redShape;
    std::vector<std::int64_t> keptStride, redStride;
    std::int64_t n = 1;
    for (int a = 0; a < x.ndim(); ++a) {
        const auto i = static_cast<std::size_t>(a);
        (red[i] ? redShape : kept).push_back(x.dim(a));
        (red[i] ? redStride : keptStride).push_back(st[i]);
        if (red[i]) n *= x.dim(a);
    }
    Tensor idx = c.allocate(DType::Int64, kept);
    if (extreme) *extreme = c.allocate(x.dtype(), kept);
    if (idx.numel() == 0) return idx;
    if (n == 0)
        c.fail("cannot take the arg" + std::string(isMax ? "max" : "min") + " of an empty axis of " + x.typeStr());
    visitDType(x.dtype(), "argmax", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        std::int64_t* ip = idx.data<std::int64_t>();
        T* ep = extreme ? extreme->data<T>() : nullptr;
        std::vector<std::int64_t> ki(kept.size(), 0), ri(redShape.size(), 0);
        for (std::int64_t o = 0; o < idx.numel(); ++o) {
            std::int64_t off = 0;
            for (std::size_t d = 0; d < ki.size(); ++d) off += ki[d] * keptStride[d];
            std::int64_t best = 0;
            T b = xp[off];
            for (std::int64_t k = 1; k < n; ++k) {
                for (std::size_t d = ri.size(); d-- > 0;) { // next reduced element, row-major
                    off += redStride[d];
                    if (++ri[d] < redShape[d]) break;
                    off -= redStride[d] * redShape[d];
                    ri[d] = 0;
                }
                const T v = xp[off];
                if (replacesBest(v, b, isMax, last)) {
                    best = k;
                    b = v;
                }
            }
            std::fill(ri.begin(), ri.end(), 0);
            ip[o] = best;
            if (ep) ep[o] = b;
            for (std::size_t d = ki.size(); d-- > 0;) { // next kept position
                if (++ki[d] < kept[d]) break;
                ki[d] = 0;
            }
        }
    });
    return idx;
}

void registerReduceKernels(KernelRegistry& r) {
    addHostAndGpu(r, "CAReduce", "GpuCAReduceCuda", careduce);
    addHostAndGpu(r, "CumOp", "GpuCumOp", cumOp);
    addHostAndGpu(r, "MaxAndArgmax", "GpuMaxAndArgmax", maxAndArgmax);
    addHostAndGpu(r, "Softmax", "GpuSoftmax", [](KernelCall& c) { softmaxImpl(c, false); });
    addHostAndGpu(r, "LogSoftmax", "GpuLogSoftmax", [](KernelCall& c) { softmaxImpl(c, true); });
    addHostAndGpu(r, "TopKOp", "GpuTopKOp", topKOp);
}

} // namespace passlens::cpu
