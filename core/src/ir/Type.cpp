#include "passlens/ir/Type.h"

#include "passlens/ir/Error.h"

#include <charconv>
#include <functional>
#include <limits>
#include <mutex>
#include <unordered_set>

namespace passlens {

std::string Location::str() const {
    if (kind == Kind::Host) return "host";
    return context.empty() ? "gpu" : "gpu:" + context;
}

namespace {
// The hash of a type's fields (part of FunctionGraph::fingerprint, so it must not change).
std::size_t fieldHash(DType dtype, const std::vector<std::int64_t>& dims, const Location& loc, bool rankKnown) {
    std::size_t h = std::hash<int>()(static_cast<int>(dtype)) * 1000003u;
    for (auto d : dims) h = (h ^ std::hash<std::int64_t>()(d)) * 1099511628211ull;
    h ^= std::hash<std::string>()(loc.str()) + (rankKnown ? 1 : 7);
    return h;
}
} // namespace

const Type::Rep* Type::intern(Rep rep) {
    rep.hash = rep.elem ? rep.elem->hash() * 31u + static_cast<std::size_t>(rep.kind)
                        : fieldHash(rep.dtype, rep.dims, rep.loc, rep.rankKnown);
    struct Hash {
        std::size_t operator()(const Rep* r) const noexcept { return r->hash; }
    };
    struct Same {
        bool operator()(const Rep* a, const Rep* b) const noexcept {
            return a->kind == b->kind && a->dtype == b->dtype && a->rankKnown == b->rankKnown && a->dims == b->dims &&
                   a->loc == b->loc && (a->elem ? b->elem && a->elem->m_rep == b->elem->m_rep : !b->elem);
        }
    };
    struct Table {
        std::mutex mutex;
        std::unordered_set<const Rep*, Hash, Same> reps;
    };
    // Never freed, as the op table: a Type stays valid to the end of the process, also in the
    // destructors of static objects.
    static Table* const table = new Table;
    std::lock_guard lock(table->mutex);
    if (auto it = table->reps.find(&rep); it != table->reps.end()) return *it;
    if (rep.elem) rep.elem = new Type(*rep.elem); // the caller's element may be a temporary
    const Rep* r = new Rep(std::move(rep));
    table->reps.insert(r);
    return r;
}

Type::Type(Rep rep)
    : m_rep(intern(std::move(rep))) {}

Type::Type()
    : m_rep([] {
        static const Rep* const scalar = intern(Rep{});
        return scalar;
    }()) {}

Type::Type(DType dtype, std::vector<std::int64_t> dims, Location loc)
    : Type(Rep{dtype, std::move(dims), std::move(loc)}) {}

Type Type::unknownRank(DType dtype, Location loc) { return Type(Rep{dtype, {}, std::move(loc), false}); }

Type Type::sequence(const Type& element) {
    return Type(Rep{element.dtype(), {}, Location::host(), false, Kind::Sequence, &element});
}

Type Type::optional(const Type& element) {
    return Type(Rep{element.dtype(), {}, Location::host(), false, Kind::Optional, &element});
}

Type Type::parse(std::string_view text) {
    auto fail = [&](const std::string& why) -> Error {
        return Error("bad type string '" + std::string(text) + "': " + why);
    };
    for (const auto& [prefix, kind] : {std::pair{std::string_view("seq("), Kind::Sequence},
                                       std::pair{std::string_view("optional("), Kind::Optional}}) {
        if (!text.starts_with(prefix)) continue;
        if (!text.ends_with(')')) throw fail("missing ')'");
        const Type elem = parse(text.substr(prefix.size(), text.size() - prefix.size() - 1));
        return kind == Kind::Sequence ? sequence(elem) : optional(elem);
    }
    const auto lb = text.find('[');
    if (lb == std::string_view::npos) throw fail("expected DTYPE[DIMS], e.g. float32[?,4]");
    const auto rb = text.find(']', lb);
    if (rb == std::string_view::npos) throw fail("missing ']'");
    const auto dt = parseDType(text.substr(0, lb));
    if (!dt) throw fail("unknown dtype '" + std::string(text.substr(0, lb)) + "'");
    Location loc;
    std::string_view rest = text.substr(rb + 1);
    if (!rest.empty()) {
        if (rest == "@host") {
        } else if (rest == "@gpu") {
            loc = Location::gpu();
        } else if (rest.starts_with("@gpu:") && rest.size() > 5) {
            loc = Location::gpu(std::string(rest.substr(5)));
        } else {
            throw fail("location must be @host, @gpu or @gpu:NAME");
        }
    }
    std::string_view dims = text.substr(lb + 1, rb - lb - 1);
    if (dims == "*") return unknownRank(*dt, loc);
    std::vector<std::int64_t> out;
    if (!dims.empty()) {
        std::size_t pos = 0;
        while (true) {
            auto comma = dims.find(',', pos);
            std::string_view d = dims.substr(pos, comma == std::string_view::npos ? dims.npos : comma - pos);
            while (!d.empty() && d.front() == ' ') d.remove_prefix(1);
            while (!d.empty() && d.back() == ' ') d.remove_suffix(1);
            if (d == "?") {
                out.push_back(kUnknownDim);
            } else {
                std::int64_t v = 0;
                auto [p, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
                if (d.empty() || ec != std::errc() || p != d.data() + d.size() || v < 0)
                    throw fail("dim '" + std::string(d) + "' is not a non-negative integer or ?");
                out.push_back(v);
            }
            if (comma == std::string_view::npos) break;
            pos = comma + 1;
        }
    }
    return Type(*dt, std::move(out), std::move(loc));
}

bool Type::isStatic() const {
    if (!rankKnown()) return false;
    for (auto d : dims())
        if (d < 0) return false;
    return true;
}

std::int64_t elementCount(const std::vector<std::int64_t>& dims) {
    for (auto d : dims)
        if (d == 0) return 0;
    std::int64_t n = 1;
    for (auto d : dims)
        if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<std::int64_t>::max();
    return n;
}

std::int64_t Type::numElements() const { return isStatic() ? elementCount(dims()) : -1; }

Type Type::withLocation(Location loc) const {
    Rep r = *m_rep;
    r.loc = std::move(loc);
    return Type(std::move(r));
}
Type Type::withDType(DType d) const {
    Rep r = *m_rep;
    r.dtype = d;
    return Type(std::move(r));
}
Type Type::withDims(std::vector<std::int64_t> dims) const {
    Rep r = *m_rep;
    r.dims = std::move(dims);
    r.rankKnown = true;
    return Type(std::move(r));
}

bool Type::compatible(const Type& o) const {
    const Rep& a = *m_rep;
    const Rep& b = *o.m_rep;
    if (a.kind != b.kind) return false;
    if (a.elem) return a.elem->compatible(*b.elem);
    if (a.dtype != b.dtype || a.loc != b.loc) return false;
    if (!a.rankKnown || !b.rankKnown) return true;
    if (a.dims.size() != b.dims.size()) return false;
    for (std::size_t i = 0; i < a.dims.size(); ++i)
        if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) return false;
    return true;
}

Type Type::merged(const Type& o) const {
    const Rep& a = *m_rep;
    const Rep& b = *o.m_rep;
    if (a.elem && b.elem && a.kind == b.kind) {
        const Type elem = a.elem->merged(*b.elem);
        Rep r = a;
        r.elem = &elem;
        return Type(std::move(r));
    }
    if (!a.rankKnown) return o;
    if (!b.rankKnown) return *this;
    bool same = true;
    for (std::size_t i = 0; i < a.dims.size() && i < b.dims.size(); ++i)
        if (a.dims[i] < 0 && b.dims[i] >= 0) same = false;
    if (same) return *this;
    Rep r = a;
    for (std::size_t i = 0; i < r.dims.size() && i < b.dims.size(); ++i)
        if (r.dims[i] < 0) r.dims[i] = b.dims[i];
    return Type(std::move(r));
}

std::string Type::str() const {
    const Rep& t = *m_rep;
    if (t.kind == Kind::Sequence) return "seq(" + t.elem->str() + ")";
    if (t.kind == Kind::Optional) return "optional(" + t.elem->str() + ")";
    std::string s(dtypeName(t.dtype));
    s += '[';
    if (!t.rankKnown) {
        s += '*';
    } else {
        for (std::size_t i = 0; i < t.dims.size(); ++i) {
            if (i) s += ',';
            s += t.dims[i] < 0 ? std::string("?") : std::to_string(t.dims[i]);
        }
    }
    s += ']';
    if (t.loc.isGpu()) s += "@" + t.loc.str();
    return s;
}

} // namespace passlens
