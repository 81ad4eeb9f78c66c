#include "CheckBoxClickFilter.h"

#include <QMouseEvent>
#include <QStyleOptionViewItem>
#include <QTreeView>

namespace passlens {

CheckBoxClickFilter::CheckBoxClickFilter(QTreeView* tree)
    : QObject(tree)
    , m_tree(tree) {}

bool CheckBoxClickFilter::eventFilter(QObject* watched, QEvent* event) {
    const auto type = event->type();
    if (type != QEvent::MouseButtonPress && type != QEvent::MouseButtonRelease && type != QEvent::MouseButtonDblClick)
        return QObject::eventFilter(watched, event);
    auto* mouse = static_cast<QMouseEvent*>(event);
    const QPoint at = mouse->position().toPoint();
    const QModelIndex index = m_tree->indexAt(at);
    if (!index.isValid() || !(index.flags() & Qt::ItemIsUserCheckable) || mouse->button() != Qt::LeftButton)
        return QObject::eventFilter(watched, event);
    QStyleOptionViewItem option;
    option.initFrom(m_tree);
    option.rect = m_tree->visualRect(index);
    option.features |= QStyleOptionViewItem::HasCheckIndicator;
    if (index.data(Qt::DecorationRole).isValid()) option.features |= QStyleOptionViewItem::HasDecoration;
    const QRect box = m_tree->style()->subElementRect(QStyle::SE_ItemViewItemCheckIndicator, &option, m_tree);
    if (!box.contains(at)) return QObject::eventFilter(watched, event);
    if (type == QEvent::MouseButtonRelease) {
        const bool checked = index.data(Qt::CheckStateRole).toInt() == Qt::Checked;
        m_tree->model()->setData(index, checked ? Qt::Unchecked : Qt::Checked, Qt::CheckStateRole);
    }
    return true; // no press reaches the view: the current row (and the step) stay
}

} // namespace passlens
