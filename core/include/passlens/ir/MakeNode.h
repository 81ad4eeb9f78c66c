#pragma once
/// @file MakeNode.h
/// Building a node as Theano's Op.make_node does: the input conversions a Theano constructor
/// applies before its type rule (as_tensor_variable, as_gpuarray_variable, Elemwise's rank
/// padding), so that a graph written by hand from a Theano program means the same thing.
/// FunctionGraph::makeApply stays strict (rewrites build exactly what they mean); graph JSON
/// builds its nodes through makeNode.
#include "passlens/ir/FunctionGraph.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// How a literal value (a JSON number or nested list of numbers) becomes a constant.
enum class LiteralRule {
    /// theano.tensor.as_tensor_variable (tensor/basic.py constant -> scalar/basic.py convert,
    /// cast_policy 'custom', floatX float32): an int takes the smallest of int8, int16, int32,
    /// int64 that holds it (uint64 beyond), a float is float32; a list is numpy.asarray (int64,
    /// float64 when any entry is a float; an empty list float32); true / false are refused.
    AsTensorVariable,
    /// pygpu's gpuarray.asarray, which as_gpuarray_variable applies to a value: numpy.asarray
    /// dtypes (int64, float64, bool).
    NumpyAsarray,
};

/// The constant data of a literal. Throws passlens::Error naming the Theano rule for true /
/// false under as_tensor_variable, a ragged list, a list nested more than 32 levels (numpy's
/// limit), or an entry that is not a number.
std::shared_ptr<TensorData> literalTensor(const nlohmann::json& value, LiteralRule rule);

/// True when `value` is written as a literal (a number, a boolean or a list) rather than a
/// variable name.
bool isLiteral(const nlohmann::json& value);

/// One input as given to a constructor: a variable, or a literal value (JSON number / list).
struct NodeInput {
    Variable* var = nullptr;
    nlohmann::json literal; ///< used when var is null
};

/// Converts `inputs` as the Theano make_node of `op` does and returns the variables the node
/// takes (its arity and type rule are checked later, by makeApply):
/// - literals become constants: on the op's context by LiteralRule::NumpyAsarray at a GPU data
///   position, by LiteralRule::AsTensorVariable elsewhere;
/// - GPU kinds (not transfers): the context is the op's `context` attribute or Theano's
///   infer_context_name over the inputs (first GPU input, HostFromGpu source, tag "context",
///   through single-input owners; else the default context); each data input is converted as
///   as_gpuarray_variable (gpuarray/basic_ops.py): transfers are dug through to a value on the
///   context, a host value gets GpuFromHost<ctx>, a value on another context GpuToGpu<ctx>;
/// - host kinds with a type rule: a GPU input gets HostFromGpu (as_tensor_variable calls
///   GpuArrayVariable._as_TensorVariable), except where the kind takes either side (Shape);
/// - Elemwise / GpuElemwise: inputs of lower rank are left-padded with DimShuffle{x,...,0,1,...}
///   (GpuDimShuffle on the GPU), as Elemwise.get_output_info (tensor/elemwise.py).
/// Inserted nodes carry tag {"provenance": "make_node"} and are appended to `inserted` when
/// given. Throws passlens::Error for a literal that cannot be converted or a null input.
/// The conversions are asGpu / asHost of gpu/Lifters.h (asHost digs through a GpuFromHost where
/// Theano would add HostFromGpu; the transfer pair is cut later either way).
std::vector<Variable*> makeNodeInputs(FunctionGraph& g, const Op& op, const std::vector<NodeInput>& inputs,
                                      std::vector<Apply*>* inserted = nullptr);

/// makeNodeInputs, then FunctionGraph::makeApply (same errors).
Apply* makeNode(FunctionGraph& g, const Op& op, const std::vector<NodeInput>& inputs,
                std::optional<std::vector<Type>> outputTypes = std::nullopt, std::string name = {},
                std::vector<Apply*>* inserted = nullptr);

} // namespace passlens
