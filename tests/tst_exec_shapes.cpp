// CPU kernels of passlens_kernels against simple references on fresh random inputs with poisoned
// (NaN-filled) output buffers, including 0-size and 0-d shapes: shape ops, indexing (Subtensor,
// IncSubtensor, Join, Split) and the reductions along axes (CAReduce, cumulative ops, softmax).
#include "ExecTestSupport.h"

#include <cmath>

using namespace passlens;
using namespace exectest;

class TestExecShapes : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { (void)rng(); }

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
};

QTEST_GUILESS_MAIN(TestExecShapes)
#include "tst_exec_shapes.moc"
