// ONNX import: checker, shape inference, then ONNX nodes mapped to Theano ops (OPS.md).
#include "passlens/onnx/OnnxImporter.h"
#include "passlens/onnx/OnnxTypes.h"

#include "OnnxModelChecks.h"

#include "passlens/io/AtomicFile.h"
#include "passlens/io/Encoding.h"
#include "passlens/ir/Error.h"
#include "passlens/ir/OpRegistry.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>
#include <unordered_map>

namespace passlens {
namespace {

using namespace onnximport;

// The dims the graph declares for its outputs and value_info, and those of every subgraph (If /
// Loop / Scan bodies: value_info and outputs), cleared with rank and element type kept: after an
// input was rebound they describe the old shapes and would contradict shape inference.
void forgetDeclaredDims(onnx::GraphProto& g) {
    auto forget = [](onnx::ValueInfoProto& v) {
        if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
            for (auto& d : *v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) d.Clear();
    };
    for (auto& v : *g.mutable_output()) forget(v);
    for (auto& v : *g.mutable_value_info()) forget(v);
    for (auto& n : *g.mutable_node())
        for (auto& a : *n.mutable_attribute()) {
            if (a.has_g()) forgetDeclaredDims(*a.mutable_g());
            for (auto& sg : *a.mutable_graphs()) forgetDeclaredDims(sg);
        }
}

using json = nlohmann::json;
constexpr std::int64_t U = Type::kUnknownDim;

std::optional<DType> dtypeOf(int onnxType) { return dtypeFromOnnx(onnxType); }

std::string onnxTypeName(int t) {
    return onnx::TensorProto::DataType_IsValid(t)
               ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t))
               : "type " + std::to_string(t);
}

// The IR type of an ONNX value: a tensor, or a sequence or optional around one (nullopt for maps,
// sparse tensors and element types PassLens does not hold).
std::optional<Type> typeOf(const onnx::TypeProto& tp) {
    if (tp.has_sequence_type()) {
        if (!tp.sequence_type().has_elem_type()) return std::nullopt;
        auto e = typeOf(tp.sequence_type().elem_type());
        return e ? std::optional<Type>(Type::sequence(*e)) : std::nullopt;
    }
    if (tp.has_optional_type()) {
        if (!tp.optional_type().has_elem_type()) return std::nullopt;
        auto e = typeOf(tp.optional_type().elem_type());
        return e ? std::optional<Type>(Type::optional(*e)) : std::nullopt;
    }
    if (!tp.has_tensor_type()) return std::nullopt;
    const auto& tt = tp.tensor_type();
    auto dt = dtypeOf(tt.elem_type());
    if (!dt) return std::nullopt;
    if (!tt.has_shape()) return Type::unknownRank(*dt);
    std::vector<std::int64_t> dims;
    for (const auto& d : tt.shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : U);
    return Type(*dt, dims);
}

std::string firstLines(const std::string& s, int n);

// Everything the per-node mapping needs.
struct Importer;

struct Scope {
    Scope* parent = nullptr;
    FunctionGraph* graph = nullptr;
    std::unordered_map<std::string, Variable*> vars;
    std::unordered_map<std::string, Type> types; // from shape inference / value_info
    std::vector<std::string> captured;           // outer names this graph imported
    Variable* lookup(const std::string& name);
};

Variable* Scope::lookup(const std::string& name) {
    auto it = vars.find(name);
    if (it != vars.end()) return it->second;
    if (!parent) return nullptr;
    Variable* outer = parent->lookup(name);
    if (!outer) return nullptr;
    // Capture: the nested graph gets an input standing for the outer value.
    Variable* in = graph->addInput(outer->type(), name);
    vars[name] = in;
    captured.push_back(name);
    return in;
}

struct Importer {
    std::string label;
    std::filesystem::path baseDir;
    int opset = 0;
    std::vector<std::string> warnings;
    int missingTensors = 0;
    bool verifySchemas = false; // the ONNX checker stopped early: importGraph checks each node

    [[noreturn]] void fail(const std::string& where, const std::string& why) const {
        throw Error(label + ": " + where + ": " + why);
    }

    // ------------------------------------------------------------ tensors
    // The data of a tensor (its size already checked by checkModelTensors; checked again here
    // for the callers' sake). External data that cannot be read leaves the constant missing,
    // with a warning naming the file as resolved.
    std::shared_ptr<TensorData> tensor(onnx::TensorProto& t, const std::string& where) {
        if (const std::string why = tensorDataProblem(t); !why.empty()) fail(where, "tensor '" + t.name() + "' " + why);
        auto dt = dtypeOf(t.data_type());
        if (!dt) fail(where, "tensor '" + t.name() + "' has unsupported element type " + onnxTypeName(t.data_type()));
        auto d = std::make_shared<TensorData>();
        d->dtype = *dt;
        d->shape.assign(t.dims().begin(), t.dims().end());
        const std::size_t need = d->byteSize();
        if (t.data_location() == onnx::TensorProto::EXTERNAL) {
            std::int64_t offset = 0;
            for (const auto& kv : t.external_data())
                if (kv.key() == "offset") offset = std::stoll(kv.value()); // checked: a non-negative integer
            const std::filesystem::path file = externalDataPath(t, baseDir);
            const std::string fileText = escapeInvalidUtf8(file.string());
            auto missing = [&](const std::string& why) {
                d->missing = why;
                warnings.push_back(label + ": " + why + "; nodes using it cannot be executed");
                ++missingTensors;
                return d;
            };
            std::error_code ec;
            const auto size = std::filesystem::file_size(file, ec);
            std::ifstream in(file, std::ios::binary);
            if (ec || !in)
                return missing("external data file '" + fileText + "' of tensor '" + t.name() + "' cannot be read");
            // the file's size, not the dims, bounds what is allocated
            if (static_cast<std::uintmax_t>(offset) > size || size - static_cast<std::uintmax_t>(offset) < need)
                return missing("external data file '" + fileText + "' (" + std::to_string(size) +
                               " bytes) is too short for tensor '" + t.name() + "' (" + std::to_string(need) +
                               " bytes at offset " + std::to_string(offset) + ")");
            std::string bytes(need, '\0');
            in.seekg(offset);
            in.read(bytes.data(), static_cast<std::streamsize>(need));
            if (!in)
                return missing("external data file '" + fileText + "' of tensor '" + t.name() + "' cannot be read");
            d->bytes = std::make_shared<const std::string>(std::move(bytes));
            return d;
        }
        if (t.has_raw_data()) {
            d->bytes = std::make_shared<const std::string>(std::move(*t.mutable_raw_data()));
            t.clear_raw_data();
            return d;
        }
        const std::size_t n = static_cast<std::size_t>(d->numElements());
        std::string b(need, '\0');
        auto copy = [&](const void* src) {
            if (need) std::memcpy(b.data(), src, need); // an empty field's data() may be null
        };
        // the typed field's length was checked by tensorDataProblem
        switch (*dt) {
        case DType::Float32: copy(t.float_data().data()); break;
        case DType::Float64: copy(t.double_data().data()); break;
        case DType::Int64: copy(t.int64_data().data()); break;
        case DType::UInt64:
        case DType::UInt32:
            for (std::size_t i = 0; i < n; ++i) {
                const std::uint64_t v = t.uint64_data(static_cast<int>(i));
                std::memcpy(b.data() + i * dtypeSize(*dt), &v, dtypeSize(*dt));
            }
            break;
        case DType::Complex64: copy(t.float_data().data()); break;
        case DType::Complex128: copy(t.double_data().data()); break;
        default: // int32 field carries int8/16/32, uint8/16, bool and float16 bits
            for (std::size_t i = 0; i < n; ++i) {
                const std::int32_t v = t.int32_data(static_cast<int>(i));
                std::memcpy(b.data() + i * dtypeSize(*dt), &v, dtypeSize(*dt)); // little-endian low bytes
            }
        }
        d->bytes = std::make_shared<const std::string>(std::move(b));
        return d;
    }

    // ------------------------------------------------------------ graphs
    // `place` names a nested graph in messages (subgraphPlace); empty for the model's graph.
    std::unique_ptr<FunctionGraph> importGraph(onnx::GraphProto& gp, Scope* parent, Scope*& outScope,
                                               std::vector<std::unique_ptr<Scope>>& scopes, const std::string& place);
};

// The attribute `name` of a node; nullptr when absent.
const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

// The attribute `name` of a node, of the type the ONNX schema gives it (files of IR version 1
// leave the type unset, which is accepted); nullptr when absent; `fail` when of another type.
const onnx::AttributeProto* findAttrOfType(const onnx::NodeProto& n, const std::string& name,
                                           onnx::AttributeProto::AttributeType type,
                                           const std::function<void(const std::string&)>& fail) {
    const auto* a = findAttr(n, name);
    if (a && a->type() != type && a->type() != onnx::AttributeProto::UNDEFINED)
        fail("attribute '" + name + "' must be " + onnx::AttributeProto::AttributeType_Name(type) + ", is " +
             onnx::AttributeProto::AttributeType_Name(a->type()));
    return a;
}

json attrToJson(const onnx::AttributeProto& a) {
    switch (a.type()) {
    case onnx::AttributeProto::FLOAT: return a.f();
    case onnx::AttributeProto::INT: return a.i();
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::INTS: return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case onnx::AttributeProto::TENSOR: {
        json t = {{"tensor", onnxTypeName(a.t().data_type())},
                  {"dims", std::vector<std::int64_t>(a.t().dims().begin(), a.t().dims().end())}};
        return t;
    }
    default: return json(std::string("<") + onnx::AttributeProto::AttributeType_Name(a.type()) + ">");
    }
}

// ---------------------------------------------------------------- per-node mapping
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
    // Returns the outputs for the node, or an empty vector to fall back to an Onnx op.
    std::vector<Variable*> map();
};

std::vector<Variable*> NodeMapper::map() {
    const std::string& t = node.op_type();
    if (!node.domain().empty() && node.domain() != "ai.onnx") return {};
    // Theano's ops need known ranks; a value ONNX could not type stays with an Onnx op.
    for (auto* v : in)
        if (v && !v->type().rankKnown()) return {};
    static const std::map<std::string, std::string> binary = {
        {"Add", "add"},           {"Sub", "sub"}, {"Mul", "mul"},    {"Pow", "pow"},
        {"Equal", "eq"},          {"Less", "lt"}, {"Greater", "gt"}, {"LessOrEqual", "le"},
        {"GreaterOrEqual", "ge"}, {"And", "and"}, {"Or", "or"},      {"Mod", "mod"}};
    static const std::map<std::string, std::string> unary = {
        {"Neg", "neg"},   {"Abs", "abs"},     {"Exp", "exp"},         {"Log", "log"},
        {"Sqrt", "sqrt"}, {"Tanh", "tanh"},   {"Sigmoid", "sigmoid"}, {"Relu", "relu"},
        {"Erf", "erf"},   {"Sin", "sin"},     {"Cos", "cos"},         {"Floor", "floor"},
        {"Ceil", "ceil"}, {"Round", "round"}, {"Sign", "sgn"},        {"Not", "not"}};
    // The first n inputs are required: present and not the empty name of an absent optional.
    auto need = [&](std::size_t n) {
        if (in.size() < n) fail(t + " needs " + std::to_string(n) + " inputs, got " + std::to_string(in.size()));
        for (std::size_t k = 0; k < n; ++k)
            if (!in[k]) fail(t + " input " + std::to_string(k) + " is required, the node gives an empty name");
    };
    if (auto it = binary.find(t); it != binary.end()) {
        need(2);
        if (t == "Mod" && intAttr("fmod", 0)) return {};
        Variable* out = elem(it->second, {in[0], in[1]});
        if (t == "Pow" && out->type().dtype() != in[0]->type().dtype())
            out = elem("cast", {out}, {{"dtype", std::string(dtypeName(in[0]->type().dtype()))}});
        return {out};
    }
    if (t == "Div") {
        need(2);
        const bool ints = isInteger(in[0]->type().dtype());
        return {elem(ints ? "int_div" : "true_div", {in[0], in[1]})};
    }
    if (auto it = unary.find(t); it != unary.end()) {
        need(1);
        return {elem(it->second, {in[0]})};
    }
    if (t == "Max" || t == "Min" || t == "Sum") {
        need(in.size() ? in.size() : 1);
        std::vector<Variable*> ins(in.begin(), in.end());
        return {elem(t == "Max" ? "maximum" : t == "Min" ? "minimum" : "add", ins)};
    }
    if (t == "Reciprocal") {
        need(1);
        return {elem("true_div", {constScalar(in[0]->type().dtype(), 1.0), in[0]})};
    }
    if (t == "Where") {
        need(3);
        return {elem("switch", {in[0], in[1], in[2]})};
    }
    // Dropout is the identity in inference: no training_mode input, or a constant false one
    const auto inferenceDropout = [&] {
        if (in.size() < 3 || !in[2]) return true;
        const auto training = constInts(in[2]);
        return training && std::all_of(training->begin(), training->end(), [](auto v) { return v == 0; });
    };
    if (t == "Identity" || (t == "Dropout" && node.output_size() == 1 && inferenceDropout())) {
        need(1);
        return {in[0]};
    }
    if (t == "Cast") {
        need(1);
        if (opset < 6) return {}; // Cast-1 names the type as a string
        if (!attr("to", onnx::AttributeProto::INT)) fail("attribute 'to' is required");
        auto dt = dtypeOf(static_cast<int>(intAttr("to", 0)));
        if (!dt) return {};
        if (*dt == in[0]->type().dtype()) return {in[0]};
        return {elem("cast", {in[0]}, {{"dtype", std::string(dtypeName(*dt))}})};
    }
    if (t == "Clip") {
        need(1);
        std::optional<double> lo, hi;
        if (opset < 11) {
            lo = floatAttr("min", -3.4028234663852886e38f);
            hi = floatAttr("max", 3.4028234663852886e38f);
        } else {
            if (input(1)) {
                lo = constScalarValue(input(1));
                if (!lo) return {};
            }
            if (input(2)) {
                hi = constScalarValue(input(2));
                if (!hi) return {};
            }
        }
        json a = json::object();
        if (lo) a["min"] = *lo;
        if (hi) a["max"] = *hi;
        return {elem("clip", {in[0]}, a)};
    }
    if (t == "LeakyRelu") {
        need(1);
        return {elem("leaky_relu", {in[0]}, {{"alpha", floatAttr("alpha", 0.01f)}})};
    }
    if (t == "HardSigmoid") {
        need(1);
        return {
            elem("hard_sigmoid", {in[0]}, {{"alpha", floatAttr("alpha", 0.2f)}, {"beta", floatAttr("beta", 0.5f)}})};
    }
    if (t == "Transpose") {
        need(1);
        return {mk("DimShuffle", {{"order", permAttr(rank(in[0]))}}, {in[0]})};
    }
    if (t == "Unsqueeze") {
        need(1);
        bool dyn;
        auto ax = axes(1, 13, dyn);
        if (!ax || dyn) return {};
        const int nd = rank(in[0]) + static_cast<int>(ax->size());
        const auto normed = normAxes(*ax, nd, "axes", true);
        const std::set<std::int64_t> newAxes(normed.begin(), normed.end());
        json order = json::array();
        int src = 0;
        for (int i = 0; i < nd; ++i) {
            if (newAxes.count(i))
                order.push_back("x");
            else
                order.push_back(src++);
        }
        return {mk("DimShuffle", {{"order", order}}, {in[0]})};
    }
    if (t == "Squeeze") {
        need(1);
        bool dyn;
        auto ax = axes(1, 13, dyn);
        if (dyn) return {};
        const Type& ty = in[0]->type();
        std::set<std::int64_t> drop;
        if (ax) {
            for (auto a : normAxes(*ax, ty.ndim(), "axes", true)) {
                const std::int64_t d = ty.dims()[static_cast<std::size_t>(a)];
                if (d >= 0 && d != 1)
                    fail("axes: axis " + std::to_string(a) + " of " + ty.str() + " has size " + std::to_string(d) +
                         ", it cannot be squeezed");
                drop.insert(a);
            }
        } else {
            for (int i = 0; i < ty.ndim(); ++i) {
                if (ty.dims()[static_cast<std::size_t>(i)] < 0) return {};
                if (ty.dims()[static_cast<std::size_t>(i)] == 1) drop.insert(i);
            }
        }
        json order = json::array();
        for (int i = 0; i < ty.ndim(); ++i)
            if (!drop.count(i)) order.push_back(i);
        return {mk("DimShuffle", {{"order", order}}, {in[0]})};
    }
    if (t == "Reshape") {
        if (opset < 5) return {}; // Reshape-1 takes the shape as an attribute
        need(2);
        if (intAttr("allowzero", 0)) return {};
        const Type& st = in[1]->type();
        if (!st.rankKnown() || st.ndim() != 1 || st.dims()[0] < 0) return {};
        const std::int64_t nd = st.dims()[0];
        Variable* shape = in[1];
        if (auto c = constInts(in[1])) {
            // ONNX's 0 copies the input dim; Theano's Reshape has no such rule.
            bool hasZero = false;
            std::vector<std::int64_t> s = *c;
            if (std::count(s.begin(), s.end(), -1) > 1) fail("shape " + intsText(s) + " has more than one -1");
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (s[i] < -1)
                    fail("shape " + intsText(s) + " has entry " + std::to_string(s[i]) +
                         ", entries must be at least -1");
                if (s[i] != 0) continue;
                hasZero = true;
                if (static_cast<int>(i) >= rank(in[0]))
                    fail("Reshape copies dim " + std::to_string(i) + " that the input does not have");
                s[i] = in[0]->type().dims()[i];
                if (s[i] < 0) return {};
            }
            if (hasZero) shape = constInt64(s);
        }
        return {mk("Reshape", {{"ndim", nd}}, {in[0], shape})};
    }
    if (t == "Flatten") {
        need(1);
        const Type& ty = in[0]->type();
        std::int64_t axis = intAttr("axis", 1);
        if (!ty.rankKnown()) return {};
        if (axis < -ty.ndim() || axis > ty.ndim())
            fail("attribute 'axis': " + std::to_string(axis) + " out of range for rank " + std::to_string(ty.ndim()) +
                 " (Flatten allows [-r, r])");
        if (axis < 0) axis += ty.ndim();
        if (axis == 1 && ty.ndim() >= 2)
            return {mk("Flatten", {{"outdim", 2}}, {in[0]})}; // Theano's Flatten{2} needs rank >= 2
        if (!ty.isStatic()) return {};
        std::int64_t a = 1, b = 1;
        for (int i = 0; i < ty.ndim(); ++i) (i < axis ? a : b) *= ty.dims()[static_cast<std::size_t>(i)];
        return {mk("Reshape", {{"ndim", 2}}, {in[0], constInt64({a, b})})};
    }
    if (t == "Shape") {
        need(1);
        const int nd = rank(in[0]);
        std::int64_t start = intAttr("start", 0), end = intAttr("end", nd);
        Variable* s = mk("Shape", json::object(), {in[0]});
        // negative values count from the end; both are clamped to [0, rank] (Shape-15)
        if (start < 0) start += nd;
        if (end < 0) end += nd;
        start = std::clamp<std::int64_t>(start, 0, nd);
        end = std::clamp<std::int64_t>(end, 0, nd);
        if (start == 0 && end == nd) return {s};
        return {mk("Subtensor", {{"idx", json::array({json{{"start", start}, {"stop", end}}})}}, {s})};
    }
    if (t == "Size") {
        need(1);
        return {};
    }
    if (t == "Gather") {
        need(2);
        const int nd = rank(in[0]);
        const std::int64_t axis = axisAttr("axis", 0, nd);
        auto idx = constInts(in[1]);
        if (!isInteger(in[1]->type().dtype())) fail("indices must be integers, got " + in[1]->type().str());
        if (idx) {
            const std::int64_t d = in[0]->type().dims()[static_cast<std::size_t>(axis)];
            for (auto i : *idx)
                if (d >= 0 && (i < -d || i >= d))
                    fail("index " + std::to_string(i) + " out of range for axis " + std::to_string(axis) + " of " +
                         in[0]->type().str());
        }
        if (!idx && in[1]->type().ndim() == 0 && isInteger(in[1]->type().dtype())) {
            json list = json::array();
            for (std::int64_t a = 0; a < axis; ++a) list.push_back(json::object());
            list.push_back("?");
            Variable* i = in[1];
            if (i->type().dtype() != DType::Int64) i = elem("cast", {i}, {{"dtype", "int64"}});
            return {mk("Subtensor", {{"idx", list}}, {in[0], i})};
        }
        if (idx && in[1]->type().ndim() == 0) {
            // x.shape[i] is Shape_i{i}(x) (Theano's shape graph after local_shape_to_shape_i)
            if (Apply* o = in[0]->owner(); o && o->op().kind() == "Shape" && axis == 0) {
                const std::int64_t i = normAxis((*idx)[0], rank(o->input(0)), "index into the shape:");
                return {mk("Shape_i", {{"i", i}}, {o->input(0)})};
            }
            json list = json::array();
            for (std::int64_t a = 0; a < axis; ++a) list.push_back(json::object());
            list.push_back((*idx)[0]);
            return {mk("Subtensor", {{"idx", list}}, {in[0]})};
        }
        if (axis == 0 && in[1]->type().ndim() == 1) return {mk("AdvancedSubtensor1", json::object(), {in[0], in[1]})};
        if (in[1]->type().ndim() == 1) {
            // take along another axis: move it to the front, AdvancedSubtensor1, move it back
            json fwd = json::array({axis}), back = json::array();
            for (int a = 0; a < nd; ++a)
                if (a != axis) fwd.push_back(a);
            for (int a = 1; a <= nd - 1; ++a) {
                if (a - 1 == axis) back.push_back(0);
                back.push_back(a);
            }
            if (axis == nd - 1) back.push_back(0);
            Variable* moved = mk("DimShuffle", {{"order", fwd}}, {in[0]});
            Variable* taken = mk("AdvancedSubtensor1", json::object(), {moved, in[1]});
            return {mk("DimShuffle", {{"order", back}}, {taken})};
        }
        return {};
    }
    if (t == "Slice") {
        if (opset < 10) {
            need(1);
            return {};
        }
        need(3);
        // starts, ends, axes and steps: one entry per sliced axis, axes distinct, steps not 0
        const int nd = rank(in[0]);
        auto checkLists = [&](std::size_t k, const std::vector<std::int64_t>& ax,
                              const std::vector<std::int64_t>& steps) {
            for (std::size_t i = 2; i < std::min<std::size_t>(in.size(), 5); ++i) {
                if (!input(i)) continue;
                const Type& ti = input(i)->type();
                if (ti.ndim() != 1 || (ti.dims()[0] >= 0 && static_cast<std::size_t>(ti.dims()[0]) != k))
                    fail("input " + std::to_string(i) + " has type " + ti.str() + ", starts has " + std::to_string(k) +
                         " entries");
            }
            if (ax.size() != k || steps.size() != k) fail("axes and steps must have one entry per start");
            normAxes(ax, nd, "axes", true);
            for (auto st : steps)
                if (st == 0) fail("Slice step cannot be 0");
        };
        for (std::size_t i = 1; i < std::min<std::size_t>(in.size(), 5); ++i)
            if (input(i) && !isInteger(input(i)->type().dtype()))
                fail("input " + std::to_string(i) + " must be integers, got " + input(i)->type().str());
        auto starts = constInts(input(1)), ends = constInts(input(2));
        if (!starts || !ends) {
            // symbolic bounds: Subtensor{int64:int64:} with scalar inputs (Theano's x[a:b])
            const Type& st = input(1)->type();
            if (st.ndim() != 1 || st.dims()[0] < 0) return {};
            const std::int64_t k = st.dims()[0];
            std::vector<std::int64_t> ax(static_cast<std::size_t>(k)), steps(static_cast<std::size_t>(k), 1);
            std::iota(ax.begin(), ax.end(), 0);
            if (input(3)) {
                auto a = constInts(input(3));
                if (!a) return {};
                ax = *a;
            }
            if (input(4)) {
                auto sp = constInts(input(4));
                if (!sp) return {};
                steps = *sp;
            }
            checkLists(static_cast<std::size_t>(k), ax, steps);
            if (k == 0) return {in[0]};
            std::vector<json> idx(static_cast<std::size_t>(nd), json::object());
            std::vector<std::pair<std::int64_t, std::pair<Variable*, Variable*>>> bounds;
            for (std::int64_t j = 0; j < k; ++j) {
                const auto a = normAxis(ax[static_cast<std::size_t>(j)], nd);
                json e = {{"start", "?"}, {"stop", "?"}};
                if (steps[static_cast<std::size_t>(j)] != 1) e["step"] = steps[static_cast<std::size_t>(j)];
                idx[static_cast<std::size_t>(a)] = e;
                bounds.push_back({a, {scalarAt(input(1), j), scalarAt(input(2), j)}});
            }
            std::sort(bounds.begin(), bounds.end(), [](auto& x, auto& y) { return x.first < y.first; });
            std::vector<Variable*> ins{in[0]};
            for (auto& b : bounds) {
                ins.push_back(b.second.first);
                ins.push_back(b.second.second);
            }
            json list = json::array();
            for (int a = 0; a <= bounds.back().first; ++a) list.push_back(idx[static_cast<std::size_t>(a)]);
            return {mk("Subtensor", {{"idx", list}}, ins)};
        }
        std::vector<std::int64_t> ax, steps;
        if (input(3)) {
            auto a = constInts(input(3));
            if (!a) return {};
            ax = *a;
        } else {
            ax.resize(starts->size());
            std::iota(ax.begin(), ax.end(), 0);
        }
        if (input(4)) {
            auto s = constInts(input(4));
            if (!s) return {};
            steps = *s;
        } else
            steps.assign(starts->size(), 1);
        checkLists(starts->size(), ax, steps);
        std::vector<json> idx(static_cast<std::size_t>(nd), json::object());
        int last = -1;
        for (std::size_t k = 0; k < ax.size(); ++k) {
            const auto a = normAxis(ax[k], nd);
            json s = json::object();
            const std::int64_t big = INT64_MAX / 2;
            if (!((*starts)[k] == 0 && steps[k] > 0) && !((*starts)[k] >= big && steps[k] < 0))
                s["start"] = std::clamp((*starts)[k], -big, big);
            if ((*ends)[k] < big && (*ends)[k] > -big)
                s["stop"] = (*ends)[k];
            else if ((*ends)[k] <= -big && steps[k] > 0)
                s["stop"] = 0;
            if (steps[k] != 1) s["step"] = steps[k];
            idx[static_cast<std::size_t>(a)] = s;
            last = std::max(last, static_cast<int>(a));
        }
        json list = json::array();
        for (int a = 0; a <= last; ++a) list.push_back(idx[static_cast<std::size_t>(a)]);
        return {mk("Subtensor", {{"idx", list}}, {in[0]})};
    }
    if (t == "Concat") {
        need(std::max<std::size_t>(in.size(), 1));
        // axis is required from Concat-4 on; Concat-1 defaults it to 1
        if (opset >= 4 && !attr("axis", onnx::AttributeProto::INT)) fail("attribute 'axis' is required");
        for (std::size_t k = 1; k < in.size(); ++k)
            if (rank(in[k]) != rank(in[0]))
                fail("input " + std::to_string(k) + " has type " + in[k]->type().str() + ", input 0 has " +
                     in[0]->type().str());
        return {mk("Join", {{"axis", axisAttr("axis", 1, rank(in[0]))}}, in)};
    }
    if (t == "Split") {
        need(1);
        const int nd = rank(in[0]);
        const std::int64_t axis = axisAttr("axis", 0, nd);
        const std::int64_t n = node.output_size();
        if (n < 1) fail("Split has no outputs");
        const std::int64_t d = in[0]->type().dims()[static_cast<std::size_t>(axis)];
        std::vector<std::int64_t> sizes;
        if (opset < 13) {
            if (auto s = intsAttr("split")) sizes = *s;
        } else if (input(1)) {
            auto s = constInts(input(1));
            if (!s) return {};
            sizes = *s;
        }
        if (!sizes.empty()) checkSplitSizes(sizes, n, d);
        if (sizes.empty()) {
            if (d < 0 || d % n) return {};
            sizes.assign(static_cast<std::size_t>(n), d / n);
        }
        Apply* a = g.makeApply(Op::get("Split", {{"axis", axis}, {"n_splits", n}}), {in[0], constInt64(sizes)},
                               std::nullopt, node.name());
        return a->outputs();
    }
    if (t == "Expand") {
        need(2);
        const Type& st = in[1]->type();
        if (!st.rankKnown() || st.ndim() != 1 || st.dims()[0] < 0) return {};
        const std::int64_t n = st.dims()[0];
        const int r = rank(in[0]);
        if (!isInteger(st.dtype())) fail("shape must be integers, got " + st.str());
        auto c = constInts(in[1]);
        std::vector<Variable*> ins{in[0]};
        const int outRank = static_cast<int>(std::max<std::int64_t>(n, r));
        // Each output dim: the input's where the shape has no entry or the input's dim is > 1,
        // the shape's entry where the input's is 1 or absent; both broadcast (one is 1 or equal).
        for (int i = 0; i < outRank; ++i) {
            const int xi = i - (outRank - r), si = i - (outRank - static_cast<int>(n));
            const std::int64_t xd = xi >= 0 ? in[0]->type().dims()[static_cast<std::size_t>(xi)] : 1;
            auto xDim = [&] { return xd >= 0 ? constInt64({xd}, true) : mk("Shape_i", {{"i", xi}}, {in[0]}); };
            if (si < 0) {
                ins.push_back(xDim());
                continue;
            }
            if (c) {
                const std::int64_t cd = (*c)[static_cast<std::size_t>(si)];
                if (cd < 0 || (xd >= 0 && xd != 1 && cd != 1 && cd != xd))
                    fail("cannot expand " + in[0]->type().str() + " to shape " + intsText(*c));
                if (xd < 0 && cd == 1) {
                    ins.push_back(xDim());
                    continue;
                }
                ins.push_back(constInt64({std::max(xd, cd)}, true));
                continue;
            }
            if (xd > 1) {
                ins.push_back(xDim());
                continue;
            }
            Variable* sd = mk("Subtensor", {{"idx", json::array({si})}}, {in[1]});
            if (sd->type().dtype() != DType::Int64) sd = elem("cast", {sd}, {{"dtype", "int64"}});
            ins.push_back(xd < 0 ? elem("maximum", {xDim(), sd}) : sd);
        }
        return {mk("Alloc", json::object(), ins)};
    }
    if (t == "ConstantOfShape") {
        need(1);
        Variable* value;
        if (const auto* a = attr("value", onnx::AttributeProto::TENSOR)) {
            onnx::TensorProto tp = a->t();
            auto d = imp.tensor(tp, where);
            if (d->numElements() != 1) fail("attribute 'value' must hold one element, has dims " + intsText(d->shape));
            d->shape.clear();
            value = g.addConstant(d);
        } else {
            value = constScalar(DType::Float32, 0.0);
        }
        const Type& st = in[0]->type();
        if (!isInteger(st.dtype()) || st.ndim() != 1) fail("input must be a vector of integers, got " + st.str());
        if (st.dims()[0] < 0) return {};
        std::vector<Variable*> ins{value};
        auto c = constInts(in[0]);
        if (c)
            for (auto x : *c)
                if (x < 0) fail("shape " + intsText(*c) + " has a negative entry");
        for (std::int64_t i = 0; i < st.dims()[0]; ++i)
            ins.push_back(c ? constInt64({(*c)[static_cast<std::size_t>(i)]}, true)
                            : mk("Subtensor", {{"idx", json::array({i})}}, {in[0]}));
        return {mk("Alloc", json::object(), ins)};
    }
    if (t == "MatMul") {
        need(2);
        const int ra = rank(in[0]), rb = rank(in[1]);
        if (ra <= 2 && rb <= 2 && ra >= 1 && rb >= 1) return {mk("Dot", json::object(), {in[0], in[1]})};
        if (ra >= 3 && ra == rb) return {mk("BatchedDot", json::object(), {in[0], in[1]})};
        if (ra >= 3 && rb == 2) {
            // Theano's tensordot: reshape to 2-D, Dot, reshape back.
            const Type& ta = in[0]->type();
            std::int64_t rows = 1;
            for (int i = 0; i < ra - 1; ++i) {
                const std::int64_t d = ta.dims()[static_cast<std::size_t>(i)];
                rows = (rows < 0 || d < 0) ? U : rows * d;
            }
            const std::int64_t k = ta.dims().back(), n = in[1]->type().dims()[1];
            if (rows < 0 || k < 0 || n < 0) return {};
            Variable* a2 = mk("Reshape", {{"ndim", 2}}, {in[0], constInt64({rows, k})});
            Variable* d = mk("Dot", json::object(), {a2, in[1]});
            std::vector<std::int64_t> outShape(ta.dims().begin(), ta.dims().end() - 1);
            outShape.push_back(n);
            return {mk("Reshape", {{"ndim", ra}}, {d, constInt64(outShape)})};
        }
        return {};
    }
    if (t == "Gemm") {
        need(2);
        needRank(0, 2);
        needRank(1, 2);
        Variable* a = in[0];
        Variable* b = in[1];
        if (intAttr("transA", 0)) a = mk("DimShuffle", {{"order", {1, 0}}}, {a});
        if (intAttr("transB", 0)) b = mk("DimShuffle", {{"order", {1, 0}}}, {b});
        const std::int64_t m = a->type().dims()[0], n = b->type().dims()[1];
        const DType dt = upcast(a->type().dtype(), b->type().dtype());
        double beta = floatAttr("beta", 1.0f);
        const double alpha = floatAttr("alpha", 1.0f);
        Variable* c = input(2);
        if (!c) {
            c = constScalar(dt, 0.0);
            beta = 0.0;
        }
        Variable* rows = m >= 0 ? constInt64({m}, true) : mk("Shape_i", {{"i", 0}}, {a});
        Variable* cols = n >= 0 ? constInt64({n}, true) : mk("Shape_i", {{"i", 1}}, {b});
        Variable* z = mk("Alloc", json::object(), {c, rows, cols});
        return {mk("Gemm", json::object(), {z, constScalar(dt, alpha), a, b, constScalar(dt, beta)})};
    }
    if (t == "Softmax" || t == "LogSoftmax") {
        need(1);
        const int nd = rank(in[0]);
        const std::int64_t axis = axisAttr("axis", opset < 13 ? 1 : -1, nd);
        if (opset < 13 && axis != nd - 1) return {};
        return {mk(t, {{"axis", axis}}, {in[0]})};
    }
    if (t == "ReduceSum" || t == "ReduceMean" || t == "ReduceMax" || t == "ReduceMin" || t == "ReduceProd") {
        need(1);
        bool dyn;
        auto ax = axes(1, t == "ReduceSum" ? 13 : 18, dyn);
        if (dyn) return {};
        const int nd = rank(in[0]);
        const bool keep = intAttr("keepdims", 1) != 0;
        std::set<std::int64_t> red;
        if (ax && !ax->empty())
            for (auto a : normAxes(*ax, nd, "axes", false)) red.insert(a);
        else if (intAttr("noop_with_empty_axes", 0))
            return {in[0]};
        else
            for (int i = 0; i < nd; ++i) red.insert(i);
        const std::string scalar = t == "ReduceMax"    ? "maximum"
                                   : t == "ReduceMin"  ? "minimum"
                                   : t == "ReduceProd" ? "mul"
                                                       : "add";
        json axisList = json::array();
        for (auto a : red) axisList.push_back(a);
        Variable* r = mk("CAReduce", {{"scalar", scalar}, {"axis", axisList}}, {in[0]});
        if (t == "ReduceMean") r = elem("true_div", {r, countOf(in[0], red, r->type().dtype())});
        if (r->type().dtype() != in[0]->type().dtype())
            r = elem("cast", {r}, {{"dtype", std::string(dtypeName(in[0]->type().dtype()))}});
        if (keep) {
            json order = json::array();
            int src = 0;
            for (int i = 0; i < nd; ++i) order.push_back(red.count(i) ? json("x") : json(src++));
            r = mk("DimShuffle", {{"order", order}}, {r});
        }
        return {r};
    }
    if (t == "GlobalAveragePool" || t == "GlobalMaxPool") {
        need(1);
        const int nd = rank(in[0]);
        if (nd < 3) return {};
        json axisList = json::array();
        std::set<std::int64_t> red;
        for (int i = 2; i < nd; ++i) {
            axisList.push_back(i);
            red.insert(i);
        }
        const bool avg = t == "GlobalAveragePool";
        Variable* r = mk("CAReduce", {{"scalar", avg ? "add" : "maximum"}, {"axis", axisList}}, {in[0]});
        if (avg) r = elem("true_div", {r, countOf(in[0], red, r->type().dtype())});
        json order = {0, 1};
        for (int i = 2; i < nd; ++i) order.push_back("x");
        return {mk("DimShuffle", {{"order", order}}, {r})};
    }
    if (t == "Conv") {
        need(2);
        const int nd = rank(in[0]);
        if (nd < 3) fail("input 0 must have rank at least 3 (N, C, spatial axes), has type " + in[0]->type().str());
        needRank(1, nd);
        const int spatial = nd - 2;
        const std::int64_t group = intAttr("group", 1);
        if (group < 1) fail("attribute 'group' is " + std::to_string(group) + ", it must be at least 1");
        const std::int64_t m = in[1]->type().dims()[0];
        if (m >= 0 && m % group)
            fail("the kernel " + in[1]->type().str() + " has " + std::to_string(m) +
                 " output channels, not a multiple of group " + std::to_string(group));
        const auto ks = spatialAttr("kernel_shape", spatial, 1);
        if (attr("kernel_shape", onnx::AttributeProto::INTS))
            for (int a = 0; a < spatial; ++a) {
                const std::int64_t k = in[1]->type().dims()[static_cast<std::size_t>(2 + a)];
                if (k >= 0 && k != ks[static_cast<std::size_t>(a)])
                    fail("attribute 'kernel_shape' " + intsText(ks) + " does not match the kernel " +
                         in[1]->type().str());
            }
        std::vector<std::int64_t> strides = spatialAttr("strides", spatial, 1),
                                  dil = spatialAttr("dilations", spatial, 1);
        std::vector<std::int64_t> pads = padsAttr(spatial);
        const std::string autoPad = autoPadAttr();
        if (input(2)) needRank(2, 1);
        if (nd != 3 && nd != 4) return {};
        Variable* x = in[0];
        Variable* w = in[1];
        if (nd == 3) {
            // conv1d as conv2d over a height of 1
            strides.insert(strides.begin(), 1);
            dil.insert(dil.begin(), 1);
            pads = {0, pads[0], 0, pads[1]};
            x = mk("DimShuffle", {{"order", {0, 1, "x", 2}}}, {x});
            w = mk("DimShuffle", {{"order", {0, 1, "x", 2}}}, {w});
        }
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            for (int a = 0; a < 2; ++a) {
                const std::int64_t n = x->type().dims()[static_cast<std::size_t>(2 + a)],
                                   k = w->type().dims()[static_cast<std::size_t>(2 + a)];
                if (n < 0 || k < 0) return {};
                const std::int64_t s = strides[static_cast<std::size_t>(a)], out = (n + s - 1) / s;
                const std::int64_t total =
                    std::max<std::int64_t>(0, (out - 1) * s + dil[static_cast<std::size_t>(a)] * (k - 1) + 1 - n);
                const std::int64_t small = total / 2, big = total - small;
                pads[static_cast<std::size_t>(a)] = autoPad == "SAME_UPPER" ? small : big;
                pads[static_cast<std::size_t>(a + 2)] = autoPad == "SAME_UPPER" ? big : small;
            }
        } else if (autoPad == "VALID") {
            pads.assign(4, 0);
        }
        json bm;
        if (pads[0] == pads[2] && pads[1] == pads[3])
            bm = json::array({pads[0], pads[1]});
        else
            bm = json::array({json::array({pads[0], pads[2]}), json::array({pads[1], pads[3]})});
        if (pads == std::vector<std::int64_t>{0, 0, 0, 0}) bm = "valid";
        Variable* y =
            mk("AbstractConv2d",
               {{"border_mode", bm}, {"subsample", strides}, {"filter_dilation", dil}, {"num_groups", group}}, {x, w});
        if (Variable* b = input(2)) y = elem("add", {y, mk("DimShuffle", {{"order", {"x", 0, "x", "x"}}}, {b})});
        if (nd == 3) y = mk("DimShuffle", {{"order", {0, 1, 3}}}, {y});
        return {y};
    }
    if (t == "MaxPool" || t == "AveragePool") {
        need(1);
        const int spatial = rank(in[0]) - 2;
        if (spatial < 1)
            fail("input 0 must have rank at least 3 (N, C, spatial axes), has type " + in[0]->type().str());
        if (!attr("kernel_shape", onnx::AttributeProto::INTS)) fail("attribute 'kernel_shape' is required");
        const auto ks = spatialAttr("kernel_shape", spatial, 1);
        const auto strides = spatialAttr("strides", spatial, 1), dil = spatialAttr("dilations", spatial, 1);
        auto p = padsAttr(spatial);
        const std::string autoPad = autoPadAttr();
        const std::int64_t ceil = intAttr("ceil_mode", 0), includePad = intAttr("count_include_pad", 0);
        if (node.output_size() > 1 || spatial != 2) return {};
        // Theano's Pool takes float inputs only; integer pools (MaxPool of uint8, int8) stay ONNX ops
        const DType dt = in[0]->type().dtype();
        if (dt != DType::Float32 && dt != DType::Float64) return {};
        if (std::any_of(dil.begin(), dil.end(), [](auto x) { return x != 1; })) return {};
        if (autoPad != "NOTSET" && autoPad != "VALID") return {};
        if (autoPad == "VALID") p.assign(4, 0);
        json pad = json::array();
        for (int a = 0; a < 2; ++a) {
            if (p[static_cast<std::size_t>(a)] == p[static_cast<std::size_t>(a + 2)])
                pad.push_back(p[static_cast<std::size_t>(a)]);
            else
                pad.push_back(json::array({p[static_cast<std::size_t>(a)], p[static_cast<std::size_t>(a + 2)]}));
        }
        std::string mode = "max";
        if (t == "AveragePool") mode = includePad ? "average_inc_pad" : "average_exc_pad";
        return {mk("Pool",
                   {{"mode", mode}, {"ws", ks}, {"stride", strides}, {"pad", pad}, {"ignore_border", ceil == 0}},
                   {in[0]})};
    }
    if (t == "BatchNormalization") {
        need(5);
        if (rank(in[0]) < 2) fail("input 0 must have rank at least 2 (N, C, ...), has type " + in[0]->type().str());
        // before opset 9, spatial=0 gives scale, B, mean and var one value per (C, D1, ...)
        if (opset < 9 && intAttr("spatial", 1) == 0) return {};
        for (std::size_t k = 1; k < 5; ++k) needRank(k, 1);
        if (node.output_size() > 1 || intAttr("training_mode", 0)) return {};
        return {
            mk("BatchNormInference", {{"epsilon", floatAttr("epsilon", 1e-5f)}}, {in[0], in[1], in[2], in[3], in[4]})};
    }
    if (t == "CumSum") {
        need(2);
        if (in[1]->type().ndim() > 1 || !isInteger(in[1]->type().dtype()))
            fail("axis must be an integer scalar, got " + in[1]->type().str());
        if (intAttr("exclusive", 0) || intAttr("reverse", 0)) return {};
        auto ax = constInts(in[1]);
        if (!ax || ax->size() != 1) return {};
        return {mk("CumOp", {{"axis", normAxis((*ax)[0], rank(in[0]))}, {"mode", "add"}}, {in[0]})};
    }
    return {};
}

// Names a subgraph reads from enclosing scopes (ONNX outer-scope references): inputs of its
// nodes and its own outputs (a branch may return an outer value as it is) that it does not
// define itself.
void freeNames(const onnx::GraphProto& sg, std::set<std::string>& out, std::set<std::string> local) {
    for (const auto& x : sg.input()) local.insert(x.name());
    for (const auto& x : sg.initializer()) local.insert(x.name());
    for (const auto& n : sg.node()) {
        for (const auto& x : n.input())
            if (!x.empty() && !local.count(x)) out.insert(x);
        for (const auto& a : n.attribute()) {
            if (a.has_g()) freeNames(a.g(), out, local);
            for (const auto& gg : a.graphs()) freeNames(gg, out, local);
        }
        for (const auto& x : n.output()) local.insert(x);
    }
    for (const auto& o : sg.output())
        if (!o.name().empty() && !local.count(o.name())) out.insert(o.name());
}

// Topological order of a graph's node list (which ONNX requires sorted, but real files are not
// always): iterative DFS over producers, including names used by nested graphs. A cycle is
// reported through `fail` with every node on it.
std::vector<int> topoOrder(const onnx::GraphProto& gp, const std::function<void(const std::string&)>& fail,
                           const std::function<std::string(int)>& nodeWhere) {
    const int nn = gp.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < nn; ++i)
        for (const auto& o : gp.node(i).output())
            if (!o.empty()) producer.emplace(o, i);
    std::vector<std::vector<int>> deps(static_cast<std::size_t>(nn));
    for (int i = 0; i < nn; ++i) {
        std::set<std::string> names(gp.node(i).input().begin(), gp.node(i).input().end());
        for (const auto& a : gp.node(i).attribute()) {
            if (a.has_g()) freeNames(a.g(), names, {});
            for (const auto& gg : a.graphs()) freeNames(gg, names, {});
        }
        for (const auto& x : names) {
            if (x.empty()) continue;
            auto it = producer.find(x);
            if (it != producer.end()) deps[static_cast<std::size_t>(i)].push_back(it->second);
        }
    }
    std::vector<int> state(static_cast<std::size_t>(nn), 0), order;
    for (int root = 0; root < nn; ++root) {
        if (state[static_cast<std::size_t>(root)]) continue;
        std::vector<std::pair<int, std::size_t>> stack{{root, 0}};
        state[static_cast<std::size_t>(root)] = 1;
        while (!stack.empty()) {
            auto& [n, next] = stack.back();
            const auto& d = deps[static_cast<std::size_t>(n)];
            if (next < d.size()) {
                const int m = d[next++];
                if (state[static_cast<std::size_t>(m)] == 1) {
                    std::string cyc;
                    bool on = false;
                    for (auto& [sn, _] : stack) {
                        if (sn == m) on = true;
                        if (on) cyc += nodeWhere(sn) + " -> ";
                    }
                    fail("the graph has a cycle: " + cyc + nodeWhere(m));
                }
                if (state[static_cast<std::size_t>(m)] == 0) {
                    state[static_cast<std::size_t>(m)] = 1;
                    stack.push_back({m, 0});
                }
                continue;
            }
            state[static_cast<std::size_t>(n)] = 2;
            order.push_back(n);
            stack.pop_back();
        }
    }

    return order;
}

std::unique_ptr<FunctionGraph> Importer::importGraph(onnx::GraphProto& gp, Scope* parent, Scope*& outScope,
                                                     std::vector<std::unique_ptr<Scope>>& scopes,
                                                     const std::string& place) {
    auto g = std::make_unique<FunctionGraph>();
    g->name = gp.name();
    g->sourcePath = label;
    scopes.push_back(std::make_unique<Scope>());
    Scope& sc = *scopes.back();
    sc.parent = parent;
    sc.graph = g.get();
    outScope = &sc;
    const std::string gwhere = place.empty() ? std::string("graph") : place;

    for (const auto& vi : gp.value_info())
        if (auto t = typeOf(vi.type())) sc.types[vi.name()] = *t;
    for (const auto& vi : gp.output())
        if (auto t = typeOf(vi.type())) sc.types[vi.name()] = *t;

    std::unordered_set<std::string> initNames;
    for (int i = 0; i < gp.initializer_size(); ++i) {
        auto& t = *gp.mutable_initializer(i);
        initNames.insert(t.name());
        auto d = tensor(t, gwhere + " initializer " + std::to_string(i) + " '" + t.name() + "'");
        sc.vars[t.name()] = g->addConstant(d, t.name());
    }
    for (int i = 0; i < gp.input_size(); ++i) {
        const auto& vi = gp.input(i);
        if (initNames.count(vi.name())) continue; // an initializer listed as input (IR < 4)
        auto t = typeOf(vi.type());
        if (!t)
            fail(gwhere + " input " + std::to_string(i) + " '" + vi.name() + "'",
                 "only tensor, sequence and optional inputs of the element types PassLens holds are supported");
        if (sc.vars.count(vi.name()))
            fail(gwhere + " input " + std::to_string(i) + " '" + vi.name() + "'", "is declared twice");
        sc.vars[vi.name()] = g->addInput(*t, vi.name());
    }

    // Topological order of the ONNX nodes (the list need not be sorted).
    const int nn = gp.node_size();
    auto nodeWhere = [&](int i) {
        return place.empty() ? nodePlace(i, gp.node(i)) : place + ": " + nodePlace(i, gp.node(i));
    };
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < nn; ++i)
        for (const auto& o : gp.node(i).output())
            if (!o.empty()) {
                if (producer.count(o) || sc.vars.count(o)) fail(nodeWhere(i), "output '" + o + "' is produced twice");
                producer[o] = i;
            }
    const std::vector<int> order = topoOrder(
        gp, [&](const std::string& why) { fail(gwhere, why); }, nodeWhere);
    for (int i : order) {
        onnx::NodeProto& node = *gp.mutable_node(i);
        const std::string where = nodeWhere(i);
        if (node.op_type() == "Constant" && (node.domain().empty() || node.domain() == "ai.onnx")) {
            if (node.output_size() != 1) fail(where, "Constant must have one output");
            std::shared_ptr<TensorData> d;
            auto valueAttr = [&](const std::string& name, onnx::AttributeProto::AttributeType type) {
                return findAttrOfType(node, name, type, [&](const std::string& why) { fail(where, why); });
            };
            if (const auto* a = valueAttr("value", onnx::AttributeProto::TENSOR)) {
                onnx::TensorProto tp = a->t();
                d = tensor(tp, where);
            } else if (const auto* a = valueAttr("value_float", onnx::AttributeProto::FLOAT)) {
                d = TensorData::fromDoubles(DType::Float32, {}, {a->f()});
            } else if (const auto* a = valueAttr("value_int", onnx::AttributeProto::INT)) {
                d = TensorData::fromInts(DType::Int64, {}, {a->i()});
            } else if (const auto* a = valueAttr("value_floats", onnx::AttributeProto::FLOATS)) {
                d = TensorData::fromDoubles(DType::Float32, {a->floats_size()},
                                            std::vector<double>(a->floats().begin(), a->floats().end()));
            } else if (const auto* a = valueAttr("value_ints", onnx::AttributeProto::INTS)) {
                d = TensorData::fromInts(DType::Int64, {a->ints_size()},
                                         std::vector<std::int64_t>(a->ints().begin(), a->ints().end()));
            } else {
                fail(where, "Constant has no supported value attribute (value, value_float(s), value_int(s))");
            }
            sc.vars[node.output(0)] = g->addConstant(d, node.output(0));
            continue;
        }
        std::vector<Variable*> ins;
        for (int k = 0; k < node.input_size(); ++k) {
            const std::string& nm = node.input(k);
            if (nm.empty()) {
                ins.push_back(nullptr);
                continue;
            }
            Variable* v = sc.lookup(nm);
            if (!v) fail(where, "input " + std::to_string(k) + " '" + nm + "' is undefined");
            ins.push_back(v);
        }
        if (verifySchemas && (node.domain().empty() || node.domain() == "ai.onnx")) {
            // the ONNX checker stopped early: its per-node part (input and output counts,
            // attribute types, required attributes) for this node
            if (const auto* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "")) {
                try {
                    schema->Verify(node);
                } catch (const std::exception& e) {
                    fail(where, "ONNX checker: " + firstLines(e.what(), 2));
                }
            }
        }
        NodeMapper m{*this, sc, *g, node, where, ins, opset};
        std::vector<Variable*> outs;
        try {
            outs = m.map();
        } catch (const Error& e) {
            const std::string msg = e.what();
            if (msg.starts_with(label + ": ")) throw;
            fail(where, msg);
        } catch (const std::exception& e) {
            fail(where, std::string("cannot be mapped: ") + e.what());
        }
        if (outs.empty()) {
            // No Theano counterpart: an Onnx<Type> host op keeping every attribute.
            json attrs = json::object();
            std::vector<Subgraph> subs;
            std::vector<std::string> outer;
            for (auto& a : *node.mutable_attribute()) {
                if (a.type() == onnx::AttributeProto::GRAPH) {
                    Scope* subScope = nullptr;
                    auto sub =
                        importGraph(*a.mutable_g(), &sc, subScope, scopes, subgraphPlace(place, i, node, a.name()));
                    for (const auto& c : subScope->captured)
                        if (std::find(outer.begin(), outer.end(), c) == outer.end()) outer.push_back(c);
                    subs.push_back({a.name(), std::shared_ptr<const FunctionGraph>(std::move(sub))});
                } else if (a.type() == onnx::AttributeProto::GRAPHS) {
                    fail(where, "attribute '" + a.name() + "' holds a list of graphs, which is not supported");
                } else {
                    attrs[a.name()] = attrToJson(a);
                }
            }
            if (!node.domain().empty() && node.domain() != "ai.onnx") attrs["domain"] = node.domain();
            std::vector<Variable*> allIns;
            for (auto* v : ins)
                if (v) allIns.push_back(v);
            if (!outer.empty()) {
                attrs["n_onnx_inputs"] = static_cast<std::int64_t>(allIns.size());
                attrs["outer_scope"] = outer;
                for (const auto& nm : outer) allIns.push_back(sc.lookup(nm));
            }
            if (std::any_of(ins.begin(), ins.end(), [](Variable* v) { return !v; })) {
                json present = json::array();
                for (auto* v : ins) present.push_back(v != nullptr);
                attrs["inputs_present"] = present;
            }
            std::vector<Type> types;
            for (const auto& o : node.output()) {
                auto it = sc.types.find(o);
                if (it != sc.types.end()) {
                    types.push_back(it->second);
                } else {
                    types.push_back(Type::unknownRank(DType::Float32));
                    warnings.push_back(label + ": " + where + ": ONNX shape inference gave no type for output '" + o +
                                       "'; assumed float32 of unknown rank");
                }
            }
            Apply* a = nullptr;
            try {
                a = g->makeApply(Op::get("Onnx" + node.op_type(), attrs, std::move(subs)), allIns, types, node.name());
            } catch (const Error& e) {
                fail(where, e.what());
            }
            outs = a->outputs();
        }
        if (static_cast<int>(outs.size()) < node.output_size())
            fail(where, "mapped to " + std::to_string(outs.size()) + " outputs, the node has " +
                            std::to_string(node.output_size()));
        for (int k = 0; k < node.output_size(); ++k) {
            const std::string& nm = node.output(k);
            if (nm.empty()) continue;
            Variable* v = outs[static_cast<std::size_t>(k)];
            auto it = sc.types.find(nm);
            if (it != sc.types.end() && v->owner() && !v->owner()->op().isOnnx()) {
                if (!v->type().compatible(it->second)) {
                    fail(where, "output '" + nm + "': PassLens infers " + v->type().str() +
                                    ", ONNX shape inference says " + it->second.str());
                }
                if (!v->owner()->inGraph() && v->clients().empty()) g->refineType(v, it->second);
            }
            if (v->name().empty() && v->owner()) v->setName(nm);
            sc.vars[nm] = v;
        }
    }

    std::vector<Variable*> outputs;
    for (int i = 0; i < gp.output_size(); ++i) {
        Variable* v = sc.lookup(gp.output(i).name());
        if (!v)
            fail(gwhere + " output " + std::to_string(i) + " '" + gp.output(i).name() + "'",
                 "is not produced by any node");
        outputs.push_back(v);
    }
    g->setOutputs(outputs);
    // ONNX nodes none of whose outputs is used (by a node, a nested graph or as a graph output)
    std::set<std::string> used;
    for (const auto& n : gp.node()) {
        for (const auto& x : n.input()) used.insert(x);
        for (const auto& a : n.attribute()) {
            if (a.has_g()) freeNames(a.g(), used, {});
        }
    }
    for (const auto& o : gp.output()) used.insert(o.name());
    std::vector<std::string> dead;
    for (int i = 0; i < nn; ++i) {
        const auto& n = gp.node(i);
        if (std::none_of(n.output().begin(), n.output().end(), [&](const std::string& o) { return used.count(o) > 0; }))
            dead.push_back(nodeWhere(i));
    }
    if (!dead.empty())
        warnings.push_back(label + ": " + gwhere + ": " + std::to_string(dead.size()) +
                           " ONNX node(s) lead to no output and were pruned (as Theano's FunctionGraph does), e.g. " +
                           dead.front());
    return g;
}

std::string firstLines(const std::string& s, int n) {
    std::string out;
    int lines = 0;
    for (char c : s) {
        if (c == '\n') {
            if (++lines >= n) break;
            out += ' ';
            continue;
        }
        out += c;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

// Puts a graph's nodes (and its nested graphs' nodes) in topological order, in place, so that
// the ONNX checker accepts files whose node lists are not sorted (runtimes accept them too).
// Adds a warning naming each graph whose list changed (`place`: subgraphPlace, empty for the
// model's graph); a cycle is refused with the nodes on it.
void sortNodesInPlace(onnx::GraphProto& gp, const std::string& label, const std::string& place,
                      std::vector<std::string>& warnings) {
    const std::string gwhere = place.empty() ? "graph '" + gp.name() + "'" : place;
    auto where = [&](int i) { return nodePlace(i, gp.node(i)); };
    const std::vector<int> order = topoOrder(
        gp, [&](const std::string& why) { throw Error(label + ": " + gwhere + ": " + why); }, where);
    bool identity = true;
    for (std::size_t i = 0; i < order.size(); ++i) identity &= order[i] == static_cast<int>(i);
    if (!identity) {
        const int n = gp.node_size();
        std::vector<onnx::NodeProto*> nodes(static_cast<std::size_t>(n));
        gp.mutable_node()->ExtractSubrange(0, n, nodes.data());
        for (int i : order) gp.mutable_node()->AddAllocated(nodes[static_cast<std::size_t>(i)]);
        warnings.push_back(label + ": " + gwhere +
                           ": the node list is not topologically sorted (as ONNX requires); accepted, node numbers " +
                           (place.empty() ? "" : "in it ") + "below refer to the sorted order");
    }
    // nested graphs after this one, so that their places number its nodes in sorted order
    for (int i = 0; i < gp.node_size(); ++i) {
        auto& n = *gp.mutable_node(i);
        for (auto& a : *n.mutable_attribute()) {
            if (a.has_g()) sortNodesInPlace(*a.mutable_g(), label, subgraphPlace(place, i, n, a.name()), warnings);
            for (auto& g : *a.mutable_graphs())
                sortNodesInPlace(g, label, subgraphPlace(place, i, n, a.name()), warnings);
        }
    }
}

LoadedGraph importModel(onnx::ModelProto& model, const std::string& label, const std::filesystem::path& baseDir,
                        const OnnxImportOptions& options) {
    Importer imp{label, baseDir, 0, {}, 0};
    if (!model.has_graph()) throw Error(label + ": not an ONNX model: no graph (is this an ONNX file?)");
    for (const auto& os : model.opset_import())
        if (os.domain().empty() || os.domain() == "ai.onnx") imp.opset = static_cast<int>(os.version());
    // a model may import other domains only (ai.onnx.preview.training's test cases); none at all
    // is a truncated file
    if (imp.opset == 0 && model.ir_version() >= 3 && model.opset_import_size() == 0)
        throw Error(label + ": opset_import: no opset for the default ONNX domain (the file may be truncated)");
    if (imp.opset == 0) imp.opset = 1;
    const bool newer = model.ir_version() > onnx::Version::IR_VERSION || imp.opset > onnxLatestKnownOpset();
    if (newer)
        imp.warnings.push_back(label + ": IR version " + std::to_string(model.ir_version()) + ", opset " +
                               std::to_string(imp.opset) + " is newer than libonnx knows (IR " +
                               std::to_string(onnx::Version::IR_VERSION) + ", opset " +
                               std::to_string(onnxLatestKnownOpset()) + "); importing with the newest rules known");
    if (const int escaped = escapeInvalidNames(model, label))
        imp.warnings.push_back(label + ": " + std::to_string(escaped) +
                               " name(s) are not valid UTF-8; their invalid bytes are written as \\xNN");
    // Every tensor's data against its dims and type, before libonnx parses any of it.
    const std::vector<std::string> missingFiles = checkModelTensors(model, label, baseDir);
    checkModelAttributes(model, label);
    // Bind input shapes. The dims the model declares for its outputs and intermediate values
    // described the old input shapes: they are forgotten (forgetDeclaredDims) and inferred again.
    bool rebound = false;
    for (auto& in : *model.mutable_graph()->mutable_input()) {
        auto it = options.inputShapes.find(in.name());
        if (it == options.inputShapes.end()) continue;
        auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (auto d : it->second) {
            auto* dim = shape->add_dim();
            if (d >= 0) dim->set_dim_value(d);
        }
        rebound = true;
    }
    if (rebound) forgetDeclaredDims(*model.mutable_graph());
    {
        // Undefined inputs of top-level nodes, named before the checker's less specific message.
        const auto& gp = model.graph();
        std::unordered_set<std::string> defined;
        for (const auto& x : gp.input()) defined.insert(x.name());
        for (const auto& x : gp.initializer()) defined.insert(x.name());
        for (const auto& n : gp.node())
            for (const auto& o : n.output()) defined.insert(o);
        for (int i = 0; i < gp.node_size(); ++i) {
            const auto& n = gp.node(i);
            for (int k = 0; k < n.input_size(); ++k)
                if (!n.input(k).empty() && !defined.count(n.input(k)))
                    throw Error(label + ": " + nodePlace(i, n) + ": input " + std::to_string(k) + " '" + n.input(k) +
                                "' is undefined");
        }
    }
    sortNodesInPlace(*model.mutable_graph(), label, {}, imp.warnings);
    if (!newer) {
        // onnx::checker::check_model, with the model's folder as the base for external data
        try {
            onnx::checker::CheckerContext ctx;
            ctx.set_ir_version(static_cast<int>(model.ir_version()));
            std::unordered_map<std::string, int> imports;
            for (const auto& os : model.opset_import()) imports[os.domain()] = static_cast<int>(os.version());
            ctx.set_opset_imports(imports);
            ctx.set_model_dir(baseDir.string());
            onnx::checker::LexicalScopeContext lex;
            onnx::checker::check_graph(model.graph(), ctx, lex);
            if (model.ir_version() >= 8) onnx::checker::check_model_local_functions(model, ctx, lex);
        } catch (const std::exception& e) {
            const std::string what = e.what();
            if (what.find("should be stored in") != std::string::npos) {
                std::string files;
                for (const auto& f : missingFiles) files += (files.empty() ? "'" : ", '") + escapeInvalidUtf8(f) + "'";
                imp.warnings.push_back(label + ": ONNX checker stopped at a missing external data file " + files +
                                       "; its per-node checks are made during the import");
                imp.verifySchemas = true;
            } else
                throw Error(label + ": ONNX checker: " + firstLines(what, 2));
        }
    }
    try {
        onnx::ShapeInferenceOptions so(true, 0, true);
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), so);
    } catch (const std::exception& e) {
        imp.warnings.push_back(label + ": ONNX shape inference failed (" + firstLines(e.what(), 1) +
                               "); types come from the model's declarations");
    }
    Scope* top = nullptr;
    std::vector<std::unique_ptr<Scope>> scopes;
    LoadedGraph r;
    r.format = "onnx";
    r.graph = imp.importGraph(*model.mutable_graph(), nullptr, top, scopes, {});
    r.warnings = std::move(imp.warnings);
    return r;
}

} // namespace

std::optional<DType> dtypeFromOnnx(int onnxType) {
    switch (onnxType) {
    case onnx::TensorProto::FLOAT: return DType::Float32;
    case onnx::TensorProto::UINT8: return DType::UInt8;
    case onnx::TensorProto::INT8: return DType::Int8;
    case onnx::TensorProto::UINT16: return DType::UInt16;
    case onnx::TensorProto::INT16: return DType::Int16;
    case onnx::TensorProto::INT32: return DType::Int32;
    case onnx::TensorProto::INT64: return DType::Int64;
    case onnx::TensorProto::BOOL: return DType::Bool;
    case onnx::TensorProto::FLOAT16: return DType::Float16;
    case onnx::TensorProto::DOUBLE: return DType::Float64;
    case onnx::TensorProto::UINT32: return DType::UInt32;
    case onnx::TensorProto::UINT64: return DType::UInt64;
    case onnx::TensorProto::COMPLEX64: return DType::Complex64;
    case onnx::TensorProto::COMPLEX128: return DType::Complex128;
    default: return std::nullopt;
    }
}

int onnxTypeOf(DType d) {
    for (int t = onnx::TensorProto::FLOAT; t <= onnx::TensorProto::COMPLEX128; ++t)
        if (dtypeFromOnnx(t) == d) return t;
    return onnx::TensorProto::UNDEFINED;
}

int onnxLatestKnownOpset() {
    return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
}

LoadedGraph importOnnxBytes(const std::string& bytes, const std::string& label, const std::filesystem::path& baseDir,
                            const OnnxImportOptions& options) {
    if (bytes.size() > static_cast<std::size_t>(INT_MAX))
        throw Error(label + ": " + std::to_string(bytes.size()) +
                    " bytes: larger than the 2 GiB protobuf allows for an ONNX model");
    onnx::ModelProto model;
    google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
        throw Error(label + ": byte " + std::to_string(coded.CurrentPosition()) +
                    ": not a valid ONNX model (protobuf parse failed; the file may be truncated or of another format)");
    return importModel(model, label, baseDir, options);
}

LoadedGraph importOnnxFile(const std::filesystem::path& path, const OnnxImportOptions& options) {
    const std::string label = path.string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(label + ": cannot open: " + std::strerror(errno));
    onnx::ModelProto model;
    bool ok;
    std::int64_t pos;
    {
        google::protobuf::io::FileInputStream raw(fd);
        raw.SetCloseOnDelete(true);
        google::protobuf::io::CodedInputStream coded(&raw);
        coded.SetTotalBytesLimit(INT_MAX);
        ok = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
        pos = coded.CurrentPosition();
        if (raw.GetErrno() != 0) throw Error(label + ": cannot read: " + std::strerror(raw.GetErrno()));
    }
    if (!ok)
        throw Error(label + ": byte " + std::to_string(pos) +
                    ": not a valid ONNX model (protobuf parse failed; the file may be truncated or of another format)");
    std::filesystem::path base = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    return importModel(model, label, base, options);
}

} // namespace passlens
