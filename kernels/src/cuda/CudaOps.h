#pragma once
// Internal: the CUDA backend's device-side operations, called from CudaBackend.cpp. Plain C++17
// with no PassLens or CUDA headers, so the .cu files (compiled as C++17 by nvcc) and the C++20
// side share it. Every CUDA and cuBLAS call is checked; failures throw std::runtime_error with
// the call and the CUDA error ("cudaMalloc failed: out of memory (2)").
//
// Tensors are dense row-major; element types use the numeric value of passlens::DType
// (bool 0, int8 1, int16 2, int32 3, int64 4, uint8 5, uint16 6, uint32 7, uint64 8,
// float16 9, float32 10, float64 11). All work of a device runs on one stream per device.
#include <cstddef>
#include <cstdint>
#include <string>

namespace passlens::cuda {

constexpr int kMaxDims = 8;    ///< rank limit of the generic kernels
constexpr int kMaxInputs = 16; ///< element-wise inputs
constexpr int kMaxNodes = 64;  ///< element-wise expression nodes
constexpr int kMaxArgs = 128;  ///< element-wise expression arguments (all nodes together)

enum Dt : int {
    Bool = 0,
    I8 = 1,
    I16 = 2,
    I32 = 3,
    I64 = 4,
    U8 = 5,
    U16 = 6,
    U32 = 7,
    U64 = 8,
    F16 = 9,
    F32 = 10,
    F64 = 11
};
std::size_t dtSize(int dt);

// ---- runtime
int deviceCount();
std::string deviceName(int device);
/// nullptr when the device is out of memory (the caller names the node and the bytes).
void* deviceAlloc(std::size_t bytes, int device);
/// Never throws (called from destructors): a failure is printed once and kept (freeError()).
void deviceFree(void* p, int device) noexcept;
/// The first failure of deviceFree / pinnedFree ("" if none).
std::string freeError();
/// Page-locked host memory (transfers from and to it are truly asynchronous); nullptr on failure.
void* pinnedAlloc(std::size_t bytes);
void pinnedFree(void* p) noexcept;                                        ///< never throws, as deviceFree
void copyHtoD(void* dst, const void* src, std::size_t bytes, int device); ///< async on the stream
/// Copies pageable host memory to the device through two reused page-locked staging buffers of
/// 4 MiB (chunk by chunk: the host fills one while the device reads the other), so the copy runs
/// at the pinned bandwidth; `src` may be reused when it returns (the last chunk may still be in
/// flight from the staging buffer). False, with nothing copied, when no page-locked memory can be
/// had (the caller copies directly then).
bool copyHtoDStaged(void* dst, const void* src, std::size_t bytes, int device);
void copyDtoH(void* dst, const void* src, std::size_t bytes, int device); ///< async, then waits
void copyDtoD(void* dst, int dstDevice, const void* src, int srcDevice, std::size_t bytes);
void memsetDevice(void* dst, int byte, std::size_t bytes, int device);
void synchronize(int device);

/// The device time of one node's work on the stream: between timerStart and timerStop (on the
/// same thread), each stretch of queued device work (kernels, copies, memsets, cuBLAS calls) is
/// bracketed by a pair of events, and host work in between (hostWork: cudaMalloc on a pool miss,
/// pinned allocations, the first cuBLAS load, waits for the stream, staging copies) is left out,
/// so the time is the node's kernel work only.
struct Timer;
Timer* timerCreate(int device);
void timerDestroy(Timer* t);
void timerStart(Timer* t);
void timerStop(Timer* t);
/// Milliseconds of device work recorded between start and stop (waits for it; 0 when the node
/// queued none). Throws when the events could not be recorded (after a device fault).
float timerElapsedMs(Timer* t);
/// Marks host work: closes the running timer's current event pair, if any (never throws).
void hostWork() noexcept;

// ---- element-wise programs (one kernel per node, any fused composite included)
struct ElemNode {
    int op = 0;       ///< passlens::ScalarOp value (passlens/ir/ScalarArith.h)
    int input = -1;   ///< for inputs
    int argStart = 0; ///< first argument in ElemProgram::args
    int nargs = 0;
    int dtype = F32;       ///< the node's dtype (values are rounded to it)
    double p0 = 0, p1 = 0; ///< clip bounds, leaky_relu / hard_sigmoid parameters (as the CPU's ExprNode)
    /// In int64 mode: computes on uint64 values (the CPU's ExprNode::unsigned64, computesInUInt64).
    int unsigned64 = 0;
};
struct ElemProgram {
    int nNodes = 0;
    int mode = 0; ///< 0 float, 1 double, 2 int64 (as the CPU engine)
    ElemNode nodes[kMaxNodes];
    int args[kMaxArgs];
};
struct ElemOperand {
    const void* data = nullptr;
    int dtype = F32;
    long long strides[kMaxDims] = {}; ///< element strides per output dim (0: broadcast)
};
/// out[shape] (contiguous, dtype outDtype) = program(inputs).
void elementwise(const ElemProgram& prog, const ElemOperand* inputs, int nin, void* out, int outDtype,
                 const long long* shape, int ndim, int device);

// ---- data movement
/// dst (with dstStrides) = src (with srcStrides) over `shape`, elements of elemSize bytes.
void stridedCopy(void* dst, const long long* dstStrides, const void* src, const long long* srcStrides,
                 const long long* shape, int ndim, std::size_t elemSize, int device);
/// dst[strided] += src[strided] for a numeric dtype.
void stridedAdd(void* dst, const long long* dstStrides, const void* src, const long long* srcStrides,
                const long long* shape, int ndim, int dtype, int device);
/// out[k, :] = x[idx[k], :] (idx int64 on the device, already range-checked on the host).
void gatherRows(void* out, const void* x, const long long* idxDevice, long long nIdx, long long rowBytes, int device);
/// Converts n elements between dtypes as the CPU's convertElements (float -> integer truncates,
/// NaN / inf / beyond int64 give 0). float16 is not supported (the caller refuses it).
void convert(void* dst, int dstDtype, const void* src, int srcDtype, long long n, int device);

// ---- reductions, scans and selection
/// Reduces x over the dims flagged in `reduced` (0 add, 1 mul, 2 max, 3 min; pre 0 none, 1 sqr, 2 abs)
/// as the CPU's reduceTensor: accumulates in the output's arithmetic (float32 -> float, float64 ->
/// double, uint64 -> uint64, other integers -> int64), max / min propagate NaN. float16 is not
/// supported (the caller refuses it), nor max / min over an empty axis.
void reduce(const void* x, int dtype, const long long* shape, const int* reduced, int ndim, int op, int pre, void* out,
            int outDtype, int device);
/// GpuMaxAndArgmax: per kept position the max of x over the dims flagged in `reduced` (into mx,
/// x's dtype) and the row-major index of its first occurrence over those dims (into arg, int64),
/// as the CPU's argExtreme: a NaN is the max (the first NaN). Any dtype but float16 (the caller
/// refuses it); throws on an empty reduction with a non-empty result (the caller refuses it first).
void maxAndArgmax(const void* x, int dtype, const long long* shape, const int* reduced, int ndim, void* mx,
                  long long* arg, int device);
void softmax(const void* x, void* y, int dtype, long long outer, long long len, long long inner, bool logSoftmax,
             int device);
void cumulative(const void* x, void* y, int dtype, long long outer, long long len, long long inner, bool mul,
                int device);
/// GpuTopKOp as the CPU's topK (cpu/CpuCommon.h): the |k| <= len largest (k > 0) or smallest
/// (k < 0) elements of each line of x (outer x len x inner, dtype any but float16), sorted from the
/// most extreme, equal values lower index first, NaN above every number, into values (x's dtype)
/// and indices (dtype idxDtype, an integer), both outer x |k| x inner. One block per line, each
/// element's rank counted against the line (stopping at |k|): O(len * min(len, ...)) per line.
void topK(const void* x, int dtype, long long outer, long long len, long long inner, long long k, void* values,
          void* indices, int idxDtype, int device);

// ---- convolution, pooling, normalisation (float32)
struct ConvShape {
    long long N, C, H, W, F, Cg, KH, KW, OH, OW;
    long long padTop, padLeft, strideH, strideW, dilH, dilW, groups;
};
/// y = conv(x, w): im2col + cuBLAS SGEMM per image and group; depthwise convolutions directly.
/// `workspace` must hold Cg*KH*KW*OH*OW floats (workspaceFloats(...)).
void conv2d(const float* x, const float* w, float* y, const ConvShape& s, float* workspace, int device);
long long convWorkspaceFloats(const ConvShape& s);
/// mode: 0 max, 1 sum, 2 average_inc_pad, 3 average_exc_pad.
void pool2d(const float* x, float* y, long long planes, long long H, long long W, long long OH, long long OW,
            long long kh, long long kw, long long sh, long long sw, long long pt, long long pb, long long pl,
            long long pr, int mode, int device);
void batchNorm(const float* x, float* y, const float* scale, const float* bias, const float* mean, const float* var,
               double eps, long long N, long long C, long long inner, int device);

// ---- cuBLAS (row-major)
/// C[M,N] = alpha*op(A)*op(B) + beta*C for float32 (dtype F32) or float64 (F64); `batch` products
/// with strides in elements (0: the operand is shared by every product). batch 0, M 0 or N 0:
/// nothing; K 0: C = beta*C (beta 0: zeros), as the CPU.
void gemm(int dtype, bool transA, bool transB, long long M, long long N, long long K, double alpha, const void* A,
          long long lda, const void* B, long long ldb, double beta, void* C, long long ldc, long long batch,
          long long strideA, long long strideB, long long strideC, int device);

} // namespace passlens::cuda
