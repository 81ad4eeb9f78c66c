// Attribute validation of op kinds: values against the kind's schema (AttrSpec), defaults filled
// in, then the checks of each kind's own attributes (OPS.md).
#include "OpAttributes.h"

#include "passlens/ir/DType.h"
#include "passlens/ir/Error.h"
#include "passlens/ir/ScalarOps.h"

#include <algorithm>
#include <vector>

namespace passlens::opkinds {
namespace {

using json = nlohmann::json;

bool kindMatches(AttrKind k, const json& v) {
    switch (k) {
    case AttrKind::Int: return v.is_number_integer();
    case AttrKind::Float: return v.is_number();
    case AttrKind::Bool: return v.is_boolean();
    case AttrKind::String: return v.is_string();
    case AttrKind::IntList:
        return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); });
    case AttrKind::IntOrNull: return v.is_null() || v.is_number_integer();
    case AttrKind::IntListOrNull:
        return v.is_null() ||
               (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); }));
    case AttrKind::Any: return true;
    }
    return false;
}

const char* kindName(AttrKind k) {
    switch (k) {
    case AttrKind::Int: return "an integer";
    case AttrKind::Float: return "a number";
    case AttrKind::Bool: return "a boolean";
    case AttrKind::String: return "a string";
    case AttrKind::IntList: return "a list of integers";
    case AttrKind::IntOrNull: return "an integer or null";
    case AttrKind::IntListOrNull: return "a list of integers or null";
    case AttrKind::Any: return "anything";
    }
    return "?";
}

} // namespace

void completeAttrs(const std::string& kind, const OpKindInfo& info, Attrs& attrs) {
    if (attrs.is_null()) attrs = json::object();
    if (!attrs.is_object()) throw Error(kind + ": attrs must be an object");
    if (!info.allowUnknownAttrs) {
        for (auto it = attrs.begin(); it != attrs.end(); ++it) {
            auto spec = std::find_if(info.attrs.begin(), info.attrs.end(),
                                     [&](const AttrSpec& s) { return s.name == it.key(); });
            if (spec == info.attrs.end()) throw Error(kind + ": unknown attribute '" + it.key() + "'");
            if (!kindMatches(spec->kind, it.value()))
                throw Error(kind + ": attribute '" + it.key() + "' must be " + kindName(spec->kind) + ", got " +
                            it.value().dump());
        }
        for (const AttrSpec& s : info.attrs) {
            if (attrs.contains(s.name)) continue;
            if (s.required) throw Error(kind + ": missing attribute '" + s.name + "'");
            if (!s.defaultValue.is_null()) attrs[s.name] = s.defaultValue;
        }
    }
    // Kind-specific attribute checks.
    if (kind == "Elemwise" || kind == "GpuElemwise") {
        const std::string s = attrs["scalar"].get<std::string>();
        if (s != "composite" && !findScalarOp(s)) throw Error(kind + ": unknown scalar op '" + s + "'");
        if (s == "composite") { // its expression must parse (compositeExpression parses it again once)
            if (!attrs.contains("expr")) throw Error(kind + ": a composite needs an 'expr' attribute");
            try {
                (void)ScalarExpr::parse(attrs["expr"].get<std::string>());
            } catch (const Error& e) {
                throw Error(kind + ": " + e.what());
            }
        }
        if (s == "cast" && (!attrs.contains("dtype") || !parseDType(attrs["dtype"].get<std::string>())))
            throw Error(kind + ": cast needs a valid 'dtype' attribute");
    }
    if ((kind == "MakeVector" || kind == "AllocEmpty" || kind == "GpuAllocEmpty") &&
        !parseDType(attrs["dtype"].get<std::string>()))
        throw Error(kind + ": attribute 'dtype' is not a dtype: " + attrs["dtype"].dump());
    if (kind == "CAReduce" || kind == "GpuCAReduceCuda") {
        const std::string s = attrs["scalar"].get<std::string>();
        if (s != "add" && s != "mul" && s != "maximum" && s != "minimum")
            throw Error(kind + ": scalar must be add, mul, maximum or minimum, got '" + s + "'");
        if (!attrs.contains("axis")) attrs["axis"] = nullptr;
    }
    if (kind == "MaxAndArgmax" || kind == "GpuMaxAndArgmax") {
        // as check_and_normalize_axes (tensor/basic.py): each axis once; null is every axis
        if (!attrs.contains("axis")) attrs["axis"] = nullptr;
        const json& ax = attrs["axis"];
        for (std::size_t i = 0; !ax.is_null() && i < ax.size(); ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (ax[i] == ax[j]) throw Error(kind + ": axis " + ax[i].dump() + " is named twice");
    }
    if (kind == "CumOp" || kind == "GpuCumOp") {
        if (!attrs.contains("axis")) attrs["axis"] = nullptr;
    }
    if (kind == "TopKOp" || kind == "GpuTopKOp") { // tensor/sort.py TopKOp.__init__
        const auto idx = parseDType(attrs["idx_dtype"].get<std::string>());
        if (!idx || !isInteger(*idx))
            throw Error(kind + ": idx_dtype must be an integer dtype, got " + attrs["idx_dtype"].dump());
        if (!attrs["return_values"].get<bool>() && !attrs["return_indices"].get<bool>())
            throw Error(kind + ": neither return_values nor return_indices is true");
    }
    if (kind == "DimShuffle" || kind == "GpuDimShuffle") {
        if (!attrs["order"].is_array()) throw Error(kind + ": attribute 'order' must be a list");
        for (const auto& e : attrs["order"])
            if (!(e.is_number_integer() || (e.is_string() && e.get<std::string>() == "x")))
                throw Error(kind + ": 'order' entries must be axes or \"x\", got " + e.dump());
    }
    if (kind.find("Subtensor") != std::string::npos && attrs.contains("idx")) {
        if (!attrs["idx"].is_array()) throw Error(kind + ": attribute 'idx' must be a list");
        auto symbolic = [](const json& v) { return v.is_string() && v.get<std::string>() == "?"; };
        for (const auto& e : attrs["idx"]) {
            if (e.is_number_integer() || symbolic(e)) continue;
            if (!e.is_object()) throw Error(kind + ": 'idx' entries are integers, \"?\" or {start, stop, step}");
            for (auto it = e.begin(); it != e.end(); ++it)
                if ((it.key() != "start" && it.key() != "stop" && it.key() != "step") ||
                    !(it.value().is_null() || it.value().is_number_integer() || symbolic(it.value())))
                    throw Error(kind + ": bad slice field '" + it.key() + "'");
        }
    }
    if (kind == "Pool" || kind == "GpuPool") {
        const auto n = attrs["ws"].size();
        if (!attrs.contains("stride") || attrs["stride"].is_null()) attrs["stride"] = attrs["ws"];
        if (!attrs.contains("pad") || attrs["pad"].is_null()) attrs["pad"] = json(std::vector<int>(n, 0));
        if (attrs["stride"].size() != n || !attrs["pad"].is_array() || attrs["pad"].size() != n)
            throw Error(kind + ": ws, stride and pad must have the same length");
        for (const auto& s : attrs["stride"])
            if (!s.is_number_integer() || s.get<std::int64_t>() < 1)
                throw Error(kind + ": strides must be positive integers");
        const std::string m = attrs["mode"].get<std::string>();
        if (m != "max" && m != "average_inc_pad" && m != "average_exc_pad" && m != "sum")
            throw Error(kind + ": mode must be max, average_inc_pad or average_exc_pad, got '" + m + "'");
    }
    if (kind == "AbstractConv2d" || kind == "GpuCorrMM") {
        const json& bm = attrs["border_mode"];
        if (!(bm.is_string() || (bm.is_array() && bm.size() == 2)))
            throw Error(kind + ": border_mode must be valid, full, half or a list of 2 pads");
        if (attrs["subsample"].size() != 2 || attrs["filter_dilation"].size() != 2)
            throw Error(kind + ": subsample and filter_dilation need 2 entries");
        for (const auto& s : attrs["subsample"])
            if (s.get<std::int64_t>() < 1) throw Error(kind + ": subsample entries must be >= 1");
        if (attrs["num_groups"].get<std::int64_t>() < 1) throw Error(kind + ": num_groups must be >= 1");
    }
    if ((kind == "Reshape" || kind == "GpuReshape") && attrs["ndim"].get<std::int64_t>() < 0)
        throw Error(kind + ": ndim must be >= 0");
    if ((kind == "Split" || kind == "GpuSplit") && attrs["n_splits"].get<std::int64_t>() < 1)
        throw Error(kind + ": n_splits must be >= 1");
}

} // namespace passlens::opkinds
