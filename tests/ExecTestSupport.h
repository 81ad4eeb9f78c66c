#pragma once
// What the execution tests (tst_exec_*.cpp, label `exec`) share: random inputs with a reported
// seed, a harness that builds a graph and runs it on the CPU with poisoned buffers, tolerance
// checks against reference values, and the corpus models. Header only: the executables link
// either passlens::kernels or the emulated-device build passlens::kernels_emu.
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/FunctionGraph.h>
#include <passlens/ir/OpRegistry.h>
#include <passlens/kernels/Check.h>
#include <passlens/kernels/DeviceInfo.h>
#include <passlens/kernels/Executor.h>
#include <passlens/kernels/Profiler.h>
#include <passlens/kernels/TensorIO.h>
#include <passlens/onnx/OnnxImporter.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <QTest>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace exectest {

using namespace passlens;
using json = nlohmann::json;

inline std::mt19937_64& rng() {
    static std::mt19937_64 r = [] {
        std::uint64_t seed = std::random_device{}();
        if (const char* s = std::getenv("PASSLENS_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
        qInfo("random seed %llu (set PASSLENS_TEST_SEED to repeat)", static_cast<unsigned long long>(seed));
        return std::mt19937_64(seed);
    }();
    return r;
}

inline Tensor randn(DType dt, Shape shape, double lo = -2, double hi = 2) {
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(static_cast<std::size_t>(shapeNumel(shape)));
    for (auto& x : v) x = u(rng());
    if (!isFloat(dt))
        for (auto& x : v) x = std::round(x);
    return Tensor::fromDoubles(dt, std::move(shape), v);
}

inline Tensor ints(DType dt, Shape shape, std::vector<double> v) {
    return Tensor::fromDoubles(dt, std::move(shape), v);
}

inline Type typeOf(const Tensor& t) { return Type(t.dtype(), t.shape()); }

// An AbstractConv2d of `x` by the constant kernel `w` (stride 1, undilated, one group), padded by
// `pad` on every side.
inline Variable* addConv(FunctionGraph& g, Variable* x, const Tensor& w, int pad) {
    return g.apply(Op::get("AbstractConv2d", {{"border_mode", {{pad, pad}, {pad, pad}}},
                                              {"subsample", {1, 1}},
                                              {"filter_dilation", {1, 1}},
                                              {"num_groups", 1}}),
                   {x, g.addConstant(w.toTensorData())});
}

// A graph with one input per tensor (static types), built by `body`, run on the CPU with
// poisoned buffers (and any other `options` a test sets).
struct Harness {
    FunctionGraph g;
    std::vector<Tensor> values;
    ExecOptions options{DeviceChoice::Cpu, true};
    Variable* input(const Tensor& t) {
        values.push_back(t);
        return g.addInput(typeOf(t), "in" + std::to_string(values.size() - 1));
    }
    Variable* constant(const Tensor& t) { return g.addConstant(t.toTensorData()); }
    std::vector<Tensor> run(std::vector<Variable*> outs) {
        g.setOutputs(std::move(outs));
        Executor ex(g, options);
        ex.run(values); // twice: the second run reuses pooled (re-poisoned) buffers and cached state
        return ex.run(values);
    }
};

template <class F> QString errorOf(F&& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

struct Tol {
    double rtol = 2e-6, atol = 1e-6;
};

// |got - want| <= atol + rtol * |want| everywhere (NaN only where want is NaN).
inline bool close(const Tensor& got, const std::vector<double>& want, Tol tol, QString* why) {
    const double rtol = tol.rtol, atol = tol.atol;
    if (static_cast<std::size_t>(got.numel()) != want.size()) {
        if (why) *why = QString("size %1 vs %2").arg(got.numel()).arg(want.size());
        return false;
    }
    const auto v = got.toDoubles();
    for (std::size_t i = 0; i < v.size(); ++i) {
        const double a = v[i], b = want[i];
        if (std::isnan(b) && std::isnan(a)) continue;
        if (std::isinf(b) && a == b) continue;
        if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
            if (why) *why = QString("element %1: got %2, want %3").arg(i).arg(a, 0, 'g', 10).arg(b, 0, 'g', 10);
            return false;
        }
    }
    return true;
}

#define VERIFY_CLOSE(got, want, ...)                                                                                   \
    do {                                                                                                               \
        QString why_;                                                                                                  \
        QVERIFY2(exectest::close(got, want, Tol{__VA_ARGS__}, &why_), qPrintable(why_));                               \
    } while (0)

inline Variable* elem(FunctionGraph& g, const std::string& scalar, std::vector<Variable*> ins,
                      json extra = json::object()) {
    extra["scalar"] = scalar;
    return g.apply(Op::get("Elemwise", extra), std::move(ins));
}

// ---- corpus
// PASSLENS_TEST_CORPUS overrides the configured folder (the device machine gets the models
// through scripts/device-kit.sh, not at the configured path).
inline std::filesystem::path corpusDir() {
    const char* e = std::getenv("PASSLENS_TEST_CORPUS");
    return e && *e ? std::filesystem::path(e) : std::filesystem::path(PASSLENS_CORPUS_DIR);
}

inline const std::vector<std::string>& corpusModels() {
    static const std::vector<std::string> m = {"mlp",
                                               "shape_ops",
                                               "lstm",
                                               "transformer_encoder_layer",
                                               "resnet18",
                                               "squeezenet1_1",
                                               "mobilenet_v2",
                                               "ch_PP-OCRv4_det_infer",
                                               "silero_vad_legacy"};
    return m;
}

} // namespace exectest
