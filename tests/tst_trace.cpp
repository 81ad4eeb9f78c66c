// Recording: every corpus model optimizes under every pipeline with validation after each phase,
// and rebuilding from the recorded events reproduces each phase's graph (same fingerprint), also
// after saving and reopening the session file.
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <QTemporaryDir>
#include <QTest>

using namespace passlens;

namespace {
const std::string kCorpus = PASSLENS_CORPUS_DIR;
const std::string kSource = PASSLENS_SOURCE_DIR;

// Captures the fingerprint of the graph at the end of every phase.
struct PhaseFingerprints final : Instrumentation {
    std::vector<std::pair<std::string, std::uint64_t>> after;
    void phaseEnd(const PhaseInfo& p, const FunctionGraph& g, bool, double) override { after.push_back({p.name, g.fingerprint()}); }
};
} // namespace

class TestTrace : public QObject {
    Q_OBJECT
private slots:
    void corpusReplay_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("pipeline");
        for (const char* m : {"mlp", "lstm", "shape_ops", "transformer_encoder_layer", "squeezenet1_1", "mobilenet_v2", "resnet18",
                              "ch_PP-OCRv4_det_infer", "silero_vad_legacy"})
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
        for (const auto& [phase, fp] : fps.after) QVERIFY2(trace.graphAfterPhase(phase)->fingerprint() == fp, phase.c_str());
        QCOMPARE(trace.graphAfterPhase("final")->fingerprint(), lg.graph->fingerprint());
        // provenance: every node of the final graph was created by a recorded event or is from the source
        for (const Apply* n : lg.graph->toposort()) {
            const int by = trace.createdBy(n->id());
            QVERIFY(by >= 0 && by <= static_cast<int>(trace.events().size()));
            if (by) QCOMPARE(trace.events()[static_cast<std::size_t>(by - 1)].status, std::string("applied"));
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
            QCOMPARE(back.graphAfter(back.lastEventOfPhase(i))->fingerprint(), trace.graphAfter(trace.lastEventOfPhase(i))->fingerprint());
        int declined = 0;
        for (const auto& e : back.events()) declined += e.status == "declined";
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
        QVERIFY2(err.contains("events[0]") && err.contains("cannot replay"), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
