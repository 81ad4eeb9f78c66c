// The registry of op kinds (OPS.md): the table of kinds with their attribute schemas, arity, type
// rules (OpTypeRules.cpp) and GPU counterparts, and the interning of ops (attributes validated by
// OpAttributes.cpp, display strings from OpDisplay.cpp).
#include "passlens/ir/OpRegistry.h"

#include "OpAttributes.h"
#include "OpDisplay.h"
#include "OpTypeRules.h"

#include "passlens/ir/Error.h"

#include <set>

namespace passlens {
namespace {

using json = nlohmann::json;

std::vector<AttrSpec> elemwiseAttrs() {
    return {{"scalar", AttrKind::String, true, nullptr}, {"dtype", AttrKind::String, false, nullptr},
            {"min", AttrKind::Float, false, nullptr},    {"max", AttrKind::Float, false, nullptr},
            {"alpha", AttrKind::Float, false, nullptr},  {"beta", AttrKind::Float, false, nullptr},
            {"expr", AttrKind::String, false, nullptr}};
}

} // namespace

bool HostParams::contains(std::size_t i) const {
    switch (which) {
    case HostInputs::Listed: return listed.count(static_cast<int>(i)) != 0;
    case HostInputs::All: return true;
    case HostInputs::AfterFirst: return i >= 1;
    case HostInputs::AfterSecond: return i >= 2;
    }
    return false;
}

bool OpKindInfo::isGpuHostParam(int i) const {
    return gpu && !transfer && gpuHostParams.contains(static_cast<std::size_t>(i));
}

// ---------------------------------------------------------------- Op
std::string Op::str(const char* attr) const {
    auto it = m_attrs.find(attr);
    return it != m_attrs.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::int64_t Op::intAttr(const char* attr, std::int64_t dflt) const {
    auto it = m_attrs.find(attr);
    return it != m_attrs.end() && it->is_number() ? it->get<std::int64_t>() : dflt;
}
double Op::floatAttr(const char* attr, double dflt) const {
    auto it = m_attrs.find(attr);
    return it != m_attrs.end() && it->is_number() ? it->get<double>() : dflt;
}
bool Op::boolAttr(const char* attr, bool dflt) const {
    auto it = m_attrs.find(attr);
    return it != m_attrs.end() && it->is_boolean() ? it->get<bool>() : dflt;
}
bool Op::isGpu() const { return m_info->gpu; }
bool Op::isTransfer() const { return m_info->transfer; }
bool Op::isOnnx() const { return m_kind.starts_with("Onnx"); }
bool Op::isRandomKind(const std::string& kind) {
    return kind.starts_with("OnnxRandom") || kind == "OnnxBernoulli" || kind == "OnnxMultinomial" ||
           kind == "OnnxDropout";
}

const Op& Op::get(const std::string& kind, Attrs attrs, std::vector<Subgraph> subgraphs) {
    return OpRegistry::instance().intern(kind, std::move(attrs), std::move(subgraphs));
}

// ---------------------------------------------------------------- registry
OpRegistry& OpRegistry::instance() {
    static OpRegistry r;
    return r;
}

void OpRegistry::add(OpKindInfo info) {
    std::string k = info.kind;
    m_kinds[k] = std::make_unique<OpKindInfo>(std::move(info));
}

OpRegistry::OpRegistry() {
    using namespace opkinds;
    using K = AttrKind;
    // A host kind and its GPU counterpart (gpu empty: host only), sharing attributes, arity and
    // shape rule; the GPU kind adds gpuExtraAttrs.
    struct Def {
        std::string host, gpu;
        std::vector<AttrSpec> attrs;
        int minIn, maxIn;
        TypeRule rule;
        HostParams gpuHostParams;
        std::set<int> hostAnyLocation;
        std::vector<AttrSpec> gpuExtraAttrs;
    };
    const std::vector<AttrSpec> convAttrs = {{"border_mode", K::Any, false, "valid"},
                                             {"subsample", K::IntList, false, json::array({1, 1})},
                                             {"filter_dilation", K::IntList, false, json::array({1, 1})},
                                             {"num_groups", K::Int, false, 1}};
    const std::vector<Def> defs = {
        {"Elemwise", "GpuElemwise", elemwiseAttrs(), 1, -1, elemwiseRule, {}, {}, {}},
        {"DimShuffle", "GpuDimShuffle", {{"order", K::Any, true, nullptr}}, 1, 1, dimShuffleRule, {}, {}, {}},
        {"Reshape", "GpuReshape", {{"ndim", K::Int, true, nullptr}}, 2, 2, reshapeRule, {1}, {}, {}},
        {"Flatten", "", {{"outdim", K::Int, false, 1}}, 1, 1, flattenRule, {}, {}, {}},
        {"Shape", "", {}, 1, 1, shapeRule, {}, {0}, {}},
        {"Shape_i", "", {{"i", K::Int, true, nullptr}}, 1, 1, shapeIRule, {}, {0}, {}},
        {"MakeVector", "", {{"dtype", K::String, false, "int64"}}, 0, -1, makeVectorRule, {}, {}, {}},
        {"Alloc",
         "GpuAlloc",
         {},
         1,
         -1,
         allocRule,
         HostInputs::AfterFirst,
         {},
         {{"memset_0", K::Bool, false, false}, {"context", K::String, false, ""}}},
        {"AllocEmpty",
         "GpuAllocEmpty",
         {{"dtype", K::String, false, "float32"}},
         0,
         -1,
         allocEmptyRule,
         HostInputs::All,
         {},
         {{"context", K::String, false, ""}}},
        {"Subtensor",
         "GpuSubtensor",
         {{"idx", K::Any, true, nullptr}},
         1,
         -1,
         subtensorRule,
         HostInputs::AfterFirst,
         {},
         {}},
        {"AdvancedSubtensor1", "GpuAdvancedSubtensor1", {}, 2, 2, advSub1Rule, {1}, {}, {}},
        {"IncSubtensor",
         "GpuIncSubtensor",
         {{"idx", K::Any, true, nullptr}, {"set_instead_of_inc", K::Bool, false, false}},
         2,
         -1,
         incSubtensorRule,
         HostInputs::AfterSecond,
         {},
         {}},
        {"Join", "GpuJoin", {{"axis", K::Int, false, 0}}, 1, -1, joinRule, {}, {}, {}},
        {"Split",
         "GpuSplit",
         {{"axis", K::Int, false, 0}, {"n_splits", K::Int, true, nullptr}},
         2,
         2,
         splitRule,
         {1},
         {},
         {}},
        // GpuCAReduceCuda may fold an elemwise in as pre_scalar_op; the host kind has no such attribute
        {"CAReduce",
         "GpuCAReduceCuda",
         {{"scalar", K::String, true, nullptr}, {"axis", K::IntListOrNull, false, nullptr}},
         1,
         1,
         careduceRule,
         {},
         {},
         {{"pre_scalar_op", K::Any, false, nullptr}}},
        {"Dot", "", {}, 2, 2, dotRule, {}, {}, {}},
        {"Dot22", "GpuDot22", {}, 2, 2, dot22Rule, {}, {}, {}},
        {"Gemm", "GpuGemm", {}, 5, 5, gemmRule, {1, 4}, {}, {}},
        {"Gemv", "GpuGemv", {}, 5, 5, gemvRule, {1, 4}, {}, {}},
        {"BatchedDot", "GpuGemmBatch", {}, 2, 2, batchedDotRule, {}, {}, {}},
        {"Softmax", "GpuSoftmax", {{"axis", K::Int, false, -1}}, 1, 1, softmaxRule, {}, {}, {}},
        {"LogSoftmax", "GpuLogSoftmax", {{"axis", K::Int, false, -1}}, 1, 1, softmaxRule, {}, {}, {}},
        {"AbstractConv2d", "GpuCorrMM", convAttrs, 2, 2, convRule, {}, {}, {}},
        {"Pool",
         "GpuPool",
         {{"mode", K::String, false, "max"},
          {"ws", K::IntList, true, nullptr},
          {"stride", K::IntList, false, nullptr},
          {"pad", K::Any, false, nullptr},
          {"ignore_border", K::Bool, false, true}},
         1,
         1,
         poolRule,
         {},
         {},
         {}},
        {"BatchNormInference",
         "GpuDnnBatchNormInference",
         {{"epsilon", K::Float, false, 1e-5}},
         5,
         5,
         sameAsInput0,
         {},
         {},
         {}},
        {"CpuContiguous", "GpuContiguous", {}, 1, 1, sameAsInput0, {}, {}, {}},
        {"CumOp",
         "GpuCumOp",
         {{"axis", K::IntOrNull, false, nullptr}, {"mode", K::String, false, "add"}},
         1,
         1,
         cumRule,
         {},
         {},
         {}},
        // two outputs: the max and its int64 index (theano/tensor/basic.py, gpuarray/reduction.py)
        {"MaxAndArgmax",
         "GpuMaxAndArgmax",
         {{"axis", K::IntListOrNull, false, nullptr}},
         1,
         1,
         maxAndArgmaxRule,
         {},
         {},
         {}},
        {"Assert", "", {{"msg", K::String, false, "Assertion failed"}}, 1, -1, assertRule, {}, {0}, {}},
        // tensor/sort.py TopKOp and gpuarray/sort.py GpuTopKOp: k (input 1) stays on the host
        {"TopKOp",
         "GpuTopKOp",
         {{"axis", K::Int, false, -1},
          {"sorted", K::Bool, false, true},
          {"idx_dtype", K::String, false, "int64"},
          {"return_values", K::Bool, false, true},
          {"return_indices", K::Bool, false, true}},
         2,
         2,
         topKRule,
         {1},
         {},
         {}},
    };
    for (const Def& d : defs) {
        OpKindInfo h;
        h.kind = d.host;
        h.attrs = d.attrs;
        h.minInputs = d.minIn;
        h.maxInputs = d.maxIn;
        h.infer = hostRule(d.rule, d.hostAnyLocation);
        h.gpuCounterpart = d.gpu;
        h.anyLocation = d.hostAnyLocation;
        add(h);
        if (d.gpu.empty()) continue;
        OpKindInfo g;
        g.kind = d.gpu;
        g.attrs = d.attrs;
        g.attrs.insert(g.attrs.end(), d.gpuExtraAttrs.begin(), d.gpuExtraAttrs.end());
        g.minInputs = d.minIn;
        g.maxInputs = d.maxIn;
        g.infer = gpuRule(d.rule, d.gpuHostParams);
        g.gpuHostParams = d.gpuHostParams;
        g.gpu = true;
        g.hostCounterpart = d.host;
        add(g);
    }
    // Transfers (gpuarray/basic_ops.py).
    add({"HostFromGpu", {}, 1, 1, hostFromGpuRule, false, true, false, "", "", {}, {}});
    add({"GpuFromHost", {{"context", K::String, false, ""}}, 1, 1, gpuFromHostRule, true, true, false, "", "", {}, {}});
    add({"GpuToGpu", {{"context", K::String, false, ""}}, 1, 1, gpuToGpuRule, true, true, false, "", "", {}, {}});
}

void OpRegistry::registerKind(OpKindInfo info) {
    std::lock_guard lock(m_mutex);
    if (m_kinds.count(info.kind)) throw Error("op kind '" + info.kind + "' is already registered");
    std::string k = info.kind;
    m_kinds[k] = std::make_unique<OpKindInfo>(std::move(info));
}

const OpKindInfo* OpRegistry::find(const std::string& kind) {
    std::lock_guard lock(m_mutex);
    auto it = m_kinds.find(kind);
    if (it != m_kinds.end()) return it->second.get();
    if (kind.size() > 4 && kind.starts_with("Onnx")) {
        OpKindInfo info;
        info.kind = kind;
        info.allowUnknownAttrs = true;
        auto [ins, _] = m_kinds.emplace(kind, std::make_unique<OpKindInfo>(std::move(info)));
        return ins->second.get();
    }
    return nullptr;
}

std::vector<std::string> OpRegistry::kinds() const {
    std::lock_guard lock(m_mutex);
    std::vector<std::string> out;
    for (const auto& [k, info] : m_kinds)
        if (!k.starts_with("Onnx")) out.push_back(k);
    return out;
}

const Op& OpRegistry::intern(const std::string& kind, Attrs attrs, std::vector<Subgraph> subgraphs) {
    // Fast path: the same (kind, attributes as given) was interned before.
    std::string rawKey;
    if (subgraphs.empty()) {
        rawKey = kind + '\x1e' + attrs.dump();
        std::lock_guard lock(m_mutex);
        auto it = m_byRawKey.find(rawKey);
        if (it != m_byRawKey.end()) return *it->second;
    }
    const Op& op = internSlow(kind, std::move(attrs), std::move(subgraphs));
    if (!rawKey.empty()) {
        std::lock_guard lock(m_mutex);
        m_byRawKey.emplace(std::move(rawKey), &op);
    }
    return op;
}

const Op& OpRegistry::internSlow(const std::string& kind, Attrs attrs, std::vector<Subgraph> subgraphs) {
    const OpKindInfo* info = find(kind);
    if (!info) throw Error("unknown op kind '" + kind + "'");
    opkinds::completeAttrs(kind, *info, attrs);

    std::string key = kind + '\x1f' + attrs.dump();
    for (const Subgraph& s : subgraphs)
        key += '\x1f' + s.attribute + '@' + std::to_string(reinterpret_cast<std::uintptr_t>(s.graph.get()));
    std::lock_guard lock(m_mutex);
    auto it = m_ops.find(key);
    if (it != m_ops.end()) return *it->second;
    auto op = std::unique_ptr<Op>(new Op());
    op->m_kind = kind;
    op->m_attrs = std::move(attrs);
    op->m_subgraphs = std::move(subgraphs);
    op->m_info = info;
    op->m_key = key;
    op->m_str = opkinds::displayString(*op);
    auto [ins, _] = m_ops.emplace(key, std::move(op));
    return *ins->second;
}

} // namespace passlens
