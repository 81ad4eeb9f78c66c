// CPU kernels of the ONNX convolution and pooling (Conv, ConvTranspose, N-d forms, MaxPool / AveragePool,
// ConvInteger, QLinearConv, MaxUnpool).
#include "Conv.h"
#include "OnnxCommon.h"

#include <cmath>
#include <cstring>

namespace passlens::cpu {

namespace {

using namespace onnx;

// ---------------------------------------------------------------- convolutions
Conv2dParams convParams(const KernelCall& c, int spatial, const Tensor& x, const Tensor& w, bool transpose,
                        std::int64_t& outPadH, std::int64_t& outPadW) {
    Conv2dParams p;
    auto get = [&](const char* name, std::int64_t dflt) {
        auto v = attrInts(c, name);
        if (v.empty()) v.assign(static_cast<std::size_t>(spatial), dflt);
        if (static_cast<int>(v.size()) != spatial)
            c.fail(std::string(name) + " has " + std::to_string(v.size()) + " entries for a " +
                   std::to_string(spatial) + "-d convolution");
        if (spatial == 1) v.insert(v.begin(), dflt);
        return v;
    };
    auto strides = get("strides", 1), dil = get("dilations", 1), outPad = get("output_padding", 0);
    std::vector<std::int64_t> pads = attrInts(c, "pads");
    if (pads.empty()) pads.assign(static_cast<std::size_t>(2 * spatial), 0);
    if (static_cast<int>(pads.size()) != 2 * spatial) c.fail("pads has " + std::to_string(pads.size()) + " entries");
    if (spatial == 1) pads = {0, pads[0], 0, pads[1]};
    p.strideH = strides[0];
    p.strideW = strides[1];
    p.dilH = dil[0];
    p.dilW = dil[1];
    p.padTop = pads[0];
    p.padLeft = pads[1];
    p.padBottom = pads[2];
    p.padRight = pads[3];
    p.groups = c.op().intAttr("group", 1);
    outPadH = outPad[0];
    outPadW = outPad[1];
    const std::string autoPad = c.op().has("auto_pad") ? c.op().str("auto_pad") : "NOTSET";
    if (autoPad == "VALID") {
        p.padTop = p.padLeft = p.padBottom = p.padRight = 0;
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        const std::int64_t n[2] = {x.dim(2), x.dim(3)}, k[2] = {w.dim(2), w.dim(3)}, s[2] = {p.strideH, p.strideW},
                           d[2] = {p.dilH, p.dilW};
        std::int64_t lo[2], hi[2];
        for (int a = 0; a < 2; ++a) {
            std::int64_t total;
            if (!transpose) {
                const std::int64_t out = (n[a] + s[a] - 1) / s[a];
                total = std::max<std::int64_t>(0, (out - 1) * s[a] + d[a] * (k[a] - 1) + 1 - n[a]);
            } else {
                const std::int64_t out = n[a] * s[a];
                total = std::max<std::int64_t>(0, s[a] * (n[a] - 1) + (a ? outPadW : outPadH) + d[a] * (k[a] - 1) + 1 -
                                                      out);
            }
            const std::int64_t small = total / 2, big = total - small;
            lo[a] = autoPad == "SAME_UPPER" ? small : big;
            hi[a] = autoPad == "SAME_UPPER" ? big : small;
        }
        p.padTop = lo[0];
        p.padLeft = lo[1];
        p.padBottom = hi[0];
        p.padRight = hi[1];
    }
    return p;
}

void onnxConvNd(KernelCall& c);
void onnxConvTransposeNd(KernelCall& c);

void onnxConv(KernelCall& c) {
    Tensor x = c.in(0), w = needIn(c, 1);
    const Tensor* b = onnxIn(c, 2);
    const int spatial = x.ndim() - 2;
    if (spatial > 2) return onnxConvNd(c);
    if (spatial != 1 && spatial != 2) c.fail("only 1-d, 2-d and N-d convolutions are supported, got " + x.typeStr());
    if (spatial == 1) {
        x = x.reshaped({x.dim(0), x.dim(1), 1, x.dim(2)});
        w = w.reshaped({w.dim(0), w.dim(1), 1, w.dim(2)});
    }
    std::int64_t oph, opw;
    const Conv2dParams p = convParams(c, spatial, x, w, false, oph, opw);
    Tensor y = conv2d(c, x, w, p, b);
    if (spatial == 1) y = y.reshaped({y.dim(0), y.dim(1), y.dim(3)});
    c.outputs[0] = std::move(y);
}

void onnxConvTranspose(KernelCall& c) {
    Tensor x = c.in(0), w = needIn(c, 1);
    const Tensor* b = onnxIn(c, 2);
    const int spatial = x.ndim() - 2;
    if (spatial > 2) return onnxConvTransposeNd(c);
    if (spatial != 1 && spatial != 2)
        c.fail("only 1-d, 2-d and N-d transposed convolutions are supported, got " + x.typeStr());
    if (spatial == 1) {
        x = x.reshaped({x.dim(0), x.dim(1), 1, x.dim(2)});
        w = w.reshaped({w.dim(0), w.dim(1), 1, w.dim(2)});
    }
    std::int64_t oph, opw;
    Conv2dParams p = convParams(c, spatial, x, w, true, oph, opw);
    auto outShape = attrInts(c, "output_shape");
    if (!outShape.empty()) {
        if (spatial == 1) outShape.insert(outShape.begin(), 1);
        const std::int64_t sz = static_cast<std::int64_t>(outShape.size());
        const std::int64_t oh = outShape[static_cast<std::size_t>(sz - 2)],
                           ow = outShape[static_cast<std::size_t>(sz - 1)];
        const std::int64_t th = p.strideH * (x.dim(2) - 1) + oph + p.dilH * (w.dim(2) - 1) + 1 - oh;
        const std::int64_t tw = p.strideW * (x.dim(3) - 1) + opw + p.dilW * (w.dim(3) - 1) + 1 - ow;
        const bool lower = c.op().str("auto_pad") == "SAME_LOWER";
        p.padTop = lower ? th - th / 2 : th / 2;
        p.padBottom = th - p.padTop;
        p.padLeft = lower ? tw - tw / 2 : tw / 2;
        p.padRight = tw - p.padLeft;
    }
    Tensor y = convTranspose2d(c, x, w, p, oph, opw, b);
    if (spatial == 1) y = y.reshaped({y.dim(0), y.dim(1), y.dim(3)});
    c.outputs[0] = std::move(y);
}

// ---------------------------------------------------------------- pooling

// Geometry of an N-d pooling or convolution (ONNX MaxPool / AveragePool / Conv: auto_pad, pads,
// strides, dilations, ceil_mode), per spatial axis, for the kernel extents `kernel`.
struct PoolGeometry {
    std::vector<std::int64_t> in, kernel, stride, dilation, padBegin, padEnd, out;
};

PoolGeometry poolGeometry(const KernelCall& c, const Tensor& x, std::vector<std::int64_t> kernel) {
    const int sp = x.ndim() - 2;
    if (sp < 1) c.fail("needs an N x C x spatial input, got " + x.typeStr());
    PoolGeometry g;
    g.kernel = std::move(kernel);
    g.stride = attrInts(c, "strides", std::vector<std::int64_t>(static_cast<std::size_t>(sp), 1));
    g.dilation = attrInts(c, "dilations", std::vector<std::int64_t>(static_cast<std::size_t>(sp), 1));
    std::vector<std::int64_t> pads =
        attrInts(c, "pads", std::vector<std::int64_t>(2 * static_cast<std::size_t>(sp), 0));
    if (static_cast<int>(g.kernel.size()) != sp || static_cast<int>(g.stride.size()) != sp ||
        static_cast<int>(g.dilation.size()) != sp || static_cast<int>(pads.size()) != 2 * sp)
        c.fail("kernel_shape, strides, dilations or pads do not match " + std::to_string(sp) + " spatial axes");
    std::string autoPad = c.op().str("auto_pad");
    if (autoPad.empty()) autoPad = "NOTSET";
    const bool ceilMode = c.op().intAttr("ceil_mode", 0) != 0;
    for (int a = 0; a < sp; ++a) {
        const auto i = static_cast<std::size_t>(a);
        const std::int64_t n = x.dim(a + 2), s = g.stride[i], ext = (g.kernel[i] - 1) * g.dilation[i] + 1;
        if (s <= 0 || g.kernel[i] <= 0 || g.dilation[i] <= 0)
            c.fail("kernel_shape, strides and dilations must be positive");
        std::int64_t pb = pads[i], pe = pads[i + static_cast<std::size_t>(sp)], o;
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            o = (n + s - 1) / s;
            const std::int64_t total = std::max<std::int64_t>((o - 1) * s + ext - n, 0);
            pb = autoPad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
            pe = total - pb;
        } else if (autoPad == "VALID") {
            pb = pe = 0;
            o = std::max<std::int64_t>((n - ext) / s + 1, 0);
        } else {
            const std::int64_t span = n + pb + pe - ext;
            o = (ceilMode ? (span + s - 1) / s : span / s) + 1;
            if (ceilMode && (o - 1) * s >= n + pb)
                --o; // the last window must start inside the input or its left padding
            o = std::max<std::int64_t>(o, 0);
        }
        g.in.push_back(n);
        g.padBegin.push_back(pb);
        g.padEnd.push_back(pe);
        g.out.push_back(o);
    }
    return g;
}

// MaxPool (with the optional Indices output: flat input indices, row-major or, with
// storage_order 1, column-major over the spatial axes) and AveragePool (count_include_pad).
void onnxPool(KernelCall& c, bool isMax) {
    const Tensor& x = c.in(0);
    const PoolGeometry g = poolGeometry(c, x, attrInts(c, "kernel_shape"));
    const std::size_t sp = g.kernel.size();
    const bool includePad = c.op().intAttr("count_include_pad", 0) != 0,
               colMajor = c.op().intAttr("storage_order", 0) != 0;
    const std::int64_t planes = x.dim(0) * x.dim(1), inPlane = shapeNumel(g.in), outPlane = shapeNumel(g.out);
    const std::vector<double> xv = x.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(planes * outPlane));
    std::vector<double> idxOut(y.size());
    const Shape kernelShape(g.kernel.begin(), g.kernel.end()), outShape(g.out.begin(), g.out.end());
    const std::int64_t taps = shapeNumel(kernelShape);
    std::vector<std::int64_t> o(sp, 0), k(sp, 0);
    for (std::int64_t oe = 0; oe < outPlane; ++oe, nextIndex(o, outShape)) {
        for (std::int64_t p = 0; p < planes; ++p) {
            double best = -INFINITY, sum = 0;
            std::int64_t bestAt = -1, count = 0;
            std::fill(k.begin(), k.end(), 0);
            for (std::int64_t t = 0; t < taps; ++t, nextIndex(k, kernelShape)) {
                std::int64_t off = 0, colOff = 0, colStride = 1;
                bool inside = true, inPadded = true;
                for (std::size_t a = 0; a < sp; ++a) {
                    const std::int64_t pos = o[a] * g.stride[a] - g.padBegin[a] + k[a] * g.dilation[a];
                    if (pos < 0 || pos >= g.in[a]) inside = false;
                    if (pos >= g.in[a] + g.padEnd[a]) inPadded = false;
                    off = off * g.in[a] + pos;
                    colOff += pos * colStride;
                    colStride *= g.in[a];
                }
                if (includePad && inPadded) ++count;
                if (!inside) continue;
                if (!includePad) ++count;
                const double v = xv[static_cast<std::size_t>(p * inPlane + off)];
                sum += v;
                if (v > best || bestAt < 0) {
                    best = v;
                    bestAt = p * inPlane + (colMajor ? colOff : off);
                }
            }
            const auto e = static_cast<std::size_t>(p * outPlane + oe);
            y[e] = isMax ? best : (count ? sum / static_cast<double>(count) : 0.0);
            idxOut[e] = static_cast<double>(bestAt);
        }
    }
    Shape out = {x.dim(0), x.dim(1)};
    out.insert(out.end(), g.out.begin(), g.out.end());
    c.outputs[0] = storeDoubles(c, y, x.dtype(), out);
    if (isMax && c.outputs.size() > 1) c.outputs[1] = storeDoubles(c, idxOut, DType::Int64, out);
}

// Direct N-d convolution of x (N x C x spatial) with w (M x C/group x kernel) as doubles, with
// groups, pads or auto_pad, strides and dilations (attributes of the node); `bias` per output
// channel or empty. Returns y and sets `outShape`.
std::vector<double> convNd(const KernelCall& c, const std::vector<double>& xv, const Tensor& x,
                           const std::vector<double>& wv, const Tensor& w, const std::vector<double>& bias,
                           Shape& outShape) {
    const std::int64_t group = c.op().intAttr("group", 1);
    if (w.ndim() != x.ndim() || group <= 0 || x.dim(1) % group || w.dim(1) * group != x.dim(1) || w.dim(0) % group)
        c.fail("weights " + w.typeStr() + " and group " + std::to_string(group) + " do not match input " + x.typeStr());
    const PoolGeometry g = poolGeometry(
        c, x, attrInts(c, "kernel_shape", std::vector<std::int64_t>(w.shape().begin() + 2, w.shape().end())));
    const std::size_t sp = g.kernel.size();
    const std::int64_t N = x.dim(0), M = w.dim(0), Cg = w.dim(1), Mg = M / group, inPlane = shapeNumel(g.in),
                       outPlane = shapeNumel(g.out);
    const Shape kernelShape(g.kernel.begin(), g.kernel.end()), spatialOut(g.out.begin(), g.out.end());
    const std::int64_t taps = shapeNumel(kernelShape);
    std::vector<double> y(static_cast<std::size_t>(N * M * outPlane));
    std::vector<std::int64_t> o(sp, 0), k(sp, 0), tapAt(static_cast<std::size_t>(taps));
    for (std::int64_t oe = 0; oe < outPlane; ++oe, nextIndex(o, spatialOut)) {
        // input offset of every tap of this output position (-1: padding)
        std::fill(k.begin(), k.end(), 0);
        for (std::int64_t t = 0; t < taps; ++t, nextIndex(k, kernelShape)) {
            std::int64_t off = 0;
            for (std::size_t a = 0; a < sp && off >= 0; ++a) {
                const std::int64_t pos = o[a] * g.stride[a] - g.padBegin[a] + k[a] * g.dilation[a];
                off = pos < 0 || pos >= g.in[a] ? -1 : off * g.in[a] + pos;
            }
            tapAt[static_cast<std::size_t>(t)] = off;
        }
        for (std::int64_t n = 0; n < N; ++n)
            for (std::int64_t m = 0; m < M; ++m) {
                const std::int64_t firstC = m / Mg * Cg;
                double s = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(m)];
                for (std::int64_t ci = 0; ci < Cg; ++ci) {
                    const double* xp = xv.data() + (n * x.dim(1) + firstC + ci) * inPlane;
                    const double* wp = wv.data() + (m * Cg + ci) * taps;
                    for (std::int64_t t = 0; t < taps; ++t)
                        if (tapAt[static_cast<std::size_t>(t)] >= 0)
                            s += xp[tapAt[static_cast<std::size_t>(t)]] * wp[t];
                }
                y[static_cast<std::size_t>((n * M + m) * outPlane + oe)] = s;
            }
    }
    outShape = {N, M};
    outShape.insert(outShape.end(), g.out.begin(), g.out.end());
    return y;
}

// Conv with 3 or more spatial axes (1-d and 2-d ones run on conv2d), accumulated in double.
void onnxConvNd(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 1);
    const Tensor* bias = onnxIn(c, 2);
    Shape out;
    const std::vector<double> y =
        convNd(c, x.toDoubles(), x, w.toDoubles(), w, bias ? bias->toDoubles() : std::vector<double>(), out);
    c.outputs[0] = storeDoubles(c, y, x.dtype(), out);
}

// ConvTranspose with 3 or more spatial axes (1-d and 2-d ones run on conv2d): each input
// element scattered through the kernel, with groups, strides, dilations, pads or auto_pad,
// output_padding and output_shape; accumulated in double.
void onnxConvTransposeNd(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 1);
    const Tensor* bias = onnxIn(c, 2);
    const std::int64_t group = c.op().intAttr("group", 1);
    const int sp = x.ndim() - 2;
    if (w.ndim() != x.ndim() || group <= 0 || x.dim(1) % group || w.dim(0) != x.dim(1))
        c.fail("weights " + w.typeStr() + " and group " + std::to_string(group) + " do not match input " + x.typeStr());
    const auto n = static_cast<std::size_t>(sp);
    const std::vector<std::int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    const auto stride = attrInts(c, "strides", std::vector<std::int64_t>(n, 1)),
               dil = attrInts(c, "dilations", std::vector<std::int64_t>(n, 1));
    const auto outPad = attrInts(c, "output_padding", std::vector<std::int64_t>(n, 0)),
               outShapeAttr = attrInts(c, "output_shape");
    auto pads = attrInts(c, "pads", std::vector<std::int64_t>(2 * n, 0));
    if (stride.size() != n || dil.size() != n || outPad.size() != n || pads.size() != 2 * n)
        c.fail("strides, dilations, output_padding or pads do not match " + x.typeStr());
    const std::string autoPad = c.op().str("auto_pad");
    std::vector<std::int64_t> in(n), out(n);
    for (std::size_t a = 0; a < n; ++a) {
        in[a] = x.dim(static_cast<int>(a) + 2);
        const std::int64_t full = stride[a] * (in[a] - 1) + outPad[a] + (kernel[a] - 1) * dil[a] + 1;
        const bool given = outShapeAttr.size() >= n;
        const std::int64_t target = given ? outShapeAttr[outShapeAttr.size() - n + a]
                                    : (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") ? in[a] * stride[a]
                                                                                           : -1;
        if (target >= 0) {
            const std::int64_t total = std::max<std::int64_t>(full - target, 0);
            pads[a] = autoPad == "SAME_LOWER" ? total - total / 2 : total / 2;
            pads[a + n] = total - pads[a];
        }
        out[a] = full - pads[a] - pads[a + n];
    }
    const std::int64_t N = x.dim(0), C = x.dim(1), Cg = C / group, Mg = w.dim(1), M = Mg * group;
    const Shape kernelShape(kernel.begin(), kernel.end()), inShape(in.begin(), in.end()),
        outSpatial(out.begin(), out.end());
    const std::int64_t taps = shapeNumel(kernelShape), inPlane = shapeNumel(inShape), outPlane = shapeNumel(outSpatial);
    const std::vector<double> xv = x.toDoubles(), wv = w.toDoubles();
    std::vector<double> y(static_cast<std::size_t>(N * M * outPlane), 0.0);
    const auto os = stridesOf(outSpatial);
    std::vector<std::int64_t> ip(n, 0), k(n, 0);
    for (std::int64_t ie = 0; ie < inPlane; ++ie, nextIndex(ip, inShape)) {
        std::fill(k.begin(), k.end(), 0);
        for (std::int64_t t = 0; t < taps; ++t, nextIndex(k, kernelShape)) {
            std::int64_t off = 0;
            for (std::size_t a = 0; a < n && off >= 0; ++a) {
                const std::int64_t pos = ip[a] * stride[a] - pads[a] + k[a] * dil[a];
                off = pos < 0 || pos >= out[a] ? -1 : off + pos * os[a];
            }
            if (off < 0) continue;
            for (std::int64_t b = 0; b < N; ++b)
                for (std::int64_t ci = 0; ci < C; ++ci) {
                    const double v = xv[static_cast<std::size_t>((b * C + ci) * inPlane + ie)];
                    const std::int64_t g0 = ci / Cg;
                    for (std::int64_t m = 0; m < Mg; ++m)
                        y[static_cast<std::size_t>((b * M + g0 * Mg + m) * outPlane + off)] +=
                            v * wv[static_cast<std::size_t>((ci * Mg + m) * taps + t)];
                }
        }
    }
    if (bias)
        for (std::size_t e = 0; e < y.size(); ++e) y[e] += bias->at(static_cast<std::int64_t>(e) / outPlane % M);
    Shape shape = {N, M};
    shape.insert(shape.end(), out.begin(), out.end());
    c.outputs[0] = storeDoubles(c, y, x.dtype(), shape);
}

// w's values minus its zero point (per tensor, or one per output channel, axis 0), as doubles.
std::vector<double> minusZeroPoint(const Tensor& w, const Tensor* zp) {
    std::vector<double> v = w.toDoubles();
    if (!zp) return v;
    const std::int64_t per = w.ndim() && w.dim(0) ? w.numel() / w.dim(0) : 1;
    for (std::size_t e = 0; e < v.size(); ++e)
        v[e] -= zp->at(zp->numel() == 1 ? 0 : static_cast<std::int64_t>(e) / per);
    return v;
}

// ConvInteger: convolution of (x - x_zero_point) and (w - w_zero_point), int32.
void onnxConvInteger(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 1);
    const Tensor* xz = onnxIn(c, 2);
    std::vector<double> xv = x.toDoubles();
    if (xz)
        for (double& v : xv) v -= xz->at(0);
    Shape out;
    const std::vector<double> y = convNd(c, xv, x, minusZeroPoint(w, onnxIn(c, 3)), w, {}, out);
    c.outputs[0] = storeDoubles(c, y, DType::Int32, out);
}

// QLinearConv: the integer convolution (plus the int32 bias B) scaled by x_scale * w_scale /
// y_scale (w_scale per tensor or per output channel), rounded half to even, plus y_zero_point,
// saturated to its dtype.
void onnxQLinearConv(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& w = needIn(c, 3);
    const Tensor& wScale = needIn(c, 4);
    const Tensor& yzp = needIn(c, 7);
    std::vector<double> xv = x.toDoubles();
    for (double& v : xv) v -= needIn(c, 2).at(0);
    const Tensor* b = onnxIn(c, 8);
    Shape out;
    const std::vector<double> acc =
        convNd(c, xv, x, minusZeroPoint(w, &needIn(c, 5)), w, b ? b->toDoubles() : std::vector<double>(), out);
    const double xs = needIn(c, 1).at(0), ys = needIn(c, 6).at(0);
    const std::int64_t plane = out.size() > 2 ? shapeNumel(Shape(out.begin() + 2, out.end())) : 1, M = out[1];
    std::vector<double> y(acc.size());
    for (std::size_t e = 0; e < y.size(); ++e) {
        const double ws = wScale.at(wScale.numel() == 1 ? 0 : static_cast<std::int64_t>(e) / plane % M);
        y[e] = saturate(std::nearbyint(acc[e] * xs * ws / ys) + yzp.at(0), yzp.dtype());
    }
    c.outputs[0] = storeDoubles(c, y, yzp.dtype(), out);
}

// MaxUnpool: zeros of the unpooled shape (from kernel_shape, strides and pads) with X's values
// at the flat positions given by I; an output_shape input places each position at the same
// coordinates of that (larger) shape.
void onnxMaxUnpool(KernelCall& c) {
    const Tensor& x = c.in(0);
    const Tensor& idx = c.in(1);
    if (idx.shape() != x.shape()) c.fail("indices " + idx.typeStr() + " must have the shape of " + x.typeStr());
    const int sp = x.ndim() - 2;
    const auto ks = attrInts(c, "kernel_shape");
    const auto st = attrInts(c, "strides", std::vector<std::int64_t>(static_cast<std::size_t>(std::max(sp, 0)), 1));
    const auto pads = attrInts(c, "pads", std::vector<std::int64_t>(2 * static_cast<std::size_t>(std::max(sp, 0)), 0));
    if (sp < 1 || static_cast<int>(ks.size()) != sp || static_cast<int>(st.size()) != sp ||
        static_cast<int>(pads.size()) != 2 * sp)
        c.fail("kernel_shape, strides or pads do not match " + x.typeStr());
    Shape dflt = {x.dim(0), x.dim(1)};
    for (int a = 0; a < sp; ++a) {
        const auto i = static_cast<std::size_t>(a);
        dflt.push_back((x.dim(a + 2) - 1) * st[i] + ks[i] - pads[i] - pads[i + static_cast<std::size_t>(sp)]);
    }
    Shape out = dflt;
    if (const Tensor* os = onnxIn(c, 2)) out = intsOf(*os);
    if (out.size() != dflt.size()) c.fail("output_shape " + shapeStr(out) + " does not match " + x.typeStr());
    Tensor y = Tensor::zeros(x.dtype(), out, c.ctx.pool.get());
    const auto ds = stridesOf(dflt), os = stridesOf(out);
    const std::size_t es = dtypeSize(x.dtype());
    for (std::int64_t e = 0; e < x.numel(); ++e) {
        const std::int64_t at = idx.intAt(e);
        if (at < 0 || at >= shapeNumel(dflt))
            c.fail("index " + std::to_string(at) + " out of range for the unpooled shape " + shapeStr(dflt));
        std::int64_t off = 0;
        for (std::size_t a = 0; a < dflt.size(); ++a) {
            const std::int64_t coord = at / ds[a] % dflt[a];
            if (coord >= out[a]) c.fail("index " + std::to_string(at) + " falls outside output_shape " + shapeStr(out));
            off += coord * os[a];
        }
        std::memcpy(static_cast<char*>(y.rawData()) + static_cast<std::size_t>(off) * es,
                    static_cast<const char*>(x.rawData()) + static_cast<std::size_t>(e) * es, es);
    }
    c.outputs[0] = std::move(y);
}

} // namespace

void registerOnnxConvKernels(KernelRegistry& r) {
    r.add("OnnxConv", Backend::Cpu, onnxConv);
    r.add("OnnxConvTranspose", Backend::Cpu, onnxConvTranspose);
    const std::vector<std::pair<std::string, KernelFn>> kernels = {
        {"MaxPool", [](KernelCall& c) { onnxPool(c, true); }},
        {"AveragePool", [](KernelCall& c) { onnxPool(c, false); }},
        {"ConvInteger", onnxConvInteger},
        {"QLinearConv", onnxQLinearConv},
        {"MaxUnpool", onnxMaxUnpool},
    };
    for (const auto& [k, fn] : kernels) r.add("Onnx" + k, Backend::Cpu, fn);
}

} // namespace passlens::cpu
