#pragma once
/// @file Kernel.h
/// Kernels and the kernel registry, keyed by (op kind, backend). A kernel computes the outputs
/// of one Apply node from its input tensors; output shapes are decided at run time.
#include "passlens/kernels/Tensor.h"

#include <passlens/ir/FunctionGraph.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace passlens {

/// Where a kernel runs.
enum class Backend : std::uint8_t { Cpu, Cuda };
/// "cpu" / "cuda".
const char* backendName(Backend b);

/// Per-node state a kernel may keep between runs (nested executors of OnnxIf, packed weights).
struct KernelState {
    virtual ~KernelState() = default;
};

struct ExecContext;

/// Whether the CPU kernel of op `kind` takes string tensors (ONNX's STRING): Cast, CastLike and
/// StringNormalizer, and the kernels that only pass a value on (Identity, If, Loop, Shape, Size,
/// the sequence and optional ops that hold items). The executor refuses a string tensor reaching
/// any other kernel, CUDA kernels included. Defined with the string kernels (OnnxStringKernels.cpp).
bool takesStringTensors(const std::string& kind);

/// Epilogue fusion (Executor.h): an element-wise node whose only non-constant input is this
/// node's output 0, to be applied by the kernel in place to blocks of that output while they are
/// still in cache. The output is seen as [N, C, S] (S = the dims after axis 1 flattened).
class OutputEpilogue {
public:
    virtual ~OutputEpilogue() = default;
    /// Whether it can be applied to an output `y` of this dtype and shape (result of the same
    /// shape and dtype). A kernel that does not apply it just leaves epilogueApplied false.
    virtual bool accepts(const Tensor& y) const = 0;
    /// Applies it in place to y[n, c, s0:s1] for c in [c0, c1).
    virtual void apply(Tensor& y, std::int64_t n, std::int64_t c0, std::int64_t c1, std::int64_t s0,
                       std::int64_t s1) const = 0;
};

/// Everything a kernel sees for one execution of one node.
struct KernelCall {
    const Apply& node;
    /// The node's inputs, in order. An input at its last use was moved here from the executor
    /// (so `inputs[i].uniquelyOwned()` means nobody else refers to its buffer and the kernel may
    /// overwrite it in place, see reuseOrAllocate).
    std::vector<Tensor>& inputs;
    /// To be filled: one tensor per node output.
    std::vector<Tensor>& outputs;
    std::unique_ptr<KernelState>& state;
    ExecContext& ctx;
    /// When not null, the kernel may apply this element-wise epilogue to its output 0 (every
    /// element exactly once, after the output's final value is known) and then sets
    /// epilogueApplied; the executor then skips the element-wise node.
    const OutputEpilogue* epilogue = nullptr;
    mutable bool epilogueApplied = false;
    /// In-place Join (Executor.h): when defined, a block of a Join's output that output 0 may be
    /// written into (a kernel that writes a fresh output takes it through allocateOutput0).
    Tensor outputInto;

    /// `outputInto` when it has this dtype and shape, else a new tensor (allocate).
    Tensor allocateOutput0(DType dtype, const Shape& shape) const;

    const Op& op() const { return node.op(); }
    const Tensor& in(int i) const { return inputs[static_cast<std::size_t>(i)]; }
    int nin() const { return static_cast<int>(inputs.size()); }
    /// A new host tensor from the executor's pool.
    Tensor allocate(DType dtype, Shape shape) const;
    /// Input `i`'s buffer when it may be overwritten (uniquely owned, writable, host, same dtype
    /// and element count), reshaped to `shape`; otherwise a new tensor.
    Tensor reuseOrAllocate(int i, DType dtype, const Shape& shape) const;
    /// Whether reuseOrAllocate(i, dtype, shape-with-numel) would reuse input i's buffer.
    bool canReuse(int i, DType dtype, std::int64_t numel) const;
    /// "Elemwise{add} (node #12 'Add_3')": for messages.
    std::string where() const;
    /// Throws passlens::Error("<where>: <why>").
    [[noreturn]] void fail(const std::string& why) const;
};

using KernelFn = std::function<void(KernelCall&)>;

/// The registry of kernels. The instance has every CPU kernel (and, in CUDA builds, every CUDA
/// kernel) registered on first use. Thread-safe for lookups after construction.
class KernelRegistry {
public:
    static KernelRegistry& instance();

    /// Registers (or replaces) the kernel of `kind` on `backend`.
    void add(const std::string& kind, Backend backend, KernelFn fn);
    /// The kernel, or nullptr when none is registered.
    const KernelFn* find(const std::string& kind, Backend backend) const;
    /// Registered kinds of a backend, sorted.
    std::vector<std::string> kinds(Backend backend) const;

private:
    KernelRegistry() = default;
    std::map<std::pair<std::string, Backend>, KernelFn> m_kernels;
};

/// A GPU device as the executor sees it: copies between host and device memory, and timing of
/// work queued on the device's stream. Implemented by the CUDA backend.
class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;
    /// "cuda:0 NVIDIA H200".
    virtual std::string name() const = 0;
    virtual int device() const = 0;
    /// A device copy of a host tensor (asynchronous on the device's stream).
    virtual Tensor upload(const Tensor& host, BufferPool& pool) = 0;
    /// A host copy (in page-locked memory when possible) of a device tensor; waits for it.
    virtual Tensor download(const Tensor& dev, BufferPool& pool) = 0;
    /// Waits for all queued work.
    virtual void synchronize() = 0;
    /// Timers around work on the stream (CUDA events): start, stop, then elapsedUs (waits).
    virtual void* timerCreate() = 0;
    virtual void timerDestroy(void* timer) = 0;
    virtual void timerStart(void* timer) = 0;
    virtual void timerStop(void* timer) = 0;
    virtual double timerElapsedUs(void* timer) = 0;
};

/// Opens device `index` (null when the build has no CUDA backend). Set by registerCudaKernels.
using DeviceBackendFactory = std::unique_ptr<DeviceBackend> (*)(int index);
DeviceBackendFactory& deviceBackendFactory();

/// Registration functions of the backends (called by KernelRegistry::instance()).
void registerCpuKernels(KernelRegistry& registry);
void registerCudaKernels(KernelRegistry& registry); ///< no-op without CUDA

} // namespace passlens
