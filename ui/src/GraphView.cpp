#include "GraphView.h"

#include <passlens/layout/DotWriter.h>

#include <QKeyEvent>
#include <QLinearGradient>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <utility>

namespace passlens {

// A small overview of the whole scene with the visible rectangle; click to move there.
class GraphView::Minimap final : public QGraphicsView {
public:
    Minimap(QGraphicsScene* scene, GraphView* main)
        : QGraphicsView(scene, main)
        , m_main(main) {
        setInteractive(false);
        setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
        setFrameShape(QFrame::Box);
        setRenderHint(QPainter::Antialiasing);
        setFixedSize(180, 130);
    }
    /// At most 180 x 130 and a third of the view's width and height (a ninth of its area).
    void fitTo(const QSize& view) { setFixedSize(std::min(180, view.width() / 3), std::min(130, view.height() / 3)); }
    void refresh() {
        fitInView(sceneRect(), Qt::KeepAspectRatio);
        viewport()->update();
    }

protected:
    void drawForeground(QPainter* p, const QRectF&) override {
        const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
        p->setPen(QPen(QColor(0x19, 0x76, 0xd2), 0));
        p->setBrush(QColor(0x19, 0x76, 0xd2, 40));
        p->drawRect(visible);
    }
    void mousePressEvent(QMouseEvent* e) override {
        m_main->clearAnchor();
        m_main->centerOn(mapToScene(e->pos()));
    }
    void mouseMoveEvent(QMouseEvent* e) override { m_main->centerOn(mapToScene(e->pos())); }

private:
    GraphView* m_main;
};

GraphView::GraphView(QGraphicsScene* scene, QWidget* parent)
    : QGraphicsView(scene, parent) {
    setRenderHint(QPainter::Antialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setFocusPolicy(Qt::StrongFocus);
    m_minimap = new Minimap(scene, this);
    // the user moved the view (a scroll bar, its keys, a drag): the anchor no longer holds
    for (QScrollBar* bar : {horizontalScrollBar(), verticalScrollBar()})
        connect(bar, &QAbstractSlider::actionTriggered, this, [this] { m_anchored = false; });
    connect(scene, &QGraphicsScene::sceneRectChanged, this, [this] {
        updateLegendMargin();
        updateMinimap();
    });
}

void GraphView::updateMinimap() {
    m_minimap->refresh();
    updateMinimapVisibility();
}

void GraphView::updateMinimapVisibility() {
    // only when the drawing does not fit: a map of what is all on screen hides part of it
    bool show = scene() != nullptr && !scene()->items().isEmpty();
    if (show) {
        const QRectF visible = visibleArea();
        const QRectF drawn = scene()->itemsBoundingRect();
        show = !visible.adjusted(-1, -1, 1, 1).contains(drawn);
    }
    if (show == m_minimap->isVisible()) return;
    if (!m_legend.isEmpty()) viewport()->update(); // the legend moves
    m_minimap->setVisible(show);
    updateLegendMargin();
    if (m_anchored && !m_applyingAnchor) applyAnchor(); // (the legend moved, the map covers a corner)
}

bool GraphView::minimapVisible() const { return m_minimap->isVisible(); }

QSize GraphView::minimapSize() const { return m_minimap->size(); }

void GraphView::zoomBy(double factor) {
    const double z = zoom() * factor;
    if (z < 0.02 || z > 8) return;
    m_anchored = false;
    scale(factor, factor);
    updateLegendMargin();
    m_minimap->viewport()->update();
    updateMinimapVisibility();
    emit viewChanged();
}

void GraphView::fit() {
    if (!scene()) return;
    // kept fitted while the view is resized or the legend comes, until scrolled or zoomed
    m_anchored = true;
    m_anchorFit = true;
    placeFit();
    m_minimap->refresh();
    updateMinimapVisibility();
    emit viewChanged();
}

void GraphView::placeFit() {
    // the whole drawing in the part of the viewport the legend leaves free, not bigger than 150 %
    const QRectF drawn = scene()->sceneRect();
    const QRect port = viewport()->rect();
    const int freeHeight =
        m_legend.isEmpty() ? port.height() : std::max(port.height() - legendRect().height() - 16, port.height() / 2);
    if (drawn.width() <= 0 || drawn.height() <= 0) return;
    const double z =
        std::max(std::min({(port.width() - 4) / drawn.width(), (freeHeight - 4) / drawn.height(), 1.5}), 0.001);
    const bool applying = std::exchange(m_applyingAnchor, true);
    resetTransform();
    scale(z, z);
    // centred in the free part (the minimap hides once all of it is on screen)
    updateLegendMargin();
    centerOn(drawn.center() + (QPointF(port.center()) - QPointF(port.width() / 2.0, freeHeight / 2.0)) / z);
    m_applyingAnchor = applying;
}

void GraphView::setPaneLabel(const QString& text) {
    if (text == m_paneLabel) return;
    m_paneLabel = text;
    viewport()->update();
}

void GraphView::setLegend(const QString& text) {
    if (text == m_legend) return;
    m_legend = text;
    viewport()->update();
    updateLegendMargin();
    if (m_anchored) applyAnchor(); // the free part of the viewport changed
}

void GraphView::updateLegendMargin() {
    if (!scene()) return;
    // room below the drawing for the legend and the minimap, so the view can scroll the
    // bottom-most boxes (a graph's outputs) above them
    // (and a quarter of the view more: an anchor puts them at four fifths of what is left above)
    const int covered = std::max(legendRect().height(), minimapRect().height());
    QRectF rect;
    if (covered > 0 && zoom() > 0)
        rect = scene()->sceneRect().adjusted(0, 0, 0, (covered + 16 + viewport()->height() / 4) / zoom());
    if (rect == sceneRect() || (rect.isNull() && sceneRect() == scene()->sceneRect())) return;
    const bool anchored = m_anchored, applying = std::exchange(m_applyingAnchor, true);
    setSceneRect(rect); // (null: the scene's own rectangle again)
    m_applyingAnchor = applying;
    m_anchored = anchored;
}

void GraphView::anchorAt(const QPointF& scene, const QPointF& relative, const QRectF& keepClear) {
    m_anchorFit = false;
    m_anchorScene = scene;
    m_anchorRelative = relative;
    m_anchorClear = keepClear;
    m_anchored = true;
    applyAnchor();
}

void GraphView::applyAnchor() {
    if (m_anchorFit) {
        placeFit();
        const bool applying = std::exchange(m_applyingAnchor, true);
        updateMinimapVisibility();
        m_applyingAnchor = applying;
        return;
    }
    updateLegendMargin();
    const QRect port = viewport()->rect();
    const double z = zoom() > 0 ? zoom() : 1;
    m_applyingAnchor = true;
    // centerOn puts a point at the viewport's centre: shifted by the target's offset from it
    auto place = [&](int freeHeight) {
        const QPointF target(port.width() * m_anchorRelative.x(), freeHeight * m_anchorRelative.y());
        centerOn(m_anchorScene + (QPointF(port.center()) - target) / z);
    };
    place(port.height());
    updateMinimapVisibility(); // (shown or hidden where the view now is)
    // the legend and the minimap cover the viewport's bottom: placed again above those that
    // cover the boxes to keep clear where they landed (the scroll range may have shifted them)
    if (!m_anchorClear.isNull()) {
        const QRect clear = mapFromScene(m_anchorClear).boundingRect();
        int freeHeight = port.height();
        for (QRect r : {legendRect(), minimapRect()}) {
            r.translate(-viewport()->pos());
            if (!r.isNull() && clear.right() >= r.left() - 8 && clear.left() <= r.right() + 8)
                freeHeight = std::min(freeHeight, r.top() - 4);
        }
        if (freeHeight < port.height()) place(std::max(freeHeight, port.height() / 2));
    }
    m_applyingAnchor = false;
}

void GraphView::drawForeground(QPainter* painter, const QRectF& rect) {
    QGraphicsView::drawForeground(painter, rect);
    if (m_paneLabel.isEmpty() && m_legend.isEmpty()) return;
    // in viewport pixels, so they stay put and readable at any zoom
    painter->save();
    painter->resetTransform();
    const QColor frame = palette().color(QPalette::Mid), back = palette().color(QPalette::Window),
                 ink = palette().color(QPalette::WindowText);
    if (!m_paneLabel.isEmpty()) {
        QFont f = font();
        f.setBold(true);
        painter->setFont(f);
        const QFontMetrics fm(f);
        const QRect box(8, 8, fm.horizontalAdvance(m_paneLabel) + 16, fm.height() + 8);
        painter->setPen(QPen(frame, 1));
        painter->setBrush(back);
        painter->drawRoundedRect(box, 4, 4);
        painter->setPen(ink);
        painter->drawText(box, Qt::AlignCenter, m_paneLabel);
    }
    if (!m_legend.isEmpty()) {
        painter->setFont(font());
        const QFontMetrics fm(font());
        const QRect box = legendRect().translated(-viewport()->pos()); // (in viewport pixels)
        painter->setPen(QPen(frame, 1));
        painter->setBrush(back);
        painter->drawRoundedRect(box, 4, 4);
        QLinearGradient bar(box.left() + 8, 0, box.right() - 8, 0);
        for (int k = 0; k <= 4; ++k) bar.setColorAt(k / 4.0, QColor(QString::fromStdString(heatColour(k / 4.0))));
        painter->setPen(QPen(frame, 1));
        painter->setBrush(bar);
        painter->drawRect(QRect(box.left() + 8, box.top() + 6, box.width() - 16, 10));
        painter->setPen(ink);
        painter->drawText(QRect(box.left() + 8, box.top() + 18, box.width() - 16, box.height() - 22),
                          Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, m_legend);
    }
    painter->restore();
}

QRect GraphView::legendRect() const {
    if (m_legend.isEmpty()) return {};
    const QFontMetrics fm(font());
    const QRect port = viewport()->geometry(); // (in this widget's pixels, as the minimap's)
    const int textWidth = fm.horizontalAdvance(m_legend);
    // a box of `width` ending `bottom`, the text wrapped inside it when it does not fit on one line
    auto box = [&](int left, int bottom, int width) {
        const int lines =
            fm.boundingRect(QRect(0, 0, std::max(width - 16, 1), 10000), Qt::TextWordWrap, m_legend).height();
        const int height = std::max(lines, fm.height()) + 26;
        return QRect(left, bottom - height, width, height);
    };
    const int left = port.left() + 8, bottom = port.bottom() - 7;
    const int wanted = std::max(160, textWidth + 16);
    if (!m_minimap->isVisibleTo(this)) return box(left, bottom, std::min(wanted, std::max(port.width() - 16, 40)));
    // beside the minimap when the room left of it takes the scale bar and a few words a line,
    // else above it
    const QRect map = m_minimap->geometry();
    const int beside = map.left() - 8 - left;
    if (beside >= 160) return box(left, bottom, std::min(wanted, beside));
    return box(left, map.top() - 8, std::min(wanted, std::max(port.width() - 16, 40)));
}

QRect GraphView::minimapRect() const { return m_minimap->isVisibleTo(this) ? m_minimap->geometry() : QRect(); }

void GraphView::syncWith(GraphView* other) {
    auto push = [this, other] {
        if (m_syncing || other->m_syncing) return;
        m_syncing = true;
        other->setTransform(transform());
        other->centerOn(mapToScene(viewport()->rect().center()));
        m_syncing = false;
    };
    connect(this, &GraphView::viewChanged, other, push);
}

void GraphView::mousePressEvent(QMouseEvent* e) {
    m_pressed = true; // (a drag that follows moves the view: scrollContentsBy drops the anchor)
    QGraphicsView::mousePressEvent(e);
}

void GraphView::mouseReleaseEvent(QMouseEvent* e) {
    QGraphicsView::mouseReleaseEvent(e);
    m_pressed = false;
}

void GraphView::wheelEvent(QWheelEvent* e) {
    if (e->angleDelta().y() == 0) return QGraphicsView::wheelEvent(e);
    zoomBy(e->angleDelta().y() > 0 ? 1.15 : 1 / 1.15);
}

void GraphView::keyPressEvent(QKeyEvent* e) {
    switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomBy(1.25); return;
    case Qt::Key_Minus: zoomBy(1 / 1.25); return;
    case Qt::Key_0: fit(); return;
    default: QGraphicsView::keyPressEvent(e);
    }
}

void GraphView::resizeEvent(QResizeEvent* e) {
    const bool anchored = m_anchored; // (the base class's scrolling would drop it)
    QGraphicsView::resizeEvent(e);
    m_minimap->fitTo(size());
    m_minimap->refresh();
    m_minimap->move(width() - m_minimap->width() - 18, height() - m_minimap->height() - 18);
    updateMinimapVisibility();
    updateLegendMargin();
    m_anchored = anchored;
    if (m_anchored) applyAnchor();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    if (m_pressed && !m_applyingAnchor) m_anchored = false; // dragged by the user (a click alone keeps it)
    QGraphicsView::scrollContentsBy(dx, dy);
    if (!m_paneLabel.isEmpty() || !m_legend.isEmpty()) viewport()->update(); // not part of the scrolled scene
    if (m_minimap) m_minimap->viewport()->update();
    emit viewChanged();
}

} // namespace passlens
