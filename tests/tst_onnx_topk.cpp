// tst_onnx: ONNX TopK imported as Theano's TopKOp (opset 1 attribute k, opset 10 input K,
// constant or not, opset 11 largest / sorted, negative axes), its refusals, and its lifting
// to GpuTopKOp by the theano pipeline (see tst_onnx.h).
#include "tst_onnx.h"

#include <passlens/pipeline/Pipeline.h>

namespace {

// x[3,5] -> TopK(x, K) -> values, indices at `opset`: K is the attribute k (opset 1), an int64
// initializer [k] (constK) or a graph input int64[1].
ModelBuilder topKModel(int opset, std::int64_t k, bool constK, std::int64_t axis, int largest = -1, int sorted = -1) {
    ModelBuilder b(opset);
    b.input("x", {3, 5});
    std::vector<std::string> ins = {"x"};
    if (opset >= 10) {
        if (constK)
            b.initInt64("K", {k});
        else
            b.input("K", {1}, onnx::TensorProto::INT64);
        ins.push_back("K");
    }
    auto* n = b.node("TopK", ins, {"values", "indices"}, "topk1");
    if (opset < 10) ModelBuilder::intAttr(n, "k", k);
    ModelBuilder::intAttr(n, "axis", axis);
    if (largest >= 0) ModelBuilder::intAttr(n, "largest", largest);
    if (sorted >= 0) ModelBuilder::intAttr(n, "sorted", sorted);
    b.output("values", {0, 1});
    b.output("indices", {0, 1}, onnx::TensorProto::INT64);
    return b;
}

const Apply* onlyNodeOf(const FunctionGraph& g, const std::string& kind) {
    const Apply* found = nullptr;
    for (const Apply* n : g.toposort())
        if (n->op().kind() == kind) {
            if (found) return nullptr;
            found = n;
        }
    return found;
}

} // namespace

void TestOnnx::topKMapsToTopKOp() {
    // opset 1 (attribute k), 10 and 11 (constant K): one TopKOp on x and an int64 scalar
    // constant, both outputs the graph's, |k| along the axis
    struct Case {
        int opset, largest, sorted;
        std::int64_t axis, wantK;
        QString display;
    };
    for (const Case& c :
         {Case{1, -1, -1, 1, 2, "TopKOp{axis=1, sorted=True}"}, Case{10, -1, -1, -1, 2, "TopKOp{axis=1, sorted=True}"},
          Case{11, 0, 0, -2, -2, "TopKOp{axis=0, sorted=False}"},
          Case{11, 1, 1, 0, 2, "TopKOp{axis=0, sorted=True}"}}) {
        const QString what = QString("opset %1 axis %2 largest %3").arg(c.opset).arg(c.axis).arg(c.largest);
        LoadedGraph lg = topKModel(c.opset, 2, true, c.axis, c.largest, c.sorted).import();
        const FunctionGraph& g = *lg.graph;
        QVERIFY2(kinds(g) == "TopKOp", qPrintable(what + ": " + kinds(g)));
        const Apply* t = g.toposort().front();
        QCOMPARE(QString::fromStdString(t->op().str()), c.display);
        QCOMPARE(QString::fromStdString(t->op().str("idx_dtype")), QString("int64"));
        QVERIFY(t->input(1)->isConstant());
        QCOMPARE(t->input(1)->type().str(), std::string("int64[]"));
        QCOMPARE(t->input(1)->constant()->intAt(0), c.wantK);
        QCOMPARE(g.outputs().size(), std::size_t(2));
        QCOMPARE(g.outputs()[0], t->output(0));
        QCOMPARE(g.outputs()[1], t->output(1));
        const std::string want = c.axis == 1 || c.axis == -1 ? "[3,2]" : "[2,5]";
        QCOMPARE(g.outputs()[0]->type().str(), "float32" + want);
        QCOMPARE(g.outputs()[1]->type().str(), "int64" + want);
    }
    // K a graph input: its element 0 read on the host behind an Assert (K >= 0), negated for
    // the smallest; the axis dim is unknown
    {
        LoadedGraph lg = topKModel(11, 0, false, 1, 0).import();
        QCOMPARE(kinds(*lg.graph), QString("Subtensor Elemwise Assert Elemwise TopKOp"));
        const auto topo = lg.graph->toposort();
        QCOMPARE(QString::fromStdString(topo[1]->op().str()), QString("Elemwise{ge}"));
        QCOMPARE(QString::fromStdString(topo[2]->op().str("msg")), QString("TopK: K must not be negative"));
        QCOMPARE(QString::fromStdString(topo[3]->op().str()), QString("Elemwise{neg}"));
        QCOMPARE(topo[4]->input(1), topo[3]->output());
        QCOMPARE(lg.graph->outputs()[0]->type().str(), std::string("float32[3,?]"));
    }
    {
        LoadedGraph lg = topKModel(10, 0, false, 1).import();
        QCOMPARE(kinds(*lg.graph), QString("Subtensor Elemwise Assert TopKOp"));
    }
    // refusals: a negative constant K, K beyond the axis, an axis out of range
    const QString neg = errorOf([] { (void)topKModel(11, -1, true, 1).import(); });
    QVERIFY2(neg.contains("topk1") && neg.contains("K must not be negative, got -1"), qPrintable(neg));
    const QString big = errorOf([] { (void)topKModel(11, 4, true, 0).import(); });
    QVERIFY2(big.contains("topk1") && big.contains("k 4 is larger than axis 0 of float32[3,5]"), qPrintable(big));
    const QString axis = errorOf([] { (void)topKModel(11, 1, true, 2).import(); });
    QVERIFY2(axis.contains("topk1") && axis.contains("'axis': 2 out of range for rank 2"), qPrintable(axis));
}

void TestOnnx::topKLiftedByTheano() {
    // local_gpua_topkop: the theano and cleanup pipelines move the TopKOp to a GpuTopKOp whose k
    // stays on the host, both outputs coming back with a HostFromGpu; without the gpuarray
    // phases it stays a TopKOp
    for (const char* pipeline : {"theano", "cleanup"}) {
        LoadedGraph lg = topKModel(11, 2, true, 1, 0).import();
        Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
        QVERIFY2(kinds(*lg.graph) == "GpuFromHost GpuTopKOp HostFromGpu HostFromGpu",
                 qPrintable(QString(pipeline) + ": " + kinds(*lg.graph)));
        const Apply* gpu = onlyNodeOf(*lg.graph, "GpuTopKOp");
        QCOMPARE(QString::fromStdString(gpu->op().str()), QString("GpuTopKOp{axis=1, sorted=True}"));
        QVERIFY(gpu->input(0)->type().isGpu());
        QVERIFY(!gpu->input(1)->type().isGpu() && gpu->input(1)->isConstant());
        for (int o = 0; o < 2; ++o) {
            const Variable* out = lg.graph->outputs()[static_cast<std::size_t>(o)];
            QVERIFY(!out->type().isGpu());
            QCOMPARE(out->owner()->input(0), gpu->output(o));
        }
    }
    // K a graph input: the Assert that guards it keeps its condition on the host (as Theano's
    // Assert.make_node does), so GraphToGpu does not fail and both pipelines lift the TopKOp
    for (const char* pipeline : {"theano", "cleanup"}) {
        LoadedGraph lg = topKModel(11, 0, false, 1, 0).import();
        const PipelineRun run = Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
        for (const std::string& m : run.messages) QVERIFY2(m.find("failed") == std::string::npos, m.c_str());
        QVERIFY2(kinds(*lg.graph).contains("GpuTopKOp"), qPrintable(QString(pipeline) + ": " + kinds(*lg.graph)));
        const Apply* guard = onlyNodeOf(*lg.graph, "Assert");
        for (int i = 1; i < guard->nin(); ++i) QVERIFY(!guard->input(i)->type().isGpu());
    }
    LoadedGraph host = topKModel(11, 2, true, 1, 0).import();
    Pipeline p = Pipeline::builtin("theano");
    p.exclude("gpuarray");
    p.run(*host.graph, nullptr);
    QCOMPARE(kinds(*host.graph), QString("TopKOp"));
}
