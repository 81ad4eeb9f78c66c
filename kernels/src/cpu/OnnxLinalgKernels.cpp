// CPU kernels of the ONNX linear algebra and quantization (MatMul, Det, Einsum, QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, QLinearMatMul).
#include "Gemm.h"
#include "OnnxCommon.h"

#include <cctype>
#include <cmath>
#include <map>

namespace passlens::cpu {

namespace {

using namespace onnx;

void onnxMatMul(KernelCall& c) {
    Tensor a = c.in(0), b = c.in(1);
    if (a.dtype() != b.dtype()) c.fail("inputs have different dtypes");
    const bool aVec = a.ndim() == 1, bVec = b.ndim() == 1;
    if (aVec) a = a.reshaped({1, a.dim(0)});
    if (bVec) b = b.reshaped({b.dim(0), 1});
    const int r = std::max(a.ndim(), b.ndim());
    auto pad = [&](Tensor& t) {
        if (t.ndim() < r) {
            Shape s(static_cast<std::size_t>(r - t.ndim()), 1);
            s.insert(s.end(), t.shape().begin(), t.shape().end());
            t = t.reshaped(s);
        }
    };
    pad(a);
    pad(b);
    const std::int64_t M = a.dim(r - 2), K = a.dim(r - 1), N = b.dim(r - 1);
    if (b.dim(r - 2) != K) c.fail("inner dimensions of " + c.in(0).typeStr() + " and " + c.in(1).typeStr() + " differ");
    Shape bs;
    for (int i = 0; i < r - 2; ++i) {
        const std::int64_t x = a.dim(i), y = b.dim(i);
        if (x != y && x != 1 && y != 1) c.fail("batch dims do not broadcast");
        bs.push_back(x == 1 ? y : x);
    }
    Shape out = bs;
    out.push_back(M);
    out.push_back(N);
    Tensor y = c.allocate(a.dtype(), out);
    const std::int64_t batches = shapeNumel(bs);
    visitDType(a.dtype(), "MatMul", [&](auto z) {
        using T = decltype(z);
        std::vector<std::int64_t> idx(bs.size(), 0);
        for (std::int64_t bi = 0; bi < batches; ++bi) {
            std::int64_t oa = 0, ob = 0;
            for (std::size_t d = 0; d < bs.size(); ++d) {
                oa = oa * a.dim(static_cast<int>(d)) + (a.dim(static_cast<int>(d)) == 1 ? 0 : idx[d]);
                ob = ob * b.dim(static_cast<int>(d)) + (b.dim(static_cast<int>(d)) == 1 ? 0 : idx[d]);
            }
            gemmT<T>(false, false, M, N, K, T(1), a.data<T>() + oa * M * K, K, b.data<T>() + ob * K * N, N, T(0),
                     y.data<T>() + bi * M * N, N);
            for (std::size_t d = bs.size(); d-- > 0;) {
                if (++idx[d] < bs[d]) break;
                idx[d] = 0;
            }
        }
    });
    Shape fin(bs);
    if (!aVec) fin.push_back(M);
    if (!bVec) fin.push_back(N);
    c.outputs[0] = y.reshaped(fin);
}

// Det of each M x M matrix of the last two axes (LU with partial pivoting).
void onnxDet(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2 || x.dim(x.ndim() - 1) != x.dim(x.ndim() - 2)) c.fail("needs square matrices, got " + x.typeStr());
    const std::int64_t m = x.dim(x.ndim() - 1), mats = m ? x.numel() / (m * m) : 0;
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> det(static_cast<std::size_t>(mats));
    for (std::int64_t b = 0; b < mats; ++b) {
        std::vector<double> a(xv.begin() + b * m * m, xv.begin() + (b + 1) * m * m);
        double d = 1;
        for (std::int64_t k = 0; k < m && d != 0; ++k) {
            std::int64_t p = k;
            for (std::int64_t i = k + 1; i < m; ++i)
                if (std::fabs(a[static_cast<std::size_t>(i * m + k)]) >
                    std::fabs(a[static_cast<std::size_t>(p * m + k)]))
                    p = i;
            if (p != k) {
                for (std::int64_t j = 0; j < m; ++j)
                    std::swap(a[static_cast<std::size_t>(k * m + j)], a[static_cast<std::size_t>(p * m + j)]);
                d = -d;
            }
            const double piv = a[static_cast<std::size_t>(k * m + k)];
            d *= piv;
            if (piv == 0) break;
            for (std::int64_t i = k + 1; i < m; ++i) {
                const double f = a[static_cast<std::size_t>(i * m + k)] / piv;
                for (std::int64_t j = k; j < m; ++j)
                    a[static_cast<std::size_t>(i * m + j)] -= f * a[static_cast<std::size_t>(k * m + j)];
            }
        }
        det[static_cast<std::size_t>(b)] = d;
    }
    c.outputs[0] = storeDoubles(c, det, x.dtype(), Shape(x.shape().begin(), x.shape().end() - 2));
}

// ---------------------------------------------------------------- quantization

// A quantization parameter for each element of x: per tensor (scalar) or per `axis` (1-d).
std::vector<double> perAxis(const KernelCall& c, const Tensor* p, const Tensor& x, double dflt) {
    std::vector<double> v(static_cast<std::size_t>(x.numel()), dflt);
    if (!p) return v;
    if (p->numel() == 1) {
        std::fill(v.begin(), v.end(), p->at(0));
        return v;
    }
    const int axis = normAxis(c, c.op().intAttr("axis", 1), x.ndim());
    const AxisSplit s = splitAt(x, axis);
    if (p->numel() != s.n)
        c.fail("scale / zero point " + p->typeStr() + " does not match axis " + std::to_string(axis) + " of " +
               x.typeStr());
    for (std::size_t e = 0; e < v.size(); ++e) v[e] = p->at(static_cast<std::int64_t>(e) / s.inner % s.n);
    return v;
}

// QuantizeLinear: saturate(round_half_even(x / scale) + zero_point), uint8 unless the zero
// point says otherwise.
void onnxQuantizeLinear(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor* zp = onnxIn(c, 2);
    const DType dt = zp ? zp->dtype() : DType::UInt8;
    const std::vector<double> scale = perAxis(c, &needIn(c, 1), x, 1.0), zero = perAxis(c, zp, x, 0.0),
                              xv = x.toDoubles();
    // a float32 x is divided in float32, as the reference does (numpy on float32 arrays): a
    // quotient near .5 rounds as there
    const bool f32 = x.dtype() == DType::Float32;
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e) {
        const double q =
            f32 ? static_cast<double>(static_cast<float>(xv[e]) / static_cast<float>(scale[e])) : xv[e] / scale[e];
        y[e] = saturate(std::nearbyint(q) + zero[e], dt);
    }
    c.outputs[0] = storeDoubles(c, y, dt, x.shape());
}

// DequantizeLinear: (x - zero_point) * scale, float32.
void onnxDequantizeLinear(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<double> scale = perAxis(c, &needIn(c, 1), x, 1.0), zero = perAxis(c, onnxIn(c, 2), x, 0.0),
                              xv = x.toDoubles();
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e) y[e] = (xv[e] - zero[e]) * scale[e];
    c.outputs[0] = storeDoubles(c, y, needIn(c, 1).dtype(), x.shape());
}

// DynamicQuantizeLinear: uint8 quantization over [min(0, min x), max(0, max x)]; outputs y,
// the float32 scale and the uint8 zero point.
void onnxDynamicQuantizeLinear(KernelCall& c) {
    const std::vector<double> xv = c.in(0).toDoubles();
    double lo = 0, hi = 0;
    for (double v : xv) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    // float32 arithmetic, as the reference computes it on float32 values
    const float scale = static_cast<float>(hi - lo) / 255.0f;
    const double zp = scale == 0 ? 0 : saturate(std::nearbyint(static_cast<float>(-lo) / scale), DType::UInt8);
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e)
        y[e] = scale == 0 ? zp : saturate(std::nearbyint(static_cast<float>(xv[e]) / scale) + zp, DType::UInt8);
    c.outputs[0] = storeDoubles(c, y, DType::UInt8, c.in(0).shape());
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, {scale}, DType::Float32, {});
    if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, {zp}, DType::UInt8, {});
}

// MatMulInteger of 2-d A and B: (A - a_zero_point) x (B - b_zero_point) in int32 (zero points
// per tensor, per row of A or per column of B).
void onnxMatMulInteger(KernelCall& c) {
    const Tensor& a = c.in(0);
    const Tensor& b = c.in(1);
    if (a.ndim() != 2 || b.ndim() != 2 || a.dim(1) != b.dim(0))
        c.fail("needs 2-d operands with matching inner dims, got " + a.typeStr() + " and " + b.typeStr());
    const std::int64_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
    const Tensor* az = onnxIn(c, 2);
    const Tensor* bz = onnxIn(c, 3);
    Tensor y = c.allocate(DType::Int32, {m, n});
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t s = 0;
            const std::int64_t za = az ? az->intAt(az->numel() == 1 ? 0 : i) : 0,
                               zb = bz ? bz->intAt(bz->numel() == 1 ? 0 : j) : 0;
            for (std::int64_t t = 0; t < k; ++t) s += (a.intAt(i * k + t) - za) * (b.intAt(t * n + j) - zb);
            y.data<std::int32_t>()[i * n + j] = static_cast<std::int32_t>(s);
        }
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- Einsum

// Einsum over any number of operands: explicit ("ij,jk->ik") or implicit output (the labels
// used once, in alphabetical order), "..." for broadcast leading dims, repeated labels in one
// term for diagonals. Every combination of label values is visited (sums in double).
void onnxEinsum(KernelCall& c) {
    std::string eq;
    for (char ch : c.op().str("equation"))
        if (ch != ' ') eq += ch;
    const std::size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t from = 0;;) {
        const std::size_t comma = lhs.find(',', from);
        terms.push_back(lhs.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    if (static_cast<int>(terms.size()) != c.nin())
        c.fail("equation '" + eq + "' has " + std::to_string(terms.size()) + " terms for " + std::to_string(c.nin()) +
               " inputs");
    // "..." becomes the labels '0'.. '9' of the broadcast dims, right-aligned over the operands
    int ellipsisDims = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const std::string& t = terms[static_cast<std::size_t>(i)];
        if (t.find("...") != std::string::npos)
            ellipsisDims = std::max(ellipsisDims, c.in(i).ndim() - static_cast<int>(t.size() - 3));
    }
    if (ellipsisDims > 10) c.fail("too many dims under '...'");
    auto expand = [&](const std::string& t, int rank) {
        const std::size_t p = t.find("...");
        if (p == std::string::npos) return t;
        const int n = rank < 0 ? ellipsisDims : rank - static_cast<int>(t.size() - 3);
        std::string e;
        for (int k = ellipsisDims - n; k < ellipsisDims; ++k) e += static_cast<char>('0' + k);
        return t.substr(0, p) + e + t.substr(p + 3);
    };
    for (int i = 0; i < c.nin(); ++i)
        terms[static_cast<std::size_t>(i)] = expand(terms[static_cast<std::size_t>(i)], c.in(i).ndim());
    std::string outTerm;
    if (arrow != std::string::npos) {
        outTerm = expand(eq.substr(arrow + 2), -1);
    } else {
        std::map<char, int> uses;
        for (const std::string& t : terms)
            for (char ch : t) ++uses[ch];
        for (int k = 0; k < ellipsisDims; ++k) outTerm += static_cast<char>('0' + k);
        for (const auto& [ch, n] : uses)
            if (n == 1 && !std::isdigit(static_cast<unsigned char>(ch))) outTerm += ch;
    }
    std::map<char, std::int64_t> size;
    for (int i = 0; i < c.nin(); ++i) {
        const std::string& t = terms[static_cast<std::size_t>(i)];
        if (static_cast<int>(t.size()) != c.in(i).ndim())
            c.fail("term '" + t + "' does not match " + c.in(i).typeStr());
        for (std::size_t a = 0; a < t.size(); ++a) {
            const std::int64_t d = c.in(i).dim(static_cast<int>(a));
            auto [it, fresh] = size.emplace(t[a], d);
            if (!fresh && it->second != d) {
                if (it->second == 1)
                    it->second = d;
                else if (d != 1)
                    c.fail("label '" + std::string(1, t[a]) + "' has sizes " + std::to_string(it->second) + " and " +
                           std::to_string(d));
            }
        }
    }
    std::string labels = outTerm;
    for (const auto& [ch, d] : size)
        if (outTerm.find(ch) == std::string::npos) labels += ch;
    Shape dims;
    for (char ch : labels) {
        if (!size.count(ch)) c.fail("output label '" + std::string(1, ch) + "' is not in the inputs");
        dims.push_back(size[ch]);
    }
    // per operand: for each label position, the stride of that label in the operand (0 if absent
    // or broadcast)
    std::vector<std::vector<std::int64_t>> strides;
    std::vector<std::vector<double>> vals;
    for (int i = 0; i < c.nin(); ++i) {
        const std::string& t = terms[static_cast<std::size_t>(i)];
        const auto st = stridesOf(c.in(i).shape());
        std::vector<std::int64_t> s(labels.size(), 0);
        for (std::size_t a = 0; a < t.size(); ++a)
            if (c.in(i).dim(static_cast<int>(a)) != 1) s[labels.find(t[a])] += st[a];
        strides.push_back(s);
        vals.push_back(c.in(i).toDoubles());
    }
    const Shape outShape(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(outTerm.size()));
    const std::int64_t outN = shapeNumel(outShape), total = shapeNumel(dims);
    if (total > (std::int64_t(1) << 32))
        c.fail("Einsum over " + std::to_string(total) + " label combinations is too large");
    std::vector<double> y(static_cast<std::size_t>(outN), 0.0);
    const std::int64_t inner = outN ? total / outN : 0;
    std::vector<std::int64_t> pos(dims.size(), 0);
    for (std::int64_t e = 0; e < total; ++e, nextIndex(pos, dims)) {
        double p = 1;
        for (std::size_t i = 0; i < vals.size(); ++i) {
            std::int64_t off = 0;
            for (std::size_t a = 0; a < dims.size(); ++a) off += pos[a] * strides[i][a];
            p *= vals[i][static_cast<std::size_t>(off)];
        }
        y[static_cast<std::size_t>(e / inner)] += p;
    }
    c.outputs[0] = storeDoubles(c, y, c.in(0).dtype(), outShape);
}

// QLinearMatMul of 2-d or equally batched 3-d+ operands: (a - a_zp) x (b - b_zp) scaled by
// a_scale * b_scale / y_scale, rounded half to even, plus y_zero_point, saturated.
void onnxQLinearMatMul(KernelCall& c) {
    const Tensor& a = c.in(0);
    const Tensor& b = needIn(c, 3);
    const Tensor& yzp = needIn(c, 7);
    const int r = a.ndim();
    if (r < 2 || b.ndim() != r || !std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin()) ||
        a.dim(r - 1) != b.dim(r - 2))
        c.fail("operands " + a.typeStr() + " and " + b.typeStr() + " do not match (2-d, or the same batch dims)");
    const std::int64_t M = a.dim(r - 2), K = a.dim(r - 1), N = b.dim(r - 1),
                       batches = shapeNumel(Shape(a.shape().begin(), a.shape().end() - 2));
    const double azp = needIn(c, 2).at(0), bzp = needIn(c, 5).at(0),
                 scale = needIn(c, 1).at(0) * needIn(c, 4).at(0) / needIn(c, 6).at(0);
    const std::vector<double> av = a.toDoubles(), bv = b.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(batches * M * N));
    for (std::int64_t t = 0; t < batches; ++t)
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
                double s = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    s += (av[static_cast<std::size_t>((t * M + i) * K + k)] - azp) *
                         (bv[static_cast<std::size_t>((t * K + k) * N + j)] - bzp);
                y[static_cast<std::size_t>((t * M + i) * N + j)] =
                    saturate(std::nearbyint(s * scale) + yzp.at(0), yzp.dtype());
            }
    Shape out(a.shape().begin(), a.shape().end() - 1);
    out.push_back(N);
    c.outputs[0] = storeDoubles(c, y, yzp.dtype(), out);
}

} // namespace

void registerOnnxLinalgKernels(KernelRegistry& r) {
    r.add("OnnxMatMul", Backend::Cpu, onnxMatMul);
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"Det", onnxDet},
        {"QuantizeLinear", onnxQuantizeLinear},
        {"DequantizeLinear", onnxDequantizeLinear},
        {"DynamicQuantizeLinear", onnxDynamicQuantizeLinear},
        {"MatMulInteger", onnxMatMulInteger},
        {"Einsum", onnxEinsum},
        {"QLinearMatMul", onnxQLinearMatMul},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
