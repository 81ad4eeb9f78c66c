// tst_drawing: export, trace steps, the corpus models, and passlens-cli render / report (see
// tst_drawing.h).
#include "tst_drawing.h"

#include <passlens/layout/GraphvizContext.h>

#include <QStandardPaths>

// ---------------------------------------------------------------- export
void TestDrawing::exportAllFormatsAtomically() {
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

void TestDrawing::pngPastCairoLimitIsRefused() {
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

// ------------------------------------------------- exports rendered by the layout's process
// An export laid out for the file (passlens-cli render, report) is what `dot -Tsvg` draws
// from the DOT PassLens writes: compared with the libgvc PassLens links (renderDot, always
// there) and with the `dot` command when it is installed, modulo Graphviz's version comment.
void TestDrawing::exportIsDotOfItsDot_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("asDiff"); // else the final step, with its nested graphs' clusters
    for (const char* m : {"resnet18.onnx", "lstm.onnx"})
        QTest::newRow((std::string(m) + " diff").c_str()) << corpus(m) << true;
    QTest::newRow("silero_vad_legacy.onnx final") << corpus("silero_vad_legacy.onnx") << false;
}

void TestDrawing::exportIsDotOfItsDot() {
    QFETCH(QString, model);
    QFETCH(bool, asDiff);
    QVERIFY2(QFile::exists(model), qPrintable(model + " is missing: the corpus is required (PASSLENS_CORPUS_DIR)"));
    Optimized o = optimize(model.toStdString());
    const auto source = o.trace.graphAfterPhase("source");
    const GraphDiff d = diff(*source, *o.graph);
    DrawOptions opt;
    opt.nestedGraphs = true; // as passlens-cli render draws
    opt.caption.source = QFileInfo(model).fileName().toStdString();
    const DrawGraph drawing = asDiff ? drawDiff(*source, *o.graph, d, opt) : drawGraph(*o.graph, opt);
    QCOMPARE(!drawing.clusters.empty(), !asDiff);
    LayoutOptions lo = quickOptions();
    lo.budget = std::chrono::milliseconds(120000); // sanitizer builds
    const std::string dot = writeDot(drawing, lo.dot);
    LayoutEngine engine;
    QTemporaryDir dir;
    const QString path = dir.filePath("diff.svg");
    std::size_t bytes = 0;
    const LayoutResult r = exportDrawing(engine, drawing, path.toStdString(), {}, lo, &bytes);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray svg = f.readAll();
    QCOMPARE(std::size_t(svg.size()), bytes);
    QVERIFY(svg.startsWith("<?xml"));
    // (Graphviz 2.43 in this process, after the warm-up's layouts, has left out clusters that the
    // forked child draws: drawings with clusters are not compared with it.)
    if (drawing.clusters.empty())
        QVERIFY2(svg == QByteArray::fromStdString(renderDot(dot, "svg")),
                 "the export differs from libgvc's dot -Tsvg of the same DOT");
    // The geometry, read in the layout's process without writing the positioned DOT (with
    // clusters: from that DOT), is what layout() reads from that DOT, value for value.
    // (Graphviz 2.43 places clusters differently from one layout to the next within a process,
    // so there only the nodes are compared, and not with `dot`.)
    const LayoutResult shown = engine.layout(drawing, lo);
    QCOMPARE(r.dot, dot);
    QCOMPARE(r.positionedDot.empty(), asDiff);
    QCOMPARE(r.nodes.size(), drawing.nodes.size());
    QCOMPARE(r.nodes.size(), shown.nodes.size());
    std::set<std::string> keys, shownKeys;
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        keys.insert(r.nodes[i].key);
        shownKeys.insert(shown.nodes[i].key);
    }
    QVERIFY(keys == shownKeys);
    for (std::size_t i = 0; asDiff && i < r.nodes.size(); ++i) {
        const LayoutNode& a = r.nodes[i];
        const LayoutNode& b = shown.nodes[i];
        QCOMPARE(a.key, b.key);
        QVERIFY2(a.center == b.center && a.width == b.width && a.height == b.height, a.key.c_str());
        QCOMPARE(a.title, b.title);
        QCOMPARE(int(a.change), int(b.change));
    }
    QCOMPARE(r.edges.size(), shown.edges.size());
    for (std::size_t i = 0; asDiff && i < r.edges.size(); ++i) {
        const LayoutEdge& a = r.edges[i];
        const LayoutEdge& b = shown.edges[i];
        QVERIFY2(a.tail == b.tail && a.head == b.head && a.inputIndex == b.inputIndex && a.label == b.label,
                 (a.tail + " -> " + a.head).c_str());
        QVERIFY(a.spline == b.spline && a.arrowTip == b.arrowTip && a.labelPos == b.labelPos);
    }
    QVERIFY(!asDiff || (r.width == shown.width && r.height == shown.height && r.x0 == shown.x0 && r.y0 == shown.y0));
    QVERIFY(r.captionPos && (!asDiff || r.captionPos == shown.captionPos));

    if (!asDiff) { // nested graphs: the clusters are drawn (their placement varies, see above)
        QVERIFY(svg.contains("class=\"cluster\""));
        return;
    }
    // The `dot` command of the same Graphviz.
    const QString dotCommand = QStandardPaths::findExecutable(QStringLiteral("dot"));
    if (dotCommand.isEmpty())
        QSKIP("Graphviz's `dot` command is not installed (the CI installs libgraphviz-dev only): the export was "
              "compared with the linked libgvc's rendering only");
    const QRegularExpression versionLine(QStringLiteral("<!-- Generated by graphviz version [^>]*-->\\n"));
    auto versionOf = [&](const QByteArray& text) { return versionLine.match(QString::fromUtf8(text)).captured(); };
    QProcess p;
    p.start(dotCommand, {QStringLiteral("-Tsvg")});
    QVERIFY(p.waitForStarted());
    p.write(QByteArray::fromStdString(dot));
    p.closeWriteChannel();
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 0);
    const QByteArray command = p.readAllStandardOutput();
    if (versionOf(command) != versionOf(svg))
        QSKIP(qPrintable("`dot` is another Graphviz (" + versionOf(command).trimmed() + ") than the linked libgvc (" +
                         versionOf(svg).trimmed() + "): its drawing may differ"));
    QCOMPARE(QString::fromUtf8(command).remove(versionLine), QString::fromUtf8(svg).remove(versionLine));
}

// Diff views and the PNG dpi are set before dot's layout: nothing moves. Without the
// geometry only the box comes back; PNG limits and the simple layout as for exportLayout.
void TestDrawing::exportViewsAndFormats() {
    const std::string file = std::string(PASSLENS_SOURCE_DIR) + "/resources/examples/join_alloc.graph.json";
    Optimized o = optimize(file);
    const auto source = o.trace.graphAfterPhase("source");
    const GraphDiff d = diff(*source, *o.graph);
    QVERIFY(!d.added.empty() && !d.removed.empty());
    const DrawGraph drawing = drawDiff(*source, *o.graph, d);
    LayoutEngine engine;
    const LayoutOptions lo = quickOptions();
    const RenderedLayout overlay = engine.layoutAndRender(drawing, {}, lo);
    QVERIFY(overlay.layout.warnings.empty());
    for (const DiffView view : {DiffView::Before, DiffView::After}) {
        RenderOptions ro;
        ro.view = view;
        const RenderedLayout out = engine.layoutAndRender(drawing, ro, lo);
        QCOMPARE(out.layout.nodes.size(), overlay.layout.nodes.size());
        for (std::size_t i = 0; i < out.layout.nodes.size(); ++i)
            QVERIFY2(out.layout.nodes[i].center == overlay.layout.nodes[i].center, out.layout.nodes[i].key.c_str());
        QCOMPARE(out.layout.edges.size(), overlay.layout.edges.size());
        for (std::size_t i = 0; i < out.layout.edges.size(); ++i)
            QVERIFY(out.layout.edges[i].spline == overlay.layout.edges[i].spline);
        const QStringList texts = svgTexts(out.bytes);
        const NodeChange hidden = view == DiffView::Before ? NodeChange::Added : NodeChange::Removed;
        const NodeChange kept = view == DiffView::Before ? NodeChange::Removed : NodeChange::Added;
        for (const DrawNode& n : drawing.nodes) {
            if (n.node < 0 || (n.change != hidden && n.change != kept)) continue;
            const QString sub = shown(n.subtitle + " \xC2\xB7");
            QVERIFY2(texts.contains(sub) == (n.change == kept), qPrintable(sub));
        }
    }
    // Without the geometry: the same bytes, the box in whole points, no nodes or positioned DOT.
    RenderOptions bare;
    bare.geometry = false;
    const RenderedLayout noGeometry = engine.layoutAndRender(drawing, bare, lo);
    QVERIFY(noGeometry.bytes == overlay.bytes);
    QVERIFY(noGeometry.layout.nodes.empty() && noGeometry.layout.edges.empty());
    QVERIFY(noGeometry.layout.positionedDot.empty());
    QVERIFY(std::abs(noGeometry.layout.width - overlay.layout.width) <= 1);
    QVERIFY(std::abs(noGeometry.layout.height - overlay.layout.height) <= 1);
    QCOMPARE(noGeometry.layout.totalNodes, drawing.nodes.size());
    // PNG at 72 dpi: one pixel per point plus the pad, as pixelSize says.
    RenderOptions png;
    png.format = RenderFormat::Png;
    png.dpi = 72;
    const RenderedLayout image = engine.layoutAndRender(drawing, png, lo);
    QVERIFY(QByteArray::fromStdString(image.bytes).startsWith("\x89PNG"));
    const auto be32 = [&](std::size_t at) {
        const auto* b = reinterpret_cast<const unsigned char*>(image.bytes.data() + at);
        return double((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]);
    };
    const auto [w, h] = image.layout.pixelSize(72);
    QVERIFY2(std::abs(be32(16) - w) <= 1 && std::abs(be32(20) - h) <= 1,
             qPrintable(QString("%1 x %2 against %3 x %4").arg(be32(16)).arg(be32(20)).arg(w).arg(h)));
    // The DOT format: Graphviz's positioned DOT, as layout() has it.
    RenderOptions dotFormat;
    dotFormat.format = RenderFormat::Dot;
    const RenderedLayout positioned = engine.layoutAndRender(drawing, dotFormat, lo);
    QCOMPARE(positioned.bytes, positioned.layout.positionedDot);
    QVERIFY(positioned.bytes == engine.layout(drawing, lo).positionedDot);

    // A PNG past cairo's limit: refused with the path, nothing written; a bad dpi too.
    QTemporaryDir dir;
    const QString tall = dir.filePath("tall.png");
    auto chain = chainGraph(300);
    QString message;
    try {
        RenderOptions big = png;
        big.dpi = 2400;
        exportDrawing(engine, drawGraph(*chain), tall.toStdString(), big, lo);
    } catch (const Error& e) {
        message = e.what();
    }
    QVERIFY2(message.startsWith(tall + ": the PNG would be") && message.contains("32,767") &&
                 message.contains("SVG or PDF"),
             qPrintable(message));
    QVERIFY(!QFile::exists(tall));
    // Cancelled: LayoutError Cancelled, nothing written.
    CancelToken cancelled;
    cancelled.cancel();
    const QString never = dir.filePath("never.svg");
    try {
        exportDrawing(engine, drawing, never.toStdString(), {}, lo, nullptr, &cancelled);
        QFAIL("the export was not cancelled");
    } catch (const LayoutError& e) {
        QCOMPARE(int(e.kind()), int(LayoutError::Kind::Cancelled));
    }
    QVERIFY(!QFile::exists(never));
    message.clear();
    try {
        RenderOptions zero = png;
        zero.dpi = 0;
        engine.layoutAndRender(drawing, zero, lo);
    } catch (const Error& e) {
        message = e.what();
    }
    QVERIFY2(message.startsWith("render: dpi must be in (0, 2400]"), qPrintable(message));

    // Past the budget: the simple layout, rendered with its note, the geometry as asked.
    LayoutOptions none = lo;
    none.budget = std::chrono::milliseconds(0);
    const RenderedLayout simple = engine.layoutAndRender(drawGraph(*transferGraph()), bare, none);
    QVERIFY(simple.layout.simple);
    QVERIFY(simple.layout.nodes.empty() && simple.layout.positionedDot.empty());
    QVERIFY(svgTexts(simple.bytes).join(' ').contains("simple layout drawn instead"));
}

// ---------------------------------------------------------------- steps of a trace
void TestDrawing::traceSteps() {
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
void TestDrawing::corpusModelsRender_data() {
    QTest::addColumn<QString>("model");
    for (const char* m :
         {"mlp.onnx", "lstm.onnx", "shape_ops.onnx", "transformer_encoder_layer.onnx", "squeezenet1_1.onnx",
          "resnet18.onnx", "mobilenet_v2.onnx", "silero_vad_legacy.onnx", "ch_PP-OCRv4_det_infer.onnx"})
        QTest::newRow(m) << corpus(m);
}

void TestDrawing::corpusModelsRender() {
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
        const QString sub = shown(
            finalDrawing.nodes[static_cast<std::size_t>(finalDrawing.indexOf("n" + std::to_string(n->id())))].subtitle);
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

void TestDrawing::cliRender() {
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
    QCOMPARE(cli({"render", model, "--phase", "final", "--diff", "source..final", "-o", dir.filePath("x.svg")}).code,
             2);
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

void TestDrawing::cliRenderNestedGraphs() {
    // render draws If branches as clusters with their nodes, in SVG and PNG (the final graph:
    // the top If is #8 there)
    QTemporaryDir dir;
    const QString model = corpus("silero_vad_legacy.onnx");
    // --budget 600: a hang guard only; past the default 10 s (sanitizer builds, a busy machine)
    // a focused or simple layout without the clusters would be drawn
    const Cli r = cli({"render", model, "-o", dir.filePath("s.svg"), "--json", "--budget", "600"});
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

void TestDrawing::cliRenderPastBudget() {
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
    QVERIFY2(
        rep.err.contains("warning: step_00_source.svg: the full layout ran past 0.0 s: simple layout drawn instead"),
        rep.err.constData());
    QVERIFY(QFile::exists(dir.filePath("rep/step_00_source.svg")));
}

void TestDrawing::cliReport() {
    QTemporaryDir dir;
    const QString out = dir.filePath("report");
    const Cli r = cli({"report", QString(PASSLENS_SOURCE_DIR) + "/resources/examples/join_alloc.graph.json", "-o", out,
                       "--pipeline", "cleanup", "--json"});
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
