// The element-wise part of the CPU backend's hot loops: the interpreted scalar programs (run),
// their integer wrap-around, and the epilogue rows fused into a GEMM or convolution output.
// Included by Loops.inl inside namespace passlens::cpu::PASSLENS_LOOPS_NS { namespace { ... } }.

constexpr int kBlock = 512;

double wrapInt(double v, DType d) {
    // as convertElements: uint64 holds [2^63, 2^64) too; beyond the 64-bit range (NaN) 0
    if (d == DType::UInt64 && v >= 0x1p63 && v < 0x1p64) return std::trunc(v);
    if (!(v >= -0x1p63 && v < 0x1p63)) return 0;
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
                r[i] = isNegative(x[i]) ? static_cast<C>(0ull - static_cast<std::uint64_t>(x[i])) : x[i];
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
        for (int i = 0; i < len; ++i) r[i] = static_cast<C>((x[i] > 0) - isNegative(x[i]));
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
    case ScalarOp::Xor:
        for (int i = 0; i < len; ++i) r[i] = (x[i] != 0) != (y[i] != 0);
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
            const C lo = integerClipBound<C>(n.p0, false), hi = integerClipBound<C>(n.p1, true);
            for (int i = 0; i < len; ++i) r[i] = clipOf(x[i], lo, hi);
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
    } else if constexpr (std::is_integral_v<C>) {
        if (n.dtype != DType::Int64 && n.dtype != DType::UInt64)
            for (int i = 0; i < len; ++i) r[i] = static_cast<C>(wrapInt64(static_cast<std::int64_t>(r[i]), n.dtype));
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
                if constexpr (std::is_same_v<C, std::int64_t>) {
                    if (n.unsigned64) { // the same 64-bit buffers read as uint64 (NumPy's uint64 semantics)
                        applyNode<std::uint64_t>(n, len,
                                                 reinterpret_cast<const std::uint64_t* const*>(S.argPtrs.data()),
                                                 reinterpret_cast<std::uint64_t*>(dst), prog.mode);
                        val[ni] = dst;
                        continue;
                    }
                }
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
