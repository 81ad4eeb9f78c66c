#pragma once
/// @file Executor.h
/// Runs a FunctionGraph of any phase: nodes in topological order through the kernel registry,
/// host kinds on the CPU backend, GPU kinds on the CUDA backend (or emulated on the CPU backend
/// when there is no CUDA device), transfers as copies. A value is released right after its last
/// client has run.
#include "passlens/kernels/ExecOptions.h"
#include "passlens/kernels/Kernel.h"

#include <passlens/ir/FunctionGraph.h>
#include <passlens/trace/ExecutionProfile.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// Per-run measurements filled by Executor::run when asked.
struct RunTimings {
    /// per step (Executor::steps() order), microseconds; after a failed run, NaN for the CUDA
    /// steps whose event time is unknown (the failing step, those after it, all after a fault)
    std::vector<double> stepUs;
    std::vector<std::size_t> stepBytes; ///< bytes moved, for transfer steps (0 otherwise)
    /// per step: the element-wise step was applied by the kernel of steps[fusedInto] (its time
    /// is in that step's; its own stepUs is 0), or the in-place Join's inputs were all written
    /// into its output by their producers (it did nothing; stepUs 0)
    std::vector<bool> stepFused;
    /// A copy the executor made around a step of a CUDA run, not a transfer node: a CPU step's
    /// device inputs downloaded before it, an emulated step's outputs uploaded after it. Timed
    /// with device events apart from the step (whose stepUs leaves it out), in execution order.
    struct ImplicitTransfer {
        std::size_t step = 0; ///< index in Executor::steps()
        bool toDevice = false;
        std::size_t bytes = 0;
        double us = 0; ///< NaN after a failed run when unknown
    };
    std::vector<ImplicitTransfer> implicitTransfers;
    double totalUs = 0; ///< wall time of the whole run
};

/// Thrown when execution fails (missing kernel, bad runtime shapes, failed assertion, missing
/// constant data). The message names the node (op, id and name) and the reason.
class ExecError : public Error {
public:
    using Error::Error;
};

/// Shared state of one executor (and the executors of its nested graphs).
struct ExecContext {
    std::shared_ptr<BufferPool> pool;
    Backend gpuBackend = Backend::Cpu; ///< where GPU kinds run
    int device = 0;
    ExecOptions options;
    std::string deviceName; ///< "cpu" or "cuda:0 NVIDIA H200"
    /// The CUDA device when GPU kinds run there (gpuBackend == Cuda), else null.
    std::shared_ptr<DeviceBackend> gpu;
    /// A device tensor in the executor's pool (CUDA backend only).
    Tensor allocateDevice(DType dtype, Shape shape);
    /// Growable host scratch memory for kernels (im2col); valid until the next call.
    float* scratch(std::size_t floats);
    std::vector<float> scratchBuffer;
};

/// One scheduled node.
struct ExecStep {
    const Apply* node = nullptr;
    StepKind kind = StepKind::Kernel;
    Backend backend = Backend::Cpu;
    const KernelFn* fn = nullptr;
    std::vector<int> inSlots, outSlots;
    std::vector<bool> lastUse;      ///< per input: this step is its last reader
    std::string why;                ///< for Missing / Emulated: the reason
    bool deviceTimed = false;       ///< timed with device events (CUDA kernels and transfers)
    std::vector<bool> uploadOutput; ///< Emulated on a CUDA context: outputs to copy to the device
    mutable std::unique_ptr<KernelState> state;
    void* timer = nullptr;         ///< DeviceBackend timer of a device-timed step
    std::vector<void*> copyTimers; ///< DeviceBackend timers of the step's implicit transfers
    /// Epilogue fusion, producer side: the element-wise step the kernel may apply to output 0
    /// (fusedStep, its index) through `epilogue`.
    std::unique_ptr<OutputEpilogue> epilogue;
    int fusedStep = -1;
    /// Consumer side: the producing step (fusedInto) and which input is its output (fusedInput).
    /// When that kernel applied the epilogue, this step passes the input through unchanged.
    int fusedInto = -1;
    int fusedInput = -1;
    /// In-place Join, writer side: this convolution writes output 0 into block joinOffset
    /// (elements) of the output of step joinStep, shaped joinShape (when the kernel accepts it).
    int joinStep = -1;
    std::int64_t joinOffset = 0;
    Shape joinShape;
    /// Join side: its output buffer (static shape joinShape, dtype joinDType) is handed to the
    /// writers; when every input arrives as its block the Join passes the buffer on.
    bool joinInPlace = false;
    DType joinDType = DType::Float32;
    std::vector<std::int64_t> joinOffsets; ///< per input, element offset of its block
};

class Executor {
public:
    /// Plans the execution of `graph` (which must outlive the executor). Throws ExecError when
    /// a constant used by the graph has no data (naming the constant and the reason), or when
    /// DeviceChoice::Cuda is asked for and there is no device. Nodes without a kernel do not
    /// throw here: they are StepKind::Missing and fail at run time.
    explicit Executor(const FunctionGraph& graph, ExecOptions options = {});
    /// A nested executor sharing the context of its parent (OnnxIf branches).
    Executor(const FunctionGraph& graph, std::shared_ptr<ExecContext> context);
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    /// Runs the graph. `inputs` bind the graph inputs by position (count, dtype and rank are
    /// checked; dims are checked where the type is static). Returns the outputs in order.
    /// Throws ExecError naming the node on any failure. `timings`, when given, is filled.
    std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunTimings* timings = nullptr);

    const FunctionGraph& graph() const { return m_graph; }
    const std::vector<ExecStep>& steps() const { return m_steps; }
    /// "cpu" or "cuda:0 NAME"; GPU kinds on the CPU add " (GPU ops emulated on CPU)".
    std::string deviceDescription() const;
    /// True when GPU kinds run on the CPU backend.
    bool gpuEmulated() const { return m_ctx->gpuBackend == Backend::Cpu; }
    /// Steps whose kind has no kernel ("OnnxFoo (node #3)"), empty when the graph can run.
    std::vector<std::string> missingKernels() const;
    ExecContext& context() { return *m_ctx; }
    /// The executor's own planning on the CPU backend: per convolution, the element-wise node
    /// fused into it as its epilogue or why none is; per Join / GpuJoin, whether its inputs are
    /// written in place into its output or why not (epilogue fusion decisions in execution order,
    /// then the Joins'). Empty for a graph with neither.
    const std::vector<PlanDecision>& plan() const { return m_plan; }

private:
    void planSteps();
    /// Why a planning pass does not run ("not planned with a CUDA device", "<pass> is off
    /// (ExecOptions::<option>, <variable>=off)"), "" when it does.
    std::string passOff(bool enabled, const char* pass, const char* option, const char* variable) const;
    /// Records that `pass` does not apply to `node`, and why.
    void declined(PlanDecision::Pass pass, const Apply& node, const std::string& reason);
    void planEpilogueFusion();
    void planJoinInPlace();
    const FunctionGraph& m_graph;
    std::shared_ptr<ExecContext> m_ctx;
    std::vector<ExecStep> m_steps;
    std::vector<PlanDecision> m_plan;
    std::vector<Tensor> m_constSlots; ///< per slot: constant tensor (defined) or empty
    std::vector<int> m_inputSlots, m_outputSlots;
    int m_numSlots = 0;
};

/// "Elemwise{add} (node #12 'Add_3')".
std::string describeNode(const Apply& node);

/// Threads of the CPU backend's BLAS (OpenBLAS; GEMM, im2col and Winograd convolutions);
/// benchmarks compare at 1 thread. The other CPU kernels run on the calling thread.
void setCpuThreads(int threads);
/// The BLAS thread count in effect (OpenBLAS's default: OPENBLAS_NUM_THREADS, else every core).
int cpuThreads();
/// The CPU backend's BLAS, e.g. "OpenBLAS SkylakeX".
std::string cpuBackendDescription();

} // namespace passlens
