// CPU kernels of the Onnx<Type> host ops (ONNX semantics: NumPy broadcasting, attributes as in
// the ONNX node; absent optional inputs described by the "inputs_present" attribute).
#include "Conv.h"
#include "CpuCommon.h"
#include "ElemwiseEngine.h"
#include "Gemm.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>

namespace passlens::cpu {

namespace {

using json = nlohmann::json;

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

std::vector<std::int64_t> attrInts(const KernelCall& c, const char* name, std::vector<std::int64_t> dflt = {}) {
    const json& a = c.op().attrs();
    if (!a.contains(name) || !a[name].is_array()) return dflt;
    std::vector<std::int64_t> v;
    for (const auto& e : a[name]) v.push_back(e.get<std::int64_t>());
    return v;
}

std::optional<DType> onnxDType(std::int64_t t) {
    switch (t) {
    case 1: return DType::Float32;
    case 2: return DType::UInt8;
    case 3: return DType::Int8;
    case 4: return DType::UInt16;
    case 5: return DType::Int16;
    case 6: return DType::Int32;
    case 7: return DType::Int64;
    case 9: return DType::Bool;
    case 11: return DType::Float64;
    case 12: return DType::UInt32;
    case 13: return DType::UInt64;
    default: return std::nullopt;
    }
}

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
    evalProgram(st->prog, ins, y);
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

void onnxClip(KernelCall& c) {
    double lo = -INFINITY, hi = INFINITY;
    if (c.op().has("min")) lo = c.op().floatAttr("min");
    if (c.op().has("max")) hi = c.op().floatAttr("max");
    if (const Tensor* t = onnxIn(c, 1)) lo = t->at(0);
    if (const Tensor* t = onnxIn(c, 2)) hi = t->at(0);
    char buf[96];
    std::snprintf(buf, sizeof buf, "clip{%.17g,%.17g}(i0)", lo, hi);
    c.outputs[0] = runExpr(c, buf, {c.in(0)}, c.in(0).dtype());
}

// ---------------------------------------------------------------- shapes
void onnxIdentity(KernelCall& c) { c.outputs[0] = c.in(0); }

void onnxShape(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    std::int64_t start = c.op().intAttr("start", 0), end = c.op().intAttr("end", nd);
    if (start < 0) start += nd;
    if (end < 0) end += nd;
    start = std::clamp<std::int64_t>(start, 0, nd);
    end = std::clamp<std::int64_t>(end, 0, nd);
    const std::int64_t n = std::max<std::int64_t>(0, end - start);
    Tensor y = c.allocate(DType::Int64, {n});
    for (std::int64_t i = 0; i < n; ++i) y.data<std::int64_t>()[i] = x.dim(static_cast<int>(start + i));
    c.outputs[0] = std::move(y);
}

void onnxTranspose(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    std::vector<std::int64_t> perm = attrInts(c, "perm");
    if (perm.empty())
        for (int i = 0; i < nd; ++i) perm.push_back(nd - 1 - i);
    if (static_cast<int>(perm.size()) != nd)
        c.fail("perm has " + std::to_string(perm.size()) + " entries for " + x.typeStr());
    const auto xs = stridesOf(x.shape());
    Shape out;
    std::vector<std::int64_t> st;
    for (auto p : perm) {
        const int a = normAxis(c, p, nd);
        out.push_back(x.dim(a));
        st.push_back(xs[static_cast<std::size_t>(a)]);
    }
    Tensor y = c.allocate(x.dtype(), out);
    stridedCopy(x.rawData(), st, y.rawData(), out, dtypeSize(x.dtype()));
    c.outputs[0] = std::move(y);
}

std::vector<std::int64_t> axesOf(const KernelCall& c, int inputIndex) {
    if (c.op().has("axes")) return attrInts(c, "axes");
    if (const Tensor* t = onnxIn(c, inputIndex)) return intsOf(*t);
    return {};
}

void onnxUnsqueeze(KernelCall& c) {
    const Tensor& x = c.in(0);
    const auto axes = axesOf(c, 1);
    const int nd = x.ndim() + static_cast<int>(axes.size());
    std::vector<bool> isNew(static_cast<std::size_t>(nd), false);
    for (auto a : axes) isNew[static_cast<std::size_t>(normAxis(c, a, nd))] = true;
    Shape out;
    int src = 0;
    for (int i = 0; i < nd; ++i) out.push_back(isNew[static_cast<std::size_t>(i)] ? 1 : x.dim(src++));
    c.outputs[0] = x.reshaped(out);
}

void onnxSqueeze(KernelCall& c) {
    const Tensor& x = c.in(0);
    auto axes = axesOf(c, 1);
    std::vector<bool> drop(static_cast<std::size_t>(x.ndim()), false);
    if (axes.empty()) {
        for (int i = 0; i < x.ndim(); ++i) drop[static_cast<std::size_t>(i)] = x.dim(i) == 1;
    } else {
        for (auto a : axes) {
            const int n = normAxis(c, a, x.ndim());
            if (x.dim(n) != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of " + x.typeStr());
            drop[static_cast<std::size_t>(n)] = true;
        }
    }
    Shape out;
    for (int i = 0; i < x.ndim(); ++i)
        if (!drop[static_cast<std::size_t>(i)]) out.push_back(x.dim(i));
    c.outputs[0] = x.reshaped(out);
}

void onnxReshape(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<std::int64_t> s = intsOf(needIn(c, 1));
    const bool allowZero = c.op().intAttr("allowzero", 0) != 0;
    int minus = -1;
    std::int64_t prod = 1;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == 0 && !allowZero) {
            if (static_cast<int>(i) >= x.ndim())
                c.fail("shape copies dim " + std::to_string(i) + " that " + x.typeStr() + " does not have");
            s[i] = x.dim(static_cast<int>(i));
        }
        if (s[i] == -1) {
            if (minus >= 0) c.fail("shape has more than one -1");
            minus = static_cast<int>(i);
        } else {
            prod *= s[i];
        }
    }
    if (minus >= 0) {
        if (prod == 0 || x.numel() % prod) c.fail("cannot reshape " + x.typeStr() + " to " + shapeStr(s));
        s[static_cast<std::size_t>(minus)] = x.numel() / prod;
    }
    c.outputs[0] = x.reshaped(s);
}

void onnxFlatten(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::int64_t axis = c.op().intAttr("axis", 1);
    if (axis < 0) axis += x.ndim();
    std::int64_t a = 1, b = 1;
    for (int i = 0; i < x.ndim(); ++i) (i < axis ? a : b) *= x.dim(i);
    c.outputs[0] = x.reshaped({a, b});
}

void onnxConcat(KernelCall& c) {
    const Tensor& x0 = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x0.ndim());
    const DType dt = x0.dtype();
    Shape out = x0.shape();
    out[static_cast<std::size_t>(axis)] = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = c.in(i);
        if (t.ndim() != x0.ndim())
            c.fail("input " + std::to_string(i) + " " + t.typeStr() + " has another rank than " + x0.typeStr());
        for (int a = 0; a < t.ndim(); ++a)
            if (a != axis && t.dim(a) != x0.dim(a))
                c.fail("input " + std::to_string(i) + " " + t.typeStr() + " does not match " + x0.typeStr());
        out[static_cast<std::size_t>(axis)] += t.dim(axis);
    }
    Tensor y = c.allocate(dt, out);
    const std::int64_t outer = shapeNumel(Shape(out.begin(), out.begin() + axis));
    const std::int64_t rowOut = shapeNumel(Shape(out.begin() + axis, out.end()));
    const std::size_t es = dtypeSize(dt);
    std::int64_t col = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = c.in(i);
        const std::int64_t chunk = shapeNumel(Shape(t.shape().begin() + axis, t.shape().end()));
        for (std::int64_t o = 0; o < outer; ++o)
            convertElements(
                static_cast<const char*>(t.rawData()) + static_cast<std::size_t>(o * chunk) * dtypeSize(t.dtype()),
                t.dtype(), static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o * rowOut + col) * es, dt,
                chunk);
        col += chunk;
    }
    c.outputs[0] = std::move(y);
}

void onnxSlice(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<std::int64_t> starts, ends, axes, steps;
    if (c.op().has("starts")) {
        starts = attrInts(c, "starts");
        ends = attrInts(c, "ends");
        axes = attrInts(c, "axes");
    } else {
        starts = intsOf(needIn(c, 1));
        ends = intsOf(needIn(c, 2));
        if (const Tensor* t = onnxIn(c, 3)) axes = intsOf(*t);
        if (const Tensor* t = onnxIn(c, 4)) steps = intsOf(*t);
    }
    if (axes.empty())
        for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        c.fail("starts, ends, axes and steps have different lengths");
    const int nd = x.ndim();
    const auto xs = stridesOf(x.shape());
    std::vector<std::int64_t> st(xs.begin(), xs.end());
    Shape out = x.shape();
    std::int64_t base = 0;
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const int a = normAxis(c, axes[k], nd);
        const std::int64_t n = x.dim(a), step = steps[k];
        if (step == 0) c.fail("slice step cannot be 0");
        std::int64_t s = starts[k], e = ends[k];
        if (s < 0) s += n;
        if (e < 0) e += n;
        if (step > 0) {
            s = std::clamp<std::int64_t>(s, 0, n);
            e = std::clamp<std::int64_t>(e, 0, n);
        } else {
            s = std::clamp<std::int64_t>(s, 0, n - 1);
            e = std::clamp<std::int64_t>(e, -1, n - 1);
        }
        const std::int64_t len = step > 0 ? std::max<std::int64_t>(0, (e - s + step - 1) / step)
                                          : std::max<std::int64_t>(0, (s - e - step - 1) / (-step));
        out[static_cast<std::size_t>(a)] = len;
        if (len > 0) base += s * xs[static_cast<std::size_t>(a)];
        st[static_cast<std::size_t>(a)] = step * xs[static_cast<std::size_t>(a)];
    }
    Tensor y = c.allocate(x.dtype(), out);
    if (y.numel() > 0) {
        const std::size_t es = dtypeSize(x.dtype());
        stridedCopy(static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(base) * es, st, y.rawData(), out,
                    es);
    }
    c.outputs[0] = std::move(y);
}

void onnxPad(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    std::vector<std::int64_t> pads = c.op().has("pads") ? attrInts(c, "pads") : intsOf(needIn(c, 1));
    std::vector<std::int64_t> axes;
    if (const Tensor* t = onnxIn(c, 3)) axes = intsOf(*t);
    if (axes.empty())
        for (int i = 0; i < nd; ++i) axes.push_back(i);
    if (pads.size() != 2 * axes.size())
        c.fail("pads has " + std::to_string(pads.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<std::int64_t> lo(static_cast<std::size_t>(nd), 0), hi(static_cast<std::size_t>(nd), 0);
    for (std::size_t k = 0; k < axes.size(); ++k) {
        const int a = normAxis(c, axes[k], nd);
        lo[static_cast<std::size_t>(a)] = pads[k];
        hi[static_cast<std::size_t>(a)] = pads[k + axes.size()];
    }
    const std::string mode = c.op().has("mode") ? c.op().str("mode") : "constant";
    double value = c.op().floatAttr("value", 0.0);
    if (const Tensor* t = onnxIn(c, 2); t && t->numel() > 0) value = t->at(0);
    Shape out;
    for (int a = 0; a < nd; ++a) {
        const std::int64_t d = x.dim(a) + lo[static_cast<std::size_t>(a)] + hi[static_cast<std::size_t>(a)];
        if (d < 0) c.fail("pads make axis " + std::to_string(a) + " negative");
        out.push_back(d);
    }
    // per axis: source index of every output index, or -1 for the constant
    std::vector<std::vector<std::int64_t>> map(static_cast<std::size_t>(nd));
    for (int a = 0; a < nd; ++a) {
        const std::int64_t n = x.dim(a);
        auto& m = map[static_cast<std::size_t>(a)];
        m.resize(static_cast<std::size_t>(out[static_cast<std::size_t>(a)]));
        for (std::int64_t o = 0; o < out[static_cast<std::size_t>(a)]; ++o) {
            std::int64_t i = o - lo[static_cast<std::size_t>(a)];
            if (i >= 0 && i < n) {
                m[static_cast<std::size_t>(o)] = i;
                continue;
            }
            if (mode == "constant" || n == 0) {
                m[static_cast<std::size_t>(o)] = -1;
            } else if (mode == "edge") {
                m[static_cast<std::size_t>(o)] = std::clamp<std::int64_t>(i, 0, n - 1);
            } else if (mode == "reflect") {
                if (n == 1) {
                    m[static_cast<std::size_t>(o)] = 0;
                    continue;
                }
                const std::int64_t period = 2 * (n - 1);
                i = ((i % period) + period) % period;
                m[static_cast<std::size_t>(o)] = i < n ? i : period - i;
            } else if (mode == "wrap") {
                m[static_cast<std::size_t>(o)] = ((i % n) + n) % n;
            } else {
                c.fail("unsupported pad mode '" + mode + "'");
            }
        }
    }
    Tensor y = c.allocate(x.dtype(), out);
    const std::int64_t total = y.numel();
    if (total > 0) {
        const auto xs = stridesOf(x.shape());
        const std::size_t es = dtypeSize(x.dtype());
        std::vector<char> fill(es);
        convertElements(&value, DType::Float64, fill.data(), x.dtype(), 1);
        std::vector<std::int64_t> idx(static_cast<std::size_t>(nd), 0);
        char* yp = static_cast<char*>(y.rawData());
        const char* xp = static_cast<const char*>(x.rawData());
        for (std::int64_t e = 0; e < total; ++e) {
            std::int64_t off = 0;
            bool constant = false;
            for (int a = 0; a < nd; ++a) {
                const std::int64_t s =
                    map[static_cast<std::size_t>(a)][static_cast<std::size_t>(idx[static_cast<std::size_t>(a)])];
                if (s < 0) {
                    constant = true;
                    break;
                }
                off += s * xs[static_cast<std::size_t>(a)];
            }
            std::memcpy(yp + static_cast<std::size_t>(e) * es,
                        constant ? fill.data() : xp + static_cast<std::size_t>(off) * es, es);
            for (int a = nd; a-- > 0;) {
                if (++idx[static_cast<std::size_t>(a)] < out[static_cast<std::size_t>(a)]) break;
                idx[static_cast<std::size_t>(a)] = 0;
            }
        }
    }
    c.outputs[0] = std::move(y);
}

// y = f(x) element by element for a float32 / float64 x.
template <class F> Tensor mapFloats(const KernelCall& c, const Tensor& x, F f) {
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64)
        c.fail("needs a float32 or float64 input, got " + x.typeStr());
    Tensor y = c.allocate(x.dtype(), x.shape());
    const std::int64_t n = x.numel();
    if (x.dtype() == DType::Float32) {
        const float* xp = x.data<float>();
        float* yp = y.data<float>();
        for (std::int64_t i = 0; i < n; ++i) yp[i] = static_cast<float>(f(static_cast<double>(xp[i])));
    } else {
        const double* xp = x.data<double>();
        double* yp = y.data<double>();
        for (std::int64_t i = 0; i < n; ++i) yp[i] = f(xp[i]);
    }
    return y;
}

// ReduceX: `scalar` over the axes (attribute or input 1) of pre(x) ("sqr", "abs" or "exp"), then
// post (sqrt, log) for ReduceL2, ReduceLogSum, ReduceLogSumExp; mean divides by the count.
KernelFn onnxReduce(const std::string& scalar, bool mean, const std::string& pre = {},
                    double (*post)(double) = nullptr) {
    return [scalar, mean, pre, post](KernelCall& c) {
        const Tensor x = pre == "exp" ? mapFloats(c, c.in(0), static_cast<double (*)(double)>(std::exp)) : c.in(0);
        std::vector<std::int64_t> axes = axesOf(c, 1);
        const bool keep = c.op().intAttr("keepdims", 1) != 0;
        if (axes.empty() && c.op().intAttr("noop_with_empty_axes", 0)) {
            c.outputs[0] = c.in(0);
            return;
        }
        std::vector<bool> red(static_cast<std::size_t>(x.ndim()), axes.empty());
        for (auto a : axes) red[static_cast<std::size_t>(normAxis(c, a, x.ndim()))] = true;
        const DType dt = x.dtype();
        Tensor y = reduceTensor(c, x, red, scalar, dt, pre == "exp" ? std::string() : pre);
        if (post) y = mapFloats(c, y, post);
        if (mean) {
            std::int64_t cnt = 1;
            for (int a = 0; a < x.ndim(); ++a)
                if (red[static_cast<std::size_t>(a)]) cnt *= x.dim(a);
            visitDType(dt, "ReduceMean", [&](auto z) {
                using T = decltype(z);
                T* p = y.data<T>();
                for (std::int64_t i = 0; i < y.numel(); ++i)
                    p[i] = cnt ? static_cast<T>(p[i] / static_cast<T>(cnt)) : T(0);
            });
        }
        if (keep) {
            Shape s;
            for (int a = 0; a < x.ndim(); ++a) s.push_back(red[static_cast<std::size_t>(a)] ? 1 : x.dim(a));
            y = y.reshaped(s);
        }
        c.outputs[0] = std::move(y);
    };
}

void onnxGather(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    Shape out(x.shape().begin(), x.shape().begin() + axis);
    out.insert(out.end(), idx.shape().begin(), idx.shape().end());
    out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
    Tensor y = c.allocate(x.dtype(), out);
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + axis + 1, x.shape().end()));
    const std::int64_t n = x.dim(axis), m = idx.numel();
    const std::size_t es = dtypeSize(x.dtype()), row = static_cast<std::size_t>(inner) * es;
    for (std::int64_t k = 0; k < m; ++k) {
        std::int64_t i = idx.intAt(k);
        if (i < 0) i += n;
        if (i < 0 || i >= n)
            c.fail("index " + std::to_string(idx.intAt(k)) + " out of bounds for axis " + std::to_string(axis) +
                   " of " + x.typeStr());
        for (std::int64_t o = 0; o < outer; ++o)
            std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o * m + k) * row,
                        static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(o * n + i) * row, row);
    }
    c.outputs[0] = std::move(y);
}

void onnxExpand(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> s = intsOf(needIn(c, 1));
    const int r = std::max<int>(x.ndim(), static_cast<int>(s.size()));
    Shape out(static_cast<std::size_t>(r), 1);
    for (int i = 0; i < r; ++i) {
        const int xi = i - (r - x.ndim()), si = i - (r - static_cast<int>(s.size()));
        const std::int64_t a = xi >= 0 ? x.dim(xi) : 1, b = si >= 0 ? s[static_cast<std::size_t>(si)] : 1;
        if (a != b && a != 1 && b != 1) c.fail("cannot expand " + x.typeStr() + " to " + shapeStr(s));
        out[static_cast<std::size_t>(i)] = a == 1 ? b : a;
    }
    c.outputs[0] = broadcastToShape(c, x, out, x.dtype());
}

void onnxMatMul(KernelCall& c) {
    Tensor a = c.in(0), b = c.in(1);
    if (a.dtype() != b.dtype()) c.fail("inputs have different dtypes");
    const bool aVec = a.ndim() == 1, bVec = b.ndim() == 1;
    if (aVec) a = a.reshaped({1, a.dim(0)});
    if (bVec) b = b.reshaped({b.dim(0), 1});
    const int r = std::max(a.ndim(), b.ndim());
    auto pad = [&](Tensor& t) {
        if (t.ndim() < r) {
            Shape s(static_cast<std::size_t>(r - t.ndim()), 1);
            s.insert(s.end(), t.shape().begin(), t.shape().end());
            t = t.reshaped(s);
        }
    };
    pad(a);
    pad(b);
    const std::int64_t M = a.dim(r - 2), K = a.dim(r - 1), N = b.dim(r - 1);
    if (b.dim(r - 2) != K) c.fail("inner dimensions of " + c.in(0).typeStr() + " and " + c.in(1).typeStr() + " differ");
    Shape bs;
    for (int i = 0; i < r - 2; ++i) {
        const std::int64_t x = a.dim(i), y = b.dim(i);
        if (x != y && x != 1 && y != 1) c.fail("batch dims do not broadcast");
        bs.push_back(x == 1 ? y : x);
    }
    Shape out = bs;
    out.push_back(M);
    out.push_back(N);
    Tensor y = c.allocate(a.dtype(), out);
    const std::int64_t batches = shapeNumel(bs);
    visitDType(a.dtype(), "MatMul", [&](auto z) {
        using T = decltype(z);
        std::vector<std::int64_t> idx(bs.size(), 0);
        for (std::int64_t bi = 0; bi < batches; ++bi) {
            std::int64_t oa = 0, ob = 0;
            for (std::size_t d = 0; d < bs.size(); ++d) {
                oa = oa * a.dim(static_cast<int>(d)) + (a.dim(static_cast<int>(d)) == 1 ? 0 : idx[d]);
                ob = ob * b.dim(static_cast<int>(d)) + (b.dim(static_cast<int>(d)) == 1 ? 0 : idx[d]);
            }
            gemmT<T>(false, false, M, N, K, T(1), a.data<T>() + oa * M * K, K, b.data<T>() + ob * K * N, N, T(0),
                     y.data<T>() + bi * M * N, N);
            for (std::size_t d = bs.size(); d-- > 0;) {
                if (++idx[d] < bs[d]) break;
                idx[d] = 0;
            }
        }
    });
    Shape fin(bs);
    if (!aVec) fin.push_back(M);
    if (!bVec) fin.push_back(N);
    c.outputs[0] = y.reshaped(fin);
}

void onnxSoftmax(KernelCall& c, bool logSm) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const std::int64_t len = x.dim(axis);
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + axis + 1, x.shape().end()));
    if (x.dtype() != DType::Float32) c.fail("needs float32, got " + x.typeStr());
    Tensor y = c.allocate(x.dtype(), x.shape());
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            const std::int64_t b = o * len * inner + i;
            float mx = -INFINITY;
            for (std::int64_t k = 0; k < len; ++k) mx = std::max(mx, xp[b + k * inner]);
            double s = 0;
            for (std::int64_t k = 0; k < len; ++k) s += std::exp(xp[b + k * inner] - mx);
            for (std::int64_t k = 0; k < len; ++k)
                yp[b + k * inner] = logSm ? xp[b + k * inner] - mx - static_cast<float>(std::log(s))
                                          : static_cast<float>(std::exp(xp[b + k * inner] - mx) / s);
        }
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- convolutions
Conv2dParams convParams(const KernelCall& c, int spatial, const Tensor& x, const Tensor& w, bool transpose,
                        std::int64_t& outPadH, std::int64_t& outPadW) {
    Conv2dParams p;
    auto get = [&](const char* name, std::int64_t dflt) {
        auto v = attrInts(c, name);
        if (v.empty()) v.assign(static_cast<std::size_t>(spatial), dflt);
        if (static_cast<int>(v.size()) != spatial)
            c.fail(std::string(name) + " has " + std::to_string(v.size()) + " entries for a " +
                   std::to_string(spatial) + "-d convolution");
        if (spatial == 1) v.insert(v.begin(), dflt);
        return v;
    };
    auto strides = get("strides", 1), dil = get("dilations", 1), outPad = get("output_padding", 0);
    std::vector<std::int64_t> pads = attrInts(c, "pads");
    if (pads.empty()) pads.assign(static_cast<std::size_t>(2 * spatial), 0);
    if (static_cast<int>(pads.size()) != 2 * spatial) c.fail("pads has " + std::to_string(pads.size()) + " entries");
    if (spatial == 1) pads = {0, pads[0], 0, pads[1]};
    p.strideH = strides[0];
    p.strideW = strides[1];
    p.dilH = dil[0];
    p.dilW = dil[1];
    p.padTop = pads[0];
    p.padLeft = pads[1];
    p.padBottom = pads[2];
    p.padRight = pads[3];
    p.groups = c.op().intAttr("group", 1);
    outPadH = outPad[0];
    outPadW = outPad[1];
    const std::string autoPad = c.op().has("auto_pad") ? c.op().str("auto_pad") : "NOTSET";
    if (autoPad == "VALID") {
        p.padTop = p.padLeft = p.padBottom = p.padRight = 0;
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        const std::int64_t n[2] = {x.dim(2), x.dim(3)}, k[2] = {w.dim(2), w.dim(3)}, s[2] = {p.strideH, p.strideW},
                           d[2] = {p.dilH, p.dilW};
        std::int64_t lo[2], hi[2];
        for (int a = 0; a < 2; ++a) {
            std::int64_t total;
            if (!transpose) {
                const std::int64_t out = (n[a] + s[a] - 1) / s[a];
                total = std::max<std::int64_t>(0, (out - 1) * s[a] + d[a] * (k[a] - 1) + 1 - n[a]);
            } else {
                const std::int64_t out = n[a] * s[a];
                total = std::max<std::int64_t>(0, s[a] * (n[a] - 1) + (a ? outPadW : outPadH) + d[a] * (k[a] - 1) + 1 -
                                                      out);
            }
            const std::int64_t small = total / 2, big = total - small;
            lo[a] = autoPad == "SAME_UPPER" ? small : big;
            hi[a] = autoPad == "SAME_UPPER" ? big : small;
        }
        p.padTop = lo[0];
        p.padLeft = lo[1];
        p.padBottom = hi[0];
        p.padRight = hi[1];
    }
    return p;
}

void onnxConvNd(KernelCall& c);
void onnxConvTransposeNd(KernelCall& c);

void onnxConv(KernelCall& c) {
    Tensor x = c.in(0), w = needIn(c, 1);
    const Tensor* b = onnxIn(c, 2);
    const int spatial = x.ndim() - 2;
    if (spatial > 2) return onnxConvNd(c);
    if (spatial != 1 && spatial != 2) c.fail("only 1-d, 2-d and N-d convolutions are supported, got " + x.typeStr());
    if (spatial == 1) {
        x = x.reshaped({x.dim(0), x.dim(1), 1, x.dim(2)});
        w = w.reshaped({w.dim(0), w.dim(1), 1, w.dim(2)});
    }
    std::int64_t oph, opw;
    const Conv2dParams p = convParams(c, spatial, x, w, false, oph, opw);
    Tensor y = conv2d(c, x, w, p, b);
    if (spatial == 1) y = y.reshaped({y.dim(0), y.dim(1), y.dim(3)});
    c.outputs[0] = std::move(y);
}

void onnxConvTranspose(KernelCall& c) {
    Tensor x = c.in(0), w = needIn(c, 1);
    const Tensor* b = onnxIn(c, 2);
    const int spatial = x.ndim() - 2;
    if (spatial > 2) return onnxConvTransposeNd(c);
    if (spatial != 1 && spatial != 2)
        c.fail("only 1-d, 2-d and N-d transposed convolutions are supported, got " + x.typeStr());
    if (spatial == 1) {
        x = x.reshaped({x.dim(0), x.dim(1), 1, x.dim(2)});
        w = w.reshaped({w.dim(0), w.dim(1), 1, w.dim(2)});
    }
    std::int64_t oph, opw;
    Conv2dParams p = convParams(c, spatial, x, w, true, oph, opw);
    auto outShape = attrInts(c, "output_shape");
    if (!outShape.empty()) {
        if (spatial == 1) outShape.insert(outShape.begin(), 1);
        const std::int64_t sz = static_cast<std::int64_t>(outShape.size());
        const std::int64_t oh = outShape[static_cast<std::size_t>(sz - 2)],
                           ow = outShape[static_cast<std::size_t>(sz - 1)];
        const std::int64_t th = p.strideH * (x.dim(2) - 1) + oph + p.dilH * (w.dim(2) - 1) + 1 - oh;
        const std::int64_t tw = p.strideW * (x.dim(3) - 1) + opw + p.dilW * (w.dim(3) - 1) + 1 - ow;
        const bool lower = c.op().str("auto_pad") == "SAME_LOWER";
        p.padTop = lower ? th - th / 2 : th / 2;
        p.padBottom = th - p.padTop;
        p.padLeft = lower ? tw - tw / 2 : tw / 2;
        p.padRight = tw - p.padLeft;
    }
    Tensor y = convTranspose2d(c, x, w, p, oph, opw, b);
    if (spatial == 1) y = y.reshaped({y.dim(0), y.dim(1), y.dim(3)});
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- Resize
struct AxisMap {
    std::vector<std::int64_t> i0, i1; // source indices
    std::vector<float> w;             // weight of i1 (linear)
    std::vector<std::array<std::int64_t, 4>> ci;
    std::vector<std::array<float, 4>> cw; // cubic
};

void onnxResize(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    const Tensor *roiT = nullptr, *scalesT = nullptr, *sizesT = nullptr;
    const json& at = c.op().attrs();
    const bool twoInputs = !at.contains("inputs_present") && c.nin() == 2;
    if (twoInputs) {
        scalesT = &c.in(1); // opset 10: X, scales
    } else {
        roiT = onnxIn(c, 1);
        scalesT = onnxIn(c, 2);
        sizesT = onnxIn(c, 3);
    }
    if (scalesT && scalesT->numel() == 0) scalesT = nullptr;
    if (sizesT && sizesT->numel() == 0) sizesT = nullptr;
    std::vector<double> scales(static_cast<std::size_t>(nd), 1.0);
    Shape out = x.shape();
    if (sizesT) {
        if (sizesT->numel() != nd)
            c.fail("sizes has " + std::to_string(sizesT->numel()) + " entries for " + x.typeStr());
        for (int a = 0; a < nd; ++a) {
            out[static_cast<std::size_t>(a)] = sizesT->intAt(a);
            scales[static_cast<std::size_t>(a)] =
                x.dim(a) ? static_cast<double>(out[static_cast<std::size_t>(a)]) / static_cast<double>(x.dim(a)) : 1.0;
        }
    } else if (scalesT) {
        if (scalesT->numel() != nd)
            c.fail("scales has " + std::to_string(scalesT->numel()) + " entries for " + x.typeStr());
        for (int a = 0; a < nd; ++a) {
            const double s = scalesT->at(a);
            if (s <= 0) c.fail("scales must be positive");
            scales[static_cast<std::size_t>(a)] = s;
            out[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(std::floor(static_cast<double>(x.dim(a)) * s));
        }
    } else {
        c.fail("needs scales or sizes");
    }
    std::vector<double> roi;
    if (roiT) roi = roiT->toDoubles();
    const std::string mode = at.contains("mode") ? c.op().str("mode") : "nearest";
    const std::string ctm =
        at.contains("coordinate_transformation_mode") ? c.op().str("coordinate_transformation_mode") : "half_pixel";
    const std::string nearestMode = at.contains("nearest_mode") ? c.op().str("nearest_mode") : "round_prefer_floor";
    const double cubicA = c.op().floatAttr("cubic_coeff_a", -0.75);
    const bool excludeOutside = c.op().intAttr("exclude_outside", 0) != 0;
    const double extrapolation = c.op().floatAttr("extrapolation_value", 0.0);
    if (mode != "nearest" && mode != "linear" && mode != "cubic") c.fail("unsupported mode '" + mode + "'");
    if (x.dtype() != DType::Float32 && mode != "nearest")
        c.fail("linear and cubic resize need float32, got " + x.typeStr());

    auto origCoord = [&](int a, std::int64_t xo, bool& outside) {
        const double s = scales[static_cast<std::size_t>(a)];
        const double in = static_cast<double>(x.dim(a)), outLen = static_cast<double>(out[static_cast<std::size_t>(a)]);
        const double xr = static_cast<double>(xo);
        outside = false;
        if (ctm == "half_pixel") return (xr + 0.5) / s - 0.5;
        if (ctm == "pytorch_half_pixel") return outLen > 1 ? (xr + 0.5) / s - 0.5 : 0.0;
        if (ctm == "align_corners") return outLen == 1 ? 0.0 : xr * (in - 1) / (outLen - 1);
        if (ctm == "asymmetric") return xr / s;
        if (ctm == "tf_half_pixel_for_nearest") return (xr + 0.5) / s;
        if (ctm == "tf_crop_and_resize") {
            const double st = roi.size() == static_cast<std::size_t>(2 * nd) ? roi[static_cast<std::size_t>(a)] : 0.0;
            const double en =
                roi.size() == static_cast<std::size_t>(2 * nd) ? roi[static_cast<std::size_t>(a + nd)] : 1.0;
            const double v =
                outLen > 1 ? st * (in - 1) + xr * (en - st) * (in - 1) / (outLen - 1) : 0.5 * (st + en) * (in - 1);
            outside = v < 0 || v > in - 1;
            return v;
        }
        c.fail("unsupported coordinate_transformation_mode '" + ctm + "'");
    };

    Tensor cur = x;
    for (int a = 0; a < nd; ++a) {
        if (out[static_cast<std::size_t>(a)] == cur.dim(a) && scales[static_cast<std::size_t>(a)] == 1.0 &&
            ctm != "tf_crop_and_resize")
            continue;
        const std::int64_t n = cur.dim(a), m = out[static_cast<std::size_t>(a)];
        Shape s = cur.shape();
        s[static_cast<std::size_t>(a)] = m;
        Tensor nxt = c.allocate(x.dtype(), s);
        const std::int64_t outer = shapeNumel(Shape(cur.shape().begin(), cur.shape().begin() + a));
        const std::int64_t inner = shapeNumel(Shape(cur.shape().begin() + a + 1, cur.shape().end()));
        const std::size_t es = dtypeSize(x.dtype());
        if (n == 0 || m == 0) {
            if (nxt.nbytes()) std::memset(nxt.rawData(), 0, nxt.nbytes());
            cur = nxt;
            continue;
        }
        if (mode == "nearest") {
            std::vector<std::int64_t> src(static_cast<std::size_t>(m));
            std::vector<bool> outsideV(static_cast<std::size_t>(m));
            for (std::int64_t o = 0; o < m; ++o) {
                bool outside;
                const double v = origCoord(a, o, outside);
                std::int64_t i;
                if (nearestMode == "floor")
                    i = static_cast<std::int64_t>(std::floor(v));
                else if (nearestMode == "ceil")
                    i = static_cast<std::int64_t>(std::ceil(v));
                else if (nearestMode == "round_prefer_ceil")
                    i = static_cast<std::int64_t>(std::floor(v + 0.5));
                else
                    i = (v - std::floor(v) == 0.5) ? static_cast<std::int64_t>(std::floor(v))
                                                   : static_cast<std::int64_t>(std::round(v));
                src[static_cast<std::size_t>(o)] = std::clamp<std::int64_t>(i, 0, n - 1);
                outsideV[static_cast<std::size_t>(o)] = outside;
            }
            std::vector<char> fill(es);
            convertElements(&extrapolation, DType::Float64, fill.data(), x.dtype(), 1);
            const char* cp = static_cast<const char*>(cur.rawData());
            char* np = static_cast<char*>(nxt.rawData());
            const std::size_t row = static_cast<std::size_t>(inner) * es;
            for (std::int64_t ou = 0; ou < outer; ++ou)
                for (std::int64_t o = 0; o < m; ++o) {
                    char* d = np + static_cast<std::size_t>(ou * m + o) * row;
                    if (outsideV[static_cast<std::size_t>(o)]) {
                        for (std::int64_t i = 0; i < inner; ++i)
                            std::memcpy(d + static_cast<std::size_t>(i) * es, fill.data(), es);
                    } else {
                        std::memcpy(d, cp + static_cast<std::size_t>(ou * n + src[static_cast<std::size_t>(o)]) * row,
                                    row);
                    }
                }
        } else {
            // linear or cubic: per output index, source taps and weights
            const int taps = mode == "linear" ? 2 : 4;
            std::vector<std::array<std::int64_t, 4>> idx(static_cast<std::size_t>(m));
            std::vector<std::array<float, 4>> wt(static_cast<std::size_t>(m));
            std::vector<bool> outsideV(static_cast<std::size_t>(m));
            for (std::int64_t o = 0; o < m; ++o) {
                bool outside;
                double v = origCoord(a, o, outside);
                outsideV[static_cast<std::size_t>(o)] = outside;
                auto& I = idx[static_cast<std::size_t>(o)];
                auto& W = wt[static_cast<std::size_t>(o)];
                if (taps == 2) {
                    v = std::clamp(v, 0.0, static_cast<double>(n - 1));
                    const std::int64_t i0 = static_cast<std::int64_t>(std::floor(v));
                    const std::int64_t i1 = std::min<std::int64_t>(i0 + 1, n - 1);
                    const double f = v - static_cast<double>(i0);
                    I = {i0, i1, 0, 0};
                    W = {static_cast<float>(1 - f), static_cast<float>(f), 0, 0};
                } else {
                    const std::int64_t i0 = static_cast<std::int64_t>(std::floor(v));
                    const double f = v - static_cast<double>(i0);
                    const double A = cubicA;
                    auto k = [&](double t) {
                        t = std::fabs(t);
                        if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
                        if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
                        return 0.0;
                    };
                    double ws[4] = {k(1 + f), k(f), k(1 - f), k(2 - f)};
                    double sum = 0;
                    for (int t = 0; t < 4; ++t) {
                        const std::int64_t ii = i0 - 1 + t;
                        if (excludeOutside && (ii < 0 || ii >= n)) ws[t] = 0;
                        sum += ws[t];
                        I[static_cast<std::size_t>(t)] = std::clamp<std::int64_t>(ii, 0, n - 1);
                    }
                    for (int t = 0; t < 4; ++t)
                        W[static_cast<std::size_t>(t)] =
                            static_cast<float>(excludeOutside && sum != 0 ? ws[t] / sum : ws[t]);
                }
            }
            const float* cp = cur.data<float>();
            float* np = nxt.data<float>();
            for (std::int64_t ou = 0; ou < outer; ++ou)
                for (std::int64_t o = 0; o < m; ++o) {
                    float* d = np + (ou * m + o) * inner;
                    if (outsideV[static_cast<std::size_t>(o)]) {
                        for (std::int64_t i = 0; i < inner; ++i) d[i] = static_cast<float>(extrapolation);
                        continue;
                    }
                    const auto& I = idx[static_cast<std::size_t>(o)];
                    const auto& W = wt[static_cast<std::size_t>(o)];
                    for (std::int64_t i = 0; i < inner; ++i) {
                        float acc = 0;
                        for (int t = 0; t < taps; ++t)
                            acc += W[static_cast<std::size_t>(t)] *
                                   cp[(ou * n + I[static_cast<std::size_t>(t)]) * inner + i];
                        d[i] = acc;
                    }
                }
        }
        cur = nxt;
    }
    if (cur.storage() == x.storage()) cur = x.clone(c.ctx.pool.get());
    c.outputs[0] = std::move(cur);
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

// ---------------------------------------------------------------- along one axis

// x's dims before `axis`, at it and after it.
struct AxisSplit {
    std::int64_t outer = 1, n = 1, inner = 1;
};

AxisSplit splitAt(const Tensor& x, int axis) {
    AxisSplit s;
    for (int a = 0; a < x.ndim(); ++a) (a < axis ? s.outer : a == axis ? s.n : s.inner) *= x.dim(a);
    return s;
}

// Calls f(lane, first) for every 1-d lane along the split axis: `lane` = outer * inner + inner
// index, its elements at first + k * s.inner for k < s.n.
template <class F> void forEachLane(const AxisSplit& s, F f) {
    for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::int64_t i = 0; i < s.inner; ++i) f(o * s.inner + i, o * s.n * s.inner + i);
}

// ArgMax / ArgMin: int64 index of the first (or, with select_last_index, last) extreme along
// `axis`, which is kept as size 1 with keepdims.
void onnxArgExtreme(KernelCall& c, bool isMax) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    const bool keep = c.op().intAttr("keepdims", 1) != 0, last = c.op().intAttr("select_last_index", 0) != 0;
    const AxisSplit s = splitAt(x, axis);
    if (s.n == 0)
        c.fail("cannot take the arg" + std::string(isMax ? "max" : "min") + " of an empty axis of " + x.typeStr());
    Shape out = x.shape();
    if (keep)
        out[static_cast<std::size_t>(axis)] = 1;
    else
        out.erase(out.begin() + axis);
    Tensor y = c.allocate(DType::Int64, out);
    std::int64_t* yp = y.data<std::int64_t>();
    visitDType(x.dtype(), "ArgMax", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        forEachLane(s, [&](std::int64_t lane, std::int64_t first) {
            const T* p = xp + first;
            std::int64_t best = 0;
            for (std::int64_t k = 1; k < s.n; ++k) {
                const T v = p[k * s.inner], b = p[best * s.inner];
                if ((isMax ? v > b : v < b) || (last && v == b)) best = k;
            }
            yp[lane] = best;
        });
    });
    c.outputs[0] = std::move(y);
}

// Hardmax (opset 13): 1 at the first maximum along `axis` (default -1), 0 elsewhere.
void onnxHardmax(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const AxisSplit s = splitAt(x, axis);
    Tensor y = Tensor::zeros(x.dtype(), x.shape(), c.ctx.pool.get());
    visitDType(x.dtype(), "Hardmax", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        T* yp = y.data<T>();
        forEachLane(s, [&](std::int64_t, std::int64_t first) {
            if (s.n == 0) return;
            std::int64_t best = 0;
            for (std::int64_t k = 1; k < s.n; ++k)
                if (xp[first + k * s.inner] > xp[first + best * s.inner]) best = k;
            yp[first + best * s.inner] = T(1);
        });
    });
    c.outputs[0] = std::move(y);
}

// CumSum: running sums along the axis given by input 1, `exclusive` and `reverse` as in ONNX.
void onnxCumSum(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, scalarInt(c, 1), x.ndim());
    const bool exclusive = c.op().intAttr("exclusive", 0) != 0, reverse = c.op().intAttr("reverse", 0) != 0;
    const AxisSplit s = splitAt(x, axis);
    Tensor y = c.allocate(x.dtype(), x.shape());
    visitDType(x.dtype(), "CumSum", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        T* yp = y.data<T>();
        forEachLane(s, [&](std::int64_t, std::int64_t first) {
            T acc = T(0);
            for (std::int64_t kk = 0; kk < s.n; ++kk) {
                const std::int64_t e = first + (reverse ? s.n - 1 - kk : kk) * s.inner;
                if (exclusive) {
                    yp[e] = acc;
                    acc = static_cast<T>(acc + xp[e]);
                } else {
                    acc = static_cast<T>(acc + xp[e]);
                    yp[e] = acc;
                }
            }
        });
    });
    c.outputs[0] = std::move(y);
}

// TopK: the K largest (or smallest) values along `axis` and their int64 indices, sorted; equal
// values keep the lower index first, as the ONNX reference does.
void onnxTopK(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const std::int64_t k = scalarInt(c, 1);
    const bool largest = c.op().intAttr("largest", 1) != 0;
    const AxisSplit s = splitAt(x, axis);
    if (k < 0 || k > s.n)
        c.fail("K " + std::to_string(k) + " out of range for axis " + std::to_string(axis) + " of " + x.typeStr());
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = k;
    Tensor values = c.allocate(x.dtype(), out), indices = c.allocate(DType::Int64, out);
    visitDType(x.dtype(), "TopK", [&](auto z) {
        using T = decltype(z);
        const T* xp = x.data<T>();
        T* vp = values.data<T>();
        std::int64_t* ip = indices.data<std::int64_t>();
        std::vector<std::int64_t> order(static_cast<std::size_t>(s.n));
        forEachLane(s, [&](std::int64_t lane, std::int64_t first) {
            const T* p = xp + first;
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
                return largest ? p[a * s.inner] > p[b * s.inner] : p[a * s.inner] < p[b * s.inner];
            });
            const std::int64_t o = lane / s.inner, i = lane % s.inner;
            for (std::int64_t j = 0; j < k; ++j) {
                const std::int64_t e = (o * k + j) * s.inner + i;
                vp[e] = p[order[static_cast<std::size_t>(j)] * s.inner];
                ip[e] = order[static_cast<std::size_t>(j)];
            }
        });
    });
    c.outputs[0] = std::move(values);
    if (c.outputs.size() > 1) c.outputs[1] = std::move(indices);
}

// ---------------------------------------------------------------- indexing

// An index along a dim of size n, negative counting from the end; fails when out of range.
std::int64_t wrapIndex(const KernelCall& c, std::int64_t i, std::int64_t n, int axis) {
    const std::int64_t w = i < 0 ? i + n : i;
    if (w < 0 || w >= n)
        c.fail("index " + std::to_string(i) + " out of bounds for axis " + std::to_string(axis) + " of size " +
               std::to_string(n));
    return w;
}

// Advances a row-major multi-index over `shape`.
void nextIndex(std::vector<std::int64_t>& idx, const Shape& shape) {
    for (std::size_t a = idx.size(); a-- > 0;) {
        if (++idx[a] < shape[a]) return;
        idx[a] = 0;
    }
}

// Element offset in x of `pos` with the index along `axis` replaced by indices[e].
std::int64_t elementOffset(const KernelCall& c, const Tensor& x, const std::vector<std::int64_t>& strides,
                           const std::vector<std::int64_t>& pos, int axis, std::int64_t index) {
    std::int64_t off = 0;
    for (int a = 0; a < x.ndim(); ++a) {
        const std::int64_t p = a == axis ? wrapIndex(c, index, x.dim(a), a) : pos[static_cast<std::size_t>(a)];
        if (p >= x.dim(a)) c.fail("indices shape exceeds " + x.typeStr() + " on axis " + std::to_string(a));
        off += p * strides[static_cast<std::size_t>(a)];
    }
    return off;
}

// GatherElements: y[pos] = x[pos with axis index indices[pos]]; y has the shape of indices.
void onnxGatherElements(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    if (idx.ndim() != x.ndim()) c.fail("indices " + idx.typeStr() + " and data " + x.typeStr() + " differ in rank");
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    Tensor y = c.allocate(x.dtype(), idx.shape());
    const auto xs = stridesOf(x.shape());
    const std::size_t es = dtypeSize(x.dtype());
    std::vector<std::int64_t> pos(static_cast<std::size_t>(x.ndim()), 0);
    for (std::int64_t e = 0; e < idx.numel(); ++e, nextIndex(pos, idx.shape())) {
        const std::int64_t off = elementOffset(c, x, xs, pos, axis, idx.intAt(e));
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(e) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(off) * es, es);
    }
    c.outputs[0] = std::move(y);
}

// Combines an update into an element: ONNX `reduction` none, add, mul, max or min.
template <class T> void combine(T& dst, T v, const std::string& reduction) {
    if (reduction == "add")
        dst = static_cast<T>(dst + v);
    else if (reduction == "mul")
        dst = static_cast<T>(dst * v);
    else if (reduction == "max")
        dst = std::max(dst, v);
    else if (reduction == "min")
        dst = std::min(dst, v);
    else
        dst = v;
}

std::string reductionOf(const KernelCall& c) {
    std::string r = c.op().str("reduction");
    if (r.empty()) r = "none";
    if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
        c.fail("unsupported reduction '" + r + "'");
    return r;
}

// ScatterElements (and the older Scatter): a copy of data with updates[pos] written (or
// combined, per `reduction`) at pos with the axis index indices[pos].
void onnxScatterElements(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    const Tensor& upd = c.in(2);
    if (idx.shape() != upd.shape() || idx.ndim() != x.ndim())
        c.fail("indices " + idx.typeStr() + " and updates " + upd.typeStr() + " do not fit " + x.typeStr());
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    const std::string reduction = reductionOf(c);
    Tensor y = x.clone(c.ctx.pool.get());
    const auto xs = stridesOf(x.shape());
    visitDType(x.dtype(), "ScatterElements", [&](auto z) {
        using T = decltype(z);
        T* yp = y.data<T>();
        const T* up = upd.data<T>();
        std::vector<std::int64_t> pos(static_cast<std::size_t>(x.ndim()), 0);
        for (std::int64_t e = 0; e < idx.numel(); ++e, nextIndex(pos, idx.shape()))
            combine(yp[elementOffset(c, x, xs, pos, axis, idx.intAt(e))], up[e], reduction);
    });
    c.outputs[0] = std::move(y);
}

// The element offset in data of the index tuple `t` (k entries) over data dims [from, from+k),
// in units of the slice after them; fails for an out-of-range entry.
std::int64_t tupleOffset(const KernelCall& c, const Tensor& data, int from, const std::int64_t* t, std::int64_t k) {
    std::int64_t off = 0;
    for (std::int64_t j = 0; j < k; ++j) {
        const int a = from + static_cast<int>(j);
        off = off * data.dim(a) + wrapIndex(c, t[j], data.dim(a), a);
    }
    return off;
}

// GatherND (batch_dims b): y[batch, m] = data[batch, indices[batch, m, :]] (a slice).
void onnxGatherND(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> ind = intsOf(c.in(1));
    const Shape& is = c.in(1).shape();
    const int b = static_cast<int>(c.op().intAttr("batch_dims", 0));
    if (is.empty()) c.fail("indices must have rank >= 1");
    const std::int64_t k = is.back();
    if (b < 0 || b + k > x.ndim() || b >= static_cast<int>(is.size()))
        c.fail("indices " + c.in(1).typeStr() + " do not fit " + x.typeStr());
    Shape out(is.begin(), is.end() - 1);
    out.insert(out.end(), x.shape().begin() + b + k, x.shape().end());
    Tensor y = c.allocate(x.dtype(), out);
    const std::int64_t batches = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + b));
    const std::int64_t perBatch = shapeNumel(Shape(is.begin() + b, is.end() - 1));
    const std::int64_t slice = shapeNumel(Shape(x.shape().begin() + b + k, x.shape().end()));
    const std::int64_t batchSize = shapeNumel(Shape(x.shape().begin() + b, x.shape().end()));
    const std::size_t es = dtypeSize(x.dtype());
    for (std::int64_t bi = 0; bi < batches; ++bi)
        for (std::int64_t m = 0; m < perBatch; ++m) {
            const std::int64_t row = bi * perBatch + m;
            const std::int64_t off = bi * batchSize + tupleOffset(c, x, b, ind.data() + row * k, k) * slice;
            std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(row * slice) * es,
                        static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(off) * es,
                        static_cast<std::size_t>(slice) * es);
        }
    c.outputs[0] = std::move(y);
}

// ScatterND: a copy of data with the slices updates[m] written (or combined) at indices[m, :].
void onnxScatterND(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> ind = intsOf(c.in(1));
    const Shape& is = c.in(1).shape();
    const Tensor& upd = c.in(2);
    if (is.empty()) c.fail("indices must have rank >= 1");
    const std::int64_t k = is.back();
    if (k > x.ndim()) c.fail("indices " + c.in(1).typeStr() + " do not fit " + x.typeStr());
    const std::int64_t rows = shapeNumel(Shape(is.begin(), is.end() - 1));
    const std::int64_t slice = shapeNumel(Shape(x.shape().begin() + k, x.shape().end()));
    if (upd.numel() != rows * slice)
        c.fail("updates " + upd.typeStr() + " do not fit indices " + c.in(1).typeStr() + " and " + x.typeStr());
    const std::string reduction = reductionOf(c);
    Tensor y = x.clone(c.ctx.pool.get());
    visitDType(x.dtype(), "ScatterND", [&](auto z) {
        using T = decltype(z);
        T* yp = y.data<T>();
        const T* up = upd.data<T>();
        for (std::int64_t m = 0; m < rows; ++m) {
            const std::int64_t off = tupleOffset(c, x, 0, ind.data() + m * k, k) * slice;
            for (std::int64_t j = 0; j < slice; ++j) combine(yp[off + j], up[m * slice + j], reduction);
        }
    });
    c.outputs[0] = std::move(y);
}

// OneHot: indices (negative ones count from depth) to values[1] at the index and values[0]
// elsewhere, on a new axis of size depth at `axis`.
void onnxOneHot(KernelCall& c) {
    const Tensor& idx = c.in(0);
    const Tensor& values = c.in(2);
    const std::int64_t depth = static_cast<std::int64_t>(c.in(1).at(0));
    if (values.numel() != 2) c.fail("values must hold 2 elements, got " + values.typeStr());
    if (depth < 0) c.fail("depth " + std::to_string(depth) + " is negative");
    const int r = idx.ndim();
    std::int64_t axis = c.op().intAttr("axis", -1);
    if (axis < 0) axis += r + 1;
    if (axis < 0 || axis > r)
        c.fail("axis " + std::to_string(c.op().intAttr("axis", -1)) + " out of range for rank " +
               std::to_string(r + 1));
    Shape out = idx.shape();
    out.insert(out.begin() + axis, depth);
    Tensor y = c.allocate(values.dtype(), out);
    std::int64_t outer = 1, inner = 1;
    for (int a = 0; a < r; ++a) (a < axis ? outer : inner) *= idx.dim(a);
    const std::size_t es = dtypeSize(values.dtype());
    const char* vp = static_cast<const char*>(values.rawData());
    char* yp = static_cast<char*>(y.rawData());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t d = 0; d < depth; ++d)
            for (std::int64_t i = 0; i < inner; ++i) {
                std::int64_t v = static_cast<std::int64_t>(idx.at(o * inner + i));
                if (v < 0) v += depth;
                std::memcpy(yp + static_cast<std::size_t>((o * depth + d) * inner + i) * es, vp + (v == d ? es : 0),
                            es);
            }
    c.outputs[0] = std::move(y);
}

// Compress: the slices along `axis` (the flattened input without it) whose condition is true.
void onnxCompress(KernelCall& c) {
    Tensor x = c.in(0);
    const Tensor& cond = c.in(1);
    int axis = 0;
    if (c.op().has("axis"))
        axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    else
        x = x.reshaped({x.numel()});
    const AxisSplit s = splitAt(x, axis);
    std::vector<std::int64_t> keep;
    for (std::int64_t k = 0; k < std::min(s.n, cond.numel()); ++k)
        if (cond.at(k) != 0) keep.push_back(k);
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = static_cast<std::int64_t>(keep.size());
    Tensor y = c.allocate(x.dtype(), out);
    const std::size_t row = static_cast<std::size_t>(s.inner) * dtypeSize(x.dtype());
    for (std::int64_t o = 0; o < s.outer; ++o)
        for (std::size_t j = 0; j < keep.size(); ++j)
            std::memcpy(static_cast<char*>(y.rawData()) + (static_cast<std::size_t>(o) * keep.size() + j) * row,
                        static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(o * s.n + keep[j]) * row, row);
    c.outputs[0] = std::move(y);
}

// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix of the last two
// axes, zeros elsewhere; k from the optional input 1.
void onnxTrilu(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs rank >= 2, got " + x.typeStr());
    const std::int64_t k = onnxIn(c, 1) ? onnxIn(c, 1)->intAt(0) : 0;
    const bool upper = c.op().intAttr("upper", 1) != 0;
    const std::int64_t rows = x.dim(x.ndim() - 2), cols = x.dim(x.ndim() - 1);
    Tensor y = Tensor::zeros(x.dtype(), x.shape(), c.ctx.pool.get());
    const std::size_t es = dtypeSize(x.dtype());
    const std::int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
    for (std::int64_t m = 0; m < mats; ++m)
        for (std::int64_t i = 0; i < rows; ++i)
            for (std::int64_t j = 0; j < cols; ++j)
                if (upper ? j - i >= k : j - i <= k) {
                    const std::size_t e = static_cast<std::size_t>((m * rows + i) * cols + j) * es;
                    std::memcpy(static_cast<char*>(y.rawData()) + e, static_cast<const char*>(x.rawData()) + e, es);
                }
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- shapes and generators

void onnxSize(KernelCall& c) {
    Tensor y = c.allocate(DType::Int64, {});
    y.data<std::int64_t>()[0] = c.in(0).numel();
    c.outputs[0] = std::move(y);
}

// Range: start, start + delta, ... below limit (above it for a negative delta), dtype of start.
void onnxRange(KernelCall& c) {
    const Tensor& start = c.in(0);
    const double s = start.at(0), l = c.in(1).at(0), d = c.in(2).at(0);
    if (d == 0) c.fail("delta is 0");
    const double count = std::max(std::ceil((l - s) / d), 0.0);
    if (!(count <= 1e9)) c.fail("Range of " + std::to_string(count) + " elements is too large");
    const auto n = static_cast<std::int64_t>(count);
    Tensor y = c.allocate(start.dtype(), {n});
    visitDType(start.dtype(), "Range", [&](auto z) {
        using T = decltype(z);
        const T s0 = static_cast<T>(s), d0 = static_cast<T>(d);
        T* yp = y.data<T>();
        for (std::int64_t i = 0; i < n; ++i) yp[i] = static_cast<T>(s0 + static_cast<T>(i) * d0);
    });
    c.outputs[0] = std::move(y);
}

// x copied into a new tensor of shape `view` (x's elements reinterpreted) with its axes
// permuted by `perm` (DepthToSpace, SpaceToDepth).
Tensor permutedCopy(const KernelCall& c, const Tensor& x, const Shape& view, const std::vector<int>& perm) {
    const auto vs = stridesOf(view);
    Shape out;
    std::vector<std::int64_t> st;
    for (int p : perm) {
        out.push_back(view[static_cast<std::size_t>(p)]);
        st.push_back(vs[static_cast<std::size_t>(p)]);
    }
    Tensor y = c.allocate(x.dtype(), out);
    stridedCopy(x.rawData(), st, y.rawData(), out, dtypeSize(x.dtype()));
    return y;
}

// A tensor of shape `out` whose element at position p is x's element at (src(a, p[a]))_a (each
// axis mapped on its own: Tile, Upsample).
template <class F> Tensor gatherPerAxis(const KernelCall& c, const Tensor& x, const Shape& out, F src) {
    Tensor y = c.allocate(x.dtype(), out);
    const auto xs = stridesOf(x.shape());
    const std::size_t es = dtypeSize(x.dtype());
    std::vector<std::int64_t> pos(out.size(), 0);
    for (std::int64_t e = 0; e < y.numel(); ++e, nextIndex(pos, out)) {
        std::int64_t off = 0;
        for (int a = 0; a < x.ndim(); ++a)
            off += src(a, pos[static_cast<std::size_t>(a)]) * xs[static_cast<std::size_t>(a)];
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(e) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(off) * es, es);
    }
    return y;
}

void onnxTile(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> reps = intsOf(needIn(c, 1));
    if (static_cast<int>(reps.size()) != x.ndim())
        c.fail("repeats has " + std::to_string(reps.size()) + " entries for " + x.typeStr());
    Shape out;
    for (int a = 0; a < x.ndim(); ++a) {
        if (reps[static_cast<std::size_t>(a)] < 0) c.fail("negative repeat");
        out.push_back(x.dim(a) * reps[static_cast<std::size_t>(a)]);
    }
    c.outputs[0] = gatherPerAxis(c, x, out, [&x](int a, std::int64_t p) { return p % x.dim(a); });
}

// DepthToSpace (mode DCR or CRD) and SpaceToDepth on NCHW, as the ONNX definitions' reshapes
// and transposes.
void onnxDepthToSpace(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::int64_t b = c.op().intAttr("blocksize", 0);
    if (x.ndim() != 4 || b <= 0 || x.dim(1) % (b * b))
        c.fail("needs an NCHW input with channels divisible by blocksize^2, got " + x.typeStr());
    const std::int64_t n = x.dim(0), ch = x.dim(1), h = x.dim(2), w = x.dim(3);
    const bool crd = c.op().str("mode") == "CRD";
    Tensor y = crd ? permutedCopy(c, x, {n, ch / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3})
                   : permutedCopy(c, x, {n, b, b, ch / (b * b), h, w}, {0, 3, 4, 1, 5, 2});
    c.outputs[0] = y.reshaped({n, ch / (b * b), h * b, w * b});
}

void onnxSpaceToDepth(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::int64_t b = c.op().intAttr("blocksize", 0);
    if (x.ndim() != 4 || b <= 0 || x.dim(2) % b || x.dim(3) % b)
        c.fail("needs an NCHW input with H and W divisible by blocksize, got " + x.typeStr());
    const std::int64_t n = x.dim(0), ch = x.dim(1), h = x.dim(2), w = x.dim(3);
    Tensor y = permutedCopy(c, x, {n, ch, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4});
    c.outputs[0] = y.reshaped({n, ch * b * b, h / b, w / b});
}

// EyeLike: ones on diagonal k of a matrix shaped like input 0; dtype attribute or input's.
void onnxEyeLike(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 2) c.fail("needs a 2-d input, got " + x.typeStr());
    DType dt = x.dtype();
    if (c.op().has("dtype")) {
        const auto d = onnxDType(c.op().intAttr("dtype", 1));
        if (!d) c.fail("unsupported dtype " + std::to_string(c.op().intAttr("dtype", 1)));
        dt = *d;
    }
    const std::int64_t k = c.op().intAttr("k", 0);
    Tensor y = Tensor::zeros(dt, x.shape(), c.ctx.pool.get());
    const double one = 1;
    const std::size_t es = dtypeSize(dt);
    for (std::int64_t i = 0; i < x.dim(0); ++i)
        if (i + k >= 0 && i + k < x.dim(1))
            convertElements(&one, DType::Float64,
                            static_cast<char*>(y.rawData()) + static_cast<std::size_t>(i * x.dim(1) + i + k) * es, dt,
                            1);
    c.outputs[0] = std::move(y);
}

void onnxCastLike(KernelCall& c) {
    const Tensor& x = c.in(0);
    const DType to = c.in(1).dtype();
    Tensor y = c.allocate(to, x.shape());
    convertElements(x.rawData(), x.dtype(), y.rawData(), to, y.numel());
    c.outputs[0] = std::move(y);
}

// Split along `axis`: sizes from input 1 (opset 13) or the `split` attribute, else equal parts
// (the last one smaller, opset 18) over the node's outputs.
void onnxSplit(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    std::vector<std::int64_t> sizes = attrInts(c, "split");
    if (const Tensor* t = onnxIn(c, 1)) sizes = intsOf(*t);
    const auto nOut = static_cast<std::int64_t>(c.outputs.size());
    const std::int64_t dim = x.dim(axis);
    if (sizes.empty()) {
        const std::int64_t part = (dim + nOut - 1) / nOut;
        for (std::int64_t i = 0; i < nOut; ++i) sizes.push_back(std::clamp<std::int64_t>(dim - i * part, 0, part));
    }
    if (static_cast<std::int64_t>(sizes.size()) != nOut ||
        std::accumulate(sizes.begin(), sizes.end(), std::int64_t(0)) != dim)
        c.fail("split sizes " + shapeStr(sizes) + " do not divide axis " + std::to_string(axis) + " of " + x.typeStr() +
               " into " + std::to_string(nOut) + " outputs");
    const AxisSplit s = splitAt(x, axis);
    const std::size_t es = dtypeSize(x.dtype());
    std::int64_t from = 0;
    for (std::int64_t i = 0; i < nOut; ++i) {
        Shape out = x.shape();
        out[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(i)];
        Tensor y = c.allocate(x.dtype(), out);
        const std::size_t chunk = static_cast<std::size_t>(sizes[static_cast<std::size_t>(i)] * s.inner) * es;
        for (std::int64_t o = 0; o < s.outer; ++o)
            std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o) * chunk,
                        static_cast<const char*>(x.rawData()) +
                            static_cast<std::size_t>((o * s.n + from) * s.inner) * es,
                        chunk);
        from += sizes[static_cast<std::size_t>(i)];
        c.outputs[static_cast<std::size_t>(i)] = std::move(y);
    }
}

// Dropout in inference: the input, and an all-true mask. Training mode with a ratio above 0
// draws a random mask, which the executor does not reproduce.
void onnxDropout(KernelCall& c) {
    const Tensor* training = onnxIn(c, 2);
    const double ratio = onnxIn(c, 1) ? onnxIn(c, 1)->at(0) : c.op().floatAttr("ratio", 0.5);
    if (training && training->at(0) != 0 && ratio > 0)
        c.fail("Dropout in training mode draws a random mask; only inference is supported");
    c.outputs[0] = c.in(0);
    if (c.outputs.size() > 1) {
        Tensor mask = c.allocate(DType::Bool, c.in(0).shape());
        std::memset(mask.rawData(), 1, mask.nbytes());
        c.outputs[1] = std::move(mask);
    }
}

// NonZero: int64 [rank, count] coordinates of the non-zero elements, in row-major order.
void onnxNonZero(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<std::int64_t> hits;
    for (std::int64_t e = 0; e < x.numel(); ++e)
        if (x.at(e) != 0) hits.push_back(e);
    const int r = x.ndim();
    const auto n = static_cast<std::int64_t>(hits.size());
    Tensor y = c.allocate(DType::Int64, {r, n});
    const auto xs = stridesOf(x.shape());
    for (std::int64_t j = 0; j < n; ++j)
        for (int a = 0; a < r; ++a)
            y.data<std::int64_t>()[a * n + j] =
                hits[static_cast<std::size_t>(j)] / xs[static_cast<std::size_t>(a)] % x.dim(a);
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

// Mod: fmod 0 takes the divisor's sign (integers, Python's %), fmod 1 the dividend's (C fmod).
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
    c.outputs[0] = wideBinary<std::int64_t>(c, DType::Int64, dt, [&c, cmod](std::int64_t a, std::int64_t b) {
        if (b == 0) c.fail("integer modulo by zero");
        const std::int64_t r = a % b;
        return !cmod && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
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
    c.outputs[0] =
        wideBinary<double>(c, DType::Float64, x.dtype(), [](double v, double k) { return v < 0 ? k * v : v; });
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

// ---------------------------------------------------------------- normalization and losses

// A float tensor's elements as doubles, and doubles stored back as `dt`.
Tensor storeDoubles(const KernelCall& c, const std::vector<double>& v, DType dt, const Shape& shape) {
    Tensor y = c.allocate(dt, shape);
    convertElements(v.data(), DType::Float64, y.rawData(), dt, y.numel());
    return y;
}

// Mean and population variance of n contiguous values (0 and 0 for none).
std::pair<double, double> meanVariance(const double* p, std::int64_t n) {
    double m = 0, v = 0;
    for (std::int64_t i = 0; i < n; ++i) m += p[i];
    m /= static_cast<double>(std::max<std::int64_t>(n, 1));
    for (std::int64_t i = 0; i < n; ++i) v += (p[i] - m) * (p[i] - m);
    return {m, v / static_cast<double>(std::max<std::int64_t>(n, 1))};
}

// LayerNormalization: each row of the axes from `axis` on normalised to mean 0 and variance 1
// (plus epsilon), times Scale plus B (broadcast to those axes); optional outputs Mean and
// InvStdDev with the normalised axes kept as 1 (float32 with stash_type 1).
void onnxLayerNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const double eps = c.op().floatAttr("epsilon", 1e-5);
    const Shape normShape(x.shape().begin() + axis, x.shape().end());
    const Tensor scale = broadcastToShape(c, needIn(c, 1), normShape, DType::Float64);
    const Tensor* bias = onnxIn(c, 2);
    const Tensor b = bias ? broadcastToShape(c, *bias, normShape, DType::Float64)
                          : Tensor::zeros(DType::Float64, normShape, c.ctx.pool.get());
    const std::vector<double> xv = x.toDoubles();
    const std::int64_t rows = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis)), n = shapeNumel(normShape);
    std::vector<double> y(xv.size()), mean(static_cast<std::size_t>(rows)), inv(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
        const double* p = xv.data() + r * n;
        const auto [m, v] = meanVariance(p, n);
        const double is = 1.0 / std::sqrt(v + eps);
        for (std::int64_t i = 0; i < n; ++i)
            y[static_cast<std::size_t>(r * n + i)] = (p[i] - m) * is * scale.data<double>()[i] + b.data<double>()[i];
        mean[static_cast<std::size_t>(r)] = m;
        inv[static_cast<std::size_t>(r)] = is;
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
    Shape statShape(x.shape().begin(), x.shape().begin() + axis);
    statShape.resize(x.shape().size(), 1);
    const DType statType = c.op().intAttr("stash_type", 1) == 1 ? DType::Float32 : x.dtype();
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, mean, statType, statShape);
    if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, inv, statType, statShape);
}

// InstanceNormalization: each (n, c) plane of an N x C x ... input normalised, times scale[c]
// plus B[c].
void onnxInstanceNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs rank >= 2, got " + x.typeStr());
    const double eps = c.op().floatAttr("epsilon", 1e-5);
    const std::vector<double> xv = x.toDoubles(), scale = c.in(1).toDoubles(), bias = c.in(2).toDoubles();
    const std::int64_t ch = x.dim(1), plane = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    if (static_cast<std::int64_t>(scale.size()) != ch || static_cast<std::int64_t>(bias.size()) != ch)
        c.fail("scale and B must have C elements");
    std::vector<double> y(xv.size());
    for (std::int64_t p = 0; p < x.dim(0) * ch; ++p) {
        const double* s = xv.data() + p * plane;
        const auto [m, v] = meanVariance(s, plane);
        const double k = scale[static_cast<std::size_t>(p % ch)] / std::sqrt(v + eps),
                     b = bias[static_cast<std::size_t>(p % ch)];
        for (std::int64_t i = 0; i < plane; ++i) y[static_cast<std::size_t>(p * plane + i)] = (s[i] - m) * k + b;
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
}

// The negative log-likelihood of log-probabilities `logp` (N x C x D, as doubles) at `target`
// (N x D), weighted per class and reduced as ONNX's NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss define it (their reference implementations in onnx/backend/test/case).
Tensor nllLoss(const KernelCall& c, const std::vector<double>& logp, const Shape& inShape, const Tensor& target,
               const Tensor* weight, DType dt) {
    if (inShape.size() < 2) c.fail("input needs rank >= 2");
    const std::int64_t n = inShape[0], ch = inShape[1], d = shapeNumel(Shape(inShape.begin() + 2, inShape.end()));
    if (target.numel() != n * d) c.fail("target " + target.typeStr() + " does not fit the input");
    std::string reduction = c.op().str("reduction");
    if (reduction.empty()) reduction = "mean";
    const bool hasIgnore = c.op().has("ignore_index");
    const std::int64_t ignore = c.op().intAttr("ignore_index", 0);
    const std::vector<double> w = weight ? weight->toDoubles() : std::vector<double>();
    std::vector<double> loss(static_cast<std::size_t>(n * d)), gw(loss.size(), 1.0);
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < d; ++j) {
            const std::size_t e = static_cast<std::size_t>(i * d + j);
            const std::int64_t t = target.intAt(static_cast<std::int64_t>(e));
            if (hasIgnore && t == ignore) {
                gw[e] = 0;
                continue;
            }
            if (t < 0 || t >= ch)
                c.fail("target " + std::to_string(t) + " out of range for " + std::to_string(ch) + " classes");
            if (weight) gw[e] = w[static_cast<std::size_t>(t)];
            loss[e] = -logp[static_cast<std::size_t>((i * ch + t) * d + j)] * gw[e];
        }
    if (reduction == "none") {
        Shape ts(inShape.begin(), inShape.end());
        ts.erase(ts.begin() + 1);
        return storeDoubles(c, loss, dt, ts);
    }
    double sum = 0, wsum = 0;
    for (std::size_t e = 0; e < loss.size(); ++e) {
        sum += loss[e];
        wsum += gw[e];
    }
    double r = sum;
    if (reduction == "mean")
        r = (weight || hasIgnore) ? sum / wsum : sum / static_cast<double>(loss.size());
    else if (reduction != "sum")
        c.fail("unsupported reduction '" + reduction + "'");
    return storeDoubles(c, {r}, dt, {});
}

void onnxNegativeLogLikelihoodLoss(KernelCall& c) {
    const Tensor& x = c.in(0);
    c.outputs[0] = nllLoss(c, x.toDoubles(), x.shape(), c.in(1), onnxIn(c, 2), x.dtype());
}

// SoftmaxCrossEntropyLoss: the NLL loss of log_softmax(scores) over axis 1; optional output
// log_prob.
void onnxSoftmaxCrossEntropyLoss(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("scores need rank >= 2, got " + x.typeStr());
    const std::vector<double> xv = x.toDoubles();
    const std::int64_t n = x.dim(0), ch = x.dim(1), d = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    std::vector<double> logp(xv.size());
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < d; ++j) {
            auto at = [&](std::int64_t k) { return static_cast<std::size_t>((i * ch + k) * d + j); };
            double m = -INFINITY, s = 0;
            for (std::int64_t k = 0; k < ch; ++k) m = std::max(m, xv[at(k)]);
            for (std::int64_t k = 0; k < ch; ++k) s += std::exp(xv[at(k)] - m);
            for (std::int64_t k = 0; k < ch; ++k) logp[at(k)] = xv[at(k)] - m - std::log(s);
        }
    c.outputs[0] = nllLoss(c, logp, x.shape(), c.in(1), onnxIn(c, 2), x.dtype());
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, logp, x.dtype(), x.shape());
}

// ---------------------------------------------------------------- pooling

// Geometry of an N-d pooling or convolution (ONNX MaxPool / AveragePool / Conv: auto_pad, pads,
// strides, dilations, ceil_mode), per spatial axis, for the kernel extents `kernel`.
struct PoolGeometry {
    std::vector<std::int64_t> in, kernel, stride, dilation, padBegin, padEnd, out;
};

PoolGeometry poolGeometry(const KernelCall& c, const Tensor& x, std::vector<std::int64_t> kernel) {
    const int sp = x.ndim() - 2;
    if (sp < 1) c.fail("needs an N x C x spatial input, got " + x.typeStr());
    PoolGeometry g;
    g.kernel = std::move(kernel);
    g.stride = attrInts(c, "strides", std::vector<std::int64_t>(static_cast<std::size_t>(sp), 1));
    g.dilation = attrInts(c, "dilations", std::vector<std::int64_t>(static_cast<std::size_t>(sp), 1));
    std::vector<std::int64_t> pads =
        attrInts(c, "pads", std::vector<std::int64_t>(2 * static_cast<std::size_t>(sp), 0));
    if (static_cast<int>(g.kernel.size()) != sp || static_cast<int>(g.stride.size()) != sp ||
        static_cast<int>(g.dilation.size()) != sp || static_cast<int>(pads.size()) != 2 * sp)
        c.fail("kernel_shape, strides, dilations or pads do not match " + std::to_string(sp) + " spatial axes");
    std::string autoPad = c.op().str("auto_pad");
    if (autoPad.empty()) autoPad = "NOTSET";
    const bool ceilMode = c.op().intAttr("ceil_mode", 0) != 0;
    for (int a = 0; a < sp; ++a) {
        const auto i = static_cast<std::size_t>(a);
        const std::int64_t n = x.dim(a + 2), s = g.stride[i], ext = (g.kernel[i] - 1) * g.dilation[i] + 1;
        if (s <= 0 || g.kernel[i] <= 0 || g.dilation[i] <= 0)
            c.fail("kernel_shape, strides and dilations must be positive");
        std::int64_t pb = pads[i], pe = pads[i + static_cast<std::size_t>(sp)], o;
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            o = (n + s - 1) / s;
            const std::int64_t total = std::max<std::int64_t>((o - 1) * s + ext - n, 0);
            pb = autoPad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
            pe = total - pb;
        } else if (autoPad == "VALID") {
            pb = pe = 0;
            o = std::max<std::int64_t>((n - ext) / s + 1, 0);
        } else {
            const std::int64_t span = n + pb + pe - ext;
            o = (ceilMode ? (span + s - 1) / s : span / s) + 1;
            if (ceilMode && (o - 1) * s >= n + pb)
                --o; // the last window must start inside the input or its left padding
            o = std::max<std::int64_t>(o, 0);
        }
        g.in.push_back(n);
        g.padBegin.push_back(pb);
        g.padEnd.push_back(pe);
        g.out.push_back(o);
    }
    return g;
}

// MaxPool (with the optional Indices output: flat input indices, row-major or, with
// storage_order 1, column-major over the spatial axes) and AveragePool (count_include_pad).
void onnxPool(KernelCall& c, bool isMax) {
    const Tensor& x = c.in(0);
    const PoolGeometry g = poolGeometry(c, x, attrInts(c, "kernel_shape"));
    const std::size_t sp = g.kernel.size();
    const bool includePad = c.op().intAttr("count_include_pad", 0) != 0,
               colMajor = c.op().intAttr("storage_order", 0) != 0;
    const std::int64_t planes = x.dim(0) * x.dim(1), inPlane = shapeNumel(g.in), outPlane = shapeNumel(g.out);
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(planes * outPlane));
    std::vector<double> idxOut(y.size());
    const Shape kernelShape(g.kernel.begin(), g.kernel.end()), outShape(g.out.begin(), g.out.end());
    const std::int64_t taps = shapeNumel(kernelShape);
    std::vector<std::int64_t> o(sp, 0), k(sp, 0);
    for (std::int64_t oe = 0; oe < outPlane; ++oe, nextIndex(o, outShape)) {
        for (std::int64_t p = 0; p < planes; ++p) {
            double best = -INFINITY, sum = 0;
            std::int64_t bestAt = -1, count = 0;
            std::fill(k.begin(), k.end(), 0);
            for (std::int64_t t = 0; t < taps; ++t, nextIndex(k, kernelShape)) {
                std::int64_t off = 0, colOff = 0, colStride = 1;
                bool inside = true, inPadded = true;
                for (std::size_t a = 0; a < sp; ++a) {
                    const std::int64_t pos = o[a] * g.stride[a] - g.padBegin[a] + k[a] * g.dilation[a];
                    if (pos < 0 || pos >= g.in[a]) inside = false;
                    if (pos >= g.in[a] + g.padEnd[a]) inPadded = false;
                    off = off * g.in[a] + pos;
                    colOff += pos * colStride;
                    colStride *= g.in[a];
                }
                if (includePad && inPadded) ++count;
                if (!inside) continue;
                if (!includePad) ++count;
                const double v = xv[static_cast<std::size_t>(p * inPlane + off)];
                sum += v;
                if (v > best || bestAt < 0) {
                    best = v;
                    bestAt = p * inPlane + (colMajor ? colOff : off);
                }
            }
            const auto e = static_cast<std::size_t>(p * outPlane + oe);
            y[e] = isMax ? best : (count ? sum / static_cast<double>(count) : 0.0);
            idxOut[e] = static_cast<double>(bestAt);
        }
    }
    Shape out = {x.dim(0), x.dim(1)};
    out.insert(out.end(), g.out.begin(), g.out.end());
    c.outputs[0] = storeDoubles(c, y, x.dtype(), out);
    if (isMax && c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, idxOut, DType::Int64, out);
}

// Direct N-d convolution of x (N x C x spatial) with w (M x C/group x kernel) as doubles, with
// groups, pads or auto_pad, strides and dilations (attributes of the node); `bias` per output
// channel or empty. Returns y and sets `outShape`.
std::vector<double> convNd(const KernelCall& c, const std::vector<double>& xv, const Tensor& x,
                           const std::vector<double>& wv, const Tensor& w, const std::vector<double>& bias,
                           Shape& outShape) {
    const std::int64_t group = c.op().intAttr("group", 1);
    if (w.ndim() != x.ndim() || group <= 0 || x.dim(1) % group || w.dim(1) * group != x.dim(1) || w.dim(0) % group)
        c.fail("weights " + w.typeStr() + " and group " + std::to_string(group) + " do not match input " + x.typeStr());
    const PoolGeometry g = poolGeometry(
        c, x, attrInts(c, "kernel_shape", std::vector<std::int64_t>(w.shape().begin() + 2, w.shape().end())));
    const std::size_t sp = g.kernel.size();
    const std::int64_t N = x.dim(0), M = w.dim(0), Cg = w.dim(1), Mg = M / group, inPlane = shapeNumel(g.in),
                       outPlane = shapeNumel(g.out);
    const Shape kernelShape(g.kernel.begin(), g.kernel.end()), spatialOut(g.out.begin(), g.out.end());
    const std::int64_t taps = shapeNumel(kernelShape);
    std::vector<double> y(static_cast<std::size_t>(N * M * outPlane));
    std::vector<std::int64_t> o(sp, 0), k(sp, 0), tapAt(static_cast<std::size_t>(taps));
    for (std::int64_t oe = 0; oe < outPlane; ++oe, nextIndex(o, spatialOut)) {
        // input offset of every tap of this output position (-1: padding)
        std::fill(k.begin(), k.end(), 0);
        for (std::int64_t t = 0; t < taps; ++t, nextIndex(k, kernelShape)) {
            std::int64_t off = 0;
            for (std::size_t a = 0; a < sp && off >= 0; ++a) {
                const std::int64_t pos = o[a] * g.stride[a] - g.padBegin[a] + k[a] * g.dilation[a];
                off = pos < 0 || pos >= g.in[a] ? -1 : off * g.in[a] + pos;
            }
            tapAt[static_cast<std::size_t>(t)] = off;
        }
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t m = 0; m < M; ++m) {
                const std::int64_t firstC = m / Mg * Cg;
                double s = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(m)];
                for (std::int64_t ci = 0; ci < Cg; ++ci) {
                    const double* xp = xv.data() + (n * x.dim(1) + firstC + ci) * inPlane;
                    const double* wp = wv.data() + (m * Cg + ci) * taps;
                    for (std::int64_t t = 0; t < taps; ++t)
                        if (tapAt[static_cast<std::size_t>(t)] >= 0)
                            s += xp[tapAt[static_cast<std::size_t>(t)]] * wp[t];
                }
                y[static_cast<std::size_t>((n * M + m) * outPlane + oe)] = s;
            }
    }
    outShape = {N, M};
    outShape.insert(outShape.end(), g.out.begin(), g.out.end());
    return y;
}

// Conv with 3 or more spatial axes (1-d and 2-d ones run on conv2d), accumulated in double.
void onnxConvNd(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 1);
    const Tensor* bias = onnxIn(c, 2);
    Shape out;
    const std::vector<double> y =
        convNd(c, x.toDoubles(), x, w.toDoubles(), w, bias ? bias->toDoubles() : std::vector<double>(), out);
    c.outputs[0] = storeDoubles(c, y, x.dtype(), out);
}

// ConvTranspose with 3 or more spatial axes (1-d and 2-d ones run on conv2d): each input
// element scattered through the kernel, with groups, strides, dilations, pads or auto_pad,
// output_padding and output_shape; accumulated in double.
void onnxConvTransposeNd(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 1);
    const Tensor* bias = onnxIn(c, 2);
    const std::int64_t group = c.op().intAttr("group", 1);
    const int sp = x.ndim() - 2;
    if (w.ndim() != x.ndim() || group <= 0 || x.dim(1) % group || w.dim(0) != x.dim(1))
        c.fail("weights " + w.typeStr() + " and group " + std::to_string(group) + " do not match input " + x.typeStr());
    const auto n = static_cast<std::size_t>(sp);
    const std::vector<std::int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    const auto stride = attrInts(c, "strides", std::vector<std::int64_t>(n, 1)),
               dil = attrInts(c, "dilations", std::vector<std::int64_t>(n, 1));
    const auto outPad = attrInts(c, "output_padding", std::vector<std::int64_t>(n, 0)),
               outShapeAttr = attrInts(c, "output_shape");
    auto pads = attrInts(c, "pads", std::vector<std::int64_t>(2 * n, 0));
    if (stride.size() != n || dil.size() != n || outPad.size() != n || pads.size() != 2 * n)
        c.fail("strides, dilations, output_padding or pads do not match " + x.typeStr());
    const std::string autoPad = c.op().str("auto_pad");
    std::vector<std::int64_t> in(n), out(n);
    for (std::size_t a = 0; a < n; ++a) {
        in[a] = x.dim(static_cast<int>(a) + 2);
        const std::int64_t full = stride[a] * (in[a] - 1) + outPad[a] + (kernel[a] - 1) * dil[a] + 1;
        const bool given = outShapeAttr.size() >= n;
        const std::int64_t target = given ? outShapeAttr[outShapeAttr.size() - n + a]
                                    : (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") ? in[a] * stride[a]
                                                                                           : -1;
        if (target >= 0) {
            const std::int64_t total = std::max<std::int64_t>(full - target, 0);
            pads[a] = autoPad == "SAME_LOWER" ? total - total / 2 : total / 2;
            pads[a + n] = total - pads[a];
        }
        out[a] = full - pads[a] - pads[a + n];
    }
    const std::int64_t N = x.dim(0), C = x.dim(1), Cg = C / group, Mg = w.dim(1), M = Mg * group;
    const Shape kernelShape(kernel.begin(), kernel.end()), inShape(in.begin(), in.end()),
        outSpatial(out.begin(), out.end());
    const std::int64_t taps = shapeNumel(kernelShape), inPlane = shapeNumel(inShape), outPlane = shapeNumel(outSpatial);
    const std::vector<double> xv = x.toDoubles(), wv = w.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(N * M * outPlane), 0.0);
    const auto os = stridesOf(outSpatial);
    std::vector<std::int64_t> ip(n, 0), k(n, 0);
    for (std::int64_t ie = 0; ie < inPlane; ++ie, nextIndex(ip, inShape)) {
        std::fill(k.begin(), k.end(), 0);
        for (std::int64_t t = 0; t < taps; ++t, nextIndex(k, kernelShape)) {
            std::int64_t off = 0;
            for (std::size_t a = 0; a < n && off >= 0; ++a) {
                const std::int64_t pos = ip[a] * stride[a] - pads[a] + k[a] * dil[a];
                off = pos < 0 || pos >= out[a] ? -1 : off + pos * os[a];
            }
            if (off < 0) continue;
            for (std::int64_t b = 0; b < N; ++b)
                for (std::int64_t ci = 0; ci < C; ++ci) {
                    const double v = xv[static_cast<std::size_t>((b * C + ci) * inPlane + ie)];
                    const std::int64_t g0 = ci / Cg;
                    for (std::int64_t m = 0; m < Mg; ++m)
                        y[static_cast<std::size_t>((b * M + g0 * Mg + m) * outPlane + off)] +=
                            v * wv[static_cast<std::size_t>((ci * Mg + m) * taps + t)];
                }
        }
    }
    if (bias)
        for (std::size_t e = 0; e < y.size(); ++e) y[e] += bias->at(static_cast<std::int64_t>(e) / outPlane % M);
    Shape shape = {N, M};
    shape.insert(shape.end(), out.begin(), out.end());
    c.outputs[0] = storeDoubles(c, y, x.dtype(), shape);
}

// ---------------------------------------------------------------- more element-wise and
// per-axis ops (ONNX definitions, computed in double)

void onnxIsNaN(KernelCall& c) {
    const Tensor& x = c.in(0);
    Tensor y = c.allocate(DType::Bool, x.shape());
    for (std::int64_t i = 0; i < x.numel(); ++i) y.data<std::uint8_t>()[i] = std::isnan(x.at(i));
    c.outputs[0] = std::move(y);
}

// For every element of `shape`, the index of its group when the flagged axes are reduced.
std::vector<std::int64_t> reductionGroups(const Shape& shape, const std::vector<bool>& red, std::int64_t& groups) {
    Shape kept;
    for (std::size_t a = 0; a < shape.size(); ++a) kept.push_back(red[a] ? 1 : shape[a]);
    groups = shapeNumel(kept);
    const auto ks = stridesOf(kept);
    std::vector<std::int64_t> g(static_cast<std::size_t>(shapeNumel(shape)));
    std::vector<std::int64_t> pos(shape.size(), 0);
    for (std::size_t e = 0; e < g.size(); ++e, nextIndex(pos, shape)) {
        std::int64_t k = 0;
        for (std::size_t a = 0; a < shape.size(); ++a) k += red[a] ? 0 : pos[a] * ks[a];
        g[e] = k;
    }
    return g;
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default 0, 2, 3).
void onnxMeanVarianceNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<bool> red(static_cast<std::size_t>(x.ndim()), false);
    for (auto a : attrInts(c, "axes", {0, 2, 3})) red[static_cast<std::size_t>(normAxis(c, a, x.ndim()))] = true;
    std::int64_t groups = 0;
    const std::vector<std::int64_t> g = reductionGroups(x.shape(), red, groups);
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> sum(static_cast<std::size_t>(groups)), sq(sum.size()), cnt(sum.size());
    for (std::size_t e = 0; e < xv.size(); ++e) {
        const auto k = static_cast<std::size_t>(g[e]);
        sum[k] += xv[e];
        sq[k] += xv[e] * xv[e];
        cnt[k] += 1;
    }
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < xv.size(); ++e) {
        const auto k = static_cast<std::size_t>(g[e]);
        const double m = sum[k] / cnt[k];
        y[e] = (xv[e] - m) / (std::sqrt(std::max(sq[k] / cnt[k] - m * m, 0.0)) + 1e-9);
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
}

// LRN across channels: x / (bias + alpha / size * sum of squares of the `size` neighbours)^beta.
void onnxLRN(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs an N x C x ... input, got " + x.typeStr());
    const double alpha = c.op().floatAttr("alpha", 1e-4), beta = c.op().floatAttr("beta", 0.75),
                 bias = c.op().floatAttr("bias", 1.0);
    const std::int64_t size = c.op().intAttr("size", 1), ch = x.dim(1),
                       inner = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> y(xv.size());
    for (std::int64_t n = 0; n < x.dim(0); ++n)
        for (std::int64_t k = 0; k < ch; ++k)
            for (std::int64_t i = 0; i < inner; ++i) {
                double s = 0;
                for (std::int64_t j = std::max<std::int64_t>(0, k - (size - 1) / 2);
                     j <= std::min(ch - 1, k + size / 2); ++j) {
                    const double v = xv[static_cast<std::size_t>((n * ch + j) * inner + i)];
                    s += v * v;
                }
                const auto e = static_cast<std::size_t>((n * ch + k) * inner + i);
                y[e] = xv[e] / std::pow(bias + alpha / static_cast<double>(size) * s, beta);
            }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
}

// ReverseSequence: for batch b, the first sequence_lens[b] steps along time_axis reversed.
void onnxReverseSequence(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<std::int64_t> lens = intsOf(c.in(1));
    const int batchAxis = normAxis(c, c.op().intAttr("batch_axis", 1), x.ndim()),
              timeAxis = normAxis(c, c.op().intAttr("time_axis", 0), x.ndim());
    if (static_cast<std::int64_t>(lens.size()) != x.dim(batchAxis))
        c.fail("sequence_lens must have one entry per batch");
    Tensor y = c.allocate(x.dtype(), x.shape());
    const auto xs = stridesOf(x.shape());
    const std::size_t es = dtypeSize(x.dtype());
    std::vector<std::int64_t> pos(static_cast<std::size_t>(x.ndim()), 0);
    for (std::int64_t e = 0; e < x.numel(); ++e, nextIndex(pos, x.shape())) {
        const std::int64_t t = pos[static_cast<std::size_t>(timeAxis)],
                           len = lens[static_cast<std::size_t>(pos[static_cast<std::size_t>(batchAxis)])];
        const std::int64_t src = e + (t < len ? (len - 1 - 2 * t) * xs[static_cast<std::size_t>(timeAxis)] : 0);
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(e) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(src) * es, es);
    }
    c.outputs[0] = std::move(y);
}

// Det of each M x M matrix of the last two axes (LU with partial pivoting).
void onnxDet(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2 || x.dim(x.ndim() - 1) != x.dim(x.ndim() - 2)) c.fail("needs square matrices, got " + x.typeStr());
    const std::int64_t m = x.dim(x.ndim() - 1), mats = m ? x.numel() / (m * m) : 0;
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> det(static_cast<std::size_t>(mats));
    for (std::int64_t b = 0; b < mats; ++b) {
        std::vector<double> a(xv.begin() + b * m * m, xv.begin() + (b + 1) * m * m);
        double d = 1;
        for (std::int64_t k = 0; k < m && d != 0; ++k) {
            std::int64_t p = k;
            for (std::int64_t i = k + 1; i < m; ++i)
                if (std::fabs(a[static_cast<std::size_t>(i * m + k)]) >
                    std::fabs(a[static_cast<std::size_t>(p * m + k)]))
                    p = i;
            if (p != k) {
                for (std::int64_t j = 0; j < m; ++j)
                    std::swap(a[static_cast<std::size_t>(k * m + j)], a[static_cast<std::size_t>(p * m + j)]);
                d = -d;
            }
            const double piv = a[static_cast<std::size_t>(k * m + k)];
            d *= piv;
            if (piv == 0) break;
            for (std::int64_t i = k + 1; i < m; ++i) {
                const double f = a[static_cast<std::size_t>(i * m + k)] / piv;
                for (std::int64_t j = k; j < m; ++j)
                    a[static_cast<std::size_t>(i * m + j)] -= f * a[static_cast<std::size_t>(k * m + j)];
            }
        }
        det[static_cast<std::size_t>(b)] = d;
    }
    c.outputs[0] = storeDoubles(c, det, x.dtype(), Shape(x.shape().begin(), x.shape().end() - 2));
}

// HannWindow, HammingWindow, BlackmanWindow: sum of a_k cos(2 pi k n / N') with N' = size when
// `periodic` (default), size - 1 otherwise; dtype from output_datatype (default float32).
KernelFn onnxWindow(std::vector<double> coeffs) {
    return [coeffs](KernelCall& c) {
        const std::int64_t n = scalarInt(c, 0);
        if (n < 0) c.fail("negative window size");
        const auto dt = onnxDType(c.op().intAttr("output_datatype", 1));
        if (!dt) c.fail("unsupported output_datatype");
        const double denom = c.op().intAttr("periodic", 1) ? static_cast<double>(n) : static_cast<double>(n - 1);
        std::vector<double> w(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i)
            for (std::size_t k = 0; k < coeffs.size(); ++k)
                w[static_cast<std::size_t>(i)] +=
                    coeffs[k] * std::cos(2.0 * M_PI * static_cast<double>(k) * static_cast<double>(i) / denom);
        c.outputs[0] = storeDoubles(c, w, *dt, {n});
    };
}

// Unique: the distinct elements (or slices along `axis`), sorted or in order of first
// occurrence, with the optional outputs indices, inverse_indices and counts (int64).
void onnxUnique(KernelCall& c) {
    Tensor x = c.in(0);
    const bool hasAxis = c.op().has("axis");
    const int axis = hasAxis ? normAxis(c, c.op().intAttr("axis", 0), x.ndim()) : 0;
    if (!hasAxis) x = x.reshaped({x.numel()});
    const AxisSplit s = splitAt(x, axis);
    const std::vector<double> xv = x.toDoubles();
    auto slice = [&](std::int64_t k) {
        std::vector<double> v;
        for (std::int64_t o = 0; o < s.outer; ++o)
            for (std::int64_t i = 0; i < s.inner; ++i)
                v.push_back(xv[static_cast<std::size_t>((o * s.n + k) * s.inner + i)]);
        return v;
    };
    std::vector<std::vector<double>> slices;
    for (std::int64_t k = 0; k < s.n; ++k) slices.push_back(slice(k));
    std::vector<std::int64_t> firsts; // first occurrence of each distinct slice, in order of appearance
    std::vector<std::int64_t> inverse(static_cast<std::size_t>(s.n));
    std::map<std::vector<double>, std::int64_t> seen;
    for (std::int64_t k = 0; k < s.n; ++k) {
        auto [it, fresh] = seen.emplace(slices[static_cast<std::size_t>(k)], static_cast<std::int64_t>(firsts.size()));
        if (fresh) firsts.push_back(k);
        inverse[static_cast<std::size_t>(k)] = it->second;
    }
    std::vector<std::int64_t> order(firsts.size());
    std::iota(order.begin(), order.end(), 0);
    if (c.op().intAttr("sorted", 1))
        std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
            return slices[static_cast<std::size_t>(firsts[static_cast<std::size_t>(a)])] <
                   slices[static_cast<std::size_t>(firsts[static_cast<std::size_t>(b)])];
        });
    std::vector<std::int64_t> rank(order.size());
    for (std::size_t r = 0; r < order.size(); ++r)
        rank[static_cast<std::size_t>(order[r])] = static_cast<std::int64_t>(r);
    const auto u = static_cast<std::int64_t>(order.size());
    std::vector<double> yv(static_cast<std::size_t>(s.outer * u * s.inner)), idx, inv,
        counts(static_cast<std::size_t>(u));
    for (std::int64_t r = 0; r < u; ++r) {
        const std::int64_t k = firsts[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])];
        idx.push_back(static_cast<double>(k));
        for (std::int64_t o = 0; o < s.outer; ++o)
            for (std::int64_t i = 0; i < s.inner; ++i)
                yv[static_cast<std::size_t>((o * u + r) * s.inner + i)] =
                    xv[static_cast<std::size_t>((o * s.n + k) * s.inner + i)];
    }
    for (std::int64_t k = 0; k < s.n; ++k) {
        const std::int64_t r = rank[static_cast<std::size_t>(inverse[static_cast<std::size_t>(k)])];
        inv.push_back(static_cast<double>(r));
        counts[static_cast<std::size_t>(r)] += 1;
    }
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = u;
    c.outputs[0] = storeDoubles(c, yv, x.dtype(), out);
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, idx, DType::Int64, {u});
    if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, inv, DType::Int64, {s.n});
    if (c.outputs.size() > 3) c.outputs[3] = storeDoubles(c, counts, DType::Int64, {u});
}

// ---------------------------------------------------------------- quantization

// A quantization parameter for each element of x: per tensor (scalar) or per `axis` (1-d).
std::vector<double> perAxis(const KernelCall& c, const Tensor* p, const Tensor& x, double dflt) {
    std::vector<double> v(static_cast<std::size_t>(x.numel()), dflt);
    if (!p) return v;
    if (p->numel() == 1) {
        std::fill(v.begin(), v.end(), p->at(0));
        return v;
    }
    const int axis = normAxis(c, c.op().intAttr("axis", 1), x.ndim());
    const AxisSplit s = splitAt(x, axis);
    if (p->numel() != s.n)
        c.fail("scale / zero point " + p->typeStr() + " does not match axis " + std::to_string(axis) + " of " +
               x.typeStr());
    for (std::size_t e = 0; e < v.size(); ++e) v[e] = p->at(static_cast<std::int64_t>(e) / s.inner % s.n);
    return v;
}

double saturate(double v, DType dt) {
    const double lo = dt == DType::Int8    ? -128
                      : dt == DType::UInt8 ? 0
                      : dt == DType::Int32 ? -2147483648.0
                                           : -INFINITY;
    const double hi = dt == DType::Int8 ? 127 : dt == DType::UInt8 ? 255 : dt == DType::Int32 ? 2147483647.0 : INFINITY;
    return std::clamp(v, lo, hi);
}

// QuantizeLinear: saturate(round_half_even(x / scale) + zero_point), uint8 unless the zero
// point says otherwise.
void onnxQuantizeLinear(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor* zp = onnxIn(c, 2);
    const DType dt = zp ? zp->dtype() : DType::UInt8;
    const std::vector<double> scale = perAxis(c, &needIn(c, 1), x, 1.0), zero = perAxis(c, zp, x, 0.0),
                              xv = x.toDoubles();
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e) y[e] = saturate(std::nearbyint(xv[e] / scale[e]) + zero[e], dt);
    c.outputs[0] = storeDoubles(c, y, dt, x.shape());
}

// DequantizeLinear: (x - zero_point) * scale, float32.
void onnxDequantizeLinear(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::vector<double> scale = perAxis(c, &needIn(c, 1), x, 1.0), zero = perAxis(c, onnxIn(c, 2), x, 0.0),
                              xv = x.toDoubles();
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e) y[e] = (xv[e] - zero[e]) * scale[e];
    c.outputs[0] = storeDoubles(c, y, needIn(c, 1).dtype(), x.shape());
}

// DynamicQuantizeLinear: uint8 quantization over [min(0, min x), max(0, max x)]; outputs y,
// the float32 scale and the uint8 zero point.
void onnxDynamicQuantizeLinear(KernelCall& c) {
    const std::vector<double> xv = c.in(0).toDoubles();
    double lo = 0, hi = 0;
    for (double v : xv) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    // float32 arithmetic, as the reference computes it on float32 values
    const float scale = static_cast<float>(hi - lo) / 255.0f;
    const double zp = scale == 0 ? 0 : saturate(std::nearbyint(static_cast<float>(-lo) / scale), DType::UInt8);
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e)
        y[e] = scale == 0 ? zp : saturate(std::nearbyint(static_cast<float>(xv[e]) / scale) + zp, DType::UInt8);
    c.outputs[0] = storeDoubles(c, y, DType::UInt8, c.in(0).shape());
    if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, {scale}, DType::Float32, {});
    if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, {zp}, DType::UInt8, {});
}

// MatMulInteger of 2-d A and B: (A - a_zero_point) x (B - b_zero_point) in int32 (zero points
// per tensor, per row of A or per column of B).
void onnxMatMulInteger(KernelCall& c) {
    const Tensor& a = c.in(0);
    const Tensor& b = c.in(1);
    if (a.ndim() != 2 || b.ndim() != 2 || a.dim(1) != b.dim(0))
        c.fail("needs 2-d operands with matching inner dims, got " + a.typeStr() + " and " + b.typeStr());
    const std::int64_t m = a.dim(0), k = a.dim(1), n = b.dim(1);
    const Tensor* az = onnxIn(c, 2);
    const Tensor* bz = onnxIn(c, 3);
    Tensor y = c.allocate(DType::Int32, {m, n});
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t s = 0;
            const std::int64_t za = az ? az->intAt(az->numel() == 1 ? 0 : i) : 0,
                               zb = bz ? bz->intAt(bz->numel() == 1 ? 0 : j) : 0;
            for (std::int64_t t = 0; t < k; ++t) s += (a.intAt(i * k + t) - za) * (b.intAt(t * n + j) - zb);
            y.data<std::int32_t>()[i * n + j] = static_cast<std::int32_t>(s);
        }
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- Einsum

// Einsum over any number of operands: explicit ("ij,jk->ik") or implicit output (the labels
// used once, in alphabetical order), "..." for broadcast leading dims, repeated labels in one
// term for diagonals. Every combination of label values is visited (sums in double).
void onnxEinsum(KernelCall& c) {
    std::string eq;
    for (char ch : c.op().str("equation"))
        if (ch != ' ') eq += ch;
    const std::size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t from = 0;;) {
        const std::size_t comma = lhs.find(',', from);
        terms.push_back(lhs.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    if (static_cast<int>(terms.size()) != c.nin())
        c.fail("equation '" + eq + "' has " + std::to_string(terms.size()) + " terms for " + std::to_string(c.nin()) +
               " inputs");
    // "..." becomes the labels '0'.. '9' of the broadcast dims, right-aligned over the operands
    int ellipsisDims = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const std::string& t = terms[static_cast<std::size_t>(i)];
        if (t.find("...") != std::string::npos)
            ellipsisDims = std::max(ellipsisDims, c.in(i).ndim() - static_cast<int>(t.size() - 3));
    }
    if (ellipsisDims > 10) c.fail("too many dims under '...'");
    auto expand = [&](const std::string& t, int rank) {
        const std::size_t p = t.find("...");
        if (p == std::string::npos) return t;
        const int n = rank < 0 ? ellipsisDims : rank - static_cast<int>(t.size() - 3);
        std::string e;
        for (int k = ellipsisDims - n; k < ellipsisDims; ++k) e += static_cast<char>('0' + k);
        return t.substr(0, p) + e + t.substr(p + 3);
    };
    for (int i = 0; i < c.nin(); ++i)
        terms[static_cast<std::size_t>(i)] = expand(terms[static_cast<std::size_t>(i)], c.in(i).ndim());
    std::string outTerm;
    if (arrow != std::string::npos) {
        outTerm = expand(eq.substr(arrow + 2), -1);
    } else {
        std::map<char, int> uses;
        for (const std::string& t : terms)
            for (char ch : t) ++uses[ch];
        for (int k = 0; k < ellipsisDims; ++k) outTerm += static_cast<char>('0' + k);
        for (const auto& [ch, n] : uses)
            if (n == 1 && !std::isdigit(static_cast<unsigned char>(ch))) outTerm += ch;
    }
    std::map<char, std::int64_t> size;
    for (int i = 0; i < c.nin(); ++i) {
        const std::string& t = terms[static_cast<std::size_t>(i)];
        if (static_cast<int>(t.size()) != c.in(i).ndim())
            c.fail("term '" + t + "' does not match " + c.in(i).typeStr());
        for (std::size_t a = 0; a < t.size(); ++a) {
            const std::int64_t d = c.in(i).dim(static_cast<int>(a));
            auto [it, fresh] = size.emplace(t[a], d);
            if (!fresh && it->second != d) {
                if (it->second == 1)
                    it->second = d;
                else if (d != 1)
                    c.fail("label '" + std::string(1, t[a]) + "' has sizes " + std::to_string(it->second) + " and " +
                           std::to_string(d));
            }
        }
    }
    std::string labels = outTerm;
    for (const auto& [ch, d] : size)
        if (outTerm.find(ch) == std::string::npos) labels += ch;
    Shape dims;
    for (char ch : labels) {
        if (!size.count(ch)) c.fail("output label '" + std::string(1, ch) + "' is not in the inputs");
        dims.push_back(size[ch]);
    }
    // per operand: for each label position, the stride of that label in the operand (0 if absent
    // or broadcast)
    std::vector<std::vector<std::int64_t>> strides;
    std::vector<std::vector<double>> vals;
    for (int i = 0; i < c.nin(); ++i) {
        const std::string& t = terms[static_cast<std::size_t>(i)];
        const auto st = stridesOf(c.in(i).shape());
        std::vector<std::int64_t> s(labels.size(), 0);
        for (std::size_t a = 0; a < t.size(); ++a)
            if (c.in(i).dim(static_cast<int>(a)) != 1) s[labels.find(t[a])] += st[a];
        strides.push_back(s);
        vals.push_back(c.in(i).toDoubles());
    }
    const Shape outShape(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(outTerm.size()));
    const std::int64_t outN = shapeNumel(outShape), total = shapeNumel(dims);
    if (total > (std::int64_t(1) << 32))
        c.fail("Einsum over " + std::to_string(total) + " label combinations is too large");
    std::vector<double> y(static_cast<std::size_t>(outN), 0.0);
    const std::int64_t inner = outN ? total / outN : 0;
    std::vector<std::int64_t> pos(dims.size(), 0);
    for (std::int64_t e = 0; e < total; ++e, nextIndex(pos, dims)) {
        double p = 1;
        for (std::size_t i = 0; i < vals.size(); ++i) {
            std::int64_t off = 0;
            for (std::size_t a = 0; a < dims.size(); ++a) off += pos[a] * strides[i][a];
            p *= vals[i][static_cast<std::size_t>(off)];
        }
        y[static_cast<std::size_t>(e / inner)] += p;
    }
    c.outputs[0] = storeDoubles(c, y, c.in(0).dtype(), outShape);
}

// An ONNX RNN activation by name (the ones the RNN, GRU and LSTM definitions list), with
// alpha and beta where it takes them.
std::function<double(double)> rnnActivation(const KernelCall& c, const std::string& name, double alpha, double beta) {
    if (name == "Tanh") return [](double x) { return std::tanh(x); };
    if (name == "Sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    if (name == "Relu") return [](double x) { return std::max(x, 0.0); };
    if (name == "Affine") return [alpha, beta](double x) { return alpha * x + beta; };
    if (name == "LeakyRelu") return [alpha](double x) { return x >= 0 ? x : alpha * x; };
    if (name == "ThresholdedRelu") return [alpha](double x) { return x > alpha ? x : 0.0; };
    if (name == "ScaledTanh") return [alpha, beta](double x) { return alpha * std::tanh(beta * x); };
    if (name == "HardSigmoid") return [alpha, beta](double x) { return std::clamp(alpha * x + beta, 0.0, 1.0); };
    if (name == "Elu") return [alpha](double x) { return x >= 0 ? x : alpha * (std::exp(x) - 1.0); };
    if (name == "Softsign") return [](double x) { return x / (1.0 + std::fabs(x)); };
    if (name == "Softplus") return [](double x) { return std::log(std::exp(x) + 1.0); };
    c.fail("unsupported activation '" + name + "'");
}

// ONNX RNN (gates = 1) and GRU (gates = 3, order z, r, h; linear_before_reset): any direction,
// layout 0 or 1, sequence_lens, clip, activations with their alpha and beta; computed in double.
void onnxRecurrent(KernelCall& c, int gates) {
    const Tensor* X = onnxIn(c, 0);
    const Tensor* W = onnxIn(c, 1);
    const Tensor* R = onnxIn(c, 2);
    if (!X || !W || !R) c.fail("needs X, W and R");
    const Tensor* B = onnxIn(c, 3);
    const Tensor* seqLens = onnxIn(c, 4);
    const Tensor* h0 = onnxIn(c, 5);
    const std::string dir = c.op().has("direction") ? c.op().str("direction") : "forward";
    const int dirs = dir == "bidirectional" ? 2 : 1;
    const bool batchFirst = c.op().intAttr("layout", 0) == 1,
               linearBeforeReset = c.op().intAttr("linear_before_reset", 0) != 0;
    const double clip = c.op().floatAttr("clip", 0.0);
    if (X->ndim() != 3 || W->ndim() != 3 || R->ndim() != 3) c.fail("X, W and R must be 3-d");
    const std::int64_t T = batchFirst ? X->dim(1) : X->dim(0), Bt = batchFirst ? X->dim(0) : X->dim(1), I = X->dim(2),
                       H = R->dim(2);
    if (W->dim(0) != dirs || W->dim(1) != gates * H || W->dim(2) != I || R->dim(1) != gates * H)
        c.fail("W " + W->typeStr() + " or R " + R->typeStr() + " does not match X " + X->typeStr());
    if (B && B->numel() != dirs * 2 * gates * H) c.fail("B " + B->typeStr() + " does not match");
    if (h0 && h0->numel() != dirs * Bt * H) c.fail("initial_h " + h0->typeStr() + " does not match");
    // activations per direction: f (and g for GRU)
    const int perDir = gates == 1 ? 1 : 2;
    std::vector<std::string> names;
    if (c.op().has("activations"))
        for (const auto& e : c.op().attrs()["activations"]) names.push_back(e.get<std::string>());
    std::vector<double> alphas, betas;
    if (c.op().has("activation_alpha"))
        for (const auto& e : c.op().attrs()["activation_alpha"]) alphas.push_back(e.get<double>());
    if (c.op().has("activation_beta"))
        for (const auto& e : c.op().attrs()["activation_beta"]) betas.push_back(e.get<double>());
    std::vector<std::function<double(double)>> acts;
    for (int k = 0; k < dirs * perDir; ++k) {
        const auto i = static_cast<std::size_t>(k);
        const std::string name = i < names.size() ? names[i] : (gates == 1 ? "Tanh" : (k % 2 ? "Tanh" : "Sigmoid"));
        acts.push_back(rnnActivation(c, name, i < alphas.size() ? alphas[i] : 0.01, i < betas.size() ? betas[i] : 0.0));
    }
    const std::vector<double> xv = X->toDoubles(), wv = W->toDoubles(), rv = R->toDoubles(),
                              h0v = h0 ? h0->toDoubles() : std::vector<double>();
    const std::vector<double> bv =
        B ? B->toDoubles() : std::vector<double>(static_cast<std::size_t>(dirs * 2 * gates * H), 0.0);
    std::vector<double> Y(static_cast<std::size_t>(T * dirs * Bt * H), 0.0),
        Yh(static_cast<std::size_t>(dirs * Bt * H), 0.0);
    auto cl = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
    for (int d = 0; d < dirs; ++d) {
        const bool reverse = dir == "reverse" || d == 1;
        const double* Wd = wv.data() + d * gates * H * I;
        const double* Rd = rv.data() + d * gates * H * H;
        const double* Wb = bv.data() + d * 2 * gates * H;
        const double* Rb = Wb + gates * H;
        const auto& f = acts[static_cast<std::size_t>(d * perDir)];
        const auto& g = acts[static_cast<std::size_t>(d * perDir + perDir - 1)];
        for (std::int64_t b = 0; b < Bt; ++b) {
            std::vector<double> h(static_cast<std::size_t>(H), 0.0), hn(h.size());
            if (h0) h.assign(h0v.begin() + (d * Bt + b) * H, h0v.begin() + (d * Bt + b + 1) * H);
            const std::int64_t len = seqLens ? seqLens->intAt(b) : T;
            for (std::int64_t step = 0; step < len; ++step) {
                const std::int64_t t = reverse ? len - 1 - step : step;
                const double* x = xv.data() + (batchFirst ? b * T + t : t * Bt + b) * I;
                // xw[k], hr[k]: X and H times gate row k (plus biases)
                auto xw = [&](std::int64_t k) {
                    double s = Wb[k];
                    for (std::int64_t i = 0; i < I; ++i) s += x[i] * Wd[k * I + i];
                    return s;
                };
                auto hr = [&](std::int64_t k, const std::vector<double>& hv) {
                    double s = 0;
                    for (std::int64_t i = 0; i < H; ++i) s += hv[static_cast<std::size_t>(i)] * Rd[k * H + i];
                    return s;
                };
                if (gates == 1) {
                    for (std::int64_t j = 0; j < H; ++j)
                        hn[static_cast<std::size_t>(j)] = f(cl(xw(j) + hr(j, h) + Rb[j]));
                } else {
                    std::vector<double> z(static_cast<std::size_t>(H)), r(z.size()), rh(z.size());
                    for (std::int64_t j = 0; j < H; ++j) {
                        z[static_cast<std::size_t>(j)] = f(cl(xw(j) + hr(j, h) + Rb[j]));
                        r[static_cast<std::size_t>(j)] = f(cl(xw(H + j) + hr(H + j, h) + Rb[H + j]));
                    }
                    for (std::int64_t j = 0; j < H; ++j)
                        rh[static_cast<std::size_t>(j)] =
                            r[static_cast<std::size_t>(j)] * h[static_cast<std::size_t>(j)];
                    for (std::int64_t j = 0; j < H; ++j) {
                        const std::int64_t k = 2 * H + j;
                        const double pre = linearBeforeReset
                                               ? xw(k) + r[static_cast<std::size_t>(j)] * (hr(k, h) + Rb[k])
                                               : xw(k) + hr(k, rh) + Rb[k];
                        const double hh = g(cl(pre)), zz = z[static_cast<std::size_t>(j)];
                        hn[static_cast<std::size_t>(j)] = (1 - zz) * hh + zz * h[static_cast<std::size_t>(j)];
                    }
                }
                h = hn;
                std::copy(h.begin(), h.end(), Y.begin() + ((t * dirs + d) * Bt + b) * H);
            }
            std::copy(h.begin(), h.end(), Yh.begin() + (d * Bt + b) * H);
        }
    }
    const DType dt = X->dtype();
    if (c.node.nout() > 0) {
        if (!batchFirst) {
            c.outputs[0] = storeDoubles(c, Y, dt, {T, dirs, Bt, H});
        } else {
            std::vector<double> yb(Y.size());
            for (std::int64_t t = 0; t < T; ++t)
                for (int d = 0; d < dirs; ++d)
                    for (std::int64_t b = 0; b < Bt; ++b)
                        std::copy_n(Y.begin() + ((t * dirs + d) * Bt + b) * H, H,
                                    yb.begin() + ((b * T + t) * dirs + d) * H);
            c.outputs[0] = storeDoubles(c, yb, dt, {Bt, T, dirs, H});
        }
    }
    if (c.node.nout() > 1) {
        if (!batchFirst) {
            c.outputs[1] = storeDoubles(c, Yh, dt, {dirs, Bt, H});
        } else {
            std::vector<double> hb(Yh.size());
            for (int d = 0; d < dirs; ++d)
                for (std::int64_t b = 0; b < Bt; ++b)
                    std::copy_n(Yh.begin() + (d * Bt + b) * H, H, hb.begin() + (b * dirs + d) * H);
            c.outputs[1] = storeDoubles(c, hb, dt, {Bt, dirs, H});
        }
    }
}

// ---------------------------------------------------------------- detection and sampling

// NonMaxSuppression: per batch and class, boxes by descending score (above score_threshold),
// each kept unless its IoU with a kept box exceeds iou_threshold, at most
// max_output_boxes_per_class; int64 rows [batch, class, box].
void onnxNonMaxSuppression(KernelCall& c) {
    const Tensor& boxes = c.in(0);
    const Tensor& scores = c.in(1);
    if (boxes.ndim() != 3 || boxes.dim(2) != 4 || scores.ndim() != 3 || scores.dim(0) != boxes.dim(0) ||
        scores.dim(2) != boxes.dim(1))
        c.fail("boxes " + boxes.typeStr() + " and scores " + scores.typeStr() + " do not match");
    const std::int64_t maxOut = onnxIn(c, 2) && onnxIn(c, 2)->numel() ? onnxIn(c, 2)->intAt(0) : 0;
    const double iouMax = onnxIn(c, 3) && onnxIn(c, 3)->numel() ? onnxIn(c, 3)->at(0) : 0.0;
    const Tensor* st = onnxIn(c, 4);
    const bool hasScoreMin = st && st->numel();
    const double scoreMin = hasScoreMin ? st->at(0) : 0.0;
    const bool center = c.op().intAttr("center_point_box", 0) != 0;
    const std::vector<double> bv = boxes.toDoubles(), sv = scores.toDoubles();
    const std::int64_t nb = boxes.dim(0), nc = scores.dim(1), n = boxes.dim(1);
    // box i of batch b as y1, x1, y2, x2 with y1 <= y2, x1 <= x2
    auto corners = [&](std::int64_t b, std::int64_t i) {
        const double* p = bv.data() + (b * n + i) * 4;
        std::array<double, 4> r;
        if (center)
            r = {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
        else
            r = {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
        return r;
    };
    auto iou = [](const std::array<double, 4>& a, const std::array<double, 4>& b) {
        const double ih = std::min(a[2], b[2]) - std::max(a[0], b[0]), iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
        if (ih <= 0 || iw <= 0) return 0.0;
        const double inter = ih * iw, uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
        return uni > 0 ? inter / uni : 0.0;
    };
    std::vector<double> rows;
    for (std::int64_t b = 0; b < nb; ++b)
        for (std::int64_t k = 0; k < nc; ++k) {
            const double* s = sv.data() + (b * nc + k) * n;
            std::vector<std::int64_t> order;
            for (std::int64_t i = 0; i < n; ++i)
                if (!hasScoreMin || s[i] > scoreMin) order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return s[x] > s[y]; });
            std::vector<std::int64_t> kept;
            for (std::int64_t i : order) {
                if (static_cast<std::int64_t>(kept.size()) >= maxOut) break;
                bool ok = true;
                for (std::int64_t j : kept)
                    if (iou(corners(b, i), corners(b, j)) > iouMax) ok = false;
                if (!ok) continue;
                kept.push_back(i);
                rows.insert(rows.end(), {static_cast<double>(b), static_cast<double>(k), static_cast<double>(i)});
            }
        }
    c.outputs[0] = storeDoubles(c, rows, DType::Int64, {static_cast<std::int64_t>(rows.size() / 3), 3});
}

// GridSample (opset 16) of an N x C x H x W input at the normalised (x, y) points of an
// N x Ho x Wo x 2 grid: modes bilinear, nearest, bicubic; padding zeros, border, reflection;
// align_corners. Follows PyTorch's grid_sampler_2d, which the ONNX test data comes from.
void onnxGridSample(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& grid = c.in(1);
    if (x.ndim() != 4 || grid.ndim() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0))
        c.fail("needs N x C x H x W input and N x Ho x Wo x 2 grid, got " + x.typeStr() + " and " + grid.typeStr());
    std::string mode = c.op().str("mode"), padding = c.op().str("padding_mode");
    if (mode.empty()) mode = "bilinear";
    if (padding.empty()) padding = "zeros";
    if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") c.fail("unsupported mode '" + mode + "'");
    if (padding != "zeros" && padding != "border" && padding != "reflection")
        c.fail("unsupported padding_mode '" + padding + "'");
    const bool align = c.op().intAttr("align_corners", 0) != 0;
    const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), Ho = grid.dim(1), Wo = grid.dim(2);
    const std::vector<double> xv = x.toDoubles(), gv = grid.toDoubles();
    auto reflect = [](double v, double twiceLow, double twiceHigh) {
        if (twiceLow == twiceHigh) return 0.0;
        const double lo = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
        v = std::fabs(v - lo);
        const double extra = std::fmod(v, span);
        const auto flips = static_cast<std::int64_t>(std::floor(v / span));
        return flips % 2 == 0 ? extra + lo : span - extra + lo;
    };
    // padding applied to a coordinate along an axis of `size` pixels
    auto pad = [&](double v, std::int64_t size) {
        if (padding == "border") return std::clamp(v, 0.0, static_cast<double>(size - 1));
        if (padding == "reflection") {
            v = align ? reflect(v, 0, 2.0 * static_cast<double>(size - 1))
                      : reflect(v, -1, 2.0 * static_cast<double>(size) - 1);
            return std::clamp(v, 0.0, static_cast<double>(size - 1));
        }
        return v;
    };
    auto unnormalize = [&](double g, std::int64_t size) {
        return align ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
    };
    std::vector<double> y(static_cast<std::size_t>(N * C * Ho * Wo));
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t ch = 0; ch < C; ++ch) {
            const double* plane = xv.data() + (n * C + ch) * H * W;
            auto at = [&](std::int64_t yy, std::int64_t xx) {
                return yy >= 0 && yy < H && xx >= 0 && xx < W ? plane[yy * W + xx] : 0.0;
            };
            for (std::int64_t i = 0; i < Ho; ++i)
                for (std::int64_t j = 0; j < Wo; ++j) {
                    const double* g = gv.data() + ((n * Ho + i) * Wo + j) * 2;
                    double ix = unnormalize(g[0], W), iy = unnormalize(g[1], H), v = 0;
                    if (mode == "bicubic") {
                        const double fx = std::floor(ix), fy = std::floor(iy), tx = ix - fx, ty = iy - fy, A = -0.75;
                        auto c1 = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };
                        auto c2 = [A](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };
                        const double wx[4] = {c2(tx + 1), c1(tx), c1(1 - tx), c2(2 - tx)},
                                     wy[4] = {c2(ty + 1), c1(ty), c1(1 - ty), c2(2 - ty)};
                        for (int a = 0; a < 4; ++a)
                            for (int b = 0; b < 4; ++b) {
                                const double py = pad(fy - 1 + a, H), px = pad(fx - 1 + b, W);
                                v += wy[a] * wx[b] * at(static_cast<std::int64_t>(py), static_cast<std::int64_t>(px));
                            }
                    } else {
                        ix = pad(ix, W);
                        iy = pad(iy, H);
                        if (mode == "nearest") {
                            v = at(static_cast<std::int64_t>(std::nearbyint(iy)),
                                   static_cast<std::int64_t>(std::nearbyint(ix)));
                        } else {
                            const double fx = std::floor(ix), fy = std::floor(iy), tx = ix - fx, ty = iy - fy;
                            const auto x0 = static_cast<std::int64_t>(fx), y0 = static_cast<std::int64_t>(fy);
                            v = at(y0, x0) * (1 - tx) * (1 - ty) + at(y0, x0 + 1) * tx * (1 - ty) +
                                at(y0 + 1, x0) * (1 - tx) * ty + at(y0 + 1, x0 + 1) * tx * ty;
                        }
                    }
                    y[static_cast<std::size_t>(((n * C + ch) * Ho + i) * Wo + j)] = v;
                }
        }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), {N, C, Ho, Wo});
}

// w's values minus its zero point (per tensor, or one per output channel, axis 0), as doubles.
std::vector<double> minusZeroPoint(const Tensor& w, const Tensor* zp) {
    std::vector<double> v = w.toDoubles();
    if (!zp) return v;
    const std::int64_t per = w.ndim() && w.dim(0) ? w.numel() / w.dim(0) : 1;
    for (std::size_t e = 0; e < v.size(); ++e)
        v[e] -= zp->at(zp->numel() == 1 ? 0 : static_cast<std::int64_t>(e) / per);
    return v;
}

// ConvInteger: convolution of (x - x_zero_point) and (w - w_zero_point), int32.
void onnxConvInteger(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 1);
    const Tensor* xz = onnxIn(c, 2);
    std::vector<double> xv = x.toDoubles();
    if (xz)
        for (double& v : xv) v -= xz->at(0);
    Shape out;
    const std::vector<double> y = convNd(c, xv, x, minusZeroPoint(w, onnxIn(c, 3)), w, {}, out);
    c.outputs[0] = storeDoubles(c, y, DType::Int32, out);
}

// QLinearConv: the integer convolution (plus the int32 bias B) scaled by x_scale * w_scale /
// y_scale (w_scale per tensor or per output channel), rounded half to even, plus y_zero_point,
// saturated to its dtype.
void onnxQLinearConv(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 3);
    const Tensor& wScale = needIn(c, 4);
    const Tensor& yzp = needIn(c, 7);
    std::vector<double> xv = x.toDoubles();
    for (double& v : xv) v -= needIn(c, 2).at(0);
    const Tensor* b = onnxIn(c, 8);
    Shape out;
    const std::vector<double> acc =
        convNd(c, xv, x, minusZeroPoint(w, &needIn(c, 5)), w, b ? b->toDoubles() : std::vector<double>(), out);
    const double xs = needIn(c, 1).at(0), ys = needIn(c, 6).at(0);
    const std::int64_t plane = out.size() > 2 ? shapeNumel(Shape(out.begin() + 2, out.end())) : 1, M = out[1];
    std::vector<double> y(acc.size());
    for (std::size_t e = 0; e < y.size(); ++e) {
        const double ws = wScale.at(wScale.numel() == 1 ? 0 : static_cast<std::int64_t>(e) / plane % M);
        y[e] = saturate(std::nearbyint(acc[e] * xs * ws / ys) + yzp.at(0), yzp.dtype());
    }
    c.outputs[0] = storeDoubles(c, y, yzp.dtype(), out);
}

// QLinearMatMul of 2-d or equally batched 3-d+ operands: (a - a_zp) x (b - b_zp) scaled by
// a_scale * b_scale / y_scale, rounded half to even, plus y_zero_point, saturated.
void onnxQLinearMatMul(KernelCall& c) {
    const Tensor& a = c.in(0);
    const Tensor& b = needIn(c, 3);
    const Tensor& yzp = needIn(c, 7);
    const int r = a.ndim();
    if (r < 2 || b.ndim() != r || !std::equal(a.shape().begin(), a.shape().end() - 2, b.shape().begin()) ||
        a.dim(r - 1) != b.dim(r - 2))
        c.fail("operands " + a.typeStr() + " and " + b.typeStr() + " do not match (2-d, or the same batch dims)");
    const std::int64_t M = a.dim(r - 2), K = a.dim(r - 1), N = b.dim(r - 1),
                       batches = shapeNumel(Shape(a.shape().begin(), a.shape().end() - 2));
    const double azp = needIn(c, 2).at(0), bzp = needIn(c, 5).at(0),
                 scale = needIn(c, 1).at(0) * needIn(c, 4).at(0) / needIn(c, 6).at(0);
    const std::vector<double> av = a.toDoubles(), bv = b.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(batches * M * N));
    for (std::int64_t t = 0; t < batches; ++t)
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
                double s = 0;
                for (std::int64_t k = 0; k < K; ++k)
                    s += (av[static_cast<std::size_t>((t * M + i) * K + k)] - azp) *
                         (bv[static_cast<std::size_t>((t * K + k) * N + j)] - bzp);
                y[static_cast<std::size_t>((t * M + i) * N + j)] =
                    saturate(std::nearbyint(s * scale) + yzp.at(0), yzp.dtype());
            }
    Shape out(a.shape().begin(), a.shape().end() - 1);
    out.push_back(N);
    c.outputs[0] = storeDoubles(c, y, yzp.dtype(), out);
}

// BatchNormalization: per channel (axis 1) (x - mean) / sqrt(var + epsilon) * scale + B; in
// training mode with the batch's mean and population variance, also returning the running mean
// and variance (input * momentum + batch * (1 - momentum)).
void onnxBatchNormalization(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("needs an N x C x ... input, got " + x.typeStr());
    const double eps = c.op().floatAttr("epsilon", 1e-5), momentum = c.op().floatAttr("momentum", 0.9);
    const bool training = c.op().intAttr("training_mode", 0) != 0;
    const std::vector<double> xv = x.toDoubles(), scale = needIn(c, 1).toDoubles(), bias = needIn(c, 2).toDoubles();
    std::vector<double> mean = needIn(c, 3).toDoubles(), var = needIn(c, 4).toDoubles();
    const std::int64_t C = x.dim(1), plane = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    for (const std::vector<double>* v : std::initializer_list<const std::vector<double>*>{&scale, &bias, &mean, &var})
        if (static_cast<std::int64_t>(v->size()) != C) c.fail("scale, B, mean and var must have C elements");
    std::vector<double> bm(mean), bvar(var);
    if (training) {
        for (std::int64_t ch = 0; ch < C; ++ch) {
            double s = 0, sq = 0;
            for (std::int64_t n = 0; n < x.dim(0); ++n)
                for (std::int64_t i = 0; i < plane; ++i) s += xv[static_cast<std::size_t>((n * C + ch) * plane + i)];
            const double cnt = static_cast<double>(x.dim(0) * plane), m = s / cnt;
            for (std::int64_t n = 0; n < x.dim(0); ++n)
                for (std::int64_t i = 0; i < plane; ++i) {
                    const double d = xv[static_cast<std::size_t>((n * C + ch) * plane + i)] - m;
                    sq += d * d;
                }
            bm[static_cast<std::size_t>(ch)] = m;
            bvar[static_cast<std::size_t>(ch)] = sq / cnt;
        }
    }
    std::vector<double> y(xv.size());
    for (std::size_t e = 0; e < y.size(); ++e) {
        const auto ch = static_cast<std::size_t>(static_cast<std::int64_t>(e) / plane % C);
        y[e] = (xv[e] - bm[ch]) / std::sqrt(bvar[ch] + eps) * scale[ch] + bias[ch];
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), x.shape());
    if (training) {
        std::vector<double> rm(static_cast<std::size_t>(C)), rv(rm.size());
        for (std::size_t ch = 0; ch < rm.size(); ++ch) {
            rm[ch] = mean[ch] * momentum + bm[ch] * (1 - momentum);
            rv[ch] = var[ch] * momentum + bvar[ch] * (1 - momentum);
        }
        if (c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, rm, needIn(c, 3).dtype(), {C});
        if (c.outputs.size() > 2) c.outputs[2] = storeDoubles(c, rv, needIn(c, 4).dtype(), {C});
    }
}

// MaxUnpool: zeros of the unpooled shape (from kernel_shape, strides and pads) with X's values
// at the flat positions given by I; an output_shape input places each position at the same
// coordinates of that (larger) shape.
void onnxMaxUnpool(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    if (idx.shape() != x.shape()) c.fail("indices " + idx.typeStr() + " must have the shape of " + x.typeStr());
    const int sp = x.ndim() - 2;
    const auto ks = attrInts(c, "kernel_shape");
    const auto st = attrInts(c, "strides", std::vector<std::int64_t>(static_cast<std::size_t>(std::max(sp, 0)), 1));
    const auto pads = attrInts(c, "pads", std::vector<std::int64_t>(2 * static_cast<std::size_t>(std::max(sp, 0)), 0));
    if (sp < 1 || static_cast<int>(ks.size()) != sp || static_cast<int>(st.size()) != sp ||
        static_cast<int>(pads.size()) != 2 * sp)
        c.fail("kernel_shape, strides or pads do not match " + x.typeStr());
    Shape dflt = {x.dim(0), x.dim(1)};
    for (int a = 0; a < sp; ++a) {
        const auto i = static_cast<std::size_t>(a);
        dflt.push_back((x.dim(a + 2) - 1) * st[i] + ks[i] - pads[i] - pads[i + static_cast<std::size_t>(sp)]);
    }
    Shape out = dflt;
    if (const Tensor* os = onnxIn(c, 2)) out = intsOf(*os);
    if (out.size() != dflt.size()) c.fail("output_shape " + shapeStr(out) + " does not match " + x.typeStr());
    Tensor y = Tensor::zeros(x.dtype(), out, c.ctx.pool.get());
    const auto ds = stridesOf(dflt), os = stridesOf(out);
    const std::size_t es = dtypeSize(x.dtype());
    for (std::int64_t e = 0; e < x.numel(); ++e) {
        const std::int64_t at = idx.intAt(e);
        if (at < 0 || at >= shapeNumel(dflt))
            c.fail("index " + std::to_string(at) + " out of range for the unpooled shape " + shapeStr(dflt));
        std::int64_t off = 0;
        for (std::size_t a = 0; a < dflt.size(); ++a) {
            const std::int64_t coord = at / ds[a] % dflt[a];
            if (coord >= out[a]) c.fail("index " + std::to_string(at) + " falls outside output_shape " + shapeStr(out));
            off += coord * os[a];
        }
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(off) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(e) * es, es);
    }
    c.outputs[0] = std::move(y);
}

// Upsample (opset 7-9, deprecated) in nearest mode: output dim floor(dim * scale), source index
// floor(i / scale).
void onnxUpsample(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (c.op().str("mode") == "linear") c.fail("Upsample mode 'linear' is not supported (use Resize)");
    std::vector<double> scales;
    if (const Tensor* s = onnxIn(c, 1))
        scales = s->toDoubles();
    else if (c.op().has("scales"))
        for (const auto& e : c.op().attrs()["scales"]) scales.push_back(e.get<double>());
    if (static_cast<int>(scales.size()) != x.ndim()) c.fail("scales must have one entry per axis of " + x.typeStr());
    Shape out;
    for (int a = 0; a < x.ndim(); ++a)
        out.push_back(
            static_cast<std::int64_t>(std::floor(static_cast<double>(x.dim(a)) * scales[static_cast<std::size_t>(a)])));
    c.outputs[0] = gatherPerAxis(c, x, out, [&](int a, std::int64_t p) {
        return std::min(
            static_cast<std::int64_t>(std::floor(static_cast<double>(p) / scales[static_cast<std::size_t>(a)])),
            x.dim(a) - 1);
    });
}

// ---------------------------------------------------------------- spectral

// The DFT of n complex samples (re, im), `len` points (zero padded or truncated), forward or
// inverse (with 1/len), the first `bins` coefficients (direct O(len * bins) sums).
void dft(const std::vector<double>& re, const std::vector<double>& im, std::int64_t len, std::int64_t bins,
         bool inverse, double* out) {
    const double sign = inverse ? 1.0 : -1.0;
    const auto n = std::min<std::int64_t>(len, static_cast<std::int64_t>(re.size()));
    for (std::int64_t k = 0; k < bins; ++k) {
        double sr = 0, si = 0;
        for (std::int64_t t = 0; t < n; ++t) {
            const double a = sign * 2.0 * M_PI * static_cast<double>((k * t) % len) / static_cast<double>(len);
            const double cr = std::cos(a), ci = std::sin(a);
            sr += re[static_cast<std::size_t>(t)] * cr - im[static_cast<std::size_t>(t)] * ci;
            si += re[static_cast<std::size_t>(t)] * ci + im[static_cast<std::size_t>(t)] * cr;
        }
        out[2 * k] = inverse ? sr / static_cast<double>(len) : sr;
        out[2 * k + 1] = inverse ? si / static_cast<double>(len) : si;
    }
}

// DFT (opset 17): along `axis` of a [batch, ..., 1 or 2] signal (real or complex), dft_length
// points, inverse, onesided (the first len/2 + 1 bins); output [..., 2].
void onnxDFT(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 3 || (x.dim(x.ndim() - 1) != 1 && x.dim(x.ndim() - 1) != 2))
        c.fail("needs a [batch, ..., 1 or 2] signal, got " + x.typeStr());
    const int axis = normAxis(c, c.op().intAttr("axis", 1), x.ndim() - 1);
    const bool inverse = c.op().intAttr("inverse", 0) != 0, onesided = c.op().intAttr("onesided", 0) != 0;
    const std::int64_t comps = x.dim(x.ndim() - 1), n = x.dim(axis);
    const std::int64_t len = onnxIn(c, 1) ? onnxIn(c, 1)->intAt(0) : n;
    if (len <= 0) c.fail("dft_length must be positive");
    const std::int64_t bins = onesided ? len / 2 + 1 : len;
    std::int64_t outer = 1, inner = 1;
    for (int a = 0; a < x.ndim() - 1; ++a)
        if (a != axis) (a < axis ? outer : inner) *= x.dim(a);
    const std::vector<double> xv = x.toDoubles();
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = bins;
    out.back() = 2;
    std::vector<double> y(static_cast<std::size_t>(outer * bins * inner * 2)), tmp(static_cast<std::size_t>(2 * bins));
    std::vector<double> re(static_cast<std::size_t>(n)), im(re.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            for (std::int64_t t = 0; t < n; ++t) {
                const std::int64_t e = ((o * n + t) * inner + i) * comps;
                re[static_cast<std::size_t>(t)] = xv[static_cast<std::size_t>(e)];
                im[static_cast<std::size_t>(t)] = comps == 2 ? xv[static_cast<std::size_t>(e + 1)] : 0.0;
            }
            dft(re, im, len, bins, inverse, tmp.data());
            for (std::int64_t k = 0; k < bins; ++k) {
                const auto e = static_cast<std::size_t>(((o * bins + k) * inner + i) * 2);
                y[e] = tmp[static_cast<std::size_t>(2 * k)];
                y[e + 1] = tmp[static_cast<std::size_t>(2 * k + 1)];
            }
        }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), out);
}

// STFT (opset 17): DFTs of the windowed frames of a [batch, length, 1 or 2] signal, frame_step
// apart; frame length from the window or the frame_length input; onesided (default); output
// [batch, frames, bins, 2].
void onnxSTFT(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
        c.fail("needs a [batch, length, 1 or 2] signal, got " + x.typeStr());
    const std::int64_t step = scalarInt(c, 1);
    const Tensor* window = onnxIn(c, 2);
    const std::int64_t frameLen = onnxIn(c, 3) ? onnxIn(c, 3)->intAt(0) : window ? window->numel() : 0;
    if (step <= 0 || frameLen <= 0 || frameLen > x.dim(1))
        c.fail("frame_step and the frame length must be positive and fit the signal");
    if (window && window->numel() != frameLen)
        c.fail("window " + window->typeStr() + " does not match frame length " + std::to_string(frameLen));
    const bool onesided = c.op().intAttr("onesided", 1) != 0;
    const std::int64_t B = x.dim(0), L = x.dim(1), comps = x.dim(2), frames = (L - frameLen) / step + 1,
                       bins = onesided ? frameLen / 2 + 1 : frameLen;
    const std::vector<double> xv = x.toDoubles(),
                              wv = window ? window->toDoubles()
                                          : std::vector<double>(static_cast<std::size_t>(frameLen), 1.0);
    std::vector<double> y(static_cast<std::size_t>(B * frames * bins * 2)), re(static_cast<std::size_t>(frameLen)),
        im(re.size());
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t f = 0; f < frames; ++f) {
            for (std::int64_t t = 0; t < frameLen; ++t) {
                const std::int64_t e = (b * L + f * step + t) * comps;
                re[static_cast<std::size_t>(t)] = xv[static_cast<std::size_t>(e)] * wv[static_cast<std::size_t>(t)];
                im[static_cast<std::size_t>(t)] =
                    comps == 2 ? xv[static_cast<std::size_t>(e + 1)] * wv[static_cast<std::size_t>(t)] : 0.0;
            }
            dft(re, im, frameLen, bins, false, y.data() + (b * frames + f) * bins * 2);
        }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), {B, frames, bins, 2});
}

// TfIdfVectorizer over integer inputs ([C] or [N, C]): counts of the pool's n-grams
// (min_gram_length..max_gram_length, elements up to max_skip_count apart; unigrams once per
// position), each at output index ngram_indexes[j], as TF, IDF (weight if present) or TFIDF
// (count * weight), float32.
void onnxTfIdfVectorizer(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 1 && x.ndim() != 2) c.fail("needs a [C] or [N, C] input, got " + x.typeStr());
    if (!c.op().has("pool_int64s")) c.fail("only integer pools (pool_int64s) are supported");
    const auto pool = attrInts(c, "pool_int64s"), counts = attrInts(c, "ngram_counts"),
               indexes = attrInts(c, "ngram_indexes");
    std::vector<double> weights;
    if (c.op().has("weights"))
        for (const auto& e : c.op().attrs()["weights"]) weights.push_back(e.get<double>());
    const std::int64_t minN = c.op().intAttr("min_gram_length", 1), maxN = c.op().intAttr("max_gram_length", 1),
                       maxSkip = c.op().intAttr("max_skip_count", 0);
    std::string mode = c.op().str("mode");
    if (mode.empty()) mode = "TF";
    // n-gram -> output index
    std::map<std::vector<std::int64_t>, std::int64_t> grams;
    std::int64_t j = 0, width = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        const auto n = static_cast<std::int64_t>(k + 1);
        const std::int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<std::int64_t>(pool.size());
        for (std::int64_t p = counts[k]; p + n <= end; p += n, ++j) {
            if (j >= static_cast<std::int64_t>(indexes.size())) c.fail("ngram_indexes is shorter than the pool");
            grams[std::vector<std::int64_t>(pool.begin() + p, pool.begin() + p + n)] =
                indexes[static_cast<std::size_t>(j)];
            width = std::max(width, indexes[static_cast<std::size_t>(j)] + 1);
        }
    }
    const std::int64_t rows = x.ndim() == 2 ? x.dim(0) : 1, cols = x.dim(x.ndim() - 1);
    std::vector<double> y(static_cast<std::size_t>(rows * width), 0.0);
    for (std::int64_t r = 0; r < rows; ++r) {
        double* out = y.data() + r * width;
        auto add = [&](const std::vector<std::int64_t>& g) {
            if (auto it = grams.find(g); it != grams.end()) out[it->second] += 1;
        };
        for (std::int64_t i = 0; i < cols; ++i) {
            if (minN <= 1 && maxN >= 1) add({x.intAt(r * cols + i)});
            for (std::int64_t s = 0; s <= maxSkip; ++s)
                for (std::int64_t n = std::max<std::int64_t>(minN, 2); n <= maxN; ++n) {
                    if (i + (n - 1) * (s + 1) >= cols) break;
                    std::vector<std::int64_t> g;
                    for (std::int64_t t = 0; t < n; ++t) g.push_back(x.intAt(r * cols + i + t * (s + 1)));
                    add(g);
                }
        }
        for (std::int64_t k = 0; k < width; ++k) {
            const double w = static_cast<std::size_t>(k) < weights.size() ? weights[static_cast<std::size_t>(k)] : 1.0;
            if (mode == "IDF")
                out[k] = out[k] > 0 ? w : 0.0;
            else if (mode == "TFIDF")
                out[k] *= w;
        }
    }
    c.outputs[0] = storeDoubles(c, y, DType::Float32, x.ndim() == 2 ? Shape{rows, width} : Shape{width});
}

// RoiAlign (opset 16): per region of interest (x1, y1, x2, y2 scaled by spatial_scale, shifted
// by half a pixel in mode half_pixel) an output_height x output_width grid of bins, each the
// average (or max) of bilinear samples (sampling_ratio per bin, or adaptive), as onnxruntime's
// RoiAlign computes it.
void onnxRoiAlign(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& rois = c.in(1);
    const Tensor& batch = c.in(2);
    if (x.ndim() != 4 || rois.ndim() != 2 || rois.dim(1) != 4 || batch.numel() != rois.dim(0))
        c.fail("needs X [N,C,H,W], rois [R,4] and batch_indices [R], got " + x.typeStr() + ", " + rois.typeStr() +
               ", " + batch.typeStr());
    const std::int64_t oh = c.op().intAttr("output_height", 1), ow = c.op().intAttr("output_width", 1),
                       ratio = c.op().intAttr("sampling_ratio", 0);
    const double scale = c.op().floatAttr("spatial_scale", 1.0);
    std::string ctm = c.op().str("coordinate_transformation_mode");
    const bool halfPixel = ctm.empty() || ctm == "half_pixel";
    const bool isMax = c.op().str("mode") == "max";
    const std::int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0);
    const std::vector<double> xv = x.toDoubles(), rv = rois.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(R * C * oh * ow));
    for (std::int64_t r = 0; r < R; ++r) {
        const std::int64_t n = batch.intAt(r);
        if (n < 0 || n >= x.dim(0)) c.fail("batch index " + std::to_string(n) + " out of range");
        const double off = halfPixel ? 0.5 : 0.0;
        const double* b = rv.data() + r * 4;
        const double sw = b[0] * scale - off, sh = b[1] * scale - off;
        double rw = b[2] * scale - off - sw, rh = b[3] * scale - off - sh;
        if (!halfPixel) {
            rw = std::max(rw, 1.0);
            rh = std::max(rh, 1.0);
        }
        const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
        const std::int64_t gh = ratio > 0 ? ratio : static_cast<std::int64_t>(std::ceil(rh / static_cast<double>(oh)));
        const std::int64_t gw = ratio > 0 ? ratio : static_cast<std::int64_t>(std::ceil(rw / static_cast<double>(ow)));
        const double count = static_cast<double>(std::max<std::int64_t>(gh * gw, 1));
        for (std::int64_t ch = 0; ch < C; ++ch) {
            const double* plane = xv.data() + (n * C + ch) * H * W;
            for (std::int64_t ph = 0; ph < oh; ++ph)
                for (std::int64_t pw = 0; pw < ow; ++pw) {
                    double acc = isMax ? -INFINITY : 0.0;
                    bool any = false;
                    for (std::int64_t iy = 0; iy < gh; ++iy)
                        for (std::int64_t ix = 0; ix < gw; ++ix) {
                            double yy = sh + static_cast<double>(ph) * bh +
                                        (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
                            double xx = sw + static_cast<double>(pw) * bw +
                                        (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
                            double v[4] = {0, 0, 0, 0};
                            if (!(yy < -1.0 || yy > static_cast<double>(H) || xx < -1.0 ||
                                  xx > static_cast<double>(W))) {
                                yy = std::max(yy, 0.0);
                                xx = std::max(xx, 0.0);
                                auto y0 = static_cast<std::int64_t>(yy), x0 = static_cast<std::int64_t>(xx);
                                std::int64_t y1 = y0 + 1, x1 = x0 + 1;
                                if (y0 >= H - 1) {
                                    y0 = y1 = H - 1;
                                    yy = static_cast<double>(y0);
                                }
                                if (x0 >= W - 1) {
                                    x0 = x1 = W - 1;
                                    xx = static_cast<double>(x0);
                                }
                                const double ly = yy - static_cast<double>(y0), lx = xx - static_cast<double>(x0),
                                             hy = 1 - ly, hx = 1 - lx;
                                v[0] = hy * hx * plane[y0 * W + x0];
                                v[1] = hy * lx * plane[y0 * W + x1];
                                v[2] = ly * hx * plane[y1 * W + x0];
                                v[3] = ly * lx * plane[y1 * W + x1];
                            }
                            if (isMax)
                                acc = std::max({acc, v[0], v[1], v[2], v[3]});
                            else
                                acc += v[0] + v[1] + v[2] + v[3];
                            any = true;
                        }
                    y[static_cast<std::size_t>(((r * C + ch) * oh + ph) * ow + pw)] =
                        isMax ? (any ? acc : 0.0) : acc / count;
                }
        }
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), {R, C, oh, ow});
}

// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular filters between
// lower_edge_hertz and upper_edge_hertz on the mel scale, as the ONNX test case computes them
// (onnx/backend/test/case/node/melweightmatrix.py: bins at (dft_length + 1) * hz // sample_rate).
void onnxMelWeightMatrix(KernelCall& c) {
    const std::int64_t mels = scalarInt(c, 0), dftLen = scalarInt(c, 1), rate = scalarInt(c, 2);
    const double lo = c.in(3).at(0), hi = c.in(4).at(0);
    if (mels <= 0 || dftLen <= 0 || rate <= 0) c.fail("num_mel_bins, dft_length and sample_rate must be positive");
    const auto dt = onnxDType(c.op().intAttr("output_datatype", 1));
    if (!dt) c.fail("unsupported output_datatype");
    const std::int64_t specBins = dftLen / 2 + 1;
    const double loMel = 2595 * std::log10(1 + lo / 700), hiMel = 2595 * std::log10(1 + hi / 700);
    const double step = (hiMel - loMel) / static_cast<double>(mels + 2);
    std::vector<std::int64_t> bin(static_cast<std::size_t>(mels + 2));
    for (std::int64_t i = 0; i < mels + 2; ++i) {
        const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + loMel) / 2595) - 1);
        bin[static_cast<std::size_t>(i)] =
            static_cast<std::int64_t>(std::floor(static_cast<double>(dftLen + 1) * hz / static_cast<double>(rate)));
    }
    std::vector<double> w(static_cast<std::size_t>(specBins * mels), 0.0);
    auto set = [&](std::int64_t j, std::int64_t i, double v) {
        if (j < 0 || j >= specBins) c.fail("filter bin " + std::to_string(j) + " out of range");
        w[static_cast<std::size_t>(j * mels + i)] = v;
    };
    for (std::int64_t i = 0; i < mels; ++i) {
        const std::int64_t left = bin[static_cast<std::size_t>(i)], center = bin[static_cast<std::size_t>(i + 1)],
                           right = bin[static_cast<std::size_t>(i + 2)];
        if (center == left)
            set(center, i, 1.0);
        else
            for (std::int64_t j = left; j <= center; ++j)
                set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
        if (right > center)
            for (std::int64_t j = center; j < right; ++j)
                set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
    c.outputs[0] = storeDoubles(c, w, *dt, {specBins, mels});
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
    r.add("OnnxIdentity", Backend::Cpu, onnxIdentity);
    r.add("OnnxShape", Backend::Cpu, onnxShape);
    r.add("OnnxTranspose", Backend::Cpu, onnxTranspose);
    r.add("OnnxUnsqueeze", Backend::Cpu, onnxUnsqueeze);
    r.add("OnnxSqueeze", Backend::Cpu, onnxSqueeze);
    r.add("OnnxReshape", Backend::Cpu, onnxReshape);
    r.add("OnnxFlatten", Backend::Cpu, onnxFlatten);
    r.add("OnnxConcat", Backend::Cpu, onnxConcat);
    r.add("OnnxSlice", Backend::Cpu, onnxSlice);
    r.add("OnnxPad", Backend::Cpu, onnxPad);
    r.add("OnnxReduceMean", Backend::Cpu, onnxReduce("add", true));
    r.add("OnnxReduceSum", Backend::Cpu, onnxReduce("add", false));
    r.add("OnnxReduceMax", Backend::Cpu, onnxReduce("maximum", false));
    r.add("OnnxReduceMin", Backend::Cpu, onnxReduce("minimum", false));
    r.add("OnnxReduceProd", Backend::Cpu, onnxReduce("mul", false));
    r.add("OnnxGather", Backend::Cpu, onnxGather);
    r.add("OnnxExpand", Backend::Cpu, onnxExpand);
    r.add("OnnxMatMul", Backend::Cpu, onnxMatMul);
    r.add("OnnxSoftmax", Backend::Cpu, [](KernelCall& c) { onnxSoftmax(c, false); });
    r.add("OnnxLogSoftmax", Backend::Cpu, [](KernelCall& c) { onnxSoftmax(c, true); });
    r.add("OnnxConv", Backend::Cpu, onnxConv);
    r.add("OnnxConvTranspose", Backend::Cpu, onnxConvTranspose);
    r.add("OnnxResize", Backend::Cpu, onnxResize);
    // the further operators of the ONNX backend conformance suite (docs/CONFORMANCE.md)
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
        {"ReduceL1", onnxReduce("add", false, "abs")},
        {"ReduceL2", onnxReduce("add", false, "sqr", static_cast<double (*)(double)>(std::sqrt))},
        {"ReduceSumSquare", onnxReduce("add", false, "sqr")},
        {"ReduceLogSum", onnxReduce("add", false, {}, static_cast<double (*)(double)>(std::log))},
        {"ReduceLogSumExp", onnxReduce("add", false, "exp", static_cast<double (*)(double)>(std::log))},
        {"ArgMax", [](KernelCall& c) { onnxArgExtreme(c, true); }},
        {"ArgMin", [](KernelCall& c) { onnxArgExtreme(c, false); }},
        {"Hardmax", onnxHardmax},
        {"CumSum", onnxCumSum},
        {"TopK", onnxTopK},
        {"GatherElements", onnxGatherElements},
        {"ScatterElements", onnxScatterElements},
        {"Scatter", onnxScatterElements},
        {"GatherND", onnxGatherND},
        {"ScatterND", onnxScatterND},
        {"OneHot", onnxOneHot},
        {"Compress", onnxCompress},
        {"Trilu", onnxTrilu},
        {"Size", onnxSize},
        {"Range", onnxRange},
        {"Tile", onnxTile},
        {"DepthToSpace", onnxDepthToSpace},
        {"SpaceToDepth", onnxSpaceToDepth},
        {"EyeLike", onnxEyeLike},
        {"CastLike", onnxCastLike},
        {"Split", onnxSplit},
        {"Dropout", onnxDropout},
        {"NonZero", onnxNonZero},
        {"Mod", onnxMod},
        {"BitShift", onnxBitShift},
        {"Xor", onnxXor},
        {"PRelu", onnxPRelu},
        {"Mean", onnxMean},
        {"LayerNormalization", onnxLayerNormalization},
        {"InstanceNormalization", onnxInstanceNormalization},
        {"NegativeLogLikelihoodLoss", onnxNegativeLogLikelihoodLoss},
        {"SoftmaxCrossEntropyLoss", onnxSoftmaxCrossEntropyLoss},
        {"MaxPool", [](KernelCall& c) { onnxPool(c, true); }},
        {"AveragePool", [](KernelCall& c) { onnxPool(c, false); }},
        {"MeanVarianceNormalization", onnxMeanVarianceNormalization},
        {"LRN", onnxLRN},
        {"ReverseSequence", onnxReverseSequence},
        {"Det", onnxDet},
        {"HannWindow", onnxWindow({0.5, -0.5})},
        {"HammingWindow", onnxWindow({25.0 / 46.0, -21.0 / 46.0})},
        {"BlackmanWindow", onnxWindow({0.42, -0.5, 0.08})},
        {"Unique", onnxUnique},
        {"QuantizeLinear", onnxQuantizeLinear},
        {"DequantizeLinear", onnxDequantizeLinear},
        {"DynamicQuantizeLinear", onnxDynamicQuantizeLinear},
        {"MatMulInteger", onnxMatMulInteger},
        {"Einsum", onnxEinsum},
        {"RNN", [](KernelCall& c) { onnxRecurrent(c, 1); }},
        {"GRU", [](KernelCall& c) { onnxRecurrent(c, 3); }},
        {"NonMaxSuppression", onnxNonMaxSuppression},
        {"GridSample", onnxGridSample},
        {"ConvInteger", onnxConvInteger},
        {"QLinearConv", onnxQLinearConv},
        {"QLinearMatMul", onnxQLinearMatMul},
        {"BatchNormalization", onnxBatchNormalization},
        {"MaxUnpool", onnxMaxUnpool},
        {"Upsample", onnxUpsample},
        {"DFT", onnxDFT},
        {"STFT", onnxSTFT},
        {"TfIdfVectorizer", onnxTfIdfVectorizer},
        {"RoiAlign", onnxRoiAlign},
        {"MelWeightMatrix", onnxMelWeightMatrix},
    };
    for (const auto& [k, fn] : conformance) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
