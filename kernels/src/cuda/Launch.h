#pragma once
// Internal: the one way the CUDA sources launch a kernel. Under nvcc a real launch
// (kernel<<<grid, block, 0, stream>>>); compiled by the host compiler for the emulated device
// (PASSLENS_CUDA_EMULATED) the launch is validated as CUDA does (block of 1..1024 threads within
// 1024 x 1024 x 64, grid within 2^31-1 x 65535 x 65535), the arguments are copied, and the grid
// is queued on the stream and run by the CPU at the next synchronisation (EmuGrid.cpp).
// `name` identifies the kernel in the emulator's fault reports.
#include <cuda_runtime_api.h>

#include <utility>

#ifndef __CUDACC__
#include <functional>
#include <memory>
#include <tuple>
#endif

namespace passlens::cuda {

#ifdef __CUDACC__
template <class... P, class... A>
void launch(const char* /*name*/, void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t stream, A&&... args) {
    kernel<<<grid, block, 0, stream>>>(std::forward<A>(args)...);
}
#else
namespace emu {
/// Queues `thread` (the kernel body of one emulated thread) over grid x block on `stream`;
/// a configuration CUDA refuses sets cudaErrorInvalidConfiguration (read by cudaGetLastError).
void enqueueGrid(const char* name, dim3 grid, dim3 block, cudaStream_t stream, std::function<void()> thread);
} // namespace emu

template <class... P, class... A>
void launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, cudaStream_t stream, A&&... args) {
    // arguments are converted and copied at launch, as CUDA copies them into the parameter space
    auto params = std::make_shared<std::tuple<std::decay_t<P>...>>(std::forward<A>(args)...);
    emu::enqueueGrid(name, grid, block, stream, [kernel, params] { std::apply(kernel, *params); });
}
#endif

} // namespace passlens::cuda
