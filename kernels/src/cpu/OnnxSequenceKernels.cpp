// CPU kernels of ONNX's sequence and optional operators (SequenceEmpty, SequenceConstruct,
// SequenceAt, SequenceInsert, SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence,
// Optional, OptionalHasElement, OptionalGetElement) on the host values of Tensor::sequence and
// Tensor::optional (ONNX Operators.md, opsets 11-18). SequenceMap runs a body graph: it is with
// the control-flow kernels (OnnxControlKernels.cpp).
#include "OnnxCommon.h"

#include <cstring>

namespace passlens::cpu {

namespace {

using namespace onnx;

// ONNX input k as a sequence; fails naming the node when it is absent or another kind of value.
const std::vector<Tensor>& sequenceIn(const KernelCall& c, int k) {
    const Tensor& s = needIn(c, k);
    if (s.kind() != Type::Kind::Sequence)
        c.fail("input " + std::to_string(k) + " must be a sequence, got " + s.typeStr());
    return s.items();
}

// ONNX input k as a tensor (nullptr when absent); fails for a sequence or optional value.
const Tensor* tensorIn(const KernelCall& c, int k) {
    const Tensor* t = onnxIn(c, k);
    if (t && !t->isDense()) c.fail("input " + std::to_string(k) + " must be a tensor, got " + t->typeStr());
    return t;
}

// A position input (int32 / int64 scalar) normalised into [0, n] (or [0, n) unless `end` is
// allowed), negative values counting from the end; fails naming the node when out of range.
std::size_t positionIn(const KernelCall& c, int k, std::size_t n, bool endAllowed, std::size_t dflt) {
    const Tensor* p = tensorIn(c, k);
    if (!p) return dflt;
    if (p->numel() != 1 || isFloat(p->dtype())) c.fail("position must be an integer scalar, got " + p->typeStr());
    const std::int64_t v = p->intAt(0), size = static_cast<std::int64_t>(n);
    const std::int64_t at = v < 0 ? v + size : v;
    if (at < 0 || at > size || (at == size && !endAllowed))
        c.fail("position " + std::to_string(v) + " is out of range for a sequence of " + std::to_string(n) +
               (n == 1 ? " item" : " items"));
    return static_cast<std::size_t>(at);
}

// The items a new sequence may hold: tensors of one dtype (ONNX's sequence element type).
void checkItem(const KernelCall& c, const std::vector<Tensor>& items, const Tensor& t) {
    if (!t.isDense()) c.fail("a sequence holds tensors here, got " + t.typeStr());
    if (!items.empty() && items.front().dtype() != t.dtype())
        c.fail("sequence items must share one dtype: " + items.front().typeStr() + " and " + t.typeStr());
}

void sequenceEmpty(KernelCall& c) { c.outputs[0] = Tensor::sequence({}); }

void sequenceConstruct(KernelCall& c) {
    std::vector<Tensor> items;
    for (int k = 0; k < c.nin(); ++k) {
        checkItem(c, items, c.in(k));
        items.push_back(c.in(k));
    }
    c.outputs[0] = Tensor::sequence(std::move(items));
}

void sequenceAt(KernelCall& c) {
    const auto& items = sequenceIn(c, 0);
    if (!onnxIn(c, 1)) c.fail("ONNX input 1 (position) is required");
    c.outputs[0] = items[positionIn(c, 1, items.size(), false, 0)];
}

void sequenceInsert(KernelCall& c) {
    std::vector<Tensor> items = sequenceIn(c, 0);
    const Tensor& t = needIn(c, 1);
    checkItem(c, items, t);
    const std::size_t at = positionIn(c, 2, items.size(), true, items.size());
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), t);
    c.outputs[0] = Tensor::sequence(std::move(items));
}

void sequenceErase(KernelCall& c) {
    std::vector<Tensor> items = sequenceIn(c, 0);
    if (items.empty()) c.fail("cannot erase from an empty sequence");
    const std::size_t at = positionIn(c, 1, items.size(), false, items.size() - 1);
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(at));
    c.outputs[0] = Tensor::sequence(std::move(items));
}

void sequenceLength(KernelCall& c) {
    c.outputs[0] = Tensor::scalar(DType::Int64, static_cast<double>(sequenceIn(c, 0).size()));
}

// Elements [start, start + len) of x along `axis`, as a new tensor.
Tensor sliceAxis(const KernelCall& c, const Tensor& x, int axis, std::int64_t start, std::int64_t len) {
    const AxisSplit s = splitAt(x, axis);
    Shape shape = x.shape();
    shape[static_cast<std::size_t>(axis)] = len;
    Tensor y = c.allocate(x.dtype(), shape);
    const std::size_t es = dtypeSize(x.dtype());
    const std::size_t block = static_cast<std::size_t>(len * s.inner) * es;
    for (std::int64_t o = 0; o < s.outer && block; ++o)
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(o) * block,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>((o * s.n + start) * s.inner) * es,
                    block);
    return y;
}

// SplitToSequence: `split` absent (pieces of 1, the axis dropped unless keepdims), a scalar
// (pieces of that length, the last one shorter) or 1-d (the lengths, summing to the axis).
void splitToSequence(KernelCall& c) {
    const Tensor* xp = tensorIn(c, 0);
    if (!xp) c.fail("ONNX input 0 is required");
    const Tensor& x = *xp;
    if (x.ndim() == 0) c.fail("cannot split a 0-d tensor");
    const int axis = normAxis(c, c.op().intAttr("axis", 0), x.ndim());
    const std::int64_t n = x.dim(axis);
    std::vector<std::int64_t> lengths;
    const Tensor* split = tensorIn(c, 1);
    if (!split) {
        lengths.assign(static_cast<std::size_t>(n), 1);
    } else if (split->ndim() == 0) {
        const std::int64_t step = split->intAt(0);
        if (step <= 0) c.fail("split " + std::to_string(step) + " must be positive");
        for (std::int64_t at = 0; at < n; at += step) lengths.push_back(std::min(step, n - at));
    } else {
        if (split->ndim() != 1) c.fail("split must be a scalar or 1-d, got " + split->typeStr());
        lengths = intsOf(*split);
        std::int64_t sum = 0;
        for (std::int64_t l : lengths) {
            if (l < 0) c.fail("split lengths must not be negative");
            sum += l;
        }
        if (sum != n)
            c.fail("split lengths add up to " + std::to_string(sum) + ", axis " + std::to_string(axis) + " has " +
                   std::to_string(n));
    }
    const bool squeeze = !split && c.op().intAttr("keepdims", 1) == 0;
    std::vector<Tensor> items;
    std::int64_t at = 0;
    for (std::int64_t l : lengths) {
        Tensor piece = sliceAxis(c, x, axis, at, l);
        if (squeeze) {
            Shape s = piece.shape();
            s.erase(s.begin() + axis);
            piece = piece.reshaped(s);
        }
        items.push_back(std::move(piece));
        at += l;
    }
    c.outputs[0] = Tensor::sequence(std::move(items));
}

// ConcatFromSequence: the items joined along `axis`, or stacked along a new axis (new_axis 1).
void concatFromSequence(KernelCall& c) {
    const auto& items = sequenceIn(c, 0);
    if (items.empty()) c.fail("cannot concatenate an empty sequence");
    const bool newAxis = c.op().intAttr("new_axis", 0) != 0;
    const Tensor& first = items.front();
    const int rank = first.ndim() + (newAxis ? 1 : 0);
    if (rank == 0) c.fail("cannot concatenate 0-d tensors");
    const int axis = normAxis(c, c.op().intAttr("axis", 0), rank);
    std::vector<Tensor> parts;
    Shape out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        Tensor t = items[i];
        if (!t.isDense()) c.fail("item " + std::to_string(i) + " is " + t.typeStr() + ", not a tensor");
        if (newAxis) {
            Shape s = t.shape();
            s.insert(s.begin() + axis, 1);
            t = t.reshaped(s);
        }
        if (i == 0) {
            out = t.shape();
        } else {
            bool ok = t.dtype() == first.dtype() && t.ndim() == rank;
            for (int a = 0; ok && a < rank; ++a) ok = a == axis || t.dim(a) == out[static_cast<std::size_t>(a)];
            if (!ok)
                c.fail("item " + std::to_string(i) + " " + items[i].typeStr() + " does not join item 0 " +
                       first.typeStr() + " along axis " + std::to_string(axis));
            out[static_cast<std::size_t>(axis)] += t.dim(axis);
        }
        parts.push_back(std::move(t));
    }
    Tensor y = c.allocate(first.dtype(), out);
    const AxisSplit ys = splitAt(y, axis);
    const std::size_t es = dtypeSize(first.dtype());
    std::int64_t at = 0;
    for (const Tensor& t : parts) {
        const std::size_t block = static_cast<std::size_t>(t.dim(axis) * ys.inner) * es;
        for (std::int64_t o = 0; o < ys.outer && block; ++o)
            std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>((o * ys.n + at) * ys.inner) * es,
                        static_cast<const char*>(t.rawData()) + static_cast<std::size_t>(o) * block, block);
        at += t.dim(axis);
    }
    c.outputs[0] = std::move(y);
}

// Optional: the input as an optional value, or an empty one when the input is absent.
void optionalMake(KernelCall& c) {
    const Tensor* v = onnxIn(c, 0);
    if (v && v->kind() == Type::Kind::Optional) c.fail("input 0 is already an optional value: " + v->typeStr());
    c.outputs[0] = v ? Tensor::optional(*v) : Tensor::optional(std::nullopt);
}

// OptionalHasElement: false for an absent input or an empty optional, true otherwise (a tensor or
// a sequence, as opset 18 allows).
void optionalHasElement(KernelCall& c) {
    const Tensor* v = onnxIn(c, 0);
    const bool has = v && (v->kind() != Type::Kind::Optional || !v->items().empty());
    c.outputs[0] = Tensor::scalar(DType::Bool, has ? 1.0 : 0.0);
}

// OptionalGetElement: the value of a non-empty optional (a tensor or a sequence passes through,
// as opset 18 allows); fails for an empty one.
void optionalGetElement(KernelCall& c) {
    const Tensor& v = needIn(c, 0);
    if (v.kind() != Type::Kind::Optional) {
        c.outputs[0] = v;
        return;
    }
    if (v.items().empty()) c.fail("the optional input is empty");
    c.outputs[0] = v.items().front();
}

} // namespace

void registerOnnxSequenceKernels(KernelRegistry& r) {
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"SequenceEmpty", sequenceEmpty},
        {"SequenceConstruct", sequenceConstruct},
        {"SequenceAt", sequenceAt},
        {"SequenceInsert", sequenceInsert},
        {"SequenceErase", sequenceErase},
        {"SequenceLength", sequenceLength},
        {"SplitToSequence", splitToSequence},
        {"ConcatFromSequence", concatFromSequence},
        {"Optional", optionalMake},
        {"OptionalHasElement", optionalHasElement},
        {"OptionalGetElement", optionalGetElement},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
