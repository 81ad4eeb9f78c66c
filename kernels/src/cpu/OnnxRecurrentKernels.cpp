// CPU kernels of the ONNX recurrent networks (RNN, GRU; LSTM is in OnnxControlKernels.cpp).
#include "OnnxCommon.h"

#include <cmath>
#include <functional>

namespace passlens::cpu {

namespace {

using namespace onnx;

// An ONNX RNN activation by name (the ones the RNN, GRU and LSTM definitions list), with
// alpha and beta where it takes them.
std::function<double(double)> rnnActivation(const KernelCall& c, const std::string& name, double alpha, double beta) {
    if (name == "Tanh") return [](double x) { return std::tanh(x); };
    if (name == "Sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    if (name == "Relu") return [](double x) { return std::max(x, 0.0); };
    if (name == "Affine") return [alpha, beta](double x) { return alpha * x + beta; };
    if (name == "LeakyRelu") return [alpha](double x) { return x >= 0 ? x : alpha * x; };
    if (name == "ThresholdedRelu") return [alpha](double x) { return x > alpha ? x : 0.0; };
    if (name == "ScaledTanh") return [alpha, beta](double x) { return alpha * std::tanh(beta * x); };
    if (name == "HardSigmoid") return [alpha, beta](double x) { return std::clamp(alpha * x + beta, 0.0, 1.0); };
    if (name == "Elu") return [alpha](double x) { return x >= 0 ? x : alpha * (std::exp(x) - 1.0); };
    if (name == "Softsign") return [](double x) { return x / (1.0 + std::fabs(x)); };
    if (name == "Softplus") return [](double x) { return std::log(std::exp(x) + 1.0); };
    c.fail("unsupported activation '" + name + "'");
}

// ONNX RNN (gates = 1) and GRU (gates = 3, order z, r, h; linear_before_reset): any direction,
// layout 0 or 1, sequence_lens, clip, activations with their alpha and beta; computed in double.
void onnxRecurrent(KernelCall& c, int gates) {
    const Tensor* X = onnxIn(c, 0);
    const Tensor* W = onnxIn(c, 1);
    const Tensor* R = onnxIn(c, 2);
    if (!X || !W || !R) c.fail("needs X, W and R");
    const Tensor* B = onnxIn(c, 3);
    const Tensor* seqLens = onnxIn(c, 4);
    const Tensor* h0 = onnxIn(c, 5);
    const std::string dir = c.op().has("direction") ? c.op().str("direction") : "forward";
    const int dirs = dir == "bidirectional" ? 2 : 1;
    const bool batchFirst = c.op().intAttr("layout", 0) == 1,
               linearBeforeReset = c.op().intAttr("linear_before_reset", 0) != 0;
    const double clip = c.op().floatAttr("clip", 0.0);
    if (X->ndim() != 3 || W->ndim() != 3 || R->ndim() != 3) c.fail("X, W and R must be 3-d");
    const std::int64_t T = batchFirst ? X->dim(1) : X->dim(0), Bt = batchFirst ? X->dim(0) : X->dim(1), I = X->dim(2),
                       H = R->dim(2);
    if (W->dim(0) != dirs || W->dim(1) != gates * H || W->dim(2) != I || R->dim(1) != gates * H)
        c.fail("W " + W->typeStr() + " or R " + R->typeStr() + " does not match X " + X->typeStr());
    if (B && B->numel() != dirs * 2 * gates * H) c.fail("B " + B->typeStr() + " does not match");
    if (h0 && h0->numel() != dirs * Bt * H) c.fail("initial_h " + h0->typeStr() + " does not match");
    // activations per direction: f (and g for GRU)
    const int perDir = gates == 1 ? 1 : 2;
    std::vector<std::string> names;
    if (c.op().has("activations"))
        for (const auto& e : c.op().attrs()["activations"]) names.push_back(e.get<std::string>());
    std::vector<double> alphas, betas;
    if (c.op().has("activation_alpha"))
        for (const auto& e : c.op().attrs()["activation_alpha"]) alphas.push_back(e.get<double>());
    if (c.op().has("activation_beta"))
        for (const auto& e : c.op().attrs()["activation_beta"]) betas.push_back(e.get<double>());
    std::vector<std::function<double(double)>> acts;
    for (int k = 0; k < dirs * perDir; ++k) {
        const auto i = static_cast<std::size_t>(k);
        const std::string name = i < names.size() ? names[i] : (gates == 1 ? "Tanh" : (k % 2 ? "Tanh" : "Sigmoid"));
        acts.push_back(rnnActivation(c, name, i < alphas.size() ? alphas[i] : 0.01, i < betas.size() ? betas[i] : 0.0));
    }
    const std::vector<double> xv = X->toDoubles(), wv = W->toDoubles(), rv = R->toDoubles(),
                              h0v = h0 ? h0->toDoubles() : std::vector<double>();
    const std::vector<double> bv =
        B ? B->toDoubles() : std::vector<double>(static_cast<std::size_t>(dirs * 2 * gates * H), 0.0);
    std::vector<double> Y(static_cast<std::size_t>(T * dirs * Bt * H), 0.0),
        Yh(static_cast<std::size_t>(dirs * Bt * H), 0.0);
    auto cl = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
    for (int d = 0; d < dirs; ++d) {
        const bool reverse = dir == "reverse" || d == 1;
        const double* Wd = wv.data() + d * gates * H * I;
        const double* Rd = rv.data() + d * gates * H * H;
        const double* Wb = bv.data() + d * 2 * gates * H;
        const double* Rb = Wb + gates * H;
        const auto& f = acts[static_cast<std::size_t>(d * perDir)];
        const auto& g = acts[static_cast<std::size_t>(d * perDir + perDir - 1)];
        for (std::int64_t b = 0; b < Bt; ++b) {
            std::vector<double> h(static_cast<std::size_t>(H), 0.0), hn(h.size());
            if (h0) h.assign(h0v.begin() + (d * Bt + b) * H, h0v.begin() + (d * Bt + b + 1) * H);
            const std::int64_t len = seqLens ? seqLens->intAt(b) : T;
            for (std::int64_t step = 0; step < len; ++step) {
                const std::int64_t t = reverse ? len - 1 - step : step;
                const double* x = xv.data() + (batchFirst ? b * T + t : t * Bt + b) * I;
                // xw[k], hr[k]: X and H times gate row k (plus biases)
                auto xw = [&](std::int64_t k) {
                    double s = Wb[k];
                    for (std::int64_t i = 0; i < I; ++i) s += x[i] * Wd[k * I + i];
                    return s;
                };
                auto hr = [&](std::int64_t k, const std::vector<double>& hv) {
                    double s = 0;
                    for (std::int64_t i = 0; i < H; ++i) s += hv[static_cast<std::size_t>(i)] * Rd[k * H + i];
                    return s;
                };
                if (gates == 1) {
                    for (std::int64_t j = 0; j < H; ++j)
                        hn[static_cast<std::size_t>(j)] = f(cl(xw(j) + hr(j, h) + Rb[j]));
                } else {
                    std::vector<double> z(static_cast<std::size_t>(H)), r(z.size()), rh(z.size());
                    for (std::int64_t j = 0; j < H; ++j) {
                        z[static_cast<std::size_t>(j)] = f(cl(xw(j) + hr(j, h) + Rb[j]));
                        r[static_cast<std::size_t>(j)] = f(cl(xw(H + j) + hr(H + j, h) + Rb[H + j]));
                    }
                    for (std::int64_t j = 0; j < H; ++j)
                        rh[static_cast<std::size_t>(j)] =
                            r[static_cast<std::size_t>(j)] * h[static_cast<std::size_t>(j)];
                    for (std::int64_t j = 0; j < H; ++j) {
                        const std::int64_t k = 2 * H + j;
                        const double pre = linearBeforeReset
                                               ? xw(k) + r[static_cast<std::size_t>(j)] * (hr(k, h) + Rb[k])
                                               : xw(k) + hr(k, rh) + Rb[k];
                        const double hh = g(cl(pre)), zz = z[static_cast<std::size_t>(j)];
                        hn[static_cast<std::size_t>(j)] = (1 - zz) * hh + zz * h[static_cast<std::size_t>(j)];
                    }
                }
                h = hn;
                std::copy(h.begin(), h.end(), Y.begin() + ((t * dirs + d) * Bt + b) * H);
            }
            std::copy(h.begin(), h.end(), Yh.begin() + (d * Bt + b) * H);
        }
    }
    const DType dt = X->dtype();
    if (c.node.nout() > 0) {
        if (!batchFirst) {
            c.outputs[0] = storeDoubles(c, Y, dt, {T, dirs, Bt, H});
        } else {
            std::vector<double> yb(Y.size());
            for (std::int64_t t = 0; t < T; ++t)
                for (int d = 0; d < dirs; ++d)
                    for (std::int64_t b = 0; b < Bt; ++b)
                        std::copy_n(Y.begin() + ((t * dirs + d) * Bt + b) * H, H,
                                    yb.begin() + ((b * T + t) * dirs + d) * H);
            c.outputs[0] = storeDoubles(c, yb, dt, {Bt, T, dirs, H});
        }
    }
    if (c.node.nout() > 1) {
        if (!batchFirst) {
            c.outputs[1] = storeDoubles(c, Yh, dt, {dirs, Bt, H});
        } else {
            std::vector<double> hb(Yh.size());
            for (int d = 0; d < dirs; ++d)
                for (std::int64_t b = 0; b < Bt; ++b)
                    std::copy_n(Yh.begin() + (d * Bt + b) * H, H, hb.begin() + (b * dirs + d) * H);
            c.outputs[1] = storeDoubles(c, hb, dt, {Bt, dirs, H});
        }
    }
}

} // namespace

void registerOnnxRecurrentKernels(KernelRegistry& r) {
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"RNN", [](KernelCall& c) { onnxRecurrent(c, 1); }},
        {"GRU", [](KernelCall& c) { onnxRecurrent(c, 3); }},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
