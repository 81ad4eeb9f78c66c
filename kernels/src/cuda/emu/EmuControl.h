#pragma once
// Test controls of the emulated CUDA device (passlens_kernels_emu only; see
// emu/include/cuda_runtime_api.h for what the emulation checks). Not thread-safe against
// concurrent runtime calls of other threads.
#include <cstddef>
#include <string>
#include <vector>

namespace passlens::cuda::emu {

/// From the (n+1)-th cudaMalloc from now on, every cudaMalloc fails with
/// cudaErrorMemoryAllocation until reset() (the device is full; n < 0: none).
void failAllocation(int n);
/// While on, cudaMallocHost fails with cudaErrorMemoryAllocation (no page-locked memory left).
void failPinnedAllocation(bool on);
/// The (n+1)-th kernel launched from now faults when it runs (at the next synchronisation):
/// sticky cudaErrorIllegalAddress, as a real out-of-bounds access would (n < 0: none).
void faultKernel(int n);
/// Device memory the emulated device has (cudaMalloc beyond it fails); default 16 GiB.
void setMemoryLimit(std::size_t bytes);
/// Number of emulated devices cudaGetDeviceCount reports (1..8; default 1). They share one
/// memory and one queue per stream: enough to check how the backend maps contexts to devices.
void setDeviceCount(int n);
/// Emulation only (a real process must restart after a sticky error): drops queued work, clears
/// the sticky and last errors and the injections, and goes back to one device. Allocations stay.
void reset();
/// The message of the last fault (kernel fault, guard bytes overwritten, injected), "" if none.
std::string lastFault();

/// While on (turning it on clears it), the runtime records in host call order: the host-side
/// calls "cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost", "cudaStreamSynchronize",
/// "cudaEventSynchronize", "cudaDeviceSynchronize", "cublasCreate", and each queued stream
/// operation as "queue NAME" (NAME: the kernel's name, "cudaMemcpyAsync", "cudaMemsetAsync", the
/// cuBLAS call, "cudaEventRecord" for a timing event, "cudaEventRecord (sync only)" for one made
/// with cudaEventDisableTiming). On a real device an event recorded on an idle stream completes
/// at once, so host calls between a timing pair's records fall inside the measured time.
void traceCalls(bool on);
std::vector<std::string> callTrace();

struct Stats {
    long long kernelsRun = 0;    ///< grids executed (at synchronisations)
    long long kernelsQueued = 0; ///< grids launched and not yet executed
    long long opsQueued = 0;     ///< all queued operations not yet executed
    std::size_t liveBytes = 0;   ///< device memory allocated and not freed
    long long liveAllocations = 0;
    long long pinnedAllocations = 0; ///< cudaMallocHost calls that succeeded, ever
    /// host <-> device copies queued, ever, whose host side is not page-locked (cudaMallocHost)
    long long pageableCopies = 0;
};
Stats stats();
/// Whether p lies inside a live device allocation.
bool isDevicePointer(const void* p);

} // namespace passlens::cuda::emu
