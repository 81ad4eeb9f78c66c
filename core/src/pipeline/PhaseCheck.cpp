#include "passlens/pipeline/PhaseCheck.h"

#include "passlens/io/Failure.h"

namespace passlens {

std::vector<CheckedPhase> phasesToCheck(const Trace& trace, const std::string& lastPhase) {
    std::vector<CheckedPhase> out;
    const auto& phases = trace.phases();
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const PhaseRecord& pr = phases[i];
        if (pr.changed) {
            const std::string name = pr.info.name;
            out.push_back({i, name, [&trace, name] {
                               return std::shared_ptr<const FunctionGraph>(trace.graphAfterPhase(name));
                           }});
        }
        if (pr.info.name == lastPhase) break;
    }
    return out;
}

PhaseCheckResult checkPhases(const std::vector<CheckedPhase>& phases, const CompareWithSource& compare,
                             double tolerance, const std::string& context, const CancelToken* cancel,
                             double absTolerance) {
    PhaseCheckResult result;
    for (const CheckedPhase& ph : phases) {
        throwIfCancelled(cancel, "the phase check");
        PhaseCheckEntry e;
        e.index = ph.index;
        e.name = ph.name;
        try {
            const std::shared_ptr<const FunctionGraph> g = ph.graph();
            e.diff = compare(*g);
            e.diverges = !e.diff->shapesMatch || !(e.diff->maxRel <= tolerance || e.diff->maxAbs <= absTolerance);
        } catch (...) {
            e.error = currentExceptionMessage(context + " --phase " + ph.name);
            e.diverges = true;
        }
        if (e.diverges && result.firstDivergent.empty()) {
            e.first = true;
            result.firstDivergent = e.name;
        }
        result.phases.push_back(std::move(e));
    }
    return result;
}

} // namespace passlens
