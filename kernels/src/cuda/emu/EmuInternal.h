#pragma once
// Internal to the emulated device: the runtime's queue and fault entry points shared by
// EmuRuntime.cpp, EmuGrid.cpp and EmuBlas.cpp.
#include <cuda_runtime_api.h>

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace passlens::cuda::emu {

struct EventState {
    bool recorded = false;
    bool done = false;
    long long generation = 0;
    void* stream = nullptr; // CUstream_st of the last record
    std::chrono::steady_clock::time_point when;
};

/// One queued stream operation; `event` is set for event records.
struct Op {
    std::string name;
    std::function<void()> run;
    const EventState* event = nullptr;
    bool isKernel = false;
};

/// Queues op on the stream (nullptr: the legacy default stream). Caller holds runtimeMutex().
void enqueueOp(cudaStream_t stream, Op op);
std::recursive_mutex& runtimeMutex();
/// Records a kernel fault: the sticky error e, the message (stderr and lastFault()).
void raiseFault(cudaError_t e, const std::string& what);
cudaError_t stickyError();
/// Sets the last (non-sticky) error; returns e.
cudaError_t setLastError(cudaError_t e);
/// Whether the launch being queued is the one faultKernel() chose.
bool takeKernelFault();
/// Appends `call` to the call trace while traceCalls(true) is on (EmuControl.h).
void traceCall(const std::string& call);

} // namespace passlens::cuda::emu

struct CUstream_st {
    std::deque<passlens::cuda::emu::Op> queue;
};
