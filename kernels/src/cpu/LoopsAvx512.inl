// AVX-512 versions of hot loops, included by LoopsConv.inl in the x86-64-v4 build only (inside
// Loops.inl's anonymous namespace): row copies and even / odd de-interleaving (also im2col's
// stride-2 gather), and 3x3 undilated float32 depthwise convolution with stride 1 or 2.
//
// Depthwise:
// Same arithmetic as the portable kernels in LoopsConv.inl: out = w0*t0 + w1*t1 + ... + w8*t8 in
// tap order (kh, kw), one rounding per multiply and per add, no FMA, so the bits are those of the
// baseline and x86-64-v3 builds. What differs is only how the data moves:
// - the zero-padded plane (stride 2: its four row/column-parity planes, so every tap is a
//   contiguous read) is rebuilt per channel only in its interior; the border stays zero from one
//   fill per geometry (PlaneCache, per thread);
// - rows are copied (stride 2: de-interleaved with vpermt2ps) with 16-float vectors and a masked
//   last vector, never with a per-row memcpy or a scalar tail;
// - every output row is computed in 16-float vectors straight into y, the last one stored under
//   a mask (lanes past the row end read the plane's slack and are dropped).
#include <immintrin.h>

inline __mmask16 tailMask(std::int64_t n) {
    return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

// dst[0:n] = src[0:n]
inline void copyRow16(const float* src, float* dst, std::int64_t n) {
    std::int64_t j = 0;
    for (; j + 16 <= n; j += 16) _mm512_storeu_ps(dst + j, _mm512_loadu_ps(src + j));
    if (j < n) {
        const __mmask16 m = tailMask(n - j);
        _mm512_mask_storeu_ps(dst + j, m, _mm512_maskz_loadu_ps(m, src + j));
    }
}

// ev[j] = src[2j] for j < ne and od[j] = src[2j + 1] for j < no (od unused when no = 0); only
// src[0 .. n-1] is read (loads masked to the source length n).
inline void deinterleaveRow16(const float* src, std::int64_t n, float* ev, std::int64_t ne, float* od,
                              std::int64_t no) {
    const __m512i evIdx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odIdx = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const std::int64_t pairs = std::max(ne, no);
    for (std::int64_t j = 0; j < pairs; j += 16) {
        const std::int64_t s = 2 * j; // first source float of this block
        const std::int64_t left = n - s;
        const __m512 lo =
            _mm512_maskz_loadu_ps(tailMask(std::max<std::int64_t>(0, std::min<std::int64_t>(16, left))), src + s);
        const __m512 hi = _mm512_maskz_loadu_ps(
            tailMask(std::max<std::int64_t>(0, std::min<std::int64_t>(16, left - 16))), src + s + 16);
        if (j < ne) _mm512_mask_storeu_ps(ev + j, tailMask(ne - j), _mm512_permutex2var_ps(lo, evIdx, hi));
        if (j < no) _mm512_mask_storeu_ps(od + j, tailMask(no - j), _mm512_permutex2var_ps(lo, odIdx, hi));
    }
}

struct PlaneCache {
    std::vector<float> buf;
    std::int64_t key[7] = {-1, -1, -1, -1, -1, -1, -1};
};

// Zero-filled planes for this geometry: cleared when the geometry differs from the last call's
// (the interior written per channel is then the same region, so the border stays zero).
inline float* planesFor(PlaneCache& pc, std::size_t floats, std::int64_t s, std::int64_t H, std::int64_t W,
                        std::int64_t OH, std::int64_t OW, std::int64_t padTop, std::int64_t padLeft) {
    const std::int64_t key[7] = {s, H, W, OH, OW, padTop, padLeft};
    const std::size_t need = floats + 64; // slack: the last vector of a row may read past the plane
    if (pc.buf.size() < need || !std::equal(key, key + 7, pc.key)) {
        pc.buf.assign(std::max(need, pc.buf.size()), 0.0f);
        std::copy(key, key + 7, pc.key);
    }
    return pc.buf.data();
}

void depthwise3x3Avx512(const float* x, const float* w, float* y, std::int64_t C, std::int64_t mult, std::int64_t H,
                        std::int64_t W, std::int64_t OH, std::int64_t OW, const Conv2dParams& p) {
    thread_local PlaneCache pc;
    const bool s2 = p.strideH == 2;
    const std::int64_t Wq = s2 ? OW + 1 : OW + 2, Hq = s2 ? OH + 1 : OH + 2, plane = Hq * Wq;
    float* P =
        planesFor(pc, static_cast<std::size_t>(s2 ? 4 * plane : plane), s2 ? 2 : 1, H, W, OH, OW, p.padTop, p.padLeft);
    const std::int64_t Hp = s2 ? 2 * OH + 1 : OH + 2; // padded rows read
    for (std::int64_t ch = 0; ch < C; ++ch) {
        const float* xc = x + ch * H * W;
        // interior: padded row r = i + padTop, padded column c = j + padLeft
        for (std::int64_t i = 0; i < H; ++i) {
            const std::int64_t r = i + p.padTop;
            if (r >= Hp) break;
            const float* src = xc + i * W;
            if (!s2) {
                const std::int64_t n = std::min(W, Wq - p.padLeft);
                if (n > 0) copyRow16(src, P + r * Wq + p.padLeft, n);
                continue;
            }
            // padded column c goes to column c / 2 of the plane of parity c % 2; source column j
            // has c = j + padLeft, so even j land in parity padLeft % 2 at (j + padLeft) / 2
            float* rowE = P + ((r & 1) * 2) * plane + (r >> 1) * Wq; // column parity 0
            float* rowO = rowE + plane;                              // column parity 1
            const std::int64_t pl = p.padLeft;
            float* dstEvenJ = (pl % 2 == 0 ? rowE : rowO) + pl / 2;
            float* dstOddJ = (pl % 2 == 0 ? rowO : rowE) + (pl + 1) / 2;
            const std::int64_t capEven = Wq - pl / 2, capOdd = Wq - (pl + 1) / 2;
            const std::int64_t ne = std::max<std::int64_t>(0, std::min((W + 1) / 2, capEven));
            const std::int64_t no = std::max<std::int64_t>(0, std::min(W / 2, capOdd));
            deinterleaveRow16(src, W, dstEvenJ, ne, dstOddJ, no);
        }
        for (std::int64_t m = 0; m < mult; ++m) {
            const std::int64_t f = ch * mult + m;
            const float* wf = w + f * 9;
            const __m512 w0 = _mm512_set1_ps(wf[0]), w1 = _mm512_set1_ps(wf[1]), w2 = _mm512_set1_ps(wf[2]);
            const __m512 w3 = _mm512_set1_ps(wf[3]), w4 = _mm512_set1_ps(wf[4]), w5 = _mm512_set1_ps(wf[5]);
            const __m512 w6 = _mm512_set1_ps(wf[6]), w7 = _mm512_set1_ps(wf[7]), w8 = _mm512_set1_ps(wf[8]);
            float* yf = y + f * OH * OW;
            for (std::int64_t oh = 0; oh < OH; ++oh) {
                float* yr = yf + oh * OW;
                // the nine taps of output column q are a[k] + q (+1 for the shifted ones)
                const float *t0, *t1, *t2, *t3, *t4, *t5, *t6, *t7, *t8;
                if (s2) {
                    const float* ee = P + oh * Wq;
                    const float* eo = P + plane + oh * Wq;
                    const float* oe = P + 2 * plane + oh * Wq;
                    const float* oo = P + 3 * plane + oh * Wq;
                    t0 = ee, t1 = eo, t2 = ee + 1, t3 = oe, t4 = oo, t5 = oe + 1, t6 = ee + Wq, t7 = eo + Wq,
                    t8 = ee + Wq + 1;
                } else {
                    const float* r0 = P + oh * Wq;
                    t0 = r0, t1 = r0 + 1, t2 = r0 + 2, t3 = r0 + Wq, t4 = r0 + Wq + 1, t5 = r0 + Wq + 2,
                    t6 = r0 + 2 * Wq, t7 = r0 + 2 * Wq + 1, t8 = r0 + 2 * Wq + 2;
                }
                for (std::int64_t q = 0; q < OW; q += 16) {
                    __m512 acc = _mm512_mul_ps(w0, _mm512_loadu_ps(t0 + q));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w1, _mm512_loadu_ps(t1 + q)));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w2, _mm512_loadu_ps(t2 + q)));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w3, _mm512_loadu_ps(t3 + q)));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w4, _mm512_loadu_ps(t4 + q)));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w5, _mm512_loadu_ps(t5 + q)));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w6, _mm512_loadu_ps(t6 + q)));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w7, _mm512_loadu_ps(t7 + q)));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(w8, _mm512_loadu_ps(t8 + q)));
                    if (q + 16 <= OW)
                        _mm512_storeu_ps(yr + q, acc);
                    else
                        _mm512_mask_storeu_ps(yr + q, tailMask(OW - q), acc);
                }
            }
        }
    }
}
