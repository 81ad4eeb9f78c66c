// The scalar-op table (see ScalarOps.h).
#include "passlens/ir/ScalarOps.h"

#include "passlens/ir/Error.h"
#include "passlens/ir/Op.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <functional>
#include <numeric>

namespace passlens {

namespace {

using S = ScalarOp;

using F16 = Float16Rule;

// A row without parameters.
constexpr ScalarOpInfo row(S op, std::string_view name, int arity, bool floatResult = false,
                           F16 float16 = F16::Refused) {
    ScalarOpInfo r;
    r.op = op;
    r.name = name;
    r.arity = arity;
    r.floatResult = floatResult;
    r.float16 = float16;
    return r;
}

// A unary row with parameters.
constexpr ScalarOpInfo withParams(S op, std::string_view name, bool floatResult, ScalarParam p0,
                                  std::optional<ScalarParam> p1, bool displayParams, F16 float16 = F16::Refused) {
    ScalarOpInfo r = row(op, name, 1, floatResult, float16);
    r.nparams = p1 ? 2 : 1;
    r.params = {p0, p1.value_or(ScalarParam{})};
    r.displayParams = displayParams;
    return r;
}

// One row per ScalarOp value after Input, in enum order (checked below).
constexpr ScalarOpInfo kTable[] = {
    row(S::Add, "add", -1, false, F16::Pair),
    row(S::Sub, "sub", 2, false, F16::Pair),
    row(S::Mul, "mul", -1, false, F16::Pair),
    row(S::TrueDiv, "true_div", 2, true, F16::Pair),
    row(S::IntDiv, "int_div", 2),
    row(S::Mod, "mod", 2),
    row(S::Neg, "neg", 1, false, F16::Exact),
    row(S::Abs, "abs", 1, false, F16::Exact),
    row(S::Exp, "exp", 1, true),
    row(S::Log, "log", 1, true),
    row(S::Sqrt, "sqrt", 1, true, F16::Pair),
    row(S::Sqr, "sqr", 1, false, F16::Pair),
    row(S::Pow, "pow", 2),
    row(S::Maximum, "maximum", -1, false, F16::Exact),
    row(S::Minimum, "minimum", -1, false, F16::Exact),
    row(S::Tanh, "tanh", 1, true),
    row(S::Sigmoid, "sigmoid", 1, true),
    row(S::Relu, "relu", 1, false, F16::Exact),
    row(S::Erf, "erf", 1, true),
    row(S::Sin, "sin", 1, true),
    row(S::Cos, "cos", 1, true),
    row(S::Floor, "floor", 1, false, F16::Exact),
    row(S::Ceil, "ceil", 1, false, F16::Exact),
    row(S::Round, "round", 1, false, F16::Exact),
    row(S::Sgn, "sgn", 1, false, F16::Exact),
    row(S::Lt, "lt", 2),
    row(S::Gt, "gt", 2),
    row(S::Le, "le", 2),
    row(S::Ge, "ge", 2),
    row(S::Eq, "eq", 2),
    row(S::Neq, "neq", 2),
    row(S::And, "and", 2),
    row(S::Or, "or", 2),
    row(S::Not, "not", 1),
    row(S::Switch, "switch", 3, false, F16::Exact),
    row(S::Identity, "identity", 1, false, F16::Exact),
    row(S::Cast, "cast", 1, false, F16::Exact),
    withParams(S::Clip, "clip", false, {"min", -INFINITY}, ScalarParam{"max", INFINITY}, true, F16::Exact),
    withParams(S::LeakyRelu, "leaky_relu", false, {"alpha", 0.01}, std::nullopt, true),
    withParams(S::HardSigmoid, "hard_sigmoid", true, {"alpha", 0.2}, ScalarParam{"beta", 0.5}, false),
    row(S::Reciprocal, "reciprocal", 1, true, F16::Pair),
    row(S::Xor, "xor", 2),
};

constexpr bool tableInEnumOrder() {
    for (std::size_t i = 0; i < std::size(kTable); ++i)
        if (static_cast<std::size_t>(kTable[i].op) != i + 1) return false;
    return static_cast<std::size_t>(S::Xor) == std::size(kTable);
}
static_assert(tableInEnumOrder(), "kTable has one row per ScalarOp after Input, in enum order");

constexpr ScalarOpInfo kInputRow = row(S::Input, "", 0);

} // namespace

std::span<const ScalarOpInfo> scalarOpTable() { return kTable; }

const ScalarOpInfo& scalarOpInfo(ScalarOp op) {
    return op == S::Input ? kInputRow : kTable[static_cast<std::size_t>(op) - 1];
}

const ScalarOpInfo* findScalarOp(std::string_view name) {
    for (const ScalarOpInfo& r : kTable)
        if (r.name == name) return &r;
    return nullptr;
}

DType upgradeToFloat(DType d) {
    if (isFloat(d) || isComplex(d)) return d;
    if (d == DType::Int8 || d == DType::UInt8 || d == DType::Int16 || d == DType::UInt16 || d == DType::Bool)
        return DType::Float32;
    return DType::Float64;
}

DType scalarResultType(ScalarOp op, std::span<const DType> args) {
    if (isCompareOp(op)) return DType::Bool;
    const std::size_t first = op == S::Switch ? 1 : 0;
    DType d = args[first];
    for (std::size_t i = first + 1; i < args.size(); ++i) d = upcast(d, args[i]);
    return scalarOpInfo(op).floatResult ? upgradeToFloat(d) : d;
}

ScalarParams scalarParamsOf(const Op& op, const ScalarOpInfo& info) {
    ScalarParams p;
    if (info.nparams > 0) p.p0 = op.floatAttr(info.params[0].attr, info.params[0].dflt);
    if (info.nparams > 1) p.p1 = op.floatAttr(info.params[1].attr, info.params[1].dflt);
    return p;
}

bool computesInUInt64(std::span<const DType> args) {
    bool u64 = false;
    for (DType d : args) {
        if (d == DType::UInt64) u64 = true;
        if (isInteger(d) && !isUnsigned(d)) return false;
    }
    return u64;
}

namespace {

// An integer argument of evalScalarReference as C (uint64 values as they are, negative ones
// wrapped: two's complement).
template <class C> C integerArg(long double v) {
    return v >= 0 ? static_cast<C>(static_cast<std::uint64_t>(v)) : static_cast<C>(static_cast<std::int64_t>(v));
}

// The integer ops of evalScalarReference in C (int64 or uint64) arithmetic: wrapping add, sub,
// mul, neg, sqr and pow, and ScalarArith.h's floorDiv, pyMod, ipow. std::nullopt for another op
// or a division by zero.
template <class C> std::optional<long double> evalInteger(ScalarOp op, std::span<const long double> a) {
    using U = std::uint64_t;
    std::vector<C> v(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) v[i] = integerArg<C>(a[i]);
    const auto out = [](U r) { return std::optional<long double>(static_cast<long double>(static_cast<C>(r))); };
    switch (op) {
    case S::Add:
    case S::Mul: {
        U r = op == S::Add ? 0 : 1;
        for (C x : v) r = op == S::Add ? r + static_cast<U>(x) : r * static_cast<U>(x);
        return a.empty() ? std::nullopt : out(r);
    }
    default: break;
    }
    if (a.size() == 1) {
        const C x = v[0];
        switch (op) {
        case S::Neg: return out(0 - static_cast<U>(x));
        case S::Abs: return isNegative(x) ? out(0 - static_cast<U>(x)) : out(static_cast<U>(x));
        case S::Sqr: return out(static_cast<U>(x) * static_cast<U>(x));
        default: return std::nullopt;
        }
    }
    if (a.size() == 2) {
        const C x = v[0], y = v[1];
        switch (op) {
        case S::Sub: return out(static_cast<U>(x) - static_cast<U>(y));
        case S::IntDiv: return y == 0 ? std::nullopt : out(static_cast<U>(floorDiv(x, y)));
        case S::Mod: return y == 0 ? std::nullopt : out(static_cast<U>(pyMod(x, y)));
        case S::Pow: return out(static_cast<U>(ipow(x, y)));
        default: return std::nullopt;
        }
    }
    return std::nullopt;
}

} // namespace

std::optional<long double> evalScalarReference(ScalarOp op, const ScalarParams& p, std::span<const long double> a,
                                               DType outDtype) {
    using LD = long double;
    switch (op) {
    case S::Add:
    case S::Mul:
    case S::Sub:
    case S::Neg:
    case S::Abs:
    case S::Sqr:
    case S::IntDiv:
    case S::Mod:
    case S::Pow:
        if (isInteger(outDtype))
            return outDtype == DType::UInt64 ? evalInteger<std::uint64_t>(op, a) : evalInteger<std::int64_t>(op, a);
        break;
    default: break;
    }
    switch (a.size()) {
    case 1: {
        const LD x = a[0];
        switch (op) {
        case S::Neg: return -x;
        case S::Abs: return std::fabs(x);
        case S::Exp: return std::exp(x);
        case S::Log: return std::log(x);
        case S::Sqrt: return std::sqrt(x);
        case S::Sqr: return x * x;
        case S::Tanh: return std::tanh(x);
        case S::Sigmoid: return 1 / (1 + std::exp(-x));
        case S::Relu: return reluOf(x);
        case S::Erf: return std::erf(x);
        case S::Sin: return std::sin(x);
        case S::Cos: return std::cos(x);
        case S::Floor: return std::floor(x);
        case S::Ceil: return std::ceil(x);
        case S::Round: return std::nearbyint(x); // default rounding mode: to nearest, ties to even
        case S::Sgn: return static_cast<LD>((x > 0) - (x < 0));
        case S::Not: return x == 0 ? 1 : 0;
        case S::Identity:
        case S::Cast: return isInteger(outDtype) && !std::isnan(x) ? std::trunc(x) : x;
        case S::Clip: return clipOf<LD>(x, p.p0, p.p1);
        case S::LeakyRelu: return leakyReluOf<LD>(x, p.p0);
        case S::HardSigmoid: return hardSigmoidOf<LD>(x, p.p0, p.p1);
        case S::Reciprocal: return 1 / x;
        case S::Add:
        case S::Mul:
        case S::Maximum:
        case S::Minimum: return x;
        default: return std::nullopt;
        }
    }
    case 2: {
        const LD x = a[0], y = a[1];
        switch (op) {
        case S::Sub: return x - y;
        case S::TrueDiv: return x / y;
        case S::IntDiv: return y == 0 ? std::optional<LD>() : std::optional<LD>(floorDiv(x, y));
        case S::Mod: return y == 0 ? std::optional<LD>() : std::optional<LD>(pyMod(x, y));
        case S::Pow: return std::pow(x, y);
        case S::Lt: return x < y;
        case S::Gt: return x > y;
        case S::Le: return x <= y;
        case S::Ge: return x >= y;
        case S::Eq: return x == y;
        case S::Neq: return x != y;
        case S::And: return (x != 0) && (y != 0);
        case S::Or: return (x != 0) || (y != 0);
        case S::Xor: return (x != 0) != (y != 0);
        default: break;
        }
        break;
    }
    case 3:
        if (op == S::Switch) return a[0] != 0 ? a[1] : a[2];
        break;
    default: break;
    }
    switch (op) {
    case S::Add: return std::accumulate(a.begin(), a.end(), LD(0));
    case S::Mul: return std::accumulate(a.begin(), a.end(), LD(1), std::multiplies<>());
    case S::Maximum: return *std::max_element(a.begin(), a.end());
    case S::Minimum: return *std::min_element(a.begin(), a.end());
    default: return std::nullopt;
    }
}

// ------------------------------------------------------------------ expressions
namespace {

ScalarNode inputNode(int k) {
    ScalarNode n;
    n.input = k;
    return n;
}

// printf's %.9g, the precision of the expression text.
std::string numberText(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

double throughText(double v) { return std::strtod(numberText(v).c_str(), nullptr); }

struct ExprParser {
    std::string_view s;
    ScalarExpr& e;
    std::size_t pos = 0;

    [[noreturn]] void fail(const std::string& why) const {
        throw Error("bad expression '" + std::string(s) + "' at offset " + std::to_string(pos) + ": " + why);
    }
    void skipWs() {
        while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    }
    std::string ident() {
        skipWs();
        const std::size_t b = pos;
        while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) ++pos;
        if (b == pos) fail("expected a name");
        return std::string(s.substr(b, pos - b));
    }
    int push(ScalarNode n) {
        e.nodes.push_back(std::move(n));
        return static_cast<int>(e.nodes.size()) - 1;
    }
    int parse() {
        const std::string name = ident();
        if (name.size() > 1 && name[0] == 'i' && std::all_of(name.begin() + 1, name.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c));
            })) {
            if (name.size() > 10) fail("input " + name + " is out of range");
            ScalarNode n;
            n.input = std::atoi(name.c_str() + 1);
            return push(n);
        }
        const ScalarOpInfo* info = findScalarOp(name);
        if (!info) fail("unknown scalar op '" + name + "'");
        ScalarNode n;
        n.op = info->op;
        std::vector<std::string> params;
        skipWs();
        if (pos < s.size() && s[pos] == '{') {
            const std::size_t close = s.find('}', pos);
            if (close == std::string_view::npos) fail("unclosed '{'");
            const std::string inner(s.substr(pos + 1, close - pos - 1));
            std::size_t b = 0;
            while (true) {
                const std::size_t c = inner.find(',', b);
                params.push_back(inner.substr(b, c == std::string::npos ? std::string::npos : c - b));
                if (c == std::string::npos) break;
                b = c + 1;
            }
            pos = close + 1;
        }
        skipWs();
        if (pos >= s.size() || s[pos] != '(') fail("expected '(' after " + name);
        ++pos;
        while (true) {
            n.args.push_back(parse());
            skipWs();
            if (pos < s.size() && s[pos] == ',') {
                ++pos;
                continue;
            }
            if (pos < s.size() && s[pos] == ')') {
                ++pos;
                break;
            }
            fail("expected ',' or ')'");
        }
        if (info->arity >= 0 && static_cast<int>(n.args.size()) != info->arity)
            fail(name + " takes " + std::to_string(info->arity) + " arguments, got " + std::to_string(n.args.size()));
        auto num = [&](std::size_t i, double dflt) {
            if (i >= params.size() || params[i].empty()) return dflt;
            char* end = nullptr;
            const double v = std::strtod(params[i].c_str(), &end);
            if (end == params[i].c_str()) fail("bad number '" + params[i] + "'");
            return v;
        };
        if (n.op == ScalarOp::Cast) {
            if (params.size() != 1) fail("cast needs {dtype}");
            auto d = parseDType(params[0]);
            if (!d) fail("cast to unknown dtype '" + params[0] + "'");
            n.castTo = *d;
        }
        if (info->nparams > 0) n.p0 = num(0, info->params[0].dflt);
        if (info->nparams > 1) n.p1 = num(1, info->params[1].dflt);
        return push(std::move(n));
    }
};

// Appends the subtree of `src` rooted at node `i` to `out` (inputs replaced by `parts`); returns
// its root's index in `out`.
int copyTree(const ScalarExpr& src, int i, const std::vector<ScalarExpr>* parts, ScalarExpr& out) {
    const ScalarNode& n = src.nodes[static_cast<std::size_t>(i)];
    if (n.op == ScalarOp::Input && parts) {
        if (n.input < 0 || n.input >= static_cast<int>(parts->size()))
            throw Error("expression '" + src.str() + "': input i" + std::to_string(n.input) + " has no replacement");
        const ScalarExpr& p = (*parts)[static_cast<std::size_t>(n.input)];
        return copyTree(p, static_cast<int>(p.nodes.size()) - 1, nullptr, out);
    }
    ScalarNode c = n;
    for (int& a : c.args) a = copyTree(src, a, parts, out);
    out.nodes.push_back(std::move(c));
    return static_cast<int>(out.nodes.size()) - 1;
}

void printTree(const ScalarExpr& e, int i, std::string& out) {
    const ScalarNode& n = e.nodes[static_cast<std::size_t>(i)];
    if (n.op == ScalarOp::Input) {
        out += "i" + std::to_string(n.input);
        return;
    }
    const ScalarOpInfo& info = scalarOpInfo(n.op);
    out += info.name;
    if (n.op == ScalarOp::Cast)
        out += "{" + std::string(dtypeName(n.castTo)) + "}";
    else if (info.nparams > 0)
        out += "{" + numberText(n.p0) + (info.nparams > 1 ? "," + numberText(n.p1) : std::string()) + "}";
    out += "(";
    for (std::size_t k = 0; k < n.args.size(); ++k) {
        if (k) out += ",";
        printTree(e, n.args[k], out);
    }
    out += ")";
}

} // namespace

ScalarExpr ScalarExpr::parse(std::string_view text) {
    ScalarExpr e;
    ExprParser p{text, e};
    p.parse();
    p.skipWs();
    if (p.pos != text.size()) p.fail("trailing text");
    return e;
}

ScalarExpr ScalarExpr::input(int k) {
    ScalarExpr e;
    e.nodes.push_back(inputNode(k));
    return e;
}

std::string ScalarExpr::str() const {
    std::string out;
    if (!nodes.empty()) printTree(*this, static_cast<int>(nodes.size()) - 1, out);
    return out;
}

int ScalarExpr::numInputs() const {
    int n = 0;
    for (const ScalarNode& x : nodes)
        if (x.op == ScalarOp::Input) n = std::max(n, x.input + 1);
    return n;
}

ScalarExpr ScalarExpr::withInputs(const std::vector<ScalarExpr>& parts) const {
    ScalarExpr out;
    if (!nodes.empty()) copyTree(*this, static_cast<int>(nodes.size()) - 1, &parts, out);
    return out;
}

const ScalarExpr* compositeExpression(const Op& op) {
    if ((op.kind() != "Elemwise" && op.kind() != "GpuElemwise") || op.str("scalar") != "composite") return nullptr;
    static std::mutex mutex;
    static std::unordered_map<const Op*, std::unique_ptr<const ScalarExpr>> parsed;
    std::lock_guard lock(mutex);
    auto& e = parsed[&op];
    if (!e) e = std::make_unique<const ScalarExpr>(ScalarExpr::parse(op.str("expr")));
    return e.get();
}

ScalarExpr elemwiseExpression(const Op& op, int nin) {
    if (const ScalarExpr* e = compositeExpression(op)) return *e;
    const std::string s = op.str("scalar");
    const ScalarOpInfo* info = findScalarOp(s);
    if (!info) throw Error(op.str() + ": no expression (a composite without 'expr')");
    ScalarExpr e;
    ScalarNode n;
    n.op = info->op;
    for (int i = 0; i < nin; ++i) {
        e.nodes.push_back(inputNode(i));
        n.args.push_back(i);
    }
    if (n.op == ScalarOp::Cast) n.castTo = parseDType(op.str("dtype")).value_or(DType::Float32);
    const ScalarParams p = scalarParamsOf(op, *info);
    n.p0 = throughText(p.p0);
    n.p1 = throughText(p.p1);
    e.nodes.push_back(std::move(n));
    return e;
}

} // namespace passlens
