#pragma once
/// @file TreeColumnFitter.h
/// Column widths of the pipeline tree, so that phase names stay readable in a narrow dock.
#include <QObject>

class QTreeView;
class QWidget;

namespace passlens {

/// Sizes the columns of `tree` whenever its viewport or its contents change: the first column
/// (the names) gets what it needs up to half the viewport (at least `minFirst` px), then each
/// other column its contents' width while room is left, in column order; a column without room
/// gets what is left (its text elided), or none when that is under 40 px (the names get it).
/// Installed on the tree's viewport; QHeaderView's Stretch and ResizeToContents alone give the
/// names nothing once the number columns (20k-node counts, a check mark) fill a narrow dock.
class TreeColumnFitter final : public QObject {
public:
    explicit TreeColumnFitter(QTreeView* tree, int minFirst = 120);
    /// Sizes the columns now (also called on resizes and model changes).
    void fit();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QTreeView* m_tree;
    QWidget* m_viewport; ///< the tree's viewport, which the filter is on
    int m_minFirst;
    bool m_fitting = false;
    bool m_pending = false;
};

} // namespace passlens
