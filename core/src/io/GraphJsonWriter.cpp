// Graph JSON writing (GraphJson.h): writeGraphJson and tensorValueJson.
#include "passlens/io/GraphJson.h"

#include "passlens/io/AtomicFile.h"
#include "passlens/io/Encoding.h"
#include "passlens/io/Failure.h"
#include "passlens/io/Npy.h"
#include "passlens/ir/Error.h"

#include <cctype>
#include <cmath>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace passlens {
using json = nlohmann::json;

json tensorValueJson(const TensorData& t) {
    std::function<json(std::size_t, std::int64_t&)> build = [&](std::size_t depth, std::int64_t& k) -> json {
        if (depth == t.shape.size()) {
            const std::int64_t i = k++;
            if (t.dtype == DType::Bool) return json(t.intAt(i) != 0);
            if (isFloat(t.dtype) || isComplex(t.dtype)) {
                const double x = t.at(i);
                if (std::isnan(x)) return json("nan");
                if (std::isinf(x)) return json(x > 0 ? "inf" : "-inf");
                if (t.dtype == DType::Float32) return json(static_cast<double>(static_cast<float>(x)));
                return json(x);
            }
            if (t.dtype == DType::UInt64) return json(static_cast<std::uint64_t>(t.intAt(i)));
            return json(t.intAt(i));
        }
        json a = json::array();
        for (std::int64_t j = 0; j < t.shape[depth]; ++j) a.push_back(build(depth + 1, k));
        return a;
    };
    std::int64_t k = 0;
    return build(0, k);
}

json writeGraphJson(const FunctionGraph& g, const GraphJsonWriteOptions& opt) {
    // Unique names: a variable's own name when unique among all written variables, else v<id>.
    std::unordered_map<const Variable*, std::string> names;
    std::unordered_map<std::string, int> nameCount;
    std::vector<const Variable*> all;
    for (Variable* v : g.inputs()) all.push_back(v);
    for (Variable* v : g.constants()) all.push_back(v);
    for (Apply* n : g.toposort())
        for (Variable* o : n->outputs()) all.push_back(o);
    for (const Variable* v : all)
        if (!v->name().empty()) ++nameCount[v->name()];
    std::unordered_set<std::string> used;
    for (const Variable* v : all) {
        std::string nm = v->name();
        if (nm.empty() || nameCount[nm] > 1 || used.count(nm)) {
            nm = "v" + std::to_string(v->id());
            while (used.count(nm) || nameCount.count(nm)) nm += "_";
        }
        used.insert(nm);
        names[v] = nm;
    }
    json doc = json::object();
    doc["format"] = "passlens.graph";
    doc["version"] = 1;
    doc["name"] = g.name;
    json ins = json::array();
    for (const Variable* v : g.inputs()) {
        json e = {{"name", names[v]}, {"type", v->type().str()}};
        if (!v->tag.empty()) e["tag"] = v->tag;
        if (opt.withIds) e["id"] = v->id();
        ins.push_back(std::move(e));
    }
    doc["inputs"] = ins;
    json cs = json::array();
    for (const Variable* v : g.constants()) {
        MemoryReserve::throwIfSpent();
        json e = {{"name", names[v]}, {"type", v->type().str()}};
        const TensorData& t = *v->constant();
        if (!t.loaded()) {
            e["value"] = {{"missing", t.missing}};
        } else if (isString(t.dtype) || // strings: always their encoded elements (no JSON list, no .npy)
                   (static_cast<std::size_t>(t.numElements()) > opt.inlineLimit && opt.npyDir.empty() && opt.base64)) {
            e["value"] = {{"base64", base64Encode(*t.bytes)}};
        } else if (static_cast<std::size_t>(t.numElements()) > opt.inlineLimit && !opt.npyDir.empty() &&
                   t.dtype != DType::BFloat16) { // NumPy has no bfloat16: such constants stay inline
            std::error_code ec;
            std::filesystem::create_directories(opt.baseDir / opt.npyDir, ec);
            if (ec)
                throw Error((opt.baseDir / opt.npyDir).string() +
                            ": cannot create the folder for .npy constants: " + ec.message());
            std::string file = names[v];
            for (char& ch : file)
                if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
            const std::filesystem::path rel = opt.npyDir / (file + "_" + std::to_string(v->id()) + ".npy");
            writeFileAtomic(opt.baseDir / rel, toNpy(t));
            e["value"] = {{"file", rel.generic_string()}};
        } else {
            e["value"] = tensorValueJson(t);
        }
        if (opt.withIds) e["id"] = v->id();
        cs.push_back(std::move(e));
    }
    doc["constants"] = cs;
    json nodes = json::array();
    for (const Apply* n : g.toposort()) {
        MemoryReserve::throwIfSpent(); // out of memory surfaces here, not in a destructor
        json e = json::object();
        e["op"] = n->op().kind();
        if (!n->op().attrs().empty()) e["attrs"] = n->op().attrs();
        if (!n->name().empty()) e["name"] = n->name();
        if (!n->tag.empty()) e["tag"] = n->tag;
        if (opt.withIds) e["id"] = n->id();
        json in = json::array();
        for (const Variable* v : n->inputs()) in.push_back(names[v]);
        e["inputs"] = in;
        json out = json::array();
        for (const Variable* v : n->outputs()) {
            json o = {{"name", names[v]}, {"type", v->type().str()}};
            if (opt.withIds) o["id"] = v->id();
            out.push_back(o);
        }
        e["outputs"] = out;
        if (!n->op().subgraphs().empty()) {
            json subs = json::object();
            for (const Subgraph& s : n->op().subgraphs()) {
                GraphJsonWriteOptions so = opt;
                if (!so.npyDir.empty()) so.npyDir /= s.attribute + std::to_string(n->id());
                subs[s.attribute] = writeGraphJson(*s.graph, so);
            }
            e["subgraphs"] = subs;
        }
        nodes.push_back(std::move(e));
    }
    doc["nodes"] = nodes;
    json outs = json::array();
    for (const Variable* v : g.outputs()) outs.push_back(names.count(v) ? names[v] : v->name());
    doc["outputs"] = outs;
    return doc;
}

} // namespace passlens
