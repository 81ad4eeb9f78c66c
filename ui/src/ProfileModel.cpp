#include "ProfileModel.h"

#include <passlens/ir/FunctionGraph.h>

#include <set>

namespace passlens {

ProfileModel::ProfileModel(Mode mode, QObject* parent)
    : QAbstractTableModel(parent)
    , m_mode(mode) {}

void ProfileModel::setProfile(const nlohmann::json& profile, const FunctionGraph* graph) {
    beginResetModel();
    m_rows.clear();
    m_total = 0;
    std::vector<Row> rows;
    std::set<long long> counted;
    auto add = [&](const nlohmann::json& n, const QString& kindOverride) {
        Row r;
        r.node = n.value("node", -1LL);
        const auto t = n.find("time_us");
        r.timeUs = t != n.end() && t->is_number() ? t->get<double>() : -1;
        r.kind = kindOverride.isEmpty() ? QString::fromStdString(n.value("kind", std::string())) : kindOverride;
        if (graph && r.node >= 0)
            if (const Apply* a = graph->node(r.node)) r.op = QString::fromStdString(a->op().str());
        if (r.op.isEmpty()) r.op = QString::fromStdString(n.value("op", std::string()));
        r.calls = 1;
        // each node's time counted once (a transfer node may be listed under "nodes" and under
        // "transfers"), as the overlay's TimingProfile::totalUs does, so both show one share
        if (r.timeUs > 0 && (r.node < 0 || counted.insert(r.node).second)) m_total += r.timeUs;
        rows.push_back(r);
    };
    if (profile.is_object()) {
        for (const auto& n : profile.value("nodes", nlohmann::json::array())) add(n, {});
        for (const auto& n : profile.value("transfers", nlohmann::json::array()))
            add(n, QStringLiteral("transfer %1").arg(QString::fromStdString(n.value("direction", std::string()))));
    }
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
            if (r.timeUs >= 0) k.timeUs = (k.timeUs < 0 ? 0 : k.timeUs) + r.timeUs;
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
    const double share = r.timeUs >= 0 && m_total > 0 ? 100.0 * r.timeUs / m_total : -1;
    if (role == NodeIdRole) return QVariant::fromValue<qlonglong>(r.node);
    if (role == SortRole) {
        switch (index.column()) {
        case Node: return m_mode == Mode::PerNode ? QVariant::fromValue<qlonglong>(r.node) : QVariant(r.calls);
        case TimeUs:
        case Share: return r.timeUs;
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
    case TimeUs: return r.timeUs >= 0 ? QString::number(r.timeUs, 'f', 1) : QStringLiteral("n/a");
    case Share: return share >= 0 ? QStringLiteral("%1 %").arg(share, 0, 'f', 1) : QStringLiteral("n/a");
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
