// Theano 1.0.5's behaviour, ported: nodes built as Theano's make_node builds them (issue 12).
#include <passlens/io/GraphJson.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/OpRegistry.h>

#include <QTest>

using namespace passlens;

namespace {
// graph JSON with the header filled in: `body` holds "inputs", "constants", "nodes", "outputs".
std::string doc(const std::string& body) { return R"({"format": "passlens.graph", "version": 1, )" + body + "}"; }
} // namespace

class TestTheanoPort : public QObject {
    Q_OBJECT
private slots:
    // ------------------------------------------------------------ make_node (issue 12 part 1)

    // Elemwise.make_node pads lower ranks with DimShuffle{x,...} (provenance make_node): the
    // graph of theano.tensor's `matrix + vector + 2.0`.
    void makeNodePadsRanks() {
        LoadedGraph lg = readGraphJsonText(doc(R"("inputs": [{"name": "m", "type": "float32[?,4]"}, {"name": "v", "type": "float32[4]"}],
            "nodes": [{"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["m", "v", 2.0], "outputs": ["y"]}], "outputs": ["y"])"), "p.graph.json", {});
        const auto& topo = lg.graph->toposort();
        QCOMPARE(int(topo.size()), 3);
        QCOMPARE(topo[0]->op().str(), std::string("DimShuffle{x,0}"));
        QCOMPARE(topo[1]->op().str(), std::string("DimShuffle{x,x}"));
        QCOMPARE(topo[0]->tag.value("provenance", ""), std::string("make_node"));
        QCOMPARE(topo[2]->input(2)->owner(), topo[1]);
        QCOMPARE(topo[1]->input(0)->type().str(), std::string("float32[]")); // 2.0: floatX
        QCOMPARE(lg.graph->outputs()[0]->type().str(), std::string("float32[?,4]"));
        // what Theano refuses: non-broadcastable static dims that differ
        try {
            readGraphJsonText(doc(R"("inputs": [{"name": "m", "type": "float32[?,4]"}, {"name": "v", "type": "float32[3]"}],
                "nodes": [{"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["m", "v"], "outputs": ["y"]}], "outputs": ["y"])"), "p.graph.json", {});
            QFAIL("accepted");
        } catch (const Error& e) {
            const QString m = e.what();
            QVERIFY2(m.contains("nodes[0]") && m.contains("incompatible static shapes at axis 1") && m.contains("Theano's Elemwise"), e.what());
        }
    }

    // as_gpuarray_variable in GpuAlloc.make_node: a host value gets GpuFromHost, a literal
    // becomes a GPU constant (numpy.asarray: 0.0 is float64), int shapes int8 constants.
    void makeNodeConvertsGpuInputs() {
        LoadedGraph lg = readGraphJsonText(doc(R"("inputs": [{"name": "v", "type": "float32[]"}],
            "nodes": [{"op": "GpuAlloc", "inputs": ["v", 3], "outputs": ["a"]}, {"op": "GpuAlloc", "inputs": [0.0, 3], "outputs": ["b"]}],
            "outputs": ["a", "b"])"), "p.graph.json", {});
        const Apply* a = lg.graph->outputs()[0]->owner();
        QCOMPARE(a->input(0)->owner()->op().kind(), std::string("GpuFromHost"));
        QCOMPARE(a->input(1)->type().str(), std::string("int8[]"));
        QCOMPARE(lg.graph->outputs()[0]->type().str(), std::string("float32[3]@gpu"));
        const Apply* b = lg.graph->outputs()[1]->owner();
        QVERIFY(b->input(0)->isConstant());
        QCOMPARE(b->input(0)->type().str(), std::string("float64[]@gpu"));
        // as_tensor_variable refuses True / False, naming the rule
        try {
            readGraphJsonText(doc(R"("inputs": [{"name": "x", "type": "float32[2]"}],
                "nodes": [{"op": "Elemwise", "attrs": {"scalar": "mul"}, "inputs": ["x", true], "outputs": ["y"]}], "outputs": ["y"])"), "p.graph.json", {});
            QFAIL("accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("nodes[0].inputs") && QString(e.what()).contains("as_tensor_variable"), e.what());
        }
    }
    // The other conversions: a GpuElemwise infers its context from its GPU input and moves the
    // host one (GpuFromHost<ctx>); a host Elemwise given a GPU value gets HostFromGpu; a list
    // literal is numpy.asarray (int64) for Reshape's shape; a ragged list is refused.
    void makeNodeHostAndGpuSides() {
        LoadedGraph lg = readGraphJsonText(doc(R"("inputs": [{"name": "g", "type": "float32[2,3]@gpu:dev1"}, {"name": "h", "type": "float32[2,3]"}],
            "nodes": [{"op": "GpuElemwise", "attrs": {"scalar": "add"}, "inputs": ["g", "h"], "outputs": ["s"]},
                      {"op": "Elemwise", "attrs": {"scalar": "exp"}, "inputs": ["s"], "outputs": ["e"]},
                      {"op": "Reshape", "attrs": {"ndim": 1}, "inputs": ["e", [6]], "outputs": ["r"]}], "outputs": ["r"])"), "p.graph.json", {});
        QStringList k;
        for (const Apply* n : lg.graph->toposort()) k << QString::fromStdString(n->op().str());
        QCOMPARE(k.join(' '), QString("GpuFromHost<dev1> GpuElemwise{add}<gpuarray> HostFromGpu(gpuarray) Elemwise{exp} Reshape{1}"));
        const Apply* r = lg.graph->outputs()[0]->owner();
        QCOMPARE(r->input(1)->type().str(), std::string("int64[1]"));
        int inserted = 0;
        for (const Apply* n : lg.graph->toposort()) inserted += n->tag.value("provenance", "") == "make_node";
        QCOMPARE(inserted, 2);
        try {
            readGraphJsonText(doc(R"("inputs": [{"name": "x", "type": "float32[?,?]"}],
                "nodes": [{"op": "Reshape", "attrs": {"ndim": 2}, "inputs": ["x", [[1, 2], [3]]], "outputs": ["y"]}], "outputs": ["y"])"), "p.graph.json", {});
            QFAIL("accepted");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("nodes[0].inputs") && QString(e.what()).contains("rectangular"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTheanoPort)
#include "tst_theano_port.moc"
