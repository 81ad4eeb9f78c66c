// CUDA kernels of the backend: element-wise programs (a fused composite is one kernel), strided
// copies and adds, row gathers and dtype conversion. Reductions, softmax and scans are in
// CudaReduceKernels.cu, convolution, pooling and batch normalisation in CudaConvKernels.cu.
// Semantics follow the CPU backend (kernels/src/cpu).
#include "KernelCommon.h"
#include "Launch.h"

#include <passlens/ir/ScalarArith.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace passlens::cuda {

namespace {

using passlens::ScalarOp;

struct Dims {
    long long shape[kMaxDims];
    int ndim;
};

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
                case U64:
                    return v >= 0x1p63 && v < 0x1p64 ? trunc(v)
                                                     : static_cast<double>(static_cast<unsigned long long>(t));
                default: return static_cast<double>(t);
                }
            }
        }
    } else if constexpr (std::is_integral<C>::value) {
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
    case ScalarOp::Abs: return isNegative(x) ? -x : x;
    case ScalarOp::Sqr: return x * x;
    case ScalarOp::Relu: return reluOf(x);
    case ScalarOp::Sgn: return static_cast<C>((x > 0) - isNegative(x));
    case ScalarOp::Lt: return x < y;
    case ScalarOp::Gt: return x > y;
    case ScalarOp::Le: return x <= y;
    case ScalarOp::Ge: return x >= y;
    case ScalarOp::Eq: return x == y;
    case ScalarOp::Neq: return x != y;
    case ScalarOp::And: return (x != 0) && (y != 0);
    case ScalarOp::Or: return (x != 0) || (y != 0);
    case ScalarOp::Xor: return (x != 0) != (y != 0);
    case ScalarOp::Not: return x == 0;
    case ScalarOp::Switch: return x != 0 ? y : v[args[n.argStart + 2]];
    case ScalarOp::Identity:
    case ScalarOp::Cast: return x;
    case ScalarOp::Clip: {
        if constexpr (std::is_integral<C>::value) // the values as they are (the CPU engine's rule)
            return clipOf(x, integerClipBound<C>(n.p0, false), integerClipBound<C>(n.p1, true));
        else {
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
                const bool compare = isCompareOp(static_cast<ScalarOp>(n.op));
                if constexpr (std::is_same<C, long long>::value) {
                    if (n.unsigned64) { // the same 64-bit values read as uint64 (NumPy's uint64 semantics)
                        const auto* u = reinterpret_cast<const unsigned long long*>(v);
                        v[ni] = static_cast<long long>(roundTo<unsigned long long>(
                            evalNode<unsigned long long>(n, a.prog.args, u), n.dtype, a.prog.mode, compare));
                        continue;
                    }
                }
                v[ni] = roundTo<C>(evalNode<C>(n, a.prog.args, v), n.dtype, a.prog.mode, compare);
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

} // namespace passlens::cuda
