#include "passlens/ui/MainWindow.h"
#include "passlens/ui/WindowLayout.h"

#include "CheckBoxClickFilter.h"
#include "TreeColumnFitter.h"
#include "CompareDialog.h"
#include "GraphScene.h"
#include "GraphView.h"
#include "InspectorWidget.h"
#include "JobRunner.h"
#include "PipelineFilterModel.h"
#include "PipelineModel.h"
#include "ProfileModel.h"
#include "StepKeysFilter.h"
#include "StepPresenter.h"
#include "WindowActions.h"

#include <passlens/pipeline/OptimizeReport.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QResizeEvent>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>

#include <algorithm>
#include <functional>

namespace passlens {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_session(new DebugSession(this)) {
    setWindowTitle(QStringLiteral("PassLens"));
    setAcceptDrops(true);
    buildUi();
    new WindowActions(this);
    // an invalid PASSLENS_LAYOUT_BUDGET_MS, also on stderr: said where a desktop user looks
    if (const std::string& w = windowLayoutWarning(); !w.empty()) log(tr("warning: %1").arg(QString::fromStdString(w)));
    // the overlay shows the profile measured last (or none)
    connect(m_overlayAction, &QAction::toggled, this, [this](bool on) {
        if (on && m_profile)
            m_session->setProfile(*m_profile, m_session->timingOptions(), m_profileStep);
        else
            m_session->setProfile(std::nullopt, m_session->timingOptions());
        m_session->requestLayout();
    });
    updateProfileLabel();                                          // no profile yet: the dock is one line high
    QTimer::singleShot(0, this, [this] { updateProfileLabel(); }); // (dock sizes apply once laid out)
    connect(m_session, &DebugSession::opened, this, [this] {
        {
            const bool wasSyncing = std::exchange(m_syncingTree, true); // a reset moves no step
            // a re-run of the same pipeline on the same file keeps the phases it skipped unchecked
            const bool rerun = m_session->path() == m_treePath && m_session->pipelineName() == m_treePipeline;
            m_pipelineModel->setTrace(m_session->trace(), rerun ? m_pipelineModel->disabledPhases() : QStringList());
            m_treePath = m_session->path();
            m_treePipeline = m_session->pipelineName();
            m_pipelineTree->expandToDepth(-1);
            m_pipelineTree->collapseAll();
            m_syncingTree = wasSyncing;
        }
        m_slider->setRange(0, static_cast<int>(m_session->steps().size()) - 1);
        setWindowTitle(QStringLiteral("%1 — %2 — PassLens")
                           .arg(QFileInfo(m_session->path()).fileName(), m_session->pipelineName()));
        const int idx = m_pipelineCombo->findText(m_session->pipelineName());
        if (idx >= 0) m_pipelineCombo->setCurrentIndex(idx);
        if (const auto* run = m_session->run()) {
            log(tr("Pipeline %1: %2 → %3 nodes in %4 ms, %5 rewrites applied")
                    .arg(m_session->pipelineName())
                    .arg(run->nodesBefore)
                    .arg(run->nodesAfter)
                    .arg(run->totalUs / 1000.0, 0, 'f', 1)
                    .arg(m_session->trace()->appliedCount()));
            for (const auto& m : run->messages) log(QString::fromStdString(m));
        }
        addRecent(m_session->path());
        clearProfile();
        m_checkLegend->hide(); // (the new trace has no marks)
        // a node of the source graph keeps its id in every run; one a rewrite made may now be
        // another node under the same id, so the inspector lets it go
        if (const NodeId shown = m_inspector->shownNode(); shown >= 0) {
            auto source = m_session->graphAt(0);
            if (!source || !source->node(shown) || !source->node(shown)->inGraph() ||
                m_session->trace()->createdBy(shown) > 0)
                m_inspector->clearNode();
        }
    });
    // a file's source graph, drawn while its pipeline runs: nothing of the file before remains
    connect(m_session, &DebugSession::sourceShown, this, [this] {
        {
            const bool wasSyncing = std::exchange(m_syncingTree, true);
            m_pipelineModel->setTrace(nullptr);
            m_syncingTree = wasSyncing;
        }
        m_slider->setRange(0, 0);
        setWindowTitle(QStringLiteral("%1 — %2 (running) — PassLens")
                           .arg(QFileInfo(m_session->path()).fileName(), m_session->pipelineName()));
        clearProfile();
        m_checkLegend->hide();
        m_inspector->clearNode();
        m_presenter->setPendingReveal(-1);
        if (auto g = m_session->graphAt(0))
            log(tr("Source graph: %1 nodes, drawn while pipeline %2 runs")
                    .arg(g->nodeCount())
                    .arg(m_session->pipelineName()));
    });
    connect(m_session, &DebugSession::pipelineFailed, this, [this](const QString& msg) {
        log(tr("error: %1").arg(msg));
        setWindowTitle(QStringLiteral("%1 — %2 (failed) — PassLens")
                           .arg(QFileInfo(m_session->path()).fileName(), m_session->pipelineName()));
        if (qEnvironmentVariableIsEmpty("PASSLENS_NO_DIALOGS") && isVisible())
            QMessageBox::warning(this, tr("PassLens"), msg);
        settleIdle(false, msg);
    });
    connect(m_session, &DebugSession::failed, this, [this](const QString& msg) {
        log(tr("error: %1").arg(msg));
        m_summary->setText(tr("<b>Cannot open:</b> %1").arg(msg.toHtmlEscaped()));
        if (qEnvironmentVariableIsEmpty("PASSLENS_NO_DIALOGS") && isVisible())
            QMessageBox::warning(this, tr("PassLens"), msg);
        settleIdle(false, msg);
    });
    connect(m_session, &DebugSession::stepChanged, this, [this] { refreshStep(); });
    connect(m_session, &DebugSession::layoutReady, this, [this] {
        updateBusyIndicator();
        showLayout();
    });
    connect(m_session, &DebugSession::layoutFailed, this, [this](const QString& m) {
        updateBusyIndicator();
        log(tr("layout: %1").arg(m));
        settleIdle(false, m);
    });
    connect(m_session, &DebugSession::layoutStarted, this, [this] {
        // a jump or a big step shows the indicator at once; a small step only when it lasts
        m_layoutIndicator = m_session->followUpPending() || m_session->currentStepIsLarge();
        if (!m_layoutIndicator) m_busyDelay->start();
        updateBusyIndicator();
    });
    connect(m_session, &DebugSession::layoutCancelled, this, [this] {
        updateBusyIndicator();
        m_presenter->setPendingReveal(-1);
        // the drawing stays: say which step it shows
        const auto& steps = m_session->steps();
        const int shown = m_presenter->lastShownStep(), wanted = m_session->currentStep();
        QString what = tr("Drawing cancelled.");
        if (shown >= 0 && shown < static_cast<int>(steps.size()) && shown != wanted)
            what = tr("Drawing step %1 cancelled: the view still shows step %2 (%3). Lay out afresh (Ctrl+L) draws "
                      "step %1.")
                       .arg(wanted)
                       .arg(shown)
                       .arg(steps[static_cast<std::size_t>(shown)].label);
        log(what);
        m_summary->setText(what.toHtmlEscaped());
        settleIdle(false, tr("layout cancelled"));
    });
    connect(m_session, &DebugSession::runCancelled, this, [this] {
        const QString file = QFileInfo(m_session->path()).fileName();
        QString what = tr("Pipeline run cancelled: the window shows what it showed before.");
        if (!m_session->cancelledOpen().isEmpty()) {
            const int step = m_session->currentStep();
            what = tr("Opening %1 cancelled: back to %2, step %3 (%4).")
                       .arg(QFileInfo(m_session->cancelledOpen()).fileName(), file)
                       .arg(step)
                       .arg(m_session->steps()[static_cast<std::size_t>(step)].label);
        } else if (m_session->sourceOnly()) {
            what = tr("Opening %1 cancelled: its source graph stays shown, without a run.").arg(file);
            setWindowTitle(
                QStringLiteral("%1 — %2 (cancelled: source only) — PassLens").arg(file, m_session->pipelineName()));
        }
        log(what);
        statusBar()->showMessage(what, 8000);
        settleIdle(false, tr("pipeline run cancelled"));
    });
    connect(m_session, &DebugSession::busyChanged, this, [this](bool, const QString& what) {
        m_busyWhat = what;
        updateBusyIndicator();
    });
    QSettings s;
    restoreGeometry(s.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(s.value(QStringLiteral("window/state")).toByteArray());
    applyPalette(s.value(QStringLiteral("view/dark"), false).toBool());
    updateRecentMenu();
}

MainWindow::~MainWindow() = default;

void MainWindow::setExecutionBackend(std::shared_ptr<ExecutionBackend> backend) {
    m_backend = std::move(backend);
    m_executeAction->setEnabled(m_backend != nullptr);
}

void MainWindow::buildUi() {
    m_scene = new GraphScene(this);
    m_sceneBefore = new GraphScene(this);
    m_view = new GraphView(m_scene);
    m_viewBefore = new GraphView(m_sceneBefore);
    for (GraphView* v : {m_view, m_viewBefore}) { // a file dropped on the canvas reaches dropEvent
        v->setAcceptDrops(false);
        v->viewport()->setAcceptDrops(false);
    }
    m_view->syncWith(m_viewBefore);
    m_viewBefore->syncWith(m_view);
    auto* split = new QSplitter;
    split->addWidget(m_viewBefore);
    m_centre = new QStackedWidget;
    m_centre->addWidget(m_view);
    m_centre->addWidget(split);
    auto* centralBox = new QWidget;
    auto* v = new QVBoxLayout(centralBox);
    v->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // room for two lines, so that stepping (one or two lines of text) never resizes the view
    m_summary->setMinimumHeight(2 * m_summary->fontMetrics().lineSpacing() + 4);
    m_summary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    // Find sits beside the step's summary, above the graph it searches: always on screen (in the
    // toolbar it went behind the overflow arrow below about 1,300 px); WindowActions wires it
    auto* header = new QHBoxLayout;
    header->addWidget(m_summary, 1);
    m_search = new QLineEdit;
    m_search->setPlaceholderText(tr("Find node (Ctrl+F)…"));
    m_search->setToolTip(tr("Find a node of this step by id (17, #17), op kind, node name or variable name; "
                            "Enter / F3: next match, Shift+F3: previous"));
    m_search->setClearButtonEnabled(true);
    // not the window's first focus (a line edit keeps Home, End, Left, Right, D and Ctrl+E for its
    // text, so the stepping keys did nothing after opening): Ctrl+F or a click focuses it
    m_search->setFocusPolicy(Qt::ClickFocus);
    // 22 characters, down to 10 in a narrow window (the summary beside it wraps less)
    const int ch = m_search->fontMetrics().horizontalAdvance(QLatin1Char('x'));
    m_search->setMinimumWidth(ch * 10);
    m_search->setMaximumWidth(ch * 22);
    m_search->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    header->addWidget(m_search, 0, Qt::AlignTop);
    m_findLabel = new QLabel; // (as wide as its text: no room kept beside Find before a search)
    header->addWidget(m_findLabel, 0, Qt::AlignTop);
    v->addLayout(header);
    v->addWidget(m_centre, 1);
    auto* stepRow = new QHBoxLayout;
    m_slider = new QSlider(Qt::Horizontal);
    m_slider->setToolTip(tr("All steps: the source graph, every applied rewrite and the end of every phase"));
    m_stepLabel = new QLabel;
    // the slider keeps most of a narrow pane (1024-px screens); a long phase name wraps
    m_stepLabel->setMinimumWidth(m_stepLabel->fontMetrics().horizontalAdvance(QStringLiteral("step 8888 of 8888: ")));
    m_stepLabel->setWordWrap(true);
    m_slider->setMinimumWidth(120);
    stepRow->addWidget(m_slider, 1);
    stepRow->addWidget(m_stepLabel);
    v->addLayout(stepRow);
    setCentralWidget(centralBox);
    m_view->setFocus(); // the keys go to the graph when the window opens
    m_presenter = new StepPresenter(
        *m_session, {m_scene, m_sceneBefore, m_view, m_viewBefore, m_centre, m_summary, m_stepLabel}, this);
    connect(m_presenter, &StepPresenter::selectRequested, this, [this](NodeId id) { selectNode(id); });
    connect(m_presenter, &StepPresenter::message, this, [this](const QString& line) { log(line); });
    // the busy indicator: what runs, an endless bar, and Cancel for a pending layout
    m_busyBox = new QWidget;
    auto* busyRow = new QHBoxLayout(m_busyBox);
    busyRow->setContentsMargins(0, 0, 0, 0);
    m_busyLabel = new QLabel;
    auto* busyBar = new QProgressBar;
    busyBar->setRange(0, 0);
    busyBar->setMaximumWidth(120);
    busyBar->setTextVisible(false);
    m_busyCancel = new QToolButton;
    m_busyCancel->setText(tr("Cancel"));
    m_busyCancel->setToolTip(tr("Stop the pipeline run or the drawing; the view keeps what it shows (Esc)"));
    connect(m_busyCancel, &QToolButton::clicked, this, [this] { cancelWork(); });
    busyRow->addWidget(m_busyLabel);
    busyRow->addWidget(busyBar);
    busyRow->addWidget(m_busyCancel);
    statusBar()->addPermanentWidget(m_busyBox);
    m_busyBox->hide();
    m_busyDelay = new QTimer(this);
    m_busyDelay->setSingleShot(true);
    m_busyDelay->setInterval(300);
    connect(m_busyDelay, &QTimer::timeout, this, [this] {
        m_layoutIndicator = true;
        updateBusyIndicator();
    });
    connect(m_slider, &QSlider::valueChanged, this, [this](int value) { m_session->setCurrentStep(value); });

    // Pipeline dock
    m_pipelineModel = new PipelineModel(this);
    auto* filter = new PipelineFilterModel(this);
    filter->setSourceModel(m_pipelineModel);
    m_pipelineTree = new QTreeView;
    m_pipelineTree->setModel(filter);
    m_pipelineTree->setUniformRowHeights(true);
    new TreeColumnFitter(m_pipelineTree); // the phase names readable in a narrow dock
    m_pipelineTree->viewport()->installEventFilter(new CheckBoxClickFilter(m_pipelineTree));
    auto* pipeBox = new QWidget;
    auto* pv = new QVBoxLayout(pipeBox);
    pv->setContentsMargins(2, 2, 2, 2);
    m_hideUnchanged = new QAction(tr("Hide phases that changed nothing"), this);
    m_hideUnchanged->setCheckable(true);
    // Rows vanishing from the filter move no step; the tree then finds the step's row again.
    auto refilter = [this](const std::function<void()>& change) {
        const bool wasSyncing = std::exchange(m_syncingTree, true);
        change();
        m_syncingTree = wasSyncing;
        if (!m_session->steps().empty())
            syncPipelineTree(m_session->steps()[static_cast<std::size_t>(m_session->currentStep())]);
    };
    connect(m_hideUnchanged, &QAction::toggled, this,
            [filter, refilter](bool on) { refilter([&] { filter->setHideUnchanged(on); }); });
    auto* hide = new QToolButton;
    hide->setDefaultAction(m_hideUnchanged);
    hide->setToolButtonStyle(Qt::ToolButtonTextOnly);
    pv->addWidget(hide);
    m_rewriteFilter = new QLineEdit;
    m_rewriteFilter->setPlaceholderText(tr("Filter rewrites (name)…"));
    m_rewriteFilter->setClearButtonEnabled(true);
    m_rewriteFilter->setToolTip(tr("Keep the events of rewrites whose name contains this text; "
                                   "Ctrl+Right / Ctrl+Left step to the next / previous one"));
    connect(m_rewriteFilter, &QLineEdit::textChanged, this, [this, filter, refilter](const QString& t) {
        refilter([&] { filter->setRewriteFilter(t); });
        if (!t.trimmed().isEmpty()) m_pipelineTree->expandAll();
    });
    new StepKeysFilter(m_rewriteFilter, m_view); // Ctrl+Left / Ctrl+Right step from the box too
    pv->addWidget(m_rewriteFilter);
    pv->addWidget(m_pipelineTree, 1);
    // what the phase check's squares mean, under the tree once a check has marked it
    m_checkLegend = new QLabel(
        tr("Check against the source: <span style='color:#1e7b34'>■</span> matches · "
           "<span style='color:#c62828'>■</span> first divergent · <span style='color:#ef9a9a'>■</span> diverges · "
           "<span style='color:#757575'>■</span> could not run"));
    m_checkLegend->setWordWrap(true);
    m_checkLegend->hide();
    pv->addWidget(m_checkLegend);
    auto* pipeDock = m_pipeDock = new QDockWidget(tr("Pipeline"), this);
    pipeDock->setObjectName(QStringLiteral("pipelineDock"));
    pipeDock->setWidget(pipeBox);
    pipeBox->setMinimumWidth(300); // phase names stay readable in a small window
    addDockWidget(Qt::LeftDockWidgetArea, pipeDock);
    m_pipelineFilter = filter;
    // A row made current (click, arrow keys) shows its step: an event row its event, a phase
    // row the phase's end. The tree follows the slider in refreshStep().
    connect(m_pipelineTree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this, filter](const QModelIndex& i) {
                if (m_syncingTree || !i.isValid()) return;
                const QModelIndex src = filter->mapToSource(i);
                if (m_pipelineModel->isSkippedRow(src)) return; // a skipped phase has no step
                if (!src.parent().isValid()) {                  // a phase row: its end step
                    const int phase = src.row();
                    for (int k = 0; k < static_cast<int>(m_session->steps().size()); ++k)
                        if (m_session->steps()[static_cast<std::size_t>(k)].phaseEnd &&
                            m_session->steps()[static_cast<std::size_t>(k)].phase == phase)
                            return m_session->setCurrentStep(k);
                }
                m_session->goToEvent(m_pipelineModel->data(src, PipelineModel::EventRole).toInt());
            });
    // reorder: move a phase to another SequenceDB position; applied by the next Run
    m_pipelineTree->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_pipelineTree, &QWidget::customContextMenuRequested, this, [this, filter](const QPoint& pos) {
        const QModelIndex src = filter->mapToSource(m_pipelineTree->indexAt(pos));
        if (!src.isValid() || src.parent().isValid() || !m_session->trace() || m_pipelineModel->isSkippedRow(src))
            return;
        const PhaseRecord& ph = m_session->trace()->phases()[static_cast<std::size_t>(src.row())];
        QMenu menu;
        menu.addAction(
            tr("Move “%1” (position %2)…").arg(QString::fromStdString(ph.info.name)).arg(ph.info.position), this,
            [this, &ph] {
                bool ok = false;
                const double p = QInputDialog::getDouble(
                    this, tr("Move phase"),
                    tr("New position of %1 (the next Run uses it):").arg(QString::fromStdString(ph.info.name)),
                    ph.info.position, -1000, 1000, 3, &ok);
                if (ok) {
                    m_phaseMoves[QString::fromStdString(ph.info.name)] = p;
                    log(tr("%1 moves to %2 on the next Run").arg(QString::fromStdString(ph.info.name)).arg(p));
                }
            });
        menu.addAction(tr("Reset the phase order"), this, [this] { m_phaseMoves.clear(); });
        menu.exec(m_pipelineTree->viewport()->mapToGlobal(pos));
    });

    // Inspector dock
    m_inspector = new InspectorWidget;
    auto* inspDock = m_inspectorDock = new QDockWidget(tr("Inspector"), this);
    inspDock->setObjectName(QStringLiteral("inspectorDock"));
    inspDock->setWidget(m_inspector);
    m_inspector->setMinimumWidth(220);
    addDockWidget(Qt::RightDockWidgetArea, inspDock);
    connect(m_inspector, &InspectorWidget::eventActivated, this,
            [this](int seq) { jumpToEvent(seq, m_inspector->shownNode()); });
    connect(m_inspector, &InspectorWidget::nestedActivated, this,
            [this](NodeId id, const QString& attribute) { openNested(id, attribute); });
    connect(m_scene, &GraphScene::nodeSelected, this, [this](NodeId id) { selectNode(id); });
    connect(m_scene, &GraphScene::nodeActivated, this, [this](const QString& key) {
        if (key.startsWith(QLatin1Char('c'))) expandPlaceholder(key);
        if (key.startsWith(QLatin1Char('g'))) openScope(key);
    });
    connect(m_scene, &GraphScene::nodeContextMenu, this, [this](const QString& key, const QPoint& at) {
        const auto& layout = m_session->layout();
        if (!layout || !m_session->scopeGrouping()) return;
        const auto it = std::find_if(layout->nodes.begin(), layout->nodes.end(),
                                     [&](const LayoutNode& n) { return n.key == key.toStdString(); });
        if (it == layout->nodes.end()) return;
        QMenu menu;
        if (it->category == NodeCategory::Group)
            menu.addAction(tr("Open scope %1").arg(QString::fromStdString(it->name)), this,
                           [this, key] { openScope(key); });
        // the open scopes around it, innermost first
        for (std::string s = it->scope; !s.empty(); s = parentScope(s))
            menu.addAction(tr("Close scope %1").arg(QString::fromStdString(s)), this,
                           [this, s] { closeScope(QString::fromStdString(s)); });
        if (!menu.isEmpty()) menu.exec(at);
    });
    connect(m_sceneBefore, &GraphScene::nodeSelected, this, [this](NodeId id) { selectNode(id); });

    // Profile dock
    m_profileNodes = new ProfileModel(ProfileModel::Mode::PerNode, this);
    m_profileOps = new ProfileModel(ProfileModel::Mode::PerOp, this);
    auto makeTable = [this](ProfileModel* model) {
        auto* proxy = new QSortFilterProxyModel(this);
        proxy->setSourceModel(model);
        proxy->setSortRole(ProfileModel::SortRole);
        auto* t = new QTableView;
        t->setModel(proxy);
        t->setSortingEnabled(true);
        t->sortByColumn(ProfileModel::TimeUs, Qt::DescendingOrder);
        t->setSelectionBehavior(QAbstractItemView::SelectRows);
        t->setSelectionMode(QAbstractItemView::SingleSelection);
        t->horizontalHeader()->setSectionResizeMode(ProfileModel::Op, QHeaderView::Stretch);
        t->verticalHeader()->hide();
        return t;
    };
    m_profileTable = makeTable(m_profileNodes);
    m_profileOpTable = makeTable(m_profileOps);
    connect(m_profileTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& cur) {
                if (!cur.isValid()) return;
                const NodeId id = cur.data(ProfileModel::NodeIdRole).toLongLong();
                if (!m_presenter->revealNode(id)) selectNode(id); // on screen when drawn, in the inspector always
            });
    auto* tabs = new QTabWidget;
    tabs->addTab(m_profileTable, tr("Per node"));
    tabs->addTab(m_profileOpTable, tr("Per op kind"));
    m_profileTabs = tabs;
    m_profileLabel = new QLabel(tr("No profile yet: Execute and profile this step (F5)"));
    m_profileLabel->setWordWrap(true);
    m_profileLabel->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    auto* profBox = new QWidget;
    auto* profLayout = new QVBoxLayout(profBox);
    profLayout->setContentsMargins(2, 2, 2, 2);
    profLayout->addWidget(m_profileLabel);
    profLayout->addWidget(tabs, 1);
    auto* profDock = new QDockWidget(tr("Profile"), this);
    profDock->setObjectName(QStringLiteral("profileDock"));
    profDock->setWidget(profBox);
    addDockWidget(Qt::BottomDockWidgetArea, profDock);

    m_log = new QPlainTextEdit;
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    // (its default minimum, scroll bars included, would keep the empty Profile dock beside it tall)
    m_log->setMinimumHeight(2 * m_log->fontMetrics().lineSpacing());
    auto* logDock = new QDockWidget(tr("Log"), this);
    logDock->setObjectName(QStringLiteral("logDock"));
    logDock->setWidget(m_log);
    addDockWidget(Qt::BottomDockWidgetArea, logDock);
    tabifyDockWidget(profDock, logDock);
    profDock->raise();
    resizeDocks({pipeDock, inspDock}, {430, 330}, Qt::Horizontal);
    // no profile yet: the dock is its one line (updateProfileLabel enlarges it for the tables)
    tabs->hide();
    resizeDocks({profDock}, {2 * m_profileLabel->fontMetrics().lineSpacing() + 8}, Qt::Vertical);
}

QString MainWindow::summaryText() const { return m_summary->text(); }

QString MainWindow::findStatus() const { return m_findLabel ? m_findLabel->text() : QString(); }

void MainWindow::openFile(const QString& path, const QString& pipeline) {
    log(tr("Opening %1 (pipeline %2)").arg(path, pipeline));
    m_session->open(path, pipeline);
}

void MainWindow::refreshStep() {
    const auto& steps = m_session->steps();
    if (steps.empty()) return;
    const int cur = m_session->currentStep();
    {
        const QSignalBlocker b(m_slider);
        m_slider->setValue(cur);
    }
    const StepPoint& s = steps[static_cast<std::size_t>(cur)];
    m_stepLabel->setText(tr("step %1 of %2: %3").arg(cur).arg(steps.size() - 1).arg(s.label));
    if (cur != m_findStep) { // "match k of n" counted another step's nodes: F3 searches this one afresh
        m_searchHit = -1;
        m_findLabel->clear();
        m_findStep = -1;
    }
    syncPipelineTree(s);
    updateProfileLabel();
    if (m_diffCombo->currentIndex() > 0) m_session->setDiffFrom(m_session->phaseStartStep(cur));
    m_session->requestLayout();
}

void MainWindow::showLayout() {
    // a jump's target its step does not have (a node the jump's event removed) is not revealed;
    // the graph of the step drawn is kept once no layout is pending (graphAt looks it up)
    if (const NodeId id = m_presenter->pendingReveal();
        id >= 0 && !m_session->showingNested() && !m_session->layoutPending()) {
        const auto g = m_session->graphAt(m_session->currentStep());
        if (!g || !g->node(id) || !g->node(id)->inGraph()) m_presenter->setPendingReveal(-1);
    }
    m_presenter->show(m_diffCombo->currentIndex() == 2, m_inspector->shownNode());
    // the inspector describes its node in the step now shown (a node this step no longer has
    // says so; one it does not have yet lets go)
    if (const NodeId id = m_inspector->shownNode(); id >= 0 && !m_session->showingNested())
        if (const auto g = m_session->graphAt(m_session->currentStep()))
            m_inspector->showNode(g.get(), m_session->trace(), id, m_profile ? &*m_profile : nullptr);
    settleIdle(true, {});
}

int MainWindow::expandPlaceholder(const QString& key, int batch) { return m_presenter->expandPlaceholder(key, batch); }

bool MainWindow::openScope(const QString& key) { return m_presenter->openScope(key); }

bool MainWindow::closeScope(const QString& scope) { return m_presenter->closeScope(scope); }

void MainWindow::openNested(NodeId id, const QString& attribute) {
    auto g = m_session->graphAt(m_session->currentStep());
    const Apply* n = g ? g->node(id) : nullptr;
    if (!n) return;
    for (const Subgraph& sg : n->op().subgraphs())
        if (QString::fromStdString(sg.attribute) == attribute) {
            m_session->showNested(
                sg.graph,
                QStringLiteral("%1 of %2 #%3").arg(attribute, QString::fromStdString(n->op().kind())).arg(id));
            log(tr("Showing %1 of node #%2 (%3 nodes); step to return")
                    .arg(attribute)
                    .arg(id)
                    .arg(sg.graph->nodeCount()));
            m_session->requestLayout();
            return;
        }
}

void MainWindow::selectNode(NodeId id) {
    m_scene->selectNode(id);
    m_sceneBefore->selectNode(id);
    // the profile table follows the selection (without echoing back)
    if (auto* model = m_profileTable->model()) {
        const QSignalBlocker block(m_profileTable->selectionModel());
        m_profileTable->clearSelection();
        for (int r = 0; r < model->rowCount(); ++r)
            if (model->index(r, 0).data(ProfileModel::NodeIdRole).toLongLong() == id) {
                m_profileTable->selectRow(r);
                m_profileTable->scrollTo(model->index(r, 0));
                break;
            }
    }
    if (m_session->showingNested()) return; // nested graphs have their own ids
    auto g = m_session->graphAt(m_session->currentStep());
    m_inspector->showNode(g.get(), m_session->trace(), id, m_profile ? &*m_profile : nullptr);
}

void MainWindow::setDiffMode(int mode) {
    if (m_diffCombo->currentIndex() != mode) {
        m_diffCombo->setCurrentIndex(mode);
        return;
    }
    if (mode == 0)
        m_session->setDiffFrom(std::nullopt);
    else
        m_session->setDiffFrom(m_session->phaseStartStep(m_session->currentStep()));
    m_session->requestLayout();
}

void MainWindow::comparePipelines() {
    if (!m_session->trace()) return;
    // another pipeline than the one shown: theano against cleanup by default
    QStringList names;
    for (const auto& n : Pipeline::builtinNames())
        if (QString::fromStdString(n) != m_session->pipelineName()) names << QString::fromStdString(n);
    if (names.isEmpty()) return;
    const QString preferred =
        m_session->pipelineName() == QStringLiteral("theano") ? QStringLiteral("cleanup") : QStringLiteral("theano");
    bool ok = false;
    const QString other =
        QInputDialog::getItem(this, tr("Compare"), tr("Compare %1 with:").arg(m_session->pipelineName()), names,
                              std::max<int>(0, static_cast<int>(names.indexOf(preferred))), false, &ok);
    if (ok) compareWith(other);
}

void MainWindow::compareWith(const QString& other) {
    if (!m_session->trace() || other == m_session->pipelineName()) return;
    auto source = m_session->graphAt(0);
    const Trace* mine = m_session->trace();
    const PipelineRun* myRun = m_session->run();
    const QString mineName = m_session->pipelineName();
    Comparison shown; // the run shown; the worker adds the other one
    shown.mineName = mineName;
    shown.otherName = other;
    shown.myText = myRun ? QString::fromStdString(optimizeText(*myRun, *mine->graphAfterPhase("final"), *mine))
                         : tr("(session without a run)");
    shown.myFinal = std::shared_ptr<const FunctionGraph>(mine->graphAfterPhase("final"));
    Caption cap;
    cap.source = QFileInfo(m_session->path()).fileName().toStdString();
    cap.pipeline = mineName.toStdString() + " vs " + other.toStdString();
    cap.step = "final graphs: " + mineName.toStdString() + " (before) .. " + other.toStdString() + " (after)";
    LayoutEngine* engine = &m_session->layoutEngine();
    Job<Comparison> job;
    job.done = [this](const Comparison& c) {
        if (m_compareDialog) m_compareDialog->close();
        auto* dlg = new CompareDialog(c, m_session->trace(), m_scene->dark(), this);
        m_compareDialog = dlg;
        // a node of the shown run: the rewrite that made it (the last step for a source node)
        connect(dlg, &CompareDialog::nodeChosen, this, [this](NodeId id) {
            if (!m_session->trace()) return;
            const int ev = m_session->trace()->createdBy(id);
            m_session->goToEvent(ev > 0 ? ev : 0);
            if (ev <= 0) m_session->setCurrentStep(static_cast<int>(m_session->steps().size()) - 1);
            selectNode(id);
            raise();
        });
        dlg->show();
        settleIdle(true, {});
    };
    job.work = [source, shown, cap, engine](const JobControl<Comparison>& control) {
        return compareFinalGraphs(*source, shown, cap, *engine, &control.token());
    };
    m_session->jobs().start(std::move(job));
}

QDialog* MainWindow::compareDialog() const { return m_compareDialog.data(); }

void MainWindow::log(const QString& line) { m_log->appendPlainText(line); }

void MainWindow::addRecent(const QString& path) {
    QSettings s;
    QStringList r = s.value(QStringLiteral("recent")).toStringList();
    r.removeAll(path);
    r.prepend(QFileInfo(path).absoluteFilePath());
    while (r.size() > 10) r.removeLast();
    s.setValue(QStringLiteral("recent"), r);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    if (!m_recentMenu) return;
    m_recentMenu->clear();
    for (const QString& f : QSettings().value(QStringLiteral("recent")).toStringList())
        m_recentMenu->addAction(f, this, [this, f] { openFile(f, m_pipelineCombo->currentText()); });
}

void MainWindow::applyPalette(bool dark) {
    m_scene->setDark(dark);
    m_sceneBefore->setDark(dark);
    if (dark) {
        QPalette p;
        p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        p.setColor(QPalette::WindowText, Qt::white);
        p.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        p.setColor(QPalette::AlternateBase, QColor(0x2b, 0x2b, 0x2b));
        p.setColor(QPalette::Text, Qt::white);
        p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
        p.setColor(QPalette::ButtonText, Qt::white);
        p.setColor(QPalette::Highlight, QColor(0x19, 0x76, 0xd2));
        p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
        qApp->setPalette(p);
    } else {
        qApp->setPalette(QApplication::style()->standardPalette());
    }
    m_view->setBackgroundBrush(dark ? QColor(0x1e, 0x1e, 0x1e) : Qt::white);
    m_viewBefore->setBackgroundBrush(dark ? QColor(0x1e, 0x1e, 0x1e) : Qt::white);
    if (m_session->layout()) showLayout();
}

void MainWindow::cancelWork() {
    m_session->jobs().cancel(m_executeJob);
    m_session->jobs().cancel(m_session->jobs().newest(checkLane()));
    // a big file's source drawn while its run goes: cancelling the run goes back to the file
    // before it (or keeps that source), so the source's drawing is not cancelled with it
    const bool sourceRun = m_session->sourceOnly() && m_session->cancelRun();
    if (!sourceRun) {
        m_session->cancelRun();
        m_session->cancelLayout();
    }
}

void MainWindow::updateBusyIndicator() {
    const bool layout = m_session->layoutPending();
    if (!layout) {
        m_busyDelay->stop();
        m_layoutIndicator = false;
    }
    const bool busy = m_session->busy();
    if (busy)
        m_busyLabel->setText(m_busyWhat);
    else if (layout)
        m_busyLabel->setText(
            m_session->followUpPending()
                ? tr("Drawing the neighbourhood of the target, then step %1 …").arg(m_session->currentStep())
                : tr("Drawing step %1 …").arg(m_session->currentStep()));
    m_busyCancel->setVisible(layout || busy);
    m_busyBox->setVisible(busy || (layout && m_layoutIndicator));
}

bool MainWindow::busyIndicatorShown() const { return !m_busyBox->isHidden(); }

QString MainWindow::busyStatus() const { return m_busyLabel->text(); }

void MainWindow::whenIdle(std::function<void(bool, QString)> done) { m_idleWaiters.push_back(std::move(done)); }

void MainWindow::settleIdle(bool ok, const QString& message) {
    if (m_session->busy() || m_executing) return;
    auto waiters = std::move(m_idleWaiters);
    m_idleWaiters.clear();
    for (auto& w : waiters) w(ok, message);
}

void MainWindow::resizeEvent(QResizeEvent* e) {
    QMainWindow::resizeEvent(e);
    // after the docks have their new geometry
    QMetaObject::invokeMethod(this, &MainWindow::fitDocks, Qt::QueuedConnection);
}

void MainWindow::fitDocks() {
    if (!m_pipeDock || !m_inspectorDock) return;
    const int w = width();
    const bool left = m_pipeDock->isVisible() && !m_pipeDock->isFloating();
    const bool right = m_inspectorDock->isVisible() && !m_inspectorDock->isFloating();
    const int docks = (left ? m_pipeDock->width() : 0) + (right ? m_inspectorDock->width() : 0);
    if (w - docks >= w * 45 / 100) return;
    QList<QDockWidget*> which;
    QList<int> sizes;
    if (left) {
        which << m_pipeDock;
        sizes << std::max(m_pipeDock->minimumSizeHint().width(), std::min(w / 4, 430));
    }
    if (right) {
        which << m_inspectorDock;
        sizes << std::max(m_inspectorDock->minimumSizeHint().width(), std::min(w / 5, 330));
    }
    resizeDocks(which, sizes, Qt::Horizontal);
}

void MainWindow::fitScreen(const QSize& available, const QSize& preferred) {
    if (!m_pipeDock || !m_inspectorDock) return;
    QStringList moved;
    // narrower than 900: one dock column, the graph keeps the rest of the width
    if ((available.width() < 900 || minimumSizeHint().width() > available.width()) &&
        dockWidgetArea(m_inspectorDock) != dockWidgetArea(m_pipeDock)) {
        tabifyDockWidget(m_pipeDock, m_inspectorDock);
        moved << m_inspectorDock->windowTitle();
    }
    // lower than 560: the bottom docks join that column, the graph keeps the height
    if (available.height() < 560 || minimumSizeHint().height() > available.height())
        for (const char* name : {"profileDock", "logDock"})
            if (auto* dock = findChild<QDockWidget*>(QLatin1String(name));
                dock && dockWidgetArea(dock) != dockWidgetArea(m_pipeDock)) {
                tabifyDockWidget(m_pipeDock, dock);
                moved << dock->windowTitle();
            }
    if (!moved.isEmpty()) {
        m_pipeDock->raise();
        log(tr("The screen is %1 x %2: %3 shown as tabs beside the Pipeline dock")
                .arg(available.width())
                .arg(available.height())
                .arg(moved.join(QStringLiteral(", "))));
    }
    resize(preferred.boundedTo(available).expandedTo(minimumSizeHint()));
}

void MainWindow::closeEvent(QCloseEvent* e) {
    QSettings s;
    s.setValue(QStringLiteral("window/geometry"), saveGeometry());
    s.setValue(QStringLiteral("window/state"), saveState());
    cancelWork();
    QMainWindow::closeEvent(e);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile())
        openFile(urls.first().toLocalFile(), m_pipelineCombo->currentText());
}

} // namespace passlens
