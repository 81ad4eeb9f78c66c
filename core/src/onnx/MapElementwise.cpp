// ONNX element-wise ops to Theano Elemwise nodes (OPS.md "Import rules"): arithmetic,
// comparisons, logic, activations (Elu, Selu, Softplus, HardSwish, PRelu as small Elemwise graphs),
// BitShift by a constant, Cast, Clip, Where, and Identity / inference Dropout.
#include "NodeMapper.h"

#include "passlens/ir/OpRegistry.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace passlens::onnximport {
namespace {

// Binary element-wise ops: ONNX op type -> Theano scalar op.
std::vector<Variable*> mapBinary(NodeMapper& m, const std::string& scalar) {
    const std::string& t = m.node.op_type();
    m.need(2);
    if (t == "Mod" && m.intAttr("fmod", 0)) return {};
    Variable* out = m.elem(scalar, {m.in[0], m.in[1]});
    if (t == "Pow" && out->type().dtype() != m.in[0]->type().dtype())
        out = m.elem("cast", {out}, {{"dtype", std::string(dtypeName(m.in[0]->type().dtype()))}});
    return {out};
}

std::vector<Variable*> mapUnary(NodeMapper& m, const std::string& scalar) {
    m.need(1);
    return {m.elem(scalar, {m.in[0]})};
}

std::vector<Variable*> mapDiv(NodeMapper& m) {
    m.need(2);
    const bool ints = isInteger(m.in[0]->type().dtype());
    return {m.elem(ints ? "int_div" : "true_div", {m.in[0], m.in[1]})};
}

// Max, Min and Sum of any number of inputs
std::vector<Variable*> mapVariadic(NodeMapper& m) {
    const std::string& t = m.node.op_type();
    m.need(m.in.size() ? m.in.size() : 1);
    std::vector<Variable*> ins(m.in.begin(), m.in.end());
    return {m.elem(t == "Max" ? "maximum" : t == "Min" ? "minimum" : "add", ins)};
}

std::vector<Variable*> mapReciprocal(NodeMapper& m) {
    m.need(1);
    return {m.elem("true_div", {m.constScalar(m.in[0]->type().dtype(), 1.0), m.in[0]})};
}

std::vector<Variable*> mapWhere(NodeMapper& m) {
    m.need(3);
    return {m.elem("switch", {m.in[0], m.in[1], m.in[2]})};
}

// BitShift of an unsigned x by a constant y: x * k (LEFT) or x // k (RIGHT), k = 2**y a constant
// of x's dtype (uint64's 2**63 from its bit pattern), 0 where y is at least the bit width
// (NumPy's shifts give 0 there, int_div by 0 gives 0). Exact: the engines and constant folding
// wrap as the unsigned shift does (uint64 on uint64 values, computesInUInt64). A computed y
// stays OnnxBitShift (core/README.md says why).
std::vector<Variable*> mapBitShift(NodeMapper& m) {
    m.need(2);
    const std::string dir = m.stringAttr("direction", "");
    if (dir != "LEFT" && dir != "RIGHT") m.fail("attribute 'direction' is '" + dir + "', not LEFT or RIGHT");
    const DType dt = m.in[0]->type().dtype();
    const auto y = m.constInts(m.in[1]);
    if (!isUnsigned(dt) || m.in[1]->type().dtype() != dt || !y) return {};
    const auto bits = static_cast<std::int64_t>(8 * dtypeSize(dt));
    std::vector<std::int64_t> k;
    for (auto s : *y) k.push_back(s < bits ? std::int64_t(1) << s : 0);
    Variable* kc = m.g.addConstant(TensorData::fromInts(dt, m.in[1]->type().dims(), k));
    return {m.elem(dir == "LEFT" ? "mul" : "int_div", {m.in[0], kc})};
}

std::vector<Variable*> mapIdentity(NodeMapper& m) {
    m.need(1);
    return {m.in[0]};
}

// Dropout is the identity in inference: no training_mode input, or a constant false one
std::vector<Variable*> mapDropout(NodeMapper& m) {
    if (m.node.output_size() != 1) return {};
    const auto inferenceDropout = [&] {
        if (m.in.size() < 3 || !m.in[2]) return true;
        const auto training = m.constInts(m.in[2]);
        return training && std::all_of(training->begin(), training->end(), [](auto v) { return v == 0; });
    };
    if (!inferenceDropout()) return {};
    return mapIdentity(m);
}

std::vector<Variable*> mapCast(NodeMapper& m) {
    m.need(1);
    if (m.opset < 6) return {}; // Cast-1 names the type as a string
    if (!m.attr("to", onnx::AttributeProto::INT)) m.fail("attribute 'to' is required");
    auto dt = dtypeOf(static_cast<int>(m.intAttr("to", 0)));
    if (!dt) return {};
    if (isString(*dt) || isString(m.in[0]->type().dtype())) return {}; // Theano has no strings: OnnxCast
    if (*dt == m.in[0]->type().dtype()) return {m.in[0]};
    return {m.elem("cast", {m.in[0]}, {{"dtype", std::string(dtypeName(*dt))}})};
}

// An integer Clip (opset 11 on, bounds of x's dtype) as minimum(maximum(x, min), max) over the
// bound inputs themselves, as np.clip computes it: the `clip` scalar op holds its bounds as
// doubles, which would round int64 / uint64 bounds beyond 2^53. nullopt (OnnxClip) for a bound
// that is not one element of at most x's rank.
std::optional<std::vector<Variable*>> integerClip(NodeMapper& m) {
    Variable* x = m.in[0];
    if (m.opset < 11 || !isInteger(x->type().dtype()) || !x->type().rankKnown()) return std::nullopt;
    for (std::size_t k : {1, 2}) {
        const Variable* b = m.input(k);
        if (!b) continue;
        const Type& t = b->type();
        if (t.dtype() != x->type().dtype() || !t.isStatic() || t.numElements() != 1 || t.ndim() > x->type().ndim())
            return std::nullopt;
    }
    if (m.input(1)) x = m.elem("maximum", {x, m.input(1)});
    if (m.input(2)) x = m.elem("minimum", {x, m.input(2)});
    return std::vector<Variable*>{x};
}

std::vector<Variable*> mapClip(NodeMapper& m) {
    m.need(1);
    if (isInteger(m.in[0]->type().dtype())) return integerClip(m).value_or(std::vector<Variable*>{});
    std::optional<double> lo, hi;
    if (m.opset < 11) {
        lo = m.floatAttr("min", -3.4028234663852886e38f);
        hi = m.floatAttr("max", 3.4028234663852886e38f);
    } else {
        if (m.input(1)) {
            lo = m.constScalarValue(m.input(1));
            if (!lo) return {};
        }
        if (m.input(2)) {
            hi = m.constScalarValue(m.input(2));
            if (!hi) return {};
        }
    }
    json a = json::object();
    if (lo) a["min"] = *lo;
    if (hi) a["max"] = *hi;
    return {m.elem("clip", {m.in[0]}, a)};
}

std::vector<Variable*> mapLeakyRelu(NodeMapper& m) {
    m.need(1);
    return {m.elem("leaky_relu", {m.in[0]}, {{"alpha", m.floatAttr("alpha", 0.01f)}})};
}

std::vector<Variable*> mapHardSigmoid(NodeMapper& m) {
    m.need(1);
    return {m.elem("hard_sigmoid", {m.in[0]},
                   {{"alpha", m.floatAttr("alpha", 0.2f)}, {"beta", m.floatAttr("beta", 0.5f)}})};
}

// Activations with no Theano scalar op of their own, as the small Elemwise graphs Theano's
// nnet module builds (elu, selu, softplus: theano/tensor/nnet/nnet.py), with constants of the
// input's dtype so that nothing is upcast. Floats only, as the ONNX schemas declare.
Variable* elu(NodeMapper& m, Variable* x, double alpha) { // x > 0 ? x : alpha * (exp(x) - 1)
    const DType dt = x->type().dtype();
    Variable* neg =
        m.elem("mul", {m.constScalar(dt, alpha), m.elem("sub", {m.elem("exp", {x}), m.constScalar(dt, 1)})});
    return m.elem("switch", {m.elem("gt", {x, m.constScalar(dt, 0)}), x, neg});
}

bool floatInput(NodeMapper& m) { return isFloat(m.in[0]->type().dtype()); }

std::vector<Variable*> mapElu(NodeMapper& m) {
    m.need(1);
    if (!floatInput(m)) return {};
    return {elu(m, m.in[0], m.floatAttr("alpha", 1.0f))};
}

std::vector<Variable*> mapSelu(NodeMapper& m) {
    m.need(1);
    if (!floatInput(m)) return {};
    const DType dt = m.in[0]->type().dtype();
    const double alpha = m.floatAttr("alpha", 1.67326319217681884765625f);
    const double gamma = m.floatAttr("gamma", 1.05070102214813232421875f);
    return {m.elem("mul", {m.constScalar(dt, gamma), elu(m, m.in[0], alpha)})};
}

std::vector<Variable*> mapSoftplus(NodeMapper& m) { // log(exp(x) + 1), as ONNX's reference
    m.need(1);
    if (!floatInput(m)) return {};
    const DType dt = m.in[0]->type().dtype();
    return {m.elem("log", {m.elem("add", {m.elem("exp", {m.in[0]}), m.constScalar(dt, 1)})})};
}

std::vector<Variable*> mapHardSwish(NodeMapper& m) { // x * hard_sigmoid(x; 1/6, 1/2)
    m.need(1);
    if (!floatInput(m)) return {};
    return {m.elem("mul", {m.in[0], m.elem("hard_sigmoid", {m.in[0]}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}})})};
}

// x < 0 ? slope * x : x, the slope broadcast to x from the trailing axes (opset 7 on; before,
// a slope of shape [C] applied per channel, which is left to OnnxPRelu)
std::vector<Variable*> mapPRelu(NodeMapper& m) {
    m.need(2);
    if (m.opset < 7 || !floatInput(m) || m.in[1]->type().dtype() != m.in[0]->type().dtype()) return {};
    if (!m.in[1]->type().rankKnown() || !m.in[0]->type().rankKnown() || m.in[1]->type().ndim() > m.in[0]->type().ndim())
        return {};
    Variable* x = m.in[0];
    const DType dt = x->type().dtype();
    return {m.elem("switch", {m.elem("lt", {x, m.constScalar(dt, 0)}), m.elem("mul", {m.in[1], x}), x})};
}

} // namespace

void addElementwiseMappers(MapperTable& table) {
    static const std::map<std::string, std::string> binary = {
        {"Add", "add"}, {"Sub", "sub"},    {"Mul", "mul"},        {"Pow", "pow"},           {"Equal", "eq"},
        {"Less", "lt"}, {"Greater", "gt"}, {"LessOrEqual", "le"}, {"GreaterOrEqual", "ge"}, {"And", "and"},
        {"Or", "or"},   {"Mod", "mod"},    {"Xor", "xor"}};
    static const std::map<std::string, std::string> unary = {
        {"Neg", "neg"},   {"Abs", "abs"},     {"Exp", "exp"},         {"Log", "log"},
        {"Sqrt", "sqrt"}, {"Tanh", "tanh"},   {"Sigmoid", "sigmoid"}, {"Relu", "relu"},
        {"Erf", "erf"},   {"Sin", "sin"},     {"Cos", "cos"},         {"Floor", "floor"},
        {"Ceil", "ceil"}, {"Round", "round"}, {"Sign", "sgn"},        {"Not", "not"}};
    for (const auto& [op, scalar] : binary)
        addMapper(table, op, [s = scalar](NodeMapper& m) { return mapBinary(m, s); });
    for (const auto& [op, scalar] : unary) addMapper(table, op, [s = scalar](NodeMapper& m) { return mapUnary(m, s); });
    addMapper(table, "Div", mapDiv);
    addMapper(table, "Max", mapVariadic);
    addMapper(table, "Min", mapVariadic);
    addMapper(table, "Sum", mapVariadic);
    addMapper(table, "Reciprocal", mapReciprocal);
    addMapper(table, "Where", mapWhere);
    addMapper(table, "BitShift", mapBitShift);
    addMapper(table, "Identity", mapIdentity);
    addMapper(table, "Dropout", mapDropout);
    addMapper(table, "Cast", mapCast);
    addMapper(table, "Clip", mapClip);
    addMapper(table, "LeakyRelu", mapLeakyRelu);
    addMapper(table, "HardSigmoid", mapHardSigmoid);
    addMapper(table, "Elu", mapElu);
    addMapper(table, "Selu", mapSelu);
    addMapper(table, "Softplus", mapSoftplus);
    addMapper(table, "HardSwish", mapHardSwish);
    addMapper(table, "PRelu", mapPRelu);
}

} // namespace passlens::onnximport
