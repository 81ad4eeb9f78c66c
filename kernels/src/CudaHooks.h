#pragma once
// Internal: entry points of the CUDA backend that host code calls through pointers, so that
// builds without CUDA link without stubs. Set by the CUDA backend when it initialises a device.
#include <cstddef>

namespace passlens {

struct CudaHooks {
    void* (*allocate)(std::size_t bytes, int device) = nullptr; ///< nullptr on failure
    void (*free)(void* ptr, int device) = nullptr;
    void* (*allocatePinned)(std::size_t bytes) = nullptr; ///< page-locked host memory; nullptr on failure
    void (*freePinned)(void* ptr) = nullptr;
};

/// The process-wide hooks (all null until the CUDA backend starts).
CudaHooks& cudaHooks();

} // namespace passlens
