// CPU kernels of the optimizer updates of the ai.onnx.preview.training domain (Adagrad, Momentum,
// Adam; ONNX Operators.md), computed in double per element and stored as each tensor's dtype.
// Gradient (symbolic differentiation) has no kernel.
#include "OnnxCommon.h"

#include <cmath>

namespace passlens::cpu {

namespace {

using namespace onnx;

// The inputs R (learning rate), T (update count) and `groups` groups of n tensors (X_1..X_n,
// G_1..G_n, ...), each group's tensors as doubles, checked to match X_i's shape.
struct UpdateInputs {
    double r = 0;
    std::int64_t t = 0;
    std::size_t n = 0;
    std::vector<std::vector<std::vector<double>>> groups; // [group][i] values
};

UpdateInputs updateInputs(const KernelCall& c, int groups) {
    if (c.nin() <= 2 || (c.nin() - 2) % groups != 0)
        c.fail("needs R, T and " + std::to_string(groups) + " tensors per updated tensor, got " +
               std::to_string(c.nin()) + " inputs");
    for (int k = 0; k < c.nin(); ++k)
        if (!c.in(k).isDense()) c.fail("input " + std::to_string(k) + " must be a tensor, got " + c.in(k).typeStr());
    if (c.in(0).numel() != 1 || c.in(1).numel() != 1) c.fail("R and T must be scalars");
    UpdateInputs u;
    u.r = c.in(0).at(0);
    u.t = c.in(1).intAt(0);
    u.n = static_cast<std::size_t>((c.nin() - 2) / groups);
    if (c.node.nout() != (groups - 1) * static_cast<int>(u.n))
        c.fail("has " + std::to_string(c.node.nout()) + " outputs for " + std::to_string(u.n) + " updated tensors");
    u.groups.resize(static_cast<std::size_t>(groups));
    for (int g = 0; g < groups; ++g)
        for (std::size_t i = 0; i < u.n; ++i) {
            const Tensor& t = c.in(2 + g * static_cast<int>(u.n) + static_cast<int>(i));
            const Tensor& x = c.in(2 + static_cast<int>(i));
            if (t.shape() != x.shape()) c.fail("input " + t.typeStr() + " does not match X " + x.typeStr());
            u.groups[static_cast<std::size_t>(g)].push_back(t.toDoubles());
        }
    return u;
}

// Output group g, item i: `v` stored as X_i's dtype and shape.
void storeUpdate(KernelCall& c, const UpdateInputs& u, int g, std::size_t i, const std::vector<double>& v) {
    const Tensor& x = c.in(2 + static_cast<int>(i));
    const std::size_t k = static_cast<std::size_t>(g) * u.n + i;
    if (k < c.outputs.size()) c.outputs[k] = storeDoubles(c, v, x.dtype(), x.shape());
}

// Adagrad: r = R / (1 + T * decay_factor); G' = norm_coefficient * X + G; H' = H + G'^2;
// X' = X - r * G' / (sqrt(H') + epsilon). Outputs X'..., H'...
void onnxAdagrad(KernelCall& c) {
    const UpdateInputs u = updateInputs(c, 3);
    const double decay = c.op().floatAttr("decay_factor", 0.0), eps = c.op().floatAttr("epsilon", 1e-6),
                 norm = c.op().floatAttr("norm_coefficient", 0.0);
    const double r = u.r / (1.0 + static_cast<double>(u.t) * decay);
    for (std::size_t i = 0; i < u.n; ++i) {
        std::vector<double> x = u.groups[0][i], h = u.groups[2][i];
        const std::vector<double>& g = u.groups[1][i];
        for (std::size_t e = 0; e < x.size(); ++e) {
            const double gr = norm * x[e] + g[e];
            h[e] += gr * gr;
            x[e] -= r * gr / (std::sqrt(h[e]) + eps);
        }
        storeUpdate(c, u, 0, i, x);
        storeUpdate(c, u, 1, i, h);
    }
}

// Momentum: G' = norm_coefficient * X + G; V' = alpha * V + beta' * G' (beta' = 1 on the first
// update, T = 0); X' = X - R * V' (standard) or X - R * (G' + alpha * V') (nesterov). Outputs
// X'..., V'...
void onnxMomentum(KernelCall& c) {
    const UpdateInputs u = updateInputs(c, 3);
    const double alpha = c.op().floatAttr("alpha", 0.0), beta = c.op().floatAttr("beta", 0.0),
                 norm = c.op().floatAttr("norm_coefficient", 0.0);
    const std::string mode = c.op().attrs().contains("mode") ? c.op().str("mode") : "standard";
    if (mode != "standard" && mode != "nesterov") c.fail("unsupported mode '" + mode + "'");
    const double betaT = u.t > 0 ? beta : 1.0;
    for (std::size_t i = 0; i < u.n; ++i) {
        std::vector<double> x = u.groups[0][i], v = u.groups[2][i];
        const std::vector<double>& g = u.groups[1][i];
        for (std::size_t e = 0; e < x.size(); ++e) {
            const double gr = norm * x[e] + g[e];
            v[e] = alpha * v[e] + betaT * gr;
            x[e] -= mode == "standard" ? u.r * v[e] : u.r * (gr + alpha * v[e]);
        }
        storeUpdate(c, u, 0, i, x);
        storeUpdate(c, u, 1, i, v);
    }
}

// Adam: G' = norm_coefficient * X + G; V' = alpha * V + (1 - alpha) * G'; H' = beta * H +
// (1 - beta) * G'^2; R' = R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R;
// X' = (1 - norm_coefficient_post) * (X - R' * V' / (sqrt(H') + epsilon)). Outputs X'..., V'...,
// H'...
void onnxAdam(KernelCall& c) {
    const UpdateInputs u = updateInputs(c, 4);
    const double alpha = c.op().floatAttr("alpha", 0.9), beta = c.op().floatAttr("beta", 0.999),
                 eps = c.op().floatAttr("epsilon", 1e-6), norm = c.op().floatAttr("norm_coefficient", 0.0),
                 post = c.op().floatAttr("norm_coefficient_post", 0.0);
    const double t = static_cast<double>(u.t);
    const double r = u.t > 0 ? u.r * std::sqrt(1.0 - std::pow(beta, t)) / (1.0 - std::pow(alpha, t)) : u.r;
    for (std::size_t i = 0; i < u.n; ++i) {
        std::vector<double> x = u.groups[0][i], v = u.groups[2][i], h = u.groups[3][i];
        const std::vector<double>& g = u.groups[1][i];
        for (std::size_t e = 0; e < x.size(); ++e) {
            const double gr = norm * x[e] + g[e];
            v[e] = alpha * v[e] + (1.0 - alpha) * gr;
            h[e] = beta * h[e] + (1.0 - beta) * gr * gr;
            x[e] = (1.0 - post) * (x[e] - r * v[e] / (std::sqrt(h[e]) + eps));
        }
        storeUpdate(c, u, 0, i, x);
        storeUpdate(c, u, 1, i, v);
        storeUpdate(c, u, 2, i, h);
    }
}

} // namespace

void registerOnnxTrainingKernels(KernelRegistry& r) {
    r.add("OnnxAdagrad", Backend::Cpu, onnxAdagrad);
    r.add("OnnxMomentum", Backend::Cpu, onnxMomentum);
    r.add("OnnxAdam", Backend::Cpu, onnxAdam);
}

} // namespace passlens::cpu
