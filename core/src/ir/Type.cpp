#include "passlens/ir/Type.h"

#include "passlens/ir/Error.h"

#include <charconv>
#include <functional>
#include <limits>

namespace passlens {

std::string Location::str() const {
    if (kind == Kind::Host) return "host";
    return context.empty() ? "gpu" : "gpu:" + context;
}

Type Type::unknownRank(DType dtype, Location loc) {
    Type t(dtype, {}, std::move(loc));
    t.m_rankKnown = false;
    return t;
}

Type Type::sequence(const Type& element) {
    Type t = unknownRank(element.dtype());
    t.m_kind = Kind::Sequence;
    t.m_elem = std::make_shared<const Type>(element);
    return t;
}

Type Type::optional(const Type& element) {
    Type t = unknownRank(element.dtype());
    t.m_kind = Kind::Optional;
    t.m_elem = std::make_shared<const Type>(element);
    return t;
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
    if (!m_rankKnown) return false;
    for (auto d : m_dims)
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

std::int64_t Type::numElements() const { return isStatic() ? elementCount(m_dims) : -1; }

Type Type::withLocation(Location loc) const {
    Type t = *this;
    t.m_loc = std::move(loc);
    return t;
}
Type Type::withDType(DType d) const {
    Type t = *this;
    t.m_dtype = d;
    return t;
}
Type Type::withDims(std::vector<std::int64_t> dims) const {
    Type t = *this;
    t.m_dims = std::move(dims);
    t.m_rankKnown = true;
    return t;
}

bool Type::compatible(const Type& o) const {
    if (m_kind != o.m_kind) return false;
    if (m_elem) return m_elem->compatible(*o.m_elem);
    if (m_dtype != o.m_dtype || m_loc != o.m_loc) return false;
    if (!m_rankKnown || !o.m_rankKnown) return true;
    if (m_dims.size() != o.m_dims.size()) return false;
    for (std::size_t i = 0; i < m_dims.size(); ++i)
        if (m_dims[i] >= 0 && o.m_dims[i] >= 0 && m_dims[i] != o.m_dims[i]) return false;
    return true;
}

Type Type::merged(const Type& o) const {
    if (m_elem && o.m_elem && m_kind == o.m_kind) {
        Type t = *this;
        t.m_elem = std::make_shared<const Type>(m_elem->merged(*o.m_elem));
        return t;
    }
    if (!m_rankKnown) return o;
    if (!o.m_rankKnown) return *this;
    Type t = *this;
    for (std::size_t i = 0; i < t.m_dims.size() && i < o.m_dims.size(); ++i)
        if (t.m_dims[i] < 0) t.m_dims[i] = o.m_dims[i];
    return t;
}

std::string Type::str() const {
    if (m_kind == Kind::Sequence) return "seq(" + m_elem->str() + ")";
    if (m_kind == Kind::Optional) return "optional(" + m_elem->str() + ")";
    std::string s(dtypeName(m_dtype));
    s += '[';
    if (!m_rankKnown) {
        s += '*';
    } else {
        for (std::size_t i = 0; i < m_dims.size(); ++i) {
            if (i) s += ',';
            s += m_dims[i] < 0 ? std::string("?") : std::to_string(m_dims[i]);
        }
    }
    s += ']';
    if (m_loc.isGpu()) s += "@" + m_loc.str();
    return s;
}

bool Type::operator==(const Type& o) const {
    if (m_kind != o.m_kind || m_dtype != o.m_dtype || m_dims != o.m_dims || m_loc != o.m_loc ||
        m_rankKnown != o.m_rankKnown)
        return false;
    return !m_elem || *m_elem == *o.m_elem;
}

std::size_t Type::hash() const {
    if (m_elem) return m_elem->hash() * 31u + static_cast<std::size_t>(m_kind);
    std::size_t h = std::hash<int>()(static_cast<int>(m_dtype)) * 1000003u;
    for (auto d : m_dims) h = (h ^ std::hash<std::int64_t>()(d)) * 1099511628211ull;
    h ^= std::hash<std::string>()(m_loc.str()) + (m_rankKnown ? 1 : 7);
    return h;
}

} // namespace passlens
