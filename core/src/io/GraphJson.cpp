// Graph JSON reading (GraphJson.h): the records of GraphJsonDoc.h checked and built into a
// FunctionGraph, with messages naming the file and the JSON path.
#include "passlens/io/GraphJson.h"

#include "GraphJsonDoc.h"
#include "passlens/io/AtomicFile.h"
#include "passlens/io/Encoding.h"
#include "passlens/io/JsonFile.h"
#include "passlens/io/Limits.h"
#include "passlens/io/Npy.h"
#include "passlens/ir/Error.h"
#include "passlens/ir/MakeNode.h"
#include "passlens/ir/OpRegistry.h"

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string_view>
#include <unordered_map>

namespace passlens {
namespace {
using json = nlohmann::json;
using graphjson::Def;
using graphjson::GraphDoc;
using graphjson::graphDocOf;
using graphjson::InRec;
using graphjson::NodeRec;
using graphjson::OutRec;
using graphjson::parseGraphDoc;
using graphjson::Slot;

struct Ctx {
    std::string label;
    std::filesystem::path baseDir;
    [[noreturn]] void fail(const std::string& path, const std::string& why) const {
        throw Error(label + ": " + (path.empty() ? "" : path + ": ") + why);
    }
};

const json& need(const Ctx& c, const json& obj, const char* key, const std::string& path) {
    if (!obj.is_object()) c.fail(path, "expected an object, got " + std::string(obj.type_name()));
    auto it = obj.find(key);
    if (it == obj.end()) c.fail(path, std::string("missing '") + key + "'");
    return *it;
}

std::string needString(const Ctx& c, const json& obj, const char* key, const std::string& path) {
    const json& v = need(c, obj, key, path);
    if (!v.is_string()) c.fail(path + "." + key, "expected a string, got " + v.dump());
    if (v.get<std::string>().empty()) c.fail(path + "." + key, "must not be empty");
    return v.get<std::string>();
}

Type parseTypeAt(const Ctx& c, const json& v, const std::string& path) {
    if (!v.is_string()) c.fail(path, "expected a type string like \"float32[?,4]\"");
    try {
        return Type::parse(v.get<std::string>());
    } catch (const Error& e) {
        c.fail(path, e.what());
    }
}

void flattenValues(const Ctx& c, const json& v, std::size_t depth, const std::vector<std::int64_t>& shape,
                   std::vector<double>& out, const std::string& path) {
    if (depth == shape.size()) {
        if (v.is_boolean()) {
            out.push_back(v.get<bool>() ? 1.0 : 0.0);
            return;
        }
        if (v.is_string()) { // non-finite values are written as strings (JSON has no NaN)
            const std::string t = v.get<std::string>();
            if (t == "nan") {
                out.push_back(std::numeric_limits<double>::quiet_NaN());
                return;
            }
            if (t == "inf") {
                out.push_back(std::numeric_limits<double>::infinity());
                return;
            }
            if (t == "-inf") {
                out.push_back(-std::numeric_limits<double>::infinity());
                return;
            }
        }
        if (!v.is_number())
            c.fail(path, "expected a number (or \"nan\", \"inf\", \"-inf\"), got " + v.dump().substr(0, 40));
        out.push_back(v.get<double>());
        return;
    }
    if (!v.is_array() || static_cast<std::int64_t>(v.size()) != shape[depth])
        c.fail(path, "value does not match the shape: expected a list of " + std::to_string(shape[depth]) +
                         " at depth " + std::to_string(depth));
    for (std::size_t i = 0; i < v.size(); ++i) flattenValues(c, v[i], depth + 1, shape, out, path);
}

std::shared_ptr<const TensorData> constantValue(const Ctx& c, const json& v, const Type& t, const std::string& path,
                                                const std::string& name) {
    if (v.is_object()) {
        if (v.contains("file")) {
            if (!v["file"].is_string()) c.fail(path + ".file", "expected a file name");
            const std::filesystem::path f = c.baseDir / v["file"].get<std::string>();
            std::string bytes;
            try {
                bytes = readFile(f);
            } catch (const Error& e) {
                c.fail(path + ".file", e.what());
            }
            auto data = parseNpy(bytes, f.string());
            if (data->dtype != t.dtype() || data->shape != t.dims())
                c.fail(path, "the .npy file holds " + std::string(dtypeName(data->dtype)) + " of shape " +
                                 Type(data->dtype, data->shape).str() + ", the type says " + t.str());
            return data;
        }
        if (v.contains("base64")) {
            if (!v["base64"].is_string()) c.fail(path + ".base64", "expected a string");
            if (!t.isStatic()) c.fail(path, "a constant needs a static type, got " + t.str());
            auto d = std::make_shared<TensorData>();
            d->dtype = t.dtype();
            d->shape = t.dims();
            std::string bytes;
            try {
                bytes = base64Decode(v["base64"].get<std::string>());
            } catch (const Error& e) {
                c.fail(path + ".base64", e.what());
            }
            if (const std::string why = d->bytesProblem(bytes); !why.empty()) c.fail(path + ".base64", why);
            d->bytes = std::make_shared<const std::string>(std::move(bytes));
            return d;
        }
        if (v.contains("missing")) {
            auto d = std::make_shared<TensorData>();
            d->dtype = t.dtype();
            d->shape = t.dims();
            d->missing = v["missing"].is_string() ? v["missing"].get<std::string>() : "data missing";
            return d;
        }
        if (v.contains("fill")) {
            if (!t.isStatic()) c.fail(path, "a filled constant needs a static type, got " + t.str());
            if (isString(t.dtype())) c.fail(path + ".fill", "a string constant cannot be filled");
            const std::string fill = v["fill"].is_string() ? v["fill"].get<std::string>() : "";
            if (v.contains("seed") && !v["seed"].is_number_unsigned())
                c.fail(path + ".seed", "expected a non-negative integer, got " + v["seed"].dump());
            const std::uint64_t seed = v.value("seed", 0ull);
            checkTensorBytes(c.label + ": " + path + " (constant '" + name + "')", t.dtype(),
                             t.dims()); // before building it
            std::vector<double> vals(static_cast<std::size_t>(t.numElements()));
            std::mt19937_64 rng(seed);
            if (fill == "zeros")
                std::fill(vals.begin(), vals.end(), 0.0);
            else if (fill == "ones")
                std::fill(vals.begin(), vals.end(), 1.0);
            else if (fill == "normal") {
                std::normal_distribution<double> d(0, 1);
                for (auto& x : vals) x = d(rng);
            } else if (fill == "uniform") {
                std::uniform_real_distribution<double> d(0, 1);
                for (auto& x : vals) x = d(rng);
            } else
                c.fail(path + ".fill", "must be zeros, ones, normal or uniform");
            return TensorData::fromDoubles(t.dtype(), t.dims(), vals);
        }
        c.fail(path, "a constant value object needs 'fill', 'file' or 'missing'");
    }
    if (!t.isStatic()) c.fail(path, "a constant needs a static type, got " + t.str());
    if (isString(t.dtype())) c.fail(path, "a string constant's value is {\"base64\": ...} (its encoded elements)");
    std::vector<double> vals;
    if (t.dtype() == DType::Int64 || t.dtype() == DType::UInt64) {
        // keep 64-bit integers exact
        std::vector<std::int64_t> ints;
        std::vector<double> probe;
        flattenValues(c, v, 0, t.dims(), probe, path);
        std::function<void(const json&)> walk = [&](const json& e) {
            if (e.is_array()) {
                for (const auto& x : e) walk(x);
                return;
            }
            ints.push_back(e.is_boolean()          ? (e.get<bool>() ? 1 : 0)
                           : e.is_number_integer() ? e.get<std::int64_t>()
                                                   : static_cast<std::int64_t>(e.get<double>()));
        };
        walk(v);
        return TensorData::fromInts(t.dtype(), t.dims(), ints);
    }
    flattenValues(c, v, 0, t.dims(), vals, path);
    return TensorData::fromDoubles(t.dtype(), t.dims(), vals);
}

void hintId(const Ctx& c, FunctionGraph& g, const json& id, const std::string& path) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0) c.fail(path, "expected a non-negative integer id");
    try {
        g.hintNextIds(-1, {id.get<VarId>()});
    } catch (const Error& e) {
        c.fail(path, e.what());
    }
}

std::string nodeLabel(const NodeRec& n, std::size_t i) {
    std::string s = "nodes[" + std::to_string(i) + "]";
    if (!n.hasOp) return s;
    s += " (" + n.op;
    if (const json* nm = n.field("name"); nm && nm->is_string()) s += " '" + nm->get<std::string>() + "'";
    return s + ")";
}

// The checks of need()/needString() on a node's fields, with their messages.
void checkNodeShape(const Ctx& c, const NodeRec& n, const std::string& p) {
    if (!n.object) c.fail(p, "expected an object, got " + std::string(n.raw.type_name()));
    if (!n.hasOp) {
        if (const json* op = n.field("op")) c.fail(p + ".op", "expected a string, got " + op->dump());
        c.fail(p, "missing 'op'");
    }
    if (n.op.empty()) c.fail(p + ".op", "must not be empty");
    if (!n.hasOutputs && !n.field("outputs")) c.fail(p, "missing 'outputs'");
    if (!n.hasInputs && !n.field("inputs")) c.fail(p, "missing 'inputs'");
    if (!n.hasOutputs) c.fail(p + ".outputs", "expected a list");
    if (!n.hasInputs) c.fail(p + ".inputs", "expected a list");
}

const std::string& outputName(const Ctx& c, const OutRec& o, const std::string& op) {
    if (o.form == OutRec::Object) {
        if (!o.hasName) {
            if (const json* nm = o.field("name")) c.fail(op + ".name", "expected a string, got " + nm->dump());
            c.fail(op, "missing 'name'");
        }
        if (o.name.empty()) c.fail(op + ".name", "must not be empty");
    }
    if (o.form == OutRec::Other || o.name.empty()) c.fail(op, "expected a variable name or {\"name\", \"type\"}");
    return o.name;
}

Type outputType(const Ctx& c, const OutRec& o, const std::string& path) {
    if (!o.hasType) c.fail(path, "expected a type string like \"float32[?,4]\"");
    try {
        return Type::parse(o.type);
    } catch (const Error& e) {
        c.fail(path, e.what());
    }
}

LoadedGraph buildGraph(GraphDoc& d, const std::string& label, const std::filesystem::path& baseDir) {
    const Ctx c{label, baseDir};
    const json& doc = d.root();
    if (!doc.is_object()) c.fail("", "not a graph JSON document: the top level must be an object");
    if (!doc.contains("format") || doc["format"] != "passlens.graph")
        c.fail("format", "not a PassLens graph: expected \"format\": \"passlens.graph\"");
    if (!doc.contains("version") || doc["version"] != 1)
        c.fail("version", "unsupported graph JSON version " +
                              (doc.contains("version") ? doc["version"].dump() : std::string("(missing)")) +
                              " (this build reads version 1)");

    LoadedGraph result;
    result.format = "graph-json";
    auto g = std::make_unique<FunctionGraph>();
    g->name = doc.value("name", std::string());
    g->sourcePath = label;
    auto defPath = [](const Def& d) {
        if (d.section == 'i') return "inputs[" + std::to_string(d.index) + "]";
        if (d.section == 'c') return "constants[" + std::to_string(d.index) + "]";
        return "nodes[" + std::to_string(d.index) + "].outputs[" + std::to_string(d.out) + "]";
    };
    std::vector<NodeRec>& nodes = d.nodes;
    if (!d.nodesList) nodes.clear();
    const std::size_t expected = nodes.size() + 16;
    // Every variable name; the keys view strings of the document, which outlives the map.
    std::unordered_map<std::string_view, Slot> vars;
    vars.reserve(expected * 2);
    auto define = [&](const std::string& name, Variable* v, Def d) {
        auto [it, ok] = vars.emplace(name, Slot{d, v});
        if (!ok)
            c.fail(defPath(d), "variable '" + name + "' is defined twice (first at " + defPath(it->second.def) + ")");
    };

    if (doc.contains("inputs")) {
        const json& ins = doc["inputs"];
        if (!ins.is_array()) c.fail("inputs", "expected a list");
        for (std::size_t i = 0; i < ins.size(); ++i) {
            const std::string p = "inputs[" + std::to_string(i) + "]";
            needString(c, ins[i], "name", p);
            const std::string& name = ins[i]["name"].get_ref<const std::string&>();
            if (ins[i].contains("id")) hintId(c, *g, ins[i]["id"], p + ".id");
            Variable* v = g->addInput(parseTypeAt(c, need(c, ins[i], "type", p), p + ".type"), name);
            if (ins[i].contains("tag")) {
                if (!ins[i]["tag"].is_object()) c.fail(p + ".tag", "expected an object");
                v->tag = ins[i]["tag"];
            }
            define(name, v, {'i', static_cast<std::uint32_t>(i), 0});
        }
    }
    if (doc.contains("constants")) {
        const json& cs = doc["constants"];
        if (!cs.is_array()) c.fail("constants", "expected a list");
        for (std::size_t i = 0; i < cs.size(); ++i) {
            const std::string p = "constants[" + std::to_string(i) + "]";
            needString(c, cs[i], "name", p);
            const std::string& name = cs[i]["name"].get_ref<const std::string&>();
            const Type t = parseTypeAt(c, need(c, cs[i], "type", p), p + ".type");
            auto data = constantValue(c, need(c, cs[i], "value", p), t, p + ".value", name);
            if (cs[i].contains("id")) hintId(c, *g, cs[i]["id"], p + ".id");
            define(name, g->addConstant(data, name, t.location()), {'c', static_cast<std::uint32_t>(i), 0});
        }
    }

    // Nodes: index producers first, so the file need not be topologically sorted.
    if (!d.nodesList && doc.contains("nodes")) c.fail("nodes", "expected a list");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::string p = "nodes[" + std::to_string(i) + "]";
        checkNodeShape(c, nodes[i], p);
        std::vector<OutRec>& outs = nodes[i].outputs;
        for (std::size_t k = 0; k < outs.size(); ++k) {
            const std::string& name = outs[k].form == OutRec::Name && !outs[k].name.empty()
                                          ? outs[k].name
                                          : outputName(c, outs[k], p + ".outputs[" + std::to_string(k) + "]");
            auto [it, fresh] =
                vars.emplace(name, Slot{{'n', static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(k)}});
            if (!fresh)
                c.fail(p + ".outputs[" + std::to_string(k) + "]",
                       "variable '" + name + "' is produced twice (also " + defPath(it->second.def) + ")");
            outs[k].slot = &it->second;
        }
    }
    // Iterative DFS for a topological order; a back edge is a cycle.
    std::vector<int> state(nodes.size(), 0);
    std::vector<std::size_t> order;
    order.reserve(nodes.size());
    for (std::size_t root = 0; root < nodes.size(); ++root) {
        if (state[root]) continue;
        std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};
        state[root] = 1;
        while (!stack.empty()) {
            auto& [n, next] = stack.back();
            std::vector<InRec>& ins = nodes[n].inputs;
            if (next < ins.size()) {
                const std::size_t k = next++;
                if (!ins[k].isName) {
                    if (isLiteral(ins[k].literal)) continue; // a value, converted as Theano's make_node does
                    c.fail("nodes[" + std::to_string(n) + "].inputs[" + std::to_string(k) + "]",
                           "expected a variable name or a literal value");
                }
                const std::string& name = ins[k].name;
                auto pit = vars.find(name);
                if (pit == vars.end())
                    c.fail("nodes[" + std::to_string(n) + "].inputs[" + std::to_string(k) + "]",
                           "unknown variable '" + name + "'");
                ins[k].slot = &pit->second;
                if (pit->second.def.section != 'n') continue; // a graph input or constant
                const std::size_t m = pit->second.def.index;
                if (state[m] == 1) {
                    std::string cyc;
                    bool on = false;
                    for (auto& [sn, _] : stack) {
                        if (sn == m) on = true;
                        if (on) cyc += nodeLabel(nodes[sn], sn) + " -> ";
                    }
                    cyc += nodeLabel(nodes[m], m);
                    c.fail("nodes", "the graph has a cycle: " + cyc);
                }
                if (state[m] == 0) {
                    state[m] = 1;
                    stack.push_back({m, 0});
                }
                continue;
            }
            state[n] = 2;
            order.push_back(n);
            stack.pop_back();
        }
    }
    for (std::size_t i : order) {
        NodeRec& n = nodes[i];
        const std::string p = "nodes[" + std::to_string(i) + "]";
        json attrs = json::object();
        if (n.other.is_object()) {
            auto it = n.other.find("attrs");
            if (it != n.other.end()) attrs = std::move(*it);
        }
        std::vector<Subgraph> subs;
        if (const json* sg = n.field("subgraphs")) {
            if (!sg->is_object()) c.fail(p + ".subgraphs", "expected an object");
            for (auto it = sg->begin(); it != sg->end(); ++it) {
                LoadedGraph sub = readGraphJson(it.value(), label + ": " + p + ".subgraphs." + it.key(), baseDir);
                subs.push_back({it.key(), std::shared_ptr<const FunctionGraph>(std::move(sub.graph))});
            }
        }
        const Op* op = nullptr;
        try {
            op = &Op::get(n.op, attrs, std::move(subs));
        } catch (const Error& e) {
            c.fail(p + (std::string(e.what()).starts_with("unknown op kind") ? ".op" : ".attrs"), e.what());
        }
        // Inputs as Theano's make_node converts them (MakeNode.h): literals, transfers, rank padding.
        std::vector<NodeInput> given;
        given.reserve(n.inputs.size());
        for (InRec& in : n.inputs)
            given.push_back(in.isName ? NodeInput{in.slot->var, {}} : NodeInput{nullptr, std::move(in.literal)});
        std::vector<Variable*> ins;
        try {
            ins = makeNodeInputs(*g, *op, given);
        } catch (const Error& e) {
            c.fail(p + ".inputs", e.what());
        }
        const std::vector<OutRec>& outs = n.outputs;
        std::optional<std::vector<Type>> declared;
        bool anyTyped = false;
        for (const OutRec& o : outs) anyTyped |= o.typed();
        // Some outputs typed, others not (op with a type rule): checked one by one after makeApply.
        std::vector<std::pair<std::size_t, Type>> partial;
        if (anyTyped) {
            std::vector<Type> ts;
            bool all = true;
            for (std::size_t k = 0; k < outs.size(); ++k) {
                const std::string op2 = p + ".outputs[" + std::to_string(k) + "]";
                if (!outs[k].typed()) {
                    if (op->info().infer) {
                        all = false;
                        continue;
                    }
                    c.fail(op2, op->str() + " has no type rule: give every output a type");
                }
                ts.push_back(outputType(c, outs[k], op2 + ".type"));
                partial.emplace_back(k, ts.back());
            }
            if (all) {
                declared = std::move(ts);
                partial.clear();
            }
        }
        Apply* node = nullptr;
        if (const json* id = n.field("id")) {
            std::vector<VarId> outIds;
            for (const OutRec& o : outs)
                if (const json* oid = o.form == OutRec::Object ? o.field("id") : nullptr;
                    oid && oid->is_number_integer())
                    outIds.push_back(oid->get<VarId>());
            if (!id->is_number_integer() || id->get<NodeId>() < 0) c.fail(p + ".id", "expected a non-negative integer");
            try {
                g->hintNextIds(id->get<NodeId>(), outIds);
            } catch (const Error& e) {
                c.fail(p + ".id", e.what());
            }
        }
        try {
            node = g->makeApply(*op, ins, declared, n.other.is_object() ? n.other.value("name", std::string()) : "");
        } catch (const Error& e) {
            c.fail(p, e.what());
        }
        if (const json* tag = n.field("tag")) {
            if (!tag->is_object()) c.fail(p + ".tag", "expected an object");
            node->tag = *tag;
        }
        if (static_cast<std::size_t>(node->nout()) != outs.size())
            c.fail(p + ".outputs", op->str() + " has " + std::to_string(node->nout()) + " output(s), " +
                                       std::to_string(outs.size()) + " listed");
        for (const auto& [k, t] : partial) {
            Variable* o = node->output(static_cast<int>(k));
            if (!o->type().compatible(t))
                c.fail(p + ".outputs[" + std::to_string(k) + "]", op->str() + ": type mismatch on output " +
                                                                      std::to_string(k) + ": declared " + t.str() +
                                                                      ", inferred " + o->type().str());
            g->refineType(o, t);
        }
        for (std::size_t k = 0; k < outs.size(); ++k) {
            node->output(static_cast<int>(k))->setName(outs[k].name);
            outs[k].slot->var = node->output(static_cast<int>(k));
        }
    }

    std::vector<Variable*> outputs;
    if (!doc.contains("outputs") || !doc["outputs"].is_array()) c.fail("outputs", "expected a list of variable names");
    for (std::size_t i = 0; i < doc["outputs"].size(); ++i) {
        const json& o = doc["outputs"][i];
        const std::string p = "outputs[" + std::to_string(i) + "]";
        if (!o.is_string()) c.fail(p, "expected a variable name");
        auto it = vars.find(o.get_ref<const std::string&>());
        if (it == vars.end()) c.fail(p, "unknown variable '" + o.get<std::string>() + "'");
        outputs.push_back(it->second.var);
    }
    g->setOutputs(outputs);
    std::size_t unused = 0;
    for (NodeId id = 0; id < g->nodeIdLimit(); ++id)
        if (g->node(id) && !g->node(id)->inGraph()) ++unused;
    if (unused)
        result.warnings.push_back(label + ": " + std::to_string(unused) +
                                  " node(s) do not lead to an output and were pruned (as Theano's FunctionGraph does)");
    result.graph = std::move(g);
    return result;
}

} // namespace

LoadedGraph readGraphJson(const json& doc, const std::string& label, const std::filesystem::path& baseDir) {
    GraphDoc d = graphDocOf(doc);
    return buildGraph(d, label, baseDir);
}

LoadedGraph readGraphJsonText(const std::string& text, const std::string& label, const std::filesystem::path& baseDir) {
    GraphDoc d = parseGraphDoc(text, label);
    return buildGraph(d, label, baseDir);
}

LoadedGraph readGraphOrSessionText(const std::string& text, const std::string& label,
                                   const std::filesystem::path& baseDir) {
    GraphDoc d = parseGraphDoc(text, label);
    const json& doc = d.owned;
    if (doc.is_object() && doc.value("format", "") == "passlens.session") {
        if (!doc.contains("graph")) throw Error(label + ": graph: a session file needs the source graph");
        LoadedGraph g = readGraphJson(doc["graph"], label + ": graph", baseDir);
        g.format = "session";
        return g;
    }
    return buildGraph(d, label, baseDir);
}

} // namespace passlens
