// registerCudaKernels() for builds without the CUDA backend: nothing to register.
#include "passlens/kernels/Kernel.h"

namespace passlens {
void registerCudaKernels(KernelRegistry&) {}
} // namespace passlens
