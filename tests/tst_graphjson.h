#pragma once
// Graph JSON (FORMAT.md §1): reading, writing, round trips and error reporting.
// The helpers and the test class of the one executable tst_graphjson, whose test functions are
// defined in tst_graphjson*.cpp.
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

inline LoadedGraph load(const std::string& text, const std::filesystem::path& dir = {}) {
    return readGraphJsonText(text, kLabel, dir);
}
inline LoadedGraph load(const json& doc, const std::filesystem::path& dir = {}) { return load(doc.dump(), dir); }

// The passlens::Error message of loading `text`, or "" when it loads.
inline QString errorOf(const std::string& text, const std::filesystem::path& dir = {}) {
    try {
        load(text, dir);
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}
inline QString errorOf(const json& doc, const std::filesystem::path& dir = {}) { return errorOf(doc.dump(), dir); }

// Asserts that the message names the file, the JSON path and the reason.
#define CHECK_ERROR(msg, path, reason)                                                                                 \
    do {                                                                                                               \
        const QString m_ = (msg);                                                                                      \
        QVERIFY2(!m_.isEmpty(), "expected passlens::Error, but the graph loaded");                                     \
        QVERIFY2(m_.startsWith(QString(kLabel) + ": "), qPrintable(m_));                                               \
        QVERIFY2(m_.contains(QString(path)), qPrintable("path '" + QString(path) + "' not in: " + m_));                \
        QVERIFY2(m_.contains(QString(reason)), qPrintable("reason '" + QString(reason) + "' not in: " + m_));          \
    } while (0)

inline json graphDoc(json inputs, json constants, json nodes, json outputs) {
    return {{"format", "passlens.graph"},
            {"version", 1},
            {"name", "t"},
            {"inputs", std::move(inputs)},
            {"constants", std::move(constants)},
            {"nodes", std::move(nodes)},
            {"outputs", std::move(outputs)}};
}

inline json node(const std::string& op, json inputs, json outputs, json attrs = nullptr) {
    json n = {{"op", op}, {"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}};
    if (!attrs.is_null()) n["attrs"] = std::move(attrs);
    return n;
}

inline json elemwise(const std::string& scalar, json inputs, json outputs) {
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
inline json richDoc() {
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
inline QStringList namesOf(const FunctionGraph& g) {
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

inline QStringList kinds(const FunctionGraph& g) {
    QStringList out;
    for (const Apply* n : g.toposort()) out << QString::fromStdString(n->op().kind());
    return out;
}

// The names in a folder, sorted (hidden ones too).
inline QStringList entriesOf(const std::filesystem::path& dir) {
    QStringList out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        out << QString::fromStdString(e.path().filename().string());
    out.sort();
    return out;
}

inline const Variable* constantNamed(const FunctionGraph& g, const std::string& name) {
    for (const Variable* c : g.constants())
        if (c->name() == name) return c;
    return nullptr;
}
} // namespace

class TestGraphJson : public QObject {
    Q_OBJECT
private slots:
    void formatExampleLoads();
    void roundTrip();
    void unsortedNodes();
    void filledConstants();
    void npyConstants();
    void nestedListMustMatchShape();
    void declaredOutputTypes();
    void invalidJson();
    void topLevelChecks();
    void cycle();
    void twoProducers();
    void undefinedVariable();
    void unknownOp();
    void badTypeString();
    void wrongInputCount();
    void incompatibleShapes();
    void badAttribute();
    void unknownOutput();
    void unusedNodeIsPruned();
    void nonFiniteConstantsRoundTrip();
    void deepNesting();
    void tensorSizeLimit();
    void nonRegularInputs();
    void atomicWriteKeepsWhatIsThere();
    void staleTemporariesRemoved();
    void signalDuringWriteLeavesNoTemporary();
    void longChain();
    void streamedAndTreeReadersAgree();
    void sessionFormatAfterTheEvents();
};
