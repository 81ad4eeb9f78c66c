// Type rules of the op kinds of OPS.md: Theano's make_node output types, and the location checks
// of host and GPU kinds. The registry's table (OpRegistry.cpp) names them per kind.
#include "OpTypeRules.h"

#include "passlens/ir/Error.h"
#include "passlens/ir/FunctionGraph.h"
#include "passlens/ir/ScalarOps.h"
#include "passlens/ir/Subtensor.h"

#include <algorithm>
#include <set>

namespace passlens {
namespace {

using Vars = std::span<Variable* const>;
using json = nlohmann::json;
constexpr std::int64_t U = Type::kUnknownDim;

std::string dimsStr(const std::vector<std::int64_t>& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i)
        s += (i ? "," : "") + (d[i] < 0 ? std::string("?") : std::to_string(d[i]));
    return s + "]";
}

[[noreturn]] void fail(const Op& op, const std::string& why) { throw Error(op.str() + ": " + why); }

const Type& ty(Vars in, std::size_t i) { return in[i]->type(); }

void needRank(const Op& op, Vars in, std::size_t i, int rank) {
    const Type& t = ty(in, i);
    if (t.rankKnown() && t.ndim() != rank)
        fail(op, "input " + std::to_string(i) + " must have " + std::to_string(rank) + " dimensions, got " + t.str());
}

void needInt(const Op& op, Vars in, std::size_t i) {
    DType d = ty(in, i).dtype();
    if (!isInteger(d)) fail(op, "input " + std::to_string(i) + " must be an integer tensor, got " + ty(in, i).str());
}

// Merge two dims that must agree; throws with context on a conflict.
std::int64_t agree(const Op& op, std::int64_t a, std::int64_t b, const std::string& what) {
    if (a >= 0 && b >= 0 && a != b)
        fail(op, "incompatible static shapes: " + what + " (" + std::to_string(a) + " vs " + std::to_string(b) + ")");
    return a >= 0 ? a : b;
}

// Python slice length for a dim of size n.
std::int64_t sliceLen(std::int64_t n, const json& s) {
    if (n < 0) return U;
    auto field = [&](const char* k) -> std::optional<std::int64_t> {
        if (!s.contains(k) || s[k].is_null()) return std::nullopt;
        return s[k].get<std::int64_t>();
    };
    return resolveSlice(field("start"), field("stop"), field("step"), n).length;
}

// Number of symbolic entries ("?") in a Subtensor idx list: each takes one extra integer
// scalar input, in order (Theano's Subtensor{int64:int64:}).
std::size_t symbolicCount(const json& idx) {
    std::size_t n = 0;
    for (const auto& e : idx) {
        if (e.is_string())
            ++n;
        else if (e.is_object())
            for (const char* k : {"start", "stop", "step"})
                if (e.contains(k) && e[k].is_string()) ++n;
    }
    return n;
}

int normAxis(const Op& op, std::int64_t axis, int ndim) {
    std::int64_t a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) fail(op, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(ndim));
    return static_cast<int>(a);
}

std::pair<std::int64_t, std::int64_t> pads2(const Op& op, const json& bm, int axis, std::int64_t k, std::int64_t dil) {
    if (bm.is_string()) {
        const std::string m = bm.get<std::string>();
        if (m == "valid") return {0, 0};
        const std::int64_t ek = k < 0 ? U : dil * (k - 1) + 1;
        if (m == "full") return {ek < 0 ? U : ek - 1, ek < 0 ? U : ek - 1};
        if (m == "half") return {ek < 0 ? U : ek / 2, ek < 0 ? U : ek / 2};
        fail(op, "border_mode '" + m + "' is not valid, full, half or a list of pads");
    }
    const json& e = bm.at(static_cast<std::size_t>(axis));
    if (e.is_array()) return {e.at(0).get<std::int64_t>(), e.at(1).get<std::int64_t>()};
    return {e.get<std::int64_t>(), e.get<std::int64_t>()};
}

// The dims of t that a reduction over the op's `axis` list (null: every axis) keeps.
std::vector<std::int64_t> keptDims(const Op& op, const Type& t) {
    const json& ax = op.attrs().at("axis");
    std::vector<bool> drop(static_cast<std::size_t>(t.ndim()), ax.is_null());
    if (!ax.is_null())
        for (const auto& a : ax) drop[static_cast<std::size_t>(normAxis(op, a.get<std::int64_t>(), t.ndim()))] = true;
    std::vector<std::int64_t> dims;
    for (int i = 0; i < t.ndim(); ++i)
        if (!drop[static_cast<std::size_t>(i)]) dims.push_back(t.dims()[static_cast<std::size_t>(i)]);
    return dims;
}

} // namespace

namespace opkinds {

// ---------------------------------------------------------------- elemwise
std::vector<Type> elemwiseRule(const Op& op, Vars in) {
    const std::string s = op.str("scalar");
    const std::size_t n = in.size();
    const ScalarOpInfo* info = findScalarOp(s); // nullptr: composite
    if (info && info->arity >= 1 && static_cast<int>(n) != info->arity)
        fail(op, "takes " + std::to_string(info->arity) + (info->arity == 1 ? " input" : " inputs") + ", got " +
                     std::to_string(n));
    if (n == 0) fail(op, "takes at least 1 input");
    if (const ScalarExpr* e = compositeExpression(op); e && e->numInputs() > static_cast<int>(n))
        fail(op, "the expression reads i" + std::to_string(e->numInputs() - 1) + " but the node has " +
                     std::to_string(n) + " inputs");
    auto dims = broadcastDims(in);
    DType out;
    if (s == "cast" || (s == "composite" && op.has("dtype"))) {
        auto d = parseDType(op.str("dtype"));
        if (!d) fail(op, "attribute 'dtype' is not a dtype");
        out = *d;
    } else if (info) {
        std::vector<DType> args;
        for (std::size_t i = 0; i < n; ++i) args.push_back(ty(in, i).dtype());
        out = scalarResultType(info->op, args);
    } else { // a composite without dtype: the upcast of its inputs
        out = ty(in, 0).dtype();
        for (std::size_t i = 1; i < n; ++i) out = upcast(out, ty(in, i).dtype());
    }
    return {Type(out, dims)};
}

// ---------------------------------------------------------------- shapes
std::vector<Type> dimShuffleRule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    const json& order = op.attrs().at("order");
    std::vector<std::int64_t> dims;
    std::vector<bool> used(static_cast<std::size_t>(std::max(0, t.ndim())), false);
    for (const auto& e : order) {
        if (e.is_string()) {
            if (e.get<std::string>() != "x") fail(op, "order entries are axes or \"x\"");
            dims.push_back(1);
            continue;
        }
        std::int64_t a = e.get<std::int64_t>();
        if (a < 0 || a >= t.ndim()) fail(op, "axis " + std::to_string(a) + " out of range for " + t.str());
        if (used[static_cast<std::size_t>(a)]) fail(op, "axis " + std::to_string(a) + " appears twice");
        used[static_cast<std::size_t>(a)] = true;
        dims.push_back(t.dims()[static_cast<std::size_t>(a)]);
    }
    for (int a = 0; a < t.ndim(); ++a)
        if (!used[static_cast<std::size_t>(a)] && t.dims()[static_cast<std::size_t>(a)] > 1)
            fail(op, "drops axis " + std::to_string(a) + " of " + t.str() + ", which is not broadcastable");
    return {Type(t.dtype(), dims)};
}

std::vector<Type> reshapeRule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    needInt(op, in, 1);
    needRank(op, in, 1, 1);
    const std::int64_t ndim = op.intAttr("ndim");
    if (ty(in, 1).rankKnown() && ty(in, 1).dims()[0] >= 0 && ty(in, 1).dims()[0] != ndim)
        fail(op,
             "shape vector has " + std::to_string(ty(in, 1).dims()[0]) + " entries, ndim is " + std::to_string(ndim));
    std::vector<std::int64_t> dims(static_cast<std::size_t>(ndim), U);
    if (auto known = knownIntVector(in[1])) {
        if (static_cast<std::int64_t>(known->size()) != ndim)
            fail(op, "shape has " + std::to_string(known->size()) + " entries, ndim is " + std::to_string(ndim));
        int minus = -1;
        std::int64_t prod = 1;
        bool allKnown = true;
        for (std::size_t i = 0; i < known->size(); ++i) {
            std::int64_t d = (*known)[i];
            if (d == -1 && minus < 0) {
                minus = static_cast<int>(i);
            } else if (d >= 0) {
                dims[i] = d;
                if (__builtin_mul_overflow(prod, d, &prod))
                    fail(op, "shape " + dimsStr(*known) + " has more elements than a 64-bit count holds");
            } else {
                allKnown = false;
            }
        }
        const std::int64_t total = t.numElements();
        if (minus >= 0 && allKnown && total >= 0 && prod > 0) {
            if (total % prod) fail(op, "cannot reshape " + t.str() + " to " + dimsStr(*known));
            dims[static_cast<std::size_t>(minus)] = total / prod;
        } else if (minus < 0 && allKnown && total >= 0 && prod != total) {
            fail(op, "incompatible static shapes: cannot reshape " + t.str() + " (" + std::to_string(total) +
                         " elements) to " + dimsStr(dims));
        }
    }
    return {Type(t.dtype(), dims)};
}

std::vector<Type> flattenRule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    const std::int64_t outdim = op.intAttr("outdim", 1);
    if (outdim < 1 || (t.rankKnown() && outdim > t.ndim()))
        fail(op, "outdim " + std::to_string(outdim) + " invalid for " + t.str());
    if (!t.rankKnown()) return {Type(t.dtype(), std::vector<std::int64_t>(static_cast<std::size_t>(outdim), U))};
    std::vector<std::int64_t> dims(t.dims().begin(), t.dims().begin() + (outdim - 1));
    std::int64_t p = 1;
    for (int i = static_cast<int>(outdim) - 1; i < t.ndim(); ++i) {
        std::int64_t d = t.dims()[static_cast<std::size_t>(i)];
        p = (p < 0 || d < 0) ? U : p * d;
    }
    dims.push_back(p);
    return {Type(t.dtype(), dims)};
}

std::vector<Type> shapeRule(const Op&, Vars in) {
    const Type& t = ty(in, 0);
    return {Type(DType::Int64, {t.rankKnown() ? t.ndim() : U})};
}

std::vector<Type> shapeIRule(const Op& op, Vars in) {
    const std::int64_t i = op.intAttr("i");
    if (ty(in, 0).rankKnown() && (i < 0 || i >= ty(in, 0).ndim()))
        fail(op, "axis " + std::to_string(i) + " out of range for " + ty(in, 0).str());
    return {Type(DType::Int64, {})};
}

std::vector<Type> makeVectorRule(const Op& op, Vars in) {
    for (std::size_t i = 0; i < in.size(); ++i)
        if (ty(in, i).rankKnown() && ty(in, i).ndim() != 0)
            fail(op, "input " + std::to_string(i) + " must be a scalar, got " + ty(in, i).str());
    auto d = parseDType(op.str("dtype"));
    return {Type(*d, {static_cast<std::int64_t>(in.size())})};
}

std::vector<Type> allocRule(const Op& op, Vars in) {
    const Type& v = ty(in, 0);
    const std::size_t n = in.size() - 1;
    if (v.rankKnown() && static_cast<std::size_t>(v.ndim()) > n)
        fail(op, "the value " + v.str() + " has more dimensions than the " + std::to_string(n) + " given");
    std::vector<std::int64_t> dims(n, U);
    for (std::size_t i = 0; i < n; ++i) {
        if (!isInteger(ty(in, i + 1).dtype()))
            fail(op, "shape input " + std::to_string(i + 1) + " is " + ty(in, i + 1).str() +
                         " (Theano's alloc_validate_shape: shape arguments to Alloc must be integers)");
        if (ty(in, i + 1).rankKnown() && ty(in, i + 1).ndim() != 0)
            fail(op, "shape input " + std::to_string(i + 1) + " must be a scalar, got " + ty(in, i + 1).str() +
                         " (Theano's alloc_validate_shape: each shape dimension to Alloc must be a scalar)");
        if (auto k = knownIntScalar(in[i + 1])) dims[i] = *k;
    }
    return {Type(v.dtype(), dims)};
}

std::vector<Type> allocEmptyRule(const Op& op, Vars in) {
    std::vector<std::int64_t> dims(in.size(), U);
    for (std::size_t i = 0; i < in.size(); ++i) {
        needInt(op, in, i);
        if (auto k = knownIntScalar(in[i])) dims[i] = *k;
    }
    return {Type(*parseDType(op.str("dtype")), dims)};
}

std::vector<Type> subtensorRule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    const json& idx = op.attrs().at("idx");
    const std::size_t nsym = symbolicCount(idx);
    const std::size_t first = op.kind().find("IncSubtensor") != std::string::npos ? 2 : 1;
    if (in.size() != first + nsym && !(first == 2 && in.size() == 1))
        fail(op, "takes " + std::to_string(first + nsym) + " inputs (" + std::to_string(nsym) +
                     " symbolic indices), got " + std::to_string(in.size()));
    for (std::size_t i = first; i < in.size(); ++i) {
        if (!isInteger(ty(in, i).dtype()) || (ty(in, i).rankKnown() && ty(in, i).ndim() != 0))
            fail(op, "index input " + std::to_string(i) + " must be an integer scalar, got " + ty(in, i).str());
    }
    if (t.rankKnown() && static_cast<int>(idx.size()) > t.ndim())
        fail(op, "has " + std::to_string(idx.size()) + " indices for " + t.str());
    std::vector<std::int64_t> dims;
    for (std::size_t a = 0; a < idx.size(); ++a) {
        const std::int64_t n = t.rankKnown() ? t.dims()[a] : U;
        if (idx[a].is_string()) continue; // symbolic integer index: drops the axis
        if (idx[a].is_object() &&
            (idx[a].value("start", json()).is_string() || idx[a].value("stop", json()).is_string() ||
             idx[a].value("step", json()).is_string())) {
            dims.push_back(U);
            continue;
        }
        if (idx[a].is_number_integer()) {
            std::int64_t i = idx[a].get<std::int64_t>();
            if (n >= 0 && (i >= n || i < -n))
                fail(op,
                     "index " + std::to_string(i) + " out of bounds for axis " + std::to_string(a) + " of " + t.str());
            continue;
        }
        if (idx[a].contains("step") && !idx[a]["step"].is_null() && idx[a]["step"].get<std::int64_t>() == 0)
            fail(op, "slice step cannot be 0");
        dims.push_back(sliceLen(n, idx[a]));
    }
    if (!t.rankKnown()) return {Type::unknownRank(t.dtype())};
    for (std::size_t a = idx.size(); a < t.dims().size(); ++a) dims.push_back(t.dims()[a]);
    return {Type(t.dtype(), dims)};
}

std::vector<Type> advSub1Rule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    needInt(op, in, 1);
    needRank(op, in, 1, 1);
    if (t.rankKnown() && t.ndim() < 1) fail(op, "cannot index a scalar");
    std::vector<std::int64_t> dims{ty(in, 1).rankKnown() ? ty(in, 1).dims()[0] : U};
    for (int i = 1; i < t.ndim(); ++i) dims.push_back(t.dims()[static_cast<std::size_t>(i)]);
    return {Type(t.dtype(), dims)};
}

std::vector<Type> incSubtensorRule(const Op& op, Vars in) {
    std::vector<Variable*> xs{in[0]};
    for (std::size_t i = 2; i < in.size(); ++i) xs.push_back(in[i]);
    subtensorRule(
        Op::get(op.kind() == "GpuIncSubtensor" ? "GpuSubtensor" : "Subtensor", {{"idx", op.attrs().at("idx")}}),
        xs); // validates indices against x
    return {Type(ty(in, 0).dtype(), ty(in, 0).dims())};
}
std::vector<Type> joinRule(const Op& op, Vars in) {
    const int nd = ty(in, 0).ndim();
    const int axis = normAxis(op, op.intAttr("axis"), nd);
    std::vector<std::int64_t> dims = ty(in, 0).dims();
    DType dt = ty(in, 0).dtype();
    for (std::size_t i = 1; i < in.size(); ++i) {
        const Type& t = ty(in, i);
        if (t.ndim() != nd)
            fail(op, "input " + std::to_string(i) + " has rank " + std::to_string(t.ndim()) + ", input 0 has " +
                         std::to_string(nd));
        dt = upcast(dt, t.dtype());
        for (int a = 0; a < nd; ++a) {
            auto& d = dims[static_cast<std::size_t>(a)];
            const std::int64_t e = t.dims()[static_cast<std::size_t>(a)];
            if (a == axis)
                d = (d < 0 || e < 0) ? U : d + e;
            else
                d = agree(op, d, e, "input " + std::to_string(i) + " axis " + std::to_string(a));
        }
    }
    return {Type(dt, dims)};
}

std::vector<Type> splitRule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    needInt(op, in, 1);
    const int axis = normAxis(op, op.intAttr("axis"), t.ndim());
    const std::int64_t n = op.intAttr("n_splits");
    if (n < 1) fail(op, "n_splits must be at least 1");
    auto known = knownIntVector(in[1]);
    if (known && static_cast<std::int64_t>(known->size()) != n)
        fail(op, "sizes has " + std::to_string(known->size()) + " entries, n_splits is " + std::to_string(n));
    std::vector<Type> out;
    std::int64_t sum = 0;
    bool allKnown = true;
    for (std::int64_t i = 0; i < n; ++i) {
        auto dims = t.dims();
        std::int64_t s = known ? (*known)[static_cast<std::size_t>(i)] : U;
        if (s == kUnknownValue) s = U;
        dims[static_cast<std::size_t>(axis)] = s;
        if (s < 0)
            allKnown = false;
        else
            sum += s;
        out.emplace_back(t.dtype(), dims);
    }
    const std::int64_t whole = t.dims()[static_cast<std::size_t>(axis)];
    if (allKnown && whole >= 0 && sum != whole)
        fail(op, "incompatible static shapes: split sizes sum to " + std::to_string(sum) + " but axis " +
                     std::to_string(axis) + " of " + t.str() + " is " + std::to_string(whole));
    return out;
}

std::vector<Type> careduceRule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    const std::vector<std::int64_t> dims = keptDims(op, t);
    DType dt = t.dtype();
    const std::string s = op.str("scalar");
    if ((s == "add" || s == "mul") && (isInteger(dt) || dt == DType::Bool))
        dt = isUnsigned(dt) ? DType::UInt64 : DType::Int64;
    return {Type(dt, dims)};
}

std::vector<Type> maxAndArgmaxRule(const Op& op, Vars in) {
    const Type& t = ty(in, 0);
    const std::vector<std::int64_t> dims = keptDims(op, t);
    return {Type(t.dtype(), dims), Type(DType::Int64, dims)};
}

std::vector<Type> dotRule(const Op& op, Vars in) {
    const Type &a = ty(in, 0), &b = ty(in, 1);
    if (a.ndim() < 1 || a.ndim() > 2 || b.ndim() < 1 || b.ndim() > 2)
        fail(op, "takes vectors or matrices, got " + a.str() + " and " + b.str());
    std::int64_t ka = a.dims().back(), kb = b.dims()[0];
    agree(op, ka, kb, "inner dimensions of " + a.str() + " and " + b.str());
    std::vector<std::int64_t> dims;
    if (a.ndim() == 2) dims.push_back(a.dims()[0]);
    if (b.ndim() == 2) dims.push_back(b.dims()[1]);
    return {Type(upcast(a.dtype(), b.dtype()), dims)};
}

std::vector<Type> dot22Rule(const Op& op, Vars in) {
    needRank(op, in, 0, 2);
    needRank(op, in, 1, 2);
    return dotRule(op, in);
}

std::vector<Type> gemmRule(const Op& op, Vars in) {
    // gemm(z, a, x, y, b) = b*z + a*dot(x, y)  (Theano tensor/blas.py)
    needRank(op, in, 0, 2);
    needRank(op, in, 2, 2);
    needRank(op, in, 3, 2);
    needRank(op, in, 1, 0);
    needRank(op, in, 4, 0);
    auto d = dotRule(op, in.subspan(2, 2))[0];
    const Type& z = ty(in, 0);
    agree(op, z.dims()[0], d.dims()[0], "rows of z and dot(x, y)");
    agree(op, z.dims()[1], d.dims()[1], "columns of z and dot(x, y)");
    return {Type(z.dtype(), z.merged(d.withDType(z.dtype())).dims())};
}

std::vector<Type> gemvRule(const Op& op, Vars in) {
    // gemv(z, a, A, x, b) = b*z + a*dot(A, x)
    needRank(op, in, 0, 1);
    needRank(op, in, 2, 2);
    needRank(op, in, 3, 1);
    auto d = dotRule(op, in.subspan(2, 2))[0];
    agree(op, ty(in, 0).dims()[0], d.dims()[0], "z and dot(A, x)");
    return {ty(in, 0).withLocation({})};
}

std::vector<Type> batchedDotRule(const Op& op, Vars in) {
    const Type &a = ty(in, 0), &b = ty(in, 1);
    const bool mix =
        (a.ndim() == 2 || a.ndim() == 3) && (b.ndim() == 2 || b.ndim() == 3) && (a.ndim() == 2 || b.ndim() == 2);
    if (mix) { // Theano's BatchedDot: (B,N,K)x(B,K) -> (B,N), (B,K)x(B,K,M) -> (B,M), (B,K)x(B,K) -> (B)
        std::vector<std::int64_t> dims{agree(op, a.dims()[0], b.dims()[0], "batch axis 0")};
        agree(op, a.dims().back(), b.dims()[1], "inner dimensions of " + a.str() + " and " + b.str());
        if (a.ndim() == 3) dims.push_back(a.dims()[1]);
        if (b.ndim() == 3) dims.push_back(b.dims()[2]);
        return {Type(upcast(a.dtype(), b.dtype()), dims)};
    }
    if (a.ndim() < 3 || b.ndim() != a.ndim())
        fail(op, "takes two tensors of equal rank >= 3, or of rank 2 and 3 as Theano's BatchedDot, got " + a.str() +
                     " and " + b.str());
    std::vector<std::int64_t> dims;
    for (int i = 0; i < a.ndim() - 2; ++i)
        dims.push_back(agree(op, a.dims()[static_cast<std::size_t>(i)], b.dims()[static_cast<std::size_t>(i)],
                             "batch axis " + std::to_string(i)));
    agree(op, a.dims().back(), b.dims()[static_cast<std::size_t>(b.ndim() - 2)],
          "inner dimensions of " + a.str() + " and " + b.str());
    dims.push_back(a.dims()[static_cast<std::size_t>(a.ndim() - 2)]);
    dims.push_back(b.dims().back());
    return {Type(upcast(a.dtype(), b.dtype()), dims)};
}

std::vector<Type> sameAsInput0(const Op&, Vars in) { return {ty(in, 0).withLocation({})}; }

// Assert(x, conds...) passes x through wherever it lives (Theano lifts it onto the GPU input).
std::vector<Type> assertRule(const Op&, Vars in) { return {ty(in, 0)}; }

std::vector<Type> softmaxRule(const Op& op, Vars in) {
    if (ty(in, 0).rankKnown()) normAxis(op, op.intAttr("axis", -1), ty(in, 0).ndim());
    if (!isFloat(ty(in, 0).dtype())) fail(op, "needs a float input, got " + ty(in, 0).str());
    return sameAsInput0(op, in);
}

std::vector<Type> convRule(const Op& op, Vars in) {
    needRank(op, in, 0, 4);
    needRank(op, in, 1, 4);
    const Type &x = ty(in, 0), &w = ty(in, 1);
    const std::int64_t g = op.intAttr("num_groups", 1);
    const json& sub = op.attrs().at("subsample");
    const json& dil = op.attrs().at("filter_dilation");
    const std::int64_t c = x.dims()[1], wc = w.dims()[1];
    if (c >= 0 && wc >= 0 && c != wc * g)
        fail(op, "incompatible static shapes: input has " + std::to_string(c) + " channels, kernel " + w.str() +
                     " with " + std::to_string(g) + " groups expects " + std::to_string(wc * g));
    std::vector<std::int64_t> dims{x.dims()[0], w.dims()[0]};
    for (int a = 0; a < 2; ++a) {
        const std::int64_t n = x.dims()[static_cast<std::size_t>(2 + a)], k = w.dims()[static_cast<std::size_t>(2 + a)];
        const std::int64_t s = sub.at(static_cast<std::size_t>(a)).get<std::int64_t>();
        const std::int64_t d = dil.at(static_cast<std::size_t>(a)).get<std::int64_t>();
        auto [p0, p1] = pads2(op, op.attrs().at("border_mode"), a, k, d);
        if (n < 0 || k < 0 || p0 < 0 || p1 < 0) {
            dims.push_back(U);
            continue;
        }
        const std::int64_t o = (n + p0 + p1 - d * (k - 1) - 1) / s + 1;
        if (o < 0) fail(op, "kernel " + w.str() + " larger than padded input " + x.str());
        dims.push_back(o);
    }
    return {Type(upcast(x.dtype(), w.dtype()), dims)};
}

std::vector<Type> poolRule(const Op& op, Vars in) {
    const Type& x = ty(in, 0);
    const json &ws = op.attrs().at("ws"), &st = op.attrs().at("stride"), &pad = op.attrs().at("pad");
    const int nd = static_cast<int>(ws.size());
    if (x.rankKnown() && x.ndim() < nd) fail(op, "input " + x.str() + " has fewer dims than ws");
    std::vector<std::int64_t> dims(x.dims().begin(), x.dims().end() - nd);
    const bool ib = op.boolAttr("ignore_border", true);
    for (int a = 0; a < nd; ++a) {
        const std::int64_t n = x.dims()[static_cast<std::size_t>(x.ndim() - nd + a)];
        const std::int64_t k = ws[static_cast<std::size_t>(a)], s = st[static_cast<std::size_t>(a)];
        const json& pe = pad[static_cast<std::size_t>(a)];
        std::int64_t p0, p1;
        if (pe.is_array()) {
            p0 = pe[0];
            p1 = pe[1];
        } else {
            p0 = p1 = pe.get<std::int64_t>();
        }
        if (n < 0) {
            dims.push_back(U);
            continue;
        }
        const std::int64_t r = n + p0 + p1;
        std::int64_t o;
        if (ib)
            o = (r - k) / s + 1;
        else if (s >= k)
            o = (r - 1) / s + 1;
        else
            o = std::max<std::int64_t>(0, (r - 1 - k + s) / s) + 1;
        dims.push_back(o);
    }
    return {Type(x.dtype(), dims)};
}

std::vector<Type> cumRule(const Op& op, Vars in) {
    const Type& x = ty(in, 0);
    if (op.attrs().at("axis").is_null()) return {Type(x.dtype(), {x.numElements()})};
    normAxis(op, op.intAttr("axis"), x.ndim());
    return {x.withLocation({})};
}

// tensor/sort.py TopKOp.make_node: a tensor of rank >= 1, an integer scalar k (negative: the
// smallest); one output per return_* flag, |k| along the axis.
std::vector<Type> topKRule(const Op& op, Vars in) {
    const Type& x = ty(in, 0);
    if (!x.rankKnown() || x.ndim() == 0) fail(op, "input 0 must be a tensor of rank >= 1, got " + x.str());
    const int axis = normAxis(op, op.intAttr("axis"), x.ndim());
    needInt(op, in, 1);
    needRank(op, in, 1, 0);
    auto dims = x.dims();
    std::int64_t& d = dims[static_cast<std::size_t>(axis)];
    if (const auto k = knownIntScalar(in[1])) {
        const std::int64_t n = *k < 0 ? -*k : *k;
        if (d >= 0 && n > d)
            fail(op, "k " + std::to_string(*k) + " is larger than axis " + std::to_string(axis) + " of " + x.str());
        d = n;
    } else {
        d = U;
    }
    std::vector<Type> out;
    if (op.boolAttr("return_values")) out.emplace_back(x.dtype(), dims);
    if (op.boolAttr("return_indices")) out.emplace_back(*parseDType(op.str("idx_dtype")), dims);
    return out;
}

// ---------------------------------------------------------------- location wrappers
TypeRule hostRule(TypeRule r, std::set<int> anyLocation) {
    return [r = std::move(r), anyLocation](const Op& op, Vars in) {
        for (std::size_t i = 0; i < in.size(); ++i)
            if (!anyLocation.count(static_cast<int>(i)) && in[i]->type().isGpu())
                fail(op, "input " + std::to_string(i) + " (" + in[i]->displayName() + ") is on " +
                             in[i]->type().location().str() + ", a host op needs host inputs");
        return r(op, in);
    };
}

// GPU kinds: data inputs on one GPU context, `hostParams` inputs on the host (shapes, scalars).
TypeRule gpuRule(TypeRule r, HostParams hostParams) {
    return [r = std::move(r), hostParams](const Op& op, Vars in) {
        std::optional<Location> ctx;
        if (op.has("context")) ctx = Location::gpu(op.str("context"));
        for (std::size_t i = 0; i < in.size(); ++i) {
            const Location& l = in[i]->type().location();
            if (hostParams.contains(i)) {
                if (l.isGpu())
                    fail(op, "input " + std::to_string(i) + " must be on the host, got " + in[i]->type().str());
                continue;
            }
            if (!l.isGpu())
                fail(op, "input " + std::to_string(i) + " (" + in[i]->displayName() +
                             ") is on the host, a GPU op needs GPU inputs");
            if (ctx && *ctx != l)
                fail(op, "input " + std::to_string(i) + " is on " + l.str() + ", expected " + ctx->str());
            ctx = l;
        }
        auto out = r(op, in);
        for (auto& t : out) t = t.withLocation(ctx.value_or(Location::gpu()));
        return out;
    };
}

// ---------------------------------------------------------------- transfers (gpuarray/basic_ops.py)
std::vector<Type> hostFromGpuRule(const Op& op, Vars in) {
    if (!in[0]->type().isGpu()) fail(op, "input " + in[0]->displayName() + " is already on the host");
    return {in[0]->type().withLocation(Location::host())};
}

std::vector<Type> gpuFromHostRule(const Op& op, Vars in) {
    if (in[0]->type().isGpu())
        fail(op, "input " + in[0]->displayName() + " is already on " + in[0]->type().location().str());
    return {in[0]->type().withLocation(Location::gpu(op.str("context")))};
}

std::vector<Type> gpuToGpuRule(const Op& op, Vars in) {
    if (!in[0]->type().isGpu()) fail(op, "input " + in[0]->displayName() + " is on the host");
    return {in[0]->type().withLocation(Location::gpu(op.str("context")))};
}

} // namespace opkinds

// ---------------------------------------------------------------- helpers exported
std::vector<std::int64_t> broadcastDims(std::span<Variable* const> in) {
    int nd = -1;
    for (auto* v : in) {
        if (!v->type().rankKnown()) continue;
        if (nd < 0)
            nd = v->type().ndim();
        else if (v->type().ndim() != nd)
            throw Error("inputs have different ranks (" + in[0]->type().str() + " and " + v->type().str() +
                        "); Theano's Elemwise.make_node left-pads the lower rank with a DimShuffle{x,...}, "
                        "which makeNode (MakeNode.h) inserts and makeApply does not");
    }
    if (nd < 0) return {};
    std::vector<std::int64_t> dims(static_cast<std::size_t>(nd), 1);
    std::vector<bool> unknown(static_cast<std::size_t>(nd), false);
    for (int a = 0; a < nd; ++a) {
        for (auto* v : in) {
            if (!v->type().rankKnown()) continue;
            const std::int64_t d = v->type().dims()[static_cast<std::size_t>(a)];
            auto& cur = dims[static_cast<std::size_t>(a)];
            if (d < 0) {
                unknown[static_cast<std::size_t>(a)] = true;
                continue;
            }
            if (d == 1) continue;
            if (cur != 1 && cur != d)
                throw Error("incompatible static shapes at axis " + std::to_string(a) + ": " + in[0]->type().str() +
                            " and " + v->type().str() +
                            " (Theano's Elemwise: dims that are not broadcastable must be equal)");
            cur = d;
        }
        if (unknown[static_cast<std::size_t>(a)] && dims[static_cast<std::size_t>(a)] == 1)
            dims[static_cast<std::size_t>(a)] = U;
    }
    return dims;
}

std::optional<std::int64_t> knownIntScalar(const Variable* v) {
    if (v->isConstant()) {
        const auto& c = *v->constant();
        if (!c.loaded() || c.numElements() != 1 || !(isInteger(c.dtype) || c.dtype == DType::Bool)) return std::nullopt;
        return c.intAt(0);
    }
    if (const Apply* o = v->owner()) {
        if (o->op().kind() == "Shape_i") {
            const Type& t = o->input(0)->type();
            const std::int64_t i = o->op().intAttr("i");
            if (t.rankKnown() && i < t.ndim() && t.dims()[static_cast<std::size_t>(i)] >= 0)
                return t.dims()[static_cast<std::size_t>(i)];
        }
    }
    return std::nullopt;
}

std::optional<std::vector<std::int64_t>> knownIntVector(const Variable* v) {
    if (v->isConstant()) {
        const auto& c = *v->constant();
        if (!c.loaded() || c.shape.size() != 1 || !isInteger(c.dtype)) return std::nullopt;
        std::vector<std::int64_t> r(static_cast<std::size_t>(c.numElements()));
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = c.intAt(static_cast<std::int64_t>(i));
        return r;
    }
    if (const Apply* o = v->owner()) {
        if (o->op().kind() == "MakeVector") {
            std::vector<std::int64_t> r;
            for (auto* in : o->inputs()) r.push_back(knownIntScalar(in).value_or(kUnknownValue));
            return r;
        }
        if (o->op().kind() == "Shape" && o->input(0)->type().rankKnown()) {
            std::vector<std::int64_t> r = o->input(0)->type().dims();
            for (auto& d : r)
                if (d < 0) d = kUnknownValue;
            return r;
        }
    }
    return std::nullopt;
}

} // namespace passlens
