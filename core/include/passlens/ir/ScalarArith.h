#pragma once
/// @file ScalarArith.h
/// The scalar ops of Elemwise expressions (`ScalarOp`) and the arithmetic whose semantics is
/// Python's rather than C's (floor division, modulo, integer power) or whose NaN and signed-zero
/// behaviour depends on the operand order (maximum, minimum, relu, clip). Plain C++17 with no
/// other PassLens header, so that CUDA device code (CudaKernels.cu, compiled by nvcc), the CPU
/// loops and constant folding share one definition; functions are `__host__ __device__` under
/// nvcc (PASSLENS_HD). The functions have internal linkage (static): the CPU loops are compiled
/// once per ISA (Loops.h), and each build must keep its own copies rather than have the linker
/// pick one. The op table (names, arity, types, defaults) is ScalarOps.h.
#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define PASSLENS_HD __host__ __device__
#else
#define PASSLENS_HD
#endif

namespace passlens {

/// A scalar op of an Elemwise expression; `Input` is a placeholder `iK`. The numeric values are
/// what the CUDA backend's ElemNode::op carries, so they are part of the device interface.
enum class ScalarOp : std::uint8_t {
    Input,
    Add,
    Sub,
    Mul,
    TrueDiv,
    IntDiv,
    Mod,
    Neg,
    Abs,
    Exp,
    Log,
    Sqrt,
    Sqr,
    Pow,
    Maximum,
    Minimum,
    Tanh,
    Sigmoid,
    Relu,
    Erf,
    Sin,
    Cos,
    Floor,
    Ceil,
    Round,
    Sgn,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Neq,
    And,
    Or,
    Not,
    Switch,
    Identity,
    Cast,
    Clip,
    LeakyRelu,
    HardSigmoid,
    Reciprocal,
    Xor
};

/// Comparisons and logical ops: their result is bool (Theano's LogicalComparison, BinaryBitOp).
PASSLENS_HD static constexpr bool isCompareOp(ScalarOp o) {
    return o == ScalarOp::Lt || o == ScalarOp::Gt || o == ScalarOp::Le || o == ScalarOp::Ge || o == ScalarOp::Eq ||
           o == ScalarOp::Neq || o == ScalarOp::And || o == ScalarOp::Or || o == ScalarOp::Not || o == ScalarOp::Xor;
}

namespace scalar {

// The C library's function for each floating type (std:: overloads are not device functions).
PASSLENS_HD static inline float fmodOf(float a, float b) { return ::fmodf(a, b); }
PASSLENS_HD static inline double fmodOf(double a, double b) { return ::fmod(a, b); }
PASSLENS_HD static inline float floorOf(float a) { return ::floorf(a); }
PASSLENS_HD static inline double floorOf(double a) { return ::floor(a); }
PASSLENS_HD static inline float sqrtOf(float a) { return ::sqrtf(a); }
PASSLENS_HD static inline double sqrtOf(double a) { return ::sqrt(a); }
PASSLENS_HD static inline float powOf(float a, float b) { return ::powf(a, b); }
PASSLENS_HD static inline double powOf(double a, double b) { return ::pow(a, b); }
#if !defined(__CUDA_ARCH__)
static inline long double fmodOf(long double a, long double b) { return ::fmodl(a, b); }
static inline long double floorOf(long double a) { return ::floorl(a); }
#endif

} // namespace scalar

/// x < 0, false for an unsigned C (no always-false comparison there).
template <class C> PASSLENS_HD static constexpr bool isNegative(C x) {
    if constexpr (std::is_signed_v<C>)
        return x < 0;
    else
        return false;
}

/// Python's a % b: the result takes the sign of b (Theano's Mod). Integers: 0 when b is 0 or,
/// for a signed C, -1 (NumPy's result, and no INT64_MIN % -1 overflow); an unsigned C is
/// NumPy's unsigned modulo (uint64 values above 2^63 included).
template <class C> PASSLENS_HD static inline C pyMod(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
        if (b == 0) return 0;
        if constexpr (std::is_signed_v<C>) {
            if (b == C(-1)) return 0;
            C r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) r += b;
            return r;
        } else {
            return a % b;
        }
    } else {
        C r = scalar::fmodOf(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
}

/// Python's a // b, rounding toward minus infinity (Theano's IntDiv). Integers: 0 when b is 0
/// (NumPy's result); for a signed C, INT64_MIN // -1 wraps to INT64_MIN; an unsigned C is
/// NumPy's unsigned division (uint64 values above 2^63 included).
template <class C> PASSLENS_HD static inline C floorDiv(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
        if (b == 0) return 0;
        if constexpr (std::is_signed_v<C>) {
            if (b == C(-1)) return static_cast<C>(0ull - static_cast<std::uint64_t>(a));
            C q = a / b;
            if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
            return q;
        } else {
            return a / b;
        }
    } else {
        return scalar::floorOf(a / b);
    }
}

/// a ** b. Integers: wraps like NumPy's (unsigned arithmetic, no undefined behaviour); a negative
/// exponent (signed C) gives 0 unless |a| is 1. Floats: exact shortcuts for the exponents 2, 1
/// and 0.5 (x > 0), else pow.
template <class C> PASSLENS_HD static inline C ipow(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
        if constexpr (std::is_signed_v<C>)
            if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
        std::uint64_t r = 1, base = static_cast<std::uint64_t>(a);
        while (b) {
            if (b & 1) r *= base;
            base *= base;
            b >>= 1;
        }
        return static_cast<C>(r);
    } else {
        if (b == C(2)) return a * a;
        if (b == C(1)) return a;
        if (b == C(0.5) && a > 0) return scalar::sqrtOf(a);
        return scalar::powOf(a, b);
    }
}

/// maximum(s, v) as `s < v ? v : s`: a NaN in the running value s stays, a NaN in v does not
/// replace it (the CPU and CUDA engines fold n-ary maximum left to right with it).
template <class C> PASSLENS_HD static inline C maxOf(C s, C v) { return s < v ? v : s; }
/// minimum(s, v), as maxOf.
template <class C> PASSLENS_HD static inline C minOf(C s, C v) { return v < s ? v : s; }
/// relu(x) = x > 0 ? x : 0 (NaN gives 0).
template <class C> PASSLENS_HD static inline C reluOf(C x) { return x > 0 ? x : C(0); }
/// clip(x, lo, hi): lo first, then hi (NaN stays NaN).
template <class C> PASSLENS_HD static inline C clipOf(C x, C lo, C hi) {
    const C v = x < lo ? lo : x;
    return v > hi ? hi : v;
}
/// A clip bound `b` (a double, as the op's `min` / `max` attribute holds it) for an integer x in
/// the integer type C (int64 or uint64 arithmetic): truncated toward zero and saturated to C's
/// range; NaN is no bound (C's lowest for a lower bound, its highest for an upper one). Since
/// truncation is monotone, clipOf(x, lower, upper) in C with such bounds is exactly the
/// truncation of clip(x, b0, b1) computed on the real values, with no rounding of x (int64 and
/// uint64 values beyond 2^53 stay exact).
template <class C> PASSLENS_HD static inline C integerClipBound(double b, bool upper) {
    static_assert(std::is_integral_v<C> && sizeof(C) == 8, "integer modes compute in 64 bits");
    const C lowest = std::is_signed_v<C> ? static_cast<C>(std::uint64_t(1) << 63) : C(0);
    const C highest = static_cast<C>(~lowest);
    if (b != b) return upper ? highest : lowest;
    if (b <= static_cast<double>(lowest)) return lowest;
    if (b >= static_cast<double>(highest)) return highest; // highest rounds up to 2^63 or 2^64
    return static_cast<C>(b);
}
/// leaky_relu(x) = x >= 0 ? x : x * alpha.
template <class C> PASSLENS_HD static inline C leakyReluOf(C x, C alpha) { return x >= 0 ? x : x * alpha; }
/// hard_sigmoid(x) = clip(alpha * x + beta, 0, 1).
template <class C> PASSLENS_HD static inline C hardSigmoidOf(C x, C alpha, C beta) {
    C v = alpha * x + beta;
    v = v < 0 ? C(0) : v;
    return v > 1 ? C(1) : v;
}

} // namespace passlens
