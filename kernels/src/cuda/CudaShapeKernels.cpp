// CUDA backend (C++ side): the kernels of shapes and indexing (views, strided copies, joins, allocation). Device work
// goes through CudaOps.h; parameters are parsed with the CPU backend's helpers.
#include "../cpu/Conv.h"
#include "CudaBackendCommon.h"

#include <passlens/ir/Error.h>

namespace passlens::cudabackend {

namespace {

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
    const std::vector<std::int64_t> ys = cpu::broadcastStridesInto(c, y, r.dims);
    const int rr = static_cast<int>(r.dims.size());
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

} // namespace

void registerShapeKernels(KernelRegistry& r) {
    const Backend B = Backend::Cuda;
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
}

} // namespace passlens::cudabackend
