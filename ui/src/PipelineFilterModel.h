#pragma once
/// @file PipelineFilterModel.h
/// The pipeline tree's filter over PipelineModel: hides phases that changed nothing (on
/// request) and keeps only the events of rewrites whose name contains a text, with the phases
/// that hold such events.
#include <QSortFilterProxyModel>

namespace passlens {

class PipelineFilterModel final : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    /// Hides phase rows whose PipelineModel::UnchangedRole is true.
    void setHideUnchanged(bool hide);
    bool hideUnchanged() const { return m_hideUnchanged; }
    /// Keeps event rows whose rewriter name contains `text` (case-insensitive) and the phases
    /// with at least one of them; empty shows everything.
    void setRewriteFilter(const QString& text);
    QString rewriteFilter() const { return m_rewrite; }
    /// True when a rewriter `name` passes the rewrite filter `text` (the rule above).
    static bool rewriterMatches(const QString& name, const QString& text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    bool m_hideUnchanged = false;
    QString m_rewrite;
};

} // namespace passlens
