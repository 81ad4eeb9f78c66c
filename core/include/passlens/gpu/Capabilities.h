#pragma once
/// @file Capabilities.h
/// Which GPU op kind supports which dtype in PassLens's GPU backend. Decides lifting and gives the
/// "not lifted because ..." reason. Editable from a pipeline file (FORMAT.md §3, `capabilities`
/// and `disable_dtypes`).
#include "passlens/ir/DType.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>

namespace passlens {

class GpuCapabilities {
public:
    /// The backend's table: every GPU kind takes bool, integers and floats (no complex); BLAS,
    /// convolution, pooling, softmax and batch norm take floats only; GpuCumOp float32 only
    /// (as Theano's GPU CumOp); GpuTopKOp integers and floats (as Theano's GPU TopK, no bool).
    static GpuCapabilities defaults();

    /// std::nullopt when `gpuKind` supports `dt`; otherwise the reason, e.g.
    /// "float64 disabled in the capability table" or "GpuCumOp supports float32 only".
    std::optional<std::string> check(const std::string& gpuKind, DType dt) const;

    void disable(DType dt) { m_disabled.insert(dt); }
    void set(const std::string& gpuKind, std::set<DType> dtypes) { m_table[gpuKind] = std::move(dtypes); }
    /// Applies `{"capabilities": {"GpuCumOp": ["float32"]}, "disable_dtypes": ["float64"]}`.
    /// Throws passlens::Error naming the bad entry.
    void apply(const nlohmann::json& pipelineDoc);
    nlohmann::json toJson() const;

private:
    std::map<std::string, std::set<DType>> m_table;
    std::set<DType> m_disabled;
};

} // namespace passlens
