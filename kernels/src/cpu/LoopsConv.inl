// The convolution part of the CPU backend's hot loops: im2col, depthwise convolution and the
// Winograd transforms. Included by Loops.inl inside namespace passlens::cpu::PASSLENS_LOOPS_NS
// { namespace { ... } }.

// Output index range [lo, hi) for which in = o*stride + off lies in [0, n).
inline void validRange(std::int64_t outLen, std::int64_t stride, std::int64_t off, std::int64_t n, std::int64_t& lo,
                       std::int64_t& hi) {
    // o*stride + off >= 0  ->  o >= ceil(-off / stride)
    lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    // o*stride + off <= n-1 -> o <= floor((n-1-off)/stride)
    const std::int64_t top = n - 1 - off;
    hi = top < 0 ? 0 : std::min<std::int64_t>(outLen, top / stride + 1);
    if (lo > hi) lo = hi;
}

#if defined(__AVX512F__)
#include "LoopsAvx512.inl"
#endif

// dst[j] = src[j * stride] for j < n with a vector gather where this build has one (float,
// stride 2, AVX-512); false when the caller must copy.
template <class T> inline bool gatherStrided(const T* src, T* dst, std::int64_t n, std::int64_t stride) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float>)
        if (stride == 2) {
            deinterleaveRow16(src, 2 * n - 1, dst, n, nullptr, 0); // the even elements only
            return true;
        }
#endif
    (void)src, (void)dst, (void)n, (void)stride;
    return false;
}

template <class T>
void im2col(const T* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t KH, std::int64_t KW,
            std::int64_t OH, std::int64_t OW, const Conv2dParams& p, T* cols) {
    const std::int64_t N = OH * OW;
    for (std::int64_t ch = 0; ch < C; ++ch)
        for (std::int64_t kh = 0; kh < KH; ++kh)
            for (std::int64_t kw = 0; kw < KW; ++kw) {
                T* row = cols + ((ch * KH + kh) * KW + kw) * N;
                const std::int64_t offW = kw * p.dilW - p.padLeft;
                std::int64_t w0, w1;
                validRange(OW, p.strideW, offW, W, w0, w1);
                for (std::int64_t oh = 0; oh < OH; ++oh) {
                    T* r = row + oh * OW;
                    const std::int64_t ih = oh * p.strideH - p.padTop + kh * p.dilH;
                    if (ih < 0 || ih >= H) {
                        std::memset(r, 0, static_cast<std::size_t>(OW) * sizeof(T));
                        continue;
                    }
                    const T* src = x + (ch * H + ih) * W;
                    for (std::int64_t ow = 0; ow < w0; ++ow) r[ow] = 0;
                    if (p.strideW == 1) {
                        if (w1 > w0)
                            std::memcpy(r + w0, src + w0 + offW, static_cast<std::size_t>(w1 - w0) * sizeof(T));
                    } else if (w1 > w0 && !gatherStrided(src + w0 * p.strideW + offW, r + w0, w1 - w0, p.strideW)) {
                        for (std::int64_t ow = w0; ow < w1; ++ow) r[ow] = src[ow * p.strideW + offW];
                    }
                    for (std::int64_t ow = w1; ow < OW; ++ow) r[ow] = 0;
                }
            }
}

// Depthwise: one input channel per group. Each channel plane is copied into a zero-padded
// buffer so the inner loops have no bounds checks; 3x3 kernels get an unrolled loop.
// 3x3 undilated depthwise convolution over a flattened plane, for small outputs (stride 1) and
// stride 2: the zero-padded input (stride 2: split into 4 planes by row and column parity, so
// every tap is a contiguous read) is read as one array, the 9 taps are summed in the order of
// the row-wise kernel below (w0 .. w8, same bits) for every flattened position q = oh * Wq + ow
// of one long contiguous loop (the Wq - OW positions past a row's end are computed and dropped),
// then the rows are copied to y. No short rows, no scalar tails per row.
template <class T>
void depthwise3x3Flat(const T* x, const T* w, T* y, std::int64_t C, std::int64_t mult, std::int64_t H, std::int64_t W,
                      std::int64_t OH, std::int64_t OW, const Conv2dParams& p) {
    const bool s2 = p.strideH == 2;
    // stride 1: one plane Hq x Wq = (OH + 2) x (OW + 2); stride 2: planes [row parity][col parity]
    // of (OH + 1) x (OW + 1), plane (rp, cp)[a][b] = padded[2a + rp][2b + cp]
    const std::int64_t Wq = s2 ? OW + 1 : OW + 2, Hq = s2 ? OH + 1 : OH + 2, plane = Hq * Wq;
    const std::int64_t Hp = s2 ? 2 * OH + 1 : OH + 2, Wp = s2 ? 2 * OW + 1 : OW + 2; // padded rows / cols read
    thread_local std::vector<T> planes, out;
    planes.assign(static_cast<std::size_t>(s2 ? 4 * plane : plane), T(0));
    const std::int64_t L = (OH - 1) * Wq + OW;
    if (out.size() < static_cast<std::size_t>(L)) out.resize(static_cast<std::size_t>(L));
    T* P = planes.data();
    T* F = out.data();
    const std::int64_t n = std::min(W, Wp - p.padLeft);
    for (std::int64_t ch = 0; ch < C; ++ch) {
        const T* xc = x + ch * H * W;
        for (std::int64_t i = 0; i < H && n > 0; ++i) {
            const std::int64_t r = i + p.padTop;
            if (r >= Hp) break;
            const T* src = xc + i * W;
            if (!s2) {
                std::memcpy(P + r * Wq + p.padLeft, src, static_cast<std::size_t>(n) * sizeof(T));
                continue;
            }
            // padded column pc = c + padLeft goes to plane column pc / 2 of parity pc % 2
            T* rowE = P + ((r & 1) * 2) * plane + (r >> 1) * Wq;
            T* rowO = rowE + plane;
            const std::int64_t ce = p.padLeft % 2; // first c with an even padded column
            T* e = rowE + (ce + p.padLeft) / 2;
            T* o = rowO + (1 - ce + p.padLeft) / 2;
            for (std::int64_t j = 0; ce + 2 * j < n; ++j) e[j] = src[ce + 2 * j];
            for (std::int64_t j = 0; 1 - ce + 2 * j < n; ++j) o[j] = src[1 - ce + 2 * j];
        }
        for (std::int64_t m = 0; m < mult; ++m) {
            const std::int64_t f = ch * mult + m;
            const T* wf = w + f * 9;
            const T w0 = wf[0], w1 = wf[1], w2 = wf[2], w3 = wf[3], w4 = wf[4], w5 = wf[5], w6 = wf[6], w7 = wf[7],
                    w8 = wf[8];
            // few pointers (the taps are fixed offsets from them), so the loop keeps them and the
            // nine weights in registers
            if (s2) {
                // tap (kh, kw) reads plane (kh % 2, kw % 2) at q + (kh / 2) * Wq + kw / 2
                const T* ee = P;
                const T* eo = P + plane;
                const T* oe = P + 2 * plane;
                const T* oo = P + 3 * plane;
                const T* ee2 = ee + Wq;
                const T* eo2 = eo + Wq;
                for (std::int64_t q = 0; q < L; ++q)
                    F[q] = w0 * ee[q] + w1 * eo[q] + w2 * ee[q + 1] + w3 * oe[q] + w4 * oo[q] + w5 * oe[q + 1] +
                           w6 * ee2[q] + w7 * eo2[q] + w8 * ee2[q + 1];
            } else {
                const T* r0 = P;
                const T* r1 = P + Wq;
                const T* r2 = P + 2 * Wq;
                for (std::int64_t q = 0; q < L; ++q)
                    F[q] = w0 * r0[q] + w1 * r0[q + 1] + w2 * r0[q + 2] + w3 * r1[q] + w4 * r1[q + 1] + w5 * r1[q + 2] +
                           w6 * r2[q] + w7 * r2[q + 1] + w8 * r2[q + 2];
            }
            T* yf = y + f * OH * OW;
            for (std::int64_t oh = 0; oh < OH; ++oh)
                std::memcpy(yf + oh * OW, F + oh * Wq, static_cast<std::size_t>(OW) * sizeof(T));
        }
    }
}

template <class T>
void depthwise(const T* x, const T* w, T* y, std::int64_t C, std::int64_t mult, std::int64_t H, std::int64_t W,
               std::int64_t KH, std::int64_t KW, std::int64_t OH, std::int64_t OW, const Conv2dParams& p) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<T, float>) {
        if (KH == 3 && KW == 3 && p.dilH == 1 && p.dilW == 1 && p.strideH == p.strideW &&
            (p.strideH == 1 || p.strideH == 2) && OH > 0 && OW > 0 && p.depthwiseAvx512) {
            depthwise3x3Avx512(x, w, y, C, mult, H, W, OH, OW, p);
            return;
        }
    }
#endif
    if (KH == 3 && KW == 3 && p.dilH == 1 && p.dilW == 1 && p.strideH == p.strideW &&
        (p.strideH == 2 || (p.strideH == 1 && OW <= 16)) && OH > 0 && OW > 0) {
        depthwise3x3Flat(x, w, y, C, mult, H, W, OH, OW, p);
        return;
    }
    thread_local std::vector<T> padBuf;
    // rows/cols of the padded plane actually read
    const std::int64_t Hp = std::max(H + p.padTop, (OH - 1) * p.strideH + (KH - 1) * p.dilH + 1);
    const std::int64_t Wp = std::max(W + p.padLeft, (OW - 1) * p.strideW + (KW - 1) * p.dilW + 1);
    const std::int64_t sh = p.strideH, sw = p.strideW, dh = p.dilH, dw = p.dilW;
    const bool s2 = KH == 3 && KW == 3 && sw == 2 && dw == 1;
    thread_local std::vector<T> splitBuf;
    // Wp >= 2*OW + 1, so each half row has OW + 1 entries
    const std::int64_t Wh = (Wp + 1) / 2;
    if (s2)
        splitBuf.assign(static_cast<std::size_t>(2 * Hp * Wh), T(0));
    else
        padBuf.assign(static_cast<std::size_t>(Hp * Wp), T(0));
    T* ev = s2 ? splitBuf.data() : nullptr;
    T* od = s2 ? ev + Hp * Wh : nullptr;
    for (std::int64_t ch = 0; ch < C; ++ch) {
        const T* xc = x + ch * H * W;
        T* xp = padBuf.data();
        for (std::int64_t i = 0; i < H; ++i) {
            const std::int64_t r = i + p.padTop;
            if (r >= Hp) break;
            const std::int64_t n = std::min(W, Wp - p.padLeft);
            if (n <= 0) continue;
            if (s2) {
                // padded column pc = c + padLeft goes to ev[pc/2] (even) or od[pc/2] (odd)
                const T* src = xc + i * W;
                const std::int64_t ce = p.padLeft % 2; // first c with an even padded column
                T* e = ev + r * Wh + (ce + p.padLeft) / 2;
                T* o = od + r * Wh + (1 - ce + p.padLeft) / 2;
                for (std::int64_t j = 0; ce + 2 * j < n; ++j) e[j] = src[ce + 2 * j];
                for (std::int64_t j = 0; 1 - ce + 2 * j < n; ++j) o[j] = src[1 - ce + 2 * j];
            } else {
                std::memcpy(xp + r * Wp + p.padLeft, xc + i * W, static_cast<std::size_t>(n) * sizeof(T));
            }
        }
        for (std::int64_t m = 0; m < mult; ++m) {
            const std::int64_t f = ch * mult + m;
            const T* wf = w + f * KH * KW;
            T* yf = y + f * OH * OW;
            for (std::int64_t oh = 0; oh < OH; ++oh) {
                T* yr = yf + oh * OW;
                const T* base = s2 ? nullptr : xp + (oh * sh) * Wp;
                if (KH == 3 && KW == 3 && sw == 1 && dw == 1) {
                    const T* r0 = base;
                    const T* r1 = base + dh * Wp;
                    const T* r2 = base + 2 * dh * Wp;
                    const T w0 = wf[0], w1 = wf[1], w2 = wf[2], w3 = wf[3], w4 = wf[4], w5 = wf[5], w6 = wf[6],
                            w7 = wf[7], w8 = wf[8];
                    for (std::int64_t ow = 0; ow < OW; ++ow)
                        yr[ow] = w0 * r0[ow] + w1 * r0[ow + 1] + w2 * r0[ow + 2] + w3 * r1[ow] + w4 * r1[ow + 1] +
                                 w5 * r1[ow + 2] + w6 * r2[ow] + w7 * r2[ow + 1] + w8 * r2[ow + 2];
                } else if (s2) {
                    // rows of the even / odd split plane: column 2*ow + k is ev[ow + k/2] (k even)
                    // or od[ow] (k = 1)
                    const T* e0 = ev + (oh * sh) * Wh;
                    const T* e1 = e0 + dh * Wh;
                    const T* e2 = e0 + 2 * dh * Wh;
                    const T* o0 = od + (oh * sh) * Wh;
                    const T* o1 = o0 + dh * Wh;
                    const T* o2 = o0 + 2 * dh * Wh;
                    const T w0 = wf[0], w1 = wf[1], w2 = wf[2], w3 = wf[3], w4 = wf[4], w5 = wf[5], w6 = wf[6],
                            w7 = wf[7], w8 = wf[8];
                    for (std::int64_t ow = 0; ow < OW; ++ow)
                        yr[ow] = w0 * e0[ow] + w1 * o0[ow] + w2 * e0[ow + 1] + w3 * e1[ow] + w4 * o1[ow] +
                                 w5 * e1[ow + 1] + w6 * e2[ow] + w7 * o2[ow] + w8 * e2[ow + 1];
                } else {
                    for (std::int64_t ow = 0; ow < OW; ++ow) yr[ow] = 0;
                    for (std::int64_t kh = 0; kh < KH; ++kh) {
                        const T* xr = base + kh * dh * Wp;
                        for (std::int64_t kw = 0; kw < KW; ++kw) {
                            const T wv = wf[kh * KW + kw];
                            const T* xs = xr + kw * dw;
                            if (sw == 1)
                                for (std::int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * xs[ow];
                            else
                                for (std::int64_t ow = 0; ow < OW; ++ow) yr[ow] += wv * xs[ow * sw];
                        }
                    }
                }
            }
        }
    }
}

// Winograd F(m x m, 3 x 3) transforms (m = 2: 4x4 tiles, m = 4: 6x6 tiles), as 1-d transforms
// over whole rows of tiles, so every loop runs over contiguous arrays. Input: the channel plane
// is copied into a zero-padded plane; per tile row, B^T over the a plane rows (vectorised over
// columns), then the rows are split into a phase arrays (ph_j[t] = row[m t + j]) and B^T runs
// over the phases, writing V[a*a][C][T] (T = TH*TW tiles, row-major) contiguously. Output:
// M[a*a][F][T] -> A^T over the columns, then over the rows, then interleaved into y[F][OH][OW]
// (+ bias[f] when given), border tiles clipped.

// r[k*rs + l] = (B^T d)[k] for l < n, with d[i] at d[i*ds + l].
template <int A>
inline void winoBT(const float* __restrict d, std::int64_t ds, float* __restrict r, std::int64_t rs, std::int64_t n) {
    if constexpr (A == 4) {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l];
            r[l] = d0 - d2;
            r[rs + l] = d1 + d2;
            r[2 * rs + l] = d2 - d1;
            r[3 * rs + l] = d1 - d3;
        }
    } else {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l], d4 = d[4 * ds + l],
                        d5 = d[5 * ds + l];
            r[l] = (4.0f * d0 - 5.0f * d2) + d4;
            r[rs + l] = (d3 + d4) - 4.0f * (d1 + d2);
            r[2 * rs + l] = 4.0f * (d1 - d2) + (d4 - d3);
            r[3 * rs + l] = 2.0f * (d3 - d1) + (d4 - d2);
            r[4 * rs + l] = 2.0f * (d1 - d3) + (d4 - d2);
            r[5 * rs + l] = (4.0f * d1 - 5.0f * d3) + d5;
        }
    }
}

// r[k*rs + l] = (A^T d)[k], k < m.
template <int A>
inline void winoAT(const float* __restrict d, std::int64_t ds, float* __restrict r, std::int64_t rs, std::int64_t n) {
    if constexpr (A == 4) {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l];
            r[l] = (d0 + d1) + d2;
            r[rs + l] = (d1 - d2) - d3;
        }
    } else {
#pragma GCC ivdep
        for (std::int64_t l = 0; l < n; ++l) {
            const float d0 = d[l], d1 = d[ds + l], d2 = d[2 * ds + l], d3 = d[3 * ds + l], d4 = d[4 * ds + l],
                        d5 = d[5 * ds + l];
            const float s12 = d1 + d2, d12 = d1 - d2, s34 = d3 + d4, d34 = d3 - d4;
            r[l] = (d0 + s12) + s34;
            r[rs + l] = d12 + 2.0f * d34;
            r[2 * rs + l] = s12 + 4.0f * s34;
            r[3 * rs + l] = (d12 + 8.0f * d34) + d5;
        }
    }
}

template <int A>
void winogradInputT(const float* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t padTop,
                    std::int64_t padLeft, std::int64_t TH, std::int64_t TW, float* V) {
    constexpr int M = A - 2;
    const std::int64_t T = TH * TW;
    const std::int64_t Hp = TH * M + 2, Wp = TW * M + 2;
    thread_local std::vector<float> plane, rows, ph;
    plane.assign(static_cast<std::size_t>(Hp * Wp), 0.0f);
    rows.resize(static_cast<std::size_t>(TH * A * Wp));
    ph.resize(static_cast<std::size_t>(A * A * T));
    const std::int64_t c0 = std::max<std::int64_t>(0, -padLeft), c1 = std::min<std::int64_t>(W, Wp - padLeft);
    const std::int64_t r0 = std::max<std::int64_t>(0, -padTop), r1 = std::min<std::int64_t>(H, Hp - padTop);
    float* P = plane.data();
    float* R = rows.data();
    float* Q = ph.data();
    for (std::int64_t ch = 0; ch < C; ++ch) {
        const float* xc = x + ch * H * W;
        if (c1 > c0)
            for (std::int64_t i = r0; i < r1; ++i)
                std::memcpy(P + (i + padTop) * Wp + c0 + padLeft, xc + i * W + c0,
                            static_cast<std::size_t>(c1 - c0) * sizeof(float));
        // B^T over the a plane rows of each tile row: R[th][k][Wp]
        for (std::int64_t th = 0; th < TH; ++th) winoBT<A>(P + th * M * Wp, Wp, R + th * A * Wp, Wp, Wp);
        // phases: Q[k][j][th*TW + t] = R[th][k][t*m + j]
        for (std::int64_t th = 0; th < TH; ++th)
            for (int k = 0; k < A; ++k) {
                const float* row = R + (th * A + k) * Wp;
                float* q = Q + static_cast<std::int64_t>(k) * A * T + th * TW;
                for (int j = 0; j < A; ++j)
#pragma GCC ivdep
                    for (std::int64_t t = 0; t < TW; ++t) q[j * T + t] = row[t * M + j];
            }
        // B^T over the phases, into V[k*a + j'][ch][T]
        for (int k = 0; k < A; ++k)
            winoBT<A>(Q + static_cast<std::int64_t>(k) * A * T, T,
                      V + ((static_cast<std::int64_t>(k) * A) * C + ch) * T, C * T, T);
        // clear the rows written (the zero border is kept)
        if (c1 > c0)
            for (std::int64_t i = r0; i < r1; ++i)
                std::memset(P + (i + padTop) * Wp + c0 + padLeft, 0, static_cast<std::size_t>(c1 - c0) * sizeof(float));
    }
}

template <int A>
void winogradOutputT(const float* Mv, std::int64_t F, std::int64_t TH, std::int64_t TW, std::int64_t OH,
                     std::int64_t OW, const float* bias, float* y) {
    constexpr int M = A - 2;
    const std::int64_t T = TH * TW;
    thread_local std::vector<float> hbuf, obuf;
    hbuf.resize(static_cast<std::size_t>(A * M * T));
    obuf.resize(static_cast<std::size_t>(M * M * T));
    float* Hb = hbuf.data();
    float* O = obuf.data();
    const std::int64_t full = std::min(TW, OW / M); // tiles whose m columns are all inside
    for (std::int64_t f = 0; f < F; ++f) {
        const float b = bias ? bias[f] : 0.0f;
        float* yf = y + f * OH * OW;
        // over the columns: Hb[i][j'][T]
        for (int i = 0; i < A; ++i)
            winoAT<A>(Mv + ((static_cast<std::int64_t>(i) * A) * F + f) * T, F * T, Hb + i * M * T, T, T);
        // over the rows: O[i'][j'][T]
        for (int j = 0; j < M; ++j) winoAT<A>(Hb + j * T, M * T, O + j * T, M * T, T);
        for (std::int64_t th = 0; th < TH; ++th)
            for (int i = 0; i < M; ++i) {
                const std::int64_t oh = th * M + i;
                if (oh >= OH) break;
                float* yr = yf + oh * OW;
                const float* o = O + i * M * T + th * TW;
                if (bias) {
                    for (std::int64_t t = 0; t < full; ++t)
                        for (int j = 0; j < M; ++j) yr[t * M + j] = o[j * T + t] + b;
                    for (std::int64_t t = full; t < TW; ++t)
                        for (int j = 0; j < M && t * M + j < OW; ++j) yr[t * M + j] = o[j * T + t] + b;
                } else {
                    for (std::int64_t t = 0; t < full; ++t)
                        for (int j = 0; j < M; ++j) yr[t * M + j] = o[j * T + t];
                    for (std::int64_t t = full; t < TW; ++t)
                        for (int j = 0; j < M && t * M + j < OW; ++j) yr[t * M + j] = o[j * T + t];
                }
            }
    }
}

void winogradInput(const float* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t padTop,
                   std::int64_t padLeft, std::int64_t TH, std::int64_t TW, int m, float* V) {
    if (m == 2)
        winogradInputT<4>(x, C, H, W, padTop, padLeft, TH, TW, V);
    else
        winogradInputT<6>(x, C, H, W, padTop, padLeft, TH, TW, V);
}

void winogradOutput(const float* Mv, std::int64_t F, std::int64_t TH, std::int64_t TW, std::int64_t OH, std::int64_t OW,
                    int m, const float* bias, float* y) {
    if (m == 2)
        winogradOutputT<4>(Mv, F, TH, TW, OH, OW, bias, y);
    else
        winogradOutputT<6>(Mv, F, TH, TW, OH, OW, bias, y);
}
