// Drawing (issue "Drawing"): GraphDiff, the DOT writer and its one escaping function, layout
// through Graphviz as plain data, diffs as union graphs, the timing overlay, the focused view of
// large graphs, budget / cancel / cache, and atomic export (PNG size limit included).
#include <passlens/diff/GraphDiff.h>
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

QString q(const std::string& s) { return QString::fromStdString(s); }

// A float32[1,1] constant (broadcastable against any matrix).
Variable* smallConstant(FunctionGraph& g, double v, std::string name = {}) {
    return g.addConstant(TensorData::fromDoubles(DType::Float32, {1, 1}, {v}), std::move(name));
}

const Op& elemwise(const char* scalar) { return Op::get("Elemwise", {{"scalar", scalar}}); }

// x -> GpuFromHost -> GpuElemwise{exp} -> HostFromGpu -> Elemwise{add}(., 2) -> y
std::unique_ptr<FunctionGraph> transferGraph() {
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
QStringList svgTexts(const std::string& svg, QString* error = nullptr, bool nodesOnly = false) {
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

QString shown(const std::string& raw) { return QString::fromStdString(displayedText(raw)).simplified(); }

int countExact(const QStringList& texts, const QString& s) {
    int n = 0;
    for (const QString& t : texts) n += t == s ? 1 : 0;
    return n;
}

LayoutOptions quickOptions() {
    LayoutOptions o;
    o.cache = false;
    return o;
}

// A graph of `n` Elemwise nodes in a braided chain (for large-graph tests).
std::unique_ptr<FunctionGraph> chainGraph(int n) {
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

Optimized optimize(const std::string& file, const std::string& pipeline = "theano") {
    Optimized o;
    LoadedGraph loaded = loadGraphFile(file);
    const Pipeline p = Pipeline::builtin(pipeline);
    const PipelineRun run = p.run(*loaded.graph, &o.trace);
    o.trace.finish(run, *loaded.graph, p.buildContext().caps);
    o.graph = std::move(loaded.graph);
    return o;
}

#ifdef PASSLENS_CLI
struct Cli {
    int code = -1;
    QByteArray out, err;
};

Cli cli(const QStringList& args) {
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

QString corpus(const char* name) {
    return QDir(QStringLiteral(PASSLENS_CORPUS_DIR)).filePath(QString::fromLatin1(name));
}

} // namespace

class TestDrawing : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // ---------------------------------------------------------------- the escaping function
    void escapeFunction() {
        QCOMPARE(q(htmlLabelText("")), QString());
        QCOMPARE(q(htmlLabelText("plain_name.0")), QString("plain_name.0"));
        QCOMPARE(q(htmlLabelText("a<b>&\"c'")), QString("a&lt;b&gt;&amp;&quot;c&#39;"));
        QCOMPARE(q(htmlLabelText("\\N {x} | y")), QString("\\\\N {x} | y"));
        QCOMPARE(q(htmlLabelText("caf\xC3\xA9 \xCE\xA9 \xF0\x9F\x98\x80")), QString("caf&#233; &#937; &#128512;"));
        QCOMPARE(q(htmlLabelText(std::string("a\nb\tc\x7F", 6))), QString("a&#9226;b&#9225;c&#9249;"));
        QCOMPARE(q(htmlLabelText(std::string("\0", 1))), QString("&#9216;"));
        QCOMPARE(q(htmlLabelText("bad \xFF\xC3 end")), QString("bad &#65533;&#65533; end"));
        QCOMPARE(q(htmlLabelText("\xED\xA0\x80")), QString("&#65533;&#65533;&#65533;")); // a surrogate
        // The result is always ASCII.
        for (const char c : htmlLabelText("\xE2\x80\xA6\xC3\xA9\xFF<>")) QVERIFY(static_cast<unsigned char>(c) < 0x80);
        QCOMPARE(q(displayedText(std::string("a\nb\xFF", 4))), QString::fromUtf8("a\u240Ab\uFFFD"));
    }

    // ---------------------------------------------------------------- GraphDiff
    void titleLinesBreakReadably() {
        // short: one line
        QCOMPARE(titleLines("GpuDot22").size(), std::size_t(1));
        // attributes break after "{" and ", "
        const auto corr =
            titleLines("GpuCorrMM{border_mode=(1, 1), subsample=(2, 2), filter_dilation=(1, 1), num_groups=1}");
        QCOMPARE(corr.size(), std::size_t(3));
        QCOMPARE(q(corr[0]), QString("GpuCorrMM{border_mode=(1, 1),"));
        // a composite's expression (no ", ") breaks after "," or "(" instead of staying one long line
        const std::string composite =
            "GpuElemwise{Composite{clip(add(mul(true_div(i0,i1),i2),sqrt(add(i3,i4))),i5,i6)}}<gpuarray>";
        const auto lines = titleLines(composite);
        QCOMPARE(lines.size(), std::size_t(3));
        QCOMPARE(q(lines[0]), QString("GpuElemwise{Composite{"));
        QCOMPARE(q(lines[1]), QString("clip(add(mul(true_div(i0,i1),i2),sqrt("));
        QCOMPARE(q(lines[2]), QString("add(i3,i4))),i5,i6)}}<gpuarray>"));
        std::string joined;
        for (const auto& l : lines) joined += l;
        QCOMPARE(q(joined), q(composite)); // nothing lost
        for (const auto& l : lines) QVERIFY(l.size() <= 38 + 8);
    }

    void diffClassesAndBytes() {
        // Built twice with the same steps, so ids agree; then `after` is edited.
        auto build = [] {
            auto g = std::make_unique<FunctionGraph>();
            Variable* x = g->addInput(Type::parse("float32[8,4]"), "x");
            Variable* a = g->apply(elemwise("exp"), {x}, "A");
            Variable* b = g->apply(elemwise("log"), {a}, "B");
            Variable* c = g->apply(elemwise("neg"), {b}, "C");
            g->setOutputs({c});
            return g;
        };
        auto before = build();
        auto after = build();
        // after: B reads a new node N = neg(x) instead of A (A removed, B rewired, N added), and
        // the output goes through GpuFromHost/HostFromGpu.
        Variable* x = after->inputs()[0];
        Variable* n = after->apply(elemwise("neg"), {x}, "N");
        after->replace(after->node(0)->output(), n, "test");
        Variable* up = after->apply(Op::get("GpuFromHost"), {after->outputs()[0]}, "up");
        Variable* down = after->apply(Op::get("HostFromGpu"), {up}, "down");
        after->replace(after->outputs()[0], down, "test");

        const GraphDiff d = diff(*before, *after);
        QCOMPARE(d.removed, std::vector<NodeId>({0}));
        QCOMPARE(d.rewired, std::vector<NodeId>({1}));
        QCOMPARE(d.unchanged, std::vector<NodeId>({2}));
        QCOMPARE(d.added, (std::vector<NodeId>{3, 4, 5}));
        QCOMPARE(d.transfersAdded, (std::vector<NodeId>{4, 5}));
        QVERIFY(d.transfersCut.empty());
        QCOMPARE(d.outputsChanged, std::vector<int>({0}));
        QCOMPARE(d.bytesBefore.crossing(), std::int64_t(0));
        QCOMPARE(d.bytesAfter.hostToGpu, std::int64_t(8 * 4 * 4));
        QCOMPARE(d.bytesAfter.gpuToHost, std::int64_t(8 * 4 * 4));
        QCOMPARE(d.bytesAfter.transfers, 2);
        QVERIFY(d.bytesAfter.exact());
        QCOMPARE(d.changeOf(0), NodeChange::Removed);
        QCOMPARE(d.changeOf(1), NodeChange::Rewired);
        QCOMPARE(d.changeOf(3), NodeChange::Added);
        QCOMPARE(d.changeOf(2), NodeChange::Unchanged);
        QVERIFY(!d.empty());
        QVERIFY(diff(*before, *before).empty());

        // The reverse diff cuts the transfers.
        const GraphDiff r = diff(*after, *before);
        QCOMPARE(r.transfersCut, (std::vector<NodeId>{4, 5}));
        QCOMPARE(r.added, std::vector<NodeId>({0}));
        QCOMPARE(q(r.toJson()["bytes_before"]["crossing"].dump()), QString("256"));
        QVERIFY2(q(d.summary()).contains("-1 nodes") && q(d.summary()).contains("transfers +2 / -0"),
                 d.summary().c_str());
    }

    void unknownTransferSizes() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[?,4]"), "x");
        Variable* up = g.apply(Op::get("GpuFromHost"), {x});
        Variable* down = g.apply(Op::get("HostFromGpu"), {up});
        g.setOutputs({down});
        const TransferBytes t = transferBytes(g);
        QCOMPARE(t.transfers, 2);
        QCOMPARE(t.unknownHostGpu, 2);
        QCOMPARE(t.crossing(), std::int64_t(0));
        QVERIFY(!t.exact());
        QVERIFY2(q(t.str()).contains("2 of unknown size"), t.str().c_str());
    }

    // ---------------------------------------------------------------- DOT text
    void dotOfSmallGraph() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2,4]"), "x");
        Variable* up = g.apply(Op::get("GpuFromHost"), {x}, "up");
        Variable* down = g.apply(Op::get("HostFromGpu"), {up});
        down->setName("y");
        g.setOutputs({down});
        DotOptions o;
        o.legend = false;
        o.caption = false;
        const std::string dot = writeDot(drawGraph(g), o);
        const std::string expected = R"(digraph G {
  graph [rankdir=TB, fontname="Helvetica", bgcolor="#FFFFFF", pad=0.15, nodesep=0.22, ranksep=0.32, forcelabels=false, labelloc=t, labeljust=l];
  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, margin="0.05,0.02", height=0.3, penwidth=1, color="#5A5A5A", fillcolor="#F4F4F4", fontcolor="#111111"];
  edge [fontname="Helvetica", fontsize=7, fontcolor="#555555", arrowsize=0.55, penwidth=0.9, color="#555555"];
  v0 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">x</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555">float32[2,4]</FONT></TD></TR></TABLE>>, shape=ellipse, style="filled", fillcolor="#FFFFFF", color="#111111", penwidth=1.4];
  n0 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR><TD BGCOLOR="#B2281E" WIDTH="4"></TD><TD WIDTH="2"></TD><TD><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">GpuFromHost&lt;None&gt;</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555">#0 &#183; up</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#111111">HtoD &#183; 32 B per run</FONT></TD></TR></TABLE></TD></TR></TABLE>>, fillcolor="#F6C3BC", color="#B2281E", penwidth=2.2];
  n1 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR><TD BGCOLOR="#B2281E" WIDTH="4"></TD><TD WIDTH="2"></TD><TD><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">HostFromGpu(gpuarray)</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555">#1</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#111111">DtoH &#183; 32 B per run</FONT></TD></TR></TABLE></TD></TR></TABLE>>, fillcolor="#F6C3BC", color="#B2281E", penwidth=2.2];
  o0 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">y</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555">output 0</FONT></TD></TR></TABLE>>, shape=ellipse, style="filled", fillcolor="#FFFFFF", color="#111111", penwidth=1.4, peripheries=2];
  v0 -> n0 [color="#555555", penwidth=0.9, xlabel=<float32[2,4]>, pl_edge=0];
  n0 -> n1 [color="#1B4F8A", penwidth=1.5, xlabel=<float32[2,4]>, pl_edge=1];
  n1 -> o0 [color="#555555", penwidth=0.9, xlabel=<float32[2,4]>, pl_edge=2];
}
)";
        QCOMPARE(q(dot), q(expected));
    }

    void dotOfSmallDiff() {
        FunctionGraph before;
        Variable* x = before.addInput(Type::parse("float32[3]"), "x");
        before.setOutputs({before.apply(elemwise("exp"), {x}, "e")});
        FunctionGraph after;
        Variable* x2 = after.addInput(Type::parse("float32[3]"), "x");
        Variable* e2 = after.apply(elemwise("exp"), {x2}, "e");
        after.setOutputs({e2});
        after.replace(e2, after.apply(elemwise("sqr"), {x2}, "s"), "test");
        DotOptions o;
        o.legend = false;
        o.caption = false;
        const std::string dot = writeDot(drawDiff(before, after, diff(before, after)), o);
        const std::string expected = R"(digraph G {
  graph [rankdir=TB, fontname="Helvetica", bgcolor="#FFFFFF", pad=0.15, nodesep=0.22, ranksep=0.32, forcelabels=false, labelloc=t, labeljust=l];
  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, margin="0.05,0.02", height=0.3, penwidth=1, color="#5A5A5A", fillcolor="#F4F4F4", fontcolor="#111111"];
  edge [fontname="Helvetica", fontsize=7, fontcolor="#555555", arrowsize=0.55, penwidth=0.9, color="#555555"];
  v0 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">x</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555">float32[3]</FONT></TD></TR></TABLE>>, shape=ellipse, style="filled", fillcolor="#FFFFFF", color="#8C8C8C", pl_change=unchanged];
  n1 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR><TD BGCOLOR="#B4B4B4" WIDTH="4"></TD><TD WIDTH="2"></TD><TD><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">Elemwise{sqr}</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555">#1 &#183; s &#183; <FONT FACE="Helvetica-Bold">added</FONT></FONT></TD></TR></TABLE></TD></TR></TABLE>>, fillcolor="#CDEBC5", color="#1E7B34", penwidth=2.4, pl_change=added];
  n0 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR><TD BGCOLOR="#B4B4B4" WIDTH="4"></TD><TD WIDTH="2"></TD><TD><TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">Elemwise{exp}</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555">#0 &#183; e &#183; <FONT FACE="Helvetica-Bold">removed</FONT></FONT></TD></TR></TABLE></TD></TR></TABLE>>, style="rounded,filled,dashed", fillcolor="#FBE0DE", color="#C62828", penwidth=2, pl_change=removed];
  o0 [label=<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1"><TR><TD><FONT POINT-SIZE="10" FACE="Helvetica-Bold" COLOR="#111111">output 0</FONT></TD></TR><TR><TD><FONT POINT-SIZE="8" COLOR="#555555"><FONT FACE="Helvetica-Bold">rewired</FONT></FONT></TD></TR></TABLE>>, shape=ellipse, style="filled", fillcolor="#FFE1B8", color="#D35400", penwidth=2.4, peripheries=2, pl_change=rewired];
  v0 -> n1 [color="#1E7B34", penwidth=2, xlabel=<float32[3]>, pl_change=added, pl_edge=0];
  n1 -> o0 [color="#1E7B34", penwidth=2, xlabel=<float32[3]>, pl_change=added, pl_edge=1];
  v0 -> n0 [color="#C62828", penwidth=1.6, style=dashed, xlabel=<float32[3]>, pl_change=removed, pl_edge=2];
  n0 -> o0 [color="#C62828", penwidth=1.6, style=dashed, xlabel=<float32[3]>, pl_change=removed, pl_edge=3];
}
)";
        QCOMPARE(q(dot), q(expected));
    }

    void legendAndCaption() {
        auto g = transferGraph();
        DrawOptions opt;
        opt.caption.source = "model.onnx";
        opt.caption.pipeline = "theano";
        opt.caption.step = "phase gpuarray_opt";
        opt.caption.stepIndex = 3;
        opt.caption.stepCount = 12;
        const std::string dot = writeDot(drawGraph(*g, opt));
        const QString d = q(dot);
        QVERIFY(d.contains(">model.onnx<"));
        QVERIFY(d.contains(">pipeline theano&#8194;&#183;&#8194;phase gpuarray_opt (step 3 of 12)<"));
        QCOMPARE(q(opt.caption.text()),
                 QString::fromUtf8(
                     "model.onnx\u2002\u00b7\u2002pipeline theano\u2002\u00b7\u2002phase gpuarray_opt (step 3 of 12)"));
        for (const char* entry : {">host op<", ">GPU op<", ">transfer<", ">input<", ">constant<", ">output<",
                                  ">Elemwise family<", ">host value<", ">GPU value<"})
            QVERIFY2(d.contains(entry), entry);
        QVERIFY(!d.contains("host-only ONNX op")); // only categories present are listed
        QVERIFY(!d.contains("record"));
        const LayoutResult r = LayoutEngine().layout(drawGraph(*g, opt), quickOptions());
        QVERIFY2(r.warnings.empty(), r.warnings.empty() ? "" : r.warnings.front().c_str());
        const QStringList texts = svgTexts(LayoutEngine().render(r, RenderFormat::Svg));
        QCOMPARE(countExact(texts, QStringLiteral("model.onnx")), 1);
        QCOMPARE(
            countExact(
                texts,
                QString::fromUtf8("pipeline theano\u2002\u00b7\u2002phase gpuarray_opt (step 3 of 12)").simplified()),
            1);
    }

    // ---------------------------------------------------------------- SVG: every label once
    void everyLabelOnceInSvg() {
        auto g = transferGraph();
        const DrawGraph drawing = drawGraph(*g);
        LayoutEngine engine;
        const LayoutResult r = engine.layout(drawing, quickOptions());
        QVERIFY(r.warnings.empty());
        QString error;
        const QStringList texts = svgTexts(engine.render(r, RenderFormat::Svg), &error, true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        std::set<std::string> lines;
        for (const DrawNode& n : drawing.nodes) {
            for (const std::string* line : {&n.title, &n.subtitle, &n.detail}) {
                if (line->empty()) continue;
                QVERIFY2(lines.insert(*line).second, line->c_str()); // the fixture's lines are distinct
                QVERIFY2(countExact(texts, shown(*line)) == 1, line->c_str());
            }
        }
        QCOMPARE(drawing.nodes.size(), std::size_t(7)); // x, two, 4 ops ... and y
        QVERIFY(texts.contains(QStringLiteral("GpuFromHost<None>")));
        QVERIFY(texts.contains(QStringLiteral("#0 \u00b7 upload")));
    }

    // ---------------------------------------------------------------- hostile names
    void hostileNamesRoundTrip() {
        const std::vector<std::string> names = {
            "a<b>c",
            "x & y",
            "\"quoted\"",
            "it's",
            "pipe|brace{}",
            "back\\slash",
            "\\N\\G\\E",
            "caf\xC3\xA9",
            "\xCE\xA9mega",
            "\xE6\xBC\xA2\xE5\xAD\x97",
            "emoji \xF0\x9F\x98\x80",
            std::string("nl\nnul\0", 8),
            "bad \xFF byte",
            "<TABLE>",
            "&amp;",
            "]]></text>",
            "-- comment --",
            "  spaced  ",
        };
        FunctionGraph g;
        Variable* prev = g.addInput(Type::parse("float32[2]"), names[0]);
        Variable* unnamed = g.addInput(Type::parse("float32[2]")); // empty name
        for (std::size_t i = 1; i < names.size(); ++i) {
            Apply* a = g.makeApply(elemwise(i % 2 ? "add" : "mul"), {prev, unnamed}, std::nullopt, names[i]);
            prev = a->output();
        }
        Apply* onnx = g.makeApply(Op::get("OnnxFoo"), {prev}, std::vector<Type>{Type::parse("float32[2]")}, "");
        Variable* out = onnx->output();
        out->setName("out \xE2\x86\x92 <&>");
        g.setOutputs({out});

        const DrawGraph drawing = drawGraph(g);
        LayoutEngine engine;
        const LayoutResult r = engine.layout(drawing, quickOptions());
        QVERIFY2(r.warnings.empty(), r.warnings.empty() ? "" : r.warnings.front().c_str());
        QString error;
        const std::string svg = engine.render(r, RenderFormat::Svg);
        const QStringList texts = svgTexts(svg, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QString all = texts.join(QChar('\n'));
        for (std::size_t i = 1; i < names.size(); ++i) {
            const QString expected = shown("#" + std::to_string(i - 1) + " \xC2\xB7 " + names[i]);
            QVERIFY2(countExact(texts, expected) == 1,
                     qPrintable("missing label: " + expected + "\nSVG texts:\n" + all));
        }
        QVERIFY2(texts.contains(shown(names[0])), qPrintable(all));
        QVERIFY(texts.contains(QStringLiteral("(unnamed input)")));
        QVERIFY(texts.contains(QStringLiteral("OnnxFoo")));
        QVERIFY(texts.contains(QString::fromUtf8("out \u2192 <&>")));
        // Every format renders.
        for (RenderFormat f : {RenderFormat::Pdf, RenderFormat::Png, RenderFormat::Dot})
            QVERIFY(!engine.render(r, f).empty());
        // The DOT itself is ASCII.
        for (const char c : r.dot) QVERIFY(static_cast<unsigned char>(c) < 0x80);
    }

    void manyConstantsFoldIntoOneBox() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        std::vector<Variable*> ins{x};
        for (int i = 0; i < 8; ++i)
            ins.push_back(
                g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {1, 2, 3, 4}), "w" + std::to_string(i)));
        Variable* shared = g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {0, 0, 0, 0}), "shared");
        ins.push_back(shared);
        Apply* big = g.makeApply(Op::get("OnnxMany"), ins, std::vector<Type>{Type::parse("float32[4]")}, "many");
        Variable* y = g.apply(elemwise("add"), {big->output(), shared}, "y");
        g.setOutputs({y});
        const DrawGraph d = drawGraph(g);
        const int k = d.indexOf("k" + std::to_string(big->id()));
        QVERIFY(k >= 0);
        QCOMPARE(q(d.nodes[static_cast<std::size_t>(k)].title), QString("8 constants"));
        QCOMPARE(q(d.nodes[static_cast<std::size_t>(k)].subtitle), QString("128 B"));
        QVERIFY(d.indexOf("v" + std::to_string(shared->id())) >= 0); // used twice: its own box
        for (const DrawNode& n : d.nodes) QVERIFY(!q(n.title).startsWith("w"));
        QCOMPARE(d.nodes.size(), std::size_t(6)); // x, shared, 8 constants, many, y, output
        QVERIFY(LayoutEngine().layout(d, quickOptions()).warnings.empty());
    }

    // ---------------------------------------------------------------- diffs as union graphs
    void diffClassesMatchDiff() {
        const std::string file = std::string(PASSLENS_SOURCE_DIR) + "/resources/examples/join_alloc.graph.json";
        for (const char* pipeline : {"theano", "cleanup"}) {
            Optimized o = optimize(file, pipeline);
            const auto source = o.trace.graphAfterPhase("source");
            const auto final = o.trace.graphAfterPhase("final");
            const GraphDiff d = diff(*source, *final);
            QVERIFY(!d.added.empty() && !d.removed.empty());
            const DrawGraph drawing = drawDiff(*source, *final, d);
            QVERIFY(drawing.isDiff);
            std::map<NodeId, NodeChange> drawn;
            for (const DrawNode& n : drawing.nodes)
                if (n.node >= 0) drawn[n.node] = n.change;
            QCOMPARE(drawn.size(), d.added.size() + d.removed.size() + d.rewired.size() + d.unchanged.size());
            for (const auto& [id, change] : drawn) QCOMPARE(int(change), int(d.changeOf(id)));
            // Through layout: every LayoutNode keeps its class, and the DOT carries it.
            LayoutEngine engine;
            const LayoutResult r = engine.layout(drawing, quickOptions());
            QVERIFY(r.warnings.empty());
            for (const LayoutNode& n : r.nodes)
                if (n.node >= 0) QCOMPARE(int(n.change), int(d.changeOf(n.node)));
            for (NodeId id : d.removed)
                QVERIFY(
                    q(r.dot).contains(QString("n%1 [").arg(id)) &&
                    QRegularExpression(QString("n%1 \\[[^\\n]*style=\"[^\"]*dashed[^\\n]*pl_change=removed").arg(id))
                        .match(q(r.dot))
                        .hasMatch());
            // Summary table in the caption area.
            const QStringList texts = svgTexts(engine.render(r, RenderFormat::Svg));
            QVERIFY(texts.contains(QStringLiteral("bytes host\u2194GPU per run")));
            QVERIFY(texts.contains(
                QStringLiteral("+%1 added / %2 cut").arg(d.transfersAdded.size()).arg(d.transfersCut.size())));
            // Views share positions: before hides the added nodes, after the removed ones.
            const QStringList before = svgTexts(engine.render(r, RenderFormat::Svg, DiffView::Before));
            const QStringList after = svgTexts(engine.render(r, RenderFormat::Svg, DiffView::After));
            // (The badge is bold, so Graphviz writes it as its own text element after the subtitle.)
            for (const DrawNode& n : drawing.nodes) {
                if (n.node < 0) continue;
                const QString sub = shown(n.subtitle + " \xC2\xB7");
                if (n.change == NodeChange::Added) {
                    QVERIFY2(!before.contains(sub), qPrintable(sub));
                    QVERIFY2(after.contains(sub), qPrintable(sub));
                }
                if (n.change == NodeChange::Removed) {
                    QVERIFY2(before.contains(sub), qPrintable(sub));
                    QVERIFY2(!after.contains(sub), qPrintable(sub));
                }
            }
        }
    }

    // ---------------------------------------------------------------- geometry as plain data
    void geometryIsPlainData() {
        auto g = transferGraph();
        const DrawGraph drawing = drawGraph(*g);
        const LayoutResult r = LayoutEngine().layout(drawing, quickOptions());
        QCOMPARE(r.nodes.size(), drawing.nodes.size());
        QCOMPARE(r.edges.size(), drawing.edges.size());
        QVERIFY(r.width > 0 && r.height > 0);
        QVERIFY(r.captionPos.has_value());
        for (const LayoutNode& n : r.nodes) {
            QVERIFY(n.width > 0 && n.height > 0);
            QVERIFY(n.center.x >= 0 && n.center.x <= r.width && n.center.y >= 0 && n.center.y <= r.height);
            QVERIFY(!n.title.empty());
        }
        for (const LayoutEdge& e : r.edges) {
            QVERIFY(e.spline.size() >= 4);
            QCOMPARE((e.spline.size() - 1) % 3, std::size_t(0));
            QVERIFY(e.arrowTip.has_value());
        }
        // Top to bottom: the input is above the output (y grows upwards).
        const auto at = [&r](const std::string& key) {
            for (const LayoutNode& n : r.nodes)
                if (n.key == key) return n.center;
            return LayoutPoint{};
        };
        QVERIFY(at("v0").y > at("o0").y);
    }

    // ---------------------------------------------------------------- timing overlay
    void timingOverlay() {
        auto g = transferGraph();
        DrawGraph drawing = drawGraph(*g);
        const json doc = {{"profiles",
                           {{{"phase", "final"},
                             {"device", "cuda:0 Test GPU"},
                             {"nodes",
                              {{{"node", 1}, {"time_us", 300.0}, {"kind", "kernel"}},
                               {{"node", 3}, {"time_us", 2.5}, {"kind", "host"}}}},
                             {"transfers",
                              {{{"node", 0}, {"bytes", 32}, {"direction", "HtoD"}, {"time_us", 40.0}},
                               {{"node", 2}, {"bytes", 32}, {"direction", "DtoH"}, {"time_us", 57.5}}}}}}}};
        const TimingProfile p = parseTimingProfile(doc, "profile.json");
        QCOMPARE(p.totalUs(), 400.0);
        for (bool logScale : {false, true}) {
            DrawGraph d = drawing;
            TimingOptions to;
            to.logScale = logScale;
            applyTiming(d, p, to);
            QVERIFY(d.timing.present);
            const DrawNode& hot = d.nodes[static_cast<std::size_t>(d.indexOf("n1"))];
            QCOMPARE(hot.timeShare, 1.0);
            QCOMPARE(q(hot.detail), QString::fromUtf8("300.0 \u00b5s \u00b7 75.0%"));
            const DrawNode& up = d.nodes[static_cast<std::size_t>(d.indexOf("n0"))];
            QCOMPARE(q(up.detail), QString::fromUtf8("HtoD \u00b7 32 B \u00b7 40.0 \u00b5s \u00b7 10.0%"));
            const LayoutResult r = LayoutEngine().layout(d, quickOptions());
            QVERIFY(r.warnings.empty());
            const QStringList texts = svgTexts(LayoutEngine().render(r, RenderFormat::Svg));
            QVERIFY(texts.contains(QString::fromUtf8("300.0 \u00b5s \u00b7 75.0%")));
            QVERIFY(texts.contains(QString::fromUtf8("per run, total 400.0 \u00b5s on cuda:0 Test GPU")));
            QVERIFY(texts.contains(logScale ? QStringLiteral("time (log)") : QStringLiteral("time")));
            QVERIFY(q(writeDot(d)).contains(q(heatColour(1.0))));
        }
        // A continuous gradient.
        DrawGraph c = drawing;
        applyTiming(c, p, TimingOptions{false, 0});
        QVERIFY(c.timing.continuous);
        QCOMPARE(c.timing.binUpperUs.size(), std::size_t(5));
        // Bad profiles are errors naming the place, never crashes.
        for (const json& bad :
             {json::array(), json{{"nodes", 3}}, json{{"nodes", {{{"node", "a"}, {"time_us", 1}}}}},
              json{{"nodes", {{{"node", 1}, {"time_us", -1}}}}}, json{{"x", 1}}, json{{"profiles", json::array()}}}) {
            bool threw = false;
            try {
                parseTimingProfile(bad, "p.json");
            } catch (const Error& e) {
                threw = QString(e.what()).startsWith("p.json");
            }
            QVERIFY2(threw, bad.dump().c_str());
        }
    }

    // ---------------------------------------------------------------- nested graphs
    void nestedGraphsAsClusters() {
        // silero_vad_legacy: one OnnxIf whose two branches hold four OnnxIf each (18 nested
        // graphs, 266 nested Apply nodes, as `inspect` counts them).
        const LoadedGraph loaded = loadGraphFile(corpus("silero_vad_legacy.onnx").toStdString());
        const FunctionGraph& g = *loaded.graph;
        // every nested graph, depth first as drawGraph numbers them: (title, graph, parent)
        struct Nested {
            std::string title;
            const FunctionGraph* graph;
            int parent;
        };
        std::vector<Nested> nested;
        std::function<void(const FunctionGraph&, int)> walk = [&](const FunctionGraph& fg, int parent) {
            for (const Apply* n : fg.toposort())
                for (const Subgraph& sg : n->op().subgraphs()) {
                    nested.push_back({sg.attribute + " of " + n->op().str() + " #" + std::to_string(n->id()) +
                                          " \xC2\xB7 " + n->name() + " (" + std::to_string(sg.graph->nodeCount()) +
                                          (sg.graph->nodeCount() == 1 ? " node)" : " nodes)"),
                                      sg.graph.get(), parent});
                    walk(*sg.graph, static_cast<int>(nested.size()) - 1);
                }
        };
        walk(g, -1);
        QCOMPARE(nested.size(), std::size_t(18));
        std::size_t nestedApply = 0;
        for (const Nested& n : nested) nestedApply += n.graph->nodeCount();
        QCOMPARE(nestedApply, std::size_t(266));

        DrawOptions opt;
        const DrawGraph plain = drawGraph(g, opt); // the window's drawing: no clusters
        QVERIFY(plain.clusters.empty());
        opt.nestedGraphs = true;
        const DrawGraph drawing = drawGraph(g, opt);
        QCOMPARE(drawing.clusters.size(), nested.size());
        std::vector<std::size_t> applyPerCluster(nested.size(), 0);
        for (const DrawNode& d : drawing.nodes) {
            if (d.cluster < 0) continue;
            QCOMPARE(d.node, NodeId(-1)); // nested ids are their graph's own
            QVERIFY2(d.key.rfind("s" + std::to_string(d.cluster) + "_", 0) == 0, d.key.c_str());
            if (d.category == NodeCategory::OnnxHostOp || d.category == NodeCategory::HostOp)
                ++applyPerCluster[static_cast<std::size_t>(d.cluster)];
        }
        for (std::size_t k = 0; k < nested.size(); ++k) {
            QCOMPARE(q(drawing.clusters[k].title), q(nested[k].title));
            QCOMPARE(drawing.clusters[k].parent, nested[k].parent);
            QCOMPARE(applyPerCluster[k], nested[k].graph->nodeCount());
            QCOMPARE(std::count_if(drawing.edges.begin(), drawing.edges.end(),
                                   [&](const DrawEdge& e) { return e.headCluster == int(k); }),
                     1L);
        }
        QCOMPARE(q(drawing.clusters[0].title).left(24), QString("else_branch of OnnxIf #1"));
        QCOMPARE(drawing.nodes.size() - plain.nodes.size(),
                 std::size_t(std::count_if(drawing.nodes.begin(), drawing.nodes.end(),
                                           [](const DrawNode& d) { return d.cluster >= 0; })));

        // dot lays the clusters out; every nested node's "#id · name" line and every cluster
        // title is in the SVG, inside one SVG cluster group per nested graph
        LayoutOptions lo = quickOptions();
        lo.budget = std::chrono::milliseconds(120000);
        LayoutEngine engine;
        const LayoutResult r = engine.layout(drawing, lo);
        QVERIFY2(r.warnings.empty(), r.warnings.empty() ? "" : r.warnings.front().c_str());
        QVERIFY(!r.focused && !r.simple);
        QCOMPARE(r.nodes.size(), drawing.nodes.size());
        const std::string svg = engine.render(r, RenderFormat::Svg);
        QString error;
        const QStringList texts = svgTexts(svg, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QString all = texts.join('\n');
        for (const Nested& n : nested) QVERIFY2(texts.contains(shown(n.title)), n.title.c_str());
        std::size_t names = 0;
        for (const Nested& n : nested)
            for (const Apply* a : n.graph->toposort()) {
                QVERIFY2(all.contains(shown("#" + std::to_string(a->id()) + " \xC2\xB7 " + a->name())),
                         a->name().c_str());
                ++names;
            }
        QCOMPARE(names, std::size_t(266));
        QCOMPARE(QString::fromStdString(svg).count("class=\"cluster\""), 18);
    }

    void nestedLoopBodyAsCluster() {
        // a Loop whose body holds an If: clusters nest (parent indices) and the body's nodes
        // are drawn; DOT keeps the If's branches inside the body's cluster
        auto branch = [](const char* scalar) {
            auto b = std::make_shared<FunctionGraph>();
            Variable* v = b->addInput(Type::parse("float32[4]"), "v");
            b->setOutputs({b->apply(elemwise(scalar), {v}, std::string("branch_") + scalar)});
            return b;
        };
        auto body = std::make_shared<FunctionGraph>();
        Variable* i = body->addInput(Type::parse("int64[]"), "i");
        Variable* cond = body->addInput(Type::parse("bool[]"), "cond");
        Variable* acc = body->addInput(Type::parse("float32[4]"), "acc");
        Variable* c =
            body->makeApply(Op::get("OnnxIdentity"), {cond}, std::vector<Type>{Type::parse("bool[]")}, "cond_out")
                ->output(0);
        Variable* chosen =
            body->makeApply(Op::get("OnnxIf", {}, {{"then_branch", branch("exp")}, {"else_branch", branch("neg")}}),
                            {cond}, std::vector<Type>{Type::parse("float32[4]")}, "pick")
                ->output(0);
        Variable* sum = body->apply(elemwise("add"), {acc, chosen}, "acc_next");
        (void)i;
        body->setOutputs({c, sum});
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* n = g.addInput(Type::parse("int64[]"), "n");
        Variable* t = g.addInput(Type::parse("bool[]"), "t");
        g.setOutputs({g.makeApply(Op::get("OnnxLoop", {}, {{"body", body}}), {n, t, x},
                                  std::vector<Type>{Type::parse("float32[4]")}, "loop")
                          ->output(0)});
        DrawOptions opt;
        opt.nestedGraphs = true;
        const DrawGraph drawing = drawGraph(g, opt);
        QCOMPARE(drawing.clusters.size(), std::size_t(3));
        QCOMPARE(drawing.clusters[0].parent, -1);
        QCOMPARE(drawing.clusters[1].parent, 0);
        QCOMPARE(drawing.clusters[2].parent, 0);
        QVERIFY2(q(drawing.clusters[0].title).startsWith("body of OnnxLoop #"), drawing.clusters[0].title.c_str());
        QVERIFY2(q(drawing.clusters[1].title).startsWith("then_branch of OnnxIf #"), drawing.clusters[1].title.c_str());
        const std::string dot = writeDot(drawing);
        const auto body0 = dot.find("subgraph cluster_0 {"), then1 = dot.find("subgraph cluster_1 {"),
                   else2 = dot.find("subgraph cluster_2 {");
        QVERIFY(body0 != std::string::npos && then1 > body0 && else2 > then1);
        QVERIFY(dot.find("compound=true") != std::string::npos);
        QVERIFY(dot.find("lhead=cluster_1") != std::string::npos);
        const LayoutResult r = LayoutEngine().layout(drawing, quickOptions());
        QVERIFY2(r.warnings.empty(), r.warnings.empty() ? "" : r.warnings.front().c_str());
        const QStringList texts = svgTexts(LayoutEngine().render(r, RenderFormat::Svg));
        const QString all = texts.join('\n');
        for (const char* name : {"branch_exp", "branch_neg", "acc_next", "pick"}) QVERIFY2(all.contains(name), name);
        // a focused view keeps the clusters of the nodes it shows and drops the others
        DrawGraph f = drawing;
        f.focused = true;
        f.nodes.erase(std::remove_if(f.nodes.begin(), f.nodes.end(), [](const DrawNode& d) { return d.cluster == 2; }),
                      f.nodes.end());
        const std::string fdot = writeDot(f);
        QVERIFY(fdot.find("subgraph cluster_1 {") != std::string::npos);
        QVERIFY(fdot.find("subgraph cluster_2 {") == std::string::npos);
    }

    // ---------------------------------------------------------------- large graphs
    void focusedViewOfLargeGraph() {
        auto g = chainGraph(5000);
        const DrawGraph drawing = drawGraph(*g);
        QCOMPARE(drawing.nodes.size(), std::size_t(5002));
        LayoutEngine engine;
        LayoutOptions o = quickOptions();
        o.budget = std::chrono::minutes(10); // a hang guard only: speed is bench_layout's business
        const LayoutResult r = engine.layout(drawing, o);
        QVERIFY(r.focused);
        QVERIFY(r.nodes.size() <= o.focusMaxNodes + 2);
        QCOMPARE(r.totalNodes, std::size_t(5002));
        QVERIFY(r.hiddenNodes > 4000);
        std::size_t placeholders = 0, hidden = 0;
        for (const LayoutNode& n : r.nodes)
            if (n.category == NodeCategory::Collapsed) {
                ++placeholders;
                hidden += n.hiddenCount;
                QVERIFY2(q(n.title).startsWith(QString::fromUtf8("\u2026 ")) && q(n.title).endsWith(" nodes"),
                         n.title.c_str());
            }
        QVERIFY(placeholders >= 1);
        QCOMPARE(hidden, r.hiddenNodes);
        QCOMPARE(hidden + r.nodes.size() - placeholders, std::size_t(5002));
        const QStringList texts = svgTexts(engine.render(r, RenderFormat::Svg));
        QVERIFY(texts.join(' ').contains("focused view"));
    }

    void focusKeepsChangedRegion() {
        auto g = chainGraph(3000);
        DrawOptions opt;
        opt.focus = {1500, 1501};
        const DrawGraph drawing = drawGraph(*g, opt);
        const DrawGraph f = focusView(drawing, 2, 100);
        std::set<std::string> keys;
        for (const DrawNode& n : f.nodes) keys.insert(n.key);
        QVERIFY(keys.count("n1500") && keys.count("n1501"));
        QVERIFY(keys.count("n1498") && keys.count("n1503")); // two hops each way
        QVERIFY(!keys.count("n1000"));
        QVERIFY(f.nodes.size() < 40);
        // Edges only between drawn nodes.
        for (const DrawEdge& e : f.edges) QVERIFY(keys.count(e.tail) && keys.count(e.head));
        // Upstream and downstream placeholders.
        int up = 0, down = 0;
        for (const DrawEdge& e : f.edges) {
            if (e.tail.front() == 'c') ++up;
            if (e.head.front() == 'c') ++down;
        }
        QVERIFY(up >= 1 && down >= 1);
        QVERIFY(focusView(DrawGraph{}, 2, 10).nodes.empty());
    }

    void focusSeedsBringTheirValueBoxes() {
        // Seeding the last node and the first one with no hops draws exactly them and the graph
        // output and input boxes next to them; the rest is one placeholder.
        auto g = chainGraph(3000);
        const auto& topo = g->toposort();
        DrawOptions opt;
        opt.focus = {topo.front()->id(), topo.back()->id()};
        const DrawGraph drawing = drawGraph(*g, opt);
        const DrawGraph f = focusView(drawing, 0, 100);
        std::set<std::string> keys;
        int placeholders = 0;
        for (const DrawNode& n : f.nodes) {
            keys.insert(n.key);
            placeholders += n.category == NodeCategory::Collapsed;
        }
        QVERIFY(keys.count("n" + std::to_string(topo.back()->id())));
        QVERIFY(keys.count("n" + std::to_string(topo.front()->id())));
        QVERIFY(keys.count("o0"));
        QVERIFY(keys.count("v" + std::to_string(g->inputs().front()->id())));
        QCOMPARE(placeholders, 1);
        QCOMPARE(f.nodes.size(), std::size_t(5));
    }

    void alignIdsMatchesWhatBothPipelinesMade() {
        // theano and cleanup both lift join_alloc to the same four GPU nodes (and a 0.0 on the
        // GPU), each with ids of its own; aligned, the diff sees them as one.
        const std::string file = PASSLENS_SOURCE_DIR "/resources/examples/join_alloc.graph.json";
        Optimized a = optimize(file, "theano");
        Optimized b = optimize(file, "cleanup");
        std::set<NodeId> idsA, idsB;
        for (const Apply* n : a.graph->toposort()) idsA.insert(n->id());
        for (const Apply* n : b.graph->toposort()) idsB.insert(n->id());
        QVERIFY(idsA != idsB); // unrelated ids before aligning
        const GraphDiff raw = diff(*a.graph, *b.graph);
        QVERIFY(!raw.added.empty());
        AlignedGraph aligned = alignIds(*a.graph, *b.graph);
        QCOMPARE(aligned.matchedNodes, b.graph->nodeCount());
        QCOMPARE(aligned.graph->fingerprint(), b.graph->fingerprint()); // the same graph
        const GraphDiff d = diff(*a.graph, *aligned.graph);
        QVERIFY(d.added.empty());
        QVERIFY(d.removed.empty());
        QVERIFY(d.rewired.empty());
        QCOMPARE(aligned.originalNode.size(), b.graph->nodeCount());
        for (const auto& [now, before] : aligned.originalNode) {
            QVERIFY(idsB.count(before));
            QCOMPARE(aligned.graph->node(now)->op().str(), b.graph->node(before)->op().str());
        }
        // aligned to an unrelated graph, every node keeps its structure under fresh ids
        auto chain = chainGraph(20);
        AlignedGraph apart = alignIds(*chain, *b.graph);
        QCOMPARE(apart.matchedNodes, std::size_t(0));
        QCOMPARE(apart.graph->fingerprint(), b.graph->fingerprint());
    }

    void budgetFallsBackToFocusedView() {
        // The full layout gets 10% of a 60 s budget, which a 5,000-node braided chain needs many
        // times over on any machine; the focused view then has the remaining 54 s, so the
        // outcome does not depend on how busy the machine is. The engine itself enforces the
        // budget (TimedOut past it), so no wall clock is read here.
        auto g = chainGraph(5000);
        const DrawGraph drawing = drawGraph(*g);
        LayoutOptions o = quickOptions();
        o.nodeThreshold = 100000; // try the full layout first
        o.budget = std::chrono::milliseconds(60000);
        o.fullShare = 0.1;
        const LayoutResult r = LayoutEngine().layout(drawing, o);
        QVERIFY(r.focused);
        QVERIFY2(q(r.focusReason).contains("ran past 6"), r.focusReason.c_str());
        QVERIFY(r.nodes.size() <= o.focusMaxNodes + 2);
        QCOMPARE(r.totalNodes, std::size_t(5002));
    }

    // A budget that is already spent (0) stops before Graphviz starts, so these fallbacks are
    // deterministic: no timing race.
    void budgetZeroDrawsSimpleLayout() {
        // A small graph has no smaller view: the simple layered layout of the whole graph.
        const DrawGraph drawing = drawGraph(*transferGraph());
        LayoutOptions o = quickOptions();
        o.cache = true;
        o.budget = std::chrono::milliseconds(0);
        LayoutEngine engine;
        const LayoutResult r = engine.layout(drawing, o);
        QVERIFY(r.simple);
        QVERIFY(!r.focused);
        QCOMPARE(q(r.budgetNote), QString("the full layout ran past 0.0 s: simple layout drawn instead"));
        QCOMPARE(r.nodes.size(), drawing.nodes.size());
        QCOMPARE(r.edges.size(), drawing.edges.size());
        // ranks go down: every edge's head lies below its tail, and no two boxes overlap
        std::map<std::string, const LayoutNode*> at;
        for (const LayoutNode& n : r.nodes) {
            QVERIFY(n.width > 0 && n.height > 0);
            at[n.key] = &n;
        }
        for (const LayoutEdge& e : r.edges) {
            QVERIFY2(at[e.head]->center.y < at[e.tail]->center.y, (e.tail + " -> " + e.head).c_str());
            QVERIFY(e.spline.size() >= 4);
        }
        for (std::size_t i = 0; i < r.nodes.size(); ++i)
            for (std::size_t j = i + 1; j < r.nodes.size(); ++j) {
                const LayoutNode& a = r.nodes[i];
                const LayoutNode& b = r.nodes[j];
                const bool apart = std::abs(a.center.x - b.center.x) >= (a.width + b.width) / 2 ||
                                   std::abs(a.center.y - b.center.y) >= (a.height + b.height) / 2;
                QVERIFY2(apart, (a.key + " overlaps " + b.key).c_str());
            }
        // the note is in the caption of what is written
        QTemporaryDir dir;
        const std::string path = dir.filePath("simple.svg").toStdString();
        QVERIFY(exportLayout(engine, r, path, RenderFormat::Svg) > 0);
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString texts = svgTexts(f.readAll().toStdString()).join(' ');
        QVERIFY2(texts.contains("the full layout ran past 0.0 s: simple layout drawn instead"), qPrintable(texts));
        QVERIFY(texts.contains("GpuElemwise{exp}"));
        // not cached: a later call with time left gets a real layout
        engine.layout(drawing, o);
        QCOMPARE(engine.cacheHits(), std::size_t(0));
        o.budget = std::chrono::milliseconds(60000);
        const LayoutResult full = engine.layout(drawing, o);
        QVERIFY(!full.simple);
        QVERIFY(full.budgetNote.empty());
    }

    void fullLayoutPastBudgetDrawsFocusedView() {
        auto g = chainGraph(3000);
        const DrawGraph drawing = drawGraph(*g);
        LayoutOptions o = quickOptions();
        o.nodeThreshold = 100000; // the full layout is tried first ...
        o.fullShare = 0;          // ... with none of the budget: past it at once
        o.budget = std::chrono::milliseconds(120000);
        LayoutEngine engine;
        const LayoutResult r = engine.layout(drawing, o);
        QVERIFY(r.focused);
        QVERIFY(!r.simple);
        QCOMPARE(r.totalNodes, std::size_t(3002));
        QVERIFY(r.hiddenNodes > 2000);
        QCOMPARE(q(r.budgetNote), QString("the full layout ran past 0.0 s (3,002 nodes): focused view drawn instead"));
        QCOMPARE(q(r.focusReason), QString("the full layout ran past 0.0 s"));
        const QString texts = svgTexts(engine.render(r, RenderFormat::Svg)).join(' ');
        QVERIFY2(texts.contains("the full layout ran past 0.0 s (3,002 nodes): focused view drawn instead"),
                 qPrintable(texts));
        QVERIFY(texts.contains("focused view:"));

        // No budget at all: the focused view gets the simple layout.
        o.budget = std::chrono::milliseconds(0);
        o.fullShare = 0.7;
        const LayoutResult s = engine.layout(drawing, o);
        QVERIFY(s.focused && s.simple);
        QCOMPARE(s.nodes.size(), r.nodes.size());
        QCOMPARE(q(s.budgetNote),
                 QString("the full layout ran past 0.0 s and the focused view's past the 0.0 s budget: "
                         "simple layout of the focused view drawn instead"));
        QVERIFY(svgTexts(engine.render(s, RenderFormat::Svg))
                    .join(' ')
                    .contains("simple layout of the focused view drawn instead"));

        // Above the node threshold the focused view is laid out directly; past the budget, simply.
        o.nodeThreshold = 1500;
        const LayoutResult t = engine.layout(drawing, o);
        QVERIFY(t.focused && t.simple);
        QCOMPARE(q(t.focusReason), QString("3,002 nodes (threshold 1,500)"));
        QCOMPARE(
            q(t.budgetNote),
            QString("Graphviz's layout of the focused view ran past the 0.0 s budget: simple layout drawn instead"));
    }

    void cancelStopsLayout() {
        auto g = chainGraph(2500);
        const DrawGraph drawing = drawGraph(*g);
        LayoutOptions o = quickOptions();
        o.nodeThreshold = 100000;
        o.budget = std::chrono::milliseconds(60000);
        CancelToken token;
        std::thread canceller([&token] {
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
            token.cancel();
        });
        // Cancelled (not TimedOut, not a finished layout) shows that the cancel, 150 ms in,
        // stopped a layout that had a minute to run.
        bool cancelled = false;
        try {
            LayoutEngine().layout(drawing, o, &token);
        } catch (const LayoutError& e) {
            cancelled = e.kind() == LayoutError::Kind::Cancelled;
        }
        canceller.join();
        QVERIFY(cancelled);
        // A token cancelled up front stops at once.
        bool early = false;
        try {
            LayoutEngine().layout(drawGraph(*transferGraph()), quickOptions(), &token);
        } catch (const LayoutError& e) {
            early = e.kind() == LayoutError::Kind::Cancelled;
        }
        QVERIFY(early);
    }

    void cacheMakesSteppingBackInstant() {
        auto g = transferGraph();
        const DrawGraph drawing = drawGraph(*g);
        LayoutEngine engine;
        const LayoutResult first = engine.layout(drawing);
        QVERIFY(!first.fromCache);
        const LayoutResult second = engine.layout(drawing);
        QVERIFY(second.fromCache);
        QCOMPARE(engine.cacheHits(), std::size_t(1));
        QCOMPARE(q(second.positionedDot), q(first.positionedDot));
        LayoutOptions lr;
        lr.dot.rankdir = "LR";
        QVERIFY(!engine.layout(drawing, lr).fromCache); // options are part of the key
        engine.clearCache();
        QVERIFY(!engine.layout(drawing).fromCache);
    }

    // Stepping rewrite by rewrite: every node the previous step had keeps its exact position,
    // new nodes land on free space (no box overlaps another), every edge is routed.
    // transformer: ~130 drawn nodes (new nodes arranged by a dot layout of the whole step);
    // mobilenet_v2: ~300 (arranged by a layout of the changed region only).
    void stableLayoutKeepsUnchangedNodes_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("steps");
        QTest::newRow("transformer_encoder_layer") << corpus("transformer_encoder_layer.onnx") << 1000;
        QTest::newRow("mobilenet_v2") << corpus("mobilenet_v2.onnx") << 40;
    }

    void stableLayoutKeepsUnchangedNodes() {
        QFETCH(QString, model);
        QFETCH(int, steps);
        QVERIFY2(QFile::exists(model), qPrintable(model + " is missing: the corpus is required (PASSLENS_CORPUS_DIR)"));
        Optimized o = optimize(model.toStdString());
        std::vector<int> applied;
        for (const RewriteEvent& e : o.trace.events())
            if (e.status == EventStatus::Applied && static_cast<int>(applied.size()) < steps) applied.push_back(e.seq);
        QVERIFY(applied.size() > 20);
        LayoutEngine engine;
        LayoutOptions opt;
        opt.cache = false;
        auto g0 = o.trace.graphAfter(0);
        LayoutResult prev = engine.layout(drawGraph(*g0), opt);
        int stableSteps = 0, freshSteps = 0, checkedNodes = 0, newNodes = 0;
        double worstMs = 0;
        for (const int seq : applied) {
            auto g = o.trace.graphAfter(seq);
            const DrawGraph d = drawGraph(*g);
            const LayoutResult cur = engine.layoutStable(d, prev, opt);
            worstMs = std::max(worstMs, cur.layoutMs);
            QCOMPARE(cur.nodes.size(), d.nodes.size());
            std::map<std::string, LayoutPoint> before;
            for (const LayoutNode& n : prev.nodes) before[n.key] = n.center;
            if (!cur.stable) {
                ++freshSteps;
                QVERIFY2(cur.pinnedNodes == 0, "a fresh layout pins nothing");
            } else {
                ++stableSteps;
                std::size_t kept = 0;
                for (const LayoutNode& n : cur.nodes) {
                    auto it = before.find(n.key);
                    if (it == before.end()) {
                        ++newNodes;
                        // a new node overlaps no other box
                        for (const LayoutNode& m : cur.nodes) {
                            if (&m == &n) continue;
                            const bool overlap = std::abs(m.center.x - n.center.x) * 2 < m.width + n.width - 0.5 &&
                                                 std::abs(m.center.y - n.center.y) * 2 < m.height + n.height - 0.5;
                            QVERIFY2(!overlap, qPrintable(QStringLiteral("event %1: new node %2 overlaps %3")
                                                              .arg(seq)
                                                              .arg(q(n.key), q(m.key))));
                        }
                        continue;
                    }
                    ++kept;
                    ++checkedNodes;
                    QVERIFY2(std::abs(it->second.x - n.center.x) < 0.01 && std::abs(it->second.y - n.center.y) < 0.01,
                             qPrintable(QStringLiteral("event %1: %2 moved from (%3,%4) to (%5,%6)")
                                            .arg(seq)
                                            .arg(q(n.key))
                                            .arg(it->second.x)
                                            .arg(it->second.y)
                                            .arg(n.center.x)
                                            .arg(n.center.y)));
                }
                QCOMPARE(kept, cur.pinnedNodes);
            }
            QCOMPARE(cur.edges.size(), d.edges.size());
            for (const LayoutEdge& e : cur.edges) QVERIFY2(e.spline.size() >= 4, qPrintable(q(e.tail + "->" + e.head)));
            if (const char* dump = std::getenv("PASSLENS_DUMP_STABLE")) { // to look at the drawings
                QFile f(QStringLiteral("%1/step-%2.png").arg(QString::fromLocal8Bit(dump)).arg(seq, 3, 10, QChar('0')));
                if (f.open(QIODevice::WriteOnly))
                    f.write(QByteArray::fromStdString(engine.render(cur, RenderFormat::Png)));
                qInfo("event %d (%s): %s, %zu of %zu kept", seq,
                      o.trace.events()[static_cast<std::size_t>(seq - 1)].rewriter.c_str(),
                      cur.stable ? "stable" : "fresh", cur.pinnedNodes, cur.nodes.size());
                for (const LayoutNode& n : cur.nodes) // where the new nodes are in the PNG (96 dpi, 4 pt margin)
                    if (!before.contains(n.key))
                        qInfo("  new %s at px (%.0f, %.0f)", n.key.c_str(), (n.center.x - cur.x0 + 4) * 96 / 72,
                              (cur.y0 + cur.height - n.center.y + 4) * 96 / 72);
            }
            prev = cur;
        }
        qInfo("%zu rewrites: %d stable, %d fresh; %d nodes kept in place, %d placed; slowest %.0f ms", applied.size(),
              stableSteps, freshSteps, checkedNodes, newNodes, worstMs);
        QVERIFY(stableSteps > static_cast<int>(applied.size()) * 3 / 4);
        QVERIFY(newNodes > 0);
    }

    void graphvizErrorsAreReported() {
        LayoutEngine engine;
        for (bool isolate : {true, false}) {
            LayoutOptions o = quickOptions();
            o.isolate = isolate;
            QString message;
            try {
                engine.layoutDot("digraph G { a -> ; }", o);
            } catch (const LayoutError& e) {
                message = e.what();
                QCOMPARE(int(e.kind()), int(LayoutError::Kind::Graphviz));
            }
            QVERIFY2(message.contains("syntax error"), qPrintable(message));
            // And the next layout works.
            QVERIFY(!engine.layoutDot("digraph G { a -> b; }", o).nodes.empty());
        }
        // An empty drawing lays out (legend-less, nothing in it) and renders.
        const LayoutResult empty = engine.layout(DrawGraph{}, quickOptions());
        QVERIFY(empty.nodes.empty());
        QVERIFY(!engine.render(empty, RenderFormat::Svg).empty());
        // A graph whose output is its input.
        FunctionGraph identity;
        Variable* in = identity.addInput(Type::parse("int8[]"));
        identity.setOutputs({in});
        QCOMPARE(engine.layout(drawGraph(identity), quickOptions()).nodes.size(), std::size_t(2));
        // An empty layout cannot be rendered.
        bool threw = false;
        try {
            engine.render(LayoutResult{}, RenderFormat::Svg);
        } catch (const Error&) {
            threw = true;
        }
        QVERIFY(threw);
    }

    // ---------------------------------------------------------------- export
    void exportAllFormatsAtomically() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto g = transferGraph();
        LayoutEngine engine;
        const LayoutResult r = engine.layout(drawGraph(*g), quickOptions());
        const std::map<RenderFormat, QByteArray> magic = {{RenderFormat::Svg, "<?xml"},
                                                          {RenderFormat::Pdf, "%PDF"},
                                                          {RenderFormat::Png, "\x89PNG"},
                                                          {RenderFormat::Dot, "digraph"}};
        for (const auto& [format, head] : magic) {
            const QString path = dir.filePath(QString("out.") + renderFormatName(format));
            QVERIFY(formatFromExtension(path.toStdString()) == format);
            const std::size_t bytes = exportLayout(engine, r, path.toStdString(), format);
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QByteArray content = f.readAll();
            QCOMPARE(std::size_t(content.size()), bytes);
            QVERIFY2(content.startsWith(head), renderFormatName(format));
        }
        // No temporary files left behind.
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 4);
        QVERIFY(!formatFromExtension("x.jpeg").has_value());
    }

    void pngPastCairoLimitIsRefused() {
        QTemporaryDir dir;
        auto g = chainGraph(300); // a tall graph
        LayoutEngine engine;
        LayoutOptions o = quickOptions();
        const LayoutResult r = engine.layout(drawGraph(*g), o);
        const auto [w, h] = r.pixelSize(2400);
        QVERIFY(h > kMaxPngPixels);
        const QString path = dir.filePath("tall.png");
        QFile::remove(path);
        QString message;
        try {
            exportLayout(engine, r, path.toStdString(), RenderFormat::Png, DiffView::Overlay, 2400);
        } catch (const Error& e) {
            message = e.what();
        }
        QVERIFY2(message.contains("32,767") && message.contains("SVG or PDF"), qPrintable(message));
        QVERIFY(!QFile::exists(path));
        // SVG of the same layout is fine.
        QVERIFY(exportLayout(engine, r, dir.filePath("tall.svg").toStdString(), RenderFormat::Svg) > 0);
    }

    // ---------------------------------------------------------------- steps of a trace
    void traceSteps() {
        const std::string file = std::string(PASSLENS_SOURCE_DIR) + "/resources/examples/join_alloc.graph.json";
        Optimized o = optimize(file);
        const TraceStep source = resolveStep(o.trace, "source");
        const TraceStep final = resolveStep(o.trace, "final");
        QCOMPARE(source.event, 0);
        QCOMPARE(final.index, static_cast<int>(o.trace.phases().size()));
        QCOMPARE(graphAt(o.trace, final)->fingerprint(), o.graph->fingerprint());
        const std::string firstPhase = o.trace.phases().front().info.name;
        QCOMPARE(resolveStep(o.trace, firstPhase).index, 1);
        QCOMPARE(resolveStep(o.trace, "0").kind, TraceStep::Kind::Event);
        for (const char* bad : {"no_such_phase", "999999", "#x"}) {
            bool threw = false;
            try {
                resolveStep(o.trace, bad);
            } catch (const Error& e) {
                threw = QString(e.what()).contains("source") || QString(e.what()).contains("events 0..");
            }
            QVERIFY2(threw, bad);
        }
        QCOMPARE(splitDiffSpec("source..final"), std::make_pair(std::string("source"), std::string("final")));
        bool threw = false;
        try {
            splitDiffSpec("source");
        } catch (const Error&) {
            threw = true;
        }
        QVERIFY(threw);
        QVERIFY(!nodesAddedBetween(o.trace, 0, final.event).empty());
    }

    // ---------------------------------------------------------------- the corpus
    void corpusModelsRender_data() {
        QTest::addColumn<QString>("model");
        for (const char* m :
             {"mlp.onnx", "lstm.onnx", "shape_ops.onnx", "transformer_encoder_layer.onnx", "squeezenet1_1.onnx",
              "resnet18.onnx", "mobilenet_v2.onnx", "silero_vad_legacy.onnx", "ch_PP-OCRv4_det_infer.onnx"})
            QTest::newRow(m) << corpus(m);
    }

    void corpusModelsRender() {
        QFETCH(QString, model);
        QVERIFY2(QFile::exists(model), qPrintable(model + " is missing: the corpus is required (PASSLENS_CORPUS_DIR)"));
        Optimized o = optimize(model.toStdString());
        const auto source = o.trace.graphAfterPhase("source");
        LayoutEngine engine;
        LayoutOptions lo; // speed is bench_layout's business: a generous budget for sanitizer builds
        lo.budget = std::chrono::milliseconds(120000);
        DrawOptions opt;
        opt.caption.source = QFileInfo(model).fileName().toStdString();
        opt.caption.pipeline = "theano";
        opt.caption.step = "final";
        // The final graph.
        const DrawGraph finalDrawing = drawGraph(*o.graph, opt);
        const LayoutResult fr = engine.layout(finalDrawing, lo);
        QVERIFY2(fr.warnings.empty(), fr.warnings.empty() ? "" : fr.warnings.front().c_str());
        QVERIFY(!fr.focused);
        QCOMPARE(fr.nodes.size(), finalDrawing.nodes.size());
        QString error;
        const QStringList texts = svgTexts(engine.render(fr, RenderFormat::Svg), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        for (const Apply* n : o.graph->toposort()) {
            const QString sub =
                shown(finalDrawing.nodes[static_cast<std::size_t>(finalDrawing.indexOf("n" + std::to_string(n->id())))]
                          .subtitle);
            QVERIFY2(countExact(texts, sub) == 1, qPrintable(sub));
        }
        // Its diff from the source.
        const GraphDiff d = diff(*source, *o.graph);
        opt.caption.step = "diff source \xE2\x86\x92 final";
        const DrawGraph diffDrawing = drawDiff(*source, *o.graph, d, opt);
        const LayoutResult dr = engine.layout(diffDrawing, lo);
        QVERIFY2(dr.warnings.empty(), dr.warnings.empty() ? "" : dr.warnings.front().c_str());
        QCOMPARE(dr.nodes.size(), diffDrawing.nodes.size());
        const QStringList diffTexts = svgTexts(engine.render(dr, RenderFormat::Svg), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(diffTexts.contains(QStringLiteral("bytes host\u2194GPU per run")));
        std::size_t classed = 0;
        for (const DrawNode& n : diffDrawing.nodes)
            if (n.node >= 0) {
                QCOMPARE(int(n.change), int(d.changeOf(n.node)));
                ++classed;
            }
        QCOMPARE(classed, d.added.size() + d.removed.size() + d.rewired.size() + d.unchanged.size());
    }

    // ---------------------------------------------------------------- passlens-cli render / report
#ifdef PASSLENS_CLI
    void cliRender() {
        QTemporaryDir dir;
        const QString model = corpus("lstm.onnx");
        // A step, as JSON.
        Cli r = cli({"render", model, "--phase", "final", "-o", dir.filePath("final.svg"), "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        for (const char* key : {"output", "nodes", "edges", "layout_ms"}) QVERIFY2(j.contains(key), key);
        QCOMPARE(j["output"].toString(), dir.filePath("final.svg"));
        QVERIFY(j["nodes"].toInt() > 10);
        QVERIFY(QFile::exists(dir.filePath("final.svg")));
        // A diff as PNG, format from the extension; an event; a session file as input.
        QCOMPARE(cli({"render", model, "--diff", "source..final", "-o", dir.filePath("d.png")}).code, 0);
        QVERIFY(QFile(dir.filePath("d.png")).size() > 1000);
        QCOMPARE(cli({"render", model, "--event", "3", "--format", "dot", "-o", dir.filePath("e3.gv")}).code, 0);
        const std::string session = dir.filePath("s.passlens.json").toStdString();
        Optimized o = optimize(model.toStdString());
        o.trace.save(session, model.toStdString());
        r = cli({"render", QString::fromStdString(session), "--diff", "source..final", "--view", "after", "-o",
                 dir.filePath("after.pdf")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        // Usage errors: 2. Bad input: 1, with the file named, and nothing written.
        QCOMPARE(
            cli({"render", model, "--phase", "final", "--diff", "source..final", "-o", dir.filePath("x.svg")}).code, 2);
        QCOMPARE(cli({"render", model, "--format", "bmp", "-o", dir.filePath("x.bmp")}).code, 2);
        QCOMPARE(cli({"render", model, "--diff", "source", "-o", dir.filePath("x.svg")}).code, 2);
        r = cli({"render", model, "--phase", "no_such_phase", "-o", dir.filePath("x.svg")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("no_such_phase") && r.err.contains("final"), r.err.constData());
        r = cli({"render", dir.filePath("missing.onnx"), "-o", dir.filePath("x.svg")});
        QCOMPARE(r.code, 1);
        QVERIFY(r.err.contains("missing.onnx"));
        r = cli({"render", model, "--overlay", dir.filePath("final.svg"), "-o", dir.filePath("x.svg")});
        QCOMPARE(r.code, 1);
        QVERIFY(!QFile::exists(dir.filePath("x.svg")));
    }

    void cliRenderNestedGraphs() {
        // render draws If branches as clusters with their nodes, in SVG and PNG (the final graph:
        // the top If is #8 there)
        QTemporaryDir dir;
        const QString model = corpus("silero_vad_legacy.onnx");
        const Cli r = cli({"render", model, "-o", dir.filePath("s.svg"), "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains("warning"), r.err.constData());
        QFile f(dir.filePath("s.svg"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray svg = f.readAll();
        QCOMPARE(svg.count("class=\"cluster\""), 18);
        const QString all = svgTexts(svg.toStdString()).join('\n');
        QVERIFY2(all.contains(QString::fromUtf8("then_branch of OnnxIf #8 \u00B7 If_25 (92 nodes)")),
                 qPrintable(all.left(3000)));
        QVERIFY(all.contains(QString::fromUtf8("else_branch of OnnxIf #77 \u00B7 If_651 (25 nodes)")));
        for (const char* name : {"Gather_501", "Concat_511", "Pad_537", "If_543"})
            QVERIFY2(all.contains(name), name); // nested nodes
        QCOMPARE(QJsonDocument::fromJson(r.out).object()["nodes"].toInt(), 519);
        const Cli png = cli({"render", model, "--dpi", "24", "-o", dir.filePath("s.png")});
        QVERIFY2(png.code == 0, qPrintable(png.err));
        QVERIFY(QFile(dir.filePath("s.png")).size() > 10000);
    }

    void cliRenderPastBudget() {
        // --budget 0: no time for Graphviz's dot; the simple layout is written, with the note in
        // the caption and on stderr, instead of nothing.
        QTemporaryDir dir;
        const QString model = corpus("resnet18.onnx");
        const QString out = dir.filePath("r.svg");
        const Cli r = cli({"render", model, "--budget", "0", "-o", out, "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QString note = "the full layout ran past 0.0 s: simple layout drawn instead";
        QVERIFY2(r.err.contains(("note: " + out + ": " + note).toUtf8()), r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["simple_layout"].toBool(), true);
        QCOMPARE(j["budget_note"].toString(), note);
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString error;
        const QStringList texts = svgTexts(f.readAll().toStdString(), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(texts.join(' ').contains(note));
        QVERIFY(texts.filter(QRegularExpression("^Gpu")).size() > 20); // the drawn graph, not just the caption
        // report: the same note as a warning per figure
        const Cli rep = cli({"report", corpus("mlp.onnx"), "-o", dir.filePath("rep"), "--budget", "0"});
        QVERIFY2(rep.code == 0, qPrintable(rep.err));
        QVERIFY2(rep.err.contains(
                     "warning: step_00_source.svg: the full layout ran past 0.0 s: simple layout drawn instead"),
                 rep.err.constData());
        QVERIFY(QFile::exists(dir.filePath("rep/step_00_source.svg")));
    }

    void cliReport() {
        QTemporaryDir dir;
        const QString out = dir.filePath("report");
        const Cli r = cli({"report", QString(PASSLENS_SOURCE_DIR) + "/resources/examples/join_alloc.graph.json", "-o",
                           out, "--pipeline", "cleanup", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["dir"].toString(), out);
        QStringList files;
        for (const auto& f : j["files"].toArray()) {
            files << QFileInfo(f.toString()).fileName();
            QVERIFY2(QFile::exists(f.toString()), qPrintable(f.toString()));
        }
        QVERIFY(files.contains("session.passlens"));
        QVERIFY(files.contains("index.html"));
        QVERIFY(files.filter(QRegularExpression("^step_\\d+_.*\\.svg$")).size() >= 2);
        QVERIFY(files.filter(QRegularExpression("^diff_\\d+_.*\\.svg$")).size() >= 1);
        QFile html(QDir(out).filePath("index.html"));
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(html.readAll());
        // Self-contained: no network, every figure it names is in the folder.
        QVERIFY(!text.contains("http://") || text.indexOf("http://") == text.indexOf("http://www.w3.org"));
        QVERIFY(!text.contains("https://"));
        QVERIFY(!text.contains("src=\"http"));
        for (const QString& f : files)
            if (f.endsWith(".svg")) QVERIFY2(text.contains(f), qPrintable(f));
        // The session reopens.
        QCOMPARE(cli({"render", QDir(out).filePath("session.passlens"), "-o", dir.filePath("again.svg")}).code, 0);
    }
#endif
};

QTEST_GUILESS_MAIN(TestDrawing)
#include "tst_drawing.moc"
