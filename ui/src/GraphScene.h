#pragma once
/// @file GraphScene.h
/// A Graphviz layout (LayoutResult, plain data from passlens_layout) drawn as QGraphicsItems:
/// nodes as rounded boxes coloured by location and kind (diff and timing states on top), edges
/// as Bézier paths. Hover shows op, types and location; selection is by NodeId.
#include <passlens/layout/LayoutEngine.h>

#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QHash>

#include <optional>

namespace passlens {

class GraphNodeItem;

class GraphScene final : public QGraphicsScene {
    Q_OBJECT
public:
    explicit GraphScene(QObject* parent = nullptr);
    /// Removes the items while m_nodes still exists and without selection signals (deleting a
    /// selected item emits selectionChanged, whose receivers call back into this scene).
    ~GraphScene() override;
    /// Replaces the drawing. `tooltips` maps DrawNode keys to HTML tooltips; `timeShares` maps
    /// Apply ids to their share of the measured time in [0, 1] (timing overlay fills).
    /// With `growOnly` (a stable layout continuing the drawing shown) the scene rectangle only
    /// grows, so the view keeps its exact scroll position.
    void setLayout(const LayoutResult& layout, const QHash<QString, QString>& tooltips = {},
                   const QHash<NodeId, double>& timeShares = {}, bool growOnly = false);
    /// Selects the node of this Apply id (clears the selection for -1); returns its item.
    GraphNodeItem* selectNode(NodeId id);
    /// Apply ids of the drawn nodes.
    QList<NodeId> nodeIds() const;
    /// Keys of nodes whose title or subtitle contains `text` (case-insensitive), in layout order.
    QList<GraphNodeItem*> find(const QString& text) const;
    int nodeItemCount() const { return m_nodes.size(); }
    /// The drawn node items by DrawNode key ("n42", "v7", "o0").
    const QHash<QString, GraphNodeItem*>& nodeItems() const { return m_nodes; }
    void setDark(bool dark) { m_dark = dark; }
    /// Timing fills of the next setLayout washed out towards the node's own fill: a profile
    /// measured on another step than the one drawn.
    void setTimingDimmed(bool dimmed) { m_timingDimmed = dimmed; }
    bool dark() const { return m_dark; }

Q_SIGNALS:
    void nodeSelected(NodeId id);
    /// A node was double-clicked (`key` is its DrawNode key: "n42", "c3" for a placeholder).
    void nodeActivated(const QString& key);
    /// A node's context menu was asked for (right button or the menu key) at `screenPos`.
    void nodeContextMenu(const QString& key, const QPoint& screenPos);

private:
    QHash<QString, GraphNodeItem*> m_nodes;
    bool m_dark = false;
    bool m_timingDimmed = false;
};

/// One drawn node.
class GraphNodeItem final : public QGraphicsItem {
public:
    /// `timeShare`: the timing overlay's fill in [0, 1] (heatColour); none without timing.
    /// `dimmed`: that fill washed out (GraphScene::setTimingDimmed). `diff`: drawn in a diff.
    GraphNodeItem(const LayoutNode& node, double height, bool dark, std::optional<double> timeShare = std::nullopt,
                  bool dimmed = false, bool diff = false);
    QRectF boundingRect() const override;
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    const LayoutNode& node() const { return m_node; }

protected:
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;
    void contextMenuEvent(QGraphicsSceneContextMenuEvent* event) override;

public:
    /// Fill colour by category, diff change and timing share (a third of its strength when
    /// `dimmed`), as the DOT writer's styleOf: in a `diff` an unchanged node is white (its
    /// location is the stripe at its left, nodeStripe).
    static QColor fillFor(const LayoutNode& n, bool dark, std::optional<double> timeShare = std::nullopt,
                          bool dimmed = false, bool diff = false);
    bool timingDimmed() const { return m_dimmed; }

private:
    LayoutNode m_node;
    QRectF m_rect;
    bool m_dark;
    std::optional<double> m_timeShare;
    bool m_dimmed = false;
    bool m_diff = false;
};

} // namespace passlens
