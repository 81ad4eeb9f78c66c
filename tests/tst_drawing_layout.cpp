// tst_drawing: layout budget, cancel, cache and stable layout, Graphviz errors (see
// tst_drawing.h).
#include "tst_drawing.h"

void TestDrawing::budgetFallsBackToFocusedView() {
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
void TestDrawing::budgetZeroDrawsSimpleLayout() {
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

void TestDrawing::fullLayoutPastBudgetDrawsFocusedView() {
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
    QCOMPARE(q(s.budgetNote), QString("the full layout ran past 0.0 s and the focused view's past the 0.0 s budget: "
                                      "simple layout of the focused view drawn instead"));
    QVERIFY(svgTexts(engine.render(s, RenderFormat::Svg))
                .join(' ')
                .contains("simple layout of the focused view drawn instead"));

    // Above the node threshold the focused view is laid out directly; past the budget, simply.
    o.nodeThreshold = 1500;
    const LayoutResult t = engine.layout(drawing, o);
    QVERIFY(t.focused && t.simple);
    QCOMPARE(q(t.focusReason), QString("3,002 nodes (threshold 1,500)"));
    QCOMPARE(q(t.budgetNote),
             QString("Graphviz's layout of the focused view ran past the 0.0 s budget: simple layout drawn instead"));
}

void TestDrawing::cancelStopsLayout() {
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

void TestDrawing::cacheMakesSteppingBackInstant() {
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

// layoutStable past its budget draws as layout() does (a drawing always comes back), instead of
// throwing TimedOut from its nop2 pass: for a small graph (its fresh layout, here the simple one)
// and for one above the size laid out whole (a layout of the graph within what is left: none).
void TestDrawing::stableLayoutPastBudgetFallsBack_data() {
    QTest::addColumn<int>("nodes");
    QTest::newRow("whole graph laid out") << 20;
    QTest::newRow("new nodes laid out") << 300;
}

void TestDrawing::stableLayoutPastBudgetFallsBack() {
    QFETCH(int, nodes);
    const DrawGraph drawing = drawGraph(*chainGraph(nodes));
    LayoutOptions o = quickOptions();
    o.nodeThreshold = 100000; // no focused view, so the stable path is taken
    o.budget = std::chrono::milliseconds(0);
    LayoutEngine engine;
    const LayoutResult previous = engine.layout(drawing, o);
    QVERIFY(previous.simple);
    const LayoutResult r = engine.layoutStable(drawing, previous, o);
    QVERIFY(r.simple);
    QVERIFY(!r.stable);
    QCOMPARE(r.pinnedNodes, std::size_t(0));
    QCOMPARE(q(r.budgetNote), QString("the full layout ran past 0.0 s: simple layout drawn instead"));
    QCOMPARE(r.nodes.size(), drawing.nodes.size());
    QCOMPARE(r.edges.size(), drawing.edges.size());
}

// Stepping rewrite by rewrite: every node the previous step had keeps its exact position,
// new nodes land on free space (no box overlaps another), every edge is routed.
// transformer: ~130 drawn nodes (new nodes arranged by a dot layout of the whole step);
// mobilenet_v2: ~300 (arranged by a layout of the changed region only).
void TestDrawing::stableLayoutKeepsUnchangedNodes_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("steps");
    QTest::newRow("transformer_encoder_layer") << corpus("transformer_encoder_layer.onnx") << 1000;
    QTest::newRow("mobilenet_v2") << corpus("mobilenet_v2.onnx") << 40;
}

void TestDrawing::stableLayoutKeepsUnchangedNodes() {
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
    // a hang guard only (speed is bench_layout's business): a step past the budget would be
    // drawn afresh, which this test must not depend on (sanitizer builds, busy machines)
    opt.budget = std::chrono::minutes(10);
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
                        QVERIFY2(
                            !overlap,
                            qPrintable(
                                QStringLiteral("event %1: new node %2 overlaps %3").arg(seq).arg(q(n.key), q(m.key))));
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
            if (f.open(QIODevice::WriteOnly)) f.write(QByteArray::fromStdString(engine.render(cur, RenderFormat::Png)));
            qInfo("event %d (%s): %s, %zu of %zu kept", seq,
                  o.trace.events()[static_cast<std::size_t>(seq - 1)].rewriter.c_str(), cur.stable ? "stable" : "fresh",
                  cur.pinnedNodes, cur.nodes.size());
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

void TestDrawing::graphvizErrorsAreReported() {
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
