// CPU kernels of the ONNX shapes and data movement (Identity, Shape, Transpose, (Un)Squeeze, Reshape, Flatten,
// Concat, Slice, Pad, Gather, Expand, Size, Range, Tile, DepthToSpace / SpaceToDepth, EyeLike,
// CastLike, Split, NonZero, ReverseSequence, Upsample).
#include "OnnxCommon.h"

#include <cmath>
#include <cstring>
#include <numeric>

namespace passlens::cpu {

namespace {

using namespace onnx;

// ---------------------------------------------------------------- shapes
void onnxIdentity(KernelCall& c) { c.outputs[0] = c.in(0); }

void onnxShape(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    std::int64_t start = c.op().intAttr("start", 0), end = c.op().intAttr("end", nd);
    if (start < 0) start += nd;
    if (end < 0) end += nd;
    start = std::clamp<std::int64_t>(start, 0, nd);
    end = std::clamp<std::int64_t>(end, 0, nd);
    const std::int64_t n = std::max<std::int64_t>(0, end - start);
    Tensor y = c.allocate(DType::Int64, {n});
    for (std::int64_t i = 0; i < n; ++i) y.data<std::int64_t>()[i] = x.dim(static_cast<int>(start + i));
    c.outputs[0] = std::move(y);
}

void onnxTranspose(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    std::vector<std::int64_t> perm = attrInts(c, "perm");
    if (perm.empty())
        for (int i = 0; i < nd; ++i) perm.push_back(nd - 1 - i);
    if (static_cast<int>(perm.size()) != nd)
        c.fail("perm has " + std::to_string(perm.size()) + " entries for " + x.typeStr());
    const auto xs = stridesOf(x.shape());
    Shape out;
    std::vector<std::int64_t> st;
    for (auto p : perm) {
        const int a = normAxis(c, p, nd);
        out.push_back(x.dim(a));
        st.push_back(xs[static_cast<std::size_t>(a)]);
    }
    Tensor y = c.allocate(x.dtype(), out);
    stridedCopy(x.rawData(), st, y.rawData(), out, dtypeSize(x.dtype()));
    c.outputs[0] = std::move(y);
}

void onnxUnsqueeze(KernelCall& c) {
    const Tensor& x = c.in(0);
    const auto axes = axesOf(c, 1);
    const int nd = x.ndim() + static_cast<int>(axes.size());
    std::vector<bool> isNew(static_cast<std::size_t>(nd), false);
    for (auto a : axes) isNew[static_cast<std::size_t>(normAxis(c, a, nd))] = true;
    Shape out;
    int src = 0;
    for (int i = 0; i < nd; ++i) out.push_back(isNew[static_cast<std::size_t>(i)] ? 1 : x.dim(src++));
    c.outputs[0] = x.reshaped(out);
}

void onnxSqueeze(KernelCall& c) {
    const Tensor& x = c.in(0);
    auto axes = axesOf(c, 1);
    std::vector<bool> drop(static_cast<std::size_t>(x.ndim()), false);
    if (axes.empty()) {
        for (int i = 0; i < x.ndim(); ++i) drop[static_cast<std::size_t>(i)] = x.dim(i) == 1;
    } else {
        for (auto a : axes) {
            const int n = normAxis(c, a, x.ndim());
            if (x.dim(n) != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of " + x.typeStr());
            drop[static_cast<std::size_t>(n)] = true;
        }
    }
    Shape out;
    for (int i = 0; i < x.ndim(); ++i)
        if (!drop[static_cast<std::size_t>(i)]) out.push_back(x.dim(i));
    c.outputs[0] = x.reshaped(out);
}

void onnxReshape(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<std::int64_t> s = intsOf(needIn(c, 1));
    const bool allowZero = c.op().intAttr("allowzero", 0) != 0;
    int minus = -1;
    std::int64_t prod = 1;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == 0 && !allowZero) {
            if (static_cast<int>(i) >= x.ndim())
                c.fail("shape copies dim " + std::to_string(i) + " that " + x.typeStr() + " does not have");
            s[i] = x.dim(static_cast<int>(i));
        }
        if (s[i] == -1) {
            if (minus >= 0) c.fail("shape has more than one -1");
            minus = static_cast<int>(i);
        } else {
            prod *= s[i];
        }
    }
    if (minus >= 0) {
        if (prod == 0 || x.numel() % prod) c.fail("cannot reshape " + x.typeStr() + " to " + shapeStr(s));
        s[static_cast<std::size_t>(minus)] = x.numel() / prod;
    }
    c.outputs[0] = x.reshaped(s);
}

void onnxFlatten(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::int64_t axis = c.op().intAttr("axis", 1);
    if (axis < 0) axis += x.ndim();
    std::int64_t a = 1, b = 1;
    for (int i = 0; i < x.ndim(); ++i) (i < axis ? a : b) *= x.dim(i);
    c.outputs[0] = x.reshaped({a, b});
}

void onnxConcat(KernelCall& c) {
    const Tensor& x0 = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x0.ndim());
    const DType dt = x0.dtype();
    Shape out = x0.shape();
    out[static_cast<std::size_t>(axis)] = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = c.in(i);
        if (t.ndim() != x0.ndim())
            c.fail("input " + std::to_string(i) + " " + t.typeStr() + " has another rank than " + x0.typeStr());
        for (int a = 0; a < t.ndim(); ++a)
            if (a != axis && t.dim(a) != x0.dim(a))
                c.fail("input " + std::to_string(i) + " " + t.typeStr() + " does not match " + x0.typeStr());
        out[static_cast<std::size_t>(axis)] += t.dim(axis);
    }
    Tensor y = c.allocate(dt, out);
    const std::int64_t outer = shapeNumel(Shape(out.begin(), out.begin() + axis));
    const std::int64_t rowOut = shapeNumel(Shape(out.begin() + axis, out.end()));
    const std::size_t es = dtypeSize(dt);
    std::int64_t col = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = c.in(i);
        const std::int64_t chunk = shapeNumel(Shape(t.shape().begin() + axis, t.shape().end()));
        for (std::int64_t o = 0; o < outer; ++o)
            convertElements(
                static_cast<const char*>(t.rawData()) + static_cast<std::size_t>(o * chunk) * dtypeSize(t.dtype()),
                t.dtype(), static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o * rowOut + col) * es, dt,
                chunk);
        col += chunk;
    }
    c.outputs[0] = std::move(y);
}

void onnxSlice(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<std::int64_t> starts, ends, axes, steps;
    if (c.op().has("starts")) {
        starts = attrInts(c, "starts");
        ends = attrInts(c, "ends");
        axes = attrInts(c, "axes");
    } else {
        starts = intsOf(needIn(c, 1));
        ends = intsOf(needIn(c, 2));
        if (const Tensor* t = onnxIn(c, 3)) axes = intsOf(*t);
        if (const Tensor* t = onnxIn(c, 4)) steps = intsOf(*t);
    }
    if (axes.empty())
        for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        c.fail("starts, ends, axes and steps have different lengths");
    const int nd = x.ndim();
    const auto xs = stridesOf(x.shape());
    std::vector<std::int64_t> st(xs.begin(), xs.end());
    Shape out = x.shape();
    std::int64_t base = 0;
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const int a = normAxis(c, axes[k], nd);
        const std::int64_t n = x.dim(a), step = steps[k];
        if (step == 0) c.fail("slice step cannot be 0");
        std::int64_t s = starts[k], e = ends[k];
        if (s < 0) s += n;
        if (e < 0) e += n;
        if (step > 0) {
            s = std::clamp<std::int64_t>(s, 0, n);
            e = std::clamp<std::int64_t>(e, 0, n);
        } else {
            s = std::clamp<std::int64_t>(s, 0, n - 1);
            e = std::clamp<std::int64_t>(e, -1, n - 1);
        }
        const std::int64_t len = step > 0 ? std::max<std::int64_t>(0, (e - s + step - 1) / step)
                                          : std::max<std::int64_t>(0, (s - e - step - 1) / (-step));
        out[static_cast<std::size_t>(a)] = len;
        if (len > 0) base += s * xs[static_cast<std::size_t>(a)];
        st[static_cast<std::size_t>(a)] = step * xs[static_cast<std::size_t>(a)];
    }
    Tensor y = c.allocate(x.dtype(), out);
    if (y.numel() > 0) {
        const std::size_t es = dtypeSize(x.dtype());
        stridedCopy(static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(base) * es, st, y.rawData(), out,
                    es);
    }
    c.outputs[0] = std::move(y);
}

void onnxPad(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    std::vector<std::int64_t> pads = c.op().has("pads") ? attrInts(c, "pads") : intsOf(needIn(c, 1));
    std::vector<std::int64_t> axes;
    if (const Tensor* t = onnxIn(c, 3)) axes = intsOf(*t);
    if (axes.empty())
        for (int i = 0; i < nd; ++i) axes.push_back(i);
    if (pads.size() != 2 * axes.size())
        c.fail("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<std::int64_t> lo(static_cast<std::size_t>(nd), 0), hi(static_cast<std::size_t>(nd), 0);
    for (std::size_t k = 0; k < axes.size(); ++k) {
        const int a = normAxis(c, axes[k], nd);
        lo[static_cast<std::size_t>(a)] = pads[k];
        hi[static_cast<std::size_t>(a)] = pads[k + axes.size()];
    }
    const std::string mode = c.op().has("mode") ? c.op().str("mode") : "constant";
    double value = c.op().floatAttr("value", 0.0);
    if (const Tensor* t = onnxIn(c, 2); t && t->numel() > 0) value = t->at(0);
    Shape out;
    for (int a = 0; a < nd; ++a) {
        const std::int64_t d = x.dim(a) + lo[static_cast<std::size_t>(a)] + hi[static_cast<std::size_t>(a)];
        if (d < 0) c.fail("pads make axis " + std::to_string(a) + " negative");
        out.push_back(d);
    }
    // per axis: source index of every output index, or -1 for the constant
    std::vector<std::vector<std::int64_t>> map(static_cast<std::size_t>(nd));
    for (int a = 0; a < nd; ++a) {
        const std::int64_t n = x.dim(a);
        auto& m = map[static_cast<std::size_t>(a)];
        m.resize(static_cast<std::size_t>(out[static_cast<std::size_t>(a)]));
        for (std::int64_t o = 0; o < out[static_cast<std::size_t>(a)]; ++o) {
            std::int64_t i = o - lo[static_cast<std::size_t>(a)];
            if (i >= 0 && i < n) {
                m[static_cast<std::size_t>(o)] = i;
                continue;
            }
            if (mode == "constant" || n == 0) {
                m[static_cast<std::size_t>(o)] = -1;
            } else if (mode == "edge") {
                m[static_cast<std::size_t>(o)] = std::clamp<std::int64_t>(i, 0, n - 1);
            } else if (mode == "reflect") {
                if (n == 1) {
                    m[static_cast<std::size_t>(o)] = 0;
                    continue;
                }
                const std::int64_t period = 2 * (n - 1);
                i = ((i % period) + period) % period;
                m[static_cast<std::size_t>(o)] = i < n ? i : period - i;
            } else if (mode == "wrap") {
                m[static_cast<std::size_t>(o)] = ((i % n) + n) % n;
            } else {
                c.fail("unsupported pad mode '" + mode + "'");
            }
        }
    }
    Tensor y = c.allocate(x.dtype(), out);
    const std::int64_t total = y.numel();
    if (total > 0) {
        const auto xs = stridesOf(x.shape());
        const std::size_t es = dtypeSize(x.dtype());
        std::vector<char> fill(es);
        convertElements(&value, DType::Float64, fill.data(), x.dtype(), 1);
        std::vector<std::int64_t> idx(static_cast<std::size_t>(nd), 0);
        char* yp = static_cast<char*>(y.rawData());
        const char* xp = static_cast<const char*>(x.rawData());
        for (std::int64_t e = 0; e < total; ++e) {
            std::int64_t off = 0;
            bool constant = false;
            for (int a = 0; a < nd; ++a) {
                const std::int64_t s =
                    map[static_cast<std::size_t>(a)][static_cast<std::size_t>(idx[static_cast<std::size_t>(a)])];
                if (s < 0) {
                    constant = true;
                    break;
                }
                off += s * xs[static_cast<std::size_t>(a)];
            }
            std::memcpy(yp + static_cast<std::size_t>(e) * es,
                        constant ? fill.data() : xp + static_cast<std::size_t>(off) * es, es);
            for (int a = nd; a-- > 0;) {
                if (++idx[static_cast<std::size_t>(a)] < out[static_cast<std::size_t>(a)]) break;
                idx[static_cast<std::size_t>(a)] = 0;
            }
        }
    }
    c.outputs[0] = std::move(y);
}

void onnxGather(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    Shape out(x.shape().begin(), x.shape().begin() + axis);
    out.insert(out.end(), idx.shape().begin(), idx.shape().end());
    out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
    Tensor y = c.allocate(x.dtype(), out);
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + axis + 1, x.shape().end()));
    const std::int64_t n = x.dim(axis), m = idx.numel();
    const std::size_t es = dtypeSize(x.dtype()), row = static_cast<std::size_t>(inner) * es;
    for (std::int64_t k = 0; k < m; ++k) {
        std::int64_t i = idx.intAt(k);
        if (i < 0) i += n;
        if (i < 0 || i >= n)
            c.fail("index " + std::to_string(idx.intAt(k)) + " out of bounds for axis " + std::to_string(axis) +
                   " of " + x.typeStr());
        for (std::int64_t o = 0; o < outer; ++o)
            std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o * m + k) * row,
                        static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(o * n + i) * row, row);
    }
    c.outputs[0] = std::move(y);
}

void onnxExpand(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> s = intsOf(needIn(c, 1));
    const int r = std::max<int>(x.ndim(), static_cast<int>(s.size()));
    Shape out(static_cast<std::size_t>(r), 1);
    for (int i = 0; i < r; ++i) {
        const int xi = i - (r - x.ndim()), si = i - (r - static_cast<int>(s.size()));
        const std::int64_t a = xi >= 0 ? x.dim(xi) : 1, b = si >= 0 ? s[static_cast<std::size_t>(si)] : 1;
        if (a != b && a != 1 && b != 1) c.fail("cannot expand " + x.typeStr() + " to " + shapeStr(s));
        out[static_cast<std::size_t>(i)] = a == 1 ? b : a;
    }
    c.outputs[0] = broadcastToShape(c, x, out, x.dtype());
}

// ---------------------------------------------------------------- shapes and generators

void onnxSize(KernelCall& c) {
    Tensor y = c.allocate(DType::Int64, {});
    y.data<std::int64_t>()[0] = c.in(0).numel();
    c.outputs[0] = std::move(y);
}

// Range: start, start + delta, ... below limit (above it for a negative delta), dtype of start.
// Range of integers in 64-bit (128-bit for the count) arithmetic: exact beyond 2^53.
void integerRange(KernelCall& c) {
    const Tensor& start = c.in(0);
    const std::int64_t s = start.intAt(0), l = c.in(1).intAt(0), d = c.in(2).intAt(0);
    if (d == 0) c.fail("delta is 0");
    const __int128 span = d > 0 ? __int128(l) - s : __int128(s) - l, step = d > 0 ? __int128(d) : -__int128(d);
    const __int128 count = span > 0 ? (span + step - 1) / step : 0; // ceil((l - s) / d), at least 0
    if (count > 1000000000)
        c.fail("Range of " + std::to_string(static_cast<long long>(count)) + " elements is too large");
    const auto n = static_cast<std::int64_t>(count);
    Tensor y = c.allocate(start.dtype(), {n});
    visitDType(start.dtype(), "Range", [&](auto z) {
        using T = decltype(z);
        T* yp = y.data<T>();
        for (std::int64_t i = 0; i < n; ++i) // s + i * d lies in [s, l); the product may not fit alone
            yp[i] = static_cast<T>(static_cast<std::uint64_t>(s) +
                                   static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(d));
    });
    c.outputs[0] = std::move(y);
}

void onnxRange(KernelCall& c) {
    const Tensor& start = c.in(0);
    if (isInteger(start.dtype())) return integerRange(c);
    const double s = start.at(0), l = c.in(1).at(0), d = c.in(2).at(0);
    if (d == 0) c.fail("delta is 0");
    const double count = std::max(std::ceil((l - s) / d), 0.0);
    if (!(count <= 1e9)) c.fail("Range of " + std::to_string(count) + " elements is too large");
    const auto n = static_cast<std::int64_t>(count);
    Tensor y = c.allocate(start.dtype(), {n});
    visitDType(start.dtype(), "Range", [&](auto z) {
        using T = decltype(z);
        const T s0 = static_cast<T>(s), d0 = static_cast<T>(d);
        T* yp = y.data<T>();
        for (std::int64_t i = 0; i < n; ++i) yp[i] = static_cast<T>(s0 + static_cast<T>(i) * d0);
    });
    c.outputs[0] = std::move(y);
}

// x copied into a new tensor of shape `view` (x's elements reinterpreted) with its axes
// permuted by `perm` (DepthToSpace, SpaceToDepth).
Tensor permutedCopy(const KernelCall& c, const Tensor& x, const Shape& view, const std::vector<int>& perm) {
    const auto vs = stridesOf(view);
    Shape out;
    std::vector<std::int64_t> st;
    for (int p : perm) {
        out.push_back(view[static_cast<std::size_t>(p)]);
        st.push_back(vs[static_cast<std::size_t>(p)]);
    }
    Tensor y = c.allocate(x.dtype(), out);
    stridedCopy(x.rawData(), st, y.rawData(), out, dtypeSize(x.dtype()));
    return y;
}

// A tensor of shape `out` whose element at position p is x's element at (src(a, p[a]))_a (each
// axis mapped on its own: Tile, Upsample).
template <class F> Tensor gatherPerAxis(const KernelCall& c, const Tensor& x, const Shape& out, F src) {
    Tensor y = c.allocate(x.dtype(), out);
    const auto xs = stridesOf(x.shape());
    const std::size_t es = dtypeSize(x.dtype());
    std::vector<std::int64_t> pos(out.size(), 0);
    for (std::int64_t e = 0; e < y.numel(); ++e, nextIndex(pos, out)) {
        std::int64_t off = 0;
        for (int a = 0; a < x.ndim(); ++a)
            off += src(a, pos[static_cast<std::size_t>(a)]) * xs[static_cast<std::size_t>(a)];
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(e) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(off) * es, es);
    }
    return y;
}

void onnxTile(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> reps = intsOf(needIn(c, 1));
    if (static_cast<int>(reps.size()) != x.ndim())
        c.fail("repeats has " + std::to_string(reps.size()) + " entries for " + x.typeStr());
    Shape out;
    for (int a = 0; a < x.ndim(); ++a) {
        if (reps[static_cast<std::size_t>(a)] < 0) c.fail("negative repeat");
        out.push_back(x.dim(a) * reps[static_cast<std::size_t>(a)]);
    }
    c.outputs[0] = gatherPerAxis(c, x, out, [&x](int a, std::int64_t p) { return p % x.dim(a); });
}

// DepthToSpace (mode DCR or CRD) and SpaceToDepth on NCHW, as the ONNX definitions' reshapes
// and transposes.
void onnxDepthToSpace(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::int64_t b = c.op().intAttr("blocksize", 0);
    if (x.ndim() != 4 || b <= 0 || x.dim(1) % (b * b))
        c.fail("needs an NCHW input with channels divisible by blocksize^2, got " + x.typeStr());
    const std::int64_t n = x.dim(0), ch = x.dim(1), h = x.dim(2), w = x.dim(3);
    const bool crd = c.op().str("mode") == "CRD";
    Tensor y = crd ? permutedCopy(c, x, {n, ch / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3})
                   : permutedCopy(c, x, {n, b, b, ch / (b * b), h, w}, {0, 3, 4, 1, 5, 2});
    c.outputs[0] = y.reshaped({n, ch / (b * b), h * b, w * b});
}

void onnxSpaceToDepth(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::int64_t b = c.op().intAttr("blocksize", 0);
    if (x.ndim() != 4 || b <= 0 || x.dim(2) % b || x.dim(3) % b)
        c.fail("needs an NCHW input with H and W divisible by blocksize, got " + x.typeStr());
    const std::int64_t n = x.dim(0), ch = x.dim(1), h = x.dim(2), w = x.dim(3);
    Tensor y = permutedCopy(c, x, {n, ch, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4});
    c.outputs[0] = y.reshaped({n, ch * b * b, h / b, w / b});
}

// EyeLike: ones on diagonal k of a matrix shaped like input 0; dtype attribute or input's.
void onnxEyeLike(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 2) c.fail("needs a 2-d input, got " + x.typeStr());
    DType dt = x.dtype();
    if (c.op().has("dtype")) {
        const auto d = onnxDType(c.op().intAttr("dtype", 1));
        if (!d) c.fail("unsupported dtype " + std::to_string(c.op().intAttr("dtype", 1)));
        dt = *d;
    }
    const std::int64_t k = c.op().intAttr("k", 0);
    Tensor y = Tensor::zeros(dt, x.shape(), c.ctx.pool.get());
    const double one = 1;
    const std::size_t es = dtypeSize(dt);
    for (std::int64_t i = 0; i < x.dim(0); ++i)
        if (i + k >= 0 && i + k < x.dim(1))
            convertElements(&one, DType::Float64,
                            static_cast<char*>(y.rawData()) + static_cast<std::size_t>(i * x.dim(1) + i + k) * es, dt,
                            1);
    c.outputs[0] = std::move(y);
}

void onnxCastLike(KernelCall& c) {
    const Tensor& x = c.in(0);
    const DType to = c.in(1).dtype();
    Tensor y = c.allocate(to, x.shape());
    convertElements(x.rawData(), x.dtype(), y.rawData(), to, y.numel());
    c.outputs[0] = std::move(y);
}

// Split along `axis`: sizes from input 1 (opset 13) or the `split` attribute, else equal parts
// (the last one smaller, opset 18) over the node's outputs.
void onnxSplit(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    std::vector<std::int64_t> sizes = attrInts(c, "split");
    if (const Tensor* t = onnxIn(c, 1)) sizes = intsOf(*t);
    const auto nOut = static_cast<std::int64_t>(c.outputs.size());
    const std::int64_t dim = x.dim(axis);
    if (sizes.empty()) {
        const std::int64_t part = (dim + nOut - 1) / nOut;
        for (std::int64_t i = 0; i < nOut; ++i) sizes.push_back(std::clamp<std::int64_t>(dim - i * part, 0, part));
    }
    if (static_cast<std::int64_t>(sizes.size()) != nOut ||
        std::accumulate(sizes.begin(), sizes.end(), std::int64_t(0)) != dim)
        c.fail("split sizes " + shapeStr(sizes) + " do not divide axis " + std::to_string(axis) + " of " + x.typeStr() +
               " into " + std::to_string(nOut) + " outputs");
    const AxisSplit s = splitAt(x, axis);
    const std::size_t es = dtypeSize(x.dtype());
    std::int64_t from = 0;
    for (std::int64_t i = 0; i < nOut; ++i) {
        Shape out = x.shape();
        out[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(i)];
        Tensor y = c.allocate(x.dtype(), out);
        const std::size_t chunk = static_cast<std::size_t>(sizes[static_cast<std::size_t>(i)] * s.inner) * es;
        for (std::int64_t o = 0; o < s.outer; ++o)
            std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o) * chunk,
                        static_cast<const char*>(x.rawData()) +
                            static_cast<std::size_t>((o * s.n + from) * s.inner) * es,
                        chunk);
        from += sizes[static_cast<std::size_t>(i)];
        c.outputs[static_cast<std::size_t>(i)] = std::move(y);
    }
}

// NonZero: int64 [rank, count] coordinates of the non-zero elements, in row-major order.
void onnxNonZero(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<std::int64_t> hits;
    for (std::int64_t e = 0; e < x.numel(); ++e)
        if (x.at(e) != 0) hits.push_back(e);
    const int r = x.ndim();
    const auto n = static_cast<std::int64_t>(hits.size());
    Tensor y = c.allocate(DType::Int64, {r, n});
    const auto xs = stridesOf(x.shape());
    for (std::int64_t j = 0; j < n; ++j)
        for (int a = 0; a < r; ++a)
            y.data<std::int64_t>()[a * n + j] =
                hits[static_cast<std::size_t>(j)] / xs[static_cast<std::size_t>(a)] % x.dim(a);
    c.outputs[0] = std::move(y);
}

// ReverseSequence: for batch b, the first sequence_lens[b] steps along time_axis reversed.
void onnxReverseSequence(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> lens = intsOf(c.in(1));
    const int batchAxis = normAxis(c, c.op().intAttr("batch_axis", 1), x.ndim()),
              timeAxis = normAxis(c, c.op().intAttr("time_axis", 0), x.ndim());
    if (static_cast<std::int64_t>(lens.size()) != x.dim(batchAxis))
        c.fail("sequence_lens must have one entry per batch");
    Tensor y = c.allocate(x.dtype(), x.shape());
    const auto xs = stridesOf(x.shape());
    const std::size_t es = dtypeSize(x.dtype());
    std::vector<std::int64_t> pos(static_cast<std::size_t>(x.ndim()), 0);
    for (std::int64_t e = 0; e < x.numel(); ++e, nextIndex(pos, x.shape())) {
        const std::int64_t t = pos[static_cast<std::size_t>(timeAxis)],
                           len = lens[static_cast<std::size_t>(pos[static_cast<std::size_t>(batchAxis)])];
        const std::int64_t src = e + (t < len ? (len - 1 - 2 * t) * xs[static_cast<std::size_t>(timeAxis)] : 0);
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(e) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(src) * es, es);
    }
    c.outputs[0] = std::move(y);
}

// Upsample (opset 7-9, deprecated) in nearest mode: output dim floor(dim * scale), source index
// floor(i / scale).
void onnxUpsample(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (c.op().str("mode") == "linear") c.fail("Upsample mode 'linear' is not supported (use Resize)");
    std::vector<double> scales;
    if (const Tensor* s = onnxIn(c, 1))
        scales = s->toDoubles();
    else if (c.op().has("scales"))
        for (const auto& e : c.op().attrs()["scales"]) scales.push_back(e.get<double>());
    if (static_cast<int>(scales.size()) != x.ndim()) c.fail("scales must have one entry per axis of " + x.typeStr());
    Shape out;
    for (int a = 0; a < x.ndim(); ++a)
        out.push_back(
            static_cast<std::int64_t>(std::floor(static_cast<double>(x.dim(a)) * scales[static_cast<std::size_t>(a)])));
    c.outputs[0] = gatherPerAxis(c, x, out, [&](int a, std::int64_t p) {
        return std::min(
            static_cast<std::int64_t>(std::floor(static_cast<double>(p) / scales[static_cast<std::size_t>(a)])),
            x.dim(a) - 1);
    });
}

} // namespace

void registerOnnxShapeKernels(KernelRegistry& r) {
    r.add("OnnxIdentity", Backend::Cpu, onnxIdentity);
    r.add("OnnxShape", Backend::Cpu, onnxShape);
    r.add("OnnxTranspose", Backend::Cpu, onnxTranspose);
    r.add("OnnxUnsqueeze", Backend::Cpu, onnxUnsqueeze);
    r.add("OnnxSqueeze", Backend::Cpu, onnxSqueeze);
    r.add("OnnxReshape", Backend::Cpu, onnxReshape);
    r.add("OnnxFlatten", Backend::Cpu, onnxFlatten);
    r.add("OnnxConcat", Backend::Cpu, onnxConcat);
    r.add("OnnxSlice", Backend::Cpu, onnxSlice);
    r.add("OnnxPad", Backend::Cpu, onnxPad);
    r.add("OnnxGather", Backend::Cpu, onnxGather);
    r.add("OnnxExpand", Backend::Cpu, onnxExpand);
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"Size", onnxSize},
        {"Range", onnxRange},
        {"Tile", onnxTile},
        {"DepthToSpace", onnxDepthToSpace},
        {"SpaceToDepth", onnxSpaceToDepth},
        {"EyeLike", onnxEyeLike},
        {"CastLike", onnxCastLike},
        {"Split", onnxSplit},
        {"NonZero", onnxNonZero},
        {"ReverseSequence", onnxReverseSequence},
        {"Upsample", onnxUpsample},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
