// tst_theano_port: the remaining lifters, from gpuarray/tests/test_nnet.py, test_extra_ops.py,
// test_pool.py and test_blas.py (see tst_theano_port.h).
#include "tst_theano_port.h"

#include <algorithm>

// ------------------------------------------------------------ gpuarray/tests/test_nnet.py,
// test_extra_ops.py, test_pool.py, test_blas.py: the remaining lifters

// softmax_unittest_template (test_softmax_float32 / _float64): softmax of a matrix is a
// Softmax last without the GPU and a GpuSoftmax before the final HostFromGpu with it
// (mode_wo_cudnn: PassLens has no cuDNN); equal values on a few shapes.
// test_SoftMax.test_softmax / test_softmax_shape_0: exactly one GpuSoftmax, values on
// np.arange data, including a (0, 10) input.
void TestTheanoPort::test_softmax_data() {
    QTest::addColumn<QString>("dtype");
    QTest::newRow("float32") << "float32";
    QTest::newRow("float64") << "float64";
}

void TestTheanoPort::test_softmax() {
    QFETCH(QString, dtype);
    const std::string body = R"("inputs": [{"name": "x", "type": )" + json(dtype.toStdString() + "[?,?]").dump() +
                             R"(}], "nodes": [{"op": "Softmax", "inputs": ["x"], "outputs": ["z"]}], "outputs": ["z"])";
    Compiled f = compileCpu(body);
    Compiled g = compile(body);
    QCOMPARE(QString::fromStdString(f.topo().back()->op().kind()), QString("Softmax"));
    const auto gt = g.topo();
    QCOMPARE(QString::fromStdString(gt[gt.size() - 2]->op().kind()), QString("GpuSoftmax"));
    QCOMPARE(QString::fromStdString(gt.back()->op().kind()), QString("HostFromGpu"));
    QCOMPARE(count(g, "GpuSoftmax"), 1);
    const DType dt = *parseDType(dtype.toStdString());
    for (auto [n, m] : {std::pair<std::int64_t, std::int64_t>{2, 5}, {10, 5}, {4, 1000}, {1, 5}}) {
        const passlens::Tensor data = values(dt, {n, m}, static_cast<std::uint32_t>(n + m));
        const auto want = asVector(eval(f, {data})[0]);
        QVERIFY(allClose(asVector(eval(g, {data})[0]), want));
        double row0 = 0; // each row sums to 1
        for (std::int64_t j = 0; j < m; ++j) row0 += want[static_cast<std::size_t>(j)];
        QVERIFY(std::abs(row0 - 1) < 1e-5);
        std::vector<double> ar(static_cast<std::size_t>(n * m));
        for (std::size_t i = 0; i < ar.size(); ++i) ar[i] = double(i);
        const auto arange = passlens::Tensor::fromDoubles(dt, {n, m}, ar);
        QVERIFY(allClose(asVector(eval(g, {arange})[0]), asVector(eval(f, {arange})[0])));
    }
    const auto empty = eval(g, {passlens::Tensor::fromDoubles(dt, {0, 10}, {})})[0];
    QCOMPARE(empty.shape(), (passlens::Shape{0, 10}));
}

// TestGpuCumOp.test_GpuCumOp1D / test_GpuCumOp2D, modes add and mul: CumOp of a float32
// vector (axis 0) and of a matrix (axis 0, 1, None, -1, -2) has a GpuCumOp; values
// against np.cumsum / np.cumprod (flattened for axis None).
void TestTheanoPort::test_gpu_cumop_data() {
    QTest::addColumn<QString>("mode");
    QTest::newRow("add") << "add";
    QTest::newRow("mul") << "mul";
}

void TestTheanoPort::test_gpu_cumop() {
    QFETCH(QString, mode);
    const bool add = mode == "add";
    auto cum = [&](const std::vector<double>& v, std::int64_t rows, std::int64_t cols, const json& axis) {
        std::vector<double> out(v.size());
        const int ax = axis.is_null() ? -1 : (axis.get<int>() + 2) % 2;
        if (ax < 0) { // flattened
            double acc = add ? 0 : 1;
            for (std::size_t i = 0; i < v.size(); ++i) out[i] = acc = add ? acc + v[i] : acc * v[i];
            return out;
        }
        for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = 0; j < cols; ++j) {
                const std::size_t k = static_cast<std::size_t>(i * cols + j);
                const bool first = ax == 0 ? i == 0 : j == 0;
                const std::size_t prev = static_cast<std::size_t>(ax == 0 ? k - cols : k - 1);
                out[k] = first ? v[k] : (add ? out[prev] + v[k] : out[prev] * v[k]);
            }
        return out;
    };
    auto body = [&](const char* type, const json& axis) {
        const json node = {{"op", "CumOp"},
                           {"attrs", {{"axis", axis}, {"mode", mode.toStdString()}}},
                           {"inputs", {"x"}},
                           {"outputs", {"o"}}};
        return std::string(R"("inputs": [{"name": "x", "type": )") + json(type).dump() + R"(}], "nodes": [)" +
               node.dump() + R"(], "outputs": ["o"])";
    };
    Compiled v = compile(body("float32[?]", 0));
    QVERIFY(count(v, "GpuCumOp") >= 1);
    const passlens::Tensor a = values(DType::Float32, {7}, 5, 0.5, 1);
    QVERIFY(allClose(asVector(eval(v, {a})[0]), cum(asVector(a), 1, 7, 1)));
    for (const json& axis : {json(0), json(1), json(), json(-1), json(-2)}) {
        Compiled m = compile(body("float32[?,?]", axis));
        QVERIFY2(count(m, "GpuCumOp") >= 1, axis.dump().c_str());
        const passlens::Tensor mt = values(DType::Float32, {5, 4}, 6, 0.5, 1);
        QVERIFY2(allClose(asVector(eval(m, {mt})[0]), cum(asVector(mt), 5, 4, axis)), axis.dump().c_str());
    }
}

// gpuarray/tests/test_sort.py Test_GpuTopK (tensor/tests/test_sort.py Test_TopK with
// mode_with_gpu and op_class GpuTopKOp): test_topk_sanity / test_combined_sanity over
// _all_dtypes, axis -1 and 0 (no axis None: it flattens first), and test_combined_1d on
// Theano's sizes and k with unique values (gen_unique_vector), float32 / int32, idx_dtype
// int32 / int64: a GpuTopKOp, and the largest (k > 0) or smallest (k < 0) values and their
// indices. Theano asserts them as sets (sorted=False); PassLens's kernels sort, so they are
// compared in order here. float16 is lifted (GpuTopKOp's _f16_ok) but has no CPU kernel, so
// its values are not run.
void TestTheanoPort::test_gpu_topk() {
    auto body = [](const std::string& type, std::int64_t k, std::int64_t axis, const std::string& idx) {
        const json node = {{"op", "TopKOp"},
                           {"attrs", {{"axis", axis}, {"sorted", false}, {"idx_dtype", idx}}},
                           {"inputs", {"x", k}},
                           {"outputs", {"v", "i"}}};
        return std::string(R"("inputs": [{"name": "x", "type": )") + json(type).dump() + R"(}], "nodes": [)" +
               node.dump() + R"(], "outputs": ["v", "i"])";
    };
    for (const char* dt :
         {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"})
        for (std::int64_t axis : {-1, 0}) {
            const QString what = QString("%1 axis %2").arg(dt).arg(axis);
            Compiled f = compile(body(std::string(dt) + "[?]", 1, axis, "int64"));
            QVERIFY2(count(f, "GpuTopKOp") == 1 && count(f, "TopKOp") == 0, qPrintable(what + ": " + kinds(f)));
            if (std::string(dt) == "float16") continue;
            const auto r = eval(f, {passlens::Tensor::fromDoubles(*parseDType(dt), {1}, {1})});
            QVERIFY2(r[0].dtype() == *parseDType(dt) && asVector(r[0]) == std::vector<double>{1}, qPrintable(what));
            QVERIFY2(r[1].dtype() == DType::Int64 && asVector(r[1]) == std::vector<double>{0}, qPrintable(what));
        }
    for (std::int64_t n : {16, 61, 257})
        for (std::int64_t k : {std::int64_t(1), std::int64_t(-1), std::int64_t(10), n / 2, n - 1, 1 - n})
            for (const char* dt : {"float32", "int32"})
                for (const char* idx : {"int32", "int64"}) {
                    const QString what = QString("n %1 k %2 %3 %4").arg(n).arg(k).arg(dt).arg(idx);
                    Compiled f = compile(body(std::string(dt) + "[?]", k, -1, idx));
                    QVERIFY2(count(f, "GpuTopKOp") == 1, qPrintable(what + ": " + kinds(f)));
                    std::vector<double> x(static_cast<std::size_t>(n)); // unique: a permutation of 0..n-1, shifted
                    for (std::int64_t i = 0; i < n; ++i)
                        x[static_cast<std::size_t>(i)] = double((i * 7) % n) - 2.0 * double(n);
                    const auto r = eval(f, {passlens::Tensor::fromDoubles(*parseDType(dt), {n}, x)});
                    std::vector<double> order(x.size());
                    for (std::size_t i = 0; i < x.size(); ++i) order[i] = double(i);
                    std::sort(order.begin(), order.end(), [&](double a, double b) {
                        return k > 0 ? x[std::size_t(a)] > x[std::size_t(b)] : x[std::size_t(a)] < x[std::size_t(b)];
                    });
                    order.resize(static_cast<std::size_t>(std::abs(k)));
                    std::vector<double> vals;
                    for (double i : order) vals.push_back(x[static_cast<std::size_t>(i)]);
                    QVERIFY2(r[1].dtype() == *parseDType(idx) && asVector(r[1]) == order, qPrintable(what));
                    QVERIFY2(asVector(r[0]) == vals, qPrintable(what));
                }
}

// test_pool2d (a subset of its shapes, all its modes PassLens models: max,
// average_inc_pad, average_exc_pad; PassLens has no `sum` mode): Pool in mode_with_gpu
// excluding cudnn has a GpuPool, in mode_without_gpu a Pool; equal values. Theano's
// shared variable is a graph input here. The gradient half (MaxPoolGrad) is not modelled.
void TestTheanoPort::test_pool2d() {
    for (const std::vector<std::int64_t>& shp :
         {std::vector<std::int64_t>{1, 1, 10, 11}, {3, 5, 4, 4}, {1, 1, 2, 2}, {2, 3, 7, 7}})
        for (const char* mode : {"max", "average_inc_pad", "average_exc_pad"})
            for (const json& ws : {json{2, 2}, json{3, 2}, json{1, 1}})
                for (const json& st : {json{2, 2}, json{3, 2}, json{1, 1}})
                    for (bool ignoreBorder : {true, false}) {
                        const json pad = ignoreBorder ? json{1, 1} : json{0, 0};
                        if (ws[0].get<std::int64_t>() > shp[2] || ws[1].get<std::int64_t>() > shp[3]) continue;
                        if (pad[0] >= ws[0] || pad[1] >= ws[1]) continue;
                        if (std::string(mode) == "average_exc_pad" && pad[0].get<int>() > 0) continue;
                        const json node = {{"op", "Pool"},
                                           {"attrs",
                                            {{"mode", mode},
                                             {"ws", ws},
                                             {"stride", st},
                                             {"pad", pad},
                                             {"ignore_border", ignoreBorder}}},
                                           {"inputs", {"a"}},
                                           {"outputs", {"o"}}};
                        const std::string body =
                            R"("inputs": [{"name": "a", "type": "float32[?,?,?,?]"}], "nodes": [)" + node.dump() +
                            R"(], "outputs": ["o"])";
                        const std::string where = node.dump() + " " + std::to_string(shp[2]);
                        Compiled f = compile(body, "theano", {"cudnn"});
                        Compiled f2 = compileCpu(body);
                        QVERIFY2(count(f, "GpuPool") == 1, where.c_str());
                        QVERIFY2(count(f2, "Pool") == 1, where.c_str());
                        const passlens::Tensor data = values(DType::Float32, shp, 9);
                        QVERIFY2(allClose(asVector(eval(f, {data})[0]), asVector(eval(f2, {data})[0])), where.c_str());
                    }
}

// TestCorrMMConv2d.test_all, tcase's forward half (run_fwd): conv2d of BaseTestConv2d's input /
// filter shapes for every subsample and border mode, with and without the shapes given,
// in mode_with_gpu excluding cudnn, has a GpuCorrMM and the values of a direct
// cross-correlation (conv2d_corr). Differences: PassLens's AbstractConv2d is ONNX's
// cross-correlation, so only filter_flip=False is ported; the empty shapes, dilations and
// the gradient halves (GpuCorrMM_gradWeights / _gradInputs, not modelled) are left out.
void TestTheanoPort::test_corrmm_conv2d_fwd() {
    using Shp = std::vector<std::int64_t>;
    const std::vector<std::pair<Shp, Shp>> shapes = {{{8, 1, 6, 6}, {5, 1, 2, 2}}, {{8, 1, 8, 8}, {4, 1, 3, 3}},
                                                     {{2, 1, 7, 7}, {2, 1, 3, 3}}, {{6, 1, 10, 11}, {1, 1, 2, 3}},
                                                     {{2, 1, 6, 5}, {4, 1, 1, 3}}, {{1, 5, 9, 9}, {4, 5, 3, 2}},
                                                     {{1, 1, 6, 6}, {1, 1, 2, 2}}};
    const std::vector<json> borders = {"valid", "half", "full", {0, 0}, {1, 1}, {5, 5}, {5, 2}};
    int compiled = 0;
    for (const auto& [i, f] : shapes)
        for (const json& s : {json{1, 1}, json{2, 2}, json{2, 4}})
            for (const json& b : borders)
                for (bool provideShape : {true, false}) {
                    auto type = [&](const Shp& d) {
                        std::string t = "float32[";
                        for (std::size_t k = 0; k < d.size(); ++k)
                            t += (k ? "," : "") + (provideShape ? std::to_string(d[k]) : std::string("?"));
                        return t + "]";
                    };
                    const json ins = {{{"name", "x"}, {"type", type(i)}}, {{"name", "w"}, {"type", type(f)}}};
                    const json node = {{"op", "AbstractConv2d"},
                                       {"attrs", {{"border_mode", b}, {"subsample", s}}},
                                       {"inputs", {"x", "w"}},
                                       {"outputs", {"o"}}};
                    const std::string where = node.dump() + " " + type(i) + " " + type(f);
                    Compiled c = compile("\"inputs\": " + ins.dump() + ", \"nodes\": [" + node.dump() +
                                             "], \"outputs\": [\"o\"]",
                                         "theano", {"cudnn"});
                    QVERIFY2(count(c, "GpuCorrMM") == 1, where.c_str());
                    ++compiled;
                    // conv2d_corr: pads, stride, cross-correlation
                    std::int64_t pad[2];
                    for (int a = 0; a < 2; ++a) {
                        const std::int64_t k = f[static_cast<std::size_t>(2 + a)];
                        pad[a] = b.is_string() ? (b == "valid"  ? 0
                                                  : b == "full" ? k - 1
                                                                : k / 2)
                                               : b[static_cast<std::size_t>(a)].get<std::int64_t>();
                    }
                    const std::int64_t s0 = s[0], s1 = s[1];
                    const std::int64_t oh = (i[2] + 2 * pad[0] - f[2]) / s0 + 1,
                                       ow = (i[3] + 2 * pad[1] - f[3]) / s1 + 1;
                    const passlens::Tensor xv = values(DType::Float32, i, 11), wv = values(DType::Float32, f, 12);
                    std::vector<double> want;
                    for (std::int64_t n = 0; n < i[0]; ++n)
                        for (std::int64_t m = 0; m < f[0]; ++m)
                            for (std::int64_t y = 0; y < oh; ++y)
                                for (std::int64_t z = 0; z < ow; ++z) {
                                    double acc = 0;
                                    for (std::int64_t ch = 0; ch < i[1]; ++ch)
                                        for (std::int64_t ky = 0; ky < f[2]; ++ky)
                                            for (std::int64_t kx = 0; kx < f[3]; ++kx) {
                                                const std::int64_t yy = y * s0 + ky - pad[0], xx = z * s1 + kx - pad[1];
                                                if (yy < 0 || yy >= i[2] || xx < 0 || xx >= i[3]) continue;
                                                acc += xv.at(((n * i[1] + ch) * i[2] + yy) * i[3] + xx) *
                                                       wv.at(((m * f[1] + ch) * f[2] + ky) * f[3] + kx);
                                            }
                                    want.push_back(acc);
                                }
                    const auto out = eval(c, {xv, wv})[0];
                    QVERIFY2(out.shape() == (passlens::Shape{i[0], f[0], oh, ow}), where.c_str());
                    QVERIFY2(allClose(asVector(out), want), where.c_str());
                }
    QCOMPARE(compiled, 7 * 3 * 7 * 2);
}

// test_incsub_f16, the inc_subtensor half: inc_subtensor(x[1:], y) of a GPU shared x has
// one GpuIncSubtensor; values. Differences: float32 instead of float16; the shared
// variable is a GPU graph input; the advanced_inc_subtensor1 half needs
// AdvancedIncSubtensor1, which PassLens does not model.
void TestTheanoPort::test_incsub() {
    Compiled f =
        compile(R"("inputs": [{"name": "x", "type": "float32[3,3]@gpu"}, {"name": "y", "type": "float32[?,?]"}],
            "nodes": [{"op": "IncSubtensor", "attrs": {"idx": [{"start": 1}]}, "inputs": ["x", "y"], "outputs": ["o"]}], "outputs": ["o"])");
    QCOMPARE(count(f, "GpuIncSubtensor"), 1);
    std::vector<double> xv(9);
    for (int k = 0; k < 9; ++k) xv[static_cast<std::size_t>(k)] = k + 1;
    const auto out = eval(f, {passlens::Tensor::fromDoubles(DType::Float32, {3, 3}, xv),
                              passlens::Tensor::fromDoubles(DType::Float32, {2, 3}, std::vector<double>(6, 2.0))});
    QCOMPARE(asVector(out[0]), (std::vector<double>{1, 2, 3, 6, 7, 8, 9, 10, 11}));
}

// The lifters no Theano test above reaches, one graph each (gpuarray/opt.py's
// register_opt2 table; Theano tests these ops' GPU kernels, not their lifting, or reaches
// them through BlasOpt): in mode_with_gpu the host op becomes its GPU kind, with the values
// of mode_without_gpu. Dot of two matrices lifts to GpuDot22 directly (Theano: BlasOpt's
// Dot22, then local_gpua_dot22). LogSoftmax and BatchNormInference stand for Theano's
// cuDNN lifters (dnn.py), which PassLens runs although it has no cuDNN (OPS.md).
void TestTheanoPort::test_lifter_table_data() {
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("gpuKind");
    QTest::addColumn<QString>("shapes"); // the inputs' shapes, JSON
    const QString m = R"({"name": "x", "type": "float32[?,?]"})";
    QTest::newRow("DimShuffle") << QString(
                                       R"("inputs": [%1], "nodes": [{"op": "DimShuffle", "attrs": {"order": [1, 0]},
            "inputs": ["x"], "outputs": ["o"]}], "outputs": ["o"])")
                                       .arg(m)
                                << "GpuDimShuffle"
                                << "[[3, 4]]";
    QTest::newRow("Reshape") << QString(R"("inputs": [%1], "nodes": [{"op": "Reshape", "attrs": {"ndim": 1},
            "inputs": ["x", [12]], "outputs": ["o"]}], "outputs": ["o"])")
                                    .arg(m)
                             << "GpuReshape"
                             << "[[3, 4]]";
    QTest::newRow("AdvancedSubtensor1") << QString(R"("inputs": [%1], "nodes": [{"op": "AdvancedSubtensor1",
            "inputs": ["x", [0, 2, 2]], "outputs": ["o"]}], "outputs": ["o"])")
                                               .arg(m)
                                        << "GpuAdvancedSubtensor1"
                                        << "[[3, 4]]";
    QTest::newRow("Dot") << QString(
                                R"("inputs": [%1, {"name": "y", "type": "float32[?,?]"}], "nodes": [{"op": "Dot",
            "inputs": ["x", "y"], "outputs": ["o"]}], "outputs": ["o"])")
                                .arg(m)
                         << "GpuDot22"
                         << "[[3, 4], [4, 5]]";
    QTest::newRow("Dot22") << QString(
                                  R"("inputs": [%1, {"name": "y", "type": "float32[?,?]"}], "nodes": [{"op": "Dot22",
            "inputs": ["x", "y"], "outputs": ["o"]}], "outputs": ["o"])")
                                  .arg(m)
                           << "GpuDot22"
                           << "[[3, 4], [4, 5]]";
    QTest::newRow("Gemv")
        << QString(R"("inputs": [{"name": "z", "type": "float32[?]"}, %1, {"name": "v", "type": "float32[?]"}],
            "nodes": [{"op": "Gemv", "inputs": ["z", 1.5, "x", "v", 0.5], "outputs": ["o"]}], "outputs": ["o"])")
               .arg(m)
        << "GpuGemv"
        << "[[3], [3, 4], [4]]";
    QTest::newRow("LogSoftmax") << QString(R"("inputs": [%1], "nodes": [{"op": "LogSoftmax",
            "inputs": ["x"], "outputs": ["o"]}], "outputs": ["o"])")
                                       .arg(m)
                                << "GpuLogSoftmax"
                                << "[[3, 4]]";
    QTest::newRow("Shape_i")
        << QString(R"("inputs": [{"name": "x", "type": "float32[?,?]@gpu"}], "nodes": [{"op": "Shape_i",
            "attrs": {"i": 1}, "inputs": ["x"], "outputs": ["o"]}], "outputs": ["o"])")
        << "Shape_i"
        << "[[3, 4]]";
    QTest::newRow("BatchNormInference")
        << QString(R"("inputs": [{"name": "x", "type": "float32[?,3,?,?]"}, {"name": "s", "type": "float32[3]"},
            {"name": "b", "type": "float32[3]"}, {"name": "mu", "type": "float32[3]"}, {"name": "var", "type": "float32[3]"}],
            "nodes": [{"op": "BatchNormInference", "inputs": ["x", "s", "b", "mu", "var"], "outputs": ["o"]}], "outputs": ["o"])")
        << "GpuDnnBatchNormInference"
        << "[[2, 3, 4, 5], [3], [3], [3], [3]]";
}

void TestTheanoPort::test_lifter_table() {
    QFETCH(QString, body);
    QFETCH(QString, gpuKind);
    QFETCH(QString, shapes);
    Compiled gpu = compile(body.toStdString());
    Compiled cpu = compileCpu(body.toStdString());
    QCOMPARE(count(gpu, qPrintable(gpuKind)), 1);
    if (gpuKind == "Shape_i") // the HostFromGpu make_node put before it is gone
        QVERIFY(nodesOf(gpu, "Shape_i")[0]->input(0)->type().isGpu());
    for (const Apply* n : gpu.g->toposort()) // nothing left on the host but transfers and Shape_i
        QVERIFY2(n->op().isTransfer() || n->op().kind().rfind("Gpu", 0) == 0 || n->op().kind() == "Shape_i",
                 n->op().str().c_str());
    std::vector<passlens::Tensor> args;
    std::uint32_t seed = 20;
    for (const json& s : json::parse(shapes.toStdString())) // positive variances
        args.push_back(values(DType::Float32, s.get<std::vector<std::int64_t>>(), ++seed, 0.5, 1));
    QVERIFY(allClose(asVector(eval(gpu, args)[0]), asVector(eval(cpu, args)[0])));
}

// test_gemv_zeros: W.dot(v) of a (1000, 0) matrix and a (0,) vector gives 1000 zeros.
// Difference: Theano reaches GpuGemv through BlasOpt (Dot -> Dot22 / Gemv at 1.7, before
// the GPU phases); PassLens does not run BlasOpt and has no lifter for a Dot of a vector,
// so the Dot stays on the host. The values are Theano's.
void TestTheanoPort::test_gemv_zeros() {
    Compiled f = compile(R"("inputs": [{"name": "W", "type": "float32[?,?]"}, {"name": "v", "type": "float32[?]"}],
            "nodes": [{"op": "Dot", "inputs": ["W", "v"], "outputs": ["o"]}], "outputs": ["o"])");
    QCOMPARE(kinds(f), QString("Dot"));
    const auto out = eval(f, {passlens::Tensor::fromDoubles(DType::Float32, {1000, 0}, {}),
                              passlens::Tensor::fromDoubles(DType::Float32, {0}, {})})[0];
    QCOMPARE(out.shape(), (passlens::Shape{1000}));
    QCOMPARE(asVector(out), std::vector<double>(1000, 0.0));
}
