// CPU kernels of the Onnx<Type> host ops (ONNX semantics: NumPy broadcasting, attributes as in
// the ONNX node; absent optional inputs described by the "inputs_present" attribute).
#include "ElemwiseEngine.h"
#include "OnnxCommon.h"

#include <passlens/ir/ScalarArith.h>
#include <passlens/onnx/OnnxTypes.h>

#include <climits>
#include <cmath>
#include <map>

namespace passlens::cpu {

namespace onnx {

// ONNX input k of the node (nullptr when absent).
const Tensor* onnxIn(const KernelCall& c, int k) {
    const json& a = c.op().attrs();
    const int nOnnx = a.contains("n_onnx_inputs") ? static_cast<int>(a["n_onnx_inputs"].get<std::int64_t>()) : c.nin();
    if (a.contains("inputs_present")) {
        const json& pr = a["inputs_present"];
        if (k >= static_cast<int>(pr.size())) return nullptr;
        if (!pr[static_cast<std::size_t>(k)].get<bool>()) return nullptr;
        int idx = 0;
        for (int i = 0; i < k; ++i) idx += pr[static_cast<std::size_t>(i)].get<bool>() ? 1 : 0;
        return idx < nOnnx ? &c.inputs[static_cast<std::size_t>(idx)] : nullptr;
    }
    return k < nOnnx ? &c.inputs[static_cast<std::size_t>(k)] : nullptr;
}

const Tensor& needIn(const KernelCall& c, int k) {
    const Tensor* t = onnxIn(c, k);
    if (!t) c.fail("ONNX input " + std::to_string(k) + " is required");
    return *t;
}

std::vector<std::int64_t> intsOf(const Tensor& t) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = t.intAt(static_cast<std::int64_t>(i));
    return v;
}

std::vector<std::int64_t> attrInts(const KernelCall& c, const char* name, std::vector<std::int64_t> dflt) {
    const json& a = c.op().attrs();
    if (!a.contains(name) || !a[name].is_array()) return dflt;
    std::vector<std::int64_t> v;
    for (const auto& e : a[name]) v.push_back(e.get<std::int64_t>());
    return v;
}

// The DType of an ONNX element type attribute (core's dtypeFromOnnx; nullopt out of int range).
std::optional<DType> onnxDType(std::int64_t t) {
    if (t < INT_MIN || t > INT_MAX) return std::nullopt;
    return dtypeFromOnnx(static_cast<int>(t));
}

} // namespace onnx

namespace {

using namespace onnx;

// ---------------------------------------------------------------- element-wise (NumPy broadcasting)
struct ProgState : KernelState {
    std::vector<DType> types;
    ScalarProgram prog;
};

Tensor runExpr(KernelCall& c, const std::string& expr, std::vector<Tensor> ins, DType outType) {
    int r = 0;
    for (const Tensor& t : ins) r = std::max(r, t.ndim());
    std::vector<Shape> shapes;
    std::vector<DType> types;
    for (Tensor& t : ins) {
        if (t.ndim() < r) {
            Shape s(static_cast<std::size_t>(r - t.ndim()), 1);
            s.insert(s.end(), t.shape().begin(), t.shape().end());
            t = t.reshaped(s);
        }
        shapes.push_back(t.shape());
        types.push_back(t.dtype());
    }
    auto* st = dynamic_cast<ProgState*>(c.state.get());
    if (!st || st->types != types) {
        auto s = std::make_unique<ProgState>();
        s->types = types;
        s->prog = compileExpr(expr, types);
        st = s.get();
        c.state = std::move(s);
    }
    const Shape out = broadcastShapes(shapes);
    Tensor y = c.allocate(outType, out);
    evalProgram(st->prog, ins, y, c.ctx.options.cpuLoops);
    return y;
}

std::string callExpr(const std::string& head, int n) {
    std::string s = head + "(";
    for (int i = 0; i < n; ++i) s += (i ? ",i" : "i") + std::to_string(i);
    return s + ")";
}

DType resultType(const KernelCall& c, const std::vector<Tensor>& ins, bool boolResult) {
    const Type& t = c.node.output(0)->type();
    (void)ins;
    if (boolResult) return DType::Bool;
    return t.dtype();
}

KernelFn elementwise(const std::string& scalar, bool boolResult = false) {
    return [scalar, boolResult](KernelCall& c) {
        std::vector<Tensor> ins;
        for (int i = 0; i < c.nin(); ++i) ins.push_back(c.in(i));
        const DType dt = resultType(c, ins, boolResult);
        std::string head = scalar;
        if (scalar == "div") head = isFloat(ins[0].dtype()) ? "true_div" : "int_div";
        c.outputs[0] = runExpr(c, callExpr(head, static_cast<int>(ins.size())), ins, dt);
    };
}

void onnxCast(KernelCall& c) {
    const auto to = onnxDType(c.op().intAttr("to", 1));
    if (!to) c.fail("unsupported target type " + std::to_string(c.op().intAttr("to", 1)));
    Tensor y = c.allocate(*to, c.in(0).shape());
    convertElements(c.in(0).rawData(), c.in(0).dtype(), y.rawData(), *to, y.numel());
    c.outputs[0] = std::move(y);
}

// Clip of integers in x's own type, as np.clip: a bound of x's dtype as it is, another one (a
// float attribute of Clip-6) through integerClipBound, so values and bounds beyond 2^53 stay exact.
template <class T> void clipIntegers(KernelCall& c) {
    using W = std::conditional_t<std::is_unsigned_v<T>, std::uint64_t, std::int64_t>;
    const auto bound = [&c](const char* attr, int input, bool upper) {
        W b = integerClipBound<W>(upper ? INFINITY : -INFINITY, upper);
        if (c.op().has(attr)) b = integerClipBound<W>(c.op().floatAttr(attr), upper);
        if (const Tensor* t = onnxIn(c, input)) {
            if (t->numel() != 1) c.fail("bound " + std::string(attr) + " is " + t->typeStr() + ", not one value");
            b = t->dtype() == c.in(0).dtype() ? static_cast<W>(t->data<T>()[0]) : integerClipBound<W>(t->at(0), upper);
        }
        return b;
    };
    const W lo = bound("min", 1, false), hi = bound("max", 2, true);
    const Tensor& x = c.in(0);
    Tensor y = c.allocate(x.dtype(), x.shape());
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    for (std::int64_t i = 0; i < x.numel(); ++i) yp[i] = static_cast<T>(clipOf(static_cast<W>(xp[i]), lo, hi));
    c.outputs[0] = std::move(y);
}

void onnxClip(KernelCall& c) {
    if (isInteger(c.in(0).dtype())) {
        visitDType(c.in(0).dtype(), "Clip", [&c](auto z) {
            if constexpr (std::is_integral_v<decltype(z)>) clipIntegers<decltype(z)>(c);
        });
        return;
    }
    double lo = -INFINITY, hi = INFINITY;
    if (c.op().has("min")) lo = c.op().floatAttr("min");
    if (c.op().has("max")) hi = c.op().floatAttr("max");
    if (const Tensor* t = onnxIn(c, 1)) lo = t->at(0);
    if (const Tensor* t = onnxIn(c, 2)) hi = t->at(0);
    char buf[96];
    std::snprintf(buf, sizeof buf, "clip{%.17g,%.17g}(i0)", lo, hi);
    c.outputs[0] = runExpr(c, buf, {c.in(0)}, c.in(0).dtype());
}

// ---------------------------------------------------------------- element-wise math without a
// scalar op of the Elemwise vocabulary (computed in double, per the ONNX operator definitions)

// A float unary op whose function takes the node's attributes: make(c) returns double(double).
template <class Make> KernelFn floatUnary(Make make) {
    return [make](KernelCall& c) { c.outputs[0] = mapFloats(c, c.in(0), make(c)); };
}

KernelFn floatUnary(double (*f)(double)) {
    return [f](KernelCall& c) { c.outputs[0] = mapFloats(c, c.in(0), f); };
}

void onnxIsInf(KernelCall& c) {
    const Tensor& x = c.in(0);
    const bool neg = c.op().intAttr("detect_negative", 1) != 0, pos = c.op().intAttr("detect_positive", 1) != 0;
    Tensor y = c.allocate(DType::Bool, x.shape());
    for (std::int64_t i = 0; i < x.numel(); ++i) {
        const double v = x.at(i);
        y.data<std::uint8_t>()[i] = std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg));
    }
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- broadcasting binary ops
// computed in a wide type (int64, uint64 or double) and converted to the result dtype

// The inputs broadcast to their common shape as `wide` tensors.
std::vector<Tensor> broadcastAs(const KernelCall& c, const std::vector<Tensor>& ins, DType wide) {
    std::size_t rank = 0;
    for (const Tensor& t : ins) rank = std::max(rank, t.shape().size());
    std::vector<Shape> shapes;
    for (const Tensor& t : ins) {
        Shape s(rank - t.shape().size(), 1); // NumPy rules: missing leading dims are 1
        s.insert(s.end(), t.shape().begin(), t.shape().end());
        shapes.push_back(s);
    }
    const Shape out = broadcastShapes(shapes);
    std::vector<Tensor> r;
    for (std::size_t i = 0; i < ins.size(); ++i)
        r.push_back(broadcastToShape(c, ins[i].reshaped(shapes[i]), out, wide));
    return r;
}

// y[i] = f(a[i], b[i]) over the broadcast inputs, computed as W, stored as `outType`.
template <class W, class F> Tensor wideBinary(const KernelCall& c, DType wide, DType outType, F f) {
    const std::vector<Tensor> ab = broadcastAs(c, {c.in(0), c.in(1)}, wide);
    Tensor w = c.allocate(wide, ab[0].shape());
    for (std::int64_t i = 0; i < w.numel(); ++i) w.data<W>()[i] = f(ab[0].data<W>()[i], ab[1].data<W>()[i]);
    if (outType == wide) return w;
    Tensor y = c.allocate(outType, w.shape());
    convertElements(w.rawData(), wide, y.rawData(), outType, y.numel());
    return y;
}

// Mod: fmod 0 takes the divisor's sign (integers, Python's %: ScalarArith.h's pyMod), fmod 1
// the dividend's (C fmod). Integers in their own 64-bit arithmetic (uint64 values at or above
// 2^63 as NumPy's unsigned %); x % -1 is 0 for either (no INT64_MIN % -1 trap).
void onnxMod(KernelCall& c) {
    const DType dt = c.in(0).dtype();
    const bool cmod = c.op().intAttr("fmod", 0) != 0;
    if (isFloat(dt)) {
        c.outputs[0] = wideBinary<double>(c, DType::Float64, dt, [cmod](double a, double b) {
            const double r = std::fmod(a, b);
            return !cmod && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
        });
        return;
    }
    if (dt == DType::UInt64) { // both fmods agree on unsigned values
        c.outputs[0] = wideBinary<std::uint64_t>(c, DType::UInt64, dt, [&c](std::uint64_t a, std::uint64_t b) {
            if (b == 0) c.fail("integer modulo by zero");
            return a % b;
        });
        return;
    }
    c.outputs[0] = wideBinary<std::int64_t>(c, DType::Int64, dt, [&c, cmod](std::int64_t a, std::int64_t b) {
        if (b == 0) c.fail("integer modulo by zero");
        if (!cmod) return pyMod(a, b);
        return b == -1 ? std::int64_t(0) : a % b;
    });
}

void onnxBitShift(KernelCall& c) {
    const bool left = c.op().str("direction") == "LEFT";
    const DType dt = c.in(0).dtype();
    const int bits = static_cast<int>(dtypeSize(dt) * 8);
    c.outputs[0] = wideBinary<std::uint64_t>(c, DType::UInt64, dt,
                                             [left, bits](std::uint64_t a, std::uint64_t b) -> std::uint64_t {
                                                 if (b >= static_cast<std::uint64_t>(bits)) return 0;
                                                 return left ? a << b : a >> b;
                                             });
}

void onnxXor(KernelCall& c) {
    c.outputs[0] =
        wideBinary<std::int64_t>(c, DType::Int64, DType::Bool,
                                 [](std::int64_t a, std::int64_t b) -> std::int64_t { return (a != 0) != (b != 0); });
}

// PRelu: x where x >= 0, slope * x elsewhere; slope broadcasts to x. A 1-d slope of C values
// that does not broadcast (PyTorch exports before opset 7) is per channel (axis 1).
void onnxPRelu(KernelCall& c) {
    const Tensor& x = c.in(0);
    Tensor& slope = c.inputs[1];
    if (x.ndim() >= 3 && slope.ndim() == 1 && slope.dim(0) == x.dim(1) && slope.dim(0) != x.dim(x.ndim() - 1)) {
        Shape s(static_cast<std::size_t>(x.ndim() - 1), 1);
        s[0] = slope.dim(0);
        slope = slope.reshaped(s);
    }
    if (x.dtype() == DType::UInt64) { // never negative: x itself, broadcast to the output's shape
        c.outputs[0] =
            wideBinary<std::uint64_t>(c, DType::UInt64, x.dtype(), [](std::uint64_t v, std::uint64_t) { return v; });
    } else if (isInteger(x.dtype())) { // PRelu-16's integers: exact, the product wrapping as NumPy's
        c.outputs[0] = wideBinary<std::int64_t>(c, DType::Int64, x.dtype(), [](std::int64_t v, std::int64_t k) {
            return v < 0 ? static_cast<std::int64_t>(static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(v)) : v;
        });
    } else {
        c.outputs[0] =
            wideBinary<double>(c, DType::Float64, x.dtype(), [](double v, double k) { return v < 0 ? k * v : v; });
    }
}

// Mean of the broadcast inputs (computed in double).
void onnxMean(KernelCall& c) {
    const std::vector<Tensor> all = broadcastAs(c, c.inputs, DType::Float64);
    Tensor w = c.allocate(DType::Float64, all[0].shape());
    for (std::int64_t i = 0; i < w.numel(); ++i) {
        double s = 0;
        for (const Tensor& t : all) s += t.data<double>()[i];
        w.data<double>()[i] = s / static_cast<double>(all.size());
    }
    Tensor y = c.allocate(c.in(0).dtype(), w.shape());
    convertElements(w.rawData(), DType::Float64, y.rawData(), y.dtype(), y.numel());
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- more element-wise and
// per-axis ops (ONNX definitions, computed in double)

void onnxIsNaN(KernelCall& c) {
    const Tensor& x = c.in(0);
    Tensor y = c.allocate(DType::Bool, x.shape());
    for (std::int64_t i = 0; i < x.numel(); ++i) y.data<std::uint8_t>()[i] = std::isnan(x.at(i));
    c.outputs[0] = std::move(y);
}

} // namespace

void registerOnnxKernels(KernelRegistry& r) {
    const std::map<std::string, std::string> unary = {{"Relu", "relu"}, {"Sqrt", "sqrt"},
                                                      {"Log", "log"},   {"Neg", "neg"},
                                                      {"Exp", "exp"},   {"Sigmoid", "sigmoid"},
                                                      {"Tanh", "tanh"}, {"Abs", "abs"},
                                                      {"Erf", "erf"},   {"Floor", "floor"},
                                                      {"Ceil", "ceil"}, {"Sin", "sin"},
                                                      {"Cos", "cos"},   {"Reciprocal", "reciprocal"},
                                                      {"Sign", "sgn"},  {"Round", "round"}};
    for (const auto& [k, s] : unary) r.add("Onnx" + k, Backend::Cpu, elementwise(s));
    r.add("OnnxNot", Backend::Cpu, elementwise("not", true));
    const std::map<std::string, std::string> binary = {{"Add", "add"},     {"Sub", "sub"}, {"Mul", "mul"},
                                                       {"Div", "div"},     {"Pow", "pow"}, {"Max", "maximum"},
                                                       {"Min", "minimum"}, {"Sum", "add"}};
    for (const auto& [k, s] : binary) r.add("Onnx" + k, Backend::Cpu, elementwise(s));
    const std::map<std::string, std::string> compare = {
        {"Equal", "eq"},          {"Less", "lt"}, {"Greater", "gt"}, {"LessOrEqual", "le"},
        {"GreaterOrEqual", "ge"}, {"And", "and"}, {"Or", "or"}};
    for (const auto& [k, s] : compare) r.add("Onnx" + k, Backend::Cpu, elementwise(s, true));
    r.add("OnnxWhere", Backend::Cpu, elementwise("switch"));
    r.add("OnnxCast", Backend::Cpu, onnxCast);
    r.add("OnnxClip", Backend::Cpu, onnxClip);
    // the further element-wise operators of the ONNX backend conformance suite (docs/CONFORMANCE.md)
    const std::vector<std::pair<std::string, KernelFn>> conformance = {
        {"Acos", floatUnary(static_cast<double (*)(double)>(std::acos))},
        {"Acosh", floatUnary(static_cast<double (*)(double)>(std::acosh))},
        {"Asin", floatUnary(static_cast<double (*)(double)>(std::asin))},
        {"Asinh", floatUnary(static_cast<double (*)(double)>(std::asinh))},
        {"Atan", floatUnary(static_cast<double (*)(double)>(std::atan))},
        {"Atanh", floatUnary(static_cast<double (*)(double)>(std::atanh))},
        {"Cosh", floatUnary(static_cast<double (*)(double)>(std::cosh))},
        {"Sinh", floatUnary(static_cast<double (*)(double)>(std::sinh))},
        {"Tan", floatUnary(static_cast<double (*)(double)>(std::tan))},
        {"Softplus", floatUnary(+[](double x) { return std::log(std::exp(x) + 1.0); })},
        {"Softsign", floatUnary(+[](double x) { return x / (1.0 + std::fabs(x)); })},
        {"Elu", floatUnary([](const KernelCall& c) {
             const double alpha = c.op().floatAttr("alpha", 1.0);
             return [alpha](double x) { return x < 0 ? alpha * (std::exp(x) - 1.0) : x; };
         })},
        {"Selu", floatUnary([](const KernelCall& c) {
             const double alpha = c.op().floatAttr("alpha", 1.67326319217681884765625);
             const double gamma = c.op().floatAttr("gamma", 1.05070102214813232421875);
             return [alpha, gamma](double x) { return x <= 0 ? gamma * (alpha * std::exp(x) - alpha) : gamma * x; };
         })},
        {"ThresholdedRelu", floatUnary([](const KernelCall& c) {
             const double alpha = c.op().floatAttr("alpha", 1.0);
             return [alpha](double x) { return x > alpha ? x : 0.0; };
         })},
        {"Shrink", floatUnary([](const KernelCall& c) {
             const double bias = c.op().floatAttr("bias", 0.0), lambd = c.op().floatAttr("lambd", 0.5);
             return [bias, lambd](double x) { return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0; };
         })},
        {"IsInf", onnxIsInf},
        {"IsNaN", onnxIsNaN},
        {"HardSwish", floatUnary(+[](double x) { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); })},
        {"Celu", floatUnary([](const KernelCall& c) {
             const double alpha = c.op().floatAttr("alpha", 1.0);
             return [alpha](double x) { return std::max(0.0, x) + std::min(0.0, alpha * (std::exp(x / alpha) - 1.0)); };
         })},
        {"Mod", onnxMod},
        {"BitShift", onnxBitShift},
        {"Xor", onnxXor},
        {"PRelu", onnxPRelu},
        {"Mean", onnxMean},
    };
    for (const auto& [k, fn] : conformance) r.add("Onnx" + k, Backend::Cpu, fn);
    registerOnnxShapeKernels(r);
    registerOnnxIndexKernels(r);
    registerOnnxReduceKernels(r);
    registerOnnxNormKernels(r);
    registerOnnxLinalgKernels(r);
    registerOnnxConvKernels(r);
    registerOnnxSamplingKernels(r);
    registerOnnxSignalKernels(r);
    registerOnnxRecurrentKernels(r);
    registerOnnxSequenceKernels(r);
    registerOnnxTrainingKernels(r);
    registerOnnxStringKernels(r);
    registerOnnxRandomKernels(r);
}

} // namespace passlens::cpu
