// The emulated CUDA runtime: host memory, streams as queues run at synchronisations, events,
// errors (sticky and not), injections. See include/cuda_runtime_api.h for the contract.
#include "EmuInternal.h"
#include "EmuControl.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct CUevent_st {
    bool timing = true; // false: made with cudaEventDisableTiming
    std::shared_ptr<passlens::cuda::emu::EventState> state = std::make_shared<passlens::cuda::emu::EventState>();
};

namespace passlens::cuda::emu {

namespace {

constexpr std::size_t kGuard = 256;        // guard bytes before and after each allocation
constexpr unsigned char kGuardByte = 0xA5; // distinct from the poison 0xFF
constexpr unsigned char kPoisonByte = 0xFF;
constexpr std::size_t kQuarantineBytes = std::size_t(64) << 20;
constexpr std::size_t kQuarantineEntries = 1024;

constexpr std::size_t kArenaBytes = std::size_t(1) << 40; // address space reserved for device memory
constexpr std::size_t kPage = 4096;

// Device memory lives in one reserved range that is inaccessible (PROT_NONE) except while the
// emulated device works (queued operations, the runtime's own poisoning and guard checks): host
// code that dereferences a device pointer faults, as it would on a GPU. Blocks leaving the
// quarantine are reused for blocks of the same size, so the range stays near the peak in use
// (each access switch changes the protection of all of it).
struct Arena {
    char* base = nullptr;
    std::size_t used = 0;
    int open = 0;
    bool tried = false;
    std::map<std::size_t, std::vector<char*>> reusable; // by block size
};
Arena g_arena; // read by the SIGSEGV handler
struct sigaction g_previousSegv;

std::size_t pageUp(std::size_t n) { return (n + kPage - 1) / kPage * kPage; }

void onSegv(int, siginfo_t* info, void*) {
    const char* a = static_cast<const char*>(info->si_addr);
    if (g_arena.base && a >= g_arena.base && a < g_arena.base + kArenaBytes) {
        const char* msg =
            g_arena.open
                ? "passlens emulated device: a kernel or copy accessed device memory outside every allocation\n"
                : "passlens emulated device: host code accessed device memory outside kernels and copies "
                  "(a GPU would fault or read another address space)\n";
        (void)!write(2, msg, std::strlen(msg));
        void* frames[48];
        backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
    }
    sigaction(SIGSEGV, &g_previousSegv, nullptr); // the fault repeats under the previous handler
}

void arenaInit() {
    g_arena.tried = true;
    void* p = mmap(nullptr, kArenaBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return; // then plain heap blocks, without the access check
    g_arena.base = static_cast<char*>(p);
    struct sigaction sa {};
    sa.sa_sigaction = onSegv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previousSegv);
}

// Device memory is accessible while an AccessScope lives (nested scopes are counted).
struct AccessScope {
    AccessScope() {
        if (!g_arena.tried) arenaInit();
        if (g_arena.base && g_arena.open++ == 0 && g_arena.used)
            mprotect(g_arena.base, pageUp(g_arena.used), PROT_READ | PROT_WRITE);
    }
    ~AccessScope() {
        if (g_arena.base && --g_arena.open == 0 && g_arena.used)
            mprotect(g_arena.base, pageUp(g_arena.used), PROT_NONE);
    }
    AccessScope(const AccessScope&) = delete;
    AccessScope& operator=(const AccessScope&) = delete;
};

// Only the pages of one block accessible (when no AccessScope is open), for the runtime's own
// poisoning and guard checks on allocation and free.
struct BlockAccess {
    char* first = nullptr;
    std::size_t len = 0;
    BlockAccess(char* block, std::size_t bytes) {
        if (!g_arena.base || g_arena.open) return;
        const std::size_t off = static_cast<std::size_t>(block - g_arena.base);
        first = g_arena.base + off / kPage * kPage;
        len = pageUp(off + bytes) - off / kPage * kPage;
        mprotect(first, len, PROT_READ | PROT_WRITE);
    }
    ~BlockAccess() {
        if (first) mprotect(first, len, PROT_NONE);
    }
    BlockAccess(const BlockAccess&) = delete;
    BlockAccess& operator=(const BlockAccess&) = delete;
};

// A block of at least `bytes` (256-aligned; `bytes` becomes its size): a reusable block of up
// to twice the size, else new address space.
char* blockAlloc(std::size_t& bytes) {
    if (!g_arena.tried) arenaInit();
    if (!g_arena.base) return static_cast<char*>(std::aligned_alloc(256, bytes));
    auto it = g_arena.reusable.lower_bound(bytes);
    if (it != g_arena.reusable.end() && it->first <= 2 * bytes) {
        char* p = it->second.back();
        bytes = it->first;
        it->second.pop_back();
        if (it->second.empty()) g_arena.reusable.erase(it);
        return p;
    }
    if (bytes > kArenaBytes - g_arena.used) return nullptr;
    char* p = g_arena.base + g_arena.used;
    const std::size_t before = pageUp(g_arena.used);
    g_arena.used += bytes;
    if (g_arena.open && pageUp(g_arena.used) > before)
        mprotect(g_arena.base + before, pageUp(g_arena.used) - before, PROT_READ | PROT_WRITE);
    return p;
}

void blockRelease(char* block, std::size_t bytes) {
    if (!g_arena.base) {
        std::free(block);
        return;
    }
    g_arena.reusable[bytes].push_back(block); // still poisoned
}

struct Allocation {
    std::size_t bytes = 0;
    char* block = nullptr; // start of the guarded block
    std::size_t blockBytes = 0;
};

struct Runtime {
    std::recursive_mutex mutex;
    cudaError_t last = cudaSuccess;
    cudaError_t sticky = cudaSuccess;
    std::string fault;
    int device = 0;
    int deviceCount = 1;
    std::size_t limit = std::size_t(16) << 30;
    std::size_t live = 0;
    int failAllocAfter = -1;
    int faultLaunchAfter = -1;
    bool failPinned = false;
    long long kernelsRun = 0;
    std::map<const char*, Allocation, std::less<>> device_;
    std::map<const char*, std::size_t, std::less<>> pinned; // cudaMallocHost blocks and their sizes
    long long pinnedAllocations = 0;
    long long pageableCopies = 0;
    bool tracing = false;
    std::vector<std::string> trace;
    std::deque<std::pair<char*, std::size_t>> quarantine;
    std::size_t quarantineBytes = 0;
    CUstream_st legacy; // stream 0
    std::vector<CUstream_st*> streams{&legacy};
};

Runtime& rt() {
    static Runtime* r = new Runtime; // never destroyed: buffers may be freed during static destruction
    return *r;
}

cudaError_t setLast(cudaError_t e) {
    if (e != cudaSuccess) rt().last = e;
    return e;
}

// Runtime calls after a sticky error return it.
#define EMU_ENTER()                                                                                                    \
    std::lock_guard<std::recursive_mutex> lock_(rt().mutex);                                                           \
    if (rt().sticky != cudaSuccess) return rt().sticky

CUstream_st* streamOf(cudaStream_t s) { return s ? s : &rt().legacy; }

const Allocation* findAllocation(const void* p, std::size_t bytes, const char** base = nullptr) {
    Runtime& r = rt();
    const char* c = static_cast<const char*>(p);
    auto it = r.device_.upper_bound(c);
    if (it == r.device_.begin()) return nullptr;
    --it;
    if (c < it->first || c + bytes > it->first + it->second.bytes ||
        (bytes == 0 && c >= it->first + it->second.bytes && it->second.bytes))
        return nullptr;
    if (base) *base = it->first;
    return &it->second;
}

bool guardsIntact(const char* user, const Allocation& a) {
    for (const char* p = a.block; p < user; ++p)
        if (static_cast<unsigned char>(*p) != kGuardByte) return false;
    for (const char* p = user + a.bytes; p < a.block + a.blockBytes; ++p)
        if (static_cast<unsigned char>(*p) != kGuardByte) return false;
    return true;
}

// After each operation: every live allocation's guard bytes (an out-of-bounds write of the
// operation shows here, attributed to it).
void checkGuards(const std::string& opName) {
    Runtime& r = rt();
    if (r.sticky != cudaSuccess) return;
    for (const auto& [user, a] : r.device_)
        if (!guardsIntact(user, a)) {
            raiseFault(cudaErrorIllegalAddress,
                       opName + " wrote outside a device allocation of " + std::to_string(a.bytes) + " bytes");
            return;
        }
}

void drainUntil(CUstream_st* s, const EventState* until) {
    Runtime& r = rt();
    if (s->queue.empty()) return;
    AccessScope access;
    while (!s->queue.empty()) {
        Op op = std::move(s->queue.front());
        s->queue.pop_front();
        if (r.sticky != cudaSuccess) continue; // the context is lost: queued work is dropped
        if (op.isKernel) ++r.kernelsRun;
        op.run();
        checkGuards(op.name);
        if (until && op.event == until) return;
    }
}

void drainAll() {
    for (CUstream_st* s : rt().streams) drainUntil(s, nullptr);
}

void enqueue(CUstream_st* s, Op op) {
    traceCall("queue " + op.name);
    s->queue.push_back(std::move(op));
}

// whether [p, p + bytes) lies in page-locked memory from cudaMallocHost
bool isPinned(const void* p, std::size_t bytes) {
    const Runtime& r = rt();
    const char* c = static_cast<const char*>(p);
    auto it = r.pinned.upper_bound(c);
    if (it == r.pinned.begin()) return false;
    --it;
    return c >= it->first && c + bytes <= it->first + it->second;
}

// a device range, or an error
cudaError_t checkDeviceRange(const void* p, std::size_t bytes) {
    return findAllocation(p, bytes) ? cudaSuccess : cudaErrorInvalidValue;
}
bool isDevice(const void* p) { return findAllocation(p, 1) != nullptr; }

cudaError_t queueCopy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, CUstream_st* s,
                      const char* what) {
    if (bytes == 0) return cudaSuccess;
    if (!dst || !src) return setLast(cudaErrorInvalidValue);
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return setLast(cudaErrorInvalidMemcpyDirection);
    if (kind == cudaMemcpyDefault) {
        const bool sd = isDevice(src), dd = isDevice(dst);
        kind = sd ? (dd ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost)
                  : (dd ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost);
    }
    const bool srcDev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    const bool dstDev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    // the direction must match the pointers (a real device faults or copies garbage otherwise)
    if (srcDev ? checkDeviceRange(src, bytes) != cudaSuccess : isDevice(src)) return setLast(cudaErrorInvalidValue);
    if (dstDev ? checkDeviceRange(dst, bytes) != cudaSuccess : isDevice(dst)) return setLast(cudaErrorInvalidValue);
    if ((kind == cudaMemcpyHostToDevice && !isPinned(src, bytes)) ||
        (kind == cudaMemcpyDeviceToHost && !isPinned(dst, bytes)))
        ++rt().pageableCopies;
    // the source is read when the copy runs (not at the call), for pinned and pageable memory alike
    enqueue(s, Op{what, [dst, src, bytes] { std::memmove(dst, src, bytes); }, nullptr, false});
    return cudaSuccess;
}

} // namespace

void raiseFault(cudaError_t e, const std::string& what) {
    Runtime& r = rt();
    if (r.sticky != cudaSuccess) return;
    r.sticky = e;
    r.last = e;
    r.fault = what;
    std::fprintf(stderr, "passlens emulated device: %s (%s, sticky)\n", what.c_str(), cudaGetErrorName(e));
}

bool takeKernelFault() {
    Runtime& r = rt();
    if (r.faultLaunchAfter < 0) return false;
    return r.faultLaunchAfter-- == 0;
}

void enqueueOp(cudaStream_t stream, Op op) { enqueue(streamOf(stream), std::move(op)); }
void traceCall(const std::string& call) {
    Runtime& r = rt();
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    if (r.tracing) r.trace.push_back(call);
}
std::recursive_mutex& runtimeMutex() { return rt().mutex; }
cudaError_t stickyError() { return rt().sticky; }
cudaError_t setLastError(cudaError_t e) { return setLast(e); }

// ---------------------------------------------------------------- controls (EmuControl.h)
void failAllocation(int n) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    rt().failAllocAfter = n;
}
void failPinnedAllocation(bool on) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    rt().failPinned = on;
}
void faultKernel(int n) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    rt().faultLaunchAfter = n;
}
void setMemoryLimit(std::size_t bytes) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    rt().limit = bytes;
}
void setDeviceCount(int n) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    rt().deviceCount = std::clamp(n, 1, 8);
}
void reset() {
    Runtime& r = rt();
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    for (CUstream_st* s : r.streams) s->queue.clear();
    r.sticky = r.last = cudaSuccess;
    r.failAllocAfter = r.faultLaunchAfter = -1;
    r.failPinned = false;
    r.deviceCount = 1;
    r.device = 0;
}
void traceCalls(bool on) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    if (on) rt().trace.clear();
    rt().tracing = on;
}
std::vector<std::string> callTrace() {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    return rt().trace;
}
std::string lastFault() {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    return rt().fault;
}
Stats stats() {
    Runtime& r = rt();
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    Stats st;
    st.kernelsRun = r.kernelsRun;
    for (CUstream_st* s : r.streams)
        for (const Op& op : s->queue) {
            ++st.opsQueued;
            st.kernelsQueued += op.isKernel;
        }
    st.liveBytes = r.live;
    st.liveAllocations = static_cast<long long>(r.device_.size());
    st.pinnedAllocations = r.pinnedAllocations;
    st.pageableCopies = r.pageableCopies;
    return st;
}
bool isDevicePointer(const void* p) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    return isDevice(p);
}

} // namespace passlens::cuda::emu

using namespace passlens::cuda::emu;

// ---------------------------------------------------------------- errors
const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    }
    return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    }
    return "unknown error";
}

cudaError_t cudaGetLastError() {
    Runtime& r = rt();
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    if (r.sticky != cudaSuccess) return r.sticky;
    const cudaError_t e = r.last;
    r.last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError() {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    return rt().sticky != cudaSuccess ? rt().sticky : rt().last;
}

// ---------------------------------------------------------------- devices
cudaError_t cudaGetDeviceCount(int* count) {
    if (!count) return setLast(cudaErrorInvalidValue);
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    *count = rt().deviceCount;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
    EMU_ENTER();
    if (!p) return setLast(cudaErrorInvalidValue);
    if (device < 0 || device >= rt().deviceCount) return setLast(cudaErrorInvalidDevice);
    *p = cudaDeviceProp{};
    std::snprintf(p->name, sizeof p->name, "PassLens emulated device");
    p->totalGlobalMem = rt().limit;
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 1;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    EMU_ENTER();
    if (device < 0 || device >= rt().deviceCount) return setLast(cudaErrorInvalidDevice);
    rt().device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
    EMU_ENTER();
    if (!device) return setLast(cudaErrorInvalidValue);
    *device = rt().device;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
    EMU_ENTER();
    traceCall("cudaDeviceSynchronize");
    drainAll();
    return rt().sticky;
}

// ---------------------------------------------------------------- streams
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, 0); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) {
    EMU_ENTER();
    if (!s) return setLast(cudaErrorInvalidValue);
    *s = new CUstream_st;
    rt().streams.push_back(*s);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    EMU_ENTER();
    auto& v = rt().streams;
    auto it = std::find(v.begin(), v.end(), s);
    if (!s || it == v.end()) return setLast(cudaErrorInvalidResourceHandle);
    drainUntil(s, nullptr); // pending work completes first, as on a device
    v.erase(it);
    delete s;
    return rt().sticky;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    EMU_ENTER();
    CUstream_st* st = streamOf(s);
    if (std::find(rt().streams.begin(), rt().streams.end(), st) == rt().streams.end())
        return setLast(cudaErrorInvalidResourceHandle);
    traceCall("cudaStreamSynchronize");
    drainUntil(st, nullptr);
    return rt().sticky;
}

// ---------------------------------------------------------------- memory
cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
    EMU_ENTER();
    if (!ptr) return setLast(cudaErrorInvalidValue);
    *ptr = nullptr;
    Runtime& r = rt();
    traceCall("cudaMalloc");
    if (r.failAllocAfter == 0) return setLast(cudaErrorMemoryAllocation);
    if (r.failAllocAfter > 0) --r.failAllocAfter;
    if (bytes == 0) return cudaSuccess;
    if (bytes > r.limit || r.live > r.limit - bytes) return setLast(cudaErrorMemoryAllocation);
    Allocation a;
    a.bytes = bytes;
    a.blockBytes = (kGuard + bytes + kGuard + kGuard - 1) / kGuard * kGuard;
    a.block = blockAlloc(a.blockBytes);
    if (!a.block) return setLast(cudaErrorMemoryAllocation);
    BlockAccess access(a.block, a.blockBytes);
    char* user = a.block + kGuard;
    std::memset(a.block, kGuardByte, a.blockBytes);
    std::memset(user, kPoisonByte, bytes); // cudaMalloc memory is not initialised
    r.device_[user] = a;
    r.live += bytes;
    *ptr = user;
    return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
    Runtime& r = rt();
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    if (!ptr) return r.sticky;
    auto it = r.device_.find(static_cast<const char*>(ptr));
    if (it == r.device_.end()) return r.sticky != cudaSuccess ? r.sticky : setLast(cudaErrorInvalidValue);
    traceCall("cudaFree");
    drainAll(); // cudaFree synchronises the device
    Allocation a = it->second;
    BlockAccess access(a.block, a.blockBytes);
    r.device_.erase(it);
    r.live -= a.bytes;
    if (r.sticky == cudaSuccess && !guardsIntact(static_cast<char*>(ptr), a))
        raiseFault(cudaErrorIllegalAddress,
                   "a device allocation of " + std::to_string(a.bytes) + " bytes was written outside its bounds");
    // poisoned and kept a while, so a stale pointer reads NaN instead of a newer buffer
    std::memset(a.block, kPoisonByte, a.blockBytes);
    r.quarantine.emplace_back(a.block, a.blockBytes);
    r.quarantineBytes += a.blockBytes;
    while (r.quarantine.size() > kQuarantineEntries || r.quarantineBytes > kQuarantineBytes) {
        blockRelease(r.quarantine.front().first, r.quarantine.front().second);
        r.quarantineBytes -= r.quarantine.front().second;
        r.quarantine.pop_front();
    }
    return r.sticky;
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) {
    EMU_ENTER();
    if (!ptr) return setLast(cudaErrorInvalidValue);
    *ptr = nullptr;
    traceCall("cudaMallocHost");
    if (rt().failPinned) return setLast(cudaErrorMemoryAllocation);
    *ptr = std::aligned_alloc(64, std::max<std::size_t>(64, (bytes + 63) / 64 * 64));
    if (!*ptr) return setLast(cudaErrorMemoryAllocation);
    rt().pinned[static_cast<const char*>(*ptr)] = bytes;
    ++rt().pinnedAllocations;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
    Runtime& r = rt();
    std::lock_guard<std::recursive_mutex> lock(r.mutex);
    if (!ptr) return r.sticky;
    if (!r.pinned.erase(static_cast<const char*>(ptr)))
        return r.sticky != cudaSuccess ? r.sticky : setLast(cudaErrorInvalidValue);
    traceCall("cudaFreeHost");
    drainAll(); // cudaFreeHost synchronises the device
    std::free(ptr);
    return r.sticky;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
    EMU_ENTER();
    return queueCopy(dst, src, bytes, kind, streamOf(s), "cudaMemcpyAsync");
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
    EMU_ENTER();
    const cudaError_t e = queueCopy(dst, src, bytes, kind, &rt().legacy, "cudaMemcpy");
    if (e != cudaSuccess) return e;
    drainUntil(&rt().legacy, nullptr); // synchronous on the legacy default stream
    return rt().sticky;
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice, std::size_t bytes,
                                cudaStream_t s) {
    EMU_ENTER();
    if (dstDevice < 0 || dstDevice >= rt().deviceCount || srcDevice < 0 || srcDevice >= rt().deviceCount)
        return setLast(cudaErrorInvalidDevice);
    return queueCopy(dst, src, bytes, cudaMemcpyDeviceToDevice, streamOf(s), "cudaMemcpyPeerAsync");
}

cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t s) {
    EMU_ENTER();
    if (bytes == 0) return cudaSuccess;
    if (checkDeviceRange(dst, bytes) != cudaSuccess) return setLast(cudaErrorInvalidValue);
    enqueue(streamOf(s),
            Op{"cudaMemsetAsync", [dst, value, bytes] { std::memset(dst, value, bytes); }, nullptr, false});
    return cudaSuccess;
}

cudaError_t cudaMemset(void* dst, int value, std::size_t bytes) {
    EMU_ENTER();
    const cudaError_t e = cudaMemsetAsync(dst, value, bytes, nullptr);
    if (e != cudaSuccess) return e;
    drainUntil(&rt().legacy, nullptr);
    return rt().sticky;
}

// ---------------------------------------------------------------- events
cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags) {
    EMU_ENTER();
    if (!e || (flags & ~unsigned(cudaEventDisableTiming)) != 0) return setLast(cudaErrorInvalidValue);
    *e = new CUevent_st;
    (*e)->timing = (flags & cudaEventDisableTiming) == 0;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    std::lock_guard<std::recursive_mutex> lock(rt().mutex);
    if (!e) return setLast(cudaErrorInvalidResourceHandle);
    delete e; // a queued record keeps its state alive
    return rt().sticky;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    EMU_ENTER();
    if (!e) return setLast(cudaErrorInvalidResourceHandle);
    std::shared_ptr<EventState> st = e->state;
    st->recorded = true;
    st->done = false;
    st->stream = streamOf(s);
    const long long gen = ++st->generation;
    Op op{e->timing ? "cudaEventRecord" : "cudaEventRecord (sync only)",
          [st, gen] {
              if (st->generation != gen) return;
              st->done = true;
              st->when = std::chrono::steady_clock::now();
          },
          st.get(), false};
    enqueue(streamOf(s), std::move(op));
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    EMU_ENTER();
    if (!e) return setLast(cudaErrorInvalidResourceHandle);
    traceCall("cudaEventSynchronize");
    EventState* st = e->state.get();
    if (st->recorded && !st->done) drainUntil(static_cast<CUstream_st*>(st->stream), st);
    return rt().sticky;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
    EMU_ENTER();
    if (!ms || !start || !stop) return setLast(cudaErrorInvalidValue);
    if (!start->state->recorded || !stop->state->recorded || !start->timing || !stop->timing)
        return setLast(cudaErrorInvalidResourceHandle);
    if (!start->state->done || !stop->state->done) return setLast(cudaErrorNotReady);
    *ms = std::chrono::duration<float, std::milli>(stop->state->when - start->state->when).count();
    return cudaSuccess;
}
