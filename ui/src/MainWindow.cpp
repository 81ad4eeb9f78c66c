#include "passlens/ui/MainWindow.h"

#include "CompareDialog.h"
#include "GraphScene.h"
#include "GraphView.h"
#include "InspectorWidget.h"
#include "JobRunner.h"
#include "PipelineFilterModel.h"
#include "PipelineModel.h"
#include "ProfileModel.h"
#include "StepPresenter.h"
#include "WindowActions.h"

#include <passlens/io/Failure.h>
#include <passlens/ir/GraphSearch.h>
#include <passlens/layout/Export.h>
#include <passlens/layout/Report.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/pipeline/PhaseCheck.h>
#include <passlens/pipeline/OptimizeReport.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QStandardItemModel>
#include <QStyleOptionViewItem>
#include <QMouseEvent>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QShortcut>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QPointer>
#include <QTreeView>

#include <deque>
#include <functional>
#include <tuple>
#include <set>

namespace passlens {

namespace {

// A click on a phase row's check box toggles it without making the row current: a current row
// shows its step, and unchecking a phase (for the next Run) must not jump to it.
class CheckBoxClickFilter final : public QObject {
public:
    explicit CheckBoxClickFilter(QTreeView* tree)
        : QObject(tree)
        , m_tree(tree) {}

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        const auto type = event->type();
        if (type != QEvent::MouseButtonPress && type != QEvent::MouseButtonRelease &&
            type != QEvent::MouseButtonDblClick)
            return QObject::eventFilter(watched, event);
        auto* mouse = static_cast<QMouseEvent*>(event);
        const QPoint at = mouse->position().toPoint();
        const QModelIndex index = m_tree->indexAt(at);
        if (!index.isValid() || !(index.flags() & Qt::ItemIsUserCheckable) || mouse->button() != Qt::LeftButton)
            return QObject::eventFilter(watched, event);
        QStyleOptionViewItem option;
        option.initFrom(m_tree);
        option.rect = m_tree->visualRect(index);
        option.features |= QStyleOptionViewItem::HasCheckIndicator;
        if (index.data(Qt::DecorationRole).isValid()) option.features |= QStyleOptionViewItem::HasDecoration;
        const QRect box = m_tree->style()->subElementRect(QStyle::SE_ItemViewItemCheckIndicator, &option, m_tree);
        if (!box.contains(at)) return QObject::eventFilter(watched, event);
        if (type == QEvent::MouseButtonRelease) {
            const bool checked = index.data(Qt::CheckStateRole).toInt() == Qt::Checked;
            m_tree->model()->setData(index, checked ? Qt::Unchecked : Qt::Checked, Qt::CheckStateRole);
        }
        return true; // no press reaches the view: the current row (and the step) stay
    }

private:
    QTreeView* m_tree;
};

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_session(new DebugSession(this)) {
    setWindowTitle(QStringLiteral("PassLens"));
    setAcceptDrops(true);
    buildUi();
    new WindowActions(this);
    // the overlay shows the profile measured last (or none)
    connect(m_overlayAction, &QAction::toggled, this, [this](bool on) {
        if (on && !m_profileJson.is_null())
            m_session->setProfile(parseTimingProfile(m_profileJson, "profile"), m_session->timingOptions());
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
        auto g = m_session->graphAt(m_session->currentStep());
        m_layoutIndicator = m_session->followUpPending() || (g && g->nodeCount() > LayoutOptions{}.nodeThreshold);
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
    v->addWidget(m_summary);
    v->addWidget(m_centre, 1);
    auto* stepRow = new QHBoxLayout;
    m_slider = new QSlider(Qt::Horizontal);
    m_slider->setToolTip(tr("All steps: the source graph, every applied rewrite and the end of every phase"));
    m_stepLabel = new QLabel;
    m_stepLabel->setMinimumWidth(320);
    stepRow->addWidget(m_slider, 1);
    stepRow->addWidget(m_stepLabel);
    v->addLayout(stepRow);
    setCentralWidget(centralBox);
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
    m_busyCancel->setToolTip(tr("Stop drawing; the view keeps what it shows (Esc)"));
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
    m_pipelineTree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < PipelineModel::ColumnCount; ++c)
        m_pipelineTree->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    m_pipelineTree->header()->setStretchLastSection(false);
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
    pv->addWidget(m_rewriteFilter);
    pv->addWidget(m_pipelineTree, 1);
    auto* pipeDock = new QDockWidget(tr("Pipeline"), this);
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
    auto* inspDock = new QDockWidget(tr("Inspector"), this);
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
    auto* logDock = new QDockWidget(tr("Log"), this);
    logDock->setObjectName(QStringLiteral("logDock"));
    logDock->setWidget(m_log);
    addDockWidget(Qt::BottomDockWidgetArea, logDock);
    tabifyDockWidget(profDock, logDock);
    profDock->raise();
    resizeDocks({pipeDock, inspDock}, {430, 330}, Qt::Horizontal);
    resizeDocks({profDock}, {170}, Qt::Vertical);
}

void MainWindow::findNext(const QString& text, int direction) {
    if (m_search->text() != text) {
        const QSignalBlocker block(m_search);
        m_search->setText(text);
        m_searchHit = -1;
    }
    m_findStep = m_session->currentStep();
    QList<NodeId> hits;
    if (m_session->showingNested()) { // nested graphs: what is drawn is the whole graph
        for (GraphNodeItem* it : m_scene->find(text)) hits << it->node().node;
    } else if (auto g = m_session->graphAt(m_session->currentStep())) {
        for (const Apply* n : findNodes(*g, text.toStdString())) hits << n->id();
    }
    if (hits.isEmpty()) {
        m_searchHit = -1;
        m_findLabel->setText(text.trimmed().isEmpty() ? QString() : tr("no match"));
        return;
    }
    const int n = static_cast<int>(hits.size());
    m_searchHit = m_searchHit < 0 ? (direction >= 0 ? 0 : n - 1) : ((m_searchHit + direction) % n + n) % n;
    const NodeId id = hits[m_searchHit];
    m_findLabel->setText(tr("match %1 of %2").arg(m_searchHit + 1).arg(n));
    m_presenter->setPendingReveal(-1); // an earlier hit still being drawn is superseded
    if (m_presenter->revealNode(id)) return;
    // not in the drawing (a focused view of a big graph): draw its neighbourhood, then reveal
    m_presenter->setPendingReveal(id);
    log(tr("Find: drawing the neighbourhood of node #%1").arg(id));
    m_session->focusOnNodes({id});
}

void MainWindow::syncPipelineTree(const StepPoint& s) {
    // the event's row, else (source, phase ends, a phase whose events are hidden) the phase's
    QModelIndex src = s.phaseEnd ? QModelIndex() : m_pipelineModel->indexOfEvent(s.event);
    if (!src.isValid() && s.phase >= 0 && s.phase < m_pipelineModel->rowCount())
        src = m_pipelineModel->index(s.phase, 0);
    const QModelIndex shown = m_pipelineFilter->mapFromSource(src);
    const bool wasSyncing = std::exchange(m_syncingTree, true);
    if (shown.isValid()) {
        m_pipelineTree->selectionModel()->setCurrentIndex(shown, QItemSelectionModel::ClearAndSelect |
                                                                     QItemSelectionModel::Rows);
        m_pipelineTree->scrollTo(shown);
    } else {
        m_pipelineTree->selectionModel()->clearSelection();
    }
    m_syncingTree = wasSyncing;
}

bool MainWindow::setGroupByScope(bool on) {
    const QSignalBlocker block(m_groupAction);
    if (!on) {
        m_groupAction->setChecked(false);
        if (m_session->scopeGrouping()) m_session->setScopeGrouping(std::nullopt);
        return true;
    }
    auto g = m_session->graphAt(m_session->currentStep());
    const bool scoped = g && hasNameScopes(*g); // the rule the drawing's boxes follow
    if (!scoped) {
        m_groupAction->setChecked(false);
        statusBar()->showMessage(
            tr("No name scopes here: no node name has a '/'-separated prefix (like /encoder/layer.0/MatMul)"), 6000);
        return false;
    }
    m_groupAction->setChecked(true);
    log(tr("Grouping by name scope: double-click a scope box to open it"));
    m_session->setScopeGrouping(ScopeGrouping{});
    return true;
}

bool MainWindow::stepToRewrite(int direction) {
    const Trace* trace = m_session->trace();
    const auto& steps = m_session->steps();
    if (!trace || steps.empty()) return false;
    const StepPoint& here = steps[static_cast<std::size_t>(m_session->currentStep())];
    // which rewrite: the filter's text, else the rewriter of the event shown
    QString wanted = m_rewriteFilter->text().trimmed();
    bool exact = false;
    if (wanted.isEmpty() && !here.phaseEnd && here.event >= 1 &&
        here.event <= static_cast<int>(trace->events().size())) {
        wanted = QString::fromStdString(trace->events()[static_cast<std::size_t>(here.event - 1)].rewriter);
        exact = true;
    }
    if (wanted.isEmpty()) {
        statusBar()->showMessage(tr("Show a rewrite event or type a rewrite name in the filter first"), 4000);
        return false;
    }
    const auto& events = trace->events();
    const int n = static_cast<int>(events.size());
    for (int k = 0; k < n; ++k) {
        // events are 1-based: from the one after (before) the shown step's event
        const int seq = direction > 0 ? here.event + 1 + k : here.event - (here.phaseEnd ? 0 : 1) - k;
        if (seq < 1 || seq > n) break;
        const RewriteEvent& e = events[static_cast<std::size_t>(seq - 1)];
        const QString name = QString::fromStdString(e.rewriter);
        if (e.status != EventStatus::Applied ||
            (exact ? name != wanted : !PipelineFilterModel::rewriterMatches(name, wanted)))
            continue;
        m_session->goToEvent(seq);
        return true;
    }
    statusBar()->showMessage(
        direction > 0 ? tr("No later event of %1").arg(wanted) : tr("No earlier event of %1").arg(wanted), 4000);
    return false;
}

void MainWindow::jumpToEvent(int seq, NodeId id) {
    const Trace* trace = m_session->trace();
    if (!trace || seq < 1 || seq > static_cast<int>(trace->events().size())) return;
    m_session->goToEvent(seq);
    // the node (when it is in that step) and what the rewrite added are drawn first
    auto g = m_session->graphAt(m_session->currentStep());
    std::vector<NodeId> seeds;
    const bool present = id >= 0 && g && g->node(id) && g->node(id)->inGraph();
    if (present) seeds.push_back(id);
    for (NodeId a : trace->events()[static_cast<std::size_t>(seq - 1)].added)
        if (g && g->node(a) && g->node(a)->inGraph()) seeds.push_back(a);
    m_presenter->setPendingReveal(present ? id : -1);
    if (!seeds.empty()) m_session->showNeighbourhoodFirst(std::move(seeds));
}

void MainWindow::updateProfileLabel() {
    const auto& steps = m_session->steps();
    auto* dock = qobject_cast<QDockWidget*>(
        m_profileTabs->parentWidget() ? m_profileTabs->parentWidget()->parentWidget() : nullptr);
    if (m_profileStep < 0 || m_profileStep >= static_cast<int>(steps.size()) || m_profileJson.is_null()) {
        m_profileStep = -1;
        m_profileLabel->setText(tr("No profile yet: Execute and profile this step (F5)"));
        m_profileLabel->setEnabled(true);
        for (QTableView* t : {m_profileTable, m_profileOpTable}) t->setEnabled(true);
        m_profileTabs->hide(); // an empty Profile dock is one line high
        if (dock) resizeDocks({dock}, {dock->minimumSizeHint().height()}, Qt::Vertical);
        return;
    }
    if (m_profileTabs->isHidden()) {
        m_profileTabs->show();
        if (dock) resizeDocks({dock}, {std::max(220, height() / 4)}, Qt::Vertical);
    }
    const QString where =
        tr("step %1: %2").arg(m_profileStep).arg(steps[static_cast<std::size_t>(m_profileStep)].label);
    const QString device = QString::fromStdString(m_profileJson.value("device", std::string()));
    const bool here = m_profileStep == m_session->currentStep();
    m_profileLabel->setText(
        here
            ? tr("Measured on %1 (%2)").arg(where, device)
            : tr("Measured on %1 (%2), not on the step shown: execute again (F5) to time this one").arg(where, device));
    // dimmed on another step: its node ids and times describe another graph
    for (QTableView* t : {m_profileTable, m_profileOpTable}) t->setEnabled(here);
}

void MainWindow::clearProfile() {
    m_profileJson = nlohmann::json();
    m_profileNodes->setProfile({}, nullptr);
    m_profileOps->setProfile({}, nullptr);
    m_profileStep = -1;
    updateProfileLabel();
}

QString MainWindow::profileStatus() const { return m_profileLabel->text(); }

bool MainWindow::profileDimmed() const { return !m_profileTable->isEnabled(); }

bool MainWindow::profileTablesShown() const { return !m_profileTabs->isHidden(); }

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
    m_presenter->show(m_diffCombo->currentIndex() == 2, m_inspector->shownNode());
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
    m_inspector->showNode(g.get(), m_session->trace(), id, m_profileJson.is_null() ? nullptr : &m_profileJson);
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

void MainWindow::executeCurrent(const ExecuteRequest& request) {
    if (!m_backend || m_executing) return;
    auto g = m_session->graphAt(m_session->currentStep());
    if (!g) return;
    m_executing = true;
    auto* progress = new QProgressBar;
    progress->setRange(0, 100);
    progress->setMaximumWidth(200);
    statusBar()->addPermanentWidget(progress);
    log(tr("Executing step %1 on %2 (%3 repeats) …")
            .arg(m_session->currentStep())
            .arg(QString::fromStdString(request.device))
            .arg(request.repeats));
    auto backend = m_backend;
    using Profiled = std::pair<nlohmann::json, QString>;
    Job<Profiled> job;
    const int step = m_session->currentStep();
    // (a cancelled execution ends as its backend makes it end: an error, or the profile it had)
    job.done = job.cancelled = [this, progress, g, step](Profiled result) {
        auto [profile, error] = std::move(result);
        statusBar()->removeWidget(progress);
        progress->deleteLater();
        m_executing = false;
        if (!error.isEmpty()) {
            log(tr("execution failed: %1").arg(error));
            settleIdle(false, error);
            return;
        }
        m_profileJson = profile;
        m_session->setProfileJson(profile);
        m_profileNodes->setProfile(profile, g.get());
        m_profileOps->setProfile(profile, g.get());
        m_profileStep = step;
        updateProfileLabel();
        log(tr("Profiled on %1: %2 µs per run")
                .arg(QString::fromStdString(profile.value("device", std::string())))
                .arg(m_profileNodes->totalUs(), 0, 'f', 1));
        if (m_overlayAction->isChecked())
            m_session->setProfile(parseTimingProfile(profile, "profile"), m_session->timingOptions());
        m_session->requestLayout();
    };
    job.work = [backend, g, request](const JobControl<Profiled>& control) -> Profiled {
        try {
            return {backend->profile(
                        *g, request, [&control](double f) { control.progress(f); }, control.flag()),
                    {}};
        } catch (const std::exception& e) {
            return {{}, QString::fromStdString(e.what())};
        }
    };
    const JobId id = m_session->jobs().start(std::move(job));
    m_executeJob = id;
    connect(&m_session->jobs(), &JobRunner::progressed, progress, [progress, id](JobId job, double f) {
        if (job == id) progress->setValue(static_cast<int>(f * 100));
    });
}

void MainWindow::runCheck() {
    if (!m_backend || !m_session->trace()) return;
    auto backend = m_backend;
    auto source = m_session->graphAt(0);
    // the phases to check, with the graphs of their end steps (taken now: the worker must not
    // read a trace that a re-run may replace)
    std::vector<CheckedPhase> phases = phasesToCheck(*m_session->trace());
    for (CheckedPhase& ph : phases)
        for (int i = 1; i < static_cast<int>(m_session->steps().size()); ++i) {
            const StepPoint& st = m_session->steps()[static_cast<std::size_t>(i)];
            if (!st.phaseEnd || st.phase != static_cast<int>(ph.index)) continue;
            ph.graph = [g = m_session->graphAt(i)] { return g; };
            break;
        }
    log(tr("Checking %1 phases that changed the graph against the source …").arg(phases.size()));
    const Trace* checked = m_session->trace();
    const std::string context = "check " + QFileInfo(m_session->path()).fileName().toStdString();
    Job<PhaseCheckResult> job;
    job.done = [this, checked](const PhaseCheckResult& result) {
        for (const PhaseCheckEntry& e : result.phases) {
            const QString name = QString::fromStdString(e.name);
            const auto mark = !e.diff       ? PipelineModel::CheckMark::Failed
                              : !e.diverges ? PipelineModel::CheckMark::Match
                              : e.first     ? PipelineModel::CheckMark::FirstDivergent
                                            : PipelineModel::CheckMark::Diverged;
            const QString line = e.diff
                                     ? QStringLiteral("%1: max_abs %2, max_rel %3%4")
                                           .arg(name)
                                           .arg(e.diff->maxAbs, 0, 'g', 3)
                                           .arg(e.diff->maxRel, 0, 'g', 3)
                                           .arg(e.first ? QStringLiteral("   <-- first divergent phase") : QString())
                                     : QStringLiteral("%1: %2%3")
                                           .arg(name, QString::fromStdString(e.error))
                                           .arg(e.first ? QStringLiteral("   <-- first divergent phase") : QString());
            log(QStringLiteral("  ") + line);
            // the marks go into the tree, unless another run replaced the trace meanwhile
            if (m_session->trace() == checked)
                m_pipelineModel->setCheckMark(static_cast<int>(e.index), mark, tr("check: %1").arg(line));
        }
        if (result.firstDivergent.empty())
            log(tr("  every phase matches the source within max_rel %1").arg(kCheckTolerance, 0, 'g', 3));
        settleIdle(true, {});
    };
    job.work = [backend, source, phases, context](const JobControl<PhaseCheckResult>&) {
        return checkPhases(
            phases,
            [&](const FunctionGraph& g) {
                const nlohmann::json r = backend->compare(g, *source);
                return OutputsDiff{r.value("max_abs", 0.0), r.value("max_rel", 0.0), r.value("shapes_match", true)};
            },
            kCheckTolerance, context);
    };
    m_session->jobs().start(std::move(job));
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

QString MainWindow::suggestedExportName(const QString& extension) const {
    QString base = QFileInfo(m_session->path()).fileName();
    for (const char* ext : {".passlens.json", ".passlens", ".graph.json", ".onnx", ".json"})
        if (base.endsWith(QLatin1String(ext), Qt::CaseInsensitive)) {
            base.chop(static_cast<int>(qstrlen(ext)));
            break;
        }
    if (base.isEmpty()) base = QStringLiteral("graph");
    QString name = QStringLiteral("%1-step%2").arg(base).arg(m_session->currentStep());
    if (m_session->showingNested())
        name += QStringLiteral("-nested");
    else if (m_session->diffFrom())
        name += QStringLiteral("-diff");
    return name + QLatin1Char('.') + extension;
}

void MainWindow::exportView() {
    if (!m_session->layout()) return;
    // what to export: the drawing, the visible area or the selection; portrait or landscape
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Export view"));
    auto* form = new QFormLayout(&dialog);
    auto* area = new QComboBox;
    area->addItems({tr("The whole drawing"), tr("The visible area"), tr("The selection and its neighbours")});
    const bool selected = !m_scene->selectedItems().isEmpty();
    if (!selected) qobject_cast<QStandardItemModel*>(area->model())->item(2)->setEnabled(false);
    auto* hops = new QSpinBox;
    hops->setRange(0, 10);
    hops->setValue(1);
    hops->setSuffix(tr(" hops"));
    hops->setEnabled(false);
    connect(area, &QComboBox::currentIndexChanged, hops, [hops](int i) { hops->setEnabled(i == 2); });
    auto* orientation = new QComboBox;
    orientation->addItems({tr("Portrait: as shown (top to bottom)"), tr("Landscape: left to right")});
    form->addRow(tr("Export"), area);
    form->addRow(tr("Neighbours"), hops);
    form->addRow(tr("Orientation"), orientation);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    form->addRow(buttons);
    if (dialog.exec() != QDialog::Accepted) return;
    ExportRequest request;
    request.area = static_cast<ExportRequest::Area>(area->currentIndex());
    request.hops = hops->value();
    request.landscape = orientation->currentIndex() == 1;
    QString name = suggestedExportName();
    if (request.area == ExportRequest::Area::Visible)
        name.replace(QLatin1String(".svg"), QLatin1String("-visible.svg"));
    if (request.area == ExportRequest::Area::Selection)
        name.replace(QLatin1String(".svg"), QLatin1String("-selection.svg"));
    const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), name,
                                                      tr("SVG (*.svg);;PDF (*.pdf);;PNG (*.png);;DOT (*.dot)"));
    if (!path.isEmpty()) exportTo(path, request);
}

bool MainWindow::exportTo(const QString& path, const ExportRequest& request) {
    const auto& layout = m_session->layout();
    if (!layout) {
        statusBar()->showMessage(tr("Nothing to export: no drawing yet"), 4000);
        return false;
    }
    const auto fmt = formatFromExtension(path.toStdString()).value_or(RenderFormat::Svg);
    const DiffView view = DiffView::Overlay;
    if (request.area == ExportRequest::Area::Drawing && !request.landscape) {
        // the drawing as shown: no new layout
        try {
            const std::size_t n = exportLayout(m_session->layoutEngine(), *layout, path.toStdString(), fmt, view);
            log(tr("Exported %1 (%2 bytes)").arg(path).arg(n));
            emit exported(path, true, {});
        } catch (...) {
            const QString message = QString::fromStdString(currentExceptionMessage("export " + path.toStdString()));
            QMessageBox::warning(this, tr("Export"), message);
            emit exported(path, false, message);
        }
        return true;
    }
    // the seeds of a partial export: drawn keys (placeholders and scope boxes stand for themselves)
    std::set<std::string> seeds;
    if (request.area == ExportRequest::Area::Selection) {
        for (QGraphicsItem* item : m_scene->selectedItems())
            if (auto* node = dynamic_cast<GraphNodeItem*>(item)) seeds.insert(node->node().key);
    } else if (request.area == ExportRequest::Area::Visible) {
        const QRectF visible = m_view->mapToScene(m_view->viewport()->rect()).boundingRect();
        for (GraphNodeItem* node : m_scene->nodeItems())
            if (visible.intersects(node->sceneBoundingRect())) seeds.insert(node->node().key);
    }
    if (request.area != ExportRequest::Area::Drawing && seeds.empty()) {
        statusBar()->showMessage(request.area == ExportRequest::Area::Selection ? tr("Nothing selected to export")
                                                                                : tr("No node on screen to export"),
                                 4000);
        return false;
    }
    const DrawingRequest drawing = m_session->drawingRequest();
    const bool whole = request.area == ExportRequest::Area::Drawing;
    const int hops = request.area == ExportRequest::Area::Selection ? std::max(0, request.hops) : 0;
    const bool landscape = request.landscape;
    const std::string target = path.toStdString();
    LayoutEngine* engine = &m_session->layoutEngine();
    log(tr("Exporting %1 …").arg(path));
    Job<QString> job;
    job.done = [this, path](const QString& error) {
        if (error.isEmpty()) {
            log(tr("Exported %1").arg(path));
        } else {
            log(error);
            statusBar()->showMessage(error, 8000);
        }
        emit exported(path, error.isEmpty(), error);
    };
    job.work = [=](const JobControl<QString>& control) -> QString {
        try {
            DrawGraph dg = drawing.draw();
            if (!whole) {
                // the seeds and `hops` around them; the rest folded into "… N nodes" boxes
                for (DrawNode& n : dg.nodes) n.seed = seeds.count(n.key) > 0;
                dg = focusView(dg, hops, std::max<std::size_t>(seeds.size() + 16, 400));
                dg.focusAround = hops > 0 ? "the selection" : "the visible area";
            }
            LayoutOptions options;
            if (landscape) options.dot.rankdir = "LR";
            if (!whole) options.nodeThreshold = std::max(options.nodeThreshold, dg.nodes.size());
            const LayoutResult laid = engine->layout(dg, options, &control.token());
            const std::size_t n = exportLayout(*engine, laid, target, fmt, view);
            (void)n;
            return {};
        } catch (...) {
            return QString::fromStdString(currentExceptionMessage("export " + target));
        }
    };
    m_session->jobs().start(std::move(job));
    return true;
}

void MainWindow::exportReport() {
    if (!m_session->trace()) return;
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Report folder"));
    if (dir.isEmpty()) return;
    // the same code as `passlens-cli report`, on a worker
    ReportOptions opt;
    opt.sourcePath = m_session->path().toStdString();
    opt.sourceLabel = QFileInfo(m_session->path()).fileName().toStdString();
    opt.pipeline = m_session->pipelineName().toStdString();
    opt.profile = m_profileJson.is_object() ? m_profileJson : nlohmann::json();
    auto trace = std::make_shared<Trace>(*m_session->trace());
    log(tr("Writing the report into %1 …").arg(dir));
    Job<QString> job;
    job.done = [this](const QString& line) { log(line); };
    job.work = [trace, opt, dir](const JobControl<QString>&) {
        try {
            const ReportResult r = writeReport(*trace, dir.toStdString(), opt);
            return QObject::tr("Report: %1 files in %2, open %2/index.html%3")
                .arg(r.files.size())
                .arg(dir)
                .arg(r.failures ? QObject::tr(" (%1 figures failed)").arg(r.failures) : QString());
        } catch (...) {
            return QObject::tr("report failed: %1")
                .arg(QString::fromStdString(currentExceptionMessage("report " + dir.toStdString())));
        }
    };
    m_session->jobs().start(std::move(job));
}

void MainWindow::saveSession() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save session"), QFileInfo(m_session->path()).completeBaseName() + QStringLiteral(".passlens"),
        tr("Sessions (*.passlens *.passlens.json)"));
    if (path.isEmpty()) return;
    try {
        m_session->saveSession(path);
        log(tr("Saved %1").arg(path));
    } catch (...) {
        QMessageBox::warning(this, tr("Save session"),
                             QString::fromStdString(currentExceptionMessage("save session " + path.toStdString())));
    }
}

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
    m_session->cancelLayout();
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
    m_busyCancel->setVisible(layout);
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
