#pragma once
// Drawing (issue "Drawing"): GraphDiff, the DOT writer and its one escaping function, layout
// through Graphviz as plain data, diffs as union graphs, the timing overlay, the focused view of
// large graphs, budget / cancel / cache, and atomic export (PNG size limit included).
// The helpers and the test class of the one executable tst_drawing, whose test functions are
// defined in tst_drawing*.cpp.
#include <passlens/diff/GraphDiff.h>
#include <passlens/io/AtomicFile.h>
#include <passlens/io/GraphJson.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/FunctionGraph.h>
#include <passlens/layout/DotWriter.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/Export.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/layout/TimingOverlay.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>
#include <passlens/trace/TraceSteps.h>

#include "BenchGraphs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <atomic>
#include <functional>
#include <chrono>
#include <map>
#include <set>
#include <thread>

using namespace passlens;
using json = nlohmann::json;

namespace {

inline QString q(const std::string& s) { return QString::fromStdString(s); }

// A float32[1,1] constant (broadcastable against any matrix).
inline Variable* smallConstant(FunctionGraph& g, double v, std::string name = {}) {
    return g.addConstant(TensorData::fromDoubles(DType::Float32, {1, 1}, {v}), std::move(name));
}

const Op& elemwise(const char* scalar) { return Op::get("Elemwise", {{"scalar", scalar}}); }

// x -> GpuFromHost -> GpuElemwise{exp} -> HostFromGpu -> Elemwise{add}(., 2) -> y
inline std::unique_ptr<FunctionGraph> transferGraph() {
    auto g = std::make_unique<FunctionGraph>();
    Variable* x = g->addInput(Type::parse("float32[2,4]"), "x");
    Variable* xg = g->apply(Op::get("GpuFromHost"), {x}, "upload");
    Variable* e = g->apply(Op::get("GpuElemwise", {{"scalar", "exp"}}), {xg}, "exp");
    Variable* h = g->apply(Op::get("HostFromGpu"), {e}, "download");
    Variable* y = g->apply(elemwise("add"), {h, smallConstant(*g, 2.0, "two")}, "plus");
    y->setName("y");
    g->setOutputs({y});
    return g;
}

// Text of every <text> element of an SVG (only those inside node groups with `nodesOnly`),
// entities decoded and whitespace simplified (Graphviz writes runs of spaces as no-break spaces).
// QXmlStreamReader parses the SVG, so a malformed document fails the test.
inline QStringList svgTexts(const std::string& svg, QString* error = nullptr, bool nodesOnly = false) {
    QStringList texts;
    QXmlStreamReader xml(QByteArray::fromStdString(svg));
    std::vector<bool> groups; // per open <g>: is it a node group
    int nodeDepth = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("g")) {
            const bool node = xml.attributes().value("class") == QLatin1String("node");
            groups.push_back(node);
            nodeDepth += node ? 1 : 0;
        } else if (xml.isEndElement() && xml.name() == QLatin1String("g") && !groups.empty()) {
            nodeDepth -= groups.back() ? 1 : 0;
            groups.pop_back();
        } else if (xml.isStartElement() && xml.name() == QLatin1String("text")) {
            const QString t = xml.readElementText().simplified();
            if (!nodesOnly || nodeDepth > 0) texts << t;
        }
    }
    if (xml.hasError() && error != nullptr) *error = xml.errorString();
    return texts;
}

inline QString shown(const std::string& raw) { return QString::fromStdString(displayedText(raw)).simplified(); }

inline int countExact(const QStringList& texts, const QString& s) {
    int n = 0;
    for (const QString& t : texts) n += t == s ? 1 : 0;
    return n;
}

inline LayoutOptions quickOptions() {
    LayoutOptions o;
    o.cache = false;
    return o;
}

// A graph of `n` Elemwise nodes in a braided chain (for large-graph tests).
inline std::unique_ptr<FunctionGraph> chainGraph(int n) {
    auto g = std::make_unique<FunctionGraph>();
    Variable* x = g->addInput(Type::parse("float32[4,4]"), "x");
    std::vector<Variable*> vars{x, x};
    for (int i = 0; i < n; ++i) {
        Variable* a = vars[vars.size() - 1];
        Variable* b = vars[vars.size() - 2 - static_cast<std::size_t>(i % 5 == 0 && vars.size() > 8 ? 5 : 0)];
        vars.push_back(g->apply(elemwise(i % 2 ? "add" : "mul"), {a, b}));
    }
    g->setOutputs({vars.back()});
    return g;
}

struct Optimized {
    std::unique_ptr<FunctionGraph> graph;
    Trace trace;
};

/// `graph` after `pipeline`, recorded (the graph becomes Optimized::graph).
inline Optimized optimize(std::unique_ptr<FunctionGraph> graph, const std::string& pipeline = "theano") {
    Optimized o;
    const Pipeline p = Pipeline::builtin(pipeline);
    const PipelineRun run = p.run(*graph, &o.trace);
    o.trace.finish(run, *graph, p.buildContext().caps);
    o.graph = std::move(graph);
    return o;
}

inline Optimized optimize(const std::string& file, const std::string& pipeline = "theano") {
    return optimize(loadGraphFile(file).graph, pipeline);
}

#ifdef PASSLENS_CLI
struct Cli {
    int code = -1;
    QByteArray out, err;
};

inline Cli cli(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(PASSLENS_CLI), args);
    Cli r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}
#endif

inline QString corpus(const char* name) {
    return QDir(QStringLiteral(PASSLENS_CORPUS_DIR)).filePath(QString::fromLatin1(name));
}

} // namespace

class TestDrawing : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // ---------------------------------------------------------------- the escaping function
    void escapeFunction();

    // ---------------------------------------------------------------- GraphDiff
    void titleLinesBreakReadably();
    void diffClassesAndBytes();
    void unknownTransferSizes();

    // ---------------------------------------------------------------- DOT text
    void dotOfSmallGraph();
    void dotOfSmallDiff();
    void legendAndCaption();

    // ---------------------------------------------------------------- SVG: every label once
    void everyLabelOnceInSvg();

    // ---------------------------------------------------------------- hostile names
    void hostileNamesRoundTrip();
    void manyConstantsFoldIntoOneBox();

    // ---------------------------------------------------------------- diffs as union graphs
    void diffClassesMatchDiff();

    // ---------------------------------------------------------------- geometry as plain data
    void geometryIsPlainData();

    // ---------------------------------------------------------------- timing overlay
    void timingOverlay();

    // ---------------------------------------------------------------- nested graphs
    void nestedGraphsAsClusters();
    void nestedLoopBodyAsCluster();

    // ---------------------------------------------------------------- large graphs
    void focusedViewOfLargeGraph();
    void focusKeepsChangedRegion();
    void focusViewDoesNotWalkThroughHubs();
    void focusViewOfManyChangesTakesTheFirst();
    void focusSeedsBringTheirValueBoxes();
    void drawFocusedIsTheFocusedViewOfTheWholeDrawing();
    void focusedDiffsAndTimingsAreTheFocusedViewsOfTheWholeDrawings();
    void timedDiffFillsByTimeAndBordersByChange();
    void focusedViewOfARemovalCentresOnItsNeighbours();
    void alignIdsMatchesWhatBothPipelinesMade();
    void budgetFallsBackToFocusedView();
    void budgetZeroDrawsSimpleLayout();
    void fullLayoutPastBudgetDrawsFocusedView();
    void cancelStopsLayout();
    void cacheMakesSteppingBackInstant();
    void stableLayoutPastBudgetFallsBack_data();
    void stableLayoutPastBudgetFallsBack();
    void stableLayoutKeepsUnchangedNodes_data();
    void stableLayoutKeepsUnchangedNodes();
    void graphvizErrorsAreReported();

    // ---------------------------------------------------------------- export
    void exportAllFormatsAtomically();
    void pngPastCairoLimitIsRefused();

    // ------------------------------------------------- exports rendered by the layout's process
    void exportIsDotOfItsDot_data();
    void exportIsDotOfItsDot();
    void exportViewsAndFormats();

    // ---------------------------------------------------------------- steps of a trace
    void traceSteps();

    // ---------------------------------------------------------------- the corpus
    void corpusModelsRender_data();
    void corpusModelsRender();

    // ---------------------------------------------------------------- passlens-cli render / report
#ifdef PASSLENS_CLI
    void cliRender();
    void cliRenderNestedGraphs();
    void cliRenderPastBudget();
    void cliReport();
#endif
};
