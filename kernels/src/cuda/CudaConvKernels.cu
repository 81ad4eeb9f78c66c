// CUDA kernels of the backend: convolution (im2col + cuBLAS, or depthwise), pooling and batch
// normalisation, float32. Semantics follow the CPU backend (kernels/src/cpu).
#include "KernelCommon.h"
#include "Launch.h"

#include <cmath>

namespace passlens::cuda {

namespace {

__global__ void im2colKernel(const float* x, float* cols, ConvShape s) {
    const long long N = s.OH * s.OW;
    const long long total = s.Cg * s.KH * s.KW * N;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long col = e % N, row = e / N;
        const long long kw = row % s.KW, kh = (row / s.KW) % s.KH, c = row / (s.KW * s.KH);
        const long long oh = col / s.OW, ow = col % s.OW;
        const long long ih = oh * s.strideH - s.padTop + kh * s.dilH, iw = ow * s.strideW - s.padLeft + kw * s.dilW;
        cols[e] = (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W) ? x[(c * s.H + ih) * s.W + iw] : 0.f;
    }
}

__global__ void depthwiseKernel(const float* x, const float* w, float* y, ConvShape s, long long mult) {
    const long long total = s.N * s.F * s.OH * s.OW;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long ow = e % s.OW, oh = (e / s.OW) % s.OH, f = (e / (s.OW * s.OH)) % s.F,
                        n = e / (s.OW * s.OH * s.F);
        const long long c = f / mult;
        const float* xc = x + (n * s.C + c) * s.H * s.W;
        const float* wf = w + f * s.KH * s.KW;
        float acc = 0.f;
        for (long long kh = 0; kh < s.KH; ++kh) {
            const long long ih = oh * s.strideH - s.padTop + kh * s.dilH;
            if (ih < 0 || ih >= s.H) continue;
            for (long long kw = 0; kw < s.KW; ++kw) {
                const long long iw = ow * s.strideW - s.padLeft + kw * s.dilW;
                if (iw < 0 || iw >= s.W) continue;
                acc += wf[kh * s.KW + kw] * xc[ih * s.W + iw];
            }
        }
        y[e] = acc;
    }
}

__global__ void poolKernel(const float* x, float* y, long long planes, long long H, long long W, long long OH,
                           long long OW, long long kh, long long kw, long long sh, long long sw, long long pt,
                           long long pb, long long pl, long long pr, int mode) {
    const long long total = planes * OH * OW;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long q = e % OW, r = (e / OW) % OH, p = e / (OW * OH);
        const long long rows = H + pt + pb, cols = W + pl + pr;
        const long long r0 = r * sh, r1 = min(r0 + kh, rows), c0 = q * sw, c1 = min(c0 + kw, cols);
        const long long i0 = max(r0, pt) - pt, i1 = max(min(r1, H + pt) - pt, i0);
        const long long j0 = max(c0, pl) - pl, j1 = max(min(c1, W + pl) - pl, j0);
        const float* xp = x + p * H * W;
        float acc = mode == 0 ? -INFINITY : 0.f;
        for (long long i = i0; i < i1; ++i)
            for (long long j = j0; j < j1; ++j) acc = mode == 0 ? fmaxf(acc, xp[i * W + j]) : acc + xp[i * W + j];
        if (mode == 2) {
            const long long cnt = (r1 - r0) * (c1 - c0);
            acc = cnt > 0 ? acc / static_cast<float>(cnt) : 0.f;
        } else if (mode == 3) {
            const long long cnt = (i1 - i0) * (j1 - j0);
            acc = cnt > 0 ? acc / static_cast<float>(cnt) : 0.f;
        }
        y[e] = acc;
    }
}

__global__ void batchNormKernel(const float* x, float* y, const float* g, const float* b, const float* m,
                                const float* v, double eps, long long N, long long C, long long inner) {
    const long long total = N * C * inner;
    for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long long>(gridDim.x) * blockDim.x) {
        const long long c = (e / inner) % C;
        const float a = g[c] / sqrtf(v[c] + static_cast<float>(eps));
        y[e] = x[e] * a + (b[c] - m[c] * a);
    }
}

} // namespace

long long convWorkspaceFloats(const ConvShape& s) { return s.Cg * s.KH * s.KW * s.OH * s.OW; }

void conv2d(const float* x, const float* w, float* y, const ConvShape& s, float* workspace, int device) {
    cudaStream_t st = streamOf(device);
    const long long spatial = s.OH * s.OW;
    if (s.N * s.F * spatial == 0) return;
    const long long Fg = s.F / s.groups;
    if (s.Cg == 1 && s.groups == s.C && s.groups > 1) {
        const long long total = s.N * s.F * spatial;
        launch("depthwiseKernel", depthwiseKernel, strideBlocksFor(total), kThreads, st, x, w, y, s, Fg);
        checkLaunch("depthwise convolution kernel launch");
        return;
    }
    const long long K = s.Cg * s.KH * s.KW;
    const bool pointwise = s.KH == 1 && s.KW == 1 && s.strideH == 1 && s.strideW == 1 && s.padTop == 0 &&
                           s.padLeft == 0 && s.OH == s.H && s.OW == s.W;
    for (long long n = 0; n < s.N; ++n)
        for (long long g = 0; g < s.groups; ++g) {
            const float* xg = x + (n * s.C + g * s.Cg) * s.H * s.W;
            const float* B = xg;
            if (!pointwise) {
                const long long total = K * spatial;
                launch("im2colKernel", im2colKernel, strideBlocksFor(total), kThreads, st, xg, workspace, s);
                checkLaunch("im2col kernel launch");
                B = workspace;
            }
            gemm(F32, false, false, Fg, spatial, K, 1.0, w + g * Fg * K, K, B, spatial, 0.0,
                 y + (n * s.F + g * Fg) * spatial, spatial, 1, 0, 0, 0, device);
        }
}

void pool2d(const float* x, float* y, long long planes, long long H, long long W, long long OH, long long OW,
            long long kh, long long kw, long long sh, long long sw, long long pt, long long pb, long long pl,
            long long pr, int mode, int device) {
    const long long total = planes * OH * OW;
    if (total == 0) return;
    launch("poolKernel", poolKernel, strideBlocksFor(total), kThreads, streamOf(device), x, y, planes, H, W, OH, OW, kh,
           kw, sh, sw, pt, pb, pl, pr, mode);
    checkLaunch("pool kernel launch");
}

void batchNorm(const float* x, float* y, const float* scale, const float* bias, const float* mean, const float* var,
               double eps, long long N, long long C, long long inner, int device) {
    const long long total = N * C * inner;
    if (total == 0) return;
    launch("batchNormKernel", batchNormKernel, strideBlocksFor(total), kThreads, streamOf(device), x, y, scale, bias,
           mean, var, eps, N, C, inner);
    checkLaunch("batch norm kernel launch");
}

} // namespace passlens::cuda
