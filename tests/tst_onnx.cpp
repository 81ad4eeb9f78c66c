// tst_onnx: the corpus models and the opset-dependent mappings (see tst_onnx.h).
#include "tst_onnx.h"

void TestOnnx::initTestCase() {
    if (!QFile::exists(QString::fromStdString(corpus("MANIFEST.md"))))
        QFAIL(qPrintable("the ONNX corpus is not at " + QString::fromStdString(kCorpus) +
                         " (configure with -DPASSLENS_CORPUS_DIR=<folder>)"));
}

void TestOnnx::cnnModels_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("nodes");
    QTest::newRow("resnet18") << "resnet18.onnx" << 94;
    QTest::newRow("squeezenet1_1") << "squeezenet1_1.onnx" << 120;
    QTest::newRow("mobilenet_v2") << "mobilenet_v2.onnx" << 209;
    QTest::newRow("mlp") << "mlp.onnx" << 12;
}

void TestOnnx::cnnModels() {
    QFETCH(QString, file);
    QFETCH(int, nodes);
    const std::string path = corpus(file.toStdString());
    LoadedGraph lg = loadGraphFile(path);
    QCOMPARE(lg.format, std::string("onnx"));
    QVERIFY(lg.warnings.empty());
    const auto expected = expectedCnnCounts(readModel(path));
    const auto actual = lg.graph->opCounts();
    QCOMPARE(text(actual), text(expected));
    int sum = 0;
    for (auto& [k, n] : expected) sum += n;
    QCOMPARE(static_cast<int>(lg.graph->nodeCount()), sum);
    QCOMPARE(static_cast<int>(lg.graph->nodeCount()), nodes);
    lg.graph->validate();
    // Initializers become constants, never graph inputs.
    QCOMPARE(lg.graph->inputs().size(), std::size_t(1));
    // every initializer is a graph constant used by the graph, under its ONNX name
    const auto m = readModel(path);
    std::set<std::string> constNames;
    for (const Variable* v : lg.graph->constants()) constNames.insert(v->name());
    for (const auto& init : m.graph().initializer()) QVERIFY2(constNames.count(init.name()), init.name().c_str());
}

void TestOnnx::resnet18Shapes() {
    LoadedGraph lg = loadGraphFile(corpus("resnet18.onnx"));
    const FunctionGraph& g = *lg.graph;
    QCOMPARE(g.outputs()[0]->type().str(), std::string("float32[1,1000]"));
    const auto& topo = g.toposort();
    // every intermediate type is static after shape inference + our type rules
    for (const Apply* n : topo)
        for (const Variable* v : n->outputs()) QVERIFY2(v->type().isStatic(), v->type().str().c_str());
    const Apply* pool = nullptr;
    for (const Apply* n : topo)
        if (n->op().kind() == "Pool") pool = n;
    QVERIFY(pool);
    QCOMPARE(pool->output()->type().str(), std::string("float32[1,64,56,56]"));
    QVERIFY(pool->op().attrs()["ws"] == nlohmann::json({3, 3}));
}

// OnnxImportOptions::inputShapes on a model exported at batch 1: the declared output shape
// [1,1000] is dropped and every type is inferred again at the new batch
void TestOnnx::rebindBatch() {
    OnnxImportOptions o;
    o.inputShapes["input"] = {8, 3, 224, 224};
    LoadedGraph lg = importOnnxFile(corpus("squeezenet1_1.onnx"), o);
    const FunctionGraph& g = *lg.graph;
    QCOMPARE(g.inputs()[0]->type().str(), std::string("float32[8,3,224,224]"));
    QCOMPARE(g.outputs()[0]->type().str(), std::string("float32[8,1000]"));
    int pools = 0;
    for (const Apply* n : g.toposort()) {
        for (const Variable* v : n->outputs()) QVERIFY2(v->type().isStatic(), v->type().str().c_str());
        if (n->op().kind() == "AbstractConv2d" || n->op().kind() == "Pool")
            QCOMPARE(n->output()->type().dims()[0], std::int64_t(8));
        if (n->op().kind() == "Pool" && pools++ == 0)
            QCOMPARE(n->output()->type().str(), std::string("float32[8,64,55,55]"));
    }
    QCOMPARE(pools, 3);
    // a model with If subgraphs and value_info: silero bound to batch 3 imports (the dims
    // declared inside the branches are forgotten too, else inference contradicts them);
    // ranks and element types are kept, dims the If outputs cannot infer stay unknown
    OnnxImportOptions so;
    so.inputShapes = {{"input", {3, 512}}, {"h", {2, 3, 64}}, {"c", {2, 3, 64}}};
    LoadedGraph silero = importOnnxFile(corpus("silero_vad_legacy.onnx"), so);
    QCOMPARE(silero.graph->inputs()[0]->type().str(), std::string("float32[3,512]"));
    QCOMPARE(silero.graph->inputs()[1]->type().str(), std::string("int64[]"));
    QCOMPARE(silero.graph->outputs()[0]->type().str(), std::string("float32[?,?]"));
    QCOMPARE(silero.graph->outputs()[1]->type().str(), std::string("float32[2,?,64]"));
    // inputs not named keep their declared dims; a rank that does not fit is refused by name
    o.inputShapes = {{"input", {8, 3, 224}}};
    try {
        importOnnxFile(corpus("squeezenet1_1.onnx"), o);
        QFAIL("a rank-3 input was accepted by a 2-d convolution");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("squeezenet1_1.onnx"), e.what());
    }
}

void TestOnnx::transformer() {
    LoadedGraph lg = loadGraphFile(corpus("transformer_encoder_layer.onnx"));
    const auto c = lg.graph->opCounts();
    QCOMPARE(lg.graph->nodeCount(), std::size_t(91));
    QCOMPARE(c.at("Softmax"), 1);
    QCOMPARE(c.at("BatchedDot"), 2); // the two attention MatMuls of rank 3
    QCOMPARE(c.at("Dot"), 3);        // the 3-D x 2-D MatMuls, through Reshape as tensordot
    QCOMPARE(c.at("CAReduce"), 4);   // the four ReduceMeans of the two LayerNorms
    QCOMPARE(c.at("Gemm"), 1);
    QVERIFY(!c.count("OnnxSlice")); // Slice with computed bounds is Subtensor{int64:int64:}
    for (const auto& [k, n] : c) QVERIFY2(!k.starts_with("Onnx"), k.c_str());
    QCOMPARE(lg.graph->outputs()[0]->type().str(), std::string("float32[2,16,64]"));
}

void TestOnnx::lstmKeepsOnnxLstm() {
    LoadedGraph lg = loadGraphFile(corpus("lstm.onnx"));
    const auto c = lg.graph->opCounts();
    QCOMPARE(c.at("OnnxLSTM"), 1);
    QCOMPARE(lg.graph->nodeCount(), std::size_t(21));
    QCOMPARE(lg.graph->outputs().size(), std::size_t(3));
    const Apply* lstm = nullptr;
    for (const Apply* n : lg.graph->toposort())
        if (n->op().kind() == "OnnxLSTM") lstm = n;
    QCOMPARE(lstm->op().attrs()["hidden_size"].get<int>(), 64);
    QCOMPARE(lstm->nout(), 3);
    QCOMPARE(lstm->output(0)->type().str(), std::string("float32[10,1,1,64]"));
    // The zero initial state (Shape -> Gather -> Unsqueeze -> Concat -> Expand) is Alloc of
    // Shape_i, as Theano would build it.
    QCOMPARE(c.at("Alloc"), 2);
    QCOMPARE(c.at("Shape_i"), 2);
}

void TestOnnx::shapeOps() {
    LoadedGraph lg = loadGraphFile(corpus("shape_ops.onnx"));
    const auto c = lg.graph->opCounts();
    QCOMPARE(lg.graph->nodeCount(), std::size_t(29));
    QCOMPARE(c.at("Split"), 1);
    QCOMPARE(c.at("Join"), 1);
    QCOMPARE(c.at("AdvancedSubtensor1"), 1); // index_select on axis 1, moved to the front
    for (const auto& [k, n] : c) QVERIFY2(!k.starts_with("Onnx"), k.c_str());
    QCOMPARE(lg.graph->outputs()[0]->type().str(), std::string("float32[2,120]"));
    QCOMPARE(lg.graph->outputs()[2]->type().str(), std::string("float32[30,2,4]"));
}

void TestOnnx::paddleOcrConstantsAndOnnxOps() {
    LoadedGraph lg = loadGraphFile(corpus("ch_PP-OCRv4_det_infer.onnx"));
    const auto c = lg.graph->opCounts();
    QCOMPARE(c.at("AbstractConv2d"), 62);
    QCOMPARE(c.at("BatchNormInference"), 3);
    QCOMPARE(c.at("OnnxResize"), 6);
    QCOMPARE(c.at("OnnxConvTranspose"), 2);
    QCOMPARE(c.at("CAReduce"), 10); // GlobalAveragePool over dynamic H, W divides by Shape_i
    QCOMPARE(c.at("Shape_i"), 20);
    QCOMPARE(lg.graph->nodeCount(), std::size_t(656));
    // weights live in Constant nodes (0 initializers): they are graph constants
    std::size_t elements = 0;
    for (const Variable* v : lg.graph->constants()) elements += static_cast<std::size_t>(v->constant()->numElements());
    QVERIFY(elements > 1170000);
    QCOMPARE(lg.graph->inputs()[0]->type().str(), std::string("float32[?,3,?,?]"));
    const Apply* resize = nullptr;
    for (const Apply* n : lg.graph->toposort())
        if (n->op().kind() == "OnnxResize") resize = n;
    QCOMPARE(resize->op().attrs()["mode"].get<std::string>(), std::string("nearest"));
}

void TestOnnx::sileroNestedGraphs() {
    LoadedGraph lg = loadGraphFile(corpus("silero_vad_legacy.onnx"));
    const FunctionGraph& g = *lg.graph;
    QCOMPARE(kinds(g), QString("Elemwise OnnxIf"));
    const Apply* ifNode = g.toposort()[1];
    const auto& subs = ifNode->op().subgraphs();
    QCOMPARE(subs.size(), std::size_t(2));
    const auto outer = ifNode->op().attrs()["outer_scope"];
    QVERIFY(outer.size() >= 68); // the branches use the top-level initializers through outer scope
    QCOMPARE(ifNode->nin(), 1 + static_cast<int>(outer.size()));
    QCOMPARE(ifNode->op().attrs()["n_onnx_inputs"].get<int>(), 1);
    for (const Subgraph& s : subs) {
        for (const Variable* in : s.graph->inputs()) {
            bool listed = false;
            for (const auto& n : outer) listed |= n.get<std::string>() == in->name();
            QVERIFY2(listed, in->name().c_str());
        }
        QVERIFY(s.graph->nodeCount() > 0);
    }
    QCOMPARE(ifNode->nout(), 3);
}

// Reshape's target: a constant one maps to Theano's Reshape with ONNX's 0 (copy the input's
// dim) resolved; one the caller gives as a graph input stays OnnxReshape, which applies the
// rule at run time; one computed in the graph maps to Reshape.
void TestOnnx::reshapeZeroCopiesTheInputDim() {
    for (const char* source : {"constant", "input", "computed"}) {
        ModelBuilder b(14);
        b.input("x", {2, 3, 4});
        if (std::string(source) == "constant") {
            b.initInt64("shape", {2, 0, 1, -1});
        } else if (std::string(source) == "input") {
            b.input("shape", {4}, onnx::TensorProto::INT64);
        } else {
            b.input("s", {4}, onnx::TensorProto::INT64);
            b.node("Abs", {"s"}, {"shape"}, "abs1");
        }
        b.node("Reshape", {"x", "shape"}, {"y"}, "r1");
        b.output("y", {2, 3, 1, 4});
        LoadedGraph lg = b.import();
        const QString want = std::string(source) == "constant" ? "Reshape"
                             : std::string(source) == "input"  ? "OnnxReshape"
                                                               : "Elemwise Reshape";
        QCOMPARE(kinds(*lg.graph), want);
        if (std::string(source) == "constant") {
            const Variable* shape = lg.graph->outputs()[0]->owner()->input(1);
            QVERIFY(shape->constant());
            QCOMPARE(shape->constant()->at(1), 3.0);
        }
    }
}

void TestOnnx::opsetDependentAttributes() {
    // Clip: attributes in opset 9, inputs from opset 11; Unsqueeze/Squeeze/ReduceSum/Split:
    // attributes before opset 13, inputs after.
    for (int opset : {9, 11, 13, 17}) {
        ModelBuilder b(opset);
        b.input("x", {2, 6});
        auto* clip = b.node("Clip", {"x"}, {"c"});
        if (opset < 11) {
            ModelBuilder::floatAttr(clip, "min", 0.0f);
            ModelBuilder::floatAttr(clip, "max", 6.0f);
        } else {
            auto* lo = b.m.mutable_graph()->add_initializer();
            lo->set_name("lo");
            lo->set_data_type(onnx::TensorProto::FLOAT);
            lo->add_float_data(0.0f);
            auto* hi = b.m.mutable_graph()->add_initializer();
            hi->set_name("hi");
            hi->set_data_type(onnx::TensorProto::FLOAT);
            hi->add_float_data(6.0f);
            clip->add_input("lo");
            clip->add_input("hi");
        }
        auto* unsq = b.node("Unsqueeze", {"c"}, {"u"});
        auto* split = b.node("Split", {"u"}, {"s0", "s1"});
        auto* red = b.node("ReduceSum", {"s0"}, {"r"});
        if (opset < 13) {
            ModelBuilder::intsAttr(unsq, "axes", {0});
            ModelBuilder::intsAttr(split, "split", {2, 4});
            ModelBuilder::intsAttr(red, "axes", {2});
        } else {
            b.initInt64("ax0", {0});
            unsq->add_input("ax0");
            b.initInt64("sizes", {2, 4});
            split->add_input("sizes");
            b.initInt64("ax2", {2});
            red->add_input("ax2");
        }
        {
            auto* a = split->add_attribute();
            a->set_name("axis");
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(2);
        }
        b.output("r", {0, 1, 2});
        b.output("s1", {0, 1, 2});
        LoadedGraph lg = b.import();
        const FunctionGraph& g = *lg.graph;
        QCOMPARE(kinds(g), QString("Elemwise DimShuffle Split CAReduce DimShuffle"));
        const Apply* c = g.toposort()[0];
        QCOMPARE(c->op().str(), std::string("Elemwise{clip{0.0,6.0}}"));
        QCOMPARE(g.toposort()[1]->op().str(), std::string("DimShuffle{x,0,1}"));
        QCOMPARE(g.outputs()[0]->type().str(), std::string("float32[1,2,1]"));
        QCOMPARE(g.outputs()[1]->type().str(), std::string("float32[1,2,4]"));
    }
}

QTEST_GUILESS_MAIN(TestOnnx)
