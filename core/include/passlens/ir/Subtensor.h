#pragma once
/// @file Subtensor.h
/// Subtensor index resolution (Theano's Subtensor, NumPy basic indexing): which part of a tensor
/// an `idx` attribute (OPS.md: integers, slices {start, stop, step}, symbolic "?" entries)
/// selects. One definition for the type rule (OpRegistry), constant folding and the CPU and CUDA
/// kernels.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// A slice of an axis after Python's slice.indices(n): its first element, step and length.
struct ResolvedSlice {
    std::int64_t start = 0, step = 1, length = 0;
};

/// Python's slice(start, stop, step) over an axis of n elements: negative bounds count from the
/// end, bounds are clamped to the axis, absent ones (std::nullopt) are the ends in the step's
/// direction. `step` must not be 0.
ResolvedSlice resolveSlice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                           std::optional<std::int64_t> step, std::int64_t n);

/// The part of a dense row-major tensor a Subtensor selects: the element offset of its first
/// element, its dims and the stride (in elements of the tensor) of each.
struct SubtensorRegion {
    std::int64_t base = 0;
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> strides;
    /// True when the region is one contiguous block (a view of it needs no copy).
    bool contiguous() const;
};

/// Resolves the Subtensor `idx` over a tensor of shape `shape`; the symbolic entries ("?") take
/// their values from `nextSymbolic()`, in order. Axes past `idx` are kept whole. Throws
/// passlens::Error naming `what` (the tensor's type): "has 3 indices for float32[2,2]",
/// "index 5 out of bounds for axis 0 of float32[3]", "slice step cannot be 0".
SubtensorRegion resolveSubtensor(const nlohmann::json& idx, const std::vector<std::int64_t>& shape,
                                 const std::function<std::int64_t()>& nextSymbolic, const std::string& what);

} // namespace passlens
