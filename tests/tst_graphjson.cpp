// tst_graphjson: the format's example, round trips, constants, declared types and each error
// a graph file can have (see tst_graphjson.h).
#include "tst_graphjson.h"

void TestGraphJson::formatExampleLoads() {
    const LoadedGraph l = load(std::string(kTransferPair));
    QCOMPARE(l.format, std::string("graph-json"));
    const FunctionGraph& g = *l.graph;
    QCOMPARE(QString::fromStdString(g.name), QString("transfer_pair"));
    QCOMPARE(g.nodeCount(), std::size_t(2));
    QCOMPARE(kinds(g), QStringList({"GpuFromHost", "HostFromGpu"}));
    QCOMPARE(g.outputs().size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(g.outputs()[0]->type().str()), QString("float32[?,?]"));
    QVERIFY(!g.outputs()[0]->type().isGpu());
    QCOMPARE(QString::fromStdString(g.toposort()[0]->output()->type().str()), QString("float32[?,?]@gpu"));
    // The constant `two` is a constant, not an input (and unused, so not in the graph).
    QCOMPARE(g.inputs().size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(g.inputs()[0]->name()), QString("x"));
    QVERIFY(l.warnings.empty());
}

void TestGraphJson::roundTrip() {
    const LoadedGraph a = load(richDoc());
    const FunctionGraph& g = *a.graph;
    QCOMPARE(g.nodeCount(), std::size_t(7));
    QVERIFY(g.inputs()[0]->tag == json({{"target", "cpu"}}));
    QCOMPARE(g.outputs()[4], g.inputs()[0]);
    QCOMPARE(g.toposort()[0]->nout(), 2);
    const Variable* big = constantNamed(g, "big");
    QVERIFY(big);
    QCOMPARE(big->constant()->intAt(0), std::int64_t{9007199254740993});
    QCOMPARE(big->constant()->intAt(1), std::int64_t{-9007199254740995});
    QCOMPARE(big->constant()->intAt(2), std::int64_t{9223372036854775807});

    const json written = writeGraphJson(g);
    const LoadedGraph b = readGraphJson(written, "written.graph.json", {});
    QCOMPARE(b.graph->fingerprint(), g.fingerprint());
    QCOMPARE(namesOf(*b.graph), namesOf(g));
    QVERIFY(b.graph->inputs()[0]->tag == json({{"target", "cpu"}}));
    QCOMPARE(b.graph->outputs()[4], b.graph->inputs()[0]);
    const Variable* big2 = constantNamed(*b.graph, "big");
    QVERIFY(big2);
    for (int i = 0; i < 3; ++i) QCOMPARE(big2->constant()->intAt(i), big->constant()->intAt(i));
    const Variable* flag = constantNamed(*b.graph, "flag");
    QVERIFY(flag);
    QCOMPARE(flag->constant()->dtype, DType::Bool);
    QCOMPARE(flag->constant()->intAt(0), std::int64_t{1});
    QCOMPARE(flag->constant()->intAt(1), std::int64_t{0});
    const Variable* m = constantNamed(*b.graph, "m");
    QVERIFY(m);
    QCOMPARE(m->constant()->at(7), -8.25);

    // Writing again gives identical text (and parsing the text gives the same graph).
    const std::string text1 = written.dump(1);
    const std::string text2 = writeGraphJson(*b.graph).dump(1);
    QCOMPARE(QString::fromStdString(text2), QString::fromStdString(text1));
    QCOMPARE(load(text1).graph->fingerprint(), g.fingerprint());
}

void TestGraphJson::unsortedNodes() {
    json sorted = richDoc();
    json reversed = sorted;
    std::reverse(reversed["nodes"].begin(), reversed["nodes"].end());
    QCOMPARE(load(reversed).graph->fingerprint(), load(sorted).graph->fingerprint());
    // Also the FORMAT.md example with its two nodes swapped.
    json tp = json::parse(kTransferPair);
    const std::uint64_t f = load(tp).graph->fingerprint();
    std::swap(tp["nodes"][0], tp["nodes"][1]);
    QCOMPARE(load(tp).graph->fingerprint(), f);
}

void TestGraphJson::filledConstants() {
    auto withFill = [](json value) {
        return graphDoc({{{"name", "x"}, {"type", "float32[2,3]"}}},
                        {{{"name", "w"}, {"type", "float32[2,3]"}, {"value", std::move(value)}}},
                        {elemwise("add", {"x", "w"}, {"y"})}, {"y"});
    };
    CHECK_ERROR(errorOf(withFill({{"fill", "normal"}, {"seed", "seven"}})), "constants[0].value.seed",
                "non-negative integer");
    CHECK_ERROR(errorOf(withFill({{"fill", "normal"}, {"seed", -1}})), "constants[0].value.seed",
                "non-negative integer");
    const LoadedGraph zeros = load(withFill({{"fill", "zeros"}}));
    const LoadedGraph ones = load(withFill({{"fill", "ones"}}));
    const TensorData& z = *zeros.graph->constants().at(0)->constant();
    const TensorData& o = *ones.graph->constants().at(0)->constant();
    QCOMPARE(z.numElements(), std::int64_t(6));
    for (int i = 0; i < 6; ++i) {
        QCOMPARE(z.at(i), 0.0);
        QCOMPARE(o.at(i), 1.0);
    }
    const std::uint64_t n1 = load(withFill({{"fill", "normal"}, {"seed", 7}})).graph->fingerprint();
    const std::uint64_t n1again = load(withFill({{"fill", "normal"}, {"seed", 7}})).graph->fingerprint();
    const std::uint64_t n2 = load(withFill({{"fill", "normal"}, {"seed", 8}})).graph->fingerprint();
    QCOMPARE(n1again, n1);
    QVERIFY(n2 != n1);
    QVERIFY(n1 != zeros.graph->fingerprint());
    QVERIFY(zeros.graph->fingerprint() != ones.graph->fingerprint());
    CHECK_ERROR(errorOf(withFill({{"fill", "gaussian"}})), "constants[0].value.fill",
                "must be zeros, ones, normal or uniform");
}

void TestGraphJson::npyConstants() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::filesystem::path dir = tmp.path().toStdString();
    const auto data = TensorData::fromDoubles(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6.5});
    writeFileAtomic(dir / "w.npy", toNpy(*data));
    auto withType = [](const std::string& type) {
        return graphDoc({{{"name", "x"}, {"type", "float32[2,3]"}}},
                        {{{"name", "w"}, {"type", type}, {"value", {{"file", "w.npy"}}}}},
                        {elemwise("add", {"x", "w"}, {"y"})}, {"y"});
    };
    const LoadedGraph l = load(withType("float32[2,3]"), dir);
    const TensorData& w = *l.graph->constants().at(0)->constant();
    QVERIFY(w.loaded());
    QCOMPARE(w.shape, std::vector<std::int64_t>({2, 3}));
    QCOMPARE(w.at(5), 6.5);
    QCOMPARE(w.contentHash(), data->contentHash());

    CHECK_ERROR(errorOf(withType("float32[3,2]"), dir), "constants[0]", "the .npy file holds");
    CHECK_ERROR(errorOf(withType("float64[2,3]"), dir), "constants[0]", "the .npy file holds");
    // A missing file is an error too (the path of the "file" key).
    QTemporaryDir other;
    CHECK_ERROR(errorOf(withType("float32[2,3]"), other.path().toStdString()), "constants[0].value.file", "w.npy");

    // a bfloat16 constant (no .npy dtype) stays inline and reads back bit for bit
    std::vector<double> v(70);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + static_cast<double>(i) / 3;
    json values = json::array();
    for (double x : v) values.push_back(x);
    const LoadedGraph bf = load(graphDoc({{{"name", "x"}, {"type", "bfloat16[70]"}}},
                                         {{{"name", "w"}, {"type", "bfloat16[70]"}, {"value", values}}},
                                         {elemwise("maximum", {"x", "w"}, {"y"})}, {"y"}));
    GraphJsonWriteOptions o;
    o.baseDir = dir;
    o.npyDir = "data";
    const json written = writeGraphJson(*bf.graph, o);
    QVERIFY2(written["constants"][0]["value"].is_array(), written["constants"][0]["value"].dump().c_str());
    QVERIFY(!std::filesystem::exists(dir / "data")); // no .npy written
    const LoadedGraph back = readGraphJson(written, "written.graph.json", dir);
    QCOMPARE(back.graph->constants().at(0)->constant()->contentHash(),
             bf.graph->constants().at(0)->constant()->contentHash());
    QCOMPARE(back.graph->constants().at(0)->constant()->at(1), 0.83203125); // 0.8333 truncated
}

void TestGraphJson::nestedListMustMatchShape() {
    auto withValue = [](json value) {
        return graphDoc({{{"name", "x"}, {"type", "float32[2,3]"}}},
                        {{{"name", "w"}, {"type", "float32[2,3]"}, {"value", std::move(value)}}},
                        {elemwise("add", {"x", "w"}, {"y"})}, {"y"});
    };
    QVERIFY(errorOf(withValue({{1, 2, 3}, {4, 5, 6}})).isEmpty());
    CHECK_ERROR(errorOf(withValue({{1, 2}, {3, 4}, {5, 6}})), "constants[0].value", "does not match the shape");
    CHECK_ERROR(errorOf(withValue({1, 2, 3, 4, 5, 6})), "constants[0].value", "does not match the shape");
    CHECK_ERROR(errorOf(withValue({{1, 2, 3}, {4, 5}})), "constants[0].value", "does not match the shape");
    CHECK_ERROR(errorOf(withValue({{1, 2, 3}, {4, 5, "six"}})), "constants[0].value", "expected a number");
    // Booleans are numbers 0 and 1 in any dtype, also in the exact 64-bit integer path.
    const json ints = graphDoc(json::array(), {{{"name", "c"}, {"type", "int64[3]"}, {"value", {true, false, 7}}}},
                               json::array(), {"c"});
    const LoadedGraph li = load(ints);
    const TensorData& ci = *li.graph->constants().at(0)->constant();
    QCOMPARE(ci.intAt(0), std::int64_t(1));
    QCOMPARE(ci.intAt(1), std::int64_t(0));
    QCOMPARE(ci.intAt(2), std::int64_t(7));
    // A scalar needs a number, not a list.
    const json scalar = graphDoc(json::array(), {{{"name", "c"}, {"type", "float32[]"}, {"value", {1.0}}}}, {}, {"c"});
    CHECK_ERROR(errorOf(scalar), "constants[0].value", "expected a number");
}

void TestGraphJson::declaredOutputTypes() {
    auto withDeclared = [](const std::string& inType, const std::string& outType) {
        return graphDoc({{{"name", "x"}, {"type", inType}}}, json::array(),
                        {elemwise("exp", {"x"}, {{{"name", "y"}, {"type", outType}}})}, {"y"});
    };
    const LoadedGraph l = load(withDeclared("float32[?,?]", "float32[?,4]"));
    QCOMPARE(QString::fromStdString(l.graph->outputs()[0]->type().str()), QString("float32[?,4]"));
    QVERIFY(errorOf(withDeclared("float32[3,4]", "float32[?,4]")).isEmpty());
    CHECK_ERROR(errorOf(withDeclared("float32[3,4]", "float32[?,5]")), "nodes[0]", "type mismatch");
    CHECK_ERROR(errorOf(withDeclared("float32[3,4]", "float64[3,4]")), "nodes[0]", "type mismatch");
    CHECK_ERROR(errorOf(withDeclared("float32[3,4]", "float32[3,4,1]")), "nodes[0]", "type mismatch");
    CHECK_ERROR(errorOf(withDeclared("float32[3,4]", "float32[3,4")), "nodes[0].outputs[0].type", "bad type string");

    // Only some outputs of a multi-output node declared: each declared one is still checked.
    auto split = [](json out0) {
        return graphDoc(
            {{{"name", "x"}, {"type", "float32[?,6]"}}}, {{{"name", "sizes"}, {"type", "int64[2]"}, {"value", {2, 4}}}},
            {node("Split", {"x", "sizes"}, {std::move(out0), "b"}, {{"axis", 1}, {"n_splits", 2}})}, {"a", "b"});
    };
    const LoadedGraph s = load(split({{"name", "a"}, {"type", "float32[5,2]"}}));
    QCOMPARE(QString::fromStdString(s.graph->outputs()[0]->type().str()), QString("float32[5,2]"));
    QCOMPARE(QString::fromStdString(s.graph->outputs()[1]->type().str()), QString("float32[?,4]"));
    CHECK_ERROR(errorOf(split({{"name", "a"}, {"type", "float32[?,3]"}})), "nodes[0]", "type mismatch");
}

void TestGraphJson::invalidJson() {
    const std::string text = "{\"format\": \"passlens.graph\" \"version\": 1}";
    const QString m = errorOf(text);
    // nlohmann reports the byte where parsing stopped: the end of the unexpected "version".
    CHECK_ERROR(m, "byte ", "invalid JSON");
    const QRegularExpression re("byte (\\d+):");
    const auto match = re.match(m);
    QVERIFY2(match.hasMatch(), qPrintable(m));
    const int byte = match.captured(1).toInt();
    const int at = int(text.find("\"version\""));
    QVERIFY2(byte > at && byte <= at + int(std::string("\"version\"").size()), qPrintable(m));
    CHECK_ERROR(errorOf(std::string("{\"format\": ")), "byte 12", "invalid JSON");
    CHECK_ERROR(errorOf(std::string("")), "byte ", "invalid JSON");
}

void TestGraphJson::topLevelChecks() {
    CHECK_ERROR(errorOf(std::string("[1, 2]")), "", "the top level must be an object");
    CHECK_ERROR(errorOf(std::string("\"graph\"")), "", "the top level must be an object");
    json d = json::parse(kTransferPair);
    d.erase("format");
    CHECK_ERROR(errorOf(d), "format", "expected \"format\": \"passlens.graph\"");
    d["format"] = "passlens.session";
    CHECK_ERROR(errorOf(d), "format", "expected \"format\": \"passlens.graph\"");
    d["format"] = "passlens.graph";
    d["version"] = 2;
    CHECK_ERROR(errorOf(d), "version", "unsupported graph JSON version 2");
    d.erase("version");
    CHECK_ERROR(errorOf(d), "version", "unsupported graph JSON version");
    d["version"] = 1;
    QVERIFY(errorOf(d).isEmpty());
}

void TestGraphJson::cycle() {
    const json d = graphDoc(
        {{{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
        {elemwise("add", {"x", "c"}, {"a"}), elemwise("neg", {"a"}, {"b"}), elemwise("exp", {"b"}, {"c"})}, {"c"});
    const QString m = errorOf(d);
    CHECK_ERROR(m, "nodes", "cycle");
    QVERIFY2(m.contains("nodes[0]") && m.contains("nodes[1]") && m.contains("nodes[2]"), qPrintable(m));
    // Listed in another order, the cycle is still found with all its nodes.
    json r = d;
    std::reverse(r["nodes"].begin(), r["nodes"].end());
    const QString m2 = errorOf(r);
    CHECK_ERROR(m2, "nodes", "cycle");
    QVERIFY2(m2.contains("nodes[0]") && m2.contains("nodes[1]") && m2.contains("nodes[2]"), qPrintable(m2));
    // A self-loop.
    const json self = graphDoc(json::array(), json::array(), {elemwise("neg", {"a"}, {"a"})}, {"a"});
    CHECK_ERROR(errorOf(self), "nodes", "cycle");
}

void TestGraphJson::twoProducers() {
    const json twice = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
                                {elemwise("neg", {"x"}, {"y"}), elemwise("exp", {"x"}, {"y"})}, {"y"});
    CHECK_ERROR(errorOf(twice), "nodes[1].outputs[0]", "produced twice");
    QVERIFY(errorOf(twice).contains("'y'"));
    const json shadowsInput =
        graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, json::array(), {elemwise("neg", {"x"}, {"x"})}, {"x"});
    CHECK_ERROR(errorOf(shadowsInput), "nodes[0].outputs[0]", "produced twice");
    QVERIFY(errorOf(shadowsInput).contains("inputs[0]"));
    const json shadowsConstant =
        graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, {{{"name", "k"}, {"type", "float32[]"}, {"value", 1}}},
                 {elemwise("neg", {"x"}, {"k"})}, {"k"});
    CHECK_ERROR(errorOf(shadowsConstant), "nodes[0].outputs[0]", "produced twice");
    const json twoInputs = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}, {{"name", "x"}, {"type", "float32[3]"}}},
                                    json::array(), json::array(), {"x"});
    CHECK_ERROR(errorOf(twoInputs), "inputs[1]", "defined twice");
}

void TestGraphJson::undefinedVariable() {
    const json d = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
                            {elemwise("neg", {"x"}, {"a"}), elemwise("add", {"w", "a"}, {"y"})}, {"y"});
    const QString m = errorOf(d);
    CHECK_ERROR(m, "nodes[1].inputs[0]", "unknown variable");
    QVERIFY2(m.contains("'w'"), qPrintable(m));
}

void TestGraphJson::unknownOp() {
    const json d = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
                            {node("GpuFrobnicate", {"x"}, {"y"})}, {"y"});
    CHECK_ERROR(errorOf(d), "nodes[0].op", "unknown op kind 'GpuFrobnicate'");
}

void TestGraphJson::badTypeString() {
    const json d = graphDoc({{{"name", "x"}, {"type", "float33[3]"}}}, json::array(), json::array(), {"x"});
    CHECK_ERROR(errorOf(d), "inputs[0].type", "bad type string");
    QVERIFY(errorOf(d).contains("float33"));
    const json d2 = graphDoc({{{"name", "x"}, {"type", 3}}}, json::array(), json::array(), {"x"});
    CHECK_ERROR(errorOf(d2), "inputs[0].type", "expected a type string");
    const json d3 = graphDoc({{{"name", "x"}, {"type", "float32[3]@tpu"}}}, json::array(), json::array(), {"x"});
    CHECK_ERROR(errorOf(d3), "inputs[0].type", "bad type string");
    const json d4 = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}},
                             {{{"name", "c"}, {"type", "float32[?]"}, {"value", {1.0}}}}, json::array(), {"x"});
    CHECK_ERROR(errorOf(d4), "constants[0]", "static type");
}

void TestGraphJson::wrongInputCount() {
    const json in = {{{"name", "x"}, {"type", "float32[3,3]"}}};
    CHECK_ERROR(errorOf(graphDoc(in, json::array(), {elemwise("sub", {"x", "x", "x"}, {"y"})}, {"y"})), "nodes[0]",
                "takes 2 inputs, got 3");
    CHECK_ERROR(errorOf(graphDoc(in, json::array(), {node("Dot22", {"x"}, {"y"})}, {"y"})), "nodes[0]",
                "takes 2 inputs, got 1");
    CHECK_ERROR(errorOf(graphDoc(in, json::array(), {elemwise("neg", {"x", "x"}, {"y"})}, {"y"})), "nodes[0]",
                "takes 1 input, got 2");
    // Wrong number of listed outputs.
    CHECK_ERROR(errorOf(graphDoc(in, json::array(), {elemwise("neg", {"x"}, {"y", "y2"})}, {"y"})), "nodes[0].outputs",
                "output");
}

void TestGraphJson::incompatibleShapes() {
    const json d = graphDoc({{{"name", "a"}, {"type", "float32[2,3]"}}, {{"name", "b"}, {"type", "float32[4,3]"}}},
                            json::array(), {elemwise("add", {"a", "b"}, {"y"})}, {"y"});
    const QString m = errorOf(d);
    CHECK_ERROR(m, "nodes[0]", "incompatible static shapes");
    // Broadcasting a static 1 is fine.
    const json ok = graphDoc({{{"name", "a"}, {"type", "float32[2,3]"}}, {{"name", "b"}, {"type", "float32[1,3]"}}},
                             json::array(), {elemwise("add", {"a", "b"}, {"y"})}, {"y"});
    QCOMPARE(QString::fromStdString(load(ok).graph->outputs()[0]->type().str()), QString("float32[2,3]"));
}

void TestGraphJson::badAttribute() {
    const json in = {{{"name", "x"}, {"type", "float32[3,1]"}}};
    CHECK_ERROR(errorOf(graphDoc(in, json::array(), {node("DimShuffle", {"x"}, {"y"}, {{"order", {0, "y"}}})}, {"y"})),
                "nodes[0].attrs", "'order' entries must be axes or \"x\"");
    CHECK_ERROR(errorOf(graphDoc(in, json::array(), {node("Elemwise", {"x"}, {"y"}, {{"scalar", "frob"}})}, {"y"})),
                "nodes[0].attrs", "unknown scalar op 'frob'");
    CHECK_ERROR(errorOf(graphDoc(in, json::array(),
                                 {node("Elemwise", {"x"}, {"y"}, {{"scalar", "neg"}, {"colour", 1}})}, {"y"})),
                "nodes[0].attrs", "unknown attribute 'colour'");
    CHECK_ERROR(errorOf(graphDoc(in, json::array(), {node("DimShuffle", {"x"}, {"y"})}, {"y"})), "nodes[0].attrs",
                "missing attribute 'order'");
    // A valid order still loads ("x" adds a broadcastable axis, axis 1 of size 1 may be dropped).
    const json ok = graphDoc(in, json::array(), {node("DimShuffle", {"x"}, {"y"}, {{"order", {"x", 0}}})}, {"y"});
    QCOMPARE(QString::fromStdString(load(ok).graph->outputs()[0]->type().str()), QString("float32[1,3]"));
}

void TestGraphJson::unknownOutput() {
    json d = json::parse(kTransferPair);
    d["outputs"] = {"y", "q"};
    CHECK_ERROR(errorOf(d), "outputs[1]", "unknown variable 'q'");
    d.erase("outputs");
    CHECK_ERROR(errorOf(d), "outputs", "expected a list");
}

void TestGraphJson::unusedNodeIsPruned() {
    const json d = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
                            {elemwise("neg", {"x"}, {"y"}), elemwise("exp", {"x"}, {"unused"})}, {"y"});
    const LoadedGraph l = load(d);
    QCOMPARE(l.graph->nodeCount(), std::size_t(1));
    QCOMPARE(kinds(*l.graph), QStringList({"Elemwise"}));
    QCOMPARE(l.warnings.size(), std::size_t(1));
    const QString w = QString::fromStdString(l.warnings[0]);
    QVERIFY2(w.contains(kLabel) && w.contains("pruned") && w.contains("1 node"), qPrintable(w));
    // An unused node still has to be valid.
    json bad = d;
    bad["nodes"][1]["inputs"] = {"nope"};
    CHECK_ERROR(errorOf(bad), "nodes[1].inputs[0]", "unknown variable 'nope'");
}

void TestGraphJson::nonFiniteConstantsRoundTrip() {
    const json doc = graphDoc(json::array({{{"name", "x"}, {"type", "float32[3]"}}}),
                              json::array({{{"name", "c"}, {"type", "float32[3]"}, {"value", {"nan", "inf", "-inf"}}}}),
                              json::array({elemwise("add", {"x", "c"}, {"y"})}), {"y"});
    LoadedGraph g = load(doc);
    const Variable* c = g.graph->toposort()[0]->input(1);
    QVERIFY(std::isnan(c->constant()->at(0)));
    QCOMPARE(c->constant()->at(1), std::numeric_limits<double>::infinity());
    QCOMPARE(c->constant()->at(2), -std::numeric_limits<double>::infinity());
    const json written = writeGraphJson(*g.graph);
    QCOMPARE(QString::fromStdString(written["constants"][0]["value"].dump()), QString("[\"nan\",\"inf\",\"-inf\"]"));
    QCOMPARE(load(written).graph->fingerprint(), g.graph->fingerprint());
}

QTEST_GUILESS_MAIN(TestGraphJson)
