// tst_ir: FunctionGraph edits (replace, prune, rollback, clients), fingerprints, debugprint and
// node search (see tst_ir.h).
#include "tst_ir.h"

void TestIr::replaceAndPrune() {
    FunctionGraph g;
    Recorder rec;
    Variable* x = g.addInput(Type::parse("float32[?]"), "x");
    Variable* y = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x}, "e");
    Variable* z = g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {y}, "n");
    g.setOutputs({z});
    QCOMPARE(g.nodeCount(), std::size_t(2));
    g.addObserver(&rec);
    const NodeId expId = y->owner()->id();
    Variable* t = g.apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {x});
    g.replace(y, t, "test_rewrite");
    QCOMPARE(g.nodeCount(), std::size_t(2));
    QVERIFY(!g.node(expId)->inGraph());
    QCOMPARE(rec.log, QStringList({QString("import %1 test_rewrite").arg(t->owner()->id()),
                                   QString("change %1:0 test_rewrite").arg(z->owner()->id()),
                                   QString("prune %1 test_rewrite").arg(expId)}));
    // ids are never reused
    Variable* w = g.apply(Op::get("Elemwise", {{"scalar", "sqr"}}), {x});
    QVERIFY(w->owner()->id() > t->owner()->id());
    QCOMPARE(g.node(expId)->op().str(), std::string("Elemwise{exp}"));
    // Replacing by a variable built from the replaced one keeps the new node's own use.
    Variable* t2 = g.apply(Op::get("Elemwise", {{"scalar", "abs"}}), {t});
    g.replace(t, t2, "wrap");
    QCOMPARE(z->owner()->input(0), t2);
    QCOMPARE(t2->owner()->input(0), t);
    QCOMPARE(g.nodeCount(), std::size_t(3));
}

void TestIr::rejectedReplacementRollsBack() {
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[4]"), "x");
    Variable* a = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x});
    Variable* b = g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {a});
    Variable* c = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {a, b});
    g.setOutputs({c});
    const auto before = g.fingerprint();
    const auto nodes = g.nodeCount();
    Recorder rec;
    g.addObserver(&rec);
    // type change
    Variable* wrong = g.apply(Op::get("Elemwise", {{"scalar", "cast"}, {"dtype", "float64"}}), {x});
    QVERIFY(errorOf([&] { g.replace(a, wrong, "bad_type"); }).contains("type mismatch"));
    QCOMPARE(g.fingerprint(), before);
    // cycle: replace a by something computed from b (which consumes a)
    Variable* cyc = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {b});
    QVERIFY(errorOf([&] { g.replace(a, cyc, "cycle"); }).contains("cycle"));
    QCOMPARE(g.fingerprint(), before);
    QCOMPARE(g.nodeCount(), nodes);
    // replaceAllValidate: first pair fine, second creates a type error -> all rolled back
    Variable* ok = g.apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {x});
    QVERIFY(errorOf([&] { g.replaceAllValidate({{a, ok}, {b, wrong}}, "pair"); }).contains("type mismatch"));
    QCOMPARE(g.fingerprint(), before);
    QCOMPARE(g.nodeCount(), nodes);
    QCOMPARE(c->owner()->input(0), a);
    QVERIFY(rec.log.isEmpty()); // a rolled-back replacement delivers no edits
    g.replaceAllValidate({{a, ok}}, "good");
    QVERIFY(g.fingerprint() != before);
    g.validate();
}

void TestIr::cachedOrderMatchesAFreshSortAfterEdits() {
    // toposort() keeps its order across a rolled-back replacement and across swapping one
    // constant for another; after each edit it must list what a fresh sort of a copy lists.
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[4]"), "x");
    Variable* k1 = g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {1, 2, 3, 4}), "k1");
    Variable* k2 = g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {1, 2, 3, 4}), "k2");
    Variable* a = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, k1});
    Variable* b = g.apply(Op::get("Elemwise", {{"scalar", "mul"}}), {a, k1});
    Variable* c = g.apply(Op::get("Elemwise", {{"scalar", "sub"}}), {b, a});
    g.setOutputs({c});
    auto ids = [](const FunctionGraph& f) {
        QList<NodeId> out;
        for (const Apply* n : f.toposort()) out.append(n->id());
        return out;
    };
    auto fresh = [&] { return ids(*g.clone()); };
    const QList<NodeId> start = ids(g);
    QCOMPARE(start, (QList<NodeId>{a->owner()->id(), b->owner()->id(), c->owner()->id()}));
    // rolled back after importing a node: the order is the one before
    Variable* t = g.apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {x});
    Variable* wrong = g.apply(Op::get("Elemwise", {{"scalar", "cast"}, {"dtype", "float64"}}), {x});
    QVERIFY(errorOf([&] { g.replaceAllValidate({{a, t}, {b, wrong}}, "pair"); }).contains("type mismatch"));
    QCOMPARE(ids(g), start);
    QCOMPARE(ids(g), fresh());
    // one constant for another: same nodes, same order, new inputs
    g.replace(k1, k2, "merge");
    QCOMPARE(b->owner()->input(1), k2);
    QCOMPARE(ids(g), start);
    QCOMPARE(ids(g), fresh());
    // a real edit re-sorts: the tanh node replaces the add node
    g.replace(a, t, "good");
    QCOMPARE(ids(g), (QList<NodeId>{t->owner()->id(), b->owner()->id(), c->owner()->id()}));
    QCOMPARE(ids(g), fresh());
}

void TestIr::patchedOrderMatchesAFreshSortAfterRandomEdits() {
    // The cached order is patched in place for a node replaced by one with the same inputs, for
    // nodes folded into a constant and for duplicates merged into an earlier twin, and sorted
    // again for anything else: after every kind of edit it lists what a fresh sort of a copy lists.
    FunctionGraph g;
    std::mt19937 rng(11);
    const Type t = Type::parse("float32[4]");
    std::vector<Variable*> leaves{g.addInput(t, "x"), g.addInput(t, "y")};
    for (double v : {1.0, 2.0, 2.0})
        leaves.push_back(g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {v, v, v, v})));
    const char* scalars[] = {"add", "mul", "sub", "maximum"};
    std::vector<Variable*> vars = leaves;
    for (int i = 0; i < 400; ++i) {
        const int r = static_cast<int>(rng() % 10);
        const Op& op = Op::get("Elemwise", {{"scalar", scalars[rng() % 4]}});
        if (r < 2 && vars.size() > leaves.size()) { // a twin of an earlier node: something to merge
            const Apply* m = vars[leaves.size() + rng() % (vars.size() - leaves.size())]->owner();
            vars.push_back(g.apply(m->op(), m->inputs()));
        } else if (r == 2) { // constants only: something to fold
            vars.push_back(g.apply(op, {leaves[2 + rng() % 3], leaves[2 + rng() % 3]}));
        } else {
            vars.push_back(g.apply(op, {vars[rng() % vars.size()], vars[rng() % vars.size()]}));
        }
    }
    std::vector<Variable*> outs; // every value nothing uses: all nodes are in the graph
    std::set<const Variable*> used;
    for (const Variable* v : vars)
        if (v->owner()) used.insert(v->owner()->inputs().begin(), v->owner()->inputs().end());
    for (Variable* v : vars)
        if (v->owner() && !used.count(v)) outs.push_back(v);
    g.setOutputs(outs);
    QCOMPARE(g.nodeCount(), vars.size() - leaves.size());
    auto ids = [](const FunctionGraph& f) {
        QList<NodeId> out;
        for (const Apply* n : f.toposort()) out.append(n->id());
        return out;
    };
    auto inGraphNode = [&]() -> Apply* {
        const auto& topo = g.toposort();
        return topo[rng() % topo.size()];
    };
    int kinds[4] = {0, 0, 0, 0};
    for (int step = 0; step < 600 && g.nodeCount() > 40; ++step) {
        const int kind = static_cast<int>(rng() % 7 % 4); // folds (1) and rewires (3) half as often
        Apply* n = inGraphNode();
        try {
            if (kind == 0) { // the same inputs under another op
                const std::string s = n->op().str("scalar") == "add" ? "mul" : "add";
                g.replace(n->output(), g.apply(Op::get("Elemwise", {{"scalar", s}}), n->inputs()), "substitute");
            } else if (kind == 1) { // folded: the node (and what only it used) becomes a constant
                const double v = static_cast<double>(rng() % 3);
                g.replace(n->output(), g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {v, v, v, v})),
                          "fold");
            } else if (kind == 2) { // merged into a twin, if it has one in the graph
                Apply* twin = nullptr;
                for (const Apply* m : g.toposort())
                    if (m != n && &m->op() == &n->op() && m->inputs() == n->inputs()) twin = const_cast<Apply*>(m);
                if (!twin) continue;
                g.replace(n->output(), twin->output(), "merge");
            } else { // any earlier value: a real change of the order
                Variable* b = vars[rng() % vars.size()];
                if (b->owner() && !b->owner()->inGraph()) continue;
                g.replace(n->output(), b, "rewire");
            }
            ++kinds[kind];
        } catch (const ReplacementError&) { // a cycle: rolled back
        }
        QCOMPARE(ids(g), ids(*g.clone()));
    }
    for (int k : kinds) QVERIFY(k > 20);
    g.validate();
}

void TestIr::randomReplacementsKeepTheGraphAcyclic() {
    // Cycle checks prune with topological ranks; compare with brute force on random edits.
    FunctionGraph g;
    std::mt19937 rng(7);
    std::vector<Variable*> vars{g.addInput(Type::parse("float32[4]"), "a"), g.addInput(Type::parse("float32[4]"), "b")};
    for (int i = 0; i < 300; ++i) {
        Variable* x = vars[rng() % vars.size()];
        Variable* y = vars[rng() % vars.size()];
        vars.push_back(g.apply(Op::get("Elemwise", {{"scalar", i % 3 ? "add" : "mul"}}), {x, y}));
    }
    g.setOutputs(std::vector<Variable*>(vars.end() - 20, vars.end()));
    auto inGraph = [&](Variable* v) { return !v->owner() || v->owner()->inGraph(); };
    auto reaches = [&](Variable* from, const Apply* target) { // target is an ancestor of from
        std::vector<const Apply*> st;
        std::set<const Apply*> seen;
        if (from->owner()) st.push_back(from->owner());
        while (!st.empty()) {
            const Apply* n = st.back();
            st.pop_back();
            if (n == target) return true;
            for (auto* in : n->inputs())
                if (in->owner() && seen.insert(in->owner()).second) st.push_back(in->owner());
        }
        return false;
    };
    int applied = 0, rejected = 0;
    for (int step = 0; step < 400; ++step) {
        Variable* a = vars[2 + rng() % (vars.size() - 2)];
        Variable* b = vars[rng() % vars.size()];
        if (a == b || !inGraph(a) || !inGraph(b)) continue;
        bool cyclic = false;
        for (const Client& c : a->clients())
            if (c.node && reaches(b, c.node)) cyclic = true;
        const auto before = g.fingerprint();
        const QString e = errorOf([&] { g.replace(a, b, "random"); });
        if (cyclic) {
            QVERIFY2(e.contains("cycle"), qPrintable(e));
            QCOMPARE(g.fingerprint(), before);
            ++rejected;
        } else {
            QVERIFY2(e.isEmpty(), qPrintable(e));
            g.validate(); // full toposort: no cycle
            ++applied;
        }
        if (step % 50 == 0) { // new nodes on top, so ranks of imported nodes get exercised
            Variable* x = vars[rng() % vars.size()];
            if (inGraph(x) && x->owner()) {
                Variable* n = g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {x});
                vars.push_back(n);
                g.replace(x, g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {n}), "wrap");
                g.validate();
            }
        }
    }
    QVERIFY(applied > 20);
    QVERIFY(rejected > 5);
}

void TestIr::clientsEqualARecountAfterReplacementsAndRollbacks() {
    // ClientList removes a use in O(1) by the index each use keeps of its place; after random
    // replacements, rejected ones (cycles, type changes, survivors of mustRemove) and their
    // rollbacks, every variable's uses must be exactly those a brute-force recount finds.
    FunctionGraph g;
    std::mt19937 rng(11);
    std::vector<Variable*> vars{g.addInput(Type::parse("float32[4]"), "a"), g.addInput(Type::parse("float32[4]"), "b")};
    Variable* w = g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {1, 2, 3, 4}), "w");
    for (int i = 0; i < 200; ++i) {
        Variable* x = vars[rng() % vars.size()];
        Variable* y = i % 4 ? vars[rng() % vars.size()] : w; // w: a shared weight with many uses
        vars.push_back(g.apply(Op::get("Elemwise", {{"scalar", i % 3 ? "add" : "mul"}}), {x, y}));
    }
    g.setOutputs(std::vector<Variable*>(vars.end() - 40, vars.end()));
    vars.push_back(w);
    auto recount = [&]() -> bool {
        std::map<const Variable*, std::vector<std::pair<NodeId, int>>> want;
        for (NodeId id = 0; id < g.nodeIdLimit(); ++id)
            if (const Apply* n = g.node(id); n && n->inGraph())
                for (int i = 0; i < n->nin(); ++i) want[n->input(i)].push_back({n->id(), i});
        for (int i = 0; i < static_cast<int>(g.outputs().size()); ++i)
            want[g.outputs()[static_cast<std::size_t>(i)]].push_back({-1, i});
        for (VarId id = 0; id < g.varIdLimit(); ++id) {
            const Variable* v = g.variable(id);
            if (!v) continue;
            std::vector<std::pair<NodeId, int>> have;
            for (const Client& c : v->clients()) have.push_back({c.node ? c.node->id() : -1, c.index});
            if (v->clients().size() != have.size() || v->clients().empty() != have.empty()) return false;
            auto expected = want[v];
            std::sort(have.begin(), have.end());
            std::sort(expected.begin(), expected.end());
            if (have != expected) return false;
        }
        return true;
    };
    QVERIFY(recount());
    int applied = 0, rejected = 0;
    auto inGraph = [](Variable* v) { return !v->owner() || v->owner()->inGraph(); };
    for (int step = 0; step < 600; ++step) {
        Variable *a = nullptr, *b = nullptr;
        for (int pick = 0; pick < 100 && (a == b || !inGraph(a) || !inGraph(b) || a->clients().empty()); ++pick) {
            a = vars[2 + rng() % (vars.size() - 2)];
            b = vars[rng() % vars.size()];
        }
        if (a == b || !inGraph(a) || !inGraph(b) || a->clients().empty()) continue;
        const auto before = g.fingerprint();
        QString e;
        switch (step % 4) {
        case 0: // a new node on b, possibly closing a cycle
            e = errorOf([&] { g.replace(a, g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {b}), "wrap"); });
            break;
        case 1: { // a pair that is fine, then a type change: the whole replacement rolls back
            Variable* wrong = g.apply(Op::get("Elemwise", {{"scalar", "cast"}, {"dtype", "float64"}}), {b});
            e = errorOf([&] { g.replaceAllValidate({{a, b}, {b, wrong}}, "pair"); });
            QVERIFY(e.contains("type mismatch") || e.contains("cycle"));
            break;
        }
        case 2: { // a node that must go but stays: rolled back
            const Apply* keep = g.outputs().front()->owner();
            if (!keep) continue;
            e = errorOf([&] { g.replaceAllValidate({{a, b}}, "must_remove", {keep}); });
            break;
        }
        default: e = errorOf([&] { g.replace(a, b, "random"); }); break;
        }
        if (e.isEmpty()) {
            ++applied;
        } else {
            ++rejected;
            QCOMPARE(g.fingerprint(), before);
        }
        QVERIFY2(recount(), qPrintable(QString("step %1 (%2)").arg(step).arg(e)));
        if (step % 25 == 0) { // new uses of w on top
            Variable* x = vars[rng() % vars.size()];
            if (inGraph(x) && x->owner() && !x->clients().empty()) {
                Variable* n = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, w});
                vars.push_back(n);
                g.replace(x, n, "add_w");
                QVERIFY(recount());
            }
        }
    }
    QVERIFY(applied > 50);
    QVERIFY(rejected > 50);
    g.validate();
}

void TestIr::clientsKeepTheirAttachmentOrder() {
    // The order callers see (and rewrites iterate in) is the order of attachment; removing a
    // use keeps the others in order, across the squeezes of a shared weight's list; a
    // rolled-back removal attaches the use again at the end, as a vector's erase and
    // push_back did.
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[4]"), "x");
    Variable* w = g.addInput(Type::parse("float32[4]"), "w");
    std::vector<Variable*> outs;
    for (int i = 0; i < 1000; ++i) outs.push_back(g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {w}));
    g.setOutputs(outs);
    std::vector<const Apply*> model; // w's users, in the expected order
    for (Variable* o : outs) model.push_back(o->owner());
    auto users = [&] { // node ids, for readable failures
        std::vector<NodeId> u;
        for (const Client& c : w->clients()) u.push_back(c.node->id());
        return u;
    };
    auto ids = [](const std::vector<const Apply*>& nodes) {
        std::vector<NodeId> u;
        for (const Apply* n : nodes) u.push_back(n->id());
        return u;
    };
    QCOMPARE(users(), ids(model));
    std::mt19937 rng(5);
    for (int step = 0; step < 3000 && !model.empty(); ++step) {
        const std::size_t k = rng() % outs.size();
        Variable* o = outs[k];
        if (!o->owner() || !o->owner()->inGraph() || o->owner()->input(0) != w) continue;
        const Apply* old = o->owner();
        auto it = std::find(model.begin(), model.end(), old);
        QVERIFY(it != model.end());
        if (step % 5 == 0) { // a new user of w takes the old one's place: attached at the end
            Variable* n = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {w});
            g.replace(o, n, "renew");
            outs[k] = n;
            model.erase(it);
            model.push_back(n->owner());
        } else if (step % 7 == 0) { // rejected: the old user comes back, at the end
            Variable* n = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {w});
            QVERIFY(errorOf([&] {
                        g.replaceAllValidate({{o, n}}, "rejected", {n->owner()});
                    }).contains("should have been removed"));
            model.erase(it);
            model.push_back(old);
        } else { // the user goes: w loses one use, the others keep their order
            g.replace(o, x, "drop");
            outs[k] = x;
            model.erase(it);
        }
        QCOMPARE(users(), ids(model));
        QCOMPARE(w->clients().size(), model.size());
        if (!model.empty()) QCOMPARE(w->clients().front().node, model.front());
    }
    QVERIFY(model.size() < 300); // most uses went: the list was squeezed many times
    std::vector<Client> asVector = w->clients().toVector();
    QCOMPARE(asVector.size(), model.size());
    for (std::size_t i = 0; i < model.size(); ++i) QCOMPARE(asVector[i].node, model[i]);
}

void TestIr::fingerprintIsStructural() {
    auto build = [](bool swap) {
        auto g = std::make_unique<FunctionGraph>();
        Variable* x = g->addInput(Type::parse("float32[3]"), "x");
        Variable* two = g->addConstant(TensorData::fromDoubles(DType::Float32, {}, {2.0}));
        Variable* d = g->apply(Op::get("DimShuffle", {{"order", {"x"}}}), {two});
        Variable* y = g->apply(Op::get("Elemwise", {{"scalar", swap ? "mul" : "add"}}), {x, d}, "y");
        g->setOutputs({y});
        return g;
    };
    QCOMPARE(build(false)->fingerprint(), build(false)->fingerprint());
    QVERIFY(build(false)->fingerprint() != build(true)->fingerprint());
}

void TestIr::debugprintTheanoFormat() {
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[?,?]"), "x");
    Variable* y = g.addInput(Type::parse("float32[?,?]"), "y");
    Variable* two = g.addConstant(TensorData::fromDoubles(DType::Float32, {}, {2.0}));
    Variable* d = g.apply(Op::get("DimShuffle", {{"order", {"x", "x"}}}), {two});
    Variable* z = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, y}, "z");
    z->setName("z");
    Variable* m = g.apply(Op::get("Elemwise", {{"scalar", "mul"}}), {d, z});
    Variable* out = g.apply(Op::get("Elemwise", {{"scalar", "sub"}}), {m, z});
    g.setOutputs({out});
    const QString expected = "Elemwise{sub} [id A] '' 3\n"
                             " |Elemwise{mul} [id B] '' 2\n"
                             " | |DimShuffle{x,x} [id C] '' 0\n"
                             " | | |TensorConstant{2.0} [id D]\n"
                             " | |Elemwise{add} [id E] 'z' 1\n"
                             " |   |x [id F]\n"
                             " |   |y [id G]\n"
                             " |Elemwise{add} [id E] 'z' 1\n"; // printed again, as Theano does, without its inputs
    QCOMPARE(QString::fromStdString(debugprint(g)), expected);
    // depth 2: the outputs and their inputs; the two inputs' own inputs are cut
    DebugPrintOptions depth2;
    depth2.depth = 2;
    DebugPrintSummary s;
    QCOMPARE(QString::fromStdString(debugprint(g, depth2, &s)),
             QString("Elemwise{sub} [id A] '' 3\n |Elemwise{mul} [id B] '' 2\n |Elemwise{add} [id C] 'z' 1\n"));
    QCOMPARE(s.lines, std::size_t(3));
    QCOMPARE(s.cutNodes, std::size_t(2));
    QCOMPARE(s.depth, 2);
    QCOMPARE(
        QString::fromStdString(debugprintCutNote(s, g.nodeCount())),
        QString("debugprint cut at depth 2 (graph of 4 nodes): 2 nodes' inputs not shown; --depth N sets the depth, "
                "--depth -1 prints everything"));
    // a whole listing has no note
    DebugPrintSummary whole;
    debugprint(g, {}, &whole);
    QCOMPARE(whole.cutNodes, std::size_t(0));
    QCOMPARE(whole.lines, std::size_t(8));
    QVERIFY(debugprintCutNote(whole, g.nodeCount()).empty());
    DebugPrintOptions o;
    o.printType = true;
    o.printToposort = false;
    QVERIFY(QString::fromStdString(debugprint(g, o)).contains("x [id F] <float32[?,?]>"));
}

void TestIr::debugprintExpandsANodeCutEarlier() {
    // out = sub(exp(neg(x)), neg(x)) at depth 3: neg is met first at the limit (cut), then
    // one level higher, where its input is printed; nothing is left cut.
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[4]"), "x");
    Variable* n = g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {x});
    Variable* e = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {n});
    g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "sub"}}), {e, n})});
    DebugPrintOptions o;
    o.depth = 3;
    o.printToposort = false;
    DebugPrintSummary s;
    QCOMPARE(QString::fromStdString(debugprint(g, o, &s)), QString("Elemwise{sub} [id A] ''\n"
                                                                   " |Elemwise{exp} [id B] ''\n"
                                                                   " | |Elemwise{neg} [id C] ''\n"
                                                                   " |Elemwise{neg} [id C] ''\n"
                                                                   "   |x [id D]\n"));
    QCOMPARE(s.cutNodes, std::size_t(0));
}

void TestIr::debugprintIsLinearOnLargeGraphs() {
    // A 20,000-node chain, whose whole listing would take 400 MB (more than
    // kDebugPrintFullBytes): the default depth (kAutoDepth) is 50, so the listing is 50 lines
    // whose prefixes are at most 98 characters, and says it was cut.
    FunctionGraph chain;
    Variable* v = chain.addInput(Type::parse("float32[8]"), "x");
    for (int i = 0; i < 20000; ++i) v = chain.apply(Op::get("Elemwise", {{"scalar", i % 2 ? "exp" : "neg"}}), {v});
    chain.setOutputs({v});
    QCOMPARE(debugprintDepth(chain, DebugPrintOptions::kAutoDepth), kDebugPrintLargeDepth);
    // the rule is the listing's size, not the node count: a 3,000-node chain (9 MB whole)
    // is cut too, 1,000 nodes (1 MB) are listed whole
    FunctionGraph c3k, c1k;
    for (auto [graph, n] : {std::pair{&c3k, 3000}, std::pair{&c1k, 1000}}) {
        Variable* u = graph->addInput(Type::parse("float32[8]"), "x");
        for (int i = 0; i < n; ++i) u = graph->apply(Op::get("Elemwise", {{"scalar", "exp"}}), {u});
        graph->setOutputs({u});
    }
    QCOMPARE(debugprintDepth(c3k, DebugPrintOptions::kAutoDepth), 50);
    QCOMPARE(debugprintDepth(c1k, DebugPrintOptions::kAutoDepth), -1);
    QCOMPARE(debugprintDepth(c1k, -7), -1);
    QCOMPARE(debugprintDepth(chain, 7), 7);
    QCOMPARE(debugprintDepth(chain, -1), -1);
    DebugPrintOptions autoDepth;
    autoDepth.depth = DebugPrintOptions::kAutoDepth;
    DebugPrintSummary s;
    const std::string dp = debugprint(chain, autoDepth, &s);
    QCOMPARE(s.depth, 50);
    QCOMPARE(s.lines, std::size_t(50));
    QCOMPARE(s.cutNodes, std::size_t(1));
    QCOMPARE(std::count(dp.begin(), dp.end(), '\n'), 50L);
    QVERIFY(dp.find("\n" + std::string(96, ' ') + " |Elemwise{") != std::string::npos); // level 49: 48 x "  " + " |"
    QVERIFY(dp.find(std::string(98, ' ')) == std::string::npos);
    const std::string listing = debugprintListing(chain, autoDepth);
    QVERIFY(listing.size() > dp.size());
    QCOMPARE(QString::fromStdString(listing.substr(dp.size())),
             QString("(debugprint cut at depth 50 (graph of 20000 nodes): 1 node's inputs not shown; --depth N "
                     "sets the depth, "
                     "--depth -1 prints everything)\n"));
    // A 100,000-node graph of adds of earlier values (shared inputs everywhere): each node's
    // inputs are listed once, so at most one line per output and per edge.
    FunctionGraph big;
    addsOfEarlierValues(big, 100000);
    DebugPrintSummary bs;
    const std::string bdp = debugprint(big, autoDepth, &bs);
    QCOMPARE(bs.depth, 50);
    QVERIFY(bs.lines <= 1 + 2 * big.nodeCount());
    QCOMPARE(static_cast<std::size_t>(std::count(bdp.begin(), bdp.end(), '\n')), bs.lines);
    QVERIFY(bdp.size() <= bs.lines * (2 * 50 + 48)); // prefix + "Elemwise{add} [id XXXX] '' 100000"
    // every Apply printed with its inputs appears exactly once with a subtree: no id is
    // followed by a deeper line more than once
    std::map<std::string, int> expandedIds;
    std::size_t pos = 0;
    std::vector<std::string> lines;
    while (pos < bdp.size()) {
        const std::size_t end = bdp.find('\n', pos);
        lines.push_back(bdp.substr(pos, end - pos));
        pos = end + 1;
    }
    auto indent = [](const std::string& l) { return l.find_first_not_of(" |"); };
    for (std::size_t i = 0; i + 1 < lines.size(); ++i)
        if (indent(lines[i + 1]) > indent(lines[i])) {
            const std::size_t at = lines[i].find("[id ");
            ++expandedIds[lines[i].substr(at, lines[i].find(']', at) - at)];
        }
    QVERIFY(!expandedIds.empty());
    for (const auto& [id, count] : expandedIds) QVERIFY2(count == 1, id.c_str());
}

void TestIr::longChainIsIterative() {
    // 20,000-node chain and a 100,000-node graph: no recursion anywhere.
    FunctionGraph g;
    Variable* v = g.addInput(Type::parse("float32[8]"), "x");
    for (int i = 0; i < 20000; ++i) v = g.apply(Op::get("Elemwise", {{"scalar", i % 2 ? "exp" : "neg"}}), {v});
    g.setOutputs({v});
    QCOMPARE(g.nodeCount(), std::size_t(20000));
    QCOMPARE(g.toposort().size(), std::size_t(20000));
    QCOMPARE(g.toposort().front()->op().str(), std::string("Elemwise{neg}"));
    QVERIFY(g.fingerprint() != 0);
    const std::string dp = debugprint(g);
    QCOMPARE(std::count(dp.begin(), dp.end(), '\n'), 20001L);
    g.validate();
    FunctionGraph big;
    addsOfEarlierValues(big, 100000);
    QVERIFY(big.nodeCount() > 1000);
    QCOMPARE(big.toposort().size(), big.nodeCount());
}

void TestIr::findNodesRanksWholeWordsFirst() {
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[4]"), "x");
    Variable* a = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x}, "/encoder/attn/Exp");
    a->setName("attn_out");
    Variable* b = g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {a}, "/encoder/attn_norm/Neg");
    Variable* c = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {b, a}, "sum");
    g.setOutputs({c});
    const auto topo = g.toposort();
    QCOMPARE(topo.size(), std::size_t(3));
    auto ids = [](const std::vector<const Apply*>& hits) {
        QList<NodeId> out;
        for (const Apply* h : hits) out << h->id();
        return out;
    };
    const NodeId exp = a->owner()->id(), neg = b->owner()->id(), add = c->owner()->id();
    // 'attn' is a whole scope part of the first name, a substring of the second
    QCOMPARE(ids(findNodes(g, "attn")), (QList<NodeId>{exp, neg}));
    // case-insensitive op kinds and display strings; ids with or without '#'
    QCOMPARE(ids(findNodes(g, "elemwise")), (QList<NodeId>{exp, neg, add}));
    QCOMPARE(ids(findNodes(g, "Elemwise{neg}")), (QList<NodeId>{neg}));
    QCOMPARE(ids(findNodes(g, "#" + std::to_string(add))), (QList<NodeId>{add}));
    QCOMPARE(ids(findNodes(g, " " + std::to_string(neg) + " ")), (QList<NodeId>{neg}));
    // a variable's producer first, then its consumers
    QCOMPARE(ids(findNodes(g, "attn_out")), (QList<NodeId>{exp, neg, add}));
    QCOMPARE(ids(findNodes(g, "SUM")), (QList<NodeId>{add}));
    QVERIFY(findNodes(g, "").empty());
    QVERIFY(findNodes(g, "   ").empty());
    QVERIFY(findNodes(g, "matmul").empty());
}
