#pragma once
/// @file CheckBoxClickFilter.h
/// The pipeline tree's check boxes (phases to skip on the next Run).
#include <QObject>

class QTreeView;

namespace passlens {

/// A click on a phase row's check box toggles it without making the row current: a current row
/// shows its step, and unchecking a phase (for the next Run) must not jump to it. Installed on
/// the tree's viewport.
class CheckBoxClickFilter final : public QObject {
public:
    /// A filter for `tree` (its child).
    explicit CheckBoxClickFilter(QTreeView* tree);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QTreeView* m_tree;
};

} // namespace passlens
