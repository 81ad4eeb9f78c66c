#include "TreeColumnFitter.h"

#include <QEvent>
#include <QHeaderView>
#include <QTimer>
#include <QTreeView>

#include <algorithm>
#include <utility>
#include <vector>

namespace passlens {

TreeColumnFitter::TreeColumnFitter(QTreeView* tree, int minFirst)
    : QObject(tree)
    , m_tree(tree)
    , m_viewport(tree->viewport())
    , m_minFirst(minFirst) {
    QHeaderView* h = tree->header();
    h->setStretchLastSection(false);
    h->setSectionResizeMode(QHeaderView::Interactive);
    h->setMinimumSectionSize(0);                                // (a figure column without room at all is 0 px wide)
    tree->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the columns always fit across
    tree->viewport()->installEventFilter(this);
    // contents change: refit (once) when the view has laid out the new rows
    auto later = [this] {
        if (std::exchange(m_pending, true)) return;
        QTimer::singleShot(0, this, [this] {
            m_pending = false;
            fit();
        });
    };
    if (QAbstractItemModel* m = tree->model()) {
        connect(m, &QAbstractItemModel::modelReset, this, later);
        connect(m, &QAbstractItemModel::layoutChanged, this, later);
        connect(m, &QAbstractItemModel::rowsInserted, this, later);
        connect(m, &QAbstractItemModel::dataChanged, this, later);
    }
    connect(tree, &QTreeView::expanded, this, later);
    connect(tree, &QTreeView::collapsed, this, later);
}

bool TreeColumnFitter::eventFilter(QObject* watched, QEvent* event) {
    // (the type first: the viewport also sends events while the tree is being destroyed, when
    // the tree is no longer a QTreeView to ask for its viewport; UBSan caught that)
    if (event->type() == QEvent::Resize && watched == m_viewport) fit();
    return QObject::eventFilter(watched, event);
}

void TreeColumnFitter::fit() {
    if (m_fitting || !m_tree->model()) return;
    m_fitting = true;
    QHeaderView* h = m_tree->header();
    const int columns = h->count();
    const int avail = m_tree->viewport()->width();
    std::vector<int> wanted(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) // the contents (rows laid out so far) or the header's title
        wanted[static_cast<std::size_t>(c)] =
            std::max(static_cast<const QAbstractItemView*>(m_tree)->sizeHintForColumn(c), h->sectionSizeHint(c));
    int others = 0;
    for (int c = 1; c < columns; ++c) others += wanted[static_cast<std::size_t>(c)];
    // the names: all they need when it fits, else at least half the viewport (and minFirst)
    const int first =
        avail - others >= wanted[0] ? avail - others : std::min(wanted[0], std::max(m_minFirst, avail / 2));
    h->resizeSection(0, std::max(first, 20));
    int left = avail - first;
    for (int c = 1; c < columns; ++c) {
        const int want = wanted[static_cast<std::size_t>(c)];
        // a column with room for less than 40 px of its figures is left out (not "…s")
        int w = std::min(want, left);
        if (w < std::min(want, 40)) w = 0;
        h->resizeSection(c, w);
        left -= w;
    }
    if (left > 0) h->resizeSection(0, h->sectionSize(0) + left); // (what the left-out ones leave)
    m_fitting = false;
}

} // namespace passlens
