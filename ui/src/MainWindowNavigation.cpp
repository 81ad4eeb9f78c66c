// MainWindow's navigation: Find, the pipeline tree following the step, stepping by rewrite,
// provenance jumps and grouping by name scope.
#include "passlens/ui/MainWindow.h"

#include "GraphScene.h"
#include "PipelineFilterModel.h"
#include "PipelineModel.h"
#include "StepPresenter.h"

#include <passlens/ir/GraphSearch.h>
#include <passlens/layout/ScopeGroups.h>

#include <QAction>
#include <QLabel>
#include <QLineEdit>
#include <QStatusBar>
#include <QTreeView>

namespace passlens {

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
    // the node and what the rewrite added are drawn first: the layout job, which builds the
    // step's graph (never replayed here), keeps those the step has, and showLayout forgets a
    // target it does not have
    std::vector<NodeId> seeds;
    if (id >= 0) seeds.push_back(id);
    const auto& added = trace->events()[static_cast<std::size_t>(seq - 1)].added;
    seeds.insert(seeds.end(), added.begin(), added.end());
    m_presenter->setPendingReveal(id);
    if (!seeds.empty()) m_session->showNeighbourhoodFirst(std::move(seeds));
}

} // namespace passlens
