// Checks and repairs on a parsed ONNX model before libonnx reads it (see OnnxModelChecks.h).
#include "OnnxModelChecks.h"

#include "passlens/io/Encoding.h"
#include "passlens/ir/Error.h"

#include <charconv>
#include <climits>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_set>

namespace passlens::onnximport {

namespace {

using TP = onnx::TensorProto;

// The typed field of TensorProto that holds an element type's values (onnx.proto comments).
enum class Field { Float, Int32, Int64, Double, UInt64, String };
struct Elem {
    std::size_t bytes; // raw_data bytes per element (0 for STRING, which has no raw form)
    Field field;
    int perElement; // typed-field values per element (2 for complex: real, imaginary)
};

std::optional<Elem> elemOf(int type) {
    switch (type) {
    case TP::FLOAT: return Elem{4, Field::Float, 1};
    case TP::UINT8:
    case TP::INT8:
    case TP::BOOL: return Elem{1, Field::Int32, 1};
    case TP::UINT16:
    case TP::INT16:
    case TP::FLOAT16:
    case TP::BFLOAT16: return Elem{2, Field::Int32, 1};
    case TP::INT32: return Elem{4, Field::Int32, 1};
    case TP::INT64: return Elem{8, Field::Int64, 1};
    case TP::STRING: return Elem{0, Field::String, 1};
    case TP::DOUBLE: return Elem{8, Field::Double, 1};
    case TP::UINT32: return Elem{4, Field::UInt64, 1};
    case TP::UINT64: return Elem{8, Field::UInt64, 1};
    case TP::COMPLEX64: return Elem{8, Field::Float, 2};
    case TP::COMPLEX128: return Elem{16, Field::Double, 2};
    default: return std::nullopt;
    }
}

const char* fieldName(Field f) {
    switch (f) {
    case Field::Float: return "float_data";
    case Field::Int32: return "int32_data";
    case Field::Int64: return "int64_data";
    case Field::Double: return "double_data";
    case Field::UInt64: return "uint64_data";
    case Field::String: return "string_data";
    }
    return "";
}

std::int64_t fieldCount(const TP& t, Field f) {
    switch (f) {
    case Field::Float: return t.float_data_size();
    case Field::Int32: return t.int32_data_size();
    case Field::Int64: return t.int64_data_size();
    case Field::Double: return t.double_data_size();
    case Field::UInt64: return t.uint64_data_size();
    case Field::String: return t.string_data_size();
    }
    return 0;
}

std::string dimsText(const TP& t) { return intsText(std::vector<std::int64_t>(t.dims().begin(), t.dims().end())); }

// A non-negative decimal integer filling the whole text.
std::optional<std::int64_t> parseCount(const std::string& s) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
    return v;
}

std::string at(const std::string& place, const std::string& what) { return place.empty() ? what : place + ": " + what; }

struct TensorWalker {
    const std::string& label;
    const std::filesystem::path& baseDir;
    std::vector<std::string> missing;

    void tensor(const TP& t, const std::string& where) {
        const std::string why = tensorDataProblem(t);
        if (!why.empty()) throw Error(label + ": " + where + ": tensor '" + t.name() + "': " + why);
        if (t.data_location() == TP::EXTERNAL) {
            const std::string p = externalDataPath(t, baseDir).string();
            std::error_code ec;
            if (!std::filesystem::exists(p, ec) && std::find(missing.begin(), missing.end(), p) == missing.end())
                missing.push_back(p);
        }
    }
    void sparse(const onnx::SparseTensorProto& s, const std::string& where) {
        for (auto d : s.dims())
            if (d < 0)
                throw Error(label + ": " + where + ": sparse tensor '" + s.values().name() + "' has a negative dim " +
                            std::to_string(d));
        tensor(s.values(), where + " values");
        tensor(s.indices(), where + " indices");
    }
    void nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& ns, const std::string& place) {
        for (int i = 0; i < ns.size(); ++i) {
            const onnx::NodeProto& n = ns.Get(i);
            for (const auto& a : n.attribute()) {
                const std::string where = at(place, nodePlace(i, n)) + " attribute '" + a.name() + "'";
                if (a.has_t()) tensor(a.t(), where);
                for (const auto& t : a.tensors()) tensor(t, where);
                if (a.has_sparse_tensor()) sparse(a.sparse_tensor(), where);
                for (const auto& s : a.sparse_tensors()) sparse(s, where);
                if (a.has_g()) graph(a.g(), subgraphPlace(place, i, n, a.name()));
                for (const auto& g : a.graphs()) graph(g, subgraphPlace(place, i, n, a.name()));
            }
        }
    }
    void graph(const onnx::GraphProto& g, const std::string& place) {
        const std::string gp = place.empty() ? std::string("graph") : place;
        for (int i = 0; i < g.initializer_size(); ++i)
            tensor(g.initializer(i), gp + " initializer " + std::to_string(i));
        for (int i = 0; i < g.sparse_initializer_size(); ++i)
            sparse(g.sparse_initializer(i), gp + " sparse initializer " + std::to_string(i));
        nodes(g.node(), place);
    }
};

// Every name and string attribute of a model, in nested graphs and functions: `visit(text,
// isValueName, set)` where `set` replaces the text.
using Setter = std::function<void(const std::string&)>;
template <class V> void walkTensorNames(TP& t, V& visit) {
    visit(t.name(), false, [&](const std::string& s) { t.set_name(s); });
}
template <class V> void walkGraphNames(onnx::GraphProto& g, V& visit);
template <class V> void walkNodeNames(onnx::NodeProto& n, V& visit) {
    visit(n.name(), false, [&](const std::string& s) { n.set_name(s); });
    visit(n.op_type(), false, [&](const std::string& s) { n.set_op_type(s); });
    visit(n.domain(), false, [&](const std::string& s) { n.set_domain(s); });
    for (auto& x : *n.mutable_input()) visit(x, true, [&](const std::string& s) { x = s; });
    for (auto& x : *n.mutable_output()) visit(x, true, [&](const std::string& s) { x = s; });
    for (auto& a : *n.mutable_attribute()) {
        visit(a.name(), false, [&](const std::string& s) { a.set_name(s); });
        visit(a.ref_attr_name(), false, [&](const std::string& s) { a.set_ref_attr_name(s); });
        visit(a.s(), false, [&](const std::string& s) { a.set_s(s); });
        for (auto& x : *a.mutable_strings()) visit(x, false, [&](const std::string& s) { x = s; });
        if (a.has_t()) walkTensorNames(*a.mutable_t(), visit);
        for (auto& t : *a.mutable_tensors()) walkTensorNames(t, visit);
        if (a.has_g()) walkGraphNames(*a.mutable_g(), visit);
        for (auto& g : *a.mutable_graphs()) walkGraphNames(g, visit);
    }
}
template <class V> void walkValueInfos(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vs, V& visit) {
    for (auto& v : vs) visit(v.name(), true, [&](const std::string& s) { v.set_name(s); });
}
template <class V> void walkGraphNames(onnx::GraphProto& g, V& visit) {
    visit(g.name(), false, [&](const std::string& s) { g.set_name(s); });
    walkValueInfos(*g.mutable_input(), visit);
    walkValueInfos(*g.mutable_output(), visit);
    walkValueInfos(*g.mutable_value_info(), visit);
    for (auto& t : *g.mutable_initializer()) visit(t.name(), true, [&](const std::string& s) { t.set_name(s); });
    for (auto& n : *g.mutable_node()) walkNodeNames(n, visit);
}
template <class V> void walkModelNames(onnx::ModelProto& m, V& visit) {
    if (m.has_graph()) walkGraphNames(*m.mutable_graph(), visit);
    for (auto& f : *m.mutable_functions()) {
        visit(f.name(), false, [&](const std::string& s) { f.set_name(s); });
        visit(f.domain(), false, [&](const std::string& s) { f.set_domain(s); });
        for (auto& x : *f.mutable_input()) visit(x, true, [&](const std::string& s) { x = s; });
        for (auto& x : *f.mutable_output()) visit(x, true, [&](const std::string& s) { x = s; });
        for (auto& x : *f.mutable_attribute()) visit(x, false, [&](const std::string& s) { x = s; });
        for (auto& n : *f.mutable_node()) walkNodeNames(n, visit);
    }
}

} // namespace

std::string intsText(const std::vector<std::int64_t>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

std::string nodePlace(int index, const onnx::NodeProto& n) {
    return "node " + std::to_string(index) + " " +
           (n.name().empty() ? std::string("(unnamed)") : "'" + n.name() + "'") + " (" + n.op_type() + ")";
}

std::string subgraphPlace(const std::string& parentPlace, int index, const onnx::NodeProto& n,
                          const std::string& attribute) {
    return at(parentPlace, nodePlace(index, n)) + " attribute '" + attribute + "'";
}

std::string tensorDataProblem(const TP& t) {
    const auto e = elemOf(t.data_type());
    if (!e) {
        if (t.data_type() == TP::UNDEFINED) return "has no element type (data_type UNDEFINED)";
        return "has element type " + std::to_string(t.data_type()) + ", which is not an ONNX type";
    }
    const std::string typeName = TP::DataType_Name(static_cast<TP::DataType>(t.data_type()));
    std::int64_t n = 1;
    for (int i = 0; i < t.dims_size(); ++i) {
        const std::int64_t d = t.dims(i);
        if (d < 0) return "dim " + std::to_string(i) + " of dims " + dimsText(t) + " is negative";
        if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
            return "dims " + dimsText(t) + " hold more than 2^63 elements";
        n *= d;
    }
    if (e->bytes && n > std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(e->bytes))
        return "dims " + dimsText(t) + " of " + typeName + " need more than 2^63 bytes";
    const std::int64_t need = n * static_cast<std::int64_t>(e->bytes);
    const std::string needs = "dims " + dimsText(t) + " of " + typeName + " need ";
    if (t.data_location() == TP::EXTERNAL) {
        if (e->field == Field::String) return "holds STRING data in an external file, which ONNX does not allow";
        bool located = false;
        for (const auto& kv : t.external_data()) {
            if (kv.key() == "location") {
                located = !kv.value().empty();
            } else if (kv.key() == "offset" || kv.key() == "length") {
                const auto v = parseCount(kv.value());
                if (!v) return "external data " + kv.key() + " '" + kv.value() + "' is not a non-negative integer";
                if (kv.key() == "length" && *v != need)
                    return "external data length " + kv.value() + " bytes, " + needs + std::to_string(need);
            }
        }
        if (!located) return "has external data without a location";
        return {};
    }
    if (t.has_raw_data()) {
        if (e->field == Field::String) return "holds STRING data in raw_data, which ONNX does not allow";
        if (static_cast<std::int64_t>(t.raw_data().size()) != need)
            return "raw_data has " + std::to_string(t.raw_data().size()) + " bytes, " + needs + std::to_string(need);
        return {};
    }
    const std::int64_t have = fieldCount(t, e->field);
    if (n > INT_MAX || have != n * e->perElement)
        return std::string(fieldName(e->field)) + " holds " + std::to_string(have) + " values, " + needs +
               std::to_string(n) +
               (e->perElement > 1 ? " x " + std::to_string(e->perElement) + " (real, imaginary)" : std::string());
    return {};
}

std::filesystem::path externalDataPath(const TP& t, const std::filesystem::path& baseDir) {
    std::string location;
    for (const auto& kv : t.external_data())
        if (kv.key() == "location") location = kv.value();
    const std::filesystem::path p = baseDir / location;
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(p, ec);
    return (ec ? p : abs).lexically_normal();
}

std::vector<std::string> checkModelTensors(const onnx::ModelProto& m, const std::string& label,
                                           const std::filesystem::path& baseDir) {
    TensorWalker w{label, baseDir, {}};
    if (m.has_graph()) w.graph(m.graph(), {});
    for (const auto& f : m.functions()) w.nodes(f.node(), "function '" + f.name() + "'");
    return std::move(w.missing);
}

namespace {
void checkGraphAttributes(const onnx::GraphProto& g, const std::string& label, const std::string& place) {
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& n = g.node(i);
        const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
        for (const auto& a : n.attribute()) {
            if (standard) {
                std::vector<std::int64_t> values;
                if (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape")
                    values.assign(a.ints().begin(), a.ints().end());
                else if (a.name() == "blocksize")
                    values.push_back(a.i());
                for (auto v : values)
                    if (v < 1)
                        throw Error(label + ": " + at(place, nodePlace(i, n)) + ": attribute '" + a.name() +
                                    "' has value " + std::to_string(v) + ", it must be at least 1");
            }
            if (a.has_g()) checkGraphAttributes(a.g(), label, subgraphPlace(place, i, n, a.name()));
            for (const auto& sg : a.graphs()) checkGraphAttributes(sg, label, subgraphPlace(place, i, n, a.name()));
        }
    }
}
} // namespace

void checkModelAttributes(const onnx::ModelProto& m, const std::string& label) {
    if (m.has_graph()) checkGraphAttributes(m.graph(), label, {});
}

namespace {
// The places of the nodes of op type `op` in `g` and its nested graphs, in file order.
void nodesOfType(const onnx::GraphProto& g, const std::string& op, const std::string& place,
                 std::vector<std::string>& out) {
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& n = g.node(i);
        if (n.op_type() == op) out.push_back(at(place, nodePlace(i, n)));
        for (const auto& a : n.attribute()) {
            if (a.has_g()) nodesOfType(a.g(), op, subgraphPlace(place, i, n, a.name()), out);
            for (const auto& sg : a.graphs()) nodesOfType(sg, op, subgraphPlace(place, i, n, a.name()), out);
        }
    }
}
} // namespace

std::vector<std::string> libonnxWarnings(const std::string& said, const onnx::ModelProto& m, const std::string& label) {
    static const std::string kExperimental = "Warning: Checker does not support models with experimental ops: ";
    std::vector<std::string> out;
    std::set<std::string> seen; // one warning per op type or line, however often libonnx said it
    std::size_t start = 0;
    while (start < said.size()) {
        std::size_t end = said.find('\n', start);
        if (end == std::string::npos) end = said.size();
        std::string line = said.substr(start, end - start);
        start = end + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line.empty() || !seen.insert(line).second) continue;
        if (line.rfind(kExperimental, 0) == 0) {
            const std::string op = line.substr(kExperimental.size());
            std::vector<std::string> places;
            if (m.has_graph()) nodesOfType(m.graph(), op, {}, places);
            for (const auto& f : m.functions())
                for (int i = 0; i < f.node_size(); ++i)
                    if (f.node(i).op_type() == op)
                        places.push_back("function '" + f.name() + "': " + nodePlace(i, f.node(i)));
            std::string where = places.empty() ? "a node" : places.front();
            if (places.size() > 1)
                where +=
                    " and " + std::to_string(places.size() - 1) + (places.size() == 2 ? " more node" : " more nodes");
            out.push_back(label + ": " + where + ": " + escapeInvalidUtf8(op) +
                          " is one of ONNX's removed experimental ops, which the ONNX checker does not check against "
                          "a schema; imported as it is");
        } else {
            std::string shown;
            for (char c : escapeInvalidUtf8(line)) shown += static_cast<unsigned char>(c) < ' ' ? '?' : c;
            out.push_back(label + ": ONNX checker said: " + shown);
        }
    }
    return out;
}

int escapeInvalidNames(onnx::ModelProto& m, const std::string& label) {
    int invalid = 0;
    auto count = [&](const std::string& s, bool, const Setter&) { invalid += isValidUtf8(s) ? 0 : 1; };
    walkModelNames(m, count);
    if (invalid == 0) return 0;
    std::unordered_set<std::string> values; // the valid value names an escaped one must not equal
    auto collect = [&](const std::string& s, bool isValue, const Setter&) {
        if (isValue && isValidUtf8(s)) values.insert(s);
    };
    walkModelNames(m, collect);
    auto escape = [&](const std::string& s, bool isValue, const Setter& set) {
        if (isValidUtf8(s)) return;
        const std::string e = escapeInvalidUtf8(s);
        if (isValue && values.count(e))
            throw Error(label + ": value name '" + e +
                        "' (bytes that are not UTF-8, escaped) is also the name of another value");
        set(e);
    };
    walkModelNames(m, escape);
    return invalid;
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

} // namespace passlens::onnximport
