#pragma once
/// @file MainWindow.h
/// The debugger window: open a graph, run a pipeline, step through phases and single rewrites,
/// see any step or diff drawn by Graphviz, inspect nodes, execute and overlay timings, compare
/// pipelines, export. Long work runs on worker threads (DebugSession's JobRunner).
/// The class wires widgets (MainWindow.cpp); its navigation (MainWindowNavigation.cpp),
/// execution and profile (MainWindowExecute.cpp) and exports (MainWindowExport.cpp) live in
/// files of their own, what a step shows in StepPresenter, the menus in WindowActions.
#include "passlens/ui/DebugSession.h"
#include "passlens/ui/ExecutionBackend.h"

#include <QMainWindow>
#include <QPointer>

#include <functional>
#include <map>

class QAction;
class QComboBox;
class QDialog;
class QLabel;
class QDockWidget;
class QLineEdit;
class QPlainTextEdit;
class QSlider;
class QSortFilterProxyModel;
class QStackedWidget;
class QTreeView;
class QTableView;
class QTimer;
class QToolButton;

namespace passlens {

class GraphScene;
class GraphView;
class InspectorWidget;
class PipelineModel;
class ProfileModel;
class StepPresenter;

/// What File > Export view writes (MainWindow::exportTo).
struct ExportRequest {
    enum class Area { Drawing, Visible, Selection };
    Area area = Area::Drawing; ///< the drawing shown, the nodes on screen, or the selection
    int hops = 1;              ///< Selection: the nodes within this many edges come too
    bool landscape = false;    ///< laid out left to right (a wide figure) instead of top down
};

class MainWindow final : public QMainWindow {
    Q_OBJECT
    friend class WindowActions; ///< builds the menus and tool bar, calls the window's private actions
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    DebugSession& session() { return *m_session; }
    /// Supplies execution (app/ wires the kernels in); without one, Execute is disabled.
    void setExecutionBackend(std::shared_ptr<ExecutionBackend> backend);
    /// Opens a file and runs `pipeline` on it (asynchronous).
    void openFile(const QString& path, const QString& pipeline = QStringLiteral("theano"));
    /// Calls `done` once the current open/pipeline/layout work is finished (for --screenshot and
    /// tests); `done(false, message)` on failure.
    void whenIdle(std::function<void(bool, QString)> done);

    // for tests
    GraphScene* graphScene() const { return m_scene; }
    GraphView* graphView() const { return m_view; }
    /// The left ("before") view of the side-by-side diff.
    GraphView* beforeView() const { return m_viewBefore; }
    GraphScene* beforeScene() const { return m_sceneBefore; }
    PipelineModel* pipelineModel() const { return m_pipelineModel; }
    QTreeView* pipelineTree() const { return m_pipelineTree; }
    QComboBox* pipelineBox() const { return m_pipelineCombo; }
    ProfileModel* profileModel() const { return m_profileNodes; }
    QTableView* profileTable() const { return m_profileTable; }
    InspectorWidget* inspector() const { return m_inspector; }
    /// Runs the execution backend on the current step (asynchronous; whenIdle waits for it).
    void executeCurrent(const ExecuteRequest& request = {});
    void setDiffMode(int mode); ///< 0 off, 1 overlay (phase start -> step), 2 side by side
    void selectNode(NodeId id);
    /// Find: moves to the next (`direction` 1) or previous (-1) node of the current step that
    /// matches `text` (findNodes: ids, op kinds, node and variable names, whole words first),
    /// draws it when the shown drawing is a focused view without it, selects it and brings it
    /// on screen; the "match k of n" label next to the search box says where it is.
    void findNext(const QString& text, int direction = 1);
    /// Expands the focused view's placeholder `key` ("c3", a "… N nodes" box; double-click):
    /// draws what is shown now plus up to `batch` of the hidden nodes it stands for, the ones
    /// nearest the drawn nodes it connects to. Returns how many nodes it adds (0: not a
    /// placeholder, or nothing hidden next to it).
    int expandPlaceholder(const QString& key, int batch = 60);
    /// Group by name scope (View menu): on draws every closed scope as one box (ScopeGroups.h),
    /// off draws every node. False (and a status message) when turning it on finds no scoped
    /// node name in the step.
    bool setGroupByScope(bool on);
    /// Opens the scope of the Group box `key` (double-click): its nodes and child scopes are
    /// drawn. False when `key` is not a drawn Group.
    bool openScope(const QString& key);
    /// Closes `scope` (and the scopes inside it): drawn as one box again. False when not open.
    bool closeScope(const QString& scope);
    /// Steps to the next (`direction` 1) or previous (-1) applied event of one rewrite: the
    /// rewrites matching the pipeline dock's rewrite filter, else the rewriter of the event
    /// shown. False (and a status message) when there is none.
    bool stepToRewrite(int direction);
    /// The pipeline dock's "filter rewrites" box.
    QLineEdit* rewriteFilter() const { return m_rewriteFilter; }
    /// Compares the shown pipeline with `other` (a built-in pipeline, never the same one): runs
    /// it on the source graph (asynchronous; whenIdle waits) and opens a dialog with both final
    /// graphs drawn as one diff (union layout; nodes only in this run as removed, only in the
    /// other as added), the summary, and both optimizer profiles side by side.
    void compareWith(const QString& other);
    /// The comparison dialog opened last (null when closed).
    QDialog* compareDialog() const;
    /// Goes to rewrite event `seq` (a provenance link: "created by #17 ...") and brings node
    /// `id` on screen: the neighbourhood of the node and of the event's new nodes is drawn
    /// first, the whole step after it; the node is selected in both.
    void jumpToEvent(int seq, NodeId id = -1);
    using ExportRequest = passlens::ExportRequest;
    /// Exports the view to `path` (format from its extension: svg, pdf, png, dot). The drawing
    /// as shown is rendered at once (no new layout); the visible area or the selection with its
    /// hops (a focused view of the step's drawing, the rest folded into "… N nodes" boxes) and
    /// landscape figures are laid out afresh on a worker. Emits exported() when written; false
    /// (and a status message) when there is nothing to export (no drawing, empty selection).
    bool exportTo(const QString& path, const ExportRequest& request = {});
    /// The file name Export offers: model, step and view, e.g. `lstm-step40-diff.svg`.
    QString suggestedExportName(const QString& extension = QStringLiteral("svg")) const;
    /// The Profile dock's line: the step the profile was measured on ("Measured on step 40: …").
    QString profileStatus() const;
    /// True while the profile shown was measured on another step than the one shown (its
    /// tables are dimmed).
    bool profileDimmed() const;
    /// True while the Profile dock shows its tables (false while there is no profile).
    bool profileTablesShown() const;
    /// Execute > Check: compares every phase's graph with the source on the execution backend
    /// (asynchronous; whenIdle waits); marks each phase in the pipeline tree (match, first
    /// divergent, diverged, failed) and logs the figures. Esc (cancelWork) stops it before its
    /// next phase: "Check cancelled" in the log and the status bar, no phase marked; a new check
    /// supersedes one still going.
    void runCheck();
    /// The line above the view: the step, its node count and layout, a diff's summary, and why
    /// the pipeline failed when the source is shown alone (rich text).
    QString summaryText() const;
    /// True while the status bar's busy indicator shows: a pipeline runs, or a layout is pending
    /// (at once for a provenance jump or a step above the focused-view threshold, after 300 ms
    /// otherwise).
    bool busyIndicatorShown() const;
    /// The busy indicator's text ("Drawing step 12 …").
    QString busyStatus() const;
    /// Esc, Execute > Cancel, the busy indicator's Cancel: stops the execution, the phase check,
    /// the pipeline run (DebugSession::cancelRun; the status bar says it was cancelled) and the
    /// pending layout (DebugSession::cancelLayout); the view keeps the drawing it shows.
    void cancelWork();
    /// The label next to the search box ("match 2 of 7", "no match").
    QString findStatus() const;
    /// The Find box (above the graph, beside the step's summary).
    QLineEdit* findBox() const { return m_search; }
    /// The legend of the phase check's marks under the pipeline tree (shown once a check marked it).
    QLabel* checkLegend() const { return m_checkLegend; }
    /// Shows the nested graph `attribute` of node `id` (OnnxIf branches, Loop bodies).
    void openNested(NodeId id, const QString& attribute);

    /// Makes the window fit a screen of `available` size (device-independent pixels): on one
    /// narrower than 900 (or than the window's minimum) the Inspector becomes a tab beside the
    /// Pipeline dock (one dock column); on one lower than 560 the Profile and Log docks join those
    /// tabs, so the graph keeps the height. Then sizes the window to `preferred` bounded by
    /// `available` (never below the minimum). A 1280 x 800 screen under QT_SCALE_FACTOR=2 has
    /// 640 x 400; 1024 x 700 keeps the usual docks.
    void fitScreen(const QSize& available, const QSize& preferred);

Q_SIGNALS:
    /// An export finished: `ok` false with the reason in `message` when it failed.
    void exported(const QString& path, bool ok, const QString& message);

protected:
    void closeEvent(QCloseEvent* e) override;
    /// Keeps the graph the widest pane: when the Pipeline and Inspector docks leave it less than
    /// 45% of the window (their default widths on a 1280-px screen), they shrink to about a
    /// quarter and a fifth of the window, no narrower than their minimums.
    void resizeEvent(QResizeEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void buildUi();
    void refreshStep();
    /// Shows the session's drawing (StepPresenter::show) and tells whenIdle waiters.
    void showLayout();
    void log(const QString& line);
    void addRecent(const QString& path);
    void updateRecentMenu();
    void applyPalette(bool dark);
    void exportView();
    void exportReport();
    void saveSession();
    void comparePipelines();
    void updateProfileLabel();
    /// Forgets the profile shown (another file or run).
    void clearProfile();
    void settleIdle(bool ok, const QString& message);
    /// Shows or hides the status bar's busy indicator (busyIndicatorShown()).
    void updateBusyIndicator();
    /// Makes the pipeline tree's current row the event (or phase) of step `s`, without moving.
    void syncPipelineTree(const StepPoint& s);

    DebugSession* m_session;
    std::shared_ptr<ExecutionBackend> m_backend;
    GraphScene* m_scene;
    GraphScene* m_sceneBefore;
    GraphView* m_view;
    GraphView* m_viewBefore;
    StepPresenter* m_presenter; ///< what is drawn, selected and labelled for the step
    QStackedWidget* m_centre;
    PipelineModel* m_pipelineModel;
    QTreeView* m_pipelineTree;
    InspectorWidget* m_inspector;
    ProfileModel* m_profileNodes;
    ProfileModel* m_profileOps;
    QTableView* m_profileTable;
    QTableView* m_profileOpTable;
    QPlainTextEdit* m_log;
    // made by WindowActions: the boxes and actions of the tool bar and menus that others read
    QComboBox* m_pipelineCombo;
    QComboBox* m_diffCombo;
    QComboBox* m_deviceCombo;
    QSlider* m_slider;
    QLabel* m_stepLabel;
    QLabel* m_summary;
    QLineEdit* m_search = nullptr;
    QDockWidget* m_pipeDock = nullptr;
    QDockWidget* m_inspectorDock = nullptr;
    void fitDocks();
    QAction* m_executeAction;
    QAction* m_overlayAction;
    QAction* m_hideUnchanged;
    QAction* m_groupAction = nullptr;
    QString m_treePath, m_treePipeline; ///< the file and pipeline the pipeline tree shows
    QMenu* m_recentMenu = nullptr;
    std::optional<ExecutionProfile> m_profile; ///< the profile shown (measured on m_profileStep)
    int m_searchHit = -1;
    int m_findStep = -1; ///< the step the Find label's matches were counted on
    QLabel* m_findLabel = nullptr;
    QWidget* m_busyBox = nullptr; ///< the status bar's busy indicator: text, bar, Cancel
    QLabel* m_busyLabel = nullptr;
    QToolButton* m_busyCancel = nullptr;
    QTimer* m_busyDelay = nullptr;  ///< a small layout shows the indicator only when it lasts
    bool m_layoutIndicator = false; ///< the pending layout shows the indicator
    QString m_busyWhat;             ///< what the session is busy with (busyChanged)
    QLabel* m_profileLabel = nullptr;
    QLabel* m_checkLegend = nullptr; ///< under the pipeline tree once the phase check marked it
    QWidget* m_profileTabs = nullptr;
    int m_profileStep = -1; ///< the step the shown profile was measured on
    QSortFilterProxyModel* m_pipelineFilter = nullptr;
    QLineEdit* m_rewriteFilter = nullptr;
    QPointer<QDialog> m_compareDialog;
    bool m_syncingTree = false; ///< the tree is being moved to the step: do not move the step
    bool m_executing = false;
    quint64 m_executeJob = 0; ///< the JobId of the execution running (cancelWork)
    std::vector<std::function<void(bool, QString)>> m_idleWaiters;
    QMap<QString, double> m_phaseMoves; ///< phases moved by the user, applied on Run
};

} // namespace passlens
