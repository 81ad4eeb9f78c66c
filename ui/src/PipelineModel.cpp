#include "PipelineModel.h"

#include <algorithm>
#include <cstdlib>

#include <passlens/trace/Trace.h>

#include <QColor>
#include <QFont>
#include <QGuiApplication>
#include <QPalette>

namespace passlens {

// Internal ids: phase rows have id 0; event rows have id = phase index + 1.
PipelineModel::PipelineModel(QObject* parent)
    : QAbstractItemModel(parent) {}

void PipelineModel::setTrace(const Trace* trace, const QStringList& skipped) {
    beginResetModel();
    m_trace = trace;
    m_disabled.clear(); // a run starts with its phases checked; unchecked ones skip the next Run
    m_skipped.clear();
    m_eventsOfPhase.clear();
    m_checks.clear();
    if (m_trace) {
        for (const QString& name : skipped) {
            const bool ran = std::any_of(m_trace->phases().begin(), m_trace->phases().end(),
                                         [&](const PhaseRecord& p) { return p.info.name == name.toStdString(); });
            if (!ran && !m_skipped.contains(name)) m_skipped << name;
        }
        m_disabled = m_skipped;
        m_eventsOfPhase.resize(m_trace->phases().size());
        m_checks.resize(m_trace->phases().size(), {CheckMark::None, QString()});
        for (const auto& e : m_trace->events()) {
            if (e.status == EventStatus::Declined) continue;
            for (std::size_t p = 0; p < m_trace->phases().size(); ++p)
                if (m_trace->phases()[p].info.name == e.phase) {
                    m_eventsOfPhase[p].push_back(e.seq);
                    break;
                }
        }
    }
    endResetModel();
}

QModelIndex PipelineModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    if (!parent.isValid()) return createIndex(row, column, quintptr(0));
    return createIndex(row, column, quintptr(parent.row() + 1));
}

QModelIndex PipelineModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == 0) return {};
    return createIndex(static_cast<int>(child.internalId()) - 1, 0, quintptr(0));
}

bool PipelineModel::isSkippedRow(const QModelIndex& index) const {
    return m_trace && index.isValid() && index.internalId() == 0 &&
           index.row() >= static_cast<int>(m_trace->phases().size());
}

int PipelineModel::rowCount(const QModelIndex& parent) const {
    if (!m_trace) return 0;
    if (!parent.isValid()) return static_cast<int>(m_trace->phases().size() + m_skipped.size());
    if (parent.internalId() != 0 || parent.column() != 0 || isSkippedRow(parent)) return 0;
    return static_cast<int>(m_eventsOfPhase[static_cast<std::size_t>(parent.row())].size());
}

int PipelineModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant PipelineModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_trace) return {};
    if (isSkippedRow(index)) {
        const QString& name = m_skipped[index.row() - static_cast<int>(m_trace->phases().size())];
        switch (role) {
        case Qt::DisplayRole:
            return index.column() == Name ? name : index.column() == Applied ? tr("skipped") : QVariant();
        case Qt::ToolTipRole:
            return tr("%1 was skipped in this run: check it and Run (Ctrl+R) to include it").arg(name);
        case Qt::ForegroundRole: return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
        case Qt::CheckStateRole:
            if (index.column() == Name) return m_disabled.contains(name) ? Qt::Unchecked : Qt::Checked;
            break;
        case EventRole: return 0;
        case PhaseRole: return -1;
        case UnchangedRole: return false; // "hide phases that changed nothing" keeps it: it can be checked
        case CheckRole: return static_cast<int>(CheckMark::None);
        }
        return {};
    }
    if (index.internalId() == 0) {
        const PhaseRecord& p = m_trace->phases()[static_cast<std::size_t>(index.row())];
        std::int64_t applied = 0;
        for (const auto& [n, st] : p.rewriters) applied += st.applied;
        switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
            case Name: return QString::fromStdString(p.info.name);
            case Applied: return QVariant::fromValue<qlonglong>(applied);
            case Nodes: { // the count after, then the change: "20001 (−2222)" (before → after in the tooltip)
                const auto d = static_cast<long long>(p.nodesAfter) - static_cast<long long>(p.nodesBefore);
                if (d == 0) return QString::number(p.nodesAfter);
                return QStringLiteral("%1 (%2%3)")
                    .arg(p.nodesAfter)
                    .arg(d > 0 ? QStringLiteral("+") : QStringLiteral("−"))
                    .arg(std::llabs(d));
            }
            case Time: return QStringLiteral("%1 ms").arg(p.timeUs / 1000.0, 0, 'f', 2);
            }
            break;
        case Qt::ToolTipRole: {
            const QString& check = m_checks[static_cast<std::size_t>(index.row())].second;
            return QStringLiteral("%1 (%2 at %3)\n%4 → %5 nodes%6%7")
                .arg(QString::fromStdString(p.info.name), QString::fromStdString(p.info.kind))
                .arg(p.info.position)
                .arg(p.nodesBefore)
                .arg(p.nodesAfter)
                .arg(p.changed ? QString() : tr("\nchanged nothing"),
                     check.isEmpty() ? QString() : QStringLiteral("\n") + check);
        }
        case Qt::DecorationRole:
            if (index.column() == Name) {
                switch (m_checks[static_cast<std::size_t>(index.row())].first) {
                case CheckMark::Match: return QColor(0x1e, 0x7b, 0x34);
                case CheckMark::FirstDivergent: return QColor(0xc6, 0x28, 0x28);
                case CheckMark::Diverged: return QColor(0xef, 0x9a, 0x9a);
                case CheckMark::Failed: return QColor(0x75, 0x75, 0x75);
                case CheckMark::None: break;
                }
            }
            break;
        case CheckRole: return static_cast<int>(m_checks[static_cast<std::size_t>(index.row())].first);
        case Qt::ForegroundRole:
            if (!p.changed) return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
            break;
        case Qt::CheckStateRole:
            if (index.column() == Name)
                return m_disabled.contains(QString::fromStdString(p.info.name)) ? Qt::Unchecked : Qt::Checked;
            break;
        case EventRole: return p.lastEvent;
        case PhaseRole: return index.row();
        case UnchangedRole: return !p.changed;
        }
        return {};
    }
    const std::size_t phase = index.internalId() - 1;
    const int seq = m_eventsOfPhase[phase][static_cast<std::size_t>(index.row())];
    const RewriteEvent& e = m_trace->events()[static_cast<std::size_t>(seq - 1)];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case Name:
            return QStringLiteral("#%1 %2%3")
                .arg(seq)
                .arg(QString::fromStdString(e.rewriter),
                     e.status == EventStatus::Applied
                         ? QString()
                         : QStringLiteral(" (%1)").arg(QString::fromLatin1(statusName(e.status))));
        case Applied: return e.node >= 0 ? QStringLiteral("node %1").arg(e.node) : QString();
        case Nodes: return QStringLiteral("+%1 −%2").arg(e.added.size()).arg(e.removed.size());
        case Time: return QStringLiteral("%1 µs").arg(e.timeUs, 0, 'f', 1);
        }
        break;
    case Qt::ToolTipRole: // the whole name (the column may cut it), then why
        return QStringLiteral("#%1 %2 (%3)%4")
            .arg(seq)
            .arg(QString::fromStdString(e.rewriter), QString::fromLatin1(statusName(e.status)),
                 e.reason.empty() ? QString() : QStringLiteral("\n") + QString::fromStdString(e.reason));
    case Qt::ForegroundRole:
        if (e.status == EventStatus::Rejected) return QColor(0xc6, 0x28, 0x28);
        break;
    case EventRole: return seq;
    case PhaseRole: return static_cast<int>(phase);
    case UnchangedRole: return false;
    case RewriterRole: return QString::fromStdString(e.rewriter);
    }
    return {};
}

QVariant PipelineModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Name: return tr("Phase / rewrite");
    case Applied: return tr("Applied");
    case Nodes: return tr("Nodes");
    case Time: return tr("Time");
    }
    return {};
}

Qt::ItemFlags PipelineModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags f = QAbstractItemModel::flags(index);
    if (index.isValid() && index.internalId() == 0 && index.column() == Name) f |= Qt::ItemIsUserCheckable;
    return f;
}

bool PipelineModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!m_trace || !index.isValid() || index.internalId() != 0 || index.column() != Name || role != Qt::CheckStateRole)
        return false;
    const int phases = static_cast<int>(m_trace->phases().size());
    const QString name =
        index.row() >= phases
            ? m_skipped[index.row() - phases]
            : QString::fromStdString(m_trace->phases()[static_cast<std::size_t>(index.row())].info.name);
    m_disabled.removeAll(name);
    if (value.toInt() == Qt::Unchecked) m_disabled << name;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    return true;
}

void PipelineModel::setCheckMark(int phase, CheckMark mark, const QString& text) {
    if (phase < 0 || phase >= static_cast<int>(m_checks.size())) return;
    m_checks[static_cast<std::size_t>(phase)] = {mark, text};
    const QModelIndex i = index(phase, Name);
    emit dataChanged(i, i, {Qt::DecorationRole, Qt::ToolTipRole, CheckRole});
}

bool PipelineModel::runPending() const {
    QStringList a = m_disabled, b = m_skipped;
    a.sort();
    b.sort();
    return a != b;
}

QModelIndex PipelineModel::indexOfEvent(int seq) const {
    for (std::size_t p = 0; p < m_eventsOfPhase.size(); ++p)
        for (std::size_t r = 0; r < m_eventsOfPhase[p].size(); ++r)
            if (m_eventsOfPhase[p][r] == seq) return index(static_cast<int>(r), 0, index(static_cast<int>(p), 0));
    return {};
}

} // namespace passlens
