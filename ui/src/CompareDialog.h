#pragma once
/// @file CompareDialog.h
/// Tools > Compare: the shown pipeline's final graph against another pipeline's, run on the same
/// source graph, drawn as one diff (union layout: nodes only in the shown run as removed, only
/// in the other as added), with the summary and both optimizer profiles side by side.
#include <passlens/ir/FunctionGraph.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/trace/Trace.h>

#include <QDialog>
#include <QString>

#include <map>
#include <memory>
#include <optional>

namespace passlens {

/// Both runs of a comparison and their drawn diff (compareFinalGraphs).
struct Comparison {
    QString mineName, otherName; ///< the pipelines: the one shown, the other
    QString myText, otherText;   ///< their optimizer profiles (optimizeText)
    QString summary;             ///< node counts, nodes alike, the diff's summary
    QString error;               ///< why the other run or the drawing failed; empty when none
    bool identical = false;      ///< both final graphs alike, node for node (GraphDiff::empty)
    std::shared_ptr<const FunctionGraph> myFinal;
    std::shared_ptr<const FunctionGraph> otherFinal; ///< ids aligned with myFinal (alignIds)
    std::shared_ptr<const Trace> otherTrace;
    std::map<NodeId, NodeId> otherIds; ///< id in otherFinal (aligned) -> id in otherTrace
    std::optional<LayoutResult> layout;
};

/// Runs pipeline `other` on a copy of `source` (the source's ids), aligns its final graph with
/// `myFinal` (alignIds: nodes both pipelines made alike take one id) and lays out their diff
/// with `engine` (`cancel` stops it). The other side and the drawing are filled in; a failure
/// goes into `error`, never thrown. Runs on a worker thread.
Comparison compareFinalGraphs(const FunctionGraph& source, Comparison mine, const Caption& caption,
                              LayoutEngine& engine, const CancelToken* cancel);

class CompareDialog final : public QDialog {
    Q_OBJECT
public:
    /// The comparison `c`: its summary (or error) and legend, the drawn diff (tooltips say which
    /// rewrite of `mine`, the trace shown, or of the other run made each node), and both
    /// profiles. Deleted when closed.
    CompareDialog(const Comparison& c, const Trace* mine, bool dark, QWidget* parent = nullptr);

Q_SIGNALS:
    /// A node of the shown run's final graph was double-clicked (to go to the rewrite that
    /// made it).
    void nodeChosen(NodeId id);
};

} // namespace passlens
