// The emulated CUDA device itself (kernels/src/cuda/emu, label gpu-emulated): kernels written
// as for nvcc and launched through passlens::cuda::launch see their own indices, warp collectives
// exchange values in lockstep, __syncthreads is a barrier, misuse is a kernel fault; the runtime
// queues stream work until a synchronisation, poisons and guards allocations, faults host code
// that reads device memory, reports injected out-of-memory and sticky faults; the reference
// cuBLAS checks its arguments as cuBLAS does.
#include "cuda/Launch.h"
#include "cuda/emu/EmuControl.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <QCoreApplication>
#include <QProcess>
#include <QTest>

#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

namespace emu = passlens::cuda::emu;
using passlens::cuda::launch;

namespace {

__global__ void shuffles(const int* in, int* down, int* xr, int* bcast, int* up, int* seg, unsigned* ballot, int* sum) {
    const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int v = in[t];
    down[t] = __shfl_down_sync(0xffffffffu, v, 3);
    xr[t] = __shfl_xor_sync(0xffffffffu, v, 5);
    bcast[t] = __shfl_sync(0xffffffffu, v, 7);
    up[t] = __shfl_up_sync(0xffffffffu, v, 1);
    seg[t] = __shfl_down_sync(0xffffffffu, v, 1, 8);
    ballot[t] = __ballot_sync(0xffffffffu, threadIdx.x % 3 == 0);
    int s = v;
    for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
    sum[t] = s;
}

// reverses each block's slice through shared memory: needs the barrier
__global__ void reverseBlocks(const float* in, float* out) {
    __shared__ float tile[128];
    const unsigned t = threadIdx.x;
    tile[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = tile[blockDim.x - 1 - t];
}

__global__ void halfWarpExits(int* out) {
    if (threadIdx.x % 32 >= 16) return;
    out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1, 1);
}

__global__ void barrierInBranch(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();
        out[threadIdx.x] = 1;
    }
}

__global__ void fill(float* p, float v, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) p[i] = v;
}

__global__ void copyN(const float* src, float* dst, int n) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) dst[i] = src[i];
}

__global__ void indices(int* out) {
    const unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[b * blockDim.x * blockDim.y * blockDim.z + t] = static_cast<int>(b * 1000 + t);
}

template <class T> T* deviceVector(std::size_t n) {
    void* p = nullptr;
    if (cudaMalloc(&p, n * sizeof(T)) != cudaSuccess) return nullptr;
    return static_cast<T*>(p);
}

template <class T> std::vector<T> download(const T* d, std::size_t n) {
    std::vector<T> h(n);
    if (cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) h.clear();
    return h;
}

} // namespace

class TestCudaEmu : public QObject {
    Q_OBJECT

private slots:
    void cleanup() { emu::reset(); }

    void threadIndices() {
        int* d = deviceVector<int>(3 * 2 * 24);
        launch("indices", indices, dim3(3, 2), dim3(4, 3, 2), nullptr, d);
        QCOMPARE(cudaGetLastError(), cudaSuccess);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        const auto h = download(d, 3 * 2 * 24);
        for (int b = 0; b < 6; ++b)
            for (int t = 0; t < 24; ++t) QCOMPARE(h[static_cast<std::size_t>(b * 24 + t)], b * 1000 + t);
        QCOMPARE(cudaFree(d), cudaSuccess);
    }

    void warpCollectives() {
        const int n = 64;
        std::vector<int> in(n);
        for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = 100 + i * 3;
        int* din = deviceVector<int>(n);
        std::vector<int*> outs;
        for (int k = 0; k < 7; ++k) outs.push_back(deviceVector<int>(n));
        unsigned* ballot = deviceVector<unsigned>(n);
        QCOMPARE(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
        launch("shuffles", shuffles, dim3(1), dim3(n), nullptr, din, outs[0], outs[1], outs[2], outs[3], outs[4],
               ballot, outs[5]);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        const auto down = download(outs[0], n), xr = download(outs[1], n), bc = download(outs[2], n),
                   up = download(outs[3], n), seg = download(outs[4], n), sum = download(outs[5], n);
        const auto bal = download(ballot, n);
        for (int t = 0; t < n; ++t) {
            const int lane = t % 32, base = t - lane;
            auto v = [&](int l) { return in[static_cast<std::size_t>(base + l)]; };
            const auto i = static_cast<std::size_t>(t);
            QCOMPARE(down[i], lane + 3 < 32 ? v(lane + 3) : v(lane));
            QCOMPARE(xr[i], v(lane ^ 5));
            QCOMPARE(bc[i], v(7));
            QCOMPARE(up[i], lane >= 1 ? v(lane - 1) : v(lane));
            QCOMPARE(seg[i], lane % 8 < 7 ? v(lane + 1) : v(lane));
            unsigned want = 0;
            for (int l = 0; l < 32; ++l) want |= ((base + l) % 3 == 0 ? 1u : 0u) << l;
            QCOMPARE(bal[i], want); // warp 0: 0x49249249 (lanes 0, 3, ..., 30)
        }
        // the tree sum of lane 0 covers its warp
        QCOMPARE(sum[0], std::accumulate(in.begin(), in.begin() + 32, 0));
        QCOMPARE(sum[32], std::accumulate(in.begin() + 32, in.end(), 0));
        for (int* p : outs) QCOMPARE(cudaFree(p), cudaSuccess);
        QCOMPARE(cudaFree(din), cudaSuccess);
        QCOMPARE(cudaFree(ballot), cudaSuccess);
    }

    void syncthreadsAndShared() {
        const int n = 3 * 128;
        std::vector<float> in(n);
        for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>(i);
        float* din = deviceVector<float>(n);
        float* dout = deviceVector<float>(n);
        QCOMPARE(cudaMemcpy(din, in.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
        launch("reverseBlocks", reverseBlocks, dim3(3), dim3(128), nullptr, din, dout);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        const auto out = download(dout, n);
        for (int b = 0; b < 3; ++b)
            for (int t = 0; t < 128; ++t)
                QCOMPARE(out[static_cast<std::size_t>(b * 128 + t)], static_cast<float>(b * 128 + 127 - t));
        QCOMPARE(cudaFree(din), cudaSuccess);
        QCOMPARE(cudaFree(dout), cudaSuccess);
    }

    // collectives a GPU would hang on or leave undefined are kernel faults (sticky)
    void collectiveMisuse() {
        int* d = deviceVector<int>(64);
        launch("halfWarpExits", halfWarpExits, dim3(1), dim3(64), nullptr, d);
        QCOMPARE(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
        QVERIFY2(QString::fromStdString(emu::lastFault())
                     .contains("kernel halfWarpExits block (0,0,0): lane 16 of warp 0 exited"),
                 emu::lastFault().c_str());
        QCOMPARE(cudaGetLastError(), cudaErrorLaunchFailure); // sticky: not cleared
        QCOMPARE(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
        emu::reset();
        launch("barrierInBranch", barrierInBranch, dim3(1), dim3(64), nullptr, d);
        QCOMPARE(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
        QVERIFY2(QString::fromStdString(emu::lastFault())
                     .contains("exited while other threads of its block wait at __syncthreads"),
                 emu::lastFault().c_str());
        emu::reset();
        QCOMPARE(cudaFree(d), cudaSuccess);
    }

    // stream work runs at a synchronisation, not at the call
    void queuedUntilSync() {
        cudaStream_t s = nullptr;
        QCOMPARE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
        float* d = deviceVector<float>(8);
        std::vector<float> host(8, -1.f);
        const emu::Stats before = emu::stats();
        launch("fill", fill, dim3(1), dim3(32), s, d, 2.5f, 8);
        QCOMPARE(cudaMemcpyAsync(host.data(), d, 8 * sizeof(float), cudaMemcpyDeviceToHost, s), cudaSuccess);
        QCOMPARE(emu::stats().kernelsQueued, 1);
        QCOMPARE(emu::stats().opsQueued, 2);
        QCOMPARE(host[0], -1.f); // a missing synchronisation shows
        QCOMPARE(cudaStreamSynchronize(s), cudaSuccess);
        QCOMPARE(host[7], 2.5f);
        QCOMPARE(emu::stats().kernelsRun, before.kernelsRun + 1);
        QCOMPARE(emu::stats().opsQueued, 0);
        // events: elapsed time only once both have completed
        cudaEvent_t a = nullptr, b = nullptr;
        QCOMPARE(cudaEventCreate(&a), cudaSuccess);
        QCOMPARE(cudaEventCreate(&b), cudaSuccess);
        QCOMPARE(cudaEventRecord(a, s), cudaSuccess);
        launch("fill", fill, dim3(1), dim3(32), s, d, 1.f, 8);
        QCOMPARE(cudaEventRecord(b, s), cudaSuccess);
        float ms = -1;
        QCOMPARE(cudaEventElapsedTime(&ms, a, b), cudaErrorNotReady);
        QCOMPARE(cudaGetLastError(), cudaErrorNotReady);
        QCOMPARE(cudaEventSynchronize(b), cudaSuccess);
        QCOMPARE(cudaEventElapsedTime(&ms, a, b), cudaSuccess);
        QVERIFY(ms >= 0);
        QCOMPARE(cudaEventDestroy(a), cudaSuccess);
        QCOMPARE(cudaEventDestroy(b), cudaSuccess);
        QCOMPARE(cudaFree(d), cudaSuccess);
        QCOMPARE(cudaStreamDestroy(s), cudaSuccess);
    }

    // fresh and freed device memory read as NaN; writes past an allocation are caught
    void poisonAndGuards() {
        float* a = deviceVector<float>(4);
        const auto fresh = download(a, 4);
        QVERIFY(std::isnan(fresh[0]) && std::isnan(fresh[3]));
        float* b = deviceVector<float>(4);
        launch("fill", fill, dim3(1), dim3(32), nullptr, a, 3.f, 4);
        QCOMPARE(cudaFree(a), cudaSuccess); // runs the queued fill first (cudaFree synchronises)
        launch("copyN", copyN, dim3(1), dim3(32), nullptr, static_cast<const float*>(a), b, 4); // a stale pointer
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        QVERIFY(std::isnan(download(b, 4)[2]));
        launch("fill", fill, dim3(1), dim3(32), nullptr, b, 1.f, 5); // one element too many
        QCOMPARE(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
        QVERIFY2(
            QString::fromStdString(emu::lastFault()).contains("fill wrote outside a device allocation of 16 bytes"),
            emu::lastFault().c_str());
        emu::reset();
        // the guard is restored by nobody: freeing b reports it again, as the context is lost
        QCOMPARE(cudaFree(b), cudaErrorIllegalAddress);
        emu::reset();
        // copies must stay inside allocations
        float* c = deviceVector<float>(4);
        float h[8] = {};
        QCOMPARE(cudaMemcpy(c, h, 8 * sizeof(float), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
        QCOMPARE(cudaMemcpy(h, c, 4 * sizeof(float), cudaMemcpyHostToDevice), cudaErrorInvalidValue); // wrong direction
        QCOMPARE(cudaGetLastError(), cudaErrorInvalidValue);
        QCOMPARE(cudaGetLastError(), cudaSuccess); // not sticky
        QCOMPARE(cudaFree(c), cudaSuccess);
    }

    // host code dereferencing a device pointer faults with a message, as on a GPU (checked in
    // a child process, which the fault ends)
    void hostAccessFaults() {
        if (qEnvironmentVariableIsSet("PASSLENS_EMU_CHILD")) {
            float* d = deviceVector<float>(4);
            volatile float v = d[1];
            (void)v;
            QFAIL("reading device memory from host code did not fault");
        }
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("PASSLENS_EMU_CHILD", "1");
        child.setProcessEnvironment(env);
        child.start(QCoreApplication::applicationFilePath(), {"hostAccessFaults"});
        QVERIFY(child.waitForFinished(60000));
        const QString err = QString::fromLocal8Bit(child.readAllStandardError() + child.readAllStandardOutput());
        // a crash, or under AddressSanitizer its report and exit status 1
        QVERIFY(child.exitStatus() == QProcess::CrashExit || child.exitCode() != 0);
        QVERIFY2(err.contains("passlens emulated device: host code accessed device memory outside kernels and copies"),
                 qPrintable(err));
        // the same memory is readable through a copy
        float* d = deviceVector<float>(4);
        QVERIFY(std::isnan(download(d, 4)[1]));
        QCOMPARE(cudaFree(d), cudaSuccess);
    }

    void injectedFaults() {
        emu::setMemoryLimit(std::size_t(1) << 20);
        void* p = nullptr;
        QCOMPARE(cudaMalloc(&p, std::size_t(2) << 20), cudaErrorMemoryAllocation);
        QCOMPARE(cudaGetLastError(), cudaErrorMemoryAllocation);
        emu::setMemoryLimit(std::size_t(16) << 30);
        emu::failAllocation(1);
        float* a = deviceVector<float>(4);
        QVERIFY(a);
        QVERIFY(!deviceVector<float>(4));
        QVERIFY(!deviceVector<float>(4)); // the device stays full
        emu::reset();
        emu::faultKernel(0);
        launch("fill", fill, dim3(1), dim3(32), nullptr, a, 1.f, 4);
        QCOMPARE(cudaGetLastError(), cudaSuccess); // reported when it runs
        QCOMPARE(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
        QCOMPARE(cudaMalloc(&p, 16), cudaErrorIllegalAddress); // sticky
        QCOMPARE(std::string(cudaGetErrorString(cudaErrorIllegalAddress)),
                 std::string("an illegal memory access was encountered"));
        emu::reset();
        QCOMPARE(cudaFree(a), cudaSuccess);
    }

    void launchConfiguration() {
        float* a = deviceVector<float>(4);
        launch("fill", fill, dim3(1), dim3(1025), nullptr, a, 1.f, 4);
        QCOMPARE(cudaGetLastError(), cudaErrorInvalidConfiguration);
        launch("fill", fill, dim3(1, 65536), dim3(32), nullptr, a, 1.f, 4);
        QCOMPARE(cudaGetLastError(), cudaErrorInvalidConfiguration);
        launch("fill", fill, dim3(0), dim3(32), nullptr, a, 1.f, 4);
        QCOMPARE(cudaGetLastError(), cudaErrorInvalidConfiguration);
        QCOMPARE(emu::stats().opsQueued, 0);
        QCOMPARE(cudaFree(a), cudaSuccess);
    }

    // column-major reference GEMM / GEMV with cuBLAS's argument checks
    void referenceBlas() {
        cublasHandle_t h = nullptr;
        QCOMPARE(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
        // A 2x3, B 3x2 (column-major), C = A*B 2x2
        const float A[6] = {1, 4, 2, 5, 3, 6}, B[6] = {7, 9, 11, 8, 10, 12};
        float* dA = deviceVector<float>(6);
        float* dB = deviceVector<float>(6);
        float* dC = deviceVector<float>(8);
        QCOMPARE(cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice), cudaSuccess);
        QCOMPARE(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice), cudaSuccess);
        const float one = 1, zero = 0, two = 2;
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, dA, 2, dB, 3, &zero, dC, 2),
                 CUBLAS_STATUS_SUCCESS);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        QCOMPARE(download(dC, 4), (std::vector<float>{58, 139, 64, 154}));
        // transposed operands: C2 = A^T * B^T (3x3), C2[0] = 1*7 + 4*8 = 39, C2[8] = 3*11 + 6*12 = 105
        float* dC2 = deviceVector<float>(9);
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_T, CUBLAS_OP_T, 3, 3, 2, &one, dA, 2, dB, 3, &zero, dC2, 3),
                 CUBLAS_STATUS_SUCCESS);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        const auto c2 = download(dC2, 9);
        QCOMPARE(c2[0], 39.f);
        QCOMPARE(c2[8], 105.f);
        QCOMPARE(cudaFree(dC2), cudaSuccess);
        // argument checks
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, dA, 1, dB, 3, &zero, dC, 2),
                 CUBLAS_STATUS_INVALID_VALUE); // lda < m
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, dA, 2, dB, 2, &zero, dC, 2),
                 CUBLAS_STATUS_INVALID_VALUE); // ldb < k
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, dA, 2, dB, 3, &zero, dC, 1),
                 CUBLAS_STATUS_INVALID_VALUE); // ldc < m
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 0, &one, dA, 2, dB, 0, &zero, dC, 2),
                 CUBLAS_STATUS_INVALID_VALUE); // ldb < max(1, 0)
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 3, &one, dA, 2, dB, 3, &zero, dC, 2),
                 CUBLAS_STATUS_INVALID_VALUE);
        QCOMPARE(cublasSgemm_v2(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, dA, 2, dB, 3, &zero, dC, 2),
                 CUBLAS_STATUS_NOT_INITIALIZED);
        // zero sizes: m = 0 queues nothing; k = 0 writes beta*C, and beta = 0 does not read C (NaN)
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 2, 3, &one, dA, 1, dB, 3, &zero, dC, 1),
                 CUBLAS_STATUS_SUCCESS);
        QCOMPARE(emu::stats().opsQueued, 0);
        const float nan4[4] = {NAN, NAN, NAN, NAN};
        QCOMPARE(cudaMemcpy(dC, nan4, sizeof nan4, cudaMemcpyHostToDevice), cudaSuccess);
        QCOMPARE(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 0, &one, dA, 2, dB, 1, &zero, dC, 2),
                 CUBLAS_STATUS_SUCCESS);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        QCOMPARE(download(dC, 4), (std::vector<float>{0, 0, 0, 0}));
        // strided batched with a shared A (stride 0): C_i = A * B_i, beta 2 doubles C
        QCOMPARE(cudaMemcpy(dC, std::vector<float>(8, 1.f).data(), 8 * sizeof(float), cudaMemcpyHostToDevice),
                 cudaSuccess);
        const float I[4] = {1, 0, 0, 1};
        float* dI = deviceVector<float>(4);
        QCOMPARE(cudaMemcpy(dI, I, sizeof I, cudaMemcpyHostToDevice), cudaSuccess);
        QCOMPARE(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 2, &one, dI, 2, 0, dB, 2, 2, &two, dC, 2,
                                           2, 3),
                 CUBLAS_STATUS_SUCCESS);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        QCOMPARE(download(dC, 8), (std::vector<float>{9, 11, 13, 10, 12, 14, 1, 1}));
        QCOMPARE(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 2, &one, dI, 2, 0, dB, 2, 2, &two, dC, 2,
                                           2, -1),
                 CUBLAS_STATUS_INVALID_VALUE);
        // gemv: y = A x (A 2x3)
        const float x[3] = {1, 1, 1};
        float* dx = deviceVector<float>(3);
        QCOMPARE(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice), cudaSuccess);
        QCOMPARE(cublasSgemv_v2(h, CUBLAS_OP_N, 2, 3, &one, dA, 2, dx, 1, &zero, dC, 1), CUBLAS_STATUS_SUCCESS);
        QCOMPARE(cublasSgemv_v2(h, CUBLAS_OP_N, 2, 3, &one, dA, 1, dx, 1, &zero, dC, 1), CUBLAS_STATUS_INVALID_VALUE);
        QCOMPARE(cudaDeviceSynchronize(), cudaSuccess);
        QCOMPARE(download(dC, 2), (std::vector<float>{6, 15}));
        QCOMPARE(cublasDestroy_v2(h), CUBLAS_STATUS_SUCCESS);
    }
};

QTEST_GUILESS_MAIN(TestCudaEmu)
#include "tst_cudaemu.moc"
