#pragma once
// Internal: what the C++ side of the CUDA backend (CudaBackend.cpp, CudaShapeKernels.cpp,
// CudaMathKernels.cpp) shares: device memory for a node, input checks, dtype conversion, the
// in-flight host buffers of asynchronous copies, and each file's kernel registration.
#include "../cpu/CpuCommon.h"
#include "CudaOps.h"

#include "passlens/kernels/Executor.h"
#include "passlens/kernels/Kernel.h"

#include <string>
#include <vector>

namespace passlens::cudabackend {

using json = nlohmann::json;
using cpu::outDType;

/// Keeps a pinned host buffer read by an asynchronous copy alive until the next synchronisation.
void keepUntilSync(const std::shared_ptr<Storage>& s);
/// Synchronises `device` and releases the buffers kept by keepUntilSync.
void syncAndRelease(int device);
/// Asynchronous HtoD copy from a host tensor: pinned sources stay alive until the next sync,
/// pageable ones are waited for (the driver stages them anyway).
void copyIn(void* dst, const Tensor& host, int device);
/// A DType as the int CudaOps.h takes.
inline int dt(DType d) { return static_cast<int>(d); }
/// The device of the node's `context` attribute: "" is device 0, a name ending in digits
/// ("dev1") is that device when it exists; fails naming the node for another existing device.
int deviceOfContext(const KernelCall& c);
/// A device tensor for the node (on `device`, default the executor's); fails naming the node
/// when device memory runs out.
Tensor devAlloc(const KernelCall& c, DType d, Shape s, int device = -1);
/// Input `i`, which must be in device memory (fails naming the node otherwise).
const Tensor& needDevice(const KernelCall& c, int i);
/// The dims or strides as CudaOps.h takes them.
inline std::vector<long long> ll(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }
/// Fails naming the node for the dtypes the CUDA kernels do not load or store (float16,
/// bfloat16, complex).
void needSupported(const KernelCall& c, DType d);
/// `t` in dtype `d` on the device (converted as the CPU's convertElements when it differs).
Tensor asDeviceDType(const KernelCall& c, const Tensor& t, DType d);

/// Shapes and indexing: GpuDimShuffle, GpuReshape, GpuSubtensor, GpuIncSubtensor,
/// GpuAdvancedSubtensor1, GpuJoin, GpuSplit, GpuAlloc, GpuAllocEmpty, GpuContiguous.
void registerShapeKernels(KernelRegistry& r);
/// Reductions, GpuMaxAndArgmax, softmax, GpuCumOp, GpuTopKOp, BLAS, GpuCorrMM, GpuPool and batch
/// normalisation.
void registerMathKernels(KernelRegistry& r);

} // namespace passlens::cudabackend
