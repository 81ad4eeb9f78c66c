// CUDA kernels of the backend: reductions (one warp per output element), max and argmax (one
// thread per output element), softmax, cumulative sums and products, and top-k selection.
// Semantics follow the CPU backend
// (kernels/src/cpu/ReduceKernels.cpp).
#include "KernelCommon.h"
#include "Launch.h"

#include <cmath>
#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace passlens::cuda {

namespace {

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

// as the CPU's replacesBest (ReduceKernels.cpp): the first NaN wins, ties keep the first index
template <class T> __device__ bool replacesBest(T v, T b) {
    if (b != b) return false;
    return v != v || v > b;
}

// MaxAndArgmax: one thread per output element scans the reduced elements in row-major order
// (as libgpuarray's maxandargmax kernel, one thread per kept position).
template <class T>
__global__ void maxAndArgmaxKernel(const T* x, const ReduceArgs a, T* mx, long long* arg, long long outTotal) {
    const long long o = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (o >= outTotal) return;
    long long rem = o, base = 0;
    for (int d = a.nKept - 1; d >= 0; --d) {
        base += (rem % a.keptShape[d]) * a.keptStride[d];
        rem /= a.keptShape[d];
    }
    long long best = 0;
    T b = x[base];
    for (long long r = 1; r < a.redTotal; ++r) {
        long long rr = r, off = base;
        for (int d = a.nRed - 1; d >= 0; --d) {
            off += (rr % a.redShape[d]) * a.redStride[d];
            rr /= a.redShape[d];
        }
        const T v = x[off];
        if (replacesBest(v, b)) {
            best = r;
            b = v;
        }
    }
    mx[o] = b;
    arg[o] = best;
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

// a comes before b in top-k order: more extreme first, NaN above every number, then the lower
// index (the CPU's topK)
template <class T> __device__ bool topKBefore(T va, long long a, T vb, long long b, bool largest) {
    if constexpr (std::is_floating_point<T>::value) {
        const bool na = va != va, nb = vb != vb;
        if (na || nb) return na != nb ? (largest ? na : nb) : a < b;
    }
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
}

// one block per line (grid-stride over lines), one thread per element: the element's rank is
// the number of elements before it; ranks below k are the outputs' positions
template <class T>
__global__ void topKKernel(const T* x, long long lines, long long len, long long inner, long long k, bool largest,
                           T* values, void* indices, int idxDt) {
    for (long long line = blockIdx.x; line < lines; line += gridDim.x) {
        const long long o = line / inner, i = line % inner;
        const T* p = x + o * len * inner + i;
        for (long long a = threadIdx.x; a < len; a += blockDim.x) {
            const T va = p[a * inner];
            long long rank = 0;
            for (long long b = 0; b < len && rank < k; ++b) rank += topKBefore<T>(p[b * inner], b, va, a, largest);
            if (rank < k) {
                const long long e = (o * k + rank) * inner + i;
                values[e] = va;
                store<long long>(indices, idxDt, e, a);
            }
        }
    }
}

template <class T>
void launchTopK(const void* x, long long lines, long long len, long long inner, long long k, bool largest, void* values,
                void* indices, int idxDt, cudaStream_t s) {
    const long long threads = len < kThreads ? (len + 31) / 32 * 32 : kThreads;
    const unsigned blocks = static_cast<unsigned>(lines < 65535LL * 32 ? lines : 65535LL * 32);
    launch("topKKernel", topKKernel<T>, blocks, static_cast<unsigned>(threads), s, static_cast<const T*>(x), lines, len,
           inner, k, largest, static_cast<T*>(values), indices, idxDt);
}

} // namespace

// The kept and reduced dims of a row-major tensor, each with its element stride.
ReduceArgs reduceArgs(const long long* shape, const int* reduced, int ndim, long long& outTotal) {
    ReduceArgs a{};
    long long stride = 1;
    long long strides[kMaxDims];
    for (int d = ndim - 1; d >= 0; --d) {
        strides[d] = stride;
        stride *= shape[d];
    }
    a.redTotal = 1;
    outTotal = 1;
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
    return a;
}

void reduce(const void* x, int dtype, const long long* shape, const int* reduced, int ndim, int op, int pre, void* out,
            int outDtype, int device) {
    if (ndim > kMaxDims) throw std::runtime_error("GpuCAReduceCuda: at most 8 dimensions");
    long long outTotal = 0;
    const ReduceArgs a = reduceArgs(shape, reduced, ndim, outTotal);
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

void maxAndArgmax(const void* x, int dtype, const long long* shape, const int* reduced, int ndim, void* mx,
                  long long* arg, int device) {
    if (ndim > kMaxDims) throw std::runtime_error("GpuMaxAndArgmax: at most 8 dimensions");
    long long outTotal = 0;
    const ReduceArgs a = reduceArgs(shape, reduced, ndim, outTotal);
    if (outTotal == 0) return;
    if (a.redTotal == 0) throw std::runtime_error("GpuMaxAndArgmax: empty reduction");
    cudaStream_t s = streamOf(device);
    const unsigned blocks = blocksFor(outTotal);
    auto run = [&](auto zero) {
        using T = decltype(zero);
        launch("maxAndArgmaxKernel", maxAndArgmaxKernel<T>, blocks, kThreads, s, static_cast<const T*>(x), a,
               static_cast<T*>(mx), arg, outTotal);
    };
    switch (dtype) {
    case Bool:
    case U8: run(static_cast<unsigned char>(0)); break;
    case I8: run(static_cast<signed char>(0)); break;
    case I16: run(static_cast<short>(0)); break;
    case U16: run(static_cast<unsigned short>(0)); break;
    case I32: run(0); break;
    case U32: run(0u); break;
    case I64: run(0ll); break;
    case U64: run(0ull); break;
    case F32: run(0.0f); break;
    case F64: run(0.0); break;
    default: throw std::runtime_error("GpuMaxAndArgmax: dtype code " + std::to_string(dtype) + " is not supported");
    }
    checkLaunch("maxAndArgmax kernel launch");
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

void topK(const void* x, int dtype, long long outer, long long len, long long inner, long long k, void* values,
          void* indices, int idxDtype, int device) {
    const bool largest = k >= 0;
    const long long kk = largest ? k : -k;
    const long long lines = outer * inner;
    if (lines == 0 || kk == 0) return;
    cudaStream_t s = streamOf(device);
    switch (dtype) {
    case Bool:
    case U8: launchTopK<unsigned char>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case I8: launchTopK<signed char>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case I16: launchTopK<short>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case U16: launchTopK<unsigned short>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case I32: launchTopK<int>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case U32: launchTopK<unsigned int>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case I64: launchTopK<long long>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case U64: launchTopK<unsigned long long>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case F32: launchTopK<float>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    case F64: launchTopK<double>(x, lines, len, inner, kk, largest, values, indices, idxDtype, s); break;
    default: throw std::runtime_error("GpuTopKOp: dtype code " + std::to_string(dtype) + " is not supported");
    }
    checkLaunch("top-k kernel launch");
}

} // namespace passlens::cuda
