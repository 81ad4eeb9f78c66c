// CPU kernels of ONNX's operators on string tensors: StringNormalizer (ONNX Operators.md,
// opset 10). Cast and CastLike convert strings through convertElements (Tensor.cpp).
#include "OnnxCommon.h"

#include <passlens/io/Encoding.h>

#include <locale>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace passlens::cpu {

namespace {

using namespace onnx;

// A node's case rules: the locale of its `locale` attribute, built once per node.
struct CaseState : KernelState {
    std::string name;
    std::locale locale;
};

// ONNX's `locale` attribute (default "en_US") with UTF-8 text, else that name as given, else
// C.UTF-8 (every code point's case mapping), else the classic "C" locale (ASCII only).
std::locale caseLocale(const std::string& name) {
    for (const std::string& n : {name + ".UTF-8", name + ".utf8", name, std::string("C.UTF-8")}) {
        try {
            return std::locale(n);
        } catch (const std::runtime_error&) {}
    }
    return std::locale::classic();
}

// `s` upper- or lower-cased code point by code point under `loc`; bytes that are not
// well-formed UTF-8 are kept as they are.
std::string changeCase(const std::string& s, bool upper, const std::locale& loc) {
    const auto& ct = std::use_facet<std::ctype<wchar_t>>(loc);
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto [cp, n] = utf8CodePointAt(s, i);
        if (n == 0) {
            out += s[i++];
            continue;
        }
        const auto w = static_cast<wchar_t>(cp);
        const wchar_t m = upper ? ct.toupper(w) : ct.tolower(w);
        appendUtf8(out, m >= 0 && static_cast<char32_t>(m) <= 0x10ffff ? static_cast<char32_t>(m) : cp);
        i += n;
    }
    return out;
}

// StringNormalizer: X of shape [C] or [1, C]; drops the `stopwords` (compared in lower case
// unless is_case_sensitive), then applies case_change_action (LOWER, UPPER or NONE). An output
// that would be empty is [1] / [1, 1] holding "" (the spec's rule).
void stringNormalizer(KernelCall& c) {
    const Tensor& x = needIn(c, 0);
    if (x.dtype() != DType::String) c.fail("input 0 must be a string tensor, got " + x.typeStr());
    const bool twoDim = x.ndim() == 2;
    if (!(x.ndim() == 1 || (twoDim && x.dim(0) == 1)))
        c.fail("input 0 must have shape [C] or [1, C], got " + shapeStr(x.shape()));
    const std::string action = c.op().has("case_change_action") ? c.op().str("case_change_action") : "NONE";
    if (action != "NONE" && action != "LOWER" && action != "UPPER")
        c.fail("case_change_action must be LOWER, UPPER or NONE, got '" + action + "'");
    const bool caseSensitive = c.op().intAttr("is_case_sensitive", 0) != 0;
    const std::string localeName = c.op().has("locale") ? c.op().str("locale") : "en_US";
    auto* st = dynamic_cast<CaseState*>(c.state.get());
    if (!st || st->name != localeName) {
        auto s = std::make_unique<CaseState>();
        s->name = localeName;
        s->locale = caseLocale(localeName);
        st = s.get();
        c.state = std::move(s);
    }
    const std::locale& loc = st->locale;
    std::unordered_set<std::string> stopwords;
    const auto& attrs = c.op().attrs();
    if (attrs.contains("stopwords") && attrs["stopwords"].is_array())
        for (const auto& w : attrs["stopwords"]) {
            const std::string word = w.get<std::string>();
            stopwords.insert(caseSensitive ? word : changeCase(word, false, loc));
        }
    std::vector<std::string> kept;
    const std::string* xs = x.numel() ? x.data<std::string>() : nullptr;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
        if (!stopwords.empty() && stopwords.count(caseSensitive ? xs[i] : changeCase(xs[i], false, loc))) continue;
        kept.push_back(action == "NONE" ? xs[i] : changeCase(xs[i], action == "UPPER", loc));
    }
    if (kept.empty()) kept.emplace_back();
    const auto n = static_cast<std::int64_t>(kept.size());
    c.outputs[0] = Tensor::fromStrings(twoDim ? Shape{1, n} : Shape{n}, std::move(kept));
}

} // namespace

void registerOnnxStringKernels(KernelRegistry& r) { r.add("OnnxStringNormalizer", Backend::Cpu, stringNormalizer); }

} // namespace passlens::cpu

namespace passlens {

bool takesStringTensors(const std::string& kind) {
    static const std::set<std::string> kinds = {"OnnxCast",
                                                "OnnxCastLike",
                                                "OnnxStringNormalizer",
                                                "OnnxIdentity",
                                                "OnnxIf",
                                                "OnnxLoop",
                                                "OnnxShape",
                                                "OnnxSize",
                                                "OnnxOptional",
                                                "OnnxOptionalGetElement",
                                                "OnnxSequenceConstruct",
                                                "OnnxSequenceAt",
                                                "OnnxSequenceInsert",
                                                "OnnxSequenceErase",
                                                "OnnxSequenceLength",
                                                "OnnxSequenceMap"};
    return kinds.count(kind) > 0;
}

} // namespace passlens
