// CUDA runtime side of the backend: memory, one stream and one cuBLAS handle per device, copies,
// events and GEMM. Every call is checked.
#include "CudaOps.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace passlens::cuda {

namespace {

[[noreturn]] void fail(const char* call, cudaError_t e) {
    (void)cudaGetLastError();
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                             ")");
}

#define PL_CK(call)                                                                                                    \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) fail(#call, e_);                                                                        \
    } while (0)

#define PL_CB(call)                                                                                                    \
    do {                                                                                                               \
        cublasStatus_t s_ = (call);                                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                                               \
            throw std::runtime_error(std::string(#call) + " failed: cuBLAS status " +                                  \
                                     std::to_string(static_cast<int>(s_)));                                            \
    } while (0)

// cuBLAS is opened at run time (dlopen), so binaries built with CUDA need only the driver to
// start, and libcublas only when a GEMM runs on a GPU.
struct Blas {
    bool tried = false;
    std::string error;
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasSetStream_v2) setStream = nullptr;
    decltype(&cublasSgemm_v2) sgemm = nullptr;
    decltype(&cublasDgemm_v2) dgemm = nullptr;
    decltype(&cublasSgemmStridedBatched) sgemmBatched = nullptr;
    decltype(&cublasDgemmStridedBatched) dgemmBatched = nullptr;
};

Blas& blas() {
    static Blas b;
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    if (b.tried) return b;
    b.tried = true;
#ifdef PASSLENS_CUDA_EMULATED
    // the emulated device's reference cuBLAS is linked in
    b.create = &cublasCreate_v2;
    b.setStream = &cublasSetStream_v2;
    b.sgemm = &cublasSgemm_v2;
    b.dgemm = &cublasDgemm_v2;
    b.sgemmBatched = &cublasSgemmStridedBatched;
    b.dgemmBatched = &cublasDgemmStridedBatched;
    return b;
#endif
    void* lib = nullptr;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"})
        if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
        b.error = "cuBLAS (libcublas.so.13) cannot be loaded";
        return b;
    }
    auto sym = [&](const char* n) {
        void* f = dlsym(lib, n);
        if (!f && b.error.empty()) b.error = std::string("cuBLAS lacks ") + n;
        return f;
    };
    b.create = reinterpret_cast<decltype(b.create)>(sym("cublasCreate_v2"));
    b.setStream = reinterpret_cast<decltype(b.setStream)>(sym("cublasSetStream_v2"));
    b.sgemm = reinterpret_cast<decltype(b.sgemm)>(sym("cublasSgemm_v2"));
    b.dgemm = reinterpret_cast<decltype(b.dgemm)>(sym("cublasDgemm_v2"));
    b.sgemmBatched = reinterpret_cast<decltype(b.sgemmBatched)>(sym("cublasSgemmStridedBatched"));
    b.dgemmBatched = reinterpret_cast<decltype(b.dgemmBatched)>(sym("cublasDgemmStridedBatched"));
    return b;
}

Blas& needBlas() {
    Blas& b = blas();
    if (!b.error.empty()) throw std::runtime_error(b.error);
    return b;
}

// Page-locked buffers through which pageable uploads are staged (copyHtoDStaged): two, so the
// host fills one while the device reads the other; made at the first pageable upload and kept for
// the process (a few MiB per device).
constexpr std::size_t kStageBytes = std::size_t(4) << 20;
struct Staging {
    void* buffer[2] = {nullptr, nullptr};
    cudaEvent_t read[2] = {nullptr, nullptr}; ///< recorded after the copy that reads buffer[i]
    bool pending[2] = {false, false};
    int next = 0;
};

struct DeviceState {
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    Staging staging;
};

std::mutex g_mutex;
// Per device for the whole process, never destroyed: the stream, the cuBLAS handle and the staging
// buffers stay valid (and reachable) until exit, and nothing calls CUDA during static destruction.
std::vector<DeviceState>& g_devices = *new std::vector<DeviceState>;

DeviceState& state(int device) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_devices.empty()) {
        int n = 0;
        PL_CK(cudaGetDeviceCount(&n));
        g_devices.resize(static_cast<std::size_t>(n));
    }
    if (device < 0 || device >= static_cast<int>(g_devices.size()))
        throw std::runtime_error("CUDA device " + std::to_string(device) + " does not exist");
    DeviceState& s = g_devices[static_cast<std::size_t>(device)];
    if (!s.stream) {
        PL_CK(cudaSetDevice(device));
        PL_CK(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
    }
    return s;
}

} // namespace

// ---- timing windows
// A Timer measures the device work of one node: one or more segments, each a pair of events on
// the stream. A segment opens when device work is queued (streamOf) and closes when the host does
// work of its own (hostWork: cudaMalloc on a pool miss, cudaMallocHost, the first cuBLAS load, a
// wait for the stream, a staged copy's host side) or the timer stops. On an idle stream an event
// completes as soon as it is recorded, so a single pair around the node would count that host
// work as the node's; the segments count only the time the stream spends on the node's work.
struct Timer {
    int device = 0;
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> segments; ///< created on demand, reused
    std::size_t used = 0;                                      ///< segments recorded since timerStart
    bool open = false;
    bool failed = false; ///< an event could not be recorded (after a device fault)
};

namespace {
thread_local Timer* t_active = nullptr; // the timer of the node this thread is running

void openWindow(int device) {
    Timer* t = t_active;
    if (!t || t->open || t->device != device || t->failed) return;
    if (t->used == t->segments.size()) {
        std::pair<cudaEvent_t, cudaEvent_t> seg{nullptr, nullptr};
        PL_CK(cudaEventCreate(&seg.first));
        if (cudaEventCreate(&seg.second) != cudaSuccess) {
            cudaEventDestroy(seg.first);
            fail("cudaEventCreate", cudaGetLastError());
        }
        t->segments.push_back(seg);
    }
    PL_CK(cudaEventRecord(t->segments[t->used].first, state(device).stream));
    t->open = true;
}
} // namespace

void hostWork() noexcept {
    Timer* t = t_active;
    if (!t || !t->open) return;
    t->open = false;
    try {
        if (cudaEventRecord(t->segments[t->used].second, state(t->device).stream) == cudaSuccess) {
            ++t->used;
            return;
        }
        (void)cudaGetLastError();
    } catch (...) {}
    t->failed = true;
}

cudaStream_t streamOf(int device) {
    DeviceState& s = state(device);
    PL_CK(cudaSetDevice(device));
    openWindow(device);
    return s.stream;
}

void checkLaunch(const char* what) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) fail(what, e);
}

std::size_t dtSize(int dt) {
    switch (dt) {
    case Bool:
    case I8:
    case U8: return 1;
    case I16:
    case U16:
    case F16: return 2;
    case I32:
    case U32:
    case F32: return 4;
    default: return 8;
    }
}

int deviceCount() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

std::string deviceName(int device) {
    cudaDeviceProp p{};
    PL_CK(cudaGetDeviceProperties(&p, device));
    return p.name;
}

void* deviceAlloc(std::size_t bytes, int device) {
    hostWork(); // cudaMalloc may wait for the device and takes host time: not the node's kernel time
    PL_CK(cudaSetDevice(device));
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return nullptr;
    }
    if (e != cudaSuccess) fail("cudaMalloc", e);
    return p;
}

// Free paths run in destructors (~Storage, ~BufferPool, the in-flight list): they never throw.
// A failure (a sticky error after a kernel fault) is printed once and kept for freeError(); the
// error itself is reported by the next checked call, against the node that makes it.
namespace {
std::mutex g_freeMutex;
std::string g_freeError;

void freeFailed(const char* call, cudaError_t e) noexcept {
    (void)cudaGetLastError();
    try {
        std::lock_guard<std::mutex> lock(g_freeMutex);
        if (!g_freeError.empty()) return;
        g_freeError = std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
        std::fprintf(stderr, "passlens: %s (further free errors are not printed)\n", g_freeError.c_str());
    } catch (...) {}
}
} // namespace

std::string freeError() {
    std::lock_guard<std::mutex> lock(g_freeMutex);
    return g_freeError;
}

void deviceFree(void* p, int device) noexcept {
    if (!p) return;
    hostWork();
    // waits for work still using the buffer on the stream
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) {
        cudaStream_t s = nullptr;
        try {
            s = state(device).stream;
        } catch (...) {
            freeFailed("cudaStreamSynchronize", cudaErrorInvalidDevice);
            return;
        }
        e = cudaStreamSynchronize(s);
    }
    if (e != cudaSuccess) freeFailed("cudaStreamSynchronize", e);
    e = cudaFree(p); // freed even after a fault, so the memory is not lost while the process lives
    if (e != cudaSuccess) freeFailed("cudaFree", e);
}

void* pinnedAlloc(std::size_t bytes) {
    hostWork();
    void* p = nullptr;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return p;
}

void pinnedFree(void* p) noexcept {
    if (!p) return;
    hostWork();
    const cudaError_t e = cudaFreeHost(p);
    if (e != cudaSuccess) freeFailed("cudaFreeHost", e);
}

void copyHtoD(void* dst, const void* src, std::size_t bytes, int device) {
    if (bytes) PL_CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, streamOf(device)));
}

bool copyHtoDStaged(void* dst, const void* src, std::size_t bytes, int device) {
    if (!bytes) return true;
    static std::mutex stagingMutex; // one upload at a time through the buffers
    std::lock_guard<std::mutex> lock(stagingMutex);
    Staging& st = state(device).staging;
    for (int i = 0; i < 2; ++i) { // made on first use (again after a failure)
        if (!st.buffer[i]) st.buffer[i] = pinnedAlloc(kStageBytes);
        if (st.buffer[i] && !st.read[i] &&
            cudaEventCreateWithFlags(&st.read[i], cudaEventDisableTiming) != cudaSuccess) {
            (void)cudaGetLastError();
            st.read[i] = nullptr;
        }
        if (!st.buffer[i] || !st.read[i]) return false;
    }
    for (std::size_t off = 0; off < bytes; off += kStageBytes) {
        const std::size_t n = bytes - off < kStageBytes ? bytes - off : kStageBytes;
        const int i = st.next;
        st.next ^= 1;
        hostWork(); // waiting for the buffer and filling it are the host's
        if (st.pending[i]) PL_CK(cudaEventSynchronize(st.read[i]));
        st.pending[i] = false;
        std::memcpy(st.buffer[i], static_cast<const char*>(src) + off, n);
        cudaStream_t s = streamOf(device);
        PL_CK(cudaMemcpyAsync(static_cast<char*>(dst) + off, st.buffer[i], n, cudaMemcpyHostToDevice, s));
        PL_CK(cudaEventRecord(st.read[i], s));
        st.pending[i] = true;
    }
    return true;
}

void copyDtoH(void* dst, const void* src, std::size_t bytes, int device) {
    if (bytes) PL_CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, streamOf(device)));
    synchronize(device);
}

void copyDtoD(void* dst, int dstDevice, const void* src, int srcDevice, std::size_t bytes) {
    if (!bytes) return;
    if (dstDevice == srcDevice) {
        PL_CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, streamOf(dstDevice)));
    } else {
        synchronize(srcDevice);
        PL_CK(cudaMemcpyPeerAsync(dst, dstDevice, src, srcDevice, bytes, streamOf(dstDevice)));
    }
}

void memsetDevice(void* dst, int byte, std::size_t bytes, int device) {
    if (bytes) PL_CK(cudaMemsetAsync(dst, byte, bytes, streamOf(device)));
}

void synchronize(int device) {
    hostWork(); // the wait is the host's; the work waited for is in the segments already
    DeviceState& s = state(device);
    PL_CK(cudaSetDevice(device));
    PL_CK(cudaStreamSynchronize(s.stream));
}

Timer* timerCreate(int device) {
    auto* t = new Timer;
    t->device = device;
    return t;
}

void timerDestroy(Timer* t) {
    if (!t) return;
    if (t_active == t) t_active = nullptr;
    for (auto& [start, stop] : t->segments) {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    delete t;
}

void timerStart(Timer* t) {
    hostWork(); // a timer left running (its node failed) ends here
    t->used = 0;
    t->open = false;
    t->failed = false;
    t_active = t;
}

void timerStop(Timer* t) {
    if (t_active != t) return;
    hostWork();
    t_active = nullptr;
}

float timerElapsedMs(Timer* t) {
    if (t->failed) throw std::runtime_error("the CUDA events of a timing window could not be recorded");
    float total = 0;
    for (std::size_t i = 0; i < t->used; ++i) {
        PL_CK(cudaEventSynchronize(t->segments[i].second));
        float ms = 0;
        PL_CK(cudaEventElapsedTime(&ms, t->segments[i].first, t->segments[i].second));
        total += ms;
    }
    return total;
}

void gemm(int dtype, bool transA, bool transB, long long M, long long N, long long K, double alpha, const void* A,
          long long lda, const void* B, long long ldb, double beta, void* C, long long ldc, long long batch,
          long long strideA, long long strideB, long long strideC, int device) {
    if (M == 0 || N == 0 || batch == 0) return;
    if (K == 0) {
        // C = beta*C without reading A or B; cuBLAS still wants leading dimensions >= 1
        lda = lda < 1 ? 1 : lda;
        ldb = ldb < 1 ? 1 : ldb;
    }
    DeviceState& ds = state(device);
    PL_CK(cudaSetDevice(device));
    if (!ds.blas) hostWork(); // loading cuBLAS and creating its handle are not the node's kernels
    Blas& lib = needBlas();
    if (!ds.blas) {
        PL_CB(lib.create(&ds.blas));
        PL_CB(lib.setStream(ds.blas, ds.stream));
    }
    (void)streamOf(device); // the cuBLAS calls below queue work on the stream
    cublasHandle_t h = ds.blas;
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    const cublasOperation_t ta = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (dtype == F32) {
        const float a = static_cast<float>(alpha), b = static_cast<float>(beta);
        if (batch == 1)
            PL_CB(lib.sgemm(h, ta, tb, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &a,
                            static_cast<const float*>(B), static_cast<int>(ldb), static_cast<const float*>(A),
                            static_cast<int>(lda), &b, static_cast<float*>(C), static_cast<int>(ldc)));
        else
            PL_CB(lib.sgemmBatched(h, ta, tb, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &a,
                                   static_cast<const float*>(B), static_cast<int>(ldb), strideB,
                                   static_cast<const float*>(A), static_cast<int>(lda), strideA, &b,
                                   static_cast<float*>(C), static_cast<int>(ldc), strideC, static_cast<int>(batch)));
    } else if (dtype == F64) {
        if (batch == 1)
            PL_CB(lib.dgemm(h, ta, tb, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha,
                            static_cast<const double*>(B), static_cast<int>(ldb), static_cast<const double*>(A),
                            static_cast<int>(lda), &beta, static_cast<double*>(C), static_cast<int>(ldc)));
        else
            PL_CB(lib.dgemmBatched(h, ta, tb, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha,
                                   static_cast<const double*>(B), static_cast<int>(ldb), strideB,
                                   static_cast<const double*>(A), static_cast<int>(lda), strideA, &beta,
                                   static_cast<double*>(C), static_cast<int>(ldc), strideC, static_cast<int>(batch)));
    } else {
        throw std::runtime_error("cuBLAS GEMM supports float32 and float64, got dtype code " + std::to_string(dtype));
    }
}

} // namespace passlens::cuda
