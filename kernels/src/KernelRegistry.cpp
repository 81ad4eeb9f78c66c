// KernelRegistry and KernelCall helpers.
#include "passlens/kernels/Executor.h"
#include "passlens/kernels/Kernel.h"

#include "CudaHooks.h"

#include <passlens/ir/Error.h>

namespace passlens {

const char* backendName(Backend b) { return b == Backend::Cpu ? "cpu" : "cuda"; }

CudaHooks& cudaHooks() {
    static CudaHooks hooks;
    return hooks;
}

DeviceBackendFactory& deviceBackendFactory() {
    static DeviceBackendFactory f = nullptr;
    return f;
}

Tensor KernelCall::allocate(DType dtype, Shape shape) const {
    return Tensor::empty(dtype, std::move(shape), ctx.pool.get());
}

Tensor KernelCall::allocateOutput0(DType dtype, const Shape& shape) const {
    if (outputInto.defined() && outputInto.dtype() == dtype && outputInto.shape() == shape) return outputInto;
    return allocate(dtype, shape);
}

bool KernelCall::canReuse(int i, DType dtype, std::int64_t numel) const {
    const Tensor& x = inputs[static_cast<std::size_t>(i)];
    return x.defined() && x.onHost() && x.writable() && x.uniquelyOwned() && x.dtype() == dtype && x.numel() == numel;
}

Tensor KernelCall::reuseOrAllocate(int i, DType dtype, const Shape& shape) const {
    if (canReuse(i, dtype, shapeNumel(shape))) return inputs[static_cast<std::size_t>(i)].reshaped(shape);
    return allocate(dtype, shape);
}

std::string KernelCall::where() const { return describeNode(node); }

void KernelCall::fail(const std::string& why) const { throw Error(where() + ": " + why); }

KernelRegistry& KernelRegistry::instance() {
    static KernelRegistry* reg = [] {
        auto* r = new KernelRegistry();
        registerCpuKernels(*r);
        registerCudaKernels(*r);
        return r;
    }();
    return *reg;
}

void KernelRegistry::add(const std::string& kind, Backend backend, KernelFn fn) {
    m_kernels[{kind, backend}] = std::move(fn);
}

const KernelFn* KernelRegistry::find(const std::string& kind, Backend backend) const {
    auto it = m_kernels.find({kind, backend});
    return it == m_kernels.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::kinds(Backend backend) const {
    std::vector<std::string> out;
    for (const auto& [key, fn] : m_kernels)
        if (key.second == backend) out.push_back(key.first);
    return out;
}

} // namespace passlens
