// CPU kernels of ONNX's random generators (RandomNormal, RandomUniform, RandomNormalLike,
// RandomUniformLike, Bernoulli, Multinomial; ONNX Operators.md) and of Dropout, whose training
// mode draws its mask. Each call draws from its own std::mt19937_64: seeded from the node's
// `seed` attribute (the generators' FLOAT seed by its float32 bits, Dropout's INT seed by its
// value) when it has one, so the same seed and shape give the same values in every run, else
// from std::random_device, a fresh draw per run. The values cannot match ONNX's NumPy reference
// generator.
#include "OnnxCommon.h"

#include <cstring>
#include <random>

namespace passlens::cpu {

namespace {

using namespace onnx;

// The generator of one call: the `seed` attribute (Dropout's INT seed its value, the others'
// FLOAT seed its float32 bits), else a fresh random seed.
std::mt19937_64 engineOf(const KernelCall& c) {
    if (!c.op().has("seed")) return std::mt19937_64(std::random_device{}());
    if (c.op().kind() == "OnnxDropout") return std::mt19937_64(static_cast<std::uint64_t>(c.op().intAttr("seed")));
    const auto seed = static_cast<float>(c.op().floatAttr("seed"));
    std::uint32_t bits = 0;
    std::memcpy(&bits, &seed, sizeof bits);
    return std::mt19937_64(bits);
}

// The output dtype: the `dtype` attribute, else `dflt`; one of `allowed`, else fails naming it.
DType dtypeAttr(const KernelCall& c, DType dflt, std::initializer_list<DType> allowed) {
    DType dt = dflt;
    if (c.op().has("dtype")) {
        const std::int64_t code = c.op().intAttr("dtype");
        const auto d = onnxDType(code);
        if (!d) c.fail("unsupported dtype " + std::to_string(code));
        dt = *d;
    }
    if (std::find(allowed.begin(), allowed.end(), dt) == allowed.end())
        c.fail("cannot produce " + std::string(dtypeName(dt)) + " values");
    return dt;
}

constexpr std::initializer_list<DType> kFloatTypes = {DType::Float16, DType::Float32, DType::Float64};

// The shape of the generator ops without input: the `shape` attribute, no negative dim.
Shape shapeAttr(const KernelCall& c) {
    if (!c.op().has("shape")) c.fail("needs the shape attribute");
    Shape s = attrInts(c, "shape");
    for (auto d : s)
        if (d < 0) c.fail("shape " + shapeStr(s) + " has a negative dim");
    return s;
}

// A new `dt` tensor of `shape` whose element i is draw(i) (a double, stored as dt), filled in
// blocks so that no buffer beyond the output is held.
template <class F> Tensor drawn(const KernelCall& c, DType dt, const Shape& shape, F draw) {
    Tensor y = c.allocate(dt, shape);
    const std::int64_t n = y.numel();
    constexpr std::int64_t kBlock = 4096;
    std::vector<double> buf(static_cast<std::size_t>(std::min(n, kBlock)));
    char* out = static_cast<char*>(y.rawData());
    const std::size_t es = dtypeSize(dt);
    for (std::int64_t b = 0; b < n; b += kBlock) {
        const std::int64_t m = std::min(kBlock, n - b);
        for (std::int64_t i = 0; i < m; ++i) buf[static_cast<std::size_t>(i)] = draw(b + i);
        convertElements(buf.data(), DType::Float64, out + static_cast<std::size_t>(b) * es, dt, m);
    }
    return y;
}

// Normal values of `mean` and `scale` (standard deviation, not negative; 0 gives the mean).
Tensor normal(const KernelCall& c, DType dt, const Shape& shape) {
    const double mean = c.op().floatAttr("mean", 0.0), scale = c.op().floatAttr("scale", 1.0);
    if (!std::isfinite(mean) || !std::isfinite(scale) || scale < 0)
        c.fail("needs a finite mean and a finite scale >= 0, got mean " + std::to_string(mean) + ", scale " +
               std::to_string(scale));
    auto eng = engineOf(c);
    if (scale == 0) return drawn(c, dt, shape, [&](std::int64_t) { return mean; });
    std::normal_distribution<double> d(mean, scale);
    return drawn(c, dt, shape, [&](std::int64_t) { return d(eng); });
}

// Uniform values in [low, high).
Tensor uniform(const KernelCall& c, DType dt, const Shape& shape) {
    const double lo = c.op().floatAttr("low", 0.0), hi = c.op().floatAttr("high", 1.0);
    if (!std::isfinite(lo) || !std::isfinite(hi) || hi < lo)
        c.fail("needs finite low <= high, got low " + std::to_string(lo) + ", high " + std::to_string(hi));
    auto eng = engineOf(c);
    std::uniform_real_distribution<double> d(lo, hi);
    return drawn(c, dt, shape, [&](std::int64_t) { return d(eng); });
}

// The input of the *Like ops and Bernoulli: a dense tensor; its dtype is the default output dtype.
const Tensor& likeInput(const KernelCall& c) {
    if (c.nin() != 1) c.fail("needs one input, got " + std::to_string(c.nin()));
    if (!c.in(0).isDense()) c.fail("input 0 must be a tensor, got " + c.in(0).typeStr());
    return c.in(0);
}

void onnxRandomNormal(KernelCall& c) {
    c.outputs[0] = normal(c, dtypeAttr(c, DType::Float32, kFloatTypes), shapeAttr(c));
}

void onnxRandomUniform(KernelCall& c) {
    c.outputs[0] = uniform(c, dtypeAttr(c, DType::Float32, kFloatTypes), shapeAttr(c));
}

void onnxRandomNormalLike(KernelCall& c) {
    const Tensor& x = likeInput(c);
    c.outputs[0] = normal(c, dtypeAttr(c, x.dtype(), kFloatTypes), x.shape());
}

void onnxRandomUniformLike(KernelCall& c) {
    const Tensor& x = likeInput(c);
    c.outputs[0] = uniform(c, dtypeAttr(c, x.dtype(), kFloatTypes), x.shape());
}

// y[i] = 1 with probability x[i] (in [0, 1]), else 0, as the `dtype` attribute (default x's dtype).
void onnxBernoulli(KernelCall& c) {
    const Tensor& x = likeInput(c);
    if (!isFloat(x.dtype()) || x.dtype() == DType::BFloat16)
        c.fail("needs float16, float32 or float64 probabilities, got " + x.typeStr());
    const DType dt =
        dtypeAttr(c, x.dtype(),
                  {DType::Float16, DType::Float32, DType::Float64, DType::BFloat16, DType::UInt8, DType::UInt16,
                   DType::UInt32, DType::UInt64, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Bool});
    const std::vector<double> p = x.toDoubles();
    for (std::size_t i = 0; i < p.size(); ++i)
        if (!(p[i] >= 0 && p[i] <= 1))
            c.fail("probability " + std::to_string(p[i]) + " at element " + std::to_string(i) + " is outside [0, 1]");
    auto eng = engineOf(c);
    c.outputs[0] = drawn(c, dt, x.shape(), [&](std::int64_t i) {
        return std::bernoulli_distribution(p[static_cast<std::size_t>(i)])(eng) ? 1.0 : 0.0;
    });
}

// y[b, s] = a class drawn from softmax(x[b, :]) (x: unnormalized log-probabilities [batch, classes]),
// sample_size draws per row, int32 (default) or int64.
void onnxMultinomial(KernelCall& c) {
    const Tensor& x = likeInput(c);
    if (!isFloat(x.dtype()) || x.dtype() == DType::BFloat16)
        c.fail("needs float16, float32 or float64 log-probabilities, got " + x.typeStr());
    if (x.ndim() != 2) c.fail("needs a [batch, classes] input, got " + x.typeStr());
    const DType dt = dtypeAttr(c, DType::Int32, {DType::Int32, DType::Int64});
    const std::int64_t samples = c.op().intAttr("sample_size", 1);
    if (samples < 0) c.fail("sample_size must not be negative, got " + std::to_string(samples));
    const std::int64_t classes = x.dim(1);
    if (classes == 0 && samples > 0 && x.dim(0) > 0) c.fail("cannot draw from 0 classes");
    const std::vector<double> v = x.toDoubles();
    std::vector<std::discrete_distribution<std::int64_t>> rows;
    for (std::int64_t b = 0; b < x.dim(0) && classes > 0; ++b) {
        const auto first = v.begin() + b * classes;
        if (std::any_of(first, first + classes, [](double lp) { return std::isnan(lp); }))
            c.fail("row " + std::to_string(b) + " has a NaN log-probability");
        const double mx = *std::max_element(first, first + classes);
        if (!std::isfinite(mx)) c.fail("row " + std::to_string(b) + " has no finite largest log-probability");
        std::vector<double> w(static_cast<std::size_t>(classes));
        for (std::int64_t k = 0; k < classes; ++k) w[static_cast<std::size_t>(k)] = std::exp(first[k] - mx);
        rows.emplace_back(w.begin(), w.end());
    }
    auto eng = engineOf(c);
    c.outputs[0] = drawn(c, dt, {x.dim(0), samples}, [&](std::int64_t i) {
        return static_cast<double>(rows[static_cast<std::size_t>(i / samples)](eng));
    });
}

// Dropout (opsets 1-13): output = x * mask / (1 - ratio) and the bool mask. In inference (no
// training_mode input, or a false one) the input and an all-true mask. In training mode the
// ratio (input 1, else the `ratio` attribute, default 0.5) must lie in [0, 1); an element is kept
// when a uniform draw in [0, 1) is at least the ratio (probability 1 - ratio), as ONNX's
// reference (Operators.md, Dropout); ratio 0 keeps every element and gives x exactly.
void onnxDropout(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor* ratioIn = onnxIn(c, 1);
    const Tensor* training = onnxIn(c, 2);
    const bool train = training && training->numel() > 0 && training->at(0) != 0;
    if (train && ratioIn && ratioIn->numel() != 1) c.fail("ratio must be a scalar, got " + ratioIn->typeStr());
    const double ratio = ratioIn ? ratioIn->at(0) : c.op().floatAttr("ratio", 0.5);
    if (!train || ratio == 0) {
        c.outputs[0] = x;
        if (c.outputs.size() > 1) {
            Tensor mask = c.allocate(DType::Bool, x.shape());
            std::memset(mask.rawData(), 1, mask.nbytes());
            c.outputs[1] = std::move(mask);
        }
        return;
    }
    if (!(ratio >= 0 && ratio < 1)) c.fail("ratio " + std::to_string(ratio) + " is outside [0, 1)");
    if (!isFloat(x.dtype())) c.fail("needs a float input in training mode, got " + x.typeStr());
    Tensor mask = c.allocate(DType::Bool, x.shape());
    bool* keep = mask.data<bool>();
    auto eng = engineOf(c);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::int64_t i = 0; i < x.numel(); ++i) keep[i] = u(eng) >= ratio;
    c.outputs[0] =
        drawn(c, x.dtype(), x.shape(), [&](std::int64_t i) { return x.at(i) * (keep[i] ? 1.0 : 0.0) / (1 - ratio); });
    if (c.outputs.size() > 1) c.outputs[1] = std::move(mask);
}

} // namespace

void registerOnnxRandomKernels(KernelRegistry& r) {
    r.add("OnnxRandomNormal", Backend::Cpu, onnxRandomNormal);
    r.add("OnnxRandomUniform", Backend::Cpu, onnxRandomUniform);
    r.add("OnnxRandomNormalLike", Backend::Cpu, onnxRandomNormalLike);
    r.add("OnnxRandomUniformLike", Backend::Cpu, onnxRandomUniformLike);
    r.add("OnnxBernoulli", Backend::Cpu, onnxBernoulli);
    r.add("OnnxMultinomial", Backend::Cpu, onnxMultinomial);
    r.add("OnnxDropout", Backend::Cpu, onnxDropout);
}

} // namespace passlens::cpu
