// The scalar-op table (see ScalarOps.h).
#include "passlens/ir/ScalarOps.h"

#include "passlens/ir/Op.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace passlens {

namespace {

using S = ScalarOp;
constexpr ScalarParam kNoParam{};

// One row per ScalarOp value after Input, in enum order (checked below).
constexpr ScalarOpInfo kTable[] = {
    {S::Add, "add", -1},
    {S::Sub, "sub", 2},
    {S::Mul, "mul", -1},
    {S::TrueDiv, "true_div", 2, true},
    {S::IntDiv, "int_div", 2},
    {S::Mod, "mod", 2},
    {S::Neg, "neg", 1},
    {S::Abs, "abs", 1},
    {S::Exp, "exp", 1, true},
    {S::Log, "log", 1, true},
    {S::Sqrt, "sqrt", 1, true},
    {S::Sqr, "sqr", 1},
    {S::Pow, "pow", 2},
    {S::Maximum, "maximum", -1},
    {S::Minimum, "minimum", -1},
    {S::Tanh, "tanh", 1, true},
    {S::Sigmoid, "sigmoid", 1, true},
    {S::Relu, "relu", 1},
    {S::Erf, "erf", 1, true},
    {S::Sin, "sin", 1, true},
    {S::Cos, "cos", 1, true},
    {S::Floor, "floor", 1},
    {S::Ceil, "ceil", 1},
    {S::Round, "round", 1},
    {S::Sgn, "sgn", 1},
    {S::Lt, "lt", 2},
    {S::Gt, "gt", 2},
    {S::Le, "le", 2},
    {S::Ge, "ge", 2},
    {S::Eq, "eq", 2},
    {S::Neq, "neq", 2},
    {S::And, "and", 2},
    {S::Or, "or", 2},
    {S::Not, "not", 1},
    {S::Switch, "switch", 3},
    {S::Identity, "identity", 1},
    {S::Cast, "cast", 1},
    {S::Clip, "clip", 1, false, 2, {ScalarParam{"min", -INFINITY}, ScalarParam{"max", INFINITY}}, true},
    {S::LeakyRelu, "leaky_relu", 1, false, 1, {ScalarParam{"alpha", 0.01}, kNoParam}, true},
    {S::HardSigmoid, "hard_sigmoid", 1, true, 2, {ScalarParam{"alpha", 0.2}, ScalarParam{"beta", 0.5}}},
    {S::Reciprocal, "reciprocal", 1, true},
};

constexpr bool tableInEnumOrder() {
    for (std::size_t i = 0; i < std::size(kTable); ++i)
        if (static_cast<std::size_t>(kTable[i].op) != i + 1) return false;
    return static_cast<std::size_t>(S::Reciprocal) == std::size(kTable);
}
static_assert(tableInEnumOrder(), "kTable has one row per ScalarOp after Input, in enum order");

constexpr ScalarOpInfo kInputRow{S::Input, "", 0};

} // namespace

std::span<const ScalarOpInfo> scalarOpTable() { return kTable; }

const ScalarOpInfo& scalarOpInfo(ScalarOp op) {
    return op == S::Input ? kInputRow : kTable[static_cast<std::size_t>(op) - 1];
}

const ScalarOpInfo* findScalarOp(std::string_view name) {
    for (const ScalarOpInfo& r : kTable)
        if (r.name == name) return &r;
    return nullptr;
}

DType upgradeToFloat(DType d) {
    if (isFloat(d) || isComplex(d)) return d;
    if (d == DType::Int8 || d == DType::UInt8 || d == DType::Int16 || d == DType::UInt16 || d == DType::Bool)
        return DType::Float32;
    return DType::Float64;
}

DType scalarResultType(ScalarOp op, std::span<const DType> args) {
    if (isCompareOp(op)) return DType::Bool;
    const std::size_t first = op == S::Switch ? 1 : 0;
    DType d = args[first];
    for (std::size_t i = first + 1; i < args.size(); ++i) d = upcast(d, args[i]);
    return scalarOpInfo(op).floatResult ? upgradeToFloat(d) : d;
}

ScalarParams scalarParamsOf(const Op& op, const ScalarOpInfo& info) {
    ScalarParams p;
    if (info.nparams > 0) p.p0 = op.floatAttr(info.params[0].attr, info.params[0].dflt);
    if (info.nparams > 1) p.p1 = op.floatAttr(info.params[1].attr, info.params[1].dflt);
    return p;
}

std::optional<long double> evalScalarReference(ScalarOp op, const ScalarParams& p, std::span<const long double> a,
                                               DType outDtype) {
    using LD = long double;
    switch (a.size()) {
    case 1: {
        const LD x = a[0];
        switch (op) {
        case S::Neg: return -x;
        case S::Abs: return std::fabs(x);
        case S::Exp: return std::exp(x);
        case S::Log: return std::log(x);
        case S::Sqrt: return std::sqrt(x);
        case S::Sqr: return x * x;
        case S::Tanh: return std::tanh(x);
        case S::Sigmoid: return 1 / (1 + std::exp(-x));
        case S::Relu: return reluOf(x);
        case S::Erf: return std::erf(x);
        case S::Sin: return std::sin(x);
        case S::Cos: return std::cos(x);
        case S::Floor: return std::floor(x);
        case S::Ceil: return std::ceil(x);
        case S::Round: return std::nearbyint(x); // default rounding mode: to nearest, ties to even
        case S::Sgn: return static_cast<LD>((x > 0) - (x < 0));
        case S::Not: return x == 0 ? 1 : 0;
        case S::Identity:
        case S::Cast: return isInteger(outDtype) && !std::isnan(x) ? std::trunc(x) : x;
        case S::Clip: return clipOf<LD>(x, p.p0, p.p1);
        case S::LeakyRelu: return leakyReluOf<LD>(x, p.p0);
        case S::HardSigmoid: return hardSigmoidOf<LD>(x, p.p0, p.p1);
        case S::Reciprocal: return 1 / x;
        case S::Add:
        case S::Mul:
        case S::Maximum:
        case S::Minimum: return x;
        default: return std::nullopt;
        }
    }
    case 2: {
        const LD x = a[0], y = a[1];
        switch (op) {
        case S::Sub: return x - y;
        case S::TrueDiv: return x / y;
        case S::IntDiv: return y == 0 ? std::optional<LD>() : std::optional<LD>(floorDiv(x, y));
        case S::Mod: return y == 0 ? std::optional<LD>() : std::optional<LD>(pyMod(x, y));
        case S::Pow: return std::pow(x, y);
        case S::Lt: return x < y;
        case S::Gt: return x > y;
        case S::Le: return x <= y;
        case S::Ge: return x >= y;
        case S::Eq: return x == y;
        case S::Neq: return x != y;
        case S::And: return (x != 0) && (y != 0);
        case S::Or: return (x != 0) || (y != 0);
        default: break;
        }
        break;
    }
    case 3:
        if (op == S::Switch) return a[0] != 0 ? a[1] : a[2];
        break;
    default: break;
    }
    switch (op) {
    case S::Add: return std::accumulate(a.begin(), a.end(), LD(0));
    case S::Mul: return std::accumulate(a.begin(), a.end(), LD(1), std::multiplies<>());
    case S::Maximum: return *std::max_element(a.begin(), a.end());
    case S::Minimum: return *std::min_element(a.begin(), a.end());
    default: return std::nullopt;
    }
}

} // namespace passlens
