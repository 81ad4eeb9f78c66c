#pragma once
/// @file ScalarOps.h
/// The one table of Elemwise scalar ops (theano/scalar/basic.py): Theano name, arity, result
/// type rule, attribute parameters with their defaults, and the reference evaluator constant
/// folding uses; and the typed scalar expression (`ScalarExpr`) a fused Elemwise carries. OpRegistry (attribute check,
/// type rule, display string), constant folding, GPU fusion and the CPU and CUDA element-wise engines read it; the
/// arithmetic shared with device code is ScalarArith.h.
#include "passlens/ir/DType.h"
#include "passlens/ir/ScalarArith.h"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

class Op;

/// A numeric parameter of a scalar op, held by the Elemwise op as attribute `attr`.
struct ScalarParam {
    const char* attr = nullptr;
    double dflt = 0; ///< the value when the attribute is absent
};

/// Whether an op over float16 values (ONNX's float16 tensors) may be computed in float32 with its
/// result rounded to float16 (round to nearest even), as the CPU engine computes float16: only
/// where that is the float16 result bit for bit. bfloat16, whose narrowing truncates, is computed
/// so for the Exact ops only.
enum class Float16Rule : std::uint8_t {
    Refused, ///< rounding the float32 result may differ from float16 arithmetic (exp, pow, mod, ...)
    Exact,   ///< the result needs no rounding, or rounding commutes with the op (maximum, neg, floor, clip, cast)
    /// Correctly rounded for one or two arguments (add, sub, mul, true_div, sqrt): float32's 24
    /// significand bits are 2 * 11 + 2, so rounding to float32 then to float16 is rounding once.
    Pair,
};

/// One row of the scalar-op table.
struct ScalarOpInfo {
    ScalarOp op = ScalarOp::Input;
    std::string_view name; ///< Theano's name: "add", "true_div", "leaky_relu"
    int arity = 1;         ///< number of inputs; -1: one or more (add, mul, maximum, minimum)
    /// Theano's upgrade_to_float output type (exp, log, true_div, ...): an integer result type
    /// becomes a float (upgradeToFloat).
    bool floatResult = false;
    int nparams = 0;                   ///< 0, 1 or 2 numeric parameters
    std::array<ScalarParam, 2> params; ///< clip min / max, leaky_relu alpha, hard_sigmoid alpha / beta
    /// The display string shows the parameters (`Elemwise{clip{0.0,6.0}}`); hard_sigmoid's does
    /// not (Theano prints its class name only).
    bool displayParams = false;
    Float16Rule float16 = Float16Rule::Refused; ///< float16 computed in float32 (Float16Rule)
};

/// Every scalar op but Input, in ScalarOp order.
std::span<const ScalarOpInfo> scalarOpTable();
/// The row of `op` (Input has an empty name and arity 0).
const ScalarOpInfo& scalarOpInfo(ScalarOp op);
/// The row named `name`, or nullptr for a name that is not a scalar op ("composite" is not one:
/// it is an Elemwise holding an expression).
const ScalarOpInfo* findScalarOp(std::string_view name);

/// Theano's upgrade_to_float: floats and complex stay; bool, int8 / uint8, int16 / uint16 become
/// float32 (floatX); wider integers float64.
DType upgradeToFloat(DType d);
/// The result dtype of `op` (not Cast, whose dtype is its parameter) over arguments of dtypes
/// `args` (Theano's elemwise type rule per scalar): bool for comparisons and logical ops, else
/// the upcast of the arguments (switch: of its 2nd and 3rd), made a float for float functions.
/// `args` must not be empty.
DType scalarResultType(ScalarOp op, std::span<const DType> args);

/// The numeric parameters of a scalar op, exactly as the op's attributes give them.
struct ScalarParams {
    double p0 = 0, p1 = 0;
};
/// The parameters of `info`'s op held by the Elemwise `op` (its attributes, else the defaults).
ScalarParams scalarParamsOf(const Op& op, const ScalarOpInfo& info);

/// Whether an integer op over arguments of dtypes `args` computes on uint64 values rather than
/// int64 ones: some argument is uint64 and none is a signed integer (bool and the unsigned
/// types are exact as uint64). NumPy's uint64 semantics: floor division, modulo, comparisons,
/// maximum of values at or above 2^63. The CPU engine's integer mode and constant folding
/// (through evalScalarReference's outDtype) read it.
bool computesInUInt64(std::span<const DType> args);

/// The reference evaluator (constant folding): `op` applied to `args` in long double, which holds
/// every int64, uint64 and float64 exactly; Identity / Cast truncate toward zero when `outDtype`
/// is an integer type. An integer `outDtype` computes add, sub, mul, neg, abs, sqr, pow,
/// int_div and mod in 64-bit integers as the CPU engine's integer mode does (wrapping; on uint64
/// values when `outDtype` is uint64, see computesInUInt64), so args must then be integers. The
/// caller rounds the value to the output dtype. std::nullopt when the arity is not the op's or
/// for an integer division or modulo by zero.
std::optional<long double> evalScalarReference(ScalarOp op, const ScalarParams& params,
                                               std::span<const long double> args, DType outDtype);

/// One node of a scalar expression: an op over earlier nodes, or the input placeholder `iK`.
struct ScalarNode {
    ScalarOp op = ScalarOp::Input;
    int input = -1;                ///< Input: the input index K
    std::vector<int> args;         ///< indices of earlier nodes
    DType castTo = DType::Float32; ///< Cast: the target dtype
    /// The op's parameters (ScalarOpInfo::params): clip min / max, leaky_relu alpha,
    /// hard_sigmoid alpha / beta.
    double p0 = 0, p1 = 0;
};

/// A scalar expression over inputs i0, i1, ... (the `expr` of a fused GpuElemwise{composite}):
/// nodes in evaluation order, each after its arguments, the root last; a tree, as its prefix
/// text `add(i0,mul(i1,i2))` parses. Types are not part of it: they follow from the input dtypes
/// (scalarResultType per node).
struct ScalarExpr {
    std::vector<ScalarNode> nodes;

    /// Parses the prefix text (`cast{float32}(i0)`, `clip{0,6}(i0)`: parameters in braces,
    /// missing ones take the table's defaults). Throws passlens::Error("bad expression '...' at
    /// offset N: why") on an unknown op, a wrong number of arguments, a bad number or dtype.
    static ScalarExpr parse(std::string_view text);
    /// The expression `iK`.
    static ScalarExpr input(int k);
    /// The prefix text; parameters printed with 9 significant digits (`%.9g`, so `-inf`, `inf`).
    std::string str() const;
    /// 1 + the largest input index (0 without inputs).
    int numInputs() const;
    /// This expression with every input `iK` replaced by `parts[K]` (a tree again: a part used
    /// twice is copied). Throws passlens::Error when K >= parts.size().
    ScalarExpr withInputs(const std::vector<ScalarExpr>& parts) const;
};

/// The typed expression of an Elemwise / GpuElemwise{composite} `op`: its `expr` attribute, which
/// Op::get checks, parsed once per interned op (ops live as long as the program); nullptr for any
/// other op.
const ScalarExpr* compositeExpression(const Op& op);
/// The expression of an Elemwise / GpuElemwise `op` over `nin` inputs: a composite's
/// compositeExpression, else the op over i0 .. i{nin-1}, its parameters rounded to the 9
/// significant digits of the expression text, so that an Elemwise and the composite it is fused
/// into compute with the same values.
ScalarExpr elemwiseExpression(const Op& op, int nin);

} // namespace passlens
