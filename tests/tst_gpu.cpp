// GPU passes: the transfer and GraphToGpu cases of THEANO_SEMANTICS §4.2, every lifter before and
// after, capability reasons, pipeline phase orders, the Alloc special case vs the backward pass,
// and the user guide's teaching example.
#include <passlens/gpu/GpuRewrites.h>
#include <passlens/gpu/GraphToGpu.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/OpRegistry.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/rewrite/Equilibrium.h>
#include <passlens/trace/Trace.h>

#include <QTest>

using namespace passlens;
using json = nlohmann::json;

namespace {
const std::string kSource = PASSLENS_SOURCE_DIR;
const std::string kCorpus = PASSLENS_CORPUS_DIR;

QString kinds(const FunctionGraph& g) {
    QStringList k;
    for (const Apply* n : g.toposort()) k << QString::fromStdString(n->op().kind());
    return k.join(' ');
}

void cut(FunctionGraph& g) {
    Equilibrium eq("cut", {localCutGpuTransfers()});
    RewriteEngine e(g, nullptr);
    eq.apply(e);
}

std::vector<LiftDecision> graphToGpu(FunctionGraph& g, GpuCapabilities caps = GpuCapabilities::defaults(),
                                     bool special = true) {
    GraphToGpu p(std::move(caps), special);
    RewriteEngine e(g, nullptr);
    p.apply(e);
    g.validate();
    return e.liftDecisions();
}

Variable* c64(FunctionGraph& g, std::int64_t v) { return g.addConstant(TensorData::fromInts(DType::Int64, {}, {v})); }
Variable* cf(FunctionGraph& g, double v, DType dt = DType::Float32) {
    return g.addConstant(TensorData::fromDoubles(dt, {}, {v}));
}

struct LiftCase {
    const char* hostKind;
    const char* gpuKind;
    std::function<Variable*(FunctionGraph&, Variable* x)> build; // x: float32[4,6] input moved to the GPU
};

std::vector<LiftCase> liftCases() {
    auto ds = [](FunctionGraph& g, Variable* v, json order) {
        return g.apply(Op::get("DimShuffle", {{"order", order}}), {v});
    };
    return {
        {"Elemwise", "GpuElemwise",
         [](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {x});
         }},
        {"DimShuffle", "GpuDimShuffle",
         [ds](FunctionGraph& g, Variable* x) {
             return ds(g, x, {1, 0});
         }},
        {"Reshape", "GpuReshape",
         [](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("Reshape", {{"ndim", 1}}),
                            {x, g.addConstant(TensorData::fromInts(DType::Int64, {1}, {24}))});
         }},
        {"Flatten", "GpuReshape",
         [ds](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("Flatten", {{"outdim", 1}}), {x});
         }},
        {"Alloc", "GpuAlloc",
         [](FunctionGraph& g, Variable* x) {
             Variable* a = g.apply(Op::get("Alloc"), {cf(g, 0), c64(g, 2), c64(g, 6)});
             return g.apply(Op::get("Join", {{"axis", 0}}), {x, a});
         }},
        {"AllocEmpty", "GpuAllocEmpty",
         [](FunctionGraph& g, Variable* x) {
             Variable* a = g.apply(Op::get("AllocEmpty", {{"dtype", "float32"}}), {c64(g, 2), c64(g, 6)});
             return g.apply(Op::get("Join", {{"axis", 0}}), {x, a});
         }},
        {"Subtensor", "GpuSubtensor",
         [](FunctionGraph& g, Variable* x) {
             Variable* e = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x}); // not a plain input: no heuristic
             return g.apply(Op::get("Subtensor", {{"idx", {json{{"start", 1}, {"stop", 3}}}}}), {e});
         }},
        {"AdvancedSubtensor1", "GpuAdvancedSubtensor1",
         [](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("AdvancedSubtensor1"),
                            {x, g.addConstant(TensorData::fromInts(DType::Int64, {2}, {0, 3}))});
         }},
        {"IncSubtensor", "GpuIncSubtensor",
         [](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("IncSubtensor", {{"idx", {1}}}),
                            {x, g.addConstant(TensorData::fromDoubles(DType::Float32, {6}, {1, 1, 1, 1, 1, 1}))});
         }},
        {"Join", "GpuJoin",
         [](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("Join", {{"axis", 1}}), {x, x});
         }},
        {"Split", "GpuSplit",
         [](FunctionGraph& g, Variable* x) {
             return g
                 .makeApply(Op::get("Split", {{"axis", 1}, {"n_splits", 2}}),
                            {x, g.addConstant(TensorData::fromInts(DType::Int64, {2}, {2, 4}))})
                 ->output(1);
         }},
        {"CAReduce", "GpuCAReduceCuda",
         [](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("CAReduce", {{"scalar", "add"}, {"axis", {1}}}), {x});
         }},
        {"Dot", "GpuDot22",
         [ds](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("Dot"), {x, ds(g, x, {1, 0})});
         }},
        {"Dot22", "GpuDot22",
         [ds](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("Dot22"), {x, ds(g, x, {1, 0})});
         }},
        {"Gemm", "GpuGemm",
         [ds](FunctionGraph& g, Variable* x) {
             Variable* z = g.addConstant(TensorData::fromDoubles(DType::Float32, {4, 4}, std::vector<double>(16, 1.0)));
             return g.apply(Op::get("Gemm"), {z, cf(g, 1), x, ds(g, x, {1, 0}), cf(g, 1)});
         }},
        {"Gemv", "GpuGemv",
         [](FunctionGraph& g, Variable* x) {
             Variable* z = g.addConstant(TensorData::fromDoubles(DType::Float32, {4}, {0, 0, 0, 0}));
             Variable* v = g.addConstant(TensorData::fromDoubles(DType::Float32, {6}, {1, 2, 3, 4, 5, 6}));
             return g.apply(Op::get("Gemv"), {z, cf(g, 1), x, v, cf(g, 0)});
         }},
        {"BatchedDot", "GpuGemmBatch",
         [ds](FunctionGraph& g, Variable* x) {
             Variable* a = ds(g, x, {"x", 0, 1});
             return g.apply(Op::get("BatchedDot"), {a, ds(g, x, {"x", 1, 0})});
         }},
        {"Softmax", "GpuSoftmax", [](FunctionGraph& g, Variable* x) { return g.apply(Op::get("Softmax"), {x}); }},
        {"LogSoftmax", "GpuLogSoftmax",
         [](FunctionGraph& g, Variable* x) { return g.apply(Op::get("LogSoftmax"), {x}); }},
        {"AbstractConv2d", "GpuCorrMM",
         [ds](FunctionGraph& g, Variable* x) {
             Variable* img = ds(g, x, {"x", "x", 0, 1});
             Variable* w =
                 g.addConstant(TensorData::fromDoubles(DType::Float32, {2, 1, 3, 3}, std::vector<double>(18, 0.5)));
             return g.apply(Op::get("AbstractConv2d", {{"border_mode", "half"}}), {img, w});
         }},
        {"Pool", "GpuPool",
         [ds](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("Pool", {{"ws", {2, 2}}}), {ds(g, x, {"x", "x", 0, 1})});
         }},
        {"BatchNormInference", "GpuDnnBatchNormInference",
         [ds](FunctionGraph& g, Variable* x) {
             Variable* p = g.addConstant(TensorData::fromDoubles(DType::Float32, {1, 1, 1, 1}, {1}));
             return g.apply(Op::get("BatchNormInference"), {ds(g, x, {"x", "x", 0, 1}), p, p, p, p});
         }},
        {"CpuContiguous", "GpuContiguous",
         [](FunctionGraph& g, Variable* x) { return g.apply(Op::get("CpuContiguous"), {x}); }},
        {"CumOp", "GpuCumOp",
         [](FunctionGraph& g, Variable* x) {
             return g.apply(Op::get("CumOp", {{"axis", 1}}), {x});
         }},
    };
}
} // namespace

class TestGpu : public QObject {
    Q_OBJECT
private slots:
    void transferCases() {
        { // D01: H(G(x)) -> x
            FunctionGraph g;
            Variable* x = g.addInput(Type::parse("float32[?,?]"), "x");
            g.setOutputs({g.apply(Op::get("HostFromGpu"), {g.apply(Op::get("GpuFromHost"), {x})})});
            cut(g);
            QCOMPARE(g.outputs()[0], x);
            QCOMPARE(g.nodeCount(), std::size_t(0));
        }
        { // D02: G(H(g)) -> g
            FunctionGraph g;
            Variable* v = g.addInput(Type::parse("float32[?,?]@gpu"), "g");
            g.setOutputs({g.apply(Op::get("GpuFromHost"), {g.apply(Op::get("HostFromGpu"), {v})})});
            cut(g);
            QCOMPARE(g.outputs()[0], v);
        }
        { // D03, D04, D05, D06, D07
            FunctionGraph g;
            Variable* ga = g.addInput(Type::parse("float32[?]@gpu:a"), "g_a");
            Variable* x = g.addInput(Type::parse("float32[?]"), "x");
            auto g2g = [&](const char* c, Variable* v) { return g.apply(Op::get("GpuToGpu", {{"context", c}}), {v}); };
            auto g2h = [&](Variable* v) { return g.apply(Op::get("HostFromGpu"), {v}); };
            auto h2g = [&](const char* c, Variable* v) {
                return g.apply(Op::get("GpuFromHost", {{"context", c}}), {v});
            };
            Variable* d03 = g2g("a", ga);
            Variable* d04 = g2h(g2g("b", ga));
            Variable* d05 = h2g("b", g2h(ga));
            Variable* d06 = g2g("b", h2g("a", x));
            Variable* d07a = g2g("a", g2g("b", ga));
            Variable* d07c = g2g("c", g2g("b", ga));
            g.setOutputs({d03, d04, d05, d06, d07a, d07c});
            cut(g);
            const auto& o = g.outputs();
            QCOMPARE(o[0], ga);
            QCOMPARE(o[1]->owner()->op().str(), std::string("HostFromGpu(gpuarray)"));
            QCOMPARE(o[1]->owner()->input(0), ga);
            QCOMPARE(o[2]->owner()->op().str(), std::string("GpuToGpu<b>"));
            QCOMPARE(o[2]->owner()->input(0), ga);
            QCOMPARE(o[3]->owner()->op().str(), std::string("GpuFromHost<b>"));
            QCOMPARE(o[3]->owner()->input(0), x);
            QCOMPARE(o[4], ga);
            QCOMPARE(o[5]->owner()->op().str(), std::string("GpuToGpu<c>"));
            QCOMPARE(o[5]->owner()->input(0), ga);
        }
    }

    void graphToGpuInputIsOutput() {
        // D08: outputs [x, x + 1]: no cycle, output 0 stays x
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[?,?]"), "x");
        Variable* one = g.apply(Op::get("DimShuffle", {{"order", {"x", "x"}}}), {cf(g, 1)});
        g.setOutputs({x, g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, one})});
        graphToGpu(g);
        QCOMPARE(g.outputs()[0], x);
        const Apply* h = g.outputs()[1]->owner();
        QCOMPARE(h->op().kind(), std::string("HostFromGpu"));
        const Apply* add = h->input(0)->owner();
        QCOMPARE(add->op().str(), std::string("GpuElemwise{add}<gpuarray>"));
        QCOMPARE(add->input(0)->owner()->op().kind(), std::string("GpuFromHost"));
        QCOMPARE(add->input(1)->owner()->op().kind(),
                 std::string("GpuFromHost")); // the host DimShuffle of the constant
        QCOMPARE(add->input(1)->owner()->input(0), one);
    }

    void graphToGpuOutputOfGpuInput() {
        // D09: out = H(g) with g an ownerless GPU input: wrapped back into H(g)
        FunctionGraph g;
        Variable* v = g.addInput(Type::parse("float32[?,?]@gpu"), "g");
        g.setOutputs({g.apply(Op::get("HostFromGpu"), {v})});
        graphToGpu(g);
        QCOMPARE(kinds(g), QString("HostFromGpu"));
        QCOMPARE(g.outputs()[0]->owner()->input(0), v);
    }

    void graphToGpuCounters() {
        // D10: exp(x) * 2 -> local_gpua_elemwise applied twice
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[?,?]"), "x");
        Variable* two = g.apply(Op::get("DimShuffle", {{"order", {"x", "x"}}}), {cf(g, 2)});
        g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "mul"}}),
                              {g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x}), two})});
        const auto d = graphToGpu(g);
        int elemwise = 0, hostLeft = 0;
        for (const auto& e : d) {
            elemwise += e.lifted && e.lifter == "local_gpua_elemwise";
            hostLeft += !e.lifted;
        }
        QCOMPARE(elemwise, 2);
        QCOMPARE(hostLeft, 1); // the DimShuffle of the constant has no GPU input
        const auto c = g.opCounts();
        QCOMPARE(c.at("GpuElemwise"), 2);
        QCOMPARE(c.at("GpuFromHost"), 2);
        QCOMPARE(c.at("DimShuffle"), 1);
        QCOMPARE(c.at("HostFromGpu"), 1);
    }

    void everyLifter_data() {
        QTest::addColumn<int>("index");
        const auto cases = liftCases();
        for (std::size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].hostKind) << static_cast<int>(i);
    }
    void everyLifter() {
        QFETCH(int, index);
        const LiftCase lc = liftCases()[static_cast<std::size_t>(index)];
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4,6]"), "x");
        g.setOutputs({lc.build(g, x)});
        const auto before = g.opCounts();
        QVERIFY2(before.count(lc.hostKind), lc.hostKind);
        graphToGpu(g);
        const auto after = g.opCounts();
        QVERIFY2(after.count(lc.gpuKind), qPrintable(kinds(g)));
        QVERIFY2(!after.count(lc.hostKind), qPrintable(kinds(g)));
        QCOMPARE(g.outputs()[0]->owner()->op().kind(), std::string("HostFromGpu"));
    }

    void subtensorSingleClientHeuristic() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[100,8]"), "x");
        Variable* y = g.addInput(Type::parse("float32[2,8]"), "y");
        Variable* slice = g.apply(Op::get("Subtensor", {{"idx", {json{{"stop", 2}}}}}), {x});
        g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {slice, y})});
        const auto d = graphToGpu(g);
        QCOMPARE(g.opCounts().at("Subtensor"), 1);
        QCOMPARE(g.opCounts().at("GpuElemwise"), 1);
        bool found = false;
        for (const auto& e : d) found |= QString::fromStdString(e.reason).contains("single-client heuristic");
        QVERIFY(found);
        cut(g); // the slice is taken on the host, only the slice (and y) are transferred
        const auto c = g.opCounts();
        QCOMPARE(c.at("Subtensor"), 1);
        QCOMPARE(c.at("GpuFromHost"), 2);
        QCOMPARE(c.at("HostFromGpu"), 1);
        QVERIFY(!c.count("GpuSubtensor"));
        bool sliceTransferred = false;
        for (const Apply* n : g.toposort())
            if (n->op().kind() == "GpuFromHost" && n->input(0)->owner() &&
                n->input(0)->owner()->op().kind() == "Subtensor")
                sliceTransferred = true;
        QVERIFY(sliceTransferred);
    }

    void elemwiseSplitByKernelBudget() {
        QCOMPARE(maxInputsToGpuElemwise(2), 126);
        QCOMPARE(maxInputsToGpuElemwise(8), 49);
        FunctionGraph g;
        std::vector<Variable*> ins;
        for (int i = 0; i < 130; ++i) ins.push_back(g.addInput(Type::parse("float32[3,3]"), "x" + std::to_string(i)));
        g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "add"}}), ins)});
        graphToGpu(g);
        const auto c = g.opCounts();
        QCOMPARE(c.at("GpuElemwise"), 3); // 126 + 4 inputs, then one node adding the two partial sums
        for (const Apply* n : g.toposort())
            if (n->op().kind() == "GpuElemwise") QVERIFY(n->nin() <= 126);
    }

    // GraphToGpu tries its lifters through the RewriteEngine like every other rewrite: the
    // try and the decline with its reason reach the Instrumentation, the counts the engine's
    // statistics, and each host node's decision the engine, from which the Pipeline takes them
    // for the lifting report.
    void liftersReportThroughTheEngine() {
        struct Recorder final : Instrumentation {
            std::vector<std::string> seen;
            bool wantsReasons() const override { return true; }
            void rewriteTried(std::string_view r, const Apply*) override { seen.push_back("tried " + std::string(r)); }
            void rewriteDeclined(std::string_view r, const Apply*, const std::string& why) override {
                seen.push_back("declined " + std::string(r) + ": " + why);
            }
        };
        const std::string powReason = "pow with a non-float output stays on the host (Theano lifts pow only for "
                                      "float outputs)";
        auto build = [](FunctionGraph& g) {
            Variable* x = g.addInput(Type::parse("int32[3]"), "x");
            g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "pow"}}), {x, x}, "p")});
        };
        FunctionGraph g;
        build(g);
        Recorder rec;
        GraphToGpu p(GpuCapabilities::defaults(), true);
        RewriteEngine e(g, &rec);
        p.apply(e);
        QCOMPARE(rec.seen,
                 (std::vector<std::string>{"tried local_gpua_elemwise", "declined local_gpua_elemwise: " + powReason,
                                           "tried GraphToGPU"}));
        QCOMPARE(e.stats().at("local_gpua_elemwise").tried, std::int64_t(1));
        QCOMPARE(e.stats().at("local_gpua_elemwise").applied, std::int64_t(0));
        QCOMPARE(e.liftDecisions().size(), std::size_t(1));
        QVERIFY(!e.liftDecisions()[0].lifted);
        QCOMPARE(e.liftDecisions()[0].reason, powReason);
        // through a pipeline: the decisions of its GraphToGpu phase, and the phase's statistics
        FunctionGraph h;
        build(h);
        const PipelineRun run = Pipeline::builtin("theano").run(h, nullptr);
        QCOMPARE(run.graphToGpuDecisions.size(), std::size_t(1));
        QCOMPARE(run.graphToGpuDecisions[0].reason, powReason);
        bool seenPhase = false;
        for (const PhaseRun& ph : run.phases)
            if (ph.info.name == "gpuarray_graph_optimization") {
                seenPhase = true;
                QCOMPARE(ph.rewriters.at("local_gpua_elemwise").tried, std::int64_t(1));
            }
        QVERIFY(seenPhase);
    }

    void capabilityReasons() {
        auto reasonFor = [](const char* type, const char* scalar, GpuCapabilities caps) {
            FunctionGraph g;
            Variable* x = g.addInput(Type::parse(type), "x");
            g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", scalar}}), {x})});
            PipelineRun run;
            GraphToGpu p(caps, true);
            RewriteEngine e(g, nullptr);
            p.apply(e);
            run.graphToGpuDecisions = e.liftDecisions();
            for (const auto& l : liftingReport(g, caps, run.graphToGpuDecisions))
                if (l.op.rfind("Elemwise", 0) == 0) return QString::fromStdString(l.reason);
            return QString("lifted");
        };
        GpuCapabilities no64 = GpuCapabilities::defaults();
        no64.disable(DType::Float64);
        QCOMPARE(reasonFor("float64[3]", "exp", no64), QString("float64 disabled in the capability table"));
        QCOMPARE(reasonFor("float64[3]", "exp", GpuCapabilities::defaults()), QString("lifted"));
        QCOMPARE(reasonFor("float32[]", "exp", GpuCapabilities::defaults()), QString("0-d tensors stay on the host"));
        QCOMPARE(reasonFor("complex64[3]", "neg", GpuCapabilities::defaults()), QString("complex input"));
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float64[3,3]"), "x");
        g.setOutputs({g.apply(Op::get("CumOp", {{"axis", 0}}), {x})});
        graphToGpu(g);
        QVERIFY(g.opCounts().count("CumOp"));
        const auto rep = liftingReport(g, GpuCapabilities::defaults());
        bool cum = false;
        for (const auto& l : rep)
            cum |= l.op.rfind("CumOp", 0) == 0 &&
                   QString::fromStdString(l.reason).startsWith("GpuCumOp does not support float64");
        QVERIFY(cum);
        // the table is editable from a pipeline document
        Pipeline p = Pipeline::fromJson(
            json::parse(
                R"({"format": "passlens.pipeline", "version": 1, "base": "theano", "disable_dtypes": ["float64"], "capabilities": {"GpuCumOp": ["float32", "float64"]}})"),
            "p.json");
        QVERIFY(p.buildContext().caps.check("GpuElemwise", DType::Float64).has_value());
        QVERIFY(!p.buildContext().caps.check("GpuCumOp", DType::Float32).has_value());
    }

    void pipelinePhaseOrders() {
        auto names = [](const Pipeline& p) {
            QStringList n;
            for (const auto& ph : p.phases()) n << QString::fromStdString(ph.name);
            return n.join(' ');
        };
        QCOMPARE(
            names(Pipeline::builtin("theano")),
            QString(
                "merge1 useless merge1.1 canonicalize merge1.2 gpuarray_graph_optimization InputToGpuArrayOptimizer "
                "gpuarray_local_optimizations gpuarray_cut_transfers gpua_elemwise_fusion merge2 merge3"));
        QCOMPARE(names(Pipeline::builtin("cleanup")),
                 QString("merge1 useless merge1.1 canonicalize merge1.2 gpuarray_graph_optimization gpuarray_backward "
                         "InputToGpuArrayOptimizer gpuarray_local_optimizations gpuarray_cut_transfers "
                         "gpua_elemwise_fusion merge2 merge3"));
        QCOMPARE(names(Pipeline::builtin("legacy")),
                 QString("merge1 useless merge1.1 canonicalize merge1.2 InputToGpuArrayOptimizer "
                         "gpuarray_local_optimizations gpuarray_cut_transfers gpua_elemwise_fusion merge2 merge3"));
        QCOMPARE(names(Pipeline::builtin("fast_compile")),
                 QString("merge1 canonicalize_fast_compile merge1.2 gpuarray_graph_optimization "
                         "InputToGpuArrayOptimizer gpuarray_local_optimizations gpuarray_cut_transfers"));
        QCOMPARE(names(Pipeline::builtin("none")), QString(""));
        // FORMAT.md §3 example
        Pipeline f = Pipeline::fromJson(
            json::parse(R"({"format": "passlens.pipeline", "version": 1, "name": "my-order", "base": "theano",
            "include": ["backward"], "exclude": ["local_gpualloc_memset_0", "fusion"], "move": [{"phase": "gpuarray_backward", "position": 48.4}]})"),
            "p.json");
        QCOMPARE(names(f), QString("merge1 useless merge1.1 canonicalize merge1.2 gpuarray_backward "
                                   "gpuarray_graph_optimization InputToGpuArrayOptimizer "
                                   "gpuarray_local_optimizations gpuarray_cut_transfers merge2 merge3"));
        QCOMPARE(QString::fromStdString(f.name()), QString("my-order"));
        QVERIFY(
            QString::fromStdString([] {
                try {
                    Pipeline::fromJson(
                        json::parse(
                            R"({"format": "passlens.pipeline", "version": 1, "move": [{"phase": "nope", "position": 1}]})"),
                        "bad.json");
                } catch (const Error& e) {
                    return std::string(e.what());
                }
                return std::string();
            }())
                .contains("bad.json: move[0]: no phase 'nope'"));
    }

    // Inputs the pipeline fuzz target (fuzz/fuzz_pipeline.cpp) found: each is refused with a
    // message naming the file and the place, no library text.
    void pipelineFuzzFindings() {
        const std::string dir = kSource + "/tests/fixtures/fuzz/pipeline/";
        auto errorOf = [](const std::string& path) {
            try {
                Pipeline::fromFile(path);
            } catch (const Error& e) {
                return QString(e.what());
            }
            return QString();
        };
        // a number outside double's range, thrown by the JSON lexer (json.exception.out_of_range.406)
        const QString overflow = errorOf(dir + "number-overflow.pipeline.json");
        QCOMPARE(overflow,
                 QString::fromStdString(dir + "number-overflow.pipeline.json: move[0].position: invalid JSON: "
                                              "number overflow parsing '-1e700'"));
    }

    void allocSpecialCaseVersusBackwardPass() {
        auto finalGraph = [](const std::string& file, const std::string& pipeline, FunctionGraph** out,
                             std::unique_ptr<FunctionGraph>& keep) {
            LoadedGraph lg = loadGraphFile(kSource + "/resources/examples/" + file);
            Pipeline p = Pipeline::builtin(pipeline);
            Trace t;
            const PipelineRun run = p.run(*lg.graph, &t, true);
            keep = std::move(lg.graph);
            *out = keep.get();
            return run;
        };
        std::unique_ptr<FunctionGraph> a, b;
        FunctionGraph *ga = nullptr, *gb = nullptr;
        const PipelineRun ra = finalGraph("join_alloc.graph.json", "theano", &ga, a);
        const PipelineRun rb = finalGraph("join_alloc.graph.json", "cleanup", &gb, b);
        QVERIFY(ra.messages.empty() && rb.messages.empty());
        QCOMPARE(kinds(*ga), QString("GpuFromHost GpuAlloc GpuJoin HostFromGpu"));
        QCOMPARE(ga->fingerprint(), gb->fingerprint()); // same final graph, two routes
        QCOMPARE(ga->toposort()[1]->op().str(), std::string("GpuAlloc<None>{memset_0=True}"));
        // theano: lifted by GraphToGPU's special case; cleanup: by the backward pass
        QVERIFY(ra.rewriters.count("local_gpua_alloc") && !ra.rewriters.count("backward_local_gpua_alloc"));
        QCOMPARE(rb.rewriters.at("backward_local_gpua_alloc").applied, 1);
        // where the special case moved an Alloc on its guess alone, the graphs differ
        std::unique_ptr<FunctionGraph> c, d;
        FunctionGraph *gc = nullptr, *gd = nullptr;
        finalGraph("alloc_guess.graph.json", "theano", &gc, c);
        finalGraph("alloc_guess.graph.json", "cleanup", &gd, d);
        QVERIFY(gc->fingerprint() != gd->fingerprint());
        QVERIFY(gc->opCounts().count("GpuAlloc"));
        QVERIFY(gd->opCounts().count("Alloc"));
    }

    void teachingExample() {
        // resources/examples/teaching.graph.json, the user guide's example: under cleanup each of
        // GraphToGpu, the backward pass and transfer cutting changes the graph
        auto optimize = [](const std::string& pipeline, Trace& t) {
            LoadedGraph lg = loadGraphFile(kSource + "/resources/examples/teaching.graph.json");
            Pipeline p = Pipeline::builtin(pipeline);
            const PipelineRun run = p.run(*lg.graph, &t, true);
            t.finish(run, *lg.graph, p.buildContext().caps);
            return lg;
        };
        // "rewriter: removed kinds -> added kinds" (each sorted) of every applied event of `phase`
        auto events = [](const Trace& t, const std::string& phase) {
            QStringList out;
            for (const RewriteEvent& e : t.events()) {
                if (e.phase != phase || e.status != EventStatus::Applied) continue;
                const auto before = t.graphAfter(e.seq - 1), after = t.graphAfter(e.seq);
                QStringList removed, added;
                for (NodeId id : e.removed) removed << QString::fromStdString(before->node(id)->op().kind());
                for (NodeId id : e.added) added << QString::fromStdString(after->node(id)->op().kind());
                removed.sort();
                added.sort();
                out << QString::fromStdString(e.rewriter) + ": " + removed.join(' ') + " -> " + added.join(' ');
            }
            return out;
        };
        Trace tc, tt;
        const LoadedGraph cleanup = optimize("cleanup", tc);
        const LoadedGraph theano = optimize("theano", tt);
        QCOMPARE(kinds(*tc.sourceGraph()),
                 QString("Dot DimShuffle Elemwise Elemwise Alloc Elemwise Alloc Dot DimShuffle Elemwise"));
        // GraphToGpu lifts the dense layer; the `ones` Alloc has no GPU input and stays (no special case)
        QCOMPARE(
            events(tc, "gpuarray_graph_optimization"),
            QStringList{
                "GraphToGPU: DimShuffle Dot Dot Elemwise Elemwise Elemwise Elemwise -> Dot Elemwise GpuDimShuffle "
                "GpuDot22 GpuElemwise "
                "GpuElemwise GpuElemwise GpuFromHost GpuFromHost GpuFromHost GpuFromHost HostFromGpu HostFromGpu"});
        // the dropout mask's only client is a GpuFromHost: the backward pass lifts it
        QCOMPARE(events(tc, "gpuarray_backward"),
                 QStringList{"backward_local_gpua_alloc: Alloc GpuFromHost -> GpuAlloc GpuFromHost"});
        // column_sums (a Dot of a vector, no lifter) read x through HostFromGpu(GpuFromHost(x))
        QCOMPARE(events(tc, "gpuarray_cut_transfers"), QStringList{"local_cut_gpu_transfers: HostFromGpu -> "});
        QCOMPARE(kinds(*cleanup.graph), QString("GpuFromHost GpuFromHost GpuDot22 GpuFromHost GpuDimShuffle GpuAlloc "
                                                "GpuElemwise HostFromGpu Alloc Dot Elemwise"));
        const Apply* columnSums = nullptr;
        for (const Apply* n : cleanup.graph->toposort())
            if (n->op().kind() == "Dot") columnSums = n;
        QVERIFY(columnSums);
        QCOMPARE(columnSums->input(0)->owner()->op().kind(), std::string("Alloc"));
        QVERIFY(!columnSums->input(1)->owner()); // x itself, the transfer pair cut
        // the inspector's lift reason is GraphToGpu's, given for its host clone of the Dot
        auto reasonOf = [](const Trace& t, const std::string& op) {
            for (const LiftingEntry& l : t.lifting())
                if (l.op == op && !l.lifted) return QString::fromStdString(l.reason);
            return QString();
        };
        QCOMPARE(reasonOf(tc, "Dot"),
                 QString("Dot of a vector: no GPU lifter (Theano's BlasOpt turns it into Gemv first)"));
        QCOMPARE(reasonOf(tc, "Alloc"), QString("no input on the GPU"));
        // theano: the Alloc special case moves both Allocs in GraphToGpu, `ones` on a wrong guess
        // (its client Dot has a lifter but stays on the host): one GpuAlloc and transfer more
        QCOMPARE(events(tt, "gpuarray_graph_optimization"),
                 QStringList{"GraphToGPU: Alloc Alloc DimShuffle Dot Dot Elemwise Elemwise Elemwise Elemwise -> Dot "
                             "Elemwise GpuAlloc GpuAlloc "
                             "GpuDimShuffle GpuDot22 GpuElemwise GpuElemwise GpuElemwise GpuFromHost GpuFromHost "
                             "GpuFromHost GpuFromHost "
                             "GpuFromHost HostFromGpu HostFromGpu HostFromGpu"});
        QVERIFY(events(tt, "gpuarray_backward").isEmpty());
        QVERIFY(!tt.phases().empty());
        for (const PhaseRecord& ph : tt.phases()) QVERIFY(ph.info.name != "gpuarray_backward");
        QCOMPARE(events(tt, "gpuarray_cut_transfers"), QStringList{"local_cut_gpu_transfers: HostFromGpu -> "});
        QCOMPARE(kinds(*theano.graph), QString("GpuFromHost GpuFromHost GpuDot22 GpuFromHost GpuDimShuffle GpuAlloc "
                                               "GpuElemwise HostFromGpu GpuAlloc HostFromGpu Dot Elemwise"));
        QCOMPARE(theano.graph->opCounts().at("HostFromGpu"), cleanup.graph->opCounts().at("HostFromGpu") + 1);
        QCOMPARE(reasonOf(tt, "Dot"),
                 QString("Dot of a vector: no GPU lifter (Theano's BlasOpt turns it into Gemv first)"));
        QVERIFY(reasonOf(tt, "Alloc").isEmpty()); // both Allocs on the GPU
    }

    void lstmStaysOnHostWithTransfers() {
        LoadedGraph lg = loadGraphFile(kCorpus + "/lstm.onnx");
        Pipeline p = Pipeline::builtin("theano");
        Trace t;
        const PipelineRun run = p.run(*lg.graph, &t, true);
        t.finish(run, *lg.graph, p.buildContext().caps);
        const Apply* lstm = nullptr;
        for (const Apply* n : lg.graph->toposort())
            if (n->op().kind() == "OnnxLSTM") lstm = n;
        QVERIFY(lstm);
        QCOMPARE(lstm->input(0)->owner()->op().kind(), std::string("HostFromGpu")); // the transfer before it
        bool reason = false;
        for (const auto& l : t.lifting())
            reason |= l.node == lstm->id() && !l.lifted && l.reason == "no GPU lifter for OnnxLSTM";
        QVERIFY(reason);
    }
};

QTEST_GUILESS_MAIN(TestGpu)
#include "tst_gpu.moc"
