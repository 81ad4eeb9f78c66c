// tst_onnx: node order and names, domains, external data, bad models and checks of tensor data
// and nested graphs (see tst_onnx.h).
#include "tst_onnx.h"

#include <iostream>
#include <sstream>

void TestOnnx::unsortedUnnamedDuplicateNodes() {
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

void TestOnnx::unusedDomainsAndNewerVersions() {
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

// libonnx's checker writes "Warning: Checker does not support models with experimental ops: OP"
// to std::cerr for ONNX's removed experimental ops (ImageScaler, Crop, ...): none of it reaches
// the user's terminal; the import's warnings name the file, the first node of each such op type
// (how many more there are) and the reason.
void TestOnnx::experimentalOpsWarned() {
    ModelBuilder b(8);
    b.input("x", {1, 3, 2, 2});
    ModelBuilder::floatAttr(b.node("ImageScaler", {"x"}, {"a"}, "scale0"), "scale", 2.0f);
    b.node("ImageScaler", {"a"}, {"c"});
    b.node("Crop", {"c"}, {"y"}, "crop");
    b.output("y", {0});
    // whatever is written to std::cerr during the import comes here (restored however it ends)
    struct Stray {
        std::stringbuf text;
        std::streambuf* previous = std::cerr.rdbuf(&text);
        ~Stray() { std::cerr.rdbuf(previous); }
    };
    LoadedGraph lg;
    QString stray;
    {
        Stray s;
        lg = b.import();
        stray = QString::fromStdString(s.text.str());
    }
    QCOMPARE(stray, QString());
    QStringList kinds;
    for (const Apply* a : lg.graph->toposort()) kinds << QString::fromStdString(a->op().kind());
    QCOMPARE(kinds, QStringList({"OnnxImageScaler", "OnnxImageScaler", "OnnxCrop"}));
    QCOMPARE(lg.warnings.size(), std::size_t(4)); // then the types shape inference could not give
    const QString why = QStringLiteral(" is one of ONNX's removed experimental ops, which the ONNX checker does not "
                                       "check against a schema; imported as it is");
    QCOMPARE(QString::fromStdString(lg.warnings[0]),
             "synthetic.onnx: node 0 'scale0' (ImageScaler) and 1 more node: ImageScaler" + why);
    QCOMPARE(QString::fromStdString(lg.warnings[1]), "synthetic.onnx: node 2 'crop' (Crop): Crop" + why);
    QCOMPARE(QString::fromStdString(lg.warnings[3]),
             QString("synthetic.onnx: node 1 (unnamed) (ImageScaler): ONNX shape inference gave no type for output "
                     "'c'; assumed float32 of unknown rank"));
}

void TestOnnx::externalData() {
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

void TestOnnx::badModels() {
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
    QVERIFY(errorOf([] { importOnnxBytes("<!DOCTYPE html><html></html>", "page.onnx", "."); }).contains("page.onnx"));
    const QString e = errorOf([] { importOnnxBytes(std::string("\x08\x07\x12", 3), "short.onnx", "."); });
    QVERIFY2(e.contains("short.onnx"), qPrintable(e));
}

// Every tensor's data is checked against its dims and element type before the ONNX checker
// and shape inference read it (libonnx's ParseData reads a raw_data of the wrong length out
// of bounds): initializers, Constant and ConstantOfShape values, tensors in If branches,
// negative and overflowing dims; each refusal names the place, the tensor and the reason.
void TestOnnx::tensorDataChecked() {
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
            const QString where = inInitializer ? "node 0 'if1' (If) attribute 'else_branch' initializer 0: tensor 's'"
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
void TestOnnx::externalDataChecked() {
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
void TestOnnx::branchOutputsFromOuterScope() {
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
void TestOnnx::unsortedNodesInSubgraphs() {
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
