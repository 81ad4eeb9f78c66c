#pragma once
// The emulated CUDA device (the fake device of passlens_kernels_emu): this header stands in for
// the toolkit's cuda_runtime_api.h (and for what nvcc pre-includes into a .cu file) when the .cu
// sources are compiled by the host C++ compiler. Only what kernels/src/cuda uses is declared;
// anything else fails to compile rather than being emulated wrongly.
//
// Runtime (EmuRuntime.cpp): one device ("PassLens emulated device"), host memory, stricter than a
// real device: every operation on a stream (kernels, copies, memsets, cuBLAS, event records) is
// queued and runs only at a synchronising call, so a missing synchronisation shows as a wrong
// value; device allocations are poisoned (0xFF bytes, NaN in floats) when allocated and freed, and
// freed ones are kept in a quarantine so stale pointers read poison; writes past either end of an
// allocation are detected (guard bytes checked after every operation); device memory is
// inaccessible to host code outside the emulated device's work (a dereference faults with a
// message); out-of-memory and kernel faults (sticky errors) can be injected (EmuControl.h).
// Error codes and names are CUDA's.
//
// Kernels (Launch.h, EmuGrid.cpp): each emulated thread sees its own threadIdx / blockIdx; threads
// run one after another on fibers and switch only at warp collectives (__shfl*_sync, __ballot_sync,
// __syncwarp) and __syncthreads, which wait for every lane / thread concerned, so warps are in
// lockstep wherever it is observable. __shared__ variables are function statics (blocks run one at
// a time).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// ---------------------------------------------------------------- errors (CUDA's codes)
enum cudaError_t {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchFailure = 719,
};
typedef cudaError_t cudaError;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02

struct cudaDeviceProp {
    char name[256];
    std::size_t totalGlobalMem;
    int major, minor;
    int multiProcessorCount;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
};

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx)
        , y(vy)
        , z(vz) {}
    constexpr dim3(uint3 v)
        : x(v.x)
        , y(v.y)
        , z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ---------------------------------------------------------------- runtime API
const char* cudaGetErrorName(cudaError_t e);
const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaMalloc(void** ptr, std::size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMallocHost(void** ptr, std::size_t bytes);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, std::size_t bytes,
                                cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* dst, int value, std::size_t bytes);
cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaEventCreate(cudaEvent_t* event);
/// cudaEventDisableTiming: an event for synchronisation only (cudaEventElapsedTime refuses it).
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop);

// ---------------------------------------------------------------- device side
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static

/// The emulated thread's indices (set by the grid runner before each thread runs or resumes).
extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;
constexpr int warpSize = 32;

namespace passlens::cuda::emu {
/// Warp collective of the calling emulated thread: waits until every lane of `mask` has arrived
/// at a collective, then returns the 8 bytes of lane `srcLane(lane)` (shuffles) or the ballot of
/// the lanes' `value != 0` (kind Ballot). Misuse (own lane not in mask, a lane of the mask that
/// exits or waits elsewhere) is a kernel fault reported at the next synchronisation.
enum class Collective { Shuffle, Ballot, SyncWarp };
std::uint64_t warpCollective(Collective kind, unsigned mask, std::uint64_t value, int srcLane);
/// __syncthreads(): waits until every thread of the block that has not exited arrives.
void blockBarrier();
/// The calling thread's lane (0..31) within its warp.
int laneId();

template <class T> std::uint64_t bitsOf(T v) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "shuffles move at most 8 bytes");
    std::uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T> T fromBits(std::uint64_t b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
// source lane of a shuffle within segments of `width` lanes (own lane when out of the segment)
inline int segmentLane(int lane, int target, int width) {
    const int base = lane / width * width;
    return (target < base || target >= base + width) ? lane : target;
}
} // namespace passlens::cuda::emu

template <class T> T __shfl_sync(unsigned mask, T v, int src, int width = warpSize) {
    namespace e = passlens::cuda::emu;
    const int lane = e::laneId();
    const int target = lane / width * width + ((src % width) + width) % width;
    return e::fromBits<T>(e::warpCollective(e::Collective::Shuffle, mask, e::bitsOf(v), target));
}
template <class T> T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
    namespace e = passlens::cuda::emu;
    const int lane = e::laneId();
    return e::fromBits<T>(e::warpCollective(e::Collective::Shuffle, mask, e::bitsOf(v),
                                            e::segmentLane(lane, lane + static_cast<int>(delta), width)));
}
template <class T> T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
    namespace e = passlens::cuda::emu;
    const int lane = e::laneId();
    return e::fromBits<T>(e::warpCollective(e::Collective::Shuffle, mask, e::bitsOf(v),
                                            e::segmentLane(lane, lane - static_cast<int>(delta), width)));
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = warpSize) {
    namespace e = passlens::cuda::emu;
    const int lane = e::laneId();
    return e::fromBits<T>(
        e::warpCollective(e::Collective::Shuffle, mask, e::bitsOf(v), e::segmentLane(lane, lane ^ laneMask, width)));
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
    namespace e = passlens::cuda::emu;
    return static_cast<unsigned>(e::warpCollective(e::Collective::Ballot, mask, pred != 0, e::laneId()));
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == mask; }
inline void __syncwarp(unsigned mask = 0xffffffffu) {
    namespace e = passlens::cuda::emu;
    (void)e::warpCollective(e::Collective::SyncWarp, mask, 0, e::laneId());
}
inline void __syncthreads() { passlens::cuda::emu::blockBarrier(); }

// CUDA's integer min / max overloads (float ones come from <cmath> as fminf / fmaxf)
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
