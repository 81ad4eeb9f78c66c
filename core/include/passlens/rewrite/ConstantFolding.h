#pragma once
/// @file ConstantFolding.h
/// Theano's constant_folding (tensor/opt.py): a node whose inputs are all constants is replaced
/// by constants holding its value. Evaluated here, in core, for the ops that shape arithmetic and
/// weight preprocessing use (Elemwise, DimShuffle, Reshape, Flatten, Shape, Shape_i, MakeVector,
/// Subtensor, Join, CAReduce) and for transfers of constants (GpuFromHost(constant) becomes a
/// constant on the GPU, as Theano's GpuArrayConstant). Never builds a constant above 64 MiB and
/// never reads data that is not loaded (ONNX external data that was missing).
#include "passlens/rewrite/NodeRewriter.h"

#include <optional>

namespace passlens {

inline constexpr std::size_t kMaxFoldedBytes = 64u << 20; ///< 64 MiB

/// The values of `node`'s outputs when all its inputs are loaded constants and the op can be
/// evaluated here; std::nullopt otherwise (`why` says why, when given).
std::optional<std::vector<std::shared_ptr<TensorData>>> evaluateConstantNode(const Apply& node,
                                                                             std::string* why = nullptr);

/// The rewrite (tracks all nodes) under `name` ("constant_folding", "gpua_constant_folding").
NodeRewriter constantFolding(const std::string& name = "constant_folding");

} // namespace passlens
