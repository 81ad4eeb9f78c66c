// Dot, Dot22, Gemm, Gemv, BatchedDot (and their GPU kinds on the CPU) through OpenBLAS.
#include "CpuCommon.h"
#include "Gemm.h"

#include <cblas.h>

#include <cstdlib>
#include <mutex>
#include <cstring>
#include <string>

namespace passlens::cpu {

void sgemm(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
           std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc) {
    if (M == 0 || N == 0) return;
    if (K == 0) {
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0.f : beta * C[i * ldc + j];
        return;
    }
    if (M == 1 || N == 1) {
        // a row or column of C: a matrix-vector product (OpenBLAS 0.3.21's sgemm packs the
        // whole matrix operand per call; sgemv streams it once)
        if (beta == 0) // C is not read
            for (std::int64_t i = 0; i < M; ++i)
                for (std::int64_t j = 0; j < N; ++j) C[i * ldc + j] = 0.f;
        if (M == 1) // C[0,:] = alpha * op(B)^T a + beta * C[0,:], a = op(A)[0,:]
            cblas_sgemv(CblasRowMajor, transB ? CblasNoTrans : CblasTrans, static_cast<blasint>(transB ? N : K),
                        static_cast<blasint>(transB ? K : N), alpha, B, static_cast<blasint>(ldb), A,
                        static_cast<blasint>(transA ? lda : 1), beta, C, 1);
        else // C[:,0] = alpha * op(A) b + beta * C[:,0], b = op(B)[:,0]
            cblas_sgemv(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, static_cast<blasint>(transA ? K : M),
                        static_cast<blasint>(transA ? M : K), alpha, A, static_cast<blasint>(lda), B,
                        static_cast<blasint>(transB ? 1 : ldb), beta, C, static_cast<blasint>(ldc));
        return;
    }
    // beta == 0: OpenBLAS does not read C (its beta-0 paths store, they do not scale)
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(M), static_cast<blasint>(N), static_cast<blasint>(K), alpha, A,
                static_cast<blasint>(lda), B, static_cast<blasint>(ldb), beta, C, static_cast<blasint>(ldc));
}

void dgemm(bool transA, bool transB, std::int64_t M, std::int64_t N, std::int64_t K, double alpha, const double* A,
           std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc) {
    if (M == 0 || N == 0) return;
    if (K == 0) {
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0 ? 0.0 : beta * C[i * ldc + j];
        return;
    }
    if (M == 1 || N == 1) {
        if (beta == 0)
            for (std::int64_t i = 0; i < M; ++i)
                for (std::int64_t j = 0; j < N; ++j) C[i * ldc + j] = 0.0;
        if (M == 1)
            cblas_dgemv(CblasRowMajor, transB ? CblasNoTrans : CblasTrans, static_cast<blasint>(transB ? N : K),
                        static_cast<blasint>(transB ? K : N), alpha, B, static_cast<blasint>(ldb), A,
                        static_cast<blasint>(transA ? lda : 1), beta, C, 1);
        else
            cblas_dgemv(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, static_cast<blasint>(transA ? K : M),
                        static_cast<blasint>(transA ? M : K), alpha, A, static_cast<blasint>(lda), B,
                        static_cast<blasint>(transB ? 1 : ldb), beta, C, static_cast<blasint>(ldc));
        return;
    }
    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(M), static_cast<blasint>(N), static_cast<blasint>(K), alpha, A,
                static_cast<blasint>(lda), B, static_cast<blasint>(ldb), beta, C, static_cast<blasint>(ldc));
}

void setBlasThreads(int n) { openblas_set_num_threads(n); }
int blasThreads() { return openblas_get_num_threads(); }

} // namespace passlens::cpu

// Exported by OpenBLAS builds with DYNAMIC_ARCH (Debian's); weak so other builds still link.
extern "C" {
__attribute__((weak)) void gotoblas_dynamic_init(void);
__attribute__((weak)) void gotoblas_dynamic_quit(void);
}

namespace passlens::cpu {

Shape batchedGemmShape(const KernelCall& c, const Tensor& a, const Tensor& b) {
    const int nd = a.ndim();
    if (nd < 3 || b.ndim() != nd)
        c.fail("takes two tensors of equal rank >= 3, got " + a.typeStr() + " and " + b.typeStr());
    if (b.dim(nd - 2) != a.dim(nd - 1))
        c.fail("inner dimensions of " + a.typeStr() + " and " + b.typeStr() + " differ");
    Shape batch;
    for (int i = 0; i < nd - 2; ++i) {
        const std::int64_t da = a.dim(i), db = b.dim(i);
        if (da != db && da != 1 && db != 1)
            c.fail("batch axis " + std::to_string(i) + " of " + a.typeStr() + " and " + b.typeStr() + " differ");
        batch.push_back(da == 1 ? db : da);
    }
    return batch;
}

} // namespace passlens::cpu

namespace passlens::cpu {

namespace {
std::string g_blasNote;
void selectBlasCoreOnce();
} // namespace

void selectBlasCore() {
    static std::once_flag once;
    std::call_once(once, [] { selectBlasCoreOnce(); });
}

namespace {
void selectBlasCoreOnce() {
    const char* core = openblas_get_corename();
    const std::string name = core ? core : "";
    if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("PASSLENS_KEEP_BLAS_CORE") || !gotoblas_dynamic_init ||
        !gotoblas_dynamic_quit) {
        g_blasNote = name;
        return;
    }
    // OpenBLAS 0.3.21 falls back to its SSE3 "Prescott" kernels on CPUs whose model it does not
    // know (virtualised Xeons reporting a generic model). Choose by CPU features instead.
    __builtin_cpu_init();
    const char* pick = nullptr;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        pick = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        pick = "Haswell";
    if (pick && (name == "Prescott" || name == "Core2" || name == "Penryn" || name == "Dunnington" ||
                 name == "Nehalem" || name == "Atom" || name == "Nano" || (name == "Sandybridge" && pick))) {
        gotoblas_dynamic_quit();
        setenv("OPENBLAS_CORETYPE", pick, 0);
        gotoblas_dynamic_init();
        unsetenv("OPENBLAS_CORETYPE");
        g_blasNote = std::string(openblas_get_corename()) + " (OpenBLAS detected " + name + "; chosen by CPU features)";
    } else {
        g_blasNote = name;
    }
}
} // namespace

std::string blasDescription() {
    selectBlasCore();
    return "OpenBLAS " + g_blasNote;
}

namespace {

Tensor asDType(const KernelCall& c, const Tensor& t, DType dt) {
    if (t.dtype() == dt) return t;
    Tensor r = c.allocate(dt, t.shape());
    convertElements(t.rawData(), t.dtype(), r.rawData(), dt, t.numel());
    return r;
}

template <class F> void numeric(const KernelCall& c, DType dt, F&& f) {
    visitDType(dt, c.op().kind().c_str(), [&](auto z) {
        using T = decltype(z);
        if constexpr (std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int8_t> ||
                      std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::uint16_t> ||
                      std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
                      std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t> || std::is_same_v<T, float> ||
                      std::is_same_v<T, double>)
            f(z);
    });
}

void dot(KernelCall& c) {
    const DType dt = outDType(c);
    const Tensor a = asDType(c, c.in(0), dt), b = asDType(c, c.in(1), dt);
    if (a.ndim() < 1 || a.ndim() > 2 || b.ndim() < 1 || b.ndim() > 2)
        c.fail("takes vectors or matrices, got " + a.typeStr() + " and " + b.typeStr());
    const std::int64_t M = a.ndim() == 2 ? a.dim(0) : 1, K = a.dim(a.ndim() - 1);
    const std::int64_t Kb = b.dim(0), N = b.ndim() == 2 ? b.dim(1) : 1;
    if (K != Kb) c.fail("inner dimensions of " + a.typeStr() + " and " + b.typeStr() + " differ");
    Shape out;
    if (a.ndim() == 2) out.push_back(M);
    if (b.ndim() == 2) out.push_back(N);
    Tensor y = c.allocate(dt, out);
    numeric(c, dt, [&](auto z) {
        using T = decltype(z);
        gemmT<T>(false, false, M, N, K, T(1), a.data<T>(), K, b.data<T>(), N, T(0), y.data<T>(), N);
    });
    c.outputs[0] = std::move(y);
}

void gemm(KernelCall& c) {
    // gemm(z, a, x, y, b) = b*z + a*dot(x, y)
    const Tensor& z = c.in(0);
    const DType dt = outDType(c);
    const Tensor x = asDType(c, c.in(2), dt), yv = asDType(c, c.in(3), dt);
    if (z.ndim() != 2 || x.ndim() != 2 || yv.ndim() != 2)
        c.fail("needs matrices, got " + z.typeStr() + ", " + x.typeStr() + ", " + yv.typeStr());
    const std::int64_t M = x.dim(0), K = x.dim(1), N = yv.dim(1);
    if (yv.dim(0) != K) c.fail("inner dimensions of " + x.typeStr() + " and " + yv.typeStr() + " differ");
    if (z.dim(0) != M || z.dim(1) != N)
        c.fail("z " + z.typeStr() + " does not match dot(x, y) [" + std::to_string(M) + "," + std::to_string(N) + "]");
    const double alpha = c.in(1).at(0), beta = c.in(4).at(0);
    Tensor out = c.reuseOrAllocate(0, dt, z.shape());
    if (beta != 0 && out.storage() != z.storage())
        convertElements(z.rawData(), z.dtype(), out.rawData(), dt, z.numel());
    numeric(c, dt, [&](auto zz) {
        using T = decltype(zz);
        gemmT<T>(false, false, M, N, K, static_cast<T>(alpha), x.data<T>(), K, yv.data<T>(), N, static_cast<T>(beta),
                 out.data<T>(), N);
    });
    c.outputs[0] = std::move(out);
}

void gemv(KernelCall& c) {
    // gemv(z, a, A, x, b) = b*z + a*dot(A, x)
    const Tensor& z = c.in(0);
    const DType dt = outDType(c);
    const Tensor A = asDType(c, c.in(2), dt), x = asDType(c, c.in(3), dt);
    if (z.ndim() != 1 || A.ndim() != 2 || x.ndim() != 1) c.fail("needs a vector, a matrix and a vector");
    const std::int64_t M = A.dim(0), K = A.dim(1);
    if (x.dim(0) != K || z.dim(0) != M)
        c.fail("shapes " + z.typeStr() + ", " + A.typeStr() + ", " + x.typeStr() + " do not match");
    const double alpha = c.in(1).at(0), beta = c.in(4).at(0);
    Tensor out = c.reuseOrAllocate(0, dt, z.shape());
    if (beta != 0 && out.storage() != z.storage())
        convertElements(z.rawData(), z.dtype(), out.rawData(), dt, z.numel());
    numeric(c, dt, [&](auto zz) {
        using T = decltype(zz);
        gemmT<T>(false, false, M, 1, K, static_cast<T>(alpha), A.data<T>(), K, x.data<T>(), 1, static_cast<T>(beta),
                 out.data<T>(), 1);
    });
    c.outputs[0] = std::move(out);
}

void batchedDot(KernelCall& c) {
    const DType dt = outDType(c);
    Tensor a = asDType(c, c.in(0), dt), b = asDType(c, c.in(1), dt);
    // Theano's rank-2 operands, (B,K) as (B,1,K) on the left and (B,K,1) on the right; the
    // result drops those axes again.
    Shape mixOut;
    if ((a.ndim() == 2 || a.ndim() == 3) && (b.ndim() == 2 || b.ndim() == 3) && (a.ndim() == 2 || b.ndim() == 2)) {
        mixOut.push_back(a.dim(0));
        if (a.ndim() == 3) mixOut.push_back(a.dim(1));
        if (b.ndim() == 3) mixOut.push_back(b.dim(2));
        if (a.ndim() == 2) a = a.reshaped({a.dim(0), 1, a.dim(1)});
        if (b.ndim() == 2) b = b.reshaped({b.dim(0), b.dim(1), 1});
    }
    Shape out = batchedGemmShape(c, a, b);
    const int nd = a.ndim();
    const std::int64_t M = a.dim(nd - 2), K = a.dim(nd - 1), N = b.dim(nd - 1);
    out.push_back(M);
    out.push_back(N);
    Tensor y = c.allocate(dt, out);
    const std::int64_t batches = shapeNumel(Shape(out.begin(), out.end() - 2));
    const Shape bshape(out.begin(), out.end() - 2);
    numeric(c, dt, [&](auto zz) {
        using T = decltype(zz);
        std::vector<std::int64_t> idx(bshape.size(), 0);
        for (std::int64_t bi = 0; bi < batches; ++bi) {
            std::int64_t oa = 0, ob = 0;
            for (std::size_t d = 0; d < bshape.size(); ++d) {
                oa = oa * a.dim(static_cast<int>(d)) + (a.dim(static_cast<int>(d)) == 1 ? 0 : idx[d]);
                ob = ob * b.dim(static_cast<int>(d)) + (b.dim(static_cast<int>(d)) == 1 ? 0 : idx[d]);
            }
            gemmT<T>(false, false, M, N, K, T(1), a.data<T>() + oa * M * K, K, b.data<T>() + ob * K * N, N, T(0),
                     y.data<T>() + bi * M * N, N);
            for (std::size_t d = bshape.size(); d-- > 0;) {
                if (++idx[d] < bshape[d]) break;
                idx[d] = 0;
            }
        }
    });
    c.outputs[0] = mixOut.empty() ? std::move(y) : y.reshaped(mixOut);
}

} // namespace

} // namespace passlens::cpu

namespace passlens {
void setCpuThreads(int threads) {
    cpu::selectBlasCore();
    cpu::setBlasThreads(threads);
}
int cpuThreads() {
    cpu::selectBlasCore();
    return cpu::blasThreads();
}
std::string cpuBackendDescription() { return cpu::blasDescription(); }
} // namespace passlens

namespace passlens::cpu {

void registerBlasKernels(KernelRegistry& r) {
    selectBlasCore();
    addHostAndGpu(r, "Dot", "", dot);
    addHostAndGpu(r, "Dot22", "GpuDot22", dot);
    addHostAndGpu(r, "Gemm", "GpuGemm", gemm);
    addHostAndGpu(r, "Gemv", "GpuGemv", gemv);
    addHostAndGpu(r, "BatchedDot", "GpuGemmBatch", batchedDot);
}

} // namespace passlens::cpu
