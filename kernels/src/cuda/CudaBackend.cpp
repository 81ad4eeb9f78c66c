// CUDA backend (C++ side): the DeviceBackend of a CUDA device, the helpers its kernels share
// (CudaBackendCommon.h), the transfers and GpuElemwise, and the registration of every GPU kind of
// OPS.md on Backend::Cuda (the others are in CudaShapeKernels.cpp and CudaMathKernels.cpp).
// Device work goes through CudaOps.h (the .cu files); parameters are parsed with the CPU
// backend's helpers, so both backends read attributes the same way.
#include "../CudaHooks.h"
#include "../cpu/ElemwiseEngine.h"
#include "CudaBackendCommon.h"

#include <passlens/ir/Error.h>

#include <cstring>
#include <mutex>
#include <string>

namespace passlens::cudabackend {

namespace {
// Host buffers read by asynchronous copies still in flight: kept alive (so the pool cannot hand
// them to a CPU kernel) until the stream is next synchronised.
std::mutex g_inflightMutex;
std::vector<std::shared_ptr<Storage>> g_inflight;
} // namespace

void keepUntilSync(const std::shared_ptr<Storage>& s) {
    std::lock_guard<std::mutex> lock(g_inflightMutex);
    g_inflight.push_back(s);
}

void syncAndRelease(int device) {
    cuda::synchronize(device);
    std::lock_guard<std::mutex> lock(g_inflightMutex);
    g_inflight.clear();
}

// Asynchronous HtoD copy from a host tensor: pinned sources stay alive until the next sync,
// pageable ones are staged through the runtime's page-locked buffers (or, without page-locked
// memory, copied directly and waited for).
void copyIn(void* dst, const Tensor& host, int device) {
    if (host.storage()->pinned()) {
        cuda::copyHtoD(dst, host.rawData(), host.nbytes(), device);
        keepUntilSync(host.storage());
    } else if (!cuda::copyHtoDStaged(dst, host.rawData(), host.nbytes(), device)) {
        cuda::copyHtoD(dst, host.rawData(), host.nbytes(), device);
        cuda::synchronize(device);
    }
}

// Named contexts: "" is device 0; a name ending in digits ("dev1", "gpu2") is that device when it
// exists; anything else is device 0. Every kernel runs on the executor's device (0), so a context
// that names another existing device is refused rather than read across devices.
int deviceOfContext(const KernelCall& c) {
    const std::string ctx = c.op().str("context");
    std::size_t i = ctx.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(ctx[i - 1]))) --i;
    if (i == ctx.size()) return c.ctx.device;
    const int d = std::stoi(ctx.substr(i));
    if (d >= cuda::deviceCount() || d == c.ctx.device) return c.ctx.device;
    c.fail("context '" + ctx + "' is CUDA device " + std::to_string(d) +
           ", but PassLens runs every CUDA kernel on device " + std::to_string(c.ctx.device) +
           " (several devices are not supported)");
}

Tensor devAlloc(const KernelCall& c, DType d, Shape s, int device) {
    const int dev = device >= 0 ? device : c.ctx.device;
    try {
        return Tensor::empty(d, std::move(s), c.ctx.pool.get(), MemoryKind::Device, dev);
    } catch (const Error& e) {
        c.fail(e.what()); // "out of device memory: cannot allocate N bytes", with the node
    }
}

const Tensor& needDevice(const KernelCall& c, int i) {
    const Tensor& t = c.in(i);
    if (t.onHost()) c.fail("input " + std::to_string(i) + " is in host memory, a CUDA kernel needs device memory");
    return t;
}

// The dtypes the CUDA kernels load and store (float16, bfloat16 and complex are refused).
void needSupported(const KernelCall& c, DType d) {
    if (d == DType::Float16 || d == DType::BFloat16 || isComplex(d))
        c.fail("dtype " + std::string(dtypeName(d)) + " is not supported by the CUDA backend");
}

// t in dtype d on the device (converted as the CPU's convertElements when it differs)
Tensor asDeviceDType(const KernelCall& c, const Tensor& t, DType d) {
    if (t.dtype() == d) return t;
    needSupported(c, t.dtype());
    needSupported(c, d);
    Tensor conv = devAlloc(c, d, t.shape());
    cuda::convert(conv.rawData(), dt(d), t.rawData(), dt(t.dtype()), t.numel(), c.ctx.device);
    return conv;
}

namespace {

class CudaDevice final : public DeviceBackend {
public:
    explicit CudaDevice(int index)
        : m_index(index)
        , m_name("cuda:" + std::to_string(index) + " " + cuda::deviceName(index)) {}
    std::string name() const override { return m_name; }
    int device() const override { return m_index; }
    Tensor upload(const Tensor& host, BufferPool& pool) override {
        Tensor d = Tensor::empty(host.dtype(), host.shape(), &pool, MemoryKind::Device, m_index);
        copyIn(d.rawData(), host, m_index);
        return d;
    }
    Tensor download(const Tensor& dev, BufferPool& pool) override {
        Tensor h = Tensor::empty(dev.dtype(), dev.shape(), &pool, MemoryKind::Host, 0);
        cuda::copyDtoH(h.rawData(), dev.rawData(), dev.nbytes(), dev.device());
        return h;
    }
    void synchronize() override { syncAndRelease(m_index); }
    void* timerCreate() override { return cuda::timerCreate(m_index); }
    void timerDestroy(void* t) override { cuda::timerDestroy(static_cast<cuda::Timer*>(t)); }
    void timerStart(void* t) override { cuda::timerStart(static_cast<cuda::Timer*>(t)); }
    void timerStop(void* t) override { cuda::timerStop(static_cast<cuda::Timer*>(t)); }
    double timerElapsedUs(void* t) override { return 1000.0 * cuda::timerElapsedMs(static_cast<cuda::Timer*>(t)); }

private:
    int m_index;
    std::string m_name;
};

std::unique_ptr<DeviceBackend> openDevice(int index) {
    if (cuda::deviceCount() <= index) return nullptr;
    CudaHooks& h = cudaHooks();
    h.allocate = [](std::size_t bytes, int device) { return cuda::deviceAlloc(bytes, device); };
    h.free = [](void* p, int device) { cuda::deviceFree(p, device); };
    h.allocatePinned = [](std::size_t bytes) { return cuda::pinnedAlloc(bytes); };
    h.freePinned = [](void* p) { cuda::pinnedFree(p); };
    return std::make_unique<CudaDevice>(index);
}

// ------------------------------------------------------------------ transfers
void gpuFromHost(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int dev = deviceOfContext(c);
    if (!x.onHost()) c.fail("input is already in device memory");
    Tensor d = devAlloc(c, x.dtype(), x.shape(), dev);
    copyIn(d.rawData(), x, dev);
    c.outputs[0] = std::move(d);
}

void hostFromGpu(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    Tensor h = c.allocate(x.dtype(), x.shape()); // pinned with the CUDA backend
    cuda::copyDtoH(h.rawData(), x.rawData(), x.nbytes(), x.device());
    c.outputs[0] = std::move(h);
}

void gpuToGpu(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    const int dev = deviceOfContext(c);
    Tensor d = devAlloc(c, x.dtype(), x.shape(), dev);
    cuda::copyDtoD(d.rawData(), dev, x.rawData(), x.device(), x.nbytes());
    c.outputs[0] = std::move(d);
}

// ------------------------------------------------------------------ element-wise
struct ProgramState : KernelState {
    std::vector<DType> types;
    cuda::ElemProgram prog;
};

void gpuElemwise(KernelCall& c) {
    auto* st = dynamic_cast<ProgramState*>(c.state.get());
    bool same = st && st->types.size() == c.inputs.size();
    for (std::size_t i = 0; same && i < c.inputs.size(); ++i) same = st->types[i] == c.inputs[i].dtype();
    if (!same) {
        auto s = std::make_unique<ProgramState>();
        for (const Tensor& t : c.inputs) s->types.push_back(t.dtype());
        const cpu::ScalarProgram p = cpu::compileExpr(elemwiseExpression(c.op(), c.nin()), s->types);
        if (static_cast<int>(p.nodes.size()) > cuda::kMaxNodes)
            c.fail("the expression has more than " + std::to_string(cuda::kMaxNodes) + " nodes");
        s->prog.nNodes = static_cast<int>(p.nodes.size());
        s->prog.mode = p.mode == cpu::ScalarProgram::Mode::Float    ? 0
                       : p.mode == cpu::ScalarProgram::Mode::Double ? 1
                                                                    : 2;
        int argPos = 0;
        for (std::size_t i = 0; i < p.nodes.size(); ++i) {
            const cpu::ExprNode& n = p.nodes[i];
            cuda::ElemNode& e = s->prog.nodes[i];
            e.op = static_cast<int>(n.op);
            e.input = n.input;
            e.dtype = dt(n.dtype);
            e.p0 = n.p0;
            e.p1 = n.p1;
            e.unsigned64 = n.unsigned64 ? 1 : 0;
            e.argStart = argPos;
            e.nargs = static_cast<int>(n.args.size());
            for (int a : n.args) {
                if (argPos >= cuda::kMaxArgs) c.fail("the expression has too many arguments for the CUDA kernel");
                s->prog.args[argPos++] = a;
            }
        }
        st = s.get();
        c.state = std::move(s);
    }
    Shape out = c.in(0).shape();
    for (int i = 1; i < c.nin(); ++i) {
        const Shape& s = c.in(i).shape();
        if (s.size() != out.size()) c.fail("inputs have different ranks");
        for (std::size_t a = 0; a < out.size(); ++a) {
            if (s[a] == out[a] || s[a] == 1) continue;
            if (out[a] == 1)
                out[a] = s[a];
            else
                c.fail("shapes " + shapeStr(c.in(0).shape()) + " and " + shapeStr(s) + " do not broadcast at axis " +
                       std::to_string(a));
        }
    }
    if (static_cast<int>(out.size()) > cuda::kMaxDims) c.fail("more than 8 dimensions");
    if (c.nin() > cuda::kMaxInputs) c.fail("more than " + std::to_string(cuda::kMaxInputs) + " inputs");
    std::vector<cuda::ElemOperand> ops(static_cast<std::size_t>(c.nin()));
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = needDevice(c, i);
        const auto st2 = cpu::stridesOf(t.shape());
        ops[static_cast<std::size_t>(i)].data = t.rawData();
        ops[static_cast<std::size_t>(i)].dtype = dt(t.dtype());
        for (std::size_t a = 0; a < out.size(); ++a)
            ops[static_cast<std::size_t>(i)].strides[a] = (t.shape()[a] == 1 && out[a] != 1) ? 0 : st2[a];
    }
    Tensor y = devAlloc(c, outDType(c), out);
    cuda::elementwise(st->prog, ops.data(), c.nin(), y.rawData(), dt(y.dtype()), ll(out).data(),
                      static_cast<int>(out.size()), c.ctx.device);
    c.outputs[0] = std::move(y);
}

} // namespace

} // namespace passlens::cudabackend

namespace passlens {

void registerCudaKernels(KernelRegistry& r) {
    using namespace cudabackend;
    if (cuda::deviceCount() <= 0) return; // CPU-only machine: GPU kinds stay emulated on the CPU
    deviceBackendFactory() = &openDevice;
    const Backend B = Backend::Cuda;
    r.add("GpuFromHost", B, gpuFromHost);
    r.add("HostFromGpu", B, hostFromGpu);
    r.add("GpuToGpu", B, gpuToGpu);
    r.add("GpuElemwise", B, gpuElemwise);
    registerShapeKernels(r);
    registerMathKernels(r);
}

} // namespace passlens
