#pragma once
/// @file PhaseCheck.h
/// The first-divergent-phase check of `passlens-cli run --check` and of the window's
/// Execute > Check: the phases that changed the graph, in run order, each have their outputs
/// compared with the source graph's on the same inputs; the first beyond the tolerance, or the
/// first whose graph cannot run, is the first divergent phase. How a graph runs is the caller's
/// (passlens_kernels for the CLI, the window's ExecutionBackend).
#include "passlens/ir/CancelToken.h"
#include "passlens/trace/Trace.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// The largest accepted max_rel (norm-wise relative error, kernels' compareOutputs) of a check
/// when the caller sets none (`run --tolerance`'s default, the window's check).
inline constexpr double kCheckTolerance = 1e-4;

/// `run --check`'s absolute floor (`--abs-tolerance`'s default), as numpy.allclose's atol: an
/// output whose max_abs is at most this matches whatever its max_rel, which means little on
/// outputs whose values are all near 0 (ch_PP-OCRv4_det_infer's reference outputs are below
/// 1e-4; onnxruntime's reference and PassLens differ there by 1.2e-7).
inline constexpr double kCheckAbsTolerance = 1e-6;

/// A phase's outputs against the source graph's, on the same inputs.
struct OutputsDiff {
    double maxAbs = 0, maxRel = 0; ///< over every output
    bool shapesMatch = true;       ///< same number of outputs, each of the same shape
};

/// A phase to check: its index in Trace::phases(), its name, and its graph (built when asked).
struct CheckedPhase {
    std::size_t index = 0;
    std::string name;
    std::function<std::shared_ptr<const FunctionGraph>()> graph;
};

/// The phases a check runs: those of `trace` that changed the graph (an unchanged phase has the
/// graph, so the outputs, of the one before), in run order, up to and including `lastPhase`
/// (every one when empty or "final"). Their graphs replay from `trace`, which must outlive them.
std::vector<CheckedPhase> phasesToCheck(const Trace& trace, const std::string& lastPhase = {});

struct PhaseCheckEntry {
    std::size_t index = 0; ///< index in Trace::phases()
    std::string name;
    std::optional<OutputsDiff> diff; ///< none when the phase's graph could not run
    std::string error;               ///< then why, "CONTEXT --phase NAME: reason"
    /// could not run, shapes differ, or max_rel > tolerance and max_abs > absTolerance
    bool diverges = false;
    bool first = false; ///< the first divergent phase
};

struct PhaseCheckResult {
    std::vector<PhaseCheckEntry> phases;
    /// The name of the first divergent phase; empty when every phase matches.
    std::string firstDivergent;
};

/// `compare(graph)`: the outputs of `graph` against the source graph's. It may throw; the phase
/// is then recorded with currentExceptionMessage(context + " --phase " + name).
using CompareWithSource = std::function<OutputsDiff(const FunctionGraph& graph)>;

/// Compares each phase in order (CLI.md `run --check`: "first_divergent_phase"); a phase matches
/// when its max_rel is at most `tolerance` or its max_abs at most `absTolerance`. `cancel` (may be
/// null) is polled before each phase: once cancelled, throws Cancelled("the phase check was
/// cancelled") and returns nothing.
PhaseCheckResult checkPhases(const std::vector<CheckedPhase>& phases, const CompareWithSource& compare,
                             double tolerance, const std::string& context, const CancelToken* cancel = nullptr,
                             double absTolerance = kCheckAbsTolerance);

} // namespace passlens
