#pragma once
/// @file StepPresenter.h
/// What the window shows of the current step: the session's drawing put into the graph views
/// (one pane, or before / after panes side by side), their tooltips, timing fills and legend,
/// where the view looks (fitted, the outputs of a big graph, kept in place for a stable
/// layout), the summary line, and which nodes are selected (a rewrite's new nodes, a node being
/// revealed). Also what changes the drawing of the step: placeholders expanded, scopes opened
/// and closed. The window wires it to the session's signals and owns the widgets.
#include "passlens/ui/DebugSession.h"

#include <QList>
#include <QObject>

#include <string>

class QLabel;
class QStackedWidget;

namespace passlens {

class GraphNodeItem;
class GraphScene;
class GraphView;

/// The widgets a StepPresenter draws into (the window's).
struct StepWidgets {
    GraphScene* scene = nullptr;       ///< the step (the "after" pane side by side)
    GraphScene* sceneBefore = nullptr; ///< the "before" pane of a side-by-side diff
    GraphView* view = nullptr;
    GraphView* viewBefore = nullptr;
    QStackedWidget* centre = nullptr; ///< page 0: the view alone; page 1: the two panes
    QLabel* summary = nullptr;        ///< the line above the view
    QLabel* stepLabel = nullptr;      ///< "step k of n: label" (read for the summary)
};

class StepPresenter final : public QObject {
    Q_OBJECT
public:
    StepPresenter(DebugSession& session, const StepWidgets& widgets, QObject* parent = nullptr);

    /// Shows the session's layout (nothing when there is none): side by side (the diff's
    /// removed nodes in the before pane, its added ones in the after pane) or in one view, and
    /// the summary. On a step reached by stepping, selects the rewrite's new nodes
    /// (showEventNodes), whichever layout drew it (stable, afresh, past the budget); else
    /// reveals the node asked for (setPendingReveal), else keeps the node `inspected` selected.
    void show(bool sideBySide, NodeId inspected);
    /// Selects `id` and scrolls it to the centre at a readable zoom; false if it is not drawn.
    bool revealNode(NodeId id);
    /// On a rewrite event's step: selects the nodes the rewrite added (the inspector shows the
    /// first), or for a rewrite that only removed nodes the surviving nodes around what it
    /// removed (changedRegion); at a phase's end, what the phase changed (changedRegion over its
    /// events); scrolls them on screen when none is; false when the step changed nothing or
    /// none of those nodes is drawn.
    bool showEventNodes();
    /// Selects `items` (the inspector shows the first) and scrolls them on screen when none is,
    /// zooming back to readable titles (90%) when the view is zoomed out below them; false for
    /// none.
    bool selectAndShow(const QList<GraphNodeItem*>& items);
    /// Brings the drawn nodes of name scope `scope` (and its sub-scopes) on screen, keeping the
    /// zoom: the whole of them when they fit, else their top; false when none is drawn.
    bool revealScope(const std::string& scope);
    /// A node to reveal when the drawing being made arrives (Find, a provenance jump); -1: none.
    void setPendingReveal(NodeId id) { m_pendingReveal = id; }
    NodeId pendingReveal() const { return m_pendingReveal; }
    /// The step of the drawing shown (-1 before the first).
    int lastShownStep() const { return m_lastShownStep; }
    /// MainWindow::expandPlaceholder.
    int expandPlaceholder(const QString& key, int batch);
    /// MainWindow::openScope.
    bool openScope(const QString& key);
    /// MainWindow::closeScope.
    bool closeScope(const QString& scope);

Q_SIGNALS:
    /// Node `id` is to be selected everywhere (views, profile table, inspector).
    void selectRequested(NodeId id);
    /// A line for the window's log.
    void message(const QString& line);

private:
    /// Where a new drawing opens: the whole of it when it fits at a readable zoom; else at a
    /// readable zoom on its outputs, with the rows above them, whole across when they fit.
    void frameOpening();
    DebugSession& m_session;
    GraphScene* m_scene;
    GraphScene* m_sceneBefore;
    GraphView* m_view;
    GraphView* m_viewBefore;
    QStackedWidget* m_centre;
    QLabel* m_summary;
    QLabel* m_stepLabel;
    int m_lastShownStep = -1;    ///< the step of the drawing shown before this one
    NodeId m_pendingReveal = -1; ///< a Find hit being drawn: revealed when its layout arrives
    std::string m_revealScope;   ///< a scope just opened: on screen once its drawing arrives
};

} // namespace passlens
