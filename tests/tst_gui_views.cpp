// The debugger window (offscreen), what it draws: the bundled example's screenshot, big graphs
// (opening on their outputs, the source drawn while the pipeline runs), the minimap, exports,
// nested graphs, grouping by name scope, placeholders, Compare and Export through their dialogs,
// provenance jumps and superseded layouts.
#include "tst_gui.h"

#include "BenchGraphs.h"

#include <passlens/layout/DotWriter.h>
#include <passlens/trace/TraceSteps.h>

#include <QDockWidget>
#include <QFileDialog>
#include <QImage>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPointer>
#include <QSpinBox>
#include <QSlider>
#include <QStatusBar>

using namespace passlens;
using namespace passlens::guitest;

class TestGuiViews : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { guitest::initGuiTestCase(); }

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
    // When its layout runs past the window's budget (a busy machine, sanitizer builds) a focused
    // view is drawn, which may leave the graph output out: then it opens on its bottom-most box.
    void bigGraphOpensOnItsOutputs() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kCorpus + "/ch_PP-OCRv4_det_infer.onnx"));
        QVERIFY(w.graphView()->zoom() >= 0.75);
        const QRectF visible = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
        int whole = 0, outputs = 0, drawnOutputs = 0;
        const GraphNodeItem* lowest = nullptr;
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) {
            drawnOutputs += it->node().category == NodeCategory::Output;
            if (!lowest || it->sceneBoundingRect().bottom() > lowest->sceneBoundingRect().bottom()) lowest = it;
            if (!visible.contains(it->sceneBoundingRect())) continue;
            ++whole;
            outputs += it->node().category == NodeCategory::Output;
        }
        // which drawing it was, when it fails: the full layout, a focused view or the simple one
        const LayoutResult* shown = w.session().layout() ? &*w.session().layout() : nullptr;
        QVERIFY(shown);
        const QString drawn = QStringLiteral("focused %1 (%2), simple %3 (%4), %5 nodes, %6 outputs drawn")
                                  .arg(shown->focused)
                                  .arg(QString::fromStdString(shown->focusReason))
                                  .arg(shown->simple)
                                  .arg(QString::fromStdString(shown->budgetNote))
                                  .arg(shown->nodes.size())
                                  .arg(drawnOutputs);
        QVERIFY2(whole >= 8, qPrintable(QString("%1 whole boxes on screen; %2").arg(whole).arg(drawn)));
        if (!shown->focused) QCOMPARE(drawnOutputs, 1); // the model has one output
        if (drawnOutputs > 0)
            QVERIFY2(outputs == 1, qPrintable(QString("%1 outputs on screen; %2").arg(outputs).arg(drawn)));
        else
            QVERIFY2(visible.intersects(lowest->sceneBoundingRect()),
                     qPrintable(QString("the bottom-most box is off screen; %1").arg(drawn)));
    }

    // Every phase row of PP-OCR that changed the graph shows what it changed on screen: some of
    // the selected boxes in view and the inspector on one of them (gpuarray_local_optimizations'
    // changes spread over the whole graph; the view was centred on their bounding box, empty
    // canvas between two long edges, with the inspector on a node out of sight).
    void phaseRowsOfABigModelShowTheirChanges() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kCorpus + "/ch_PP-OCRv4_det_infer.onnx"));
        auto& s = w.session();
        QTreeView* tree = w.pipelineTree();
        int checked = 0;
        for (int r = 0; r < tree->model()->rowCount(); ++r) {
            const QModelIndex row = tree->model()->index(r, 0);
            const int phase = row.data(PipelineModel::PhaseRole).toInt();
            if (phase < 0 || !s.trace()->phases()[static_cast<std::size_t>(phase)].changed) continue;
            tree->scrollTo(row);
            QTest::mouseClick(tree->viewport(), Qt::LeftButton, {}, tree->visualRect(row).center());
            QVERIFY(waitIdle(w));
            const QRectF visible = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
            int selected = 0, inView = 0;
            for (GraphNodeItem* it : w.graphScene()->nodeItems())
                if (it->isSelected()) {
                    ++selected;
                    inView += visible.intersects(it->sceneBoundingRect());
                }
            const QString what = row.data().toString();
            if (selected == 0) continue; // (a phase whose changes the drawing does not hold)
            ++checked;
            QVERIFY2(inView > 0,
                     qPrintable(what + QStringLiteral(": none of %1 selected boxes in view").arg(selected)));
            const GraphNodeItem* inspected =
                w.graphScene()->nodeItems().value(QStringLiteral("n%1").arg(w.inspector()->shownNode()));
            QVERIFY2(
                inspected && visible.intersects(inspected->sceneBoundingRect()),
                qPrintable(what +
                           QStringLiteral(": the inspector's #%1 is out of view").arg(w.inspector()->shownNode())));
        }
        QVERIFY(checked >= 4);
    }

    // Opening frames the drawing: the bundled teaching example fits whole; the transformer
    // example (README's), too tall to fit at a readable zoom, opens readable on its output with
    // every box of the rows on screen whole across (a column right of the output was cut).
    void openingFramesTheBundledExamples() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/teaching.graph.json", QStringLiteral("cleanup")));
        const auto visibleRect = [&] {
            return w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
        };
        QRectF visible = visibleRect();
        QVERIFY(w.graphScene()->nodeItemCount() >= 10);
        for (GraphNodeItem* it : w.graphScene()->nodeItems())
            QVERIFY2(visible.contains(it->sceneBoundingRect()),
                     qPrintable(QString("%1 cut at zoom %2")
                                    .arg(QString::fromStdString(it->node().key))
                                    .arg(w.graphView()->zoom())));

        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QVERIFY(w.graphView()->zoom() >= 0.75);
        visible = visibleRect();
        int rows = 0, outputs = 0;
        for (GraphNodeItem* it : w.graphScene()->nodeItems()) {
            const QRectF r = it->sceneBoundingRect();
            if (r.top() < visible.top() || r.bottom() > visible.bottom()) continue; // above the view
            ++rows;
            outputs += it->node().category == NodeCategory::Output;
            QVERIFY2(r.left() >= visible.left() && r.right() <= visible.right(),
                     qPrintable(QString("%1 cut at the edge").arg(QString::fromStdString(it->node().key))));
        }
        QCOMPARE(outputs, 1);
        QVERIFY2(rows >= 10, qPrintable(QString("%1 boxes on screen").arg(rows)));
        QVERIFY(!visible.contains(w.graphScene()->itemsBoundingRect())); // (too tall to fit readable)
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

    // Esc while a big file opens, its source already shown: the window goes back to the file
    // and step shown before (same steps, same drawing, its pipeline tree) and says which open
    // it cancelled; with nothing shown before, the source stays, labelled and titled as the
    // source of a cancelled open. Keyboard only; Esc is pressed when the source is shown, so
    // the run is still going whatever the machine's speed.
    void cancelledOpenGoesBack() {
        QTemporaryDir dir;
        const QString big = dir.isValid() ? writeChainGraph(dir, 3000) : QString();
        QVERIFY(!big.isEmpty());
        MainWindow w;
        const QString first = kSource + "/resources/examples/join_alloc.graph.json";
        QVERIFY(showAndOpen(w, first, QStringLiteral("cleanup")));
        auto& s = w.session();
        QTest::keyClick(&w, Qt::Key_Home);
        QVERIFY(waitIdle(w));
        QTest::keyClick(&w, Qt::Key_Right);
        QVERIFY(waitIdle(w));
        QTest::keyClick(&w, Qt::Key_Right);
        QVERIFY(waitIdle(w));
        QCOMPARE(s.currentStep(), 2);
        const QString label = s.steps()[2].label;
        const auto steps = s.steps().size();
        const std::string drawing = s.layout()->positionedDot;
        const auto drawnIds = w.graphScene()->nodeIds();
        const int treeRows = w.pipelineModel()->rowCount();
        QVERIFY(treeRows > 0);
        int shownSources = 0;
        const auto escOnSource = connect(&s, &DebugSession::sourceShown, this, [&] {
            ++shownSources;
            QVERIFY(s.sourceOnly());
            QTest::keyClick(&w, Qt::Key_Escape);
        });
        QSignalSpy cancelled(&s, &DebugSession::runCancelled), failed(&s, &DebugSession::failed);
        IdleEnd idle(w);
        w.openFile(big, QStringLiteral("theano"));
        QVERIFY(idle.wait());
        QCOMPARE(shownSources, 1);
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(idle.message, QStringLiteral("pipeline run cancelled"));
        QVERIFY(QTest::qWaitFor([&] { return !s.layoutPending(); }, 600000));
        // the file and step before, as they were
        QCOMPARE(s.path(), first);
        QCOMPARE(s.pipelineName(), QStringLiteral("cleanup"));
        QVERIFY(!s.sourceOnly() && s.trace() && !s.busy());
        QCOMPARE(s.steps().size(), steps);
        QCOMPARE(s.currentStep(), 2);
        QCOMPARE(s.layout()->positionedDot, drawing);
        QCOMPARE(w.graphScene()->nodeIds(), drawnIds);
        QCOMPARE(w.pipelineModel()->rowCount(), treeRows);
        QCOMPARE(s.cancelledOpen(), big);
        QVERIFY2(w.windowTitle().startsWith("join_alloc.graph.json — cleanup"), qPrintable(w.windowTitle()));
        QCOMPARE(w.statusBar()->currentMessage(),
                 QStringLiteral("Opening chain.graph.json cancelled: back to join_alloc.graph.json, step 2 (%1).")
                     .arg(label));
        // stepping works on from there
        QTest::keyClick(&w, Qt::Key_Right);
        QVERIFY(waitIdle(w));
        QCOMPARE(s.currentStep(), 3);
        disconnect(escOnSource);

        // nothing shown before: the source of the cancelled open stays, saying so
        MainWindow fresh;
        fresh.resize(1200, 800);
        fresh.show();
        QVERIFY(QTest::qWaitForWindowExposed(&fresh));
        auto& t = fresh.session();
        connect(&t, &DebugSession::sourceShown, this, [&] { QTest::keyClick(&fresh, Qt::Key_Escape); });
        IdleEnd freshIdle(fresh);
        fresh.openFile(big, QStringLiteral("theano"));
        QVERIFY(freshIdle.wait());
        QCOMPARE(freshIdle.message, QStringLiteral("pipeline run cancelled"));
        QVERIFY(t.sourceOnly() && !t.trace() && !t.busy());
        QCOMPARE(t.path(), big);
        QVERIFY(t.cancelledOpen().isEmpty());
        QCOMPARE(t.steps().size(), std::size_t(1));
        QCOMPARE(t.steps().front().label, QStringLiteral("source (the pipeline run was cancelled)"));
        QCOMPARE(t.graphAt(0)->nodeCount(), std::size_t(3000));
        QVERIFY2(fresh.windowTitle().contains("(cancelled: source only)"), qPrintable(fresh.windowTitle()));
        QCOMPARE(fresh.statusBar()->currentMessage(),
                 QStringLiteral("Opening chain.graph.json cancelled: its source graph stays shown, without a run."));
        QVERIFY(QTest::qWaitFor([&] { return !t.layoutPending(); }, 600000));
        QVERIFY(t.layout() && t.layout()->focused);
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
        // the slider under the graph is no mere handle (it shrank to 0 px beside its label)
        QVERIFY2(w.findChild<QSlider*>()->width() >= 120,
                 qPrintable(QString::number(w.findChild<QSlider*>()->width())));
        // the docks give the graph at least 40% of the width (at their default widths it had 30%)
        QVERIFY2(w.graphView()->width() * 100 >= w.width() * 40,
                 qPrintable(QStringLiteral("%1 of %2").arg(w.graphView()->width()).arg(w.width())));
        // Find and its "match k of n" stay on screen (in the toolbar they went behind its overflow arrow)
        QLineEdit* find = w.findBox();
        QVERIFY(find && find->isVisible());
        const QRect box(find->mapTo(&w, QPoint(0, 0)), find->size());
        QVERIFY2(
            QRect(QPoint(0, 0), w.size()).contains(box),
            qPrintable(QStringLiteral("%1,%2 %3x%4").arg(box.x()).arg(box.y()).arg(box.width()).arg(box.height())));
        QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(find->hasFocus());
        QTest::keyClicks(find, QStringLiteral("MatMul"));
        QTest::keyClick(find, Qt::Key_Return);
        QVERIFY2(w.findStatus().startsWith(QStringLiteral("match 1 of ")), qPrintable(w.findStatus()));
    }

    // A 1280 x 800 screen under QT_SCALE_FACTOR=2 has 640 x 400 pixels: the window fits it (it
    // was 1,718 px wide) with one dock column, the Inspector, Profile and Log as tabs beside the
    // Pipeline dock, and the graph 45% of the width (fitDocks) and 40% of the height, also after a
    // profile; a 1024 x 700 screen keeps the usual docks.
    void windowFitsAScaledScreen() {
        MainWindow w;
        w.fitScreen(QSize(640, 400), QSize(608, 380));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        QVERIFY2(w.width() <= 640 && w.height() <= 400,
                 qPrintable(QStringLiteral("%1 x %2").arg(w.width()).arg(w.height())));
        auto* pipeline = w.findChild<QDockWidget*>(QStringLiteral("pipelineDock"));
        QVERIFY(pipeline);
        const QList<QDockWidget*> tabs = w.tabifiedDockWidgets(pipeline);
        for (const char* name : {"inspectorDock", "profileDock", "logDock"})
            QVERIFY2(tabs.contains(w.findChild<QDockWidget*>(QLatin1String(name))), name);
        // still so after a profile (the Profile tab's tables and its long line) and a long step label
        w.setExecutionBackend(std::make_shared<FakeBackend>(1000));
        w.executeCurrent();
        QVERIFY(waitIdle(w));
        for (auto* dock : tabs)
            if (dock->objectName() == QStringLiteral("profileDock")) dock->raise();
        w.session().setCurrentStep(w.session().currentStep() - 3);
        QVERIFY(waitIdle(w));
        QTest::qWait(50);
        QVERIFY2(w.width() <= 640 && w.height() <= 400,
                 qPrintable(QStringLiteral("after a profile: %1 x %2 (least %3 x %4)")
                                .arg(w.width())
                                .arg(w.height())
                                .arg(w.minimumSizeHint().width())
                                .arg(w.minimumSizeHint().height())));
        QVERIFY2(w.graphView()->width() * 100 >= w.width() * 45 && w.graphView()->height() * 100 >= w.height() * 40,
                 qPrintable(QStringLiteral("graph %1 x %2 in %3 x %4")
                                .arg(w.graphView()->width())
                                .arg(w.graphView()->height())
                                .arg(w.width())
                                .arg(w.height())));

        MainWindow usual;
        usual.fitScreen(QSize(1024, 700), QSize(972, 665));
        QCOMPARE(usual.size(), QSize(972, 665));
        auto* pipe2 = usual.findChild<QDockWidget*>(QStringLiteral("pipelineDock"));
        QVERIFY(usual.tabifiedDockWidgets(pipe2).isEmpty());
        QCOMPARE(usual.dockWidgetArea(usual.findChild<QDockWidget*>(QStringLiteral("inspectorDock"))),
                 Qt::RightDockWidgetArea);
    }

    // The window's diff reads as the exported one (styleOf): unchanged nodes white with their
    // location as a stripe at the left (a transfer was filled red beside "removed" red and
    // Compare's "only in theano" red), changed ones by their change; the plain view keeps the
    // location fills and the op family's stripe (Elemwise pink). Pixels of the scene rendered.
    void diffColoursMatchTheExports() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/teaching.graph.json", QStringLiteral("cleanup")));
        const Palette& p = defaultPalette();
        // the colour at (dx, dy) scene units from the box's top-left corner (dy -1: half way down);
        // fills are read just under the top border, above the title's text
        const auto pixel = [&](GraphNodeItem* it, double dx, double dy = -1) {
            const QRectF r = it->sceneBoundingRect().adjusted(3, 3, -3, -3); // (the box, without the pen's margin)
            QImage img(r.size().toSize() * 4, QImage::Format_RGB32);
            img.fill(Qt::black);
            QPainter painter(&img);
            w.graphScene()->render(&painter, QRectF(QPointF(0, 0), QSizeF(img.size())), r);
            painter.end();
            return img.pixelColor(static_cast<int>(dx * 4), dy < 0 ? img.height() / 2 : static_cast<int>(dy * 4))
                .name();
        };
        const auto find = [&](auto pred) -> GraphNodeItem* {
            for (GraphNodeItem* it : w.graphScene()->nodeItems())
                if (pred(it->node())) return it;
            return nullptr;
        };
        // plain: an Elemwise op is filled by location, with the pink stripe
        GraphNodeItem* elemwise =
            find([](const LayoutNode& n) { return isOp(n.category) && n.accent == OpAccent::Elemwise; });
        QVERIFY(elemwise);
        QCOMPARE(pixel(elemwise, 2), QString::fromLatin1(p.elemwiseAccent).toLower());
        QCOMPARE(pixel(elemwise, elemwise->node().width / 2, 1.8),
                 QString::fromLatin1(categoryFill(elemwise->node().category)).toLower());
        // the diff of the cut phase: an unchanged transfer white with the transfer stripe
        w.session().setCurrentStep(15);
        w.setDiffMode(1);
        QVERIFY(waitIdle(w));
        QVERIFY(w.session().layout() && w.session().layout()->isDiff); // (the drawing says it is a diff)
        GraphNodeItem* transfer = find([](const LayoutNode& n) {
            return n.category == NodeCategory::Transfer && n.change == NodeChange::Unchanged;
        });
        GraphNodeItem* removed =
            find([](const LayoutNode& n) { return n.change == NodeChange::Removed && isOp(n.category); });
        QVERIFY(transfer && removed);
        QCOMPARE(pixel(transfer, 2), QString::fromLatin1(categoryStripe(NodeCategory::Transfer)).toLower());
        QCOMPARE(pixel(transfer, transfer->node().width / 2, 1.8), QString::fromLatin1(p.unchangedFill).toLower());
        QCOMPARE(pixel(removed, removed->node().width / 2, 1.8), QString::fromLatin1(p.removedFill).toLower());
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

    // Group by name scope: the bundled transformer layer's /self_attn, /norm1, ... scopes are one
    // box each; double-clicking a box opens it, "Close scope" closes it again, and Find opens
    // the scopes around a hit inside a closed box.
    // Ten scoped blocks read one weight; after the pipeline its one GpuFromHost feeds all ten
    // boxes: drawn once beside the first and as a stub beside the nine others (stubFanOut), and
    // the window selects and explains the node itself, never a stub.
    void stubsStandForAHighFanOutNode() {
        FunctionGraph g;
        Variable* h = g.addInput(Type::parse("float32[4,4]"), "x");
        Variable* wt = g.addInput(Type::parse("float32[4,4]"), "w");
        for (int k = 0; k < 10; ++k) {
            const std::string scope = "/b" + std::to_string(k) + "/";
            h = g.apply(Op::get("Dot"), {h, wt}, scope + "MatMul");
            h = g.apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {h}, scope + "Tanh");
        }
        g.setOutputs({h});
        QTemporaryDir dir;
        const QString file = dir.filePath("fan.graph.json");
        writeFileAtomic(file.toStdString(), writeGraphJson(g).dump());
        MainWindow w;
        QVERIFY(showAndOpen(w, file));
        QVERIFY(w.setGroupByScope(true));
        QVERIFY(waitIdle(w));
        std::vector<GraphNodeItem*> stubs;
        for (GraphNodeItem* it : w.graphScene()->nodeItems())
            if (!it->node().stubOf.empty()) stubs.push_back(it);
        QCOMPARE(stubs.size(), std::size_t(9));
        const NodeId transfer = stubs.front()->node().node;
        for (GraphNodeItem* it : stubs) {
            QCOMPARE(it->node().node, transfer);
            QCOMPARE(it->node().category, NodeCategory::Transfer);
            QVERIFY2(it->toolTip().contains("drawn again beside each of its many consumers"),
                     qPrintable(it->toolTip()));
        }
        QCOMPARE(w.graphScene()->nodeIds().count(transfer), 1);
        GraphNodeItem* selected = w.graphScene()->selectNode(transfer);
        QVERIFY(selected && selected->node().stubOf.empty());
        QCOMPARE(selected->node().key, stubs.front()->node().stubOf);
    }

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
        const double plainHeight = w.graphScene()->itemsBoundingRect().height();
        QVERIFY(w.setGroupByScope(true));
        QVERIFY(waitIdle(w));
        // a fresh layout of the boxes, not the boxes pinned at their members' old places
        QVERIFY2(w.graphScene()->itemsBoundingRect().height() < 0.8 * plainHeight,
                 qPrintable(QString::number(w.graphScene()->itemsBoundingRect().height()) + " vs " +
                            QString::number(plainHeight)));
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
        int inside = 0, onScreen = 0;
        const QRectF visible = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
        for (GraphNodeItem* it : w.graphScene()->nodeItems())
            if (it->node().scope == "/self_attn") {
                ++inside;
                onScreen += visible.intersects(it->sceneBoundingRect());
            }
        QVERIFY(inside >= 2);
        QVERIFY2(onScreen * 2 >= inside, qPrintable(QStringLiteral("%1 of %2 on screen").arg(onScreen).arg(inside)));
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
        QVERIFY(dlg->width() <= 1300 && dlg->height() <= 800);
        dlg->close();

        // join_alloc ends in the same graph under both: the summary says so, not "+0 −0"
        QVERIFY(openAndWait(w, kSource + "/resources/examples/join_alloc.graph.json", QStringLiteral("theano")));
        w.compareWith(QStringLiteral("cleanup"));
        QVERIFY(waitIdle(w));
        QVERIFY(w.compareDialog());
        QStringList texts;
        for (QLabel* label : w.compareDialog()->findChildren<QLabel*>()) texts << label->text();
        QVERIFY2(texts.join(' ').contains(QStringLiteral("Both pipelines end in the same graph")),
                 qPrintable(texts.join(' ')));
        w.compareDialog()->close();
    }

    // The dialogs as the user meets them: Tools > Compare proposes the other pipeline (theano
    // when cleanup is shown, never cleanup itself) and draws the comparison; Ctrl+E's dialog,
    // set to the selection with 2 hops in landscape, offers the name from the model, step and
    // area, and writes a left-to-right figure of the selected node and its neighbours.
    void compareAndExportDialogs() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/teaching.graph.json", QStringLiteral("cleanup")));
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QTemporaryDir dir;
        QStringList proposed, offered;
        int exportDialogs = 0;
        QPointer<QFileDialog> fileDialog;
        // answers the modal dialogs as they open (the event loop of each dialog's exec runs it)
        QTimer answer;
        answer.setInterval(20);
        connect(&answer, &QTimer::timeout, &w, [&] {
            QWidget* modal = QApplication::activeModalWidget();
            if (auto* pick = qobject_cast<QInputDialog*>(modal)) {
                proposed << pick->comboBoxItems().join(',') + ':' + pick->textValue();
                pick->accept();
            } else if (auto* files = qobject_cast<QFileDialog*>(modal)) {
                if (files != fileDialog) { // a new dialog: the name it offers
                    fileDialog = files;
                    offered << QFileInfo(files->selectedFiles().value(0)).fileName();
                }
                // our path typed whole into the name box (selectFile changes the dialog's folder in
                // its own time, and Save took the name in the folder it opened in now and then)
                const QString wanted = dir.filePath(QStringLiteral("figure.svg"));
                if (files->selectedFiles().value(0) != wanted) {
                    if (auto* name = files->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")))
                        name->setText(wanted);
                    return; // accepted on a later tick, once the dialog reports it
                }
                static_cast<QDialog*>(files)->accept(); // Save (QFileDialog::accept is protected)
            } else if (auto* d = qobject_cast<QDialog*>(modal);
                       d && d->windowTitle() == QStringLiteral("Export view")) {
                const auto boxes = d->findChildren<QComboBox*>();
                auto* hops = d->findChild<QSpinBox*>();
                if (boxes.size() != 2 || !hops) return;
                boxes[0]->setCurrentIndex(2); // the selection and its neighbours
                hops->setValue(2);
                boxes[1]->setCurrentIndex(1); // landscape
                ++exportDialogs;
                d->accept();
            }
        });
        answer.start();

        QAction* compare = nullptr;
        for (QAction* a : w.findChildren<QAction*>())
            if (a->text().startsWith(QStringLiteral("Compare with another pipeline"))) compare = a;
        QVERIFY(compare);
        compare->trigger();
        QCOMPARE(proposed.size(), qsizetype(1));
        QVERIFY2(proposed.front().endsWith(QStringLiteral(":theano")) && !proposed.front().contains("cleanup"),
                 qPrintable(proposed.front()));
        QVERIFY(waitIdle(w));
        QVERIFY(w.compareDialog() && w.compareDialog()->isVisible());
        w.compareDialog()->close();

        // the ones Alloc selected (Find), then Ctrl+E
        w.session().setCurrentStep(15);
        QVERIFY(waitIdle(w));
        w.findNext(QStringLiteral("ones"));
        const NodeId ones = w.inspector()->shownNode();
        QVERIFY(ones >= 0);
        QSignalSpy done(&w, &MainWindow::exported);
        w.activateWindow(); // back from the comparison dialog
        QVERIFY(QTest::qWaitForWindowActive(&w));
        QTest::keyClick(&w, Qt::Key_E, Qt::ControlModifier);
        QCOMPARE(exportDialogs, 1);
        QCOMPARE(offered, QStringList{QStringLiteral("teaching-step15-selection.svg")});
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 600000));
        QVERIFY(done.last().at(1).toBool());
        QFile f(dir.filePath(QStringLiteral("figure.svg")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(f.readAll());
        QVERIFY(svg.contains(QStringLiteral("<title>n%1</title>").arg(ones)));
        const auto size =
            QRegularExpression(QStringLiteral("<svg width=\"([0-9.]+)pt\" height=\"([0-9.]+)pt\"")).match(svg);
        QVERIFY(size.hasMatch());
        QVERIFY2(size.captured(1).toDouble() > size.captured(2).toDouble(), qPrintable(size.captured(0)));
        answer.stop();
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

    // A mouse click on the inspector's "Created by #N" link starts the jump to that rewrite's
    // step, and Esc cancels its drawing (the step moved, the view keeps the final step's drawing
    // and says so); a second click goes there, the node selected and on screen.
    void provenanceLinkClickAndEsc() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        w.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        auto& s = w.session();
        const int last = s.currentStep();
        const auto [target, created] = newestNode(s, last);
        QVERIFY(target >= 0 && created > 0);
        w.selectNode(target);
        QCOMPARE(w.inspector()->shownNode(), target);
        // where the link is drawn in the inspector
        const QString href = QStringLiteral("event:%1").arg(created);
        auto clickLink = [&] {
            QWidget* port = w.inspector()->viewport();
            for (int y = 2; y < port->height(); y += 4)
                for (int x = 2; x < port->width(); x += 4)
                    if (w.inspector()->anchorAt(QPoint(x, y)) == href) {
                        QTest::mouseClick(port, Qt::LeftButton, {}, QPoint(x, y));
                        return true;
                    }
            return false;
        };
        QVERIFY2(clickLink(), qPrintable(href));
        QCOMPARE(s.steps()[static_cast<std::size_t>(s.currentStep())].event, created);
        QVERIFY(s.layoutPending() || s.followUpPending());
        QVERIFY(w.busyIndicatorShown());
        QTest::keyClick(&w, Qt::Key_Escape);
        QVERIFY(QTest::qWaitFor([&] { return !s.layoutPending() && !s.followUpPending(); }, 600000));
        QCOMPARE(s.steps()[static_cast<std::size_t>(s.currentStep())].event, created);
        QVERIFY2(w.summaryText().contains(QStringLiteral("the view still shows step %1").arg(last)),
                 qPrintable(w.summaryText()));

        QCOMPARE(w.inspector()->shownNode(), target); // the link is still there
        QVERIFY(clickLink());
        QVERIFY(QTest::qWaitFor([&] { return !s.layoutPending() && !s.followUpPending(); }, 600000));
        const auto selected = w.graphScene()->selectedItems();
        QCOMPARE(selected.size(), qsizetype(1));
        QCOMPARE(static_cast<GraphNodeItem*>(selected.front())->node().node, target);
        QVERIFY(w.graphView()->viewport()->rect().contains(
            w.graphView()->mapFromScene(selected.front()->sceneBoundingRect().center())));
        QCOMPARE(w.inspector()->shownNode(), target);
        QVERIFY(!w.summaryText().contains(QStringLiteral("cancelled")));
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

    // A provenance jump builds its step's graph in its layout job, never on the GUI thread: right
    // after the jump the step's graph is not kept; the target is selected once the job's drawing
    // arrives. A jump superseded by another never reaches the view, and a jump to the event that
    // removed its node draws that step without the node and without a "not in the drawing".
    void jumpBuildsItsStepInItsLayoutJob() {
        MainWindow w;
        QVERIFY(showAndOpen(w, kSource + "/resources/examples/transformer_encoder_layer.onnx"));
        auto& s = w.session();
        const Trace* trace = s.trace();
        QVERIFY(QTest::qWaitFor([&] { return s.jobs().runningCount() == 0; }, 600000)); // step graphs built
        auto kept = [&s](int event) {
            const auto events = s.keptGraphEvents();
            return std::find(events.begin(), events.end(), event) != events.end();
        };
        auto stepOf = [&s](int event) {
            for (const StepPoint& st : s.steps())
                if (st.event == event && !st.phaseEnd) return true;
            return false;
        };
        // two events, latest first, whose steps are not kept, each with a node it added that its
        // step still has, and an event that removed a node
        std::vector<std::pair<int, NodeId>> targets;
        std::pair<int, NodeId> removal{0, -1};
        for (auto e = trace->events().rbegin(); e != trace->events().rend(); ++e) {
            if (e->status != EventStatus::Applied || !stepOf(e->seq)) continue;
            if (removal.first == 0 && !e->removed.empty()) removal = {e->seq, e->removed.front()};
            if (kept(e->seq) || targets.size() == 2) continue;
            for (NodeId id : e->added)
                if (trace->removedBy(id) == 0 || trace->removedBy(id) > e->seq) {
                    targets.emplace_back(e->seq, id);
                    break;
                }
        }
        QCOMPARE(targets.size(), std::size_t(2));
        QVERIFY(removal.first > 0);
        const auto [first, firstNode] = targets[0];
        const auto [second, secondNode] = targets[1];
        auto* log = w.findChild<QPlainTextEdit*>();
        QVERIFY(log);
        struct Shown {
            int event;
            bool hasFirst, hasSecond;
        };
        QList<Shown> shown;
        connect(&s, &DebugSession::layoutReady, this, [&] {
            shown << Shown{s.steps()[static_cast<std::size_t>(s.currentStep())].event,
                           w.graphScene()->nodeIds().contains(firstNode),
                           w.graphScene()->nodeIds().contains(secondNode)};
        });
        auto selected = [&w]() -> NodeId {
            const auto sel = w.graphScene()->selectedItems();
            return sel.size() == 1 ? static_cast<GraphNodeItem*>(sel.front())->node().node : -1;
        };

        // one jump: the step is built by the job, then drawn with the target selected
        w.jumpToEvent(first, firstNode);
        QVERIFY(s.layoutPending());
        QVERIFY(!kept(first));
        QVERIFY(QTest::qWaitFor([&] { return !s.followUpPending() && !s.layoutPending(); }, 600000));
        QVERIFY(kept(first));
        QVERIFY(!shown.isEmpty());
        for (const Shown& d : shown) QVERIFY(d.event == first && d.hasFirst);
        QCOMPARE(selected(), firstNode);
        QCOMPARE(w.inspector()->shownNode(), firstNode);

        // a jump superseded by the next one: only the second one's drawings arrive
        s.setCurrentStep(0);
        QVERIFY(waitIdle(w));
        shown.clear();
        w.jumpToEvent(first, firstNode);
        w.jumpToEvent(second, secondNode);
        QVERIFY(QTest::qWaitFor([&] { return !s.followUpPending() && !s.layoutPending(); }, 600000));
        QVERIFY(!shown.isEmpty());
        for (const Shown& d : shown) QVERIFY(d.event == second && d.hasSecond);
        QCOMPARE(selected(), secondNode);

        // the event that removed a node: its step is drawn, the node is not looked for
        shown.clear();
        const QString logBefore = log->toPlainText();
        w.jumpToEvent(removal.first, removal.second);
        QVERIFY(QTest::qWaitFor([&] { return !s.followUpPending() && !s.layoutPending(); }, 600000));
        QVERIFY(!shown.isEmpty());
        QCOMPARE(shown.back().event, removal.first);
        QVERIFY(!w.graphScene()->nodeIds().contains(removal.second));
        QVERIFY(selected() != removal.second);
        QVERIFY2(!log->toPlainText().mid(logBefore.size()).contains("not in the drawing"),
                 qPrintable(log->toPlainText().mid(logBefore.size())));
    }

    // A big step whose rewrite only removed a node (constant folding of a GpuFromHost) is drawn
    // as the window draws it (DrawingRequest, the layout's focused view) around the node that
    // consumed the removed one, not around an arbitrary row of transfers.
    void removalOnlyStepCentresOnItsNeighbours() {
        auto big = bench::blockGraph(20001, true); // bench_inspect --nodes 20001 --scoped
        auto trace = std::make_shared<Trace>();
        const Pipeline p = Pipeline::builtin("theano");
        const PipelineRun run = p.run(*big, trace.get());
        trace->finish(run, *big, p.buildContext().caps);
        const auto& events = trace->events();
        const auto it = std::find_if(events.begin(), events.end(), [](const RewriteEvent& e) {
            return e.status == EventStatus::Applied && e.added.empty() && !e.removed.empty();
        });
        QVERIFY(it != events.end());
        QCOMPARE(it->removed.size(), std::size_t(1));
        const int seq = it->seq;
        const auto before = trace->graphAfter(seq - 1);
        const Apply* removed = before->node(it->removed.front());
        QVERIFY(removed->op().str().starts_with("GpuFromHost"));
        const auto clients = removed->output()->clients();
        QCOMPARE(std::distance(clients.begin(), clients.end()), std::ptrdiff_t(1));
        const NodeId consumer = clients.begin()->node->id();

        DrawingRequest r;
        r.after = trace->graphAfter(seq);
        r.trace = trace.get();
        r.fromEvent = seq - 1; // a big step drawn as a focused view: its own changes
        r.toEvent = seq;
        const LayoutOptions lo;
        QVERIFY(r.after->nodeCount() > lo.nodeThreshold);
        QVERIFY(r.after->node(consumer)->inGraph());
        const DrawGraph view = r.draw(&lo);
        QVERIFY(view.focused);
        QCOMPARE(QString::fromStdString(view.focusAround), QStringLiteral("the changed region"));
        const auto drawn = std::find_if(view.nodes.begin(), view.nodes.end(),
                                        [consumer](const DrawNode& d) { return d.node == consumer; });
        QVERIFY(drawn != view.nodes.end());
        QVERIFY(drawn->seed);
        QVERIFY2(QString::fromStdString(drawn->title).startsWith("GpuAlloc"), drawn->title.c_str());
        // grouped by scope, a box counts only added nodes as "new": none in this step
        r.grouping = ScopeGrouping{};
        const DrawGraph grouped = r.draw(&lo);
        QVERIFY(std::any_of(grouped.nodes.begin(), grouped.nodes.end(),
                            [](const DrawNode& d) { return d.category == NodeCategory::Group; }));
        for (const DrawNode& d : grouped.nodes)
            QVERIFY2(!d.seed && d.detail.find("new") == std::string::npos, (d.subtitle + ": " + d.detail).c_str());
        r.grouping.reset();
        // the event that added the nodes keeps them as the seeds
        r.after = trace->graphAfter(1);
        r.fromEvent = 0;
        r.toEvent = 1;
        const std::vector<NodeId> added = nodesAddedBetween(*trace, 0, 1);
        QVERIFY(added.size() > lo.focusMaxNodes);
        const DrawGraph first = r.draw(&lo);
        // (more than the view holds: one piece of the graph around the first of them)
        QVERIFY2(first.focusAround.rfind("the first ", 0) == 0, first.focusAround.c_str());
        for (const DrawNode& d : first.nodes)
            if (d.node >= 0) QVERIFY(!d.seed || std::binary_search(added.begin(), added.end(), d.node));
    }

    // Stepping onto that step in the window selects the nodes around what the rewrite removed
    // (the inspector shows the first), on screen at a readable zoom, as a rewrite's new nodes are.
    void removalOnlyStepSelectsItsNeighbours() {
        QTemporaryDir dir;
        const QString file = dir.filePath("big.graph.json");
        writeFileAtomic(file.toStdString(), writeGraphJson(*bench::blockGraph(20001, true)).dump());
        MainWindow w;
        QVERIFY(showAndOpen(w, file));
        // the final step, drawn after the source's view, shows boxes (it opened on an empty pane)
        const QRectF opened = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
        const auto items = w.graphScene()->nodeItems();
        QVERIFY(std::any_of(items.begin(), items.end(),
                            [&](const GraphNodeItem* it) { return opened.intersects(it->sceneBoundingRect()); }));
        auto& s = w.session();
        // Find on the end of merge2, whose 2,222 changes are more than the view holds: the hit
        // is drawn, selected and inspected (the view was one piece around the first change)
        int merge2 = -1;
        for (std::size_t k = 0; k < s.steps().size(); ++k)
            if (s.steps()[k].phaseEnd && s.steps()[k].label.contains(QStringLiteral("merge2")))
                merge2 = static_cast<int>(k);
        QVERIFY(merge2 > 0);
        s.setCurrentStep(merge2);
        QVERIFY(waitIdle(w));
        w.findNext(QStringLiteral("/stage5/block50/Tanh"), 1);
        QVERIFY(waitIdle(w));
        QVERIFY2(w.findStatus().startsWith(QStringLiteral("match 1 of")), qPrintable(w.findStatus()));
        const NodeId hit = w.inspector()->shownNode();
        QVERIFY(hit >= 0);
        QCOMPARE(QString::fromStdString(s.graphAt(merge2)->node(hit)->name()), QStringLiteral("/stage5/block50/Tanh"));
        QVERIFY(w.graphScene()->nodeIds().contains(hit));
        const auto& events = s.trace()->events();
        int step = -1, seq = 0;
        for (std::size_t k = 1; k < s.steps().size() && step < 0; ++k) {
            const StepPoint& st = s.steps()[k];
            if (st.phaseEnd || st.event < 1) continue;
            const RewriteEvent& e = events[static_cast<std::size_t>(st.event - 1)];
            if (e.added.empty() && !e.removed.empty()) {
                step = static_cast<int>(k);
                seq = st.event;
            }
        }
        QVERIFY(step > 1);
        s.setCurrentStep(step - 1);
        QVERIFY(waitIdle(w));
        s.setCurrentStep(step);
        QVERIFY(waitIdle(w));
        QVERIFY(s.layout() && s.layout()->focused);
        const std::vector<NodeId> around = changedRegion(*s.trace(), *s.graphAt(step), seq - 1, seq);
        QVERIFY(!around.empty());
        std::set<NodeId> selected;
        QRectF area;
        for (QGraphicsItem* it : w.graphScene()->selectedItems()) {
            selected.insert(static_cast<GraphNodeItem*>(it)->node().node);
            area = area.united(it->sceneBoundingRect());
        }
        QCOMPARE(selected, std::set<NodeId>(around.begin(), around.end()));
        QCOMPARE(w.inspector()->shownNode(), around.front());
        const QRectF visible = w.graphView()->mapToScene(w.graphView()->viewport()->rect()).boundingRect();
        QVERIFY2(visible.intersects(area), "the nodes around the removal are on screen");
        QVERIFY2(w.graphView()->zoom() >= 0.6, qPrintable(QString::number(w.graphView()->zoom())));
        qInfo("removal-only step %d (event %d, %s)", step, seq,
              events[static_cast<std::size_t>(seq - 1)].rewriter.c_str());
    }
};

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    app.setAttribute(Qt::AA_Use96Dpi, true);
    TestGuiViews test;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&test, argc, argv);
}
#include "tst_gui_views.moc"
