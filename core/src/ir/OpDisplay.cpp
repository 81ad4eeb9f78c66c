// Theano-style display strings of ops (`Elemwise{add}`, `GpuFromHost<None>`, `DimShuffle{1,0}`,
// `Subtensor{int64:int64:}`), as Theano's Op.__str__ prints them.
#include "OpDisplay.h"

#include "passlens/ir/OpRegistry.h"
#include "passlens/ir/ScalarOps.h"

namespace passlens::opkinds {
namespace {

using json = nlohmann::json;

std::string attrText(const json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
    if (v.is_null()) return "None";
    return v.dump();
}

std::string sliceText(const json& e) {
    if (e.is_number_integer()) return std::to_string(e.get<std::int64_t>());
    if (e.is_string()) return "int64";
    auto part = [&](const char* k) {
        if (!e.contains(k) || e[k].is_null()) return std::string();
        return e[k].is_string() ? std::string("int64") : std::to_string(e[k].get<std::int64_t>());
    };
    std::string s = part("start") + ":" + part("stop");
    if (e.contains("step") && !e["step"].is_null()) s += ":" + part("step");
    return s;
}

} // namespace

std::string displayString(const Op& op) {
    const std::string& k = op.kind();
    const json& a = op.attrs();
    auto ctx = [&]() {
        return op.has("context") && !op.str("context").empty() ? op.str("context") : std::string("None");
    };
    if (k == "Elemwise" || k == "GpuElemwise") {
        const std::string s = op.str("scalar");
        const ScalarOpInfo* info = findScalarOp(s);
        std::string inner = s;
        if (s == "cast") {
            inner = "Cast{" + op.str("dtype") + "}";
        } else if (s == "composite") {
            inner = "Composite{" + op.str("expr") + "}";
        } else if (info && info->displayParams) {
            // absent parameters print as None (the attribute, not its default)
            inner += "{";
            for (int i = 0; i < info->nparams; ++i)
                inner +=
                    (i ? "," : "") + attrText(a.value(info->params[static_cast<std::size_t>(i)].attr, json(nullptr)));
            inner += "}";
        }
        return k + "{" + inner + "}" + (k == "GpuElemwise" ? "<gpuarray>" : "");
    }
    if (k == "DimShuffle" || k == "GpuDimShuffle") {
        std::string s;
        for (const auto& e : a.at("order")) s += (s.empty() ? "" : ",") + attrText(e);
        return k + "{" + s + "}";
    }
    if (k == "GpuFromHost") return "GpuFromHost<" + ctx() + ">";
    if (k == "GpuToGpu") return "GpuToGpu<" + ctx() + ">";
    if (k == "HostFromGpu") return "HostFromGpu(gpuarray)";
    if (k == "GpuAlloc") return "GpuAlloc<" + ctx() + ">{memset_0=" + attrText(a.value("memset_0", json(false))) + "}";
    if (k == "GpuAllocEmpty") return "GpuAllocEmpty<" + ctx() + ">{" + op.str("dtype") + "}";
    if (k == "Subtensor" || k == "GpuSubtensor" || k == "IncSubtensor" || k == "GpuIncSubtensor") {
        std::string s;
        for (const auto& e : a.at("idx")) s += (s.empty() ? "" : ", ") + sliceText(e);
        std::string pre = k;
        if ((k == "IncSubtensor" || k == "GpuIncSubtensor") && op.boolAttr("set_instead_of_inc"))
            pre = k.substr(0, k.size() - 12) + "SetSubtensor";
        return pre + "{" + s + "}";
    }
    if (k == "Shape_i") return "Shape_i{" + std::to_string(op.intAttr("i")) + "}";
    if (k == "Reshape" || k == "GpuReshape") return k + "{" + std::to_string(op.intAttr("ndim")) + "}";
    if (k == "Flatten") return "Flatten{" + std::to_string(op.intAttr("outdim")) + "}";
    if (k == "CAReduce" || k == "GpuCAReduceCuda") {
        std::string s = op.str("scalar");
        if (k == "GpuCAReduceCuda" && op.has("pre_scalar_op") && !a["pre_scalar_op"].is_null())
            s = "pre=" + op.str("pre_scalar_op") + ",red=" + s;
        return k + "{" + s + "}{axis=" + attrText(a.at("axis")) + "}";
    }
    if (k == "TopKOp" || k == "GpuTopKOp") // TopKOp.__str__
        return k + "{axis=" + std::to_string(op.intAttr("axis")) + ", sorted=" + attrText(a.at("sorted")) + "}";
    if (k == "MaxAndArgmax" || k == "GpuMaxAndArgmax") { // Theano's props repr: axis=(1,), axis=(0, 2)
        const json& ax = a.at("axis");
        if (ax.is_null()) return k + "{axis=None}";
        std::string s;
        for (const auto& e : ax) s += (s.empty() ? "" : ", ") + e.dump();
        return k + "{axis=(" + s + (ax.size() == 1 ? ",)}" : ")}");
    }
    if (op.isOnnx() || a.empty()) return k;
    std::string s;
    for (auto it = a.begin(); it != a.end(); ++it) s += (s.empty() ? "" : ", ") + it.key() + "=" + attrText(it.value());
    return k + "{" + s + "}";
}

} // namespace passlens::opkinds
