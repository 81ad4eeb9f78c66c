// Graph JSON (FORMAT.md §1): reading, writing, round trips and error reporting.
#include <passlens/io/AtomicFile.h>
#include <passlens/io/GraphJson.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/io/JsonFile.h>
#include <passlens/io/Limits.h>
#include <passlens/io/Npy.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/FunctionGraph.h>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <fstream>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace passlens;
using json = nlohmann::json;

namespace {
const char* const kLabel = "g.graph.json";

LoadedGraph load(const std::string& text, const std::filesystem::path& dir = {}) {
    return readGraphJsonText(text, kLabel, dir);
}
LoadedGraph load(const json& doc, const std::filesystem::path& dir = {}) { return load(doc.dump(), dir); }

// The passlens::Error message of loading `text`, or "" when it loads.
QString errorOf(const std::string& text, const std::filesystem::path& dir = {}) {
    try {
        load(text, dir);
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}
QString errorOf(const json& doc, const std::filesystem::path& dir = {}) { return errorOf(doc.dump(), dir); }

// Asserts that the message names the file, the JSON path and the reason.
#define CHECK_ERROR(msg, path, reason)                                                                                 \
    do {                                                                                                               \
        const QString m_ = (msg);                                                                                      \
        QVERIFY2(!m_.isEmpty(), "expected passlens::Error, but the graph loaded");                                     \
        QVERIFY2(m_.startsWith(QString(kLabel) + ": "), qPrintable(m_));                                               \
        QVERIFY2(m_.contains(QString(path)), qPrintable("path '" + QString(path) + "' not in: " + m_));                \
        QVERIFY2(m_.contains(QString(reason)), qPrintable("reason '" + QString(reason) + "' not in: " + m_));          \
    } while (0)

json graphDoc(json inputs, json constants, json nodes, json outputs) {
    return {{"format", "passlens.graph"},
            {"version", 1},
            {"name", "t"},
            {"inputs", std::move(inputs)},
            {"constants", std::move(constants)},
            {"nodes", std::move(nodes)},
            {"outputs", std::move(outputs)}};
}

json node(const std::string& op, json inputs, json outputs, json attrs = nullptr) {
    json n = {{"op", op}, {"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}};
    if (!attrs.is_null()) n["attrs"] = std::move(attrs);
    return n;
}

json elemwise(const std::string& scalar, json inputs, json outputs) {
    return node("Elemwise", std::move(inputs), std::move(outputs), {{"scalar", scalar}});
}

// (No raw string literals in this file: moc's tokenizer mis-reads some of them.)
const char* const kTransferPair = "{\n"
                                  "  \"format\": \"passlens.graph\", \"version\": 1, \"name\": \"transfer_pair\",\n"
                                  "  \"inputs\":  [ {\"name\": \"x\", \"type\": \"float32[?,?]\"} ],\n"
                                  "  \"constants\": [ {\"name\": \"two\", \"type\": \"float32[]\", \"value\": 2.0} ],\n"
                                  "  \"nodes\": [\n"
                                  "    {\"op\": \"GpuFromHost\", \"inputs\": [\"x\"], \"outputs\": [\"xg\"]},\n"
                                  "    {\"op\": \"HostFromGpu\", \"inputs\": [\"xg\"], \"outputs\": [\"y\"]}\n"
                                  "  ],\n"
                                  "  \"outputs\": [\"y\"]\n"
                                  "}";
// Covers tagged inputs, every kind of inline constant, a multi-output op, attrs, a named node and
// a graph input that is also an output.
json richDoc() {
    return graphDoc(
        {{{"name", "x"}, {"type", "float32[4,6]"}, {"tag", {{"target", "cpu"}}}},
         {{"name", "z"}, {"type", "int64[3]"}}},
        {{{"name", "s"}, {"type", "float32[]"}, {"value", 2.5}},
         {{"name", "m"}, {"type", "float32[4,2]"}, {"value", {{1, 2}, {3, 4}, {5, 6}, {7.5, -8.25}}}},
         {{"name", "big"},
          {"type", "int64[3]"},
          {"value",
           {std::int64_t{9007199254740993}, std::int64_t{-9007199254740995}, std::int64_t{9223372036854775807}}}},
         {{"name", "flag"}, {"type", "bool[2]"}, {"value", {true, false}}},
         {{"name", "sizes"}, {"type", "int64[2]"}, {"value", {2, 4}}}},
        {node("Split", {"x", "sizes"}, {"a", "b"}, {{"axis", 1}, {"n_splits", 2}}),
         node("DimShuffle", {"s"}, {"s2"}, {{"order", {"x", "x"}}}),
         [] {
             json n = elemwise("mul", {"a", "s2"}, {"as"});
             n["name"] = "scale";
             return n;
         }(),
         elemwise("add", {"as", "m"}, {"y"}),
         node("Elemwise", {"b"}, {"b6"}, {{"scalar", "clip"}, {"min", 0.0}, {"max", 6.0}}),
         elemwise("add", {"z", "big"}, {"zb"}), elemwise("not", {"flag"}, {"nf"})},
        {"y", "b6", "zb", "nf", "x"});
}

// Names of a graph: inputs, outputs, and each node (in topological order) with its outputs.
QStringList namesOf(const FunctionGraph& g) {
    QStringList out;
    for (const Variable* v : g.inputs()) out << "in:" + QString::fromStdString(v->name());
    for (const Variable* v : g.outputs()) out << "out:" + QString::fromStdString(v->name());
    for (const Apply* n : g.toposort()) {
        QString s = QString::fromStdString(n->op().kind()) + "'" + QString::fromStdString(n->name()) + "'->";
        for (const Variable* o : n->outputs()) s += QString::fromStdString(o->name()) + ",";
        out << s;
    }
    return out;
}

QStringList kinds(const FunctionGraph& g) {
    QStringList out;
    for (const Apply* n : g.toposort()) out << QString::fromStdString(n->op().kind());
    return out;
}

// The names in a folder, sorted (hidden ones too).
QStringList entriesOf(const std::filesystem::path& dir) {
    QStringList out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        out << QString::fromStdString(e.path().filename().string());
    out.sort();
    return out;
}

const Variable* constantNamed(const FunctionGraph& g, const std::string& name) {
    for (const Variable* c : g.constants())
        if (c->name() == name) return c;
    return nullptr;
}
} // namespace

class TestGraphJson : public QObject {
    Q_OBJECT
private slots:
    void formatExampleLoads() {
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

    void roundTrip() {
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

    void unsortedNodes() {
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

    void filledConstants() {
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

    void npyConstants() {
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

    void nestedListMustMatchShape() {
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
        const json scalar =
            graphDoc(json::array(), {{{"name", "c"}, {"type", "float32[]"}, {"value", {1.0}}}}, {}, {"c"});
        CHECK_ERROR(errorOf(scalar), "constants[0].value", "expected a number");
    }

    void declaredOutputTypes() {
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
        CHECK_ERROR(errorOf(withDeclared("float32[3,4]", "float32[3,4")), "nodes[0].outputs[0].type",
                    "bad type string");

        // Only some outputs of a multi-output node declared: each declared one is still checked.
        auto split = [](json out0) {
            return graphDoc({{{"name", "x"}, {"type", "float32[?,6]"}}},
                            {{{"name", "sizes"}, {"type", "int64[2]"}, {"value", {2, 4}}}},
                            {node("Split", {"x", "sizes"}, {std::move(out0), "b"}, {{"axis", 1}, {"n_splits", 2}})},
                            {"a", "b"});
        };
        const LoadedGraph s = load(split({{"name", "a"}, {"type", "float32[5,2]"}}));
        QCOMPARE(QString::fromStdString(s.graph->outputs()[0]->type().str()), QString("float32[5,2]"));
        QCOMPARE(QString::fromStdString(s.graph->outputs()[1]->type().str()), QString("float32[?,4]"));
        CHECK_ERROR(errorOf(split({{"name", "a"}, {"type", "float32[?,3]"}})), "nodes[0]", "type mismatch");
    }

    void invalidJson() {
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

    void topLevelChecks() {
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

    void cycle() {
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

    void twoProducers() {
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
        const json twoInputs =
            graphDoc({{{"name", "x"}, {"type", "float32[3]"}}, {{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
                     json::array(), {"x"});
        CHECK_ERROR(errorOf(twoInputs), "inputs[1]", "defined twice");
    }

    void undefinedVariable() {
        const json d = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
                                {elemwise("neg", {"x"}, {"a"}), elemwise("add", {"w", "a"}, {"y"})}, {"y"});
        const QString m = errorOf(d);
        CHECK_ERROR(m, "nodes[1].inputs[0]", "unknown variable");
        QVERIFY2(m.contains("'w'"), qPrintable(m));
    }

    void unknownOp() {
        const json d = graphDoc({{{"name", "x"}, {"type", "float32[3]"}}}, json::array(),
                                {node("GpuFrobnicate", {"x"}, {"y"})}, {"y"});
        CHECK_ERROR(errorOf(d), "nodes[0].op", "unknown op kind 'GpuFrobnicate'");
    }

    void badTypeString() {
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

    void wrongInputCount() {
        const json in = {{{"name", "x"}, {"type", "float32[3,3]"}}};
        CHECK_ERROR(errorOf(graphDoc(in, json::array(), {elemwise("sub", {"x", "x", "x"}, {"y"})}, {"y"})), "nodes[0]",
                    "takes 2 inputs, got 3");
        CHECK_ERROR(errorOf(graphDoc(in, json::array(), {node("Dot22", {"x"}, {"y"})}, {"y"})), "nodes[0]",
                    "takes 2 inputs, got 1");
        CHECK_ERROR(errorOf(graphDoc(in, json::array(), {elemwise("neg", {"x", "x"}, {"y"})}, {"y"})), "nodes[0]",
                    "takes 1 input, got 2");
        // Wrong number of listed outputs.
        CHECK_ERROR(errorOf(graphDoc(in, json::array(), {elemwise("neg", {"x"}, {"y", "y2"})}, {"y"})),
                    "nodes[0].outputs", "output");
    }

    void incompatibleShapes() {
        const json d = graphDoc({{{"name", "a"}, {"type", "float32[2,3]"}}, {{"name", "b"}, {"type", "float32[4,3]"}}},
                                json::array(), {elemwise("add", {"a", "b"}, {"y"})}, {"y"});
        const QString m = errorOf(d);
        CHECK_ERROR(m, "nodes[0]", "incompatible static shapes");
        // Broadcasting a static 1 is fine.
        const json ok = graphDoc({{{"name", "a"}, {"type", "float32[2,3]"}}, {{"name", "b"}, {"type", "float32[1,3]"}}},
                                 json::array(), {elemwise("add", {"a", "b"}, {"y"})}, {"y"});
        QCOMPARE(QString::fromStdString(load(ok).graph->outputs()[0]->type().str()), QString("float32[2,3]"));
    }

    void badAttribute() {
        const json in = {{{"name", "x"}, {"type", "float32[3,1]"}}};
        CHECK_ERROR(
            errorOf(graphDoc(in, json::array(), {node("DimShuffle", {"x"}, {"y"}, {{"order", {0, "y"}}})}, {"y"})),
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

    void unknownOutput() {
        json d = json::parse(kTransferPair);
        d["outputs"] = {"y", "q"};
        CHECK_ERROR(errorOf(d), "outputs[1]", "unknown variable 'q'");
        d.erase("outputs");
        CHECK_ERROR(errorOf(d), "outputs", "expected a list");
    }

    void unusedNodeIsPruned() {
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

    void nonFiniteConstantsRoundTrip() {
        const json doc =
            graphDoc(json::array({{{"name", "x"}, {"type", "float32[3]"}}}),
                     json::array({{{"name", "c"}, {"type", "float32[3]"}, {"value", {"nan", "inf", "-inf"}}}}),
                     json::array({elemwise("add", {"x", "c"}, {"y"})}), {"y"});
        LoadedGraph g = load(doc);
        const Variable* c = g.graph->toposort()[0]->input(1);
        QVERIFY(std::isnan(c->constant()->at(0)));
        QCOMPARE(c->constant()->at(1), std::numeric_limits<double>::infinity());
        QCOMPARE(c->constant()->at(2), -std::numeric_limits<double>::infinity());
        const json written = writeGraphJson(*g.graph);
        QCOMPARE(QString::fromStdString(written["constants"][0]["value"].dump()),
                 QString("[\"nan\",\"inf\",\"-inf\"]"));
        QCOMPARE(load(written).graph->fingerprint(), g.graph->fingerprint());
    }

    // Arrays and objects nest at most kJsonMaxDepth levels in any JSON file; deeper ones are
    // refused while parsing (no recursive copy or dump ever sees them), with the place.
    void deepNesting() {
        // {"format", ..., "inputs": [{"name": "x", "type": ..., "tag": {"a": {"a": ... {} }}}]}
        auto withTag = [](int levels) {
            std::string tag;
            for (int i = 0; i < levels; ++i) tag += "{\"a\": ";
            tag += "1";
            for (int i = 0; i < levels; ++i) tag += "}";
            return "{\"format\": \"passlens.graph\", \"version\": 1, \"inputs\": [{\"name\": \"x\", \"type\": "
                   "\"float32[2]\", \"tag\": " +
                   tag + "}], \"nodes\": [], \"outputs\": [\"x\"]}";
        };
        // top-level object, inputs list, input object: 3 levels, so a tag of 253 reaches 256
        const LoadedGraph ok = load(withTag(kJsonMaxDepth - 3));
        QCOMPARE(ok.graph->inputs().size(), std::size_t(1));
        QVERIFY(ok.graph->inputs()[0]->tag.contains("a"));
        CHECK_ERROR(errorOf(withTag(kJsonMaxDepth - 2)), "inputs[0].tag.a.a.a.a.a...", "nested deeper than 256 levels");
        CHECK_ERROR(errorOf(withTag(200000)), "inputs[0].tag.a.a.a.a.a...", "nested deeper than 256 levels");
        // lists in a node's attrs, and the top level itself
        std::string attrs = "{\"format\": \"passlens.graph\", \"version\": 1, \"inputs\": [], \"nodes\": [{\"op\": "
                            "\"Elemwise\", \"attrs\": {\"scalar\": ";
        attrs += std::string(100000, '[') + std::string(100000, ']') +
                 "}, \"inputs\": [], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}";
        CHECK_ERROR(errorOf(attrs), "nodes[0].attrs.scalar[0][0][0][0]...", "nested deeper than 256 levels");
        CHECK_ERROR(errorOf(std::string(60000, '[')),
                    ": [0][0][0][0][0][0][0][0]...: ", "nested deeper than 256 levels");
        try {
            parseJson(std::string(300, '[') + std::string(300, ']'), "p.json");
            QFAIL("expected passlens::Error");
        } catch (const Error& e) {
            QCOMPARE(
                QString(e.what()),
                QString("p.json: [0][0][0][0][0][0][0][0]...: JSON nested deeper than 256 levels of arrays and objects "
                        "(the limit of every JSON file PassLens reads)"));
        }
    }

    // A constant whose size comes from the file is checked against maxTensorBytes() before it
    // is built: {"fill"} constants, .npy headers.
    void tensorSizeLimit() {
        auto filled = [](const std::string& type) {
            return graphDoc({{{"name", "x"}, {"type", type}}},
                            {{{"name", "w"}, {"type", type}, {"value", {{"fill", "normal"}}}}},
                            {elemwise("add", {"x", "w"}, {"y"})}, {"y"});
        };
        qunsetenv("PASSLENS_MAX_TENSOR_BYTES");
        QCOMPARE(maxTensorBytes(), std::uint64_t(4) << 30);
        CHECK_ERROR(errorOf(filled("float32[100000,100000]")), "constants[0].value (constant 'w')",
                    "float32[100000,100000] is 40000000000 bytes (37.3 GiB), more than the limit of 4 GiB");
        CHECK_ERROR(errorOf(filled("float64[4294967296,4294967296,4294967296]")), "constants[0].value (constant 'w')",
                    "more than 2^64 bytes");
        qputenv("PASSLENS_MAX_TENSOR_BYTES", "1K");
        QCOMPARE(maxTensorBytes(), std::uint64_t(1024));
        QCOMPARE(load(filled("float32[16,16]")).graph->constants().at(0)->constant()->byteSize(), std::size_t(1024));
        CHECK_ERROR(errorOf(filled("float32[16,17]")), "constants[0].value (constant 'w')",
                    "float32[16,17] is 1088 bytes (1.1 KiB), more than the limit of 1 KiB for a tensor read from a "
                    "file (set PASSLENS_MAX_TENSOR_BYTES");
        qputenv("PASSLENS_MAX_TENSOR_BYTES", "lots");
        QCOMPARE(maxTensorBytes(), kDefaultMaxTensorBytes);
        qunsetenv("PASSLENS_MAX_TENSOR_BYTES");
        // a .npy header claiming 2^80 bytes on 4 bytes of data: refused, not overflowed
        std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }";
        while ((10 + header.size() + 1) % 64) header += ' ';
        header += '\n';
        std::string npy = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header +
                          std::string(4, '\0');
        try {
            parseNpy(npy, "w.npy");
            QFAIL("expected passlens::Error");
        } catch (const Error& e) {
            QVERIFY2(
                QString(e.what()).startsWith("w.npy: float32[1099511627776,1099511627776] is more than 2^64 bytes"),
                e.what());
        }
    }

    // Inputs must be regular files: a FIFO, a device or a directory is refused at once, never read.
    void nonRegularInputs() {
        QTemporaryDir tmp;
        const std::string fifo = tmp.filePath("model.onnx").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        auto messageOf = [](auto&& f) {
            try {
                f();
            } catch (const Error& e) {
                return QString(e.what());
            }
            return QString();
        };
        const QString expected = QString::fromStdString(fifo) + ": is a FIFO (named pipe), not a regular file";
        QCOMPARE(messageOf([&] { loadGraphFile(fifo); }), expected);
        QCOMPARE(messageOf([&] { readFile(fifo); }), expected);
        QCOMPARE(messageOf([&] { readJsonFile(fifo); }), expected);
        QCOMPARE(messageOf([&] { sniffFileKind(fifo); }), expected);
        QCOMPARE(messageOf([&] { loadGraphFile("/dev/zero"); }),
                 QString("/dev/zero: is a character device, not a regular file"));
        QCOMPARE(messageOf([&] { loadGraphFile(tmp.path().toStdString()); }),
                 tmp.path() + ": is a directory, not a regular file");
        QCOMPARE(messageOf([&] { loadGraphFile(tmp.filePath("none.onnx").toStdString()); }),
                 tmp.filePath("none.onnx") + ": no such file");
        // a .npy constant that is a FIFO
        const std::string npy = tmp.filePath("w.npy").toStdString();
        QCOMPARE(::mkfifo(npy.c_str(), 0600), 0);
        const json doc = graphDoc({{{"name", "x"}, {"type", "float32[2]"}}},
                                  {{{"name", "w"}, {"type", "float32[2]"}, {"value", {{"file", "w.npy"}}}}},
                                  {elemwise("add", {"x", "w"}, {"y"})}, {"y"});
        CHECK_ERROR(errorOf(doc, tmp.path().toStdString()), "constants[0].value.file",
                    "w.npy: is a FIFO (named pipe), not a regular file");
    }

    // Writes go through what is at the output path: a symlink stays a symlink, permission bits
    // are kept, a device is written in place, a FIFO without a reader is refused.
    void atomicWriteKeepsWhatIsThere() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        std::filesystem::create_directory(dir / "real");
        writeFileAtomic(dir / "real" / "a.json", "old");
        QCOMPARE(::chmod((dir / "real" / "a.json").c_str(), 0640), 0);
        std::filesystem::create_symlink("real/a.json", dir / "link.json");
        writeFileAtomic(dir / "link.json", "new");
        QVERIFY(std::filesystem::is_symlink(dir / "link.json"));
        QCOMPARE(std::filesystem::read_symlink(dir / "link.json").string(), std::string("real/a.json"));
        QCOMPARE(readFile(dir / "real" / "a.json"), std::string("new"));
        struct stat st {};
        QCOMPARE(::stat((dir / "real" / "a.json").c_str(), &st), 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0640));
        QCOMPARE(entriesOf(dir / "real"), QStringList({"a.json"})); // no temporary file left
        QCOMPARE(entriesOf(dir), QStringList({"link.json", "real"}));
        // a dangling symlink: its target is created, the link stays
        std::filesystem::create_symlink("real/b.json", dir / "dangling.json");
        writeFileAtomic(dir / "dangling.json", "b");
        QVERIFY(std::filesystem::is_symlink(dir / "dangling.json"));
        QCOMPARE(readFile(dir / "real" / "b.json"), std::string("b"));
        // a character device is written in place, not replaced
        writeFileAtomic("/dev/null", "discarded");
        QVERIFY(std::filesystem::is_character_file("/dev/null"));
        // a FIFO: refused without a reader, written to with one; it stays a FIFO
        const std::filesystem::path fifo = dir / "out.fifo";
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        try {
            writeFileAtomic(fifo, "x");
            QFAIL("expected passlens::Error");
        } catch (const Error& e) {
            QCOMPARE(QString(e.what()), QString::fromStdString(fifo.string()) +
                                            ": cannot write: it is a FIFO (named pipe) that no process reads");
        }
        const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        QVERIFY(reader >= 0);
        writeFileAtomic(fifo, "through the pipe");
        char buf[64] = {};
        QCOMPARE(::read(reader, buf, sizeof buf), ssize_t(16));
        ::close(reader);
        QCOMPARE(std::string(buf), std::string("through the pipe"));
        QVERIFY(std::filesystem::is_fifo(fifo));
        try {
            writeFileAtomic(dir / "real", "x");
            QFAIL("expected passlens::Error");
        } catch (const Error& e) {
            QCOMPARE(QString(e.what()),
                     QString::fromStdString((dir / "real").string()) + ": cannot write: it is a directory, not a file");
        }
    }

    // A leftover temporary file of a killed writer (its process gone, older than ten minutes)
    // is removed by the next write of the same file; others are left alone.
    void staleTemporariesRemoved() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        const pid_t child = ::fork();
        if (child == 0) ::_exit(0);
        QVERIFY(child > 0);
        QCOMPARE(::waitpid(child, nullptr, 0), child); // a pid no process has now
        const std::string dead = std::to_string(child);
        auto make = [&](const std::string& name, bool old) {
            writeFileAtomic(dir / name, "partial");
            if (old) {
                const struct timespec times[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
                QCOMPARE(::utimensat(AT_FDCWD, (dir / name).c_str(), times, 0), 0);
            }
        };
        make(".out.json.tmp" + dead + ".3", true);   // killed writer: removed
        make(".out.json.tmp" + dead + ".4", false);  // recent: kept
        make(".out.json.tmp1.5", true);              // pid 1 is alive: kept
        make(".other.json.tmp" + dead + ".1", true); // another file's: kept
        writeFileAtomic(dir / "out.json", "{}");
        QStringList kept = {".other.json.tmp" + QString::fromStdString(dead) + ".1",
                            ".out.json.tmp" + QString::fromStdString(dead) + ".4", ".out.json.tmp1.5", "out.json"};
        kept.sort();
        QCOMPARE(entriesOf(dir), kept);
    }

    // A signal that ends the process during a write leaves no temporary file: SIGTERM arriving
    // in the middle of write(2) (raised from SIGXFSZ at a file-size limit) and SIGXFSZ itself.
    void signalDuringWriteLeavesNoTemporary() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        writeFileAtomic(dir / "out.json", "old");
        for (int sig : {SIGTERM, SIGXFSZ}) {
            const pid_t child = ::fork();
            if (child == 0) {
                const struct rlimit lim = {65536, 65536};
                ::setrlimit(RLIMIT_FSIZE, &lim);
                for (int s : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) ::signal(s, SIG_DFL); // not QTest's handlers
                if (sig == SIGTERM) ::signal(SIGXFSZ, [](int) { ::kill(::getpid(), SIGTERM); });
                writeFileAtomic(dir / "out.json", std::string(1 << 20, 'x'));
                ::_exit(0);
            }
            int status = 0;
            QCOMPARE(::waitpid(child, &status, 0), child);
            QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == sig, qPrintable(QString("status %1").arg(status)));
            QCOMPARE(entriesOf(dir), QStringList({"out.json"}));
            QCOMPARE(readFile(dir / "out.json"), std::string("old"));
        }
    }

    void longChain() {
        constexpr int n = 20000;
        std::string text =
            "{\"format\": \"passlens.graph\", \"version\": 1, \"name\": \"chain\",\n"
            "  \"inputs\": [{\"name\": \"v0\", \"type\": \"float32[8]\"}], \"constants\": [], \"nodes\": [\n";
        for (int i = 0; i < n; ++i) {
            text += "  {\"op\": \"Elemwise\", \"attrs\": {\"scalar\": \"";
            text += (i % 2 ? "neg" : "exp");
            text +=
                "\"}, \"inputs\": [\"v" + std::to_string(i) + "\"], \"outputs\": [\"v" + std::to_string(i + 1) + "\"]}";
            text += i + 1 < n ? ",\n" : "\n";
        }
        text += "], \"outputs\": [\"v" + std::to_string(n) + "\"]}\n";
        const LoadedGraph l = load(text);
        QCOMPARE(l.graph->nodeCount(), std::size_t(n));
        QCOMPARE(l.graph->toposort().size(), std::size_t(n));
        QVERIFY(l.warnings.empty());
        // Reversed order (the worst case for the reader's depth-first search) and a write back.
        json doc = json::parse(text);
        std::reverse(doc["nodes"].begin(), doc["nodes"].end());
        const LoadedGraph r = load(doc);
        QCOMPARE(r.graph->fingerprint(), l.graph->fingerprint());
        QCOMPARE(writeGraphJson(*r.graph)["nodes"].size(), std::size_t(n));
    }

    // readGraphJsonText reads nodes straight from the parser's events; readGraphJson (sessions,
    // subgraphs) from a JSON tree. Both name the same place and reason for every malformed node,
    // and agree on duplicate keys (the last one counts, as in nlohmann::json).
    void streamedAndTreeReadersAgree() {
        auto docWith = [](const std::string& second) {
            return "{\"format\": \"passlens.graph\", \"version\": 1, \"inputs\": [{\"name\": \"a\", \"type\": "
                   "\"float32[2]\"}], \"nodes\": [{\"op\": \"Elemwise\", \"attrs\": {\"scalar\": \"exp\"}, "
                   "\"inputs\": [\"a\"], \"outputs\": [\"e\"]}, " +
                   second + "], \"outputs\": [\"e\"]}";
        };
        auto treeErrorOf = [](const std::string& text) {
            try {
                readGraphJson(json::parse(text), kLabel, {});
            } catch (const Error& e) {
                return QString::fromStdString(e.what());
            }
            return QString();
        };
        const std::string neg = "\"attrs\": {\"scalar\": \"neg\"}, ";
        const struct {
            std::string node, path, reason;
        } cases[] = {
            {"5", "nodes[1]: ", "expected an object, got number"},
            {"{\"inputs\": [], \"outputs\": [\"y\"]}", "nodes[1]: ", "missing 'op'"},
            {"{\"op\": 3, \"inputs\": [], \"outputs\": [\"y\"]}", "nodes[1].op: ", "expected a string, got 3"},
            {"{\"op\": \"\", \"inputs\": [], \"outputs\": [\"y\"]}", "nodes[1].op: ", "must not be empty"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"]}", "nodes[1]: ", "missing 'outputs'"},
            {"{\"op\": \"Elemwise\", \"outputs\": [\"y\"]}", "nodes[1]: ", "missing 'inputs'"},
            {"{\"op\": \"Elemwise\", \"inputs\": \"a\", \"outputs\": [\"y\"]}", "nodes[1].inputs: ", "expected a list"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": {\"y\": 1}}",
             "nodes[1].outputs: ", "expected a list"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [{\"type\": \"float32[2]\"}]}",
             "nodes[1].outputs[0]: ", "missing 'name'"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [{\"name\": [7]}]}",
             "nodes[1].outputs[0].name: ", "expected a string, got [7]"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [{\"name\": \"\"}]}",
             "nodes[1].outputs[0].name: ", "must not be empty"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [7]}",
             "nodes[1].outputs[0]: ", "expected a variable name"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [\"\"]}",
             "nodes[1].outputs[0]: ", "expected a variable name"},
            {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [\"e\"]}",
             "nodes[1].outputs[0]: ", "variable 'e' is produced twice (also nodes[0].outputs[0])"},
            {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [null], \"outputs\": [\"y\"]}",
             "nodes[1].inputs[0]: ", "expected a variable name or a literal value"},
            {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [\"q\"], \"outputs\": [\"y\"]}",
             "nodes[1].inputs[0]: ", "unknown variable 'q'"},
            {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [\"a\"], \"outputs\": [{\"name\": \"y\", \"type\": 5}]}",
             "nodes[1].outputs[0].type: ", "expected a type string"},
            {"{\"op\": \"Elemwise\", " + neg +
                 "\"inputs\": [\"a\"], \"outputs\": [{\"name\": \"y\", \"type\": \"int8[2]\"}]}",
             "nodes[1]: ", "int8[2]"},
            {"{\"op\": \"Elemwise\", \"op\": 3, " + neg + "\"inputs\": [\"a\"], \"outputs\": [\"y\"]}",
             "nodes[1].op: ", "expected a string, got 3"},
            {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [\"a\"], \"inputs\": 2, \"outputs\": [\"y\"]}",
             "nodes[1].inputs: ", "expected a list"},
            {"{\"op\": \"Elemwise\", \"name\": \"n1\", " + neg + "\"inputs\": [\"y\"], \"outputs\": [\"y\"]}",
             "nodes: ", "the graph has a cycle: nodes[1] (Elemwise 'n1') -> nodes[1] (Elemwise 'n1')"},
        };
        for (const auto& k : cases) {
            const std::string text = docWith(k.node);
            const QString streamed = errorOf(text);
            CHECK_ERROR(streamed, QString::fromStdString(k.path), QString::fromStdString(k.reason));
            QCOMPARE(streamed, treeErrorOf(text));
        }
        // Duplicate keys that end in a well-formed node: the same graph either way.
        for (const std::string& good :
             {"{\"op\": 3, \"op\": \"Elemwise\", " + neg + "\"inputs\": [\"a\"], \"outputs\": [\"y\"]}",
              "{\"op\": \"Elemwise\", " + neg +
                  "\"inputs\": 2, \"inputs\": [\"e\"], \"outputs\": [{\"name\": 1, "
                  "\"name\": \"y\", \"type\": \"float32[2]\"}]}"}) {
            const std::string text = docWith(good);
            const LoadedGraph streamed = load(text);
            const LoadedGraph tree = readGraphJson(json::parse(text), kLabel, {});
            QCOMPARE(streamed.graph->fingerprint(), tree.graph->fingerprint());
            QCOMPARE(streamed.warnings.size(), std::size_t(1)); // the node making y is pruned
            QCOMPARE(streamed.warnings, tree.warnings);
        }
        // "nodes" given twice: the last one counts.
        const std::string twice = "{\"format\": \"passlens.graph\", \"version\": 1, \"nodes\": [{\"op\": 1}], "
                                  "\"inputs\": [{\"name\": \"a\", \"type\": \"float32[2]\"}], \"nodes\": 5, "
                                  "\"outputs\": [\"a\"]}";
        CHECK_ERROR(errorOf(twice), "nodes: ", "expected a list");
        QCOMPARE(errorOf(twice), treeErrorOf(twice));
        std::string back = twice;
        back.replace(back.find("\"nodes\": [{\"op\": 1}]"), 20, "\"nodes\": 5");
        back.replace(back.rfind("\"nodes\": 5"), 10, "\"nodes\": []");
        QCOMPARE(load(back).graph->inputs().size(), std::size_t(1));
    }

    // A session as PassLens writes it has its keys sorted: "format" comes after the events, past
    // the first 4 KiB that loadGraphFile sniffs; the streamed reader still finds its graph.
    void sessionFormatAfterTheEvents() {
        QTemporaryDir dir;
        const std::filesystem::path path = std::filesystem::path(dir.path().toStdString()) / "s.passlens.json";
        json doc = {{"events", json::array({{{"seq", 1}, {"reason", std::string(6000, 'r')}}})},
                    {"format", "passlens.session"},
                    {"version", 1},
                    {"graph", json::parse(kTransferPair)}};
        writeFileAtomic(path, doc.dump());
        const LoadedGraph l = loadGraphFile(path);
        QCOMPARE(l.format, std::string("session"));
        QCOMPARE(kinds(*l.graph), QStringList({"GpuFromHost", "HostFromGpu"}));
        doc.erase("graph");
        writeFileAtomic(path, doc.dump());
        try {
            loadGraphFile(path);
            QFAIL("expected passlens::Error");
        } catch (const Error& e) {
            QCOMPARE(QString(e.what()),
                     QString::fromStdString(path.string()) + ": graph: a session file needs the source graph");
        }
    }
};

QTEST_GUILESS_MAIN(TestGraphJson)
#include "tst_graphjson.moc"
