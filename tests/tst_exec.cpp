// passlens_kernels execution engine: every CPU kernel against simple references on fresh random
// inputs with poisoned (NaN-filled) output buffers, including 0-size, 0-d and broadcasting
// shapes; the executor (memory release, missing kernels and constants, errors naming the node);
// the profiler; TensorProto I/O; and every corpus model (source graph and the final graph of
// every built-in pipeline) against its reference outputs. CUDA checks are separate functions
// (ctest entry tst_exec_gpu, label gpu) that QSKIP without a device.
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

#include "cpu/Conv.h"
#include "cpu/ElemwiseEngine.h"
#include "cpu/Loops.h"
#if PASSLENS_CUDA_EMULATED
#include "cuda/emu/EmuControl.h"
#endif

#include <onnx/onnx_pb.h>

#include <QProcess>
#include <QTest>

#include <climits>
#include <cstring>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>
#include <functional>
#include <random>

using namespace passlens;
using json = nlohmann::json;

namespace {

std::mt19937_64& rng() {
    static std::mt19937_64 r = [] {
        std::uint64_t seed = std::random_device{}();
        if (const char* s = std::getenv("PASSLENS_TEST_SEED")) seed = std::strtoull(s, nullptr, 10);
        qInfo("random seed %llu (set PASSLENS_TEST_SEED to repeat)", static_cast<unsigned long long>(seed));
        return std::mt19937_64(seed);
    }();
    return r;
}

Tensor randn(DType dt, Shape shape, double lo = -2, double hi = 2) {
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(static_cast<std::size_t>(shapeNumel(shape)));
    for (auto& x : v) x = u(rng());
    if (!isFloat(dt))
        for (auto& x : v) x = std::round(x);
    return Tensor::fromDoubles(dt, std::move(shape), v);
}

Tensor ints(DType dt, Shape shape, std::vector<double> v) { return Tensor::fromDoubles(dt, std::move(shape), v); }

Type typeOf(const Tensor& t) { return Type(t.dtype(), t.shape()); }

// A graph with one input per tensor (static types), built by `body`, run on the CPU with
// poisoned buffers.
struct Harness {
    FunctionGraph g;
    std::vector<Tensor> values;
    Variable* input(const Tensor& t) {
        values.push_back(t);
        return g.addInput(typeOf(t), "in" + std::to_string(values.size() - 1));
    }
    Variable* constant(const Tensor& t) { return g.addConstant(t.toTensorData()); }
    std::vector<Tensor> run(std::vector<Variable*> outs) {
        g.setOutputs(std::move(outs));
        Executor ex(g, ExecOptions{DeviceChoice::Cpu, true});
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
bool close(const Tensor& got, const std::vector<double>& want, Tol tol, QString* why) {
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
        QVERIFY2(close(got, want, Tol{__VA_ARGS__}, &why_), qPrintable(why_));                                         \
    } while (0)

// Broadcast index helper: flat output index -> flat index of an input of shape `s` (same rank).
std::int64_t bcastIndex(std::int64_t e, const Shape& out, const Shape& s) {
    std::int64_t off = 0, mul = 1;
    for (std::size_t a = out.size(); a-- > 0;) {
        const std::int64_t i = e % out[a];
        e /= out[a];
        if (s[a] != 1) off += i * mul;
        mul *= s[a];
    }
    return off;
}

Variable* elem(FunctionGraph& g, const std::string& scalar, std::vector<Variable*> ins, json extra = json::object()) {
    extra["scalar"] = scalar;
    return g.apply(Op::get("Elemwise", extra), std::move(ins));
}

std::vector<double> naiveConv(const Tensor& x, const Tensor& w, int pt, int pb, int pl, int pr, int sh, int sw, int dh,
                              int dw, int groups, Shape& outShape) {
    const auto X = x.toDoubles(), W = w.toDoubles();
    const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), Wd = x.dim(3), F = w.dim(0), Cg = w.dim(1),
                       KH = w.dim(2), KW = w.dim(3);
    const std::int64_t OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1,
                       OW = (Wd + pl + pr - dw * (KW - 1) - 1) / sw + 1;
    outShape = {N, F, OH, OW};
    std::vector<double> y(static_cast<std::size_t>(N * F * OH * OW), 0.0);
    const std::int64_t Fg = F / groups;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t f = 0; f < F; ++f) {
            const std::int64_t g = f / Fg;
            for (std::int64_t oh = 0; oh < OH; ++oh)
                for (std::int64_t ow = 0; ow < OW; ++ow) {
                    double acc = 0;
                    for (std::int64_t c = 0; c < Cg; ++c)
                        for (std::int64_t kh = 0; kh < KH; ++kh)
                            for (std::int64_t kw = 0; kw < KW; ++kw) {
                                const std::int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= Wd) continue;
                                acc += X[static_cast<std::size_t>(((n * C + g * Cg + c) * H + ih) * Wd + iw)] *
                                       W[static_cast<std::size_t>(((f * Cg + c) * KH + kh) * KW + kw)];
                            }
                    y[static_cast<std::size_t>(((n * F + f) * OH + oh) * OW + ow)] = acc;
                }
        }
    (void)C;
    return y;
}

// ---- corpus
// PASSLENS_TEST_CORPUS overrides the configured folder (the device machine gets the models
// through scripts/device-kit.sh, not at the configured path).
std::filesystem::path corpusDir() {
    const char* e = std::getenv("PASSLENS_TEST_CORPUS");
    return e && *e ? std::filesystem::path(e) : std::filesystem::path(PASSLENS_CORPUS_DIR);
}

const std::vector<std::string>& corpusModels() {
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

bool gpuTestsEnabled() { return std::getenv("PASSLENS_TEST_GPU") != nullptr; }

// The GPU checks run only in their ctest entries (tst_exec_gpu on a device, tst_exec_emu on the
// emulated device) and skip without a device.
#define NEED_CUDA()                                                                                                    \
    do {                                                                                                               \
        if (!gpuTestsEnabled())                                                                                        \
            QSKIP("GPU checks run in the ctest entries tst_exec_gpu (label gpu) and tst_exec_emu");                    \
        const DeviceInfo info_ = queryDevices();                                                                       \
        if (info_.deviceCount == 0) QSKIP(qPrintable(QString::fromStdString(info_.error)));                            \
    } while (0)

// A graph of GPU kinds whose inputs are uploaded (GpuFromHost) and whose outputs are downloaded
// (host(v)), run on the CPU backend and on CUDA, both with poisoned buffers and twice (the
// second run reuses pooled buffers and cached state).
struct GpuHarness {
    FunctionGraph g;
    std::vector<Tensor> values;
    Variable* input(const Tensor& t) { return input(t, typeOf(t)); }
    Variable* input(const Tensor& t, const Type& type) {
        values.push_back(t);
        return g.apply(Op::get("GpuFromHost"), {g.addInput(type, "in" + std::to_string(values.size() - 1))});
    }
    Variable* host(Variable* v) { return g.apply(Op::get("HostFromGpu"), {v}); }
    Variable* op(const std::string& kind, json attrs, std::vector<Variable*> ins) {
        return g.apply(Op::get(kind, std::move(attrs)), std::move(ins));
    }
    std::vector<Tensor> run(DeviceChoice d) {
        ExecOptions o{d, true};
        o.cudaSyncEachStep = d == DeviceChoice::Cuda;
        Executor ex(g, o);
        ex.run(values);
        return ex.run(values);
    }
    // outputs (downloaded with host()) on the CPU backend, then on CUDA
    std::pair<std::vector<Tensor>, std::vector<Tensor>> both(std::vector<Variable*> outs) {
        g.setOutputs(std::move(outs));
        return {run(DeviceChoice::Cpu), run(DeviceChoice::Cuda)};
    }
};

// The same bits (NaN where NaN), dtype and shape.
bool sameBits(const Tensor& a, const Tensor& b, QString* why) {
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
        *why = QString::fromStdString(a.typeStr() + " vs " + b.typeStr());
        return false;
    }
    const auto va = a.toDoubles(), vb = b.toDoubles();
    for (std::size_t i = 0; i < va.size(); ++i)
        if (!(va[i] == vb[i] || (std::isnan(va[i]) && std::isnan(vb[i])))) {
            *why = QString("element %1: %2 vs %3").arg(i).arg(va[i], 0, 'g', 17).arg(vb[i], 0, 'g', 17);
            return false;
        }
    return true;
}

#define VERIFY_SAME(a, b)                                                                                              \
    do {                                                                                                               \
        QString why_;                                                                                                  \
        QVERIFY2(sameBits(a, b, &why_), qPrintable(why_));                                                             \
    } while (0)

} // namespace

class TestExec : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { (void)rng(); }

    // ------------------------------------------------------------------ tensors
    void tensorBasics() {
        Tensor t = Tensor::fromDoubles(DType::Int32, {2, 3}, {1, 2, 3, 4, 5, 6});
        QCOMPARE(t.numel(), 6);
        QCOMPARE(t.intAt(4), 5);
        Tensor v = t.reshaped({3, 2});
        QCOMPARE(v.storage(), t.storage());
        QVERIFY(!errorOf([&] { (void)t.reshaped({4}); }).isEmpty());
        Tensor s = t.sliceView(3, {3});
        QCOMPARE(s.intAt(0), 4);
        QVERIFY(!errorOf([&] { (void)t.sliceView(4, {3}); }).isEmpty());
        Tensor z = Tensor::zeros(DType::Float32, {0, 5});
        QCOMPARE(z.numel(), 0);
        Tensor sc = Tensor::scalar(DType::Float64, 2.5);
        QCOMPARE(sc.ndim(), 0);
        QCOMPARE(sc.at(0), 2.5);
        // float -> int conversion truncates, NaN gives 0 (no UB)
        Tensor f = Tensor::fromDoubles(DType::Float32, {3}, {-1.7, 2.9, NAN});
        Tensor i = Tensor::empty(DType::Int64, {3});
        convertElements(f.rawData(), DType::Float32, i.rawData(), DType::Int64, 3);
        QCOMPARE(i.intAt(0), -1);
        QCOMPARE(i.intAt(1), 2);
        QCOMPARE(i.intAt(2), 0);
        // constants are borrowed read-only
        auto data = TensorData::fromDoubles(DType::Float32, {2}, {1, 2});
        Tensor c = Tensor::fromConstant(*data);
        QVERIFY(!c.writable());
        TensorData missing;
        missing.missing = "file gone";
        QVERIFY(errorOf([&] { (void)Tensor::fromConstant(missing); }).contains("file gone"));
    }

    void tensorProtoRoundTrip() {
        const auto dir = std::filesystem::temp_directory_path() / ("passlens_tst_exec_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        Tensor a = randn(DType::Float32, {2, 3, 4});
        Tensor b = ints(DType::Int64, {}, {16000});
        writeTensorProto(a, dir / "input_0.pb", "x");
        writeTensorProto(b, dir / "input_1.pb", "sr");
        std::string name;
        Tensor ra = readTensorProto(dir / "input_0.pb", &name);
        QCOMPARE(QString::fromStdString(name), QString("x"));
        QCOMPARE(ra.shape(), a.shape());
        VERIFY_CLOSE(ra, a.toDoubles(), 0, 0);
        auto all = readTensorDir(dir, "input");
        QCOMPARE(all.size(), std::size_t(2));
        QCOMPARE(all[1].intAt(0), 16000);
        QVERIFY(readTensorDir(dir, "output").empty());
        std::ofstream(dir / "bad.pb") << "<html>";
        QVERIFY(errorOf([&] { (void)readTensorProto(dir / "bad.pb"); }).contains("bad.pb"));
        std::filesystem::remove_all(dir);
        // seeded random inputs are reproducible
        const Type t = Type::parse("float32[?,3]");
        Tensor r1 = randomTensor(t, 7), r2 = randomTensor(t, 7);
        QCOMPARE(r1.shape(), (Shape{1, 3}));
        VERIFY_CLOSE(r1, r2.toDoubles(), 0, 0);
    }

    // ------------------------------------------------------------------ Elemwise
    void elemwiseScalars_data() {
        QTest::addColumn<QString>("scalar");
        for (const char* s :
             {"add",  "sub",   "mul",     "true_div", "int_div", "mod",     "neg",  "abs", "exp", "log",     "sqrt",
              "sqr",  "pow",   "maximum", "minimum",  "tanh",    "sigmoid", "relu", "erf", "sin", "cos",     "floor",
              "ceil", "round", "sgn",     "lt",       "gt",      "le",      "ge",   "eq",  "neq", "identity"})
            QTest::newRow(s) << QString(s);
    }

    void elemwiseScalars() {
        QFETCH(QString, scalar);
        const std::string s = scalar.toStdString();
        static const std::map<std::string, std::function<double(double, double)>> f = {
            {"add", [](double a, double b) { return a + b; }},
            {"sub", [](double a, double b) { return a - b; }},
            {"mul", [](double a, double b) { return a * b; }},
            {"true_div", [](double a, double b) { return a / b; }},
            {"int_div", [](double a, double b) { return std::floor(a / b); }},
            {"mod",
             [](double a, double b) {
                 double r = std::fmod(a, b);
                 if (r != 0 && ((r < 0) != (b < 0))) r += b;
                 return r;
             }},
            {"neg", [](double a, double) { return -a; }},
            {"abs", [](double a, double) { return std::fabs(a); }},
            {"exp", [](double a, double) { return std::exp(a); }},
            {"log", [](double a, double) { return std::log(a); }},
            {"sqrt", [](double a, double) { return std::sqrt(a); }},
            {"sqr", [](double a, double) { return a * a; }},
            {"pow", [](double a, double b) { return std::pow(a, b); }},
            {"maximum", [](double a, double b) { return std::max(a, b); }},
            {"minimum", [](double a, double b) { return std::min(a, b); }},
            {"tanh", [](double a, double) { return std::tanh(a); }},
            {"sigmoid", [](double a, double) { return 1 / (1 + std::exp(-a)); }},
            {"relu", [](double a, double) { return a > 0 ? a : 0; }},
            {"erf", [](double a, double) { return std::erf(a); }},
            {"sin", [](double a, double) { return std::sin(a); }},
            {"cos", [](double a, double) { return std::cos(a); }},
            {"floor", [](double a, double) { return std::floor(a); }},
            {"ceil", [](double a, double) { return std::ceil(a); }},
            {"round", [](double a, double) { return std::nearbyint(a); }},
            {"sgn", [](double a, double) { return double((a > 0) - (a < 0)); }},
            {"lt", [](double a, double b) { return double(a < b); }},
            {"gt", [](double a, double b) { return double(a > b); }},
            {"le", [](double a, double b) { return double(a <= b); }},
            {"ge", [](double a, double b) { return double(a >= b); }},
            {"eq", [](double a, double b) { return double(a == b); }},
            {"neq", [](double a, double b) { return double(a != b); }},
            {"identity", [](double a, double) { return a; }}};
        static const std::set<std::string> unary = {"neg",   "abs",     "exp",   "log", "sqrt",    "sqr",
                                                    "tanh",  "sigmoid", "relu",  "erf", "sin",     "cos",
                                                    "floor", "ceil",    "round", "sgn", "identity"};
        const bool un = unary.count(s) > 0;
        const bool positive = s == "log" || s == "sqrt" || s == "pow";
        // broadcasting shapes, a 0-size shape and 0-d scalars
        const std::vector<std::pair<Shape, Shape>> shapes = {
            {{3, 1, 5}, {1, 4, 5}}, {{2, 3}, {2, 3}}, {{0, 3}, {1, 3}}, {{}, {}}, {{4, 1}, {1, 1}}};
        for (const auto& [sa, sb] : shapes) {
            Harness h;
            Tensor a = randn(DType::Float32, sa, positive ? 0.1 : -3, 3);
            Tensor b = randn(DType::Float32, sb, positive ? 0.1 : -3, 3);
            if (s == "eq" || s == "neq" || s == "le" || s == "ge") // make equal pairs likely
                b = Tensor::fromDoubles(DType::Float32, sb,
                                        std::vector<double>(static_cast<std::size_t>(b.numel()), 1.0));
            Variable* va = h.input(a);
            Variable* out = un ? elem(h.g, s, {va}) : elem(h.g, s, {va, h.input(b)});
            const auto res = h.run({out});
            Shape os = un ? sa : Shape{};
            if (!un)
                for (std::size_t k = 0; k < sa.size(); ++k)
                    os.push_back(std::max(sa[k], sb[k]) * (sa[k] && sb[k] ? 1 : 0));
            QCOMPARE(res[0].shape(), os);
            std::vector<double> want(static_cast<std::size_t>(shapeNumel(os)));
            const auto av = a.toDoubles(), bv = b.toDoubles();
            for (std::int64_t e = 0; e < shapeNumel(os); ++e) {
                const double x = av[static_cast<std::size_t>(un ? e : bcastIndex(e, os, sa))];
                const double y = un ? 0 : bv[static_cast<std::size_t>(bcastIndex(e, os, sb))];
                // float32 arithmetic: the reference rounds its result to float
                want[static_cast<std::size_t>(e)] = static_cast<float>(f.at(s)(x, y));
            }
            VERIFY_CLOSE(res[0], want, 2e-6, 2e-7);
        }
    }

    void elemwiseNaryAndIntegers() {
        Harness h;
        Tensor a = randn(DType::Float32, {2, 3}), b = randn(DType::Float32, {1, 3}), c = randn(DType::Float32, {2, 1});
        Tensor i = ints(DType::Int64, {4}, {-7, 7, -8, 9}), j = ints(DType::Int64, {4}, {2, -2, 3, 0});
        Tensor i8 = ints(DType::Int8, {3}, {100, 100, -100});
        Variable *va = h.input(a), *vb = h.input(b), *vc = h.input(c), *vi = h.input(i), *vj = h.input(j),
                 *v8 = h.input(i8);
        auto outs =
            h.run({elem(h.g, "add", {va, vb, vc}), elem(h.g, "maximum", {va, vb, vc}), elem(h.g, "int_div", {vi, vj}),
                   elem(h.g, "mod", {vi, vj}), elem(h.g, "add", {v8, v8}), elem(h.g, "true_div", {vi, vj})});
        std::vector<double> sum, mx;
        const auto av = a.toDoubles(), bv = b.toDoubles(), cv = c.toDoubles();
        for (int r = 0; r < 2; ++r)
            for (int k = 0; k < 3; ++k) {
                const double x = av[static_cast<std::size_t>(r * 3 + k)], y = bv[static_cast<std::size_t>(k)],
                             z = cv[static_cast<std::size_t>(r)];
                sum.push_back(static_cast<float>(static_cast<float>(x + y) + z));
                mx.push_back(std::max({x, y, z}));
            }
        VERIFY_CLOSE(outs[0], sum, 1e-6);
        VERIFY_CLOSE(outs[1], mx, 0, 0);
        QCOMPARE(outs[2].dtype(), DType::Int64);
        VERIFY_CLOSE(outs[2], (std::vector<double>{-4, -4, -3, 0}), 0, 0); // floor division; x // 0 gives 0
        VERIFY_CLOSE(outs[3], (std::vector<double>{1, -1, 1, 0}), 0, 0);   // Python's sign rule
        QCOMPARE(outs[4].dtype(), DType::Int8);
        VERIFY_CLOSE(outs[4], (std::vector<double>{-56, -56, 56}), 0, 0); // int8 wraps
        QCOMPARE(outs[5].dtype(), DType::Float64);                        // int64 / int64 upgrades to float64
        {
            // INT64_MIN // -1 wraps (no SIGFPE), as NumPy's int64 arithmetic
            Harness h2;
            Tensor mn = Tensor::empty(DType::Int64, {2});
            mn.data<std::int64_t>()[0] = INT64_MIN;
            mn.data<std::int64_t>()[1] = 7;
            Variable *a2 = h2.input(mn), *b2 = h2.input(ints(DType::Int64, {2}, {-1, -1}));
            auto o2 = h2.run({elem(h2.g, "int_div", {a2, b2}), elem(h2.g, "mod", {a2, b2}), elem(h2.g, "neg", {a2})});
            QCOMPARE(o2[0].intAt(0), INT64_MIN);
            QCOMPARE(o2[0].intAt(1), -7);
            QCOMPARE(o2[1].intAt(0), 0);
            QCOMPARE(o2[2].intAt(0), INT64_MIN);
        }
        VERIFY_CLOSE(outs[5], (std::vector<double>{-3.5, -3.5, -8.0 / 3, INFINITY}), 1e-12);
    }

    void elemwiseComposite() {
        Harness h;
        Tensor a = randn(DType::Float32, {3, 4}, -8, 8), b = randn(DType::Float32, {1, 4}),
               c = randn(DType::Float32, {3, 1});
        Tensor n = ints(DType::Int64, {1, 1}, {3});
        Variable *va = h.input(a), *vb = h.input(b), *vc = h.input(c), *vn = h.input(n);
        auto comp = [&](const std::string& expr, std::vector<Variable*> ins, const std::string& dtype) {
            return h.g.apply(Op::get("GpuElemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", dtype}}), [&] {
                std::vector<Variable*> gi;
                for (Variable* v : ins) gi.push_back(h.g.apply(Op::get("GpuFromHost"), {v}));
                return gi;
            }());
        };
        auto host = [&](Variable* v) { return h.g.apply(Op::get("HostFromGpu"), {v}); };
        auto outs =
            h.run({host(comp("add(i0,mul(i1,i2))", {va, vb, vc}, "float32")),
                   host(comp("clip{0,6}(i0)", {va}, "float32")), host(comp("leaky_relu{0.01}(i0)", {va}, "float32")),
                   host(comp("hard_sigmoid{0.2,0.5}(i0)", {va}, "float32")),
                   host(comp("switch(lt(i0,i1),i0,cast{float32}(i2))", {va, vb, vn}, "float32")),
                   host(comp("cast{int32}(mul(i0,i1))", {va, vb}, "int32"))});
        const auto av = a.toDoubles(), bv = b.toDoubles(), cv = c.toDoubles();
        std::vector<double> w0, w1, w2, w3, w4, w5;
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 4; ++k) {
                const float x = static_cast<float>(av[static_cast<std::size_t>(r * 4 + k)]),
                            y = static_cast<float>(bv[static_cast<std::size_t>(k)]),
                            z = static_cast<float>(cv[static_cast<std::size_t>(r)]);
                w0.push_back(x + y * z);
                w1.push_back(std::min(std::max(x, 0.f), 6.f));
                w2.push_back(x >= 0 ? x : 0.01f * x);
                w3.push_back(std::min(std::max(0.2f * x + 0.5f, 0.f), 1.f));
                w4.push_back(x < y ? x : 3.f);
                w5.push_back(static_cast<double>(static_cast<std::int32_t>(x * y)));
            }
        VERIFY_CLOSE(outs[0], w0, 1e-6);
        VERIFY_CLOSE(outs[1], w1, 0, 0);
        VERIFY_CLOSE(outs[2], w2, 1e-6);
        VERIFY_CLOSE(outs[3], w3, 1e-6);
        VERIFY_CLOSE(outs[4], w4, 0, 0);
        QCOMPARE(outs[5].dtype(), DType::Int32);
        VERIFY_CLOSE(outs[5], w5, 0, 0);
    }

    void elemwiseInPlaceKeepsInputs() {
        // x is used by two nodes: the first must not overwrite it in place
        Harness h;
        Tensor a = randn(DType::Float32, {64});
        Variable* va = h.input(a);
        Variable* e1 = elem(h.g, "exp", {va});
        Variable* t = elem(h.g, "neg", {e1}); // e1 dies here: may be reused
        Variable* u = elem(h.g, "add", {t, va});
        auto outs = h.run({u, va});
        std::vector<double> want;
        for (double x : a.toDoubles())
            want.push_back(
                static_cast<float>(-static_cast<float>(std::exp(static_cast<float>(x))) + static_cast<float>(x)));
        VERIFY_CLOSE(outs[0], want, 1e-6);
        VERIFY_CLOSE(outs[1], a.toDoubles(), 0, 0);
        VERIFY_CLOSE(h.values[0], a.toDoubles(), 0, 0); // the caller's input is untouched
    }

    void elemwiseErrors() {
        // runtime shapes that do not broadcast, naming the node
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[?]"), "x");
        Variable* y = g.addInput(Type::parse("float32[?]"), "y");
        Variable* s = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, y}, "MyAdd");
        g.setOutputs({s});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        const QString err = errorOf([&] { ex.run({randn(DType::Float32, {3}), randn(DType::Float32, {4})}); });
        QVERIFY2(err.contains("Elemwise{add}") && err.contains("MyAdd") && err.contains("broadcast"), qPrintable(err));
        // a bad composite expression is refused when the op is made (its typed expression is parsed then)
        const QString err2 = errorOf([] {
            Op::get("Elemwise", {{"scalar", "composite"}, {"expr", "frobnicate(i0)"}, {"dtype", "float32"}});
        });
        QVERIFY2(err2.contains("Elemwise: bad expression 'frobnicate(i0)'") &&
                     err2.contains("unknown scalar op 'frobnicate'"),
                 qPrintable(err2));
        FunctionGraph g2;
        Variable* x2 = g2.addInput(Type::parse("float32[3]"), "x");
        Variable* ok2 =
            g2.apply(Op::get("Elemwise", {{"scalar", "composite"}, {"expr", "exp(i0)"}, {"dtype", "float32"}}), {x2});
        g2.setOutputs({ok2});
        Executor ex2(g2, ExecOptions{DeviceChoice::Cpu});
        // wrong input count / dtype
        QVERIFY(errorOf([&] { ex2.run({}); }).contains("takes 1 inputs"));
        QVERIFY(errorOf([&] { ex2.run({randn(DType::Float64, {3})}); }).contains("dtype float64"));
        QVERIFY(errorOf([&] { ex2.run({randn(DType::Float32, {4})}); }).contains("expected float32[3]"));
    }

    // ------------------------------------------------------------------ shapes
    void shapeKernels() {
        Harness h;
        Tensor a = randn(DType::Float32, {2, 1, 3});
        Variable* va = h.input(a);
        Variable* tr = h.g.apply(Op::get("DimShuffle", {{"order", {2, 0}}}), {va});         // drop axis 1, transpose
        Variable* ex = h.g.apply(Op::get("DimShuffle", {{"order", {"x", 0, 2, 1}}}), {va}); // view
        Variable* rs = h.g.apply(Op::get("Reshape", {{"ndim", 2}}), {va, h.constant(ints(DType::Int64, {2}, {-1, 2}))});
        Variable* fl = h.g.apply(Op::get("Flatten", {{"outdim", 2}}), {va});
        Variable* sh = h.g.apply(Op::get("Shape"), {va});
        Variable* s2 = h.g.apply(Op::get("Shape_i", {{"i", 2}}), {va});
        Variable* mv =
            h.g.apply(Op::get("MakeVector", {{"dtype", "int64"}}), {s2, h.constant(ints(DType::Int32, {}, {5}))});
        Variable* al = h.g.apply(Op::get("Alloc"),
                                 {h.constant(ints(DType::Float32, {3}, {1, 2, 3})),
                                  h.constant(ints(DType::Int64, {}, {2})), h.constant(ints(DType::Int64, {}, {3}))});
        Variable* ae =
            h.g.apply(Op::get("AllocEmpty", {{"dtype", "float32"}}), {h.constant(ints(DType::Int64, {}, {0})), s2});
        Variable* cc = h.g.apply(Op::get("CpuContiguous"), {tr});
        auto outs = h.run({tr, ex, rs, fl, sh, s2, mv, al, ae, cc});
        const auto av = a.toDoubles();
        QCOMPARE(outs[0].shape(), (Shape{3, 2}));
        VERIFY_CLOSE(outs[0], (std::vector<double>{av[0], av[3], av[1], av[4], av[2], av[5]}), 0, 0);
        QCOMPARE(outs[1].shape(), (Shape{1, 2, 3, 1}));
        VERIFY_CLOSE(outs[1], av, 0, 0);
        QCOMPARE(outs[2].shape(), (Shape{3, 2}));
        QCOMPARE(outs[3].shape(), (Shape{2, 3}));
        VERIFY_CLOSE(outs[4], (std::vector<double>{2, 1, 3}), 0, 0);
        QCOMPARE(outs[5].ndim(), 0);
        QCOMPARE(outs[5].intAt(0), 3);
        VERIFY_CLOSE(outs[6], (std::vector<double>{3, 5}), 0, 0);
        VERIFY_CLOSE(outs[7], (std::vector<double>{1, 2, 3, 1, 2, 3}), 0, 0);
        QCOMPARE(outs[8].shape(), (Shape{0, 3}));
        VERIFY_CLOSE(outs[9], outs[0].toDoubles(), 0, 0);
        // absurd sizes are refused, not attempted
        {
            FunctionGraph ga;
            Variable* v = ga.addConstant(TensorData::fromDoubles(DType::Float32, {}, {1}));
            Variable* big = ga.addConstant(TensorData::fromInts(DType::Int64, {}, {std::int64_t(1) << 40}));
            ga.setOutputs({ga.apply(Op::get("Alloc"), {v, big, big}, "Huge")});
            Executor exa(ga, ExecOptions{DeviceChoice::Cpu});
            const QString err = errorOf([&] { exa.run({}); });
            QVERIFY2(err.contains("too large") && err.contains("Huge"), qPrintable(err));
        }
        // Reshape to an impossible shape names the node
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[?]"), "x");
        Variable* s = g.addInput(Type::parse("int64[2]"), "s");
        g.setOutputs({g.apply(Op::get("Reshape", {{"ndim", 2}}), {x, s}, "R")});
        Executor exr(g, ExecOptions{DeviceChoice::Cpu});
        QVERIFY(errorOf([&] {
                    exr.run({randn(DType::Float32, {5}), ints(DType::Int64, {2}, {2, 2})});
                }).contains("cannot reshape"));
    }

    // ------------------------------------------------------------------ indexing
    void subtensorKernels() {
        Harness h;
        Tensor a = randn(DType::Float32, {4, 5, 3});
        Variable* va = h.input(a);
        Variable* i1 = h.input(ints(DType::Int64, {}, {1}));
        Variable* i4 = h.input(ints(DType::Int64, {}, {-1}));
        auto sub = [&](json idx, std::vector<Variable*> extra = {}) {
            std::vector<Variable*> ins{va};
            ins.insert(ins.end(), extra.begin(), extra.end());
            return h.g.apply(Op::get("Subtensor", {{"idx", idx}}), ins);
        };
        Variable* s0 = sub(json::array({json{{"start", 1}, {"stop", 3}}}));                               // x[1:3]
        Variable* s1 = sub(json::array({2, json{{"step", -2}}}));                                         // x[2, ::-2]
        Variable* s2 = sub(json::array({json::object(), json{{"start", "?"}, {"stop", "?"}}}), {i1, i4}); // x[:, 1:-1]
        Variable* s3 = sub(json::array({"?"}), {i4});                                                     // x[-1]
        Variable* s4 = sub(json::array({json{{"start", 9}, {"stop", 12}}}));                              // empty
        Variable* adv = h.g.apply(Op::get("AdvancedSubtensor1"), {va, h.constant(ints(DType::Int64, {3}, {3, -4, 3}))});
        auto outs = h.run({s0, s1, s2, s3, s4, adv});
        const auto av = a.toDoubles();
        auto at = [&](int i, int j, int k) { return av[static_cast<std::size_t>((i * 5 + j) * 3 + k)]; };
        std::vector<double> w0, w1, w2, w3, w5;
        for (int i = 1; i < 3; ++i)
            for (int j = 0; j < 5; ++j)
                for (int k = 0; k < 3; ++k) w0.push_back(at(i, j, k));
        for (int j = 4; j >= 0; j -= 2)
            for (int k = 0; k < 3; ++k) w1.push_back(at(2, j, k));
        for (int i = 0; i < 4; ++i)
            for (int j = 1; j < 4; ++j)
                for (int k = 0; k < 3; ++k) w2.push_back(at(i, j, k));
        for (int j = 0; j < 5; ++j)
            for (int k = 0; k < 3; ++k) w3.push_back(at(3, j, k));
        for (int i : {3, 0, 3})
            for (int j = 0; j < 5; ++j)
                for (int k = 0; k < 3; ++k) w5.push_back(at(i, j, k));
        QCOMPARE(outs[0].shape(), (Shape{2, 5, 3}));
        VERIFY_CLOSE(outs[0], w0, 0, 0);
        QCOMPARE(outs[1].shape(), (Shape{3, 3}));
        VERIFY_CLOSE(outs[1], w1, 0, 0);
        QCOMPARE(outs[2].shape(), (Shape{4, 3, 3}));
        VERIFY_CLOSE(outs[2], w2, 0, 0);
        VERIFY_CLOSE(outs[3], w3, 0, 0);
        QCOMPARE(outs[4].shape(), (Shape{0, 5, 3}));
        VERIFY_CLOSE(outs[5], w5, 0, 0);
        // out-of-bounds index names the node
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[3]"), "x");
        Variable* k = g.addInput(Type::parse("int64[1]"), "k");
        g.setOutputs({g.apply(Op::get("AdvancedSubtensor1"), {x, k}, "Take")});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        const QString err = errorOf([&] { ex.run({randn(DType::Float32, {3}), ints(DType::Int64, {1}, {3})}); });
        QVERIFY2(err.contains("out of bounds") && err.contains("Take"), qPrintable(err));
    }

    void incSubtensorJoinSplit() {
        Harness h;
        Tensor a = randn(DType::Float32, {3, 4}), y = randn(DType::Float32, {4}), b = randn(DType::Float32, {3, 2});
        Variable *va = h.input(a), *vy = h.input(y), *vb = h.input(b);
        Variable* inc =
            h.g.apply(Op::get("IncSubtensor", {{"idx", json::array({json{{"start", 1}}})}}), {va, vy}); // x[1:] += y
        Variable* set =
            h.g.apply(Op::get("IncSubtensor", {{"idx", json::array({0})}, {"set_instead_of_inc", true}}), {va, vy});
        Variable* jn = h.g.apply(Op::get("Join", {{"axis", 1}}), {va, vb});
        Apply* sp = h.g.makeApply(Op::get("Split", {{"axis", 1}, {"n_splits", 3}}),
                                  {va, h.constant(ints(DType::Int64, {3}, {1, 0, 3}))});
        auto outs = h.run({inc, set, jn, sp->output(0), sp->output(1), sp->output(2), va});
        const auto av = a.toDoubles(), yv = y.toDoubles(), bv = b.toDoubles();
        std::vector<double> w0 = av, w1 = av, w2, s0, s2;
        for (int i = 1; i < 3; ++i)
            for (int k = 0; k < 4; ++k)
                w0[static_cast<std::size_t>(i * 4 + k)] =
                    static_cast<float>(av[static_cast<std::size_t>(i * 4 + k)] + yv[static_cast<std::size_t>(k)]);
        for (int k = 0; k < 4; ++k) w1[static_cast<std::size_t>(k)] = yv[static_cast<std::size_t>(k)];
        for (int i = 0; i < 3; ++i) {
            for (int k = 0; k < 4; ++k) w2.push_back(av[static_cast<std::size_t>(i * 4 + k)]);
            for (int k = 0; k < 2; ++k) w2.push_back(bv[static_cast<std::size_t>(i * 2 + k)]);
            s0.push_back(av[static_cast<std::size_t>(i * 4)]);
            for (int k = 1; k < 4; ++k) s2.push_back(av[static_cast<std::size_t>(i * 4 + k)]);
        }
        VERIFY_CLOSE(outs[0], w0, 0, 0);
        VERIFY_CLOSE(outs[1], w1, 0, 0);
        VERIFY_CLOSE(outs[2], w2, 0, 0);
        VERIFY_CLOSE(outs[3], s0, 0, 0);
        QCOMPARE(outs[4].shape(), (Shape{3, 0}));
        VERIFY_CLOSE(outs[5], s2, 0, 0);
        VERIFY_CLOSE(outs[6], av, 0, 0); // the inputs of IncSubtensor were not modified
    }

    // ------------------------------------------------------------------ reductions
    void careduce_data() {
        QTest::addColumn<QString>("scalar");
        QTest::addColumn<QString>("axes");
        for (const char* s : {"add", "mul", "maximum", "minimum"})
            for (const char* ax : {"[0]", "[1]", "[2]", "[0,2]", "[1,2]", "null"})
                QTest::newRow((std::string(s) + ax).c_str()) << QString(s) << QString(ax);
    }

    void careduce() {
        QFETCH(QString, scalar);
        QFETCH(QString, axes);
        const json ax = json::parse(axes.toStdString());
        for (const Shape& shape : {Shape{3, 4, 5}, Shape{2, 1, 6}, Shape{0, 2, 3}}) {
            Harness h;
            Tensor a = randn(DType::Float32, shape, 0.5, 1.5);
            Variable* r =
                h.g.apply(Op::get("CAReduce", {{"scalar", scalar.toStdString()}, {"axis", ax}}), {h.input(a)});
            if ((scalar == "maximum" || scalar == "minimum") && shape[0] == 0 &&
                (ax.is_null() || ax.dump().find('0') != std::string::npos)) {
                // the maximum of nothing (axis 0 has length 0) is refused, naming the reason
                h.g.setOutputs({r});
                Executor ex(h.g, ExecOptions{DeviceChoice::Cpu});
                QVERIFY(errorOf([&] { ex.run(h.values); }).contains("empty axis"));
                continue;
            }
            auto outs = h.run({r});
            std::vector<bool> red(3, ax.is_null());
            if (!ax.is_null())
                for (const auto& e : ax) red[e.get<std::size_t>()] = true;
            Shape os;
            for (int k = 0; k < 3; ++k)
                if (!red[static_cast<std::size_t>(k)]) os.push_back(shape[static_cast<std::size_t>(k)]);
            QCOMPARE(outs[0].shape(), os);
            const double init = scalar == "add" ? 0 : scalar == "mul" ? 1 : scalar == "maximum" ? -INFINITY : INFINITY;
            std::vector<double> want(static_cast<std::size_t>(shapeNumel(os)), init);
            const auto av = a.toDoubles();
            for (std::int64_t e = 0; e < a.numel(); ++e) {
                std::int64_t rem = e, o = 0, m = 1;
                for (int k = 2; k >= 0; --k) {
                    const std::int64_t i = rem % shape[static_cast<std::size_t>(k)];
                    rem /= shape[static_cast<std::size_t>(k)];
                    if (!red[static_cast<std::size_t>(k)]) {
                        o += i * m;
                        m *= shape[static_cast<std::size_t>(k)];
                    }
                }
                double& w = want[static_cast<std::size_t>(o)];
                const double x = av[static_cast<std::size_t>(e)];
                if (scalar == "add")
                    w += x;
                else if (scalar == "mul")
                    w *= x;
                else if (scalar == "maximum")
                    w = std::max(w, x);
                else
                    w = std::min(w, x);
            }
            VERIFY_CLOSE(outs[0], want, 1e-5, 1e-6);
        }
    }

    void careducePreScalarAndInts() {
        Harness h;
        Tensor a = randn(DType::Float32, {3, 4});
        Tensor b = ints(DType::Int32, {2, 2}, {1, 2, 3, 4});
        Variable* ga = h.g.apply(Op::get("GpuFromHost"), {h.input(a)});
        Variable* sq =
            h.g.apply(Op::get("GpuCAReduceCuda", {{"scalar", "add"}, {"axis", {1}}, {"pre_scalar_op", "sqr"}}), {ga});
        Variable* ab = h.g.apply(
            Op::get("GpuCAReduceCuda", {{"scalar", "maximum"}, {"axis", {0}}, {"pre_scalar_op", "abs"}}), {ga});
        Variable* si = h.g.apply(Op::get("CAReduce", {{"scalar", "add"}, {"axis", nullptr}}), {h.input(b)});
        auto outs = h.run({h.g.apply(Op::get("HostFromGpu"), {sq}), h.g.apply(Op::get("HostFromGpu"), {ab}), si});
        const auto av = a.toDoubles();
        std::vector<double> w0(3, 0), w1(4, 0);
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 4; ++k) {
                const double x = av[static_cast<std::size_t>(i * 4 + k)];
                w0[static_cast<std::size_t>(i)] += x * x;
                w1[static_cast<std::size_t>(k)] = std::max(w1[static_cast<std::size_t>(k)], std::fabs(x));
            }
        VERIFY_CLOSE(outs[0], w0, 1e-5);
        VERIFY_CLOSE(outs[1], w1, 0, 0);
        QCOMPARE(outs[2].dtype(), DType::Int64);
        QCOMPARE(outs[2].intAt(0), 10);
    }

    void cumOpAndSoftmax() {
        Harness h;
        Tensor a = randn(DType::Float32, {2, 3, 4});
        Variable* va = h.input(a);
        Variable* cs = h.g.apply(Op::get("CumOp", {{"axis", 1}, {"mode", "add"}}), {va});
        Variable* cp = h.g.apply(Op::get("CumOp", {{"axis", nullptr}, {"mode", "mul"}}), {va});
        Variable* sm = h.g.apply(Op::get("Softmax", {{"axis", 1}}), {va});
        Variable* ls = h.g.apply(Op::get("LogSoftmax", {{"axis", -1}}), {va});
        auto outs = h.run({cs, cp, sm, ls});
        const auto av = a.toDoubles();
        auto at = [&](int i, int j, int k) { return av[static_cast<std::size_t>((i * 3 + j) * 4 + k)]; };
        std::vector<double> w0(24), w1(24), w2(24), w3(24);
        double prod = 1;
        for (int e = 0; e < 24; ++e) {
            prod *= av[static_cast<std::size_t>(e)];
            w1[static_cast<std::size_t>(e)] = prod;
        }
        for (int i = 0; i < 2; ++i)
            for (int k = 0; k < 4; ++k) {
                double s = 0, mx = -INFINITY, z = 0;
                for (int j = 0; j < 3; ++j) {
                    s += at(i, j, k);
                    w0[static_cast<std::size_t>((i * 3 + j) * 4 + k)] = s;
                    mx = std::max(mx, at(i, j, k));
                }
                for (int j = 0; j < 3; ++j) z += std::exp(at(i, j, k) - mx);
                for (int j = 0; j < 3; ++j)
                    w2[static_cast<std::size_t>((i * 3 + j) * 4 + k)] = std::exp(at(i, j, k) - mx) / z;
            }
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j) {
                double mx = -INFINITY, z = 0;
                for (int k = 0; k < 4; ++k) mx = std::max(mx, at(i, j, k));
                for (int k = 0; k < 4; ++k) z += std::exp(at(i, j, k) - mx);
                for (int k = 0; k < 4; ++k)
                    w3[static_cast<std::size_t>((i * 3 + j) * 4 + k)] = at(i, j, k) - mx - std::log(z);
            }
        VERIFY_CLOSE(outs[0], w0, 1e-6, 1e-6);
        VERIFY_CLOSE(outs[1], w1, 1e-5, 1e-12);
        VERIFY_CLOSE(outs[2], w2, 1e-6, 1e-7);
        VERIFY_CLOSE(outs[3], w3, 1e-6, 1e-6);
    }

    // ------------------------------------------------------------------ BLAS
    void blasKernels() {
        Harness h;
        Tensor x = randn(DType::Float32, {5, 7}), y = randn(DType::Float32, {7, 3}), v = randn(DType::Float32, {7});
        Tensor z = Tensor::fromDoubles(DType::Float32, {5, 3}, std::vector<double>(15, NAN)); // b = 0 must not read z
        Tensor z2 = randn(DType::Float32, {5, 3}), zv = randn(DType::Float32, {5});
        Tensor ba = randn(DType::Float32, {2, 3, 4, 3}), bb = randn(DType::Float32, {2, 3, 3, 2});
        Variable *vx = h.input(x), *vy = h.input(y), *vv = h.input(v), *vz = h.input(z), *vz2 = h.input(z2),
                 *vzv = h.input(zv);
        auto sc = [&](double s) { return h.constant(Tensor::scalar(DType::Float32, s)); };
        Variable* d22 = h.g.apply(Op::get("Dot22"), {vx, vy});
        Variable* dmv = h.g.apply(Op::get("Dot"), {vx, vv});
        Variable* dvv = h.g.apply(Op::get("Dot"), {vv, vv});
        Variable* g0 = h.g.apply(Op::get("Gemm"), {vz, sc(2.0), vx, vy, sc(0.0)});
        Variable* g1 = h.g.apply(Op::get("Gemm"), {vz2, sc(-0.5), vx, vy, sc(3.0)});
        Variable* gv = h.g.apply(Op::get("Gemv"), {vzv, sc(1.5), vx, vv, sc(2.0)});
        Variable* bd = h.g.apply(Op::get("BatchedDot"), {h.input(ba), h.input(bb)});
        auto outs = h.run({d22, dmv, dvv, g0, g1, gv, bd});
        const auto X = x.toDoubles(), Y = y.toDoubles(), V = v.toDoubles(), Z2 = z2.toDoubles(), ZV = zv.toDoubles();
        std::vector<double> w22(15), wmv(5), w0(15), w1(15), wv(5);
        double wvv = 0;
        for (int k = 0; k < 7; ++k) wvv += V[static_cast<std::size_t>(k)] * V[static_cast<std::size_t>(k)];
        for (int i = 0; i < 5; ++i) {
            double m = 0;
            for (int k = 0; k < 7; ++k) m += X[static_cast<std::size_t>(i * 7 + k)] * V[static_cast<std::size_t>(k)];
            wmv[static_cast<std::size_t>(i)] = m;
            wv[static_cast<std::size_t>(i)] = 2.0 * ZV[static_cast<std::size_t>(i)] + 1.5 * m;
            for (int j = 0; j < 3; ++j) {
                double s = 0;
                for (int k = 0; k < 7; ++k)
                    s += X[static_cast<std::size_t>(i * 7 + k)] * Y[static_cast<std::size_t>(k * 3 + j)];
                w22[static_cast<std::size_t>(i * 3 + j)] = s;
                w0[static_cast<std::size_t>(i * 3 + j)] = 2 * s;
                w1[static_cast<std::size_t>(i * 3 + j)] = 3 * Z2[static_cast<std::size_t>(i * 3 + j)] - 0.5 * s;
            }
        }
        VERIFY_CLOSE(outs[0], w22, 1e-5, 1e-5);
        VERIFY_CLOSE(outs[1], wmv, 1e-5, 1e-5);
        QCOMPARE(outs[2].ndim(), 0);
        VERIFY_CLOSE(outs[2], std::vector<double>{wvv}, 1e-5, 1e-5);
        VERIFY_CLOSE(outs[3], w0, 1e-5, 1e-5);
        VERIFY_CLOSE(outs[4], w1, 1e-5, 1e-5);
        VERIFY_CLOSE(outs[5], wv, 1e-5, 1e-5);
        // batched dot: [2,3,4,3] x [2,3,3,2] -> [2,3,4,2]
        QCOMPARE(outs[6].shape(), (Shape{2, 3, 4, 2}));
        const auto A = ba.toDoubles(), B = bb.toDoubles();
        std::vector<double> wb;
        for (int p = 0; p < 2; ++p)
            for (int q = 0; q < 3; ++q)
                for (int i = 0; i < 4; ++i)
                    for (int j = 0; j < 2; ++j) {
                        double s = 0;
                        for (int k = 0; k < 3; ++k)
                            s += A[static_cast<std::size_t>(((p * 3 + q) * 4 + i) * 3 + k)] *
                                 B[static_cast<std::size_t>(((p * 3 + q) * 3 + k) * 2 + j)];
                        wb.push_back(s);
                    }
        VERIFY_CLOSE(outs[6], wb, 1e-5, 1e-5);
        // 0-size GEMM
        Harness h0;
        Variable* e = h0.g.apply(Op::get("Dot22"),
                                 {h0.input(randn(DType::Float32, {0, 4})), h0.input(randn(DType::Float32, {4, 2}))});
        Variable* k0 = h0.g.apply(Op::get("Dot22"),
                                  {h0.input(randn(DType::Float32, {2, 0})), h0.input(randn(DType::Float32, {0, 3}))});
        auto o0 = h0.run({e, k0});
        QCOMPARE(o0[0].shape(), (Shape{0, 2}));
        VERIFY_CLOSE(o0[1], std::vector<double>(6, 0.0), 0, 0);
        // one-row (M = 1) and one-column (N = 1) products go through gemv: beta = 0 must not
        // read z either (NaN), beta != 0 scales it
        for (DType dt : {DType::Float32, DType::Float64}) {
            Harness h1;
            Tensor r = randn(dt, {1, 7}), c = randn(dt, {7, 1}), m = randn(dt, {7, 5}), m2 = randn(dt, {4, 7}),
                   zr2 = randn(dt, {1, 5});
            Tensor zr = Tensor::fromDoubles(dt, {1, 5}, std::vector<double>(5, NAN)),
                   zc = Tensor::fromDoubles(dt, {4, 1}, std::vector<double>(4, NAN));
            auto s1 = [&](double v) { return h1.constant(Tensor::scalar(dt, v)); };
            Variable *vr = h1.input(r), *vc = h1.input(c), *vm = h1.input(m), *vm2 = h1.input(m2);
            Variable* row0 = h1.g.apply(Op::get("Gemm"), {h1.input(zr), s1(2.0), vr, vm, s1(0.0)});
            Variable* col0 = h1.g.apply(Op::get("Gemm"), {h1.input(zc), s1(2.0), vm2, vc, s1(0.0)});
            Variable* row1 = h1.g.apply(Op::get("Gemm"), {h1.input(zr2), s1(0.5), vr, vm, s1(3.0)});
            Variable* dr = h1.g.apply(Op::get("Dot22"), {vr, vm});
            auto o1 = h1.run({row0, col0, row1, dr});
            const auto R = r.toDoubles(), Cv = c.toDoubles(), M = m.toDoubles(), M2 = m2.toDoubles(),
                       ZR2 = zr2.toDoubles();
            std::vector<double> wr0(5), wc0(4), wr1(5), wd(5);
            for (int j = 0; j < 5; ++j) {
                double acc = 0;
                for (int k = 0; k < 7; ++k)
                    acc += R[static_cast<std::size_t>(k)] * M[static_cast<std::size_t>(k * 5 + j)];
                wr0[static_cast<std::size_t>(j)] = 2 * acc;
                wr1[static_cast<std::size_t>(j)] = 3 * ZR2[static_cast<std::size_t>(j)] + 0.5 * acc;
                wd[static_cast<std::size_t>(j)] = acc;
            }
            for (int i = 0; i < 4; ++i) {
                double acc = 0;
                for (int k = 0; k < 7; ++k)
                    acc += M2[static_cast<std::size_t>(i * 7 + k)] * Cv[static_cast<std::size_t>(k)];
                wc0[static_cast<std::size_t>(i)] = 2 * acc;
            }
            VERIFY_CLOSE(o1[0], wr0, 1e-5, 1e-5);
            VERIFY_CLOSE(o1[1], wc0, 1e-5, 1e-5);
            VERIFY_CLOSE(o1[2], wr1, 1e-5, 1e-5);
            VERIFY_CLOSE(o1[3], wd, 1e-5, 1e-5);
        }
    }

    // ------------------------------------------------------------------ convolution, pooling, BN
    void conv_data() {
        QTest::addColumn<QString>("borderMode");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("dilation");
        QTest::addColumn<int>("groups");
        QTest::addColumn<int>("kernel");
        QTest::newRow("valid 3x3") << "\"valid\"" << 1 << 1 << 1 << 3;
        QTest::newRow("full 3x3") << "\"full\"" << 1 << 1 << 1 << 3;
        QTest::newRow("half 5x5 stride 2") << "\"half\"" << 2 << 1 << 1 << 5;
        QTest::newRow("pads [1,2] dilation 2") << "[1,2]" << 1 << 2 << 1 << 3;
        QTest::newRow("asymmetric pads stride 2") << "[[0,1],[2,0]]" << 2 << 1 << 1 << 3;
        QTest::newRow("pointwise") << "\"valid\"" << 1 << 1 << 1 << 1;
        QTest::newRow("groups 2") << "[1,1]" << 1 << 1 << 2 << 3;
        QTest::newRow("depthwise") << "[1,1]" << 1 << 1 << 4 << 3;
        QTest::newRow("depthwise stride 2") << "[1,1]" << 2 << 1 << 4 << 3;
        QTest::newRow("depthwise 5x5 dilated") << "[2,2]" << 1 << 2 << 4 << 5;
    }

    void conv() {
        QFETCH(QString, borderMode);
        QFETCH(int, stride);
        QFETCH(int, dilation);
        QFETCH(int, groups);
        QFETCH(int, kernel);
        const json bm = json::parse(borderMode.toStdString());
        const int C = 4, F = groups == 4 ? 8 : 6;
        Tensor x = randn(DType::Float32, {2, C, 9, 8});
        Tensor w = randn(DType::Float32, {F, C / groups, kernel, kernel});
        for (const char* kind : {"AbstractConv2d", "GpuCorrMM"}) {
            Harness h;
            Variable *vx = h.input(x), *vw = h.input(w);
            const bool gpu = std::string(kind) == "GpuCorrMM";
            if (gpu) {
                vx = h.g.apply(Op::get("GpuFromHost"), {vx});
                vw = h.g.apply(Op::get("GpuFromHost"), {vw});
            }
            Variable* y = h.g.apply(Op::get(kind, {{"border_mode", bm},
                                                   {"subsample", {stride, stride}},
                                                   {"filter_dilation", {dilation, dilation}},
                                                   {"num_groups", groups}}),
                                    {vx, vw});
            if (gpu) y = h.g.apply(Op::get("HostFromGpu"), {y});
            auto outs = h.run({y});
            int pt, pb, pl, pr;
            const int ek = dilation * (kernel - 1) + 1;
            if (bm.is_string()) {
                const std::string m = bm.get<std::string>();
                pt = pb = pl = pr = m == "full" ? ek - 1 : m == "half" ? ek / 2 : 0;
            } else if (bm[0].is_array()) {
                pt = bm[0][0];
                pb = bm[0][1];
                pl = bm[1][0];
                pr = bm[1][1];
            } else {
                pt = pb = bm[0];
                pl = pr = bm[1];
            }
            Shape os;
            const auto want = naiveConv(x, w, pt, pb, pl, pr, stride, stride, dilation, dilation, groups, os);
            QCOMPARE(outs[0].shape(), os);
            VERIFY_CLOSE(outs[0], want, 1e-5, 1e-5);
        }
    }

    // Winograd F(2x2,3x3) / F(4x4,3x3) (forced by PASSLENS_CONV_WINOGRAD) against the plain
    // reference: odd sizes that are not a multiple of the tile, padding on any side, kernels as
    // graph inputs (transformed per call) and as constants (transformed once, cached), bias
    // through OnnxConv, batch 2.
    void convWinograd_data() {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("C");
        QTest::addColumn<int>("F");
        QTest::addColumn<int>("H");
        QTest::addColumn<int>("W");
        QTest::addColumn<QString>("pads"); // [top, left, bottom, right]
        QTest::addColumn<bool>("constWeights");
        QTest::addColumn<bool>("bias");
        for (int m : {2, 4}) {
            const std::string t = "F" + std::to_string(m) + " ";
            QTest::newRow((t + "valid 7x9").c_str()) << m << 3 << 5 << 7 << 9 << "[0,0,0,0]" << false << false;
            QTest::newRow((t + "same 13x11 const").c_str()) << m << 17 << 9 << 13 << 11 << "[1,1,1,1]" << true << false;
            QTest::newRow((t + "asymmetric pads 10x6").c_str())
                << m << 4 << 6 << 10 << 6 << "[0,2,1,0]" << false << false;
            QTest::newRow((t + "full 5x5 bias").c_str()) << m << 2 << 3 << 5 << 5 << "[2,2,2,2]" << true << true;
            QTest::newRow((t + "3x3 input bias").c_str()) << m << 6 << 4 << 3 << 3 << "[1,1,1,1]" << false << true;
            QTest::newRow((t + "wide 4x37 const").c_str()) << m << 8 << 16 << 4 << 37 << "[1,1,1,1]" << true << false;
        }
    }

    void convWinograd() {
        QFETCH(int, m);
        QFETCH(int, C);
        QFETCH(int, F);
        QFETCH(int, H);
        QFETCH(int, W);
        QFETCH(QString, pads);
        QFETCH(bool, constWeights);
        QFETCH(bool, bias);
        const json pj = json::parse(pads.toStdString());
        const int pt = pj[0], pl = pj[1], pb = pj[2], pr = pj[3];
        Tensor x = randn(DType::Float32, {2, C, H, W});
        Tensor w = randn(DType::Float32, {F, C, 3, 3});
        Tensor b = randn(DType::Float32, {F});
        struct Env {
            explicit Env(int m) { setenv("PASSLENS_CONV_WINOGRAD", std::to_string(m).c_str(), 1); }
            ~Env() { unsetenv("PASSLENS_CONV_WINOGRAD"); }
        } env(m);
        Harness h;
        Variable* vx = h.input(x);
        Variable* vw = constWeights ? h.constant(w) : h.input(w);
        Variable* y;
        if (bias) {
            y = h.g.makeApply(Op::get("OnnxConv", {{"pads", {pt, pl, pb, pr}}, {"kernel_shape", {3, 3}}}),
                              {vx, vw, h.constant(b)}, std::vector<Type>{Type::parse("float32[*]")})
                    ->output(0);
        } else {
            y = h.g.apply(
                Op::get("AbstractConv2d",
                        {{"border_mode", {{pt, pb}, {pl, pr}}}, {"subsample", {1, 1}}, {"filter_dilation", {1, 1}}}),
                {vx, vw});
        }
        auto outs = h.run({y});
        Shape os;
        auto want = naiveConv(x, w, pt, pb, pl, pr, 1, 1, 1, 1, 1, os);
        if (bias) {
            const auto B = b.toDoubles();
            const std::int64_t plane = os[2] * os[3];
            for (std::size_t i = 0; i < want.size(); ++i)
                want[i] += B[(i / static_cast<std::size_t>(plane)) % static_cast<std::size_t>(F)];
        }
        QCOMPARE(outs[0].shape(), os);
        // |x|, |w| <= 2: each output sums 9*C products; the transforms lose a few ulps of the
        // largest intermediate (F(4x4) more than F(2x2))
        const double scale = 4.0 * 9 * C;
        VERIFY_CLOSE(outs[0], want, 0, (m == 4 ? 2e-6 : 5e-7) * scale);
        // deterministic: a second executor gives the same bits
        Executor ex2(h.g, ExecOptions{DeviceChoice::Cpu, true});
        auto again = ex2.run(h.values);
        VERIFY_CLOSE(again[0], outs[0].toDoubles(), 0, 0);
    }

    // Epilogue fusion (Executor: a convolution whose only client is an element-wise node over
    // per-channel / scalar constants applies that node in its kernel, per image and group after
    // the GEMM, per depthwise channel chunk, per Winograd image): the result has the bits of the unfused run
    // (fuseEpilogues = false), matches the reference, the element-wise step is marked fused and the
    // profile lists it as "fused into node #N".
    void epilogueFusion_data() {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("groups");
        QTest::addColumn<int>("C");
        QTest::addColumn<int>("F");
        QTest::addColumn<int>("H");
        QTest::addColumn<bool>("yFirst");
        QTest::newRow("pointwise, 64 channels") << 1 << 1 << 1 << 64 << 64 << 48 << true;
        QTest::newRow("pointwise, conv output second input") << 1 << 1 << 1 << 16 << 24 << 20 << false;
        QTest::newRow("im2col 3x3 stride 2") << 3 << 2 << 1 << 8 << 16 << 33 << true;
        QTest::newRow("grouped 3x3") << 3 << 1 << 2 << 8 << 8 << 12 << true;
        QTest::newRow("winograd 3x3") << 3 << 1 << 1 << 8 << 8 << 30 << true;
        QTest::newRow("depthwise 3x3 rows, channel chunks") << 3 << 1 << 24 << 24 << 24 << 40 << true;
        QTest::newRow("depthwise 3x3 flat") << 3 << 1 << 16 << 16 << 16 << 9 << false;
        QTest::newRow("depthwise 3x3 stride 2, multiplier 2") << 3 << 2 << 8 << 8 << 16 << 29 << true;
    }

    void epilogueFusion() {
        QFETCH(int, kernel);
        QFETCH(int, stride);
        QFETCH(int, groups);
        QFETCH(int, C);
        QFETCH(int, F);
        QFETCH(int, H);
        QFETCH(bool, yFirst);
        const int pad = kernel / 2;
        Tensor x = randn(DType::Float32, {2, C, H, H});
        Tensor w = randn(DType::Float32, {F, C / groups, kernel, kernel});
        Tensor b = randn(DType::Float32, {1, F, 1, 1});
        Tensor sc = Tensor::fromDoubles(DType::Float32, {1, 1, 1, 1}, {0.75});
        FunctionGraph g;
        Variable* vx = g.addInput(typeOf(x), "x");
        Variable* y = g.apply(Op::get("AbstractConv2d", {{"border_mode", {{pad, pad}, {pad, pad}}},
                                                         {"subsample", {stride, stride}},
                                                         {"filter_dilation", {1, 1}},
                                                         {"num_groups", groups}}),
                              {vx, g.addConstant(w.toTensorData())});
        Variable* vb = g.addConstant(b.toTensorData());
        Variable* vs = g.addConstant(sc.toTensorData());
        const std::string expr = yFirst ? "clip{0,6}(mul(add(i0,i1),i2))" : "clip{0,6}(mul(add(i1,i0),i2))";
        Variable* z = g.apply(Op::get("Elemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", "float32"}}),
                              yFirst ? std::vector<Variable*>{y, vb, vs} : std::vector<Variable*>{vb, y, vs});
        g.setOutputs({z});
        Executor fused(g, ExecOptions{DeviceChoice::Cpu, true});
        ExecOptions off{DeviceChoice::Cpu, true};
        off.fuseEpilogues = false;
        Executor plain(g, off);
        int convStep = -1, elemStep = -1;
        for (std::size_t i = 0; i < fused.steps().size(); ++i) {
            if (fused.steps()[i].node == y->owner()) convStep = static_cast<int>(i);
            if (fused.steps()[i].node == z->owner()) elemStep = static_cast<int>(i);
        }
        QCOMPARE(fused.steps()[static_cast<std::size_t>(elemStep)].fusedInto, convStep);
        QCOMPARE(fused.steps()[static_cast<std::size_t>(convStep)].fusedStep, elemStep);
        QCOMPARE(plain.steps()[static_cast<std::size_t>(elemStep)].fusedInto, -1);
        RunTimings tm;
        fused.run({x}); // the second run reuses pooled (re-poisoned) buffers
        const auto a = fused.run({x}, &tm);
        QVERIFY(tm.stepFused[static_cast<std::size_t>(elemStep)]);
        QCOMPARE(tm.stepUs[static_cast<std::size_t>(elemStep)], 0.0);
        plain.run({x});
        const auto ref = plain.run({x});
        QCOMPARE(a[0].shape(), ref[0].shape());
        VERIFY_CLOSE(a[0], ref[0].toDoubles(), 0, 0); // same bits as the element-wise node on its own
        Shape os;
        auto want = naiveConv(x, w, pad, pad, pad, pad, stride, stride, 1, 1, groups, os);
        const auto B = b.toDoubles();
        const std::size_t plane = static_cast<std::size_t>(os[2] * os[3]);
        for (std::size_t i = 0; i < want.size(); ++i)
            want[i] = std::clamp((want[i] + B[(i / plane) % static_cast<std::size_t>(F)]) * 0.75, 0.0, 6.0);
        QCOMPARE(a[0].shape(), os);
        VERIFY_CLOSE(a[0], want, 1e-5, 1e-6 * 4 * (C / groups) * kernel * kernel);
        // the profile: no time of its own, listed as fused into the convolution
        ProfileReport rep = profileExecutor(fused, {x}, ProfileOptions{1, 2}, "final");
        bool seen = false;
        for (const ProfileNode& n : rep.nodes)
            if (n.node == z->owner()->id()) {
                seen = true;
                QVERIFY(!n.timeUs);
                QCOMPARE(n.fusedInto.value_or(-1), y->owner()->id());
            }
        QVERIFY(seen);
        const json rj = rep.toJson();
        bool listed = false;
        for (const json& n : rj.at("not_run"))
            if (n.at("node") == z->owner()->id())
                listed =
                    n.at("reason") == "fused into node #" + std::to_string(y->owner()->id()) && n.at("kind") == "n/a";
        QVERIFY(listed);
        for (const json& n : rj.at("nodes")) QVERIFY(n.at("node") != z->owner()->id());
    }

    // In-place Join: a squeezenet Fire module's concat of two convolutions (one with a fused
    // bias + clip epilogue, one plain). Same bits as the plain path; the Join is reported in place; and
    // the cases where it must not happen: a convolution output with a second client, the Join as
    // a graph output, a graph input as one of the Join's inputs.
    void joinInPlace() {
        Tensor x = randn(DType::Float32, {1, 8, 9, 9});
        Tensor w1 = randn(DType::Float32, {6, 8, 1, 1}), w3 = randn(DType::Float32, {5, 8, 3, 3}),
               b = randn(DType::Float32, {1, 6, 1, 1});
        for (int variant = 0; variant < 4; ++variant) {
            FunctionGraph g;
            Variable* vx = g.addInput(typeOf(x), "x");
            auto conv = [&](const Tensor& w, int pad) {
                return g.apply(Op::get("AbstractConv2d", {{"border_mode", {{pad, pad}, {pad, pad}}},
                                                          {"subsample", {1, 1}},
                                                          {"filter_dilation", {1, 1}},
                                                          {"num_groups", 1}}),
                               {vx, g.addConstant(w.toTensorData())});
            };
            Variable* c1 = conv(w1, 0);
            Variable* e1 = g.apply(
                Op::get("Elemwise", {{"scalar", "composite"}, {"expr", "clip{0,6}(add(i0,i1))"}, {"dtype", "float32"}}),
                {c1, g.addConstant(b.toTensorData())});
            Variable* c3 = conv(w3, 1);
            Variable* second = variant == 3 ? vx : c3;
            Variable* j = g.apply(Op::get("Join", {{"axis", 1}}), {e1, second});
            Variable* z = g.apply(Op::get("Elemwise", {{"scalar", "mul"}, {"dtype", "float32"}}), {j, j});
            if (variant == 0)
                g.setOutputs({z});
            else if (variant == 1)
                g.setOutputs({z, c3}); // c3 has a second client (the outputs)
            else if (variant == 2)
                g.setOutputs({z, j}); // the Join is a graph output
            else
                g.setOutputs({z, c3}); // x (a graph input) joined
            Executor inPlace(g, ExecOptions{DeviceChoice::Cpu, true});
            ExecOptions off{DeviceChoice::Cpu, true};
            off.joinInPlace = false;
            Executor plain(g, off);
            int joinStep = -1;
            for (std::size_t i = 0; i < inPlace.steps().size(); ++i)
                if (inPlace.steps()[i].node == j->owner()) joinStep = static_cast<int>(i);
            QCOMPARE(inPlace.steps()[static_cast<std::size_t>(joinStep)].joinInPlace, variant == 0);
            for (const ExecStep& st : inPlace.steps())
                if (st.node == e1->owner()) QVERIFY(st.fusedInto >= 0); // the bias + clip runs inside the convolution
            QVERIFY(!plain.steps()[static_cast<std::size_t>(joinStep)].joinInPlace);
            RunTimings tm;
            inPlace.run({x}); // the second run reuses pooled (re-poisoned) buffers
            const auto a = inPlace.run({x}, &tm);
            QCOMPARE(static_cast<bool>(tm.stepFused[static_cast<std::size_t>(joinStep)]), variant == 0);
            plain.run({x});
            const auto ref = plain.run({x});
            for (std::size_t k = 0; k < a.size(); ++k) {
                QCOMPARE(a[k].shape(), ref[k].shape());
                QVERIFY2(std::memcmp(a[k].rawData(), ref[k].rawData(), a[k].nbytes()) == 0,
                         qPrintable(QString::number(variant)));
            }
            if (variant == 0) {
                ProfileReport rep = profileExecutor(inPlace, {x}, ProfileOptions{1, 2}, "final");
                bool seen = false;
                for (const ProfileNode& n : rep.nodes)
                    if (n.node == j->owner()->id()) {
                        seen = true;
                        QVERIFY(!n.timeUs);
                        QVERIFY(n.inPlace);
                        QCOMPARE(n.inPlaceWriters, (std::vector<NodeId>{c1->owner()->id(), c3->owner()->id()}));
                    }
                QVERIFY(seen);
                bool listed = false;
                const json rj = rep.toJson();
                for (const json& n : rj.at("not_run"))
                    if (n.at("node") == j->owner()->id()) {
                        listed = true;
                        QCOMPARE(n.at("kind").get<std::string>(), std::string("n/a"));
                        QVERIFY(n.at("reason").get<std::string>().starts_with(
                            "in place: inputs written into its output by nodes #"));
                    }
                QVERIFY(listed);
                QVERIFY(rep.text().find("(in place: inputs written by nodes #") != std::string::npos);
            }
        }
    }

    // Where fusion must not happen: a second client of the convolution's output, the output also
    // a graph output, a non-constant or non-per-channel other input, float64. Nothing is fused and
    // every output equals the reference.
    void epilogueFusionDeclined() {
        for (int which = 0; which < 5; ++which) {
            const DType dt = which == 4 ? DType::Float64 : DType::Float32;
            Tensor x = randn(dt, {1, 8, 12, 12});
            Tensor w = randn(dt, {8, 8, 1, 1});
            Tensor b = randn(dt, which == 3 ? Shape{1, 1, 1, 12} : Shape{1, 8, 1, 1});
            FunctionGraph g;
            std::vector<Tensor> in{x};
            Variable* y =
                g.apply(Op::get("AbstractConv2d",
                                {{"border_mode", "valid"}, {"subsample", {1, 1}}, {"filter_dilation", {1, 1}}}),
                        {g.addInput(typeOf(x), "x"), g.addConstant(w.toTensorData())});
            Variable* vb;
            if (which == 2) {
                vb = g.addInput(typeOf(b), "b");
                in.push_back(b);
            } else {
                vb = g.addConstant(b.toTensorData());
            }
            Variable* z = elem(g, "add", {y, vb});
            std::vector<Variable*> outs{z};
            if (which == 0) outs.push_back(elem(g, "mul", {y, vb})); // a second client
            if (which == 1) outs.push_back(y);                       // also a graph output
            g.setOutputs(outs);
            Executor ex(g, ExecOptions{DeviceChoice::Cpu, true});
            for (const ExecStep& s : ex.steps()) {
                QCOMPARE(s.fusedInto, -1);
                QCOMPARE(s.fusedStep, -1);
                QVERIFY(!s.epilogue);
            }
            ex.run(in);
            RunTimings tm;
            const auto got = ex.run(in, &tm);
            for (bool f : tm.stepFused) QVERIFY(!f);
            Shape os;
            const auto conv = naiveConv(x, w, 0, 0, 0, 0, 1, 1, 1, 1, 1, os);
            const auto B = b.toDoubles();
            auto bAt = [&](std::size_t i) { return which == 3 ? B[i % 12] : B[(i / 144) % 8]; };
            std::vector<double> sum(conv.size()), prod(conv.size());
            for (std::size_t i = 0; i < conv.size(); ++i) {
                sum[i] = conv[i] + bAt(i);
                prod[i] = conv[i] * bAt(i);
            }
            VERIFY_CLOSE(got[0], sum, 1e-5, 1e-5);
            if (which == 0) VERIFY_CLOSE(got[1], prod, 1e-5, 1e-5);
            if (which == 1) VERIFY_CLOSE(got[1], conv, 1e-5, 1e-5);
        }
    }

    // Strided paths with odd widths: depthwise 3x3 stride 2 (even/odd column split) and max / sum
    // pooling with stride 2, against the references.
    // The x86-64-v4 build's AVX-512 loops (3x3 depthwise for stride 1 and 2, the stride-2
    // gather of im2col) and the chain form of epilogues give exactly the bits of the portable
    // loops / the interpreted program: every output element compared as bits, outputs poisoned
    // with NaN first, on the shapes where vector tails, padding and parity change.
    void loopBuildsAgree() {
        using namespace passlens::cpu;
        const LoopTable& base = baseline::table();
        const LoopTable& best = loops();
        auto sameBits = [](const std::vector<float>& a, const std::vector<float>& b) {
            return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
        };
        std::mt19937 gen(7);
        std::uniform_real_distribution<float> u(-2, 2);
        int cases = 0;
        for (int s : {1, 2})
            for (int H : {1, 2, 5, 9, 16})
                for (int W : {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 57})
                    for (auto pads : std::vector<std::array<int, 4>>{
                             {1, 1, 1, 1}, {0, 0, 0, 0}, {0, 1, 1, 0}, {2, 2, 2, 2}, {1, 0, 0, 1}})
                        for (int mult : {1, 2}) {
                            Conv2dParams p;
                            p.padTop = pads[0], p.padBottom = pads[1], p.padLeft = pads[2], p.padRight = pads[3];
                            p.strideH = p.strideW = s;
                            const int C = 3;
                            p.groups = C;
                            const std::int64_t OH = (H + p.padTop + p.padBottom - 3) / s + 1,
                                               OW = (W + p.padLeft + p.padRight - 3) / s + 1;
                            if (H + p.padTop + p.padBottom < 3 || W + p.padLeft + p.padRight < 3) continue;
                            std::vector<float> x(static_cast<std::size_t>(C * H * W)),
                                w(static_cast<std::size_t>(C * mult * 9));
                            for (float& v : x) v = u(gen);
                            for (float& v : w) v = u(gen);
                            std::vector<float> ya(static_cast<std::size_t>(C * mult * OH * OW), NAN), yb = ya;
                            base.depthwiseFloat(x.data(), w.data(), ya.data(), C, mult, H, W, 3, 3, OH, OW, p);
                            best.depthwiseFloat(x.data(), w.data(), yb.data(), C, mult, H, W, 3, 3, OH, OW, p);
                            QVERIFY2(sameBits(ya, yb), qPrintable(QString("depthwise s%1 H%2 W%3 pads %4%5%6%7 mult %8")
                                                                      .arg(s)
                                                                      .arg(H)
                                                                      .arg(W)
                                                                      .arg(pads[0])
                                                                      .arg(pads[1])
                                                                      .arg(pads[2])
                                                                      .arg(pads[3])
                                                                      .arg(mult)));
                            for (float v : yb) QVERIFY(!std::isnan(v));
                            // im2col of the same input with a 3x3 kernel (stride 2: the vector gather)
                            p.groups = 1;
                            std::vector<float> ca(static_cast<std::size_t>(C * 9 * OH * OW), NAN), cb = ca;
                            base.im2colFloat(x.data(), C, H, W, 3, 3, OH, OW, p, ca.data());
                            best.im2colFloat(x.data(), C, H, W, 3, 3, OH, OW, p, cb.data());
                            QVERIFY2(sameBits(ca, cb), qPrintable(QString("im2col s%1 H%2 W%3").arg(s).arg(H).arg(W)));
                            ++cases;
                        }
        QVERIFY(cases > 700);

        // epilogue chains: the chain loop against the interpreted program, on rows holding NaN,
        // infinities, signed zeros and subnormals; and which programs form a chain
        const std::vector<float> special = {NAN,     INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f,
                                            -1e-40f, 6.0f,     -6.0f,     3.5f, -0.25f};
        struct Case {
            const char* expr;
            bool chain;
        };
        for (const Case& c :
             {Case{"add(i0,i1)", true}, Case{"relu(add(i1,i0))", true}, Case{"clip{0,6}(add(i0,i1))", true},
              Case{"sub(i1,i0)", true}, Case{"true_div(sub(i0,i1),i2)", true}, Case{"maximum(i1,mul(i0,i2))", true},
              Case{"minimum(add(i0,i1),i2)", true}, Case{"true_div(i1,relu(i0))", true},
              Case{"maximum(add(i0,i1),i2)", true}, Case{"minimum(i2,sub(i0,i1))", true}, Case{"mul(i1,i0)", true},
              Case{"mul(i0,sigmoid(i0))", false}, Case{"add(mul(i0,i1),i0)", false}, Case{"exp(add(i0,i1))", false},
              Case{"add(i1,i2)", false}}) {
            const ScalarProgram prog = compileExpr(c.expr, {DType::Float32, DType::Float32, DType::Float32});
            RowEpilogue e;
            e.yInput = 0;
            const std::vector<float> k1 = {0.5f, -1.5f, NAN, 2.0f}, k2 = {3.0f, 0.0f, -2.0f, 1e-39f};
            e.values = {nullptr, k1.data(), k2.data()};
            e.channelStride = {0, 1, 1};
            e.chain = compileChain(prog, 0);
            QVERIFY2(e.chain.empty() != c.chain, c.expr);
            if (!c.chain) continue;
            const std::int64_t rows = 4, len = 2048 + 37; // one full block of the chain loop and a tail
            std::vector<float> y(static_cast<std::size_t>(rows * len));
            for (std::size_t i = 0; i < y.size(); ++i) y[i] = i % 5 == 0 ? special[(i / 5) % special.size()] : u(gen);
            std::vector<float> viaChain = y, viaProgram = y;
            base.epilogueRows(prog, e, viaChain.data(), 0, rows, len, len);
            RowEpilogue interpreted = e;
            interpreted.chain.clear();
            base.epilogueRows(prog, interpreted, viaProgram.data(), 0, rows, len, len);
            QVERIFY2(sameBits(viaChain, viaProgram), c.expr);
            std::vector<float> viaBest = y;
            best.epilogueRows(prog, e, viaBest.data(), 0, rows, len, len);
            QVERIFY2(sameBits(viaBest, viaProgram), c.expr);
        }
    }

    void stride2OddWidths() {
        for (int W : {7, 10, 13})
            for (int pad : {0, 1}) {
                Tensor x = randn(DType::Float32, {1, 3, 9, W});
                Tensor w = randn(DType::Float32, {3, 1, 3, 3});
                Harness h;
                Variable* y = h.g.apply(Op::get("AbstractConv2d", {{"border_mode", {{pad, 0}, {pad, 1 - pad}}},
                                                                   {"subsample", {2, 2}},
                                                                   {"filter_dilation", {1, 1}},
                                                                   {"num_groups", 3}}),
                                        {h.input(x), h.input(w)});
                Variable* pm = h.g.apply(Op::get("Pool", {{"mode", "max"},
                                                          {"ws", {3, 3}},
                                                          {"stride", {2, 2}},
                                                          {"pad", {pad, pad}},
                                                          {"ignore_border", true}}),
                                         {h.input(x)});
                Variable* ps = h.g.apply(Op::get("Pool", {{"mode", "sum"},
                                                          {"ws", {3, 3}},
                                                          {"stride", {2, 2}},
                                                          {"pad", {0, 0}},
                                                          {"ignore_border", false}}),
                                         {h.input(x)});
                auto outs = h.run({y, pm, ps});
                Shape os;
                const auto want = naiveConv(x, w, pad, 0, pad, 1 - pad, 2, 2, 1, 1, 3, os);
                QCOMPARE(outs[0].shape(), os);
                VERIFY_CLOSE(outs[0], want, 1e-5, 1e-5);
                // pooling references
                const auto X = x.toDoubles();
                auto poolRef = [&](bool isMax, int p, bool ib, Shape& shape) {
                    const int OH = ib ? (9 + 2 * p - 3) / 2 + 1 : (9 - 1 - 3 + 2) / 2 + 1;
                    const int OW = ib ? (W + 2 * p - 3) / 2 + 1 : std::max(0, (W - 1 - 3 + 2) / 2) + 1;
                    shape = {1, 3, OH, OW};
                    std::vector<double> r;
                    for (int c = 0; c < 3; ++c)
                        for (int i = 0; i < OH; ++i)
                            for (int j = 0; j < OW; ++j) {
                                double acc = isMax ? -INFINITY : 0;
                                for (int a = 0; a < 3; ++a)
                                    for (int bb = 0; bb < 3; ++bb) {
                                        const int ih = 2 * i - p + a, iw = 2 * j - p + bb;
                                        if (ih < 0 || ih >= 9 || iw < 0 || iw >= W) continue;
                                        const double v = X[static_cast<std::size_t>((c * 9 + ih) * W + iw)];
                                        acc = isMax ? std::max(acc, v) : acc + v;
                                    }
                                r.push_back(acc);
                            }
                    return r;
                };
                Shape sm, ss;
                const auto wm = poolRef(true, pad, true, sm), ws = poolRef(false, 0, false, ss);
                QCOMPARE(outs[1].shape(), sm);
                VERIFY_CLOSE(outs[1], wm, 0, 0);
                QCOMPARE(outs[2].shape(), ss);
                VERIFY_CLOSE(outs[2], ws, 1e-6, 1e-6);
            }
    }

    void pool_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("pad");
        QTest::addColumn<int>("stride");
        QTest::addColumn<bool>("ignoreBorder");
        for (const char* m : {"max", "average_inc_pad", "average_exc_pad", "sum"}) {
            QTest::newRow((std::string(m) + " 3/2").c_str()) << m << "[0,0]" << 2 << true;
            QTest::newRow((std::string(m) + " pad 1").c_str()) << m << "[1,1]" << 2 << true;
            QTest::newRow((std::string(m) + " pad [0,1],[1,0]").c_str()) << m << "[[0,1],[1,0]]" << 1 << true;
            QTest::newRow((std::string(m) + " ceil").c_str()) << m << "[0,0]" << 2 << false;
        }
    }

    void pool() {
        QFETCH(QString, mode);
        QFETCH(QString, pad);
        QFETCH(int, stride);
        QFETCH(bool, ignoreBorder);
        const json pj = json::parse(pad.toStdString());
        Tensor x = randn(DType::Float32, {2, 3, 7, 6});
        Harness h;
        Variable* y = h.g.apply(Op::get("Pool", {{"mode", mode.toStdString()},
                                                 {"ws", {3, 3}},
                                                 {"stride", {stride, stride}},
                                                 {"pad", pj},
                                                 {"ignore_border", ignoreBorder}}),
                                {h.input(x)});
        auto outs = h.run({y});
        std::int64_t p0[2], p1[2];
        for (int a = 0; a < 2; ++a) {
            if (pj[static_cast<std::size_t>(a)].is_array()) {
                p0[a] = pj[static_cast<std::size_t>(a)][0];
                p1[a] = pj[static_cast<std::size_t>(a)][1];
            } else
                p0[a] = p1[a] = pj[static_cast<std::size_t>(a)].get<std::int64_t>();
        }
        const std::int64_t n[2] = {7, 6};
        std::int64_t o[2];
        for (int a = 0; a < 2; ++a) {
            const std::int64_t r = n[a] + p0[a] + p1[a];
            o[a] = ignoreBorder ? (r - 3) / stride + 1
                                : (stride >= 3 ? (r - 1) / stride + 1
                                               : std::max<std::int64_t>(0, (r - 1 - 3 + stride) / stride) + 1);
        }
        QCOMPARE(outs[0].shape(), (Shape{2, 3, o[0], o[1]}));
        const auto X = x.toDoubles();
        std::vector<double> want;
        for (int pl = 0; pl < 6; ++pl)
            for (std::int64_t r = 0; r < o[0]; ++r)
                for (std::int64_t c = 0; c < o[1]; ++c) {
                    // Theano pool.py perform(): window in padded coordinates
                    const std::int64_t r0 = r * stride, r1 = std::min(r0 + 3, n[0] + p0[0] + p1[0]);
                    const std::int64_t c0 = c * stride, c1 = std::min(c0 + 3, n[1] + p0[1] + p1[1]);
                    double mx = -INFINITY, s = 0;
                    int cnt = 0;
                    for (std::int64_t i = r0; i < r1; ++i)
                        for (std::int64_t j = c0; j < c1; ++j) {
                            const std::int64_t ii = i - p0[0], jj = j - p0[1];
                            if (ii < 0 || ii >= n[0] || jj < 0 || jj >= n[1]) continue;
                            const double v = X[static_cast<std::size_t>((pl * 7 + ii) * 6 + jj)];
                            mx = std::max(mx, v);
                            s += v;
                            ++cnt;
                        }
                    if (mode == "max")
                        want.push_back(mx);
                    else if (mode == "sum")
                        want.push_back(s);
                    else if (mode == "average_exc_pad")
                        want.push_back(cnt ? s / cnt : 0);
                    else
                        want.push_back(s / static_cast<double>((r1 - r0) * (c1 - c0)));
                }
        VERIFY_CLOSE(outs[0], want, 1e-5, 1e-6);
    }

    // Max pooling with 3-wide windows at column stride 2 runs a direct kernel: same bits as the
    // separable one, NaN, infinities and signed zeros included, on odd / even sizes, ceil mode and
    // top padding (left padding keeps the separable kernel).
    void poolMaxDirectSameBits() {
        for (const auto& [H, W, ib, pad] :
             std::vector<std::tuple<int, int, bool, std::string>>{{7, 6, true, "[0,0]"},
                                                                  {9, 9, false, "[0,0]"},
                                                                  {111, 111, false, "[0,0]"},
                                                                  {8, 13, false, "[[1,0],[0,1]]"},
                                                                  {5, 5, true, "[1,1]"}}) {
            Tensor x = randn(DType::Float32, {1, 5, H, W});
            float* xp = x.data<float>();
            for (std::int64_t i = 0; i < x.numel(); i += 7)
                xp[i] = (i / 7) % 4 == 0 ? NAN : (i / 7) % 4 == 1 ? -0.0f : (i / 7) % 4 == 2 ? 0.0f : -INFINITY;
            Harness h;
            Variable* y = h.g.apply(Op::get("Pool", {{"mode", "max"},
                                                     {"ws", {3, 3}},
                                                     {"stride", {2, 2}},
                                                     {"pad", json::parse(pad)},
                                                     {"ignore_border", ib}}),
                                    {h.input(x)});
            const auto direct = h.run({y});
            setenv("PASSLENS_POOL_SEPARABLE", "1", 1);
            const auto separable = h.run({y});
            unsetenv("PASSLENS_POOL_SEPARABLE");
            QCOMPARE(direct[0].shape(), separable[0].shape());
            QVERIFY2(std::memcmp(direct[0].rawData(), separable[0].rawData(), direct[0].nbytes()) == 0,
                     qPrintable(QString::number(H) + "x" + QString::number(W)));
        }
    }

    void batchNorm() {
        Harness h;
        Tensor x = randn(DType::Float32, {2, 3, 2, 2}), g = randn(DType::Float32, {3}), b = randn(DType::Float32, {3}),
               m = randn(DType::Float32, {3}), v = randn(DType::Float32, {3}, 0.5, 2);
        Variable* y = h.g.apply(Op::get("BatchNormInference", {{"epsilon", 1e-3}}),
                                {h.input(x), h.input(g), h.input(b), h.input(m), h.input(v)});
        auto outs = h.run({y});
        const auto X = x.toDoubles(), G = g.toDoubles(), B = b.toDoubles(), M = m.toDoubles(), V = v.toDoubles();
        std::vector<double> want;
        for (int n = 0; n < 2; ++n)
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < 4; ++i) {
                    const auto uc = static_cast<std::size_t>(c);
                    want.push_back((X[static_cast<std::size_t>((n * 3 + c) * 4 + i)] - M[uc]) /
                                       std::sqrt(V[uc] + 1e-3) * G[uc] +
                                   B[uc]);
                }
        VERIFY_CLOSE(outs[0], want, 1e-5, 1e-5);
    }

    // ------------------------------------------------------------------ ONNX fallbacks
    void onnxKernels() {
        Harness h;
        Tensor x = randn(DType::Float32, {1, 2, 5});
        Variable* vx = h.input(x);
        auto onnx = [&](const std::string& t, json attrs, std::vector<Variable*> ins, const std::string& type) {
            return h.g.makeApply(Op::get("Onnx" + t, attrs), ins, std::vector<Type>{Type::parse(type)})->output(0);
        };
        Variable* pad = onnx("Pad", {{"mode", "reflect"}},
                             {vx, h.constant(ints(DType::Int64, {6}, {0, 0, 2, 0, 0, 3}))}, "float32[*]");
        Variable* sl = onnx("Slice", json::object(),
                            {vx, h.constant(ints(DType::Int64, {1}, {4})), h.constant(ints(DType::Int64, {1}, {-10})),
                             h.constant(ints(DType::Int64, {1}, {2})), h.constant(ints(DType::Int64, {1}, {-2}))},
                            "float32[*]");
        Variable* rm = onnx("ReduceMean", {{"axes", {2}}, {"keepdims", 1}}, {vx}, "float32[*]");
        Variable* tr = onnx("Transpose", {{"perm", {2, 0, 1}}}, {vx}, "float32[*]");
        Variable* ad =
            onnx("Add", json::object(), {vx, h.constant(ints(DType::Float32, {5}, {1, 2, 3, 4, 5}))}, "float32[*]");
        Variable* rz =
            onnx("Resize",
                 {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}},
                 {vx, h.constant(ints(DType::Float32, {0}, {})), h.constant(ints(DType::Float32, {3}, {1, 1, 2}))},
                 "float32[*]");
        Variable* rl = onnx("Resize", {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}},
                            {vx, h.constant(ints(DType::Float32, {0}, {})), h.constant(ints(DType::Float32, {0}, {})),
                             h.constant(ints(DType::Int64, {3}, {1, 2, 9}))},
                            "float32[*]");
        auto outs = h.run({pad, sl, rm, tr, ad, rz, rl});
        const auto X = x.toDoubles();
        auto at = [&](int c, int k) { return X[static_cast<std::size_t>(c * 5 + k)]; };
        std::vector<double> wp, ws, wm, wt, wa, wz, wl;
        for (int c = 0; c < 2; ++c) {
            for (int k : {2, 1, 0, 1, 2, 3, 4, 3, 2, 1}) wp.push_back(at(c, k)); // reflect 2 left, 3 right
            for (int k : {4, 2, 0}) ws.push_back(at(c, k));
            double s = 0;
            for (int k = 0; k < 5; ++k) {
                s += at(c, k);
                wa.push_back(static_cast<float>(at(c, k) + k + 1));
            }
            wm.push_back(s / 5);
            for (int k = 0; k < 10; ++k) wz.push_back(at(c, k / 2));
            for (int k = 0; k < 9; ++k) {
                const double p = k * 4.0 / 8.0;
                const int i0 = static_cast<int>(std::floor(p));
                const int i1 = std::min(i0 + 1, 4);
                wl.push_back(at(c, i0) * (1 - (p - i0)) + at(c, i1) * (p - i0));
            }
        }
        for (int k = 0; k < 5; ++k)
            for (int c = 0; c < 2; ++c) wt.push_back(at(c, k));
        QCOMPARE(outs[0].shape(), (Shape{1, 2, 10}));
        VERIFY_CLOSE(outs[0], wp, 0, 0);
        QCOMPARE(outs[1].shape(), (Shape{1, 2, 3}));
        VERIFY_CLOSE(outs[1], ws, 0, 0);
        QCOMPARE(outs[2].shape(), (Shape{1, 2, 1}));
        VERIFY_CLOSE(outs[2], wm, 1e-6, 1e-6);
        QCOMPARE(outs[3].shape(), (Shape{5, 1, 2}));
        VERIFY_CLOSE(outs[3], wt, 0, 0);
        VERIFY_CLOSE(outs[4], wa, 0, 0);
        QCOMPARE(outs[5].shape(), (Shape{1, 2, 10}));
        VERIFY_CLOSE(outs[5], wz, 0, 0);
        QCOMPARE(outs[6].shape(), (Shape{1, 2, 9}));
        VERIFY_CLOSE(outs[6], wl, 1e-6, 1e-6);
    }

    // float16 from and to other dtypes (convertElements): exact widening, round to nearest even,
    // subnormals, overflow to infinity, NaN and signed zero.
    void float16Conversions() {
        const std::vector<std::uint16_t> half = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x7C00, 0xFC00, 0x8000};
        std::vector<double> wide(half.size());
        convertElements(half.data(), DType::Float16, wide.data(), DType::Float64,
                        static_cast<std::int64_t>(half.size()));
        const std::vector<double> want = {1.0,      -2.0,      65504.0, std::ldexp(1.0, -24), std::ldexp(1023.0, -24),
                                          INFINITY, -INFINITY, -0.0};
        for (std::size_t i = 0; i < want.size(); ++i) QCOMPARE(wide[i], want[i]);
        QVERIFY(std::signbit(wide[7]));
        const std::uint16_t nanBits = 0x7E00;
        double nan = 0;
        convertElements(&nanBits, DType::Float16, &nan, DType::Float64, 1);
        QVERIFY(std::isnan(nan));
        const std::vector<float> f = {65520.0f,
                                      65519.0f,
                                      1.0f + std::ldexp(1.0f, -11),
                                      1.0f + 3 * std::ldexp(1.0f, -11),
                                      std::ldexp(1.0f, -25),
                                      3 * std::ldexp(1.0f, -25),
                                      -1e-9f,
                                      NAN,
                                      -3.0f};
        std::vector<std::uint16_t> h(f.size());
        convertElements(f.data(), DType::Float32, h.data(), DType::Float16, static_cast<std::int64_t>(f.size()));
        const std::vector<std::uint16_t> wantBits = {0x7C00, 0x7BFF, 0x3C00, 0x3C02, 0x0000,
                                                     0x0002, 0x8000, 0x7E00, 0xC200};
        for (std::size_t i = 0; i < wantBits.size(); ++i) QCOMPARE(h[i], wantBits[i]);
        const std::int64_t big = 70000;
        std::uint16_t hb = 0;
        convertElements(&big, DType::Int64, &hb, DType::Float16, 1);
        QCOMPARE(hb, std::uint16_t(0x7C00));
    }

    // ONNX sequence and optional values (Tensor::sequence / optional, Type::sequence / optional):
    // the Sequence* and Optional* kernels, SplitToSequence, ConcatFromSequence, a sequence graph
    // input, the file round trip, and the messages for ill-typed values.
    void onnxSequences() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2,4]"), "x");
        Variable* s = g.addInput(Type::parse("seq(float32[?,?])"), "s");
        auto onnx = [&](const std::string& t, json attrs, std::vector<Variable*> ins, const std::string& type) {
            return g.makeApply(Op::get("Onnx" + t, attrs), ins, std::vector<Type>{Type::parse(type)})->output(0);
        };
        auto i64 = [&](Shape shape, std::vector<double> v) {
            return g.addConstant(Tensor::fromDoubles(DType::Int64, std::move(shape), v).toTensorData());
        };
        // x split along axis 1 into [2,1] and [2,3]; s's item 0 inserted in front
        Variable* parts = onnx("SplitToSequence", {{"axis", 1}}, {x, i64({2}, {1, 3})}, "seq(float32[2,?])");
        Variable* ins = onnx("SequenceAt", json::object(), {s, i64({}, {0})}, "float32[?,?]");
        Variable* seq = onnx("SequenceInsert", json::object(), {parts, ins, i64({}, {0})}, "seq(float32[?,?])");
        Variable* len = onnx("SequenceLength", json::object(), {seq}, "int64[]");
        Variable* last = onnx("SequenceAt", json::object(), {seq, i64({}, {-1})}, "float32[?,?]");
        Variable* cat = onnx("ConcatFromSequence", {{"axis", 1}}, {seq}, "float32[2,?]");
        Variable* erased = onnx("SequenceErase", json::object(), {seq, i64({}, {0})}, "seq(float32[?,?])");
        Variable* stacked =
            onnx("ConcatFromSequence", {{"axis", 0}, {"new_axis", 1}},
                 {onnx("SplitToSequence", {{"axis", 0}, {"keepdims", 0}}, {x}, "seq(float32[4])")}, "float32[2,4]");
        Variable* opt = onnx("Optional", json::object(), {x}, "optional(float32[2,4])");
        Variable* has = onnx("OptionalHasElement", json::object(), {opt}, "bool[]");
        Variable* got = onnx("OptionalGetElement", json::object(), {opt}, "float32[2,4]");
        g.setOutputs({len, last, cat, erased, stacked, has, got, seq});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu, true});
        const Tensor xv = Tensor::fromDoubles(DType::Float32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
        const Tensor item = Tensor::fromDoubles(DType::Float32, {2, 1}, {-1, -2});
        const Tensor sv = Tensor::sequence({item});
        const auto outs = ex.run({xv, sv});
        QCOMPARE(outs[0].intAt(0), std::int64_t(3));
        QCOMPARE(outs[1].shape(), (Shape{2, 3}));
        VERIFY_CLOSE(outs[1], (std::vector<double>{1, 2, 3, 5, 6, 7}), 0, 0);
        QCOMPARE(outs[2].shape(), (Shape{2, 5}));
        VERIFY_CLOSE(outs[2], (std::vector<double>{-1, 0, 1, 2, 3, -2, 4, 5, 6, 7}), 0, 0);
        QVERIFY(outs[3].kind() == Type::Kind::Sequence);
        QCOMPARE(outs[3].items().size(), std::size_t(2));
        QCOMPARE(outs[3].items()[0].shape(), (Shape{2, 1}));
        VERIFY_CLOSE(outs[3].items()[0], (std::vector<double>{0, 4}), 0, 0);
        VERIFY_CLOSE(outs[4], (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}), 0, 0);
        QCOMPARE(outs[5].intAt(0), std::int64_t(1));
        QVERIFY(outs[6].storage() == xv.storage()); // the optional's value is x itself
        QCOMPARE(QString::fromStdString(outs[7].typeStr()), QString("seq(float32[2,1], float32[2,1], float32[2,3])"));

        // written and read back as a SequenceProto; an empty optional as an OptionalProto
        const auto dir =
            std::filesystem::temp_directory_path() / ("passlens_tst_exec_seq_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const std::filesystem::path file = dir / "output_0.pb";
        writeTensorProto(outs[7], file);
        const Tensor back = readValueProto(file, Type::parse("seq(float32[?,?])"));
        QCOMPARE(allCloseMismatch({back}, {outs[7]}, 0, 0), std::string());
        QVERIFY(!allCloseMismatch({outs[3]}, {outs[7]}, 0, 0).empty());
        writeTensorProto(Tensor::optional(std::nullopt), file);
        const Tensor none = readValueProto(file, Type::parse("optional(float32[2])"));
        QVERIFY(none.kind() == Type::Kind::Optional);
        QVERIFY(none.items().empty());
        writeTensorProto(Tensor::optional(xv), file);
        QVERIFY(readValueProto(file, Type::parse("optional(float32[2,4])")).items().at(0).storage() != nullptr);
        const QString bad = errorOf([&] { (void)readValueProto(file, Type::parse("optional(seq(float32[2,4]))")); });
        QVERIFY2(bad.contains("output_0.pb") && bad.contains("expected optional(seq(float32[2,4]))"), qPrintable(bad));
        std::filesystem::remove_all(dir);

        // ill-typed values: named, never a crash
        QString err = errorOf([&] { ex.run({xv, xv}); });
        QVERIFY2(err.contains("input 1 's'") && err.contains("expected seq(float32[?,?])"), qPrintable(err));
        err = errorOf([&] { ex.run({sv, sv}); });
        QVERIFY2(err.contains("input 0 'x'") && err.contains("seq(float32[2,1]), expected float32[2,4]"),
                 qPrintable(err));
        err = errorOf([&] { ex.run({xv, Tensor::sequence({})}); });
        QVERIFY2(err.contains("OnnxSequenceAt") && err.contains("position 0 is out of range for a sequence of 0 items"),
                 qPrintable(err));
        err = errorOf([&] { ex.run({xv, Tensor::sequence({Tensor::fromDoubles(DType::Int64, {2, 1}, {1, 2})})}); });
        QVERIFY2(err.contains("item 0 with dtype int64"), qPrintable(err));

        // a sequence reaching a tensor op through an untyped (float32[*]) value is refused by name
        FunctionGraph g2;
        Variable* x2 = g2.addInput(Type::parse("float32[3]"), "x");
        Variable* sq =
            g2.makeApply(Op::get("OnnxSequenceConstruct"), {x2, x2}, std::vector<Type>{Type::parse("float32[*]")})
                ->output(0);
        g2.setOutputs(
            {g2.makeApply(Op::get("OnnxRelu"), {sq}, std::vector<Type>{Type::parse("float32[*]")})->output(0)});
        Executor ex2(g2, ExecOptions{DeviceChoice::Cpu});
        err = errorOf([&] { ex2.run({Tensor::fromDoubles(DType::Float32, {3}, {1, 2, 3})}); });
        QVERIFY2(err.contains("OnnxRelu") &&
                     err.contains("input 0 is seq(float32[3], float32[3]), the op takes tensors"),
                 qPrintable(err));
    }

    // ------------------------------------------------------------------ executor
    void transfersAreEmulatedCopies() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* gx = g.apply(Op::get("GpuFromHost"), {x});
        Variable* e = g.apply(Op::get("GpuElemwise", {{"scalar", "exp"}}), {gx});
        g.setOutputs({g.apply(Op::get("HostFromGpu"), {e})});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        QVERIFY(ex.gpuEmulated());
        QVERIFY(QString::fromStdString(ex.deviceDescription()).contains("emulated on CPU"));
        QCOMPARE(ex.steps()[0].kind, StepKind::Transfer);
        QCOMPARE(ex.steps()[1].kind, StepKind::Emulated);
        Tensor in = randn(DType::Float32, {4});
        RunTimings tm;
        auto out = ex.run({in}, &tm);
        QCOMPARE(tm.stepBytes[0], std::size_t(16));
        QVERIFY(out[0].storage() != in.storage());
        ProfileReport rep = profileExecutor(ex, {in}, ProfileOptions{1, 3}, "final");
        QVERIFY(rep.error.empty());
        QCOMPARE(rep.transfers.size(), std::size_t(2));
        QCOMPARE(rep.transfers[0].direction, TransferDirection::HtoD);
        QCOMPARE(rep.transfers[1].direction, TransferDirection::DtoH);
        const json j = rep.toJson();
        QCOMPARE(j["nodes"].size(), std::size_t(3));
        QCOMPARE(j["transfers"][0]["bytes"].get<int>(), 16);
        QVERIFY(j["nodes"][1]["time_us"].is_number());
        QCOMPARE(QString::fromStdString(j["nodes"][1]["kind"].get<std::string>()), QString("emulated"));
        const QString text = QString::fromStdString(rep.text());
        QVERIFY(text.contains("Class") && text.contains("Apply") && text.contains("GpuElemwise{exp}") &&
                text.contains("overhead"));
    }

    void missingKernelIsNamed() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* e = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x});
        Variable* y =
            g.makeApply(Op::get("OnnxFrobnicate"), {e}, std::vector<Type>{Type::parse("float32[4]")}, "frob_1")
                ->output(0);
        g.setOutputs({y});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        QCOMPARE(ex.missingKernels().size(), std::size_t(1));
        const QString err = errorOf([&] { ex.run({randn(DType::Float32, {4})}); });
        QVERIFY2(err.contains("OnnxFrobnicate") && err.contains("frob_1") && err.contains("no kernel"),
                 qPrintable(err));
        ProfileReport rep = profileExecutor(ex, {randn(DType::Float32, {4})}, ProfileOptions{1, 2}, "source");
        QVERIFY(!rep.error.empty());
        QVERIFY(rep.nodes[0].timeUs.has_value());
        QVERIFY(!rep.nodes[1].timeUs.has_value()); // n/a, not 0
        const json j = rep.toJson();
        QCOMPARE(j["nodes"].size(), std::size_t(1));
        QCOMPARE(j["not_run"].size(), std::size_t(1));
        QVERIFY(QString::fromStdString(rep.text()).contains("n/a"));
    }

    void missingConstantIsRefused() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2]"), "x");
        auto d = std::make_shared<TensorData>();
        d->dtype = DType::Float32;
        d->shape = {2};
        d->missing = "external data file 'w.bin' of tensor 'w' cannot be read";
        Variable* w = g.addConstant(d, "w");
        g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, w})});
        const QString err = errorOf([&] { Executor ex(g); });
        QVERIFY2(err.contains("'w'") && err.contains("w.bin") && err.contains("Elemwise{add}"), qPrintable(err));
    }

    void assertFails() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2]"), "x");
        Variable* c = g.addInput(Type::parse("bool[]"), "c");
        g.setOutputs({g.apply(Op::get("Assert", {{"msg", "shapes differ"}}), {x, c})});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        QCOMPARE(ex.run({randn(DType::Float32, {2}), ints(DType::Bool, {}, {1})}).size(), std::size_t(1));
        QVERIFY(errorOf([&] {
                    ex.run({randn(DType::Float32, {2}), ints(DType::Bool, {}, {0})});
                }).contains("shapes differ"));
    }

    void memoryIsReleasedAfterLastUse() {
        // a chain of 50 element-wise nodes over 1 MiB tensors keeps only a few alive at once
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[262144]"), "x");
        Variable* v = x;
        for (int i = 0; i < 50; ++i) v = g.apply(Op::get("Elemwise", {{"scalar", i % 2 ? "neg" : "abs"}}), {v});
        g.setOutputs({v});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        Tensor in = randn(DType::Float32, {262144});
        ex.run({in});
        ex.context().pool->resetPeaks();
        ex.run({in});
        QVERIFY2(ex.context().pool->peakLiveBytes() <= 2u * (1u << 20),
                 qPrintable(QString::number(ex.context().pool->peakLiveBytes())));
        // deterministic: equal runs give equal bits
        auto a = ex.run({in}), b = ex.run({in});
        QVERIFY(std::memcmp(a[0].rawData(), b[0].rawData(), a[0].nbytes()) == 0);
    }

    void compareOutputsDefinition() {
        std::vector<Tensor> a = {Tensor::fromDoubles(DType::Float32, {3}, {1, 2, 4})};
        std::vector<Tensor> b = {Tensor::fromDoubles(DType::Float32, {3}, {1, 2, 3.9})};
        const CompareResult r = compareOutputs(a, b);
        QVERIFY(std::fabs(r.maxAbs - 0.1) < 1e-6);
        QVERIFY(std::fabs(r.maxRel - 0.1 / 3.9) < 1e-6);
        QVERIFY(!r.within(1e-3));
        QVERIFY(r.within(0.03));
        std::vector<Tensor> c = {Tensor::fromDoubles(DType::Float32, {2}, {1, 2})};
        QVERIFY(!compareOutputs(a, c).within(1));
        std::vector<Tensor> n1 = {Tensor::fromDoubles(DType::Float32, {1}, {NAN})},
                            n2 = {Tensor::fromDoubles(DType::Float32, {1}, {1})};
        QVERIFY(compareOutputs(n1, n1).within(0));
        QVERIFY(!compareOutputs(n1, n2).within(1e9));
    }

    // ------------------------------------------------------------------ corpus
    // An ONNX If whose then branch returns an outer-scope value as it is (no node of its own,
    // valid ONNX), its producer listed after the If: imported (the value captured as an explicit
    // input, core/README.md) and run on both branches, before and after the theano pipeline.
    void onnxElementTypeAttributes() {
        // `to` / `dtype` attributes read through core's ONNX element-type table (dtypeFromOnnx)
        Harness h;
        Variable* vx = h.input(ints(DType::Float32, {3}, {1.5, 2.5, 7}));
        auto onnx = [&](const std::string& t, json attrs, const std::string& type) {
            return h.g.makeApply(Op::get("Onnx" + t, attrs), {vx}, std::vector<Type>{Type::parse(type)})->output(0);
        };
        Variable* u32 = onnx("Cast", {{"to", 12}}, "uint32[3]");
        Variable* f64 = onnx("Cast", {{"to", 11}}, "float64[3]");
        auto outs = h.run({u32, f64});
        QCOMPARE(outs[0].dtype(), DType::UInt32);
        VERIFY_CLOSE(outs[0], (std::vector<double>{1, 2, 7}), 0, 0);
        QCOMPARE(outs[1].dtype(), DType::Float64);
        VERIFY_CLOSE(outs[1], (std::vector<double>{1.5, 2.5, 7}), 0, 0);
        // complex64 (14) is an ONNX type PassLens knows; the CPU backend refuses it by name
        Harness h2;
        Variable* v2 = h2.input(ints(DType::Float32, {3}, {1, 2, 3}));
        Variable* c64 =
            h2.g.makeApply(Op::get("OnnxCast", {{"to", 14}}), {v2}, std::vector<Type>{Type::parse("complex64[3]")})
                ->output(0);
        const QString err = errorOf([&] { h2.run({c64}); });
        QVERIFY2(err.contains("complex64") && err.contains("not supported"), qPrintable(err));
    }

    void onnxIfReturningOuterValue() {
        onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        auto* g = m.mutable_graph();
        g->set_name("if_outer");
        auto valueInfo = [](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const char* name, int type,
                            std::vector<std::int64_t> dims) {
            auto* vi = list->Add();
            vi->set_name(name);
            auto* tt = vi->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(type);
            tt->mutable_shape();
            for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
        };
        auto node = [](onnx::GraphProto* gp, const char* op, std::vector<std::string> ins, const char* out,
                       const char* name) {
            auto* n = gp->add_node();
            n->set_op_type(op);
            n->set_name(name);
            for (auto& i : ins) n->add_input(i);
            n->add_output(out);
            return n;
        };
        valueInfo(g->mutable_input(), "c", onnx::TensorProto::BOOL, {});
        valueInfo(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {3});
        auto* ifNode = node(g, "If", {"c"}, "y", "if1");
        auto branch = [&](const char* attr) {
            auto* a = ifNode->add_attribute();
            a->set_name(attr);
            a->set_type(onnx::AttributeProto::GRAPH);
            a->mutable_g()->set_name(attr);
            return a->mutable_g();
        };
        valueInfo(branch("then_branch")->mutable_output(), "a", onnx::TensorProto::FLOAT, {3});
        auto* elseG = branch("else_branch");
        node(elseG, "Relu", {"x"}, "e", "relu1");
        valueInfo(elseG->mutable_output(), "e", onnx::TensorProto::FLOAT, {3});
        node(g, "Neg", {"x"}, "a", "neg1");
        valueInfo(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {3});
        const Tensor x = Tensor::fromDoubles(DType::Float32, {3}, {-1.5, 0.0, 2.0});
        for (const std::string pipeline : {"none", "theano"}) {
            LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), "if_outer.onnx", ".");
            Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
            Executor ex(*lg.graph, ExecOptions{DeviceChoice::Cpu});
            for (bool c : {true, false}) {
                const auto outs = ex.run({Tensor::fromDoubles(DType::Bool, {}, {c ? 1.0 : 0.0}), x});
                QCOMPARE(outs.size(), std::size_t(1));
                const std::vector<double> want =
                    c ? std::vector<double>{1.5, -0.0, -2.0} : std::vector<double>{0.0, 0.0, 2.0};
                QCOMPARE(outs[0].shape(), Shape({3}));
                for (std::int64_t i = 0; i < 3; ++i) QCOMPARE(outs[0].at(i), want[static_cast<std::size_t>(i)]);
            }
        }
    }

    void corpus_data() {
        QTest::addColumn<QString>("model");
        for (const auto& m : corpusModels()) QTest::newRow(m.c_str()) << QString::fromStdString(m);
    }

    // Source graph and the final graph of every built-in pipeline against the reference outputs.
    // Tolerance: max_rel 1e-4 (norm-wise: max |got - ref| / max |ref|), except
    // ch_PP-OCRv4_det_infer: its output is a sigmoid whose values are all below 6.1e-5, and the
    // onnxruntime reference computes sigmoid with an absolute error of about 2^-24 (its small
    // outputs are multiples of 2^-24 and exact zeros below ~3e-8), so the reference itself is off
    // by up to 1.2e-7 absolute = 2e-3 relative to the output's maximum. For that model the check is
    // max_abs <= 1e-6 (and the phases must agree with the source graph within max_rel 1e-4).
    void corpus() {
        QFETCH(QString, model);
        const std::string m = model.toStdString();
        const auto file = corpusDir() / (m + ".onnx");
        const auto dataDir = corpusDir() / "testdata" / m / "test_data_set_0";
        QVERIFY2(std::filesystem::exists(file), ("corpus model missing: " + file.string()).c_str());
        const std::vector<Tensor> inputs = readTensorDir(dataDir, "input");
        const std::vector<Tensor> reference = readTensorDir(dataDir, "output");
        QVERIFY(!inputs.empty());
        QVERIFY(!reference.empty());
        const bool ocr = m == "ch_PP-OCRv4_det_infer";
        auto checkAgainstReference = [&](const FunctionGraph& g, const std::string& what, std::vector<Tensor>& outs) {
            Executor ex(g, ExecOptions{DeviceChoice::Cpu});
            outs = ex.run(inputs);
            const CompareResult r = compareOutputs(outs, reference);
            const bool ok = ocr ? (r.countMatches && r.maxAbs <= 1e-6) : r.within(1e-4);
            if (!ok) qWarning("%s %s: max_abs %g max_rel %g", m.c_str(), what.c_str(), r.maxAbs, r.maxRel);
            return ok;
        };
        std::vector<Tensor> sourceOuts;
        {
            LoadedGraph loaded = loadGraphFile(file);
            QVERIFY(checkAgainstReference(*loaded.graph, "source", sourceOuts));
        }
        for (const std::string p : {"theano", "cleanup", "legacy", "fast_compile"}) {
            LoadedGraph loaded = loadGraphFile(file);
            Pipeline pipe = Pipeline::builtin(p);
            pipe.run(*loaded.graph, nullptr);
            std::vector<Tensor> outs;
            QVERIFY2(checkAgainstReference(*loaded.graph, p + " final", outs), p.c_str());
            const CompareResult vsSource = compareOutputs(outs, sourceOuts);
            QVERIFY2(
                vsSource.within(1e-4),
                qPrintable(
                    QString("%1 %2 vs source: max_rel %3").arg(model, QString::fromStdString(p)).arg(vsSource.maxRel)));
        }
    }

    // Every phase of the theano pipeline on one model (the check's divergence search).
    void everyPhaseOfTransformer() {
        const auto file = corpusDir() / "transformer_encoder_layer.onnx";
        LoadedGraph loaded = loadGraphFile(file);
        Trace trace;
        Pipeline pipe = Pipeline::builtin("theano");
        const PipelineRun run = pipe.run(*loaded.graph, &trace);
        trace.finish(run, *loaded.graph, pipe.buildContext().caps);
        const auto inputs =
            readTensorDir(corpusDir() / "testdata" / "transformer_encoder_layer" / "test_data_set_0", "input");
        auto src = trace.sourceGraph();
        const auto ref = Executor(*src, ExecOptions{DeviceChoice::Cpu}).run(inputs);
        int checked = 0;
        for (const PhaseRecord& pr : trace.phases()) {
            if (!pr.changed) continue;
            auto g = trace.graphAfterPhase(pr.info.name);
            const auto outs = Executor(*g, ExecOptions{DeviceChoice::Cpu}).run(inputs);
            QVERIFY2(compareOutputs(outs, ref).within(1e-4), pr.info.name.c_str());
            ++checked;
        }
        QVERIFY(checked > 3);
    }

    // ------------------------------------------------------------------ passlens-cli run
    void cliRun() {
#ifndef PASSLENS_CLI
        QSKIP("passlens-cli is not built");
#else
        auto cli = [](const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr) {
            QProcess p;
            p.start(PASSLENS_CLI, args);
            p.waitForFinished(600000);
            if (out) *out = p.readAllStandardOutput();
            if (err) *err = p.readAllStandardError();
            return p.exitCode();
        };
        const QString model = QString::fromStdString((corpusDir() / "mlp.onnx").string());
        const QString data = QString::fromStdString((corpusDir() / "testdata" / "mlp" / "test_data_set_0").string());
        QByteArray out, err;
        QCOMPARE(
            cli({"run", model, "--inputs", data, "--check", "--repeat", "2", "--warmup", "1", "--json"}, &out, &err),
            0);
        const json j = json::parse(out.toStdString());
        QCOMPARE(QString::fromStdString(j["device"].get<std::string>()).left(3), QString("cpu"));
        QVERIFY(j["outputs"][0]["shape"] == json({64, 10}));
        QVERIFY(j["total_us"].get<double>() > 0);
        QVERIFY(j["wall_std_us"].get<double>() >= 0);
        QVERIFY(j["overhead_us"].is_number());
        QVERIFY(!j["nodes"].empty());
        QCOMPARE(QString::fromStdString(j["check"]["against"].get<std::string>()), QString("reference"));
        QVERIFY(j["check"]["max_rel"].get<double>() < 1e-4);
        QVERIFY(j["check"]["first_divergent_phase"].is_null());
        // --threads sets the BLAS threads and the report says how many ran
        QCOMPARE(cli({"run", model, "--repeat", "1", "--threads", "1", "--json"}, &out, &err), 0);
        QCOMPARE(json::parse(out.toStdString())["cpu_threads"].get<int>(), 1);
        QCOMPARE(cli({"run", model, "--repeat", "1", "--threads", "2"}, &out, &err), 0);
        QVERIFY2(out.contains(", 2 threads\n"), out.constData());
        QCOMPARE(cli({"run", model, "--threads", "-1"}, &out, &err), 2);
        // human text with the Theano-style tables, a profile file, the source phase
        const auto dir =
            std::filesystem::temp_directory_path() / ("passlens_tst_exec_cli_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const QString prof = QString::fromStdString((dir / "p.json").string());
        QCOMPARE(cli({"run", model, "--phase", "source", "--repeat", "2", "--profile", prof}, &out, &err), 0);
        QVERIFY(out.contains("Class") && out.contains("Apply") && out.contains("% time"));
        std::ifstream pf(dir / "p.json");
        const json pj = json::parse(pf);
        QCOMPARE(QString::fromStdString(pj["profiles"][0]["phase"].get<std::string>()), QString("source"));
        // usage and failures: exit codes 2 and 1, messages naming the problem
        QCOMPARE(cli({"run", model, "--device", "tpu"}, &out, &err), 2);
        const auto g = dir / "frob.graph.json";
        std::ofstream(g) << R"({"format": "passlens.graph", "version": 1, "name": "frob",
          "inputs": [{"name": "x", "type": "float32[3]"}],
          "nodes": [{"op": "OnnxFrobnicate", "name": "frob_7", "inputs": ["x"], "outputs": [{"name": "y", "type": "float32[3]"}]}],
          "outputs": ["y"]})";
        QCOMPARE(cli({"run", QString::fromStdString(g.string()), "--phase", "source"}, &out, &err), 1);
        QVERIFY2(err.contains("OnnxFrobnicate") && err.contains("frob_7"), err.constData());
        QCOMPARE(cli({"run", model, "--inputs", QString::fromStdString(dir.string())}, &out, &err), 1);
        QVERIFY2(err.contains("input_N.pb"), err.constData());
        std::filesystem::remove_all(dir);
#endif
    }

    // ------------------------------------------------------------------ CUDA (label gpu)
    void cudaMatchesCpu() {
        NEED_CUDA();
        const DeviceInfo info = queryDevices();
        // every corpus model's final graph, against the reference outputs (ch_PP-OCRv4_det_infer:
        // max_abs <= 1e-6, see corpus()) and against the CPU backend on the same graph;
        // PASSLENS_GPU_MODELS=a,b: a subset (scripts/device-check.sh carries resnet18 separately)
        std::vector<std::string> models = corpusModels();
        if (const char* sel = std::getenv("PASSLENS_GPU_MODELS")) {
            models.clear();
            for (const QString& m : QString(sel).split(',', Qt::SkipEmptyParts)) models.push_back(m.toStdString());
        }
        for (const std::string& m : models) {
            const auto file = corpusDir() / (m + ".onnx");
            const auto inputs = readTensorDir(corpusDir() / "testdata" / m / "test_data_set_0", "input");
            const auto reference = readTensorDir(corpusDir() / "testdata" / m / "test_data_set_0", "output");
            LoadedGraph loaded = loadGraphFile(file);
            Pipeline::builtin("theano").run(*loaded.graph, nullptr);
            Executor cuda(*loaded.graph, ExecOptions{DeviceChoice::Cuda});
            QVERIFY(!cuda.gpuEmulated());
            const auto outs = cuda.run(inputs);
            const CompareResult r = compareOutputs(outs, reference);
            const bool ok = m == "ch_PP-OCRv4_det_infer" ? (r.countMatches && r.maxAbs <= 1e-6) : r.within(1e-3);
            QVERIFY2(ok, qPrintable(QString("%1 on %2: max_abs %3 max_rel %4")
                                        .arg(QString::fromStdString(m), QString::fromStdString(info.name))
                                        .arg(r.maxAbs)
                                        .arg(r.maxRel)));
            const auto cpu = Executor(*loaded.graph, ExecOptions{DeviceChoice::Cpu}).run(inputs);
            const CompareResult vsCpu = compareOutputs(outs, cpu);
            QVERIFY2(
                vsCpu.within(1e-3),
                qPrintable(QString("%1: CUDA vs CPU max_rel %2").arg(QString::fromStdString(m)).arg(vsCpu.maxRel)));
        }
    }

    void cudaKernels() {
        NEED_CUDA();
        // every GPU kind on small random inputs, CUDA against the CPU backend
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2,3,8,8]"), "x");
        Variable* w = g.addInput(Type::parse("float32[4,3,3,3]"), "w");
        Variable* gx = g.apply(Op::get("GpuFromHost"), {x});
        Variable* gw = g.apply(Op::get("GpuFromHost"), {w});
        Variable* c = g.apply(
            Op::get("GpuCorrMM",
                    {{"border_mode", {1, 1}}, {"subsample", {1, 1}}, {"filter_dilation", {1, 1}}, {"num_groups", 1}}),
            {gx, gw});
        Variable* e = g.apply(
            Op::get("GpuElemwise", {{"scalar", "composite"}, {"expr", "relu(add(i0,i0))"}, {"dtype", "float32"}}), {c});
        Variable* p = g.apply(
            Op::get("GpuPool",
                    {{"mode", "max"}, {"ws", {2, 2}}, {"stride", {2, 2}}, {"pad", {0, 0}}, {"ignore_border", true}}),
            {e});
        Variable* r =
            g.apply(Op::get("GpuCAReduceCuda", {{"scalar", "add"}, {"axis", {2, 3}}, {"pre_scalar_op", "sqr"}}), {p});
        Variable* s = g.apply(Op::get("GpuSoftmax", {{"axis", 1}}), {r});
        g.setOutputs({g.apply(Op::get("HostFromGpu"), {s}), g.apply(Op::get("HostFromGpu"), {p})});
        std::vector<Tensor> in = {randn(DType::Float32, {2, 3, 8, 8}), randn(DType::Float32, {4, 3, 3, 3})};
        const auto cpu = Executor(g, ExecOptions{DeviceChoice::Cpu}).run(in);
        Executor cu(g, ExecOptions{DeviceChoice::Cuda});
        const auto gpu = cu.run(in);
        QVERIFY(compareOutputs(gpu, cpu).within(1e-4));
        ProfileReport rep = profileExecutor(cu, in, ProfileOptions{2, 5}, "final");
        QVERIFY(rep.error.empty());
        QVERIFY(QString::fromStdString(rep.device).startsWith("cuda:0"));
        QCOMPARE(rep.transfers.size(), std::size_t(4));
    }

    // Every CUDA kernel against the CPU backend on fresh random inputs with poisoned buffers,
    // including 0-size and broadcasting shapes.
    void cudaKernelsEach() {
        NEED_CUDA();
        GpuHarness h;
        Variable* a = h.input(randn(DType::Float32, {3, 4, 5}));
        Variable* b = h.input(randn(DType::Float32, {1, 4, 1}));
        Variable* z = h.input(randn(DType::Float32, {0, 4, 5}));
        Variable* d = h.input(randn(DType::Float64, {3, 4, 5}));
        Variable* n = h.input(ints(DType::Int32, {3, 1, 5}, std::vector<double>(15, 3)));
        auto comp = [&](const std::string& expr, std::vector<Variable*> ins, const std::string& dtype) {
            return h.op("GpuElemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", dtype}}, std::move(ins));
        };
        std::vector<Variable*> outs = {
            comp("mul(add(i0,i1),exp(i1))", {a, b}, "float32"), // broadcasting
            comp("add(i0,i1)", {z, b}, "float32"),              // 0-size
            comp("true_div(i0,i1)", {d, n}, "float64"),         // double mode, int input
            comp("int_div(i0,i0)", {n}, "int32"),               // integer mode
            h.op("GpuDimShuffle", {{"order", {2, 0, 1}}}, {a}), // strided gather
            h.op("GpuReshape", {{"ndim", 2}}, {a, h.g.addConstant(ints(DType::Int64, {2}, {-1, 10}).toTensorData())}),
            h.op("GpuSubtensor", {{"idx", json::array({json{{"start", 1}}, json{{"step", -2}}})}}, {a}),
            h.op("GpuIncSubtensor", {{"idx", json::array({json{{"start", 1}}})}}, {a, b}),
            h.op("GpuIncSubtensor", {{"idx", json::array({0})}, {"set_instead_of_inc", true}},
                 {d, h.input(randn(DType::Float32, {4, 1}))}), // float32 into float64
            h.op("GpuAdvancedSubtensor1", json::object(),
                 {a, h.g.addConstant(ints(DType::Int64, {4}, {2, -3, 0, 2}).toTensorData())}),
            h.op("GpuJoin", {{"axis", 0}}, {a, z, a}),
            h.op("GpuAlloc", json::object(),
                 {b, h.g.addConstant(ints(DType::Int64, {}, {2}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {3}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {4}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {6}).toTensorData())}),
            h.op("GpuCAReduceCuda", {{"scalar", "add"}, {"axis", {0, 2}}}, {a}),
            h.op("GpuCAReduceCuda", {{"scalar", "maximum"}, {"axis", {1}}, {"pre_scalar_op", "abs"}}, {d}),
            h.op("GpuCAReduceCuda", {{"scalar", "mul"}, {"axis", nullptr}}, {n}),
            h.op("GpuCAReduceCuda", {{"scalar", "add"}, {"axis", {1}}}, {z}),
            h.op("GpuLogSoftmax", {{"axis", -1}}, {a}),
            h.op("GpuCumOp", {{"axis", 1}, {"mode", "add"}}, {a}),
            h.op("GpuCumOp", {{"axis", nullptr}, {"mode", "mul"}}, {d}),
            h.op("GpuCumOp", {{"axis", 0}, {"mode", "add"}},
                 {h.input(ints(DType::Int64, {3, 2}, {1, -2, 3, 4, -5, 6}))}),
            h.op("GpuSoftmax", {{"axis", 1}}, {d}),
            h.op("GpuContiguous", json::object(), {h.op("GpuDimShuffle", {{"order", {1, 0, 2}}}, {a})}),
            h.op("GpuIncSubtensor", {{"idx", json::array({json{{"start", 1}}})}},
                 {n, h.input(ints(DType::Int32, {5}, {1, 2, 3, 4, 5}))}), // int32 add
            h.op("GpuAllocEmpty", {{"dtype", "float32"}},
                 {h.g.addConstant(ints(DType::Int64, {}, {2}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {3}).toTensorData())}),
            h.op("GpuAlloc", {{"memset_0", true}},
                 {h.input(ints(DType::Float32, {}, {0})), h.g.addConstant(ints(DType::Int64, {}, {4}).toTensorData())}),
        };
        Apply* sp = h.g.makeApply(Op::get("GpuSplit", {{"axis", 2}, {"n_splits", 3}}),
                                  {a, h.g.addConstant(ints(DType::Int64, {3}, {2, 0, 3}).toTensorData())});
        for (int k = 0; k < 3; ++k) outs.push_back(sp->output(k));
        // BLAS
        Variable* m1 = h.input(randn(DType::Float32, {3, 4}));
        Variable* m2 = h.input(randn(DType::Float32, {4, 2}));
        Variable* zz = h.input(randn(DType::Float32, {3, 2}));
        Variable* vv = h.input(randn(DType::Float32, {4}));
        Variable* v3 = h.input(randn(DType::Float32, {3}));
        Variable* alpha = h.g.addConstant(ints(DType::Float32, {}, {0.5}).toTensorData());
        Variable* beta = h.g.addConstant(ints(DType::Float32, {}, {-2}).toTensorData());
        outs.push_back(h.op("GpuDot22", json::object(), {m1, m2}));
        outs.push_back(h.op("GpuGemm", json::object(), {zz, alpha, m1, m2, beta}));
        outs.push_back(h.op("GpuGemv", json::object(), {v3, alpha, m1, vv, beta}));
        outs.push_back(h.op("GpuGemmBatch", json::object(),
                            {h.input(randn(DType::Float64, {2, 3, 4})), h.input(randn(DType::Float64, {2, 4, 5}))}));
        // convolution (grouped, strided, dilated; depthwise), pooling, batch norm
        Variable* img = h.input(randn(DType::Float32, {2, 4, 9, 8}));
        auto conv = [&](Variable* w, json pad, int stride, int dil, int groups) {
            return h.op("GpuCorrMM",
                        {{"border_mode", pad},
                         {"subsample", {stride, stride}},
                         {"filter_dilation", {dil, dil}},
                         {"num_groups", groups}},
                        {img, w});
        };
        outs.push_back(conv(h.input(randn(DType::Float32, {6, 2, 3, 3})), {1, 2}, 2, 1, 2));
        outs.push_back(conv(h.input(randn(DType::Float32, {8, 1, 3, 3})), {1, 1}, 1, 2, 4));
        outs.push_back(conv(h.input(randn(DType::Float32, {3, 4, 1, 1})), "valid", 1, 1, 1));
        outs.push_back(h.op(
            "GpuPool",
            {{"mode", "average_exc_pad"}, {"ws", {3, 3}}, {"stride", {2, 2}}, {"pad", {1, 1}}, {"ignore_border", true}},
            {img}));
        outs.push_back(h.op(
            "GpuPool", {{"mode", "max"}, {"ws", {3, 3}}, {"stride", {2, 2}}, {"pad", {0, 0}}, {"ignore_border", false}},
            {img}));
        outs.push_back(h.op(
            "GpuPool", {{"mode", "sum"}, {"ws", {2, 3}}, {"stride", {1, 2}}, {"pad", {0, 0}}, {"ignore_border", true}},
            {img}));
        outs.push_back(h.op(
            "GpuPool",
            {{"mode", "average_inc_pad"}, {"ws", {3, 3}}, {"stride", {3, 3}}, {"pad", {1, 1}}, {"ignore_border", true}},
            {img}));
        Variable* scale = h.input(randn(DType::Float32, {4}));
        Variable* var = h.input(randn(DType::Float32, {4}, 0.5, 2));
        outs.push_back(h.op("GpuDnnBatchNormInference", {{"epsilon", 1e-3}}, {img, scale, scale, scale, var}));
        std::vector<Variable*> hosted;
        for (Variable* v : outs) hosted.push_back(h.host(v));
        const auto [cpu, gpu] = h.both(hosted);
        QCOMPARE(gpu.size(), cpu.size());
        for (std::size_t i = 0; i < cpu.size(); ++i) {
            const CompareResult r = compareOutputs({gpu[i]}, {cpu[i]});
            QVERIFY2(
                gpu[i].dtype() == cpu[i].dtype() && gpu[i].shape() == cpu[i].shape() && r.within(1e-5),
                qPrintable(QString("output %1: %2 vs %3, max_rel %4")
                               .arg(i)
                               .arg(QString::fromStdString(gpu[i].typeStr()), QString::fromStdString(cpu[i].typeStr()))
                               .arg(r.maxRel)));
        }
    }

    // Reductions as the CPU: NaN propagates through max / min, integer identities, the output's
    // accumulator, refusals (empty max axis, float16, unknown pre_scalar_op).
    void cudaReductions() {
        NEED_CUDA();
        GpuHarness h;
        Variable* f = h.input(ints(DType::Float32, {3, 4}, {1, 2, 3, 4, 5, NAN, -7, 8, -1, -2, -3, -4}));
        Variable* i = h.input(ints(DType::Int64, {2, 3}, {-5, -9, -1, 7, 3, 5}));
        Tensor ut = Tensor::empty(DType::UInt64, {3});
        ut.data<std::uint64_t>()[0] = 1;
        ut.data<std::uint64_t>()[1] = (std::uint64_t(1) << 63) + 5; // negative as int64
        ut.data<std::uint64_t>()[2] = 4;
        Variable* u = h.input(ut);
        Variable* e = h.input(ints(DType::Float32, {3, 0}, {}));
        auto red = [&](const std::string& s, json axis, Variable* x) {
            return h.host(h.op("GpuCAReduceCuda", {{"scalar", s}, {"axis", axis}}, {x}));
        };
        const auto [cpu, gpu] = h.both({red("maximum", {1}, f), red("minimum", {1}, f), red("maximum", nullptr, f),
                                        red("minimum", {1}, i), red("maximum", {0}, i), red("maximum", nullptr, u),
                                        red("add", {1}, e), red("mul", {1}, e), red("maximum", {0}, e)});
        for (std::size_t k = 0; k < cpu.size(); ++k) VERIFY_SAME(gpu[k], cpu[k]);
        QVERIFY(std::isnan(gpu[0].at(1)) && std::isnan(gpu[1].at(1)) && std::isnan(gpu[2].at(0)));
        QCOMPARE(gpu[0].at(2), -1.0);
        QCOMPARE(gpu[3].intAt(0), -9);
        QCOMPARE(gpu[5].data<std::uint64_t>()[0], (std::uint64_t(1) << 63) + 5);
        QCOMPARE(gpu[6].numel(), 3);
        QCOMPARE(gpu[6].at(0), 0.0);
        QCOMPARE(gpu[7].at(2), 1.0);
        QCOMPARE(gpu[8].numel(), 0);
        // refusals
        auto refused = [&](const Tensor& x, json attrs) {
            GpuHarness r;
            Variable* v = r.input(x);
            r.g.setOutputs({r.host(r.op("GpuCAReduceCuda", std::move(attrs), {v}))});
            return errorOf([&] { (void)r.run(DeviceChoice::Cuda); });
        };
        const QString empty = refused(ints(DType::Float32, {3, 0}, {}), {{"scalar", "minimum"}, {"axis", {1}}});
        QVERIFY2(empty.contains("GpuCAReduceCuda") &&
                     empty.contains("cannot take the minimum of an empty axis of float32[3,0]"),
                 qPrintable(empty));
        const QString pre =
            refused(randn(DType::Float32, {2, 2}), {{"scalar", "add"}, {"axis", {1}}, {"pre_scalar_op", "exp"}});
        QVERIFY2(pre.contains("unsupported pre_scalar_op 'exp'"), qPrintable(pre));
        const QString half = refused(Tensor::zeros(DType::Float16, {2, 2}), {{"scalar", "add"}, {"axis", {1}}});
        QVERIFY2(half.contains("dtype float16 is not supported by the CUDA backend"), qPrintable(half));
    }

    // GEMMs as the CPU: batch 0, K = 0, mixed dtypes (read in the output dtype), broadcast batches.
    void cudaGemmShapes() {
        NEED_CUDA();
        GpuHarness h;
        Variable* zb = h.op("GpuGemmBatch", json::object(),
                            {h.input(randn(DType::Float32, {0, 2, 3})), h.input(randn(DType::Float32, {0, 3, 4}))});
        Variable* k0 = h.op("GpuDot22", json::object(),
                            {h.input(randn(DType::Float32, {2, 0})), h.input(randn(DType::Float32, {0, 3}))});
        Variable* half = h.g.addConstant(ints(DType::Float64, {}, {0.5}).toTensorData());
        Variable* gk0 = h.op("GpuGemm", json::object(),
                             {h.input(randn(DType::Float64, {2, 3})), half, h.input(randn(DType::Float64, {2, 0})),
                              h.input(randn(DType::Float64, {0, 3})), half});
        // mixed: float64 z with float32 x (read as float64), float32 z with a float64 matrix
        Variable* mixed = h.op("GpuGemm", json::object(),
                               {h.input(randn(DType::Float64, {2, 3})), half, h.input(randn(DType::Float32, {2, 4})),
                                h.input(randn(DType::Float64, {4, 3})), half});
        Variable* mixedv = h.op("GpuGemv", json::object(),
                                {h.input(randn(DType::Float32, {3})), half, h.input(randn(DType::Float64, {3, 4})),
                                 h.input(randn(DType::Float32, {4})), half});
        // broadcast batches: one shared operand (stride 0) and a mixed broadcast (one GEMM per batch)
        Variable* bc1 = h.op("GpuGemmBatch", json::object(),
                             {h.input(randn(DType::Float32, {1, 2, 3}), Type::parse("float32[?,2,3]")),
                              h.input(randn(DType::Float32, {4, 3, 5}), Type::parse("float32[?,3,5]"))});
        Variable* bc2 = h.op("GpuGemmBatch", json::object(),
                             {h.input(randn(DType::Float32, {2, 1, 2, 3}), Type::parse("float32[?,?,2,3]")),
                              h.input(randn(DType::Float32, {1, 3, 3, 4}), Type::parse("float32[?,?,3,4]"))});
        const auto [cpu, gpu] =
            h.both({h.host(zb), h.host(k0), h.host(gk0), h.host(mixed), h.host(mixedv), h.host(bc1), h.host(bc2)});
        QCOMPARE(gpu[0].shape(), (Shape{0, 2, 4}));
        VERIFY_SAME(gpu[1], cpu[1]); // zeros
        QCOMPARE(gpu[1].at(5), 0.0);
        VERIFY_SAME(gpu[2], cpu[2]); // 0.5 * z
        QCOMPARE(gpu[5].shape(), (Shape{4, 2, 5}));
        QCOMPARE(gpu[6].shape(), (Shape{2, 3, 2, 4}));
        for (std::size_t k = 3; k < cpu.size(); ++k) {
            QCOMPARE(gpu[k].dtype(), cpu[k].dtype());
            QVERIFY2(compareOutputs({gpu[k]}, {cpu[k]}).within(1e-6), qPrintable(QString("output %1").arg(k)));
        }
    }

    // Element-wise parameters in double, as the CPU: clip bounds of float64 and large int64
    // values, leaky_relu and hard_sigmoid parameters.
    void cudaElemwiseParameters() {
        NEED_CUDA();
        GpuHarness h;
        Variable* d = h.input(ints(DType::Float64, {6}, {0.1, 0.1000000001, 0.7, 0.69999999999, -1, 2}));
        Variable* i = h.input(ints(DType::Int64, {3}, {2199023255552.0, -5, 7}));
        auto comp = [&](const std::string& expr, Variable* x, const std::string& dtype) {
            return h.host(h.op("GpuElemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", dtype}}, {x}));
        };
        const auto [cpu, gpu] =
            h.both({comp("clip{0.1,0.7}(i0)", d, "float64"), comp("clip{-3,1099511627777}(i0)", i, "int64"),
                    comp("leaky_relu{0.1}(i0)", d, "float64"), comp("hard_sigmoid{0.3,0.1}(i0)", d, "float64")});
        for (std::size_t k = 0; k < cpu.size(); ++k) VERIFY_SAME(gpu[k], cpu[k]);
        QCOMPARE(gpu[0].at(0), 0.1);
        QCOMPARE(gpu[0].at(1), 0.1000000001);
        QCOMPARE(gpu[0].at(3), 0.69999999999);
        QCOMPARE(gpu[1].intAt(0), 1099511627777);
        QCOMPARE(gpu[1].intAt(1), -3);
        QCOMPARE(gpu[2].at(4), -1 * 0.1);
    }

    // Host-side validation as on the CPU: stride or dilation 0, a kernel larger than the padded
    // input, AdvancedSubtensor1 of a 0-d tensor: a message naming the node, no crash.
    void cudaValidation() {
        NEED_CUDA();
        // (a zero stride is refused when the node is made; the kernel refuses it too)
        auto convError = [&](Shape xs, Shape ws, json pad, json sub, json dil) {
            return errorOf([&] {
                GpuHarness h;
                Variable* x = h.input(randn(DType::Float32, xs));
                Variable* w = h.input(randn(DType::Float32, ws));
                h.g.setOutputs({h.host(h.op(
                    "GpuCorrMM",
                    {{"border_mode", pad}, {"subsample", sub}, {"filter_dilation", dil}, {"num_groups", 1}}, {x, w}))});
                (void)h.run(DeviceChoice::Cuda);
            });
        };
        const QString st = convError({1, 1, 5, 5}, {1, 1, 3, 3}, "valid", {0, 1}, {1, 1});
        QVERIFY2(st.contains("GpuCorrMM") && st.contains("must be >= 1"), qPrintable(st));
        const QString di = convError({1, 1, 5, 5}, {1, 1, 3, 3}, "valid", {1, 1}, {1, 0});
        QVERIFY2(di.contains("GpuCorrMM") && di.contains("must be >= 1"), qPrintable(di));
        const QString big = convError({1, 1, 2, 2}, {1, 1, 3, 3}, "valid", {2, 2}, {1, 1});
        QVERIFY2(big.contains("is larger than the padded input float32[1,1,2,2]"), qPrintable(big));
        GpuHarness h;
        Variable* x = h.input(ints(DType::Float32, {}, {3}), Type::parse("float32[*]"));
        h.g.setOutputs({h.host(h.op("GpuAdvancedSubtensor1", json::object(),
                                    {x, h.g.addConstant(ints(DType::Int64, {1}, {0}).toTensorData())}))});
        const QString sc = errorOf([&] { (void)h.run(DeviceChoice::Cuda); });
        QVERIFY2(sc.contains("GpuAdvancedSubtensor1") && sc.contains("cannot index a scalar"), qPrintable(sc));
    }

    // A profile whose run fails at a later node keeps the event times of the CUDA steps that
    // completed (they read 0 us before) and leaves the failing node and those after it n/a.
    void cudaProfileAfterFailure() {
        NEED_CUDA();
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[256,64]"), "x");
        Variable* idx = g.addInput(Type::parse("int64[2]"), "idx");
        Variable* e = g.apply(Op::get("GpuElemwise", {{"scalar", "exp"}}), {g.apply(Op::get("GpuFromHost"), {x})});
        Variable* sel = g.apply(Op::get("GpuAdvancedSubtensor1"), {e, idx});
        g.setOutputs({g.apply(Op::get("HostFromGpu"), {sel})});
        Executor ex(g, ExecOptions{DeviceChoice::Cuda});
        const ProfileReport rep = profileExecutor(
            ex, {randn(DType::Float32, {256, 64}), ints(DType::Int64, {2}, {1, 300})}, ProfileOptions{1, 2}, "final");
        QVERIFY2(QString::fromStdString(rep.error).contains("index 300 out of bounds"), rep.error.c_str());
        bool sawExp = false, sawSel = false;
        for (const ProfileNode& n : rep.nodes) {
            if (n.kind == "GpuElemwise") {
                sawExp = true;
                QVERIFY2(n.timeUs && *n.timeUs > 0, "the completed CUDA step has its event time");
            }
            if (n.kind == "GpuAdvancedSubtensor1" || n.kind == "HostFromGpu") {
                sawSel = sawSel || n.kind == "GpuAdvancedSubtensor1";
                QVERIFY(!n.timeUs);
            }
        }
        QVERIFY(sawExp && sawSel);
    }

#if PASSLENS_CUDA_EMULATED
    // Emulated device only (faults are injected): a kernel fault is reported against the node
    // that launched it when steps are synchronised (PASSLENS_CUDA_SYNC=1), the executor's device
    // buffers are then released without terminating the process, and out of device memory names
    // the node and the bytes.
    void cudaFaults() {
        NEED_CUDA();
        auto graph = [](GpuHarness& h) {
            Variable* x = h.input(randn(DType::Float32, {64}));
            Variable* e = h.op("GpuElemwise", {{ "scalar", "exp" }}, {x});
            Variable* n = h.op("GpuElemwise", {{ "scalar", "neg" }}, {e});
            h.g.setOutputs({h.host(h.op("GpuElemwise", {{ "scalar", "abs" }}, {n}))});
        };
        {
            GpuHarness h;
            graph(h);
            ExecOptions o{DeviceChoice::Cuda, true};
            o.cudaSyncEachStep = true;
            QString msg;
            {
                Executor ex(h.g, o);
                cuda::emu::faultKernel(1); // the second kernel: neg
                msg = errorOf([&] { (void)ex.run(h.values); });
            } // the executor's buffers are freed after the fault: no exception leaves a destructor
            QVERIFY2(msg.contains("GpuElemwise{neg}") && msg.contains("cudaErrorIllegalAddress"), qPrintable(msg));
            QVERIFY(QString::fromStdString(cuda::emu::lastFault()).contains("injected fault in kernel elemKernel"));
            cuda::emu::reset();
        }
        {
            GpuHarness h;
            graph(h);
            Executor ex(h.g, ExecOptions{DeviceChoice::Cuda, true});
            cuda::emu::failAllocation(1); // the upload's buffer, then exp's output
            const QString msg = errorOf([&] { (void)ex.run(h.values); });
            cuda::emu::reset();
            QVERIFY2(msg.contains("GpuElemwise{exp}") &&
                         msg.contains("out of device memory: cannot allocate 256 bytes"),
                     qPrintable(msg));
            const auto outs = ex.run(h.values); // the same executor runs once memory is back
            QCOMPARE(outs[0].numel(), 64);
        }
    }

    // Without page-locked memory (injected), host buffers fall back to pageable memory, and
    // those fallbacks are reused by later runs instead of growing the pool run after run.
    void cudaPageableFallbackReused() {
        NEED_CUDA();
        GpuHarness h;
        Variable* x = h.input(randn(DType::Float32, {1000}));
        h.g.setOutputs({h.host(h.op("GpuElemwise", {{ "scalar", "exp" }}, {x}))});
        Executor ex(h.g, ExecOptions{DeviceChoice::Cuda});
        cuda::emu::failPinnedAllocation(true);
        const auto first = ex.run(h.values);
        const double want = std::exp(h.values[0].at(7));
        QCOMPARE(first[0].at(7), static_cast<double>(static_cast<float>(want)));
        QVERIFY(!first[0].storage()->pinned());
        (void)ex.run(h.values); // `first` is still held: this run's output is a second buffer
        const std::size_t footprint = ex.context().pool->peakFootprintBytes();
        for (int i = 0; i < 4; ++i) (void)ex.run(h.values);
        const std::size_t after = ex.context().pool->peakFootprintBytes();
        cuda::emu::reset();
        QCOMPARE(after, footprint);
    }

    // Several devices (emulated): a context naming another existing device is refused with a
    // message (every kernel runs on device 0); names of missing devices mean device 0.
    void cudaSeveralDevices() {
        NEED_CUDA();
        cuda::emu::setDeviceCount(2);
        auto runContext = [](const std::string& ctx) {
            FunctionGraph g;
            Variable* x = g.addInput(Type::parse("float32[3]"), "x");
            Variable* gx = g.apply(Op::get("GpuFromHost", {{ "context", ctx }}), {x});
            g.setOutputs({g.apply(Op::get("HostFromGpu"), {g.apply(Op::get("GpuElemwise",
                                                                           {{ "scalar",
                                                                              "neg" }}),
                                                                   {gx})})});
            Executor ex(g, ExecOptions{DeviceChoice::Cuda});
            std::vector<Tensor> out;
            const QString err = errorOf([&] { out = ex.run({ints(DType::Float32, {3}, {1, 2, 3})}); });
            return std::make_pair(err, out);
        };
        const auto [err1, out1] = runContext("dev1");
        const auto [err7, out7] = runContext("dev7");
        const auto [err0, out0] = runContext("dev0");
        cuda::emu::reset();
        QVERIFY2(err1.contains("GpuFromHost") &&
                     err1.contains("context 'dev1' is CUDA device 1, but PassLens runs every CUDA kernel on device 0"),
                 qPrintable(err1));
        QVERIFY2(err7.isEmpty() && err0.isEmpty(), qPrintable(err7 + err0));
        QCOMPARE(out7[0].at(2), -3.0);
        QCOMPARE(out0[0].at(0), -1.0);
    }
#endif
};

QTEST_GUILESS_MAIN(TestExec)
#include "tst_exec.moc"
