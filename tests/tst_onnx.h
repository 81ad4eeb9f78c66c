#pragma once
// ONNX import: every corpus model, opset-dependent mappings, external data, bad models.
// The helpers and the test class of the one executable tst_onnx, whose test functions are
// defined in tst_onnx*.cpp.
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

inline std::string corpus(const std::string& f) { return kCorpus + "/" + f; }

inline onnx::ModelProto readModel(const std::string& path) {
    onnx::ModelProto m;
    std::ifstream in(path, std::ios::binary);
    m.ParseFromIstream(&in);
    return m;
}

// Op kinds the importer must produce for one ONNX node of a CNN (OPS.md import rules):
// Conv -> AbstractConv2d (+ DimShuffle and Elemwise{add} for the bias), Gemm -> Alloc (of C)
// + Gemm (+ DimShuffle per transposed operand), GlobalAveragePool -> CAReduce + Elemwise{true_div}
// + DimShuffle of the count + DimShuffle back to 4-D, ...
inline std::map<std::string, int> expectedCnnCounts(const onnx::ModelProto& m) {
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
inline ModelBuilder reshapeWithRawShape(std::size_t bytes) {
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
inline ModelBuilder ifReturningOuterValue(bool negLast) {
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
inline ModelBuilder loopWithOuterValue(const std::string& bodyOrder, bool cycle = false) {
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

inline QString kinds(const FunctionGraph& g) {
    QStringList k;
    for (const Apply* n : g.toposort()) k << QString::fromStdString(n->op().kind());
    return k.join(' ');
}

inline QString text(const std::map<std::string, int>& m) {
    QStringList out;
    for (const auto& [k, n] : m) out << QString("%1=%2").arg(QString::fromStdString(k)).arg(n);
    return out.join(' ');
}
} // namespace

class TestOnnx : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void cnnModels_data();
    void cnnModels();
    void resnet18Shapes();
    void rebindBatch();
    void transformer();
    void lstmKeepsOnnxLstm();
    void shapeOps();
    void paddleOcrConstantsAndOnnxOps();
    void sileroNestedGraphs();
    void reshapeZeroCopiesTheInputDim();
    void opsetDependentAttributes();
    void unsortedUnnamedDuplicateNodes();
    void unusedDomainsAndNewerVersions();
    void externalData();
    void badModels();
    void tensorDataChecked();
    void externalDataChecked();
    void branchOutputsFromOuterScope();
    void unsortedNodesInSubgraphs();
    void attributesChecked();
    void activationsAsElemwise();
    void oldOpsetAttributeForms();
    void invalidUtf8NamesEscaped();
    void truncatedCorpusModel();
    void sequenceAndOptionalValues();
    void otherDomainsOnly();
    void experimentalOpsWarned();
    void fuzzFindings();
    // tst_onnx_topk.cpp
    void topKMapsToTopKOp();
    void topKLiftedByTheano();
};
