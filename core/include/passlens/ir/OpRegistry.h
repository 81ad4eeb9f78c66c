#pragma once
/// @file OpRegistry.h
/// Every op kind of OPS.md with its attribute schema, arity, type rule and GPU counterpart.
#include "passlens/ir/Op.h"
#include "passlens/ir/Type.h"

#include <climits>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace passlens {

class Variable;

/// What an attribute holds; checked by Op::get.
enum class AttrKind { Int, Float, Bool, String, IntList, IntOrNull, IntListOrNull, Any };

struct AttrSpec {
    std::string name;
    AttrKind kind = AttrKind::Any;
    bool required = false;
    nlohmann::json defaultValue; ///< used when absent and not required (null: left absent)
};

/// Type rule: output types from the op and its input variables (whose constant data and owners
/// may be read, e.g. Reshape reading a constant or MakeVector shape). Throws passlens::Error
/// with the reason ("incompatible static shapes [2,3] and [4,3] at axis 0").
using TypeRule = std::function<std::vector<Type>(const Op&, std::span<Variable* const>)>;

/// Which inputs of a GPU kind stay on the host.
enum class HostInputs {
    Listed,      ///< the indices in HostParams::listed (none when empty)
    All,         ///< every input (GpuAllocEmpty's shape)
    AfterFirst,  ///< every input after the first (GpuAlloc's shape, GpuSubtensor's indices)
    AfterSecond, ///< every input after the second (GpuIncSubtensor's indices)
};

/// The inputs of a GPU kind that stay on the host: shapes, alpha / beta scalars, indices.
struct HostParams {
    HostParams() = default;
    /// The inputs at these indices (`{1, 4}`: Gemm's alpha and beta).
    HostParams(std::initializer_list<int> indices)
        : listed(indices) {}
    /// A range of inputs (HostInputs::All, AfterFirst, AfterSecond).
    HostParams(HostInputs range)
        : which(range) {}

    HostInputs which = HostInputs::Listed;
    std::set<int> listed; ///< with HostInputs::Listed: the input indices
    /// True when input `i` is one of them.
    bool contains(std::size_t i) const;
};

/// Static description of an op kind.
struct OpKindInfo {
    std::string kind;
    std::vector<AttrSpec> attrs;
    int minInputs = 0;
    int maxInputs = -1;    ///< -1: any number
    TypeRule infer;        ///< empty for Onnx ops: output types come from ONNX shape inference
    bool gpu = false;      ///< a GPU kind: inputs and outputs on a GPU context
    bool transfer = false; ///< GpuFromHost / HostFromGpu / GpuToGpu
    bool allowUnknownAttrs = false;
    std::string gpuCounterpart;  ///< host kind -> GPU kind of its lifter (OPS.md), or ""
    std::string hostCounterpart; ///< GPU kind -> host kind it mirrors, or ""
    /// GPU kinds: inputs that stay on the host (shapes, alpha / beta scalars).
    HostParams gpuHostParams;
    /// Host kinds: inputs that may be on either side (Shape of a GPU value).
    std::set<int> anyLocation;
    /// True when input `i` of a GPU kind is a host parameter (see gpuHostParams).
    bool isGpuHostParam(int i) const;
};

/// Registry of op kinds and the op interning table. Thread-safe.
class OpRegistry {
public:
    static OpRegistry& instance();

    /// The kind's description, or nullptr when unknown (Onnx* kinds are created on demand).
    const OpKindInfo* find(const std::string& kind);
    /// All registered kinds, sorted by name.
    std::vector<std::string> kinds() const;
    /// Registers an extra op kind (tests, plug-ins). Throws passlens::Error if the kind exists.
    void registerKind(OpKindInfo info);
    /// See Op::get.
    const Op& intern(const std::string& kind, Attrs attrs, std::vector<Subgraph> subgraphs);

private:
    OpRegistry();
    void add(OpKindInfo info);
    const Op& internSlow(const std::string& kind, Attrs attrs, std::vector<Subgraph> subgraphs);
    mutable std::mutex m_mutex;
    std::map<std::string, std::unique_ptr<OpKindInfo>> m_kinds;
    std::unordered_map<std::string, std::unique_ptr<Op>> m_ops;
    std::unordered_map<std::string, const Op*> m_byRawKey; ///< attributes as given -> op
};

/// Theano's broadcasting of input shapes (a static dim of 1 broadcasts; unknown dims stay unknown
/// unless another input fixes them). Ranks must be equal: Theano's Elemwise.make_node pads lower
/// ranks with DimShuffle first, which makeNode (MakeNode.h) and the ONNX importer insert. Throws
/// passlens::Error naming the axis and shapes.
std::vector<std::int64_t> broadcastDims(std::span<Variable* const> inputs);

/// Marks an entry of knownIntVector whose value is not known (distinct from a literal -1).
inline constexpr std::int64_t kUnknownValue = INT64_MIN;

/// The constant integer vector a variable is known to hold: a constant's data, or a MakeVector
/// of constant scalars / Shape_i of static dims. std::nullopt when unknown. Entries that are
/// MakeVector elements of unknown value are kUnknownValue.
std::optional<std::vector<std::int64_t>> knownIntVector(const Variable* v);
/// The constant integer scalar a variable holds (constant, or Shape_i of a static dim).
std::optional<std::int64_t> knownIntScalar(const Variable* v);

} // namespace passlens
