// CUDA backend (C++ side): the DeviceBackend of a CUDA device and the kernels of every GPU kind
// of OPS.md on Backend::Cuda. Device work goes through CudaOps.h (the .cu files); parameters are
// parsed here with the CPU backend's helpers, so both backends read attributes the same way.
#include "../CudaHooks.h"
#include "../cpu/Conv.h"
#include "../cpu/CpuCommon.h"
#include "../cpu/ElemwiseEngine.h"
#include "CudaOps.h"

#include "passlens/kernels/Executor.h"
#include "passlens/kernels/Kernel.h"

#include <passlens/ir/Error.h>

#include <cstring>
#include <mutex>
#include <string>

namespace passlens {

namespace {

using json = nlohmann::json;
using cpu::outDType;

// Host buffers read by asynchronous copies still in flight: kept alive (so the pool cannot hand
// them to a CPU kernel) until the stream is next synchronised.
std::mutex g_inflightMutex;
std::vector<std::shared_ptr<Storage>> g_inflight;

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
// pageable ones are waited for (the driver stages them anyway).
void copyIn(void* dst, const Tensor& host, int device) {
    cuda::copyHtoD(dst, host.rawData(), host.nbytes(), device);
    if (host.storage()->pinned())
        keepUntilSync(host.storage());
    else
        cuda::synchronize(device);
}

int dt(DType d) { return static_cast<int>(d); }

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

Tensor devAlloc(const KernelCall& c, DType d, Shape s, int device = -1) {
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

std::vector<long long> ll(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

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

// ------------------------------------------------------------------ shapes and indexing
Tensor stridedGather(const KernelCall& c, const Tensor& x, std::int64_t base, const Shape& dims,
                     const std::vector<std::int64_t>& strides) {
    Tensor y = devAlloc(c, x.dtype(), dims);
    if (y.numel() == 0) return y;
    const auto dst = cpu::stridesOf(dims);
    const std::size_t es = dtypeSize(x.dtype());
    cuda::stridedCopy(y.rawData(), ll(dst).data(),
                      static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(base) * es, ll(strides).data(),
                      ll(dims).data(), static_cast<int>(dims.size()), es, c.ctx.device);
    return y;
}

void gpuDimShuffle(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    const auto xs = cpu::stridesOf(x.shape());
    Shape out;
    std::vector<std::int64_t> st;
    std::int64_t prev = -1;
    bool monotone = true;
    for (const auto& e : c.op().attrs().at("order")) {
        if (e.is_string()) {
            out.push_back(1);
            st.push_back(0);
            continue;
        }
        const std::int64_t a = e.get<std::int64_t>();
        if (a < 0 || a >= x.ndim()) c.fail("axis out of range");
        out.push_back(x.dim(static_cast<int>(a)));
        st.push_back(xs[static_cast<std::size_t>(a)]);
        if (x.dim(static_cast<int>(a)) != 1) {
            monotone &= a > prev;
            prev = a;
        }
    }
    if (shapeNumel(out) != x.numel()) c.fail("drops an axis whose length is not 1");
    c.outputs[0] = monotone ? x.reshaped(out) : stridedGather(c, x, 0, out, st);
}

void gpuReshape(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    std::vector<std::int64_t> s = cpu::intVector(c, 1);
    int minus = -1;
    std::int64_t prod = 1;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == -1)
            minus = static_cast<int>(i);
        else
            prod *= s[i];
    }
    if (minus >= 0 && prod > 0) s[static_cast<std::size_t>(minus)] = x.numel() / prod;
    if (shapeNumel(s) != x.numel()) c.fail("cannot reshape " + x.typeStr() + " to " + shapeStr(s));
    c.outputs[0] = x.reshaped(s);
}

void gpuSubtensor(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    const cpu::SubtensorRegion r = cpu::subtensorRegion(c, x, 1);
    if (shapeNumel(r.dims) > 0 && r.contiguous())
        c.outputs[0] = x.sliceView(r.base, r.dims);
    else
        c.outputs[0] = stridedGather(c, x, r.base, r.dims, r.strides);
}

void gpuIncSubtensor(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    Tensor y = needDevice(c, 1);
    const bool set = c.op().boolAttr("set_instead_of_inc");
    Tensor out = devAlloc(c, x.dtype(), x.shape());
    cuda::copyDtoD(out.rawData(), out.device(), x.rawData(), x.device(), x.nbytes());
    const cpu::SubtensorRegion r = cpu::subtensorRegion(c, x, 2);
    y = asDeviceDType(c, y, x.dtype());
    const int rr = static_cast<int>(r.dims.size());
    if (y.ndim() > rr) c.fail("cannot broadcast " + y.typeStr() + " into " + shapeStr(r.dims));
    const auto yst = cpu::stridesOf(y.shape());
    std::vector<std::int64_t> ys(static_cast<std::size_t>(rr), 0);
    for (int a = 0; a < y.ndim(); ++a) {
        const auto oa = static_cast<std::size_t>(rr - y.ndim() + a);
        if (y.dim(a) == r.dims[oa])
            ys[oa] = y.dim(a) == 1 ? 0 : yst[static_cast<std::size_t>(a)];
        else if (y.dim(a) != 1)
            c.fail("cannot broadcast " + y.typeStr() + " into " + shapeStr(r.dims));
    }
    if (shapeNumel(r.dims) > 0) {
        const std::size_t es = dtypeSize(x.dtype());
        void* dst = static_cast<char*>(out.rawData()) + static_cast<std::size_t>(r.base) * es;
        if (set)
            cuda::stridedCopy(dst, ll(r.strides).data(), y.rawData(), ll(ys).data(), ll(r.dims).data(), rr, es,
                              c.ctx.device);
        else
            cuda::stridedAdd(dst, ll(r.strides).data(), y.rawData(), ll(ys).data(), ll(r.dims).data(), rr,
                             dt(x.dtype()), c.ctx.device);
    }
    c.outputs[0] = std::move(out);
}

void gpuAdvancedSubtensor1(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    if (x.ndim() < 1) c.fail("cannot index a scalar");
    const std::vector<std::int64_t> idx = cpu::intVector(c, 1);
    std::vector<long long> fixed;
    for (auto i : idx) {
        const std::int64_t j = i < 0 ? i + x.dim(0) : i;
        if (j < 0 || j >= x.dim(0))
            c.fail("index " + std::to_string(i) + " out of bounds for axis 0 of " + x.typeStr());
        fixed.push_back(j);
    }
    Shape out = x.shape();
    out[0] = static_cast<std::int64_t>(idx.size());
    Tensor y = devAlloc(c, x.dtype(), out);
    Tensor di = devAlloc(c, DType::Int64, {static_cast<std::int64_t>(fixed.size())});
    cuda::copyHtoD(di.rawData(), fixed.data(), fixed.size() * sizeof(long long), c.ctx.device);
    cuda::synchronize(c.ctx.device); // `fixed` is pageable and local
    const long long row = static_cast<long long>(shapeNumel(Shape(x.shape().begin() + 1, x.shape().end())) *
                                                 static_cast<std::int64_t>(dtypeSize(x.dtype())));
    cuda::gatherRows(y.rawData(), x.rawData(), static_cast<const long long*>(di.rawData()),
                     static_cast<long long>(fixed.size()), row, c.ctx.device);
    c.outputs[0] = std::move(y);
}

void gpuJoin(KernelCall& c) {
    const Tensor& x0 = needDevice(c, 0);
    const int axis = cpu::normAxis(c, c.op().intAttr("axis"), x0.ndim());
    const DType d = outDType(c);
    Shape out = x0.shape();
    out[static_cast<std::size_t>(axis)] = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = needDevice(c, i);
        if (t.ndim() != x0.ndim()) c.fail("inputs have different ranks");
        for (int a = 0; a < t.ndim(); ++a)
            if (a != axis && t.dim(a) != x0.dim(a))
                c.fail("input " + std::to_string(i) + " " + t.typeStr() + " does not match " + x0.typeStr());
        out[static_cast<std::size_t>(axis)] += t.dim(axis);
    }
    Tensor y = devAlloc(c, d, out);
    const auto ys = cpu::stridesOf(out);
    const std::size_t es = dtypeSize(d);
    std::int64_t start = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor t = asDeviceDType(c, c.in(i), d);
        if (t.numel() > 0)
            cuda::stridedCopy(static_cast<char*>(y.rawData()) +
                                  static_cast<std::size_t>(start * ys[static_cast<std::size_t>(axis)]) * es,
                              ll(ys).data(), t.rawData(), ll(cpu::stridesOf(t.shape())).data(), ll(t.shape()).data(),
                              t.ndim(), es, c.ctx.device);
        start += t.dim(axis);
    }
    c.outputs[0] = std::move(y);
}

void gpuSplit(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    const int axis = cpu::normAxis(c, c.op().intAttr("axis"), x.ndim());
    const std::vector<std::int64_t> sizes = cpu::intVector(c, 1);
    std::int64_t sum = 0;
    for (auto s : sizes) sum += s;
    if (sum != x.dim(axis) || static_cast<std::int64_t>(sizes.size()) != c.op().intAttr("n_splits"))
        c.fail("split sizes do not match " + x.typeStr());
    const auto xs = cpu::stridesOf(x.shape());
    std::int64_t start = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        Shape s = x.shape();
        s[static_cast<std::size_t>(axis)] = sizes[k];
        c.outputs[k] = stridedGather(c, x, start * xs[static_cast<std::size_t>(axis)], s, xs);
        start += sizes[k];
    }
}

void gpuAlloc(KernelCall& c) {
    Shape out;
    for (int i = 1; i < c.nin(); ++i) {
        const std::int64_t d = cpu::scalarInt(c, i);
        if (d < 0) c.fail("negative dim");
        out.push_back(d);
    }
    const DType d = outDType(c);
    Tensor y = devAlloc(c, d, out);
    if (y.numel() == 0) {
        c.outputs[0] = std::move(y);
        return;
    }
    if (c.op().boolAttr("memset_0")) {
        cuda::memsetDevice(y.rawData(), 0, y.nbytes(), c.ctx.device);
        c.outputs[0] = std::move(y);
        return;
    }
    Tensor v = c.in(0);
    if (v.onHost()) v = c.ctx.gpu->upload(v, *c.ctx.pool);
    v = asDeviceDType(c, v, d);
    const int r = static_cast<int>(out.size());
    if (v.ndim() > r) c.fail("the value has more dimensions than the shape");
    const auto vs = cpu::stridesOf(v.shape());
    std::vector<std::int64_t> st(static_cast<std::size_t>(r), 0);
    for (int a = 0; a < v.ndim(); ++a) {
        const auto oa = static_cast<std::size_t>(r - v.ndim() + a);
        if (v.dim(a) == out[oa])
            st[oa] = v.dim(a) == 1 ? 0 : vs[static_cast<std::size_t>(a)];
        else if (v.dim(a) != 1)
            c.fail("cannot broadcast " + v.typeStr() + " to " + shapeStr(out));
    }
    cuda::stridedCopy(y.rawData(), ll(cpu::stridesOf(out)).data(), v.rawData(), ll(st).data(), ll(out).data(), r,
                      dtypeSize(d), c.ctx.device);
    c.outputs[0] = std::move(y);
}

void gpuAllocEmpty(KernelCall& c) {
    Shape out;
    for (int i = 0; i < c.nin(); ++i) out.push_back(cpu::scalarInt(c, i));
    Tensor y = devAlloc(c, outDType(c), out);
    cuda::memsetDevice(y.rawData(), 0, y.nbytes(), c.ctx.device); // deterministic, as the CPU backend
    c.outputs[0] = std::move(y);
}

void gpuContiguous(KernelCall& c) { c.outputs[0] = c.in(0); }

// ------------------------------------------------------------------ reductions
void gpuCAReduce(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    const std::string s = c.op().str("scalar");
    const int op = s == "add" ? 0 : s == "mul" ? 1 : s == "maximum" ? 2 : 3;
    int pre = 0;
    if (c.op().has("pre_scalar_op") && c.op().attrs()["pre_scalar_op"].is_string()) {
        const std::string ps = c.op().str("pre_scalar_op");
        if (ps == "sqr")
            pre = 1;
        else if (ps == "abs")
            pre = 2;
        else
            c.fail("unsupported pre_scalar_op '" + ps + "'");
    }
    std::vector<int> red(static_cast<std::size_t>(x.ndim()), c.op().attrs().at("axis").is_null() ? 1 : 0);
    if (!c.op().attrs().at("axis").is_null())
        for (const auto& a : c.op().attrs().at("axis"))
            red[static_cast<std::size_t>(cpu::normAxis(c, a.get<std::int64_t>(), x.ndim()))] = 1;
    Shape out;
    for (int a = 0; a < x.ndim(); ++a)
        if (!red[static_cast<std::size_t>(a)]) out.push_back(x.dim(a));
    if (x.ndim() > cuda::kMaxDims) c.fail("more than 8 dimensions");
    if (op >= 2 && x.numel() == 0 && shapeNumel(out) > 0)
        c.fail("cannot take the " + s + " of an empty axis of " + x.typeStr());
    needSupported(c, x.dtype());
    needSupported(c, outDType(c));
    Tensor y = devAlloc(c, outDType(c), out);
    cuda::reduce(x.rawData(), dt(x.dtype()), ll(x.shape()).data(), red.data(), x.ndim(), op, pre, y.rawData(),
                 dt(y.dtype()), c.ctx.device);
    c.outputs[0] = std::move(y);
}

void softmaxLike(KernelCall& c, bool logSm) {
    const Tensor& x = needDevice(c, 0);
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64) c.fail("needs a float input");
    const int axis = x.ndim() == 0 ? 0 : cpu::normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + std::min(axis, x.ndim())));
    const std::int64_t len = x.ndim() ? x.dim(axis) : 1;
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + std::min(axis + 1, x.ndim()), x.shape().end()));
    Tensor y = devAlloc(c, x.dtype(), x.shape());
    cuda::softmax(x.rawData(), y.rawData(), dt(x.dtype()), outer, len, inner, logSm, c.ctx.device);
    c.outputs[0] = std::move(y);
}

void gpuCumOp(KernelCall& c) {
    Tensor x = needDevice(c, 0);
    const auto& ax = c.op().attrs().at("axis");
    int axis = 0;
    if (ax.is_null())
        x = x.reshaped({x.numel()});
    else
        axis = cpu::normAxis(c, ax.get<std::int64_t>(), x.ndim());
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const std::int64_t len = x.ndim() ? x.dim(axis) : 1;
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + std::min(axis + 1, x.ndim()), x.shape().end()));
    Tensor y = devAlloc(c, x.dtype(), x.shape());
    cuda::cumulative(x.rawData(), y.rawData(), dt(x.dtype()), outer, len, inner, c.op().str("mode") == "mul",
                     c.ctx.device);
    c.outputs[0] = std::move(y);
}

// ------------------------------------------------------------------ BLAS
// GEMM operands and results in the node's output dtype, as the CPU's BlasKernels (asDType).
void gpuDot22(KernelCall& c) {
    const DType d = outDType(c);
    const Tensor a = asDeviceDType(c, needDevice(c, 0), d), b = asDeviceDType(c, needDevice(c, 1), d);
    if (a.ndim() != 2 || b.ndim() != 2 || a.dim(1) != b.dim(0))
        c.fail("needs matching matrices, got " + a.typeStr() + " and " + b.typeStr());
    Tensor y = devAlloc(c, d, {a.dim(0), b.dim(1)});
    cuda::gemm(dt(d), false, false, a.dim(0), b.dim(1), a.dim(1), 1.0, a.rawData(), a.dim(1), b.rawData(), b.dim(1),
               0.0, y.rawData(), b.dim(1), 1, 0, 0, 0, c.ctx.device);
    c.outputs[0] = std::move(y);
}

// the output of gemm / gemv: z in dtype d when beta is not 0 (else left for the GEMM to write)
Tensor gemmOutput(const KernelCall& c, const Tensor& z, DType d, double beta) {
    Tensor out = devAlloc(c, d, z.shape());
    if (beta == 0) return out;
    if (z.dtype() == d)
        cuda::copyDtoD(out.rawData(), out.device(), z.rawData(), z.device(), z.nbytes());
    else {
        needSupported(c, z.dtype());
        cuda::convert(out.rawData(), dt(d), z.rawData(), dt(z.dtype()), z.numel(), c.ctx.device);
    }
    return out;
}

void gpuGemm(KernelCall& c) {
    const DType d = outDType(c);
    const Tensor& z = needDevice(c, 0);
    const Tensor x = asDeviceDType(c, needDevice(c, 2), d), yv = asDeviceDType(c, needDevice(c, 3), d);
    const double alpha = c.in(1).at(0), beta = c.in(4).at(0);
    if (z.ndim() != 2 || x.ndim() != 2 || yv.ndim() != 2 || x.dim(1) != yv.dim(0) || z.dim(0) != x.dim(0) ||
        z.dim(1) != yv.dim(1))
        c.fail("shapes " + z.typeStr() + ", " + x.typeStr() + ", " + yv.typeStr() + " do not match");
    Tensor out = gemmOutput(c, z, d, beta);
    cuda::gemm(dt(d), false, false, x.dim(0), yv.dim(1), x.dim(1), alpha, x.rawData(), x.dim(1), yv.rawData(),
               yv.dim(1), beta, out.rawData(), yv.dim(1), 1, 0, 0, 0, c.ctx.device);
    c.outputs[0] = std::move(out);
}

void gpuGemv(KernelCall& c) {
    const DType d = outDType(c);
    const Tensor& z = needDevice(c, 0);
    const Tensor A = asDeviceDType(c, needDevice(c, 2), d), x = asDeviceDType(c, needDevice(c, 3), d);
    const double alpha = c.in(1).at(0), beta = c.in(4).at(0);
    if (z.ndim() != 1 || A.ndim() != 2 || x.ndim() != 1 || A.dim(1) != x.dim(0) || z.dim(0) != A.dim(0))
        c.fail("shapes " + z.typeStr() + ", " + A.typeStr() + ", " + x.typeStr() + " do not match");
    Tensor out = gemmOutput(c, z, d, beta);
    cuda::gemm(dt(d), false, false, A.dim(0), 1, A.dim(1), alpha, A.rawData(), A.dim(1), x.rawData(), 1, beta,
               out.rawData(), 1, 1, 0, 0, 0, c.ctx.device);
    c.outputs[0] = std::move(out);
}

// Batch axes broadcast as the CPU's batchedDot: a batch axis of 1 is shared. One strided batched
// GEMM when each operand's batches are evenly spaced (stride 0 for a shared operand), else one
// GEMM per batch.
void gpuGemmBatch(KernelCall& c) {
    const DType d = outDType(c);
    const Tensor a = asDeviceDType(c, needDevice(c, 0), d), b = asDeviceDType(c, needDevice(c, 1), d);
    Shape out = cpu::batchedGemmShape(c, a, b);
    const int nd = a.ndim();
    const std::int64_t M = a.dim(nd - 2), K = a.dim(nd - 1), N = b.dim(nd - 1);
    const Shape bshape = out;
    const std::int64_t batch = shapeNumel(bshape);
    out.push_back(M);
    out.push_back(N);
    Tensor y = devAlloc(c, d, out);
    if (batch == 0) {
        c.outputs[0] = std::move(y);
        return;
    }
    // element offsets of each batch's operands
    std::vector<std::int64_t> oa(static_cast<std::size_t>(batch)), ob(static_cast<std::size_t>(batch)),
        idx(bshape.size(), 0);
    for (std::int64_t bi = 0; bi < batch; ++bi) {
        std::int64_t ia = 0, ib = 0;
        for (std::size_t k = 0; k < bshape.size(); ++k) {
            ia = ia * a.dim(static_cast<int>(k)) + (a.dim(static_cast<int>(k)) == 1 ? 0 : idx[k]);
            ib = ib * b.dim(static_cast<int>(k)) + (b.dim(static_cast<int>(k)) == 1 ? 0 : idx[k]);
        }
        oa[static_cast<std::size_t>(bi)] = ia * M * K;
        ob[static_cast<std::size_t>(bi)] = ib * K * N;
        for (std::size_t k = bshape.size(); k-- > 0;) {
            if (++idx[k] < bshape[k]) break;
            idx[k] = 0;
        }
    }
    auto evenStride = [&](const std::vector<std::int64_t>& o) {
        const std::int64_t st = batch > 1 ? o[1] - o[0] : 0;
        for (std::int64_t bi = 0; bi < batch; ++bi)
            if (o[static_cast<std::size_t>(bi)] != bi * st) return std::int64_t(-1);
        return st;
    };
    const std::int64_t sa = evenStride(oa), sb = evenStride(ob);
    const std::size_t es = dtypeSize(d);
    if (sa >= 0 && sb >= 0) {
        cuda::gemm(dt(d), false, false, M, N, K, 1.0, a.rawData(), K, b.rawData(), N, 0.0, y.rawData(), N, batch, sa,
                   sb, M * N, c.ctx.device);
    } else {
        for (std::int64_t bi = 0; bi < batch; ++bi)
            cuda::gemm(
                dt(d), false, false, M, N, K, 1.0,
                static_cast<const char*>(a.rawData()) + static_cast<std::size_t>(oa[static_cast<std::size_t>(bi)]) * es,
                K,
                static_cast<const char*>(b.rawData()) + static_cast<std::size_t>(ob[static_cast<std::size_t>(bi)]) * es,
                N, 0.0, static_cast<char*>(y.rawData()) + static_cast<std::size_t>(bi * M * N) * es, N, 1, 0, 0, 0,
                c.ctx.device);
    }
    c.outputs[0] = std::move(y);
}

// ------------------------------------------------------------------ convolution, pooling, BN
void gpuCorrMM(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    const Tensor& w = needDevice(c, 1);
    if (x.ndim() != 4 || w.ndim() != 4 || x.dtype() != DType::Float32 || w.dtype() != DType::Float32)
        c.fail("needs float32 4-d input and kernel, got " + x.typeStr() + " and " + w.typeStr());
    const cpu::Conv2dParams p = cpu::abstractConvParams(c, w);
    cuda::ConvShape s{};
    s.N = x.dim(0);
    s.C = x.dim(1);
    s.H = x.dim(2);
    s.W = x.dim(3);
    s.F = w.dim(0);
    s.Cg = w.dim(1);
    s.KH = w.dim(2);
    s.KW = w.dim(3);
    s.padTop = p.padTop;
    s.padLeft = p.padLeft;
    s.strideH = p.strideH;
    s.strideW = p.strideW;
    s.dilH = p.dilH;
    s.dilW = p.dilW;
    s.groups = p.groups;
    const auto [OH, OW] = cpu::conv2dOutputSize(c, x, w, p); // the CPU's checks (strides, dilations, sizes)
    s.OH = OH;
    s.OW = OW;
    Tensor y = devAlloc(c, DType::Float32, {s.N, s.F, s.OH, s.OW});
    Tensor ws = devAlloc(c, DType::Float32, {std::max<std::int64_t>(1, cuda::convWorkspaceFloats(s))});
    cuda::conv2d(x.data<float>(), w.data<float>(), y.data<float>(), s, ws.data<float>(), c.ctx.device);
    c.outputs[0] = std::move(y);
}

void gpuPool(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    if (x.dtype() != DType::Float32) c.fail("needs float32, got " + x.typeStr());
    const cpu::PoolParams p = cpu::poolParams(c, x);
    Tensor y = devAlloc(c, x.dtype(), p.outShape);
    cuda::pool2d(x.data<float>(), y.data<float>(), p.planes, p.n[0], p.n[1], p.o[0], p.o[1], p.k[0], p.k[1], p.s[0],
                 p.s[1], p.p0[0], p.p1[0], p.p0[1], p.p1[1], static_cast<int>(p.mode), c.ctx.device);
    c.outputs[0] = std::move(y);
}

void gpuBatchNorm(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    if (x.dtype() != DType::Float32 || x.ndim() < 2) c.fail("needs a float32 input with a channel axis");
    const std::int64_t C = x.dim(1);
    for (int i = 1; i < 5; ++i)
        if (needDevice(c, i).numel() != C || c.in(i).dtype() != DType::Float32)
            c.fail("parameter " + std::to_string(i) + " does not match");
    Tensor y = devAlloc(c, x.dtype(), x.shape());
    cuda::batchNorm(x.data<float>(), y.data<float>(), c.in(1).data<float>(), c.in(2).data<float>(),
                    c.in(3).data<float>(), c.in(4).data<float>(), c.op().floatAttr("epsilon", 1e-5), x.dim(0), C,
                    shapeNumel(Shape(x.shape().begin() + 2, x.shape().end())), c.ctx.device);
    c.outputs[0] = std::move(y);
}

} // namespace

void registerCudaKernels(KernelRegistry& r) {
    if (cuda::deviceCount() <= 0) return; // CPU-only machine: GPU kinds stay emulated on the CPU
    deviceBackendFactory() = &openDevice;
    const Backend B = Backend::Cuda;
    r.add("GpuFromHost", B, gpuFromHost);
    r.add("HostFromGpu", B, hostFromGpu);
    r.add("GpuToGpu", B, gpuToGpu);
    r.add("GpuElemwise", B, gpuElemwise);
    r.add("GpuDimShuffle", B, gpuDimShuffle);
    r.add("GpuReshape", B, gpuReshape);
    r.add("GpuSubtensor", B, gpuSubtensor);
    r.add("GpuIncSubtensor", B, gpuIncSubtensor);
    r.add("GpuAdvancedSubtensor1", B, gpuAdvancedSubtensor1);
    r.add("GpuJoin", B, gpuJoin);
    r.add("GpuSplit", B, gpuSplit);
    r.add("GpuAlloc", B, gpuAlloc);
    r.add("GpuAllocEmpty", B, gpuAllocEmpty);
    r.add("GpuContiguous", B, gpuContiguous);
    r.add("GpuCAReduceCuda", B, gpuCAReduce);
    r.add("GpuSoftmax", B, [](KernelCall& c) { softmaxLike(c, false); });
    r.add("GpuLogSoftmax", B, [](KernelCall& c) { softmaxLike(c, true); });
    r.add("GpuCumOp", B, gpuCumOp);
    r.add("GpuDot22", B, gpuDot22);
    r.add("GpuGemm", B, gpuGemm);
    r.add("GpuGemv", B, gpuGemv);
    r.add("GpuGemmBatch", B, gpuGemmBatch);
    r.add("GpuCorrMM", B, gpuCorrMM);
    r.add("GpuPool", B, gpuPool);
    r.add("GpuDnnBatchNormInference", B, gpuBatchNorm);
}

} // namespace passlens
