// ONNX import: every corpus model, opset-dependent mappings, external data, bad models.
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/FunctionGraph.h>
#include <passlens/onnx/OnnxImporter.h>

#include <onnx/onnx_pb.h>

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

using namespace passlens;

namespace {
const std::string kCorpus = PASSLENS_CORPUS_DIR;

std::string corpus(const std::string& f) { return kCorpus + "/" + f; }

onnx::ModelProto readModel(const std::string& path) {
    onnx::ModelProto m;
    std::ifstream in(path, std::ios::binary);
    m.ParseFromIstream(&in);
    return m;
}

// Op kinds the importer must produce for one ONNX node of a CNN (OPS.md import rules):
// Conv -> AbstractConv2d (+ DimShuffle and Elemwise{add} for the bias), Gemm -> Alloc (of C)
// + Gemm (+ DimShuffle per transposed operand), GlobalAveragePool -> CAReduce + Elemwise{true_div}
// + DimShuffle of the count + DimShuffle back to 4-D, ...
std::map<std::string, int> expectedCnnCounts(const onnx::ModelProto& m) {
    std::map<std::string, int> c;
    for (const auto& n : m.graph().node()) {
        const std::string& t = n.op_type();
        auto attr = [&](const char* name) {
            for (const auto& a : n.attribute())
                if (a.name() == name) return a.i();
            return std::int64_t(0);
        };
        if (t == "Conv") {
            ++c["AbstractConv2d"];
            if (n.input_size() > 2) {
                ++c["DimShuffle"];
                ++c["Elemwise"];
            }
        } else if (t == "Relu" || t == "Add" || t == "Clip") {
            ++c["Elemwise"];
        } else if (t == "MaxPool") {
            ++c["Pool"];
        } else if (t == "GlobalAveragePool") {
            ++c["CAReduce"];
            ++c["Elemwise"];
            c["DimShuffle"] += 2;
        } else if (t == "Flatten") {
            ++c["Flatten"];
        } else if (t == "Concat") {
            ++c["Join"];
        } else if (t == "Gemm") {
            ++c["Gemm"];
            ++c["Alloc"];
            c["DimShuffle"] += static_cast<int>(attr("transA") + attr("transB"));
        } else if (t != "Constant") {
            c["unexpected " + t]++;
        }
    }
    return c;
}

template <class F> QString errorOf(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

// Small synthetic models.
struct ModelBuilder {
    onnx::ModelProto m;
    explicit ModelBuilder(int opset, std::int64_t ir = 7) {
        m.set_ir_version(ir);
        auto* os = m.add_opset_import();
        os->set_domain("");
        os->set_version(opset);
        m.mutable_graph()->set_name("synthetic");
    }
    void input(const std::string& name, std::vector<std::int64_t> dims, int type = onnx::TensorProto::FLOAT) {
        auto* vi = m.mutable_graph()->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        tt->mutable_shape(); // a scalar has a shape with no dims
        for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    void output(const std::string& name, std::vector<std::int64_t> dims, int type = onnx::TensorProto::FLOAT) {
        auto* vi = m.mutable_graph()->add_output();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        tt->mutable_shape();
        for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(d));
    }
    onnx::TensorProto* initInt64(const std::string& name, std::vector<std::int64_t> vals) {
        auto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<std::int64_t>(vals.size()));
        for (auto v : vals) t->add_int64_data(v);
        return t;
    }
    onnx::NodeProto* node(const std::string& type, std::vector<std::string> ins, std::vector<std::string> outs,
                          const std::string& name = {}) {
        auto* n = m.mutable_graph()->add_node();
        n->set_op_type(type);
        n->set_name(name);
        for (auto& i : ins) n->add_input(i);
        for (auto& o : outs) n->add_output(o);
        return n;
    }
    static void intsAttr(onnx::NodeProto* n, const std::string& name, std::vector<std::int64_t> v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (auto x : v) a->add_ints(x);
    }
    static void floatAttr(onnx::NodeProto* n, const std::string& name, float v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    static void intAttr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    // A GRAPH attribute (If branches, Loop body), named `graphName`.
    static onnx::GraphProto* graphAttr(onnx::NodeProto* n, const std::string& name, const std::string& graphName) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        a->mutable_g()->set_name(graphName);
        return a->mutable_g();
    }
    static onnx::NodeProto* addNode(onnx::GraphProto* g, const std::string& type, std::vector<std::string> ins,
                                    std::vector<std::string> outs, const std::string& name = {}) {
        auto* n = g->add_node();
        n->set_op_type(type);
        n->set_name(name);
        for (auto& i : ins) n->add_input(i);
        for (auto& o : outs) n->add_output(o);
        return n;
    }
    // A value_info of a graph's inputs or outputs with static dims.
    static void valueInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                          std::vector<std::int64_t> dims, int type = onnx::TensorProto::FLOAT) {
        auto* vi = list->Add();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(type);
        tt->mutable_shape(); // a scalar has a shape with no dims
        for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    LoadedGraph import(const std::string& dir = ".") const {
        return importOnnxBytes(m.SerializeAsString(), "synthetic.onnx", dir);
    }
};

// x[2,3] -> Reshape(x, shape) -> y, the shape an int64 initializer whose raw_data has `bytes`
// bytes for dims [2] (16 needed).
ModelBuilder reshapeWithRawShape(std::size_t bytes) {
    ModelBuilder b(13);
    b.input("x", {2, 3});
    auto* t = b.m.mutable_graph()->add_initializer();
    t->set_name("shape");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(2);
    t->set_raw_data(std::string(bytes, '\x01'));
    b.node("Reshape", {"x", "shape"}, {"y"}, "reshape1");
    b.output("y", {0, 1});
    return b;
}

// c (bool scalar), x[3] -> If 'if1'(c) -> y: the then branch returns the outer value a =
// Neg(x) as it is (no node of its own), the else branch Relu(x). With `negLast` the Neg node
// comes after the If in the node list (the If reads `a` only as a branch output).
ModelBuilder ifReturningOuterValue(bool negLast) {
    ModelBuilder b(13);
    b.input("c", {}, onnx::TensorProto::BOOL);
    b.input("x", {3});
    if (!negLast) b.node("Neg", {"x"}, {"a"}, "neg1");
    auto* ifNode = b.node("If", {"c"}, {"y"}, "if1");
    auto* thenG = ModelBuilder::graphAttr(ifNode, "then_branch", "then");
    ModelBuilder::valueInfo(thenG->mutable_output(), "a", {3});
    auto* elseG = ModelBuilder::graphAttr(ifNode, "else_branch", "else");
    ModelBuilder::addNode(elseG, "Relu", {"x"}, {"e"}, "relu1");
    ModelBuilder::valueInfo(elseG->mutable_output(), "e", {3});
    if (negLast) b.node("Neg", {"x"}, {"a"}, "neg1");
    b.output("y", {0});
    return b;
}

// x[3] -> Loop 'loop1'(3 iterations, cond true, v = x) -> v_final: the body returns its own
// input cond_in as cond_out and v_out = Relu(Add(v_in, a)) with a = Neg(x) from the outer
// scope. `bodyOrder` lists the body's nodes ("add relu", "relu add"); `cycle` makes the Add read
// the Relu's output instead of v_in.
ModelBuilder loopWithOuterValue(const std::string& bodyOrder, bool cycle = false) {
    ModelBuilder b(13);
    b.input("x", {3});
    b.initInt64("trips", {3});
    b.m.mutable_graph()->mutable_initializer(0)->clear_dims();
    auto* c = b.m.mutable_graph()->add_initializer();
    c->set_name("cond0");
    c->set_data_type(onnx::TensorProto::BOOL);
    c->add_int32_data(1);
    b.node("Neg", {"x"}, {"a"}, "neg1");
    auto* loop = b.node("Loop", {"trips", "cond0", "x"}, {"v_final"}, "loop1");
    auto* body = ModelBuilder::graphAttr(loop, "body", "body");
    ModelBuilder::valueInfo(body->mutable_input(), "i", {}, onnx::TensorProto::INT64);
    ModelBuilder::valueInfo(body->mutable_input(), "cond_in", {}, onnx::TensorProto::BOOL);
    ModelBuilder::valueInfo(body->mutable_input(), "v_in", {3});
    for (const QString& op : QString::fromStdString(bodyOrder).split(' ')) {
        if (op == "add")
            ModelBuilder::addNode(body, "Add", {cycle ? "v_out" : "v_in", "a"}, {"t"}, "b_add");
        else
            ModelBuilder::addNode(body, "Relu", {"t"}, {"v_out"}, "b_relu");
    }
    ModelBuilder::valueInfo(body->mutable_output(), "cond_in", {}, onnx::TensorProto::BOOL);
    ModelBuilder::valueInfo(body->mutable_output(), "v_out", {3});
    b.output("v_final", {0});
    return b;
}

QString kinds(const FunctionGraph& g) {
    QStringList k;
    for (const Apply* n : g.toposort()) k << QString::fromStdString(n->op().kind());
    return k.join(' ');
}

QString text(const std::map<std::string, int>& m) {
    QStringList out;
    for (const auto& [k, n] : m) out << QString("%1=%2").arg(QString::fromStdString(k)).arg(n);
    return out.join(' ');
}
} // namespace

class TestOnnx : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (!QFile::exists(QString::fromStdString(corpus("MANIFEST.md"))))
            QFAIL(qPrintable("the ONNX corpus is not at " + QString::fromStdString(kCorpus) +
                             " (configure with -DPASSLENS_CORPUS_DIR=<folder>)"));
    }

    void cnnModels_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("nodes");
        QTest::newRow("resnet18") << "resnet18.onnx" << 94;
        QTest::newRow("squeezenet1_1") << "squeezenet1_1.onnx" << 120;
        QTest::newRow("mobilenet_v2") << "mobilenet_v2.onnx" << 209;
        QTest::newRow("mlp") << "mlp.onnx" << 12;
    }
    void cnnModels() {
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

    void resnet18Shapes() {
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
    void rebindBatch() {
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

    void transformer() {
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

    void lstmKeepsOnnxLstm() {
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

    void shapeOps() {
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

    void paddleOcrConstantsAndOnnxOps() {
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
        for (const Variable* v : lg.graph->constants())
            elements += static_cast<std::size_t>(v->constant()->numElements());
        QVERIFY(elements > 1170000);
        QCOMPARE(lg.graph->inputs()[0]->type().str(), std::string("float32[?,3,?,?]"));
        const Apply* resize = nullptr;
        for (const Apply* n : lg.graph->toposort())
            if (n->op().kind() == "OnnxResize") resize = n;
        QCOMPARE(resize->op().attrs()["mode"].get<std::string>(), std::string("nearest"));
    }

    void sileroNestedGraphs() {
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
    void reshapeZeroCopiesTheInputDim() {
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

    void opsetDependentAttributes() {
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

    void unsortedUnnamedDuplicateNodes() {
        ModelBuilder b(13);
        b.input("x", {3});
        b.node("Relu", {"b"}, {"y"}, "dup");
        b.node("Neg", {"a"}, {"b"}, "dup");
        b.node("Exp", {"x"}, {"a"}, "");
        b.output("y", {0});
        LoadedGraph lg = b.import();
        QCOMPARE(kinds(*lg.graph), QString("Elemwise Elemwise Elemwise"));
        const auto& t = lg.graph->toposort();
        QCOMPARE(t[0]->op().str(), std::string("Elemwise{exp}"));
        QCOMPARE(t[1]->name(), std::string("dup"));
        QCOMPARE(t[2]->name(), std::string("dup"));
        QVERIFY(t[1]->id() != t[2]->id());
    }

    void unusedDomainsAndNewerVersions() {
        ModelBuilder b(13);
        auto* ms = b.m.add_opset_import();
        ms->set_domain("com.microsoft");
        ms->set_version(1);
        b.input("x", {3});
        b.node("Relu", {"x"}, {"y"});
        b.output("y", {0});
        QCOMPARE(b.import().graph->nodeCount(), std::size_t(1));
        ModelBuilder nb(onnxLatestKnownOpset() + 3, 99);
        nb.input("x", {3});
        nb.node("Relu", {"x"}, {"y"});
        nb.output("y", {0});
        LoadedGraph lg = nb.import();
        QCOMPARE(lg.graph->nodeCount(), std::size_t(1));
        QCOMPARE(lg.warnings.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(lg.warnings[0]).contains("newer than libonnx knows"));
    }

    void externalData() {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        auto build = [&] {
            ModelBuilder b(13);
            b.input("x", {2});
            auto* w = b.m.mutable_graph()->add_initializer();
            w->set_name("w");
            w->set_data_type(onnx::TensorProto::FLOAT);
            w->add_dims(2);
            w->set_data_location(onnx::TensorProto::EXTERNAL);
            auto* loc = w->add_external_data();
            loc->set_key("location");
            loc->set_value("weights.bin");
            auto* off = w->add_external_data();
            off->set_key("offset");
            off->set_value("4");
            b.node("Add", {"x", "w"}, {"y"});
            b.output("y", {0});
            return b;
        };
        // missing file: the graph loads, the constant is marked missing, a warning names it
        LoadedGraph missing = build().import(d);
        QCOMPARE(missing.graph->nodeCount(), std::size_t(1));
        const Variable* w = missing.graph->toposort()[0]->input(1);
        QVERIFY(w->isConstant());
        QVERIFY(!w->constant()->loaded());
        QVERIFY(QString::fromStdString(w->constant()->missing).contains("weights.bin"));
        int naming = 0;
        for (const auto& wmsg : missing.warnings) naming += QString::fromStdString(wmsg).contains("tensor 'w'");
        QCOMPARE(naming, 1);
        // present file, read at the offset
        {
            std::ofstream f(d + "/weights.bin", std::ios::binary);
            const float vals[3] = {9.0f, 1.5f, -2.0f};
            f.write(reinterpret_cast<const char*>(vals), sizeof vals);
        }
        LoadedGraph ok = build().import(d);
        const Variable* w2 = ok.graph->toposort()[0]->input(1);
        QVERIFY(w2->constant()->loaded());
        QCOMPARE(w2->constant()->at(0), 1.5);
        QCOMPARE(w2->constant()->at(1), -2.0);
        QVERIFY(ok.warnings.empty());
    }

    void badModels() {
        {
            ModelBuilder b(13);
            b.input("x", {3});
            b.node("Relu", {"nope"}, {"y"}, "r1");
            b.output("y", {0});
            const QString e = errorOf([&] { b.import(); });
            QVERIFY2(e.contains("synthetic.onnx") && e.contains("'r1'") && e.contains("'nope'"), qPrintable(e));
        }
        {
            ModelBuilder b(13);
            b.input("x", {3});
            b.node("Add", {"x", "c"}, {"a"}, "n_a");
            b.node("Relu", {"a"}, {"b"}, "n_b");
            b.node("Neg", {"b"}, {"c"}, "n_c");
            b.output("c", {0});
            const QString e = errorOf([&] { b.import(); });
            QVERIFY2(e.contains("cycle") && e.contains("n_a") && e.contains("n_b") && e.contains("n_c"), qPrintable(e));
        }
        {
            ModelBuilder b(13);
            b.input("x", {3});
            b.node("Relu", {"x"}, {"y"}, "first");
            b.node("Neg", {"x"}, {"y"}, "second");
            b.output("y", {0});
            const QString e = errorOf([&] { b.import(); });
            QVERIFY2(e.contains("synthetic.onnx") && e.contains("'y'") &&
                         (e.contains("produced twice") || e.contains("multiple times")),
                     qPrintable(e));
        }
        {
            ModelBuilder b(13);
            b.input("x", {2, 3});
            b.input("z", {4, 3});
            b.node("Add", {"x", "z"}, {"y"}, "badadd");
            b.output("y", {0});
            const QString e = errorOf([&] { b.import(); });
            QVERIFY2(e.contains("badadd") || e.contains("checker"), qPrintable(e));
        }
        QVERIFY(
            errorOf([] { importOnnxBytes("<!DOCTYPE html><html></html>", "page.onnx", "."); }).contains("page.onnx"));
        const QString e = errorOf([] { importOnnxBytes(std::string("\x08\x07\x12", 3), "short.onnx", "."); });
        QVERIFY2(e.contains("short.onnx"), qPrintable(e));
    }

    // Every tensor's data is checked against its dims and element type before the ONNX checker
    // and shape inference read it (libonnx's ParseData reads a raw_data of the wrong length out
    // of bounds): initializers, Constant and ConstantOfShape values, tensors in If branches,
    // negative and overflowing dims; each refusal names the place, the tensor and the reason.
    void tensorDataChecked() {
        for (std::size_t bytes : {std::size_t(0), std::size_t(4), std::size_t(24)}) {
            const QString e = errorOf([&] { reshapeWithRawShape(bytes).import(); });
            QVERIFY2(e == QString("synthetic.onnx: graph initializer 0: tensor 'shape': raw_data has %1 bytes, dims "
                                  "[2] of INT64 need 16")
                              .arg(bytes),
                     qPrintable(e));
        }
        {
            ModelBuilder b = reshapeWithRawShape(16);
            const std::int64_t shape[2] = {3, 2};
            b.m.mutable_graph()->mutable_initializer(0)->set_raw_data(
                std::string(reinterpret_cast<const char*>(shape), sizeof shape));
            LoadedGraph lg = b.import();
            QCOMPARE(kinds(*lg.graph), QString("Reshape"));
            QCOMPARE(lg.graph->outputs()[0]->type().str(), std::string("float32[3,2]"));
        }
        auto int64Tensor = [](onnx::TensorProto* t, const std::string& name, std::vector<std::int64_t> dims,
                              std::vector<std::int64_t> vals) {
            t->set_name(name);
            t->set_data_type(onnx::TensorProto::INT64);
            for (auto d : dims) t->add_dims(d);
            for (auto v : vals) t->add_int64_data(v);
        };
        auto tensorAttr = [](onnx::NodeProto* n, const std::string& name) {
            auto* a = n->add_attribute();
            a->set_name(name);
            a->set_type(onnx::AttributeProto::TENSOR);
            return a->mutable_t();
        };
        { // a Constant's typed field shorter than its dims
            ModelBuilder b(13);
            b.input("x", {2, 3});
            int64Tensor(tensorAttr(b.node("Constant", {}, {"shape"}, "c1"), "value"), "shape_value", {3}, {6});
            b.node("Reshape", {"x", "shape"}, {"y"}, "r1");
            b.output("y", {0});
            const QString e = errorOf([&] { b.import(); });
            QVERIFY2(e == "synthetic.onnx: node 0 'c1' (Constant) attribute 'value': tensor 'shape_value': int64_data "
                          "holds 1 values, dims [3] of INT64 need 3",
                     qPrintable(e));
        }
        { // ConstantOfShape's value with a raw_data too short for one float
            ModelBuilder b(13);
            b.initInt64("dims", {2, 2});
            auto* v = tensorAttr(b.node("ConstantOfShape", {"dims"}, {"y"}, "fill"), "value");
            v->set_name("v");
            v->set_data_type(onnx::TensorProto::FLOAT);
            v->add_dims(1);
            v->set_raw_data(std::string(2, '\0'));
            b.output("y", {0, 1});
            const QString e = errorOf([&] { b.import(); });
            QVERIFY2(e == "synthetic.onnx: node 0 'fill' (ConstantOfShape) attribute 'value': tensor 'v': raw_data has "
                          "2 bytes, dims [1] of FLOAT need 4",
                     qPrintable(e));
        }
        { // tensors inside If branches: a Constant's value, a branch initializer
            for (bool inInitializer : {false, true}) {
                ModelBuilder b(13);
                b.input("c", {}, onnx::TensorProto::BOOL);
                b.input("x", {2, 3});
                auto* ifNode = b.node("If", {"c"}, {"y"}, "if1");
                auto* thenG = ModelBuilder::graphAttr(ifNode, "then_branch", "then");
                ModelBuilder::addNode(thenG, "Relu", {"x"}, {"t"}, "relu1");
                ModelBuilder::valueInfo(thenG->mutable_output(), "t", {2, 3});
                auto* elseG = ModelBuilder::graphAttr(ifNode, "else_branch", "else");
                if (inInitializer) {
                    int64Tensor(elseG->add_initializer(), "s", {2}, {6});
                } else {
                    int64Tensor(tensorAttr(ModelBuilder::addNode(elseG, "Constant", {}, {"s"}, "k"), "value"), "s", {2},
                                {6});
                }
                ModelBuilder::addNode(elseG, "Reshape", {"x", "s"}, {"e"}, "reshape2");
                ModelBuilder::valueInfo(elseG->mutable_output(), "e", {2, 3});
                b.output("y", {0, 1});
                const QString e = errorOf([&] { b.import(); });
                const QString where = inInitializer
                                          ? "node 0 'if1' (If) attribute 'else_branch' initializer 0: tensor 's'"
                                          : "node 0 'if1' (If) attribute 'else_branch': node 0 'k' (Constant) "
                                            "attribute 'value': tensor 's'";
                QVERIFY2(e == "synthetic.onnx: " + where + ": int64_data holds 1 values, dims [2] of INT64 need 2",
                         qPrintable(e));
            }
        }
        { // negative dims, element counts and byte sizes beyond 64 bits
            const std::vector<std::pair<std::vector<std::int64_t>, QString>> cases = {
                {{2, -1}, "dim 1 of dims [2,-1] is negative"},
                {{std::int64_t(1) << 32, std::int64_t(1) << 32},
                 "dims [4294967296,4294967296] hold more than 2^63 elements"},
                {{std::int64_t(1) << 61}, "dims [2305843009213693952] of INT64 need more than 2^63 bytes"},
            };
            for (const auto& [dims, why] : cases) {
                ModelBuilder b = reshapeWithRawShape(16);
                auto* t = b.m.mutable_graph()->mutable_initializer(0);
                t->clear_dims();
                for (auto d : dims) t->add_dims(d);
                const QString e = errorOf([&] { b.import(); });
                QVERIFY2(e == "synthetic.onnx: graph initializer 0: tensor 'shape': " + why, qPrintable(e));
            }
        }
    }

    // External data: a missing file is named as resolved (absolute, normalised) in the warnings
    // and the constant is marked missing; a malformed offset or a length that does not fit the
    // dims is refused; a file too short is reported without allocating what the dims claim.
    void externalDataChecked() {
        QTemporaryDir dir;
        const std::string d = dir.path().toStdString();
        auto build = [&](std::vector<std::pair<std::string, std::string>> kv, std::int64_t n) {
            ModelBuilder b(13);
            b.input("x", {n});
            auto* w = b.m.mutable_graph()->add_initializer();
            w->set_name("w");
            w->set_data_type(onnx::TensorProto::FLOAT);
            w->add_dims(n);
            w->set_data_location(onnx::TensorProto::EXTERNAL);
            for (auto& [k, v] : kv) {
                auto* e = w->add_external_data();
                e->set_key(k);
                e->set_value(v);
            }
            b.node("Add", {"x", "w"}, {"y"}, "add1");
            b.output("y", {0});
            return b;
        };
        const std::string resolved = std::filesystem::path(d + "/nothere.bin").lexically_normal().string();
        LoadedGraph missing = build({{"location", "nothere.bin"}}, 2).import(d + "/sub/..");
        QCOMPARE(missing.graph->nodeCount(), std::size_t(1));
        QVERIFY(!missing.graph->toposort()[0]->input(1)->constant()->loaded());
        QCOMPARE(missing.warnings.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(missing.warnings[0]),
                 QString::fromStdString("synthetic.onnx: ONNX checker stopped at a missing external data file '" +
                                        resolved + "'; its per-node checks are made during the import"));
        QCOMPARE(QString::fromStdString(missing.warnings[1]),
                 QString::fromStdString("synthetic.onnx: external data file '" + resolved +
                                        "' of tensor 'w' cannot be read; nodes using it cannot be executed"));
        {
            std::ofstream f(d + "/short.bin", std::ios::binary);
            f.write("\0\0\0\0\0\0\0\0", 8);
        }
        // dims of 2^40 floats in a file of 8 bytes: reported, nothing allocated
        LoadedGraph shortFile = build({{"location", "short.bin"}}, std::int64_t(1) << 40).import(d);
        QCOMPARE(shortFile.warnings.size(), std::size_t(1));
        QVERIFY2(QString::fromStdString(shortFile.warnings[0])
                     .contains("(8 bytes) is too short for tensor 'w' (4398046511104 bytes at offset 0)"),
                 shortFile.warnings[0].c_str());
        QString e = errorOf([&] { build({{"location", "short.bin"}, {"offset", "4x"}}, 1).import(d); });
        QVERIFY2(e == "synthetic.onnx: graph initializer 0: tensor 'w': external data offset '4x' is not a "
                      "non-negative integer",
                 qPrintable(e));
        e = errorOf([&] { build({{"location", "short.bin"}, {"length", "4"}}, 2).import(d); });
        QVERIFY2(e == "synthetic.onnx: graph initializer 0: tensor 'w': external data length 4 bytes, dims [2] of "
                      "FLOAT need 8",
                 qPrintable(e));
        e = errorOf([&] { build({}, 2).import(d); });
        QVERIFY2(e == "synthetic.onnx: graph initializer 0: tensor 'w': has external data without a location",
                 qPrintable(e));
        LoadedGraph ok = build({{"location", "short.bin"}, {"length", "8"}}, 2).import(d);
        QVERIFY(ok.warnings.empty());
        QVERIFY(ok.graph->toposort()[0]->input(1)->constant()->loaded());
    }

    // If / Loop branches whose outputs are outer-scope values or the branch's own inputs (valid
    // ONNX): the outer value is captured as an explicit input (core/README.md, nested graphs),
    // also when its producer comes after the If in the node list.
    void branchOutputsFromOuterScope() {
        for (bool negLast : {false, true}) {
            LoadedGraph lg = ifReturningOuterValue(negLast).import();
            const FunctionGraph& g = *lg.graph;
            QCOMPARE(kinds(g), QString("Elemwise OnnxIf"));
            const Apply* ifNode = g.toposort()[1];
            QVERIFY(ifNode->op().attrs()["outer_scope"] == nlohmann::json({"a", "x"}));
            QCOMPARE(ifNode->nin(), 3);
            QCOMPARE(ifNode->input(1), g.toposort()[0]->output());
            const FunctionGraph& thenG = *ifNode->op().subgraphs()[0].graph;
            QCOMPARE(ifNode->op().subgraphs()[0].attribute, std::string("then_branch"));
            QCOMPARE(thenG.nodeCount(), std::size_t(0));
            QCOMPARE(thenG.inputs().size(), std::size_t(1));
            QCOMPARE(thenG.outputs()[0], thenG.inputs()[0]);
            QCOMPARE(thenG.inputs()[0]->name(), std::string("a"));
            QCOMPARE(g.outputs()[0]->type().str(), std::string("float32[3]"));
            // the Neg is used (by the If), so nothing is reported as pruned
            QCOMPARE(lg.warnings.size(), std::size_t(negLast ? 1 : 0));
        }
        LoadedGraph lg = loopWithOuterValue("add relu").import();
        QVERIFY2(lg.warnings.empty(), lg.warnings.empty() ? "" : lg.warnings[0].c_str());
        QCOMPARE(kinds(*lg.graph), QString("Elemwise OnnxLoop"));
        const Apply* loop = lg.graph->toposort()[1];
        QVERIFY(loop->op().attrs()["outer_scope"] == nlohmann::json({"a"}));
        QCOMPARE(loop->op().attrs()["n_onnx_inputs"].get<int>(), 3);
        const FunctionGraph& body = *loop->op().subgraphs()[0].graph;
        QCOMPARE(body.inputs().size(), std::size_t(4)); // i, cond_in, v_in, captured a
        QCOMPARE(body.outputs()[0], body.inputs()[1]);  // cond_out is cond_in
        QCOMPARE(kinds(body), QString("Elemwise Elemwise"));
    }

    // Node lists out of topological order, in the graph or a Loop body, are sorted with a
    // warning naming the graph or the subgraph's place; a real cycle is refused with its nodes.
    void unsortedNodesInSubgraphs() {
        ModelBuilder b = loopWithOuterValue("relu add");
        std::swap(*b.m.mutable_graph()->mutable_node(0), *b.m.mutable_graph()->mutable_node(1)); // Loop before Neg
        LoadedGraph lg = b.import();
        QCOMPARE(kinds(*lg.graph), QString("Elemwise OnnxLoop"));
        QCOMPARE(lg.warnings.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(lg.warnings[0]),
                 QString("synthetic.onnx: graph 'synthetic': the node list is not topologically sorted (as ONNX "
                         "requires); accepted, node numbers below refer to the sorted order"));
        QCOMPARE(QString::fromStdString(lg.warnings[1]),
                 QString("synthetic.onnx: node 1 'loop1' (Loop) attribute 'body': the node list is not topologically "
                         "sorted (as ONNX requires); accepted, node numbers in it below refer to the sorted order"));
        const FunctionGraph& body = *lg.graph->toposort()[1]->op().subgraphs()[0].graph;
        QCOMPARE(body.toposort()[0]->op().str(), std::string("Elemwise{add}"));
        QCOMPARE(body.toposort()[1]->op().str(), std::string("Elemwise{relu}"));
        const QString e = errorOf([] { loopWithOuterValue("add relu", true).import(); });
        QVERIFY2(e == "synthetic.onnx: node 1 'loop1' (Loop) attribute 'body': the graph has a cycle: node 0 'b_add' "
                      "(Add) -> node 1 'b_relu' (Relu) -> node 0 'b_add' (Add)",
                 qPrintable(e));
    }

    // Attributes and inputs of mapped ops are checked against the spec and the input ranks
    // before any mapping reads them (one helper per kind of attribute: perm, axes, pads,
    // kernel_shape / strides / dilations, split sizes, required and typed attributes, input
    // ranks); a Transpose perm shorter than the rank read past its end. Each refusal names the
    // file, the node and the attribute or input.
    void attributesChecked() {
        struct Case {
            const char* what;
            std::function<void(ModelBuilder&)> build;
            int opset;
            QString message; // after "synthetic.onnx: node 0 'n1' (Op): "
        };
        auto ints = [](onnx::NodeProto* n, const char* name, std::vector<std::int64_t> v) {
            ModelBuilder::intsAttr(n, name, v);
        };
        auto conv = [](ModelBuilder& b) {
            b.input("x", {1, 1, 5, 5});
            auto* w = b.m.mutable_graph()->add_initializer();
            w->set_name("w");
            w->set_data_type(onnx::TensorProto::FLOAT);
            for (auto d : {1, 1, 3, 3}) w->add_dims(d);
            for (int i = 0; i < 9; ++i) w->add_float_data(1.0f);
            return b.node("Conv", {"x", "w"}, {"y"}, "n1");
        };
        const std::vector<Case> cases = {
            {"short perm",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3, 4});
                 ints(b.node("Transpose", {"x"}, {"y"}, "n1"), "perm", {1, 0});
             },
             13, "attribute 'perm' has 2 entries, the input has rank 3"},
            {"repeated perm",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3, 4});
                 ints(b.node("Transpose", {"x"}, {"y"}, "n1"), "perm", {0, 0, 1});
             },
             13, "attribute 'perm': axis 0 appears twice"},
            {"perm out of range",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3, 4});
                 ints(b.node("Transpose", {"x"}, {"y"}, "n1"), "perm", {0, 1, 3});
             },
             13, "attribute 'perm': entry 3 out of range for rank 3"},
            {"perm of another type (checker skipped)",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3});
                 ModelBuilder::intAttr(b.node("Transpose", {"x"}, {"y"}, "n1"), "perm", 1);
             },
             onnxLatestKnownOpset() + 1, "attribute 'perm' must be INTS, is INT"},
            {"repeated unsqueeze axes",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3});
                 ints(b.node("Unsqueeze", {"x"}, {"y"}, "n1"), "axes", {0, -4});
             },
             11, "axes: axis 0 is named twice"},
            {"squeeze of a dim > 1",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3, 1});
                 ints(b.node("Squeeze", {"x"}, {"y"}, "n1"), "axes", {1});
             },
             11, "axes: axis 1 of float32[2,3,1] has size 3, it cannot be squeezed"},
            {"conv pads",
             [&](ModelBuilder& b) {
                 ints(conv(b), "pads", {1, 1});
             },
             13, "attribute 'pads' has 2 values, 4 needed (begin and end of 2 spatial axes)"},
            {"conv stride 0",
             [&](ModelBuilder& b) {
                 ints(conv(b), "strides", {0, 1});
             },
             13, "attribute 'strides' has value 0, it must be at least 1"},
            {"conv kernel_shape",
             [&](ModelBuilder& b) {
                 ints(conv(b), "kernel_shape", {2, 2});
             },
             13, "attribute 'kernel_shape' [2,2] does not match the kernel float32[1,1,3,3]"},
            {"pool pads",
             [&](ModelBuilder& b) {
                 b.input("x", {1, 1, 4, 4});
                 auto* n = b.node("MaxPool", {"x"}, {"y"}, "n1");
                 ints(n, "kernel_shape", {2, 2});
                 ints(n, "pads", {0, 0});
             },
             13, "attribute 'pads' has 2 values, 4 needed (begin and end of 2 spatial axes)"},
            {"split sizes",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 6});
                 auto* n = b.node("Split", {"x"}, {"y", "z"}, "n1");
                 ModelBuilder::intAttr(n, "axis", 1);
                 ints(n, "split", {1, 2});
             },
             11, "split sizes sum to 3, the axis has 6"},
            {"gemm of a vector",
             [&](ModelBuilder& b) {
                 b.input("a", {3});
                 b.input("c", {3, 4});
                 b.node("Gemm", {"a", "c"}, {"y"}, "n1");
             },
             13, "input 0 must have rank 2, has type float32[3]"},
            {"slice ends shorter than starts",
             [&](ModelBuilder& b) {
                 b.input("x", {4, 4});
                 b.initInt64("starts", {0, 0});
                 b.initInt64("ends", {1});
                 b.node("Slice", {"x", "starts", "ends"}, {"y"}, "n1");
             },
             13, "input 2 has type int64[1], starts has 2 entries"},
            {"softmax axis",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3});
                 ModelBuilder::intAttr(b.node("Softmax", {"x"}, {"y"}, "n1"), "axis", 5);
             },
             13, "attribute 'axis': 5 out of range for rank 2"},
            {"expand to an incompatible shape",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3});
                 b.initInt64("s", {4, 3});
                 b.node("Expand", {"x", "s"}, {"y"}, "n1");
             },
             13, "cannot expand float32[2,3] to shape [4,3]"},
            {"gather index out of range",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3});
                 b.initInt64("i", {5});
                 b.node("Gather", {"x", "i"}, {"y"}, "n1");
             },
             13, "index 5 out of range for axis 0 of float32[2,3]"},
            {"reshape with two -1",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3});
                 b.initInt64("s", {-1, -1});
                 b.node("Reshape", {"x", "s"}, {"y"}, "n1");
             },
             13, "shape [-1,-1] has more than one -1"},
            {"empty name for a required input (checker skipped)",
             [&](ModelBuilder& b) {
                 b.input("x", {2, 3});
                 b.node("Max", {"x", ""}, {"y"}, "n1");
             },
             onnxLatestKnownOpset() + 1, "Max input 1 is required, the node gives an empty name"},
            {"no inputs (checker skipped)",
             [&](ModelBuilder& b) { ModelBuilder::intAttr(b.node("Concat", {}, {"y"}, "n1"), "axis", 0); },
             onnxLatestKnownOpset() + 1, "Concat needs 1 inputs, got 0"},
            {"required attribute missing (checker skipped)",
             [&](ModelBuilder& b) {
                 b.input("x", {2});
                 b.node("Cast", {"x"}, {"y"}, "n1");
             },
             onnxLatestKnownOpset() + 1, "attribute 'to' is required"},
        };
        for (const Case& c : cases) {
            ModelBuilder b(c.opset);
            c.build(b);
            b.output("y", {});
            const QString e = errorOf([&] { b.import(); });
            const QString op = QString::fromStdString(b.m.graph().node(0).op_type());
            QVERIFY2(e == "synthetic.onnx: node 0 'n1' (" + op + "): " + c.message,
                     qPrintable(QString(c.what) + ": " + e));
        }
        ModelBuilder twice(onnxLatestKnownOpset() + 1);
        twice.input("x", {2});
        twice.input("x", {3});
        twice.node("Relu", {"x"}, {"y"}, "n1");
        twice.output("y", {});
        const QString e = errorOf([&] { twice.import(); });
        QVERIFY2(e == "synthetic.onnx: graph input 1 'x': is declared twice", qPrintable(e));
    }

    // Attributes whose type or presence changed across opsets keep their old forms: Concat-1
    // without axis joins on axis 1, Cast-1 names its type as a string and Reshape-1 takes the
    // shape as an attribute (both kept as Onnx ops).
    void oldOpsetAttributeForms() {
        ModelBuilder b(3, 3);
        b.input("a", {2, 3});
        b.input("c", {2, 4});
        b.node("Concat", {"a", "c"}, {"j"}, "cat");
        auto* cast = b.node("Cast", {"j"}, {"d"}, "cast");
        auto* to = cast->add_attribute();
        to->set_name("to");
        to->set_type(onnx::AttributeProto::STRING);
        to->set_s("DOUBLE");
        auto* reshape = b.node("Reshape", {"d"}, {"y"}, "reshape");
        ModelBuilder::intsAttr(reshape, "shape", {14});
        b.output("y", {0});
        LoadedGraph lg = b.import();
        QCOMPARE(kinds(*lg.graph), QString("Join OnnxCast OnnxReshape"));
        QCOMPARE(lg.graph->toposort()[0]->op().str(), std::string("Join{axis=1}"));
        QCOMPARE(lg.graph->toposort()[0]->output()->type().str(), std::string("float32[2,7]"));
        // BatchNormalization-7 with spatial=0: per-(C, H) statistics of rank 2, an Onnx op
        ModelBuilder bn(7);
        bn.input("x", {1, 2, 3});
        for (const char* p : {"scale", "bias", "mean", "var"}) {
            auto* t = bn.m.mutable_graph()->add_initializer();
            t->set_name(p);
            t->set_data_type(onnx::TensorProto::FLOAT);
            t->add_dims(2);
            t->add_dims(3);
            for (int i = 0; i < 6; ++i) t->add_float_data(1.0f);
        }
        ModelBuilder::intAttr(bn.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn1"),
                              "spatial", 0);
        bn.output("y", {0, 1, 2});
        QCOMPARE(kinds(*bn.import().graph), QString("OnnxBatchNormalization"));
    }

    // Names that are not valid UTF-8 (node, value, graph names, string attributes) are escaped
    // as \xNN on import, so graph JSON can be written (nlohmann's type_error 316 otherwise); an
    // escaped value name equal to another value's name is refused.
    void invalidUtf8NamesEscaped() {
        ModelBuilder b(13);
        b.m.mutable_graph()->set_name("g\xc3");
        b.input("x\xff", {3});
        b.node("Relu", {"x\xff"}, {"r\xfe\xfd"}, "relu\xff");
        auto* custom = b.node("Frob", {"r\xfe\xfd"}, {"y"}, "frob");
        custom->set_domain("example.com");
        auto* a = custom->add_attribute();
        a->set_name("mode");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s("fast\xe2\x82");
        auto* os = b.m.add_opset_import();
        os->set_domain("example.com");
        os->set_version(1);
        b.output("y", {0});
        LoadedGraph lg = b.import();
        const FunctionGraph& g = *lg.graph;
        QCOMPARE(g.name, std::string("g\\xC3"));
        QCOMPARE(g.inputs()[0]->name(), std::string("x\\xFF"));
        const Apply* relu = g.toposort()[0];
        QCOMPARE(relu->name(), std::string("relu\\xFF"));
        QCOMPARE(relu->output()->name(), std::string("r\\xFE\\xFD"));
        QCOMPARE(g.toposort()[1]->op().attrs()["mode"].get<std::string>(), std::string("fast\\xE2\\x82"));
        QCOMPARE(lg.warnings.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(lg.warnings[0]),
                 QString("synthetic.onnx: 7 name(s) are not valid UTF-8; their invalid bytes are written as \\xNN"));
        const std::string text = writeGraphJson(g).dump();
        QVERIFY(text.find("relu\\\\xFF") != std::string::npos);
        // "v\xff" escapes to the name of another value
        ModelBuilder c(13);
        c.input("x", {3});
        c.node("Relu", {"x"}, {"v\\xFF"});
        c.node("Neg", {"x"}, {"v\xff"});
        c.node("Add", {"v\\xFF", "v\xff"}, {"y"});
        c.output("y", {0});
        const QString e = errorOf([&] { c.import(); });
        QVERIFY2(e == "synthetic.onnx: value name 'v\\xFF' (bytes that are not UTF-8, escaped) is also the name of "
                      "another value",
                 qPrintable(e));
    }

    void truncatedCorpusModel() {
        std::ifstream in(corpus("lstm.onnx"), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        int rejected = 0;
        for (std::size_t cut : {std::size_t(1), std::size_t(10), std::size_t(100), std::size_t(1000), bytes.size() / 3,
                                bytes.size() / 2, bytes.size() - 100, bytes.size() - 1}) {
            const QString e = errorOf([&] { importOnnxBytes(bytes.substr(0, cut), "cut.onnx", "."); });
            QVERIFY2(e.startsWith("cut.onnx: "), qPrintable(QString("cut at %1: %2").arg(cut).arg(e)));
            ++rejected;
        }
        QCOMPARE(rejected, 8);
    }

    // Inputs the ONNX fuzz target (fuzz/fuzz_onnx.cpp) found, kept in tests/fixtures/fuzz/onnx.
    // ONNX sequence and optional values: graph inputs of those types import with types of their
    // own kind (printed and parsed as seq(...) / optional(...)), the ops on them stay Onnx ops,
    // and a map input is refused with the reason.
    void sequenceAndOptionalValues() {
        ModelBuilder b(16);
        auto* s = b.m.mutable_graph()->add_input();
        s->set_name("s");
        auto* et = s->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
        et->set_elem_type(onnx::TensorProto::FLOAT);
        et->mutable_shape()->add_dim()->set_dim_param("n");
        b.input("x", {3});
        b.node("SequenceInsert", {"s", "x"}, {"s2"}, "insert");
        b.node("SequenceLength", {"s2"}, {"len"}, "length");
        b.node("Optional", {"x"}, {"o"}, "opt");
        b.node("OptionalHasElement", {"o"}, {"has"}, "has");
        auto* s2 = b.m.mutable_graph()->add_output();
        s2->set_name("s2");
        s2->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
            onnx::TensorProto::FLOAT);
        b.valueInfo(b.m.mutable_graph()->mutable_output(), "len", {}, onnx::TensorProto::INT64);
        b.valueInfo(b.m.mutable_graph()->mutable_output(), "has", {}, onnx::TensorProto::BOOL);
        const LoadedGraph lg = b.import();
        const FunctionGraph& g = *lg.graph;
        QCOMPARE(g.inputs()[0]->type().str(), std::string("seq(float32[?])"));
        QVERIFY(g.inputs()[0]->type().kind() == Type::Kind::Sequence);
        QCOMPARE(g.inputs()[0]->type().elementType().str(), std::string("float32[?]"));
        QVERIFY2(g.outputs()[0]->type().str().starts_with("seq(float32["), g.outputs()[0]->type().str().c_str());
        QCOMPARE(g.outputs()[1]->type().str(), std::string("int64[]"));
        QCOMPARE(g.outputs()[2]->type().str(), std::string("bool[]"));
        QStringList k = kinds(g).split(' ');
        k.sort();
        QCOMPARE(k.join(' '), QString("OnnxOptional OnnxOptionalHasElement OnnxSequenceInsert OnnxSequenceLength"));
        for (const Apply* n : g.toposort())
            if (n->op().kind() == "OnnxOptional")
                QCOMPARE(n->output(0)->type().str(), std::string("optional(float32[3])"));

        // the type strings parse back; kinds never mix in compatible()
        for (const char* t : {"seq(float32[?])", "optional(seq(int64[*]))", "optional(float32[2,3])"})
            QCOMPARE(Type::parse(t).str(), std::string(t));
        QVERIFY(Type::parse("seq(float32[?])").compatible(Type::parse("seq(float32[4])")));
        QVERIFY(!Type::parse("seq(float32[4])").compatible(Type::parse("float32[4]")));
        QVERIFY(!Type::parse("seq(float32[4])").compatible(Type::parse("optional(float32[4])")));
        QVERIFY(!(Type::parse("seq(float32[4])") == Type::parse("seq(float32[5])")));
        QVERIFY(Type::parse("seq(float32[4])").hash() == Type::sequence(Type::parse("float32[4]")).hash());
        QVERIFY(errorOf([] { (void)Type::parse("seq(float32[4]"); }).contains("missing ')'"));

        // a map input (ai.onnx.ml's ZipMap outputs) has no PassLens type
        ModelBuilder mb(16);
        auto* mi = mb.m.mutable_graph()->add_input();
        mi->set_name("m");
        mi->mutable_type()->mutable_map_type()->set_key_type(onnx::TensorProto::INT64);
        mi->mutable_type()->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(
            onnx::TensorProto::FLOAT);
        mb.node("Identity", {"m"}, {"y"});
        *mb.m.mutable_graph()->add_output() = *mi;
        mb.m.mutable_graph()->mutable_output(0)->set_name("y");
        const QString err = errorOf([&] { (void)mb.import(); });
        QVERIFY2(err.contains("input 0 'm'") && err.contains("only tensor, sequence and optional inputs"),
                 qPrintable(err));
    }

    // A model importing only other domains (the training-preview test cases) imports; its ops
    // are Onnx host ops naming their domain. A model importing no domain at all is refused.
    void otherDomainsOnly() {
        ModelBuilder b(1);
        b.m.mutable_opset_import(0)->set_domain("com.example");
        b.input("x", {3});
        b.node("Frobnicate", {"x"}, {"y"}, "frob")->set_domain("com.example");
        b.valueInfo(b.m.mutable_graph()->mutable_output(), "y", {3});
        const LoadedGraph lg = b.import();
        QCOMPARE(kinds(*lg.graph), QString("OnnxFrobnicate"));
        QCOMPARE(lg.graph->toposort()[0]->op().attrs()["domain"].get<std::string>(), std::string("com.example"));
        b.m.clear_opset_import();
        const QString err = errorOf([&] { (void)b.import(); });
        QVERIFY2(err.contains("no opset for the default ONNX domain"), qPrintable(err));
    }

    void fuzzFindings() {
        const std::string dir = std::string(PASSLENS_SOURCE_DIR) + "/tests/fixtures/fuzz/onnx/";
        // shape_ops.onnx with a Reshape target shape whose element count overflows int64
        // (signed overflow in the Reshape type rule)
        const QString reshape = errorOf([&] { importOnnxFile(dir + "reshape-shape-overflow.onnx"); });
        QVERIFY2(reshape.startsWith(QString::fromStdString(dir + "reshape-shape-overflow.onnx: ")),
                 qPrintable(reshape));
        QVERIFY2(reshape.contains("has more elements than a 64-bit count holds"), qPrintable(reshape));
    }
};

QTEST_GUILESS_MAIN(TestOnnx)
#include "tst_onnx.moc"
