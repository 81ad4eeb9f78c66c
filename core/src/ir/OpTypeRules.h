#pragma once
// Type rules of the op kinds of OPS.md (Theano's make_node output types), named per kind by the
// registry's table in OpRegistry.cpp. Each reads the op and its input variables and throws
// passlens::Error naming the op and the reason ("Reshape{2}: input 1 must have 1 dimensions, ...").
#include "passlens/ir/OpRegistry.h"

#include <set>
#include <span>
#include <vector>

namespace passlens::opkinds {

using Vars = std::span<Variable* const>;

// Shape rules, written for the host kind; hostRule / gpuRule add the location checks.
std::vector<Type> elemwiseRule(const Op& op, Vars in);
std::vector<Type> dimShuffleRule(const Op& op, Vars in);
std::vector<Type> reshapeRule(const Op& op, Vars in);
std::vector<Type> flattenRule(const Op& op, Vars in);
std::vector<Type> shapeRule(const Op& op, Vars in);
std::vector<Type> shapeIRule(const Op& op, Vars in);
std::vector<Type> makeVectorRule(const Op& op, Vars in);
std::vector<Type> allocRule(const Op& op, Vars in);
std::vector<Type> allocEmptyRule(const Op& op, Vars in);
std::vector<Type> subtensorRule(const Op& op, Vars in);
std::vector<Type> advSub1Rule(const Op& op, Vars in);
std::vector<Type> incSubtensorRule(const Op& op, Vars in);
std::vector<Type> joinRule(const Op& op, Vars in);
std::vector<Type> splitRule(const Op& op, Vars in);
std::vector<Type> careduceRule(const Op& op, Vars in);
/// MaxAndArgmax: the max (x's dtype) and its int64 index over the `axis` list (null: all axes),
/// both with x's dims less the reduced ones (theano/tensor/basic.py MaxAndArgmax.make_node).
std::vector<Type> maxAndArgmaxRule(const Op& op, Vars in);
std::vector<Type> dotRule(const Op& op, Vars in);
std::vector<Type> dot22Rule(const Op& op, Vars in);
std::vector<Type> gemmRule(const Op& op, Vars in);
std::vector<Type> gemvRule(const Op& op, Vars in);
std::vector<Type> batchedDotRule(const Op& op, Vars in);
/// Input 0's type; its location is the wrapper's (BatchNormInference, CpuContiguous).
std::vector<Type> sameAsInput0(const Op& op, Vars in);
/// Input 0's type and location: Assert passes x through wherever it lives (Theano lifts it onto
/// the GPU input).
std::vector<Type> assertRule(const Op& op, Vars in);
std::vector<Type> softmaxRule(const Op& op, Vars in);
std::vector<Type> convRule(const Op& op, Vars in);
std::vector<Type> poolRule(const Op& op, Vars in);
std::vector<Type> cumRule(const Op& op, Vars in);
/// TopKOp: values (x's dtype) and / or indices (idx_dtype), |k| along `axis` (unknown when k is
/// not a known scalar); x of rank >= 1, k an integer scalar no larger than the axis.
std::vector<Type> topKRule(const Op& op, Vars in);

/// A host kind's rule: every input on the host, except those in `anyLocation` (Shape of a GPU
/// value); the outputs on the host.
TypeRule hostRule(TypeRule r, std::set<int> anyLocation = {});
/// A GPU kind's rule: data inputs on one GPU context (the op's `context` attribute, if any),
/// `hostParams` inputs on the host; the outputs on that context.
TypeRule gpuRule(TypeRule r, HostParams hostParams = {});

/// The transfers (gpuarray/basic_ops.py): HostFromGpu needs a GPU input, GpuFromHost a host one,
/// GpuToGpu a GPU one; the output moves to the host or to the `context` attribute's GPU.
std::vector<Type> hostFromGpuRule(const Op& op, Vars in);
std::vector<Type> gpuFromHostRule(const Op& op, Vars in);
std::vector<Type> gpuToGpuRule(const Op& op, Vars in);

} // namespace passlens::opkinds
