// The debugger window (offscreen), execution: a profile row selects its node, Execute > Check
// marks the phases and the profile says which step it was measured on, the inspector follows
// the step shown, a phase row selects what the phase changed, an execution is cancelled through
// its own token, and pipeline runs and checks are cancelled or superseded.
#include "tst_gui.h"

#include <passlens/layout/DotWriter.h>
#include <passlens/trace/TraceSteps.h>

#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QStatusBar>
#include <QToolBar>
#include <QTreeView>

using namespace passlens;
using namespace passlens::guitest;

class TestGuiProfile : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { guitest::initGuiTestCase(); }

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

    // After F5, a mouse click on a profile row whose node is off screen selects the node,
    // inspects it and brings it on screen.
    void profileRowClickBringsTheNodeOnScreen() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        w.setExecutionBackend(std::make_shared<FakeBackend>(0));
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QTest::keyClick(&w, Qt::Key_F5);
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileTablesShown());
        QTableView* table = w.profileTable();
        auto onScreen = [&](NodeId id) {
            GraphNodeItem* item = w.graphScene()->nodeItems().value(QStringLiteral("n%1").arg(id));
            return item && w.graphView()->viewport()->rect().contains(
                               w.graphView()->mapFromScene(item->sceneBoundingRect().center()));
        };
        int row = -1;
        for (int r = 0; r < table->model()->rowCount() && row < 0; ++r) {
            const NodeId id = table->model()->index(r, 0).data(ProfileModel::NodeIdRole).toLongLong();
            if (w.graphScene()->nodeItems().contains(QStringLiteral("n%1").arg(id)) && !onScreen(id)) row = r;
        }
        QVERIFY(row >= 0); // opened readable on the output: most nodes are off screen
        const QModelIndex cell = table->model()->index(row, 1);
        const NodeId target = cell.data(ProfileModel::NodeIdRole).toLongLong();
        table->scrollTo(cell);
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(cell).center());
        QCOMPARE(w.inspector()->shownNode(), target);
        const auto sel = w.graphScene()->selectedItems();
        QCOMPARE(sel.size(), qsizetype(1));
        QCOMPARE(static_cast<GraphNodeItem*>(sel.first())->node().node, target);
        QVERIFY(onScreen(target));
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
        QVERIFY(!w.checkLegend()->isVisible());
        w.runCheck();
        QVERIFY(waitIdle(w));
        // the squares explained under the tree
        QVERIFY(w.checkLegend()->isVisible());
        QVERIFY(w.checkLegend()->text().contains(QStringLiteral("first divergent")));
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
        // with its run-to-run spread, called noisy over a quarter of the wall time
        QVERIFY2(w.profileStatus().endsWith(QString::fromUtf8(
                     "(cpu) · 100.0 \u00b5s ± 40.0 \u00b5s per run over 1 run (noisy: more repeats steady it)")),
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
            if (it->node().timing) {
                ++heated;
                QCOMPARE(GraphNodeItem::fillFor(it->node(), false, it->node().timing->share),
                         QColor(QString::fromStdString(heatColour(it->node().timing->share))));
            }
        QVERIFY(heated > 10);
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) QVERIFY(!it->timingDimmed());
        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileDimmed());
        QVERIFY2(w.profileStatus().contains("not on the step shown"), qPrintable(w.profileStatus()));
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) QVERIFY(!it->node().timing || it->timingDimmed());
        // on another step the drawing's heat is dimmed as the table is (a third of the heat over
        // the node's own fill), and the legend names the step it was measured on: the step before
        // the measured one shares most of its nodes
        s.setCurrentStep(here - 1);
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileDimmed());
        QVERIFY2(w.graphView()->legend().startsWith(
                     QStringLiteral("measured on step %1, not the step shown (dimmed; F5 times this one) · timing: ")
                         .arg(here)),
                 qPrintable(w.graphView()->legend()));
        int dimmed = 0;
        for (GraphNodeItem* it : w.graphScene()->nodeItems())
            if (it->node().timing) {
                ++dimmed;
                QVERIFY(it->timingDimmed());
                const QColor heat = QColor(QString::fromStdString(heatColour(it->node().timing->share)));
                const QColor own = GraphNodeItem::fillFor(it->node(), false);
                const QColor fill = GraphNodeItem::fillFor(it->node(), false, it->node().timing->share, true);
                QVERIFY2(std::abs(fill.redF() - (own.redF() + (heat.redF() - own.redF()) / 3)) < 0.01 &&
                             std::abs(fill.blueF() - (own.blueF() + (heat.blueF() - own.blueF()) / 3)) < 0.01,
                         qPrintable(fill.name() + " " + heat.name() + " " + own.name()));
            }
        QVERIFY(dimmed > 10);
        // an export of that step says so in its legend (it showed the times as this step's)
        {
            const DrawGraph exported = s.drawingRequest().draw();
            QCOMPARE(exported.timing.measuredOn, "step " + std::to_string(here));
            QVERIFY(QString::fromStdString(writeDot(exported))
                        .contains(QStringLiteral("measured on step %1, not the step drawn").arg(here)));
        }
        s.setCurrentStep(here);
        QVERIFY(waitIdle(w));
        QVERIFY(!w.profileDimmed());
        QVERIFY(w.graphView()->legend().startsWith(QStringLiteral("timing: ")));
        QVERIFY(s.drawingRequest().draw().timing.measuredOn.empty());
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) QVERIFY(!it->timingDimmed());
    }

    // Esc cancels the running execution through its own token (the backend stops and says so,
    // nothing is profiled); the next execution has a token of its own and profiles the step.
    void executionIsCancelledPerRequest() {
        MainWindow w;
        auto backend = std::make_shared<CancellableBackend>();
        w.setExecutionBackend(backend);
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        IdleEnd idle(w);
        w.executeCurrent();
        backend->started.acquire(); // the worker runs until its token is cancelled
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(idle.wait());
        QVERIFY(!idle.ok);
        QCOMPARE(idle.message, QStringLiteral("cancelled by the user"));
        QVERIFY(!w.profileTablesShown());
        QCOMPARE(w.profileModel()->rowCount(), 0);
        backend->block = false;
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileTablesShown());
        QCOMPARE(static_cast<std::size_t>(w.profileModel()->rowCount()),
                 w.session().graphAt(w.session().currentStep())->nodeCount());
    }

    // The Timing overlay button is off and greyed out while there is no profile (a click does
    // nothing); the first profile turns it on and the drawing shows it; another file forgets the
    // profile and greys the button out again.
    void timingOverlayWaitsForAProfile() {
        MainWindow w;
        w.setExecutionBackend(std::make_shared<FakeBackend>(1000));
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        QAction* overlay = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text() == QStringLiteral("Timing overlay")) overlay = a;
        QVERIFY(overlay);
        auto* toolBar = w.findChild<QToolBar*>(QStringLiteral("mainToolBar"));
        QVERIFY(toolBar);
        QWidget* button = toolBar->widgetForAction(overlay);
        QVERIFY(button && button->isVisible());
        QVERIFY(!overlay->isChecked());
        QVERIFY(!overlay->isEnabled() && !button->isEnabled());
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(!overlay->isChecked());
        QVERIFY(!w.session().profile());
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        QVERIFY(overlay->isEnabled() && button->isEnabled());
        QVERIFY(overlay->isChecked());
        QVERIFY(w.session().profile());
        QVERIFY(std::any_of(w.session().layout()->nodes.begin(), w.session().layout()->nodes.end(),
                            [](const LayoutNode& n) { return n.timing.has_value(); }));
        QTest::mouseClick(button, Qt::LeftButton); // off: the drawing without times
        QVERIFY(waitIdle(w));
        QVERIFY(!overlay->isChecked());
        QVERIFY(!w.session().profile());
        QVERIFY(std::none_of(w.session().layout()->nodes.begin(), w.session().layout()->nodes.end(),
                             [](const LayoutNode& n) { return n.timing.has_value(); }));
        QVERIFY(openAndWait(w, kSource + "/resources/examples/alloc_guess.graph.json"));
        QVERIFY(!overlay->isChecked() && !overlay->isEnabled());
    }

    // Executing the step the window opened on keeps what it opened on in sight: the Profile
    // dock takes height and the timing legend covers the pane's bottom, yet the transformer
    // example (opened readable on its output) keeps its output box whole above the legend, and
    // the teaching example (opened fitted) stays whole, none of its boxes under the legend (nor
    // under the minimap), and lstm, fitted, is framed again in the shorter pane.
    // Once the user scrolls, the view stays where they put it.
    void executingKeepsTheOpeningInSight() {
        MainWindow w;
        w.setExecutionBackend(std::make_shared<FakeBackend>(1000));
        w.resize(1400, 900);
        w.show();
        // everyBox: every box whole on the pane, none under the legend or the minimap; else the
        // bottom-most output box so (lstm has three outputs, y below h_n and c_n)
        const auto check = [&](MainWindow& win, const QString& where, bool everyBox) {
            GraphView* view = win.graphView();
            const QRect legend = view->legendRect();
            QVERIFY2(!legend.isNull(), qPrintable(where));
            const QRect port = view->viewport()->geometry();
            int outputs = 0, clearOutputs = 0;
            std::optional<QRect> lowestOutput;
            bool lowestClear = false;
            QStringList seen;
            for (GraphNodeItem* it : win.graphScene()->nodeItems()) {
                const QRect box = view->mapFromScene(it->sceneBoundingRect()).boundingRect().translated(port.topLeft());
                const bool output = it->node().category == NodeCategory::Output;
                if (!output && !everyBox) continue;
                outputs += output;
                const bool clear =
                    port.contains(box) && !box.intersects(legend) && !box.intersects(view->minimapRect());
                clearOutputs += output && clear;
                if (output && (!lowestOutput || box.bottom() > lowestOutput->bottom())) {
                    lowestOutput = box;
                    lowestClear = clear;
                }
                seen << QStringLiteral("%1 at %2").arg(QString::fromStdString(it->node().key), rectText(box));
                if (everyBox) QVERIFY2(clear, qPrintable(where + ": " + seen.back()));
            }
            const QRect map = view->minimapRect();
            QVERIFY2(outputs >= 1 && clearOutputs >= 1 && lowestClear,
                     qPrintable(QStringLiteral("%1: %2; legend %3, minimap %4")
                                    .arg(where, seen.join(", "), rectText(legend), rectText(map))));
        };
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QVERIFY(w.graphView()->zoom() >= 0.75); // (opened on its output, too tall to fit readable)
        const int portBefore = w.graphView()->viewport()->height();
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        QVERIFY(w.profileTablesShown());
        QVERIFY(w.graphView()->viewport()->height() < portBefore); // the Profile dock took height
        check(w, QStringLiteral("transformer"), false);
        if (QTest::currentTestFailed()) return;
        // a click on the canvas (to focus it) keeps the anchor; a drag or a scroll drops it
        GraphView* view = w.graphView();
        QVERIFY(view->anchored());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, QPoint(5, 5));
        QVERIFY(view->anchored());
        // scrolled by the user: a redraw of the step (the overlay off) keeps the view there
        view->verticalScrollBar()->triggerAction(QAbstractSlider::SliderPageStepSub); // (as its track clicked)
        const QPointF centre = view->mapToScene(view->viewport()->rect().center());
        QVERIFY(!view->anchored());
        w.session().setProfile(std::nullopt);
        w.session().requestLayout();
        QVERIFY(waitIdle(w));
        const QPointF after = view->mapToScene(view->viewport()->rect().center());
        QVERIFY2(std::abs(after.y() - centre.y()) < 60,
                 qPrintable(QStringLiteral("centre %1 then %2").arg(centre.y()).arg(after.y())));

        QVERIFY(openAndWait(w, kSource + "/resources/examples/teaching.graph.json", QStringLiteral("cleanup")));
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        check(w, QStringLiteral("teaching"), true);
        if (QTest::currentTestFailed()) return;
        // lstm opens fitted in a pane the Profile dock then shortens: framed again, on its output
        // above the legend (it went below the pane)
        MainWindow fresh;
        fresh.setExecutionBackend(std::make_shared<FakeBackend>(1000));
        fresh.resize(1216, 760);
        fresh.show();
        QVERIFY(openAndWait(fresh, kCorpus + "/lstm.onnx"));
        QVERIFY(!fresh.graphView()->minimapVisible()); // (opened whole)
        const int before = fresh.graphView()->viewport()->height();
        fresh.executeCurrent();
        QVERIFY(waitIdle(fresh));
        QVERIFY(fresh.graphView()->viewport()->height() < before);
        check(fresh, QStringLiteral("lstm"), false); // (too tall now to fit readable: on its output)
    }

    // The pipeline tree's phase names stay readable in a narrow dock (they were all "…" once the
    // counts of a 20k-node graph and the check marks filled it): the names get what they need
    // up to half the tree, the figure columns the rest, nothing scrolls sideways; in a wide dock
    // every column gets its whole contents. A phase's figures are its count and change
    // ("20001 (−2222)"), shorter than "22223 → 20001".
    void pipelineTreeKeepsNamesReadable() {
        MainWindow w;
        w.setExecutionBackend(std::make_shared<FakeBackend>(1000));
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/teaching.graph.json", QStringLiteral("cleanup")));
        w.runCheck(); // (the marks widen the first column)
        QVERIFY(waitIdle(w));
        // the figures: a phase's count after it and its change (before → after in the tooltip);
        // an event's tooltip names its rewrite whole
        PipelineModel* pm = w.pipelineModel();
        const Trace& t = *w.session().trace();
        for (int r = 0; r < static_cast<int>(t.phases().size()); ++r) {
            const PhaseRecord& p = t.phases()[static_cast<std::size_t>(r)];
            const long long d = static_cast<long long>(p.nodesAfter) - static_cast<long long>(p.nodesBefore);
            const QString want =
                d == 0 ? QString::number(p.nodesAfter)
                       : QStringLiteral("%1 (%2%3)").arg(p.nodesAfter).arg(d > 0 ? "+" : "−").arg(std::llabs(d));
            QCOMPARE(pm->data(pm->index(r, PipelineModel::Nodes)).toString(), want);
            QVERIFY(pm->data(pm->index(r, 0), Qt::ToolTipRole)
                        .toString()
                        .contains(QStringLiteral("%1 → %2 nodes").arg(p.nodesBefore).arg(p.nodesAfter)));
            if (pm->rowCount(pm->index(r, 0)) > 0) {
                const QModelIndex event = pm->index(0, 0, pm->index(r, 0));
                const int seq = event.data(PipelineModel::EventRole).toInt();
                const RewriteEvent& e = t.events()[static_cast<std::size_t>(seq - 1)];
                QVERIFY2(event.data(Qt::ToolTipRole)
                             .toString()
                             .startsWith(QStringLiteral("#%1 %2 (").arg(seq).arg(QString::fromStdString(e.rewriter))),
                         qPrintable(event.data(Qt::ToolTipRole).toString()));
            }
        }
        QTreeView* tree = w.pipelineTree();
        auto* dock = qobject_cast<QDockWidget*>(tree->parentWidget()->parentWidget());
        QVERIFY(dock);
        QHeaderView* h = tree->header();
        const auto hint = [tree](int c) { return static_cast<const QAbstractItemView*>(tree)->sizeHintForColumn(c); };
        for (int width : {200, 260, 900}) {
            w.resizeDocks({dock}, {width}, Qt::Horizontal);
            QTest::qWait(50);
            const int port = tree->viewport()->width();
            int total = 0;
            for (int c = 0; c < h->count(); ++c) total += h->sectionSize(c);
            const QString what = QStringLiteral("dock %1: tree %2 px, names %3 px (need %4), columns %5 px in all")
                                     .arg(width)
                                     .arg(port)
                                     .arg(h->sectionSize(0))
                                     .arg(hint(0))
                                     .arg(total);
            QVERIFY2(h->sectionSize(0) >= std::min(hint(0), std::max(120, port / 2)), qPrintable(what));
            QVERIFY2(total <= port + 1, qPrintable(what));
            QVERIFY2(!tree->horizontalScrollBar()->isVisible(), qPrintable(what));
            if (port >= 600)
                for (int c = 0; c < h->count(); ++c) QVERIFY2(h->sectionSize(c) >= hint(c), qPrintable(what));
        }
    }

    // The timing legend is never under the minimap: on lstm executed (a long legend), in one
    // pane and side by side, at the default size and at 1024 x 700 (and a pane of half that, as
    // under QT_SCALE_FACTOR=2), beside the minimap while there is room, else above it; always
    // inside the viewport.
    void timingLegendNeverUnderTheMinimap() {
        MainWindow w;
        w.setExecutionBackend(std::make_shared<FakeBackend>(1000));
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, kCorpus + "/lstm.onnx"));
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        bool above = false; // the last check found the legend above the minimap (not beside it)
        auto check = [&above](GraphView* view, const QString& where) {
            QVERIFY2(!view->legend().isEmpty(), qPrintable(where));
            view->zoomBy(3.0); // (a drawing that does not fit: the minimap is shown)
            QTest::qWait(20);
            QVERIFY2(view->minimapVisible(), qPrintable(where));
            const QRect legend = view->legendRect(), map = view->minimapRect();
            const QString rects =
                QStringLiteral("%1: legend %2, minimap %3").arg(where, rectText(legend), rectText(map));
            QVERIFY2(!legend.isNull() && !map.isNull(), qPrintable(rects));
            QVERIFY2(!legend.intersects(map), qPrintable(rects));
            above = legend.bottom() < map.top();
            QVERIFY2(view->viewport()->geometry().contains(legend), qPrintable(rects));
            // the scale bar and a few words a line (the pane's width, in a narrower pane)
            QVERIFY2(legend.width() >= std::min(160, view->viewport()->width() - 16), qPrintable(rects));
            view->fit();
            QVERIFY2(!view->minimapVisible() && view->minimapRect().isNull(), qPrintable(where));
            QCOMPARE(view->legendRect().bottom(), view->viewport()->geometry().bottom() - 8); // back in the corner
        };
        check(w.graphView(), QStringLiteral("1400 x 900"));
        if (QTest::currentTestFailed()) return;
        QVERIFY(!above);
        w.resize(1024, 700);
        QTest::qWait(50);
        check(w.graphView(), QStringLiteral("1024 x 700"));
        if (QTest::currentTestFailed()) return;
        w.setDiffMode(2); // side by side: two narrower panes, each with its legend
        QVERIFY(waitIdle(w));
        check(w.beforeView(), QStringLiteral("before pane at 1024 x 700"));
        check(w.graphView(), QStringLiteral("after pane at 1024 x 700"));
        if (QTest::currentTestFailed()) return;
        // stepping side by side draws both panes again (it crashed: the page index of the panes
        // changes once the after view has moved into them)
        w.session().setCurrentStep(w.session().currentStep() - 1);
        QVERIFY(waitIdle(w));
        QVERIFY(w.beforeView()->isVisible() && w.graphView()->isVisible());
        QVERIFY(!w.beforeView()->legend().isEmpty());
        w.setDiffMode(0);
        QVERIFY(waitIdle(w));
        // a pane too narrow for the legend beside the minimap: above it
        GraphView* view = w.graphView();
        QGraphicsScene scene;
        scene.addRect(0, 0, 4000, 3000);
        scene.setSceneRect(-100, -100, 4200, 3200); // (fitted, the rectangle is all on screen)
        GraphView small(&scene);
        small.setLegend(view->legend());
        small.resize(250, 260);
        small.show();
        QTest::qWait(20);
        small.updateMinimap();
        check(&small, QStringLiteral("250 x 260 pane"));
        QVERIFY(above);
    }

    // Esc while a file opens stops its pipeline run: the status bar and whenIdle say it was
    // cancelled (no error), and the window keeps the file, steps and drawing it showed; opening
    // that file afterwards works.
    void pipelineRunIsCancelled() {
        QTemporaryDir dir;
        MainWindow w;
        QVERIFY(openChain(w, dir, 12));
        DebugSession& s = w.session();
        const QString chain = s.path();
        const int steps = static_cast<int>(s.steps().size());
        const std::string drawing = s.layout()->positionedDot;
        QSignalSpy failed(&s, &DebugSession::failed), opened(&s, &DebugSession::opened),
            cancelled(&s, &DebugSession::runCancelled);
        IdleEnd idle(w);
        const QString other = kSource + "/resources/examples/transformer_encoder_layer.onnx";
        w.openFile(other, QStringLiteral("theano"));
        QVERIFY(w.busyIndicatorShown());
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(idle.wait());
        QVERIFY(!idle.ok);
        QCOMPARE(idle.message, QStringLiteral("pipeline run cancelled"));
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(opened.count(), 0);
        QVERIFY(!s.busy());
        QVERIFY(!w.busyIndicatorShown());
        QVERIFY2(w.statusBar()->currentMessage().startsWith("Pipeline run cancelled: the window shows what it showed"),
                 qPrintable(w.statusBar()->currentMessage()));
        QCOMPARE(s.path(), chain);
        QCOMPARE(static_cast<int>(s.steps().size()), steps);
        QCOMPARE(s.layout()->positionedDot, drawing);
        QVERIFY(openAndWait(w, other));
        QCOMPARE(s.path(), other);
        QCOMPARE(opened.count(), 1);
        QCOMPARE(cancelled.count(), 1);
    }

    // Opening another file, or choosing another pipeline, while a run goes supersedes it: only
    // the newest run reaches the window, and nothing reports an error or a cancellation.
    void newerRunSupersedesTheRunning() {
        MainWindow w;
        w.show();
        DebugSession& s = w.session();
        QSignalSpy failed(&s, &DebugSession::failed), opened(&s, &DebugSession::opened),
            cancelled(&s, &DebugSession::runCancelled);
        const QString transformer = kSource + "/resources/examples/transformer_encoder_layer.onnx";
        const QString alloc = kSource + "/resources/examples/alloc_guess.graph.json";
        w.openFile(transformer, QStringLiteral("theano"));
        QVERIFY(openAndWait(w, alloc, QStringLiteral("theano")));
        QCOMPARE(opened.count(), 1);
        QCOMPARE(s.path(), alloc);
        QCOMPARE(s.pipelineName(), QStringLiteral("theano"));
        // the pipeline box while the file opens: that file with the pipeline chosen
        w.openFile(transformer, QStringLiteral("theano"));
        QVERIFY(choosePipeline(w, QStringLiteral("cleanup")));
        QVERIFY(waitIdle(w));
        QCOMPARE(opened.count(), 2);
        QCOMPARE(s.path(), transformer);
        QCOMPARE(s.pipelineName(), QStringLiteral("cleanup"));
        QCOMPARE(QString::fromStdString(s.trace()->pipelineName()), QStringLiteral("cleanup"));
        QCOMPARE(failed.count(), 0);
        QCOMPARE(cancelled.count(), 0);
    }

    // Esc during Execute > Check stops it: "Check cancelled" in the status bar, no phase
    // marked; the next check marks the phases.
    void checkIsCancelled() {
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        w.setExecutionBackend(std::make_shared<FakeBackend>(1000));
        auto mark = [&](int phase) {
            return static_cast<PipelineModel::CheckMark>(
                w.pipelineModel()->data(w.pipelineModel()->index(phase, 0), PipelineModel::CheckRole).toInt());
        };
        int changed = -1; // the first phase that changed the graph
        for (std::size_t p = 0; p < w.session().trace()->phases().size() && changed < 0; ++p)
            if (w.session().trace()->phases()[p].changed) changed = static_cast<int>(p);
        QVERIFY(changed >= 0);
        IdleEnd idle(w);
        w.runCheck();
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(idle.wait());
        QVERIFY(!idle.ok);
        QCOMPARE(idle.message, QStringLiteral("check cancelled"));
        QCOMPARE(w.statusBar()->currentMessage(), QStringLiteral("Check cancelled: no phase marked."));
        for (int p = 0; p < w.pipelineModel()->rowCount(); ++p) QCOMPARE(mark(p), PipelineModel::CheckMark::None);
        w.runCheck();
        QVERIFY(waitIdle(w));
        QCOMPARE(mark(changed), PipelineModel::CheckMark::Match);
    }
    // The inspector describes its node in the step shown: a node selected before the rewrite
    // that removes it says so on that rewrite's step (it showed the earlier step's node as if
    // it were still there).
    void inspectorSaysWhenItsNodeIsGone() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("cleanup")));
        auto& s = w.session();
        const Trace& t = *s.trace();
        NodeId gone = -1;
        int removedAt = 0;
        const auto source = s.graphAt(0);
        for (const Apply* a : source->toposort())
            if (const int ev = t.removedBy(a->id()); ev > 0) {
                gone = a->id();
                removedAt = ev;
                break;
            }
        QVERIFY(gone >= 0);
        int before = -1, after = -1;
        for (std::size_t i = 0; i < s.steps().size(); ++i) {
            const int ev = s.steps()[i].event;
            if (ev < removedAt) before = static_cast<int>(i);
            // the end of a phase that changed nothing (stepping onto a rewrite or the end of a
            // phase that changed the graph selects what changed instead)
            const StepPoint& p = s.steps()[i];
            const int from = p.phase > 0 ? t.lastEventOfPhase(static_cast<std::size_t>(p.phase - 1)) : 0;
            if (ev >= removedAt && after < 0 && p.phaseEnd && from >= ev) after = static_cast<int>(i);
        }
        QVERIFY(before >= 0 && after > before);
        s.setCurrentStep(before);
        QVERIFY(waitIdle(w));
        w.selectNode(gone);
        QCOMPARE(w.inspector()->shownNode(), gone);
        QVERIFY(!w.inspector()->toPlainText().contains(QStringLiteral("Not in the graph of the step shown")));
        s.setCurrentStep(after);
        QVERIFY(waitIdle(w));
        QCOMPARE(w.inspector()->shownNode(), gone);
        QVERIFY2(w.inspector()->toPlainText().contains(QStringLiteral("Not in the graph of the step shown")),
                 qPrintable(w.inspector()->toPlainText().left(200)));
        // a GPU node of the final graph: "Lifting: on the GPU", once
        s.setCurrentStep(static_cast<int>(s.steps().size()) - 1);
        QVERIFY(waitIdle(w));
        const auto final = s.graphAt(s.currentStep());
        const auto gpu = std::find_if(final->toposort().begin(), final->toposort().end(),
                                      [](const Apply* a) { return a->op().isGpu() && !a->op().isTransfer(); });
        QVERIFY(gpu != final->toposort().end());
        w.selectNode((*gpu)->id());
        const QString text = w.inspector()->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Lifting: on the GPU")) && !text.contains(QStringLiteral("— on the GPU")),
                 qPrintable(text));
    }

    // A click on a phase's row shows the phase's end with what the phase changed selected (the
    // inspector on the first of them), as stepping onto a rewrite selects what it added.
    void phaseRowSelectsWhatThePhaseChanged() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/teaching.graph.json", QStringLiteral("cleanup")));
        auto& s = w.session();
        const Trace& t = *s.trace();
        // the first phase end that changed something, and its row
        int target = -1;
        for (int k = 1; k < static_cast<int>(s.steps().size()) && target < 0; ++k) {
            const StepPoint& p = s.steps()[static_cast<std::size_t>(k)];
            const int from = p.phase > 0 ? t.lastEventOfPhase(static_cast<std::size_t>(p.phase - 1)) : 0;
            if (p.phaseEnd && p.event > from) target = k;
        }
        QVERIFY(target > 0);
        const StepPoint& phaseEnd = s.steps()[static_cast<std::size_t>(target)];
        QTreeView* tree = w.pipelineTree();
        QModelIndex row;
        for (int r = 0; r < tree->model()->rowCount(); ++r) {
            const QModelIndex i = tree->model()->index(r, 0);
            if (i.data(PipelineModel::PhaseRole).toInt() == phaseEnd.phase) row = i;
        }
        QVERIFY(row.isValid());
        tree->scrollTo(row);
        QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(row).center());
        QVERIFY(waitIdle(w));
        QCOMPARE(s.currentStep(), target);
        const int from = phaseEnd.phase > 0 ? t.lastEventOfPhase(static_cast<std::size_t>(phaseEnd.phase - 1)) : 0;
        const std::vector<NodeId> changed = changedRegion(t, *s.graphAt(target), from, phaseEnd.event);
        QVERIFY(!changed.empty());
        QList<NodeId> selected;
        for (GraphNodeItem* it : w.graphScene()->nodeItems())
            if (it->isSelected() && it->node().node >= 0) selected << it->node().node;
        QVERIFY(!selected.isEmpty());
        for (NodeId id : selected) QVERIFY(std::find(changed.begin(), changed.end(), id) != changed.end());
        QVERIFY(std::find(changed.begin(), changed.end(), w.inspector()->shownNode()) != changed.end());
        // the inspector describes one of them that is on screen (it showed the first, out of sight)
        {
            const QRectF visible = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
            const GraphNodeItem* inspected =
                w.graphScene()->nodeItems().value(QStringLiteral("n%1").arg(w.inspector()->shownNode()));
            QVERIFY(inspected);
            bool anyWhole = false;
            for (GraphNodeItem* it : w.graphScene()->nodeItems())
                anyWhole |= it->isSelected() && visible.contains(it->sceneBoundingRect());
            if (anyWhole) QVERIFY(visible.contains(inspected->sceneBoundingRect()));
        }
        // zoomed out below readable titles, a step back to the phase's last rewrite brings the
        // zoom back to readable, on what that rewrite changed
        w.graphView()->zoomBy(0.2);
        QVERIFY(w.graphView()->zoom() < 0.6);
        QTest::keyClick(&w, Qt::Key_Left);
        QVERIFY(waitIdle(w));
        QCOMPARE(s.currentStep(), target - 1);
        QVERIFY2(w.graphView()->zoom() >= 0.6, qPrintable(QString::number(w.graphView()->zoom())));
    }
};

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    TestGuiProfile test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_gui_profile.moc"
