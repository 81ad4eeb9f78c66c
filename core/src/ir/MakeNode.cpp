// Theano's make_node input conversions (see MakeNode.h for the rules and their sources).
#include "passlens/ir/MakeNode.h"

#include "passlens/gpu/Lifters.h"
#include "passlens/ir/Error.h"
#include "passlens/ir/OpRegistry.h"

#include <deque>
#include <limits>

namespace passlens {
namespace {
using json = nlohmann::json;

constexpr std::size_t kMaxLiteralRank = 32; // numpy's NPY_MAXDIMS
const char* const kRagged =
    "a list literal must be rectangular (numpy.asarray: setting an array element with a sequence)";

// Shape and flattened entries of a (nested) list literal; throws for a ragged list or more
// than kMaxLiteralRank levels (checked before recursing deeper).
void flatten(const json& v, std::size_t depth, std::vector<std::int64_t>& shape, std::vector<const json*>& out) {
    if (!v.is_array()) {
        if (depth != shape.size()) throw Error(kRagged);
        out.push_back(&v);
        return;
    }
    if (depth >= kMaxLiteralRank)
        throw Error("a list literal nests more than " + std::to_string(kMaxLiteralRank) + " levels (numpy's limit)");
    if (depth == shape.size()) {
        if (!out.empty()) throw Error(kRagged);
        shape.push_back(static_cast<std::int64_t>(v.size()));
    } else if (shape[depth] != static_cast<std::int64_t>(v.size())) {
        throw Error(kRagged);
    }
    for (const json& e : v) flatten(e, depth + 1, shape, out);
}

// theano.scalar.basic.autocast_int: the first of int8 .. int64 that holds the value.
DType autocastInt(std::int64_t v) {
    for (DType d : {DType::Int8, DType::Int16, DType::Int32}) {
        const int bits = static_cast<int>(dtypeSize(d)) * 8;
        const std::int64_t hi = (std::int64_t{1} << (bits - 1)) - 1;
        if (v >= -hi - 1 && v <= hi) return d;
    }
    return DType::Int64;
}

// Runs `convert`, tagging the nodes it created (ids above the limit before it) as make_node's.
template <class F> Variable* inserting(FunctionGraph& g, std::vector<Apply*>* inserted, F convert) {
    const NodeId first = g.nodeIdLimit();
    Variable* v = convert();
    for (NodeId id = first; id < g.nodeIdLimit(); ++id)
        if (Apply* a = g.node(id)) {
            a->tag["provenance"] = "make_node";
            if (inserted) inserted->push_back(a);
        }
    return v;
}

// theano.gpuarray.basic_ops.infer_context_name: the first GPU input, the source of a
// HostFromGpu, a tag "context", searched through single-input owners; else the default.
Location inferContext(const Op& op, const std::vector<Variable*>& vars) {
    if (op.has("context")) return Location::gpu(op.str("context"));
    std::deque<const Variable*> todo;
    for (const Variable* v : vars)
        if (v) todo.push_front(v);
    while (!todo.empty()) {
        const Variable* v = todo.back();
        todo.pop_back();
        if (v->type().isGpu()) return v->type().location();
        if (v->tag.contains("context") && v->tag["context"].is_string())
            return Location::gpu(v->tag["context"].get<std::string>());
        if (const Apply* o = v->owner()) {
            if (o->op().kind() == "HostFromGpu") return o->input(0)->type().location();
            if (o->nin() == 1) todo.push_front(o->input(0));
        }
    }
    return Location::gpu();
}

} // namespace

bool isLiteral(const json& value) { return value.is_number() || value.is_boolean() || value.is_array(); }

std::shared_ptr<TensorData> literalTensor(const json& value, LiteralRule rule) {
    std::vector<std::int64_t> shape;
    std::vector<const json*> items;
    flatten(value, 0, shape, items);
    bool anyFloat = false, anyBool = false, anyInt = false, anyBig = false;
    for (const json* e : items) {
        if (e->is_boolean())
            anyBool = true;
        else if (e->is_number_float())
            anyFloat = true;
        else if (e->is_number_unsigned() &&
                 e->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            anyBig = true;
        else if (e->is_number_integer())
            anyInt = true;
        else
            throw Error("a literal holds numbers only, got " + e->dump());
    }
    const bool scalar = !value.is_array();
    if (anyBool && rule == LiteralRule::AsTensorVariable)
        throw Error("Theano's as_tensor_variable refuses true / false (\"Cannot cast True or False as a tensor "
                    "variable\"); write 1 / 0");
    DType dt;
    if (anyFloat)
        dt = scalar && rule == LiteralRule::AsTensorVariable ? DType::Float32 : DType::Float64;
    else if (anyBig)
        dt = DType::UInt64;
    else if (anyInt)
        dt = scalar && rule == LiteralRule::AsTensorVariable ? autocastInt(value.get<std::int64_t>()) : DType::Int64;
    else if (anyBool)
        dt = DType::Bool;
    else
        dt = rule == LiteralRule::AsTensorVariable ? DType::Float32 : DType::Float64; // empty list
    if (isFloat(dt)) {
        std::vector<double> vals;
        vals.reserve(items.size());
        for (const json* e : items) vals.push_back(e->get<double>());
        return TensorData::fromDoubles(dt, shape, vals);
    }
    if (dt == DType::UInt64) {
        // fromInts takes int64: write the bit patterns of the unsigned values.
        std::vector<std::int64_t> vals;
        for (const json* e : items)
            vals.push_back(
                static_cast<std::int64_t>(e->is_boolean() ? std::uint64_t(e->get<bool>()) : e->get<std::uint64_t>()));
        return TensorData::fromInts(dt, shape, vals);
    }
    std::vector<std::int64_t> vals;
    vals.reserve(items.size());
    for (const json* e : items) vals.push_back(e->is_boolean() ? std::int64_t(e->get<bool>()) : e->get<std::int64_t>());
    return TensorData::fromInts(dt, shape, vals);
}

std::vector<Variable*> makeNodeInputs(FunctionGraph& g, const Op& op, const std::vector<NodeInput>& inputs,
                                      std::vector<Apply*>* inserted) {
    const OpKindInfo& info = op.info();
    const bool gpuKind = info.gpu && !info.transfer;
    std::vector<Variable*> given;
    for (const NodeInput& in : inputs) given.push_back(in.var);
    const Location ctx = gpuKind ? inferContext(op, given) : Location::host();
    std::vector<Variable*> out;
    out.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const int idx = static_cast<int>(i);
        const bool gpuData = gpuKind && !info.isGpuHostParam(idx);
        Variable* v = inputs[i].var;
        if (!v) {
            if (!isLiteral(inputs[i].literal))
                throw Error(op.str() + ": input " + std::to_string(i) + " is neither a variable nor a literal");
            try {
                if (gpuData) {
                    out.push_back(g.addConstant(literalTensor(inputs[i].literal, LiteralRule::NumpyAsarray), {}, ctx));
                    continue;
                }
                v = g.addConstant(literalTensor(inputs[i].literal, LiteralRule::AsTensorVariable));
            } catch (const Error& e) {
                throw Error(op.str() + ": input " + std::to_string(i) + ": " + e.what());
            }
        }
        if (gpuData) {
            v = inserting(g, inserted, [&] { return asGpu(g, v, ctx.context); });
        } else if ((gpuKind || (info.infer && !info.transfer && !info.anyLocation.count(idx))) && v->type().isGpu()) {
            // a host input (a host kind's, or a GPU kind's host parameter): as_tensor_variable
            v = inserting(g, inserted, [&] { return asHost(g, v); });
        }
        out.push_back(v);
    }
    // Elemwise.get_output_info: left-pad lower ranks with broadcastable axes.
    if (op.kind() == "Elemwise" || op.kind() == "GpuElemwise") {
        int target = -1;
        bool allKnown = true;
        for (const Variable* v : out) {
            allKnown &= v->type().rankKnown();
            if (v->type().rankKnown()) target = std::max(target, v->type().ndim());
        }
        if (allKnown) {
            const std::string ds = op.kind() == "Elemwise" ? "DimShuffle" : "GpuDimShuffle";
            for (Variable*& v : out) {
                const int nd = v->type().ndim();
                if (nd == target) continue;
                json order = json::array();
                for (int k = 0; k < target - nd; ++k) order.push_back("x");
                for (int k = 0; k < nd; ++k) order.push_back(k);
                const Op& pad = Op::get(ds, {{"order", order}});
                v = inserting(g, inserted, [&] { return g.apply(pad, {v}); });
            }
        }
    }
    return out;
}

Apply* makeNode(FunctionGraph& g, const Op& op, const std::vector<NodeInput>& inputs,
                std::optional<std::vector<Type>> outputTypes, std::string name, std::vector<Apply*>* inserted) {
    return g.makeApply(op, makeNodeInputs(g, op, inputs, inserted), std::move(outputTypes), std::move(name));
}

} // namespace passlens
