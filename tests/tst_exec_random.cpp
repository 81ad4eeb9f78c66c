// The CPU kernels of ONNX's random generators and of Dropout (OnnxRandomKernels.cpp): output
// shapes and dtypes, the seed (same values for the same seed, in every run and after the
// pipelines; other values for another seed or without one), the distributions' statistics on
// 100,000 draws with a fixed seed, Dropout's kept fraction, scaling and exact cases, the errors
// for bad attributes and inputs; and core's handling of random nodes (never merged unseeded,
// never folded).
#include "ExecTestSupport.h"

#include <passlens/rewrite/ConstantFolding.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <tuple>

using namespace passlens;
using namespace exectest;

namespace {

// Runs one Onnx<kind> node (its inputs graph inputs) on the CPU and returns its output.
Tensor runOp(const std::string& kind, json attrs, std::vector<Tensor> ins = {},
             const std::string& type = "float32[*]") {
    Harness h;
    std::vector<Variable*> vs;
    for (const Tensor& t : ins) vs.push_back(h.input(t));
    Apply* a = h.g.makeApply(Op::get("Onnx" + kind, std::move(attrs)), vs, std::vector<Type>{Type::parse(type)});
    return h.run({a->output(0)})[0];
}

// An ONNX model (opset 13) over float32 [4, 6] values, built node by node.
struct OnnxModel {
    onnx::ModelProto m;
    explicit OnnxModel(const char* name) {
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        m.mutable_graph()->set_name(name);
    }
    static void value(onnx::ValueInfoProto* vi, const std::string& name, int type = onnx::TensorProto::FLOAT) {
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        for (int d : {4, 6}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    void input(const std::string& name) { value(m.mutable_graph()->add_input(), name); }
    void output(const std::string& name, int type = onnx::TensorProto::FLOAT) {
        value(m.mutable_graph()->add_output(), name, type);
    }
    onnx::NodeProto* node(const char* op, const std::string& name, std::vector<std::string> ins,
                          std::vector<std::string> outs) {
        auto* n = m.mutable_graph()->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto& i : ins) n->add_input(i);
        for (const auto& o : outs) n->add_output(o);
        return n;
    }
    // RandomNormal of shape [4, 6] into `out`, with a seed when given.
    void randomNormal(const std::string& out, std::optional<float> seed) {
        auto* r = node("RandomNormal", "rn_" + out, {}, {out});
        auto* sh = r->add_attribute();
        sh->set_name("shape");
        sh->set_type(onnx::AttributeProto::INTS);
        sh->add_ints(4);
        sh->add_ints(6);
        if (!seed) return;
        auto* sd = r->add_attribute();
        sd->set_name("seed");
        sd->set_type(onnx::AttributeProto::FLOAT);
        sd->set_f(*seed);
    }
    // The final graph of `pipeline` ("none", "theano", "cleanup").
    LoadedGraph import(const std::string& pipeline) const {
        LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), m.graph().name() + ".onnx", ".");
        Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
        return lg;
    }
};

// Runs one OnnxDropout node on the CPU: data x, then ratio and training_mode when given (an absent
// ratio is marked as ONNX's importer does); returns its output and mask.
std::vector<Tensor> runDropout(json attrs, const Tensor& x, std::optional<double> ratio, std::optional<bool> training) {
    Harness h;
    std::vector<Variable*> vs{h.input(x)};
    if (ratio) vs.push_back(h.input(Tensor::scalar(DType::Float32, *ratio)));
    if (training) vs.push_back(h.input(Tensor::scalar(DType::Bool, *training ? 1 : 0)));
    if (!ratio && training) attrs["inputs_present"] = {true, false, true};
    const Type t = typeOf(x);
    Apply* a =
        h.g.makeApply(Op::get("OnnxDropout", std::move(attrs)), vs, std::vector<Type>{t, Type(DType::Bool, t.dims())});
    return h.run(a->outputs());
}

struct Moments {
    double mean = 0, var = 0;
};

Moments momentsOf(const Tensor& t) {
    const auto v = t.toDoubles();
    Moments m;
    for (double x : v) m.mean += x;
    m.mean /= static_cast<double>(v.size());
    for (double x : v) m.var += (x - m.mean) * (x - m.mean);
    m.var /= static_cast<double>(v.size());
    return m;
}

} // namespace

class TestExecRandom : public QObject {
    Q_OBJECT

private slots:
    void shapesAndDtypes() {
        for (const auto& [code, dt] :
             std::vector<std::pair<int, DType>>{{10, DType::Float16}, {1, DType::Float32}, {11, DType::Float64}}) {
            for (const char* kind : {"RandomNormal", "RandomUniform"}) {
                const Tensor y = runOp(kind, {{"dtype", code}, {"shape", {2, 3, 4}}, {"seed", 1.0}});
                QCOMPARE(y.dtype(), dt);
                QCOMPARE(y.shape(), (Shape{2, 3, 4}));
            }
        }
        // default dtype float32; the uniform values lie in [low, high], float16 too
        const Tensor n = runOp("RandomNormal", {{"shape", {5}}});
        QCOMPARE(n.dtype(), DType::Float32);
        for (int code : {1, 10}) {
            const Tensor u =
                runOp("RandomUniform", {{"dtype", code}, {"shape", {1000}}, {"low", -3.0}, {"high", -2.0}});
            for (double v : u.toDoubles()) QVERIFY2(v >= -3 && v <= -2, qPrintable(QString::number(v)));
        }
        // *Like: the input's shape, its dtype unless dtype says otherwise
        const Tensor xd = randn(DType::Float64, {3, 7});
        const Tensor xi = ints(DType::Int32, {2, 2}, {1, 2, 3, 4});
        for (const char* kind : {"RandomNormalLike", "RandomUniformLike"}) {
            const Tensor a = runOp(kind, json::object(), {xd});
            QCOMPARE(a.dtype(), DType::Float64);
            QCOMPARE(a.shape(), (Shape{3, 7}));
            const Tensor b = runOp(kind, {{"dtype", 10}}, {xi});
            QCOMPARE(b.dtype(), DType::Float16);
            QCOMPARE(b.shape(), (Shape{2, 2}));
            const QString e = errorOf([&] { (void)runOp(kind, json::object(), {xi}); });
            QVERIFY2(e.contains(QString("Onnx") + kind) && e.contains("cannot produce int32 values"), qPrintable(e));
        }
        // Bernoulli: x's dtype by default, else the dtype attribute; p = 0 and 1 give 0 and 1
        const Tensor p = ints(DType::Float32, {2, 3}, {0, 1, 1, 0, 0, 1});
        const Tensor b0 = runOp("Bernoulli", json::object(), {p});
        QCOMPARE(b0.dtype(), DType::Float32);
        QCOMPARE(b0.toDoubles(), p.toDoubles());
        for (const auto& [code, dt] : std::vector<std::pair<int, DType>>{
                 {9, DType::Bool}, {7, DType::Int64}, {2, DType::UInt8}, {11, DType::Float64}}) {
            const Tensor b = runOp("Bernoulli", {{"dtype", code}}, {p});
            QCOMPARE(b.dtype(), dt);
            QCOMPARE(b.shape(), (Shape{2, 3}));
            QCOMPARE(b.toDoubles(), p.toDoubles());
        }
        // Multinomial: [batch, sample_size], int32 by default, classes in range
        const Tensor logits = ints(DType::Float32, {3, 4}, {0, 1, 2, 3, -1, 0, 0, 5, 2, 2, 2, 2});
        const Tensor m32 = runOp("Multinomial", {{"sample_size", 7}}, {logits});
        QCOMPARE(m32.dtype(), DType::Int32);
        QCOMPARE(m32.shape(), (Shape{3, 7}));
        for (double v : m32.toDoubles()) QVERIFY(v >= 0 && v < 4 && v == std::floor(v));
        const Tensor m64 = runOp("Multinomial", {{"dtype", 7}}, {logits});
        QCOMPARE(m64.dtype(), DType::Int64);
        QCOMPARE(m64.shape(), (Shape{3, 1}));
        // a class of log-probability -inf is never drawn
        const Tensor only = ints(DType::Float64, {1, 3}, {-INFINITY, 0.5, -INFINITY});
        QCOMPARE(runOp("Multinomial", {{"sample_size", 50}}, {only}).toDoubles(), std::vector<double>(50, 1.0));
    }

    // The same seed gives the same values (two separate executors), another seed other values;
    // without a seed every run draws afresh.
    void seeds() {
        const Tensor x = randn(DType::Float32, {10, 10}, 0, 1);
        const Tensor logits = randn(DType::Float64, {4, 10});
        const std::vector<std::tuple<std::string, json, std::vector<Tensor>>> cases = {
            {"RandomNormal", {{"shape", {100}}}, {}},  {"RandomUniform", {{"shape", {100}}}, {}},
            {"RandomNormalLike", json::object(), {x}}, {"RandomUniformLike", json::object(), {x}},
            {"Bernoulli", json::object(), {x}},        {"Multinomial", {{"sample_size", 25}}, {logits}},
        };
        for (const auto& [kind, attrs, ins] : cases) {
            json s1 = attrs, s2 = attrs;
            s1["seed"] = 1.0;
            s2["seed"] = 2.0;
            const auto a = runOp(kind, s1, ins).toDoubles(), b = runOp(kind, s1, ins).toDoubles();
            const auto c = runOp(kind, s2, ins).toDoubles();
            QVERIFY2(a == b, kind.c_str());
            QVERIFY2(a != c, kind.c_str());
            // unseeded: two runs of one executor differ
            Harness h;
            std::vector<Variable*> vs;
            for (const Tensor& t : ins) vs.push_back(h.input(t));
            Apply* n = h.g.makeApply(Op::get("Onnx" + kind, attrs), vs, std::vector<Type>{Type::parse("float32[*]")});
            h.g.setOutputs({n->output(0)});
            Executor ex(h.g, h.options);
            const auto r1 = ex.run(h.values)[0].toDoubles(), r2 = ex.run(h.values)[0].toDoubles();
            QVERIFY2(r1 != r2, kind.c_str());
        }
    }

    // 100,000 draws with a fixed seed: mean and variance within 1% of the distribution's,
    // Bernoulli and Multinomial frequencies within 0.005 of p and of softmax(logits).
    void statistics() {
        constexpr int n = 100000;
        {
            const Tensor y =
                runOp("RandomNormal", {{"dtype", 11}, {"shape", {n}}, {"mean", 3.0}, {"scale", 2.0}, {"seed", 7.0}});
            const Moments m = momentsOf(y);
            QVERIFY2(std::fabs(m.mean - 3) < 0.03, qPrintable(QString::number(m.mean)));
            QVERIFY2(std::fabs(m.var - 4) < 0.04, qPrintable(QString::number(m.var)));
        }
        {
            const Tensor x = Tensor::fromDoubles(DType::Float32, {n}, std::vector<double>(n, 0));
            const Tensor y = runOp("RandomUniformLike", {{"low", -1.0}, {"high", 3.0}, {"seed", 7.0}}, {x});
            const Moments m = momentsOf(y);
            QVERIFY2(std::fabs(m.mean - 1) < 0.01, qPrintable(QString::number(m.mean)));
            QVERIFY2(std::fabs(m.var - 16.0 / 12) < 16.0 / 1200, qPrintable(QString::number(m.var)));
            const auto v = y.toDoubles();
            QVERIFY(*std::min_element(v.begin(), v.end()) >= -1 && *std::max_element(v.begin(), v.end()) < 3);
        }
        {
            const Tensor p = Tensor::fromDoubles(DType::Float64, {2, n / 2}, [] {
                std::vector<double> v(n, 0.3);
                std::fill(v.begin() + n / 2, v.end(), 0.85);
                return v;
            }());
            const auto y = runOp("Bernoulli", {{"seed", 7.0}, {"dtype", 9}}, {p}).toDoubles();
            const double f0 = std::accumulate(y.begin(), y.begin() + n / 2, 0.0) / (n / 2);
            const double f1 = std::accumulate(y.begin() + n / 2, y.end(), 0.0) / (n / 2);
            QVERIFY2(std::fabs(f0 - 0.3) < 0.005, qPrintable(QString::number(f0)));
            QVERIFY2(std::fabs(f1 - 0.85) < 0.005, qPrintable(QString::number(f1)));
        }
        {
            const std::vector<double> lg = {0, 1, 2, std::log(0.5), std::log(0.25), std::log(0.25)};
            const Tensor logits = Tensor::fromDoubles(DType::Float32, {2, 3}, lg);
            const auto y =
                runOp("Multinomial", {{"sample_size", n}, {"seed", 7.0}, {"dtype", 7}}, {logits}).toDoubles();
            for (int b = 0; b < 2; ++b) {
                double z = 0;
                for (int k = 0; k < 3; ++k) z += std::exp(static_cast<double>(static_cast<float>(lg[b * 3 + k])));
                for (int k = 0; k < 3; ++k) {
                    const double want = std::exp(static_cast<double>(static_cast<float>(lg[b * 3 + k]))) / z;
                    const double got =
                        static_cast<double>(std::count(y.begin() + b * n, y.begin() + (b + 1) * n, double(k))) / n;
                    QVERIFY2(std::fabs(got - want) < 0.005,
                             qPrintable(QString("row %1 class %2: %3 vs %4").arg(b).arg(k).arg(got).arg(want)));
                }
            }
        }
    }

    // A seeded RandomNormal feeding an Add, imported from ONNX: the same values from the source
    // graph and after the theano and cleanup pipelines.
    void seededAfterPipelines() {
        OnnxModel m("random");
        m.input("x");
        m.output("y");
        m.randomNormal("r", 3.5f);
        m.node("Add", "add", {"x", "r"}, {"y"});
        const Tensor x = randn(DType::Float32, {4, 6});
        std::vector<std::vector<double>> outs;
        for (const std::string pipeline : {"none", "theano", "cleanup"}) {
            LoadedGraph lg = m.import(pipeline);
            QVERIFY(lg.graph->opCounts().count("OnnxRandomNormal"));
            Executor ex(*lg.graph, ExecOptions{DeviceChoice::Cpu});
            outs.push_back(ex.run({x})[0].toDoubles());
            QCOMPARE(ex.run({x})[0].toDoubles(), outs.back());
        }
        QCOMPARE(outs[1], outs[0]);
        QCOMPARE(outs[2], outs[0]);
        const auto xs = x.toDoubles();
        double off = 0;
        for (std::size_t i = 0; i < xs.size(); ++i) off += std::fabs(outs[0][i] - xs[i]);
        QVERIFY(off > 0); // the draw was added
    }

    // Dropout in training mode on 100,000 elements with a fixed seed: the kept fraction within
    // 0.005 of 1 - ratio, each kept element x / (1 - ratio) (in double, rounded to the dtype), each
    // dropped one 0, the mask true exactly where kept; the default ratio 0.5; the same seed the same
    // mask, another seed or none another one.
    void dropoutTraining() {
        constexpr int n = 100000;
        std::vector<double> xv(n);
        for (int i = 0; i < n; ++i) xv[static_cast<std::size_t>(i)] = 1 + (i % 7) * 0.25 - (i % 3);
        for (const auto& [dt, ratio] : std::vector<std::pair<DType, std::optional<double>>>{
                 {DType::Float32, 0.3}, {DType::Float64, std::nullopt}, {DType::Float32, 0.875}}) {
            const Tensor x = Tensor::fromDoubles(dt, {n}, xv);
            const auto outs = runDropout({{"seed", 7}}, x, ratio, true);
            const double r = ratio ? static_cast<double>(static_cast<float>(*ratio)) : 0.5;
            QCOMPARE(outs[0].dtype(), dt);
            QCOMPARE(outs[1].dtype(), DType::Bool);
            const auto y = outs[0].toDoubles(), mask = outs[1].toDoubles();
            const double kept = std::accumulate(mask.begin(), mask.end(), 0.0) / n;
            QVERIFY2(std::fabs(kept - (1 - r)) < 0.005, qPrintable(QString("ratio %1: kept %2").arg(r).arg(kept)));
            int wrong = 0;
            for (int i = 0; i < n; ++i) {
                const auto u = static_cast<std::size_t>(i);
                const double scaled = xv[u] / (1 - r);
                const double want = mask[u] != 0 ? (dt == DType::Float32 ? double(float(scaled)) : scaled) : 0.0;
                wrong += y[u] != want;
            }
            QCOMPARE(wrong, 0);
            QCOMPARE(runDropout({{"seed", 7}}, x, ratio, true)[1].toDoubles(), mask);
            QVERIFY(runDropout({{"seed", 8}}, x, ratio, true)[1].toDoubles() != mask);
            QVERIFY(runDropout(json::object(), x, ratio, true)[1].toDoubles() != mask);
        }
    }

    // Dropout that draws nothing gives its input exactly (NaN, -0 and infinities included) and an
    // all-true mask: training mode with ratio 0, and inference (training_mode false or absent)
    // whatever the ratio. Bad ratios and a non-float input in training mode are refused, naming
    // the node.
    void dropoutExact() {
        const Tensor x = ints(DType::Float32, {2, 4}, {1.5, -0.0, NAN, INFINITY, -INFINITY, 3, 1e-40, -7});
        for (const auto& [ratio, training] : std::vector<std::pair<std::optional<double>, std::optional<bool>>>{
                 {0.0, true}, {0.0, false}, {0.5, false}, {0.9, std::nullopt}}) {
            const auto outs = runDropout({{"seed", 3}}, x, ratio, training);
            QCOMPARE(outs[0].shape(), x.shape());
            QVERIFY(std::memcmp(outs[0].rawData(), x.rawData(), x.nbytes()) == 0);
            QCOMPARE(outs[1].toDoubles(), std::vector<double>(8, 1.0));
        }
        const std::vector<std::tuple<Tensor, double, std::string>> bad = {
            {x, 1.0, "ratio 1.000000 is outside [0, 1)"},
            {x, -0.25, "ratio -0.250000 is outside [0, 1)"},
            {x, NAN, "is outside [0, 1)"},
            {ints(DType::Int32, {3}, {1, 2, 3}), 0.5, "needs a float input in training mode, got int32[3]"},
        };
        for (const auto& [in, ratio, want] : bad) {
            const QString e = errorOf([&] { (void)runDropout(json::object(), in, ratio, true); });
            QVERIFY2(e.contains("OnnxDropout") && e.contains("node #") && e.contains(QString::fromStdString(want)),
                     qPrintable(e));
        }
    }

    // Two RandomNormal nodes with equal attributes feeding an Add (y = r0 + r1, r0 an output too):
    // without a seed they are two draws, so no pipeline merges them (y is not 2 * r0); with one
    // seed they are the same values, and the theano and cleanup pipelines merge them.
    void unseededDrawsDoNotMerge() {
        for (const bool seeded : {false, true}) {
            OnnxModel m("two_draws");
            m.output("r0");
            m.output("y");
            m.randomNormal("r0", seeded ? std::optional<float>(2.0f) : std::nullopt);
            m.randomNormal("r1", seeded ? std::optional<float>(2.0f) : std::nullopt);
            m.node("Add", "add", {"r0", "r1"}, {"y"});
            for (const std::string pipeline : {"none", "theano", "cleanup"}) {
                const QString where = QString("%1, %2").arg(seeded ? "seeded" : "unseeded").arg(pipeline.c_str());
                LoadedGraph lg = m.import(pipeline);
                const auto counts = lg.graph->opCounts();
                const int draws = counts.count("OnnxRandomNormal") ? counts.at("OnnxRandomNormal") : 0;
                QVERIFY2(draws == (seeded && pipeline != "none" ? 1 : 2),
                         qPrintable(where + ": " + QString::number(draws) + " RandomNormal nodes"));
                const auto outs = Executor(*lg.graph, ExecOptions{DeviceChoice::Cpu}).run({});
                const auto r0 = outs[0].toDoubles(), y = outs[1].toDoubles();
                std::size_t doubled = 0;
                for (std::size_t i = 0; i < r0.size(); ++i) doubled += y[i] == 2 * r0[i];
                QVERIFY2(doubled == (seeded ? r0.size() : 0),
                         qPrintable(where + ": " + QString::number(doubled) + " of 24 elements are 2 * r0"));
            }
        }
    }

    // Constant folding never evaluates a random node, seeded or not (a generator has no inputs, so
    // all its inputs are constants); Dropout is random, inference or not.
    void randomNotFolded() {
        Harness h;
        const std::vector<std::pair<std::string, json>> kinds = {
            {"OnnxRandomNormal", {{"shape", {3}}, {"seed", 1.0}}},
            {"OnnxRandomUniform", {{"shape", {3}}}},
            {"OnnxDropout", json::object()},
        };
        Variable* x = h.constant(ints(DType::Float32, {3}, {1, 2, 3}));
        for (const auto& [kind, attrs] : kinds) {
            const Op& op = Op::get(kind, attrs);
            QVERIFY(op.isRandom());
            QCOMPARE(op.isUnseededRandom(), !attrs.contains("seed"));
            std::vector<Variable*> ins;
            if (kind == "OnnxDropout") ins.push_back(x);
            Apply* a = h.g.makeApply(op, ins, std::vector<Type>{Type::parse("float32[3]")});
            std::string why;
            QVERIFY(!evaluateConstantNode(*a, &why));
            QCOMPARE(why, std::string("the op draws random values"));
        }
        QVERIFY(!Op::get("OnnxIdentity").isRandom());
    }

    // Bad attributes and inputs: refused, naming the node and the reason.
    void errors() {
        const Tensor x = randn(DType::Float32, {2, 3}, 0, 1);
        const std::vector<std::tuple<std::string, json, std::vector<Tensor>, std::string>> cases = {
            {"RandomUniform", {{"shape", {3}}, {"low", 2.0}, {"high", 1.0}}, {}, "needs finite low <= high, got low 2"},
            {"RandomUniformLike", {{"low", 0.0}, {"high", INFINITY}}, {x}, "needs finite low <= high"},
            {"RandomNormal", {{"shape", {3}}, {"scale", -1.0}}, {}, "a finite scale >= 0, got mean 0.000000, scale -1"},
            {"RandomNormal", json::object(), {}, "needs the shape attribute"},
            {"RandomNormal", {{"shape", {2, -1}}}, {}, "shape [2,-1] has a negative dim"},
            {"RandomNormal", {{"shape", {2}}, {"dtype", 6}}, {}, "cannot produce int32 values"},
            {"RandomUniform", {{"shape", {2}}, {"dtype", 1000}}, {}, "unsupported dtype 1000"},
            {"Bernoulli",
             json::object(),
             {ints(DType::Float32, {3}, {0.5, 1.5, 0})},
             "probability 1.500000 at element 1 is outside [0, 1]"},
            {"Bernoulli",
             json::object(),
             {ints(DType::Int32, {3}, {0, 1, 0})},
             "needs float16, float32 or float64 probabilities"},
            {"Bernoulli", {{"dtype", 8}}, {x}, "cannot produce string values"},
            {"Multinomial",
             json::object(),
             {ints(DType::Float32, {3}, {0, 1, 2})},
             "needs a [batch, classes] input, got float32[3]"},
            {"Multinomial", {{"dtype", 1}}, {x}, "cannot produce float32 values"},
            {"Multinomial", {{"sample_size", -2}}, {x}, "sample_size must not be negative, got -2"},
            {"Multinomial",
             json::object(),
             {ints(DType::Float32, {1, 2}, {-INFINITY, -INFINITY})},
             "row 0 has no finite largest log-probability"},
            {"Multinomial",
             json::object(),
             {ints(DType::Float32, {1, 2}, {NAN, 0})},
             "row 0 has a NaN log-probability"},
        };
        for (const auto& [kind, attrs, ins, want] : cases) {
            const QString e = errorOf([&] { (void)runOp(kind, attrs, ins); });
            QVERIFY2(e.contains(QString::fromStdString("Onnx" + kind)) && e.contains("node #") &&
                         e.contains(QString::fromStdString(want)),
                     qPrintable(QString::fromStdString(kind + ": ") + e));
        }
    }
};

QTEST_GUILESS_MAIN(TestExecRandom)
#include "tst_exec_random.moc"
