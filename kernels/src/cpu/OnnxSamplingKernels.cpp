// CPU kernels of the ONNX resampling and detection (Resize, GridSample, RoiAlign, NonMaxSuppression).
#include "OnnxCommon.h"

#include <array>
#include <cmath>
#include <cstring>

namespace passlens::cpu {

namespace {

using namespace onnx;

// ---------------------------------------------------------------- Resize
struct AxisMap {
    std::vector<std::int64_t> i0, i1; // source indices
    std::vector<float> w;             // weight of i1 (linear)
    std::vector<std::array<std::int64_t, 4>> ci;
    std::vector<std::array<float, 4>> cw; // cubic
};

void onnxResize(KernelCall& c) {
    const Tensor& x = c.in(0);
    const int nd = x.ndim();
    const Tensor *roiT = nullptr, *scalesT = nullptr, *sizesT = nullptr;
    const json& at = c.op().attrs();
    const bool twoInputs = !at.contains("inputs_present") && c.nin() == 2;
    if (twoInputs) {
        scalesT = &c.in(1); // opset 10: X, scales
    } else {
        roiT = onnxIn(c, 1);
        scalesT = onnxIn(c, 2);
        sizesT = onnxIn(c, 3);
    }
    if (scalesT && scalesT->numel() == 0) scalesT = nullptr;
    if (sizesT && sizesT->numel() == 0) sizesT = nullptr;
    std::vector<double> scales(static_cast<std::size_t>(nd), 1.0);
    Shape out = x.shape();
    if (sizesT) {
        if (sizesT->numel() != nd)
            c.fail("sizes has " + std::to_string(sizesT->numel()) + " entries for " + x.typeStr());
        for (int a = 0; a < nd; ++a) {
            out[static_cast<std::size_t>(a)] = sizesT->intAt(a);
            scales[static_cast<std::size_t>(a)] =
                x.dim(a) ? static_cast<double>(out[static_cast<std::size_t>(a)]) / static_cast<double>(x.dim(a)) : 1.0;
        }
    } else if (scalesT) {
        if (scalesT->numel() != nd)
            c.fail("scales has " + std::to_string(scalesT->numel()) + " entries for " + x.typeStr());
        for (int a = 0; a < nd; ++a) {
            const double s = scalesT->at(a);
            if (s <= 0) c.fail("scales must be positive");
            scales[static_cast<std::size_t>(a)] = s;
            out[static_cast<std::size_t>(a)] = static_cast<std::int64_t>(std::floor(static_cast<double>(x.dim(a)) * s));
        }
    } else {
        c.fail("needs scales or sizes");
    }
    std::vector<double> roi;
    if (roiT) roi = roiT->toDoubles();
    const std::string mode = at.contains("mode") ? c.op().str("mode") : "nearest";
    const std::string ctm =
        at.contains("coordinate_transformation_mode") ? c.op().str("coordinate_transformation_mode") : "half_pixel";
    const std::string nearestMode = at.contains("nearest_mode") ? c.op().str("nearest_mode") : "round_prefer_floor";
    const double cubicA = c.op().floatAttr("cubic_coeff_a", -0.75);
    const bool excludeOutside = c.op().intAttr("exclude_outside", 0) != 0;
    const double extrapolation = c.op().floatAttr("extrapolation_value", 0.0);
    if (mode != "nearest" && mode != "linear" && mode != "cubic") c.fail("unsupported mode '" + mode + "'");
    if (x.dtype() != DType::Float32 && mode != "nearest")
        c.fail("linear and cubic resize need float32, got " + x.typeStr());

    auto origCoord = [&](int a, std::int64_t xo, bool& outside) {
        const double s = scales[static_cast<std::size_t>(a)];
        const double in = static_cast<double>(x.dim(a)), outLen = static_cast<double>(out[static_cast<std::size_t>(a)]);
        const double xr = static_cast<double>(xo);
        outside = false;
        if (ctm == "half_pixel") return (xr + 0.5) / s - 0.5;
        if (ctm == "pytorch_half_pixel") return outLen > 1 ? (xr + 0.5) / s - 0.5 : 0.0;
        if (ctm == "align_corners") {
            // with scales, the resized length is in * scale, not rounded (onnx/backend/test/case/
            // node/resize.py, interpolate_1d_with_x: output_width = scale_factor * input_width)
            const double len = sizesT ? outLen : in * s;
            return len == 1 ? 0.0 : xr * (in - 1) / (len - 1);
        }
        if (ctm == "asymmetric") return xr / s;
        // tf_half_pixel_for_nn: opset 11's name of the mode (onnx 1.5's test data uses it)
        if (ctm == "tf_half_pixel_for_nearest" || ctm == "tf_half_pixel_for_nn") return (xr + 0.5) / s;
        if (ctm == "tf_crop_and_resize") {
            const double st = roi.size() == static_cast<std::size_t>(2 * nd) ? roi[static_cast<std::size_t>(a)] : 0.0;
            const double en =
                roi.size() == static_cast<std::size_t>(2 * nd) ? roi[static_cast<std::size_t>(a + nd)] : 1.0;
            const double v =
                outLen > 1 ? st * (in - 1) + xr * (en - st) * (in - 1) / (outLen - 1) : 0.5 * (st + en) * (in - 1);
            outside = v < 0 || v > in - 1;
            return v;
        }
        c.fail("unsupported coordinate_transformation_mode '" + ctm + "'");
    };

    Tensor cur = x;
    for (int a = 0; a < nd; ++a) {
        if (out[static_cast<std::size_t>(a)] == cur.dim(a) && scales[static_cast<std::size_t>(a)] == 1.0 &&
            ctm != "tf_crop_and_resize")
            continue;
        const std::int64_t n = cur.dim(a), m = out[static_cast<std::size_t>(a)];
        Shape s = cur.shape();
        s[static_cast<std::size_t>(a)] = m;
        Tensor nxt = c.allocate(x.dtype(), s);
        const std::int64_t outer = shapeNumel(Shape(cur.shape().begin(), cur.shape().begin() + a));
        const std::int64_t inner = shapeNumel(Shape(cur.shape().begin() + a + 1, cur.shape().end()));
        const std::size_t es = dtypeSize(x.dtype());
        if (n == 0 || m == 0) {
            if (nxt.nbytes()) std::memset(nxt.rawData(), 0, nxt.nbytes());
            cur = nxt;
            continue;
        }
        if (mode == "nearest") {
            std::vector<std::int64_t> src(static_cast<std::size_t>(m));
            std::vector<bool> outsideV(static_cast<std::size_t>(m));
            for (std::int64_t o = 0; o < m; ++o) {
                bool outside;
                const double v = origCoord(a, o, outside);
                std::int64_t i;
                if (nearestMode == "floor")
                    i = static_cast<std::int64_t>(std::floor(v));
                else if (nearestMode == "ceil")
                    i = static_cast<std::int64_t>(std::ceil(v));
                else if (nearestMode == "round_prefer_ceil")
                    i = static_cast<std::int64_t>(std::floor(v + 0.5));
                else
                    i = (v - std::floor(v) == 0.5) ? static_cast<std::int64_t>(std::floor(v))
                                                   : static_cast<std::int64_t>(std::round(v));
                src[static_cast<std::size_t>(o)] = std::clamp<std::int64_t>(i, 0, n - 1);
                outsideV[static_cast<std::size_t>(o)] = outside;
            }
            std::vector<char> fill(es);
            convertElements(&extrapolation, DType::Float64, fill.data(), x.dtype(), 1);
            const char* cp = static_cast<const char*>(cur.rawData());
            char* np = static_cast<char*>(nxt.rawData());
            const std::size_t row = static_cast<std::size_t>(inner) * es;
            for (std::int64_t ou = 0; ou < outer; ++ou)
                for (std::int64_t o = 0; o < m; ++o) {
                    char* d = np + static_cast<std::size_t>(ou * m + o) * row;
                    if (outsideV[static_cast<std::size_t>(o)]) {
                        for (std::int64_t i = 0; i < inner; ++i)
                            std::memcpy(d + static_cast<std::size_t>(i) * es, fill.data(), es);
                    } else {
                        std::memcpy(d, cp + static_cast<std::size_t>(ou * n + src[static_cast<std::size_t>(o)]) * row,
                                    row);
                    }
                }
        } else {
            // linear or cubic: per output index, source taps and weights
            const int taps = mode == "linear" ? 2 : 4;
            std::vector<std::array<std::int64_t, 4>> idx(static_cast<std::size_t>(m));
            std::vector<std::array<float, 4>> wt(static_cast<std::size_t>(m));
            std::vector<bool> outsideV(static_cast<std::size_t>(m));
            for (std::int64_t o = 0; o < m; ++o) {
                bool outside;
                double v = origCoord(a, o, outside);
                outsideV[static_cast<std::size_t>(o)] = outside;
                auto& I = idx[static_cast<std::size_t>(o)];
                auto& W = wt[static_cast<std::size_t>(o)];
                if (taps == 2) {
                    v = std::clamp(v, 0.0, static_cast<double>(n - 1));
                    const std::int64_t i0 = static_cast<std::int64_t>(std::floor(v));
                    const std::int64_t i1 = std::min<std::int64_t>(i0 + 1, n - 1);
                    const double f = v - static_cast<double>(i0);
                    I = {i0, i1, 0, 0};
                    W = {static_cast<float>(1 - f), static_cast<float>(f), 0, 0};
                } else {
                    const std::int64_t i0 = static_cast<std::int64_t>(std::floor(v));
                    const double f = v - static_cast<double>(i0);
                    const double A = cubicA;
                    auto k = [&](double t) {
                        t = std::fabs(t);
                        if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
                        if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
                        return 0.0;
                    };
                    double ws[4] = {k(1 + f), k(f), k(1 - f), k(2 - f)};
                    double sum = 0;
                    for (int t = 0; t < 4; ++t) {
                        const std::int64_t ii = i0 - 1 + t;
                        if (excludeOutside && (ii < 0 || ii >= n)) ws[t] = 0;
                        sum += ws[t];
                        I[static_cast<std::size_t>(t)] = std::clamp<std::int64_t>(ii, 0, n - 1);
                    }
                    for (int t = 0; t < 4; ++t)
                        W[static_cast<std::size_t>(t)] =
                            static_cast<float>(excludeOutside && sum != 0 ? ws[t] / sum : ws[t]);
                }
            }
            const float* cp = cur.data<float>();
            float* np = nxt.data<float>();
            for (std::int64_t ou = 0; ou < outer; ++ou)
                for (std::int64_t o = 0; o < m; ++o) {
                    float* d = np + (ou * m + o) * inner;
                    if (outsideV[static_cast<std::size_t>(o)]) {
                        for (std::int64_t i = 0; i < inner; ++i) d[i] = static_cast<float>(extrapolation);
                        continue;
                    }
                    const auto& I = idx[static_cast<std::size_t>(o)];
                    const auto& W = wt[static_cast<std::size_t>(o)];
                    for (std::int64_t i = 0; i < inner; ++i) {
                        float acc = 0;
                        for (int t = 0; t < taps; ++t)
                            acc += W[static_cast<std::size_t>(t)] *
                                   cp[(ou * n + I[static_cast<std::size_t>(t)]) * inner + i];
                        d[i] = acc;
                    }
                }
        }
        cur = nxt;
    }
    if (cur.storage() == x.storage()) cur = x.clone(c.ctx.pool.get());
    c.outputs[0] = std::move(cur);
}

// ---------------------------------------------------------------- detection and sampling

// NonMaxSuppression: per batch and class, boxes by descending score (above score_threshold),
// each kept unless its IoU with a kept box exceeds iou_threshold, at most
// max_output_boxes_per_class; int64 rows [batch, class, box].
void onnxNonMaxSuppression(KernelCall& c) {
    const Tensor& boxes = c.in(0);
    const Tensor& scores = c.in(1);
    if (boxes.ndim() != 3 || boxes.dim(2) != 4 || scores.ndim() != 3 || scores.dim(0) != boxes.dim(0) ||
        scores.dim(2) != boxes.dim(1))
        c.fail("boxes " + boxes.typeStr() + " and scores " + scores.typeStr() + " do not match");
    const std::int64_t maxOut = onnxIn(c, 2) && onnxIn(c, 2)->numel() ? onnxIn(c, 2)->intAt(0) : 0;
    const double iouMax = onnxIn(c, 3) && onnxIn(c, 3)->numel() ? onnxIn(c, 3)->at(0) : 0.0;
    const Tensor* st = onnxIn(c, 4);
    const bool hasScoreMin = st && st->numel();
    const double scoreMin = hasScoreMin ? st->at(0) : 0.0;
    const bool center = c.op().intAttr("center_point_box", 0) != 0;
    const std::vector<double> bv = boxes.toDoubles(), sv = scores.toDoubles();
    const std::int64_t nb = boxes.dim(0), nc = scores.dim(1), n = boxes.dim(1);
    // box i of batch b as y1, x1, y2, x2 with y1 <= y2, x1 <= x2
    auto corners = [&](std::int64_t b, std::int64_t i) {
        const double* p = bv.data() + (b * n + i) * 4;
        std::array<double, 4> r;
        if (center)
            r = {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
        else
            r = {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
        return r;
    };
    auto iou = [](const std::array<double, 4>& a, const std::array<double, 4>& b) {
        const double ih = std::min(a[2], b[2]) - std::max(a[0], b[0]), iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
        if (ih <= 0 || iw <= 0) return 0.0;
        const double inter = ih * iw, uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
        return uni > 0 ? inter / uni : 0.0;
    };
    std::vector<double> rows;
    for (std::int64_t b = 0; b < nb; ++b)
        for (std::int64_t k = 0; k < nc; ++k) {
            const double* s = sv.data() + (b * nc + k) * n;
            std::vector<std::int64_t> order;
            for (std::int64_t i = 0; i < n; ++i)
                if (!hasScoreMin || s[i] > scoreMin) order.push_back(i);
            std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return s[x] > s[y]; });
            std::vector<std::int64_t> kept;
            for (std::int64_t i : order) {
                if (static_cast<std::int64_t>(kept.size()) >= maxOut) break;
                bool ok = true;
                for (std::int64_t j : kept)
                    if (iou(corners(b, i), corners(b, j)) > iouMax) ok = false;
                if (!ok) continue;
                kept.push_back(i);
                rows.insert(rows.end(), {static_cast<double>(b), static_cast<double>(k), static_cast<double>(i)});
            }
        }
    c.outputs[0] = storeDoubles(c, rows, DType::Int64, {static_cast<std::int64_t>(rows.size() / 3), 3});
}

// GridSample (opset 16) of an N x C x H x W input at the normalised (x, y) points of an
// N x Ho x Wo x 2 grid: modes bilinear, nearest, bicubic; padding zeros, border, reflection;
// align_corners. Follows PyTorch's grid_sampler_2d, which the ONNX test data comes from.
void onnxGridSample(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& grid = c.in(1);
    if (x.ndim() != 4 || grid.ndim() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0))
        c.fail("needs N x C x H x W input and N x Ho x Wo x 2 grid, got " + x.typeStr() + " and " + grid.typeStr());
    std::string mode = c.op().str("mode"), padding = c.op().str("padding_mode");
    if (mode.empty()) mode = "bilinear";
    if (padding.empty()) padding = "zeros";
    if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") c.fail("unsupported mode '" + mode + "'");
    if (padding != "zeros" && padding != "border" && padding != "reflection")
        c.fail("unsupported padding_mode '" + padding + "'");
    const bool align = c.op().intAttr("align_corners", 0) != 0;
    const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), Ho = grid.dim(1), Wo = grid.dim(2);
    const std::vector<double> xv = x.toDoubles(), gv = grid.toDoubles();
    auto reflect = [](double v, double twiceLow, double twiceHigh) {
        if (twiceLow == twiceHigh) return 0.0;
        const double lo = twiceLow / 2, span = (twiceHigh - twiceLow) / 2;
        v = std::fabs(v - lo);
        const double extra = std::fmod(v, span);
        const auto flips = static_cast<std::int64_t>(std::floor(v / span));
        return flips % 2 == 0 ? extra + lo : span - extra + lo;
    };
    // padding applied to a coordinate along an axis of `size` pixels
    auto pad = [&](double v, std::int64_t size) {
        if (padding == "border") return std::clamp(v, 0.0, static_cast<double>(size - 1));
        if (padding == "reflection") {
            v = align ? reflect(v, 0, 2.0 * static_cast<double>(size - 1))
                      : reflect(v, -1, 2.0 * static_cast<double>(size) - 1);
            return std::clamp(v, 0.0, static_cast<double>(size - 1));
        }
        return v;
    };
    auto unnormalize = [&](double g, std::int64_t size) {
        return align ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
    };
    std::vector<double> y(static_cast<std::size_t>(N * C * Ho * Wo));
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t ch = 0; ch < C; ++ch) {
            const double* plane = xv.data() + (n * C + ch) * H * W;
            auto at = [&](std::int64_t yy, std::int64_t xx) {
                return yy >= 0 && yy < H && xx >= 0 && xx < W ? plane[yy * W + xx] : 0.0;
            };
            for (std::int64_t i = 0; i < Ho; ++i)
                for (std::int64_t j = 0; j < Wo; ++j) {
                    const double* g = gv.data() + ((n * Ho + i) * Wo + j) * 2;
                    double ix = unnormalize(g[0], W), iy = unnormalize(g[1], H), v = 0;
                    if (mode == "bicubic") {
                        const double fx = std::floor(ix), fy = std::floor(iy), tx = ix - fx, ty = iy - fy, A = -0.75;
                        auto c1 = [A](double t) { return ((A + 2) * t - (A + 3)) * t * t + 1; };
                        auto c2 = [A](double t) { return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A; };
                        const double wx[4] = {c2(tx + 1), c1(tx), c1(1 - tx), c2(2 - tx)},
                                     wy[4] = {c2(ty + 1), c1(ty), c1(1 - ty), c2(2 - ty)};
                        for (int a = 0; a < 4; ++a)
                            for (int b = 0; b < 4; ++b) {
                                const double py = pad(fy - 1 + a, H), px = pad(fx - 1 + b, W);
                                v += wy[a] * wx[b] * at(static_cast<std::int64_t>(py), static_cast<std::int64_t>(px));
                            }
                    } else {
                        ix = pad(ix, W);
                        iy = pad(iy, H);
                        if (mode == "nearest") {
                            v = at(static_cast<std::int64_t>(std::nearbyint(iy)),
                                   static_cast<std::int64_t>(std::nearbyint(ix)));
                        } else {
                            const double fx = std::floor(ix), fy = std::floor(iy), tx = ix - fx, ty = iy - fy;
                            const auto x0 = static_cast<std::int64_t>(fx), y0 = static_cast<std::int64_t>(fy);
                            v = at(y0, x0) * (1 - tx) * (1 - ty) + at(y0, x0 + 1) * tx * (1 - ty) +
                                at(y0 + 1, x0) * (1 - tx) * ty + at(y0 + 1, x0 + 1) * tx * ty;
                        }
                    }
                    y[static_cast<std::size_t>(((n * C + ch) * Ho + i) * Wo + j)] = v;
                }
        }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), {N, C, Ho, Wo});
}

// RoiAlign (opset 16): per region of interest (x1, y1, x2, y2 scaled by spatial_scale, shifted
// by half a pixel in mode half_pixel) an output_height x output_width grid of bins, each the
// average (or max) of bilinear samples (sampling_ratio per bin, or adaptive), as onnxruntime's
// RoiAlign computes it.
void onnxRoiAlign(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& rois = c.in(1);
    const Tensor& batch = c.in(2);
    if (x.ndim() != 4 || rois.ndim() != 2 || rois.dim(1) != 4 || batch.numel() != rois.dim(0))
        c.fail("needs X [N,C,H,W], rois [R,4] and batch_indices [R], got " + x.typeStr() + ", " + rois.typeStr() +
               ", " + batch.typeStr());
    const std::int64_t oh = c.op().intAttr("output_height", 1), ow = c.op().intAttr("output_width", 1),
                       ratio = c.op().intAttr("sampling_ratio", 0);
    const double scale = c.op().floatAttr("spatial_scale", 1.0);
    std::string ctm = c.op().str("coordinate_transformation_mode");
    const bool halfPixel = ctm.empty() || ctm == "half_pixel";
    const bool isMax = c.op().str("mode") == "max";
    const std::int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0);
    const std::vector<double> xv = x.toDoubles(), rv = rois.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(R * C * oh * ow));
    for (std::int64_t r = 0; r < R; ++r) {
        const std::int64_t n = batch.intAt(r);
        if (n < 0 || n >= x.dim(0)) c.fail("batch index " + std::to_string(n) + " out of range");
        const double off = halfPixel ? 0.5 : 0.0;
        const double* b = rv.data() + r * 4;
        const double sw = b[0] * scale - off, sh = b[1] * scale - off;
        double rw = b[2] * scale - off - sw, rh = b[3] * scale - off - sh;
        if (!halfPixel) {
            rw = std::max(rw, 1.0);
            rh = std::max(rh, 1.0);
        }
        const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
        const std::int64_t gh = ratio > 0 ? ratio : static_cast<std::int64_t>(std::ceil(rh / static_cast<double>(oh)));
        const std::int64_t gw = ratio > 0 ? ratio : static_cast<std::int64_t>(std::ceil(rw / static_cast<double>(ow)));
        const double count = static_cast<double>(std::max<std::int64_t>(gh * gw, 1));
        for (std::int64_t ch = 0; ch < C; ++ch) {
            const double* plane = xv.data() + (n * C + ch) * H * W;
            for (std::int64_t ph = 0; ph < oh; ++ph)
                for (std::int64_t pw = 0; pw < ow; ++pw) {
                    double acc = isMax ? -INFINITY : 0.0;
                    bool any = false;
                    for (std::int64_t iy = 0; iy < gh; ++iy)
                        for (std::int64_t ix = 0; ix < gw; ++ix) {
                            double yy = sh + static_cast<double>(ph) * bh +
                                        (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
                            double xx = sw + static_cast<double>(pw) * bw +
                                        (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
                            double v[4] = {0, 0, 0, 0};
                            if (!(yy < -1.0 || yy > static_cast<double>(H) || xx < -1.0 ||
                                  xx > static_cast<double>(W))) {
                                yy = std::max(yy, 0.0);
                                xx = std::max(xx, 0.0);
                                auto y0 = static_cast<std::int64_t>(yy), x0 = static_cast<std::int64_t>(xx);
                                std::int64_t y1 = y0 + 1, x1 = x0 + 1;
                                if (y0 >= H - 1) {
                                    y0 = y1 = H - 1;
                                    yy = static_cast<double>(y0);
                                }
                                if (x0 >= W - 1) {
                                    x0 = x1 = W - 1;
                                    xx = static_cast<double>(x0);
                                }
                                const double ly = yy - static_cast<double>(y0), lx = xx - static_cast<double>(x0),
                                             hy = 1 - ly, hx = 1 - lx;
                                v[0] = hy * hx * plane[y0 * W + x0];
                                v[1] = hy * lx * plane[y0 * W + x1];
                                v[2] = ly * hx * plane[y1 * W + x0];
                                v[3] = ly * lx * plane[y1 * W + x1];
                            }
                            if (isMax)
                                acc = std::max({acc, v[0], v[1], v[2], v[3]});
                            else
                                acc += v[0] + v[1] + v[2] + v[3];
                            any = true;
                        }
                    y[static_cast<std::size_t>(((r * C + ch) * oh + ph) * ow + pw)] =
                        isMax ? (any ? acc : 0.0) : acc / count;
                }
        }
    }
    c.outputs[0] = storeDoubles(c, y, x.dtype(), {R, C, oh, ow});
}

} // namespace

void registerOnnxSamplingKernels(KernelRegistry& r) {
    r.add("OnnxResize", Backend::Cpu, onnxResize);
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"NonMaxSuppression", onnxNonMaxSuppression},
        {"GridSample", onnxGridSample},
        {"RoiAlign", onnxRoiAlign},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
