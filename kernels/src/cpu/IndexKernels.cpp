// Indexing kernels: Subtensor (with symbolic "?" entries), AdvancedSubtensor1, IncSubtensor,
// Join and Split.
#include "CpuCommon.h"

#include <passlens/ir/Error.h>
#include <passlens/ir/Subtensor.h>

#include <cstring>

namespace passlens::cpu {

std::vector<std::int64_t> broadcastStridesInto(const KernelCall& c, const Tensor& y, const Shape& dims) {
    const int rr = static_cast<int>(dims.size());
    if (y.ndim() > rr) c.fail("cannot broadcast " + y.typeStr() + " into a region of shape " + shapeStr(dims));
    const auto yst = stridesOf(y.shape());
    std::vector<std::int64_t> ys(static_cast<std::size_t>(rr), 0);
    for (int a = 0; a < y.ndim(); ++a) {
        const auto oa = static_cast<std::size_t>(rr - y.ndim() + a);
        if (y.dim(a) == dims[oa])
            ys[oa] = y.dim(a) == 1 ? 0 : yst[static_cast<std::size_t>(a)];
        else if (y.dim(a) != 1)
            c.fail("cannot broadcast " + y.typeStr() + " into a region of shape " + shapeStr(dims));
    }
    return ys;
}

SubtensorRegion subtensorRegion(const KernelCall& c, const Tensor& x, int firstSym) {
    std::vector<std::int64_t> symbolic;
    for (int i = firstSym; i < c.nin(); ++i) symbolic.push_back(scalarInt(c, i));
    std::size_t next = 0;
    try {
        return resolveSubtensor(
            c.op().attrs().at("idx"), x.shape(),
            [&] {
                if (next >= symbolic.size()) throw Error("missing the input of a symbolic index");
                return symbolic[next++];
            },
            x.typeStr());
    } catch (const Error& e) {
        c.fail(e.what());
    }
}

namespace {

void subtensor(KernelCall& c) {
    const Tensor& x = c.in(0);
    const SubtensorRegion r = subtensorRegion(c, x, 1);
    if (shapeNumel(r.dims) == 0) {
        c.outputs[0] = c.allocate(x.dtype(), r.dims);
        return;
    }
    if (r.contiguous()) {
        c.outputs[0] = x.sliceView(r.base, r.dims);
        return;
    }
    Tensor y = c.allocate(x.dtype(), r.dims);
    const std::size_t es = dtypeSize(x.dtype());
    stridedCopy(static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(r.base) * es, r.strides, y.rawData(),
                r.dims, es);
    c.outputs[0] = std::move(y);
}

void advancedSubtensor1(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    if (x.ndim() < 1) c.fail("cannot index a scalar");
    Shape out = x.shape();
    out[0] = idx.numel();
    Tensor y = c.allocate(x.dtype(), out);
    const std::size_t row =
        static_cast<std::size_t>(shapeNumel(Shape(x.shape().begin() + 1, x.shape().end()))) * dtypeSize(x.dtype());
    const std::int64_t n = x.dim(0);
    for (std::int64_t k = 0; k < idx.numel(); ++k) {
        std::int64_t i = idx.intAt(k);
        const std::int64_t orig = i;
        if (i < 0) i += n;
        if (i < 0 || i >= n) c.fail("index " + std::to_string(orig) + " out of bounds for axis 0 of " + x.typeStr());
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(k) * row,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(i) * row, row);
    }
    c.outputs[0] = std::move(y);
}

template <class T>
void incLoop(T* out, const SubtensorRegion& r, const T* y, const std::vector<std::int64_t>& ys, bool set) {
    const std::size_t nd = r.dims.size();
    const std::int64_t n = shapeNumel(r.dims);
    std::vector<std::int64_t> idx(nd, 0);
    std::int64_t oo = r.base, yo = 0;
    for (std::int64_t e = 0; e < n; ++e) {
        if (set)
            out[oo] = y[yo];
        else
            out[oo] = static_cast<T>(out[oo] + y[yo]);
        for (std::size_t a = nd; a-- > 0;) {
            ++idx[a];
            oo += r.strides[a];
            yo += ys[a];
            if (idx[a] < r.dims[a]) break;
            oo -= r.strides[a] * idx[a];
            yo -= ys[a] * idx[a];
            idx[a] = 0;
        }
    }
}

void incSubtensor(KernelCall& c) {
    const Tensor& x = c.in(0);
    const bool set = c.op().boolAttr("set_instead_of_inc");
    Tensor out = c.reuseOrAllocate(0, x.dtype(), x.shape());
    if (out.storage() != x.storage() && x.nbytes()) std::memcpy(out.rawData(), x.rawData(), x.nbytes());
    const SubtensorRegion r = subtensorRegion(c, x, 2);
    Tensor y = c.in(1);
    if (y.dtype() != x.dtype()) {
        Tensor conv = c.allocate(x.dtype(), y.shape());
        convertElements(y.rawData(), y.dtype(), conv.rawData(), x.dtype(), y.numel());
        y = conv;
    }
    const std::vector<std::int64_t> ys = broadcastStridesInto(c, y, r.dims);
    if (shapeNumel(r.dims) > 0) {
        visitDType(x.dtype(), "IncSubtensor", [&](auto z) {
            using T = decltype(z);
            incLoop<T>(out.data<T>(), r, y.data<T>(), ys, set);
        });
    }
    c.outputs[0] = std::move(out);
}

void join(KernelCall& c) {
    const std::int64_t axisAttr = c.op().intAttr("axis");
    const Tensor& x0 = c.in(0);
    const int nd = x0.ndim();
    const int axis = normAxis(c, axisAttr, nd);
    const DType dt = outDType(c);
    Shape out = x0.shape();
    out[static_cast<std::size_t>(axis)] = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = c.in(i);
        if (t.ndim() != nd)
            c.fail("input " + std::to_string(i) + " has rank " + std::to_string(t.ndim()) + ", input 0 has " +
                   std::to_string(nd));
        for (int a = 0; a < nd; ++a)
            if (a != axis && t.dim(a) != x0.dim(a))
                c.fail("input " + std::to_string(i) + " " + t.typeStr() + " does not match input 0 " + x0.typeStr() +
                       " at axis " + std::to_string(a));
        out[static_cast<std::size_t>(axis)] += t.dim(axis);
    }
    Tensor y = c.allocate(dt, out);
    const std::int64_t outer = shapeNumel(Shape(out.begin(), out.begin() + axis));
    const std::int64_t innerOut = shapeNumel(Shape(out.begin() + axis, out.end()));
    const std::size_t es = dtypeSize(dt);
    char* dst = static_cast<char*>(y.rawData());
    std::int64_t col = 0;
    for (int i = 0; i < c.nin(); ++i) {
        const Tensor& t = c.in(i);
        const std::int64_t chunk = shapeNumel(Shape(t.shape().begin() + axis, t.shape().end()));
        for (std::int64_t o = 0; o < outer; ++o) {
            char* d = dst + static_cast<std::size_t>(o * innerOut + col) * es;
            const char* s =
                static_cast<const char*>(t.rawData()) + static_cast<std::size_t>(o * chunk) * dtypeSize(t.dtype());
            convertElements(s, t.dtype(), d, dt, chunk);
        }
        col += chunk;
    }
    c.outputs[0] = std::move(y);
}

void split(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int axis = normAxis(c, c.op().intAttr("axis"), x.ndim());
    const std::vector<std::int64_t> sizes = intVector(c, 1);
    const std::int64_t n = c.op().intAttr("n_splits");
    if (static_cast<std::int64_t>(sizes.size()) != n)
        c.fail("sizes has " + std::to_string(sizes.size()) + " entries, n_splits is " + std::to_string(n));
    std::int64_t sum = 0;
    for (auto s : sizes) {
        if (s < 0) c.fail("negative split size " + std::to_string(s));
        sum += s;
    }
    if (sum != x.dim(axis))
        c.fail("split sizes sum to " + std::to_string(sum) + " but axis " + std::to_string(axis) + " of " +
               x.typeStr() + " is " + std::to_string(x.dim(axis)));
    const std::int64_t outer = shapeNumel(Shape(x.shape().begin(), x.shape().begin() + axis));
    const std::int64_t inner = shapeNumel(Shape(x.shape().begin() + axis + 1, x.shape().end()));
    const std::size_t es = dtypeSize(x.dtype());
    std::int64_t start = 0;
    for (std::int64_t k = 0; k < n; ++k) {
        Shape s = x.shape();
        s[static_cast<std::size_t>(axis)] = sizes[static_cast<std::size_t>(k)];
        if (outer == 1) {
            c.outputs[static_cast<std::size_t>(k)] = x.sliceView(start * inner, s);
        } else {
            Tensor y = c.allocate(x.dtype(), s);
            const std::int64_t chunk = sizes[static_cast<std::size_t>(k)] * inner, whole = x.dim(axis) * inner;
            for (std::int64_t o = 0; o < outer; ++o)
                std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o * chunk) * es,
                            static_cast<const char*>(x.rawData()) +
                                static_cast<std::size_t>(o * whole + start * inner) * es,
                            static_cast<std::size_t>(chunk) * es);
            c.outputs[static_cast<std::size_t>(k)] = std::move(y);
        }
        start += sizes[static_cast<std::size_t>(k)];
    }
}

} // namespace

void registerIndexKernels(KernelRegistry& r) {
    addHostAndGpu(r, "Subtensor", "GpuSubtensor", subtensor);
    addHostAndGpu(r, "AdvancedSubtensor1", "GpuAdvancedSubtensor1", advancedSubtensor1);
    addHostAndGpu(r, "IncSubtensor", "GpuIncSubtensor", incSubtensor);
    addHostAndGpu(r, "Join", "GpuJoin", join);
    addHostAndGpu(r, "Split", "GpuSplit", split);
}

} // namespace passlens::cpu
