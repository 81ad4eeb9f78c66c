#pragma once
/// @file GraphView.h
/// The graph view: wheel and key zoom (+, -, 0 to fit), drag to pan, a minimap for big graphs.
#include <QGraphicsView>

namespace passlens {

class GraphView final : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QGraphicsScene* scene, QWidget* parent = nullptr);
    void zoomBy(double factor);
    /// The whole drawing in the part of the view the legend leaves free (at most 150 %), kept so
    /// while the view is resized or the legend comes, until it is scrolled or zoomed (as anchorAt).
    void fit();
    /// Re-fits the minimap to the scene; call after the scene's items changed. The minimap shows
    /// only while the drawing does not fit in the view, and covers at most a ninth of it.
    void updateMinimap();
    bool minimapVisible() const;
    /// The minimap's size (at most 180 x 130 and a third of the view's width and height).
    QSize minimapSize() const;
    /// Keeps another view's transform and centre in step with this one (side by side diffs).
    void syncWith(GraphView* other);
    double zoom() const { return transform().m11(); }
    /// The part of the scene on screen (scene units).
    QRectF visibleArea() const { return mapToScene(viewport()->rect()).boundingRect(); }
    /// A label drawn over the pane's top-left corner ("before: merge1"); empty for none.
    void setPaneLabel(const QString& text);
    QString paneLabel() const { return m_paneLabel; }
    /// The timing overlay's legend over the pane's bottom-left corner: the heat scale of the
    /// exports (heatColour) as a bar, with `text` (range, scale, units); empty for none.
    void setLegend(const QString& text);
    QString legend() const { return m_legend; }
    /// Where the legend is drawn, in this widget's pixels (null without a legend): the
    /// viewport's bottom-left corner, as wide as its text, never under the minimap: beside it
    /// (the text wrapped onto more lines) while 160 px are left of it, else above it.
    QRect legendRect() const;
    /// Where the minimap is, in this widget's pixels; null while it is hidden.
    QRect minimapRect() const;
    /// Scrolls so that the scene point `scene` lies at `relative` (0..1 across and down) of the
    /// viewport, above the legend and the minimap where they would cover `keepClear` (scene
    /// units; null: nothing), and keeps it there while the view is resized (a dock opens, the
    /// window is resized) or the legend comes or goes, until the view is scrolled or zoomed by
    /// anything else. How a big graph opens on its outputs.
    void anchorAt(const QPointF& scene, const QPointF& relative, const QRectF& keepClear = {});
    /// The anchor anchorAt set, if it still holds.
    bool anchored() const { return m_anchored; }
    /// Forgets that anchor: the view shows something else now (another step, a node brought on
    /// screen). The user's scrolling, dragging and zooming forget it too.
    void clearAnchor() { m_anchored = false; }

Q_SIGNALS:
    void viewChanged();

protected:
    void wheelEvent(QWheelEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void scrollContentsBy(int dx, int dy) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;

private:
    void updateMinimapVisibility();
    void applyAnchor();
    void placeFit();
    void updateLegendMargin();
    class Minimap;
    Minimap* m_minimap = nullptr;
    bool m_syncing = false;
    QString m_paneLabel;
    QString m_legend;
    QPointF m_anchorScene, m_anchorRelative;
    QRectF m_anchorClear;
    bool m_anchored = false;
    bool m_anchorFit = false; ///< the anchor is the whole drawing fitted (fit())
    bool m_pressed = false;   ///< a mouse button is down on the canvas (a drag may follow)
    bool m_applyingAnchor = false;
};

} // namespace passlens
