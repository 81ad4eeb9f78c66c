#include "PipelineFilterModel.h"

#include "PipelineModel.h"

namespace passlens {

void PipelineFilterModel::setHideUnchanged(bool hide) {
    if (hide == m_hideUnchanged) return;
    m_hideUnchanged = hide;
    invalidateFilter();
}

void PipelineFilterModel::setRewriteFilter(const QString& text) {
    const QString t = text.trimmed();
    if (t == m_rewrite) return;
    m_rewrite = t;
    invalidateFilter();
}

bool PipelineFilterModel::rewriterMatches(const QString& name, const QString& text) {
    return text.trimmed().isEmpty() || name.contains(text.trimmed(), Qt::CaseInsensitive);
}

bool PipelineFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QAbstractItemModel* m = sourceModel();
    const QModelIndex row = m->index(sourceRow, 0, sourceParent);
    if (sourceParent.isValid()) // an event row
        return rewriterMatches(m->data(row, PipelineModel::RewriterRole).toString(), m_rewrite);
    if (m_hideUnchanged && m->data(row, PipelineModel::UnchangedRole).toBool()) return false;
    if (m_rewrite.isEmpty()) return true;
    for (int r = 0; r < m->rowCount(row); ++r)
        if (rewriterMatches(m->data(m->index(r, 0, row), PipelineModel::RewriterRole).toString(), m_rewrite))
            return true;
    return false;
}

} // namespace passlens
