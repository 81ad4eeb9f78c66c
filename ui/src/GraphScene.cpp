#include "GraphScene.h"

#include <passlens/layout/DotWriter.h>

#include <QGraphicsPathItem>
#include <QGraphicsSceneContextMenuEvent>
#include <QGraphicsSceneHoverEvent>
#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QSignalBlocker>
#include <QStyleOptionGraphicsItem>

namespace passlens {

namespace {
// y down; no dependence on the bounding box, so a node pinned by a stable layout keeps its scene
// position from one step to the next
QPointF toScene(const LayoutPoint& p, double /*height*/) { return {p.x, -p.y}; }

// Colours come from the DOT writer's palette, so the window and the exports agree.
QColor hex(const std::string& rgb) { return QColor(QString::fromStdString(rgb)); }

QColor changeColor(NodeChange c) {
    const Palette& p = defaultPalette();
    switch (c) {
    case NodeChange::Added: return hex(p.addedBorder);
    case NodeChange::Removed: return hex(p.removedBorder);
    case NodeChange::Rewired: return hex(p.rewiredBorder);
    default: return {};
    }
}

QColor changeFill(NodeChange c) {
    const Palette& p = defaultPalette();
    switch (c) {
    case NodeChange::Added: return hex(p.addedFill);
    case NodeChange::Removed: return hex(p.removedFill);
    case NodeChange::Rewired: return hex(p.rewiredFill);
    default: return {};
    }
}
} // namespace

QColor GraphNodeItem::fillFor(const LayoutNode& n, bool dark, std::optional<double> timeShare, bool dimmed, bool diff) {
    // heat by share of time as in exports (heatColour), then the diff class (white unchanged:
    // the stripe keeps the location), then the category
    const QColor own = n.change != NodeChange::Unchanged ? changeFill(n.change)
                       : diff                            ? hex(defaultPalette().unchangedFill)
                                                         : hex(categoryFill(n.category));
    QColor c = timeShare ? hex(heatColour(*timeShare)) : own;
    if (timeShare && dimmed) // a third of the heat over the node's own fill
        c = QColor::fromRgbF(own.redF() + (c.redF() - own.redF()) / 3, own.greenF() + (c.greenF() - own.greenF()) / 3,
                             own.blueF() + (c.blueF() - own.blueF()) / 3);
    return dark ? c.darker(260) : c;
}

GraphNodeItem::GraphNodeItem(const LayoutNode& node, double height, bool dark, std::optional<double> timeShare,
                             bool dimmed, bool diff)
    : m_node(node)
    , m_dark(dark)
    , m_timeShare(timeShare)
    , m_dimmed(dimmed)
    , m_diff(diff) {
    const QPointF c = toScene(node.center, height);
    m_rect = QRectF(c.x() - node.width / 2, c.y() - node.height / 2, node.width, node.height);
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(true);
    setZValue(1);
}

void GraphNodeItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
    if (auto* s = qobject_cast<GraphScene*>(scene()))
        emit s->nodeActivated(QString::fromStdString(m_node.stubOf.empty() ? m_node.key : m_node.stubOf));
    QGraphicsItem::mouseDoubleClickEvent(event);
}

void GraphNodeItem::contextMenuEvent(QGraphicsSceneContextMenuEvent* event) {
    if (auto* s = qobject_cast<GraphScene*>(scene())) {
        emit s->nodeContextMenu(QString::fromStdString(m_node.stubOf.empty() ? m_node.key : m_node.stubOf),
                                event->screenPos());
        event->accept();
    }
}

QRectF GraphNodeItem::boundingRect() const { return m_rect.adjusted(-3, -3, 3, 3); }

void GraphNodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
    p->setRenderHint(QPainter::Antialiasing);
    const QColor fg = m_dark ? QColor(0xee, 0xee, 0xee) : QColor(0x21, 0x21, 0x21);
    const QColor border = m_dark ? fg : hex(categoryBorder(m_node.category));
    QPen pen(m_node.change == NodeChange::Unchanged ? border : changeColor(m_node.change),
             m_node.change == NodeChange::Unchanged ? 1.0 : 2.6);
    if (m_node.change == NodeChange::Removed || !m_node.stubOf.empty()) pen.setStyle(Qt::DashLine);
    if (option->state & QStyle::State_Selected) pen = QPen(QColor(0x19, 0x76, 0xd2), 3.2);
    p->setPen(pen);
    p->setBrush(fillFor(m_node, m_dark, m_timeShare, m_dimmed, m_diff));
    const bool round = m_node.category == NodeCategory::Input || m_node.category == NodeCategory::Output ||
                       m_node.category == NodeCategory::Constant;
    if (m_node.category == NodeCategory::Group) {
        // a closed name scope: a square box with a double border, as the exports draw it
        p->drawRect(m_rect);
        p->setBrush(Qt::NoBrush);
        p->drawRect(m_rect.adjusted(3, 3, -3, -3));
    } else {
        p->drawRoundedRect(m_rect, round ? m_rect.height() / 2 : 6, round ? m_rect.height() / 2 : 6);
    }
    // an op's stripe at the left, as the exports draw it (nodeStripe): inside the border
    if (const char* stripe = nodeStripe(m_node.category, m_node.accent, !m_diff && !m_timeShare)) {
        QPainterPath box;
        const double inset = pen.widthF() / 2;
        box.addRoundedRect(m_rect.adjusted(inset, inset, -inset, -inset), 6 - inset, 6 - inset);
        p->save();
        p->setClipPath(box);
        p->fillRect(QRectF(m_rect.left(), m_rect.top(), 5 + inset, m_rect.height()),
                    m_dark ? hex(stripe).darker(150) : hex(stripe));
        p->restore();
    }
    // light text on the dark end of the heat scale, as the exports' heatOf
    p->setPen(m_timeShare && *m_timeShare >= 0.62 && !m_dimmed && !m_dark ? QColor(Qt::white) : fg);
    QRectF r = m_rect.adjusted(4, 2, -4, -2);
    // the title on the lines the DOT writer gave it (Graphviz sized the box for them)
    const std::vector<std::string> title = titleLines(m_node.title);
    const int lines = static_cast<int>(title.size()) + !m_node.subtitle.empty() + !m_node.detail.empty();
    const double lh = r.height() / lines;
    // Sizes in scene units (= Graphviz points, the DOT writer's 10 / 8 point text), turned into
    // Qt point sizes for the device painted on (96 dpi on screen: 1 unit is not 1 Qt point).
    // Each line shrinks its font to fit the box Graphviz sized with its own font metrics.
    const double toPoints = 72.0 / std::max(1, p->device()->logicalDpiY());
    auto drawLine = [&](const std::string& text, int line, double units, bool bold) {
        QFont f = p->font();
        f.setBold(bold);
        units = std::min(units, lh / 1.1);
        f.setPointSizeF(units * toPoints);
        const QString t = QString::fromStdString(text);
        const double w = QFontMetricsF(f, p->device()).horizontalAdvance(t); // the metrics of the device painted on
        // (hinting at small sizes renders a little wider than the advance: keep 8% spare)
        if (w > 0.92 * r.width() && w > 0) f.setPointSizeF(std::max(3.0, units * toPoints * 0.92 * r.width() / w));
        p->setFont(f);
        p->drawText(QRectF(r.left(), r.top() + lh * line, r.width(), lh), Qt::AlignCenter, t);
    };
    int line = 0;
    for (const std::string& t : title) drawLine(t, line++, 10, true);
    if (!m_node.subtitle.empty()) drawLine(m_node.subtitle, line++, 8, false);
    if (!m_node.detail.empty()) drawLine(m_node.detail, line, 8, false);
}

GraphScene::GraphScene(QObject* parent)
    : QGraphicsScene(parent) {
    connect(this, &QGraphicsScene::selectionChanged, this, [this] {
        const auto sel = selectedItems();
        for (auto* it : sel)
            if (auto* n = dynamic_cast<GraphNodeItem*>(it)) {
                emit nodeSelected(n->node().node);
                return;
            }
    });
}

GraphScene::~GraphScene() {
    const QSignalBlocker quiet(this);
    clear();
}

void GraphScene::setLayout(const LayoutResult& layout, const QHash<QString, QString>& tooltips,
                           const QHash<NodeId, double>& timeShares, bool growOnly) {
    const QRectF old = sceneRect();
    // Forget the items first and delete them quietly: a selected item's deletion emits
    // selectionChanged, whose handlers must not reach the items being deleted.
    m_nodes.clear();
    {
        const QSignalBlocker quiet(this);
        clear();
    }
    const double h = layout.height;
    // outward to a 16-point grid: small changes of the bounding box leave the rectangle alone
    auto down = [](double v) { return std::floor(v / 16.0) * 16.0; };
    auto up = [](double v) { return std::ceil(v / 16.0) * 16.0; };
    const double left = down(layout.x0 - 20), top = down(-(layout.y0 + layout.height) - 20);
    const QRectF rect(left, top, up(layout.x0 + layout.width + 20) - left, up(-layout.y0 + 20) - top);
    const QRectF grown = growOnly && !old.isEmpty() ? old.united(rect) : rect;
    if (grown != old) setSceneRect(grown);
    const QColor edgeHost = m_dark ? QColor(0xb0, 0xb0, 0xb0) : hex(defaultPalette().hostEdge);
    const QColor edgeGpu = m_dark ? hex(defaultPalette().gpuEdge).lighter(170) : hex(defaultPalette().gpuEdge);
    for (const LayoutEdge& e : layout.edges) {
        if (e.spline.empty()) continue;
        QPainterPath path(toScene(e.spline[0], h));
        for (std::size_t i = 1; i + 2 < e.spline.size(); i += 3)
            path.cubicTo(toScene(e.spline[i], h), toScene(e.spline[i + 1], h), toScene(e.spline[i + 2], h));
        QColor c = e.change == NodeChange::Unchanged ? (e.gpu ? edgeGpu : edgeHost) : changeColor(e.change);
        QPen pen(c, e.change == NodeChange::Unchanged ? 1.2 : 2.0);
        if (e.change == NodeChange::Removed) pen.setStyle(Qt::DashLine);
        auto* item = addPath(path, pen);
        item->setZValue(0);
        if (e.arrowTip) { // arrowhead from the spline's end towards the tip
            const QPointF tip = toScene(*e.arrowTip, h);
            const QPointF from = path.currentPosition();
            QLineF l(from, tip);
            if (l.length() > 0.1) {
                QLineF n = l.unitVector();
                const QPointF dir(n.dx(), n.dy());
                const QPointF ortho(-dir.y(), dir.x());
                QPolygonF head;
                head << tip << tip - dir * 8 + ortho * 3.5 << tip - dir * 8 - ortho * 3.5;
                addPolygon(head, QPen(c), QBrush(c))->setZValue(0);
            }
        }
        if (e.labelPos && !e.label.empty()) {
            auto* t = addSimpleText(QString::fromStdString(e.label));
            QFont f = t->font();
            // scene units are Graphviz points: the DOT writer's 7-point edge labels are 7 units
            // high (a point size would be scaled by the screen's 96 dpi and overlap neighbours)
            f.setPixelSize(7);
            t->setFont(f);
            t->setBrush(c);
            const QPointF lp = toScene(*e.labelPos, h);
            t->setPos(lp - QPointF(t->boundingRect().width() / 2, t->boundingRect().height() / 2));
        }
    }
    for (const LayoutNode& n : layout.nodes) {
        std::optional<double> share;
        if (auto it = timeShares.constFind(n.node); n.node >= 0 && it != timeShares.constEnd()) share = *it;
        // (in a diff or a comparison unchanged nodes are white, as in exports)
        auto* item = new GraphNodeItem(n, h, m_dark, share, m_timingDimmed, layout.isDiff);
        const QString key = QString::fromStdString(n.key);
        // a stub (stubFanOut) explains the node it repeats
        QString tip = tooltips.value(
            n.stubOf.empty() ? key : QString::fromStdString(n.stubOf),
            QString::fromStdString(n.title + "\n" + n.subtitle + (n.detail.empty() ? "" : "\n" + n.detail)));
        if (!n.stubOf.empty()) tip += tr("\n(drawn again beside each of its many consumers)");
        item->setToolTip(tip);
        addItem(item);
        m_nodes.insert(key, item);
    }
}

GraphNodeItem* GraphScene::selectNode(NodeId id) {
    GraphNodeItem* found = nullptr;
    for (auto* it : m_nodes) // the node itself, not one of its stubs (stubFanOut)
        if (it->node().node == id && id >= 0 && (!found || !found->node().stubOf.empty())) found = it;
    const QSignalBlocker block(this);
    clearSelection();
    if (found) found->setSelected(true);
    return found;
}

QList<NodeId> GraphScene::nodeIds() const {
    QList<NodeId> ids;
    for (auto* it : m_nodes)
        if (it->node().node >= 0 && it->node().stubOf.empty()) ids << it->node().node;
    std::sort(ids.begin(), ids.end());
    return ids;
}

QList<GraphNodeItem*> GraphScene::find(const QString& text) const {
    QList<GraphNodeItem*> out;
    if (text.isEmpty()) return out;
    for (auto* it : m_nodes) {
        const QString t = QString::fromStdString(it->node().title + " " + it->node().subtitle);
        if (t.contains(text, Qt::CaseInsensitive)) out << it;
    }
    std::sort(out.begin(), out.end(), [](GraphNodeItem* a, GraphNodeItem* b) {
        return a->node().center.y != b->node().center.y ? a->node().center.y > b->node().center.y
                                                        : a->node().center.x < b->node().center.x;
    });
    return out;
}

} // namespace passlens
