// CPU kernels of passlens_kernels against simple references on fresh random inputs with poisoned
// (NaN-filled) output buffers, including 0-size, 0-d and broadcasting shapes: tensors and their
// TensorProto I/O, Elemwise, BLAS (shape ops, indexing and reductions: tst_exec_shapes).
#include "ExecTestSupport.h"

#include <passlens/io/Limits.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unistd.h>

using namespace passlens;
using namespace exectest;

namespace {

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

} // namespace

class TestExecKernels : public QObject {
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

    // Inputs the TensorProto fuzz target (fuzz/fuzz_tensorproto.cpp) found, kept in
    // tests/fixtures/fuzz/tensorproto: byte 0 picks the type there, the rest is the .pb file.
    void tensorProtoFuzzFindings() {
        const std::filesystem::path fixtures =
            std::filesystem::path(PASSLENS_SOURCE_DIR) / "tests/fixtures/fuzz/tensorproto";
        const auto dir =
            std::filesystem::temp_directory_path() / ("passlens_tst_exec_fz_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        auto read = [&](const std::string& fixture) {
            std::ifstream in(fixtures / fixture, std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            std::ofstream(dir / "input_0.pb", std::ios::binary) << bytes.substr(1);
            return readTensorProto(dir / "input_0.pb");
        };
        // a 0 dim after dims whose product passes 2^63: 0 elements, not an overflow (UB) or a refusal
        const Tensor u = read("zero-size-uint8-dims-overflow.pb");
        QCOMPARE(u.dtype(), DType::UInt8);
        QCOMPARE(u.shape(), (Shape{1842372718935146496, 8, 0}));
        QCOMPARE(u.numel(), std::int64_t(0));
        const Tensor f = read("zero-size-float-dims-overflow.pb");
        QCOMPARE(f.shape(), (Shape{1842372718935146496, 16, 0}));
        QCOMPARE(f.numel(), std::int64_t(0));
        QCOMPARE(elementCount({std::int64_t(1) << 62, 4, 0}), std::int64_t(0));
        QCOMPARE(elementCount({std::int64_t(1) << 62, 4}), std::numeric_limits<std::int64_t>::max());
        QCOMPARE(tensorBytes(DType::Float32, {std::int64_t(1) << 62, 16, 0}), std::uint64_t(0));
        std::filesystem::remove_all(dir);
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

    // and / or / xor / not on bool with broadcasting: bool results (ONNX And, Or, Xor, Not)
    void elemwiseLogical() {
        Harness h;
        Tensor a = ints(DType::Bool, {2, 1}, {0, 1}), b = ints(DType::Bool, {1, 2}, {0, 1});
        Variable *va = h.input(a), *vb = h.input(b);
        const auto outs = h.run({elem(h.g, "and", {va, vb}), elem(h.g, "or", {va, vb}), elem(h.g, "xor", {va, vb}),
                                 elem(h.g, "not", {va})});
        for (const Tensor& t : outs) QCOMPARE(t.dtype(), DType::Bool);
        QCOMPARE(outs[2].shape(), (Shape{2, 2}));
        VERIFY_CLOSE(outs[0], (std::vector<double>{0, 0, 0, 1}), 0, 0);
        VERIFY_CLOSE(outs[1], (std::vector<double>{0, 1, 1, 1}), 0, 0);
        VERIFY_CLOSE(outs[2], (std::vector<double>{0, 1, 1, 0}), 0, 0);
        VERIFY_CLOSE(outs[3], (std::vector<double>{1, 0}), 0, 0);
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
};

QTEST_GUILESS_MAIN(TestExecKernels)
#include "tst_exec_kernels.moc"
