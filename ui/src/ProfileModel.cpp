#include "ProfileModel.h"

#include <passlens/ir/FunctionGraph.h>

namespace passlens {

ProfileModel::ProfileModel(Mode mode, QObject* parent)
    : QAbstractTableModel(parent)
    , m_mode(mode) {}

void ProfileModel::setProfile(const ExecutionProfile& profile, const FunctionGraph* graph) {
    beginResetModel();
    m_rows.clear();
    m_total = 0;
    std::vector<Row> rows;
    std::map<NodeId, const ProfileTransfer*> transferOf;
    for (const ProfileTransfer& t : profile.transfers)
        if (!t.implicit) transferOf[t.node] = &t;
    auto add = [&](NodeId node, const std::string& op, std::optional<double> timeUs, const QString& kind) {
        Row r;
        r.node = node;
        r.timeUs = timeUs;
        r.kind = kind;
        if (graph && r.node >= 0)
            if (const Apply* a = graph->node(r.node)) r.op = QString::fromStdString(a->op().str());
        if (r.op.isEmpty()) r.op = QString::fromStdString(op);
        r.calls = 1;
        // each node's time counted once, as ExecutionProfile::totalUs does
        if (r.timeUs && *r.timeUs > 0) m_total += *r.timeUs;
        rows.push_back(r);
    };
    auto transferKind = [](const ProfileTransfer& t) {
        return (t.implicit ? QStringLiteral("implicit transfer %1") : QStringLiteral("transfer %1"))
            .arg(QString::fromLatin1(transferDirectionName(t.direction)));
    };
    for (const ProfileNode& n : profile.nodes) {
        QString kind = QString::fromLatin1(stepKindName(n.stepKind));
        if (n.fusedInto)
            kind = tr("fused into #%1").arg(*n.fusedInto);
        else if (n.inPlace)
            kind = tr("in place");
        else if (auto t = transferOf.find(n.node); t != transferOf.end())
            kind = transferKind(*t->second);
        add(n.node, n.op, n.timeUs, kind);
    }
    for (const ProfileTransfer& t : profile.transfers)
        if (t.implicit || !profile.find(t.node)) add(t.node, {}, t.timeUs, transferKind(t));
    if (m_mode == Mode::PerNode) {
        m_rows = std::move(rows);
    } else {
        std::map<QString, Row> byKind;
        for (const Row& r : rows) {
            QString kind = r.op.section('{', 0, 0).section('<', 0, 0).section('(', 0, 0);
            Row& k = byKind[kind];
            k.op = kind;
            k.kind = r.kind;
            k.calls += 1;
            if (r.timeUs) k.timeUs = k.timeUs.value_or(0) + *r.timeUs;
        }
        for (auto& [k, r] : byKind) m_rows.push_back(r);
    }
    endResetModel();
}

int ProfileModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}
int ProfileModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ProfileModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const Row& r = m_rows[static_cast<std::size_t>(index.row())];
    const std::optional<double> share =
        r.timeUs && m_total > 0 ? std::optional<double>(100.0 * *r.timeUs / m_total) : std::nullopt;
    if (role == NodeIdRole) return QVariant::fromValue<qlonglong>(r.node);
    if (role == SortRole) {
        switch (index.column()) {
        case Node: return m_mode == Mode::PerNode ? QVariant::fromValue<qlonglong>(r.node) : QVariant(r.calls);
        case TimeUs:
        case Share: return r.timeUs.value_or(-1); // n/a sorts below every time
        default: return data(index, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole &&
        (index.column() == TimeUs || index.column() == Share || index.column() == Node))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Node:
        return m_mode == Mode::PerNode ? (r.node >= 0 ? QStringLiteral("#%1").arg(r.node) : QString())
                                       : QString::number(r.calls);
    case Op: return r.op;
    case TimeUs: return r.timeUs ? QString::number(*r.timeUs, 'f', 1) : QStringLiteral("n/a");
    case Share: return share ? QStringLiteral("%1 %").arg(*share, 0, 'f', 1) : QStringLiteral("n/a");
    case Kind: return r.kind;
    }
    return {};
}

QVariant ProfileModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Node: return m_mode == Mode::PerNode ? tr("Node") : tr("Nodes");
    case Op: return m_mode == Mode::PerNode ? tr("Apply") : tr("Op kind");
    case TimeUs: return tr("Time (µs)");
    case Share: return tr("Share");
    case Kind: return tr("Kind");
    }
    return {};
}

} // namespace passlens
