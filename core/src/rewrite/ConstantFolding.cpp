#include "passlens/rewrite/ConstantFolding.h"

#include "passlens/ir/Error.h"
#include "passlens/ir/OpRegistry.h"
#include "passlens/ir/ScalarOps.h"
#include "passlens/ir/Subtensor.h"

#include <cmath>
#include <numeric>

namespace passlens {

namespace {
using LD = long double; // exact for every int64 and float64 value

std::vector<LD> valuesOf(const TensorData& t) {
    const std::int64_t n = t.numElements();
    std::vector<LD> v(static_cast<std::size_t>(n));
    const bool ints = isInteger(t.dtype) || t.dtype == DType::Bool;
    for (std::int64_t i = 0; i < n; ++i)
        v[static_cast<std::size_t>(i)] = t.dtype == DType::UInt64
                                             ? static_cast<LD>(static_cast<std::uint64_t>(t.intAt(i)))
                                         : ints ? static_cast<LD>(t.intAt(i))
                                                : static_cast<LD>(t.at(i));
    return v;
}

std::shared_ptr<TensorData> makeTensor(DType dt, std::vector<std::int64_t> shape, const std::vector<LD>& v) {
    if (isInteger(dt) || dt == DType::Bool) {
        // the value's 64-bit pattern, wrapped by fromInts to the dtype's width as a cast does
        // (values in [2^63, 2^64) through uint64); bool is value != 0 (NaN and 0.5 are true);
        // NaN, infinities and values beyond 64 bits give 0, as the CPU backend's conversion
        std::vector<std::int64_t> iv(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            const LD x = v[i];
            iv[i] = dt == DType::Bool              ? x != 0
                    : x >= 0x1p63L && x < 0x1p64L  ? static_cast<std::int64_t>(static_cast<std::uint64_t>(x))
                    : x >= -0x1p63L && x < 0x1p63L ? static_cast<std::int64_t>(x)
                                                   : 0;
        }
        return TensorData::fromInts(dt, std::move(shape), iv);
    }
    // float32 rounded once from the exact value (an int64 / uint64 beyond 2^53 rounded to double
    // first could land on a tie and round again the other way); the same bits as through double
    // for every value double holds
    std::vector<double> dv(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        dv[i] = dt == DType::Float32 ? static_cast<double>(static_cast<float>(v[i])) : static_cast<double>(v[i]);
    return TensorData::fromDoubles(dt, std::move(shape), dv);
}

std::vector<std::int64_t> stridesOf(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> s(dims.size(), 1);
    for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
        s[static_cast<std::size_t>(i)] = s[static_cast<std::size_t>(i) + 1] * dims[static_cast<std::size_t>(i) + 1];
    return s;
}

std::int64_t product(const std::vector<std::int64_t>& d) {
    return std::accumulate(d.begin(), d.end(), std::int64_t(1), std::multiplies<>());
}

// Calls f(outIndex, inputOffsets) for every element of `out`, with broadcasting.
template <class F>
void forEachBroadcast(const std::vector<std::int64_t>& out, const std::vector<std::vector<std::int64_t>>& ins, F&& f) {
    const std::size_t nd = out.size();
    std::vector<std::vector<std::int64_t>> strides;
    for (const auto& d : ins) {
        auto s = stridesOf(d);
        for (std::size_t a = 0; a < nd; ++a)
            if (d[a] == 1 && out[a] != 1) s[a] = 0;
        strides.push_back(s);
    }
    const std::int64_t total = product(out);
    std::vector<std::int64_t> idx(nd, 0), off(ins.size(), 0);
    for (std::int64_t e = 0; e < total; ++e) {
        f(e, off);
        for (int a = static_cast<int>(nd) - 1; a >= 0; --a) {
            const auto ua = static_cast<std::size_t>(a);
            ++idx[ua];
            for (std::size_t k = 0; k < ins.size(); ++k) off[k] += strides[k][ua];
            if (idx[ua] < out[ua]) break;
            for (std::size_t k = 0; k < ins.size(); ++k) off[k] -= strides[k][ua] * idx[ua];
            idx[ua] = 0;
        }
    }
}

} // namespace

std::optional<std::vector<std::shared_ptr<TensorData>>> evaluateConstantNode(const Apply& node, std::string* why) {
    auto no = [&](const std::string& r) -> std::optional<std::vector<std::shared_ptr<TensorData>>> {
        if (why) *why = r;
        return std::nullopt;
    };
    for (const Variable* in : node.inputs()) {
        if (!in->isConstant()) { // the common case: the reason is built only when asked for
            if (!why) return std::nullopt;
            return no("input " + in->displayName() + " is not a constant");
        }
        if (!in->constant()->loaded())
            return no("constant " + in->displayName() + " is not loaded: " + in->constant()->missing);
    }
    const Op& op = node.op();
    const std::string& k = op.kind();
    for (const Variable* out : node.outputs()) {
        if (!out->type().isStatic() && k != "Shape" && k != "Shape_i")
            return no("output type " + out->type().str() + " is not static");
        if (out->type().isStatic() &&
            static_cast<std::size_t>(out->type().numElements()) * dtypeSize(out->type().dtype()) > kMaxFoldedBytes)
            return no("the folded constant would exceed 64 MiB");
    }
    const Type& ot = node.output(0)->type();
    auto in = [&](int i) -> const TensorData& { return *node.input(i)->constant(); };
    std::vector<std::shared_ptr<TensorData>> out;
    if (k == "GpuFromHost" || k == "HostFromGpu" || k == "GpuToGpu") {
        auto t = std::make_shared<TensorData>(in(0)); // shares the bytes
        out.push_back(t);
        return out;
    }
    if (op.isRandom()) return no("the op draws random values");
    if (op.isGpu() || op.isOnnx()) return no("GPU and Onnx ops are not evaluated by constant folding");
    if (k == "Elemwise") {
        const std::string s = op.str("scalar");
        const ScalarOpInfo* info = findScalarOp(s);
        if (!info) return no("composite elemwise");
        const ScalarParams params = scalarParamsOf(op, *info);
        std::vector<std::vector<LD>> vals;
        std::vector<std::vector<std::int64_t>> dims;
        for (int i = 0; i < node.nin(); ++i) {
            vals.push_back(valuesOf(in(i)));
            dims.push_back(in(i).shape);
        }
        std::vector<LD> res(static_cast<std::size_t>(ot.numElements()));
        bool ok = true;
        std::vector<LD> args(vals.size());
        forEachBroadcast(ot.dims(), dims, [&](std::int64_t e, const std::vector<std::int64_t>& off) {
            for (std::size_t j = 0; j < vals.size(); ++j) args[j] = vals[j][static_cast<std::size_t>(off[j])];
            auto r = evalScalarReference(info->op, params, args, ot.dtype());
            if (!r)
                ok = false;
            else
                res[static_cast<std::size_t>(e)] = *r;
        });
        if (!ok) return no("scalar op '" + s + "' is not evaluated here (or divides by zero)");
        out.push_back(makeTensor(ot.dtype(), ot.dims(), res));
        return out;
    }
    if (k == "DimShuffle") {
        const auto& src = in(0);
        const auto sst = stridesOf(src.shape);
        std::vector<std::int64_t> map; // per output axis: input stride or 0
        for (const auto& e : op.attrs().at("order"))
            map.push_back(e.is_string() ? 0 : sst[static_cast<std::size_t>(e.get<std::int64_t>())]);
        std::vector<std::vector<std::int64_t>> fake{ot.dims()};
        auto v = valuesOf(src);
        std::vector<LD> res(static_cast<std::size_t>(ot.numElements()));
        std::vector<std::int64_t> idx(ot.dims().size(), 0);
        for (std::int64_t e = 0; e < ot.numElements(); ++e) {
            std::int64_t off = 0, rem = e;
            for (int a = static_cast<int>(ot.dims().size()) - 1; a >= 0; --a) {
                const auto ua = static_cast<std::size_t>(a);
                off += (rem % ot.dims()[ua]) * map[ua];
                rem /= ot.dims()[ua];
            }
            res[static_cast<std::size_t>(e)] = v[static_cast<std::size_t>(off)];
        }
        out.push_back(makeTensor(ot.dtype(), ot.dims(), res));
        return out;
    }
    if (k == "Reshape" || k == "Flatten" || k == "CpuContiguous") {
        auto t = std::make_shared<TensorData>(in(0));
        t->shape = ot.dims();
        if (t->numElements() != in(0).numElements()) return no("element count changes");
        out.push_back(t);
        return out;
    }
    if (k == "Shape") {
        const Type& t = node.input(0)->type();
        out.push_back(TensorData::fromInts(DType::Int64, {t.ndim()}, in(0).shape));
        return out;
    }
    if (k == "Shape_i") {
        out.push_back(TensorData::fromInts(DType::Int64, {}, {in(0).shape[static_cast<std::size_t>(op.intAttr("i"))]}));
        return out;
    }
    if (k == "MakeVector") {
        std::vector<LD> v;
        for (int i = 0; i < node.nin(); ++i) v.push_back(valuesOf(in(i))[0]);
        out.push_back(makeTensor(ot.dtype(), ot.dims(), v));
        return out;
    }
    if (k == "Subtensor") {
        const auto& src = in(0);
        int sym = 1;
        SubtensorRegion r;
        try {
            r = resolveSubtensor(
                op.attrs().at("idx"), src.shape,
                [&]() -> std::int64_t {
                    if (sym >= node.nin()) throw Error("missing the input of a symbolic index");
                    return static_cast<std::int64_t>(valuesOf(in(sym++))[0]);
                },
                node.input(0)->type().str());
        } catch (const Error& e) {
            return no(e.what());
        }
        auto v = valuesOf(src);
        std::vector<LD> res(static_cast<std::size_t>(product(r.dims)));
        for (std::int64_t e = 0; e < static_cast<std::int64_t>(res.size()); ++e) {
            std::int64_t off = r.base, rem = e;
            for (int a = static_cast<int>(r.dims.size()) - 1; a >= 0; --a) {
                const auto ua = static_cast<std::size_t>(a);
                off += (rem % r.dims[ua]) * r.strides[ua];
                rem /= r.dims[ua];
            }
            res[static_cast<std::size_t>(e)] = v[static_cast<std::size_t>(off)];
        }
        out.push_back(makeTensor(ot.dtype(), r.dims, res));
        return out;
    }
    if (k == "Join") {
        const std::int64_t axis = op.intAttr("axis");
        std::vector<LD> res;
        res.reserve(static_cast<std::size_t>(ot.numElements()));
        const std::int64_t outer = product(std::vector<std::int64_t>(ot.dims().begin(), ot.dims().begin() + axis));
        std::vector<std::vector<LD>> vals;
        for (int i = 0; i < node.nin(); ++i) vals.push_back(valuesOf(in(i)));
        for (std::int64_t o = 0; o < outer; ++o)
            for (int i = 0; i < node.nin(); ++i) {
                const std::int64_t chunk =
                    product(std::vector<std::int64_t>(in(i).shape.begin() + axis, in(i).shape.end()));
                res.insert(res.end(), vals[static_cast<std::size_t>(i)].begin() + o * chunk,
                           vals[static_cast<std::size_t>(i)].begin() + (o + 1) * chunk);
            }
        out.push_back(makeTensor(ot.dtype(), ot.dims(), res));
        return out;
    }
    if (k == "CAReduce") {
        const auto& src = in(0);
        const std::string s = op.str("scalar");
        std::vector<bool> red(src.shape.size(), op.attrs().at("axis").is_null());
        if (!op.attrs().at("axis").is_null())
            for (const auto& a : op.attrs().at("axis")) red[static_cast<std::size_t>(a.get<std::int64_t>())] = true;
        std::vector<LD> res(static_cast<std::size_t>(std::max<std::int64_t>(1, ot.numElements())), s == "mul"   ? 1
                                                                                                   : s == "add" ? 0
                                                                                                   : s == "maximum"
                                                                                                       ? -INFINITY
                                                                                                       : INFINITY);
        auto v = valuesOf(src);
        for (std::int64_t e = 0; e < src.numElements(); ++e) {
            std::int64_t rem = e, o = 0, mult = 1;
            for (int a = static_cast<int>(src.shape.size()) - 1; a >= 0; --a) {
                const auto ua = static_cast<std::size_t>(a);
                const std::int64_t ia = rem % src.shape[ua];
                rem /= src.shape[ua];
                if (!red[ua]) {
                    o += ia * mult;
                    mult *= src.shape[ua];
                }
            }
            LD& r = res[static_cast<std::size_t>(o)];
            const LD x = v[static_cast<std::size_t>(e)];
            if (s == "add")
                r += x;
            else if (s == "mul")
                r *= x;
            else if (s == "maximum")
                r = std::max(r, x);
            else
                r = std::min(r, x);
        }
        out.push_back(makeTensor(ot.dtype(), ot.dims(), res));
        return out;
    }
    return no("op " + op.str() + " is not evaluated by constant folding");
}

NodeRewriter constantFolding(const std::string& name) {
    return NodeRewriter(
        name, Tracks::allNodes(),
        [](RewriteCall& c) -> std::optional<Replacement> {
            const Op& op = c.node.op();
            // Theano's do_constant_folding: allocations are kept (they are memsets, not data).
            if (op.kind() == "Alloc" || op.kind() == "AllocEmpty" || op.kind() == "GpuAlloc" ||
                op.kind() == "GpuAllocEmpty")
                return c.decline([&] { return op.kind() + " is not constant-folded (do_constant_folding is False)"; });
            if (c.node.nin() == 0) return c.decline([] { return std::string("no inputs"); });
            std::string why;
            auto vals = evaluateConstantNode(c.node, c.wantsReasons() ? &why : nullptr);
            if (!vals) return c.decline([&] { return why; });
            Replacement r;
            for (int i = 0; i < c.node.nout(); ++i) {
                Variable* o = c.node.output(i);
                Variable* k =
                    c.graph.addConstant((*vals)[static_cast<std::size_t>(i)], o->name(), o->type().location());
                r.pairs.push_back({o, k});
            }
            return r;
        },
        {"fast_run", "fast_compile"});
}

} // namespace passlens
