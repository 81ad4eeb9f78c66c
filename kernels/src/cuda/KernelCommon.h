#pragma once
// Internal to the CUDA kernel sources (CudaKernels.cu, CudaReduceKernels.cu,
// CudaConvKernels.cu): the launch geometry, typed loads and stores of the backend's dtype codes,
// and the stream and launch check of CudaRuntime.cu. Device code: included by .cu files only.
#include "CudaOps.h"

#include <cuda_runtime_api.h>

#include <type_traits>

namespace passlens::cuda {

/// The stream of `device`, made current (CudaRuntime.cu).
cudaStream_t streamOf(int device);
/// Throws std::runtime_error naming `what` and the CUDA error when the last launch failed
/// (cudaGetLastError; CudaRuntime.cu).
void checkLaunch(const char* what);

/// Threads per block of every kernel.
constexpr int kThreads = 256;

/// Blocks of kThreads that give each of n elements its own thread (at least 1, at most 2^31-1).
inline unsigned blocksFor(long long n) {
    const long long b = (n + kThreads - 1) / kThreads;
    return static_cast<unsigned>(b < 1 ? 1 : (b > 2147483647LL ? 2147483647LL : b));
}

/// Blocks of a grid-stride kernel over n elements (capped: each thread then covers several).
inline unsigned strideBlocksFor(long long n) {
    const unsigned b = blocksFor(n);
    return b > 65535u * 32u ? 65535u * 32u : b;
}

/// Element i of the array p of dtype code dt (Dt), converted to C; 0 for a code it does not know.
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

/// v as an integer, truncated; NaN and values outside [-2^63, 2^63) give 0 (as the CPU
/// backend's conversion), except that `toUInt64` takes [2^63, 2^64) as its uint64 bit pattern.
template <class C> __device__ long long toInt(C v, bool toUInt64 = false) {
    if constexpr (std::is_floating_point<C>::value) {
        if (toUInt64 && v >= C(0x1p63) && v < C(0x1p64))
            return static_cast<long long>(static_cast<unsigned long long>(v));
        if (!(v >= C(-0x1p63) && v < C(0x1p63))) return 0;
    }
    return static_cast<long long>(v);
}

/// Stores v as element i of the array p of dtype code dt: bool as v != 0, integers through toInt.
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
    case U64: static_cast<unsigned long long*>(p)[i] = static_cast<unsigned long long>(toInt(v, true)); break;
    case F32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case F64: static_cast<double*>(p)[i] = static_cast<double>(v); break;
    default: break;
    }
}

} // namespace passlens::cuda
