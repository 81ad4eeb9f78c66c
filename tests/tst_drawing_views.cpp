// tst_drawing: the timing overlay, nested graphs as clusters and the focused view of large
// graphs (see tst_drawing.h).
#include "tst_drawing.h"

// ---------------------------------------------------------------- timing overlay
void TestDrawing::timingOverlay() {
    auto g = transferGraph();
    DrawGraph drawing = drawGraph(*g);
    const json doc = {
        {"profiles",
         {{{"phase", "final"},
           {"device", "cuda:0 Test GPU"},
           {"nodes",
            {{{"node", 1}, {"time_us", 300.0}, {"kind", "kernel"}}, {{"node", 3}, {"time_us", 2.5}, {"kind", "host"}}}},
           {"transfers",
            {{{"node", 0}, {"bytes", 32}, {"direction", "HtoD"}, {"time_us", 40.0}},
             {{"node", 2}, {"bytes", 32}, {"direction", "DtoH"}, {"time_us", 57.5}}}}}}}};
    const ExecutionProfile p = ExecutionProfile::fromDocument(doc, "profile.json");
    QCOMPARE(p.totalUs(), 400.0);
    for (bool logScale : {false, true}) {
        DrawGraph d = drawing;
        TimingOptions to;
        to.logScale = logScale;
        applyTiming(d, p, to);
        QVERIFY(d.timing.present);
        const DrawNode& hot = d.nodes[static_cast<std::size_t>(d.indexOf("n1"))];
        QVERIFY(hot.timing);
        QCOMPARE(hot.timing->share, 1.0);
        QCOMPARE(hot.timing->us, 300.0);
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
    // A transfer of unknown size (no "bytes" in the file); bad files: tst_trace profileDocuments.
    json unknown = doc;
    unknown["profiles"][0]["transfers"][0].erase("bytes");
    DrawGraph u = drawing;
    applyTiming(u, ExecutionProfile::fromDocument(unknown, "profile.json"));
    QCOMPARE(q(u.nodes[static_cast<std::size_t>(u.indexOf("n0"))].detail),
             QString::fromUtf8("HtoD \u00b7 ? B \u00b7 40.0 \u00b5s \u00b7 10.0%"));
}

// ---------------------------------------------------------------- nested graphs
void TestDrawing::nestedGraphsAsClusters() {
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
            QVERIFY2(all.contains(shown("#" + std::to_string(a->id()) + " \xC2\xB7 " + a->name())), a->name().c_str());
            ++names;
        }
    QCOMPARE(names, std::size_t(266));
    QCOMPARE(QString::fromStdString(svg).count("class=\"cluster\""), 18);
}

void TestDrawing::nestedLoopBodyAsCluster() {
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
    Variable* c = body->makeApply(Op::get("OnnxIdentity"), {cond}, std::vector<Type>{Type::parse("bool[]")}, "cond_out")
                      ->output(0);
    Variable* chosen =
        body->makeApply(Op::get("OnnxIf", {}, {{"then_branch", branch("exp")}, {"else_branch", branch("neg")}}), {cond},
                        std::vector<Type>{Type::parse("float32[4]")}, "pick")
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
void TestDrawing::focusedViewOfLargeGraph() {
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

void TestDrawing::focusKeepsChangedRegion() {
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

// The 20k-node block graph's final step: no changed region, so the view stands on the transfers,
// one of which (the shared weight's) feeds every block. Its 600 consumers no longer fill the view
// at one hop and leave the seeds alone with one "… N nodes" box: the hub is shown, not walked
// through, and the view widens along the chain from the other transfer to the output.
void TestDrawing::focusViewDoesNotWalkThroughHubs() {
    auto node = [](std::string key, NodeCategory c) {
        DrawNode n;
        n.key = std::move(key);
        n.category = c;
        n.title = n.key;
        return n;
    };
    auto edge = [](std::string t, std::string h) {
        DrawEdge e;
        e.tail = std::move(t);
        e.head = std::move(h);
        return e;
    };
    DrawGraph g;
    g.nodes.push_back(node("w", NodeCategory::Transfer)); // the hub
    for (int k = 0; k < 600; ++k) {
        g.nodes.push_back(node("c" + std::to_string(k), NodeCategory::GpuOp));
        if (k > 0) g.edges.push_back(edge("c" + std::to_string(k - 1), "c" + std::to_string(k)));
        g.edges.push_back(edge("w", "c" + std::to_string(k)));
    }
    g.nodes.push_back(node("t", NodeCategory::Transfer));
    g.nodes.push_back(node("o", NodeCategory::Output));
    g.edges.push_back(edge("c599", "t"));
    g.edges.push_back(edge("t", "o"));

    auto shown = [](const DrawGraph& f) {
        std::set<std::string> keys;
        for (const DrawNode& n : f.nodes)
            if (n.category != NodeCategory::Collapsed) keys.insert(n.key);
        return keys;
    };
    const DrawGraph f = focusView(g, 2, 100);
    QCOMPARE(f.focusAround, std::string("the transfers"));
    const std::set<std::string> keys = shown(f);
    QCOMPARE(keys.size(), std::size_t(100)); // widened until the next hop would not fit
    QVERIFY(keys.count("w") && keys.count("t") && keys.count("o") && keys.count("c599"));
    QVERIFY(keys.count("c503") && !keys.count("c400")); // the chain's end, not the hub's first consumers
    QVERIFY(!keys.count("c0"));

    // the hub as the only seed: nothing around it but through it, so the view is its first
    // consumers, breadth-first, as many as fit
    DrawGraph hubOnly = g;
    hubOnly.nodes[0].seed = true;
    const std::set<std::string> around = shown(focusView(hubOnly, 2, 100));
    QCOMPARE(around.size(), std::size_t(100));
    QVERIFY(around.count("w") && around.count("c0") && around.count("c98") && !around.count("c99"));
}

// A phase that changed hundreds of nodes spread along a deep graph (merge2 of the 20k block
// graph): the view shows the first of them with their neighbours, as many as fit, not a row of
// hundreds of unconnected boxes.
void TestDrawing::focusViewOfManyChangesTakesTheFirst() {
    auto g = chainGraph(3000);
    DrawOptions opt;
    const auto& topo = g->toposort();
    for (std::size_t i = 0; i < topo.size(); i += 5) opt.focus.push_back(topo[i]->id()); // 600 seeds
    const DrawGraph drawing = drawGraph(*g, opt);
    const auto seeds =
        std::count_if(drawing.nodes.begin(), drawing.nodes.end(), [](const DrawNode& n) { return n.seed; });
    QVERIFY(seeds >= 600); // (and the value boxes next to seeds): more than the 100 the view holds
    const DrawGraph f = focusView(drawing, 2, 100);
    const std::string prefix = "the first ";
    QVERIFY2(f.focusAround.rfind(prefix, 0) == 0, f.focusAround.c_str());
    const std::size_t k = std::stoul(f.focusAround.substr(prefix.size()));
    QVERIFY2(k >= 15 && k <= 25, f.focusAround.c_str()); // 5 nodes a seed with its 2 hops
    QVERIFY2(f.focusAround.find(" of " + std::to_string(seeds) + " changed nodes") != std::string::npos,
             f.focusAround.c_str());
    std::set<std::string> keys;
    for (const DrawNode& n : f.nodes)
        if (n.category != NodeCategory::Collapsed && n.node >= 0) keys.insert(n.key);
    QVERIFY(keys.size() <= 100);
    QVERIFY(keys.count("n" + std::to_string(topo[0]->id())));
    QVERIFY(keys.count("n" + std::to_string(topo[5 * (k - 2)]->id()))); // (the input box is a seed too)
    QVERIFY(!keys.count("n" + std::to_string(topo[5 * k + 10]->id()))); // nothing further on
}

void TestDrawing::focusSeedsBringTheirValueBoxes() {
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

namespace {

// `a` and `b` draw the same: the same DOT text (nodes, labels, placeholders, edges, caption) and
// the same facts the DOT does not carry (ids, seeds, hidden counts, focus).
void compareDrawings(const DrawGraph& a, const DrawGraph& b, const QString& what) {
    QVERIFY2(writeDot(a) == writeDot(b), qPrintable(what));
    QCOMPARE(a.nodes.size(), b.nodes.size());
    QCOMPARE(a.edges.size(), b.edges.size());
    for (std::size_t i = 0; i < a.nodes.size(); ++i) {
        const DrawNode &x = a.nodes[i], &y = b.nodes[i];
        QVERIFY2(x.key == y.key && x.node == y.node && x.var == y.var && x.seed == y.seed &&
                     x.hiddenCount == y.hiddenCount && x.name == y.name && x.change == y.change &&
                     x.timing.has_value() == y.timing.has_value() &&
                     (!x.timing || (x.timing->share == y.timing->share && x.timing->us == y.timing->us)),
                 qPrintable(what + " node " + q(x.key)));
    }
    for (std::size_t i = 0; i < a.edges.size(); ++i)
        QVERIFY2(a.edges[i].change == b.edges[i].change, qPrintable(what + " edge " + QString::number(i)));
    QCOMPARE(a.isDiff, b.isDiff);
    QCOMPARE(a.timing.present, b.timing.present);
    QCOMPARE(a.timing.maxUs, b.timing.maxUs);
    QCOMPARE(a.timing.binUpperUs, b.timing.binUpperUs);
    QCOMPARE(a.focused, b.focused);
    QCOMPARE(q(a.focusAround), q(b.focusAround));
    QCOMPARE(a.focusHops, b.focusHops);
    QCOMPARE(a.hiddenNodes, b.hiddenNodes);
    QCOMPARE(a.totalNodes, b.totalNodes);
}

// drawFocused against focusView of the whole drawing, for the window's seeds of `events`' steps
// (their own changes, as DebugSession draws a big step), no seeds, and a few hops and sizes.
void compareFocusedViews(const Trace& trace, const std::vector<int>& events, const QString& model) {
    for (int ev : events) {
        const auto g = trace.graphAfter(ev);
        for (bool seeded : {true, false}) {
            DrawOptions opt;
            opt.caption.step = "event " + std::to_string(ev);
            if (seeded) opt.focus = nodesAddedBetween(trace, std::max(ev - 1, 0), ev);
            const DrawGraph whole = drawGraph(*g, opt);
            for (auto [hops, maxNodes] : {std::pair{2, std::size_t{400}}, {0, 20}, {5, 1000}}) {
                const QString what = QString("%1 event %2 seeded %3 hops %4 max %5")
                                         .arg(model)
                                         .arg(ev)
                                         .arg(seeded)
                                         .arg(hops)
                                         .arg(maxNodes);
                const DrawGraph direct = drawFocused(*g, opt, 0, hops, maxNodes);
                QVERIFY2(direct.focused, qPrintable(what));
                compareDrawings(direct, focusView(whole, hops, maxNodes), what);
                if (QTest::currentTestFailed()) return;
            }
            // at or below its threshold: the whole drawing
            compareDrawings(drawFocused(*g, opt, whole.nodes.size()), whole, model + " whole");
        }
    }
}

// A made-up profile of every node id below `limit` (1-97 µs by id; every fifth none), as a run
// of the final step gives one: steps before it lack some of its nodes and have some it lacks.
ExecutionProfile madeUpProfile(NodeId limit) {
    ExecutionProfile p;
    p.device = "made up";
    for (NodeId id = 0; id < limit; ++id) {
        ProfileNode n;
        n.node = id;
        if (id % 5 != 0) n.timeUs = 1.0 + static_cast<double>(id % 97);
        p.nodes.push_back(std::move(n));
    }
    return p;
}

// drawDiffFocused and the overlay on focused views against focusView of the whole drawings, for
// diffs between `pairs` of events (before, after) and the steps of their second events.
void compareFocusedDiffsAndTimings(const Trace& trace, const std::vector<std::pair<int, int>>& pairs,
                                   const QString& model) {
    const auto last = trace.graphAfter(static_cast<int>(trace.events().size()));
    const ExecutionProfile profile = madeUpProfile(last->nodeIdLimit());
    for (auto [from, to] : pairs) {
        const auto a = trace.graphAfter(from), b = trace.graphAfter(to);
        const GraphDiff d = diff(*a, *b);
        DrawOptions opt;
        opt.caption.step = "diff " + std::to_string(from) + " .. " + std::to_string(to);
        const DrawGraph whole = drawDiff(*a, *b, d, opt);
        for (auto [hops, maxNodes] : {std::pair{2, std::size_t{400}}, {0, 20}, {5, 1000}}) {
            const QString what =
                QString("%1 diff %2..%3 hops %4 max %5").arg(model).arg(from).arg(to).arg(hops).arg(maxNodes);
            const DrawGraph direct = drawDiffFocused(*a, *b, d, opt, 0, hops, maxNodes);
            QVERIFY2(direct.focused && direct.isDiff, qPrintable(what));
            compareDrawings(direct, focusView(whole, hops, maxNodes), what);
            if (QTest::currentTestFailed()) return;
        }
        compareDrawings(drawDiffFocused(*a, *b, d, opt, whole.nodes.size()), whole, model + " whole diff");
        if (QTest::currentTestFailed()) return;
        // the timing overlay, scaled over the whole step (or both steps of the diff)
        for (const TimingOptions& t : {TimingOptions{}, TimingOptions{true, 0}}) {
            DrawGraph paintedDiff = whole;
            applyTiming(paintedDiff, profile, t);
            DrawGraph viewDiff = drawDiffFocused(*a, *b, d, opt, 0);
            applyTiming(viewDiff, profile, t, {a.get(), b.get()});
            compareDrawings(viewDiff, focusView(paintedDiff, 2, 400), model + " timed diff");
            DrawOptions step;
            step.focus = changedRegion(trace, *b, from, to);
            DrawGraph painted = drawGraph(*b, step);
            applyTiming(painted, profile, t);
            DrawGraph view = drawFocused(*b, step, 0);
            applyTiming(view, profile, t, {b.get()});
            QVERIFY(view.timing.present && view.timing.maxUs > 0);
            compareDrawings(view, focusView(painted, 2, 400), model + " timed step " + QString::number(to));
            if (QTest::currentTestFailed()) return;
        }
    }
}

} // namespace

void TestDrawing::focusedDiffsAndTimingsAreTheFocusedViewsOfTheWholeDrawings() {
    const Optimized o = optimize(corpus("ch_PP-OCRv4_det_infer.onnx").toStdString());
    const int last = static_cast<int>(o.trace.events().size());
    QVERIFY(last > 2);
    // one rewrite, a phase's worth, the whole run (GraphToGpu: most nodes replaced)
    compareFocusedDiffsAndTimings(o.trace, {{0, 1}, {1, 2}, {last / 2, last}, {0, last}}, "PP-OCR");
    if (QTest::currentTestFailed()) return;
    // a generated 20,001-node graph (bench_inspect --nodes 20001 --scoped), with the pipeline
    const Optimized big = optimize(bench::blockGraph(20001, true));
    const int events = static_cast<int>(big.trace.events().size());
    compareFocusedDiffsAndTimings(big.trace, {{0, 1}, {events / 3 - 1, events / 3}, {events - 1, events}}, "20k");
}

void TestDrawing::drawFocusedIsTheFocusedViewOfTheWholeDrawing() {
    // corpus models: PP-OCR (GPU transfers, hundreds of nodes), silero (many constants, nested
    // graphs); steps across the theano pipeline: the source, early events, the final graph
    for (const char* name : {"ch_PP-OCRv4_det_infer.onnx", "silero_vad_legacy.onnx"}) {
        const Optimized o = optimize(corpus(name).toStdString());
        const int last = static_cast<int>(o.trace.events().size());
        QVERIFY2(last > 2, name);
        compareFocusedViews(o.trace, {0, 1, 2, last / 2, last}, QString::fromLatin1(name));
        if (QTest::currentTestFailed()) return;
    }
    // a generated 20,001-node graph (bench_inspect --nodes 20001 --scoped), with the pipeline
    const Optimized big = optimize(bench::blockGraph(20001, true));
    const Trace& trace = big.trace;
    const int last = static_cast<int>(trace.events().size());
    QVERIFY(last > 100);
    compareFocusedViews(trace, {0, 1, last / 3, last}, "20k");
    if (QTest::currentTestFailed()) return;

    // the layout of the view made by the caller is the one layout() makes of the whole drawing
    const auto g = trace.graphAfter(last);
    DrawOptions opt;
    opt.focus = nodesAddedBetween(trace, last - 1, last);
    LayoutOptions lo = quickOptions();
    const LayoutResult fromWhole = LayoutEngine().layout(drawGraph(*g, opt), lo);
    const LayoutResult fromView =
        LayoutEngine().layout(drawFocused(*g, opt, lo.nodeThreshold, lo.focusHops, lo.focusMaxNodes), lo);
    QVERIFY(fromWhole.focused && fromView.focused);
    QCOMPARE(q(fromView.dot), q(fromWhole.dot));
    QCOMPARE(q(fromView.focusReason), q(fromWhole.focusReason));
    QCOMPARE(fromView.hiddenNodes, fromWhole.hiddenNodes);
    QCOMPARE(fromView.totalNodes, fromWhole.totalNodes);
    QCOMPARE(fromView.nodes.size(), fromWhole.nodes.size());
}

void TestDrawing::focusedViewOfARemovalCentresOnItsNeighbours() {
    // a generated 20,001-node graph (bench_inspect --nodes 20001 --scoped), with the pipeline
    auto big = bench::blockGraph(20001, true);
    Trace trace;
    const Pipeline p = Pipeline::builtin("theano");
    const PipelineRun run = p.run(*big, &trace);
    trace.finish(run, *big, p.buildContext().caps);
    // the first applied event that only removes nodes, and the first that adds some
    int removing = 0, adding = 0;
    for (const RewriteEvent& e : trace.events()) {
        if (e.status != EventStatus::Applied) continue;
        if (removing == 0 && e.added.empty() && !e.removed.empty()) removing = e.seq;
        if (adding == 0 && !e.added.empty()) adding = e.seq;
    }
    QVERIFY(removing > 0 && adding > 0);
    const RewriteEvent& event = trace.events()[static_cast<std::size_t>(removing - 1)];
    QCOMPARE(q(event.rewriter), QStringLiteral("gpua_constant_folding")); // a GpuFromHost of a constant

    // what the user expects to see, read in the graph before the event: the producers of the
    // removed nodes' inputs and the consumers of their outputs (now of the replacements)
    const auto before = trace.graphAfter(removing - 1), after = trace.graphAfter(removing);
    const std::set<NodeId> removed(event.removed.begin(), event.removed.end());
    std::set<NodeId> neighbours;
    for (NodeId id : event.removed) {
        const Apply* n = before->node(id);
        QVERIFY(n && n->inGraph());
        QVERIFY2(n->op().str().starts_with("GpuFromHost") && n->input(0)->isConstant(), n->op().str().c_str());
        for (const Variable* in : n->inputs())
            if (in->owner() && !removed.count(in->owner()->id())) neighbours.insert(in->owner()->id());
        for (const Variable* out : n->outputs())
            for (const Client& c : out->clients())
                if (c.node && !removed.count(c.node->id())) neighbours.insert(c.node->id());
    }
    QVERIFY(!neighbours.empty());
    for (NodeId id : neighbours) {
        QVERIFY(after->node(id)->inGraph());
        QVERIFY2(after->node(id)->op().str().starts_with("GpuAlloc"), after->node(id)->op().str().c_str());
    }
    const std::vector<NodeId> seeds = changedRegion(trace, *after, removing - 1, removing);
    QCOMPARE(seeds, std::vector<NodeId>(neighbours.begin(), neighbours.end()));

    // the window's focused view of the step (its own changes, the layout's threshold and size)
    const LayoutOptions lo;
    QVERIFY(after->nodeCount() > lo.nodeThreshold);
    auto focused = [&](std::vector<NodeId> focus) {
        DrawOptions opt;
        opt.focus = std::move(focus);
        return drawFocused(*after, opt, lo.nodeThreshold, lo.focusHops, lo.focusMaxNodes);
    };
    auto shows = [](const DrawGraph& view, NodeId id) {
        return std::any_of(view.nodes.begin(), view.nodes.end(), [id](const DrawNode& d) { return d.node == id; });
    };
    const DrawGraph view = focused(seeds);
    QVERIFY(view.focused);
    QCOMPARE(q(view.focusAround), QStringLiteral("the changed region"));
    for (NodeId id : neighbours) QVERIFY2(shows(view, id), qPrintable(QString("node #%1").arg(id)));
    // seeded by the added nodes alone (none), the view is an arbitrary row of transfers without them
    const DrawGraph unseeded = focused(nodesAddedBetween(trace, removing - 1, removing));
    QCOMPARE(q(unseeded.focusAround), QStringLiteral("the transfers"));
    QVERIFY(!std::all_of(neighbours.begin(), neighbours.end(), [&](NodeId id) { return shows(unseeded, id); }));

    // a step that adds nodes keeps them as its seeds: an event, one that adds and one that
    // removes, the whole run
    const int last = static_cast<int>(trace.events().size());
    for (auto [from, to] : {std::pair{adding - 1, adding}, {adding - 1, removing}, {0, last}}) {
        const auto g = trace.graphAfter(to);
        QVERIFY(!nodesAddedBetween(trace, from, to).empty());
        QCOMPARE(changedRegion(trace, *g, from, to), nodesAddedBetween(trace, from, to));
    }
    // a step that changed nothing has no changed region
    QVERIFY(changedRegion(trace, *trace.graphAfter(0), 0, 0).empty());

#ifdef PASSLENS_CLI
    // passlens-cli render --event centres the same step there too (the DOT before layout)
    QTemporaryDir dir;
    const QString file = dir.filePath("big.graph.json"), dot = dir.filePath("step.dot");
    writeFileAtomic(file.toStdString(), writeGraphJson(*bench::blockGraph(20001, true)).dump());
    const Cli r = cli({"render", file, "--event", QString::number(removing), "--format", "dot", "-o", dot});
    QVERIFY2(r.code == 0, r.err.constData());
    QFile f(dot);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QVERIFY2(text.contains("around the changed region"), text.left(600).constData());
    for (NodeId id : neighbours) QVERIFY2(text.contains(QByteArray("#") + QByteArray::number(id) + " "), "neighbour");
#endif
}

void TestDrawing::alignIdsMatchesWhatBothPipelinesMade() {
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

// A diff with the timing overlay, as the window draws it: a timed node's fill is its heat and its
// change is the border (an added GPU op: heat fill, the added border); an untimed one keeps its
// diff fill; the legend's diff swatches are borders on white and it has no "no timing" swatch
// (the teaching example, source .. final, with made-up times).
void TestDrawing::timedDiffFillsByTimeAndBordersByChange() {
    const Optimized o = optimize(std::string(PASSLENS_SOURCE_DIR) + "/resources/examples/teaching.graph.json");
    const int last = static_cast<int>(o.trace.events().size());
    const auto a = o.trace.graphAfter(0), b = o.trace.graphAfter(last);
    DrawGraph d = drawDiff(*a, *b, diff(*a, *b));
    applyTiming(d, madeUpProfile(b->nodeIdLimit()), TimingOptions{}, {a.get(), b.get()});
    const Palette& p = defaultPalette();
    const QString dot = q(writeDot(d));
    int timedAdded = 0, untimedRemoved = 0;
    for (const DrawNode& n : d.nodes) {
        const QString line = dot.section(QStringLiteral("\n  ") + q(n.key) + QStringLiteral(" [label="), 1, 1)
                                 .section(QLatin1Char('\n'), 0, 0);
        QVERIFY2(!line.isEmpty(), qPrintable(q(n.key)));
        if (n.change == NodeChange::Added && n.timing) {
            ++timedAdded;
            QVERIFY2(line.contains(QStringLiteral("fillcolor=\"%1\"").arg(q(heatColour(n.timing->share)))) &&
                         line.contains(QStringLiteral("color=\"%1\"").arg(QString::fromLatin1(p.addedBorder))),
                     qPrintable(q(n.key) + line.right(160)));
        }
        if (n.change == NodeChange::Removed && !n.timing) {
            ++untimedRemoved;
            QVERIFY2(line.contains(QStringLiteral("fillcolor=\"%1\"").arg(QString::fromLatin1(p.removedFill))),
                     qPrintable(q(n.key) + line.right(160)));
        }
    }
    QVERIFY2(timedAdded >= 5 && untimedRemoved >= 5,
             qPrintable(QStringLiteral("%1 %2").arg(timedAdded).arg(untimedRemoved)));
    const QStringList texts =
        svgTexts(LayoutEngine().render(LayoutEngine().layout(d, quickOptions()), RenderFormat::Svg));
    QVERIFY(texts.contains(QStringLiteral("diff (border)")));
    QVERIFY(texts.contains(QStringLiteral("time")));
    QVERIFY(!texts.contains(QStringLiteral("no timing")));
    QVERIFY(dot.contains(QStringLiteral("BGCOLOR=\"#FFFFFF\" WIDTH=\"18\"")));
}
