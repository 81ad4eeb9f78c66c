// tst_theano_port: cases of gpuarray/opt.py's own code and of gpuarray/tests/test_basic_ops.py
// (see tst_theano_port.h).
#include "tst_theano_port.h"

// ------------------------------------------------------------ gpuarray/opt.py's own code

// local_cut_gpu_transfers, every row of its table. Theano 1.0 has no test of its own for
// it (test_transfer_gpu_gpu only excludes it), so each row is the graph the row's comment
// names, compiled with mode_with_gpu excluding canonicalize's copy (local_cut_gpua_host_gpua)
// so that gpu_cut_copies' cut_gpua_host_transfers does the cut; then canonicalize's copy
// alone on the source graph (without the GPU phases, whose transfers come after
// canonicalize); then mode_with_gpu with both excluded, where the transfers stay. There
// GraphToGPU has rebuilt the graph as Theano's does: a host input x is mapped to
// GpuFromHost<None>(x) and a transfer of x is cloned onto HostFromGpu of that.
void TestTheanoPort::test_local_cut_gpu_transfers_data() {
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("after");  // op().str() of the final nodes, "" when none is left
    QTest::addColumn<QString>("out");    // the output: "input NAME" or its type
    QTest::addColumn<QString>("before"); // the final nodes with both cutters excluded
    const QString g1 = R"({"name": "g", "type": "float32[?,?]@gpu:dev1"})";
    const QString x = R"({"name": "x", "type": "float32[?,?]"})";
    auto graph = [](const QString& in, const QString& nodes, const QString& out = "o") {
        return QString(R"("inputs": [%1], "nodes": [%2], "outputs": ["%3"])").arg(in, nodes, out);
    };
    auto node = [](const char* op, const QString& ctx, const char* in, const char* out) {
        const QString a = ctx.isNull() ? QString() : QString(R"("attrs": {"context": "%1"}, )").arg(ctx);
        return QString(R"({"op": "%1", %2"inputs": ["%3"], "outputs": ["%4"]})").arg(op, a, in, out);
    };
    // gpu[ab] -> host -> gpub: the same context gives the GPU value back ...
    QTest::newRow("GpuFromHost(HostFromGpu) same context")
        << graph(g1, node("HostFromGpu", {}, "g", "h") + "," + node("GpuFromHost", "dev1", "h", "o")) << ""
        << "input g"
        << "HostFromGpu(gpuarray) GpuFromHost<dev1>";
    // ... another context a GpuToGpu
    QTest::newRow("GpuFromHost(HostFromGpu) other context")
        << graph(g1, node("HostFromGpu", {}, "g", "h") + "," + node("GpuFromHost", "dev2", "h", "o"))
        << "GpuToGpu<dev2>"
        << "float32[?,?]@gpu:dev2"
        << "HostFromGpu(gpuarray) GpuFromHost<dev2>";
    // host -> gpua -> host
    QTest::newRow("HostFromGpu(GpuFromHost)")
        << graph(x, node("GpuFromHost", "dev1", "x", "d") + "," + node("HostFromGpu", {}, "d", "o")) << ""
        << "input x"
        << "GpuFromHost<None> HostFromGpu(gpuarray)";
    // gpub -> gpua -> host: the GPU value on b goes to the host directly
    QTest::newRow("HostFromGpu(GpuToGpu)")
        << graph(g1, node("GpuToGpu", "dev2", "g", "d") + "," + node("HostFromGpu", {}, "d", "o"))
        << "HostFromGpu(gpuarray)"
        << "float32[?,?]"
        << "GpuToGpu<dev2> HostFromGpu(gpuarray)";
    // a transfer within the same context
    QTest::newRow("GpuToGpu same context") << graph(g1, node("GpuToGpu", "dev1", "g", "o")) << ""
                                           << "input g"
                                           << "GpuToGpu<dev1>";
    // host -> gpua -> gpub: as_gpuarray_variable of the host value on b
    QTest::newRow("GpuToGpu(GpuFromHost)")
        << graph(x, node("GpuFromHost", "dev1", "x", "d") + "," + node("GpuToGpu", "dev2", "d", "o"))
        << "GpuFromHost<dev2>"
        << "float32[?,?]@gpu:dev2"
        << "GpuFromHost<None> HostFromGpu(gpuarray) GpuFromHost<dev1> GpuToGpu<dev2>";
    // ... which digs through a HostFromGpu to the GPU value on b
    QTest::newRow("GpuToGpu(GpuFromHost(HostFromGpu))")
        << graph(R"({"name": "g", "type": "float32[?,?]@gpu:dev2"})", node("HostFromGpu", {}, "g", "h") + "," +
                                                                          node("GpuFromHost", "dev1", "h", "d") + "," +
                                                                          node("GpuToGpu", "dev2", "d", "o"))
        << ""
        << "input g"
        << "HostFromGpu(gpuarray) GpuFromHost<dev1> GpuToGpu<dev2>";
    // gpuc -> gpua -> gpub: back to c == b ...
    QTest::newRow("GpuToGpu(GpuToGpu) back")
        << graph(g1, node("GpuToGpu", "dev2", "g", "d") + "," + node("GpuToGpu", "dev1", "d", "o")) << ""
        << "input g"
        << "GpuToGpu<dev2> GpuToGpu<dev1>";
    // ... or one GpuToGpu from c to b
    QTest::newRow("GpuToGpu(GpuToGpu) on")
        << graph(g1, node("GpuToGpu", "dev2", "g", "d") + "," + node("GpuToGpu", "dev3", "d", "o")) << "GpuToGpu<dev3>"
        << "float32[?,?]@gpu:dev3"
        << "GpuToGpu<dev2> GpuToGpu<dev3>";
    // no row: a transfer of a graph input stays
    QTest::newRow("HostFromGpu(input)") << graph(g1, node("HostFromGpu", {}, "g", "o")) << "HostFromGpu(gpuarray)"
                                        << "float32[?,?]"
                                        << "HostFromGpu(gpuarray)";
    QTest::newRow("GpuToGpu(input)") << graph(g1, node("GpuToGpu", "dev2", "g", "o")) << "GpuToGpu<dev2>"
                                     << "float32[?,?]@gpu:dev2"
                                     << "GpuToGpu<dev2>";
}

void TestTheanoPort::test_local_cut_gpu_transfers() {
    QFETCH(QString, body);
    QFETCH(QString, after);
    QFETCH(QString, out);
    QFETCH(QString, before);
    auto strs = [](const Compiled& c) {
        QStringList k;
        for (const Apply* n : c.g->toposort()) k << QString::fromStdString(n->op().str());
        return k.join(' ');
    };
    auto outIs = [&](const Compiled& c) {
        const Variable* o = c.g->outputs()[0];
        if (out.startsWith("input ")) return !o->owner() && QString::fromStdString(o->name()) == out.mid(6);
        return QString::fromStdString(o->type().str()) == out;
    };
    const bool cuts = after != before;
    const std::string b = body.toStdString();
    for (const char* which : {"local_cut_gpu_transfers", "local_cut_gpua_host_gpua"}) {
        Compiled c =
            std::string(which) == "local_cut_gpu_transfers"
                ? compile(b, "theano", {"local_cut_gpua_host_gpua"})
                : compile(b, "theano", // canonicalize's copy on the source graph alone
                          {"local_cut_gpu_transfers", "gpuarray_graph_optimization", "InputToGpuArrayOptimizer",
                           "gpuarray_local_optimizations", "gpuarray_cut_transfers"});
        QVERIFY2(strs(c) == after, qPrintable(QString(which) + ": " + strs(c)));
        QVERIFY2(outIs(c), c.g->outputs()[0]->type().str().c_str());
        const auto st = c.run.rewriters.find(which);
        QCOMPARE(st != c.run.rewriters.end() && st->second.applied > 0, cuts);
    }
    Compiled none = compile(b, "theano", {"local_cut_gpu_transfers", "local_cut_gpua_host_gpua"});
    QCOMPARE(strs(none), before);
}

// cut_gpua_constant_transfers (constant_folding in gpu_cut_copies): GpuFromHost of a
// constant becomes a GPU constant. The earlier constant foldings are excluded so that
// this one does it.
void TestTheanoPort::test_cut_gpua_constant_transfers() {
    const std::string body =
        R"("constants": [{"name": "c", "type": "float32[2]", "value": [1.5, 2.5]}],
            "nodes": [{"op": "GpuFromHost", "attrs": {"context": "dev1"}, "inputs": ["c"], "outputs": ["o"]}], "outputs": ["o"])";
    Compiled c = compile(body, "theano", {"topo_constant_folding", "gpua_constant_folding"});
    QCOMPARE(int(c.g->nodeCount()), 0);
    QVERIFY(c.g->outputs()[0]->isConstant());
    QCOMPARE(c.g->outputs()[0]->type().str(), std::string("float32[2]@gpu:dev1"));
    QCOMPARE(c.run.rewriters.at("cut_gpua_constant_transfers").applied, std::int64_t(1));
    QCOMPARE(asVector(eval(c, {})[0]), (std::vector<double>{1.5, 2.5}));
    Compiled kept =
        compile(body, "theano", {"topo_constant_folding", "gpua_constant_folding", "cut_gpua_constant_transfers"});
    QCOMPARE(kinds(kept), QString("GpuFromHost"));
}

// local_gpua_gemm_alpha_merge (alpha_merge of gpuarray/opt_util.py). Theano 1.0 tests it
// only through cuDNN and blocksparse, so each row is a case of alpha_merge's code:
// gemm_no_inplace(z, a, x, y, b) * k in mode_with_gpu. A constant k of the GpuGemm's dtype
// merges (alpha, beta) -> (k*a, k*b), (0, 0) for k = 0, unchanged for k = 1; a variable
// alpha becomes a host mul(k, a). No merge for a k of another dtype (int8), a k that is not
// a constant, or a GpuGemm with another client. Values against b*z + a*dot(x, y) times k.
void TestTheanoPort::test_gemm_alpha_merge_data() {
    QTest::addColumn<QString>("k");     // the other factor: a literal or an input name
    QTest::addColumn<QString>("alpha"); // "1.5" or "a" (an input)
    QTest::addColumn<bool>("gemmOut");  // the GpuGemm is also a graph output
    QTest::addColumn<bool>("merged");
    QTest::addColumn<double>("newAlpha"); // NaN: not a constant
    QTest::addColumn<double>("newBeta");
    const double nan = std::nan("");
    QTest::newRow("k=2") << "2.0"
                         << "1.5" << false << true << 3.0 << 1.0;
    QTest::newRow("k=0") << "0.0"
                         << "1.5" << false << true << 0.0 << 0.0;
    QTest::newRow("k=1") << "1.0"
                         << "1.5" << false << true << 1.5 << 0.5;
    QTest::newRow("variable alpha") << "2.0"
                                    << "a" << false << true << nan << 1.0;
    QTest::newRow("int8 k") << "2"
                            << "1.5" << false << false << nan << nan;
    QTest::newRow("variable k") << "\"s\""
                                << "1.5" << false << false << nan << nan;
    QTest::newRow("two clients") << "2.0"
                                 << "1.5" << true << false << nan << nan;
}

void TestTheanoPort::test_gemm_alpha_merge() {
    QFETCH(QString, k);
    QFETCH(QString, alpha);
    QFETCH(bool, gemmOut);
    QFETCH(bool, merged);
    QFETCH(double, newAlpha);
    QFETCH(double, newBeta);
    const bool varAlpha = alpha == "a";
    const std::string body =
        std::string(R"("inputs": [{"name": "z", "type": "float32[?,?]"}, {"name": "x", "type": "float32[?,?]"},
            {"name": "y", "type": "float32[?,?]"}, {"name": "s", "type": "float32[]"}, {"name": "a", "type": "float32[]"}],
            "constants": [{"name": "ca", "type": "float32[]", "value": 1.5}, {"name": "cb", "type": "float32[]", "value": 0.5}],
            "nodes": [{"op": "Gemm", "inputs": ["z", )") +
        (varAlpha ? "\"a\"" : "\"ca\"") + R"(, "x", "y", "cb"], "outputs": ["g"]},
                      {"op": "Elemwise", "attrs": {"scalar": "mul"}, "inputs": ["g", )" +
        k.toStdString() + R"(], "outputs": ["o"]}], "outputs": )" + (gemmOut ? R"(["o", "g"])" : R"(["o"])");
    Compiled f = compile(body);
    QCOMPARE(count(f, "GpuGemm"), 1);
    QCOMPARE(count(f, "GpuElemwise"), merged ? 0 : 1);
    QCOMPARE(f.run.rewriters.at("local_gpua_gemm_alpha_merge").applied, std::int64_t(merged));
    // register_opt() without 'fast_compile': FAST_COMPILE lifts the Gemm and merges nothing
    Compiled fc = compile(body, "fast_compile");
    QCOMPARE(count(fc, "GpuGemm"), 1);
    QCOMPARE(count(fc, "GpuElemwise"), 1);
    QVERIFY(!fc.run.rewriters.count("local_gpua_gemm_alpha_merge"));
    const Apply* gm = nodesOf(f, "GpuGemm")[0];
    if (merged) {
        if (std::isnan(newAlpha)) {
            QCOMPARE(QString::fromStdString(gm->input(1)->owner()->op().str()), QString("Elemwise{mul}"));
        } else {
            QVERIFY(gm->input(1)->isConstant());
            QCOMPARE(gm->input(1)->constant()->at(0), newAlpha);
        }
        QVERIFY(gm->input(4)->isConstant());
        QCOMPARE(gm->input(4)->constant()->at(0), newBeta);
    }
    const passlens::Tensor zv = values(DType::Float32, {3, 5}, 1), xv = values(DType::Float32, {3, 4}, 2),
                           yv = values(DType::Float32, {4, 5}, 3);
    const double sv = 0.25, av = 1.5;
    const double kv = k == "\"s\"" ? sv : k.toDouble();
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
            double d = 0;
            for (int l = 0; l < 4; ++l) d += xv.at(i * 4 + l) * yv.at(l * 5 + j);
            want.push_back(kv * (0.5 * zv.at(i * 5 + j) + av * d));
        }
    const auto out = eval(f, {zv, xv, yv, scalarOf(DType::Float32, sv), scalarOf(DType::Float32, av)});
    QVERIFY(allClose(asVector(out[0]), want));
}

// local_gpua_gemm_output_merge (output_merge of gpuarray/opt_util.py), cases of its code:
// gemm_no_inplace(z, a, x, y, 0) + W becomes GpuGemm(W, a, x, y, 1); also after an alpha
// merge ((gemm * 2) + W: one GpuGemm). No merge when beta is not 0, W has another dtype
// (float64) or broadcasts other axes than z (a vector W: DimShuffle{x,0}). A W with static
// dims merges (Theano's types have broadcast flags only) and the GpuGemm keeps them.
void TestTheanoPort::test_gemm_output_merge_data() {
    QTest::addColumn<QString>("w"); // W's type
    QTest::addColumn<QString>("beta");
    QTest::addColumn<bool>("scaled"); // (gemm * 2) + W
    QTest::addColumn<bool>("merged");
    QTest::newRow("W") << "float32[?,?]"
                       << "0.0" << false << true;
    QTest::newRow("static W") << "float32[3,5]"
                              << "0.0" << false << true;
    QTest::newRow("after alpha merge") << "float32[?,?]"
                                       << "0.0" << true << true;
    QTest::newRow("beta 0.5") << "float32[?,?]"
                              << "0.5" << false << false;
    QTest::newRow("float64 W") << "float64[?,?]"
                               << "0.0" << false << false;
    QTest::newRow("vector W") << "float32[?]"
                              << "0.0" << false << false;
}

void TestTheanoPort::test_gemm_output_merge() {
    QFETCH(QString, w);
    QFETCH(QString, beta);
    QFETCH(bool, scaled);
    QFETCH(bool, merged);
    const json ins = {{{"name", "z"}, {"type", "float32[?,?]"}},
                      {{"name", "x"}, {"type", "float32[?,?]"}},
                      {{"name", "y"}, {"type", "float32[?,?]"}},
                      {{"name", "w"}, {"type", w.toStdString()}}};
    const std::string body = "\"inputs\": " + ins.dump() +
                             R"(, "constants": [{"name": "ca", "type": "float32[]", "value": 1.5},
            {"name": "cb", "type": "float32[]", "value": )" +
                             beta.toStdString() + R"(}],
            "nodes": [{"op": "Gemm", "inputs": ["z", "ca", "x", "y", "cb"], "outputs": ["g"]},
                      {"op": "Elemwise", "attrs": {"scalar": "mul"}, "inputs": ["g", )" +
                             (scaled ? "2.0" : "1.0") + R"(], "outputs": ["g2"]},
                      {"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["g2", "w"], "outputs": ["o"]}], "outputs": ["o"])";
    Compiled f = compile(body);
    QCOMPARE(count(f, "GpuGemm"), 1);
    QCOMPARE(count(f, "GpuElemwise"), merged ? 0 : 1);
    QCOMPARE(f.run.rewriters.at("local_gpua_gemm_output_merge").applied, std::int64_t(merged));
    const Apply* gm = nodesOf(f, "GpuGemm")[0];
    if (merged) {
        QCOMPARE(gm->input(0)->owner()->input(0), f.g->inputs()[3]); // GpuFromHost(W)
        QCOMPARE(gm->input(4)->constant()->at(0), 1.0);
        QCOMPARE(gm->input(1)->constant()->at(0), scaled ? 3.0 : 1.5);
        QCOMPARE(gm->output()->type().str(), Type::parse(w.toStdString()).str() + "@gpu");
    }
    const Type tw = Type::parse(w.toStdString());
    const passlens::Tensor zv = values(DType::Float32, {3, 5}, 1), xv = values(DType::Float32, {3, 4}, 2),
                           yv = values(DType::Float32, {4, 5}, 3),
                           wv = values(tw.dtype(),
                                       tw.ndim() == 1 ? std::vector<std::int64_t>{5} : std::vector<std::int64_t>{3, 5},
                                       4);
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
            double d = 0;
            for (int l = 0; l < 4; ++l) d += xv.at(i * 4 + l) * yv.at(l * 5 + j);
            const double g = beta.toDouble() * zv.at(i * 5 + j) + 1.5 * d;
            want.push_back((scaled ? 2 * g : g) + wv.at(tw.ndim() == 1 ? j : i * 5 + j));
        }
    QVERIFY(allClose(asVector(eval(f, {zv, xv, yv, wv})[0]), want));
}

// ------------------------------------------------------------ gpuarray/tests/test_basic_ops.py

// test_transfer_cpu_gpu: GpuFromHost(a) and host_from_gpu(g) return the values.
void TestTheanoPort::test_transfer_cpu_gpu() {
    Compiled f = compile(
        R"("inputs": [{"name": "a", "type": "float32[5,4]"}], "nodes": [{"op": "GpuFromHost", "inputs": ["a"], "outputs": ["g"]}], "outputs": ["g"])");
    const passlens::Tensor av = values(DType::Float32, {5, 4});
    QVERIFY(allClose(asVector(eval(f, {av})[0]), asVector(av)));
    Compiled h = compile(
        R"("inputs": [{"name": "g", "type": "float32[5,4]@gpu"}], "nodes": [{"op": "HostFromGpu", "inputs": ["g"], "outputs": ["a"]}], "outputs": ["a"])");
    QVERIFY(allClose(asVector(eval(h, {av})[0]), asVector(av)));
}

// test_transfer_gpu_gpu: GpuToGpu(g) survives when both transfer cutters are excluded
// (Theano's cut_gpua_host_transfers is PassLens's local_cut_gpu_transfers in
// gpuarray_cut_transfers; local_cut_gpua_host_gpua is the same rewrite in canonicalize).
void TestTheanoPort::test_transfer_gpu_gpu() {
    Compiled f = compile(
        R"("inputs": [{"name": "g", "type": "float32[?,?]@gpu"}], "nodes": [{"op": "GpuToGpu", "inputs": ["g"], "outputs": ["o"]}], "outputs": ["o"])",
        "theano", {"local_cut_gpu_transfers", "local_cut_gpua_host_gpua"});
    QCOMPARE(kinds(f), QString("GpuToGpu"));
    const passlens::Tensor gv = values(DType::Float32, {5, 4});
    QVERIFY(allClose(asVector(eval(f, {gv})[0]), asVector(gv)));
}

// test_alloc_empty: GpuAllocEmpty(dt)(2, 3) with Python int shapes (make_node's
// as_tensor_variable: int8 constants) is one node of that dtype and shape; two equal
// uint64 GpuAllocEmpty merge into one.
void TestTheanoPort::test_alloc_empty() {
    for (const char* dt : {"float32", "int8"}) {
        const json node = {{"op", "GpuAllocEmpty"}, {"attrs", {{"dtype", dt}}}, {"inputs", {2, 3}}, {"outputs", {"o"}}};
        Compiled f = compile("\"nodes\": [" + node.dump() + "], \"outputs\": [\"o\"]", "none");
        QCOMPARE(int(f.g->nodeCount()), 1);
        QCOMPARE(f.g->outputs()[0]->type().str(), std::string(dt) + "[2,3]@gpu");
        QCOMPARE(f.topo()[0]->input(0)->type().dtype(), DType::Int8);
        const auto out = eval(f, {});
        QCOMPARE(out[0].shape(), (passlens::Shape{2, 3}));
        QCOMPARE(out[0].dtype(), *parseDType(dt));
    }
    Compiled f = compile(
        R"("nodes": [{"op": "GpuAllocEmpty", "attrs": {"dtype": "uint64"}, "inputs": [3, 2], "outputs": ["o1"]},
            {"op": "GpuAllocEmpty", "attrs": {"dtype": "uint64"}, "inputs": [3, 2], "outputs": ["o2"]}], "outputs": ["o1", "o2"])");
    QCOMPARE(count(f, "GpuAllocEmpty"), 1);
    const auto out = eval(f, {});
    QCOMPARE(out[1].shape(), (passlens::Shape{3, 2}));
    QCOMPARE(out[1].dtype(), DType::UInt64);
}

// test_shape: x.shape of a GPU tensor3 excluding local_shape_to_shape_i is one Shape node
// with the values (3, 4, 5). Difference: the first half (Shape_i x3 + MakeVector in
// FAST_RUN) needs local_shape_to_shape_i, which PassLens does not model; Shape stays.
void TestTheanoPort::test_shape() {
    Compiled f = compile(
        R"("inputs": [{"name": "x", "type": "float32[?,?,?]@gpu"}], "nodes": [{"op": "Shape", "inputs": ["x"], "outputs": ["s"]}], "outputs": ["s"])");
    QCOMPARE(kinds(f), QString("Shape"));
    QCOMPARE(asVector(eval(f, {values(DType::Float32, {3, 4, 5})})[0]), (std::vector<double>{3, 4, 5}));
}

// test_gpu_contiguous: gpu_contiguous(a.reshape((5, 4))[::i]) has a GpuSubtensor and a
// GpuContiguous. The reshape takes a literal shape [5, 4] and the hand-written GpuContiguous
// a host value: both converted as make_node does.
void TestTheanoPort::test_gpu_contiguous() {
    Compiled f = compile(R"("inputs": [{"name": "a", "type": "float32[?,?]"}, {"name": "i", "type": "int32[]"}],
            "nodes": [{"op": "Reshape", "attrs": {"ndim": 2}, "inputs": ["a", [5, 4]], "outputs": ["r"]},
                      {"op": "Subtensor", "attrs": {"idx": [{"step": "?"}]}, "inputs": ["r", "i"], "outputs": ["s"]},
                      {"op": "GpuContiguous", "inputs": ["s"], "outputs": ["o"]}], "outputs": ["o"])");
    QCOMPARE(count(f, "GpuSubtensor"), 1);
    QCOMPARE(count(f, "GpuContiguous"), 1);
    const passlens::Tensor av = values(DType::Float32, {4, 5});
    const auto r2 = eval(f, {av, scalarOf(DType::Int32, 2)});
    QCOMPARE(r2[0].shape(), (passlens::Shape{3, 4}));
    QVERIFY(allClose(asVector(r2[0]), {av.at(0), av.at(1), av.at(2), av.at(3), av.at(8), av.at(9), av.at(10), av.at(11),
                                       av.at(16), av.at(17), av.at(18), av.at(19)}));
}

// G_Join_and_Split.test_gpusplit_opt: Split(2)(m, 0, [2, 2]) moves to the GPU (GpuSplit);
// values. Difference: float32 instead of float16 shared data; axis is an attribute.
void TestTheanoPort::test_gpusplit_opt() {
    Compiled f = compile(R"("inputs": [{"name": "m", "type": "float32[4,6]"}],
            "nodes": [{"op": "Split", "attrs": {"axis": 0, "n_splits": 2}, "inputs": ["m", [2, 2]], "outputs": ["o1", "o2"]}], "outputs": ["o1", "o2"])");
    QCOMPARE(count(f, "GpuSplit"), 1);
    const passlens::Tensor mv = values(DType::Float32, {4, 6});
    const auto out = eval(f, {mv});
    const auto v = asVector(mv);
    QVERIFY(allClose(asVector(out[0]), std::vector<double>(v.begin(), v.begin() + 12)));
    QVERIFY(allClose(asVector(out[1]), std::vector<double>(v.begin() + 12, v.end())));
}

// test_gpujoin_gpualloc: join(0, zeros_like(a), ones_like(b)) (+ 4): two Alloc and one Join
// without the GPU; two GpuAlloc and one GpuJoin with it; equal values. Difference:
// zeros_like / ones_like are written as Alloc(0 / 1, Shape_i...) (Theano reaches that form
// through fill and local_fill_to_alloc, which PassLens does not model).
void TestTheanoPort::test_gpujoin_gpualloc() {
    const std::string in =
        R"("inputs": [{"name": "a", "type": "float32[?,?]"}, {"name": "b", "type": "float32[?,?]"}],
            "nodes": [{"op": "Shape_i", "attrs": {"i": 0}, "inputs": ["a"], "outputs": ["a0"]}, {"op": "Shape_i", "attrs": {"i": 1}, "inputs": ["a"], "outputs": ["a1"]},
                      {"op": "Shape_i", "attrs": {"i": 0}, "inputs": ["b"], "outputs": ["b0"]}, {"op": "Shape_i", "attrs": {"i": 1}, "inputs": ["b"], "outputs": ["b1"]},
                      {"op": "Alloc", "inputs": [0.0, "a0", "a1"], "outputs": ["za"]}, {"op": "Alloc", "inputs": [1.0, "b0", "b1"], "outputs": ["ob"]},
                      {"op": "Join", "attrs": {"axis": 0}, "inputs": ["za", "ob"], "outputs": ["j"]})";
    const std::string plus4 =
        in +
        R"(, {"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["j", 4.0], "outputs": ["o"]}], "outputs": ["o"])";
    Compiled f = compileCpu(plus4);
    Compiled fGpu = compile(in + R"(], "outputs": ["j"])");
    Compiled fGpu2 = compile(plus4);
    QCOMPARE(count(f, "Alloc"), 2);
    QCOMPARE(count(f, "Join"), 1);
    QCOMPARE(count(fGpu, "GpuAlloc"), 2);
    QCOMPARE(count(fGpu, "GpuJoin"), 1);
    QCOMPARE(count(fGpu2, "GpuAlloc"), 2);
    QCOMPARE(count(fGpu2, "GpuJoin"), 1);
    const std::vector<passlens::Tensor> args{values(DType::Float32, {4, 5}), values(DType::Float32, {3, 5})};
    const auto want = asVector(eval(f, args)[0]);
    QCOMPARE(want.size(), std::size_t(35));
    QCOMPARE(want[0], 4.0);
    QCOMPARE(want[34], 5.0);
    QCOMPARE(asVector(eval(fGpu2, args)[0]), want);
}
