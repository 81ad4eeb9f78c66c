#include "passlens/ir/DType.h"

#include <array>
#include <cmath>
#include <cstring>
#include <string>

namespace passlens {
namespace {
constexpr std::array<std::string_view, 16> kNames = {
    "bool",   "int8",    "int16",   "int32",   "int64",     "uint8",      "uint16",   "uint32",
    "uint64", "float16", "float32", "float64", "complex64", "complex128", "bfloat16", "string"};
constexpr std::array<std::size_t, 16> kSizes = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16, 2, sizeof(std::string)};

int idx(DType d) { return static_cast<int>(d); }

// Smallest float able to hold an integer dtype (NumPy's promotion).
DType floatFor(DType d) {
    switch (d) {
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool: return DType::Float16;
    case DType::Int16:
    case DType::UInt16: return DType::Float32;
    default: return DType::Float64;
    }
}
DType signedOfSize(std::size_t s) {
    switch (s) {
    case 1: return DType::Int8;
    case 2: return DType::Int16;
    case 4: return DType::Int32;
    default: return DType::Int64;
    }
}

DType numpyPromote(DType a, DType b) {
    if (a == b) return a;
    if (a == DType::Bool) return b;
    if (b == DType::Bool) return a;
    const bool ca = isComplex(a), cb = isComplex(b);
    const bool fa = isFloat(a), fb = isFloat(b);
    if (ca || cb) {
        // complex with a float or int: complex wide enough for the real part
        DType other = ca ? b : a;
        DType cx = ca ? a : b;
        if (ca && cb) return dtypeSize(a) >= dtypeSize(b) ? a : b;
        DType f = isFloat(other) ? other : floatFor(other);
        return (f == DType::Float64 || cx == DType::Complex128) ? DType::Complex128 : DType::Complex64;
    }
    if (fa && fb) {
        // float16 and bfloat16 hold different values: float32 holds both (as ml_dtypes promotes)
        if (dtypeSize(a) == 2 && dtypeSize(b) == 2) return DType::Float32;
        return dtypeSize(a) >= dtypeSize(b) ? a : b;
    }
    if (fa || fb) {
        DType f = fa ? a : b, i = fa ? b : a;
        DType need = floatFor(i);
        return dtypeSize(need) > dtypeSize(f) ? need : f;
    }
    // both integers
    const bool ua = isUnsigned(a), ub = isUnsigned(b);
    if (ua == ub) return dtypeSize(a) >= dtypeSize(b) ? a : b;
    DType s = ua ? b : a, u = ua ? a : b;
    if (dtypeSize(s) > dtypeSize(u)) return s;
    if (dtypeSize(u) == 8) return DType::Float64;
    return signedOfSize(dtypeSize(u) * 2);
}
} // namespace

std::string_view dtypeName(DType d) { return kNames[static_cast<std::size_t>(idx(d))]; }

std::optional<DType> parseDType(std::string_view name) {
    for (std::size_t i = 0; i < kNames.size(); ++i)
        if (kNames[i] == name) return static_cast<DType>(i);
    return std::nullopt;
}

std::size_t dtypeSize(DType d) { return kSizes[static_cast<std::size_t>(idx(d))]; }
bool isFloat(DType d) {
    return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}
bool isComplex(DType d) { return d == DType::Complex64 || d == DType::Complex128; }
bool isUnsigned(DType d) { return d == DType::UInt8 || d == DType::UInt16 || d == DType::UInt32 || d == DType::UInt64; }
bool isInteger(DType d) { return d != DType::Bool && !isFloat(d) && !isComplex(d) && !isString(d); }
bool isString(DType d) { return d == DType::String; }

DType upcast(DType a, DType b) {
    DType r = numpyPromote(a, b);
    const bool explicit64 = a == DType::Float64 || b == DType::Float64;
    if (r == DType::Float64 && !explicit64) return DType::Float32;
    return r;
}

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0) { // zero or subnormal: man * 2^-24
        const float f = std::ldexp(static_cast<float>(man), -24);
        return sign ? -f : f;
    }
    const std::uint32_t bits = sign | (exp == 31 ? 0x7f800000u | (man << 13) : ((exp + 112) << 23) | (man << 13));
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

std::uint16_t floatToHalf(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u); // NaN, infinity
    if (a >= 0x477ff000u) return sign | 0x7c00u;                               // rounds to infinity
    if (a < 0x38800000u) // below 2^-14: a subnormal half, man = round(|f| * 2^24) (exact product)
        return sign | static_cast<std::uint16_t>(std::nearbyint(std::fabs(f) * 16777216.0f));
    std::uint32_t h = (a - 0x38000000u) >> 13;
    const std::uint32_t rest = a & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return sign | static_cast<std::uint16_t>(h);
}

std::uint16_t doubleToHalf(double d) {
    // Round to float with round-to-odd (truncate, then set the last bit when inexact): float keeps
    // 13 bits more than half, so rounding that value to nearest even is rounding d once.
    float f = static_cast<float>(d);
    if (std::isfinite(d) && static_cast<double>(f) != d) {
        std::uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --bits; // toward zero (infinity -> FLT_MAX)
        bits |= 1u;
        std::memcpy(&f, &bits, sizeof f);
    }
    return floatToHalf(f);
}

float bfloat16ToFloat(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

std::uint16_t floatToBFloat16(float f) {
    std::uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u); // quiet NaN
    return static_cast<std::uint16_t>(x >> 16);
}

std::uint16_t doubleToBFloat16(double d) {
    // truncate to float first (toward zero), then to bfloat16: truncating twice is truncating once
    float f = static_cast<float>(d);
    if (std::isfinite(d) && std::fabs(static_cast<double>(f)) > std::fabs(d)) {
        std::uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        --bits;
        std::memcpy(&f, &bits, sizeof f);
    }
    return floatToBFloat16(f);
}

} // namespace passlens
