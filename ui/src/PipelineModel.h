#pragma once
/// @file PipelineModel.h
/// The pipeline tree: one row per phase (name, rewrites applied, nodes before -> after, time),
/// expanding into its recorded rewrite events. Phases that changed nothing are dimmed.
#include <QAbstractItemModel>

namespace passlens {

class Trace;

class PipelineModel final : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { Name, Applied, Nodes, Time, ColumnCount };
    /// Role carrying the event seq of a row (0 for a phase row without events).
    static constexpr int EventRole = Qt::UserRole + 1;
    /// Role carrying the phase index.
    static constexpr int PhaseRole = Qt::UserRole + 2;
    /// Role: true for phases that changed nothing.
    static constexpr int UnchangedRole = Qt::UserRole + 3;
    /// Role carrying the rewriter name of an event row (empty for phase rows).
    static constexpr int RewriterRole = Qt::UserRole + 4;
    /// Role carrying a phase row's numerical check mark (CheckMark as int; None when unchecked).
    static constexpr int CheckRole = Qt::UserRole + 5;

    /// The numerical check of a phase's graph against the source graph (Execute > Check).
    enum class CheckMark { None, Match, Diverged, FirstDivergent, Failed };
    /// Marks phase `phase` (a colour swatch on its row, the result in its tooltip); cleared
    /// when a new trace is set.
    void setCheckMark(int phase, CheckMark mark, const QString& text);

    explicit PipelineModel(QObject* parent = nullptr);
    /// Shows `trace` (not owned; may be null). Resets the model. `skipped`: phases the run left
    /// out (unchecked before a re-run of the same pipeline on the same file); they stay in the
    /// tree, unchecked and greyed, after the run's phases (PhaseRole -1, no step), so checking
    /// one and running again brings it back. Every other phase starts checked.
    void setTrace(const Trace* trace, const QStringList& skipped = {});
    /// Rows of skipped phases follow the trace's phases: true for such a top-level row.
    bool isSkippedRow(const QModelIndex& index) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

    /// The index of the row of event `seq` (invalid when not shown).
    QModelIndex indexOfEvent(int seq) const;
    /// Phases unchecked by the user: the next Run skips them (Pipeline::setEnabled).
    QStringList disabledPhases() const { return m_disabled; }
    /// True when the check boxes differ from the run shown (a phase unchecked or checked since):
    /// only Run applies them.
    bool runPending() const;

    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

private:
    const Trace* m_trace = nullptr;
    QStringList m_disabled;
    QStringList m_skipped;                               ///< phases not in the trace, shown after its phases
    std::vector<std::vector<int>> m_eventsOfPhase;       // event seqs (applied and rejected) per phase
    std::vector<std::pair<CheckMark, QString>> m_checks; // per phase
};

} // namespace passlens
