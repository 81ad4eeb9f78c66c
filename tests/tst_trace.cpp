// Recording: every corpus model optimizes under every pipeline with validation after each phase,
// and rebuilding from the recorded events reproduces each phase's graph (same fingerprint), also
// after saving and reopening the session file.
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/pipeline/PhaseCheck.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/ExecutionProfile.h>
#include <passlens/trace/Trace.h>

#include <passlens/io/AtomicFile.h>
#include <passlens/io/Failure.h>
#include <passlens/io/SessionFile.h>
#include <passlens/ir/OpRegistry.h>

#include "../bench/BenchGraphs.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <stdexcept>
#include <fstream>
#include <cstdlib>
#include <cstring>
#include <new>

#include <malloc.h>
#include <zlib.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace passlens;

namespace {
const std::string kCorpus = PASSLENS_CORPUS_DIR;
const std::string kSource = PASSLENS_SOURCE_DIR;

// Captures the fingerprint of the graph at the end of every phase.
struct PhaseFingerprints final : Instrumentation {
    std::vector<std::pair<std::string, std::uint64_t>> after;
    // Runs `pipeline` on `g` recording into `trace` and this.
    PipelineRun run(const std::string& pipeline, FunctionGraph& g, Trace& trace) {
        Pipeline p = Pipeline::builtin(pipeline);
        InstrumentationList both;
        both.add(&trace);
        both.add(this);
        const PipelineRun r = p.run(g, &both);
        trace.finish(r, g, p.buildContext().caps);
        return r;
    }
    // Every phase's graph rebuilt from `t` has the fingerprint recorded live.
    void expectPhases(const Trace& t) const {
        QCOMPARE(t.phases().size(), after.size());
        for (std::size_t i = 0; i < after.size(); ++i) {
            QCOMPARE(t.phases()[i].info.name, after[i].first);
            QVERIFY2(t.graphAfter(t.lastEventOfPhase(i))->fingerprint() == after[i].second, after[i].first.c_str());
        }
    }
    void phaseEnd(const PhaseInfo& p, const FunctionGraph& g, bool, double) override {
        after.push_back({p.name, g.fingerprint()});
    }
};

// The first difference between two graphs, beyond their fingerprints: ids handed out, every
// node and variable ever created (removed ones too: the inspector shows them), their inputs,
// outputs, names, ops and types, each variable's uses in order, the topological order, the
// graph's inputs and outputs. Empty when they are the same.
std::string firstDifference(const FunctionGraph& a, const FunctionGraph& b) {
    if (a.fingerprint() != b.fingerprint()) return "fingerprints differ";
    if (a.nodeIdLimit() != b.nodeIdLimit() || a.varIdLimit() != b.varIdLimit())
        return "id limits " + std::to_string(a.nodeIdLimit()) + "/" + std::to_string(a.varIdLimit()) + " vs " +
               std::to_string(b.nodeIdLimit()) + "/" + std::to_string(b.varIdLimit());
    const auto ids = [](const std::vector<Variable*>& vs) {
        std::vector<VarId> out;
        for (const Variable* v : vs) out.push_back(v->id());
        return out;
    };
    if (ids(a.inputs()) != ids(b.inputs()) || ids(a.outputs()) != ids(b.outputs())) return "graph inputs or outputs";
    const auto& ta = a.toposort();
    const auto& tb = b.toposort();
    if (ta.size() != tb.size()) return "node counts " + std::to_string(ta.size()) + " vs " + std::to_string(tb.size());
    for (std::size_t i = 0; i < ta.size(); ++i)
        if (ta[i]->id() != tb[i]->id() || ta[i]->op().str() != tb[i]->op().str())
            return "toposort[" + std::to_string(i) + "]: #" + std::to_string(ta[i]->id()) + " " + ta[i]->op().str() +
                   " vs #" + std::to_string(tb[i]->id()) + " " + tb[i]->op().str();
    for (NodeId id = 0; id < a.nodeIdLimit(); ++id) {
        const Apply* x = a.node(id);
        const Apply* y = b.node(id);
        const std::string where = "node #" + std::to_string(id) + ": ";
        if (!x || !y) {
            if (x || y) return where + "exists in one graph only";
            continue;
        }
        if (x->inGraph() != y->inGraph() || x->op().str() != y->op().str() || x->name() != y->name() ||
            ids(x->inputs()) != ids(y->inputs()) || ids(x->outputs()) != ids(y->outputs()) || !(x->tag == y->tag))
            return where + "differs";
    }
    for (VarId id = 0; id < a.varIdLimit(); ++id) {
        const Variable* x = a.variable(id);
        const Variable* y = b.variable(id);
        const std::string where = "variable " + std::to_string(id) + ": ";
        if (!x || !y) {
            if (x || y) return where + "exists in one graph only";
            continue;
        }
        if (x->type().str() != y->type().str() || x->name() != y->name() || x->isConstant() != y->isConstant() ||
            (x->owner() ? x->owner()->id() : -1) != (y->owner() ? y->owner()->id() : -1))
            return where + "differs";
        std::vector<std::pair<NodeId, int>> ux, uy;
        for (const Client& c : x->clients()) ux.push_back({c.node ? c.node->id() : -1, c.index});
        for (const Client& c : y->clients()) uy.push_back({c.node ? c.node->id() : -1, c.index});
        if (ux != uy) return where + "uses differ";
    }
    return {};
}

// Fault injection: while g_limited, operator new fails (calling the new-handler as the
// standard one does) once the bytes it handed out and not yet freed would pass g_budget.
std::atomic<bool> g_limited{false};
std::atomic<long> g_live{0};
std::atomic<long> g_budget{0};
} // namespace

void* operator new(std::size_t n) {
    for (;;) {
        if (!g_limited || g_live + static_cast<long>(n) <= g_budget) {
            if (void* p = std::malloc(n ? n : 1)) {
                if (g_limited) g_live += static_cast<long>(malloc_usable_size(p));
                return p;
            }
        }
        std::new_handler h = std::get_new_handler();
        if (!h) throw std::bad_alloc();
        h();
    }
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void operator delete(void* p) noexcept {
    if (p && g_limited) g_live -= static_cast<long>(malloc_usable_size(p));
    std::free(p);
}
void operator delete[](void* p) noexcept { ::operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { ::operator delete(p); }
// The nothrow forms too, as libstdc++ defines them: through the replaced operator new. Without
// them AddressSanitizer's own nothrow new (std::stable_sort's temporary buffer, MemoryReserve)
// handed memory to the free() above (alloc-dealloc-mismatch).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return ::operator new(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return ::operator new(n, t); }
void operator delete(void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { ::operator delete(p); }

class TestTrace : public QObject {
    Q_OBJECT
private slots:
    void corpusReplay_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("pipeline");
        for (const char* m : {"mlp", "lstm", "shape_ops", "transformer_encoder_layer", "squeezenet1_1", "mobilenet_v2",
                              "resnet18", "ch_PP-OCRv4_det_infer", "silero_vad_legacy"})
            for (const char* p : {"theano", "cleanup", "legacy", "fast_compile"})
                QTest::newRow(qPrintable(QString("%1/%2").arg(m, p))) << QString(m) << QString(p);
    }
    void corpusReplay() {
        QFETCH(QString, model);
        QFETCH(QString, pipeline);
        LoadedGraph lg = loadGraphFile(kCorpus + "/" + model.toStdString() + ".onnx");
        const std::uint64_t source = lg.graph->fingerprint();
        Pipeline p = Pipeline::builtin(pipeline.toStdString());
        Trace trace;
        PhaseFingerprints fps;
        InstrumentationList both;
        both.add(&trace);
        both.add(&fps);
        const PipelineRun run = p.run(*lg.graph, &both, /*validate=*/true);
        trace.finish(run, *lg.graph, p.buildContext().caps);
        QVERIFY2(run.messages.empty(), run.messages.empty() ? "" : run.messages[0].c_str());
        QCOMPARE(fps.after.size(), p.phases().size());
        QCOMPARE(trace.graphAfter(0)->fingerprint(), source);
        for (const auto& [phase, fp] : fps.after)
            QVERIFY2(trace.graphAfterPhase(phase)->fingerprint() == fp, phase.c_str());
        QCOMPARE(trace.graphAfterPhase("final")->fingerprint(), lg.graph->fingerprint());
        // provenance: every node of the final graph was created by a recorded event or is from the source
        for (const Apply* n : lg.graph->toposort()) {
            const int by = trace.createdBy(n->id());
            QVERIFY(by >= 0 && by <= static_cast<int>(trace.events().size()));
            if (by) QVERIFY(trace.events()[static_cast<std::size_t>(by - 1)].status == EventStatus::Applied);
        }
    }

    // A step's graph continued from a kept step (Trace::graphAfter(seq, base, baseSeq), what the
    // window's step graphs do) is the full replay's: for every applied event of corpus models
    // and a generated block graph, the graph continued from the step before, and the one
    // continued from a checkpoint every 16 events, equal the graph replayed from the source
    // (firstDifference: ids, removed nodes, uses in order, topological order).
    void stepFromKeptGraph_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("pipeline");
        for (const char* m : {"resnet18", "lstm", "mobilenet_v2", "ch_PP-OCRv4_det_infer"})
            QTest::newRow(qPrintable(QString("%1/theano").arg(m))) << QString(m) << QString("theano");
        QTest::newRow("lstm/cleanup") << QString("lstm") << QString("cleanup");
        QTest::newRow("blocks-459/theano") << QString("blocks") << QString("theano");
    }
    void stepFromKeptGraph() {
        QFETCH(QString, model);
        QFETCH(QString, pipeline);
        std::unique_ptr<FunctionGraph> g = model == "blocks"
                                               ? bench::blockGraph(459)
                                               : loadGraphFile(kCorpus + "/" + model.toStdString() + ".onnx").graph;
        Pipeline p = Pipeline::builtin(pipeline.toStdString());
        Trace trace;
        trace.finish(p.run(*g, &trace), *g, p.buildContext().caps);
        std::vector<int> applied;
        for (const RewriteEvent& e : trace.events())
            if (e.status == EventStatus::Applied) applied.push_back(e.seq);
        QVERIFY2(applied.size() >= 10, qPrintable(QString::number(applied.size()))); // a real walk
        std::unique_ptr<FunctionGraph> previous = trace.graphAfter(0), checkpoint = trace.graphAfter(0);
        int previousSeq = 0, checkpointSeq = 0;
        for (std::size_t k = 0; k < applied.size(); ++k) {
            const int seq = applied[k];
            const auto full = trace.graphAfter(seq);
            auto stepped = trace.graphAfter(seq, *previous, previousSeq);
            const std::string d1 = firstDifference(*full, *stepped);
            QVERIFY2(d1.empty(),
                     qPrintable(QString("after event %1, from %2: %3").arg(seq).arg(previousSeq).arg(d1.c_str())));
            const auto jumped = trace.graphAfter(seq, *checkpoint, checkpointSeq);
            const std::string d2 = firstDifference(*full, *jumped);
            QVERIFY2(d2.empty(),
                     qPrintable(QString("after event %1, from %2: %3").arg(seq).arg(checkpointSeq).arg(d2.c_str())));
            previous = std::move(stepped);
            previousSeq = seq;
            if (k % 16 == 15) {
                checkpoint = previous->copyWithHistory();
                checkpointSeq = seq;
            }
        }
        QCOMPARE(previous->fingerprint(), g->fingerprint()); // the pipeline's own final graph
        // a base after the step asked for is refused, with both events named
        try {
            trace.graphAfter(applied.front(), *previous, previousSeq);
            QFAIL("continued backwards");
        } catch (const Error& e) {
            const QString m = e.what();
            QVERIFY2(m.contains(QString("the graph after event %1 cannot continue from the one after event %2")
                                    .arg(applied.front())
                                    .arg(previousSeq)),
                     e.what());
        }
    }

    // A session PassLens wrote always replays: for every corpus model and built-in pipeline,
    // the graph after each phase rebuilt from the saved file has the recorded fingerprint.
    void corpusSessionReplay_data() { corpusReplay_data(); }
    void corpusSessionReplay() {
        QFETCH(QString, model);
        QFETCH(QString, pipeline);
        const std::string file = kCorpus + "/" + model.toStdString() + ".onnx";
        LoadedGraph lg = loadGraphFile(file);
        Pipeline p = Pipeline::builtin(pipeline.toStdString());
        Trace trace;
        PhaseFingerprints fps;
        InstrumentationList both;
        both.add(&trace);
        both.add(&fps);
        const PipelineRun run = p.run(*lg.graph, &both);
        trace.finish(run, *lg.graph, p.buildContext().caps);
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/s.passlens.json";
        trace.save(path, file);
        const Trace back = Trace::load(path);
        QCOMPARE(back.events().size(), trace.events().size());
        QCOMPARE(back.phases().size(), fps.after.size());
        QCOMPARE(back.graphAfter(0)->fingerprint(), trace.graphAfter(0)->fingerprint());
        // one replay, compared at each phase's last event
        for (std::size_t i = 0; i < fps.after.size(); ++i) {
            QCOMPARE(back.phases()[i].info.name, fps.after[i].first);
            QVERIFY2(back.graphAfter(back.lastEventOfPhase(i))->fingerprint() == fps.after[i].second,
                     fps.after[i].first.c_str());
        }
        QCOMPARE(back.graphAfterPhase("final")->fingerprint(), lg.graph->fingerprint());
    }

    // Saving a session when memory runs out ends in a message, never in std::terminate (an
    // allocation failing in nlohmann::json's destructor while unwinding): each child process
    // saves with an allocation budget a little larger than the last, until the save succeeds.
    void saveUnderMemoryPressure() {
        LoadedGraph lg = loadGraphFile(kCorpus + "/transformer_encoder_layer.onnx");
        Pipeline p = Pipeline::builtin("theano");
        Trace trace;
        const PipelineRun run = p.run(*lg.graph, &trace);
        trace.finish(run, *lg.graph, p.buildContext().caps);
        QTemporaryDir dir;
        const std::filesystem::path path = dir.path().toStdString() + "/s.passlens.json";
        int outOfMemory = 0, saved = 0;
        for (long budget = 0; budget <= (64l << 20) && !saved; budget += 16 << 10) {
            const pid_t child = ::fork();
            if (child == 0) {
                const MemoryReserve reserve(std::size_t(4) << 20); // as the CLI's main holds one (64 MiB)
                g_budget = budget;
                g_live = 0;
                g_limited = true;
                try {
                    trace.save(path, "transformer_encoder_layer.onnx");
                } catch (...) {
                    g_limited = false;
                    const std::string m = currentExceptionMessage("save s.passlens.json");
                    ::_exit(m == "save s.passlens.json: out of memory (the input needs more memory than this process "
                                 "may use)"
                                ? 3
                                : 4);
                }
                ::_exit(0);
            }
            int status = 0;
            QCOMPARE(::waitpid(child, &status, 0), child);
            QVERIFY2(
                WIFEXITED(status),
                qPrintable(QString("budget %1 bytes: the child died of signal %2").arg(budget).arg(WTERMSIG(status))));
            QVERIFY2(WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3,
                     qPrintable(QString("budget %1: exit %2").arg(budget).arg(WEXITSTATUS(status))));
            if (WEXITSTATUS(status) == 3) {
                ++outOfMemory;
                QVERIFY(!std::filesystem::exists(path)); // nothing half-written
            } else {
                ++saved;
            }
        }
        QVERIFY(outOfMemory > 10);
        QCOMPARE(saved, 1);
        QCOMPARE(Trace::load(path).events().size(), trace.events().size());
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList({"s.passlens.json"}));
    }

    // The one "open a file and run a pipeline" use case (pipeline/OpenAndOptimize.h): a model is
    // loaded and optimized as a direct Pipeline run would; its session reopens as recorded (the
    // requested pipeline ignored with a warning, the window's "view" handed back); bad input and
    // bad pipeline names give the messages the CLI and the window show.
    void openAndOptimizeUseCase() {
        const std::string model = kCorpus + "/mlp.onnx";
        LoadedGraph lg = loadGraphFile(model);
        Pipeline direct = Pipeline::builtin("cleanup");
        direct.setEnabled("merge1", false);
        Trace directTrace;
        const PipelineRun directRun = direct.run(*lg.graph, &directTrace);
        QVERIFY(!isPipelineFile("cleanup"));
        QVERIFY(isPipelineFile("fast.pipeline.json"));
        QVERIFY(isPipelineFile("pipelines/fast"));

        PipelineRequest request;
        request.pipeline = "cleanup";
        request.disabled = {"merge1"};
        // the loaded source is handed out before the pipeline runs (the window draws it meanwhile)
        int sourceCalls = 0;
        std::uint64_t sourcePrint = 0;
        const auto sourceLoaded = [&](const FunctionGraph& g) {
            ++sourceCalls;
            sourcePrint = g.fingerprint();
        };
        OpenedTrace opened = openAndOptimize(model, request, false, sourceLoaded);
        QCOMPARE(sourceCalls, 1);
        QCOMPARE(sourcePrint, loadGraphFile(model).graph->fingerprint());
        QVERIFY(!opened.fromSession && opened.run && opened.finalGraph);
        QCOMPARE(opened.pipeline, std::string("cleanup"));
        QCOMPARE(opened.sourcePath, model);
        QVERIFY(opened.view.is_null());
        QCOMPARE(opened.finalGraph->fingerprint(), lg.graph->fingerprint());
        QCOMPARE(opened.run->phases.size(), directRun.phases.size());
        for (const PhaseRun& ph : opened.run->phases) QVERIFY(ph.info.name != "merge1");
        QCOMPARE(opened.trace->events().size(), directTrace.events().size());
        QCOMPARE(opened.trace->phases().size(), directRun.phases.size());

        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/u.passlens.json";
        nlohmann::json doc = opened.trace->toSessionJson(model);
        doc["view"] = {{"step", 3}};
        {
            std::ofstream out(path);
            out << Trace::dumpSession(doc);
        }
        request.pipeline = "theano";
        const OpenedTrace back = openAndOptimize(path, request, /*pipelineGiven=*/true, sourceLoaded);
        QCOMPARE(sourceCalls, 1); // a session runs no pipeline: nothing to show first
        QVERIFY(back.fromSession && !back.run && !back.finalGraph);
        QCOMPARE(back.pipeline, std::string("cleanup"));
        QCOMPARE(back.sourcePath, model);
        QCOMPARE(back.view.value("step", -1), 3);
        QCOMPARE(back.warnings.size(), std::size_t(1));
        QCOMPARE(back.warnings[0], path + ": a session holds its pipeline ('cleanup'); --pipeline theano ignored");
        QCOMPARE(back.trace->graphAfterPhase("final")->fingerprint(), lg.graph->fingerprint());

        auto failure = [](const std::string& file, const std::string& pipeline) {
            PipelineRequest r;
            r.pipeline = pipeline;
            try {
                openAndOptimize(file, r);
            } catch (const Error& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        QCOMPARE(failure(dir.path().toStdString() + "/none.onnx", "theano"),
                 dir.path().toStdString() + "/none.onnx: no such file");
        QCOMPARE(failure(model, "fastest"),
                 std::string("unknown pipeline 'fastest' (built-in: theano, cleanup, legacy, fast_compile, none)"));
        QCOMPARE(failure(model, dir.path().toStdString() + "/missing.pipeline.json"),
                 dir.path().toStdString() + "/missing.pipeline.json: no such file");
    }

    // The first-divergent-phase check (pipeline/PhaseCheck.h) of `run --check` and the window:
    // the phases that changed the graph, in run order, up to the phase asked for; the first one
    // beyond the tolerance, or whose graph cannot run, is the first divergent phase.
    void firstDivergentPhaseCheck() {
        const OptimizedGraph o = optimizeGraph(loadGraphFile(kCorpus + "/mlp.onnx").graph, PipelineRequest{});
        const Trace& trace = *o.trace;
        std::vector<std::string> changed;
        for (const PhaseRecord& pr : trace.phases())
            if (pr.changed) changed.push_back(pr.info.name);
        QVERIFY(changed.size() >= 3);
        QVERIFY(changed.size() < trace.phases().size()); // some phase changed nothing
        const std::vector<CheckedPhase> all = phasesToCheck(trace);
        QCOMPARE(all.size(), changed.size());
        for (std::size_t i = 0; i < all.size(); ++i) {
            QCOMPARE(all[i].name, changed[i]);
            QCOMPARE(trace.phases()[all[i].index].info.name, changed[i]);
            QCOMPARE(all[i].graph()->fingerprint(), trace.graphAfterPhase(changed[i])->fingerprint());
        }
        QCOMPARE(phasesToCheck(trace, changed[1]).size(), std::size_t(2));
        // the second phase diverges (max_rel 0.5), the third has another output shape
        int calls = 0;
        const PhaseCheckResult r = checkPhases(
            all,
            [&](const FunctionGraph&) {
                ++calls;
                return calls == 2 ? OutputsDiff{1.0, 0.5, true} : OutputsDiff{0.0, 1e-6, calls != 3};
            },
            kCheckTolerance, "run mlp.onnx");
        QCOMPARE(calls, static_cast<int>(all.size()));
        QCOMPARE(r.firstDivergent, changed[1]);
        QVERIFY(!r.phases[0].diverges && !r.phases[0].first);
        QVERIFY(r.phases[1].diverges && r.phases[1].first);
        QVERIFY(r.phases[2].diverges && !r.phases[2].first);
        QCOMPARE(r.phases[1].diff->maxRel, 0.5);
        // a graph that cannot run diverges, with the message and its place
        const PhaseCheckResult f = checkPhases(
            all, [](const FunctionGraph&) -> OutputsDiff { throw std::runtime_error("no kernel for OnnxFoo"); },
            kCheckTolerance, "run mlp.onnx");
        QCOMPARE(f.firstDivergent, changed[0]);
        QVERIFY(!f.phases[0].diff);
        QCOMPARE(f.phases[0].error, "run mlp.onnx --phase " + changed[0] + ": no kernel for OnnxFoo");
        const PhaseCheckResult ok = checkPhases(
            all, [](const FunctionGraph&) { return OutputsDiff{}; }, kCheckTolerance, "run mlp.onnx");
        QVERIFY(ok.firstDivergent.empty());
    }

    // A JSON session (FORMAT.md §2, version 1) written by the previous release's passlens-cli
    // (`optimize shape_ops.onnx --pipeline theano --session`) reopens: every phase rebuilds to
    // the fingerprint of a live run; saved again it is a compact session that does the same.
    void oldJsonSessionReads() {
        const std::string fixture = kSource + "/tests/fixtures/session/shape_ops_theano_v1.passlens.json";
        QVERIFY(readFile(fixture).starts_with("{\"format\":\"passlens.session\",\"version\":1,"));
        LoadedGraph lg = loadGraphFile(kCorpus + "/shape_ops.onnx");
        Trace live;
        PhaseFingerprints fps;
        fps.run("theano", *lg.graph, live);
        const Trace old = Trace::load(fixture);
        QCOMPARE(old.pipelineName(), std::string("theano"));
        QCOMPARE(old.events().size(), live.events().size());
        QCOMPARE(old.sourcePath(), std::string("/work/shared/corpus/onnx/shape_ops.onnx"));
        fps.expectPhases(old);
        QCOMPARE(old.graphAfterPhase("final")->fingerprint(), lg.graph->fingerprint());
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/s.passlens";
        old.save(path, "");
        QVERIFY(readFile(path).starts_with(SessionFile::kCompactMagic));
        const Trace back = Trace::load(path);
        QCOMPARE(back.events().size(), old.events().size());
        fps.expectPhases(back);
        for (std::size_t i = 0; i < back.events().size(); ++i) {
            const RewriteEvent& a = back.events()[i];
            const RewriteEvent& b = old.events()[i];
            QCOMPARE(a.rewriter, b.rewriter);
            QCOMPARE(statusName(a.status), statusName(b.status));
            QCOMPARE(a.added, b.added);
            QCOMPARE(a.removed, b.removed);
            QCOMPARE(a.replaced, b.replaced);
            QCOMPARE(a.timeUs, b.timeUs);
        }
        // the JSON writer is still there on request, and its file reads back the same
        const std::string jsonPath = dir.path().toStdString() + "/s.passlens.json";
        SessionFile::save(back, jsonPath, "", nlohmann::json::array(), {{"step", 4}}, SessionFile::Format::Json);
        const Trace again = Trace::load(jsonPath);
        fps.expectPhases(again);
        QCOMPARE(again.view().value("step", -1), 4);
    }

    // Constants are stored once by content: on a graph whose blocks share `zero` and `c64`,
    // constant folding introduces equal constants in many events; reopened, equal contents share
    // one TensorData, and every phase rebuilds to the live fingerprint.
    void compactSessionStoresConstantsOnce() {
        using json = nlohmann::json;
        FunctionGraph g;
        Variable* h = g.addInput(Type::parse("float32[8,8]"), "x");
        Variable* w = g.addInput(Type::parse("float32[8,8]"), "w");
        Variable* zero = g.addConstant(TensorData::fromDoubles(DType::Float32, {}, {0.0}), "zero");
        Variable* c8 = g.addConstant(TensorData::fromInts(DType::Int64, {}, {8}), "c8");
        for (int i = 0; i < 6; ++i) {
            Variable* d = g.apply(Op::get("Dot"), {h, w});
            Variable* e = g.apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {d});
            Variable* s = g.apply(Op::get("Shape_i", {{"i", 0}}), {e});
            Variable* a = g.apply(Op::get("Alloc"), {zero, s, c8});
            Variable* j = g.apply(Op::get("Join", {{"axis", 0}}), {e, a});
            Variable* sub = g.apply(Op::get("Subtensor", {{"idx", {json{{"stop", 8}}}}}), {j});
            h = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {sub, e});
        }
        g.setOutputs({h});
        Trace live;
        PhaseFingerprints fps;
        fps.run("theano", g, live);
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/blocks.passlens";
        live.save(path, "");
        const Trace back = Trace::load(path);
        fps.expectPhases(back);
        QCOMPARE(back.graphAfterPhase("final")->fingerprint(), g.fingerprint());
        std::map<std::uint64_t, std::set<const TensorData*>> byContent;
        std::size_t recorded = 0;
        for (const RewriteEvent& e : back.events())
            for (const ConstantDef& c : e.constants) {
                byContent[c.data->contentHash()].insert(c.data.get());
                ++recorded;
            }
        QVERIFY2(recorded >= 6, qPrintable(QString::number(recorded))); // one folded transfer per block at least
        QVERIFY(byContent.size() < recorded);
        for (const auto& [hash, datas] : byContent) QCOMPARE(datas.size(), std::size_t(1));
    }

    // Event statuses by the names session files write; a JSON session with another name is
    // refused, naming the event and the field.
    void eventStatusNames() {
        for (EventStatus s : {EventStatus::Applied, EventStatus::Rejected, EventStatus::Declined})
            QVERIFY(parseStatus(statusName(s)) == s);
        QCOMPARE(std::string(statusName(EventStatus::Declined)), std::string("declined"));
        QVERIFY(!parseStatus("Applied"));
        QVERIFY(!parseStatus(""));
        LoadedGraph lg = loadGraphFile(kCorpus + "/shape_ops.onnx");
        Trace live;
        PhaseFingerprints fps;
        fps.run("theano", *lg.graph, live);
        nlohmann::json doc = SessionFile::toJson(live, "shape_ops.onnx");
        QVERIFY(!doc.at("events").empty());
        QCOMPARE(doc["events"][0]["status"].get<std::string>(), std::string("applied"));
        doc["events"][0]["status"] = "done";
        try {
            SessionFile::fromJson(doc, "s.json", ".");
            QFAIL("a status named done was accepted");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("events[0].status") != std::string::npos &&
                         what.find("must be applied, rejected or declined") != std::string::npos,
                     e.what());
        }
    }

    // A truncated or corrupt compact session gives a message naming the file, the place and the
    // reason, never a crash or a half-loaded trace.
    void compactSessionCorrupt() {
        LoadedGraph lg = loadGraphFile(kCorpus + "/lstm.onnx");
        Trace live;
        PhaseFingerprints fps;
        fps.run("theano", *lg.graph, live);
        const std::string good = SessionFile::toCompact(live, "");
        auto loadError = [](const std::string& bytes) {
            try {
                SessionFile::read(bytes, "t.passlens", ".");
            } catch (const Error& e) {
                return std::string(e.what());
            }
            return std::string("loaded");
        };
        QCOMPARE(loadError(good), std::string("loaded"));
        QCOMPARE(loadError(good.substr(0, 20)),
                 std::string("t.passlens: header: truncated: the file has 20 bytes, the header 36"));
        QCOMPARE(loadError(good.substr(0, good.size() - 10)),
                 "t.passlens: header: the header announces " + std::to_string(good.size() - 36) +
                     " compressed bytes, the file has " + std::to_string(good.size() - 46) + " (truncated)");
        std::string version = good;
        version[17] = 9;
        QCOMPARE(loadError(version),
                 std::string("t.passlens: header: unsupported session version 9 (this build reads 1 and 2)"));
        std::string huge = good;
        for (int i = 20; i < 28; ++i) huge[static_cast<std::size_t>(i)] = '\x7f'; // a body of ~9e18 bytes
        QVERIFY2(loadError(huge).ends_with("more than its compressed size can hold"), loadError(huge).c_str());
        std::string flipped = good;
        flipped[good.size() / 2] = static_cast<char>(flipped[good.size() / 2] ^ 0x55);
        QVERIFY2(loadError(flipped).starts_with("t.passlens: byte 36: corrupt compressed data"),
                 loadError(flipped).c_str());
        // a body cut short, recompressed with a valid header: the place where the data ended
        std::uint64_t announced = 0;
        std::memcpy(&announced, good.data() + 20, sizeof announced); // the header's body size
        std::string body(static_cast<std::size_t>(announced), '\0');
        uLongf bodySize = static_cast<uLongf>(body.size());
        QCOMPARE(uncompress(reinterpret_cast<Bytef*>(body.data()), &bodySize,
                            reinterpret_cast<const Bytef*>(good.data() + 36), static_cast<uLong>(good.size() - 36)),
                 Z_OK);
        auto withBody = [&](const std::string& b) {
            uLongf n = compressBound(static_cast<uLong>(b.size()));
            std::string packed(n, '\0');
            compress(reinterpret_cast<Bytef*>(packed.data()), &n, reinterpret_cast<const Bytef*>(b.data()),
                     static_cast<uLong>(b.size()));
            packed.resize(n);
            std::string file = good.substr(0, 20);
            for (std::uint64_t v : {std::uint64_t(b.size()), std::uint64_t(packed.size())})
                for (int i = 0; i < 8; ++i) file += static_cast<char>((v >> (8 * i)) & 0xff);
            return file + packed;
        };
        QCOMPARE(loadError(withBody(body)), std::string("loaded"));
        const std::string cutShort = loadError(withBody(body.substr(0, body.size() - 3)));
        QVERIFY2(cutShort.starts_with("t.passlens: events[") &&
                     (cutShort.ends_with("unexpected end of data") || cutShort.ends_with("bytes left can hold") ||
                      cutShort.ends_with("runs past the end of the data")),
                 cutShort.c_str());
        for (std::size_t cut = 1; cut < 16; ++cut) { // cuts anywhere: always a message with the file's name
            const std::string m = loadError(withBody(body.substr(0, body.size() * cut / 16)));
            QVERIFY2(m.starts_with("t.passlens: ") && m != "loaded", m.c_str());
        }
        QCOMPARE(loadError(withBody(body + "xyz")), std::string("t.passlens: end: 3 bytes after the last event"));
        std::string badName = body; // the graph's name made ill-formed UTF-8, which JSON output refuses
        const std::size_t name = badName.rfind("torch_jit");
        QVERIFY(name != std::string::npos);
        badName[name] = '\xff';
        QCOMPARE(loadError(withBody(badName)),
                 std::string("t.passlens: graph: text that is not valid UTF-8: '\\xFForch_jit'"));
        // a saved file that fails to load leaves nothing behind; the error names the path
        QTemporaryDir dir;
        const std::string path = dir.path().toStdString() + "/cut.passlens";
        writeFileAtomic(path, good.substr(0, good.size() / 2));
        try {
            loadGraphFile(path);
            QFAIL("a truncated session loaded");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).starts_with(path + ": header: the header announces "), e.what());
        }
    }

    void sessionRoundTrip() {
        QTemporaryDir dir;
        const std::string model = kCorpus + "/transformer_encoder_layer.onnx";
        LoadedGraph lg = loadGraphFile(model);
        Pipeline p = Pipeline::builtin("cleanup");
        Trace trace(/*recordDeclined=*/true);
        const PipelineRun run = p.run(*lg.graph, &trace);
        trace.finish(run, *lg.graph, p.buildContext().caps);
        const std::string path = dir.path().toStdString() + "/t.passlens.json";
        trace.save(path, model);
        Trace back = Trace::load(path);
        QCOMPARE(back.events().size(), trace.events().size());
        QCOMPARE(back.phases().size(), trace.phases().size());
        QCOMPARE(back.pipelineName(), std::string("cleanup"));
        QCOMPARE(back.graphAfterPhase("final")->fingerprint(), lg.graph->fingerprint());
        for (std::size_t i = 0; i < trace.phases().size(); ++i)
            QCOMPARE(back.graphAfter(back.lastEventOfPhase(i))->fingerprint(),
                     trace.graphAfter(trace.lastEventOfPhase(i))->fingerprint());
        int declined = 0;
        for (const auto& e : back.events()) declined += e.status == EventStatus::Declined;
        QVERIFY(declined > 0); // --reasons keeps declined attempts with their reasons
        std::size_t onHost = 0;
        for (const auto& l : trace.lifting()) onHost += !l.lifted;
        QCOMPARE(back.lifting().size(), onHost); // the session keeps the nodes left on the host, with reasons
        QVERIFY(onHost > 0);
        // the session is also a FILE for loadGraphFile (its source graph)
        LoadedGraph again = loadGraphFile(path);
        QCOMPARE(again.format, std::string("session"));
        QCOMPARE(again.graph->fingerprint(), back.graphAfter(0)->fingerprint());
        // a corrupt event is reported, not crashed on
        nlohmann::json doc = back.toSessionJson(model);
        doc["events"][0]["replaced"] = nlohmann::json::array({nlohmann::json::array({999999, 1})});
        Trace bad = Trace::fromSessionJson(doc, "bad.passlens.json", ".");
        const QString err = [&] {
            try {
                bad.graphAfter(1);
            } catch (const Error& e) {
                return QString::fromStdString(e.what());
            }
            return QString();
        }();
        QVERIFY2(err.startsWith("bad.passlens.json: events[0] (") &&
                     err.contains("cannot replay: replaces unknown variable 999999"),
                 qPrintable(err));
        // createdBy / removedBy: the file's ids read as the recording's; an id far beyond the
        // graph's (a corrupt file) or a negative one is still answered, without a flat index
        // that large
        for (NodeId id = 0; id < lg.graph->nodeIdLimit(); ++id) {
            QCOMPARE(back.createdBy(id), trace.createdBy(id));
            QCOMPARE(back.removedBy(id), trace.removedBy(id));
        }
        nlohmann::json far = doc;
        far["events"][0]["added"] = nlohmann::json::array({1000000000000LL});
        far["events"][0]["removed"] = nlohmann::json::array({-5});
        const Trace farIds = Trace::fromSessionJson(far, "far.passlens.json", ".");
        QCOMPARE(farIds.createdBy(1000000000000LL), 1);
        QCOMPARE(farIds.createdBy(999999999999LL), 0);
        QCOMPARE(farIds.removedBy(-5), 1);
        // a value of the wrong type: the file, the place and the reason, no library text
        auto loadError = [](const nlohmann::json& d) {
            try {
                Trace::fromSessionJson(d, "bad.passlens.json", ".");
            } catch (const Error& e) {
                return QString(e.what());
            }
            return QString();
        };
        std::size_t withNodes = 0;
        while (doc["events"][withNodes].value("nodes", nlohmann::json::array()).empty()) ++withNodes;
        nlohmann::json typed = doc;
        typed["events"][withNodes]["nodes"][0][1] = 5;
        QCOMPARE(loadError(typed),
                 QString("bad.passlens.json: events[%1].nodes[0]: type must be string, but is number").arg(withNodes));
        typed = doc;
        typed["phases"][1]["changed"] = "yes";
        QCOMPARE(loadError(typed), QString("bad.passlens.json: phases[1]: type must be boolean, but is string"));
        typed = doc;
        typed["events"][withNodes]["nodes"][0][4][0][1] = "float99[2]";
        QVERIFY2(loadError(typed).startsWith(
                     QString("bad.passlens.json: events[%1].nodes[0]: bad type string 'float99[2]'").arg(withNodes)),
                 qPrintable(loadError(typed)));
    }
    // The one reader of profile files (ExecutionProfile::load / fromDocument, used by `render
    // --overlay`, reports and the window's overlay): a profile object, an array of them, or a
    // document with "profiles" (phase picked); each kind of bad input is a message naming the
    // file and the place.
    void profileDocuments() {
        using json = nlohmann::json;
        // the message of reading `doc` as "p.json" (of loading the file `path`), "" when it reads
        auto errorOf = [](const json& doc, const std::string& phase = {}, const std::string& path = {}) {
            try {
                path.empty() ? ExecutionProfile::fromDocument(doc, "p.json", phase) : ExecutionProfile::load(path);
            } catch (const Error& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        const json a = {{"phase", "a"},
                        {"nodes", {{{"node", 1}, {"time_us", 3.0}, {"kind", "kernel"}}}},
                        {"not_run", {{{"node", 2}, {"reason", "fused into node #1"}, {"fused_into", 1}}}},
                        {"transfers", {{{"node", 0}, {"direction", "DtoH"}, {"time_us", 2.0}}}}};
        const json b = {{"phase", "b"}, {"transfers", {{{"node", 0}, {"bytes", 64}, {"time_us", 1.0}}}}};
        // the profile of the phase asked for; the first without a phase or when none matches
        for (const json& doc : {json::array({a, b}), json{{"profiles", {a, b}}}}) {
            QCOMPARE(ExecutionProfile::fromDocument(doc, "p.json", "b").phase, std::string("b"));
            QCOMPARE(ExecutionProfile::fromDocument(doc, "p.json").phase, std::string("a"));
            QCOMPARE(ExecutionProfile::fromDocument(doc, "p.json", "c").phase, std::string("a"));
        }
        const ExecutionProfile p = ExecutionProfile::fromDocument(a, "p.json");
        QCOMPARE(p.nodes.size(), std::size_t(2));
        QVERIFY(p.nodes[0].timeUs && *p.nodes[0].timeUs == 3.0 && !p.nodes[1].timeUs);
        QVERIFY(p.nodes[1].fusedInto == NodeId(1));
        QCOMPARE(p.transfers.size(), std::size_t(1));
        QVERIFY(p.transfers[0].direction == TransferDirection::DtoH);
        QVERIFY(!p.transfers[0].bytes); // unknown, not 0
        QCOMPARE(p.transfers[0].gbPerS(), 0.0);
        QVERIFY(!p.toJson()["transfers"][0].contains("bytes"));
        QCOMPARE(p.totalUs(), 5.0); // node 1 and the transfer of node 0 (not a timed node)
        const ExecutionProfile q = ExecutionProfile::fromDocument(b, "p.json");
        QVERIFY(q.transfers[0].bytes == std::size_t(64));
        QVERIFY(q.transfers[0].direction == TransferDirection::HtoD);
        QVERIFY(q.toJson()["transfers"][0]["bytes"] == json(64));
        QVERIFY(!q.transfers[0].implicit && !q.toJson()["transfers"][0].contains("implicit"));
        // an implicit copy around timed node 1 (a CUDA run's download before a CPU node): read and
        // written back, counted on top of the node's time, marked in the text table
        json c = a;
        c["transfers"].push_back(
            {{"node", 1}, {"bytes", 256}, {"direction", "DtoH"}, {"time_us", 0.5}, {"implicit", true}});
        const ExecutionProfile r = ExecutionProfile::fromDocument(c, "p.json");
        QVERIFY(r.transfers[1].implicit && !r.transfers[0].implicit);
        QVERIFY(r.toJson()["transfers"][1]["implicit"] == json(true));
        QCOMPARE(r.totalUs(), 5.5);
        QVERIFY(QString::fromStdString(r.text()).contains(
            QRegularExpression("DtoH +256 +0\\.50us +0\\.51 +1 \\(implicit: its input\\)")));

        // the document: not a profile, no profile, "profiles" not an array, an entry not an object
        QCOMPARE(errorOf(3), std::string("p.json: expected a profile object"));
        QCOMPARE(errorOf(json{{"x", 1}}), std::string(R"(p.json: a profile needs "nodes" or "transfers")"));
        QCOMPARE(errorOf(json::array()), std::string("p.json: no profile in this file"));
        QCOMPARE(errorOf(json{{"profiles", json::array()}}), std::string("p.json: profiles: no profile in this file"));
        QCOMPARE(errorOf(json{{"profiles", 3}}), std::string("p.json: profiles: expected an array"));
        QCOMPARE(errorOf(json{{"profiles", {a, 3}}}, "x"), std::string()); // only the picked one is read
        QCOMPARE(errorOf(json::array({a, 3}), "final"), std::string("p.json[1]: expected a profile object"));
        // a list that is not an array, an entry that is not an object
        QCOMPARE(errorOf(json{{"nodes", 3}}), std::string("p.json.nodes: expected an array"));
        QCOMPARE(errorOf(json{{"transfers", {3}}}), std::string("p.json.transfers[0]: expected an object"));
        // a key missing
        QCOMPARE(errorOf(json{{"nodes", {{{"node", 1}}}}}), std::string("p.json.nodes[0].time_us: missing"));
        QCOMPARE(errorOf(json{{"transfers", {{{"time_us", 1}}}}}), std::string("p.json.transfers[0].node: missing"));
        // a value of the wrong type
        QCOMPARE(errorOf(json{{"profiles", {{{"nodes", {{{"node", "a"}, {"time_us", 1}}}}}}}}),
                 std::string("p.json: profiles[0].nodes[0].node: expected an integer node id"));
        QCOMPARE(errorOf(json{{"nodes", {{{"node", 3}, {"time_us", 1}}, {{"node", 4}, {"time_us", "x"}}}}}),
                 std::string("p.json.nodes[1].time_us: expected a number"));
        QCOMPARE(errorOf(json{{"phase", 2}, {"nodes", json::array()}}), std::string("p.json.phase: expected a string"));
        QCOMPARE(errorOf(json{{"nodes", json::array()},
                              {"plan", {{{"node", 1}, {"applied", "yes"}, {"pass", "join_in_place"}}}}}),
                 std::string("p.json.plan[0].applied: expected true or false"));
        // a value out of its range or not one of its names
        QCOMPARE(errorOf(json{{"nodes", {{{"node", 1}, {"time_us", -1}}}}}),
                 std::string("p.json.nodes[0].time_us: expected a finite non-negative number"));
        QCOMPARE(errorOf(json{{"transfers", {{{"node", 1}, {"bytes", -8}, {"time_us", 1}}}}}),
                 std::string("p.json.transfers[0].bytes: expected a finite non-negative number"));
        QCOMPARE(errorOf(json{{"transfers", {{{"node", 1}, {"direction", "up"}, {"time_us", 1}}}}}),
                 std::string(R"(p.json.transfers[0].direction: expected "HtoD", "DtoH" or "DtoD", got "up")"));
        QCOMPARE(errorOf(json{{"transfers", {{{"node", 1}, {"time_us", 1}, {"implicit", 1}}}}}),
                 std::string("p.json.transfers[0].implicit: expected true or false"));
        QCOMPARE(errorOf(json{{"nodes", json::array()}, {"plan", {{{"node", 1}, {"pass", "x"}}}}}),
                 std::string(R"(p.json.plan[0].pass: expected "epilogue_fusion" or "join_in_place", got "x")"));

        // the file: missing, not JSON; a good file read with its phase
        QTemporaryDir dir;
        const std::string missing = dir.filePath("none.json").toStdString();
        const std::string bad = dir.filePath("bad.json").toStdString();
        const std::string good = dir.filePath("good.json").toStdString();
        std::ofstream(bad) << "{\"nodes\": [";
        std::ofstream(good) << json{{"profiles", {a, b}}}.dump();
        const std::string noFile = errorOf({}, {}, missing), notJson = errorOf({}, {}, bad);
        QVERIFY2(noFile.starts_with(missing + ": "), noFile.c_str());
        QVERIFY2(notJson.starts_with(bad + ": byte ") && notJson.find(": invalid JSON: ") != std::string::npos,
                 notJson.c_str());
        QVERIFY(ExecutionProfile::load(good, "b").transfers[0].bytes == std::size_t(64));
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
