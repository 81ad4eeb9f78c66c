// Tensor, Storage and BufferPool of the execution engine.
#include "passlens/kernels/Tensor.h"

#include "CudaHooks.h"

#include <passlens/ir/Error.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace passlens {

std::int64_t shapeNumel(const Shape& shape) { return elementCount(shape); }

std::string shapeStr(const Shape& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

void* rawAllocate(std::size_t bytes, MemoryKind kind, int device) {
    if (kind == MemoryKind::Device) return cudaHooks().allocate ? cudaHooks().allocate(bytes, device) : nullptr;
    const std::size_t rounded = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
    return std::aligned_alloc(64, rounded);
}

void rawFree(void* ptr, MemoryKind kind, int device, bool pinned) {
    if (!ptr) return;
    if (pinned && cudaHooks().freePinned) {
        cudaHooks().freePinned(ptr);
        return;
    }
    if (kind == MemoryKind::Device) {
        if (cudaHooks().free) cudaHooks().free(ptr, device);
        return;
    }
    std::free(ptr);
}

// ------------------------------------------------------------------ Storage
Storage::Storage(void* ptr, std::size_t bytes, MemoryKind kind, bool readOnly, std::shared_ptr<const void> keepAlive,
                 std::weak_ptr<BufferPool> pool, int device, bool pinned)
    : m_ptr(ptr)
    , m_bytes(bytes)
    , m_kind(kind)
    , m_readOnly(readOnly)
    , m_keepAlive(std::move(keepAlive))
    , m_pool(std::move(pool))
    , m_device(device)
    , m_pinned(pinned) {}

Storage::~Storage() {
    if (m_keepAlive) return; // borrowed
    if (auto pool = m_pool.lock()) {
        pool->release(m_ptr, m_bytes, m_kind, m_device, m_pinned);
        return;
    }
    rawFree(m_ptr, m_kind, m_device, m_pinned);
}

// ------------------------------------------------------------------ BufferPool
BufferPool::~BufferPool() { trim(); }

std::shared_ptr<Storage> BufferPool::allocate(std::size_t bytes, MemoryKind kind, int device) {
    const std::size_t rounded = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
    const bool wantPinned = kind == MemoryKind::Host && m_pinnedHost && cudaHooks().allocatePinned;
    // a cached buffer of the same kind; when pinned memory is wanted, a pageable one (left by a
    // failed page-locked allocation) serves too, rather than failing again and growing the pool
    std::size_t found = m_free.size();
    for (std::size_t i = m_free.size(); i-- > 0;) {
        const Entry& e = m_free[i];
        if (e.bytes != rounded || e.kind != kind || e.device != device) continue;
        if (e.pinned == wantPinned) {
            found = i;
            break;
        }
        if (wantPinned && found == m_free.size()) found = i;
    }
    if (found < m_free.size()) {
        const Entry e = m_free[found];
        m_cachedBytes -= e.bytes;
        m_free.erase(m_free.begin() + static_cast<std::ptrdiff_t>(found));
        noteAllocated(rounded);
        if (m_poison && kind == MemoryKind::Host) std::memset(e.ptr, 0xFF, rounded);
        return std::make_shared<Storage>(e.ptr, rounded, kind, false, nullptr, weak_from_this(), device, e.pinned);
    }
    bool pinned = false;
    void* p = nullptr;
    if (wantPinned) {
        p = cudaHooks().allocatePinned(rounded);
        pinned = p != nullptr;
    }
    if (!p) p = rawAllocate(rounded, kind, device);
    if (!p) {
        // Give cached memory back and try once more.
        trim();
        p = rawAllocate(rounded, kind, device);
    }
    if (!p)
        throw Error(std::string("out of ") + (kind == MemoryKind::Host ? "host" : "device") +
                    " memory: cannot allocate " + std::to_string(bytes) + " bytes");
    noteAllocated(rounded);
    if (m_poison && kind == MemoryKind::Host) std::memset(p, 0xFF, rounded);
    return std::make_shared<Storage>(p, rounded, kind, false, nullptr, weak_from_this(), device, pinned);
}

void BufferPool::noteAllocated(std::size_t bytes) {
    m_liveBytes += bytes;
    m_peakLive = std::max(m_peakLive, m_liveBytes);
    m_peakFootprint = std::max(m_peakFootprint, m_liveBytes + m_cachedBytes);
}

void BufferPool::release(void* ptr, std::size_t bytes, MemoryKind kind, int device, bool pinned) {
    m_liveBytes -= std::min(m_liveBytes, bytes);
    m_free.push_back({bytes, kind, device, ptr, pinned});
    m_cachedBytes += bytes;
}

void BufferPool::trim() {
    for (const Entry& e : m_free) rawFree(e.ptr, e.kind, e.device, e.pinned);
    m_free.clear();
    m_cachedBytes = 0;
}

// ------------------------------------------------------------------ Tensor
namespace {
// A host storage owning `values` (a string tensor's elements; never pooled, never on a device).
std::shared_ptr<Storage> stringStorage(std::shared_ptr<std::vector<std::string>> values, bool readOnly) {
    void* p = values->data();
    const std::size_t bytes = values->size() * sizeof(std::string);
    return std::make_shared<Storage>(p, bytes, MemoryKind::Host, readOnly,
                                     std::shared_ptr<const void>(std::move(values)), std::weak_ptr<BufferPool>(), 0);
}
} // namespace

Tensor Tensor::empty(DType dtype, Shape shape, BufferPool* pool, MemoryKind kind, int device) {
    for (auto d : shape)
        if (d < 0) throw Error("cannot allocate a tensor of shape " + shapeStr(shape) + ": negative dim");
    const std::int64_t n = elementCount(shape); // 0 with a 0 dim, saturated on overflow
    std::int64_t total = 0;
    const bool overflow = __builtin_mul_overflow(n, static_cast<std::int64_t>(dtypeSize(dtype)), &total);
    if (overflow || total > (std::int64_t(1) << 48))
        throw Error("cannot allocate a tensor of shape " + shapeStr(shape) + ": too large");
    Tensor t;
    t.m_dtype = dtype;
    const std::size_t bytes = static_cast<std::size_t>(total);
    if (dtype == DType::String) {
        if (kind != MemoryKind::Host)
            throw Error("cannot allocate a string tensor of shape " + shapeStr(shape) +
                        " in device memory: string tensors stay on the host");
        t.m_storage = stringStorage(std::make_shared<std::vector<std::string>>(static_cast<std::size_t>(n)), false);
    } else if (pool) {
        t.m_storage = pool->allocate(bytes, kind, device);
    } else {
        const std::size_t rounded = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
        void* p = rawAllocate(rounded, kind, device);
        if (!p)
            throw Error(std::string("out of ") + (kind == MemoryKind::Host ? "host" : "device") +
                        " memory: cannot allocate " + std::to_string(bytes) + " bytes for a tensor of shape " +
                        shapeStr(shape));
        t.m_storage = std::make_shared<Storage>(p, rounded, kind, false, nullptr, std::weak_ptr<BufferPool>(), device);
    }
    t.m_shape = std::move(shape);
    return t;
}

Tensor Tensor::zeros(DType dtype, Shape shape, BufferPool* pool) {
    Tensor t = empty(dtype, std::move(shape), pool);
    if (dtype != DType::String) std::memset(t.rawData(), 0, t.nbytes()); // strings start empty
    return t;
}

Tensor Tensor::fromConstant(const TensorData& data) {
    if (!data.loaded())
        throw Error("constant data is not loaded" + (data.missing.empty() ? std::string() : ": " + data.missing));
    Tensor t;
    t.m_dtype = data.dtype;
    t.m_shape = data.shape;
    if (data.dtype == DType::String) { // decoded once into a read-only copy
        t.m_storage = stringStorage(std::make_shared<std::vector<std::string>>(data.strings()), true);
        return t;
    }
    if (data.bytes->size() < t.nbytes())
        throw Error("constant data holds " + std::to_string(data.bytes->size()) + " bytes, its shape " +
                    shapeStr(data.shape) + " needs " + std::to_string(t.nbytes()));
    void* p = const_cast<char*>(data.bytes->data());
    t.m_storage = std::make_shared<Storage>(p, data.bytes->size(), MemoryKind::Host, true,
                                            std::shared_ptr<const void>(data.bytes), std::weak_ptr<BufferPool>(), 0);
    return t;
}

Tensor Tensor::fromStrings(Shape shape, std::vector<std::string> values) {
    if (static_cast<std::int64_t>(values.size()) != shapeNumel(shape))
        throw Error("fromStrings: " + std::to_string(values.size()) + " strings for shape " + shapeStr(shape));
    Tensor t;
    t.m_dtype = DType::String;
    t.m_shape = std::move(shape);
    t.m_storage = stringStorage(std::make_shared<std::vector<std::string>>(std::move(values)), false);
    return t;
}

Tensor Tensor::fromBytes(DType dtype, Shape shape, const void* bytes) {
    if (dtype == DType::String) throw Error("fromBytes: string tensors have no raw bytes");
    Tensor t = empty(dtype, std::move(shape));
    if (t.nbytes()) std::memcpy(t.rawData(), bytes, t.nbytes());
    return t;
}

Tensor Tensor::fromDoubles(DType dtype, Shape shape, const std::vector<double>& values) {
    Tensor t = empty(dtype, std::move(shape));
    if (static_cast<std::int64_t>(values.size()) != t.numel())
        throw Error("fromDoubles: " + std::to_string(values.size()) + " values for shape " + shapeStr(t.shape()));
    convertElements(values.data(), DType::Float64, t.rawData(), dtype, t.numel());
    return t;
}

Tensor Tensor::scalar(DType dtype, double value) { return fromDoubles(dtype, {}, {value}); }

Tensor Tensor::reshaped(Shape shape) const {
    if (shapeNumel(shape) != numel())
        throw Error("cannot reshape " + typeStr() + " to " + shapeStr(shape) + ": element counts differ");
    Tensor t = *this;
    t.m_shape = std::move(shape);
    return t;
}

Tensor Tensor::sliceView(std::int64_t offset, Shape shape) const {
    if (offset < 0 || offset + shapeNumel(shape) > numel())
        throw Error("view of " + shapeStr(shape) + " at element " + std::to_string(offset) + " does not fit in " +
                    typeStr());
    Tensor t = *this;
    t.m_offset += static_cast<std::size_t>(offset) * dtypeSize(m_dtype);
    t.m_shape = std::move(shape);
    return t;
}

Tensor Tensor::sequence(std::vector<Tensor> items) {
    Tensor t;
    t.m_kind = Type::Kind::Sequence;
    t.m_items = std::make_shared<const std::vector<Tensor>>(std::move(items));
    return t;
}

Tensor Tensor::optional(std::optional<Tensor> value) {
    Tensor t;
    t.m_kind = Type::Kind::Optional;
    std::vector<Tensor> items;
    if (value) items.push_back(std::move(*value));
    t.m_items = std::make_shared<const std::vector<Tensor>>(std::move(items));
    return t;
}

const std::vector<Tensor>& Tensor::items() const {
    static const std::vector<Tensor> none;
    return m_items ? *m_items : none;
}

bool Tensor::holdsStrings() const {
    if (isDense()) return m_dtype == DType::String;
    return std::any_of(items().begin(), items().end(), [](const Tensor& x) { return x.holdsStrings(); });
}

Tensor Tensor::clone(BufferPool* pool) const {
    if (!isDense()) {
        std::vector<Tensor> items;
        for (const Tensor& x : *m_items) items.push_back(x.clone(pool));
        Tensor t = *this;
        t.m_items = std::make_shared<const std::vector<Tensor>>(std::move(items));
        return t;
    }
    if (!onHost()) throw Error("clone: only host tensors are cloned here");
    Tensor t = empty(m_dtype, m_shape, pool);
    convertElements(rawData(), m_dtype, t.rawData(), m_dtype, numel()); // a copy (strings by element)
    return t;
}

double Tensor::at(std::int64_t i) const {
    return visitDType(m_dtype, "Tensor::at", [&](auto z) -> double {
        using T = decltype(z);
        return static_cast<double>(data<T>()[i]);
    });
}

std::int64_t Tensor::intAt(std::int64_t i) const {
    return visitDType(m_dtype, "Tensor::intAt", [&](auto z) -> std::int64_t {
        using T = decltype(z);
        return static_cast<std::int64_t>(data<T>()[i]);
    });
}

std::vector<double> Tensor::toDoubles() const {
    std::vector<double> v(static_cast<std::size_t>(numel()));
    convertElements(rawData(), m_dtype, v.data(), DType::Float64, numel());
    return v;
}

std::shared_ptr<TensorData> Tensor::toTensorData() const {
    if (m_dtype == DType::String) {
        const auto* b = numel() ? data<std::string>() : nullptr;
        return TensorData::fromStrings(m_shape, std::vector<std::string>(b, b + numel()));
    }
    auto d = std::make_shared<TensorData>();
    d->dtype = m_dtype;
    d->shape = m_shape;
    d->bytes = std::make_shared<const std::string>(static_cast<const char*>(rawData()), nbytes());
    return d;
}

std::string Tensor::typeStr() const {
    if (isDense()) return std::string(dtypeName(m_dtype)) + shapeStr(m_shape);
    std::string s = m_kind == Type::Kind::Sequence ? "seq(" : "optional(";
    const std::size_t shown = std::min<std::size_t>(m_items->size(), 3);
    for (std::size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + (*m_items)[i].typeStr();
    if (m_items->size() > shown) s += ", ... " + std::to_string(m_items->size()) + " items";
    return s + ")";
}

namespace {
template <class S, class D> void convertTyped(const S* s, D* d, std::int64_t n) {
    if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
        // C-style truncation, wrapped to D's width through int64 (NumPy's astype on x86-64);
        // uint64 also takes [2^63, 2^64) exactly; NaN, infinities and values beyond give 0 (no UB)
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = static_cast<double>(s[i]);
            if (v >= -0x1p63 && v < 0x1p63)
                d[i] = static_cast<D>(static_cast<std::int64_t>(v));
            else if (std::is_same_v<D, std::uint64_t> && v >= 0x1p63 && v < 0x1p64)
                d[i] = static_cast<D>(static_cast<std::uint64_t>(v));
            else
                d[i] = D(0);
        }
    } else {
        for (std::int64_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
    }
}
} // namespace

namespace {
// Trims blanks (ONNX's Cast accepts " 1.5 " as NumPy does).
std::string_view trimmed(std::string_view t) {
    const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
    while (!t.empty() && blank(t.front())) t.remove_prefix(1);
    while (!t.empty() && blank(t.back())) t.remove_suffix(1);
    return t;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// An integer literal filling `text` ("42", "+7", "-3"), exactly; nullopt for anything else.
template <class I> std::optional<I> integerLiteral(std::string_view text) {
    text = trimmed(text);
    if (text.size() > 1 && text.front() == '+' && text[1] != '-') text.remove_prefix(1);
    I v{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return v;
}

// Strings to a real dtype (ONNX's Cast from STRING).
void stringsToNumbers(const std::string* s, void* dst, DType dstType, std::int64_t n) {
    const std::size_t size = dtypeSize(dstType);
    for (std::int64_t i = 0; i < n; ++i) {
        void* d = static_cast<char*>(dst) + static_cast<std::size_t>(i) * size;
        if (isInteger(dstType) || dstType == DType::Bool) { // integer literals exactly (beyond 2^53)
            if (isUnsigned(dstType)) {
                if (const auto u = integerLiteral<std::uint64_t>(s[i])) {
                    convertElements(&*u, DType::UInt64, d, dstType, 1);
                    continue;
                }
            }
            if (const auto v = integerLiteral<std::int64_t>(s[i])) {
                convertElements(&*v, DType::Int64, d, dstType, 1);
                continue;
            }
        }
        const double v = parseNumber(s[i]);
        convertElements(&v, DType::Float64, d, dstType, 1);
    }
}

// A real dtype to strings (ONNX's Cast to STRING).
void numbersToStrings(const void* src, DType srcType, std::string* d, std::int64_t n) {
    if (isInteger(srcType) || srcType == DType::Bool) {
        visitDType(srcType, "convert to string", [&](auto z) {
            using T = decltype(z);
            const T* s = static_cast<const T*>(src);
            for (std::int64_t i = 0; i < n; ++i) d[i] = std::to_string(s[i]);
        });
        return;
    }
    if (isComplex(srcType)) throw Error("convert: complex values have no string form");
    const std::size_t size = dtypeSize(srcType);
    for (std::int64_t i = 0; i < n; ++i) {
        double v;
        convertElements(static_cast<const char*>(src) + static_cast<std::size_t>(i) * size, srcType, &v, DType::Float64,
                        1);
        d[i] = formatNumber(v, srcType);
    }
}

// "d.ddde±X" (shortest digits) laid out as NumPy's str() does: plain for 1e-4 <= |v| < 1e16.
std::string numpyLayout(std::string_view sci) {
    std::string out;
    if (!sci.empty() && sci.front() == '-') {
        out = "-";
        sci.remove_prefix(1);
    }
    const std::size_t e = sci.find_first_of("eE");
    std::string digits;
    for (char c : sci.substr(0, e))
        if (c != '.') digits += c;
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    int exp = 0;
    if (e != std::string_view::npos) {
        std::string_view x = sci.substr(e + 1);
        if (!x.empty() && x.front() == '+') x.remove_prefix(1);
        std::from_chars(x.data(), x.data() + x.size(), exp);
    }
    if (digits == "0") return out + "0.0";
    if (exp >= -4 && exp < 16) {
        if (exp < 0) return out + "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
        const auto point = static_cast<std::size_t>(exp) + 1;
        if (digits.size() <= point) return out + digits + std::string(point - digits.size(), '0') + ".0";
        return out + digits.substr(0, point) + "." + digits.substr(point);
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int a = exp < 0 ? -exp : exp;
    return out + "e" + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + std::to_string(a);
}
} // namespace

std::string formatNumber(double value, DType dtype) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "INF" : "-INF";
    if (!isFloat(dtype) && !isComplex(dtype)) return std::to_string(static_cast<long long>(value));
    char buf[64];
    if (dtype == DType::Float64 || dtype == DType::Float32) {
        const auto r =
            dtype == DType::Float64
                ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific)
                : std::to_chars(buf, buf + sizeof buf, static_cast<float>(value), std::chars_format::scientific);
        return numpyLayout(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
    }
    // float16 / bfloat16: the fewest digits that read back to the same 16-bit value
    std::uint16_t bits, back;
    convertElements(&value, DType::Float64, &bits, dtype, 1);
    for (int digits = 1;; ++digits) {
        const auto r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific, digits - 1);
        const std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
        const double parsed = parseNumber(text);
        convertElements(&parsed, DType::Float64, &back, dtype, 1);
        if (back == bits || digits >= 17) return numpyLayout(text);
    }
}

double parseNumber(std::string_view text) {
    const std::string_view t = trimmed(text);
    std::string_view body = t;
    bool negative = false;
    if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
        negative = body.front() == '-';
        body.remove_prefix(1);
    }
    if (equalsIgnoringCase(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
    if (equalsIgnoringCase(body, "inf") || equalsIgnoringCase(body, "infinity"))
        return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    double v = 0;
    const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v, std::chars_format::general);
    const bool whole = !body.empty() && end == body.data() + body.size() && body.front() != '-' && body.front() != '+';
    if (whole && ec == std::errc::result_out_of_range) { // beyond double: infinity, or below: zero
        const std::size_t e = body.find_first_of("eE");
        const bool small = e != std::string_view::npos && e + 1 < body.size() && body[e + 1] == '-';
        v = small ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (!whole || ec != std::errc()) {
        throw Error("cannot read \"" + std::string(t.substr(0, 40)) + (t.size() > 40 ? "..." : "") +
                    "\" as a number (ONNX's Cast reads decimal text, \"NaN\", \"INF\", \"-INF\")");
    }
    return negative ? -v : v;
}

void convertElements(const void* src, DType srcType, void* dst, DType dstType, std::int64_t n) {
    if (n <= 0) return; // empty tensors may have no buffer
    if (srcType == DType::String || dstType == DType::String) {
        if (srcType == dstType)
            std::copy_n(static_cast<const std::string*>(src), n, static_cast<std::string*>(dst));
        else if (srcType == DType::String)
            stringsToNumbers(static_cast<const std::string*>(src), dst, dstType, n);
        else
            numbersToStrings(src, srcType, static_cast<std::string*>(dst), n);
        return;
    }
    if (srcType == dstType) {
        std::memcpy(dst, src, static_cast<std::size_t>(n) * dtypeSize(srcType));
        return;
    }
    const auto is16 = [](DType d) { return d == DType::Float16 || d == DType::BFloat16; };
    if (is16(srcType) || is16(dstType)) {
        // float16 and bfloat16 (ONNX's Cast, CastLike, Mod, element-wise ops, test data): from and
        // to float32 and float64 directly (rounded, or for bfloat16 truncated, once); other types
        // through float32 (exact from a 16-bit float) or float64 (exact from integers to 2^53)
        const bool toHalf = dstType == DType::Float16;
        if (is16(srcType) && dstType == DType::Float32) {
            const auto* s = static_cast<const std::uint16_t*>(src);
            auto* d = static_cast<float*>(dst);
            if (srcType == DType::Float16)
                for (std::int64_t i = 0; i < n; ++i) d[i] = halfToFloat(s[i]);
            else
                for (std::int64_t i = 0; i < n; ++i) d[i] = bfloat16ToFloat(s[i]);
        } else if (is16(dstType) && srcType == DType::Float32) {
            const auto* s = static_cast<const float*>(src);
            auto* d = static_cast<std::uint16_t*>(dst);
            for (std::int64_t i = 0; i < n; ++i) d[i] = toHalf ? floatToHalf(s[i]) : floatToBFloat16(s[i]);
        } else if (is16(dstType) && srcType == DType::Float64) {
            const auto* s = static_cast<const double*>(src);
            auto* d = static_cast<std::uint16_t*>(dst);
            for (std::int64_t i = 0; i < n; ++i) d[i] = toHalf ? doubleToHalf(s[i]) : doubleToBFloat16(s[i]);
        } else {
            constexpr std::int64_t kChunk = 256;
            double buf[kChunk];
            const DType via = is16(srcType) ? DType::Float32 : DType::Float64;
            for (std::int64_t i = 0; i < n; i += kChunk) {
                const std::int64_t m = std::min(kChunk, n - i);
                const auto* s = static_cast<const char*>(src) + static_cast<std::size_t>(i) * dtypeSize(srcType);
                auto* d = static_cast<char*>(dst) + static_cast<std::size_t>(i) * dtypeSize(dstType);
                convertElements(s, srcType, buf, via, m);
                convertElements(buf, via, d, dstType, m);
            }
        }
        return;
    }
    if (dstType == DType::Bool) {
        visitDType(srcType, "convert", [&](auto z) {
            using S = decltype(z);
            const S* s = static_cast<const S*>(src);
            auto* d = static_cast<std::uint8_t*>(dst);
            for (std::int64_t i = 0; i < n; ++i) d[i] = s[i] != S(0);
        });
        return;
    }
    visitDType(srcType, "convert", [&](auto zs) {
        using S = decltype(zs);
        visitDType(dstType, "convert", [&](auto zd) {
            using D = decltype(zd);
            convertTyped(static_cast<const S*>(src), static_cast<D*>(dst), n);
        });
    });
}

} // namespace passlens
