// The emulated device's reference cuBLAS (contract in include/cublas_v2.h). Plain loops in the
// element type, accumulating each dot product in order over k.
#include "EmuInternal.h"

#include <cublas_v2.h>

#include <algorithm>
#include <deque>
#include <vector>

struct cublasContext {
    cudaStream_t stream = nullptr;
};

namespace {

using passlens::cuda::emu::Op;

bool validOp(cublasOperation_t t) { return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C; }

template <class T>
cublasStatus_t gemmBatched(const char* name, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                           int k, const T* alpha, const T* A, int lda, long long sA, const T* B, int ldb, long long sB,
                           const T* beta, T* C, int ldc, long long sC, int batch) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!validOp(ta) || !validOp(tb) || m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
    const int rowsA = ta == CUBLAS_OP_N ? m : k, rowsB = tb == CUBLAS_OP_N ? k : n;
    if (lda < std::max(1, rowsA) || ldb < std::max(1, rowsB) || ldc < std::max(1, m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    const T a = *alpha, b = *beta; // host pointer mode: read at the call
    std::lock_guard<std::recursive_mutex> lock(passlens::cuda::emu::runtimeMutex());
    if (passlens::cuda::emu::stickyError() != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
    passlens::cuda::emu::enqueueOp(
        h->stream, Op{name,
                      [=] {
                          std::vector<T> acc(static_cast<std::size_t>(m));
                          auto opA = [&](const T* Ab, int i, int l) {
                              return ta == CUBLAS_OP_N ? Ab[i + static_cast<long long>(l) * lda]
                                                       : Ab[l + static_cast<long long>(i) * lda];
                          };
                          for (int bi = 0; bi < batch; ++bi) {
                              const T* Ab = A + bi * sA;
                              const T* Bb = B + bi * sB;
                              T* Cb = C + bi * sC;
                              for (int j = 0; j < n; ++j) {
                                  // acc[i] = sum over l in order of op(A)(i,l) * op(B)(l,j), column by column
                                  std::fill(acc.begin(), acc.end(), T(0));
                                  if (a != T(0))
                                      for (int l = 0; l < k; ++l) {
                                          const T y = tb == CUBLAS_OP_N ? Bb[l + static_cast<long long>(j) * ldb]
                                                                        : Bb[j + static_cast<long long>(l) * ldb];
                                          for (int i = 0; i < m; ++i)
                                              acc[static_cast<std::size_t>(i)] += opA(Ab, i, l) * y;
                                      }
                                  for (int i = 0; i < m; ++i) {
                                      T& c = Cb[i + static_cast<long long>(j) * ldc];
                                      c = b == T(0) ? a * acc[static_cast<std::size_t>(i)]
                                                    : a * acc[static_cast<std::size_t>(i)] + b * c;
                                  }
                              }
                          }
                      },
                      nullptr, false});
    return CUBLAS_STATUS_SUCCESS;
}

template <class T>
cublasStatus_t gemv(const char* name, cublasHandle_t h, cublasOperation_t t, int m, int n, const T* alpha, const T* A,
                    int lda, const T* x, int incx, const T* beta, T* y, int incy) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!validOp(t) || m < 0 || n < 0 || lda < std::max(1, m) || incx == 0 || incy == 0 || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
    const T a = *alpha, b = *beta;
    std::lock_guard<std::recursive_mutex> lock(passlens::cuda::emu::runtimeMutex());
    if (passlens::cuda::emu::stickyError() != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
    passlens::cuda::emu::enqueueOp(h->stream,
                                   Op{name,
                                      [=] {
                                          const int rows = t == CUBLAS_OP_N ? m : n, cols = t == CUBLAS_OP_N ? n : m;
                                          const long long x0 = incx > 0 ? 0 : static_cast<long long>(cols - 1) * -incx,
                                                          y0 = incy > 0 ? 0 : static_cast<long long>(rows - 1) * -incy;
                                          for (int i = 0; i < rows; ++i) {
                                              T acc = T(0);
                                              for (int l = 0; l < cols; ++l)
                                                  acc += (t == CUBLAS_OP_N ? A[i + static_cast<long long>(l) * lda]
                                                                           : A[l + static_cast<long long>(i) * lda]) *
                                                         x[x0 + static_cast<long long>(l) * incx];
                                              T& out = y[y0 + static_cast<long long>(i) * incy];
                                              out = b == T(0) ? a * acc : a * acc + b * out;
                                          }
                                      },
                                      nullptr, false});
    return CUBLAS_STATUS_SUCCESS;
}

} // namespace

// Handles live in a static list (the backend keeps one per device for the whole process, as with
// the real cuBLAS, so they are reachable at exit rather than leaked).
std::deque<cublasContext>& handles() {
    static std::deque<cublasContext> h;
    return h;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    std::lock_guard<std::recursive_mutex> lock(passlens::cuda::emu::runtimeMutex());
    passlens::cuda::emu::traceCall("cublasCreate");
    *handle = &handles().emplace_back();
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = nullptr; // its slot stays (pointers into the list must stay valid)
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
    return gemmBatched("cublasSgemm", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
    return gemmBatched("cublasDgemm", h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sA,
                                         const float* B, int ldb, long long sB, const float* beta, float* C, int ldc,
                                         long long sC, int batch) {
    return gemmBatched("cublasSgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC,
                       batch);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long sA,
                                         const double* B, int ldb, long long sB, const double* beta, double* C, int ldc,
                                         long long sC, int batch) {
    return gemmBatched("cublasDgemmStridedBatched", h, ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC,
                       batch);
}

cublasStatus_t cublasSgemv_v2(cublasHandle_t h, cublasOperation_t t, int m, int n, const float* alpha, const float* A,
                              int lda, const float* x, int incx, const float* beta, float* y, int incy) {
    return gemv("cublasSgemv", h, t, m, n, alpha, A, lda, x, incx, beta, y, incy);
}

cublasStatus_t cublasDgemv_v2(cublasHandle_t h, cublasOperation_t t, int m, int n, const double* alpha, const double* A,
                              int lda, const double* x, int incx, const double* beta, double* y, int incy) {
    return gemv("cublasDgemv", h, t, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
