// CUDA kernels of the backend: element-wise programs (a fused composite is one kernel), strided
// copies, gathers, reductions, softmax, scans, im2col (+ cuBLAS) and depthwise convolution,
// pooling and batch normalisation. Semantics follow the CPU backend (kernels/src/cpu).
#include "CudaOps.h"
#include "Launch.h"

#include <passlens/ir/ScalarArith.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace passlens::cuda {

cudaStream_t streamOf(int device);
void checkLaunch(const char* what);

namespace {

using passlens::ScalarOp;

constexpr int kThreads = 256;

inline unsigned blocksFor(long long n) {
    const long long b = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(b < 1 ? 1 : (b > 2147483647LL ? 2147483647LL : b));
}

// blocks of a grid-stride kernel over n elements (capped: each thread then covers several)
inline unsigned strideBlocksFor(long long n) {
    const unsigned b = blocksFor(n);
    return b > 65535u * 32u ? 65535u * 32u : b;
}

struct Dims {
    long long shape[kMaxDims];
    int ndim;
};

// ------------------------------------------------------------------ typed loads and stores
template <class C> __device__ C load(const void* p, int dt, long long i) {
    switch (dt) {
    case Bool:
    case U8: return static_cast<C>(static_cast<const unsigned char*>(p)[i]);
    case I8: return static_cast<C>(static_cast<const signed char*>(p)[i]);
    case I16: return static_cast<C>(static_cast<const short*>(p)[i]);
    case U16: return static_cast<C>(static_cast<const unsigned short*>(p)[i]);
    case I32: return static_cast<C>(static_cast<const int*>(p)[i]);
    case U32: return static_cast<C>(static_cast<const unsigned int*>(p)[i]);
    case I64: return static_cast<C>(static_cast<const long long*>(p)[i]);
    case U64: return static_cast<C>(static_cast<const unsigned long long*>(p)[i]);
    case F32: return static_cast<C>(static_cast<const float*>(p)[i]);
    case F64: return static_cast<C>(static_cast<const double*>(p)[i]);
    default: return C(0);
    }
}

template <class C> __device__ long long toInt(C v) {
    if constexpr (std::is_floating_point<C>::value) {
        if (!(v == v) || v >= C(9.2e18) || v <= C(-9.2e18)) return 0;
    }
    return static_cast<long long>(v);
}

template <class C> __device__ void store(void* p, int dt, long long i, C v) {
    switch (dt) {
    case Bool: static_cast<unsigned char*>(p)[i] = v != C(0); break;
    case U8: static_cast<unsigned char*>(p)[i] = static_cast<unsigned char>(toInt(v)); break;
    case I8: static_cast<signed char*>(p)[i] = static_cast<signed char>(toInt(v)); break;
    case I16: static_cast<short*>(p)[i] = static_cast<short>(toInt(v)); break;
    case U16: static_cast<unsigned short*>(p)[i] = static_cast<unsigned short>(toInt(v)); break;
    case I32: static_cast<int*>(p)[i] = static_cast<int>(toInt(v)); break;
    case U32: static_cast<unsigned int*>(p)[i] = static_cast<unsigned int>(toInt(v)); break;
    case I64: static_cast<long long*>(p)[i] = toInt(v); break;
    case U64: static_cast<unsigned long long*>(p)[i] = static_cast<unsigned long long>(toInt(v)); break;
    case F32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case F64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    default: break;
    }
}

// ------------------------------------------------------------------ scalar semantics (as the CPU engine)
// pyMod, floorDiv, ipow and the comparison-based ops are ScalarArith.h's (one definition for the
// CPU loops, constant folding and these kernels).
template <class C> __device__ C roundTo(C v, int dt, int mode, bool compare) {
    if (dt == Bool && !compare) return v != C(0) ? C(1) : C(0);
    if constexpr (std::is_same<C, double>::value) {
        if (mode == 1) {
            if (dt == F32) return static_cast<double>(static_cast<float>(v));
            if (dt != F64 && dt != Bool) {
                const long long t = toInt(v);
                switch (dt) {
                case I8: return static_cast<signed char>(t);
                case I16: return static_cast<short>(t);
                case I32: return static_cast<int>(t);
                case U8: return static_cast<unsigned char>(t);
                case U16: return static_cast<unsigned short>(t);
                case U32: return static_cast<unsigned int>(t);
                case U64: return static_cast<double>(static_cast<unsigned long long>(t));
                default: return static_cast<double>(t);
                }
            }
        }
    } else if constexpr (std::is_same<C, long long>::value) {
        switch (dt) {
        case I8: return static_cast<signed char>(v);
        case I16: return static_cast<short>(v);
        case I32: return static_cast<int>(v);
        case U8: return static_cast<unsigned char>(v);
        case U16: return static_cast<unsigned short>(v);
        case U32: return static_cast<unsigned int>(v);
        default: break;
        }
    }
    return v;
}

template <class C> __device__ C evalNode(const ElemNode& n, const int* args, const C* v) {
    const C x = n.nargs > 0 ? v[args[n.argStart]] : C(0);
    const C y = n.nargs > 1 ? v[args[n.argStart + 1]] : C(0);
    switch (static_cast<ScalarOp>(n.op)) {
    case ScalarOp::Add: {
        C s = x;
        for (int j = 1; j < n.nargs; ++j) s += v[args[n.argStart + j]];
        return s;
    }
    case ScalarOp::Mul: {
        C s = x;
        for (int j = 1; j < n.nargs; ++j) s *= v[args[n.argStart + j]];
        return s;
    }
    case ScalarOp::Maximum: {
        C s = x;
        for (int j = 1; j < n.nargs; ++j) s = maxOf(s, v[args[n.argStart + j]]);
        return s;
    }
    case ScalarOp::Minimum: {
        C s = x;
        for (int j = 1; j < n.nargs; ++j) s = minOf(s, v[args[n.argStart + j]]);
        return s;
    }
    case ScalarOp::Sub: return x - y;
    case ScalarOp::TrueDiv:
        if constexpr (std::is_integral<C>::value)
            return y ? x / y : C(0);
        else
            return x / y;
    case ScalarOp::IntDiv: return floorDiv<C>(x, y);
    case ScalarOp::Mod: return pyMod<C>(x, y);
    case ScalarOp::Pow: return ipow<C>(x, y);
    case ScalarOp::Neg: return -x;
    case ScalarOp::Abs: return x < 0 ? -x : x;
    case ScalarOp::Sqr: return x * x;
    case ScalarOp::Relu: return reluOf(x);
    case ScalarOp::Sgn: return static_cast<C>((x > 0) - (x < 0));
    case ScalarOp::Lt: return x < y;
    case ScalarOp::Gt: return x > y;
    case ScalarOp::Le: return x <= y;
    case ScalarOp::Ge: return x >= y;
    case ScalarOp::Eq: return x == y;
    case ScalarOp::Neq: return x != y;
    case ScalarOp::And: return (x != 0) && (y != 0);
    case ScalarOp::Or: return (x != 0) || (y != 0);
    case ScalarOp::Not: return x == 0;
    case ScalarOp::Switch: return x != 0 ? y : v[args[n.argStart + 2]];
    case ScalarOp::Identity:
    case ScalarOp::Cast: return x;
    case ScalarOp::Clip: {
        if constexpr (std::is_integral<C>::value) {
            double d = static_cast<double>(x);
            d = fmin(fmax(d, static_cast<double>(n.p0)), static_cast<double>(n.p1));
            return static_cast<C>(d);
        } else {
            return clipOf(x, C(n.p0), C(n.p1));
        }
    }
    default: break;
    }
    if constexpr (std::is_integral<C>::value) {
        return x; // floor / ceil / round of integers; float functions never run in integer mode
    } else {
        switch (static_cast<ScalarOp>(n.op)) {
        case ScalarOp::Floor: return floor(x);
        case ScalarOp::Ceil: return ceil(x);
        case ScalarOp::Round: return rint(x);
        case ScalarOp::Exp: return exp(x);
        case ScalarOp::Log: return log(x);
        case ScalarOp::Sqrt: return sqrt(x);
        case ScalarOp::Tanh: return tanh(x);
        case ScalarOp::Sigmoid: return C(1) / (C(1) + exp(-x));
        case ScalarOp::Erf: return erf(x);
        case ScalarOp::Sin: return sin(x);
        case ScalarOp::Cos: return cos(x);
        case ScalarOp::Reciprocal: return C(1) / x;
        case ScalarOp::LeakyRelu: return leakyReluOf(x, C(n.p0));
        case ScalarOp::HardSigmoid: return hardSigmoidOf(x, C(n.p0), C(n.p1));
        default: return x;
        }
    }
}

struct ElemArgs {
    ElemProgram prog;
    ElemOperand in[kMaxInputs];
    int nin;
    Dims dims;
    void* out;
    int outDtype;
};

template <class C> __global__ void elemKernel(const ElemArgs a, long long total) {
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        long long off[kMaxInputs];
        for (int k = 0; k < a.nin; ++k) off[k] = 0;
        long long rem = e;
        for (int d = a.dims.ndim - 1; d >= 0; --d) {
            const long long i = rem % a.dims.shape[d];
            rem /= a.dims.shape[d];
            for (int k = 0; k < a.nin; ++k) off[k] += i * a.in[k].strides[d];
        }
        C v[kMaxNodes];
        for (int ni = 0; ni < a.prog.nNodes; ++ni) {
            const ElemNode& n = a.prog.nodes[ni];
            if (n.op == static_cast<int>(ScalarOp::Input)) {
                v[ni] = load<C>(a.in[n.input].data, a.in[n.input].dtype, off[n.input]);
            } else {
                v[ni] = roundTo<C>(evalNode<C>(n, a.prog.args, v), n.dtype, a.prog.mode,
                                   isCompareOp(static_cast<ScalarOp>(n.op)));
            }
        }
        store<C>(a.out, a.outDtype, e, v[a.prog.nNodes - 1]);
    }
}

struct CopyArgs {
    Dims dims;
    long long dstStrides[kMaxDims];
    long long srcStrides[kMaxDims];
};

template <class T> __global__ void copyKernel(T* dst, const T* src, const CopyArgs a, long long total) {
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        long long rem = e, so = 0, dofs = 0;
        for (int d = a.dims.ndim - 1; d >= 0; --d) {
            const long long i = rem % a.dims.shape[d];
            rem /= a.dims.shape[d];
            so += i * a.srcStrides[d];
            dofs += i * a.dstStrides[d];
        }
        dst[dofs] = src[so];
    }
}

template <class T> __global__ void addKernel(T* dst, const T* src, const CopyArgs a, long long total) {
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        long long rem = e, so = 0, dofs = 0;
        for (int d = a.dims.ndim - 1; d >= 0; --d) {
            const long long i = rem % a.dims.shape[d];
            rem /= a.dims.shape[d];
            so += i * a.srcStrides[d];
            dofs += i * a.dstStrides[d];
        }
        dst[dofs] = static_cast<T>(dst[dofs] + src[so]);
    }
}

__global__ void gatherKernel(char* out, const char* x, const long long* idx, long long nIdx, long long rowBytes) {
    const long long total = nIdx * rowBytes;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long k = e / rowBytes, b = e % rowBytes;
        out[e] = x[idx[k] * rowBytes + b];
    }
}

__global__ void convertKernel(void* dst, int dd, const void* src, int sd, long long n) {
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < n;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        if (dd == F64 || sd == F64)
            store<double>(dst, dd, e, load<double>(src, sd, e));
        else if (dd == F32 || sd == F32)
            store<float>(dst, dd, e, load<float>(src, sd, e));
        else
            store<long long>(dst, dd, e, load<long long>(src, sd, e));
    }
}

// ------------------------------------------------------------------ reductions
struct ReduceArgs {
    int nKept, nRed;
    long long keptShape[kMaxDims], keptStride[kMaxDims];
    long long redShape[kMaxDims], redStride[kMaxDims];
    long long redTotal;
};

template <class A> __device__ A reduceIdentity(int op) {
    switch (op) {
    case 0: return A(0);
    case 1: return A(1);
    default: break;
    }
    // max: -inf or the lowest value; min: +inf or the highest (as the CPU's identityOf)
    if constexpr (std::is_floating_point<A>::value)
        return op == 2 ? A(-INFINITY) : A(INFINITY);
    else if constexpr (std::is_same<A, unsigned long long>::value)
        return op == 2 ? 0ull : ULLONG_MAX;
    else
        return op == 2 ? LLONG_MIN : LLONG_MAX;
}

// as the CPU's combine (ReduceKernels.cpp): max / min keep a NaN once seen
template <class A> __device__ A reduceCombine(int op, A acc, A v) {
    switch (op) {
    case 0: return acc + v;
    case 1: return acc * v;
    case 2: return v > acc || v != v ? v : acc;
    default: return v < acc || v != v ? v : acc;
    }
}

template <class A>
__global__ void reduceKernel(const void* x, int xdt, const ReduceArgs a, int op, int pre, void* out, int odt,
                             long long outTotal) {
    // one warp per output element (blockDim is a multiple of 32, so a warp is all in or all out)
    const long long warp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (warp >= outTotal) return;
    long long rem = warp, base = 0;
    for (int d = a.nKept - 1; d >= 0; --d) {
        const long long i = rem % a.keptShape[d];
        rem /= a.keptShape[d];
        base += i * a.keptStride[d];
    }
    A acc = reduceIdentity<A>(op);
    for (long long r = lane; r < a.redTotal; r += 32) {
        long long rr = r, off = base;
        for (int d = a.nRed - 1; d >= 0; --d) {
            const long long i = rr % a.redShape[d];
            rr /= a.redShape[d];
            off += i * a.redStride[d];
        }
        A v = load<A>(x, xdt, off);
        if (pre == 1)
            v = v * v;
        else if (pre == 2) {
            if constexpr (!std::is_unsigned<A>::value) v = v < 0 ? -v : v;
        }
        acc = reduceCombine<A>(op, acc, v);
    }
    for (int s = 16; s > 0; s /= 2) acc = reduceCombine<A>(op, acc, __shfl_down_sync(0xffffffffu, acc, s));
    if (lane == 0) store<A>(out, odt, warp, acc);
}

template <class T>
__global__ void softmaxKernel(const T* x, T* y, long long outer, long long len, long long inner, bool logSm) {
    const long long line = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (line >= outer * inner) return;
    const long long o = line / inner, i = line % inner;
    const T* xp = x + o * len * inner + i;
    T* yp = y + o * len * inner + i;
    T mx = -INFINITY;
    for (long long k = 0; k < len; ++k) mx = xp[k * inner] > mx ? xp[k * inner] : mx;
    double s = 0;
    for (long long k = 0; k < len; ++k) s += exp(xp[k * inner] - mx);
    const T ls = static_cast<T>(log(s));
    for (long long k = 0; k < len; ++k)
        yp[k * inner] = logSm ? xp[k * inner] - mx - ls : static_cast<T>(exp(xp[k * inner] - mx) / s);
}

template <class T>
__global__ void cumKernel(const T* x, T* y, long long outer, long long len, long long inner, bool mul) {
    const long long line = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (line >= outer * inner) return;
    const long long o = line / inner, i = line % inner;
    T acc = mul ? T(1) : T(0);
    for (long long k = 0; k < len; ++k) {
        const long long e = (o * len + k) * inner + i;
        acc = mul ? static_cast<T>(acc * x[e]) : static_cast<T>(acc + x[e]);
        y[e] = acc;
    }
}

// ------------------------------------------------------------------ convolution
__global__ void im2colKernel(const float* x, float* cols, ConvShape s) {
    const long long N = s.OH * s.OW;
    const long long total = s.Cg * s.KH * s.KW * N;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long col = e % N, row = e / N;
        const long long kw = row % s.KW, kh = (row / s.KW) % s.KH, c = row / (s.KW * s.KH);
        const long long oh = col / s.OW, ow = col % s.OW;
        const long long ih = oh * s.strideH - s.padTop + kh * s.dilH, iw = ow * s.strideW - s.padLeft + kw * s.dilW;
        cols[e] = (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W) ? x[(c * s.H + ih) * s.W + iw] : 0.f;
    }
}

__global__ void depthwiseKernel(const float* x, const float* w, float* y, ConvShape s, long long mult) {
    const long long total = s.N * s.F * s.OH * s.OW;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long ow = e % s.OW, oh = (e / s.OW) % s.OH, f = (e / (s.OW * s.OH)) % s.F,
                        n = e / (s.OW * s.OH * s.F);
        const long long c = f / mult;
        const float* xc = x + (n * s.C + c) * s.H * s.W;
        const float* wf = w + f * s.KH * s.KW;
        float acc = 0.f;
        for (long long kh = 0; kh < s.KH; ++kh) {
            const long long ih = oh * s.strideH - s.padTop + kh * s.dilH;
            if (ih < 0 || ih >= s.H) continue;
            for (long long kw = 0; kw < s.KW; ++kw) {
                const long long iw = ow * s.strideW - s.padLeft + kw * s.dilW;
                if (iw < 0 || iw >= s.W) continue;
                acc += wf[kh * s.KW + kw] * xc[ih * s.W + iw];
            }
        }
        y[e] = acc;
    }
}

__global__ void poolKernel(const float* x, float* y, long long planes, long long H, long long W, long long OH,
                           long long OW, long long kh, long long kw, long long sh, long long sw, long long pt,
                           long long pb, long long pl, long long pr, int mode) {
    const long long total = planes * OH * OW;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long q = e % OW, r = (e / OW) % OH, p = e / (OW * OH);
        const long long rows = H + pt + pb, cols = W + pl + pr;
        const long long r0 = r * sh, r1 = min(r0 + kh, rows), c0 = q * sw, c1 = min(c0 + kw, cols);
        const long long i0 = max(r0, pt) - pt, i1 = max(min(r1, H + pt) - pt, i0);
        const long long j0 = max(c0, pl) - pl, j1 = max(min(c1, W + pl) - pl, j0);
        const float* xp = x + p * H * W;
        float acc = mode == 0 ? -INFINITY : 0.f;
        for (long long i = i0; i < i1; ++i)
            for (long long j = j0; j < j1; ++j) acc = mode == 0 ? fmaxf(acc, xp[i * W + j]) : acc + xp[i * W + j];
        if (mode == 2) {
            const long long cnt = (r1 - r0) * (c1 - c0);
            acc = cnt > 0 ? acc / static_cast<float>(cnt) : 0.f;
        } else if (mode == 3) {
            const long long cnt = (i1 - i0) * (j1 - j0);
            acc = cnt > 0 ? acc / static_cast<float>(cnt) : 0.f;
        }
        y[e] = acc;
    }
}

__global__ void batchNormKernel(const float* x, float* y, const float* g, const float* b, const float* m,
                                const float* v, double eps, long long N, long long C, long long inner) {
    const long long total = N * C * inner;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long c = (e / inner) % C;
        const float a = g[c] / sqrtf(v[c] + static_cast<float>(eps));
        y[e] = x[e] * a + (b[c] - m[c] * a);
    }
}

Dims dimsOf(const long long* shape, int ndim) {
    if (ndim > kMaxDims)
        throw std::runtime_error("CUDA kernels support at most " + std::to_string(kMaxDims) + " dimensions");
    Dims d{};
    d.ndim = ndim;
    for (int i = 0; i < ndim; ++i) d.shape[i] = shape[i];
    return d;
}

long long product(const long long* s, int n) {
    long long p = 1;
    for (int i = 0; i < n; ++i) p *= s[i];
    return p;
}

} // namespace

void elementwise(const ElemProgram& prog, const ElemOperand* inputs, int nin, void* out, int outDtype,
                 const long long* shape, int ndim, int device) {
    if (nin > kMaxInputs) throw std::runtime_error("GpuElemwise: more than " + std::to_string(kMaxInputs) + " inputs");
    const long long total = product(shape, ndim);
    if (total == 0) return;
    ElemArgs a{};
    a.prog = prog;
    for (int k = 0; k < nin; ++k) a.in[k] = inputs[k];
    a.nin = nin;
    a.dims = dimsOf(shape, ndim);
    a.out = out;
    a.outDtype = outDtype;
    cudaStream_t s = streamOf(device);
    const unsigned blocks = strideBlocksFor(total);
    if (prog.mode == 0)
        launch("elemKernel", elemKernel<float>, blocks, kThreads, s, a, total);
    else if (prog.mode == 1)
        launch("elemKernel", elemKernel<double>, blocks, kThreads, s, a, total);
    else
        launch("elemKernel", elemKernel<long long>, blocks, kThreads, s, a, total);
    checkLaunch("GpuElemwise kernel launch");
}

void stridedCopy(void* dst, const long long* dstStrides, const void* src, const long long* srcStrides,
                 const long long* shape, int ndim, std::size_t elemSize, int device) {
    const long long total = product(shape, ndim);
    if (total == 0) return;
    CopyArgs a{};
    a.dims = dimsOf(shape, ndim);
    for (int i = 0; i < ndim; ++i) {
        a.dstStrides[i] = dstStrides[i];
        a.srcStrides[i] = srcStrides[i];
    }
    cudaStream_t s = streamOf(device);
    const unsigned blocks = strideBlocksFor(total);
    switch (elemSize) {
    case 1:
        launch("copyKernel", copyKernel<unsigned char>, blocks, kThreads, s, static_cast<unsigned char*>(dst),
               static_cast<const unsigned char*>(src), a, total);
        break;
    case 2:
        launch("copyKernel", copyKernel<unsigned short>, blocks, kThreads, s, static_cast<unsigned short*>(dst),
               static_cast<const unsigned short*>(src), a, total);
        break;
    case 4:
        launch("copyKernel", copyKernel<unsigned int>, blocks, kThreads, s, static_cast<unsigned int*>(dst),
               static_cast<const unsigned int*>(src), a, total);
        break;
    case 8:
        launch("copyKernel", copyKernel<unsigned long long>, blocks, kThreads, s, static_cast<unsigned long long*>(dst),
               static_cast<const unsigned long long*>(src), a, total);
        break;
    default: throw std::runtime_error("strided copy: element size " + std::to_string(elemSize) + " is not supported");
    }
    checkLaunch("strided copy kernel launch");
}

void stridedAdd(void* dst, const long long* dstStrides, const void* src, const long long* srcStrides,
                const long long* shape, int ndim, int dtype, int device) {
    const long long total = product(shape, ndim);
    if (total == 0) return;
    CopyArgs a{};
    a.dims = dimsOf(shape, ndim);
    for (int i = 0; i < ndim; ++i) {
        a.dstStrides[i] = dstStrides[i];
        a.srcStrides[i] = srcStrides[i];
    }
    cudaStream_t s = streamOf(device);
    const unsigned blocks = strideBlocksFor(total);
    switch (dtype) {
    case F32:
        launch("addKernel", addKernel<float>, blocks, kThreads, s, static_cast<float*>(dst),
               static_cast<const float*>(src), a, total);
        break;
    case F64:
        launch("addKernel", addKernel<double>, blocks, kThreads, s, static_cast<double*>(dst),
               static_cast<const double*>(src), a, total);
        break;
    case I64:
        launch("addKernel", addKernel<long long>, blocks, kThreads, s, static_cast<long long*>(dst),
               static_cast<const long long*>(src), a, total);
        break;
    case I32:
        launch("addKernel", addKernel<int>, blocks, kThreads, s, static_cast<int*>(dst), static_cast<const int*>(src),
               a, total);
        break;
    default: throw std::runtime_error("GpuIncSubtensor: dtype code " + std::to_string(dtype) + " is not supported");
    }
    checkLaunch("strided add kernel launch");
}

void gatherRows(void* out, const void* x, const long long* idxDevice, long long nIdx, long long rowBytes, int device) {
    const long long total = nIdx * rowBytes;
    if (total == 0) return;
    const unsigned blocks = strideBlocksFor(total);
    launch("gatherKernel", gatherKernel, blocks, kThreads, streamOf(device), static_cast<char*>(out),
           static_cast<const char*>(x), idxDevice, nIdx, rowBytes);
    checkLaunch("gather kernel launch");
}

void convert(void* dst, int dstDtype, const void* src, int srcDtype, long long n, int device) {
    if (n == 0) return;
    const unsigned blocks = strideBlocksFor(n);
    launch("convertKernel", convertKernel, blocks, kThreads, streamOf(device), dst, dstDtype, src, srcDtype, n);
    checkLaunch("convert kernel launch");
}

void reduce(const void* x, int dtype, const long long* shape, const int* reduced, int ndim, int op, int pre, void* out,
            int outDtype, int device) {
    if (ndim > kMaxDims) throw std::runtime_error("GpuCAReduceCuda: at most 8 dimensions");
    ReduceArgs a{};
    long long stride = 1;
    long long strides[kMaxDims];
    for (int d = ndim - 1; d >= 0; --d) {
        strides[d] = stride;
        stride *= shape[d];
    }
    a.redTotal = 1;
    long long outTotal = 1;
    for (int d = 0; d < ndim; ++d) {
        if (reduced[d]) {
            a.redShape[a.nRed] = shape[d];
            a.redStride[a.nRed++] = strides[d];
            a.redTotal *= shape[d];
        } else {
            a.keptShape[a.nKept] = shape[d];
            a.keptStride[a.nKept++] = strides[d];
            outTotal *= shape[d];
        }
    }
    if (outTotal == 0) return;
    const long long threads = outTotal * 32;
    const unsigned blocks = blocksFor(threads);
    cudaStream_t s = streamOf(device);
    // the accumulator follows the output dtype, as on the CPU
    if (outDtype == F32)
        launch("reduceKernel", reduceKernel<float>, blocks, kThreads, s, x, dtype, a, op, pre, out, outDtype, outTotal);
    else if (outDtype == F64)
        launch("reduceKernel", reduceKernel<double>, blocks, kThreads, s, x, dtype, a, op, pre, out, outDtype,
               outTotal);
    else if (outDtype == U64)
        launch("reduceKernel", reduceKernel<unsigned long long>, blocks, kThreads, s, x, dtype, a, op, pre, out,
               outDtype, outTotal);
    else
        launch("reduceKernel", reduceKernel<long long>, blocks, kThreads, s, x, dtype, a, op, pre, out, outDtype,
               outTotal);
    checkLaunch("reduce kernel launch");
}

void softmax(const void* x, void* y, int dtype, long long outer, long long len, long long inner, bool logSoftmax,
             int device) {
    const long long lines = outer * inner;
    if (lines == 0 || len == 0) return;
    cudaStream_t s = streamOf(device);
    if (dtype == F32)
        launch("softmaxKernel", softmaxKernel<float>, blocksFor(lines), kThreads, s, static_cast<const float*>(x),
               static_cast<float*>(y), outer, len, inner, logSoftmax);
    else
        launch("softmaxKernel", softmaxKernel<double>, blocksFor(lines), kThreads, s, static_cast<const double*>(x),
               static_cast<double*>(y), outer, len, inner, logSoftmax);
    checkLaunch("softmax kernel launch");
}

void cumulative(const void* x, void* y, int dtype, long long outer, long long len, long long inner, bool mul,
                int device) {
    const long long lines = outer * inner;
    if (lines == 0 || len == 0) return;
    cudaStream_t s = streamOf(device);
    if (dtype == F32)
        launch("cumKernel", cumKernel<float>, blocksFor(lines), kThreads, s, static_cast<const float*>(x),
               static_cast<float*>(y), outer, len, inner, mul);
    else if (dtype == F64)
        launch("cumKernel", cumKernel<double>, blocksFor(lines), kThreads, s, static_cast<const double*>(x),
               static_cast<double*>(y), outer, len, inner, mul);
    else if (dtype == I64)
        launch("cumKernel", cumKernel<long long>, blocksFor(lines), kThreads, s, static_cast<const long long*>(x),
               static_cast<long long*>(y), outer, len, inner, mul);
    else
        throw std::runtime_error("GpuCumOp: dtype code " + std::to_string(dtype) + " is not supported");
    checkLaunch("cumulative kernel launch");
}

long long convWorkspaceFloats(const ConvShape& s) { return s.Cg * s.KH * s.KW * s.OH * s.OW; }

void conv2d(const float* x, const float* w, float* y, const ConvShape& s, float* workspace, int device) {
    cudaStream_t st = streamOf(device);
    const long long spatial = s.OH * s.OW;
    if (s.N * s.F * spatial == 0) return;
    const long long Fg = s.F / s.groups;
    if (s.Cg == 1 && s.groups == s.C && s.groups > 1) {
        const long long total = s.N * s.F * spatial;
        launch("depthwiseKernel", depthwiseKernel, strideBlocksFor(total), kThreads, st, x, w, y, s, Fg);
        checkLaunch("depthwise convolution kernel launch");
        return;
    }
    const long long K = s.Cg * s.KH * s.KW;
    const bool pointwise = s.KH == 1 && s.KW == 1 && s.strideH == 1 && s.strideW == 1 && s.padTop == 0 &&
                           s.padLeft == 0 && s.OH == s.H && s.OW == s.W;
    for (long long n = 0; n < s.N; ++n)
        for (long long g = 0; g < s.groups; ++g) {
            const float* xg = x + (n * s.C + g * s.Cg) * s.H * s.W;
            const float* B = xg;
            if (!pointwise) {
                const long long total = K * spatial;
                launch("im2colKernel", im2colKernel, strideBlocksFor(total), kThreads, st, xg, workspace, s);
                checkLaunch("im2col kernel launch");
                B = workspace;
            }
            gemm(F32, false, false, Fg, spatial, K, 1.0, w + g * Fg * K, K, B, spatial, 0.0,
                 y + (n * s.F + g * Fg) * spatial, spatial, 1, 0, 0, 0, device);
        }
}

void pool2d(const float* x, float* y, long long planes, long long H, long long W, long long OH, long long OW,
            long long kh, long long kw, long long sh, long long sw, long long pt, long long pb, long long pl,
            long long pr, int mode, int device) {
    const long long total = planes * OH * OW;
    if (total == 0) return;
    launch("poolKernel", poolKernel, strideBlocksFor(total), kThreads, streamOf(device), x, y, planes, H, W, OH, OW, kh,
           kw, sh, sw, pt, pb, pl, pr, mode);
    checkLaunch("pool kernel launch");
}

void batchNorm(const float* x, float* y, const float* scale, const float* bias, const float* mean, const float* var,
               double eps, long long N, long long C, long long inner, int device) {
    const long long total = N * C * inner;
    if (total == 0) return;
    launch("batchNormKernel", batchNormKernel, strideBlocksFor(total), kThreads, streamOf(device), x, y, scale, bias,
           mean, var, eps, N, C, inner);
    checkLaunch("batch norm kernel launch");
}

} // namespace passlens::cuda
