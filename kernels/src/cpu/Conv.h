#pragma once
// Internal: 2-D convolution (cross-correlation, as ONNX Conv and Theano's AbstractConv2d with
// the flip folded in at import) and its transpose, shared by AbstractConv2d / GpuCorrMM and the
// ONNX fallbacks.
#include "CpuCommon.h"

namespace passlens::cpu {

struct Conv2dParams {
    std::int64_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
    std::int64_t strideH = 1, strideW = 1;
    std::int64_t dilH = 1, dilW = 1;
    std::int64_t groups = 1;
    /// 3x3 depthwise convolutions may use the AVX-512 loops (ExecOptions::depthwiseAvx512).
    bool depthwiseAvx512 = true;
};

/// Padding, strides, dilation and groups of an AbstractConv2d / GpuCorrMM node for kernel w
/// (border_mode valid, full, half, [ph,pw] or [[pt,pb],[pl,pr]]).
Conv2dParams abstractConvParams(const KernelCall& c, const Tensor& w);

enum class PoolMode : std::uint8_t { Max, Sum, AvgIncPad, AvgExcPad };

/// A Pool / GpuPool node's geometry for input x (1-d or 2-d windows over the trailing axes;
/// 1-d pools have a height of 1). Output dims follow Theano's rule for ignore_border.
struct PoolParams {
    std::int64_t k[2] = {1, 1}, s[2] = {1, 1}, p0[2] = {0, 0}, p1[2] = {0, 0}, n[2] = {1, 1}, o[2] = {1, 1};
    std::int64_t planes = 0;
    Shape outShape;
    PoolMode mode = PoolMode::Max;
};
PoolParams poolParams(const KernelCall& c, const Tensor& x);

/// Output height and width of conv(x[N,C,H,W], w[F,C/groups,KH,KW]) with p. Fails naming the node
/// on groups that do not divide C and F, strides or dilations below 1, or a dilated kernel larger
/// than the padded input (used by the CPU and CUDA backends alike).
std::pair<std::int64_t, std::int64_t> conv2dOutputSize(const KernelCall& c, const Tensor& x, const Tensor& w,
                                                       const Conv2dParams& p);

/// y[N,F,OH,OW] = conv(x[N,C,H,W], w[F,C/groups,KH,KW]) (+ bias[F] when given). Float32 or
/// float64. Fails naming the node on inconsistent shapes.
Tensor conv2d(const KernelCall& c, const Tensor& x, const Tensor& w, const Conv2dParams& p, const Tensor* bias);

/// Tile size m of the Winograd F(m x m, 3 x 3) path for a 3x3 stride-1 undilated ungrouped
/// float32 convolution with C input and F output channels and an OH x OW output: 0 (im2col +
/// SGEMM), 2 or 4. `choice` (ExecOptions::winograd) other than Auto forces it (tests, measurements).
int winogradTileSize(std::int64_t C, std::int64_t F, std::int64_t OH, std::int64_t OW,
                     WinogradChoice choice = WinogradChoice::Auto);

/// Transposed convolution: x[N,C,H,W], w[C,F/groups,KH,KW] -> y[N,F,OH,OW] with
/// OH = strideH*(H-1) + outPadH + dilH*(KH-1) + 1 - padTop - padBottom.
Tensor convTranspose2d(const KernelCall& c, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                       std::int64_t outPadH, std::int64_t outPadW, const Tensor* bias);

} // namespace passlens::cpu
