// What the window's test executables (tst_gui, tst_gui_views, tst_gui_profile) share: opening a
// file and waiting for the window to be idle, a generated chain graph, the newest node of a
// step, and execution backends for the tests (ui/ links no kernels). Header only: each
// executable is one source file.
#pragma once

#include "passlens/ui/ExecutionBackend.h"
#include "GraphScene.h"
#include "GraphView.h"
#include "InspectorWidget.h"
#include "JobRunner.h"
#include "passlens/ui/MainWindow.h"
#include "PipelineModel.h"
#include "ProfileModel.h"

#include <passlens/io/SessionFile.h>
#include <passlens/io/AtomicFile.h>
#include <passlens/io/GraphJson.h>
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

#include <algorithm>
#include <map>
#include <set>

namespace passlens::guitest {
inline const QString kSource = QStringLiteral(PASSLENS_SOURCE_DIR);
inline const QString kCorpus = QStringLiteral(PASSLENS_CORPUS_DIR);

// Opens `file` and waits until the pipeline and the first layout are done. The timeout only
// guards against a hang; it is far above any run on a loaded machine.
inline bool openAndWait(MainWindow& w, const QString& file, const QString& pipeline = QStringLiteral("theano"),
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
inline bool showAndOpen(MainWindow& w, const QString& file, const QString& pipeline = QStringLiteral("theano")) {
    w.resize(1400, 900);
    w.show();
    return QTest::qWaitForWindowExposed(&w) && openAndWait(w, file, pipeline);
}

// Waits until `w` is idle; false when it settled on a failure (whose message is printed) or
// when it is still busy after `timeoutMs`, a hang guard.
inline bool waitIdle(MainWindow& w, int timeoutMs = 600000) {
    bool done = false, ok = false;
    QString why;
    w.whenIdle([&](bool good, const QString& message) {
        done = true;
        ok = good;
        why = message;
    });
    if (!QTest::qWaitFor([&] { return done; }, timeoutMs))
        qWarning("the window is still busy after %d ms: %s", timeoutMs, qPrintable(w.busyStatus()));
    else if (!ok)
        qWarning("the window settled on a failure: %s", qPrintable(why));
    return done && ok;
}

// Writes a chain of `n` Elemwise nodes (exp, neg, exp, ...; node 1 is named "first_neg", the
// others "stepK") as graph JSON in `dir`; returns its path, empty on failure.
/// "x,y wxh" of a rectangle, for failure messages.
inline QString rectText(const QRect& r) {
    return QStringLiteral("%1,%2 %3x%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
}

inline QString writeChainGraph(const QTemporaryDir& dir, int n) {
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
inline std::pair<NodeId, int> newestNode(DebugSession& s, int step) {
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
        p.wallUs = 100; // (a spread over a quarter of it: the Profile dock calls it noisy)
        p.wallStdUs = 40;
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
inline bool openChain(MainWindow& w, const QTemporaryDir& dir, int n) {
    const QString path = dir.isValid() ? writeChainGraph(dir, n) : QString();
    if (path.isEmpty()) return false;
    w.resize(1200, 800);
    w.show();
    return openAndWait(w, path, QStringLiteral("none"));
}

// How the window next becomes idle (MainWindow::whenIdle): `ok` and the message it gives.
struct IdleEnd {
    bool ended = false, ok = true;
    QString message;
    explicit IdleEnd(MainWindow& w) {
        w.whenIdle([this](bool good, const QString& m) {
            ended = true;
            ok = good;
            message = m;
        });
    }
    // Waits until it happened; false on timeout (a hang guard only).
    bool wait(int timeoutMs = 600000) {
        return QTest::qWaitFor([this] { return ended; }, timeoutMs);
    }
};

// Chooses `pipeline` in the tool bar's pipeline box as a user does; false when it is not there.
inline bool choosePipeline(MainWindow& w, const QString& pipeline) {
    QComboBox* box = w.pipelineBox();
    const int index = box->findText(pipeline);
    if (index < 0) return false;
    box->setCurrentIndex(index);
    emit box->activated(index);
    return true;
}

// What every window test case does first: no modal dialogs (their messages go to the status bar
// and the log) and settings of its own.
inline void initGuiTestCase() {
    qputenv("PASSLENS_NO_DIALOGS", "1");
    QCoreApplication::setOrganizationName(QStringLiteral("PassLensTest"));
}
} // namespace passlens::guitest
