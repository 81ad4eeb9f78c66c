#pragma once
/// @file Limits.h
/// Resource limits on what a file may make PassLens build, checked before anything is allocated
/// (docs/RELIABILITY.md): the nesting depth of JSON files and the size of tensors whose shape
/// comes from a file ({"fill"} constants, .npy headers, TensorProto files).
#include "passlens/ir/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace passlens {

/// Deepest nesting of arrays and objects accepted in any JSON file PassLens reads (graph JSON,
/// session, pipeline and profile files). Real files stay below 20 levels; the limit keeps the
/// recursive copies and dumps of nlohmann::json far from the end of the stack.
inline constexpr int kJsonMaxDepth = 256;

/// Default of maxTensorBytes(): 4 GiB.
inline constexpr std::uint64_t kDefaultMaxTensorBytes = 4ull << 30;

/// Largest tensor, in bytes, built from a size written in a file: the environment variable
/// PASSLENS_MAX_TENSOR_BYTES (a byte count, with an optional K, M, G or T suffix of powers of
/// 1024) when set and valid, else kDefaultMaxTensorBytes. Read on each call.
std::uint64_t maxTensorBytes();

/// Bytes of a dense tensor of `dims` (all >= 0) and `dtype`, saturated at UINT64_MAX on overflow.
std::uint64_t tensorBytes(DType dtype, const std::vector<std::int64_t>& dims);

/// Throws passlens::Error("WHERE: TYPE is N bytes (X GiB), more than the limit of L bytes for
/// a tensor read from a file (PASSLENS_MAX_TENSOR_BYTES)") when tensorBytes() exceeds
/// maxTensorBytes(). `where` names the file and the place, e.g. "g.graph.json: constants[0] 'w'".
void checkTensorBytes(const std::string& where, DType dtype, const std::vector<std::int64_t>& dims);

} // namespace passlens
