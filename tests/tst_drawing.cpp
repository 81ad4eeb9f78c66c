// tst_drawing: escaping and title lines, diff classes, the DOT of graphs and diffs, labels in the
// SVG, hostile names, folded constants, geometry as plain data (see tst_drawing.h).
#include "tst_drawing.h"

// ---------------------------------------------------------------- the escaping function
void TestDrawing::escapeFunction() {
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
void TestDrawing::titleLinesBreakReadably() {
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

void TestDrawing::diffClassesAndBytes() {
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
    QVERIFY2(q(d.summary()).contains("-1 nodes") && q(d.summary()).contains("transfers +2 / -0"), d.summary().c_str());
}

void TestDrawing::unknownTransferSizes() {
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
void TestDrawing::dotOfSmallGraph() {
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

void TestDrawing::dotOfSmallDiff() {
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

void TestDrawing::legendAndCaption() {
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
    QCOMPARE(countExact(
                 texts,
                 QString::fromUtf8("pipeline theano\u2002\u00b7\u2002phase gpuarray_opt (step 3 of 12)").simplified()),
             1);
}

// ---------------------------------------------------------------- SVG: every label once
void TestDrawing::everyLabelOnceInSvg() {
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
void TestDrawing::hostileNamesRoundTrip() {
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
        QVERIFY2(countExact(texts, expected) == 1, qPrintable("missing label: " + expected + "\nSVG texts:\n" + all));
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

void TestDrawing::manyConstantsFoldIntoOneBox() {
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
void TestDrawing::diffClassesMatchDiff() {
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
            QVERIFY(q(r.dot).contains(QString("n%1 [").arg(id)) &&
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
void TestDrawing::geometryIsPlainData() {
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

QTEST_GUILESS_MAIN(TestDrawing)
