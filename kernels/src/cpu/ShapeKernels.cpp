// Shape-level kernels: DimShuffle, Reshape, Flatten, Shape, Shape_i, MakeVector, Alloc,
// AllocEmpty, CpuContiguous, Assert and the transfers (copies when emulated on the CPU).
#include "CpuCommon.h"

#include <cstring>

namespace passlens::cpu {

void stridedCopy(const void* src, const std::vector<std::int64_t>& srcStrides, void* dst, const Shape& shape,
                 std::size_t esize) {
    const std::int64_t n = shapeNumel(shape);
    if (n == 0) return;
    // coalesce: drop size-1 dims, merge dims contiguous in the source
    std::vector<std::int64_t> dims, st;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (shape[a] == 1) continue;
        if (!dims.empty() && st.back() == srcStrides[a] * shape[a]) {
            dims.back() *= shape[a];
            st.back() = srcStrides[a];
            continue;
        }
        dims.push_back(shape[a]);
        st.push_back(srcStrides[a]);
    }
    if (dims.empty()) {
        std::memcpy(dst, src, esize);
        return;
    }
    const std::size_t nd = dims.size();
    const std::int64_t inner = dims.back(), is = st.back();
    const std::int64_t outer = n / inner;
    std::vector<std::int64_t> idx(nd, 0);
    std::int64_t off = 0;
    const char* s = static_cast<const char*>(src);
    char* d = static_cast<char*>(dst);
    for (std::int64_t o = 0; o < outer; ++o) {
        if (is == 1) {
            std::memcpy(d, s + off * static_cast<std::int64_t>(esize), static_cast<std::size_t>(inner) * esize);
        } else if (esize == 4) {
            const auto* sp = reinterpret_cast<const std::uint32_t*>(s) + off;
            auto* dp = reinterpret_cast<std::uint32_t*>(d);
            for (std::int64_t i = 0; i < inner; ++i) dp[i] = sp[i * is];
        } else if (esize == 8) {
            const auto* sp = reinterpret_cast<const std::uint64_t*>(s) + off;
            auto* dp = reinterpret_cast<std::uint64_t*>(d);
            for (std::int64_t i = 0; i < inner; ++i) dp[i] = sp[i * is];
        } else {
            for (std::int64_t i = 0; i < inner; ++i)
                std::memcpy(d + i * static_cast<std::int64_t>(esize),
                            s + (off + i * is) * static_cast<std::int64_t>(esize), esize);
        }
        d += inner * static_cast<std::int64_t>(esize);
        for (std::size_t a = nd - 1; a-- > 0;) {
            ++idx[a];
            off += st[a];
            if (idx[a] < dims[a]) break;
            off -= st[a] * idx[a];
            idx[a] = 0;
        }
    }
}

namespace {

void dimShuffle(KernelCall& c) {
    const Tensor& x = c.in(0);
    const auto& order = c.op().attrs().at("order");
    Shape out;
    std::vector<std::int64_t> st;
    const auto xs = stridesOf(x.shape());
    std::vector<bool> used(static_cast<std::size_t>(x.ndim()), false);
    std::int64_t prev = -1;
    bool monotone = true;
    for (const auto& e : order) {
        if (e.is_string()) {
            out.push_back(1);
            st.push_back(0);
            continue;
        }
        const std::int64_t a = e.get<std::int64_t>();
        if (a < 0 || a >= x.ndim()) c.fail("axis " + std::to_string(a) + " out of range for " + x.typeStr());
        used[static_cast<std::size_t>(a)] = true;
        out.push_back(x.dim(static_cast<int>(a)));
        st.push_back(xs[static_cast<std::size_t>(a)]);
        if (x.dim(static_cast<int>(a)) != 1) {
            monotone &= a > prev;
            prev = a;
        }
    }
    for (int a = 0; a < x.ndim(); ++a)
        if (!used[static_cast<std::size_t>(a)] && x.dim(a) != 1)
            c.fail("drops axis " + std::to_string(a) + " of " + x.typeStr() + ", whose length is not 1");
    if (monotone) {
        c.outputs[0] = x.reshaped(out);
        return;
    }
    Tensor y = c.allocate(x.dtype(), out);
    stridedCopy(x.rawData(), st, y.rawData(), out, dtypeSize(x.dtype()));
    c.outputs[0] = std::move(y);
}

Shape reshapeTarget(const KernelCall& c, const Tensor& x, std::vector<std::int64_t> s) {
    int minus = -1;
    std::int64_t prod = 1;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == -1) {
            if (minus >= 0) c.fail("shape " + shapeStr(s) + " has more than one -1");
            minus = static_cast<int>(i);
        } else if (s[i] < 0) {
            c.fail("shape " + shapeStr(s) + " has a negative dim");
        } else {
            prod *= s[i];
        }
    }
    if (minus >= 0) {
        if (prod == 0 || x.numel() % prod) c.fail("cannot reshape " + x.typeStr() + " to " + shapeStr(s));
        s[static_cast<std::size_t>(minus)] = x.numel() / prod;
    } else if (prod != x.numel()) {
        c.fail("cannot reshape " + x.typeStr() + " (" + std::to_string(x.numel()) + " elements) to " + shapeStr(s));
    }
    return s;
}

void reshape(KernelCall& c) {
    const Tensor& x = c.in(0);
    std::vector<std::int64_t> s = intVector(c, 1);
    const std::int64_t ndim = c.op().intAttr("ndim");
    if (static_cast<std::int64_t>(s.size()) != ndim)
        c.fail("shape " + shapeStr(s) + " has " + std::to_string(s.size()) + " entries, ndim is " +
               std::to_string(ndim));
    c.outputs[0] = x.reshaped(reshapeTarget(c, x, s));
}

void flatten(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::int64_t outdim = c.op().intAttr("outdim", 1);
    if (outdim < 1 || outdim > std::max(1, x.ndim()))
        c.fail("outdim " + std::to_string(outdim) + " invalid for " + x.typeStr());
    Shape s(x.shape().begin(), x.shape().begin() + std::min<std::int64_t>(outdim - 1, x.ndim()));
    std::int64_t p = 1;
    for (int a = static_cast<int>(outdim) - 1; a < x.ndim(); ++a) p *= x.dim(a);
    s.push_back(p);
    c.outputs[0] = x.reshaped(s);
}

void shapeOp(KernelCall& c) {
    const Tensor& x = c.in(0);
    Tensor y = c.allocate(DType::Int64, {x.ndim()});
    for (int a = 0; a < x.ndim(); ++a) y.data<std::int64_t>()[a] = x.dim(a);
    c.outputs[0] = std::move(y);
}

void shapeI(KernelCall& c) {
    const Tensor& x = c.in(0);
    const std::int64_t i = c.op().intAttr("i");
    if (i < 0 || i >= x.ndim()) c.fail("axis " + std::to_string(i) + " out of range for " + x.typeStr());
    Tensor y = c.allocate(DType::Int64, {});
    *y.data<std::int64_t>() = x.dim(static_cast<int>(i));
    c.outputs[0] = std::move(y);
}

void makeVector(KernelCall& c) {
    const DType dt = outDType(c);
    Tensor y = c.allocate(dt, {c.nin()});
    for (int i = 0; i < c.nin(); ++i) {
        if (c.in(i).numel() != 1) c.fail("input " + std::to_string(i) + " must be a scalar, got " + c.in(i).typeStr());
        convertElements(c.in(i).rawData(), c.in(i).dtype(),
                        static_cast<char*>(y.rawData()) + static_cast<std::size_t>(i) * dtypeSize(dt), dt, 1);
    }
    c.outputs[0] = std::move(y);
}

// Broadcasts `v` (rank <= out rank, leading dims added) into a new tensor of `out` shape/dtype.
Tensor broadcastTo(const KernelCall& c, const Tensor& v, const Shape& out, DType dt) {
    const int r = static_cast<int>(out.size());
    if (v.ndim() > r)
        c.fail("the value " + v.typeStr() + " has more dimensions than the " + std::to_string(r) + " given");
    Tensor src = v;
    if (v.dtype() != dt) {
        src = c.allocate(dt, v.shape());
        convertElements(v.rawData(), v.dtype(), src.rawData(), dt, v.numel());
    }
    const auto vs = stridesOf(src.shape());
    std::vector<std::int64_t> st(static_cast<std::size_t>(r), 0);
    for (int a = 0; a < src.ndim(); ++a) {
        const int oa = r - src.ndim() + a;
        const std::int64_t d = src.dim(a);
        if (d == out[static_cast<std::size_t>(oa)])
            st[static_cast<std::size_t>(oa)] = d == 1 ? 0 : vs[static_cast<std::size_t>(a)];
        else if (d != 1)
            c.fail("cannot broadcast " + v.typeStr() + " to " + shapeStr(out));
    }
    Tensor y = c.allocate(dt, out);
    const std::int64_t n = y.numel();
    if (n == 0) return y;
    if (src.numel() == 1) {
        const std::size_t es = dtypeSize(dt);
        char* d = static_cast<char*>(y.rawData());
        bool zero = true;
        for (std::size_t b = 0; b < es; ++b) zero &= static_cast<const char*>(src.rawData())[b] == 0;
        if (zero) {
            std::memset(d, 0, y.nbytes());
        } else if (es == 4) {
            std::uint32_t w;
            std::memcpy(&w, src.rawData(), 4);
            std::fill(reinterpret_cast<std::uint32_t*>(d), reinterpret_cast<std::uint32_t*>(d) + n, w);
        } else {
            for (std::int64_t i = 0; i < n; ++i) std::memcpy(d + i * static_cast<std::int64_t>(es), src.rawData(), es);
        }
        return y;
    }
    stridedCopy(src.rawData(), st, y.rawData(), out, dtypeSize(dt));
    return y;
}

void alloc(KernelCall& c) {
    Shape out;
    for (int i = 1; i < c.nin(); ++i) {
        const std::int64_t d = scalarInt(c, i);
        if (d < 0) c.fail("dim " + std::to_string(i - 1) + " is negative (" + std::to_string(d) + ")");
        out.push_back(d);
    }
    c.outputs[0] = broadcastTo(c, c.in(0), out, outDType(c));
}

void allocEmpty(KernelCall& c) {
    Shape out;
    for (int i = 0; i < c.nin(); ++i) {
        const std::int64_t d = scalarInt(c, i);
        if (d < 0) c.fail("dim " + std::to_string(i) + " is negative (" + std::to_string(d) + ")");
        out.push_back(d);
    }
    // Theano leaves the memory uninitialised; zeros keep runs deterministic.
    Tensor y = c.allocate(outDType(c), out);
    if (y.nbytes()) std::memset(y.rawData(), 0, y.nbytes());
    c.outputs[0] = std::move(y);
}

void passThrough(KernelCall& c) { c.outputs[0] = c.in(0); }

void assertOp(KernelCall& c) {
    for (int i = 1; i < c.nin(); ++i) {
        const Tensor& t = c.in(i);
        if (!t.onHost()) continue;
        for (std::int64_t k = 0; k < t.numel(); ++k)
            if (t.at(k) == 0)
                c.fail("assertion failed: " + c.op().str("msg") + " (condition input " + std::to_string(i) + ")");
    }
    c.outputs[0] = c.in(0);
}

void hostCopy(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (!x.onHost()) c.fail("the CPU copy got a device tensor");
    c.outputs[0] = x.clone(c.ctx.pool.get());
}

} // namespace

Tensor broadcastToShape(const KernelCall& c, const Tensor& v, const Shape& out, DType dt) {
    return broadcastTo(c, v, out, dt);
}

void registerShapeKernels(KernelRegistry& r) {
    addHostAndGpu(r, "DimShuffle", "GpuDimShuffle", dimShuffle);
    addHostAndGpu(r, "Reshape", "GpuReshape", reshape);
    addHostAndGpu(r, "Flatten", "", flatten);
    addHostAndGpu(r, "Shape", "", shapeOp);
    addHostAndGpu(r, "Shape_i", "", shapeI);
    addHostAndGpu(r, "MakeVector", "", makeVector);
    addHostAndGpu(r, "Alloc", "GpuAlloc", alloc);
    addHostAndGpu(r, "AllocEmpty", "GpuAllocEmpty", allocEmpty);
    addHostAndGpu(r, "CpuContiguous", "GpuContiguous", passThrough);
    addHostAndGpu(r, "Assert", "", assertOp);
    for (const char* k : {"GpuFromHost", "HostFromGpu", "GpuToGpu"}) r.add(k, Backend::Cpu, hostCopy);
}

} // namespace passlens::cpu
