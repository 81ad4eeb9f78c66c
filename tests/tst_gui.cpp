// The debugger window (offscreen): models pass QAbstractItemModelTester, keyboard stepping changes
// the shown step and the view's node set, a profile row selects the node in the view and the
// inspector, the screenshot of the bundled example shows the graph, a saved session reopens on
// the same step, and no single event costs the GUI thread over 200 ms of CPU time while corpus
// models open (CPU time, not wall time, so the verdict does not depend on the machine's load;
// wall-clock stall figures belong to bench/).
#include "passlens/ui/ExecutionBackend.h"
#include "GraphScene.h"
#include "GraphView.h"
#include "InspectorWidget.h"
#include "JobRunner.h"
#include "passlens/ui/MainWindow.h"
#include "PipelineModel.h"
#include "ProfileModel.h"

#include <passlens/io/SessionFile.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/layout/DotWriter.h>
#include <passlens/pipeline/Pipeline.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeView>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSemaphore>
#include <QThread>
#include <QSortFilterProxyModel>
#include <QStyleOptionViewItem>

#include <time.h>

#include <algorithm>
#include <map>
#include <set>

using namespace passlens;

namespace {
const QString kSource = QStringLiteral(PASSLENS_SOURCE_DIR);
const QString kCorpus = QStringLiteral(PASSLENS_CORPUS_DIR);

// Opens `file` and waits until the pipeline and the first layout are done. The timeout only
// guards against a hang; it is far above any run on a loaded machine.
bool openAndWait(MainWindow& w, const QString& file, const QString& pipeline = QStringLiteral("theano"),
                 int timeoutMs = 600000) {
    bool done = false, ok = false;
    w.whenIdle([&](bool good, const QString&) {
        done = true;
        ok = good;
    });
    w.openFile(file, pipeline);
    return QTest::qWaitFor([&] { return done; }, timeoutMs) && ok;
}

// Shows `w` at 1400 x 900, waits until it is exposed and opens `file` (openAndWait).
bool showAndOpen(MainWindow& w, const QString& file, const QString& pipeline = QStringLiteral("theano")) {
    w.resize(1400, 900);
    w.show();
    return QTest::qWaitForWindowExposed(&w) && openAndWait(w, file, pipeline);
}

bool waitIdle(MainWindow& w, int timeoutMs = 600000) {
    bool done = false, ok = false;
    w.whenIdle([&](bool good, const QString&) {
        done = true;
        ok = good;
    });
    return QTest::qWaitFor([&] { return done; }, timeoutMs) && ok;
}

// Writes a chain of `n` Elemwise nodes (exp, neg, exp, ...; node 1 is named "first_neg", the
// others "stepK") as graph JSON in `dir`; returns its path, empty on failure.
QString writeChainGraph(const QTemporaryDir& dir, int n) {
    QString text = QStringLiteral(R"({"format": "passlens.graph", "version": 1, "name": "chain",
  "inputs": [{"name": "v0", "type": "float32[8]"}], "constants": [], "nodes": [)");
    for (int i = 0; i < n; ++i)
        text +=
            QStringLiteral(
                R"(%1{"op": "Elemwise", "name": "%2", "attrs": {"scalar": "%3"}, "inputs": ["v%4"], "outputs": ["v%5"]})")
                .arg(i ? ",\n" : "\n")
                .arg(i == 1 ? QStringLiteral("first_neg") : QStringLiteral("step%1").arg(i))
                .arg(i % 2 ? "neg" : "exp")
                .arg(i)
                .arg(i + 1);
    text += QStringLiteral(R"(], "outputs": ["v%1"]})").arg(n);
    const QString path = dir.filePath(QStringLiteral("chain.graph.json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0) return {};
    return path;
}

// The node of step `step` that the run made last (the highest createdBy event) and that event;
// {-1, 0} when every node is a source node.
std::pair<NodeId, int> newestNode(DebugSession& s, int step) {
    std::pair<NodeId, int> newest{-1, 0};
    for (const Apply* a : s.graphAt(step)->toposort())
        if (const int ev = s.trace()->createdBy(a->id()); ev > newest.second) newest = {a->id(), ev};
    return newest;
}

// An execution backend for the window's tests (ui/ links no kernels): profiles give every node
// 10 + (id % 7) µs and a plan with one decision about the first node; compare() reports a match for its first
// `matching` calls, then a divergence.
class FakeBackend final : public ExecutionBackend {
public:
    explicit FakeBackend(int matching)
        : m_matching(matching) {}
    ExecutionProfile profile(const FunctionGraph& graph, const ExecuteRequest&, const std::function<void(double)>&,
                             const std::atomic<bool>&) override {
        ExecutionProfile p;
        p.phase = "shown";
        p.device = "cpu";
        p.repeats = 1;
        for (const Apply* a : graph.toposort()) {
            ProfileNode n;
            n.node = a->id();
            n.op = a->op().str();
            n.timeUs = 10.0 + static_cast<double>(a->id() % 7);
            p.nodes.push_back(n);
        }
        if (!p.nodes.empty())
            p.plan.push_back({PlanDecision::Pass::EpilogueFusion,
                              p.nodes[0].node,
                              false,
                              {},
                              "node #" + std::to_string(p.nodes[0].node) + ": no epilogue fused",
                              "a test reason"});
        return p;
    }
    nlohmann::json compare(const FunctionGraph&, const FunctionGraph&) override {
        const bool same = m_calls++ < m_matching;
        return {{"max_abs", same ? 0.0 : 0.5}, {"max_rel", same ? 0.0 : 0.25}};
    }

private:
    int m_matching;
    std::atomic<int> m_calls{0};
};

// A backend whose profile() runs until its cancel flag is set, then throws "cancelled by the
// user", while `block` holds (it releases `started` first); else it profiles as FakeBackend.
class CancellableBackend final : public ExecutionBackend {
public:
    ExecutionProfile profile(const FunctionGraph& graph, const ExecuteRequest& request,
                             const std::function<void(double)>& progress, const std::atomic<bool>& cancel) override {
        if (!block.load()) return m_fake.profile(graph, request, progress, cancel);
        started.release();
        while (!cancel.load()) QThread::yieldCurrentThread();
        throw std::runtime_error("cancelled by the user");
    }
    nlohmann::json compare(const FunctionGraph& graph, const FunctionGraph& reference) override {
        return m_fake.compare(graph, reference);
    }
    std::atomic<bool> block{true};
    QSemaphore started;

private:
    FakeBackend m_fake{1000};
};

// Opens a chain of `n` Elemwise nodes (writeChainGraph, in `dir`) in `w`, 1200 x 800, with the
// `none` pipeline; false when it could not be written or opened.
bool openChain(MainWindow& w, const QTemporaryDir& dir, int n) {
    const QString path = dir.isValid() ? writeChainGraph(dir, n) : QString();
    if (path.isEmpty()) return false;
    w.resize(1200, 800);
    w.show();
    return openAndWait(w, path, QStringLiteral("none"));
}

// CPU time of the calling thread in microseconds (CLOCK_THREAD_CPUTIME_ID): unlike wall time it
// does not grow while the thread waits for a core on a busy machine.
qint64 threadCpuMicros() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// The application of this test: measures the GUI thread's CPU time spent delivering each
// outermost event (nested deliveries count towards the event that started them), so a test can
// ask for the most expensive single event while a model opens.
class MeasuringApplication : public QApplication {
public:
    using QApplication::QApplication;
    bool notify(QObject* receiver, QEvent* event) override {
        if (m_depth++ > 0 || !m_recording) {
            const bool r = QApplication::notify(receiver, event);
            --m_depth;
            return r;
        }
        const qint64 start = threadCpuMicros();
        const int type = event->type(); // the event may be deleted during delivery
        const bool r = QApplication::notify(receiver, event);
        --m_depth;
        const qint64 cost = threadCpuMicros() - start;
        if (cost > m_worstMicros) {
            m_worstMicros = cost;
            m_worstType = type;
            m_worstReceiver = receiver ? QString::fromLatin1(receiver->metaObject()->className()) : QString();
        }
        return r;
    }
    void startRecording() {
        m_worstMicros = 0;
        m_worstType = 0;
        m_worstReceiver.clear();
        m_recording = true;
    }
    void stopRecording() { m_recording = false; }
    qint64 worstMicros() const { return m_worstMicros; }
    QString worstDescription() const {
        return QStringLiteral("%1 ms of GUI-thread CPU in one event (type %2 to a %3)")
            .arg(double(m_worstMicros) / 1000.0, 0, 'f', 1)
            .arg(m_worstType)
            .arg(m_worstReceiver);
    }

private:
    int m_depth = 0;
    bool m_recording = false;
    qint64 m_worstMicros = 0;
    int m_worstType = 0;
    QString m_worstReceiver; // class name only: the receiver may be gone after delivery
};

MeasuringApplication* measuringApp() { return static_cast<MeasuringApplication*>(QCoreApplication::instance()); }
} // namespace

class TestGui : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        qputenv("PASSLENS_NO_DIALOGS", "1");
        QCoreApplication::setOrganizationName(QStringLiteral("PassLensTest"));
    }

    void modelsPassTheTester() {
        LoadedGraph lg = loadGraphFile((kCorpus + "/lstm.onnx").toStdString());
        Pipeline p = Pipeline::builtin("theano");
        Trace t(true);
        const PipelineRun run = p.run(*lg.graph, &t);
        t.finish(run, *lg.graph, p.buildContext().caps);
        PipelineModel pm;
        QAbstractItemModelTester tester(&pm, QAbstractItemModelTester::FailureReportingMode::QtTest);
        pm.setTrace(&t);
        QCOMPARE(pm.rowCount(), static_cast<int>(p.phases().size()));
        int events = 0;
        for (int r = 0; r < pm.rowCount(); ++r) events += pm.rowCount(pm.index(r, 0));
        int recorded = 0;
        for (const auto& e : t.events()) recorded += e.status != EventStatus::Declined;
        QCOMPARE(events, recorded);
        pm.setTrace(nullptr);
        QCOMPARE(pm.rowCount(), 0);

        ProfileModel prof(ProfileModel::Mode::PerNode);
        QAbstractItemModelTester tester2(&prof, QAbstractItemModelTester::FailureReportingMode::QtTest);
        ExecutionProfile profile;
        profile.device = "cpu";
        for (int k = 0; k < 3; ++k) {
            ProfileNode n;
            n.node = lg.graph->toposort()[static_cast<std::size_t>(k)]->id();
            if (k < 2) n.timeUs = k == 0 ? 30.0 : 10.0;
            if (k == 2) n.fusedInto = lg.graph->toposort()[0]->id(); // n/a, and says why
            profile.nodes.push_back(n);
        }
        prof.setProfile(profile, lg.graph.get());
        QCOMPARE(prof.rowCount(), 3);
        QCOMPARE(prof.data(prof.index(0, ProfileModel::Share)).toString(), QString("75.0 %"));
        QCOMPARE(prof.data(prof.index(2, ProfileModel::TimeUs)).toString(), QString("n/a"));
        QCOMPARE(prof.data(prof.index(2, ProfileModel::Kind)).toString(),
                 QString("fused into #%1").arg(lg.graph->toposort()[0]->id()));
        QCOMPARE(prof.data(prof.index(0, ProfileModel::Kind)).toString(), QString("kernel"));
        ProfileModel perOp(ProfileModel::Mode::PerOp);
        QAbstractItemModelTester tester3(&perOp, QAbstractItemModelTester::FailureReportingMode::QtTest);
        perOp.setProfile(profile, lg.graph.get());
        QVERIFY(perOp.rowCount() >= 1);
    }

    void keyboardSteppingChangesTheView() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        auto& s = w.session();
        const int last = static_cast<int>(s.steps().size()) - 1;
        QCOMPARE(s.currentStep(), last);
        const auto finalIds = w.graphScene()->nodeIds();
        // Home: the source graph
        QTest::keyClick(&w, Qt::Key_Home);
        QVERIFY(waitIdle(w));
        QCOMPARE(s.currentStep(), 0);
        const auto sourceIds = w.graphScene()->nodeIds();
        QVERIFY(sourceIds != finalIds);
        QCOMPARE(sourceIds.size(), 2); // Alloc and Join
        // Right: one rewrite at a time, until a rewrite changes the drawn node set (GraphToGPU)
        int presses = 0;
        while (w.graphScene()->nodeIds() == sourceIds && presses < last) {
            QTest::keyClick(&w, Qt::Key_Right);
            QVERIFY(waitIdle(w));
            QCOMPARE(s.currentStep(), ++presses);
        }
        QVERIFY(w.graphScene()->nodeIds() != sourceIds);
        QVERIFY(s.steps()[static_cast<std::size_t>(s.currentStep())].label.contains("GraphToGPU"));
        // PageDown: to the end of the next phase; PageUp back
        const int before = s.currentStep();
        QTest::keyClick(&w, Qt::Key_PageDown);
        QVERIFY(waitIdle(w));
        QVERIFY(s.currentStep() > before);
        QVERIFY(s.steps()[static_cast<std::size_t>(s.currentStep())].phaseEnd);
        QTest::keyClick(&w, Qt::Key_End);
        QVERIFY(waitIdle(w));
        QCOMPARE(w.graphScene()->nodeIds(), finalIds);
    }

    // Closing the window while a node is selected (stepping onto a rewrite selects its new nodes):
    // the scene's items are deleted while the scene can still answer the selection signal.
    void closingWithASelectedNode() {
        auto w = std::make_unique<MainWindow>();
        w->resize(1400, 900);
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        QTest::keyClick(w.get(), Qt::Key_Home);
        QVERIFY(waitIdle(*w));
        while (w->graphScene()->selectedItems().isEmpty() &&
               w->session().currentStep() + 1 < static_cast<int>(w->session().steps().size())) {
            QTest::keyClick(w.get(), Qt::Key_Right);
            QVERIFY(waitIdle(*w));
        }
        QVERIFY(!w->graphScene()->selectedItems().isEmpty());
        w.reset(); // crashed here when ~QGraphicsScene deleted the selected item
        QVERIFY(!w);
    }

    // Closing the window while a layout is being made: the session cancels it and waits for its
    // worker (which uses the session's layout engine and trace) instead of leaving it to run on
    // freed memory.
    void closingWhileDrawing() {
        auto w = std::make_unique<MainWindow>();
        QTemporaryDir dir;
        QVERIFY(openChain(*w, dir, 3000));
        w->session().relayout();
        QVERIFY(w->session().layoutPending());
        w.reset();
        QCoreApplication::processEvents();
        QVERIFY(!w);
    }

    // The pipeline tree follows the slider (the step's event row, or its phase row at a phase
    // end), and moving through the tree with the keyboard moves the step.
    void pipelineTreeFollowsTheStep() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        auto& s = w.session();
        QTreeView* tree = w.pipelineTree();
        auto currentRow = [&] { return tree->currentIndex(); };
        int eventStep = -1, phaseEndStep = -1;
        for (int k = 1; k < static_cast<int>(s.steps().size()); ++k) {
            const StepPoint& p = s.steps()[static_cast<std::size_t>(k)];
            if (!p.phaseEnd && eventStep < 0) eventStep = k;
            if (p.phaseEnd && eventStep >= 0 && phaseEndStep < 0) phaseEndStep = k;
        }
        QVERIFY(eventStep > 0 && phaseEndStep > eventStep);
        s.setCurrentStep(eventStep);
        QVERIFY(waitIdle(w));
        QVERIFY(currentRow().parent().isValid()); // an event row
        QCOMPARE(currentRow().data(PipelineModel::EventRole).toInt(),
                 s.steps()[static_cast<std::size_t>(eventStep)].event);
        QCOMPARE(s.currentStep(), eventStep); // following did not move the step
        s.setCurrentStep(phaseEndStep);
        QVERIFY(waitIdle(w));
        QVERIFY(!currentRow().parent().isValid()); // a phase row
        QCOMPARE(currentRow().data(PipelineModel::PhaseRole).toInt(),
                 s.steps()[static_cast<std::size_t>(phaseEndStep)].phase);
        QCOMPARE(s.currentStep(), phaseEndStep);
        // Keys in the tree move the step: Up from the phase row is the last row above it (an
        // event of an expanded phase or a phase row), Down comes back to the phase's end.
        tree->setFocus();
        const QModelIndex phaseRow = currentRow();
        QTest::keyClick(tree, Qt::Key_Up);
        QVERIFY(currentRow() != phaseRow);
        QVERIFY(waitIdle(w));
        const StepPoint& up = s.steps()[static_cast<std::size_t>(s.currentStep())];
        if (currentRow().parent().isValid()) {
            QCOMPARE(up.event, currentRow().data(PipelineModel::EventRole).toInt());
            QVERIFY(!up.phaseEnd);
        } else {
            QVERIFY(up.phaseEnd);
            QCOMPARE(up.phase, currentRow().data(PipelineModel::PhaseRole).toInt());
        }
        QVERIFY(s.currentStep() < phaseEndStep);
        QTest::keyClick(tree, Qt::Key_Down);
        QCOMPARE(currentRow(), phaseRow);
        QVERIFY(waitIdle(w));
        QCOMPARE(s.currentStep(), phaseEndStep);
    }

    // Clicking a phase's check box unchecks it for the next Run without moving the step.
    void checkBoxClickDoesNotJump() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        auto& s = w.session();
        QTreeView* tree = w.pipelineTree();
        const int step = s.currentStep();
        const QModelIndex phase = tree->model()->index(0, 0);
        QVERIFY(phase.data(Qt::CheckStateRole).toInt() == Qt::Checked);
        QVERIFY(tree->currentIndex() != phase);
        QStyleOptionViewItem option;
        option.initFrom(tree);
        option.rect = tree->visualRect(phase);
        option.features |= QStyleOptionViewItem::HasCheckIndicator;
        if (phase.data(Qt::DecorationRole).isValid()) option.features |= QStyleOptionViewItem::HasDecoration;
        const QPoint box = tree->style()->subElementRect(QStyle::SE_ItemViewItemCheckIndicator, &option, tree).center();
        const QString name = phase.data(Qt::DisplayRole).toString();
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, box);
        QCOMPARE(phase.data(Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
        QCOMPARE(w.pipelineModel()->disabledPhases().size(), qsizetype(1));
        QVERIFY(name.startsWith(w.pipelineModel()->disabledPhases().front()));
        QVERIFY(tree->currentIndex() != phase);
        QCOMPARE(s.currentStep(), step); // nothing to lay out: the step did not move
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, box);
        QCOMPARE(phase.data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
        QVERIFY(w.pipelineModel()->disabledPhases().isEmpty());
        QCOMPARE(s.currentStep(), step);
        // a click on the row's text still shows the phase
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(phase).center());
        QCOMPARE(tree->currentIndex(), phase);
        QVERIFY(waitIdle(w));
        QVERIFY(s.currentStep() != step);
    }

    // Stepping rewrite by rewrite keeps every unchanged node at the same scene position and at
    // the same place on screen; stepping back shows the same drawing; Ctrl+L lays out afresh.
    void steppingKeepsUnchangedNodesInPlace() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QVERIFY(w.graphView()->minimapVisible()); // a big drawing: the minimap is shown
        auto& s = w.session();
        QTest::keyClick(&w, Qt::Key_Home);
        QVERIFY(waitIdle(w));
        auto snapshot = [&w] {
            QHash<QString, QPointF> at;
            for (auto it = w.graphScene()->nodeItems().begin(); it != w.graphScene()->nodeItems().end(); ++it)
                at.insert(it.key(), it.value()->boundingRect().center());
            return at;
        };
        auto onScreen = [&w](const QPointF& p) { return w.graphView()->mapFromScene(p); };
        QList<QHash<QString, QPointF>> shown{snapshot()};
        int kept = 0, moved = 0, stableSteps = 0, changedSteps = 0, scrolled = 0;
        // through the merges and constant folding (one node fewer each step) into GraphToGPU
        for (int k = 1; k <= 48; ++k) {
            const auto before = shown.back();
            QHash<QString, QPoint> screenBefore;
            for (auto it = before.begin(); it != before.end(); ++it)
                screenBefore.insert(it.key(), onScreen(it.value()));
            const QRectF visibleBefore = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
            QTest::keyClick(&w, Qt::Key_Right);
            QVERIFY(waitIdle(w));
            QCOMPARE(s.currentStep(), k);
            const auto now = snapshot();
            changedSteps += now.keys() != before.keys();
            if (!s.layout()->stable) { // GraphToGPU rebuilds the graph: drawn afresh
                shown << now;
                continue;
            }
            ++stableSteps;
            if (qEnvironmentVariableIsSet("PASSLENS_SHOTS")) // to look at: the step before and this one
                w.grab().save(qEnvironmentVariable("PASSLENS_SHOTS") +
                              QStringLiteral("/stepping-%1.png").arg(k, 2, 10, QChar('0')));
            for (auto it = now.begin(); it != now.end(); ++it) {
                if (!before.contains(it.key())) continue;
                const QPointF d = it.value() - before.value(it.key());
                if (std::abs(d.x()) > 0.01 || std::abs(d.y()) > 0.01)
                    ++moved;
                else
                    ++kept;
            }
            // The view did not jump either, unless none of the rewrite's new nodes would have
            // been on screen: then it moved to show them (the view follows the action).
            QRectF added;
            const StepPoint& st = s.steps()[static_cast<std::size_t>(k)];
            if (!st.phaseEnd)
                for (NodeId id : s.trace()->events()[static_cast<std::size_t>(st.event - 1)].added)
                    if (auto* item = w.graphScene()->nodeItems().value(QStringLiteral("n%1").arg(id)))
                        added = added.united(item->sceneBoundingRect());
            for (auto it = now.begin(); it != now.end(); ++it)
                if (screenBefore.contains(it.key())) {
                    if (onScreen(it.value()) != screenBefore.value(it.key())) {
                        ++scrolled;
                        QVERIFY(!added.isNull());
                        QVERIFY(!visibleBefore.intersects(added));
                        QVERIFY(w.graphView()
                                    ->mapToScene(w.graphView()->viewport()->rect())
                                    .boundingRect()
                                    .intersects(added));
                    }
                    break;
                }
            shown << now;
        }
        QCOMPARE(moved, 0);
        QVERIFY(scrolled < stableSteps / 2); // mostly the drawing stays still
        QVERIFY(kept > 30 * 90);
        QVERIFY(stableSteps >= 30);
        QVERIFY(changedSteps >= 30);
        // back one step: exactly the drawing shown before
        const auto last = shown.back();
        QTest::keyClick(&w, Qt::Key_Left);
        QVERIFY(waitIdle(w));
        if (s.layout()->stable) QCOMPARE(snapshot(), shown[shown.size() - 2]);
        // Ctrl+L: a fresh dot layout
        QTest::keyClick(&w, Qt::Key_L, Qt::ControlModifier);
        QVERIFY(waitIdle(w));
        QVERIFY(!s.layout()->stable);
        QCOMPARE(s.layout()->pinnedNodes, std::size_t(0));
        // with the diff overlay on (against the phase start), stepping inside the phase keeps
        // the union drawing still too
        QTest::keyClick(&w, Qt::Key_D);
        QVERIFY(waitIdle(w));
        QVERIFY(s.diffFrom().has_value());
        int diffStable = 0;
        for (int k = 0; k < 6; ++k) {
            const auto before = snapshot();
            const auto from = s.diffFrom();
            QTest::keyClick(&w, Qt::Key_Right);
            QVERIFY(waitIdle(w));
            if (s.diffFrom() != from || !s.layout()->stable) continue; // a new phase: a new diff
            ++diffStable;
            const auto now = snapshot();
            for (auto it = now.begin(); it != now.end(); ++it)
                if (before.contains(it.key())) QCOMPARE(it.value(), before.value(it.key()));
        }
        QVERIFY(diffStable >= 3);
        // D again: side by side, both views shown, before without added and after without
        // removed nodes
        QTest::keyClick(&w, Qt::Key_D);
        QVERIFY(waitIdle(w));
        QVERIFY(w.beforeView()->isVisible());
        QVERIFY(w.graphView()->isVisible());
        QVERIFY(w.graphView()->width() > 100 && w.beforeView()->width() > 100);
        QVERIFY(w.beforeScene()->nodeItemCount() > 10 && w.graphScene()->nodeItemCount() > 10);
        for (auto* item : w.graphScene()->nodeItems()) QVERIFY(item->node().change != NodeChange::Removed);
        for (auto* item : w.beforeScene()->nodeItems()) QVERIFY(item->node().change != NodeChange::Added);
        if (qEnvironmentVariableIsSet("PASSLENS_SHOTS"))
            w.grab().save(qEnvironmentVariable("PASSLENS_SHOTS") + "/stepping.png");
    }

    void profileRowSelectsTheNode() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/join_alloc.graph.json"));
        auto g = w.session().graphAt(w.session().currentStep());
        const NodeId target = g->toposort()[1]->id();
        ExecutionProfile profile;
        profile.device = "cpu";
        profile.nodes.resize(2);
        profile.nodes[0].node = g->toposort()[0]->id();
        profile.nodes[0].timeUs = 5.0;
        profile.nodes[1].node = target;
        profile.nodes[1].timeUs = 50.0;
        w.profileModel()->setProfile(profile, g.get());
        QTableView* table = w.profileTable();
        // sorted by time, descending: row 0 is the target
        table->selectRow(0);
        table->setCurrentIndex(table->model()->index(0, 0));
        QCOMPARE(w.inspector()->shownNode(), target);
        const auto sel = w.graphScene()->selectedItems();
        QCOMPARE(sel.size(), 1);
        QCOMPARE(static_cast<GraphNodeItem*>(sel.first())->node().node, target);
        // and the other way: selecting in the view selects the profile row
        const NodeId other = g->toposort()[0]->id();
        w.selectNode(other);
        const auto rows = table->selectionModel()->selectedRows();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.first().data(ProfileModel::NodeIdRole).toLongLong(), other);
        QCOMPARE(w.inspector()->shownNode(), other);
    }

    void screenshotOfTheBundledExampleIsNotBlank() {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QVERIFY(w.graphScene()->nodeItemCount() > 50);
        const QImage img = w.graphView()->viewport()->grab().toImage();
        int inked = 0;
        for (int y = 0; y < img.height(); y += 2)
            for (int x = 0; x < img.width(); x += 2)
                if (qGray(img.pixel(x, y)) < 200) ++inked;
        QVERIFY2(inked > 500, qPrintable(QString("only %1 dark pixels").arg(inked)));
    }

    // A big graph opens at a readable zoom on its outputs, with boxes on screen (PP-OCR opened
    // on blank canvas with one clipped node when the view was centred on the scene's middle).
    void bigGraphOpensOnItsOutputs() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kCorpus + "/ch_PP-OCRv4_det_infer.onnx"));
        QVERIFY(w.graphView()->zoom() >= 0.75);
        const QRectF visible = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
        int whole = 0, outputs = 0;
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) {
            if (!visible.contains(it->sceneBoundingRect())) continue;
            ++whole;
            outputs += it->node().category == NodeCategory::Output;
        }
        QVERIFY2(whole >= 8, qPrintable(QString("%1 whole boxes on screen").arg(whole)));
        QCOMPARE(outputs, 1);
    }

    // Opening a big graph draws its source graph (the focused view) before the pipeline's result
    // arrives, labelled as such; the user can search it meanwhile; the run then replaces it, and
    // nothing of the source-only state remains.
    void sourceIsDrawnWhileThePipelineRuns() {
        QTemporaryDir dir;
        const QString path = dir.isValid() ? writeChainGraph(dir, 3000) : QString();
        QVERIFY(!path.isEmpty());
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        auto& s = w.session();
        QStringList order;
        QString sourceSummary;
        std::size_t sourceNodes = 0;
        bool sourceFocused = false, searched = false;
        connect(&s, &DebugSession::sourceShown, this, [&] { order << "sourceShown"; });
        connect(&s, &DebugSession::opened, this, [&] { order << "opened"; });
        connect(&s, &DebugSession::layoutReady, this, [&] {
            order << "drawn " + s.steps()[static_cast<std::size_t>(s.currentStep())].label;
            if (!s.sourceOnly() || searched) return;
            sourceSummary = w.summaryText();
            sourceNodes = s.graphAt(0)->nodeCount();
            sourceFocused = s.layout()->focused;
            // look around meanwhile: Find draws a node of the source outside the focused view
            searched = true;
            w.findNext(QStringLiteral("first_neg"));
        });
        bool idle = false, ok = false;
        w.whenIdle([&](bool good, const QString&) {
            idle = true;
            ok = good;
        });
        w.openFile(path, QStringLiteral("theano"));
        QVERIFY(QTest::qWaitFor([&] { return idle; }, 600000));
        QVERIFY(ok);
        const QString running = QStringLiteral("source (the pipeline is still running)");
        QCOMPARE(order.mid(0, 4), QStringList({"sourceShown", "drawn " + running, "drawn " + running, "opened"}));
        QCOMPARE(order.size(), qsizetype(5));
        QVERIFY(order[4].startsWith("drawn ") && !order[4].contains("running"));
        // the source drawing: the whole imported graph, a focused view, labelled
        QCOMPARE(sourceNodes, std::size_t(3000));
        QVERIFY(sourceFocused);
        QVERIFY2(sourceSummary.contains(running), qPrintable(sourceSummary));
        // the Find on the source view counted its nodes: the run's final step clears the label
        QVERIFY(searched && w.findStatus().isEmpty());
        // the run's state: the trace, the last step, no trace of the source-only label
        QVERIFY(!s.sourceOnly() && s.trace() && s.pipelineError().isEmpty());
        QCOMPARE(s.currentStep(), static_cast<int>(s.steps().size()) - 1);
        QVERIFY(s.steps().size() > 2);
        QCOMPARE(s.steps().front().label, QStringLiteral("source"));
        QVERIFY2(!w.summaryText().contains("running") && !w.windowTitle().contains("running"),
                 qPrintable(w.summaryText() + " / " + w.windowTitle()));
        QVERIFY(w.pipelineModel()->rowCount() > 0);
        // a graph at or under the focused-view threshold: its run is drawn first, nothing before
        QTemporaryDir smallDir;
        const QString small = smallDir.isValid() ? writeChainGraph(smallDir, 40) : QString();
        QVERIFY(!small.isEmpty());
        order.clear();
        QVERIFY(openAndWait(w, small, QStringLiteral("theano")));
        QVERIFY2(order.size() == 2 && order[0] == "opened" && order[1].startsWith("drawn "),
                 qPrintable(order.join(" | ")));
        QCOMPARE(s.graphAt(0)->nodeCount(), std::size_t(40));
    }

    // A pipeline that fails on the source shown keeps the source drawn, says so, and a Run of
    // another pipeline from there opens normally.
    void failingPipelineKeepsTheSource() {
        QTemporaryDir dir;
        const QString path = dir.isValid() ? writeChainGraph(dir, 2000) : QString();
        QVERIFY(!path.isEmpty());
        MainWindow w;
        w.resize(1200, 800);
        w.show();
        auto& s = w.session();
        QStringList order;
        connect(&s, &DebugSession::sourceShown, this, [&] { order << "sourceShown"; });
        connect(&s, &DebugSession::opened, this, [&] { order << "opened"; });
        connect(&s, &DebugSession::failed, this, [&] { order << "failed"; });
        connect(&s, &DebugSession::pipelineFailed, this, [&](const QString& m) { order << "pipelineFailed " + m; });
        connect(&s, &DebugSession::layoutReady, this,
                [&] { order << "drawn " + s.steps()[static_cast<std::size_t>(s.currentStep())].label; });
        const QString missing = dir.filePath(QStringLiteral("missing.pipeline.json"));
        w.openFile(path, missing);
        QVERIFY(QTest::qWaitFor([&] { return order.size() >= 4; }, 600000));
        QCOMPARE(order.size(), qsizetype(4));
        QCOMPARE(order[0], QStringLiteral("sourceShown"));
        QCOMPARE(order[1], QStringLiteral("drawn source (the pipeline is still running)"));
        QVERIFY2(order[2].startsWith("pipelineFailed ") && order[2].contains("missing.pipeline.json"),
                 qPrintable(order[2]));
        QCOMPARE(order[3], QStringLiteral("drawn source (the pipeline failed)"));
        QVERIFY(s.sourceOnly() && !s.trace() && !s.busy());
        QVERIFY(s.pipelineError().contains("missing.pipeline.json"));
        QCOMPARE(s.graphAt(0)->nodeCount(), std::size_t(2000));
        QVERIFY(s.layout()->focused && w.graphScene()->nodeIds().size() > 0);
        QVERIFY2(w.summaryText().contains("The pipeline failed") && w.summaryText().contains("missing.pipeline.json"),
                 qPrintable(w.summaryText()));
        QCOMPARE(w.pipelineModel()->rowCount(), 0);
        // a Run that fails again says why, the source still shown
        order.clear();
        const QString missing2 = dir.filePath(QStringLiteral("missing2.pipeline.json"));
        s.runPipeline(missing2);
        QVERIFY(QTest::qWaitFor([&] { return order.size() >= 2; }, 600000));
        QVERIFY2(order[0].startsWith("pipelineFailed ") && order[0].contains("missing2.pipeline.json"),
                 qPrintable(order[0]));
        QCOMPARE(order[1], QStringLiteral("drawn source (the pipeline failed)"));
        QVERIFY(s.sourceOnly() && s.pipelineError().contains("missing2.pipeline.json"));
        QCOMPARE(s.pipelineName(), missing2);
        QVERIFY(w.summaryText().contains("missing2.pipeline.json"));
        // Run another pipeline on the source shown
        s.runPipeline(QStringLiteral("theano"));
        QVERIFY(waitIdle(w));
        QVERIFY(!s.sourceOnly() && s.trace() && s.pipelineError().isEmpty());
        QCOMPARE(s.pipelineName(), QStringLiteral("theano"));
        QCOMPARE(s.steps().front().label, QStringLiteral("source"));
        QVERIFY(!w.summaryText().contains("failed"));
        QVERIFY(w.pipelineModel()->rowCount() > 0);
    }

    // The minimap shows only while the drawing does not fit, never over a quarter of the view;
    // Export offers a file name from the model and the step; the canvas leaves drops to the
    // window (which opens the file).
    void minimapExportNameAndDrops() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        QVERIFY(!w.graphView()->minimapVisible()); // four boxes: all on screen
        QCOMPARE(w.suggestedExportName(), QStringLiteral("join_alloc-step%1.svg").arg(w.session().currentStep()));
        w.setDiffMode(1);
        QVERIFY(waitIdle(w));
        QCOMPARE(w.suggestedExportName(QStringLiteral("pdf")),
                 QStringLiteral("join_alloc-step%1-diff.pdf").arg(w.session().currentStep()));
        QVERIFY(w.graphView()->paneLabel().isEmpty()); // overlay: one pane, no label
        w.setDiffMode(2);                              // side by side: the panes say which is which
        QVERIFY(waitIdle(w));
        QVERIFY2(w.beforeView()->paneLabel().startsWith(
                     QStringLiteral("before: step %1,").arg(w.session().diffFrom().value_or(-1))),
                 qPrintable(w.beforeView()->paneLabel()));
        QVERIFY2(
            w.graphView()->paneLabel().startsWith(QStringLiteral("after: step %1,").arg(w.session().currentStep())),
            qPrintable(w.graphView()->paneLabel()));
        w.setDiffMode(0);
        QVERIFY(waitIdle(w));
        QVERIFY(w.graphView()->paneLabel().isEmpty());

        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QVERIFY(w.graphView()->minimapVisible()); // opened at a readable zoom: it does not fit
        const QSize pane = w.graphView()->size();
        QVERIFY(w.graphView()->minimapSize().width() * 3 <= pane.width());
        QVERIFY(w.graphView()->minimapSize().height() * 3 <= pane.height());
        w.graphView()->fit();
        QVERIFY(!w.graphView()->minimapVisible()); // fitted: nothing to find on a map
        w.graphView()->zoomBy(2.0);
        QVERIFY(w.graphView()->minimapVisible());
        w.resize(500, 400); // a small pane: the minimap shrinks with it
        QTest::qWait(50);
        QVERIFY(w.graphView()->minimapSize().width() * 3 <= w.graphView()->width());
        QVERIFY(w.graphView()->minimapSize().height() * 3 <= w.graphView()->height());
        QVERIFY(!w.graphView()->viewport()->acceptDrops() && !w.graphView()->acceptDrops());
        QVERIFY(w.acceptDrops());
    }

    // File > Export view: the drawing as shown, the selection with its neighbours, the visible
    // area, and a landscape (left to right) figure.
    void exportAreasAndOrientation() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QTemporaryDir dir;
        QSignalSpy done(&w, &MainWindow::exported);
        // SVG facts: node titles (Graphviz writes each node's id as its <title>) and the page size
        struct Svg {
            QStringList nodes;
            double width = 0, height = 0;
        };
        auto readSvg = [](const QString& file) {
            Svg svg;
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly)) return svg;
            const QString text = QString::fromUtf8(f.readAll());
            static const QRegularExpression node(
                QStringLiteral("<g id=\"node\\d+\" class=\"node\">\\s*<title>([^<]*)</title>"));
            for (auto it = node.globalMatch(text); it.hasNext();) svg.nodes << it.next().captured(1);
            static const QRegularExpression size(QStringLiteral("<svg width=\"([0-9.]+)pt\" height=\"([0-9.]+)pt\""));
            const auto m = size.match(text);
            if (m.hasMatch()) {
                svg.width = m.captured(1).toDouble();
                svg.height = m.captured(2).toDouble();
            }
            return svg;
        };
        auto exportAndWait = [&](const QString& name, const MainWindow::ExportRequest& r) {
            const int before = static_cast<int>(done.size());
            if (!w.exportTo(dir.filePath(name), r)) return false;
            if (!QTest::qWaitFor([&] { return done.size() > before; }, 600000)) return false;
            return done.last().at(1).toBool();
        };
        const int drawn = static_cast<int>(w.graphScene()->nodeItems().size());
        QVERIFY(exportAndWait("whole.svg", {}));
        const Svg whole = readSvg(dir.filePath("whole.svg"));
        QCOMPARE(static_cast<int>(whole.nodes.size()), drawn);
        QVERIFY(whole.height > whole.width); // top to bottom

        MainWindow::ExportRequest landscape;
        landscape.landscape = true;
        QVERIFY(exportAndWait("wide.svg", landscape));
        const Svg wide = readSvg(dir.filePath("wide.svg"));
        QCOMPARE(static_cast<int>(wide.nodes.size()), drawn);
        QVERIFY2(wide.width > wide.height, qPrintable(QStringLiteral("%1 x %2").arg(wide.width).arg(wide.height)));

        // nothing selected: refused
        w.graphScene()->clearSelection();
        MainWindow::ExportRequest selection;
        selection.area = MainWindow::ExportRequest::Area::Selection;
        selection.hops = 1;
        QVERIFY(!w.exportTo(dir.filePath("none.svg"), selection));
        QVERIFY(!QFileInfo::exists(dir.filePath("none.svg")));
        // one node and its neighbours: the node, its producers and consumers, and "… N nodes" boxes
        auto g = w.session().graphAt(w.session().currentStep());
        const Apply* middle = g->toposort()[g->toposort().size() / 2];
        w.selectNode(middle->id());
        QVERIFY(exportAndWait("sel.svg", selection));
        const Svg sel = readSvg(dir.filePath("sel.svg"));
        const QString key = QStringLiteral("n%1").arg(middle->id());
        QVERIFY(sel.nodes.contains(key));
        for (const Variable* in : middle->inputs())
            if (in->owner()) QVERIFY(sel.nodes.contains(QStringLiteral("n%1").arg(in->owner()->id())));
        QVERIFY(sel.nodes.size() < whole.nodes.size());
        QVERIFY(std::any_of(sel.nodes.begin(), sel.nodes.end(), [](const QString& k) { return k.startsWith('c'); }));

        // the visible area, zoomed in on the selected node: only what is on screen (and placeholders)
        w.graphView()->fit();
        w.graphView()->zoomBy(6.0);
        w.graphView()->centerOn(w.graphScene()->nodeItems().value(key));
        MainWindow::ExportRequest visible;
        visible.area = MainWindow::ExportRequest::Area::Visible;
        QVERIFY(exportAndWait("visible.svg", visible));
        const Svg vis = readSvg(dir.filePath("visible.svg"));
        QVERIFY(vis.nodes.contains(key));
        int real = 0;
        for (const QString& k : vis.nodes) real += !k.startsWith('c');
        QVERIFY2(real < drawn / 2, qPrintable(QStringLiteral("%1 of %2").arg(real).arg(drawn)));
    }

    // Execute > Check marks the phases that changed the graph (match, first divergent,
    // diverged; PhaseCheck.h, as `run --check`) and leaves unchanged ones unmarked; the profile
    // says which step it was measured on and is dimmed on another step.
    void checkMarksAndProfileStep() {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        w.setExecutionBackend(std::make_shared<FakeBackend>(2));
        auto& s = w.session();
        std::vector<int> checkedPhases, unchanged; // the phases that changed the graph, in run order
        for (std::size_t p = 0; p < s.trace()->phases().size(); ++p)
            (s.trace()->phases()[p].changed ? checkedPhases : unchanged).push_back(static_cast<int>(p));
        QVERIFY(checkedPhases.size() >= 4);
        QVERIFY(!unchanged.empty());
        auto mark = [&](int phase) {
            return static_cast<PipelineModel::CheckMark>(
                w.pipelineModel()->data(w.pipelineModel()->index(phase, 0), PipelineModel::CheckRole).toInt());
        };
        QCOMPARE(mark(checkedPhases[0]), PipelineModel::CheckMark::None);
        w.runCheck();
        QVERIFY(waitIdle(w));
        QCOMPARE(mark(checkedPhases[0]), PipelineModel::CheckMark::Match);
        QCOMPARE(mark(checkedPhases[1]), PipelineModel::CheckMark::Match);
        QCOMPARE(mark(checkedPhases[2]), PipelineModel::CheckMark::FirstDivergent);
        QCOMPARE(mark(checkedPhases[3]), PipelineModel::CheckMark::Diverged);
        for (int p : unchanged) QCOMPARE(mark(p), PipelineModel::CheckMark::None);
        QVERIFY(w.pipelineModel()
                    ->data(w.pipelineModel()->index(checkedPhases[2], 0), Qt::ToolTipRole)
                    .toString()
                    .contains("first divergent"));
        QVERIFY(w.pipelineModel()
                    ->data(w.pipelineModel()->index(checkedPhases[2], 0), Qt::DecorationRole)
                    .canConvert<QColor>());

        QVERIFY(w.profileStatus().startsWith("No profile yet"));
        QVERIFY(!w.profileTablesShown()); // an empty Profile dock is one line
        const int here = s.currentStep();
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileTablesShown());
        QVERIFY2(w.profileStatus().startsWith(QStringLiteral("Measured on step %1:").arg(here)),
                 qPrintable(w.profileStatus()));
        QVERIFY(!w.profileDimmed());
        QVERIFY(w.profileModel()->rowCount() > 0);
        // the inspector shows the executor's plan for the node; a saved session carries it as JSON
        const NodeId first = s.graphAt(here)->toposort()[0]->id();
        w.selectNode(first);
        QVERIFY2(w.inspector()->toPlainText().contains(
                     QStringLiteral("Executor plan: node #%1: no epilogue fused — a test reason").arg(first)),
                 qPrintable(w.inspector()->toPlainText()));
        {
            QTemporaryDir dir;
            const QString path = dir.path() + "/p.passlens";
            s.saveSession(path);
            const Trace reread = SessionFile::load(path.toStdString());
            QCOMPARE(reread.profiles().size(), std::size_t(1));
            const ExecutionProfile saved = ExecutionProfile::fromJson(reread.profiles().at(0), "session");
            QCOMPARE(saved.device, std::string("cpu"));
            QCOMPARE(saved.plan.size(), std::size_t(1));
            QCOMPARE(saved.plan[0].node, first);
            QCOMPARE(saved.plan[0].reason, std::string("a test reason"));
            QCOMPARE(saved.find(first)->timeUs.value_or(-1), 10.0 + static_cast<double>(first % 7));
        }
        // the overlay: the exports' heat colours on the drawing's shares, and a legend
        QVERIFY2(w.graphView()->legend().startsWith(QString::fromUtf8("timing: 0 \u2192 ")) &&
                     w.graphView()->legend().contains("linear scale") && w.graphView()->legend().endsWith("cpu"),
                 qPrintable(w.graphView()->legend()));
        int heated = 0;
        for (GraphNodeItem* it : w.graphScene()->nodeItems())
            if (it->node().timeShare >= 0) {
                ++heated;
                QCOMPARE(GraphNodeItem::fillFor(it->node(), false, it->node().timeShare),
                         QColor(QString::fromStdString(heatColour(it->node().timeShare))));
            }
        QVERIFY(heated > 10);
        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileDimmed());
        QVERIFY2(w.profileStatus().contains("not on the step shown"), qPrintable(w.profileStatus()));
        s.setCurrentStep(here);
        QVERIFY(waitIdle(w));
        QVERIFY(!w.profileDimmed());
    }

    // Stepping onto a rewrite selects the nodes it added (the inspector shows the first) and
    // they are on screen.
    void steppingSelectsTheRewritesNewNodes() {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        auto& s = w.session();
        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        int checkedSteps = 0;
        for (int k = 1; k < static_cast<int>(s.steps().size()) && checkedSteps < 12; ++k) {
            s.setCurrentStep(k);
            QVERIFY(waitIdle(w));
            const StepPoint& st = s.steps()[static_cast<std::size_t>(k)];
            if (st.phaseEnd) continue;
            QSet<NodeId> added;
            for (NodeId id : s.trace()->events()[static_cast<std::size_t>(st.event - 1)].added)
                if (w.graphScene()->nodeItems().contains(QStringLiteral("n%1").arg(id))) added.insert(id);
            if (added.isEmpty()) continue;
            QSet<NodeId> selected;
            for (QGraphicsItem* it : w.graphScene()->selectedItems())
                selected.insert(static_cast<GraphNodeItem*>(it)->node().node);
            QCOMPARE(selected, added);
            QVERIFY(added.contains(w.inspector()->shownNode()));
            const QRectF visible = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
            bool onScreen = false;
            for (NodeId id : added)
                onScreen |= visible.intersects(
                    w.graphScene()->nodeItems().value(QStringLiteral("n%1").arg(id))->sceneBoundingRect());
            QVERIFY2(onScreen, qPrintable(QStringLiteral("step %1").arg(k)));
            ++checkedSteps;
        }
        QVERIFY(checkedSteps >= 5);
    }

    // Choosing another pipeline in the box runs it (the box never names a pipeline that did not
    // run on what is shown).
    void pipelineBoxRunsTheChosenPipeline() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/alloc_guess.graph.json", QStringLiteral("theano")));
        QCOMPARE(w.session().pipelineName(), QStringLiteral("theano"));
        QComboBox* box = w.pipelineBox();
        const int cleanup = box->findText(QStringLiteral("cleanup"));
        QVERIFY(cleanup >= 0);
        box->setCurrentIndex(cleanup);
        emit box->activated(cleanup); // as a user's choice does
        QVERIFY(waitIdle(w));
        QCOMPARE(w.session().pipelineName(), QStringLiteral("cleanup"));
        // cleanup leaves the Alloc special case's nodes on the host
        auto g = w.session().graphAt(static_cast<int>(w.session().steps().size()) - 1);
        QStringList kinds;
        for (const Apply* a : g->toposort()) kinds << QString::fromStdString(a->op().kind());
        QVERIFY2(kinds.contains("Alloc") && !kinds.contains("GpuAlloc"), qPrintable(kinds.join(',')));
    }

    // The window fits a 1024 x 700 screen: its smallest size, docks and toolbar included.
    void windowFitsASmallScreen() {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const QSize least = w.minimumSizeHint().expandedTo(w.minimumSize());
        QVERIFY2(least.width() <= 1024 && least.height() <= 700,
                 qPrintable(QStringLiteral("%1 x %2").arg(least.width()).arg(least.height())));
        w.resize(1024, 700);
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QVERIFY(w.width() <= 1024 && w.height() <= 700);
        QVERIFY(w.graphView()->width() >= 250 && w.graphView()->height() >= 200); // room for the graph
    }

    // After a re-run the inspector keeps a source node (same id, same node in every run) and
    // lets go of a node a rewrite made (its id may name another node now).
    void inspectorIdsSurviveReRunsOnlyForSourceNodes() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/alloc_guess.graph.json", QStringLiteral("theano")));
        auto& s = w.session();
        auto g = s.graphAt(static_cast<int>(s.steps().size()) - 1);
        NodeId made = -1;
        for (const Apply* a : g->toposort())
            if (s.trace()->createdBy(a->id()) > 0) made = a->id();
        QVERIFY(made >= 0);
        NodeId sourceNode = s.graphAt(0)->toposort().front()->id();
        w.selectNode(made);
        QCOMPARE(w.inspector()->shownNode(), made);
        s.runPipeline(QStringLiteral("cleanup"));
        QVERIFY(waitIdle(w));
        QCOMPARE(w.inspector()->shownNode(), NodeId(-1));
        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        w.selectNode(sourceNode);
        QCOMPARE(w.inspector()->shownNode(), sourceNode);
        s.runPipeline(QStringLiteral("theano"));
        QVERIFY(waitIdle(w));
        QCOMPARE(w.inspector()->shownNode(), sourceNode);
    }

    void phasesDisabledAndReordered() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/join_alloc.graph.json"));
        PipelineModel* pm = w.pipelineModel();
        int fusionRow = -1;
        for (int r = 0; r < pm->rowCount(); ++r)
            if (pm->data(pm->index(r, 0)).toString() == "gpua_elemwise_fusion") fusionRow = r;
        QVERIFY(fusionRow >= 0);
        QVERIFY(pm->setData(pm->index(fusionRow, 0), Qt::Unchecked, Qt::CheckStateRole));
        QCOMPARE(pm->disabledPhases(), QStringList({"gpua_elemwise_fusion"}));
        w.session().runPipeline(QStringLiteral("theano"), pm->disabledPhases(), {{QStringLiteral("merge3"), 0.5}});
        QVERIFY(waitIdle(w));
        QStringList names;
        for (const auto& p : w.session().trace()->phases()) names << QString::fromStdString(p.info.name);
        QVERIFY(!names.contains("gpua_elemwise_fusion"));
        QCOMPARE(names.at(1), QString("merge3")); // moved between merge1 (0) and useless (0.6)
        // the skipped phase stays in the tree, unchecked, after the run's phases, with no step
        const int phases = static_cast<int>(names.size());
        QCOMPARE(pm->rowCount(), phases + 1);
        const QModelIndex skipped = pm->index(phases, 0);
        QCOMPARE(pm->data(skipped).toString(), QString("gpua_elemwise_fusion"));
        QCOMPARE(pm->data(skipped, Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
        QCOMPARE(pm->data(skipped, PipelineModel::PhaseRole).toInt(), -1);
        QCOMPARE(pm->rowCount(skipped), 0);
        QCOMPARE(pm->disabledPhases(), QStringList({"gpua_elemwise_fusion"}));
        const int step = w.session().currentStep();
        auto* proxy = qobject_cast<QSortFilterProxyModel*>(w.pipelineTree()->model());
        QVERIFY(proxy);
        w.pipelineTree()->setCurrentIndex(proxy->mapFromSource(skipped));
        QCOMPARE(w.session().currentStep(), step); // no step to show
        // checked again, the next Run includes it and the row is a phase of the trace again
        QVERIFY(pm->setData(skipped, Qt::Checked, Qt::CheckStateRole));
        QVERIFY(pm->disabledPhases().isEmpty());
        w.session().runPipeline(QStringLiteral("theano"), pm->disabledPhases());
        QVERIFY(waitIdle(w));
        QCOMPARE(pm->rowCount(), static_cast<int>(w.session().trace()->phases().size()));
        bool ran = false;
        for (const auto& p : w.session().trace()->phases()) ran = ran || p.info.name == "gpua_elemwise_fusion";
        QVERIFY(ran);
    }

    void nestedGraphsOpenInTheView() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kCorpus + "/silero_vad_legacy.onnx"));
        auto g = w.session().graphAt(w.session().currentStep());
        NodeId ifNode = -1;
        for (const Apply* n : g->toposort())
            if (n->op().kind() == "OnnxIf") ifNode = n->id();
        QVERIFY(ifNode >= 0);
        const int topLevel = w.graphScene()->nodeItemCount();
        w.openNested(ifNode, QStringLiteral("else_branch"));
        QVERIFY(waitIdle(w));
        QVERIFY(w.session().showingNested());
        QVERIFY2(w.graphScene()->nodeItemCount() > topLevel + 20,
                 qPrintable(QString::number(w.graphScene()->nodeItemCount())));
        w.session().setCurrentStep(0); // stepping returns to the step's graph
        QVERIFY(waitIdle(w));
        QVERIFY(!w.session().showingNested());
    }

    void findDrawsAndRevealsAHitOutsideTheFocusedView() {
        // A 2,400-node chain is drawn as a focused view around its outputs; the node named
        // "first_neg" sits at the far end, so Find must draw its neighbourhood to show it.
        const int n = 2400;
        MainWindow w;
        QTemporaryDir dir;
        QVERIFY(openChain(w, dir, n));
        QVERIFY(w.session().layout() && w.session().layout()->focused);
        auto g = w.session().graphAt(w.session().currentStep());
        NodeId target = -1;
        for (const Apply* a : g->toposort())
            if (a->name() == "first_neg") target = a->id();
        QVERIFY(target >= 0);
        QVERIFY(!w.graphScene()->nodeIds().contains(target));

        w.findNext(QStringLiteral("first_neg"));
        QCOMPARE(w.findStatus(), QStringLiteral("match 1 of 1"));
        QVERIFY(waitIdle(w));
        QVERIFY(w.graphScene()->nodeIds().contains(target));
        QCOMPARE(w.inspector()->shownNode(), target);
        const auto selected = w.graphScene()->selectedItems();
        QCOMPARE(selected.size(), qsizetype(1));
        QVERIFY(w.graphView()->viewport()->rect().contains(
            w.graphView()->mapFromScene(selected.front()->boundingRect().center())));

        // By id, with and without '#'; by op kind (every node), cycling with wrap-around.
        w.findNext(QStringLiteral("#%1").arg(target));
        QCOMPARE(w.findStatus(), QStringLiteral("match 1 of 1"));
        w.findNext(QStringLiteral("Elemwise"));
        QCOMPARE(w.findStatus(), QStringLiteral("match 1 of %1").arg(n));
        w.findNext(QStringLiteral("Elemwise"), -1);
        w.findNext(QStringLiteral("Elemwise"), -1);
        QCOMPARE(w.findStatus(), QStringLiteral("match %1 of %2").arg(n - 1).arg(n));
        // the chain's far end was not drawn around first_neg: its neighbourhood is laid out
        QVERIFY(waitIdle(w));
        const NodeId secondLast = g->toposort()[static_cast<std::size_t>(n - 2)]->id();
        QVERIFY(w.graphScene()->nodeIds().contains(secondLast));
        QCOMPARE(w.inspector()->shownNode(), secondLast);
        w.findNext(QStringLiteral("no such thing"));
        QCOMPARE(w.findStatus(), QStringLiteral("no match"));
        // another step: the label counted that step's nodes, so it goes; Find counts afresh
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        auto countOf = [&](const char* kind) {
            int k = 0;
            for (const Apply* a : w.session().graphAt(w.session().currentStep())->toposort())
                k += a->op().kind() == kind;
            return k;
        };
        w.findNext(QStringLiteral("GpuElemwise"));
        QCOMPARE(w.findStatus(), QStringLiteral("match 1 of %1").arg(countOf("GpuElemwise")));
        w.session().setCurrentStep(0);
        QVERIFY(waitIdle(w));
        QVERIFY(w.findStatus().isEmpty());
        w.findNext(QStringLiteral("Elemwise"));
        QCOMPARE(w.findStatus(), QStringLiteral("match 1 of %1").arg(countOf("Elemwise")));
    }

    // Group by name scope: the bundled transformer layer's /self_attn, /norm1, ... scopes are one
    // box each; double-clicking a box opens it, "Close scope" closes it again, and Find opens
    // the scopes around a hit inside a closed box.
    void groupByNameScope() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        auto groups = [&] {
            std::map<std::string, GraphNodeItem*> out;
            for (GraphNodeItem* it : w.graphScene()->nodeItems())
                if (it->node().category == NodeCategory::Group) out[it->node().name] = it;
            return out;
        };
        QVERIFY(groups().empty());
        const int plain = static_cast<int>(w.graphScene()->nodeItems().size());
        QVERIFY(w.setGroupByScope(true));
        QVERIFY(waitIdle(w));
        auto top = groups();
        for (const char* scope : {"/self_attn", "/norm1", "/norm2"}) QVERIFY2(top.count(scope), scope);
        QVERIFY(static_cast<int>(w.graphScene()->nodeItems().size()) < plain / 2);
        GraphNodeItem* attn = top.at("/self_attn");
        const std::size_t members = attn->node().hiddenCount;
        QVERIFY(members >= 20);
        // every drawn node sits at the top level
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) QCOMPARE(it->node().scope, std::string());

        // a real double-click on the /self_attn box opens it
        w.graphView()->centerOn(attn);
        QTest::mouseDClick(w.graphView()->viewport(), Qt::LeftButton, {},
                           w.graphView()->mapFromScene(attn->sceneBoundingRect().center()));
        QVERIFY(waitIdle(w));
        auto opened = groups();
        QVERIFY(!opened.count("/self_attn"));
        QVERIFY(opened.count("/norm1"));
        int inside = 0;
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) inside += it->node().scope == "/self_attn";
        QVERIFY(inside >= 2);
        QCOMPARE(w.session().scopeGrouping()->expanded, (std::set<std::string>{"/self_attn"}));

        // stepping keeps the grouping: the source graph has the same closed scopes
        w.session().setCurrentStep(0);
        QVERIFY(waitIdle(w));
        QVERIFY(groups().count("/norm1"));
        QVERIFY(!groups().count("/self_attn"));

        QVERIFY(w.closeScope(QStringLiteral("/self_attn")));
        QVERIFY(waitIdle(w));
        QVERIFY(groups().count("/self_attn"));
        QVERIFY(!w.closeScope(QStringLiteral("/self_attn"))); // already closed
        QVERIFY(!w.openScope(QStringLiteral("n1")));          // not a scope box

        // Find a node inside the closed /norm2 box: its scope opens, the node is drawn and selected
        auto g = w.session().graphAt(w.session().currentStep());
        NodeId target = -1;
        std::string targetName;
        for (const Apply* a : g->toposort())
            if (a->name().rfind("/norm2/", 0) == 0) {
                target = a->id();
                targetName = a->name();
                break;
            }
        QVERIFY(target >= 0);
        QVERIFY(!w.graphScene()->nodeIds().contains(target));
        w.findNext(QString::fromStdString(targetName));
        QVERIFY(waitIdle(w));
        QVERIFY(w.graphScene()->nodeIds().contains(target));
        QCOMPARE(w.inspector()->shownNode(), target);

        QVERIFY(w.setGroupByScope(false));
        QVERIFY(waitIdle(w));
        QVERIFY(groups().empty());
    }

    // Double-clicking the "… N nodes" placeholder of a focused view draws more of what it hides.
    void placeholderExpandsOnDoubleClick() {
        const int n = 2400;
        MainWindow w;
        QTemporaryDir dir;
        QVERIFY(openChain(w, dir, n));
        auto placeholder = [&]() -> GraphNodeItem* {
            for (GraphNodeItem* it : w.graphScene()->nodeItems())
                if (it->node().category == NodeCategory::Collapsed) return it;
            return nullptr;
        };
        GraphNodeItem* c = placeholder();
        QVERIFY(c);
        const std::size_t hidden = c->node().hiddenCount;
        const int drawn = w.graphScene()->nodeIds().size();
        // one chain: one placeholder upstream, standing for the hidden Elemwise nodes and the input
        QCOMPARE(hidden + std::size_t(drawn), std::size_t(n) + 1);
        // a real double-click on the box
        w.graphView()->centerOn(c);
        QTest::mouseDClick(w.graphView()->viewport(), Qt::LeftButton, {},
                           w.graphView()->mapFromScene(c->sceneBoundingRect().center()));
        QVERIFY(waitIdle(w));
        QCOMPARE(w.graphScene()->nodeIds().size(), drawn + 60);
        int placeholders = 0;
        for (GraphNodeItem* it : w.graphScene()->nodeItems())
            placeholders += it->node().category == NodeCategory::Collapsed;
        QCOMPARE(placeholders, 1); // still one: the output box stays drawn
        GraphNodeItem* after = placeholder();
        QVERIFY(after);
        QCOMPARE(after->node().hiddenCount, hidden - 60);
        // the programmatic form, with its own batch
        QCOMPARE(w.expandPlaceholder(QString::fromStdString(after->node().key), 100), 100);
        QVERIFY(waitIdle(w));
        QCOMPARE(w.graphScene()->nodeIds().size(), drawn + 160);
        QCOMPARE(w.expandPlaceholder(QStringLiteral("n1")), 0); // not a placeholder
    }

    // The rewrite filter keeps one rewrite's events in the tree; Ctrl+Right / Ctrl+Left step
    // through that rewrite's applied events only.
    void rewriteFilterAndStepping() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        auto& s = w.session();
        // the rewrite with the most applied events
        std::map<std::string, std::vector<int>> applied;
        for (const RewriteEvent& e : s.trace()->events())
            if (e.status == EventStatus::Applied) applied[e.rewriter].push_back(e.seq);
        auto most = std::max_element(applied.begin(), applied.end(),
                                     [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
        QVERIFY(most != applied.end() && most->second.size() >= 3);
        const QString name = QString::fromStdString(most->first);

        w.rewriteFilter()->setText(name);
        QTreeView* tree = w.pipelineTree();
        int shownEvents = 0;
        for (int p = 0; p < tree->model()->rowCount(); ++p) {
            const QModelIndex phase = tree->model()->index(p, 0);
            QVERIFY(tree->model()->rowCount(phase) > 0); // phases without such events are hidden
            for (int r = 0; r < tree->model()->rowCount(phase); ++r) {
                QVERIFY(tree->model()
                            ->index(r, 0, phase)
                            .data(PipelineModel::RewriterRole)
                            .toString()
                            .contains(name, Qt::CaseInsensitive));
                ++shownEvents;
            }
        }
        QVERIFY(shownEvents >= static_cast<int>(most->second.size()));

        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        std::vector<int> visited;
        while (w.stepToRewrite(1)) {
            QVERIFY(waitIdle(w));
            visited.push_back(s.steps()[static_cast<std::size_t>(s.currentStep())].event);
            QVERIFY(visited.size() <= most->second.size() + 5);
        }
        std::vector<int> expected;
        for (const auto& [rewriter, seqs] : applied)
            if (QString::fromStdString(rewriter).contains(name, Qt::CaseInsensitive))
                expected.insert(expected.end(), seqs.begin(), seqs.end());
        std::sort(expected.begin(), expected.end());
        QCOMPARE(visited, expected);

        // Without a filter, Ctrl+Left goes to the previous event of the rewrite shown.
        w.rewriteFilter()->clear();
        QTest::keyClick(&w, Qt::Key_Left, Qt::ControlModifier);
        QVERIFY(waitIdle(w));
        QCOMPARE(s.steps()[static_cast<std::size_t>(s.currentStep())].event, expected[expected.size() - 2]);
    }

    // Tools > Compare draws both pipelines' final graphs as one diff. On alloc_guess theano
    // lifts the Alloc special case (GpuAlloc, exp on the GPU, one more transfer back) while
    // cleanup leaves Alloc and exp on the host; the tanh branch comes out alike from both and
    // is drawn once, although each run gave its new nodes ids of its own.
    void compareDrawsBothFinalGraphs() {
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/alloc_guess.graph.json", QStringLiteral("theano")));
        w.compareWith(QStringLiteral("theano")); // never against itself
        QVERIFY(!w.compareDialog());
        w.compareWith(QStringLiteral("cleanup"));
        QVERIFY(waitIdle(w));
        QDialog* dlg = w.compareDialog();
        QVERIFY(dlg);
        auto* view = dlg->findChild<GraphView*>(QStringLiteral("compareView"));
        QVERIFY(view);
        auto* scene = qobject_cast<GraphScene*>(view->scene());
        QVERIFY(scene);
        QStringList removed, added, shared;
        for (GraphNodeItem* it : scene->nodeItems()) {
            const LayoutNode& n = it->node();
            if (n.node < 0) continue;
            const QString title = QString::fromStdString(n.title);
            if (n.change == NodeChange::Removed)
                removed << title;
            else if (n.change == NodeChange::Added)
                added << title;
            else
                shared << title;
            if (n.change != NodeChange::Added) QVERIFY2(it->toolTip().contains("theano: "), qPrintable(it->toolTip()));
            if (n.change != NodeChange::Removed)
                QVERIFY2(it->toolTip().contains("cleanup: "), qPrintable(it->toolTip()));
        }
        removed.sort();
        added.sort();
        shared.sort();
        QCOMPARE(removed, (QStringList{"GpuAlloc<None>{memset_0=False}", "GpuElemwise{exp}<gpuarray>",
                                       "HostFromGpu(gpuarray)"}));
        QCOMPARE(added, (QStringList{"Alloc", "Elemwise{exp}"}));
        QCOMPARE(shared, (QStringList{"GpuElemwise{tanh}<gpuarray>", "GpuFromHost<None>", "HostFromGpu(gpuarray)"}));
        // a double-click on a node only in the shown run goes to the rewrite that made it
        auto& s = w.session();
        int visited = 0;
        for (GraphNodeItem* it : scene->nodeItems()) {
            const LayoutNode& n = it->node();
            if (n.node < 0 || n.change != NodeChange::Removed) continue;
            const int made = s.trace()->createdBy(n.node);
            QVERIFY(made > 0);
            s.setCurrentStep(0);
            emit scene->nodeActivated(QString::fromStdString(n.key));
            QCOMPARE(s.steps()[static_cast<std::size_t>(s.currentStep())].event, made);
            QCOMPARE(w.inspector()->shownNode(), n.node);
            ++visited;
        }
        QCOMPARE(visited, 3);
        dlg->close();
    }

    // A provenance link ("created by #N") draws the node's neighbourhood first, then the whole
    // step; the node is selected and on screen in both drawings.
    void provenanceJumpDrawsTheNeighbourhoodFirst() {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        auto& s = w.session();
        const auto [target, created] = newestNode(s, s.currentStep());
        QVERIFY(target >= 0 && created > 0);
        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        QVERIFY(!w.graphScene()->nodeIds().contains(target));
        // each drawing shown, as the window showed it (its handler runs before this one)
        struct Shown {
            bool focused;
            QString reason;
            bool hasTarget;
            NodeId inspected;
            bool targetSelected;
        };
        QList<Shown> shown;
        connect(&s, &DebugSession::layoutReady, this, [&] {
            const auto sel = w.graphScene()->selectedItems();
            shown << Shown{s.layout()->focused, QString::fromStdString(s.layout()->focusReason),
                           w.graphScene()->nodeIds().contains(target), w.inspector()->shownNode(),
                           sel.size() == 1 && static_cast<GraphNodeItem*>(sel.front())->node().node == target};
        });
        w.jumpToEvent(created, target);
        QVERIFY(s.followUpPending());
        QVERIFY(QTest::qWaitFor([&] { return !s.followUpPending() && shown.size() >= 2; }, 600000));
        QCOMPARE(shown.size(), qsizetype(2));
        // first a focused view around the node, already selected and inspected
        QVERIFY(shown[0].focused);
        QVERIFY2(shown[0].reason.contains("neighbourhood"), qPrintable(shown[0].reason));
        QVERIFY(shown[0].hasTarget && shown[0].targetSelected);
        QCOMPARE(shown[0].inspected, target);
        // then the whole step, the node still selected and on screen
        QVERIFY(!shown[1].focused);
        QVERIFY(shown[1].hasTarget && shown[1].targetSelected);
        QCOMPARE(static_cast<std::size_t>(w.graphScene()->nodeIds().size()), s.graphAt(s.currentStep())->nodeCount());
        const auto selected = w.graphScene()->selectedItems();
        QCOMPARE(selected.size(), qsizetype(1));
        QVERIFY(w.graphView()->viewport()->rect().contains(
            w.graphView()->mapFromScene(selected.front()->boundingRect().center())));
        QCOMPARE(s.steps()[static_cast<std::size_t>(s.currentStep())].event, created);
    }

    // A provenance jump shows the busy indicator at once; Esc cancels its layout: the request ends
    // as cancelled (nothing drawn), the view keeps the previous drawing and says which step it
    // is, and the next step draws (its request has its own cancel token).
    void provenanceJumpCanBeCancelled() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        auto& s = w.session();
        const int last = static_cast<int>(s.steps().size()) - 1;
        const auto [target, created] = newestNode(s, last);
        QVERIFY(target >= 0 && created > 0);
        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        QVERIFY(!w.busyIndicatorShown());
        QVERIFY(!s.cancelLayout()); // nothing pending
        const auto sourceIds = w.graphScene()->nodeIds();
        const std::size_t sourceNodes = s.layout()->nodes.size();
        QStringList ends;
        connect(&s, &DebugSession::layoutReady, this, [&] { ends << "drawn"; });
        connect(&s, &DebugSession::layoutFailed, this, [&] { ends << "failed"; });
        connect(&s, &DebugSession::layoutCancelled, this, [&] { ends << "cancelled"; });
        bool idle = false, idleOk = true;
        w.whenIdle([&](bool ok, const QString&) {
            idle = true;
            idleOk = ok;
        });
        w.jumpToEvent(created, target);
        QVERIFY(s.layoutPending() && s.followUpPending());
        QVERIFY(w.busyIndicatorShown());
        QVERIFY2(w.busyStatus().contains("neighbourhood"), qPrintable(w.busyStatus()));
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(QTest::qWaitFor([&] { return !ends.isEmpty(); }, 600000));
        QCOMPARE(ends, QStringList{"cancelled"});
        QVERIFY(idle && !idleOk);
        QVERIFY(!s.layoutPending() && !s.followUpPending()); // no whole-step drawing follows
        QVERIFY(!w.busyIndicatorShown());
        // the step moved, the drawing did not, and the window says so
        QCOMPARE(s.steps()[static_cast<std::size_t>(s.currentStep())].event, created);
        QCOMPARE(w.graphScene()->nodeIds(), sourceIds);
        QCOMPARE(s.layout()->nodes.size(), sourceNodes);
        QVERIFY2(w.summaryText().contains(QStringLiteral("still shows step 0 (source)")), qPrintable(w.summaryText()));
        // a later step draws
        s.setCurrentStep(last);
        QVERIFY(waitIdle(w));
        QCOMPARE(ends, QStringList({"cancelled", "drawn"}));
        QCOMPARE(static_cast<std::size_t>(w.graphScene()->nodeIds().size()), s.graphAt(last)->nodeCount());
        QVERIFY(w.graphScene()->nodeIds().contains(target));
        // superseded requests are dropped quietly and cancel only themselves: a step requested
        // after a cancelled one draws
        ends.clear();
        s.setCurrentStep(0);
        QVERIFY(s.cancelLayout());
        s.setCurrentStep(1);
        QVERIFY(waitIdle(w));
        QCOMPARE(ends, QStringList{"drawn"});
        QCOMPARE(s.currentStep(), 1);
    }

    // Stepping again before the drawing of the step arrives: the first layout request is
    // superseded (its own token cancelled at once, so Graphviz stops on it, while the newest
    // request's token is not) and only the newest request's drawing reaches the view.
    void supersededLayoutNeverReachesTheView() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        auto& s = w.session();
        const int last = static_cast<int>(s.steps().size()) - 1;
        QVERIFY(last >= 2);
        s.setCurrentStep(1);
        QVERIFY(waitIdle(w));
        QSignalSpy ends(&s.jobs(), &JobRunner::finished);
        int drawn = 0;
        connect(&s, &DebugSession::layoutReady, this, [&] { ++drawn; });
        s.setCurrentStep(0); // the source: Alloc and Join
        const JobId superseded = s.jobs().newest(layoutLane());
        QVERIFY(superseded != 0);
        QVERIFY(!s.jobs().cancelRequested(superseded));
        s.setCurrentStep(last);
        const JobId newest = s.jobs().newest(layoutLane());
        QVERIFY(newest != 0 && newest != superseded);
        QVERIFY(s.jobs().cancelRequested(superseded));
        QVERIFY(!s.jobs().cancelRequested(newest));
        QVERIFY(waitIdle(w));
        QVERIFY(QTest::qWaitFor([&] { return s.jobs().runningCount() == 0; }, 600000));
        QCOMPARE(drawn, 1);
        auto ids = [](const FunctionGraph& g) {
            QList<NodeId> out;
            for (const Apply* a : g.toposort()) out << a->id();
            std::sort(out.begin(), out.end());
            return out;
        };
        QList<NodeId> shown = w.graphScene()->nodeIds();
        std::sort(shown.begin(), shown.end());
        QCOMPARE(shown, ids(*s.graphAt(last)));
        QVERIFY(shown != ids(*s.graphAt(0)));
        std::map<JobId, JobEnd> how;
        for (const auto& e : ends) how[e.at(0).value<JobId>()] = e.at(2).value<JobEnd>();
        QCOMPARE(how.size(), std::size_t(2));
        QCOMPARE(how.at(superseded), JobEnd::Superseded);
        QCOMPARE(how.at(newest), JobEnd::Done);
    }

    // Esc cancels the running execution through its own token (the backend stops and says so,
    // nothing is profiled); the next execution has a token of its own and profiles the step.
    void executionIsCancelledPerRequest() {
        MainWindow w;
        auto backend = std::make_shared<CancellableBackend>();
        w.setExecutionBackend(backend);
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        bool idle = false, idleOk = true;
        QString message;
        w.whenIdle([&](bool ok, const QString& m) {
            idle = true;
            idleOk = ok;
            message = m;
        });
        w.executeCurrent();
        backend->started.acquire(); // the worker runs until its token is cancelled
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(QTest::qWaitFor([&] { return idle; }, 600000));
        QVERIFY(!idleOk);
        QCOMPARE(message, QStringLiteral("cancelled by the user"));
        QVERIFY(!w.profileTablesShown());
        QCOMPARE(w.profileModel()->rowCount(), 0);
        backend->block = false;
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileTablesShown());
        QCOMPARE(static_cast<std::size_t>(w.profileModel()->rowCount()),
                 w.session().graphAt(w.session().currentStep())->nodeCount());
    }

    void sessionReopensOnTheSameStep() {
        QTemporaryDir dir;
        const QString path = dir.path() + "/s.passlens.json";
        int step = 0;
        std::size_t nodes = 0;
        {
            MainWindow w;
            w.show();
            QVERIFY(openAndWait(w, kCorpus + "/lstm.onnx"));
            w.session().setCurrentStep(3);
            QVERIFY(waitIdle(w));
            step = w.session().currentStep();
            nodes = w.session().graphAt(step)->nodeCount();
            w.session().saveSession(path);
        }
        MainWindow w2;
        w2.show();
        QVERIFY(openAndWait(w2, path));
        QCOMPARE(w2.session().currentStep(), step);
        QCOMPARE(w2.session().graphAt(step)->nodeCount(), nodes);
        QCOMPARE(w2.session().pipelineName(), QString("theano"));
    }

    void eventLoopNeverStalls_data() {
        QTest::addColumn<QString>("model");
        for (const char* m : {"mlp", "lstm", "transformer_encoder_layer", "squeezenet1_1", "resnet18", "mobilenet_v2",
                              "shape_ops", "silero_vad_legacy", "ch_PP-OCRv4_det_infer"})
            QTest::newRow(m) << QString(m);
    }
    void eventLoopNeverStalls() {
        QFETCH(QString, model);
        MainWindow w;
        w.show();
        measuringApp()->startRecording();
        const bool opened = openAndWait(w, kCorpus + "/" + model + ".onnx", QStringLiteral("theano"));
        // step back through a few phases too (graphs rebuilt from the trace)
        bool stepped = opened;
        for (int i = 0; stepped && i < 3; ++i) {
            w.session().previousPhase();
            stepped = waitIdle(w);
        }
        measuringApp()->stopRecording();
        QVERIFY(opened);
        QVERIFY(stepped);
        QVERIFY2(measuringApp()->worstMicros() > 0, "no event was measured");
        QVERIFY2(measuringApp()->worstMicros() < 200000, qPrintable(measuringApp()->worstDescription()));
        qInfo("%s: worst event %s", qPrintable(model), qPrintable(measuringApp()->worstDescription()));
    }
};

int main(int argc, char** argv) {
    MeasuringApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    TestGui test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_gui.moc"
