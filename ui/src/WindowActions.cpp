#include "WindowActions.h"

#include "passlens/ui/MainWindow.h"

#include "GraphView.h"
#include "PipelineModel.h"

#include <passlens/pipeline/Pipeline.h>

#include <QAction>
#include <QComboBox>
#include <QFileDialog>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QShortcut>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>

#include <tuple>

namespace passlens {

WindowActions::WindowActions(MainWindow* window)
    : QObject(window)
    , m_w(window) {
    auto* file = m_w->menuBar()->addMenu(tr("&File"));
    auto* tb = m_w->addToolBar(tr("Main"));
    tb->setObjectName(QStringLiteral("mainToolBar"));
    auto* open = file->addAction(tr("&Open…"), this, [this] {
        const QString f =
            QFileDialog::getOpenFileName(m_w, tr("Open a model, graph or session"), {},
                                         tr("Graphs and sessions (*.onnx *.json *.passlens);;All files (*)"));
        if (!f.isEmpty()) m_w->openFile(f, m_w->m_pipelineCombo->currentText());
    });
    open->setShortcut(QKeySequence::Open);
    m_w->m_recentMenu = file->addMenu(tr("Open &recent"));
    auto* save = file->addAction(tr("&Save session…"), this, [this] { m_w->saveSession(); });
    save->setShortcut(QKeySequence::Save);
    auto* exp = file->addAction(tr("&Export view…"), this, [this] { m_w->exportView(); });
    exp->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    file->addAction(tr("Export HTML &report…"), this, [this] { m_w->exportReport(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), m_w, &QWidget::close)->setShortcut(QKeySequence::Quit);
    // The toolbar stays short enough for a 1024-px window: icons for Open and stepping (their
    // text and shortcut in the menus and tooltips), short words for the rest (QAction::iconText).
    open->setIcon(m_w->style()->standardIcon(QStyle::SP_DialogOpenButton));
    open->setToolTip(tr("Open a model, graph or session (Ctrl+O)"));
    tb->addAction(open);

    m_w->m_pipelineCombo = new QComboBox;
    for (const auto& n : Pipeline::builtinNames()) m_w->m_pipelineCombo->addItem(QString::fromStdString(n));
    m_w->m_pipelineCombo->addItem(tr("Pipeline file…"));
    m_w->m_pipelineCombo->setToolTip(tr("Pipeline: a built-in one or a .pipeline.json file (FORMAT.md §3)"));
    // Choosing another pipeline runs it at once (the box never shows one that did not run).
    connect(m_w->m_pipelineCombo, &QComboBox::activated, this, [this](int i) {
        if (m_w->m_pipelineCombo->itemText(i) == tr("Pipeline file…")) {
            const QString f =
                QFileDialog::getOpenFileName(m_w, tr("Pipeline file"), {}, tr("Pipelines (*.pipeline.json *.json)"));
            if (f.isEmpty()) {
                const int back = m_w->m_pipelineCombo->findText(m_w->m_session->pipelineName());
                if (back >= 0) m_w->m_pipelineCombo->setCurrentIndex(back);
                return;
            }
            m_w->m_pipelineCombo->insertItem(m_w->m_pipelineCombo->count() - 1, f);
            m_w->m_pipelineCombo->setCurrentIndex(m_w->m_pipelineCombo->count() - 2);
        }
        const QString chosen = m_w->m_pipelineCombo->currentText();
        // (a pipeline that failed on the source shown may be chosen again; one chosen while a
        // run goes supersedes it)
        const bool running = m_w->m_session->busy();
        if (!running &&
            (m_w->m_session->steps().empty() || (m_w->m_session->trace() && chosen == m_w->m_session->pipelineName())))
            return;
        m_w->log(tr("Running pipeline %1 (chosen in the pipeline box)").arg(chosen));
        m_w->m_session->runPipeline(chosen, {}, m_w->m_phaseMoves); // unchecked phases belong to the other pipeline
    });
    tb->addWidget(m_w->m_pipelineCombo);
    auto* run = tb->addAction(tr("Run"), this, [this] {
        m_w->m_session->runPipeline(m_w->m_pipelineCombo->currentText(), m_w->m_pipelineModel->disabledPhases(),
                                    m_w->m_phaseMoves);
    });
    run->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    run->setToolTip(tr("Run the pipeline on the source graph (Ctrl+R)"));
    // a phase checked or unchecked: the tree no longer matches the run shown until Run, which
    // the Run button (bold) and the status bar say
    auto pending = [this, run, tb] {
        const bool on = m_w->m_pipelineModel->runPending();
        run->setToolTip(on ? tr("Phases were checked or unchecked: Run the pipeline again to apply them (Ctrl+R)")
                           : tr("Run the pipeline on the source graph (Ctrl+R)"));
        if (QWidget* button = tb->widgetForAction(run)) {
            QFont f = button->font();
            f.setBold(on);
            button->setFont(f);
        }
        return on;
    };
    connect(m_w->m_pipelineModel, &QAbstractItemModel::modelReset, this, pending);
    connect(m_w->m_pipelineModel, &QAbstractItemModel::dataChanged, this,
            [this, pending](const QModelIndex&, const QModelIndex&, const QList<int>& roles) {
                if (!roles.contains(Qt::CheckStateRole)) return;
                if (pending()) {
                    const auto n = m_w->m_pipelineModel->disabledPhases().size();
                    m_w->statusBar()->showMessage(
                        n == 0   ? tr("Every phase checked: Run (Ctrl+R) to run the whole pipeline again")
                        : n == 1 ? tr("1 phase unchecked: Run (Ctrl+R) to run the pipeline without it")
                                 : tr("%1 phases unchecked: Run (Ctrl+R) to run the pipeline without them").arg(n),
                        10000);
                } else
                    m_w->statusBar()->clearMessage();
            });
    tb->addSeparator();

    auto* nav = m_w->menuBar()->addMenu(tr("&Step"));
    auto add = [&](const QString& text, QKeySequence key, QStyle::StandardPixmap icon, std::function<void()> fn) {
        auto* a = nav->addAction(text, this, std::move(fn));
        a->setShortcut(key);
        a->setShortcutContext(Qt::ApplicationShortcut);
        a->setIcon(m_w->style()->standardIcon(icon));
        a->setToolTip(tr("%1 (%2)").arg(text, key.toString(QKeySequence::NativeText)));
        tb->addAction(a);
        return a;
    };
    add(tr("Previous phase"), QKeySequence(Qt::Key_PageUp), QStyle::SP_MediaSkipBackward,
        [this] { m_w->m_session->previousPhase(); });
    add(tr("Previous rewrite"), QKeySequence(Qt::Key_Left), QStyle::SP_MediaSeekBackward,
        [this] { m_w->m_session->previousEvent(); });
    add(tr("Next rewrite"), QKeySequence(Qt::Key_Right), QStyle::SP_MediaSeekForward,
        [this] { m_w->m_session->nextEvent(); });
    add(tr("Next phase"), QKeySequence(Qt::Key_PageDown), QStyle::SP_MediaSkipForward,
        [this] { m_w->m_session->nextPhase(); });
    nav->addSeparator();
    for (const auto& [text, key, direction] : {std::tuple{tr("Previous event of this rewrite"), Qt::Key_Left, -1},
                                               std::tuple{tr("Next event of this rewrite"), Qt::Key_Right, 1}}) {
        auto* a = nav->addAction(text, this,
                                 [this, d = direction] { m_w->stepToRewrite(d); }); // menu only: the toolbar is full
        a->setShortcut(QKeySequence(Qt::CTRL | key));
        a->setShortcutContext(Qt::ApplicationShortcut);
    }
    nav->addAction(tr("First step"), this, [this] { m_w->m_session->setCurrentStep(0); })
        ->setShortcut(QKeySequence(Qt::Key_Home));
    nav->addAction(tr("Last step"), this,
                   [this] { m_w->m_session->setCurrentStep(static_cast<int>(m_w->m_session->steps().size()) - 1); })
        ->setShortcut(QKeySequence(Qt::Key_End));
    tb->addSeparator();

    m_w->m_diffCombo = new QComboBox;
    m_w->m_diffCombo->addItems({tr("No diff"), tr("Diff: overlay"), tr("Diff: side by side")});
    m_w->m_diffCombo->setToolTip(tr("Diff the shown step against the start of its phase (D cycles)"));
    tb->addWidget(m_w->m_diffCombo);
    connect(m_w->m_diffCombo, &QComboBox::currentIndexChanged, this, [this](int i) { m_w->setDiffMode(i); });
    auto* cycle = new QShortcut(QKeySequence(Qt::Key_D), m_w);
    connect(cycle, &QShortcut::activated, this,
            [this] { m_w->m_diffCombo->setCurrentIndex((m_w->m_diffCombo->currentIndex() + 1) % 3); });

    auto* view = m_w->menuBar()->addMenu(tr("&View"));
    view->addAction(tr("Zoom in"), this, [this] { m_w->m_view->zoomBy(1.25); })->setShortcut(QKeySequence::ZoomIn);
    view->addAction(tr("Zoom out"), this, [this] { m_w->m_view->zoomBy(0.8); })->setShortcut(QKeySequence::ZoomOut);
    view->addAction(tr("Fit"), this, [this] { m_w->m_view->fit(); })->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    view->addAction(tr("Lay out afresh"), this, [this] { m_w->m_session->relayout(); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    view->addSeparator();
    m_w->m_groupAction = view->addAction(tr("Group by name scope"));
    m_w->m_groupAction->setCheckable(true);
    m_w->m_groupAction->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_G));
    m_w->m_groupAction->setToolTip(tr("Draw each name scope (/encoder/layer.0/…) as one box; double-click opens it"));
    connect(m_w->m_groupAction, &QAction::triggered, this, [this](bool on) { m_w->setGroupByScope(on); });
    view->addAction(tr("Close all scopes"), this, [this] {
        if (m_w->m_session->scopeGrouping()) m_w->m_session->setScopeGrouping(ScopeGrouping{});
    });
    view->addSeparator();
    auto* dark = view->addAction(tr("Dark palette"));
    dark->setCheckable(true);
    dark->setChecked(QSettings().value(QStringLiteral("view/dark"), false).toBool());
    connect(dark, &QAction::toggled, this, [this](bool on) {
        QSettings().setValue(QStringLiteral("view/dark"), on);
        m_w->applyPalette(on);
    });

    auto* exec = m_w->menuBar()->addMenu(tr("&Execute"));
    m_w->m_deviceCombo = new QComboBox;
    m_w->m_deviceCombo->addItems({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")});
    m_w->m_deviceCombo->setToolTip(tr("Device"));
    m_w->m_executeAction = exec->addAction(tr("Execute and profile this step"), this, [this] {
        ExecuteRequest r;
        r.device = m_w->m_deviceCombo->currentText().toStdString();
        r.repeats = QSettings().value(QStringLiteral("execute/repeats"), 10).toInt();
        m_w->executeCurrent(r);
    });
    m_w->m_executeAction->setShortcut(QKeySequence(Qt::Key_F5));
    m_w->m_executeAction->setIconText(tr("Execute"));
    m_w->m_executeAction->setToolTip(tr("Execute and profile this step (F5)"));
    m_w->m_executeAction->setEnabled(false);
    exec->addAction(tr("Repeats…"), this, [this] {
        bool ok = false;
        const int n =
            QInputDialog::getInt(m_w, tr("Repeats"), tr("Timed runs after 3 warm-ups:"),
                                 QSettings().value(QStringLiteral("execute/repeats"), 10).toInt(), 1, 1000, 1, &ok);
        if (ok) QSettings().setValue(QStringLiteral("execute/repeats"), n);
    });
    exec->addAction(tr("Check every phase against the source"), this, [this] { m_w->runCheck(); });
    exec->addAction(tr("Cancel"), this, [this] { m_w->cancelWork(); })->setShortcut(QKeySequence(Qt::Key_Escape));
    m_w->m_overlayAction = exec->addAction(tr("Timing overlay"));
    m_w->m_overlayAction->setCheckable(true);
    m_w->m_overlayAction->setEnabled(false); // until a profile exists (an execution enables and checks it)
    m_w->m_overlayAction->setToolTip(tr("Colour the nodes by their measured time (execute a step first: F5)"));
    m_w->m_overlayAction->setIconText(tr("Timing"));
    auto* logScale = exec->addAction(tr("Overlay on a log scale"));
    logScale->setCheckable(true);
    connect(logScale, &QAction::toggled, this, [this](bool on) {
        TimingOptions o = m_w->m_session->timingOptions();
        o.logScale = on;
        m_w->m_session->setProfile(m_w->m_session->profile(), o, m_w->m_session->profileStep());
        m_w->m_session->requestLayout();
    });
    auto* gradient = exec->addAction(tr("Overlay as a gradient (not thresholds)"));
    gradient->setCheckable(true);
    connect(gradient, &QAction::toggled, this, [this](bool on) {
        TimingOptions o = m_w->m_session->timingOptions();
        o.bins = on ? 0 : 5;
        m_w->m_session->setProfile(m_w->m_session->profile(), o, m_w->m_session->profileStep());
        m_w->m_session->requestLayout();
    });
    tb->addWidget(m_w->m_deviceCombo);
    tb->addAction(m_w->m_executeAction);
    tb->addAction(m_w->m_overlayAction);
    auto* tools = m_w->menuBar()->addMenu(tr("&Tools"));
    tools->addAction(tr("Compare with another pipeline…"), this, [this] { m_w->comparePipelines(); });

    // (the Find box and its "match k of n" sit above the graph: MainWindow::buildUi)
    connect(m_w->m_search, &QLineEdit::returnPressed, this, [this] { m_w->findNext(m_w->m_search->text(), 1); });
    connect(m_w->m_search, &QLineEdit::textChanged, this, [this] {
        m_w->m_searchHit = -1;
        m_w->m_findLabel->clear();
    });
    auto* findAct = new QAction(this);
    findAct->setShortcut(QKeySequence::Find);
    connect(findAct, &QAction::triggered, this, [this] {
        m_w->m_search->setFocus();
        m_w->m_search->selectAll();
    });
    m_w->addAction(findAct);
    auto* nextHit = new QAction(this);
    nextHit->setShortcut(QKeySequence::FindNext);
    connect(nextHit, &QAction::triggered, this, [this] { m_w->findNext(m_w->m_search->text(), 1); });
    m_w->addAction(nextHit);
    auto* prevHit = new QAction(this);
    prevHit->setShortcut(QKeySequence::FindPrevious);
    connect(prevHit, &QAction::triggered, this, [this] { m_w->findNext(m_w->m_search->text(), -1); });
    m_w->addAction(prevHit);
}

} // namespace passlens
