// The rewrite framework on Theano's own framework cases (THEANO_SEMANTICS §4.1, from
// theano/gof/tests/test_opt.py): MergeOptimizer, EquilibriumOptimizer, TopoOptimizer.
#include <passlens/io/GraphJson.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/OpRegistry.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/pipeline/OptimizeReport.h>
#include <passlens/pipeline/PhaseCheck.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>
#include <passlens/rewrite/Equilibrium.h>
#include <passlens/rewrite/Merge.h>
#include <passlens/rewrite/Walker.h>

#include <QFile>
#include <QTest>

using namespace passlens;

namespace {
// Counts the phases begun and the rewrites applied; cancels `cancelAt` when the `cancelAfter`th
// rewrite was applied.
struct CountingInstrumentation final : Instrumentation {
    int phases = 0, applied = 0;
    CancelToken* cancelAt = nullptr;
    int cancelAfter = 0;
    void phaseBegin(const PhaseInfo&, const FunctionGraph&) override { ++phases; }
    void rewriteApplied(std::string_view, const Apply*, const Replacement&, double) override {
        if (++applied == cancelAfter && cancelAt) cancelAt->cancel();
    }
};

// The message of the Cancelled that `f` throws; empty when it returns (other errors go through).
template <class F> std::string cancelledMessage(F&& f) {
    try {
        f();
    } catch (const Cancelled& e) {
        return e.what();
    }
    return {};
}

// Symbolic test ops Op1..Op6 and NoInputOp: any arity, output type of input 0.
void registerTestOps() {
    static bool done = false;
    if (done) return;
    done = true;
    for (const char* k : {"Op1", "Op2", "Op3", "Op4", "Op5", "Op6", "NoInputOp"}) {
        OpKindInfo info;
        info.kind = k;
        info.attrs = {{"x", AttrKind::Int, false, nullptr}};
        info.infer = [](const Op&, std::span<Variable* const> in) -> std::vector<Type> {
            return {in.empty() ? Type(DType::Float32, {}) : in[0]->type()};
        };
        OpRegistry::instance().registerKind(info);
    }
}

const Op& op(const char* k) { return Op::get(k); }

// Compact expression text: Op1(Op2(x, y), z); shared nodes print in full each time.
QString expr(const Variable* v) {
    const Apply* a = v->owner();
    if (!a) return QString::fromStdString(v->name());
    QStringList args;
    for (const Variable* in : a->inputs()) args << expr(in);
    QString s = QString::fromStdString(a->op().kind());
    if (a->op().has("x")) s += QString("{%1}").arg(a->op().intAttr("x"));
    return s + "(" + args.join(", ") + ")";
}
QString outputs(const FunctionGraph& g) {
    QStringList o;
    for (const Variable* v : g.outputs()) o << expr(v);
    return "[" + o.join(", ") + "]";
}

// PatternSub-style rule: root kind `from` with the given input kinds (empty: any) -> builder.
NodeRewriter rule(const std::string& name, const std::string& from,
                  std::function<Variable*(FunctionGraph&, Apply&)> build) {
    return NodeRewriter(name, Tracks::of({from}), [build](RewriteCall& c) -> std::optional<Replacement> {
        Variable* out = build(c.graph, c.node);
        if (!out) return std::nullopt;
        Replacement r;
        r.pairs.push_back({c.node.output(), out});
        return r;
    });
}
// Op_from(a, b) -> Op_to(a, b)
NodeRewriter renameRule(const std::string& from, const std::string& to) {
    return rule(from + "->" + to, from, [to](FunctionGraph& g, Apply& n) { return g.apply(Op::get(to), n.inputs()); });
}

struct Fixture {
    FunctionGraph g;
    Variable *x, *y, *z;
    Fixture() {
        registerTestOps();
        x = g.addInput(Type::parse("float32[2]"), "x");
        y = g.addInput(Type::parse("float32[2]"), "y");
        z = g.addInput(Type::parse("float32[2]"), "z");
    }
    Variable* a(const char* k, std::vector<Variable*> in) { return g.apply(op(k), std::move(in)); }
};

// Every graph edit and every driver event as one canonical line (no times, no tries): the
// golden event log of a pipeline run. Variables print as v<id>, nodes as #id Op{attrs}.
struct EventLog final : Instrumentation {
    QStringList lines;
    static QString node(const Apply& n) {
        return QString("#%1 %2").arg(n.id()).arg(QString::fromStdString(n.op().str()));
    }
    static QString var(const Variable& v) { return QString("v%1").arg(v.id()); }
    static QString text(std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }
    void pipelineBegin(std::string_view n, const FunctionGraph&) override { lines << "pipeline " + text(n); }
    void pipelineEnd(std::string_view n, const FunctionGraph& g) override {
        lines << QString("end %1 nodes=%2").arg(text(n)).arg(g.nodeCount());
    }
    void phaseBegin(const PhaseInfo& p, const FunctionGraph&) override {
        lines << "phase " + QString::fromStdString(p.name);
    }
    void phaseEnd(const PhaseInfo& p, const FunctionGraph&, bool changed, double) override {
        lines << QString("phase-end %1 changed=%2").arg(QString::fromStdString(p.name)).arg(changed);
    }
    void rewriteApplied(std::string_view r, const Apply* n, const Replacement&, double) override {
        lines << "applied " + text(r) + (n ? " at #" + QString::number(n->id()) : QString());
    }
    void rewriteRejected(std::string_view r, const Apply* n, const std::string&) override {
        lines << "rejected " + text(r) + (n ? " at #" + QString::number(n->id()) : QString());
    }
    void message(std::string_view t) override { lines << "message " + text(t); }
    void onImport(const FunctionGraph&, const Apply& n, std::string_view) override {
        QStringList ins;
        for (const Variable* v : n.inputs()) ins << var(*v);
        lines << "  import " + node(n) + "(" + ins.join(",") + ") -> " + var(*n.output());
    }
    void onPrune(const FunctionGraph&, const Apply& n, std::string_view) override { lines << "  prune " + node(n); }
    void onChangeInput(const FunctionGraph&, const Apply* n, int i, const Variable& a, const Variable& b,
                       std::string_view) override {
        lines << QString("  change %1[%2] %3 -> %4")
                     .arg(n ? "#" + QString::number(n->id()) : QString("output"))
                     .arg(i)
                     .arg(var(a), var(b));
    }
    void onReplace(const FunctionGraph&, const Variable& a, const Variable& b, std::string_view) override {
        lines << "  replace " + var(a) + " -> " + var(b);
    }
};

// A rewrite on Op1 whose replacement edits the graph (Op2(x) -> Op3(x)) and then fails
// validation (Op1's output replaced by a float64 constant): replaceAllValidate rejects it after
// the first edit.
NodeRewriter rejectedAfterEdits() {
    return NodeRewriter("half_bad", Tracks::of({"Op1"}), [](RewriteCall& c) -> std::optional<Replacement> {
        Variable* inner = c.node.input(0);
        Replacement r;
        r.pairs.push_back({inner, c.graph.apply(Op::get("Op3"), inner->owner()->inputs())});
        r.pairs.push_back({c.node.output(), c.graph.addConstant(TensorData::fromDoubles(DType::Float64, {2}, {0, 0}))});
        return r;
    });
}

// Expected event log of goldenEventLogs (see there for the graph): tests/golden/events_P.log,
// one line per event. Reviewed by hand; a change to it is a change of the event contract.
QStringList goldenLog(const std::string& pipeline) {
    QFile f(QString::fromStdString(std::string(PASSLENS_SOURCE_DIR) + "/tests/golden/events_" + pipeline + ".log"));
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return {"cannot read " + f.fileName()};
    QStringList lines = QString::fromUtf8(f.readAll()).split('\n');
    while (!lines.isEmpty() && lines.back().isEmpty()) lines.removeLast();
    return lines;
}

bool run(Phase& p, FunctionGraph& g) {
    RewriteEngine e(g, nullptr);
    return p.apply(e).changed;
}
} // namespace

class TestRewrite : public QObject {
    Q_OBJECT
private slots:
    // FunctionGraph::clone: the graph as it is (after a pipeline, with removed nodes behind it)
    // with the same ids, ops, names and tags, as Trace's source capture rebuilds it; editing the
    // copy leaves the original alone.
    void cloneKeepsIdsAndIsIndependent() {
        FunctionGraph g;
        g.name = "g";
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        x->tag = {{"target", "cpu"}};
        Variable* c = g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {1, 2, 3, 4}), "c");
        Variable* a = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, c}, "a");
        Variable* e = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {a}, "e");
        Variable* d = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, c}, "d"); // merged away
        e->owner()->tag = {{"provenance", "make_node"}};
        g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "mul"}}), {e, d}, "y"), c});
        Merge m;
        QVERIFY(run(m, g));
        QCOMPARE(g.nodeCount(), std::size_t(3));
        const std::unique_ptr<FunctionGraph> k = g.clone();
        QCOMPARE(k->name, std::string("g"));
        QCOMPARE(k->fingerprint(), g.fingerprint());
        QCOMPARE(k->nodeCount(), g.nodeCount());
        QCOMPARE(k->inputs().size(), std::size_t(1));
        QCOMPARE(k->inputs()[0]->id(), x->id());
        QCOMPARE(k->inputs()[0]->tag.value("target", ""), std::string("cpu"));
        QCOMPARE(k->outputs()[1]->id(), c->id()); // a constant output
        QCOMPARE(k->outputs()[1]->constant().get(), c->constant().get());
        for (std::size_t i = 0; i < g.toposort().size(); ++i) {
            const Apply* n = g.toposort()[i];
            const Apply* kn = k->toposort()[i];
            QCOMPARE(kn->id(), n->id());
            QCOMPARE(&kn->op(), &n->op());
            QVERIFY(kn->tag == n->tag);
            for (std::size_t j = 0; j < n->inputs().size(); ++j)
                QCOMPARE(kn->input(static_cast<int>(j))->id(), n->input(static_cast<int>(j))->id());
            QCOMPARE(kn->output()->id(), n->output()->id());
            QCOMPARE(kn->output()->name(), n->output()->name());
        }
        // one of the two equal adds was merged away; it is not copied
        QVERIFY((k->node(a->owner()->id()) == nullptr) != (k->node(d->owner()->id()) == nullptr));
        // the same graph, with the same next ids, as a Trace's capture of the source rebuilds
        Trace t;
        t.pipelineBegin("copy", g);
        const auto captured = t.sourceGraph();
        QCOMPARE(captured->fingerprint(), k->fingerprint());
        QCOMPARE(captured->nodeIdLimit(), k->nodeIdLimit());
        QCOMPARE(captured->varIdLimit(), k->varIdLimit());
        // independent: a replacement in the copy leaves the original as it was
        const std::uint64_t before = g.fingerprint();
        Variable* ke = k->variable(e->id());
        k->replace(ke, k->apply(Op::get("Elemwise", {{"scalar", "neg"}}), {ke->owner()->input(0)}), "test");
        QVERIFY(k->fingerprint() != before);
        QCOMPARE(g.fingerprint(), before);
        QCOMPARE(e->clients().size(), std::size_t(1));
    }

    void mergeStraightforward() {
        Fixture f;
        Variable* o = f.a("Op1", {f.a("Op2", {f.x, f.y}), f.a("Op2", {f.x, f.y}), f.a("Op2", {f.x, f.z})});
        f.g.setOutputs({o});
        Merge m;
        QVERIFY(run(m, f.g));
        const Apply* top = f.g.outputs()[0]->owner();
        QCOMPARE(top->input(0), top->input(1));
        QVERIFY(top->input(0) != top->input(2));
        QCOMPARE(f.g.nodeCount(), std::size_t(3));
    }
    void mergeConstants() {
        Fixture f;
        Variable* c1 = f.g.addConstant(TensorData::fromDoubles(DType::Float32, {2}, {2, 2}), "y");
        Variable* c2 = f.g.addConstant(TensorData::fromDoubles(DType::Float32, {2}, {2, 2}), "z");
        Variable* o = f.a("Op1", {f.a("Op2", {f.x, c1}), f.a("Op2", {f.x, c1}), f.a("Op2", {f.x, c2})});
        f.g.setOutputs({o});
        Merge m;
        run(m, f.g);
        const Apply* top = f.g.outputs()[0]->owner();
        QCOMPARE(top->input(0), top->input(1));
        QCOMPARE(top->input(1), top->input(2));
        QCOMPARE(f.g.nodeCount(), std::size_t(2));
        // identical_constant_args: Op1(y, z) with equal constants -> Op1(y, y)
        Fixture h;
        Variable* d1 = h.g.addConstant(TensorData::fromDoubles(DType::Float32, {2}, {2, 2}), "y");
        Variable* d2 = h.g.addConstant(TensorData::fromDoubles(DType::Float32, {2}, {2, 2}), "z");
        h.g.setOutputs({h.a("Op1", {d1, d2})});
        run(m, h.g);
        QCOMPARE(h.g.outputs()[0]->owner()->input(0), h.g.outputs()[0]->owner()->input(1));
    }
    void mergeDeepAndOutputs() {
        Fixture f;
        Variable* o = f.a("Op1", {f.a("Op3", {f.a("Op2", {f.x, f.y}), f.z}),
                                  f.a("Op4", {f.a("Op3", {f.a("Op2", {f.x, f.y}), f.z})})});
        f.g.setOutputs({o});
        Merge m;
        run(m, f.g);
        const Apply* top = f.g.outputs()[0]->owner();
        QCOMPARE(top->input(1)->owner()->input(0), top->input(0));
        QCOMPARE(f.g.nodeCount(), std::size_t(4));
        // no_merge: input order matters
        Fixture n;
        n.g.setOutputs({n.a("Op1", {n.a("Op3", {n.a("Op2", {n.x, n.y})}), n.a("Op3", {n.a("Op2", {n.y, n.x})})})});
        QVERIFY(!run(m, n.g));
        QCOMPARE(n.g.nodeCount(), std::size_t(5));
        // merge_outputs
        Fixture o2;
        o2.g.setOutputs({o2.a("Op3", {o2.a("Op2", {o2.x, o2.y})}), o2.a("Op3", {o2.a("Op2", {o2.x, o2.y})})});
        run(m, o2.g);
        QCOMPARE(o2.g.outputs()[0], o2.g.outputs()[1]);
        QCOMPARE(o2.g.nodeCount(), std::size_t(2));
    }
    void mergeMultipleAndNoInput() {
        Fixture f;
        auto build = [&] {
            Variable* e1 = f.a("Op1", {f.x, f.y});
            Variable* e2 = f.a("Op2", {f.a("Op3", {f.x}), f.y, f.z});
            return f.a("Op1", {e1, f.a("Op4", {e2, e1}), f.a("Op1", {e2})});
        };
        Variable* a = build();
        Variable* b = build();
        f.g.setOutputs({a, b});
        Merge m;
        run(m, f.g);
        QCOMPARE(f.g.outputs()[0], f.g.outputs()[1]);
        QCOMPARE(f.g.nodeCount(), std::size_t(6));
        QCOMPARE(expr(f.g.outputs()[0]),
                 QString("Op1(Op1(x, y), Op4(Op2(Op3(x), y, z), Op1(x, y)), Op1(Op2(Op3(x), y, z)))"));
        Fixture h;
        h.g.setOutputs({h.g.apply(Op::get("NoInputOp", {{"x", 0}}), {}),
                        h.g.apply(Op::get("NoInputOp", {{"x", 0}}), {}),
                        h.g.apply(Op::get("NoInputOp", {{"x", 1}}), {})});
        run(m, h.g);
        QCOMPARE(h.g.nodeCount(), std::size_t(2));
    }

    // A Merge pass on a graph no edit touched since a complete pass returns at once with nothing
    // merged; any edit makes the next pass look again.
    void mergeAgainOnlyAfterAnEdit() {
        Fixture f;
        Variable* o = f.a("Op1", {f.a("Op2", {f.x, f.y}), f.a("Op2", {f.x, f.y}), f.a("Op3", {f.x})});
        f.g.setOutputs({o});
        RewriteEngine e(f.g, nullptr);
        Merge m1, m2, m3;
        QVERIFY(m1.apply(e).changed);
        QCOMPARE(f.g.nodeCount(), std::size_t(3));
        QCOMPARE(e.stats().at("MergeOptimizer").applied, std::int64_t(1));
        QVERIFY(e.mergeComplete());
        QVERIFY(!m2.apply(e).changed);
        QCOMPARE(e.stats().at("MergeOptimizer").tried, std::int64_t(1));
        // an edit brings in a twin of Op2(x, y): the next pass merges it
        const Apply* top = f.g.outputs()[0]->owner();
        Replacement r;
        r.pairs.push_back({top->input(2), f.a("Op2", {f.x, f.y})});
        QVERIFY(e.applyReplacement("test", top->input(2)->owner(), r, 0));
        QVERIFY(!e.mergeComplete());
        QCOMPARE(f.g.nodeCount(), std::size_t(3));
        QVERIFY(m3.apply(e).changed);
        QCOMPARE(f.g.nodeCount(), std::size_t(2));
        QCOMPARE(top->input(0), top->input(2));
        QCOMPARE(e.stats().at("MergeOptimizer").applied, std::int64_t(2));
    }

    void equilibriumTest1() {
        Fixture f;
        f.g.setOutputs({f.a("Op3", {f.a("Op4", {f.x, f.y})})});
        auto op3op2 = rule("Op3(Op2)->Op4", "Op3", [](FunctionGraph& g, Apply& n) -> Variable* {
            const Apply* in = n.input(0)->owner();
            if (!in || in->op().kind() != "Op2") return nullptr;
            return g.apply(Op::get("Op4"), in->inputs());
        });
        Equilibrium eq("eq", {renameRule("Op1", "Op2"), renameRule("Op4", "Op1"), op3op2}, {10.0});
        run(eq, f.g);
        QCOMPARE(outputs(f.g), QString("[Op2(x, y)]"));
        QVERIFY(eq.abortMessage().empty());
    }
    void equilibriumTest2() {
        Fixture f;
        f.g.setOutputs({f.a("Op1", {f.a("Op1", {f.a("Op3", {f.x, f.y})})})});
        auto op1op2 = rule("Op1(Op2)->Op4", "Op1", [](FunctionGraph& g, Apply& n) -> Variable* {
            const Apply* in = n.input(0)->owner();
            if (!in || in->op().kind() != "Op2" || n.nin() != 1) return nullptr;
            return g.apply(Op::get("Op4"), in->inputs());
        });
        Equilibrium eq("eq",
                       {op1op2, renameRule("Op3", "Op4"), renameRule("Op4", "Op5"), renameRule("Op5", "Op6"),
                        renameRule("Op6", "Op2")},
                       {10.0});
        run(eq, f.g);
        QCOMPARE(outputs(f.g), QString("[Op2(x, y)]"));
    }
    void equilibriumLowUseRatio() {
        Fixture f;
        f.g.setOutputs({f.a("Op3", {f.a("Op4", {f.x, f.y})})});
        auto op3op2 = rule("Op3(Op2)->Op4", "Op3", [](FunctionGraph& g, Apply& n) -> Variable* {
            const Apply* in = n.input(0)->owner();
            if (!in || in->op().kind() != "Op2") return nullptr;
            return g.apply(Op::get("Op4"), in->inputs());
        });
        Equilibrium eq("eq", {renameRule("Op1", "Op2"), renameRule("Op4", "Op1"), op3op2}, {0.5});
        run(eq, f.g);
        QCOMPARE(outputs(f.g), QString("[Op1(x, y)]"));
        QVERIFY2(QString::fromStdString(eq.abortMessage()).contains("max'ed out by 'Op4->Op1'"),
                 eq.abortMessage().c_str());
    }
    void tracksDispatchSavesAttempts() {
        auto count = [](bool dispatch) {
            Fixture f;
            f.g.setOutputs({f.a("Op3", {f.a("Op4", {f.x, f.y})})});
            EquilibriumConfig cfg{10.0};
            cfg.dispatch = dispatch;
            Equilibrium eq("eq", {renameRule("Op1", "Op2"), renameRule("Op4", "Op1"), renameRule("Op5", "Op6")}, cfg);
            RewriteEngine e(f.g, nullptr);
            eq.apply(e);
            return std::make_pair(outputs(f.g), e.attempts());
        };
        const auto on = count(true), off = count(false);
        QCOMPARE(on.first, off.first); // same result
        QCOMPARE(on.first, QString("[Op3(Op2(x, y))]"));
        QVERIFY2(on.second < off.second, qPrintable(QString("%1 vs %2").arg(on.second).arg(off.second)));
    }

    void walkerPatterns() {
        { // replace_output: Op1(Op2(a,b), c) -> Op4(c, b)
            Fixture f;
            f.g.setOutputs({f.a("Op1", {f.a("Op2", {f.x, f.y}), f.z})});
            Walker w("w", {rule("r", "Op1", [](FunctionGraph& g, Apply& n) -> Variable* {
                         const Apply* in = n.input(0)->owner();
                         if (!in || in->op().kind() != "Op2") return nullptr;
                         return g.apply(Op::get("Op4"), {n.input(1), in->input(1)});
                     })});
            run(w, f.g);
            QCOMPARE(outputs(f.g), QString("[Op4(z, y)]"));
        }
        { // replace_subgraph: Op2(a,b) -> Op1(b,a)
            Fixture f;
            f.g.setOutputs({f.a("Op1", {f.a("Op2", {f.x, f.y}), f.z})});
            Walker w("w", {rule("r", "Op2", [](FunctionGraph& g, Apply& n) {
                         return g.apply(Op::get("Op1"), {n.input(1), n.input(0)});
                     })});
            run(w, f.g);
            QCOMPARE(outputs(f.g), QString("[Op1(Op1(y, x), z)]"));
        }
        { // no_recurse (ignore_newtrees): Op2(a,b) -> Op2(b,a) applies once
            Fixture f;
            f.g.setOutputs({f.a("Op1", {f.a("Op2", {f.x, f.y}), f.z})});
            Walker w("w",
                     {rule("r", "Op2",
                           [](FunctionGraph& g, Apply& n) {
                               return g.apply(Op::get("Op2"), {n.input(1), n.input(0)});
                           })},
                     {WalkerConfig::Order::InToOut, true});
            run(w, f.g);
            QCOMPARE(outputs(f.g), QString("[Op1(Op2(y, x), z)]"));
        }
        { // multiple: Op2(a,b) -> Op4(a)
            Fixture f;
            f.g.setOutputs({f.a("Op1", {f.a("Op2", {f.x, f.y}), f.a("Op2", {f.x, f.y}), f.a("Op2", {f.y, f.z})})});
            Walker w("w", {rule("r", "Op2",
                                [](FunctionGraph& g, Apply& n) { return g.apply(Op::get("Op4"), {n.input(0)}); })});
            run(w, f.g);
            QCOMPARE(outputs(f.g), QString("[Op1(Op4(x), Op4(x), Op4(y))]"));
        }
        for (int depth : {4, 5}) { // nested_even / nested_odd: Op1(Op1(a)) -> a
            Fixture f;
            Variable* v = f.x;
            for (int i = 0; i < depth; ++i) v = f.a("Op1", {v});
            f.g.setOutputs({v});
            Walker w("w",
                     {rule("r", "Op1",
                           [](FunctionGraph&, Apply& n) -> Variable* {
                               const Apply* in = n.input(0)->owner();
                               return in && in->op().kind() == "Op1" ? in->input(0) : nullptr;
                           })},
                     {WalkerConfig::Order::OutToIn, false});
            run(w, f.g);
            QCOMPARE(outputs(f.g), depth == 4 ? QString("[x]") : QString("[Op1(x)]"));
        }
        { // expand (ignore_newtrees): Op1(a) -> Op2(Op1(a)), no infinite expansion
            Fixture f;
            f.g.setOutputs({f.a("Op1", {f.a("Op1", {f.a("Op1", {f.x})})})});
            Walker w("w",
                     {rule("r", "Op1",
                           [](FunctionGraph& g, Apply& n) {
                               return g.apply(Op::get("Op2"), {g.apply(Op::get("Op1"), n.inputs())});
                           })},
                     {WalkerConfig::Order::InToOut, true});
            run(w, f.g);
            QCOMPARE(outputs(f.g), QString("[Op2(Op1(Op2(Op1(Op2(Op1(x))))))]"));
        }
        { // ambiguous (in_to_out, new trees visited): Op1(Op1(a)) -> Op1(a) on 5 nested Op1
            Fixture f;
            Variable* v = f.x;
            for (int i = 0; i < 5; ++i) v = f.a("Op1", {v});
            f.g.setOutputs({v});
            Walker w("w", {rule("r", "Op1", [](FunctionGraph& g, Apply& n) -> Variable* {
                         const Apply* in = n.input(0)->owner();
                         return in && in->op().kind() == "Op1" ? g.apply(Op::get("Op1"), in->inputs()) : nullptr;
                     })});
            run(w, f.g);
            QCOMPARE(outputs(f.g), QString("[Op1(x)]"));
        }
    }

    // Issue 12 part 3: a replacement rejected after it made edits leaves no trace: same
    // fingerprint, no change reported, no edit delivered, and an equilibrium converges in one
    // pass instead of running to its pass limit.
    void rejectedAfterEditsLeavesFingerprintAndChangedFlagUnchanged() {
        Fixture f;
        f.g.setOutputs({f.a("Op1", {f.a("Op2", {f.x}), f.y})});
        const auto before = f.g.fingerprint();
        EventLog log;
        {
            RewriteEngine e(f.g, &log);
            Equilibrium eq("eq", {rejectedAfterEdits()}, EquilibriumConfig{8.0, false, true, 50});
            const PhaseResult r = eq.apply(e);
            QVERIFY(!r.changed);
            QVERIFY(r.converged);
            QCOMPARE(eq.passes(), 1);
            QVERIFY(eq.abortMessage().empty());
            QCOMPARE(e.editCount(), std::int64_t(0));
            QCOMPARE(e.stats().at("half_bad").rejected, 1);
            QCOMPARE(e.stats().at("half_bad").applied, 0);
        }
        QCOMPARE(f.g.fingerprint(), before);
        QCOMPARE(outputs(f.g), QString("[Op1(Op2(x), y)]"));
        QCOMPARE(log.lines, QStringList{"rejected half_bad at #1"}); // no edit, no revert
        {                                                            // the same through a walker and a local group
            RewriteEngine e(f.g, &log);
            Walker w("w", {makeLocalGroup("group", {rejectedAfterEdits()})});
            QVERIFY(!w.apply(e).changed);
            QCOMPARE(e.editCount(), std::int64_t(0));
        }
        QCOMPARE(f.g.fingerprint(), before);
    }

    // Observers see a transaction's edits only once it has committed, in the order made.
    void observersSeeEditsAtCommit() {
        Fixture f;
        Variable* out = f.a("Op1", {f.a("Op2", {f.x}), f.y});
        f.g.setOutputs({out});
        struct AtCommit final : GraphObserver {
            QStringList seen;
            void onImport(const FunctionGraph& g, const Apply& n, std::string_view) override {
                seen << QString("import %1 output-is-new=%2")
                            .arg(QString::fromStdString(n.op().kind()))
                            .arg(g.outputs()[0]->owner()->op().kind() == "Op4");
            }
            void onPrune(const FunctionGraph&, const Apply& n, std::string_view) override {
                seen << "prune " + QString::fromStdString(n.op().kind());
            }
        } obs;
        f.g.addObserver(&obs);
        Variable* repl = f.a("Op4", {f.a("Op5", {f.x}), f.y});
        f.g.replaceAllValidate({{out, repl}}, "test");
        QCOMPARE(obs.seen,
                 (QStringList{"import Op5 output-is-new=1", "import Op4 output-is-new=1", "prune Op1", "prune Op2"}));
        f.g.removeObserver(&obs);
    }

    // The exact sequence of events of one small graph per built-in pipeline (canonical text).
    void goldenEventLogs_data() {
        QTest::addColumn<QString>("pipeline");
        QTest::addColumn<QStringList>("expected");
        for (const char* p : {"theano", "cleanup", "legacy", "fast_compile"})
            QTest::newRow(p) << QString(p) << goldenLog(p);
    }
    void goldenEventLogs() {
        QFETCH(QString, pipeline);
        QFETCH(QStringList, expected);
        const char* doc = R"({"format": "passlens.graph", "version": 1, "name": "golden",
          "inputs": [{"name": "x", "type": "float32[4]"}],
          "constants": [{"name": "half", "type": "float32[]", "value": 0.5}, {"name": "four", "type": "int64[]", "value": 4}],
          "nodes": [
            {"op": "Alloc", "inputs": ["half", "four"], "outputs": ["h"]},
            {"op": "Elemwise", "attrs": {"scalar": "exp"}, "inputs": ["x"], "outputs": ["e"]},
            {"op": "Elemwise", "attrs": {"scalar": "mul"}, "inputs": ["e", "h"], "outputs": ["m"]},
            {"op": "Elemwise", "attrs": {"scalar": "exp"}, "inputs": ["x"], "outputs": ["e2"]},
            {"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["m", "e2"], "outputs": ["y"]}],
          "outputs": ["y"]})";
        LoadedGraph lg = readGraphJsonText(doc, "golden.graph.json", {});
        EventLog log;
        const PipelineRun run = Pipeline::builtin(pipeline.toStdString()).run(*lg.graph, &log, true);
        QVERIFY(run.messages.empty());
        for (const PhaseRun& p : run.phases) QVERIFY2(p.converged, p.info.name.c_str());
        if (log.lines != expected) qWarning().noquote() << log.lines.join("\n");
        QCOMPARE(log.lines, expected);
    }

    // A pipeline whose canonicalize stops on max_use reports the phase as not converged (and
    // the optimize report says so); the other phases converged.
    void notConvergedIsReported() {
        const char* doc = R"({"format": "passlens.graph", "version": 1, "inputs": [{"name": "x", "type": "float32[4]"}],
          "nodes": [{"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["x", "x"], "outputs": ["a"]},
                    {"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["a", "x"], "outputs": ["b"]},
                    {"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["b", "x"], "outputs": ["c"]}], "outputs": ["c"]})";
        LoadedGraph lg = readGraphJsonText(doc, "g.graph.json", {});
        Pipeline p = Pipeline::fromJson(
            nlohmann::json::parse(
                R"({"format": "passlens.pipeline", "version": 1, "base": "theano", "max_use_ratio": 0.1})"),
            "p.json");
        Trace t;
        const PipelineRun run = p.run(*lg.graph, &t, true);
        QStringList notConverged;
        for (const PhaseRun& ph : run.phases)
            if (!ph.converged) notConverged << QString::fromStdString(ph.info.name);
        QCOMPARE(notConverged, QStringList{"canonicalize"});
        t.finish(run, *lg.graph, p.buildContext().caps);
        const nlohmann::json j = optimizeJson(run, *lg.graph, t);
        for (const auto& ph : j["phases"]) QCOMPARE(ph.contains("converged"), ph["name"] == "canonicalize");
        QVERIFY(QString::fromStdString(j["messages"].dump()).contains("max'ed out by 'local_add_mul_fusion'"));
    }

    // A replacement whose second pair rewires a node its first pair imported: the edits arrive
    // at the commit, so the recorded node reads its final input; the session still replays
    // (the event lists the definition of that input first).
    void recordedEventReplaysWhenPairsChain() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* c = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x}, "c");
        Variable* a = g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {c}, "a");
        g.setOutputs({a, c});
        Trace t;
        RewriteEngine e(g, &t);
        t.pipelineBegin("test", g);
        Variable* n1 =
            g.apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {c}, "n1"); // imported by pair 1, rewired by pair 2
        Variable* d = g.apply(Op::get("Elemwise", {{"scalar", "sqrt"}}), {x}, "d");
        Replacement r;
        r.pairs = {{a, n1}, {c, d}};
        QVERIFY(e.applyReplacement("chain", nullptr, r, 0));
        QCOMPARE(n1->owner()->input(0), d);
        QCOMPARE(int(t.events().size()), 1);
        const auto& nodes = t.events()[0].nodes;
        QCOMPARE(int(nodes.size()), 2);
        QCOMPARE(nodes[0].id, d->owner()->id()); // the definition of n1's input comes first
        QCOMPARE(t.graphAfter(1)->fingerprint(), g.fingerprint());
    }

    void faultyRewritesAreRejected() {
        Fixture f;
        Variable* o = f.a("Op1", {f.a("Op2", {f.x, f.y})});
        f.g.setOutputs({o});
        const auto before = f.g.fingerprint();
        RewriteEngine e(f.g, nullptr);
        // throws
        NodeRewriter thrower("thrower", Tracks::of({"Op2"}),
                             [](RewriteCall&) -> std::optional<Replacement> { throw Error("boom"); });
        // changes a type
        NodeRewriter retype("retype", Tracks::of({"Op2"}), [](RewriteCall& c) -> std::optional<Replacement> {
            Variable* v = c.graph.addConstant(TensorData::fromDoubles(DType::Float64, {2}, {0, 0}));
            return Replacement{{{c.node.output(), v}}, {}};
        });
        // creates a cycle: Op2's output replaced by something computed from its client Op1
        NodeRewriter cyc("cycle", Tracks::of({"Op2"}), [](RewriteCall& c) -> std::optional<Replacement> {
            const Client& cl = c.node.output()->clients().front();
            return Replacement{{{c.node.output(), c.graph.apply(Op::get("Op5"), {cl.node->output()})}}, {}};
        });
        Walker w("w", {thrower, retype, cyc}, {WalkerConfig::Order::InToOut, false, false});
        QVERIFY(!w.apply(e).changed);
        QCOMPARE(f.g.fingerprint(), before);
        QCOMPARE(e.stats().at("thrower").rejected, 1);
        QCOMPARE(e.stats().at("retype").rejected, 1);
        QCOMPARE(e.stats().at("cycle").rejected, 1);
        QCOMPARE(e.stats().at("cycle").applied, 0);
    }

    // A cancelled token stops a pipeline run before the next phase or rewrite attempt: the run
    // throws Cancelled and applies nothing more; optimizeGraph and the phase check likewise.
    void cancelledTokenStopsThePipeline() {
        const std::string model = PASSLENS_CORPUS_DIR "/lstm.onnx";
        const Pipeline theano = Pipeline::builtin("theano");
        { // uncancelled: the run applies many rewrites
            LoadedGraph lg = loadGraphFile(model);
            CountingInstrumentation all;
            CancelToken token;
            theano.run(*lg.graph, &all, false, &token);
            QVERIFY2(all.applied > 3, qPrintable(QString::number(all.applied)));
        }
        { // cancelled before the run: no phase begins, the graph is untouched
            LoadedGraph lg = loadGraphFile(model);
            const std::uint64_t before = lg.graph->fingerprint();
            CountingInstrumentation none;
            CancelToken token;
            token.cancel();
            QCOMPARE(cancelledMessage([&] { theano.run(*lg.graph, &none, false, &token); }),
                     std::string("the pipeline run was cancelled"));
            QCOMPARE(none.phases, 0);
            QCOMPARE(none.applied, 0);
            QCOMPARE(lg.graph->fingerprint(), before);
        }
        { // cancelled by the third applied rewrite: the run stops right there
            LoadedGraph lg = loadGraphFile(model);
            CancelToken token;
            CountingInstrumentation three;
            three.cancelAt = &token;
            three.cancelAfter = 3;
            QCOMPARE(cancelledMessage([&] { theano.run(*lg.graph, &three, false, &token); }),
                     std::string("the pipeline run was cancelled"));
            QCOMPARE(three.applied, 3);
        }
        { // the use case: nothing is returned
            CancelToken token;
            token.cancel();
            PipelineRequest request;
            request.cancel = &token;
            QCOMPARE(cancelledMessage([&] { optimizeGraph(loadGraphFile(model).graph, request); }),
                     std::string("the pipeline run was cancelled"));
            QCOMPARE(cancelledMessage([&] { openAndOptimize(model, request); }),
                     std::string("the pipeline run was cancelled"));
        }
        { // the phase check compares no phase once cancelled
            LoadedGraph lg = loadGraphFile(model);
            Trace trace;
            const PipelineRun run = theano.run(*lg.graph, &trace);
            trace.finish(run, *lg.graph, theano.buildContext().caps);
            const std::vector<CheckedPhase> phases = phasesToCheck(trace);
            QVERIFY(!phases.empty());
            int compared = 0;
            const CompareWithSource compare = [&](const FunctionGraph&) {
                ++compared;
                return OutputsDiff{};
            };
            QCOMPARE(checkPhases(phases, compare, kCheckTolerance, "check").phases.size(), phases.size());
            QCOMPARE(compared, static_cast<int>(phases.size()));
            CancelToken token;
            token.cancel();
            QCOMPARE(cancelledMessage([&] { checkPhases(phases, compare, kCheckTolerance, "check", &token); }),
                     std::string("the phase check was cancelled"));
            QCOMPARE(compared, static_cast<int>(phases.size()));
        }
    }
};

QTEST_GUILESS_MAIN(TestRewrite)
#include "tst_rewrite.moc"
