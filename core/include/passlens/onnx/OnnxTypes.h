#pragma once
/// @file OnnxTypes.h
/// ONNX TensorProto element types (onnx.proto `TensorProto.DataType` numbers) to and from DType,
/// shared by the importer and, in kernels/, the tensor reader and the ONNX kernels' `to` / `dtype`
/// attributes (no protobuf header needed).
#include "passlens/ir/DType.h"

#include <optional>

namespace passlens {

/// The DType of an ONNX element type (STRING is DType::String); std::nullopt for unknown numbers.
std::optional<DType> dtypeFromOnnx(int onnxType);
/// The ONNX element type of a DType (every DType has one).
int onnxTypeOf(DType d);

} // namespace passlens
