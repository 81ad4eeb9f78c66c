// The pooling part of the CPU backend's hot loops. Included by Loops.inl inside namespace
// passlens::cpu::PASSLENS_LOOPS_NS { namespace { ... } }.

// Pooling, separable: per input row the window maxima / sums over columns, then over rows.
// Windows follow Theano's pool.py: in padded coordinates, clipped to the padded image; max, sum
// and average_exc_pad use only real elements, average_inc_pad divides by the clipped window.
// Max pooling with 3-wide windows at column stride 2 and no left padding (squeezenet's 3x3 /
// stride 2, ceil mode), directly over the output: per output row, each window row's maximum over
// its 3 columns (x[2q], x[2q + 1], x[2q + 2]; the third read through a second pointer so the
// compiler vectorises the stride-2 loads) is folded into the output row, which stays in L1. No
// column or row buffers. The separable kernel's order of comparisons is kept (per window row from
// -inf over the columns left to right, then over the rows top to bottom), so the bits are the
// same, NaN and signed zeros included.
template <class T>
void maxPoolW3S2(const T* x, T* y, std::int64_t planes, std::int64_t H, std::int64_t W, std::int64_t OH,
                 std::int64_t OW, std::int64_t kh, std::int64_t sh, std::int64_t pt, std::int64_t pb, std::int64_t pr) {
    const std::int64_t rows = H + pt + pb, cols = W + pr;
    const T init = -std::numeric_limits<T>::infinity();
    // full windows [0, qb): columns 2q .. 2q + 2 inside the row
    std::int64_t qb = OW;
    while (qb > 0 && ((qb - 1) * 2 + 3 > W || (qb - 1) * 2 + 3 > cols)) --qb;
    for (std::int64_t pl_ = 0; pl_ < planes; ++pl_) {
        const T* xp = x + pl_ * H * W;
        T* yp = y + pl_ * OH * OW;
        for (std::int64_t r = 0; r < OH; ++r) {
            const std::int64_t r0 = r * sh, r1 = std::min(r0 + kh, rows);
            const std::int64_t i0 = std::max(r0, pt) - pt, i1 = std::max(std::min(r1, H + pt) - pt, i0);
            T* __restrict yr = yp + r * OW;
            for (std::int64_t q = 0; q < OW; ++q) yr[q] = init;
            for (std::int64_t i = i0; i < i1; ++i) {
                const T* __restrict xs = xp + i * W;
                const T* __restrict xs2 = xs + 2;
                for (std::int64_t q = 0; q < qb; ++q) {
                    const T a = xs[2 * q], b = xs[2 * q + 1], c = xs2[2 * q];
                    T h = a > init ? a : init;
                    h = b > h ? b : h;
                    h = c > h ? c : h;
                    yr[q] = h > yr[q] ? h : yr[q];
                }
                for (std::int64_t q = qb; q < OW; ++q) {
                    const std::int64_t j0 = std::min(q * 2, W), j1 = std::min(std::min(q * 2 + 3, cols), W);
                    T m = init;
                    for (std::int64_t j = j0; j < j1; ++j) m = xs[j] > m ? xs[j] : m;
                    yr[q] = m > yr[q] ? m : yr[q];
                }
            }
        }
    }
}

template <class T>
void poolT(const T* x, T* y, std::int64_t planes, std::int64_t H, std::int64_t W, std::int64_t OH, std::int64_t OW,
           std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t pt, std::int64_t pb,
           std::int64_t pl, std::int64_t pr, PoolMode mode, bool separableOnly) {
    const bool isMax = mode == PoolMode::Max;
    // separableOnly (ExecOptions::poolSeparable): the separable kernel for every window
    if (isMax && kw == 3 && sw == 2 && pl == 0 && !separableOnly)
        return maxPoolW3S2(x, y, planes, H, W, OH, OW, kh, sh, pt, pb, pr);
    const std::int64_t rows = H + pt + pb, cols = W + pl + pr;
    thread_local std::vector<std::int64_t> cc0, cc1, cpad;
    thread_local std::vector<T> hbuf;
    cc0.resize(static_cast<std::size_t>(OW));
    cc1.resize(static_cast<std::size_t>(OW));
    cpad.resize(static_cast<std::size_t>(OW));
    for (std::int64_t q = 0; q < OW; ++q) {
        const std::int64_t c0 = q * sw, c1 = std::min(c0 + kw, cols);
        cc0[static_cast<std::size_t>(q)] = std::max(c0, pl) - pl;
        cc1[static_cast<std::size_t>(q)] = std::max(std::min(c1, W + pl) - pl, cc0[static_cast<std::size_t>(q)]);
        cpad[static_cast<std::size_t>(q)] = c1 - c0;
    }
    hbuf.resize(static_cast<std::size_t>(H * OW));
    // stride 2: each row is split into its even and odd columns so the window loops are contiguous
    thread_local std::vector<T> evenOdd;
    const std::int64_t half = (W + 1) / 2;
    if (sw == 2) evenOdd.resize(static_cast<std::size_t>(2 * half));
    const T init = isMax ? -std::numeric_limits<T>::infinity() : T(0);
    for (std::int64_t pl_ = 0; pl_ < planes; ++pl_) {
        const T* xp = x + pl_ * H * W;
        T* yp = y + pl_ * OH * OW;
        // columns: full windows [qa, qb) vectorised over q (tap-outer loop), clipped ones scalar
        std::int64_t qa = 0, qb = OW;
        while (qa < OW && (qa * sw - pl < 0)) ++qa;
        while (qb > qa && ((qb - 1) * sw - pl + kw > W || (qb - 1) * sw + kw > cols)) --qb;
        for (std::int64_t i = 0; i < H; ++i) {
            const T* xr = xp + i * W;
            T* hr = hbuf.data() + i * OW;
            for (std::int64_t q = 0; q < OW; ++q) hr[q] = init;
            if (sw == 2 && qb > qa) {
                T* ev = evenOdd.data();
                T* od = ev + half;
                for (std::int64_t j = 0; j < W / 2; ++j) {
                    ev[j] = xr[2 * j];
                    od[j] = xr[2 * j + 1];
                }
                if (W % 2) ev[W / 2] = xr[W - 1];
                for (std::int64_t t = 0; t < kw; ++t) {
                    // column 2q + u, u = t - pl: even u -> ev[q + u/2], odd u -> od[q + floor(u/2)]
                    const std::int64_t u = t - pl;
                    const std::int64_t fu = u >= 0 ? u / 2 : -((-u + 1) / 2);
                    const T* xs = ((u % 2) == 0 ? ev : od) + fu;
                    if (isMax)
                        for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[q] > hr[q] ? xs[q] : hr[q];
                    else
                        for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[q];
                }
            } else
                for (std::int64_t t = 0; t < kw; ++t) {
                    const T* xs = xr + t - pl;
                    if (isMax) {
                        if (sw == 1)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[q] > hr[q] ? xs[q] : hr[q];
                        else if (sw == 2)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[2 * q] > hr[q] ? xs[2 * q] : hr[q];
                        else
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] = xs[q * sw] > hr[q] ? xs[q * sw] : hr[q];
                    } else {
                        if (sw == 1)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[q];
                        else if (sw == 2)
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[2 * q];
                        else
                            for (std::int64_t q = qa; q < qb; ++q) hr[q] += xs[q * sw];
                    }
                }
            auto border = [&](std::int64_t q) {
                T m = init;
                for (std::int64_t j = cc0[static_cast<std::size_t>(q)]; j < cc1[static_cast<std::size_t>(q)]; ++j)
                    m = isMax ? (xr[j] > m ? xr[j] : m) : m + xr[j];
                hr[q] = m;
            };
            for (std::int64_t q = 0; q < qa; ++q) border(q);
            for (std::int64_t q = std::max(qa, qb); q < OW; ++q) border(q);
        }
        // rows
        for (std::int64_t r = 0; r < OH; ++r) {
            const std::int64_t r0 = r * sh, r1 = std::min(r0 + kh, rows);
            const std::int64_t i0 = std::max(r0, pt) - pt, i1 = std::max(std::min(r1, H + pt) - pt, i0);
            T* yr = yp + r * OW;
            for (std::int64_t q = 0; q < OW; ++q) yr[q] = init;
            for (std::int64_t i = i0; i < i1; ++i) {
                const T* hr = hbuf.data() + i * OW;
                if (isMax)
                    for (std::int64_t q = 0; q < OW; ++q) yr[q] = hr[q] > yr[q] ? hr[q] : yr[q];
                else
                    for (std::int64_t q = 0; q < OW; ++q) yr[q] += hr[q];
            }
            if (mode == PoolMode::AvgIncPad) {
                for (std::int64_t q = 0; q < OW; ++q) {
                    const std::int64_t cnt = (r1 - r0) * cpad[static_cast<std::size_t>(q)];
                    yr[q] = cnt > 0 ? yr[q] / static_cast<T>(cnt) : T(0);
                }
            } else if (mode == PoolMode::AvgExcPad) {
                for (std::int64_t q = 0; q < OW; ++q) {
                    const std::int64_t cnt =
                        (i1 - i0) * (cc1[static_cast<std::size_t>(q)] - cc0[static_cast<std::size_t>(q)]);
                    yr[q] = cnt > 0 ? yr[q] / static_cast<T>(cnt) : T(0);
                }
            }
        }
    }
}
