// CPU kernels of the ONNX normalizations and losses (LayerNormalization, InstanceNormalization,
// BatchNormalization, MeanVarianceNormalization, LRN, NegativeLogLikelihoodLoss,
// SoftmaxCrossEntropyLoss).
#include "OnnxCommon.h"

#include <cmath>

namespace passlens::cpu {

namespace {

using namespace onnx;

// ---------------------------------------------------------------- normalization and losses

// Mean and population variance of n contiguous values (0 and 0 for none).
std::pair<double, double> meanVariance(const double* p, std::int64_t n) {
    double m = 0, v = 0;
    for (std::int64_t i = 0; i < n; ++i) m += p[i];
    m /= static_cast<double>(std::max<std::int64_t>(n, 1));
    for (std::int64_t i = 0; i < n; ++i) v += (p[i] - m) * (p[i] - m);
    return {m, v / static_cast<double>(std::max<std::int64_t>(n, 1))};
}

// LayerNormalization: each row of the axes from `axis` on normalised to mean 0 and variance 1
// (plus epsilon), times Scale plus B (broadcast to those axes); optional outputs Mean and
// InvStdDev with the normalised axes kept as 1 (float32 with stash_type 1).
void onnxLayerNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const double eps = c.op().floatAttr("epsilon", 1e-5);
    const Shape normShape(x.shape().begin() + axis, x.shape().end());
    const Tensor scale = broadcastToShape(c, needIn(c, 1), normShape, DType::Float64);
    const Tensor* bias = onnxIn(c, 2);
    const Tensor b = bias ? broadcastToShape(c, *bias, normShape, DType::Float64)
                          : Tensor::zeros(DType::Float64, normShape, c.ctx.pool.get());
    const std::vector<double> xv = x.toDoubles();
    const std::int64_t rows = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis)), n = shapeNumel(normShape);
    std::vector<double> y(xv.size()), mean(static_cast<std::size_t>(rows)), inv(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
        const double* p = xv.data() + r * n;
        const auto [m, v] = meanVariance(p, n);
        const double is = 1.0 / std::sqrt(v + eps);
        for (std::int64_t i = 0; i < n; ++i)
            y[static_cast<std::size_t>(r * n + i)] = (p[i] - m) * is * scale.data<double>()[i] + b.data<double>()[i];
        mean[static_cast<std::size_t>(r)] = m;
        inv[static_cast<std::size_t>(r)] = is;
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
    Shape statShape(x.shape().begin(), x.shape().begin() + axis);
    statShape.resize(x.shape().size(), 1);
    const DType statType = c.op().intAttr("stash_type", 1) == 1 ? DType::Float32 : x.dtype();
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, mean, statType, statShape);
    if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, inv, statType, statShape);
}

// InstanceNormalization: each (n, c) plane of an N x C x ... input normalised, times scale[c]
// plus B[c].
void onnxInstanceNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs rank >= 2, got " + x.typeStr());
    const double eps = c.op().floatAttr("epsilon", 1e-5);
    const std::vector<double> xv = x.toDoubles(), scale = c.in(1).toDoubles(), bias = c.in(2).toDoubles();
    const std::int64_t ch = x.dim(1), plane = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    if (static_cast<std::int64_t>(scale.size()) != ch || static_cast<std::int64_t>(bias.size()) != ch)
        c.fail("scale and B must have C elements");
    std::vector<double> y(xv.size());
    for (std::int64_t p = 0; p < x.dim(0) * ch; ++p) {
        const double* s = xv.data() + p * plane;
        const auto [m, v] = meanVariance(s, plane);
        const double k = scale[static_cast<std::size_t>(p % ch)] / std::sqrt(v + eps),
                     b = bias[static_cast<std::size_t>(p % ch)];
        for (std::int64_t i = 0; i < plane; ++i) y[static_cast<std::size_t>(p * plane + i)] = (s[i] - m) * k + b;
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
}

// The negative log-likelihood of log-probabilities `logp` (N x C x D, as doubles) at `target`
// (N x D), weighted per class and reduced as ONNX's NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss define it (their reference implementations in onnx/backend/test/case).
Tensor nllLoss(const KernelCall& c, const std::vector<double>& logp, const Shape& inShape, const Tensor& target,
               const Tensor* weight, DType dt) {
    if (inShape.size() < 2) c.fail("input needs rank >= 2");
    const std::int64_t n = inShape[0], ch = inShape[1], d = shapeNumel(Shape(inShape.begin() + 2, inShape.end()));
    if (target.numel() != n * d) c.fail("target " + target.typeStr() + " does not fit the input");
    std::string reduction = c.op().str("reduction");
    if (reduction.empty()) reduction = "mean";
    const bool hasIgnore = c.op().has("ignore_index");
    const std::int64_t ignore = c.op().intAttr("ignore_index", 0);
    const std::vector<double> w = weight ? weight->toDoubles() : std::vector<double>();
    std::vector<double> loss(static_cast<std::size_t>(n * d)), gw(loss.size(), 1.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < d; ++j) {
            const std::size_t e = static_cast<std::size_t>(i * d + j);
            const std::int64_t t = target.intAt(static_cast<std::int64_t>(e));
            if (hasIgnore && t == ignore) {
                gw[e] = 0;
                continue;
            }
            if (t < 0 || t >= ch)
                c.fail("target " + std::to_string(t) + " out of range for " + std::to_string(ch) + " classes");
            if (weight) gw[e] = w[static_cast<std::size_t>(t)];
            loss[e] = -logp[static_cast<std::size_t>((i * ch + t) * d + j)] * gw[e];
        }
    if (reduction == "none") {
        Shape ts(inShape.begin(), inShape.end());
        ts.erase(ts.begin() + 1);
        return storeDoubles(c, loss, dt, ts);
    }
    double sum = 0, wsum = 0;
    for (std::size_t e = 0; e < loss.size(); ++e) {
        sum += loss[e];
        wsum += gw[e];
    }
    double r = sum;
    if (reduction == "mean")
        r = (weight || hasIgnore) ? sum / wsum : sum / static_cast<double>(loss.size());
    else if (reduction != "sum")
        c.fail("unsupported reduction '" + reduction + "'");
    return storeDoubles(c, {r}, dt, {});
}

void onnxNegativeLogLikelihoodLoss(KernelCall& c) {
    const Tensor& x = c.in(0);
    c.outputs[0] = nllLoss(c, x.toDoubles(), x.shape(), c.in(1), onnxIn(c, 2), x.dtype());
}

// SoftmaxCrossEntropyLoss: the NLL loss of log_softmax(scores) over axis 1; optional output
// log_prob.
void onnxSoftmaxCrossEntropyLoss(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("scores need rank >= 2, got " + x.typeStr());
    const std::vector<double> xv = x.toDoubles();
    const std::int64_t n = x.dim(0), ch = x.dim(1), d = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    std::vector<double> logp(xv.size());
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < d; ++j) {
            auto at = [&](std::int64_t k) { return static_cast<std::size_t>((i * ch + k) * d + j); };
            double m = -INFINITY, s = 0;
            for (std::int64_t k = 0; k < ch; ++k) m = std::max(m, xv[at(k)]);
            for (std::int64_t k = 0; k < ch; ++k) s += std::exp(xv[at(k)] - m);
            for (std::int64_t k = 0; k < ch; ++k) logp[at(k)] = xv[at(k)] - m - std::log(s);
        }
    c.outputs[0] = nllLoss(c, logp, x.shape(), c.in(1), onnxIn(c, 2), x.dtype());
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, logp, x.dtype(), x.shape());
}

// For every element of `shape`, the index of its group when the flagged axes are reduced.
std::vector<std::int64_t> reductionGroups(const Shape& shape, const std::vector<bool>& red, std::int64_t& groups) {
    Shape kept;
    for (std::size_t a = 0; a < shape.size(); ++a) kept.push_back(red[a] ? 1 : shape[a]);
    groups = shapeNumel(kept);
    const auto ks = stridesOf(kept);
    std::vector<std::int64_t> g(static_cast<std::size_t>(shapeNumel(shape)));
    std::vector<std::int64_t> pos(shape.size(), 0);
    for (std::size_t e = 0; e < g.size(); ++e, nextIndex(pos, shape)) {
        std::int64_t k = 0;
        for (std::size_t a = 0; a < shape.size(); ++a) k += red[a] ? 0 : pos[a] * ks[a];
        g[e] = k;
    }
    return g;
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default 0, 2, 3).
void onnxMeanVarianceNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<bool> red(static_cast<std::size_t>(x.ndim()), false);
    for (auto a : attrInts(c, "axes", {0, 2, 3})) red[static_cast<std::size_t>(normAxis(c, a, x.ndim()))] = true;
    std::int64_t groups = 0;
    const std::vector<std::int64_t> g = reductionGroups(x.shape(), red, groups);
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> sum(static_cast<std::size_t>(groups)), sq(sum.size()), cnt(sum.size());
    for (std::size_t e = 0; e < xv.size(); ++e) {
        const auto k = static_cast<std::size_t>(g[e]);
        sum[k] += xv[e];
        sq[k] += xv[e] * xv[e];
        cnt[k] += 1;
    }
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < xv.size(); ++e) {
        const auto k = static_cast<std::size_t>(g[e]);
        const double m = sum[k] / cnt[k];
        y[e] = (xv[e] - m) / (std::sqrt(std::max(sq[k] / cnt[k] - m * m, 0.0)) + 1e-9);
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
}

// LRN across channels: x / (bias + alpha / size * sum of squares of the `size` neighbours)^beta.
void onnxLRN(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs an N x C x ... input, got " + x.typeStr());
    const double alpha = c.op().floatAttr("alpha", 1e-4), beta = c.op().floatAttr("beta", 0.75),
                 bias = c.op().floatAttr("bias", 1.0);
    const std::int64_t size = c.op().intAttr("size", 1), ch = x.dim(1),
                       inner = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> y(xv.size());
    for (std::int64_t n = 0; n < x.dim(0); ++n)
        for (std::int64_t k = 0; k < ch; ++k)
            for (std::int64_t i = 0; i < inner; ++i) {
                double s = 0;
                for (std::int64_t j = std::max<std::int64_t>(0, k - (size - 1) / 2);
                     j <= std::min(ch - 1, k + size / 2); ++j) {
                    const double v = xv[static_cast<std::size_t>((n * ch + j) * inner + i)];
                    s += v * v;
                }
                const auto e = static_cast<std::size_t>((n * ch + k) * inner + i);
                y[e] = xv[e] / std::pow(bias + alpha / static_cast<double>(size) * s, beta);
            }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
}

// BatchNormalization: per channel (axis 1) (x - mean) / sqrt(var + epsilon) * scale + B; in
// training mode with the batch's mean and population variance, also returning the running mean
// and variance (input * momentum + batch * (1 - momentum)).
void onnxBatchNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs an N x C x ... input, got " + x.typeStr());
    const double eps = c.op().floatAttr("epsilon", 1e-5), momentum = c.op().floatAttr("momentum", 0.9);
    const bool training = c.op().intAttr("training_mode", 0) != 0;
    const std::vector<double> xv = x.toDoubles(), scale = needIn(c, 1).toDoubles(), bias = needIn(c, 2).toDoubles();
    std::vector<double> mean = needIn(c, 3).toDoubles(), var = needIn(c, 4).toDoubles();
    const std::int64_t C = x.dim(1), plane = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    for (const std::vector<double>* v : std::initializer_list<const std::vector<double>*>{&scale, &bias, &mean, &var})
        if (static_cast<std::int64_t>(v->size()) != C) c.fail("scale, B, mean and var must have C elements");
    std::vector<double> bm(mean), bvar(var);
    if (training) {
        for (std::int64_t ch = 0; ch < C; ++ch) {
            double s = 0, sq = 0;
            for (std::int64_t n = 0; n < x.dim(0); ++n)
                for (std::int64_t i = 0; i < plane; ++i) s += xv[static_cast<std::size_t>((n * C + ch) * plane + i)];
            const double cnt = static_cast<double>(x.dim(0) * plane), m = s / cnt;
            for (std::int64_t n = 0; n < x.dim(0); ++n)
                for (std::int64_t i = 0; i < plane; ++i) {
                    const double d = xv[static_cast<std::size_t>((n * C + ch) * plane + i)] - m;
                    sq += d * d;
                }
            bm[static_cast<std::size_t>(ch)] = m;
            bvar[static_cast<std::size_t>(ch)] = sq / cnt;
        }
    }
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e) {
        const auto ch = static_cast<std::size_t>(static_cast<std::int64_t>(e) / plane % C);
        y[e] = (xv[e] - bm[ch]) / std::sqrt(bvar[ch] + eps) * scale[ch] + bias[ch];
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
    if (training) {
        std::vector<double> rm(static_cast<std::size_t>(C)), rv(rm.size());
        for (std::size_t ch = 0; ch < rm.size(); ++ch) {
            rm[ch] = mean[ch] * momentum + bm[ch] * (1 - momentum);
            rv[ch] = var[ch] * momentum + bvar[ch] * (1 - momentum);
        }
        if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, rm, needIn(c, 3).dtype(), {C});
        if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, rv, needIn(c, 4).dtype(), {C});
    }
}

} // namespace

void registerOnnxNormKernels(KernelRegistry& r) {
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"LayerNormalization", onnxLayerNormalization},
        {"InstanceNormalization", onnxInstanceNormalization},
        {"NegativeLogLikelihoodLoss", onnxNegativeLogLikelihoodLoss},
        {"SoftmaxCrossEntropyLoss", onnxSoftmaxCrossEntropyLoss},
        {"MeanVarianceNormalization", onnxMeanVarianceNormalization},
        {"LRN", onnxLRN},
        {"BatchNormalization", onnxBatchNormalization},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
