#pragma once
/// @file UselessRewrites.h
/// Theano's register_useless rewrites (tensor/opt.py) that only remove nodes, plus
/// local_add_mul_fusion (flattening chains of add / mul).
#include "passlens/rewrite/NodeRewriter.h"

#include <vector>

namespace passlens {

/// local_useless_alloc: Alloc whose output type equals its value's type -> the value.
NodeRewriter localUselessAlloc();
/// local_merge_alloc: Alloc(Alloc(v, s...), t...) -> Alloc(v, t'...), where each outer dim that
/// is not the inner one (same variable or value) nor over an inner constant 1 becomes
/// Assert(t, eq(t, s)), as Theano's.
NodeRewriter localMergeAlloc();
/// local_join_1: Join of one tensor -> the tensor (and GpuJoin: local_gpua_join_1).
NodeRewriter localJoin1(const std::string& kind = "Join", const std::string& name = "local_join_1");
/// local_useless_reshape: Reshape to the input's own static shape, of a rank-1 input to rank 1,
/// to Shape(x), or to MakeVector(Shape_i{0}(x), ..., -1 once, static dims) -> the input.
NodeRewriter localUselessReshape();
/// local_useless_elemwise: identity, a cast to the same dtype, single-input add/mul/max/min -> the input;
/// on the host Elemwise, eq(x, x) / neq(x, x) -> ones / zeros of x's shape (Theano's ones_like after
/// local_fill_to_alloc: Alloc(1, Shape_i{0}(x), ...), the constant for a 0-d x).
NodeRewriter localUselessElemwise(const std::string& kind = "Elemwise",
                                  const std::string& name = "local_useless_elemwise");
/// local_useless_split: Split into one piece -> the input.
NodeRewriter localUselessSplit();
/// local_add_mul_fusion: add(add(a, b), c) -> add(a, b, c) (and mul) when the inner node has no
/// other client and the same output type.
NodeRewriter localAddMulFusion(const std::string& kind = "Elemwise", const std::string& name = "local_add_mul_fusion");

/// All `useless` rewrites above (the `useless` phase at 0.6 runs them in2out with apply_all_opts).
std::vector<NodeRewriter> uselessRewrites();

} // namespace passlens
