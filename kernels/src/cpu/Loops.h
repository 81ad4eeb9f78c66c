#pragma once
// Internal: the CPU backend's hot loops (element-wise programs, im2col, depthwise convolution,
// pooling), compiled three times: for baseline x86-64, x86-64-v3 (AVX2 + FMA) and x86-64-v4
// (AVX-512), no FP contraction, so all give the same bits. loops() picks the best one the CPU
// supports once.
#include "Conv.h"
#include "ElemwiseEngine.h"

namespace passlens::cpu {

struct LoopTable {
    const char* name;
    void (*evalFloat)(const ScalarProgram&, const std::vector<Tensor>&, Tensor&);
    void (*evalDouble)(const ScalarProgram&, const std::vector<Tensor>&, Tensor&);
    void (*evalInt)(const ScalarProgram&, const std::vector<Tensor>&, Tensor&);
    void (*im2colFloat)(const float* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t KH,
                        std::int64_t KW, std::int64_t OH, std::int64_t OW, const Conv2dParams& p, float* cols);
    void (*im2colDouble)(const double* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t KH,
                         std::int64_t KW, std::int64_t OH, std::int64_t OW, const Conv2dParams& p, double* cols);
    void (*depthwiseFloat)(const float* x, const float* w, float* y, std::int64_t C, std::int64_t mult, std::int64_t H,
                           std::int64_t W, std::int64_t KH, std::int64_t KW, std::int64_t OH, std::int64_t OW,
                           const Conv2dParams& p);
    void (*depthwiseDouble)(const double* x, const double* w, double* y, std::int64_t C, std::int64_t mult,
                            std::int64_t H, std::int64_t W, std::int64_t KH, std::int64_t KW, std::int64_t OH,
                            std::int64_t OW, const Conv2dParams& p);
    void (*poolFloat)(const float* x, float* y, std::int64_t planes, std::int64_t H, std::int64_t W, std::int64_t OH,
                      std::int64_t OW, std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw,
                      std::int64_t pt, std::int64_t pb, std::int64_t pl, std::int64_t pr, PoolMode mode,
                      bool separableOnly);
    void (*poolDouble)(const double* x, double* y, std::int64_t planes, std::int64_t H, std::int64_t W, std::int64_t OH,
                       std::int64_t OW, std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw,
                       std::int64_t pt, std::int64_t pb, std::int64_t pl, std::int64_t pr, PoolMode mode,
                       bool separableOnly);
    /// Winograd F(m x m, 3 x 3), m = 2 or 4, a = m + 2: input tiles of x[C,H,W] (zero padding
    /// padTop / padLeft, TH x TW tiles of m x m outputs) -> V[a*a][C][TH*TW].
    void (*winogradInput)(const float* x, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t padTop,
                          std::int64_t padLeft, std::int64_t TH, std::int64_t TW, int m, float* V);
    /// M[a*a][F][TH*TW] -> y[F,OH,OW] (+ bias[f] when not null).
    void (*winogradOutput)(const float* M, std::int64_t F, std::int64_t TH, std::int64_t TW, std::int64_t OH,
                           std::int64_t OW, int m, const float* bias, float* y);
    /// Epilogue fusion: applies a float-mode program in place to rows c0..c1-1 of y (row c at
    /// y + (c - c0) * ldy, len elements), input e.yInput being the row and every other input the
    /// per-row scalar e.values[i][c * e.channelStride[i]]. Same bits as evalFloat on those rows.
    void (*epilogueRows)(const ScalarProgram& prog, const RowEpilogue& e, float* y, std::int64_t c0, std::int64_t c1,
                         std::int64_t ldy, std::int64_t len);
};

/// The table for this CPU ("x86-64-v4", "x86-64-v3" or "baseline"); `choice`
/// (ExecOptions::cpuLoops) other than Auto forces that build (when the CPU has it).
const LoopTable& loops(CpuLoops choice = CpuLoops::Auto);

namespace baseline {
const LoopTable& table();
}
namespace v3 {
const LoopTable& table();
}
namespace v4 {
const LoopTable& table();
}

} // namespace passlens::cpu
