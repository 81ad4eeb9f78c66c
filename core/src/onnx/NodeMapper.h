#pragma once
// The mapping of one ONNX node to Theano ops (OPS.md "Import rules"): NodeMapper holds the node,
// its inputs and the helpers every mapping uses (attributes checked against the schema's types
// and the inputs' ranks, element-wise ops with ONNX broadcasting, constants); the mappers
// themselves live in a table from op type to function, filled by one file per family of ops.
#include "Importer.h"

#include <cstddef>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace passlens::onnximport {

/// One ONNX node being mapped, with its inputs already resolved in its scope.
struct NodeMapper {
    Importer& imp;
    Scope& scope;
    FunctionGraph& g;
    onnx::NodeProto& node;
    std::string where;
    std::vector<Variable*> in; // nullptr for an absent optional input
    int opset;

    Variable* input(std::size_t i) const { return i < in.size() ? in[i] : nullptr; }
    [[noreturn]] void fail(const std::string& why) const { imp.fail(where, why); }
    // The first n inputs are required: present and not the empty name of an absent optional.
    void need(std::size_t n) const {
        const std::string& t = node.op_type();
        if (in.size() < n) fail(t + " needs " + std::to_string(n) + " inputs, got " + std::to_string(in.size()));
        for (std::size_t k = 0; k < n; ++k)
            if (!in[k]) fail(t + " input " + std::to_string(k) + " is required, the node gives an empty name");
    }

    // Attributes, checked against the type the ONNX schema gives them (findAttrOfType), and
    // their values against the ranks of the inputs, one helper per kind of attribute, before
    // any mapping uses them. Each refusal names the attribute and the reason.
    const onnx::AttributeProto* attr(const std::string& name, onnx::AttributeProto::AttributeType type) const {
        return findAttrOfType(node, name, type, [this](const std::string& why) { fail(why); });
    }
    std::int64_t intAttr(const std::string& name, std::int64_t dflt) const {
        const auto* a = attr(name, onnx::AttributeProto::INT);
        return a ? a->i() : dflt;
    }
    float floatAttr(const std::string& name, float dflt) const {
        const auto* a = attr(name, onnx::AttributeProto::FLOAT);
        return a ? a->f() : dflt;
    }
    std::string stringAttr(const std::string& name, const std::string& dflt) const {
        const auto* a = attr(name, onnx::AttributeProto::STRING);
        return a ? a->s() : dflt;
    }
    std::optional<std::vector<std::int64_t>> intsAttr(const std::string& name) const {
        const auto* a = attr(name, onnx::AttributeProto::INTS);
        if (!a) return std::nullopt;
        return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
    }
    // An axis in [-nd, nd) (ONNX counts negative axes from the end), as a non-negative one.
    std::int64_t normAxis(std::int64_t a, int nd, const std::string& what = "axis") const {
        const std::int64_t r = a < 0 ? a + nd : a;
        if (r < 0 || r >= nd) fail(what + " " + std::to_string(a) + " out of range for rank " + std::to_string(nd));
        return r;
    }
    std::int64_t axisAttr(const std::string& name, std::int64_t dflt, int nd) const {
        return normAxis(intAttr(name, dflt), nd, "attribute '" + name + "':");
    }
    // A list of axes (attribute or constant input `what`), each normalised; with `unique`, an
    // axis named twice is refused (Unsqueeze, Squeeze).
    std::vector<std::int64_t> normAxes(const std::vector<std::int64_t>& axes, int nd, const std::string& what,
                                       bool unique) const {
        std::vector<std::int64_t> out;
        for (auto a : axes) {
            const std::int64_t r = normAxis(a, nd, what + ":");
            if (unique && std::find(out.begin(), out.end(), r) != out.end())
                fail(what + ": axis " + std::to_string(r) + " is named twice");
            out.push_back(r);
        }
        return out;
    }
    // Transpose's perm: a permutation of 0..nd-1 (default: the axes reversed).
    std::vector<std::int64_t> permAttr(int nd) const {
        auto perm = intsAttr("perm");
        std::vector<std::int64_t> out;
        if (!perm) {
            for (int i = nd - 1; i >= 0; --i) out.push_back(i);
            return out;
        }
        if (static_cast<int>(perm->size()) != nd)
            fail("attribute 'perm' has " + std::to_string(perm->size()) + " entries, the input has rank " +
                 std::to_string(nd));
        std::vector<bool> seen(static_cast<std::size_t>(nd), false);
        for (auto p : *perm) {
            if (p < 0 || p >= nd)
                fail("attribute 'perm': entry " + std::to_string(p) + " out of range for rank " + std::to_string(nd));
            if (seen[static_cast<std::size_t>(p)])
                fail("attribute 'perm': axis " + std::to_string(p) + " appears twice");
            seen[static_cast<std::size_t>(p)] = true;
        }
        return *perm;
    }
    // kernel_shape / strides / dilations: one value per spatial axis (default `dflt` on every
    // axis); checkModelAttributes made sure each is at least 1.
    std::vector<std::int64_t> spatialAttr(const std::string& name, int spatial, std::int64_t dflt) const {
        auto v = intsAttr(name);
        if (!v) return std::vector<std::int64_t>(static_cast<std::size_t>(spatial), dflt);
        if (static_cast<int>(v->size()) != spatial)
            fail("attribute '" + name + "' has " + std::to_string(v->size()) + " values, the input has " +
                 std::to_string(spatial) + " spatial axes");
        return *v;
    }
    // pads: begin values for each spatial axis, then end values, all non-negative (default 0).
    std::vector<std::int64_t> padsAttr(int spatial) const {
        auto v = intsAttr("pads");
        if (!v) return std::vector<std::int64_t>(static_cast<std::size_t>(2 * spatial), 0);
        if (static_cast<int>(v->size()) != 2 * spatial)
            fail("attribute 'pads' has " + std::to_string(v->size()) + " values, " + std::to_string(2 * spatial) +
                 " needed (begin and end of " + std::to_string(spatial) + " spatial axes)");
        for (auto x : *v)
            if (x < 0) fail("attribute 'pads' has value " + std::to_string(x) + ", it must be at least 0");
        return *v;
    }
    // auto_pad: one of the four values the spec names.
    std::string autoPadAttr() const {
        const std::string p = stringAttr("auto_pad", "NOTSET");
        if (p != "NOTSET" && p != "VALID" && p != "SAME_UPPER" && p != "SAME_LOWER")
            fail("attribute 'auto_pad' is '" + p + "', not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
        return p;
    }
    // Split sizes (attribute or constant input): one per output, non-negative, summing to the
    // split dim when it is known.
    void checkSplitSizes(const std::vector<std::int64_t>& sizes, std::int64_t n, std::int64_t dim) const {
        if (static_cast<std::int64_t>(sizes.size()) != n)
            fail("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
        std::int64_t sum = 0;
        for (auto x : sizes) {
            if (x < 0) fail("split size " + std::to_string(x) + " is negative");
            sum += x;
        }
        if (dim >= 0 && sum != dim)
            fail("split sizes sum to " + std::to_string(sum) + ", the axis has " + std::to_string(dim));
    }
    // Input k must have rank nd (the spec's requirement where a mapping indexes its dims).
    void needRank(std::size_t k, int nd) const {
        if (rank(in[k]) != nd)
            fail("input " + std::to_string(k) + " must have rank " + std::to_string(nd) + ", has type " +
                 in[k]->type().str());
    }

    Variable* mk(const std::string& kind, json attrs, std::vector<Variable*> ins) {
        return g.apply(Op::get(kind, std::move(attrs)), std::move(ins), node.name());
    }
    Variable* elem(const std::string& scalar, std::vector<Variable*> ins, json extra = json::object()) {
        extra["scalar"] = scalar;
        return mk("Elemwise", extra, broadcastRanks(std::move(ins)));
    }
    // ONNX broadcasting aligns trailing axes; Theano's Elemwise needs equal ranks, so lower-rank
    // inputs get a DimShuffle adding leading broadcastable axes (as Theano's as_tensor + dimshuffle).
    std::vector<Variable*> broadcastRanks(std::vector<Variable*> ins) {
        int nd = 0;
        for (auto* v : ins) nd = std::max(nd, v->type().ndim());
        for (auto*& v : ins) {
            const int r = v->type().ndim();
            if (r == nd || !v->type().rankKnown()) continue;
            json order = json::array();
            for (int i = 0; i < nd - r; ++i) order.push_back("x");
            for (int i = 0; i < r; ++i) order.push_back(i);
            v = mk("DimShuffle", {{"order", order}}, {v});
        }
        return ins;
    }
    Variable* constInt64(std::vector<std::int64_t> vals, bool scalar = false) {
        std::vector<std::int64_t> shape;
        if (!scalar) shape.push_back(static_cast<std::int64_t>(vals.size()));
        return g.addConstant(TensorData::fromInts(DType::Int64, shape, vals));
    }
    Variable* constScalar(DType dt, double v) { return g.addConstant(TensorData::fromDoubles(dt, {}, {v})); }
    std::optional<std::vector<std::int64_t>> constInts(Variable* v) const {
        if (!v || !v->isConstant()) return std::nullopt;
        const auto& c = *v->constant();
        if (!c.loaded() || !(isInteger(c.dtype))) return std::nullopt;
        std::vector<std::int64_t> out(static_cast<std::size_t>(c.numElements()));
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = c.intAt(static_cast<std::int64_t>(i));
        return out;
    }
    std::optional<double> constScalarValue(Variable* v) const {
        if (!v || !v->isConstant() || !v->constant()->loaded() || v->constant()->numElements() != 1)
            return std::nullopt;
        return v->constant()->at(0);
    }
    // An axes list from an attribute (old opsets) or an input (newer opsets); nullopt when absent,
    // and `dynamic` set when the input is not a constant.
    std::optional<std::vector<std::int64_t>> axes(std::size_t inputIndex, int sinceOpset, bool& dynamic) {
        dynamic = false;
        if (opset < sinceOpset) return intsAttr("axes");
        Variable* v = input(inputIndex);
        if (!v) return std::nullopt;
        auto c = constInts(v);
        if (!c) dynamic = true;
        return c;
    }
    int rank(Variable* v) const { return v->type().ndim(); }
    // Element k of an integer vector as an int64 scalar (Subtensor{k}), or the scalar itself.
    Variable* scalarAt(Variable* v, std::int64_t k) {
        if (v->type().ndim() == 0) return v;
        Variable* s = mk("Subtensor", {{"idx", json::array({k})}}, {v});
        if (s->type().dtype() != DType::Int64) s = elem("cast", {s}, {{"dtype", "int64"}});
        return s;
    }
    // The element count of axes `red` of v: a constant when static, else a product of Shape_i
    // (Theano's mean divides by shape[axis] products), cast to `dt`.
    Variable* countOf(Variable* v, const std::set<std::int64_t>& red, DType dt) {
        std::int64_t count = 1;
        std::vector<Variable*> dyn;
        for (auto a : red) {
            const std::int64_t d = v->type().dims()[static_cast<std::size_t>(a)];
            if (d >= 0)
                count *= d;
            else
                dyn.push_back(mk("Shape_i", {{"i", a}}, {v}));
        }
        if (dyn.empty()) return constScalar(dt, static_cast<double>(count));
        if (count != 1) dyn.push_back(constInt64({count}, true));
        Variable* p = dyn.size() == 1 ? dyn[0] : elem("mul", dyn);
        return elem("cast", {p}, {{"dtype", std::string(dtypeName(dt))}});
    }
    // The outputs for the node from the mapper of its op type, or an empty vector to fall back
    // to an Onnx op (another domain, an input of unknown rank, no mapper, or a mapper declining).
    std::vector<Variable*> map();
};

/// Maps one node of the default ONNX domain whose inputs all have known ranks: its outputs, or
/// an empty vector to keep it as an Onnx<Type> host op. Refuses bad attributes and inputs with
/// NodeMapper::fail.
using Mapper = std::function<std::vector<Variable*>(NodeMapper&)>;
/// ONNX op type -> its mapper.
using MapperTable = std::unordered_map<std::string, Mapper>;

/// Adds the mapper of `opType`; a second one for the same op type is a programming error
/// (std::logic_error).
void addMapper(MapperTable& table, const std::string& opType, Mapper mapper);

/// The families of mappers, one file each.
void addElementwiseMappers(MapperTable& table); // MapElementwise.cpp: Add, Relu, Cast, Clip, ...
void addShapeMappers(MapperTable& table);       // MapShape.cpp: Reshape, Transpose, Concat, Split, ...
void addIndexMappers(MapperTable& table);       // MapIndex.cpp: Gather, Slice
void addNetworkMappers(MapperTable& table);     // MapNetwork.cpp: MatMul, Gemm, Conv, pools, ...
void addReductionMappers(MapperTable& table);   // MapReduce.cpp: Reduce*, global pools, CumSum, TopK, ArgMax/Min

} // namespace passlens::onnximport
