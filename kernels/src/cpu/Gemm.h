#pragma once
// Internal: row-major GEMM through OpenBLAS (float, double) or plain loops (integers).
#include <cstdint>
#include <string>
#include <type_traits>

namespace passlens::cpu {

/// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, row-major with leading dimensions.
/// With beta == 0, C is not read.
void sgemm(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
           std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc);
void dgemm(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, double alpha, const double* A,
           std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc);
template <class T>
void gemmT(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A,
           std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
    if constexpr (std::is_same_v<T, float>) {
        sgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    } else if constexpr (std::is_same_v<T, double>) {
        dgemm(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    } else {
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
                T acc = 0;
                for (std::int64_t k = 0; k < K; ++k) {
                    const T a = transA ? A[k * lda + i] : A[i * lda + k];
                    const T b = transB ? B[j * ldb + k] : B[k * ldb + j];
                    acc = static_cast<T>(acc + a * b);
                }
                C[i * ldc + j] = static_cast<T>(beta == 0 ? alpha * acc : alpha * acc + beta * C[i * ldc + j]);
            }
    }
}

/// Sets OpenBLAS's thread count (benchmarks use 1).
void setBlasThreads(int n);
/// OpenBLAS's current thread count.
int blasThreads();
/// Once, before the first GEMM: when OpenBLAS fell back to old SSE kernels on a CPU it does not
/// recognise, re-selects its kernels by CPU features (AVX-512: SkylakeX, AVX2+FMA: Haswell).
/// Skipped when OPENBLAS_CORETYPE or PASSLENS_KEEP_BLAS_CORE is set.
void selectBlasCore();
/// "OpenBLAS SkylakeX (...)".
std::string blasDescription();

} // namespace passlens::cpu
