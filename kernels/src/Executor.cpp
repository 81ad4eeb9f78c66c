// Executor: plans a FunctionGraph (slots, last uses, kernels per backend) and runs it.
#include "passlens/kernels/Executor.h"

#include "passlens/kernels/DeviceInfo.h"

#include "cpu/ElemwiseEngine.h"

#include <passlens/io/Failure.h>
#include <passlens/ir/Error.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <limits>
#include <set>
#include <unordered_map>

namespace passlens {

namespace {
using Clock = std::chrono::steady_clock;
double usSince(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// Call inside a catch block: the exception being handled again, as an ExecError of `where` (a
// node, an input, a constant). passlens::Error keeps its text, with `where` in front unless it
// starts with it; an ExecError already names its place; out of memory and the standard
// library's exceptions become words (currentExceptionMessage), never the library's raw text.
[[noreturn]] void rethrowAt(const std::string& where) {
    try {
        throw;
    } catch (const ExecError&) {
        throw;
    } catch (const Error& e) {
        const std::string msg = e.what();
        throw ExecError(msg.starts_with(where) ? msg : where + ": " + msg);
    } catch (const std::bad_alloc&) {
        MemoryReserve::rearm(); // unwound: the reserve (where one is held) is taken again
        throw ExecError(where + ": out of host memory");
    } catch (...) {
        throw ExecError(currentExceptionMessage(where));
    }
}

} // namespace

std::string describeNode(const Apply& node) {
    std::string s = node.op().str() + " (node #" + std::to_string(node.id());
    if (!node.name().empty()) s += " '" + node.name() + "'";
    return s + ")";
}

Tensor ExecContext::allocateDevice(DType dtype, Shape shape) {
    return Tensor::empty(dtype, std::move(shape), pool.get(), MemoryKind::Device, device);
}

float* ExecContext::scratch(std::size_t floats) {
    if (scratchBuffer.size() < floats) scratchBuffer.resize(floats);
    return scratchBuffer.data();
}

// ------------------------------------------------------------------ construction
Executor::Executor(const FunctionGraph& graph, ExecOptions options) try
    : m_graph(graph) {
    m_ctx = std::make_shared<ExecContext>();
    m_ctx->pool = std::make_shared<BufferPool>();
    m_ctx->pool->setPoison(options.poison);
    m_ctx->options = options;
    m_ctx->deviceName = "cpu";
    if (options.device != DeviceChoice::Cpu) {
        const DeviceInfo info = queryDevices();
        const bool haveCuda = info.deviceCount > 0;
        if (options.device == DeviceChoice::Cuda && !haveCuda)
            throw ExecError("--device cuda: " + (info.error.empty() ? std::string("no CUDA device") : info.error));
        (void)KernelRegistry::instance(); // registers the backends (and the CUDA device factory)
        if (haveCuda && deviceBackendFactory()) {
            try {
                m_ctx->gpu = deviceBackendFactory()(0);
            } catch (const std::exception& e) {
                if (options.device == DeviceChoice::Cuda) throw ExecError(std::string("--device cuda: ") + e.what());
            }
            if (m_ctx->gpu) {
                m_ctx->gpuBackend = Backend::Cuda;
                m_ctx->device = m_ctx->gpu->device();
                m_ctx->deviceName = m_ctx->gpu->name();
                m_ctx->pool->setPinnedHost(true);
            }
        } else if (options.device == DeviceChoice::Cuda) {
            throw ExecError("--device cuda: this build has no CUDA backend");
        }
    }
    planSteps();
} catch (...) {
    rethrowAt("planning the execution");
}

Executor::Executor(const FunctionGraph& graph, std::shared_ptr<ExecContext> context) try
    : m_graph(graph)
    , m_ctx(std::move(context)) {
    planSteps();
} catch (...) {
    rethrowAt("planning the execution");
}

Executor::~Executor() {
    for (ExecStep& s : m_steps) {
        if (s.timer && m_ctx->gpu) m_ctx->gpu->timerDestroy(s.timer);
        for (void* t : s.copyTimers)
            if (m_ctx->gpu) m_ctx->gpu->timerDestroy(t);
    }
}

void Executor::planSteps() {
    const KernelRegistry& reg = KernelRegistry::instance();
    std::unordered_map<const Variable*, int> slotOf;
    auto slot = [&](const Variable* v) {
        auto [it, added] = slotOf.emplace(v, m_numSlots);
        if (added) ++m_numSlots;
        return it->second;
    };
    for (const Variable* v : m_graph.inputs()) m_inputSlots.push_back(slot(v));
    const std::vector<Apply*>& topo = m_graph.toposort();
    m_steps.reserve(topo.size());
    for (const Apply* n : topo) {
        ExecStep s;
        s.node = n;
        for (const Variable* v : n->inputs()) s.inSlots.push_back(slot(v));
        for (const Variable* v : n->outputs()) s.outSlots.push_back(slot(v));
        const Op& op = n->op();
        const std::string& kind = op.kind();
        if (op.isTransfer()) {
            s.kind = StepKind::Transfer;
            s.backend = m_ctx->gpuBackend;
            s.fn = reg.find(kind, m_ctx->gpuBackend);
            if (!s.fn) s.fn = reg.find(kind, Backend::Cpu);
        } else if (op.isGpu()) {
            if (m_ctx->gpuBackend == Backend::Cuda) {
                s.fn = reg.find(kind, Backend::Cuda);
                s.backend = Backend::Cuda;
                s.kind = StepKind::Kernel;
            }
            if (!s.fn) {
                s.fn = reg.find(kind, Backend::Cpu);
                s.backend = Backend::Cpu;
                s.kind = StepKind::Emulated;
                s.why = m_ctx->gpuBackend == Backend::Cuda ? "no CUDA kernel for " + kind + ": emulated on CPU"
                                                           : "emulated on CPU";
            }
        } else {
            s.fn = reg.find(kind, Backend::Cpu);
            s.backend = Backend::Cpu;
            s.kind = StepKind::Kernel;
        }
        if (!s.fn) {
            s.kind = StepKind::Missing;
            s.why = "no kernel for op kind '" + kind + "'";
        }
        if (m_ctx->gpuBackend == Backend::Cuda) {
            s.deviceTimed = (s.kind == StepKind::Kernel && s.backend == Backend::Cuda) ||
                            (s.kind == StepKind::Transfer && s.backend == Backend::Cuda);
            s.uploadOutput.assign(static_cast<std::size_t>(n->nout()), false);
            if (s.kind == StepKind::Emulated)
                for (int k = 0; k < n->nout(); ++k)
                    s.uploadOutput[static_cast<std::size_t>(k)] = n->output(k)->type().isGpu();
        }
        m_steps.push_back(std::move(s));
    }
    for (const Variable* v : m_graph.outputs()) m_outputSlots.push_back(slot(v));

    // Constants: borrowed (no copy) from the graph's constant data.
    m_constSlots.assign(static_cast<std::size_t>(m_numSlots), Tensor());
    for (const auto& [v, sl] : slotOf) {
        if (!v->isConstant()) continue;
        const auto& data = v->constant();
        std::string users;
        for (const Client& c : v->clients())
            if (c.node) {
                users = describeNode(*c.node);
                break;
            }
        const std::string constant = "constant '" + (v->name().empty() ? "#" + std::to_string(v->id()) : v->name()) +
                                     "'" + (users.empty() ? std::string() : " used by " + users);
        if (!data || !data->loaded())
            throw ExecError(constant + " has no data" +
                            (data && !data->missing.empty() ? ": " + data->missing : std::string()));
        try {
            Tensor t = Tensor::fromConstant(*data);
            if (m_ctx->gpu && v->type().isGpu())
                t = m_ctx->gpu->upload(t, *m_ctx->pool); // GPU constants live on the device
            m_constSlots[static_cast<std::size_t>(sl)] = std::move(t);
        } catch (...) {
            rethrowAt(constant);
        }
    }

    // Last uses: a value is released after the last step that reads it, unless it is a graph
    // output (or a constant, which the executor keeps).
    std::vector<int> last(static_cast<std::size_t>(m_numSlots), -1);
    for (std::size_t i = 0; i < m_steps.size(); ++i)
        for (int sl : m_steps[i].inSlots) last[static_cast<std::size_t>(sl)] = static_cast<int>(i);
    for (int sl : m_outputSlots) last[static_cast<std::size_t>(sl)] = INT_MAX;
    for (std::size_t i = 0; i < m_steps.size(); ++i) {
        ExecStep& s = m_steps[i];
        s.lastUse.assign(s.inSlots.size(), false);
        for (std::size_t k = 0; k < s.inSlots.size(); ++k) {
            const int sl = s.inSlots[k];
            if (m_constSlots[static_cast<std::size_t>(sl)].defined()) continue;
            // only the final occurrence of a slot within the step's inputs carries the release
            bool laterSame = false;
            for (std::size_t j = k + 1; j < s.inSlots.size(); ++j) laterSame |= s.inSlots[j] == sl;
            s.lastUse[k] = !laterSame && last[static_cast<std::size_t>(sl)] == static_cast<int>(i);
        }
    }
    planEpilogueFusion();
    planJoinInPlace();
}

std::string Executor::deviceDescription() const {
    std::string d = m_ctx->deviceName;
    bool anyGpu = false, anyEmulated = false;
    for (const ExecStep& s : m_steps) {
        anyGpu |= s.node->op().isGpu();
        anyEmulated |= s.kind == StepKind::Emulated;
    }
    if (!anyGpu) return "cpu"; // host ops only: the GPU (if any) is not used
    if (anyEmulated)
        d += m_ctx->gpuBackend == Backend::Cpu ? " (GPU ops emulated on CPU)" : " (some GPU ops emulated on CPU)";
    return d;
}

std::vector<std::string> Executor::missingKernels() const {
    std::vector<std::string> out;
    for (const ExecStep& s : m_steps)
        if (s.kind == StepKind::Missing) out.push_back(describeNode(*s.node));
    return out;
}

// ------------------------------------------------------------------ running
namespace {
// The ops whose kernels take ONNX's sequence and optional values (the others only see tensors:
// the executor refuses those values before their kernels run).
bool takesNonTensorValues(const std::string& kind) {
    static const std::set<std::string> kinds = {"OnnxIdentity",
                                                "OnnxIf",
                                                "OnnxLoop",
                                                "OnnxSequenceAt",
                                                "OnnxSequenceInsert",
                                                "OnnxSequenceErase",
                                                "OnnxSequenceLength",
                                                "OnnxSequenceConstruct",
                                                "OnnxSequenceMap",
                                                "OnnxConcatFromSequence",
                                                "OnnxOptional",
                                                "OnnxOptionalHasElement",
                                                "OnnxOptionalGetElement"};
    return kinds.count(kind) > 0;
}

// A value where an optional one is declared is a present optional value, as in ONNX (a Loop's
// carried optional(seq(...)) the body returns as a plain sequence).
Tensor asDeclared(const Type& t, Tensor x) {
    if (t.kind() == Type::Kind::Optional && x.kind() != Type::Kind::Optional) return Tensor::optional(std::move(x));
    return x;
}

// The way a value differs from its type, "" when it matches. The items of a sequence or optional
// value are checked for kind and dtype only: ONNX's shape inference of sequence elements is best
// effort (a Loop's seq(float32[]) may collect [1]-shaped items), and its runner checks no dims.
std::string typeMismatch(const Type& t, const Tensor& x, bool dims = true) {
    if (t.kind() != x.kind() || !t.isTensor()) {
        if (t.kind() != x.kind()) return x.typeStr() + ", expected " + t.str();
        const auto& items = x.items();
        for (std::size_t i = 0; i < items.size(); ++i) {
            const std::string bad = typeMismatch(t.elementType(), items[i], false);
            if (!bad.empty()) return "item " + std::to_string(i) + " with " + bad + " (in " + t.str() + ")";
        }
        return {};
    }
    if (t.dtype() != x.dtype()) return "dtype " + std::string(dtypeName(x.dtype())) + ", expected " + t.str();
    if (!dims) return {};
    if (t.rankKnown() && t.ndim() != x.ndim()) return "shape " + shapeStr(x.shape()) + ", expected " + t.str();
    if (t.rankKnown())
        for (int a = 0; a < t.ndim(); ++a) {
            const std::int64_t d = t.dims()[static_cast<std::size_t>(a)];
            if (d >= 0 && d != x.dim(a)) return "shape " + shapeStr(x.shape()) + ", expected " + t.str();
        }
    return {};
}
} // namespace

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs, RunTimings* timings) try {
    const auto runStart = Clock::now();
    if (inputs.size() != m_inputSlots.size())
        throw ExecError("the graph takes " + std::to_string(m_inputSlots.size()) + " inputs, " +
                        std::to_string(inputs.size()) + " given");
    std::vector<Tensor> slots = m_constSlots;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Variable* v = m_graph.inputs()[i];
        if (!inputs[i].defined()) throw ExecError("input " + std::to_string(i) + " '" + v->name() + "' is not given");
        const std::string input = "input " + std::to_string(i) + " '" + v->name() + "'";
        const Tensor in = asDeclared(v->type(), inputs[i]);
        const std::string bad = typeMismatch(v->type(), in);
        if (!bad.empty()) throw ExecError(input + " has " + bad);
        try {
            if (m_ctx->gpu && v->type().isGpu() && in.onHost())
                slots[static_cast<std::size_t>(m_inputSlots[i])] = m_ctx->gpu->upload(in, *m_ctx->pool);
            else
                slots[static_cast<std::size_t>(m_inputSlots[i])] = in;
        } catch (...) {
            rethrowAt(input);
        }
    }
    if (timings) {
        timings->stepUs.assign(m_steps.size(), 0.0);
        timings->stepBytes.assign(m_steps.size(), 0);
    }
    if (timings) {
        timings->stepFused.assign(m_steps.size(), false);
        timings->implicitTransfers.clear();
    }
    std::vector<void*> implicitTimers; // the timers of timings->implicitTransfers
    // a copy around step si that no transfer node makes, timed apart from the step when profiling
    auto implicitCopy = [&](ExecStep& s, std::size_t si, std::size_t& k, bool toDevice, const Tensor& t) {
        void* timer = nullptr;
        if (timings) {
            if (s.copyTimers.size() <= k) s.copyTimers.push_back(m_ctx->gpu->timerCreate());
            timer = s.copyTimers[k];
            m_ctx->gpu->timerStart(timer);
        }
        ++k;
        Tensor r = toDevice ? m_ctx->gpu->upload(t, *m_ctx->pool) : m_ctx->gpu->download(t, *m_ctx->pool);
        if (timer) {
            m_ctx->gpu->timerStop(timer);
            timings->implicitTransfers.push_back({si, toDevice, t.nbytes(), 0.0});
            implicitTimers.push_back(timer);
        }
        return r;
    };
    std::vector<Tensor> ins, outs;
    std::vector<char> fusedDone(m_steps.size(), 0);
    std::vector<Tensor> joinBuffers(m_steps.size()); // in-place Joins' outputs, from their first writer on
    std::size_t si = 0;
    // When the run fails, the device steps that completed before the failure keep their event
    // times; the others (all of them when the device cannot report, e.g. after a fault) are NaN.
    struct FailureTimes {
        Executor& ex;
        RunTimings* timings;
        const std::size_t& failed;
        const std::vector<void*>& implicitTimers;
        const int exceptions = std::uncaught_exceptions();
        ~FailureTimes() {
            if (std::uncaught_exceptions() == exceptions || !timings || !ex.m_ctx->gpu) return;
            bool synced = true;
            try {
                ex.m_ctx->gpu->synchronize();
            } catch (...) {
                synced = false;
            }
            for (std::size_t k = 0; k < ex.m_steps.size(); ++k) {
                const ExecStep& st = ex.m_steps[k];
                if (!st.deviceTimed) continue;
                double us = std::numeric_limits<double>::quiet_NaN();
                try {
                    if (synced && k < failed && st.timer) us = ex.m_ctx->gpu->timerElapsedUs(st.timer);
                } catch (...) {}
                timings->stepUs[k] = us;
            }
            for (std::size_t j = 0; j < timings->implicitTransfers.size() && j < implicitTimers.size(); ++j) {
                double us = std::numeric_limits<double>::quiet_NaN();
                try {
                    if (synced) us = ex.m_ctx->gpu->timerElapsedUs(implicitTimers[j]);
                } catch (...) {}
                timings->implicitTransfers[j].us = us;
            }
        }
    } failureTimes{*this, timings, si, implicitTimers};
    for (; si < m_steps.size(); ++si) {
        ExecStep& s = m_steps[si];
        const Apply& node = *s.node;
        // every failure of a step names its node: the kernel's own errors, and those of the
        // copies, allocations and checks around it
        try {
            if (fusedDone[si]) {
                // applied by the kernel of step fusedInto: the (last and only) use of its output
                // now holds this node's value
                Tensor& t = slots[static_cast<std::size_t>(s.inSlots[static_cast<std::size_t>(s.fusedInput)])];
                const std::string bad = typeMismatch(node.output(0)->type(), t);
                if (!bad.empty()) throw ExecError(describeNode(node) + ": output 0 has " + bad);
                if (!node.output(0)->clients().empty())
                    slots[static_cast<std::size_t>(s.outSlots[0])] = std::move(t);
                else
                    t = Tensor();
                if (timings) timings->stepFused[si] = true;
                continue;
            }
            if (s.kind == StepKind::Missing)
                throw ExecError(describeNode(node) + ": " + s.why + " on the " +
                                (m_ctx->gpuBackend == Backend::Cuda ? "CUDA or CPU" : "CPU") + " backend");
            ins.clear();
            for (std::size_t k = 0; k < s.inSlots.size(); ++k) {
                Tensor& t = slots[static_cast<std::size_t>(s.inSlots[k])];
                if (!t.defined())
                    throw ExecError(describeNode(node) + ": input " + std::to_string(k) +
                                    " has no value (internal error)");
                if (!t.isDense() && !takesNonTensorValues(node.op().kind()))
                    throw ExecError(describeNode(node) + ": input " + std::to_string(k) + " is " + t.typeStr() +
                                    ", the op takes tensors");
                if (t.holdsStrings() && !takesStringTensors(node.op().kind()))
                    throw ExecError(describeNode(node) + ": input " + std::to_string(k) + " is " + t.typeStr() +
                                    ", the op's kernel takes no string tensors");
                if (s.lastUse[k])
                    ins.push_back(std::move(t));
                else
                    ins.push_back(t);
            }
            outs.assign(s.outSlots.size(), Tensor());
            std::size_t copies = 0; // implicit transfers of this step so far (their timers' index)
            if (m_ctx->gpu && s.backend == Backend::Cpu && s.kind != StepKind::Transfer) {
                // a CPU kernel on a CUDA context: device inputs come to the host, except where only
                // the shape is read (Shape, Shape_i) or the value is passed through (Assert's x)
                const std::string& k = node.op().kind();
                for (std::size_t i = 0; i < ins.size(); ++i) {
                    if (ins[i].onHost() || k == "Shape" || k == "Shape_i" || (k == "Assert" && i == 0)) continue;
                    ins[i] = implicitCopy(s, si, copies, false, ins[i]);
                }
            }
            const bool devTimed = timings && s.deviceTimed && m_ctx->gpu;
            if (devTimed) {
                if (!s.timer) s.timer = m_ctx->gpu->timerCreate();
                m_ctx->gpu->timerStart(s.timer);
            }
            if (s.joinInPlace && joinBuffers[si].defined()) {
                // every input written into its block of the buffer by its producer: nothing to do
                Tensor& buf = joinBuffers[si];
                const std::size_t es = dtypeSize(s.joinDType);
                bool all = ins.size() == s.joinOffsets.size();
                for (std::size_t k = 0; k < ins.size() && all; ++k)
                    all = ins[k].onHost() && ins[k].dtype() == s.joinDType &&
                          ins[k].rawData() ==
                              static_cast<const char*>(buf.rawData()) + static_cast<std::size_t>(s.joinOffsets[k]) * es;
                if (all) {
                    ins.clear();
                    if (!node.output(0)->clients().empty())
                        slots[static_cast<std::size_t>(s.outSlots[0])] = std::move(buf);
                    buf = Tensor();
                    if (timings) timings->stepFused[si] = true;
                    continue;
                }
                buf = Tensor();
            }
            const auto t0 = timings ? Clock::now() : Clock::time_point();
            double hostUs = 0; // the step's own time on the host, without the uploads after it
            {
                KernelCall call{node, ins, outs, s.state, *m_ctx, nullptr, false, Tensor()};
                call.epilogue = s.epilogue.get();
                if (s.joinStep >= 0) {
                    Tensor& buf = joinBuffers[static_cast<std::size_t>(s.joinStep)];
                    const ExecStep& js = m_steps[static_cast<std::size_t>(s.joinStep)];
                    if (!buf.defined()) buf = Tensor::empty(js.joinDType, js.joinShape, m_ctx->pool.get());
                    call.outputInto = buf.sliceView(s.joinOffset, s.joinShape);
                }
                (*s.fn)(call);
                if (timings && !devTimed) hostUs = usSince(t0);
                if (call.epilogueApplied && s.fusedStep >= 0) fusedDone[static_cast<std::size_t>(s.fusedStep)] = 1;
                for (std::size_t k = 0; k < s.uploadOutput.size() && k < outs.size(); ++k)
                    if (s.uploadOutput[k] && outs[k].defined() && outs[k].onHost())
                        outs[k] = implicitCopy(s, si, copies, true, outs[k]);
                // a kernel fault surfaces here, named after this node, instead of at a later sync
                if (m_ctx->gpu && m_ctx->options.cudaSyncEachStep) m_ctx->gpu->synchronize();
            }
            if (devTimed) m_ctx->gpu->timerStop(s.timer);
            if (timings) {
                timings->stepUs[si] = devTimed ? 0.0 : hostUs;
                if (s.kind == StepKind::Transfer && !outs.empty() && outs[0].defined())
                    timings->stepBytes[si] = outs[0].nbytes();
            }
            for (std::size_t k = 0; k < outs.size(); ++k) {
                const Variable* v = node.output(static_cast<int>(k));
                if (!outs[k].defined())
                    throw ExecError(describeNode(node) + ": the kernel produced no output " + std::to_string(k));
                // Onnx ops whose output ONNX shape inference could not type carry an assumed
                // float32[*]: their real dtype is accepted
                const bool assumed = node.op().isOnnx() && v->type().isTensor() && !v->type().rankKnown();
                outs[k] = asDeclared(v->type(), std::move(outs[k]));
                const std::string bad = assumed ? std::string() : typeMismatch(v->type(), outs[k]);
                if (!bad.empty()) throw ExecError(describeNode(node) + ": output " + std::to_string(k) + " has " + bad);
                if (!v->clients().empty()) slots[static_cast<std::size_t>(s.outSlots[k])] = std::move(outs[k]);
            }
            ins.clear();
            outs.clear();
        } catch (...) {
            rethrowAt(describeNode(node));
        }
    }
    std::vector<Tensor> result;
    result.reserve(m_outputSlots.size());
    for (int sl : m_outputSlots) result.push_back(slots[static_cast<std::size_t>(sl)]);
    if (m_ctx->gpu) {
        m_ctx->gpu->synchronize();
        if (timings)
            for (std::size_t si = 0; si < m_steps.size(); ++si)
                if (m_steps[si].deviceTimed && m_steps[si].timer)
                    timings->stepUs[si] = m_ctx->gpu->timerElapsedUs(m_steps[si].timer);
        if (timings)
            for (std::size_t j = 0; j < implicitTimers.size(); ++j)
                timings->implicitTransfers[j].us = m_ctx->gpu->timerElapsedUs(implicitTimers[j]);
    }
    if (timings) timings->totalUs = usSince(runStart);
    return result;
} catch (...) {
    // before the first step or after the last (binding, the final device synchronisation)
    rethrowAt("the run");
}

} // namespace passlens
