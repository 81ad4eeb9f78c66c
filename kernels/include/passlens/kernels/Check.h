#pragma once
/// @file Check.h
/// Comparing the outputs of two runs (a phase against the source graph, or against reference
/// outputs).
#include "passlens/kernels/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace passlens {

class FunctionGraph;

/// The random inputs of a graph when no input files are given: `run` without --inputs (its
/// --seed), `run --check`, `report --run` and the window's Execute and Check. Input i is
/// randomTensor(type, seed * 1000 + i + 1) (TensorIO.h), so every step of a trace, whose inputs
/// keep their order and types, runs on the same values. Throws passlens::Error naming the input
/// ("input 0 'x' (complex64[3]): no random values: ...") for a type without random values or
/// one too large to allocate.
std::vector<Tensor> seededInputs(const FunctionGraph& graph, std::uint64_t seed = 0);

/// Difference of one output pair.
struct OutputDiff {
    std::size_t index = 0;
    bool shapeMatches = true; ///< same dtype class, same shape
    std::string detail;       ///< "shape [1,10] vs [1,11]" when not
    double maxAbs = 0;        ///< max |got - ref|
    /// Norm-wise relative error: maxAbs / max|ref| (max|ref| floored at 1e-30). NaN against a
    /// number, or infinities of different sign, count as +inf.
    double maxRel = 0;
};

struct CompareResult {
    std::vector<OutputDiff> outputs;
    double maxAbs = 0, maxRel = 0; ///< over every output
    bool countMatches = true;      ///< same number of outputs
    /// Every output has the same shape and maxRel <= tolerance, or maxAbs <= absTolerance.
    bool within(double tolerance, double absTolerance = 0) const;
};

/// Compares host tensors pairwise (values as doubles). Sequence and optional values compare by
/// kind and item count, then item by item (maxima over the items; `detail` names the first item
/// whose shape differs).
CompareResult compareOutputs(const std::vector<Tensor>& got, const std::vector<Tensor>& ref);

/// Element-wise check as ONNX's backend test runner does it (onnx/backend/test/runner,
/// assert_similar_outputs: same dtype, then numpy.testing.assert_allclose): every element has
/// |got - ref| <= atol + rtol * |ref|; NaN matches NaN, an infinity only the same infinity.
/// Returns "" when every output matches, else the first mismatch, e.g. "output 0: element 3:
/// 0.5 vs 0.25", "output 1: dtype int32 vs int64", "output 0: shape [2] vs [3]" or
/// "2 outputs vs 3 expected". Sequence and optional values match when their kinds and item
/// counts do and each item matches ("output 0: item 1: element 3: ...").
std::string allCloseMismatch(const std::vector<Tensor>& got, const std::vector<Tensor>& ref, double rtol, double atol);

} // namespace passlens
