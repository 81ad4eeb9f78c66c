#pragma once
/// @file InspectorWidget.h
/// The selected node: op and attributes, input and output types, location, the event that
/// created it and the one that removed it (links that jump there), the lift decision and its
/// reason, the rewrites tried on it (when reasons were recorded), its timing and what the
/// executor's plan decided about it.
#include <passlens/ir/FunctionGraph.h>
#include <passlens/trace/ExecutionProfile.h>

#include <QTextBrowser>

namespace passlens {

class Trace;

class InspectorWidget final : public QTextBrowser {
    Q_OBJECT
public:
    explicit InspectorWidget(QWidget* parent = nullptr);
    /// Shows node `id` of `graph` (the current step). `profile` may be null.
    void showNode(const FunctionGraph* graph, const Trace* trace, NodeId id, const ExecutionProfile* profile);
    void clearNode();
    NodeId shownNode() const { return m_node; }

Q_SIGNALS:
    /// A "created by" / "removed by" / "tried" link was clicked.
    void eventActivated(int seq);
    /// An "open nested graph" link: node `id`, its subgraph attribute `attribute`.
    void nestedActivated(NodeId id, const QString& attribute);

private:
    NodeId m_node = -1;
};

} // namespace passlens
