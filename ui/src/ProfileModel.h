#pragma once
/// @file ProfileModel.h
/// A profile (core's ExecutionProfile) as a sortable table: per node (op, time, share, kind) or
/// per op kind (total time, calls, share), as Theano's profiler tables.
#include <passlens/trace/ExecutionProfile.h>

#include <QAbstractTableModel>

#include <map>
#include <optional>

namespace passlens {

class FunctionGraph;

class ProfileModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Mode { PerNode, PerOp };
    enum Column { Node, Op, TimeUs, Share, Kind, ColumnCount };
    static constexpr int NodeIdRole = Qt::UserRole + 1;
    static constexpr int SortRole = Qt::UserRole + 2;

    explicit ProfileModel(Mode mode, QObject* parent = nullptr);
    /// Shows `profile` for `graph` (op names come from the graph, which may be null): one row
    /// per node, a transfer node once (its kind "transfer HtoD"); nodes without a time (no
    /// kernel, not run, fused into another, in-place Join) show n/a and say why in Kind.
    void setProfile(const ExecutionProfile& profile, const FunctionGraph* graph);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
    double totalUs() const { return m_total; }

private:
    struct Row {
        long long node = -1;
        QString op, kind;
        std::optional<double> timeUs; ///< microseconds per run; none: n/a
        int calls = 0;
    };
    Mode m_mode;
    std::vector<Row> m_rows;
    double m_total = 0;
};

} // namespace passlens
