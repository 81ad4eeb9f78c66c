#pragma once
/// @file LiftReasons.h
/// Why a node is, or is not, on the GPU: the one wording of the reasons that GraphToGpu, the
/// lifter table (liftNode) and the lifting report give (THEANO_SEMANTICS §1.4), and the report
/// itself (`optimize --json` "lifting", the session's `lifting`, the window's Inspector).
#include "passlens/gpu/Capabilities.h"
#include "passlens/ir/FunctionGraph.h"
#include "passlens/rewrite/RewriteEngine.h"

#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// "no GPU lifter for KIND".
std::string noLifterReason(const std::string& kind);
/// "complex input" when an input of `node` is complex (Theano moves no complex value); "string
/// value: string tensors stay on the host" when an input or output is a string tensor (ONNX's
/// STRING has no GPU form).
std::optional<std::string> complexInputReason(const Apply& node);
/// Why no lifter can move `node` wherever its inputs are: no lifter for its kind, else a complex
/// input or a string value; nullopt when lifters may be tried.
std::optional<std::string> liftBlocker(const Apply& node);

/// GraphToGpu's reason for a node it does not try to lift: "already a GPU op" for a GPU op or a
/// transfer, else "no input on the GPU".
std::string notMovedReason(const Op& op);
/// GraphToGpu's Alloc special case (the `theano` pipeline): "Alloc special case: client OP has a
/// lifter".
std::string allocSpecialCaseReason(const Op& client);
/// GraphToGpu's dtype guard (Theano: "The optimization %s returned bad dtype. Skipping it."):
/// "the lifter NAME returned bad dtype; skipped".
std::string badDtypeReason(const std::string& lifter);

/// One node of the lifting report.
struct LiftingEntry {
    NodeId node = -1;
    std::string op;
    bool lifted = false;
    std::string reason; ///< "on the GPU" when lifted, else why it stayed on the host
};

/// The lifting report of a graph: every host node (not a transfer) with the reason it is on the
/// host, every GPU node marked lifted. `graphToGpu`: the decisions of the pipeline's GraphToGpu
/// pass, whose reasons explain the nodes it saw and left on the host.
std::vector<LiftingEntry> liftingReport(const FunctionGraph& graph, const GpuCapabilities& caps,
                                        const std::vector<LiftDecision>& graphToGpu = {});

} // namespace passlens
