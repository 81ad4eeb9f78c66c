// CPU kernels of the ONNX signal and text processing (Hann / Hamming / Blackman windows, DFT, STFT,
// MelWeightMatrix, TfIdfVectorizer).
#include "OnnxCommon.h"

#include <cmath>
#include <map>

namespace passlens::cpu {

namespace {

using namespace onnx;

// HannWindow, HammingWindow, BlackmanWindow: sum of a_k cos(2 pi k n / N') with N' = size when
// `periodic` (default), size - 1 otherwise; dtype from output_datatype (default float32).
KernelFn onnxWindow(std::vector<double> coeffs) {
    return [coeffs](KernelCall& c) {
        const std::int64_t n = scalarInt(c, 0);
        if (n < 0) c.fail("negative window size");
        const auto dt = onnxDType(c.op().intAttr("output_datatype", 1));
        if (!dt) c.fail("unsupported output_datatype");
        const double denom = c.op().intAttr("periodic", 1) ? static_cast<double>(n) : static_cast<double>(n - 1);
        std::vector<double> w(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i)
            for (std::size_t k = 0; k < coeffs.size(); ++k)
                w[static_cast<std::size_t>(i)] +=
                    coeffs[k] * std::cos(2.0 * M_PI * static_cast<double>(k) * static_cast<double>(i) / denom);
        c.outputs[0] = storeDoubles(c, w, *dt, {n});
    };
}

// ---------------------------------------------------------------- spectral

// The DFT of n complex samples (re, im), `len` points (zero padded or truncated), forward or
// inverse (with 1/len), the first `bins` coefficients (direct O(len * bins) sums).
void dft(const std::vector<double>& re, const std::vector<double>& im, std::int64_t len, std::int64_t bins,
         bool inverse, double* out) {
    const double sign = inverse ? 1.0 : -1.0;
    const auto n = std::min<std::int64_t>(len, static_cast<std::int64_t>(re.size()));
    for (std::int64_t k = 0; k < bins; ++k) {
        double sr = 0, si = 0;
        for (std::int64_t t = 0; t < n; ++t) {
            const double a = sign * 2.0 * M_PI * static_cast<double>((k * t) % len) / static_cast<double>(len);
            const double cr = std::cos(a), ci = std::sin(a);
            sr += re[static_cast<std::size_t>(t)] * cr - im[static_cast<std::size_t>(t)] * ci;
            si += re[static_cast<std::size_t>(t)] * ci + im[static_cast<std::size_t>(t)] * cr;
        }
        out[2 * k] = inverse ? sr / static_cast<double>(len) : sr;
        out[2 * k + 1] = inverse ? si / static_cast<double>(len) : si;
    }
}

// DFT (opset 17): along `axis` of a [batch, ..., 1 or 2] signal (real or complex), dft_length
// points, inverse, onesided (the first len/2 + 1 bins); output [..., 2].
void onnxDFT(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 3 || (x.dim(x.ndim() - 1) != 1 && x.dim(x.ndim() - 1) != 2))
        c.fail("needs a [batch, ..., 1 or 2] signal, got " + x.typeStr());
    const int axis = normAxis(c, c.op().intAttr("axis", 1), x.ndim() - 1);
    const bool inverse = c.op().intAttr("inverse", 0) != 0, onesided = c.op().intAttr("onesided", 0) != 0;
    const std::int64_t comps = x.dim(x.ndim() - 1), n = x.dim(axis);
    const std::int64_t len = onnxIn(c, 1) ? onnxIn(c, 1)->intAt(0) : n;
    if (len <= 0) c.fail("dft_length must be positive");
    const std::int64_t bins = onesided ? len / 2 + 1 : len;
    std::int64_t outer = 1, inner = 1;
    for (int a = 0; a < x.ndim() - 1; ++a)
        if (a != axis) (a < axis ? outer : inner) *= x.dim(a);
    const std::vector<double> xv = x.toDoubles();
    Shape out = x.shape();
    out[static_cast<std::size_t>(axis)] = bins;
    out.back() = 2;
    std::vector<double> y(static_cast<std::size_t>(outer * bins * inner * 2)), tmp(static_cast<std::size_t>(2 * bins));
    std::vector<double> re(static_cast<std::size_t>(n)), im(re.size());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
            for (std::int64_t t = 0; t < n; ++t) {
                const std::int64_t e = ((o * n + t) * inner + i) * comps;
                re[static_cast<std::size_t>(t)] = xv[static_cast<std::size_t>(e)];
                im[static_cast<std::size_t>(t)] = comps == 2 ? xv[static_cast<std::size_t>(e + 1)] : 0.0;
            }
            dft(re, im, len, bins, inverse, tmp.data());
            for (std::int64_t k = 0; k < bins; ++k) {
                const auto e = static_cast<std::size_t>(((o * bins + k) * inner + i) * 2);
                y[e] = tmp[static_cast<std::size_t>(2 * k)];
                y[e + 1] = tmp[static_cast<std::size_t>(2 * k + 1)];
            }
        }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), out);
}

// STFT (opset 17): DFTs of the windowed frames of a [batch, length, 1 or 2] signal, frame_step
// apart; frame length from the window or the frame_length input; onesided (default); output
// [batch, frames, bins, 2].
void onnxSTFT(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
        c.fail("needs a [batch, length, 1 or 2] signal, got " + x.typeStr());
    const std::int64_t step = scalarInt(c, 1);
    const Tensor* window = onnxIn(c, 2);
    const std::int64_t frameLen = onnxIn(c, 3) ? onnxIn(c, 3)->intAt(0) : window ? window->numel() : 0;
    if (step <= 0 || frameLen <= 0 || frameLen > x.dim(1))
        c.fail("frame_step and the frame length must be positive and fit the signal");
    if (window && window->numel() != frameLen)
        c.fail("window " + window->typeStr() + " does not match frame length " + std::to_string(frameLen));
    const bool onesided = c.op().intAttr("onesided", 1) != 0;
    const std::int64_t B = x.dim(0), L = x.dim(1), comps = x.dim(2), frames = (L - frameLen) / step + 1,
                       bins = onesided ? frameLen / 2 + 1 : frameLen;
    const std::vector<double> xv = x.toDoubles(),
                              wv = window ? window->toDoubles()
                                          : std::vector<double>(static_cast<std::size_t>(frameLen), 1.0);
    std::vector<double> y(static_cast<std::size_t>(B * frames * bins * 2)), re(static_cast<std::size_t>(frameLen)),
        im(re.size());
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t f = 0; f < frames; ++f) {
            for (std::int64_t t = 0; t < frameLen; ++t) {
                const std::int64_t e = (b * L + f * step + t) * comps;
                re[static_cast<std::size_t>(t)] = xv[static_cast<std::size_t>(e)] * wv[static_cast<std::size_t>(t)];
                im[static_cast<std::size_t>(t)] =
                    comps == 2 ? xv[static_cast<std::size_t>(e + 1)] * wv[static_cast<std::size_t>(t)] : 0.0;
            }
            dft(re, im, frameLen, bins, false, y.data() + (b * frames + f) * bins * 2);
        }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), {B, frames, bins, 2});
}

// TfIdfVectorizer over integer inputs ([C] or [N, C]): counts of the pool's n-grams
// (min_gram_length..max_gram_length, elements up to max_skip_count apart; unigrams once per
// position), each at output index ngram_indexes[j], as TF, IDF (weight if present) or TFIDF
// (count * weight), float32.
void onnxTfIdfVectorizer(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() != 1 && x.ndim() != 2) c.fail("needs a [C] or [N, C] input, got " + x.typeStr());
    if (!c.op().has("pool_int64s")) c.fail("only integer pools (pool_int64s) are supported");
    const auto pool = attrInts(c, "pool_int64s"), counts = attrInts(c, "ngram_counts"),
               indexes = attrInts(c, "ngram_indexes");
    std::vector<double> weights;
    if (c.op().has("weights"))
        for (const auto& e : c.op().attrs()["weights"]) weights.push_back(e.get<double>());
    const std::int64_t minN = c.op().intAttr("min_gram_length", 1), maxN = c.op().intAttr("max_gram_length", 1),
                       maxSkip = c.op().intAttr("max_skip_count", 0);
    std::string mode = c.op().str("mode");
    if (mode.empty()) mode = "TF";
    // n-gram -> output index
    std::map<std::vector<std::int64_t>, std::int64_t> grams;
    std::int64_t j = 0, width = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        const auto n = static_cast<std::int64_t>(k + 1);
        const std::int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<std::int64_t>(pool.size());
        for (std::int64_t p = counts[k]; p + n <= end; p += n, ++j) {
            if (j >= static_cast<std::int64_t>(indexes.size())) c.fail("ngram_indexes is shorter than the pool");
            grams[std::vector<std::int64_t>(pool.begin() + p, pool.begin() + p + n)] =
                indexes[static_cast<std::size_t>(j)];
            width = std::max(width, indexes[static_cast<std::size_t>(j)] + 1);
        }
    }
    const std::int64_t rows = x.ndim() == 2 ? x.dim(0) : 1, cols = x.dim(x.ndim() - 1);
    std::vector<double> y(static_cast<std::size_t>(rows * width), 0.0);
    for (std::int64_t r = 0; r < rows; ++r) {
        double* out = y.data() + r * width;
        auto add = [&](const std::vector<std::int64_t>& g) {
            if (auto it = grams.find(g); it != grams.end()) out[it->second] += 1;
        };
        for (std::int64_t i = 0; i < cols; ++i) {
            if (minN <= 1 && maxN >= 1) add({x.intAt(r * cols + i)});
            for (std::int64_t s = 0; s <= maxSkip; ++s)
                for (std::int64_t n = std::max<std::int64_t>(minN, 2); n <= maxN; ++n) {
                    if (i + (n - 1) * (s + 1) >= cols) break;
                    std::vector<std::int64_t> g;
                    for (std::int64_t t = 0; t < n; ++t) g.push_back(x.intAt(r * cols + i + t * (s + 1)));
                    add(g);
                }
        }
        for (std::int64_t k = 0; k < width; ++k) {
            const double w = static_cast<std::size_t>(k) < weights.size() ? weights[static_cast<std::size_t>(k)] : 1.0;
            if (mode == "IDF")
                out[k] = out[k] > 0 ? w : 0.0;
            else if (mode == "TFIDF")
                out[k] *= w;
        }
    }
    c.outputs[0] = storeDoubles(c, y, DType::Float32, x.ndim() == 2 ? Shape{rows, width} : Shape{width});
}

// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular filters between
// lower_edge_hertz and upper_edge_hertz on the mel scale, as the ONNX test case computes them
// (onnx/backend/test/case/node/melweightmatrix.py: bins at (dft_length + 1) * hz // sample_rate).
void onnxMelWeightMatrix(KernelCall& c) {
    const std::int64_t mels = scalarInt(c, 0), dftLen = scalarInt(c, 1), rate = scalarInt(c, 2);
    const double lo = c.in(3).at(0), hi = c.in(4).at(0);
    if (mels <= 0 || dftLen <= 0 || rate <= 0) c.fail("num_mel_bins, dft_length and sample_rate must be positive");
    const auto dt = onnxDType(c.op().intAttr("output_datatype", 1));
    if (!dt) c.fail("unsupported output_datatype");
    const std::int64_t specBins = dftLen / 2 + 1;
    const double loMel = 2595 * std::log10(1 + lo / 700), hiMel = 2595 * std::log10(1 + hi / 700);
    const double step = (hiMel - loMel) / static_cast<double>(mels + 2);
    std::vector<std::int64_t> bin(static_cast<std::size_t>(mels + 2));
    for (std::int64_t i = 0; i < mels + 2; ++i) {
        const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + loMel) / 2595) - 1);
        bin[static_cast<std::size_t>(i)] =
            static_cast<std::int64_t>(std::floor(static_cast<double>(dftLen + 1) * hz / static_cast<double>(rate)));
    }
    std::vector<double> w(static_cast<std::size_t>(specBins * mels), 0.0);
    auto set = [&](std::int64_t j, std::int64_t i, double v) {
        if (j < 0 || j >= specBins) c.fail("filter bin " + std::to_string(j) + " out of range");
        w[static_cast<std::size_t>(j * mels + i)] = v;
    };
    for (std::int64_t i = 0; i < mels; ++i) {
        const std::int64_t left = bin[static_cast<std::size_t>(i)], center = bin[static_cast<std::size_t>(i + 1)],
                           right = bin[static_cast<std::size_t>(i + 2)];
        if (center == left)
            set(center, i, 1.0);
        else
            for (std::int64_t j = left; j <= center; ++j)
                set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
        if (right > center)
            for (std::int64_t j = center; j < right; ++j)
                set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
    c.outputs[0] = storeDoubles(c, w, *dt, {specBins, mels});
}

} // namespace

void registerOnnxSignalKernels(KernelRegistry& r) {
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"HannWindow", onnxWindow({0.5, -0.5})},
        {"HammingWindow", onnxWindow({25.0 / 46.0, -21.0 / 46.0})},
        {"BlackmanWindow", onnxWindow({0.42, -0.5, 0.08})},
        {"DFT", onnxDFT},
        {"STFT", onnxSTFT},
        {"TfIdfVectorizer", onnxTfIdfVectorizer},
        {"MelWeightMatrix", onnxMelWeightMatrix},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
