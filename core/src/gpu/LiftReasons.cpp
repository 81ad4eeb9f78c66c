#include "passlens/gpu/LiftReasons.h"

#include "passlens/gpu/Lifters.h"
#include "passlens/ir/OpRegistry.h"

#include <algorithm>
#include <map>

namespace passlens {

std::string noLifterReason(const std::string& kind) { return "no GPU lifter for " + kind; }

std::optional<std::string> complexInputReason(const Apply& node) {
    for (const Variable* in : node.inputs())
        if (isComplex(in->type().dtype())) return "complex input";
    const auto string = [](const Variable* v) { return v && isString(v->type().dtype()); };
    if (std::any_of(node.inputs().begin(), node.inputs().end(), string) ||
        std::any_of(node.outputs().begin(), node.outputs().end(), string))
        return "string value: string tensors stay on the host";
    return std::nullopt;
}

std::string notMovedReason(const Op& op) {
    return op.isGpu() || op.isTransfer() ? "already a GPU op" : "no input on the GPU";
}

std::string allocSpecialCaseReason(const Op& client) {
    return "Alloc special case: client " + client.str() + " has a lifter";
}

std::string badDtypeReason(const std::string& lifter) {
    return "the lifter " + lifter + " returned bad dtype; skipped";
}

std::optional<std::string> liftBlocker(const Apply& node) {
    if (!hasLifter(node.op().kind())) return noLifterReason(node.op().kind());
    return complexInputReason(node);
}

std::vector<LiftingEntry> liftingReport(const FunctionGraph& graph, const GpuCapabilities& caps,
                                        const std::vector<LiftDecision>& decisions) {
    // The last decision per node id (decisions name nodes of this graph: ids below its limit).
    std::vector<const LiftDecision*> byId(static_cast<std::size_t>(graph.nodeIdLimit()), nullptr);
    for (const auto& d : decisions)
        if (d.node >= 0 && d.node < graph.nodeIdLimit()) byId[static_cast<std::size_t>(d.node)] = &d;
    std::vector<LiftingEntry> out;
    out.reserve(graph.toposort().size());
    for (const Apply* n : graph.toposort()) {
        const Op& op = n->op();
        if (op.isTransfer()) continue;
        LiftingEntry e{n->id(), op.str(), false, ""};
        bool gpuOut = false;
        for (const Variable* o : n->outputs()) gpuOut |= o->type().isGpu();
        if (op.isGpu() || gpuOut) {
            e.lifted = true;
            e.reason = "on the GPU";
            out.push_back(e);
            continue;
        }
        const std::string& k = op.kind();
        bool allScalar = true, gpuIn = false;
        for (const Variable* v : n->inputs()) gpuIn |= v->type().isGpu();
        for (const Variable* v : n->outputs()) allScalar &= v->type().rankKnown() && v->type().ndim() == 0;
        const LiftDecision* decision = byId[static_cast<std::size_t>(n->id())];
        if (op.isOnnx())
            e.reason = noLifterReason(k);
        else if (k == "Shape" || k == "Shape_i")
            e.reason = gpuIn ? "reads the GPU variable's shape on the host" : "shape of a host tensor";
        else if (k == "MakeVector")
            e.reason = "no GPU lifter for MakeVector (shape arithmetic stays on the host)";
        else if (auto why = liftBlocker(*n))
            e.reason = *why;
        else if (allScalar && n->nin() > 0)
            e.reason = "0-d tensors stay on the host";
        else {
            const std::string& gk = op.info().gpuCounterpart;
            if (!gk.empty())
                if (auto why = caps.check(gk, n->output()->type().dtype())) e.reason = *why;
            if (e.reason.empty() && decision && !decision->reason.empty()) e.reason = decision->reason;
            if (e.reason.empty()) e.reason = "no input on the GPU and not every client is a GpuFromHost";
        }
        out.push_back(e);
    }
    return out;
}

} // namespace passlens
