// CUDA backend (C++ side): the kernels of reductions, softmax, cumulative ops, top-k, BLAS, convolution, pooling
// and batch normalisation. Device work goes through CudaOps.h; parameters are parsed with the CPU backend's helpers.
#include "../cpu/Conv.h"
#include "CudaBackendCommon.h"

#include <passlens/ir/Error.h>

namespace passlens::cudabackend {

namespace {

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
    const std::vector<bool> flags = cpu::reducedAxes(c, x.ndim());
    const std::vector<int> red(flags.begin(), flags.end());
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

// Refusals as the CPU's argExtreme (an empty reduction with a non-empty result).
void gpuMaxAndArgmax(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    const std::vector<bool> flags = cpu::reducedAxes(c, x.ndim());
    const std::vector<int> red(flags.begin(), flags.end());
    Shape out;
    std::int64_t n = 1;
    for (int a = 0; a < x.ndim(); ++a)
        if (red[static_cast<std::size_t>(a)])
            n *= x.dim(a);
        else
            out.push_back(x.dim(a));
    if (x.ndim() > cuda::kMaxDims) c.fail("more than 8 dimensions");
    if (n == 0 && shapeNumel(out) > 0) c.fail("cannot take the argmax of an empty axis of " + x.typeStr());
    needSupported(c, x.dtype());
    Tensor mx = devAlloc(c, x.dtype(), out), arg = devAlloc(c, DType::Int64, out);
    cuda::maxAndArgmax(x.rawData(), dt(x.dtype()), ll(x.shape()).data(), red.data(), x.ndim(), mx.rawData(),
                       static_cast<long long*>(arg.rawData()), c.ctx.device);
    c.outputs[0] = std::move(mx);
    c.outputs[1] = std::move(arg);
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

// GpuTopKOp: k on the host; the checks and output shapes are the CPU's (cpu::topK).
void gpuTopK(KernelCall& c) {
    const Tensor& x = needDevice(c, 0);
    if (x.ndim() == 0) c.fail("needs a tensor of rank >= 1, got " + x.typeStr());
    const int axis = cpu::normAxis(c, c.op().intAttr("axis", -1), x.ndim());
    const std::int64_t k = cpu::scalarInt(c, 1), kk = k < 0 ? -k : k;
    const DType idx = *parseDType(c.op().str("idx_dtype"));
    if (kk > x.dim(axis))
        c.fail("k " + std::to_string(k) + " is larger than axis " + std::to_string(axis) + " of " + x.typeStr());
    needSupported(c, x.dtype());
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = kk;
    Tensor values = devAlloc(c, x.dtype(), out), indices = devAlloc(c, idx, out);
    cuda::topK(x.rawData(), dt(x.dtype()), shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis)), x.dim(axis),
               shapeNumel(Shape(x.shape().begin() + axis + 1, x.shape().end())), k, values.rawData(), indices.rawData(),
               dt(idx), c.ctx.device);
    std::size_t o = 0;
    if (c.op().boolAttr("return_values", true)) c.outputs[o++] = std::move(values);
    if (c.op().boolAttr("return_indices", true)) c.outputs[o] = std::move(indices);
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

void registerMathKernels(KernelRegistry& r) {
    const Backend B = Backend::Cuda;
    r.add("GpuCAReduceCuda", B, gpuCAReduce);
    r.add("GpuSoftmax", B, [](KernelCall& c) { softmaxLike(c, false); });
    r.add("GpuLogSoftmax", B, [](KernelCall& c) { softmaxLike(c, true); });
    r.add("GpuCumOp", B, gpuCumOp);
    r.add("GpuTopKOp", B, gpuTopK);
    r.add("GpuMaxAndArgmax", B, gpuMaxAndArgmax);
    r.add("GpuDot22", B, gpuDot22);
    r.add("GpuGemm", B, gpuGemm);
    r.add("GpuGemv", B, gpuGemv);
    r.add("GpuGemmBatch", B, gpuGemmBatch);
    r.add("GpuCorrMM", B, gpuCorrMM);
    r.add("GpuPool", B, gpuPool);
    r.add("GpuDnnBatchNormInference", B, gpuBatchNorm);
}

} // namespace passlens::cudabackend
