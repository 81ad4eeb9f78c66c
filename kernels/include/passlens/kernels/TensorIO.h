#pragma once
/// @file TensorIO.h
/// Tensors from and to files in the ONNX test-data layout (serialized onnx.TensorProto, as
/// `input_0.pb`, `output_0.pb`), and seeded random inputs by graph input type.
#include "passlens/kernels/Tensor.h"

#include <passlens/ir/Type.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace passlens {

/// Reads one serialized TensorProto (raw_data or typed fields; string_data for STRING). Throws passlens::Error naming
/// the file for an unreadable, non-regular or malformed file, an unsupported element type, a size
/// mismatch or a shape over maxTensorBytes() (checked before allocating).
Tensor readTensorProto(const std::filesystem::path& file, std::string* name = nullptr);
/// Writes a host tensor as a TensorProto with raw_data (a sequence or optional value as a
/// SequenceProto or OptionalProto of such tensors), atomically (writeFileAtomic). Throws
/// passlens::Error naming the file.
void writeTensorProto(const Tensor& tensor, const std::filesystem::path& file, const std::string& name = {});

/// A value of `type` from its file: a TensorProto for a tensor type, a SequenceProto or
/// OptionalProto (onnx-data.proto, as ONNX's test data stores them) for a sequence or optional
/// type. A UINT16 tensor for a bfloat16 type is read as the bfloat16 bits it holds (ONNX 1.12's
/// test data stores bfloat16 so). Throws passlens::Error naming the file when it does not parse
/// or holds another kind.
Tensor readValueProto(const std::filesystem::path& file, const Type& type);

/// `prefix_0.pb`, `prefix_1.pb`, ... of `dir` until the first missing index (prefix "input" or
/// "output"), file i read as `types[i]` (readValueProto; a TensorProto past the end of `types`).
/// Empty when there is none. Throws passlens::Error for a file that cannot be read.
std::vector<Tensor> readTensorDir(const std::filesystem::path& dir, const std::string& prefix,
                                  const std::vector<Type>& types = {});

/// A seeded random host tensor of `type`: floats normal(0, 1), integers uniform in [0, 10),
/// bools fair, strings the decimal text of such an integer. Unknown dims become `unknownLead` for axis 0 and
/// `unknownDim` otherwise. A sequence type gives a sequence of one such tensor, an optional type an optional holding
/// one. The same (type, seed) always gives the same tensor.
Tensor randomTensor(const Type& type, std::uint64_t seed, std::int64_t unknownLead = 1, std::int64_t unknownDim = 64);

} // namespace passlens
