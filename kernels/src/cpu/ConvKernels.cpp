// Convolution (im2col + OpenBLAS GEMM, direct depthwise), pooling and batch normalisation:
// AbstractConv2d / GpuCorrMM, Pool / GpuPool, BatchNormInference / GpuDnnBatchNormInference.
#include "Conv.h"
#include "Gemm.h"
#include "Loops.h"

#include <cmath>
#include <limits>

namespace passlens::cpu {

namespace {

using json = nlohmann::json;

// Winograd F(m x m, 3 x 3) for 3x3 stride-1 undilated ungrouped float32 convolutions: the
// weights are transformed once per node (U[a*a][F][C], cached in the node's state when the kernel
// is a graph constant), the input tiles per call (V[a*a][C][T]); the a*a products are SGEMMs
// M_p[F][T] = U_p[F][C] * V_p[C][T]; the inverse transform writes y (+ bias).
struct WinogradState : KernelState {
    const void* w = nullptr;
    Shape shape;
    int m = 0;
    std::vector<float> U;
};

void winogradWeights(const float* w, std::int64_t F, std::int64_t C, int m, float* U) {
    const int A = m + 2;
    // G (A x 3), exact in double; U = G g G^T rounded once to float
    static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    static const double G4[6][3] = {{0.25, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};
    auto g = [&](int i, int k) { return m == 2 ? G2[i][k] : G4[i][k]; };
    for (std::int64_t f = 0; f < F; ++f)
        for (std::int64_t c = 0; c < C; ++c) {
            const float* k = w + (f * C + c) * 9;
            double t[6][3];
            for (int i = 0; i < A; ++i)
                for (int j = 0; j < 3; ++j) t[i][j] = g(i, 0) * k[j] + g(i, 1) * k[3 + j] + g(i, 2) * k[6 + j];
            for (int i = 0; i < A; ++i)
                for (int j = 0; j < A; ++j)
                    U[((static_cast<std::int64_t>(i) * A + j) * F + f) * C + c] =
                        static_cast<float>(t[i][0] * g(j, 0) + t[i][1] * g(j, 1) + t[i][2] * g(j, 2));
        }
}

} // namespace

int winogradTileSize(std::int64_t C, std::int64_t F, std::int64_t OH, std::int64_t OW, WinogradChoice choice) {
    switch (choice) {
    case WinogradChoice::Off: return 0;
    case WinogradChoice::F2: return 2;
    case WinogradChoice::F4: return 4;
    case WinogradChoice::Auto: break;
    }
    // Measured on resnet18 / squeezenet1_1 shapes (1 thread, docs/BENCHMARKS.md): 6x6 tiles pay
    // from ~40 tiles on (56x56: 2x faster than im2col, 27x27 and 28x28: 1.2-1.45x); on 13x13 and
    // 14x14 outputs 4x4 tiles pay only with many channels (256: 1.15x, 48-64: 0.8x); on 7x7
    // the 16-36 small GEMMs re-read 2-4x the weights and lose (0.5-0.85x).
    (void)F;
    const std::int64_t t4 = ((OH + 3) / 4) * ((OW + 3) / 4), t2 = ((OH + 1) / 2) * ((OW + 1) / 2);
    if (t4 >= 40) return 4;
    if (t2 >= 40 && C >= 128) return 2;
    return 0;
}

namespace {

void conv2dWinograd(const KernelCall& c, const Tensor& x, const Tensor& w, const Conv2dParams& p, const Tensor* bias,
                    Tensor& y, int m, const OutputEpilogue* ep) {
    const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const std::int64_t F = w.dim(0), OH = y.dim(2), OW = y.dim(3);
    const int A = m + 2;
    const std::int64_t P = static_cast<std::int64_t>(A) * A;
    const std::int64_t TH = (OH + m - 1) / m, TW = (OW + m - 1) / m, T = TH * TW;
    const float* U;
    std::vector<float> local;
    if (c.node.input(1)->isConstant()) {
        auto* st = dynamic_cast<WinogradState*>(c.state.get());
        if (!st || st->w != w.rawData() || st->shape != w.shape() || st->m != m) {
            auto s = std::make_unique<WinogradState>();
            s->w = w.rawData();
            s->shape = w.shape();
            s->m = m;
            s->U.resize(static_cast<std::size_t>(P * F * C));
            winogradWeights(w.data<float>(), F, C, m, s->U.data());
            st = s.get();
            c.state = std::move(s);
        }
        U = st->U.data();
    } else {
        local.resize(static_cast<std::size_t>(P * F * C));
        winogradWeights(w.data<float>(), F, C, m, local.data());
        U = local.data();
    }
    float* V = c.ctx.scratch(static_cast<std::size_t>(P * (C + F) * T));
    float* Mv = V + P * C * T;
    const float* bp = bias ? bias->data<float>() : nullptr;
    for (std::int64_t n = 0; n < N; ++n) {
        loops(c.ctx.options.cpuLoops)
            .winogradInput(x.data<float>() + n * C * H * W, C, H, W, p.padTop, p.padLeft, TH, TW, m, V);
        for (std::int64_t q = 0; q < P; ++q)
            sgemm(false, false, F, T, C, 1.0f, U + q * F * C, C, V + q * C * T, T, 0.0f, Mv + q * F * T, T);
        loops(c.ctx.options.cpuLoops).winogradOutput(Mv, F, TH, TW, OH, OW, m, bp, y.data<float>() + n * F * OH * OW);
        if (ep) ep->apply(y, n, 0, F, 0, OH * OW);
    }
}

template <class T>
void conv2dTyped(const KernelCall& c, const Tensor& x, const Tensor& w, const Conv2dParams& p, const Tensor* bias,
                 Tensor& y, const OutputEpilogue* ep) {
    const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const std::int64_t F = w.dim(0), Cg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
    const std::int64_t OH = y.dim(2), OW = y.dim(3);
    const std::int64_t G = p.groups, Fg = F / G;
    const T* xp = x.data<T>();
    const T* wp = w.data<T>();
    T* yp = y.data<T>();
    const std::int64_t spatial = OH * OW;
    const T* bp = bias ? bias->data<T>() : nullptr;
    // bias, then the fused epilogue, on y[n, f0:f1, s0:s1] right after it was computed
    auto finish = [&](std::int64_t n, std::int64_t f0, std::int64_t f1, std::int64_t s0, std::int64_t s1) {
        if (bp)
            for (std::int64_t f = f0; f < f1; ++f) {
                T* r = yp + (n * F + f) * spatial;
                const T b = bp[f];
                for (std::int64_t i = s0; i < s1; ++i) r[i] += b;
            }
        if (ep) ep->apply(y, n, f0, f1, s0, s1);
    };
    if (Cg == 1 && G == C && G > 1) {
        const std::int64_t mult = Fg;
        Conv2dParams dp = p;
        dp.depthwiseAvx512 = c.ctx.options.depthwiseAvx512;
        // channel chunks of ~64 KiB of output
        const std::int64_t chunk = std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, mult * spatial));
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t c0 = 0; c0 < C; c0 += chunk) {
                const std::int64_t cn = std::min(chunk, C - c0);
                const T* xc = xp + (n * C + c0) * H * W;
                const T* wc = wp + c0 * mult * KH * KW;
                T* yc = yp + (n * F + c0 * mult) * spatial;
                if constexpr (std::is_same_v<T, float>)
                    loops(c.ctx.options.cpuLoops).depthwiseFloat(xc, wc, yc, cn, mult, H, W, KH, KW, OH, OW, dp);
                else
                    loops(c.ctx.options.cpuLoops).depthwiseDouble(xc, wc, yc, cn, mult, H, W, KH, KW, OH, OW, dp);
                finish(n, c0 * mult, (c0 + cn) * mult, 0, spatial);
            }
    } else {
        const bool pointwise = KH == 1 && KW == 1 && p.strideH == 1 && p.strideW == 1 && p.padTop == 0 &&
                               p.padLeft == 0 && p.padBottom == 0 && p.padRight == 0;
        const std::int64_t K = Cg * KH * KW;
        T* cols = nullptr;
        std::vector<T> colStore;
        if (!pointwise) {
            if constexpr (std::is_same_v<T, float>)
                cols = c.ctx.scratch(static_cast<std::size_t>(K * spatial));
            else {
                colStore.resize(static_cast<std::size_t>(K * spatial));
                cols = colStore.data();
            }
        }
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t g = 0; g < G; ++g) {
                const T* xg = xp + (n * C + g * Cg) * H * W;
                const T* B;
                if (pointwise) {
                    B = xg;
                } else {
                    if constexpr (std::is_same_v<T, float>)
                        loops(c.ctx.options.cpuLoops).im2colFloat(xg, Cg, H, W, KH, KW, OH, OW, p, cols);
                    else
                        loops(c.ctx.options.cpuLoops).im2colDouble(xg, Cg, H, W, KH, KW, OH, OW, p, cols);
                    B = cols;
                }
                // one GEMM per image and group: splitting the columns into cache-sized blocks (so
                // the epilogue reads them from L2) measured no faster on mobilenet_v2, resnet18 or
                // squeezenet1_1 (docs/BENCHMARKS.md)
                gemmT<T>(false, false, Fg, spatial, K, T(1), wp + g * Fg * K, K, B, spatial, T(0),
                         yp + (n * F + g * Fg) * spatial, spatial);
                finish(n, g * Fg, (g + 1) * Fg, 0, spatial);
            }
    }
}

} // namespace

std::pair<std::int64_t, std::int64_t> conv2dOutputSize(const KernelCall& c, const Tensor& x, const Tensor& w,
                                                       const Conv2dParams& p) {
    const std::int64_t C = x.dim(1), F = w.dim(0), Cg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
    if (p.groups < 1 || C != Cg * p.groups || F % p.groups)
        c.fail("input " + x.typeStr() + " and kernel " + w.typeStr() + " do not match with " +
               std::to_string(p.groups) + " groups");
    if (p.strideH < 1 || p.strideW < 1 || p.dilH < 1 || p.dilW < 1) c.fail("strides and dilations must be >= 1");
    const std::int64_t OH = (x.dim(2) + p.padTop + p.padBottom - p.dilH * (KH - 1) - 1) / p.strideH + 1;
    const std::int64_t OW = (x.dim(3) + p.padLeft + p.padRight - p.dilW * (KW - 1) - 1) / p.strideW + 1;
    if (OH < 0 || OW < 0 || x.dim(2) + p.padTop + p.padBottom < p.dilH * (KH - 1) + 1 ||
        x.dim(3) + p.padLeft + p.padRight < p.dilW * (KW - 1) + 1)
        c.fail("kernel " + w.typeStr() + " is larger than the padded input " + x.typeStr());
    return {OH, OW};
}

Tensor conv2d(const KernelCall& c, const Tensor& x, const Tensor& w, const Conv2dParams& p, const Tensor* bias) {
    if (x.ndim() != 4 || w.ndim() != 4)
        c.fail("needs 4-d input and kernel, got " + x.typeStr() + " and " + w.typeStr());
    if (x.dtype() != w.dtype())
        c.fail("input " + x.typeStr() + " and kernel " + w.typeStr() + " have different dtypes");
    const std::int64_t C = x.dim(1), F = w.dim(0), KH = w.dim(2), KW = w.dim(3);
    const auto [OH, OW] = conv2dOutputSize(c, x, w, p);
    if (bias && bias->numel() != F)
        c.fail("bias " + bias->typeStr() + " does not have " + std::to_string(F) + " elements");
    // a fresh output, or its block of an in-place Join's output (every element is written below)
    Tensor y = c.allocateOutput0(x.dtype(), {x.dim(0), F, OH, OW});
    if (y.numel() == 0) return y;
    if (x.dtype() == DType::Float32) {
        const int m =
            KH == 3 && KW == 3 && p.strideH == 1 && p.strideW == 1 && p.dilH == 1 && p.dilW == 1 && p.groups == 1
                ? winogradTileSize(C, F, OH, OW, c.ctx.options.winograd)
                : 0;
        const OutputEpilogue* ep = c.epilogue && c.epilogue->accepts(y) ? c.epilogue : nullptr;
        if (m)
            conv2dWinograd(c, x, w, p, bias, y, m, ep);
        else
            conv2dTyped<float>(c, x, w, p, bias, y, ep);
        if (ep) c.epilogueApplied = true;
    } else if (x.dtype() == DType::Float64)
        conv2dTyped<double>(c, x, w, p, bias, y, nullptr);
    else
        c.fail("dtype " + std::string(dtypeName(x.dtype())) + " is not supported");
    return y;
}

namespace {
template <class T>
void convTransposeTyped(const KernelCall& c, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                        const Tensor* bias, Tensor& y) {
    const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const std::int64_t Fg = w.dim(1), KH = w.dim(2), KW = w.dim(3);
    const std::int64_t G = p.groups, Cg = C / G, F = Fg * G;
    const std::int64_t OH = y.dim(2), OW = y.dim(3);
    const std::int64_t K = Fg * KH * KW, HW = H * W;
    std::vector<T> cols(static_cast<std::size_t>(K * HW));
    T* yp = y.data<T>();
    std::memset(yp, 0, y.nbytes());
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t g = 0; g < G; ++g) {
            // cols[K, HW] = w_g[Cg, K]^T * x_g[Cg, HW]
            gemmT<T>(true, false, K, HW, Cg, T(1), w.data<T>() + g * Cg * K, K, x.data<T>() + (n * C + g * Cg) * HW, HW,
                     T(0), cols.data(), HW);
            // col2im
            for (std::int64_t f = 0; f < Fg; ++f) {
                T* yf = yp + (n * F + g * Fg + f) * OH * OW;
                for (std::int64_t kh = 0; kh < KH; ++kh)
                    for (std::int64_t kw = 0; kw < KW; ++kw) {
                        const T* row = cols.data() + ((f * KH + kh) * KW + kw) * HW;
                        for (std::int64_t ih = 0; ih < H; ++ih) {
                            const std::int64_t oh = ih * p.strideH - p.padTop + kh * p.dilH;
                            if (oh < 0 || oh >= OH) continue;
                            for (std::int64_t iw = 0; iw < W; ++iw) {
                                const std::int64_t ow = iw * p.strideW - p.padLeft + kw * p.dilW;
                                if (ow < 0 || ow >= OW) continue;
                                yf[oh * OW + ow] += row[ih * W + iw];
                            }
                        }
                    }
            }
        }
    if (bias) {
        const T* bp = bias->data<T>();
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t f = 0; f < F; ++f) {
                T* r = yp + (n * F + f) * OH * OW;
                for (std::int64_t i = 0; i < OH * OW; ++i) r[i] += bp[f];
            }
    }
    (void)c;
}
} // namespace

Tensor convTranspose2d(const KernelCall& c, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                       std::int64_t outPadH, std::int64_t outPadW, const Tensor* bias) {
    if (x.ndim() != 4 || w.ndim() != 4)
        c.fail("needs 4-d input and kernel, got " + x.typeStr() + " and " + w.typeStr());
    if (x.dtype() != w.dtype()) c.fail("input and kernel have different dtypes");
    if (p.groups < 1 || x.dim(1) % p.groups || w.dim(0) != x.dim(1))
        c.fail("input " + x.typeStr() + " and kernel " + w.typeStr() + " do not match with " +
               std::to_string(p.groups) + " groups");
    const std::int64_t F = w.dim(1) * p.groups;
    const std::int64_t OH = p.strideH * (x.dim(2) - 1) + outPadH + p.dilH * (w.dim(2) - 1) + 1 - p.padTop - p.padBottom;
    const std::int64_t OW = p.strideW * (x.dim(3) - 1) + outPadW + p.dilW * (w.dim(3) - 1) + 1 - p.padLeft - p.padRight;
    if (OH < 0 || OW < 0) c.fail("negative output size");
    if (bias && bias->numel() != F)
        c.fail("bias " + bias->typeStr() + " does not have " + std::to_string(F) + " elements");
    Tensor y = c.allocate(x.dtype(), {x.dim(0), F, OH, OW});
    if (y.numel() == 0) return y;
    if (x.dtype() == DType::Float32)
        convTransposeTyped<float>(c, x, w, p, bias, y);
    else if (x.dtype() == DType::Float64)
        convTransposeTyped<double>(c, x, w, p, bias, y);
    else
        c.fail("dtype " + std::string(dtypeName(x.dtype())) + " is not supported");
    return y;
}

namespace {

void abstractConv(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = c.in(1);
    if (x.ndim() != 4 || w.ndim() != 4)
        c.fail("needs 4-d input and kernel, got " + x.typeStr() + " and " + w.typeStr());
    c.outputs[0] = conv2d(c, x, w, abstractConvParams(c, w), nullptr);
}

void pool(KernelCall& c) {
    const Tensor& x = c.in(0);
    const PoolParams p = poolParams(c, x);
    Tensor y = c.allocate(x.dtype(), p.outShape);
    if (y.numel() > 0) {
        if (x.dtype() == DType::Float32)
            loops(c.ctx.options.cpuLoops)
                .poolFloat(x.data<float>(), y.data<float>(), p.planes, p.n[0], p.n[1], p.o[0], p.o[1], p.k[0], p.k[1],
                           p.s[0], p.s[1], p.p0[0], p.p1[0], p.p0[1], p.p1[1], p.mode, c.ctx.options.poolSeparable);
        else if (x.dtype() == DType::Float64)
            loops(c.ctx.options.cpuLoops)
                .poolDouble(x.data<double>(), y.data<double>(), p.planes, p.n[0], p.n[1], p.o[0], p.o[1], p.k[0],
                            p.k[1], p.s[0], p.s[1], p.p0[0], p.p1[0], p.p0[1], p.p1[1], p.mode,
                            c.ctx.options.poolSeparable);
        else
            c.fail("dtype " + std::string(dtypeName(x.dtype())) + " is not supported");
    }
    c.outputs[0] = std::move(y);
}

void batchNorm(KernelCall& c) {
    const Tensor& x = c.in(0);
    if (x.ndim() < 2) c.fail("input " + x.typeStr() + " needs a channel axis");
    const std::int64_t C = x.dim(1);
    for (int i = 1; i < 5; ++i)
        if (c.in(i).numel() != C)
            c.fail("parameter " + std::to_string(i) + " " + c.in(i).typeStr() + " does not have " + std::to_string(C) +
                   " elements");
    const double eps = c.op().floatAttr("epsilon", 1e-5);
    const std::int64_t N = x.dim(0), inner = shapeNumel(Shape(x.shape().begin() + 2, x.shape().end()));
    Tensor y = c.reuseOrAllocate(0, x.dtype(), x.shape());
    visitDType(x.dtype(), "BatchNormInference", [&](auto z) {
        using T = decltype(z);
        if constexpr (std::is_floating_point_v<T>) {
            std::vector<T> scale(static_cast<std::size_t>(C)), shift(static_cast<std::size_t>(C));
            for (std::int64_t ch = 0; ch < C; ++ch) {
                const T g = static_cast<T>(c.in(1).at(ch)), b = static_cast<T>(c.in(2).at(ch));
                const T m = static_cast<T>(c.in(3).at(ch)), v = static_cast<T>(c.in(4).at(ch));
                const T a = g / std::sqrt(v + static_cast<T>(eps));
                scale[static_cast<std::size_t>(ch)] = a;
                shift[static_cast<std::size_t>(ch)] = b - m * a;
            }
            const T* xp = x.data<T>();
            T* yp = y.data<T>();
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t ch = 0; ch < C; ++ch) {
                    const T a = scale[static_cast<std::size_t>(ch)], b = shift[static_cast<std::size_t>(ch)];
                    const std::int64_t off = (n * C + ch) * inner;
                    for (std::int64_t i = 0; i < inner; ++i) yp[off + i] = xp[off + i] * a + b;
                }
        } else {
            c.fail("needs a float input, got " + x.typeStr());
        }
    });
    c.outputs[0] = std::move(y);
}

} // namespace

Conv2dParams abstractConvParams(const KernelCall& c, const Tensor& w) {
    const json& a = c.op().attrs();
    Conv2dParams p;
    p.strideH = a.at("subsample").at(0).get<std::int64_t>();
    p.strideW = a.at("subsample").at(1).get<std::int64_t>();
    p.dilH = a.at("filter_dilation").at(0).get<std::int64_t>();
    p.dilW = a.at("filter_dilation").at(1).get<std::int64_t>();
    p.groups = a.value("num_groups", 1);
    const json& bm = a.at("border_mode");
    const std::int64_t ekh = p.dilH * (w.dim(2) - 1) + 1, ekw = p.dilW * (w.dim(3) - 1) + 1;
    if (bm.is_string()) {
        const std::string m = bm.get<std::string>();
        if (m == "full") {
            p.padTop = p.padBottom = ekh - 1;
            p.padLeft = p.padRight = ekw - 1;
        } else if (m == "half") {
            p.padTop = p.padBottom = ekh / 2;
            p.padLeft = p.padRight = ekw / 2;
        } else if (m != "valid") {
            c.fail("border_mode '" + m + "' is not valid, full, half or a list of pads");
        }
    } else {
        auto pair = [&](const json& e, std::int64_t& lo, std::int64_t& hi) {
            if (e.is_array()) {
                lo = e.at(0).get<std::int64_t>();
                hi = e.at(1).get<std::int64_t>();
            } else {
                lo = hi = e.get<std::int64_t>();
            }
        };
        pair(bm.at(0), p.padTop, p.padBottom);
        pair(bm.at(1), p.padLeft, p.padRight);
    }
    return p;
}

PoolParams poolParams(const KernelCall& c, const Tensor& x) {
    const json& a = c.op().attrs();
    const json &ws = a.at("ws"), &st = a.at("stride"), &pad = a.at("pad");
    const int nd = static_cast<int>(ws.size());
    if (nd < 1 || nd > 2) c.fail("only 1-d and 2-d pooling are supported, ws has " + std::to_string(nd) + " entries");
    if (x.ndim() < nd) c.fail("input " + x.typeStr() + " has fewer dims than ws");
    const bool ib = a.value("ignore_border", true);
    PoolParams p;
    for (int i = 0; i < nd; ++i) {
        const int d = 2 - nd + i;
        p.k[d] = ws[static_cast<std::size_t>(i)].get<std::int64_t>();
        p.s[d] = st[static_cast<std::size_t>(i)].get<std::int64_t>();
        const json& pe = pad[static_cast<std::size_t>(i)];
        if (pe.is_array()) {
            p.p0[d] = pe[0].get<std::int64_t>();
            p.p1[d] = pe[1].get<std::int64_t>();
        } else {
            p.p0[d] = p.p1[d] = pe.get<std::int64_t>();
        }
        p.n[d] = x.dim(x.ndim() - nd + i);
        const std::int64_t r = p.n[d] + p.p0[d] + p.p1[d];
        if (ib)
            p.o[d] = r < p.k[d] ? 0 : (r - p.k[d]) / p.s[d] + 1;
        else if (p.s[d] >= p.k[d])
            p.o[d] = (r - 1) / p.s[d] + 1;
        else
            p.o[d] = std::max<std::int64_t>(0, (r - 1 - p.k[d] + p.s[d]) / p.s[d]) + 1;
        if (p.n[d] == 0) p.o[d] = 0;
    }
    p.outShape.assign(x.shape().begin(), x.shape().end() - nd);
    for (int i = 0; i < nd; ++i) p.outShape.push_back(p.o[2 - nd + i]);
    p.planes = shapeNumel(Shape(x.shape().begin(), x.shape().end() - nd));
    const std::string m = a.value("mode", std::string("max"));
    p.mode = m == "max"               ? PoolMode::Max
             : m == "sum"             ? PoolMode::Sum
             : m == "average_inc_pad" ? PoolMode::AvgIncPad
                                      : PoolMode::AvgExcPad;
    return p;
}

void registerConvKernels(KernelRegistry& r) {
    addHostAndGpu(r, "AbstractConv2d", "GpuCorrMM", abstractConv);
    addHostAndGpu(r, "Pool", "GpuPool", pool);
    addHostAndGpu(r, "BatchNormInference", "GpuDnnBatchNormInference", batchNorm);
}

} // namespace passlens::cpu
