// The CPU backend's hot loops, included by LoopsBaseline.cpp, LoopsV3.cpp and LoopsV4.cpp with
// PASSLENS_LOOPS_NS set to the namespace of that build (see Loops.h). No FP contraction in any
// build, so all give the same bits.
#include "Loops.h"

#include <passlens/ir/Error.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace passlens::cpu::PASSLENS_LOOPS_NS {

namespace {

constexpr int kBlock = 512;

double wrapInt(double v, DType d) {
    if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) return 0;
    const std::int64_t t = static_cast<std::int64_t>(v);
    switch (d) {
    case DType::Int8: return static_cast<std::int8_t>(t);
    case DType::Int16: return static_cast<std::int16_t>(t);
    case DType::Int32: return static_cast<std::int32_t>(t);
    case DType::UInt8: return static_cast<std::uint8_t>(t);
    case DType::UInt16: return static_cast<std::uint16_t>(t);
    case DType::UInt32: return static_cast<std::uint32_t>(t);
    case DType::UInt64: return static_cast<double>(static_cast<std::uint64_t>(t));
    default: return static_cast<double>(t);
    }
}

std::int64_t wrapInt64(std::int64_t t, DType d) {
    switch (d) {
    case DType::Int8: return static_cast<std::int8_t>(t);
    case DType::Int16: return static_cast<std::int16_t>(t);
    case DType::Int32: return static_cast<std::int32_t>(t);
    case DType::UInt8: return static_cast<std::uint8_t>(t);
    case DType::UInt16: return static_cast<std::uint16_t>(t);
    case DType::UInt32: return static_cast<std::uint32_t>(t);
    case DType::Bool: return t != 0;
    default: return t;
    }
}

// pyMod, floorDiv, ipow and the comparison-based ops (maxOf, minOf, reluOf, clipOf: their NaN and
// signed-zero behaviour depends on the operand order) are ScalarArith.h's, shared by applyNode,
// epilogueChain, constant folding and the CUDA kernels.

template <class C> DType computeDType() {
    if constexpr (std::is_same_v<C, float>)
        return DType::Float32;
    else if constexpr (std::is_same_v<C, double>)
        return DType::Float64;
    else
        return DType::Int64;
}

template <class C>
void applyNode(const ExprNode& n, int len, const C* const* a, C* __restrict r, ScalarProgram::Mode mode) {
    const std::size_t na = n.args.size();
    const C* x = na > 0 ? a[0] : nullptr;
    const C* y = na > 1 ? a[1] : nullptr;
    switch (n.op) {
    case ScalarOp::Input: break;
    case ScalarOp::Add:
        if constexpr (std::is_integral_v<C>) {
            for (int i = 0; i < len; ++i) {
                std::uint64_t s = static_cast<std::uint64_t>(x[i]);
                for (std::size_t j = 1; j < na; ++j) s += static_cast<std::uint64_t>(a[j][i]);
                r[i] = static_cast<C>(s);
            }
            break;
        }
        if (na == 1)
            for (int i = 0; i < len; ++i) r[i] = x[i];
        else if (na == 2)
            for (int i = 0; i < len; ++i) r[i] = x[i] + y[i];
        else if (na == 3) {
            const C* z = a[2];
            for (int i = 0; i < len; ++i) r[i] = (x[i] + y[i]) + z[i]; // same order as below, vectorised
        } else
            for (int i = 0; i < len; ++i) {
                C s = x[i];
                for (std::size_t j = 1; j < na; ++j) s += a[j][i];
                r[i] = s;
            }
        break;
    case ScalarOp::Mul:
        if constexpr (std::is_integral_v<C>) {
            for (int i = 0; i < len; ++i) {
                std::uint64_t s = static_cast<std::uint64_t>(x[i]);
                for (std::size_t j = 1; j < na; ++j) s *= static_cast<std::uint64_t>(a[j][i]);
                r[i] = static_cast<C>(s);
            }
            break;
        }
        if (na == 1)
            for (int i = 0; i < len; ++i) r[i] = x[i];
        else if (na == 2)
            for (int i = 0; i < len; ++i) r[i] = x[i] * y[i];
        else
            for (int i = 0; i < len; ++i) {
                C s = x[i];
                for (std::size_t j = 1; j < na; ++j) s *= a[j][i];
                r[i] = s;
            }
        break;
    case ScalarOp::Maximum:
        for (int i = 0; i < len; ++i) {
            C s = x[i];
            for (std::size_t j = 1; j < na; ++j) s = maxOf(s, a[j][i]);
            r[i] = s;
        }
        break;
    case ScalarOp::Minimum:
        for (int i = 0; i < len; ++i) {
            C s = x[i];
            for (std::size_t j = 1; j < na; ++j) s = minOf(s, a[j][i]);
            r[i] = s;
        }
        break;
    case ScalarOp::Sub:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i)
                r[i] = static_cast<C>(static_cast<std::uint64_t>(x[i]) - static_cast<std::uint64_t>(y[i]));
        else
            for (int i = 0; i < len; ++i) r[i] = x[i] - y[i];
        break;
    case ScalarOp::TrueDiv:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i) r[i] = floorDiv<C>(x[i], y[i]);
        else
            for (int i = 0; i < len; ++i) r[i] = x[i] / y[i];
        break;
    case ScalarOp::IntDiv:
        for (int i = 0; i < len; ++i) r[i] = floorDiv<C>(x[i], y[i]);
        break;
    case ScalarOp::Mod:
        for (int i = 0; i < len; ++i) r[i] = pyMod<C>(x[i], y[i]);
        break;
    case ScalarOp::Pow:
        for (int i = 0; i < len; ++i) r[i] = ipow<C>(x[i], y[i]);
        break;
    case ScalarOp::Neg:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i) r[i] = static_cast<C>(0ull - static_cast<std::uint64_t>(x[i]));
        else
            for (int i = 0; i < len; ++i) r[i] = -x[i];
        break;
    case ScalarOp::Abs:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i)
                r[i] = x[i] < 0 ? static_cast<C>(0ull - static_cast<std::uint64_t>(x[i])) : x[i];
        else
            for (int i = 0; i < len; ++i) r[i] = x[i] < 0 ? -x[i] : x[i];
        break;
    case ScalarOp::Sqr:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i)
                r[i] = static_cast<C>(static_cast<std::uint64_t>(x[i]) * static_cast<std::uint64_t>(x[i]));
        else
            for (int i = 0; i < len; ++i) r[i] = x[i] * x[i];
        break;
    case ScalarOp::Relu:
        for (int i = 0; i < len; ++i) r[i] = reluOf(x[i]);
        break;
    case ScalarOp::Sgn:
        for (int i = 0; i < len; ++i) r[i] = static_cast<C>((x[i] > 0) - (x[i] < 0));
        break;
    case ScalarOp::Lt:
        for (int i = 0; i < len; ++i) r[i] = x[i] < y[i];
        break;
    case ScalarOp::Gt:
        for (int i = 0; i < len; ++i) r[i] = x[i] > y[i];
        break;
    case ScalarOp::Le:
        for (int i = 0; i < len; ++i) r[i] = x[i] <= y[i];
        break;
    case ScalarOp::Ge:
        for (int i = 0; i < len; ++i) r[i] = x[i] >= y[i];
        break;
    case ScalarOp::Eq:
        for (int i = 0; i < len; ++i) r[i] = x[i] == y[i];
        break;
    case ScalarOp::Neq:
        for (int i = 0; i < len; ++i) r[i] = x[i] != y[i];
        break;
    case ScalarOp::And:
        for (int i = 0; i < len; ++i) r[i] = (x[i] != 0) && (y[i] != 0);
        break;
    case ScalarOp::Or:
        for (int i = 0; i < len; ++i) r[i] = (x[i] != 0) || (y[i] != 0);
        break;
    case ScalarOp::Not:
        for (int i = 0; i < len; ++i) r[i] = x[i] == 0;
        break;
    case ScalarOp::Switch:
        for (int i = 0; i < len; ++i) r[i] = x[i] != 0 ? y[i] : a[2][i];
        break;
    case ScalarOp::Identity:
    case ScalarOp::Cast:
        for (int i = 0; i < len; ++i) r[i] = x[i];
        break;
    case ScalarOp::Clip:
        if constexpr (std::is_integral_v<C>) {
            for (int i = 0; i < len; ++i) {
                double v = static_cast<double>(x[i]);
                v = std::min(std::max(v, n.p0), n.p1);
                r[i] = static_cast<C>(v);
            }
        } else {
            const C lo = static_cast<C>(n.p0), hi = static_cast<C>(n.p1);
            for (int i = 0; i < len; ++i) r[i] = clipOf(x[i], lo, hi);
        }
        break;
    case ScalarOp::Floor:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i) r[i] = x[i];
        else
            for (int i = 0; i < len; ++i) r[i] = std::floor(x[i]);
        break;
    case ScalarOp::Ceil:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i) r[i] = x[i];
        else
            for (int i = 0; i < len; ++i) r[i] = std::ceil(x[i]);
        break;
    case ScalarOp::Round:
        if constexpr (std::is_integral_v<C>)
            for (int i = 0; i < len; ++i) r[i] = x[i];
        else
            for (int i = 0; i < len; ++i) r[i] = std::nearbyint(x[i]);
        break;
    default:
        if constexpr (std::is_integral_v<C>) {
            // float functions never run in integer mode (their type is a float)
            for (int i = 0; i < len; ++i) r[i] = 0;
        } else {
            switch (n.op) {
            case ScalarOp::Exp:
                for (int i = 0; i < len; ++i) r[i] = std::exp(x[i]);
                break;
            case ScalarOp::Log:
                for (int i = 0; i < len; ++i) r[i] = std::log(x[i]);
                break;
            case ScalarOp::Sqrt:
                for (int i = 0; i < len; ++i) r[i] = std::sqrt(x[i]);
                break;
            case ScalarOp::Tanh:
                for (int i = 0; i < len; ++i) r[i] = std::tanh(x[i]);
                break;
            case ScalarOp::Sigmoid:
                for (int i = 0; i < len; ++i) r[i] = C(1) / (C(1) + std::exp(-x[i]));
                break;
            case ScalarOp::Erf:
                for (int i = 0; i < len; ++i) r[i] = std::erf(x[i]);
                break;
            case ScalarOp::Sin:
                for (int i = 0; i < len; ++i) r[i] = std::sin(x[i]);
                break;
            case ScalarOp::Cos:
                for (int i = 0; i < len; ++i) r[i] = std::cos(x[i]);
                break;
            case ScalarOp::Reciprocal:
                for (int i = 0; i < len; ++i) r[i] = C(1) / x[i];
                break;
            case ScalarOp::LeakyRelu: {
                const C al = static_cast<C>(n.p0);
                for (int i = 0; i < len; ++i) r[i] = leakyReluOf(x[i], al);
                break;
            }
            case ScalarOp::HardSigmoid: {
                const C al = static_cast<C>(n.p0), be = static_cast<C>(n.p1);
                for (int i = 0; i < len; ++i) r[i] = hardSigmoidOf(x[i], al, be);
                break;
            }
            default: break;
            }
        }
    }
    // Round the node's value to its dtype.
    if constexpr (!std::is_integral_v<C>) {
        // compileExpr allows only the ops where this is float16 (bfloat16) arithmetic
        if (n.dtype == DType::Float16 || n.dtype == DType::BFloat16) {
            std::uint16_t h[kBlock];
            for (int i = 0; i < len; i += kBlock) {
                const int m = std::min(kBlock, len - i);
                convertElements(r + i, computeDType<C>(), h, n.dtype, m);
                convertElements(h, n.dtype, r + i, computeDType<C>(), m);
            }
            return;
        }
    }
    if (n.dtype == DType::Bool && !isCompareOp(n.op)) {
        for (int i = 0; i < len; ++i) r[i] = r[i] != 0;
    } else if constexpr (std::is_same_v<C, double>) {
        if (mode == ScalarProgram::Mode::Double) {
            if (n.dtype == DType::Float32)
                for (int i = 0; i < len; ++i) r[i] = static_cast<double>(static_cast<float>(r[i]));
            else if (isInteger(n.dtype))
                for (int i = 0; i < len; ++i) r[i] = wrapInt(r[i], n.dtype);
        }
    } else if constexpr (std::is_same_v<C, std::int64_t>) {
        if (n.dtype != DType::Int64 && n.dtype != DType::UInt64)
            for (int i = 0; i < len; ++i) r[i] = wrapInt64(r[i], n.dtype);
    }
}

// Coalesced iteration space: output dims (>= 1 entry) and per input the strides of each dim;
// reused across calls (thread-local) so a call allocates nothing once warm.
struct Layout {
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> strides; // [input * maxDims + dim]
    std::size_t maxDims = 0;
    std::int64_t stride(std::size_t in, std::size_t d) const { return strides[in * maxDims + d]; }
    std::int64_t& stride(std::size_t in, std::size_t d) { return strides[in * maxDims + d]; }
};

void coalesce(const Shape& out, const std::vector<Tensor>& ins, Layout& L, std::vector<std::int64_t>& st) {
    const std::size_t r = out.size();
    const std::size_t k = ins.size();
    L.maxDims = std::max<std::size_t>(r, 1);
    st.assign(k * L.maxDims, 0);
    for (std::size_t i = 0; i < k; ++i) {
        const Shape& s = ins[i].shape();
        std::int64_t acc = 1;
        for (std::size_t a = r; a-- > 0;) {
            st[i * L.maxDims + a] = (s[a] == 1 && out[a] != 1) ? 0 : acc;
            acc *= s[a];
        }
    }
    L.dims.clear();
    L.strides.assign(k * L.maxDims, 0);
    for (std::size_t a = 0; a < r; ++a) {
        if (out[a] == 1) continue;
        if (!L.dims.empty()) {
            const std::size_t d = L.dims.size() - 1;
            bool merge = true;
            for (std::size_t i = 0; i < k && merge; ++i) merge = L.stride(i, d) == st[i * L.maxDims + a] * out[a];
            if (merge) {
                L.dims.back() *= out[a];
                for (std::size_t i = 0; i < k; ++i) L.stride(i, d) = st[i * L.maxDims + a];
                continue;
            }
        }
        L.dims.push_back(out[a]);
        for (std::size_t i = 0; i < k; ++i) L.stride(i, L.dims.size() - 1) = st[i * L.maxDims + a];
    }
    if (L.dims.empty()) L.dims.push_back(1); // strides stay 0
}

template <class C> struct Scratch {
    std::vector<C> bufStore;
    std::vector<const C*> val, argPtrs;
    std::vector<std::int64_t> idx, off, tmp;
    std::vector<const char*> base;
    std::vector<std::size_t> esize;
    Layout L;
};

template <class C> void run(const ScalarProgram& prog, const std::vector<Tensor>& ins, Tensor& out) {
    thread_local Scratch<C> S;
    Layout& L = S.L;
    coalesce(out.shape(), ins, L, S.tmp);
    const std::size_t nn = prog.nodes.size();
    const std::size_t k = ins.size();
    if (S.bufStore.size() < nn * kBlock) S.bufStore.resize(nn * kBlock);
    C* bufBase = S.bufStore.data();
    auto buf = [&](std::size_t i) { return bufBase + i * kBlock; };
    S.val.assign(nn, nullptr);
    const C** val = S.val.data();
    S.argPtrs.resize(8);
    const DType cdt = computeDType<C>();
    const bool outDirect = out.dtype() == cdt && prog.nodes.back().op != ScalarOp::Input;
    const std::size_t ndims = L.dims.size();
    const std::size_t last = ndims - 1;
    const std::int64_t inner = L.dims.back();
    S.idx.assign(ndims, 0);
    S.off.assign(k, 0);
    S.base.resize(k);
    S.esize.resize(k);
    std::int64_t* idx = S.idx.data();
    std::int64_t* off = S.off.data();
    for (std::size_t i = 0; i < k; ++i) {
        S.base[i] = static_cast<const char*>(ins[i].rawData());
        S.esize[i] = dtypeSize(ins[i].dtype());
    }
    char* outBase = static_cast<char*>(out.rawData());
    const std::size_t outEs = dtypeSize(out.dtype());
    std::int64_t outPos = 0;
    std::int64_t outer = 1;
    for (std::size_t a = 0; a < last; ++a) outer *= L.dims[a];
    for (std::int64_t o = 0; o < outer; ++o) {
        for (std::int64_t b = 0; b < inner; b += kBlock) {
            const int len = static_cast<int>(std::min<std::int64_t>(kBlock, inner - b));
            for (std::size_t ni = 0; ni < nn; ++ni) {
                const ExprNode& n = prog.nodes[ni];
                if (n.op == ScalarOp::Input) {
                    const std::size_t in = static_cast<std::size_t>(n.input);
                    const std::int64_t is = L.stride(in, last);
                    const char* p = S.base[in] + static_cast<std::size_t>(off[in] + b * is) * S.esize[in];
                    const DType dt = ins[in].dtype();
                    if (is == 1 && dt == cdt) {
                        val[ni] = reinterpret_cast<const C*>(p);
                    } else if (is == 1) {
                        convertElements(p, dt, buf(ni), cdt, len);
                        val[ni] = buf(ni);
                    } else {
                        C v;
                        convertElements(p, dt, &v, cdt, 1);
                        std::fill(buf(ni), buf(ni) + len, v);
                        val[ni] = buf(ni);
                    }
                    continue;
                }
                if (S.argPtrs.size() < n.args.size()) S.argPtrs.resize(n.args.size());
                for (std::size_t j = 0; j < n.args.size(); ++j) S.argPtrs[j] = val[static_cast<std::size_t>(n.args[j])];
                C* dst = (ni + 1 == nn && outDirect)
                             ? reinterpret_cast<C*>(outBase + static_cast<std::size_t>(outPos + b) * outEs)
                             : buf(ni);
                applyNode<C>(n, len, S.argPtrs.data(), dst, prog.mode);
                val[ni] = dst;
            }
            if (!outDirect)
                convertElements(val[nn - 1], cdt, outBase + static_cast<std::size_t>(outPos + b) * outEs, out.dtype(),
                                len);
        }
        outPos += inner;
        // advance the odometer over the outer dims
        for (std::size_t a = last; a-- > 0;) {
            ++idx[a];
            for (std::size_t i = 0; i < k; ++i) off[i] += L.stride(i, a);
            if (idx[a] < L.dims[a]) break;
            for (std::size_t i = 0; i < k; ++i) off[i] -= L.stride(i, a) * idx[a];
            idx[a] = 0;
        }
    }
}

// A chain program (compileChain): each step in place over blocks of a row that stay in L1, with
// applyNode's float arithmetic (operand order kept), so the bits equal the interpreted program's.
void epilogueChain(const RowEpilogue& e, float* y, std::int64_t c0, std::int64_t c1, std::int64_t ldy,
                   std::int64_t len) {
    constexpr std::int64_t kRowBlock = 2048;
    for (std::int64_t c = c0; c < c1; ++c) {
        float* row = y + (c - c0) * ldy;
        for (std::int64_t b = 0; b < len; b += kRowBlock) {
            float* __restrict v = row + b;
            const std::int64_t n = std::min(kRowBlock, len - b);
            for (const ChainStep& st : e.chain) {
                const float k = st.input >= 0 ? e.values[static_cast<std::size_t>(st.input)]
                                                        [c * e.channelStride[static_cast<std::size_t>(st.input)]]
                                              : 0.0f;
                switch (st.op) {
                case ScalarOp::Add:
                    if (st.constFirst)
                        for (std::int64_t i = 0; i < n; ++i) v[i] = k + v[i];
                    else
                        for (std::int64_t i = 0; i < n; ++i) v[i] = v[i] + k;
                    break;
                case ScalarOp::Mul:
                    if (st.constFirst)
                        for (std::int64_t i = 0; i < n; ++i) v[i] = k * v[i];
                    else
                        for (std::int64_t i = 0; i < n; ++i) v[i] = v[i] * k;
                    break;
                case ScalarOp::Sub:
                    if (st.constFirst)
                        for (std::int64_t i = 0; i < n; ++i) v[i] = k - v[i];
                    else
                        for (std::int64_t i = 0; i < n; ++i) v[i] = v[i] - k;
                    break;
                case ScalarOp::TrueDiv:
                    if (st.constFirst)
                        for (std::int64_t i = 0; i < n; ++i) v[i] = k / v[i];
                    else
                        for (std::int64_t i = 0; i < n; ++i) v[i] = v[i] / k;
                    break;
                case ScalarOp::Maximum:
                    if (st.constFirst)
                        for (std::int64_t i = 0; i < n; ++i) v[i] = maxOf(k, v[i]);
                    else
                        for (std::int64_t i = 0; i < n; ++i) v[i] = maxOf(v[i], k);
                    break;
                case ScalarOp::Minimum:
                    if (st.constFirst)
                        for (std::int64_t i = 0; i < n; ++i) v[i] = minOf(k, v[i]);
                    else
                        for (std::int64_t i = 0; i < n; ++i) v[i] = minOf(v[i], k);
                    break;
                case ScalarOp::Relu:
                    for (std::int64_t i = 0; i < n; ++i) v[i] = reluOf(v[i]);
                    break;
                case ScalarOp::Clip: {
                    const float lo = st.lo, hi = st.hi;
                    for (std::int64_t i = 0; i < n; ++i) v[i] = clipOf(v[i], lo, hi);
                    break;
                }
                default: break; // compileChain admits no other op
                }
            }
        }
    }
}

// A float-mode program applied in place to rows of a float32 output (epilogue fusion, see
// ElemwiseEngine.h): a chain program through epilogueChain, any other with the same blocks of
// kBlock and the same applyNode as run<float>; either way the bits equal those of the
// element-wise node run on its own.
void epilogueRows(const ScalarProgram& prog, const RowEpilogue& e, float* y, std::int64_t c0, std::int64_t c1,
                  std::int64_t ldy, std::int64_t len) {
    if (!e.chain.empty()) {
        epilogueChain(e, y, c0, c1, ldy, len);
        return;
    }
    thread_local Scratch<float> S;
    const std::size_t nn = prog.nodes.size();
    if (S.bufStore.size() < nn * kBlock) S.bufStore.resize(nn * kBlock);
    float* bufBase = S.bufStore.data();
    auto buf = [&](std::size_t i) { return bufBase + i * kBlock; };
    S.val.assign(nn, nullptr);
    const float** val = S.val.data();
    S.argPtrs.resize(8);
    for (std::int64_t c = c0; c < c1; ++c) {
        float* row = y + (c - c0) * ldy;
        for (std::int64_t b = 0; b < len; b += kBlock) {
            const int n = static_cast<int>(std::min<std::int64_t>(kBlock, len - b));
            for (std::size_t ni = 0; ni < nn; ++ni) {
                const ExprNode& nd = prog.nodes[ni];
                if (nd.op == ScalarOp::Input) {
                    const std::size_t in = static_cast<std::size_t>(nd.input);
                    if (nd.input == e.yInput) {
                        val[ni] = row + b;
                    } else {
                        // the row's value, filled once per row (no node writes an input's buffer)
                        if (b == 0)
                            std::fill(buf(ni), buf(ni) + std::min<std::int64_t>(kBlock, len),
                                      e.values[in][c * e.channelStride[in]]);
                        val[ni] = buf(ni);
                    }
                    continue;
                }
                if (S.argPtrs.size() < nd.args.size()) S.argPtrs.resize(nd.args.size());
                for (std::size_t j = 0; j < nd.args.size(); ++j)
                    S.argPtrs[j] = val[static_cast<std::size_t>(nd.args[j])];
                float* dst = ni + 1 == nn ? row + b : buf(ni);
                applyNode<float>(nd, n, S.argPtrs.data(), dst, prog.mode);
                val[ni] = dst;
            }
        }
    }
}

// Output index range [lo, hi) for which in = o*stride + off lies in [0, n).
inline void validRange(std::int64_t outLen, std::int64_t stride, std::int64_t off, std::int64_t n, std::int64_t& lo,
                       std::int64_t& hi) {
    // o*stride + off >= 0  ->  o >= ceil(-off / stride)
    lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    // o*stride + off <= n-1 -> o <= floor((n-1-off)/stride)
    const std::int64_t top = n - 1 - off;
    hi = top < 0 ? 0 : std::min<std::int64_t>(outLen, top / stride + 1);
    if (lo > hi) lo = hi;
}

#if defined(__AVX512F__)
#include "LoopsAvx512.inl"
#endif

// dst[j] = src[j * stride] for j < n with a vector gather where this build has one (float,
// stride 2, AVX-512); false when the caller must copy.
template <class T> inline bool gatherStrided(const T* src, T* dst, std::int64_t n, std::int64_t stride) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float>)
        if (stride == 2) {
            deinterleaveRow16(src, 2 * n - 1, dst, n, nullptr, 0); // the even elements only
            return true;
        }
#endif
    (void)src, (void)dst, (void)n, (void)stride;
    return false;
}

template <class T>
void im2col(const T* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t KH, std::int64_t KW,
            std::int64_t OH, std::int64_t OW, const Conv2dParams& p, T* cols) {
    const std::int64_t N = OH * OW;
    for (std::int64_t ch = 0; ch < C; ++ch)
        for (std::int64_t kh = 0; kh < KH; ++kh)
            for (std::int64_t kw = 0; kw < KW; ++kw) {
                T* row = cols + ((ch * KH + kh) * KW + kw) * N;
                const std::int64_t offW = kw * p.dilW - p.padLeft;
                std::int64_t w0, w1;
                validRange(OW, p.strideW, offW, W, w0, w1);
                for (std::int64_t oh = 0; oh < OH; ++oh) {
                    T* r = row + oh * OW;
                    const std::int64_t ih = oh * p.strideH - p.padTop + kh * p.dilH;
                    if (ih < 0 || ih >= H) {
                        std::memset(r, 0, static_cast<std::size_t>(OW) * sizeof(T));
                        continue;
                    }
                    const T* src = x + (ch * H + ih) * W;
                    for (std::int64_t ow = 0; ow < w0; ++ow) r[ow] = 0;
                    if (p.strideW == 1) {
                        if (w1 > w0)
                            std::memcpy(r + w0, src + w0 + offW, static_cast<std::size_t>(w1 - w0) * sizeof(T));
                    } else if (w1 > w0 && !gatherStrided(src + w0 * p.strideW + offW, r + w0, w1 - w0, p.strideW)) {
                        for (std::int64_t ow = w0; ow < w1; ++ow) r[ow] = src[ow * p.strideW + offW];
                    }
                    for (std::int64_t ow = w1; ow < OW; ++ow) r[ow] = 0;
                }
            }
}

// Depthwise: one input channel per group. Each channel plane is copied into a zero-padded
// buffer so the inner loops have no bounds checks; 3x3 kernels get an unrolled loop.
// 3x3 undilated depthwise convolution over a flattened plane, for small outputs (stride 1) and
// stride 2: the zero-padded input (stride 2: split into 4 planes by row and column parity, so
// every tap is a contiguous read) is read as one array, the 9 taps are summed in the order of
// the row-wise kernel below (w0 .. w8, same bits) for every flattened position q = oh * Wq + ow
// of one long contiguous loop (the Wq - OW positions past a row's end are computed and dropped),
// then the rows are copied to y. No short rows, no scalar tails per row.
template <class T>
void depthwise3x3Flat(const T* x, const T* w, T* y, std::int64_t C, std::int64_t mult, std::int64_t H, std::int64_t W,
                      std::int64_t OH, std::int64_t OW, const Conv2dParams& p) {
    const bool s2 = p.strideH == 2;
    // stride 1: one plane Hq x Wq = (OH + 2) x (OW + 2); stride 2: planes [row parity][col parity]
    // of (OH + 1) x (OW + 1), plane (rp, cp)[a][b] = padded[2a + rp][2b + cp]
    const std::int64_t Wq = s2 ? OW + 1 : OW + 2, Hq = s2 ? OH + 1 : OH + 2, plane = Hq * Wq;
    const std::int64_t Hp = s2 ? 2 * OH + 1 : OH + 2, Wp = s2 ? 2 * OW + 1 : OW + 2; // padded rows / cols read
    thread_local std::vector<T> planes, out;
    planes.assign(static_cast<std::size_t>(s2 ? 4 * plane : plane), T(0));
    const std::int64_t L = (OH - 1) * Wq + OW;
    if (out.size() < static_cast<std::size_t>(L)) out.resize(static_cast<std::size_t>(L));
    T* P = planes.data();
    T* F = out.data();
    const std::int64_t n = std::min(W, Wp - p.padLeft);
    for (std::int64_t ch = 0; ch < C; ++ch) {
        const T* xc = x + ch * H * W;
        for (std::int64_t i = 0; i < H && n > 0; ++i) {
            const std::int64_t r = i + p.padTop;
            if (r >= Hp) break;
            const T* src = xc + i * W;
            if (!s2) {
                std::memcpy(P + r * Wq + p.padLeft, src, static_cast<std::size_t>(n) * sizeof(T));
                continue;
            }
            // padded column pc = c + padLeft goes to plane column pc / 2 of parity pc % 2
            T* rowE = P + ((r & 1) * 2) * plane + (r >> 1) * Wq;
            T* rowO = rowE + plane;
            const std::int64_t ce = p.padLeft % 2; // first c with an even padded column
            T* e = rowE + (ce + p.padLeft) / 2;
            T* o = rowO + (1 - ce + p.padLeft) / 2;
            for (std::int64_t j = 0; ce + 2 * j < n; ++j) e[j] = src[ce + 2 * j];
            for (std::int64_t j = 0; 1 - ce + 2 * j < n; ++j) o[j] = src[1 - ce + 2 * j];
        }
        for (std::int64_t m = 0; m < mult; ++m) {
            const std::int64_t f = ch * mult + m;
            const T* wf = w + f * 9;
            const T w0 = wf[0], w1 = wf[1], w2 = wf[2], w3 = wf[3], w4 = wf[4], w5 = wf[5], w6 = wf[6], w7 = wf[7],
                    w8 = wf[8];
            // few pointers (the taps are fixed offsets from them), so the loop keeps them and the
            // nine weights in registers
            if (s2) {
                // tap (kh, kw) reads plane (kh % 2, kw % 2) at q + (kh / 2) * Wq + kw / 2
                const T* ee = P;
                const T* eo = P + plane;
                const T* oe = P + 2 * plane;
                const T* oo = P + 3 * plane;
                const T* ee2 = ee + Wq;
                const T* eo2 = eo + Wq;
                for (std::int64_t q = 0; q < L; ++q)
                    F[q] = w0 * ee[q] + w1 * eo[q] + w2 * ee[q + 1] + w3 * oe[q] + w4 * oo[q] + w5 * oe[q + 1] +
                           w6 * ee2[q] + w7 * eo2[q] + w8 * ee2[q + 1];
            } else {
                const T* r0 = P;
                const T* r1 = P + Wq;
                const T* r2 = P + 2 * Wq;
                for (std::int64_t q = 0; q < L; ++q)
                    F[q] = w0 * r0[q] + w1 * r0[q + 1] + w2 * r0[q + 2] + w3 * r1[q] + w4 * r1[q + 1] + w5 * r1[q + 2] +
                           w6 * r2[q] + w7 * r2[q + 1] + w8 * r2[q + 2];
            }
            T* yf = y + f * OH * OW;
            for (std::int64_t oh = 0; oh < OH; ++oh)
                std::memcpy(yf + oh * OW, F + oh * Wq, static_cast<std::size_t>(OW) * sizeof(T));
        }
    }
}

template <class T>
void depthwise(const T* x, const T* w, T* y, std::int64_t C, std::int64_t mult, std::int64_t H, std::int64_t W,
               std::int64_t KH, std::int64_t KW, std::int64_t OH, std::int64_t OW, const Conv2dParams& p) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float>) {
        // read per call (once per channel chunk of ~64 KiB of output: ~50 ns against tens of
        // microseconds), so bench_exec --ab can switch it between runs
        const char* sw = std::getenv("PASSLENS_DEPTHWISE_AVX512");
        if (KH == 3 && KW == 3 && p.dilH == 1 && p.dilW == 1 && p.strideH == p.strideW &&
            (p.strideH == 1 || p.strideH == 2) && OH > 0 && OW > 0 && !(sw && std::strcmp(sw, "off") == 0)) {
            depthwise3x3Avx512(x, w, y, C, mult, H, W, OH, OW, p);
            return;
        }
    }
#endif
    if (KH == 3 && KW == 3 && p.dilH == 1 && p.dilW == 1 && p.strideH == p.strideW &&
        (p.strideH == 2 || (p.strideH == 1 && OW <= 16)) && OH > 0 && OW > 0) {
        depthwise3x3Flat(x, w, y, C, mult, H, W, OH, OW, p);
        return;
    }
    thread_local std::vector<T> padBuf;
    // rows/cols of the padded plane actually read
    const std::int64_t Hp = std::max(H + p.padTop, (OH - 1) * p.strideH + (KH - 1) * p.dilH + 1);
    const std::int64_t Wp = std::max(W + p.padLeft, (OW - 1) * p.strideW + (KW - 1) * p.dilW + 1);
    const std::int64_t sh = p.strideH, sw = p.strideW, dh = p.dilH, dw = p.dilW;
    const bool s2 = KH == 3 && KW == 3 && sw == 2 && dw == 1;
    thread_local std::vector<T> splitBuf;
    // Wp >= 2*OW + 1, so each half row has OW + 1 entries
    const std::int64_t Wh = (Wp + 1) / 2;
    if (s2)
        splitBuf.assign(static_cast<std::size_t>(2 * Hp * Wh), T(0));
    else
        padBuf.assign(static_cast<std::size_t>(Hp * Wp), T(0));
    T* ev = s2 ? splitBuf.data() : nullptr;
    T* od = s2 ? ev + Hp * Wh : nullptr;
    for (std::int64_t ch = 0; ch < C; ++ch) {
        const T* xc = x + ch * H * W;
        T* xp = padBuf.data();
        for (std::int64_t i = 0; i < H; ++i) {
            const std::int64_t r = i + p.padTop;
            if (r >= Hp) break;
            const std::int64_t n = std::min(W, Wp - p.padLeft);
            if (n <= 0) continue;
            if (s2) {
                // padded column pc = c + padLeft goes to ev[pc/2] (even) or od[pc/2] (odd)
                const T* src = xc + i * W;
                const std::int64_t ce = p.padLeft % 2; // first c with an even padded column
                T* e = ev + r * Wh + (ce + p.padLeft) / 2;
                T* o = od + r * Wh + (1 - ce + p.padLeft) / 2;
                for (std::int64_t j = 0; ce + 2 * j < n; ++j) e[j] = src[ce + 2 * j];
                for (std::int64_t j = 0; 1 - ce + 2 * j < n; ++j) o[j] = src[1 - ce + 2 * j];
            } else {
                std::memcpy(xp + r * Wp + p.padLeft, xc + i * W, static_cast<std::size_t>(n) * sizeof(T));
            }
        }
        for (std::int64_t m = 0; m < mult; ++m) {
            const std::int64_t f = ch * mult + m;
            const T* wf = w + f * KH * KW;
            T* yf = y + f * OH * OW;
            for (std::int64_t oh = 0; oh < OH; ++oh) {
                T* yr = yf + oh * OW;
                const T* base = s2 ? nullptr : xp + (oh * sh) * Wp;
                if (KH == 3 && KW == 3 && sw == 1 && dw == 1) {
                    const T* r0 = base;
                    const T* r1 = base + dh * Wp;
                    const T* r2 = base + 2 * dh * Wp;
                    const T w0 = wf[0], w1 = wf[1], w2 = wf[2], w3 = wf[3], w4 = wf[4], w5 = wf[5], w6 = wf[6],
                            w7 = wf[7], w8 = wf[8];
                    for (std::int64_t ow = 0; ow < OW; ++ow)
                        yr[ow] = w0 * r0[ow] + w1 * r0[ow + 1] + w2 * r0[ow + 2] + w3 * r1[ow] + w4 * r1[ow + 1] +
                                 w5 * r1[ow + 2] + w6 * r2[ow] + w7 * r2[ow + 1] + w8 * r2[ow + 2];
                } else if (s2) {
                    // rows of the even / odd split plane: column 2*ow + k is ev[ow + k/2] (k even)
                    // or od[ow] (k = 1)
                    const T* e0 = ev + (oh * sh) * Wh;
                    const T* e1 = e0 + dh * Wh;
                    const T* e2 = e0 + 2 * dh * Wh;
                    const T* o0 = od + (oh * sh) * Wh;
                    const T* o1 = o0 + dh * Wh;
                    const T* o2 = o0 + 2 * dh * Wh;
                    const T w0 = wf[0], w1 = wf[1], w2 = wf[2], w3 = wf[3], w4 = wf[4], w5 = wf[5], w6 = wf[6],
                            w7 = wf[7], w8 = wf[8];
                    for (std::int64_t ow = 0; ow < OW; ++ow)
                        yr[ow] = w0 * e0[ow] + w1 * o0[ow] + w2 * e0[ow + 1] + w3 * e1[ow] + w4 * o1[ow] +
                                 w5 * e1[ow + 1] + w6 * e2[ow] + w7 * o2[ow] + w8 * e2[ow + 1];
                } else {
                    for (std::int64_t ow = 0; ow < OW; ++ow) yr[ow] = 0;
                    for (std::int64_t kh = 0; kh < KH; ++kh) {
                        const T* xr = base + kh * dh * Wp;
                        for (std::int64_t kw = 0; kw < KW; ++kw) {
                            const T wv = wf[kh * KW + kw];
                            const T* xs = xr + kw * dw;
                            if (sw == 1)
                                for (std::int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * xs[ow];
                            else
                                for (std::int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * xs[ow * sw];
                        }
                    }
                }
            }
        }
    }
}

// Winograd F(m x m, 3 x 3) transforms (m = 2: 4x4 tiles, m = 4: 6x6 tiles), as 1-d transforms
// over whole rows of tiles, so every loop runs over contiguous arrays. Input: the channel plane
// is copied into a zero-padded plane; per tile row, B^T over the a plane rows (vectorised over
// columns), then the rows are split into a phase arrays (ph_j[t] = row[m t + j]) and B^T runs
// over the phases, writing V[a*a][C][T] (T = TH*TW tiles, row-major) contiguously. Output:
// M[a*a][F][T] -> A^T over the columns, then over the rows, then interleaved into y[F][OH][OW]
// (+ bias[f] when given), border tiles clipped.

// r[k*rs + l] = (B^T d)[k] for l < n, with d[i] at d[i*ds + l].
template <int A>
inline void winoBT(const float* __restrict d, std::int64_t ds, float* __restrict r, std::int64_t rs, std::int64_t n) {
    if constexpr (A == 4) {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l];
            r[l] = d0 - d2;
            r[rs + l] = d1 + d2;
            r[2 * rs + l] = d2 - d1;
            r[3 * rs + l] = d1 - d3;
        }
    } else {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l], d4 = d[4 * ds + l],
                        d5 = d[5 * ds + l];
            r[l] = (4.0f * d0 - 5.0f * d2) + d4;
            r[rs + l] = (d3 + d4) - 4.0f * (d1 + d2);
            r[2 * rs + l] = 4.0f * (d1 - d2) + (d4 - d3);
            r[3 * rs + l] = 2.0f * (d3 - d1) + (d4 - d2);
            r[4 * rs + l] = 2.0f * (d1 - d3) + (d4 - d2);
            r[5 * rs + l] = (4.0f * d1 - 5.0f * d3) + d5;
        }
    }
}

// r[k*rs + l] = (A^T d)[k], k < m.
template <int A>
inline void winoAT(const float* __restrict d, std::int64_t ds, float* __restrict r, std::int64_t rs, std::int64_t n) {
    if constexpr (A == 4) {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l];
            r[l] = (d0 + d1) + d2;
            r[rs + l] = (d1 - d2) - d3;
        }
    } else {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l], d4 = d[4 * ds + l],
                        d5 = d[5 * ds + l];
            const float s12 = d1 + d2, d12 = d1 - d2, s34 = d3 + d4, d34 = d3 - d4;
            r[l] = (d0 + s12) + s34;
            r[rs + l] = d12 + 2.0f * d34;
            r[2 * rs + l] = s12 + 4.0f * s34;
            r[3 * rs + l] = (d12 + 8.0f * d34) + d5;
        }
    }
}

template <int A>
void winogradInputT(const float* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t padTop,
                    std::int64_t padLeft, std::int64_t TH, std::int64_t TW, float* V) {
    constexpr int M = A - 2;
    const std::int64_t T = TH * TW;
    const std::int64_t Hp = TH * M + 2, Wp = TW * M + 2;
    thread_local std::vector<float> plane, rows, ph;
    plane.assign(static_cast<std::size_t>(Hp * Wp), 0.0f);
    rows.resize(static_cast<std::size_t>(TH * A * Wp));
    ph.resize(static_cast<std::size_t>(A * A * T));
    const std::int64_t c0 = std::max<std::int64_t>(0, -padLeft), c1 = std::min<std::int64_t>(W, Wp - padLeft);
    const std::int64_t r0 = std::max<std::int64_t>(0, -padTop), r1 = std::min<std::int64_t>(H, Hp - padTop);
    float* P = plane.data();
    float* R = rows.data();
    float* Q = ph.data();
    for (std::int64_t ch = 0; ch < C; ++ch) {
        const float* xc = x + ch * H * W;
        if (c1 > c0)
            for (std::int64_t i = r0; i < r1; ++i)
                std::memcpy(P + (i + padTop) * Wp + c0 + padLeft, xc + i * W + c0,
                            static_cast<std::size_t>(c1 - c0) * sizeof(float));
        // B^T over the a plane rows of each tile row: R[th][k][Wp]
        for (std::int64_t th = 0; th < TH; ++th) winoBT<A>(P + th * M * Wp, Wp, R + th * A * Wp, Wp, Wp);
        // phases: Q[k][j][th*TW + t] = R[th][k][t*m + j]
        for (std::int64_t th = 0; th < TH; ++th)
            for (int k = 0; k < A; ++k) {
                const float* row = R + (th * A + k) * Wp;
                float* q = Q + static_cast<std::int64_t>(k) * A * T + th * TW;
                for (int j = 0; j < A; ++j)
#pragma GCC ivdep
                    for (std::int64_t t = 0; t < TW; ++t) q[j * T + t] = row[t * M + j];
            }
        // B^T over the phases, into V[k*a + j'][ch][T]
        for (int k = 0; k < A; ++k)
            winoBT<A>(Q + static_cast<std::int64_t>(k) * A * T, T,
                      V + ((static_cast<std::int64_t>(k) * A) * C + ch) * T, C * T, T);
        // clear the rows written (the zero border is kept)
        if (c1 > c0)
            for (std::int64_t i = r0; i < r1; ++i)
                std::memset(P + (i + padTop) * Wp + c0 + padLeft, 0, static_cast<std::size_t>(c1 - c0) * sizeof(float));
    }
}

template <int A>
void winogradOutputT(const float* Mv, std::int64_t F, std::int64_t TH, std::int64_t TW, std::int64_t OH,
                     std::int64_t OW, const float* bias, float* y) {
    constexpr int M = A - 2;
    const std::int64_t T = TH * TW;
    thread_local std::vector<float> hbuf, obuf;
    hbuf.resize(static_cast<std::size_t>(A * M * T));
    obuf.resize(static_cast<std::size_t>(M * M * T));
    float* Hb = hbuf.data();
    float* O = obuf.data();
    const std::int64_t full = std::min(TW, OW / M); // tiles whose m columns are all inside
    for (std::int64_t f = 0; f < F; ++f) {
        const float b = bias ? bias[f] : 0.0f;
        float* yf = y + f * OH * OW;
        // over the columns: Hb[i][j'][T]
        for (int i = 0; i < A; ++i)
            winoAT<A>(Mv + ((static_cast<std::int64_t>(i) * A) * F + f) * T, F * T, Hb + i * M * T, T, T);
        // over the rows: O[i'][j'][T]
        for (int j = 0; j < M; ++j) winoAT<A>(Hb + j * T, M * T, O + j * T, M * T, T);
        for (std::int64_t th = 0; th < TH; ++th)
            for (int i = 0; i < M; ++i) {
                const std::int64_t oh = th * M + i;
                if (oh >= OH) break;
                float* yr = yf + oh * OW;
                const float* o = O + i * M * T + th * TW;
                if (bias) {
                    for (std::int64_t t = 0; t < full; ++t)
                        for (int j = 0; j < M; ++j) yr[t * M + j] = o[j * T + t] + b;
                    for (std::int64_t t = full; t < TW; ++t)
                        for (int j = 0; j < M && t * M + j < OW; ++j) yr[t * M + j] = o[j * T + t] + b;
                } else {
                    for (std::int64_t t = 0; t < full; ++t)
                        for (int j = 0; j < M; ++j) yr[t * M + j] = o[j * T + t];
                    for (std::int64_t t = full; t < TW; ++t)
                        for (int j = 0; j < M && t * M + j < OW; ++j) yr[t * M + j] = o[j * T + t];
                }
            }
    }
}

void winogradInput(const float* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t padTop,
                   std::int64_t padLeft, std::int64_t TH, std::int64_t TW, int m, float* V) {
    if (m == 2)
        winogradInputT<4>(x, C, H, W, padTop, padLeft, TH, TW, V);
    else
        winogradInputT<6>(x, C, H, W, padTop, padLeft, TH, TW, V);
}

void winogradOutput(const float* Mv, std::int64_t F, std::int64_t TH, std::int64_t TW, std::int64_t OH, std::int64_t OW,
                    int m, const float* bias, float* y) {
    if (m == 2)
        winogradOutputT<4>(Mv, F, TH, TW, OH, OW, bias, y);
    else
        winogradOutputT<6>(Mv, F, TH, TW, OH, OW, bias, y);
}

// Pooling, separable: per input row the window maxima / sums over columns, then over rows.
// Windows follow Theano's pool.py: in padded coordinates, clipped to the padded image; max, sum
// and average_exc_pad use only real elements, average_inc_pad divides by the clipped window.
// Max pooling with 3-wide windows at column stride 2 and no left padding (squeezenet's 3x3 /
// stride 2, ceil mode), directly over the output: per output row, each window row's maximum over
// its 3 columns (x[2q], x[2q + 1], x[2q + 2]; the third read through a second pointer so the
// compiler vectorises the stride-2 loads) is folded into the output row, which stays in L1. No
// column or row buffers. The separable kernel's order of comparisons is kept (per window row from
// -inf over the columns left to right, then over the rows top to bottom), so the bits are the
// same, NaN and signed zeros included.
template <class T>
void maxPoolW3S2(const T* x, T* y, std::int64_t planes, std::int64_t H, std::int64_t W, std::int64_t OH,
                 std::int64_t OW, std::int64_t kh, std::int64_t sh, std::int64_t pt, std::int64_t pb, std::int64_t pr) {
    const std::int64_t rows = H + pt + pb, cols = W + pr;
    const T init = -std::numeric_limits<T>::infinity();
    // full windows [0, qb): columns 2q .. 2q + 2 inside the row
    std::int64_t qb = OW;
    while (qb > 0 && ((qb - 1) * 2 + 3 > W || (qb - 1) * 2 + 3 > cols)) --qb;
    for (std::int64_t pl_ = 0; pl_ < planes; ++pl_) {
        const T* xp = x + pl_ * H * W;
        T* yp = y + pl_ * OH * OW;
        for (std::int64_t r = 0; r < OH; ++r) {
            const std::int64_t r0 = r * sh, r1 = std::min(r0 + kh, rows);
            const std::int64_t i0 = std::max(r0, pt) - pt, i1 = std::max(std::min(r1, H + pt) - pt, i0);
            T* __restrict yr = yp + r * OW;
            for (std::int64_t q = 0; q < OW; ++q) yr[q] = init;
            for (std::int64_t i = i0; i < i1; ++i) {
                const T* __restrict xs = xp + i * W;
                const T* __restrict xs2 = xs + 2;
                for (std::int64_t q = 0; q < qb; ++q) {
                    const T a = xs[2 * q], b = xs[2 * q + 1], c = xs2[2 * q];
                    T h = a > init ? a : init;
                    h = b > h ? b : h;
                    h = c > h ? c : h;
                    yr[q] = h > yr[q] ? h : yr[q];
                }
                for (std::int64_t q = qb; q < OW; ++q) {
                    const std::int64_t j0 = std::min(q * 2, W), j1 = std::min(std::min(q * 2 + 3, cols), W);
                    T m = init;
                    for (std::int64_t j = j0; j < j1; ++j) m = xs[j] > m ? xs[j] : m;
                    yr[q] = m > yr[q] ? m : yr[q];
                }
            }
        }
    }
}

template <class T>
void poolT(const T* x, T* y, std::int64_t planes, std::int64_t H, std::int64_t W, std::int64_t OH, std::int64_t OW,
           std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t pt, std::int64_t pb,
           std::int64_t pl, std::int64_t pr, PoolMode mode) {
    const bool isMax = mode == PoolMode::Max;
    // PASSLENS_POOL_SEPARABLE=1: the separable kernel for every window (read per call, for tests)
    const char* sep = std::getenv("PASSLENS_POOL_SEPARABLE");
    const bool separableOnly = sep && *sep && std::strcmp(sep, "0") != 0;
    if (isMax && kw == 3 && sw == 2 && pl == 0 && !separableOnly)
        return maxPoolW3S2(x, y, planes, H, W, OH, OW, kh, sh, pt, pb, pr);
    const std::int64_t rows = H + pt + pb, cols = W + pl + pr;
    thread_local std::vector<std::int64_t> cc0, cc1, cpad;
    thread_local std::vector<T> hbuf;
    cc0.resize(static_cast<std::size_t>(OW));
    cc1.resize(static_cast<std::size_t>(OW));
    cpad.resize(static_cast<std::size_t>(OW));
    for (std::int64_t q = 0; q < OW; ++q) {
        const std::int64_t c0 = q * sw, c1 = std::min(c0 + kw, cols);
        cc0[static_cast<std::size_t>(q)] = std::max(c0, pl) - pl;
        cc1[static_cast<std::size_t>(q)] = std::max(std::min(c1, W + pl) - pl, cc0[static_cast<std::size_t>(q)]);
        cpad[static_cast<std::size_t>(q)] = c1 - c0;
    }
    hbuf.resize(static_cast<std::size_t>(H * OW));
    // stride 2: each row is split into its even and odd columns so the window loops are contiguous
    thread_local std::vector<T> evenOdd;
    const std::int64_t half = (W + 1) / 2;
    if (sw == 2) evenOdd.resize(static_cast<std::size_t>(2 * half));
    const T init = isMax ? -std::numeric_limits<T>::infinity() : T(0);
    for (std::int64_t pl_ = 0; pl_ < planes; ++pl_) {
        const T* xp = x + pl_ * H * W;
        T* yp = y + pl_ * OH * OW;
        // columns: full windows [qa, qb) vectorised over q (tap-outer loop), clipped ones scalar
        std::int64_t qa = 0, qb = OW;
        while (qa < OW && (qa * sw - pl < 0)) ++qa;
        while (qb > qa && ((qb - 1) * sw - pl + kw > W || (qb - 1) * sw + kw > cols)) --qb;
        for (std::int64_t i = 0; i < H; ++i) {
            const T* xr = xp + i * W;
            T* hr = hbuf.data() + i * OW;
            for (std::int64_t q = 0; q < OW; ++q) hr[q] = init;
            if (sw == 2 && qb > qa) {
                T* ev = evenOdd.data();
                T* od = ev + half;
                for (std::int64_t j = 0; j < W / 2; ++j) {
                    ev[j] = xr[2 * j];
                    od[j] = xr[2 * j + 1];
                }
                if (W % 2) ev[W / 2] = xr[W - 1];
                for (std::int64_t t = 0; t < kw; ++t) {
                    // column 2q + u, u = t - pl: even u -> ev[q + u/2], odd u -> od[q + floor(u/2)]
                    const std::int64_t u = t - pl;
                    const std::int64_t fu = u >= 0 ? u / 2 : -((-u + 1) / 2);
                    const T* xs = ((u % 2) == 0 ? ev : od) + fu;
                    if (isMax)
                        for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[q] > hr[q] ? xs[q] : hr[q];
                    else
                        for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[q];
                }
            } else
                for (std::int64_t t = 0; t < kw; ++t) {
                    const T* xs = xr + t - pl;
                    if (isMax) {
                        if (sw == 1)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[q] > hr[q] ? xs[q] : hr[q];
                        else if (sw == 2)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[2 * q] > hr[q] ? xs[2 * q] : hr[q];
                        else
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[q * sw] > hr[q] ? xs[q * sw] : hr[q];
                    } else {
                        if (sw == 1)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[q];
                        else if (sw == 2)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[2 * q];
                        else
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[q * sw];
                    }
                }
            auto border = [&](std::int64_t q) {
                T m = init;
                for (std::int64_t j = cc0[static_cast<std::size_t>(q)]; j < cc1[static_cast<std::size_t>(q)]; ++j)
                    m = isMax ? (xr[j] > m ? xr[j] : m) : m + xr[j];
                hr[q] = m;
            };
            for (std::int64_t q = 0; q < qa; ++q) border(q);
            for (std::int64_t q = std::max(qa, qb); q < OW; ++q) border(q);
        }
        // rows
        for (std::int64_t r = 0; r < OH; ++r) {
            const std::int64_t r0 = r * sh, r1 = std::min(r0 + kh, rows);
            const std::int64_t i0 = std::max(r0, pt) - pt, i1 = std::max(std::min(r1, H + pt) - pt, i0);
            T* yr = yp + r * OW;
            for (std::int64_t q = 0; q < OW; ++q) yr[q] = init;
            for (std::int64_t i = i0; i < i1; ++i) {
                const T* hr = hbuf.data() + i * OW;
                if (isMax)
                    for (std::int64_t q = 0; q < OW; ++q) yr[q] = hr[q] > yr[q] ? hr[q] : yr[q];
                else
                    for (std::int64_t q = 0; q < OW; ++q) yr[q] += hr[q];
            }
            if (mode == PoolMode::AvgIncPad) {
                for (std::int64_t q = 0; q < OW; ++q) {
                    const std::int64_t cnt = (r1 - r0) * cpad[static_cast<std::size_t>(q)];
                    yr[q] = cnt > 0 ? yr[q] / static_cast<T>(cnt) : T(0);
                }
            } else if (mode == PoolMode::AvgExcPad) {
                for (std::int64_t q = 0; q < OW; ++q) {
                    const std::int64_t cnt =
                        (i1 - i0) * (cc1[static_cast<std::size_t>(q)] - cc0[static_cast<std::size_t>(q)]);
                    yr[q] = cnt > 0 ? yr[q] / static_cast<T>(cnt) : T(0);
                }
            }
        }
    }
}

} // namespace

const LoopTable& table() {
    static const LoopTable t = {
        PASSLENS_LOOPS_NAME,
        [](const ScalarProgram& p, const std::vector<Tensor>& in, Tensor& out) { run<float>(p, in, out); },
        [](const ScalarProgram& p, const std::vector<Tensor>& in, Tensor& out) { run<double>(p, in, out); },
        [](const ScalarProgram& p, const std::vector<Tensor>& in, Tensor& out) { run<std::int64_t>(p, in, out); },
        &im2col<float>,
        &im2col<double>,
        &depthwise<float>,
        &depthwise<double>,
        &poolT<float>,
        &poolT<double>,
        &winogradInput,
        &winogradOutput,
        &epilogueRows,
    };
    return t;
}

} // namespace passlens::cpu::PASSLENS_LOOPS_NS
