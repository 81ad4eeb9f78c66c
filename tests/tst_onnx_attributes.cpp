// tst_onnx: attribute checks and old opset forms, names that are not UTF-8, truncated models,
// sequence and optional values, other domains and the fuzz findings (see tst_onnx.h).
#include "tst_onnx.h"

// Attributes and inputs of mapped ops are checked against the spec and the input ranks
// before any mapping reads them (one helper per kind of attribute: perm, axes, pads,
// kernel_shape / strides / dilations, split sizes, required and typed attributes, input
// ranks); a Transpose perm shorter than the rank read past its end. Each refusal names the
// file, the node and the attribute or input.
void TestOnnx::attributesChecked() {
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
        QVERIFY2(e == "synthetic.onnx: node 0 'n1' (" + op + "): " + c.message, qPrintable(QString(c.what) + ": " + e));
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
void TestOnnx::oldOpsetAttributeForms() {
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
    ModelBuilder::intAttr(bn.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn1"), "spatial",
                          0);
    bn.output("y", {0, 1, 2});
    QCOMPARE(kinds(*bn.import().graph), QString("OnnxBatchNormalization"));
}

// Names that are not valid UTF-8 (node, value, graph names, string attributes) are escaped
// as \xNN on import, so graph JSON can be written (nlohmann's type_error 316 otherwise); an
// escaped value name equal to another value's name is refused.
void TestOnnx::invalidUtf8NamesEscaped() {
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

void TestOnnx::truncatedCorpusModel() {
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
void TestOnnx::sequenceAndOptionalValues() {
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
        if (n->op().kind() == "OnnxOptional") QCOMPARE(n->output(0)->type().str(), std::string("optional(float32[3])"));

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
    QVERIFY2(err.contains("input 0 'm'") && err.contains("only tensor, sequence and optional inputs"), qPrintable(err));
}

// A model importing only other domains (the training-preview test cases) imports; its ops
// are Onnx host ops naming their domain. A model importing no domain at all is refused.
void TestOnnx::otherDomainsOnly() {
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

void TestOnnx::fuzzFindings() {
    const std::string dir = std::string(PASSLENS_SOURCE_DIR) + "/tests/fixtures/fuzz/onnx/";
    // shape_ops.onnx with a Reshape target shape whose element count overflows int64
    // (signed overflow in the Reshape type rule)
    const QString reshape = errorOf([&] { importOnnxFile(dir + "reshape-shape-overflow.onnx"); });
    QVERIFY2(reshape.startsWith(QString::fromStdString(dir + "reshape-shape-overflow.onnx: ")), qPrintable(reshape));
    QVERIFY2(reshape.contains("has more elements than a 64-bit count holds"), qPrintable(reshape));
}

// Activations with no Theano scalar op map to the small Elemwise graphs Theano's nnet builds
// (so the optimizer lifts and fuses them); integer inputs and the per-channel PRelu of opset < 7
// stay ONNX host ops.
void TestOnnx::activationsAsElemwise() {
    auto ops = [](const std::string& type, int opset, int elemType, std::vector<std::int64_t> slope = {}) {
        ModelBuilder b(opset);
        b.input("x", {2, 3}, elemType);
        std::vector<std::string> ins{"x"};
        if (!slope.empty()) {
            b.input("slope", slope, elemType);
            ins.push_back("slope");
        }
        auto* n = b.node(type, ins, {"y"}, "act");
        if (type == "Elu") ModelBuilder::floatAttr(n, "alpha", 0.5f);
        b.output("y", {2, 3}, elemType);
        const LoadedGraph g = b.import();
        QStringList k;
        for (const Apply* a : g.graph->toposort())
            if (a->op().kind() != "DimShuffle") k << QString::fromStdString(a->op().str());
        return k.join(' ');
    };
    const int f32 = onnx::TensorProto::FLOAT, i32 = onnx::TensorProto::INT32;
    QCOMPARE(ops("Elu", 13, f32), QString("Elemwise{gt} Elemwise{exp} Elemwise{sub} Elemwise{mul} Elemwise{switch}"));
    QCOMPARE(ops("Selu", 13, f32),
             QString("Elemwise{gt} Elemwise{exp} Elemwise{sub} Elemwise{mul} Elemwise{switch} Elemwise{mul}"));
    QCOMPARE(ops("Softplus", 13, f32), QString("Elemwise{exp} Elemwise{add} Elemwise{log}"));
    QCOMPARE(ops("HardSwish", 14, onnx::TensorProto::DOUBLE).count("Elemwise"), 2);
    QVERIFY(ops("HardSwish", 14, f32).startsWith("Elemwise{hard_sigmoid"));
    QCOMPARE(ops("PRelu", 16, f32, {3}), QString("Elemwise{lt} Elemwise{mul} Elemwise{switch}"));
    QCOMPARE(ops("PRelu", 6, f32, {3}), QString("OnnxPRelu"));
    QCOMPARE(ops("Elu", 13, i32), QString("OnnxElu"));
}
