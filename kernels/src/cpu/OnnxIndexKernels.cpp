// CPU kernels of the ONNX indexing (GatherElements, Scatter / ScatterElements, GatherND, ScatterND, OneHot,
// Compress, Trilu, Unique).
#include "OnnxCommon.h"

#include <cstring>
#include <map>
#include <numeric>

namespace passlens::cpu {

namespace {

using namespace onnx;

// ---------------------------------------------------------------- indexing

// An index along a dim of size n, negative counting from the end; fails when out of range.
std::int64_t wrapIndex(const KernelCall& c, std::int64_t i, std::int64_t n, int axis) {
    const std::int64_t w = i < 0 ? i + n : i;
    if (w < 0 || w >= n)
        c.fail("index " + std::to_string(i) + " out of bounds for axis " + std::to_string(axis) + " of size " +
               std::to_string(n));
    return w;
}

// Element offset in x of `pos` with the index along `axis` replaced by indices[e].
std::int64_t elementOffset(const KernelCall& c, const Tensor& x, const std::vector<std::int64_t>& strides,
                           const std::vector<std::int64_t>& pos, int axis, std::int64_t index) {
    std::int64_t off = 0;
    for (int a = 0; a < x.ndim(); ++a) {
        const std::int64_t p = a == axis ? wrapIndex(c, index, x.dim(a), a) : pos[static_cast<std::size_t>(a)];
        if (p >= x.dim(a)) c.fail("indices shape exceeds " + x.typeStr() + " on axis " + std::to_string(a));
        off += p * strides[static_cast<std::size_t>(a)];
    }
    return off;
}

// GatherElements: y[pos] = x[pos with axis index indices[pos]]; y has the shape of indices.
void onnxGatherElements(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    if (idx.ndim() != x.ndim()) c.fail("indices " + idx.typeStr() + " and data " + x.typeStr() + " differ in rank");
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    Tensor y = c.allocate(x.dtype(), idx.shape());
    const auto xs = stridesOf(x.shape());
    const std::size_t es = dtypeSize(x.dtype());
    std::vector<std::int64_t> pos(static_cast<std::size_t>(x.ndim()), 0);
    for (std::int64_t e = 0; e < idx.numel(); ++e, nextIndex(pos, idx.shape())) {
        const std::int64_t off = elementOffset(c, x, xs, pos, axis, idx.intAt(e));
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(e) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(off) * es, es);
    }
    c.outputs[0] = std::move(y);
}

// Combines an update into an element: ONNX `reduction` none, add, mul, max or min.
template <class T> void combine(T& dst, T v, const std::string& reduction) {
    if (reduction == "add")
        dst = static_cast<T>(dst + v);
    else if (reduction == "mul")
        dst = static_cast<T>(dst * v);
    else if (reduction == "max")
        dst = std::max(dst, v);
    else if (reduction == "min")
        dst = std::min(dst, v);
    else
        dst = v;
}

std::string reductionOf(const KernelCall& c) {
    std::string r = c.op().str("reduction");
    if (r.empty()) r = "none";
    if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
        c.fail("unsupported reduction '" + r + "'");
    return r;
}

// ScatterElements (and the older Scatter): a copy of data with updates[pos] written (or
// combined, per `reduction`) at pos with the axis index indices[pos].
void onnxScatterElements(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    const Tensor& upd = c.in(2);
    if (idx.shape() != upd.shape() || idx.ndim() != x.ndim())
        c.fail("indices " + idx.typeStr() + " and updates " + upd.typeStr() + " do not fit " + x.typeStr());
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    const std::string reduction = reductionOf(c);
    Tensor y = x.clone(c.ctx.pool.get());
    const auto xs = stridesOf(x.shape());
    visitDType(x.dtype(), "ScatterElements", [&](auto z) {
        using T = decltype(z);
        T* yp = y.data<T>();
        const T* up = upd.data<T>();
        std::vector<std::int64_t> pos(static_cast<std::size_t>(x.ndim()), 0);
        for (std::int64_t e = 0; e < idx.numel(); ++e, nextIndex(pos, idx.shape()))
            combine(yp[elementOffset(c, x, xs, pos, axis, idx.intAt(e))], up[e], reduction);
    });
    c.outputs[0] = std::move(y);
}

// The element offset in data of the index tuple `t` (k entries) over data dims [from, from+k),
// in units of the slice after them; fails for an out-of-range entry.
std::int64_t tupleOffset(const KernelCall& c, const Tensor& data, int from, const std::int64_t* t, std::int64_t k) {
    std::int64_t off = 0;
    for (std::int64_t j = 0; j < k; ++j) {
        const int a = from + static_cast<int>(j);
        off = off * data.dim(a) + wrapIndex(c, t[j], data.dim(a), a);
    }
    return off;
}

// GatherND (batch_dims b): y[batch, m] = data[batch, indices[batch, m, :]] (a slice).
void onnxGatherND(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> ind = intsOf(c.in(1));
    const Shape& is = c.in(1).shape();
    const int b = static_cast<int>(c.op().intAttr("batch_dims", 0));
    if (is.empty()) c.fail("indices must have rank >= 1");
    const std::int64_t k = is.back();
    if (b < 0 || b + k > x.ndim() || b >= static_cast<int>(is.size()))
        c.fail("indices " + c.in(1).typeStr() + " do not fit " + x.typeStr());
    Shape out(is.begin(), is.end() - 1);
    out.insert(out.end(), x.shape().begin() + b + k, x.shape().end());
    Tensor y = c.allocate(x.dtype(), out);
    const std::int64_t batches = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + b));
    const std::int64_t perBatch = shapeNumel(Shape(is.begin() + b, is.end() - 1));
    const std::int64_t slice = shapeNumel(Shape(x.shape().begin() + b + k, x.shape().end()));
    const std::int64_t batchSize = shapeNumel(Shape(x.shape().begin() + b, x.shape().end()));
    const std::size_t es = dtypeSize(x.dtype());
    for (std::int64_t bi = 0; bi < batches; ++bi)
        for (std::int64_t m = 0; m < perBatch; ++m) {
            const std::int64_t row = bi * perBatch + m;
            const std::int64_t off = bi * batchSize + tupleOffset(c, x, b, ind.data() + row * k, k) * slice;
            std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(row * slice) * es,
                        static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(off) * es,
                        static_cast<std::size_t>(slice) * es);
        }
    c.outputs[0] = std::move(y);
}

// ScatterND: a copy of data with the slices updates[m] written (or combined) at indices[m, :].
void onnxScatterND(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> ind = intsOf(c.in(1));
    const Shape& is = c.in(1).shape();
    const Tensor& upd = c.in(2);
    if (is.empty()) c.fail("indices must have rank >= 1");
    const std::int64_t k = is.back();
    if (k > x.ndim()) c.fail("indices " + c.in(1).typeStr() + " do not fit " + x.typeStr());
    const std::int64_t rows = shapeNumel(Shape(is.begin(), is.end() - 1));
    const std::int64_t slice = shapeNumel(Shape(x.shape().begin() + k, x.shape().end()));
    if (upd.numel() != rows * slice)
        c.fail("updates " + upd.typeStr() + " do not fit indices " + c.in(1).typeStr() + " and " + x.typeStr());
    const std::string reduction = reductionOf(c);
    Tensor y = x.clone(c.ctx.pool.get());
    visitDType(x.dtype(), "ScatterND", [&](auto z) {
        using T = decltype(z);
        T* yp = y.data<T>();
        const T* up = upd.data<T>();
        for (std::int64_t m = 0; m < rows; ++m) {
            const std::int64_t off = tupleOffset(c, x, 0, ind.data() + m * k, k) * slice;
            for (std::int64_t j = 0; j < slice; ++j) combine(yp[off + j], up[m * slice + j], reduction);
        }
    });
    c.outputs[0] = std::move(y);
}

// OneHot: indices (negative ones count from depth) to values[1] at the index and values[0]
// elsewhere, on a new axis of size depth at `axis`.
void onnxOneHot(KernelCall& c) {
    const Tensor& idx = c.in(0);
    const Tensor& values = c.in(2);
    const std::int64_t depth = static_cast<std::int64_t>(c.in(1).at(0));
    if (values.numel() != 2) c.fail("values must hold 2 elements, got " + values.typeStr());
    if (depth < 0) c.fail("depth " + std::to_string(depth) + " is negative");
    const int r = idx.ndim();
    std::int64_t axis = c.op().intAttr("axis", -1);
    if (axis < 0) axis += r + 1;
    if (axis < 0 || axis > r)
        c.fail("axis " + std::to_string(c.op().intAttr("axis", -1)) + " out of range for rank " +
               std::to_string(r + 1));
    Shape out = idx.shape();
    out.insert(out.begin() + axis, depth);
    Tensor y = c.allocate(values.dtype(), out);
    std::int64_t outer = 1, inner = 1;
    for (int a = 0; a < r; ++a) (a < axis ? outer : inner) *= idx.dim(a);
    const std::size_t es = dtypeSize(values.dtype());
    const char* vp = static_cast<const char*>(values.rawData());
    char* yp = static_cast<char*>(y.rawData());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t d = 0; d < depth; ++d)
            for (std::int64_t i = 0; i < inner; ++i) {
                std::int64_t v = static_cast<std::int64_t>(idx.at(o * inner + i));
                if (v < 0) v += depth;
                std::memcpy(yp + static_cast<std::size_t>((o * depth + d) * inner + i) * es, vp + (v == d ? es : 0),
                            es);
            }
    c.outputs[0] = std::move(y);
}

// Compress: the slices along `axis` (the flattened input without it) whose condition is true.
void onnxCompress(KernelCall& c) {
    Tensor x = c.in(0);
    const Tensor& cond = c.in(1);
    int axis = 0;
    if (c.op().has("axis"))
        axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    else
        x = x.reshaped({x.numel()});
    const AxisSplit s = splitAt(x, axis);
    std::vector<std::int64_t> keep;
    for (std::int64_t k = 0; k < std::min(s.n, cond.numel()); ++k)
        if (cond.at(k) != 0) keep.push_back(k);
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = static_cast<std::int64_t>(keep.size());
    Tensor y = c.allocate(x.dtype(), out);
    const std::size_t row = static_cast<std::size_t>(s.inner) * dtypeSize(x.dtype());
    for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::size_t j = 0; j < keep.size(); ++j)
            std::memcpy(static_cast<char*>(y.rawData()) + (static_cast<std::size_t>(o) * keep.size() + j) * row,
                        static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(o * s.n + keep[j]) * row, row);
    c.outputs[0] = std::move(y);
}

// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix of the last two
// axes, zeros elsewhere; k from the optional input 1.
void onnxTrilu(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs rank >= 2, got " + x.typeStr());
    const std::int64_t k = onnxIn(c, 1) ? onnxIn(c, 1)->intAt(0) : 0;
    const bool upper = c.op().intAttr("upper", 1) != 0;
    const std::int64_t rows = x.dim(x.ndim() - 2), cols = x.dim(x.ndim() - 1);
    Tensor y = Tensor::zeros(x.dtype(), x.shape(), c.ctx.pool.get());
    const std::size_t es = dtypeSize(x.dtype());
    const std::int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
    for (std::int64_t m = 0; m < mats; ++m)
        for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = 0; j < cols; ++j)
                if (upper ? j - i >= k : j - i <= k) {
                    const std::size_t e = static_cast<std::size_t>((m * rows + i) * cols + j) * es;
                    std::memcpy(static_cast<char*>(y.rawData()) + e, static_cast<const char*>(x.rawData()) + e, es);
                }
    c.outputs[0] = std::move(y);
}

// Unique: the distinct elements (or slices along `axis`), sorted or in order of first
// occurrence, with the optional outputs indices, inverse_indices and counts (int64). Values are
// compared as V: double, or for integers int64 / uint64, exact beyond 2^53.
template <class V> void uniqueOf(KernelCall& c, const Tensor& x, int axis, const std::vector<V>& xv) {
    const AxisSplit s = splitAt(x, axis);
    auto slice = [&](std::int64_t k) {
        std::vector<V> v;
        for (std::int64_t o = 0; o < s.outer; ++o)
            for (std::int64_t i = 0; i < s.inner; ++i)
                v.push_back(xv[static_cast<std::size_t>((o * s.n + k) * s.inner + i)]);
        return v;
    };
    std::vector<std::vector<V>> slices;
    for (std::int64_t k = 0; k < s.n; ++k) slices.push_back(slice(k));
    std::vector<std::int64_t> firsts; // first occurrence of each distinct slice, in order of appearance
    std::vector<std::int64_t> inverse(static_cast<std::size_t>(s.n));
    std::map<std::vector<V>, std::int64_t> seen;
    for (std::int64_t k = 0; k < s.n; ++k) {
        auto [it, fresh] = seen.emplace(slices[static_cast<std::size_t>(k)], static_cast<std::int64_t>(firsts.size()));
        if (fresh) firsts.push_back(k);
        inverse[static_cast<std::size_t>(k)] = it->second;
    }
    std::vector<std::int64_t> order(firsts.size());
    std::iota(order.begin(), order.end(), 0);
    if (c.op().intAttr("sorted", 1))
        std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
            return slices[static_cast<std::size_t>(firsts[static_cast<std::size_t>(a)])] <
                   slices[static_cast<std::size_t>(firsts[static_cast<std::size_t>(b)])];
        });
    std::vector<std::int64_t> rank(order.size());
    for (std::size_t r = 0; r < order.size(); ++r)
        rank[static_cast<std::size_t>(order[r])] = static_cast<std::int64_t>(r);
    const auto u = static_cast<std::int64_t>(order.size());
    std::vector<V> yv(static_cast<std::size_t>(s.outer * u * s.inner));
    std::vector<double> idx, inv, counts(static_cast<std::size_t>(u));
    for (std::int64_t r = 0; r < u; ++r) {
        const std::int64_t k = firsts[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])];
        idx.push_back(static_cast<double>(k));
        for (std::int64_t o = 0; o < s.outer; ++o)
            for (std::int64_t i = 0; i < s.inner; ++i)
                yv[static_cast<std::size_t>((o * u + r) * s.inner + i)] =
                    xv[static_cast<std::size_t>((o * s.n + k) * s.inner + i)];
    }
    for (std::int64_t k = 0; k < s.n; ++k) {
        const std::int64_t r = rank[static_cast<std::size_t>(inverse[static_cast<std::size_t>(k)])];
        inv.push_back(static_cast<double>(r));
        counts[static_cast<std::size_t>(r)] += 1;
    }
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = u;
    Tensor y = c.allocate(x.dtype(), out);
    convertElements(yv.data(),
                    std::is_same_v<V, double>          ? DType::Float64
                    : std::is_same_v<V, std::uint64_t> ? DType::UInt64
                                                       : DType::Int64,
                    y.rawData(), x.dtype(), y.numel());
    c.outputs[0] = std::move(y);
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, idx, DType::Int64, {u});
    if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, inv, DType::Int64, {s.n});
    if (c.outputs.size() > 3) c.outputs[3] = storeDoubles(c, counts, DType::Int64, {u});
}

void onnxUnique(KernelCall& c) {
    Tensor x = c.in(0);
    const bool hasAxis = c.op().has("axis");
    const int axis = hasAxis ? normAxis(c, c.op().intAttr("axis", 0), x.ndim()) : 0;
    if (!hasAxis) x = x.reshaped({x.numel()});
    if (!isInteger(x.dtype())) return uniqueOf(c, x, axis, x.toDoubles());
    const DType wide = x.dtype() == DType::UInt64 ? DType::UInt64 : DType::Int64;
    const auto read = [&](auto zero) {
        std::vector<decltype(zero)> v(static_cast<std::size_t>(x.numel()));
        convertElements(x.rawData(), x.dtype(), v.data(), wide, x.numel());
        return v;
    };
    if (wide == DType::UInt64)
        uniqueOf(c, x, axis, read(std::uint64_t{}));
    else
        uniqueOf(c, x, axis, read(std::int64_t{}));
}

} // namespace

void registerOnnxIndexKernels(KernelRegistry& r) {
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"GatherElements", onnxGatherElements},
        {"ScatterElements", onnxScatterElements},
        {"Scatter", onnxScatterElements},
        {"GatherND", onnxGatherND},
        {"ScatterND", onnxScatterND},
        {"OneHot", onnxOneHot},
        {"Compress", onnxCompress},
        {"Trilu", onnxTrilu},
        {"Unique", onnxUnique},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
