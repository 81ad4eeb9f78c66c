#pragma once
/// @file Lifters.h
/// The lifter table (THEANO_SEMANTICS §1.4): for each host op kind with a GPU counterpart, a
/// function building the GPU version of a node from its (mapped) inputs. Used by GraphToGpu
/// (register_opt2), by op_lifter in the Equilibrium (register_opt) and by our backward pass.
#include "passlens/gpu/Capabilities.h"
#include "passlens/ir/FunctionGraph.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace passlens {

/// What a lifter sees: the original node, the GPU context to use, and its inputs, which in
/// GraphToGpu are the *mapped* ones (possibly on the GPU already) and in op_lifter the original
/// host ones.
struct LiftContext {
    FunctionGraph& graph;
    const Apply& node;
    std::string context;
    std::vector<Variable*> inputs;
    const GpuCapabilities& caps;
    std::string reason; ///< set by a lifter that declines
};

/// Returns the new outputs (GPU variables, or host variables for Shape/Shape_i on a GPU input),
/// one per node output; empty to decline (with ctx.reason set).
using LifterFn = std::function<std::vector<Variable*>(LiftContext&)>;

struct Lifter {
    std::string name; ///< Theano's name: local_gpua_elemwise, local_gpua_subtensor, ...
    std::string hostKind;
    std::string gpuKind; ///< the kind whose capabilities gate it ("" for Shape)
    LifterFn fn;
    std::set<std::string> tags{"fast_run", "fast_compile", "gpuarray"};
};

/// Host kind -> lifters in trial order.
const std::map<std::string, std::vector<Lifter>>& lifterTable();
/// True when `hostKind` has at least one lifter (GraphToGpu's Alloc special case asks this).
bool hasLifter(const std::string& hostKind);

/// Theano's as_gpuarray_variable (gpuarray/basic_ops.py): transfers (HostFromGpu, GpuFromHost,
/// GpuToGpu) are dug through to a value already on `context`; otherwise GpuToGpu<context> of the
/// GPU value reached, or GpuFromHost<context> of the host value reached.
Variable* asGpu(FunctionGraph& g, Variable* v, const std::string& context);
/// The host value of `v`: v itself, the input of a GpuFromHost, or HostFromGpu(v).
Variable* asHost(FunctionGraph& g, Variable* v);
/// Theano's move_to_gpu: a tensor that is not complex and not 0-d (and not a string tensor).
bool moveToGpu(const Variable* v);
/// Theano's max_inputs_to_GpuElemwise: how many inputs one GpuElemwise kernel may take within
/// the 4,096-byte kernel-argument budget (126 for 2-D, 49 for 8-D outputs with one output).
int maxInputsToGpuElemwise(int ndim, int nout = 1);

/// Runs one lifter: the capability check of its GPU kind for the node's output dtype, then the
/// lifter itself. Empty, with ctx.reason set, when either declines.
std::vector<Variable*> runLifter(const Lifter& lifter, LiftContext& ctx);

/// liftBlocker (LiftReasons.h), then runLifter for the lifters of the node's kind in order;
/// returns the first non-empty result (`usedLifter` names it) or empty with ctx.reason.
std::vector<Variable*> liftNode(LiftContext& ctx, std::string* usedLifter = nullptr);

} // namespace passlens
