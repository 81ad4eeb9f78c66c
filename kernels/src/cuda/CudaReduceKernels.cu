// CUDA kernels of the backend: reductions (one warp per output element), softmax and cumulative
// sums and products. Semantics follow the CPU backend (kernels/src/cpu/ReduceKernels.cpp).
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

} // namespace

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

} // namespace passlens::cuda
