#include "passlens/gpu/Capabilities.h"

#include "passlens/ir/Error.h"

namespace passlens {

GpuCapabilities GpuCapabilities::defaults() {
    GpuCapabilities c;
    const std::set<DType> all = {DType::Bool,   DType::Int8,    DType::Int16,   DType::Int32,
                                 DType::Int64,  DType::UInt8,   DType::UInt16,  DType::UInt32,
                                 DType::UInt64, DType::Float16, DType::Float32, DType::Float64};
    const std::set<DType> floats = {DType::Float16, DType::Float32, DType::Float64};
    for (const char* k :
         {"GpuElemwise", "GpuDimShuffle", "GpuReshape", "GpuAlloc", "GpuAllocEmpty", "GpuSubtensor",
          "GpuAdvancedSubtensor1", "GpuIncSubtensor", "GpuJoin", "GpuSplit", "GpuCAReduceCuda", "GpuContiguous"})
        c.m_table[k] = all;
    for (const char* k : {"GpuDot22", "GpuGemm", "GpuGemv", "GpuGemmBatch", "GpuCorrMM", "GpuPool", "GpuSoftmax",
                          "GpuLogSoftmax", "GpuDnnBatchNormInference"})
        c.m_table[k] = floats;
    c.m_table["GpuCumOp"] = {DType::Float32};
    // Test_TopK's _all_dtypes (tensor/tests/test_sort.py): integers and floats, no bool
    c.m_table["GpuTopKOp"] = all;
    c.m_table["GpuTopKOp"].erase(DType::Bool);
    c.m_table["GpuMaxAndArgmax"] = all; // float16 through float32, as local_gpu_maxandargmax
    return c;
}

std::optional<std::string> GpuCapabilities::check(const std::string& gpuKind, DType dt) const {
    if (isComplex(dt)) return std::string("complex input");
    if (m_disabled.count(dt)) return std::string(dtypeName(dt)) + " disabled in the capability table";
    auto it = m_table.find(gpuKind);
    if (it == m_table.end()) return gpuKind + " is not in the capability table";
    if (!it->second.count(dt)) {
        std::string list;
        for (DType d : it->second) list += (list.empty() ? "" : ", ") + std::string(dtypeName(d));
        return gpuKind + " does not support " + std::string(dtypeName(dt)) + " (capability table: " + list + ")";
    }
    return std::nullopt;
}

void GpuCapabilities::apply(const nlohmann::json& doc) {
    if (doc.contains("disable_dtypes")) {
        if (!doc["disable_dtypes"].is_array()) throw Error("disable_dtypes: expected a list of dtypes");
        for (const auto& d : doc["disable_dtypes"]) {
            auto dt = d.is_string() ? parseDType(d.get<std::string>()) : std::nullopt;
            if (!dt) throw Error("disable_dtypes: '" + d.dump() + "' is not a dtype");
            m_disabled.insert(*dt);
        }
    }
    if (doc.contains("capabilities")) {
        if (!doc["capabilities"].is_object()) throw Error("capabilities: expected an object {GPU kind: [dtypes]}");
        for (auto it = doc["capabilities"].begin(); it != doc["capabilities"].end(); ++it) {
            std::set<DType> s;
            if (!it.value().is_array()) throw Error("capabilities." + it.key() + ": expected a list of dtypes");
            for (const auto& d : it.value()) {
                auto dt = d.is_string() ? parseDType(d.get<std::string>()) : std::nullopt;
                if (!dt) throw Error("capabilities." + it.key() + ": '" + d.dump() + "' is not a dtype");
                s.insert(*dt);
            }
            m_table[it.key()] = s;
        }
    }
}

nlohmann::json GpuCapabilities::toJson() const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, s] : m_table) {
        nlohmann::json a = nlohmann::json::array();
        for (DType d : s)
            if (!m_disabled.count(d)) a.push_back(std::string(dtypeName(d)));
        j[k] = a;
    }
    return j;
}

} // namespace passlens
