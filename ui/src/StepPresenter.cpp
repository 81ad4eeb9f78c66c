#include "StepPresenter.h"

#include "GraphScene.h"
#include "GraphView.h"

#include <passlens/layout/ScopeGroups.h>
#include <passlens/trace/TraceSteps.h>

#include <QLabel>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <utility>

namespace passlens {

namespace {
// The least zoom at which a drawing opens whole: box titles about 8 px high (10 pt at 96 dpi).
constexpr double kReadableZoom = 0.6;

// Where a big drawing opens: its bottom-most graph output (the bottom-most node when none is
// drawn), so the first picture shows real boxes, not the empty middle of a wide scene rectangle;
// outputs drawn higher up (lstm's h_n, c_n beside its layers) come on screen above it.
QRectF outputsArea(const GraphScene& scene) {
    const GraphNodeItem *output = nullptr, *lowest = nullptr;
    auto below = [](const GraphNodeItem* a, const GraphNodeItem* b) {
        return !b || a->sceneBoundingRect().bottom() > b->sceneBoundingRect().bottom();
    };
    for (const GraphNodeItem* it : scene.nodeItems()) {
        if (it->node().category == NodeCategory::Output && below(it, output)) output = it;
        if (below(it, lowest)) lowest = it;
    }
    if (output) return output->sceneBoundingRect();
    return lowest ? lowest->sceneBoundingRect() : scene.sceneRect();
}
} // namespace

StepPresenter::StepPresenter(DebugSession& session, const StepWidgets& widgets, QObject* parent)
    : QObject(parent)
    , m_session(session)
    , m_scene(widgets.scene)
    , m_sceneBefore(widgets.sceneBefore)
    , m_view(widgets.view)
    , m_viewBefore(widgets.viewBefore)
    , m_centre(widgets.centre)
    , m_summary(widgets.summary)
    , m_stepLabel(widgets.stepLabel) {}

void StepPresenter::show(bool sideBySide, NodeId inspected) {
    const auto& layout = m_session.layout();
    if (!layout) return;
    const bool stepped = m_session.currentStep() != m_lastShownStep; // (not a redraw of the same step)
    const bool side = sideBySide;
    auto g = m_session.graphAt(m_session.currentStep());
    QHash<QString, QString> tips;
    if (g)
        for (const LayoutNode& n : layout->nodes)
            if (n.node >= 0)
                if (const Apply* a = g->node(n.node)) {
                    QString t = QStringLiteral("<b>%1</b><br>node #%2 · %3")
                                    .arg(QString::fromStdString(a->op().str()).toHtmlEscaped())
                                    .arg(n.node)
                                    .arg(a->op().isGpu()        ? tr("GPU")
                                         : a->op().isTransfer() ? tr("transfer")
                                                                : tr("host"));
                    for (const Variable* in : a->inputs())
                        t += QStringLiteral("<br>in: %1").arg(QString::fromStdString(in->type().str()));
                    for (const Variable* o : a->outputs())
                        t += QStringLiteral("<br>out: %1").arg(QString::fromStdString(o->type().str()));
                    tips.insert(QString::fromStdString(n.key), t);
                }
    // the overlay's fills: the shares applyTiming put on the drawing (its scale, as exports)
    QHash<NodeId, double> shares;
    double maxUs = 0;
    for (const LayoutNode& n : layout->nodes)
        if (n.node >= 0 && n.timing) {
            shares.insert(n.node, n.timing->share);
            maxUs = std::max(maxUs, n.timing->us);
        }
    QString legend;
    // measured on another step: the times of the nodes both graphs share, dimmed, and said so
    const int measuredOn = m_session.profileStep();
    const bool dimmed = measuredOn >= 0 && measuredOn != m_session.currentStep();
    if (const auto& prof = m_session.profile(); prof && !shares.isEmpty()) {
        legend = tr("timing: 0 \u2192 %1 per run, %2 scale · total %3 · %4")
                     .arg(QString::fromStdString(formatMicros(maxUs)),
                          m_session.timingOptions().logScale ? tr("log") : tr("linear"),
                          QString::fromStdString(formatMicros(prof->totalUs())), QString::fromStdString(prof->device));
        if (dimmed)
            legend = tr("measured on step %1, not the step shown (dimmed; F5 times this one) · %2")
                         .arg(measuredOn)
                         .arg(legend);
    }
    m_scene->setTimingDimmed(dimmed);
    m_sceneBefore->setTimingDimmed(dimmed);
    m_view->setLegend(legend);
    m_viewBefore->setLegend(legend);
    // refit when the drawing changed size a lot (another step, a diff), else keep the view
    const QRectF oldRect = m_scene->sceneRect();
    // a stable layout continues the drawing on screen: keep the view exactly
    const bool first =
        m_scene->items().isEmpty() ||
        (!layout->stable && (std::abs(oldRect.width() - (layout->width + 40)) > 0.25 * oldRect.width() ||
                             std::abs(oldRect.height() - (layout->height + 40)) > 0.25 * oldRect.height()));
    const QTransform keep = m_view->transform();
    // the view maps scene to viewport by transform and scroll values alone, so a stable layout
    // (same scene coordinates) keeps every pinned box at its pixel by keeping both
    const int keepH = m_view->horizontalScrollBar()->value(), keepV = m_view->verticalScrollBar()->value();
    const QPointF centre = m_view->mapToScene(m_view->viewport()->rect().center());
    // the box nearest the centre, to keep on its pixel when the drawing is laid out afresh at a
    // similar size (timings added to the labels, a step that moved the boxes around it)
    // (only where the drawing is neither fitted afresh nor continued: an O(n) walk per step)
    QString nearestKey;
    QPointF nearestOffset;
    double nearest = std::numeric_limits<double>::max();
    if (!first && (!layout->stable || side))
        for (auto it = m_scene->nodeItems().cbegin(); it != m_scene->nodeItems().cend(); ++it) {
            const QPointF d = centre - it.value()->sceneBoundingRect().center();
            if (const double dist = d.manhattanLength(); dist < nearest) {
                nearest = dist;
                nearestKey = it.key();
                nearestOffset = d;
            }
        }
    // a view nothing moved since it opened, showing the same step again (timings added to its
    // labels, the overlay turned off): framed on the outputs again; another step forgets that
    const bool wasAnchored = m_view->anchored() && m_session.currentStep() == m_lastShownStep;
    if (m_session.currentStep() != m_lastShownStep) m_view->clearAnchor();
    if (side) {
        LayoutResult before = *layout, after = *layout;
        auto strip = [](LayoutResult& r, NodeChange hide) {
            std::erase_if(r.nodes, [hide](const LayoutNode& n) { return n.change == hide; });
            std::erase_if(r.edges, [hide](const LayoutEdge& e) { return e.change == hide; });
        };
        strip(before, NodeChange::Added);
        strip(after, NodeChange::Removed);
        m_sceneBefore->setLayout(before, tips, shares);
        m_scene->setLayout(after, tips, shares);
        const auto& steps = m_session.steps();
        if (const auto from = m_session.diffFrom(); from && *from < static_cast<int>(steps.size())) {
            m_viewBefore->setPaneLabel(
                tr("before: step %1, %2").arg(*from).arg(steps[static_cast<std::size_t>(*from)].label));
            m_view->setPaneLabel(tr("after: step %1, %2")
                                     .arg(m_session.currentStep())
                                     .arg(steps[static_cast<std::size_t>(m_session.currentStep())].label));
        }
        // the two panes' page (the only page once the after view has moved into it)
        auto* split = qobject_cast<QSplitter*>(m_viewBefore->parentWidget());
        m_centre->setCurrentWidget(split);
        if (split->count() == 1) {
            split->addWidget(m_view); // (the stacked widget hid it as its page 0)
            m_view->show();
            split->setSizes({1, 1});
        }
    } else {
        m_view->setPaneLabel({});
        m_scene->setLayout(*layout, tips, shares, layout->stable && !first);
        if (m_centre->indexOf(m_view) < 0) m_centre->insertWidget(0, m_view);
        m_centre->setCurrentWidget(m_view);
    }
    if (first || (wasAnchored && !side)) {
        frameOpening();
    } else if (layout->stable && !side) {
        m_view->setTransform(keep);
        m_view->horizontalScrollBar()->setValue(keepH);
        m_view->verticalScrollBar()->setValue(keepV);
    } else {
        m_view->setTransform(keep);
        const GraphNodeItem* same = m_scene->nodeItems().value(nearestKey);
        m_view->centerOn(same ? same->sceneBoundingRect().center() + nearestOffset : centre);
    }
    m_view->updateMinimap(); // (items were added after the scene rectangle changed)
    m_viewBefore->updateMinimap();
    QString summary =
        tr("%1 · %2 Apply nodes · layout %3 ms%4")
            .arg(m_stepLabel->text())
            .arg(g ? g->nodeCount() : 0)
            .arg(layout->layoutMs, 0, 'f', 0)
            .arg(layout->focused ? tr(" · focused view: %1").arg(QString::fromStdString(layout->focusReason))
                 : layout->stable && m_session.currentStep() != m_lastShownStep
                     ? tr(" · %1 of %2 boxes kept in place").arg(layout->pinnedNodes).arg(layout->nodes.size())
                     : QString());
    if (auto d = m_session.currentDiff()) // (an unbreakable arrow: "150 KiB → 81 KiB" never wraps inside "->")
        summary +=
            QStringLiteral("<br>") + QString::fromStdString(d->summary())
                                         .toHtmlEscaped()
                                         .replace(QStringLiteral(" -&gt; "), QStringLiteral("&nbsp;\u2192&nbsp;"))
                                         .replace(QRegularExpression(QStringLiteral("(\\d) (B|KiB|MiB|GiB)\\b")),
                                                  QStringLiteral("\\1&nbsp;\\2"));
    if (!m_session.pipelineError().isEmpty())
        summary += tr("<br><b>The pipeline failed:</b> %1").arg(m_session.pipelineError().toHtmlEscaped());
    m_summary->setText(summary);
    m_lastShownStep = m_session.currentStep();
    // (whatever drew the step: a stable layout, or one drawn afresh and fitted, e.g. a focused
    // view or the simple layout past the layout budget)
    if (m_pendingReveal < 0 && stepped && !m_session.showingNested() && showEventNodes()) {
        // a rewrite's new nodes are selected and on screen (showEventNodes)
    } else if (m_pendingReveal >= 0) {
        // (kept for the whole-step drawing that follows a neighbourhood-first one)
        const NodeId id = m_session.followUpPending() ? m_pendingReveal : std::exchange(m_pendingReveal, -1);
        if (!revealNode(id) && !m_session.followUpPending()) emit message(tr("Node #%1 is not in the drawing").arg(id));
    } else if (inspected >= 0) {
        emit selectRequested(inspected);
    }
    if (!m_revealScope.empty() && !m_session.layoutPending()) revealScope(std::exchange(m_revealScope, {}));
    // never an empty pane: a drawing kept in place whose boxes all lie outside the view (a big
    // graph's final step after its source view, a step after the overlay) is framed afresh
    const QRectF visible = m_view->visibleArea();
    const auto& items = m_scene->nodeItems();
    if (!items.isEmpty() && std::none_of(items.begin(), items.end(), [&](const GraphNodeItem* it) {
            return visible.intersects(it->sceneBoundingRect());
        }))
        frameOpening();
}

bool StepPresenter::revealScope(const std::string& scope) {
    QRectF area;
    for (const GraphNodeItem* it : m_scene->nodeItems()) {
        const std::string& s = it->node().scope;
        if (s == scope || s.rfind(scope + "/", 0) == 0) area = area.united(it->sceneBoundingRect());
    }
    if (area.isNull()) return false;
    const QRectF visible = m_view->visibleArea();
    m_view->clearAnchor();
    if (area.width() <= visible.width() && area.height() <= visible.height())
        m_view->centerOn(area.center());
    else // its top (where its inputs come in), across as much of it as fits
        m_view->centerOn(QPointF(area.center().x(), area.top() + std::min(area.height(), visible.height()) / 2));
    return true;
}

void StepPresenter::frameOpening() {
    m_view->fit();
    if (m_view->zoom() >= kReadableZoom) return; // the whole drawing, readable
    // a big graph: readable zoom (titles ~12 px), start at the outputs
    m_view->resetTransform();
    m_view->scale(0.9, 0.9);
    // the outputs in the lower part of the view, what feeds them above
    const QRectF visible = m_view->visibleArea();
    const QRectF outputsRect = outputsArea(*m_scene);
    const QPointF outputs = outputsRect.center();
    const double top = outputs.y() - visible.height() * 0.8, bottom = outputs.y() + visible.height() * 0.2;
    // across, the boxes of that band, when they fit side by side (a column beside the outputs
    // stays whole), else the outputs in the middle
    QRectF band;
    for (const GraphNodeItem* it : m_scene->nodeItems()) {
        const QRectF r = it->sceneBoundingRect();
        if (r.bottom() >= top && r.top() <= bottom) band = band.united(r);
    }
    const double x = !band.isNull() && band.width() <= visible.width() ? band.center().x() : outputs.x();
    // kept there while docks open and the timing legend comes (GraphView::anchorAt)
    m_view->anchorAt(QPointF(x, outputs.y()), QPointF(0.5, 0.8), outputsRect);
}

bool StepPresenter::showEventNodes() {
    const auto& steps = m_session.steps();
    const Trace* trace = m_session.trace();
    if (!trace || steps.empty()) return false;
    const StepPoint& st = steps[static_cast<std::size_t>(m_session.currentStep())];
    if (st.event < 1 || st.event > static_cast<int>(trace->events().size())) return false;
    QList<GraphNodeItem*> items;
    if (st.phaseEnd) { // a phase's end (its row clicked, PageDown): what the phase changed
        const int from = st.phase > 0 ? trace->lastEventOfPhase(static_cast<std::size_t>(st.phase - 1)) : 0;
        if (from >= st.event) return false; // the phase changed nothing
        if (const auto g = m_session.graphAt(m_session.currentStep()))
            for (NodeId id : changedRegion(*trace, *g, from, st.event))
                if (GraphNodeItem* it = m_scene->nodeItems().value(QStringLiteral("n%1").arg(id))) items << it;
        return selectAndShow(items);
    }
    const RewriteEvent& event = trace->events()[static_cast<std::size_t>(st.event - 1)];
    for (NodeId id : event.added)
        if (GraphNodeItem* it = m_scene->nodeItems().value(QStringLiteral("n%1").arg(id))) items << it;
    // a rewrite that only removed nodes (constant folding, a merge): the nodes around what it
    // removed, where the focused view of a big step is centred (changedRegion)
    if (event.added.empty() && !event.removed.empty())
        if (const auto g = m_session.graphAt(m_session.currentStep()))
            for (NodeId id : changedRegion(*trace, *g, st.event - 1, st.event))
                if (GraphNodeItem* it = m_scene->nodeItems().value(QStringLiteral("n%1").arg(id))) items << it;
    return selectAndShow(items);
}

bool StepPresenter::selectAndShow(const QList<GraphNodeItem*>& items) {
    if (items.isEmpty()) return false;
    QRectF area;
    for (GraphNodeItem* it : items) area = area.united(it->sceneBoundingRect());
    // the one of them nearest `at`: where to centre when spread over more than the view (their
    // bounding box's centre can be empty canvas between long edges)
    auto nearestTo = [&](const QPointF& at) {
        return *std::min_element(items.begin(), items.end(), [&](const GraphNodeItem* a, const GraphNodeItem* b) {
            return (a->sceneBoundingRect().center() - at).manhattanLength() <
                   (b->sceneBoundingRect().center() - at).manhattanLength();
        });
    };
    const auto anyOnScreen = [&] {
        const QRectF visible = m_view->visibleArea();
        return std::any_of(items.begin(), items.end(),
                           [&](const GraphNodeItem* it) { return visible.intersects(it->sceneBoundingRect()); });
    };
    // the view moves only when none of them is on screen (stepping keeps the drawing still
    // otherwise) or when zoomed out below readable titles (Ctrl+0 on a big drawing): then on them
    const bool zoomedOut = m_view->zoom() < kReadableZoom;
    if (zoomedOut || !anyOnScreen()) {
        m_view->clearAnchor();
        if (zoomedOut) {
            m_view->resetTransform();
            m_view->scale(0.9, 0.9);
        }
        m_view->centerOn(area.center());
        if (!anyOnScreen()) m_view->centerOn(nearestTo(area.center()));
    }
    // the inspector shows the first of them that is on screen (else the first): a phase's
    // changes spread over more than the view, and the inspector described one out of sight
    const QRectF visible = m_view->visibleArea();
    const auto onScreen = std::find_if(
        items.begin(), items.end(), [&](const GraphNodeItem* it) { return visible.contains(it->sceneBoundingRect()); });
    emit selectRequested((onScreen != items.end() ? *onScreen : items.front())->node().node);
    const QSignalBlocker block(m_scene);
    for (GraphNodeItem* it : items) it->setSelected(true);
    return true;
}

bool StepPresenter::revealNode(NodeId id) {
    GraphNodeItem* item = m_scene->selectNode(id);
    if (!item) return false;
    emit selectRequested(id);
    if (m_view->zoom() < 0.75) { // readable titles (about 12 px), as a big graph opens
        m_view->resetTransform();
        m_view->scale(0.9, 0.9);
    }
    m_view->clearAnchor();
    m_view->centerOn(item);
    return true;
}

int StepPresenter::expandPlaceholder(const QString& key, int batch) {
    const auto& layout = m_session.layout();
    auto g = m_session.graphAt(m_session.currentStep());
    if (!layout || !g || m_session.showingNested() || m_session.diffFrom()) return 0;
    const std::string k = key.toStdString();
    std::set<NodeId> drawn;
    for (const LayoutNode& n : layout->nodes)
        if (n.node >= 0) drawn.insert(n.node);
    // The drawn nodes next to the placeholder, and which way the hidden ones lie from them.
    std::deque<const Apply*> frontier;
    bool upstream = false, found = false;
    auto drawnApply = [&](const std::string& other) -> const Apply* {
        if (other.size() < 2 || other[0] != 'n') return nullptr;
        return g->node(std::stoll(other.substr(1)));
    };
    for (const LayoutEdge& e : layout->edges) {
        if (e.tail == k || e.head == k) found = true;
        if (e.tail == k) upstream = true;
        if (const Apply* a = drawnApply(e.tail == k ? e.head : e.head == k ? e.tail : std::string()))
            frontier.push_back(a);
    }
    if (!found || frontier.empty()) return 0;
    // Breadth-first into the hidden side, nearest first.
    std::vector<NodeId> added;
    std::set<NodeId> seen(drawn);
    while (!frontier.empty() && static_cast<int>(added.size()) < batch) {
        const Apply* a = frontier.front();
        frontier.pop_front();
        std::vector<const Apply*> next;
        if (upstream) {
            for (const Variable* v : a->inputs())
                if (v->owner()) next.push_back(v->owner());
        } else {
            for (const Variable* v : a->outputs())
                for (const Client& c : v->clients())
                    if (c.node) next.push_back(c.node);
        }
        for (const Apply* b : next)
            if (seen.insert(b->id()).second && static_cast<int>(added.size()) < batch) {
                added.push_back(b->id());
                frontier.push_back(b);
            }
    }
    if (added.empty()) return 0;
    std::vector<NodeId> seeds(drawn.begin(), drawn.end());
    seeds.insert(seeds.end(), added.begin(), added.end());
    emit message(tr("Expanding %1: %2 more nodes drawn").arg(key).arg(added.size()));
    m_session.focusOnNodes(std::move(seeds), 0);
    return static_cast<int>(added.size());
}

bool StepPresenter::openScope(const QString& key) {
    const auto& layout = m_session.layout();
    const auto grouping = m_session.scopeGrouping();
    if (!layout || !grouping) return false;
    const auto it = std::find_if(layout->nodes.begin(), layout->nodes.end(), [&](const LayoutNode& n) {
        return n.key == key.toStdString() && n.category == NodeCategory::Group;
    });
    if (it == layout->nodes.end()) return false;
    ScopeGrouping next = *grouping;
    next.expanded.insert(it->name);
    emit message(tr("Opening scope %1 (%2 nodes)").arg(QString::fromStdString(it->name)).arg(it->hiddenCount));
    m_revealScope = it->name; // on screen once drawn
    m_session.setScopeGrouping(std::move(next));
    return true;
}

bool StepPresenter::closeScope(const QString& scope) {
    const auto grouping = m_session.scopeGrouping();
    const auto& layout = m_session.layout();
    if (!grouping || !layout) return false;
    const std::string s = scope.toStdString();
    const auto inside = [&s](const std::string& e) { return e == s || e.rfind(s + "/", 0) == 0; };
    // open: some drawn node sits in it (listed as open, or opened as the only box of its level)
    if (s.empty() ||
        std::none_of(layout->nodes.begin(), layout->nodes.end(), [&](const LayoutNode& n) { return inside(n.scope); }))
        return false;
    ScopeGrouping next = *grouping;
    // the scope and every scope inside it
    if (std::erase_if(next.expanded, inside) == 0) {
        // opened as a lone scope (and so were the ones around it): keep those around it open and
        // stop opening lone scopes
        next.openLoneScopes = false;
        for (std::string p = parentScope(s); !p.empty(); p = parentScope(p)) next.expanded.insert(p);
    }
    emit message(tr("Closing scope %1").arg(scope));
    m_session.setScopeGrouping(std::move(next));
    return true;
}

} // namespace passlens
