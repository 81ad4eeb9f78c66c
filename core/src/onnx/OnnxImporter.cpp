// ONNX import: checks, checker, shape inference, then each graph read node by node; a node is
// mapped to Theano ops by NodeMapper (NodeMapper.cpp and the Map*.cpp families, OPS.md).
#include "passlens/onnx/OnnxImporter.h"
#include "passlens/onnx/OnnxTypes.h"

#include "Importer.h"
#include "NodeMapper.h"
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
#include <iostream>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <set>
#include <unordered_map>

namespace passlens::onnximport {
namespace {

// While alive, what is written to std::cerr is kept (text()) instead of reaching the terminal:
// libonnx's checker writes its warnings there. One at a time in the process (imports may run
// on several worker threads), which holds it with the stream swapped; PassLens's libraries
// themselves never write to std::cerr.
class LibraryOutput {
public:
    LibraryOutput()
        : m_lock(mutex()) {
        std::cerr.flush();
        m_previous = std::cerr.rdbuf(&m_buffer);
    }
    ~LibraryOutput() { std::cerr.rdbuf(m_previous); }
    LibraryOutput(const LibraryOutput&) = delete;
    LibraryOutput& operator=(const LibraryOutput&) = delete;
    std::string text() const { return m_buffer.str(); }

private:
    static std::mutex& mutex() {
        static std::mutex m;
        return m;
    }
    std::lock_guard<std::mutex> m_lock;
    std::stringbuf m_buffer;
    std::streambuf* m_previous = nullptr;
};

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

} // namespace

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

std::shared_ptr<TensorData> Importer::tensor(onnx::TensorProto& t, const std::string& where) {
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
        if (!in) return missing("external data file '" + fileText + "' of tensor '" + t.name() + "' cannot be read");
        d->bytes = std::make_shared<const std::string>(std::move(bytes));
        return d;
    }
    if (*dt == DType::String) // string_data (its count was checked by tensorDataProblem)
        return TensorData::fromStrings(std::move(d->shape),
                                       std::vector<std::string>(t.string_data().begin(), t.string_data().end()));
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
    default: // int32 field carries int8/16/32, uint8/16, bool, float16 and bfloat16 bits
        for (std::size_t i = 0; i < n; ++i) {
            const std::int32_t v = t.int32_data(static_cast<int>(i));
            std::memcpy(b.data() + i * dtypeSize(*dt), &v, dtypeSize(*dt)); // little-endian low bytes
        }
    }
    d->bytes = std::make_shared<const std::string>(std::move(b));
    return d;
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

} // namespace passlens::onnximport

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
    // what libonnx writes to std::cerr while it checks and infers becomes warnings of ours
    // (libonnxWarnings), never raw text on the user's terminal
    std::optional<LibraryOutput> libonnxOutput(std::in_place);
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
    const std::string said = libonnxOutput->text();
    libonnxOutput.reset();
    for (std::string& w : libonnxWarnings(said, model, label)) imp.warnings.push_back(std::move(w));
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
    case onnx::TensorProto::BFLOAT16: return DType::BFloat16;
    case onnx::TensorProto::STRING: return DType::String;
    default: return std::nullopt;
    }
}

int onnxTypeOf(DType d) {
    for (int t = onnx::TensorProto::FLOAT; t <= onnx::TensorProto::BFLOAT16; ++t) // STRING (8) among them
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
