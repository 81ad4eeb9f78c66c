// The emulated device's grid runner. Blocks run one after another. Within a block, threads run
// on fibers (ucontext) in thread order: a fiber runs a thread to its end and then starts the next
// unstarted thread itself, so a kernel without collectives costs one fiber switch per block.
// A thread that reaches a warp collective or __syncthreads suspends; the next thread starts on
// another fiber. When every lane of the collective's mask has arrived (or every thread of the
// block, for __syncthreads), the waiting threads resume in lane order with the exchanged values:
// warps are in lockstep at every point where lockstep is observable. Misuse a GPU would hang on
// or leave undefined (a lane of the mask exits, threads wait at different collectives, a thread
// exits while others wait at __syncthreads) is a kernel fault: sticky cudaErrorLaunchFailure.
#include "../Launch.h"
#include "EmuInternal.h"

#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define PASSLENS_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PASSLENS_EMU_ASAN 1
#endif
#endif
#ifdef PASSLENS_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

namespace passlens::cuda::emu {

namespace {

constexpr std::size_t kStackBytes = std::size_t(512) << 10;

struct Fiber {
    ucontext_t ctx{};
    char* stack = nullptr;
    bool fresh = true; // must be (re)started from its entry
    int thread = -1;
    ~Fiber() {
        if (stack) munmap(stack, kStackBytes);
    }
};

enum class TState : unsigned char { NotStarted, Running, WaitWarp, WaitBlock, Exited };

struct WarpState {
    unsigned mask = 0;    ///< the pending collective's mask (0: none)
    unsigned arrived = 0; ///< lanes arrived at it
    Collective kind = Collective::Shuffle;
    std::uint64_t value[32] = {};
    int src[32] = {};
    std::uint64_t result[32] = {};
};

struct Scheduler {
    ucontext_t main{};
    const void* mainBottom = nullptr;
    std::size_t mainSize = 0;
    std::vector<std::unique_ptr<Fiber>> fibers;
    std::vector<Fiber*> idle;
    Fiber* current = nullptr;
    const std::function<void()>* body = nullptr;
    const char* name = "";
    int nThreads = 0, next = 0, exited = 0, atBarrier = 0;
    std::vector<TState> state;
    std::vector<Fiber*> fiberOf;
    std::vector<WarpState> warps;
    std::vector<int> readyWarps;
    std::string fault;
    int tid = 0; ///< the running thread
};

Scheduler& sched() {
    static Scheduler s;
    return s;
}

void setThread(Scheduler& s, int tid) {
    s.tid = tid;
    const unsigned t = static_cast<unsigned>(tid);
    threadIdx = uint3{t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y)};
}

// ---- context switches (annotated for AddressSanitizer, which must know the stack in use)
void switchContext(ucontext_t* from, ucontext_t* to, const void* toBottom, std::size_t toSize) {
#ifdef PASSLENS_EMU_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, toBottom, toSize);
    swapcontext(from, to);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    (void)toBottom;
    (void)toSize;
    swapcontext(from, to);
#endif
}

void toMain(Fiber* f) {
    Scheduler& s = sched();
    switchContext(&f->ctx, &s.main, s.mainBottom, s.mainSize);
}

void fault(Scheduler& s, const std::string& why) {
    if (s.fault.empty()) s.fault = why;
}

bool warpComplete(const WarpState& w) { return w.mask && (w.arrived & w.mask) == w.mask; }

void threadExits(Scheduler& s, int tid) {
    s.state[static_cast<std::size_t>(tid)] = TState::Exited;
    ++s.exited;
    const WarpState& w = s.warps[static_cast<std::size_t>(tid / 32)];
    const unsigned bit = 1u << (tid % 32);
    if ((w.mask & bit) && !(w.arrived & bit))
        fault(
            s, "lane " + std::to_string(tid % 32) + " of warp " + std::to_string(tid / 32) +
                   " exited while lanes of mask 0x" +
                   [&] {
                       char b[16];
                       std::snprintf(b, sizeof b, "%08x", w.mask);
                       return std::string(b);
                   }() +
                   " wait at a warp collective");
    if (s.atBarrier > 0)
        fault(s, "thread " + std::to_string(tid) + " exited while other threads of its block wait at __syncthreads");
}

void fiberEntry() {
    Scheduler& s = sched();
#ifdef PASSLENS_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &s.mainBottom, &s.mainSize);
#endif
    for (;;) {
        Fiber* me = s.current;
        while (s.fault.empty() && s.next < s.nThreads) {
            const int tid = s.next++;
            me->thread = tid;
            s.fiberOf[static_cast<std::size_t>(tid)] = me;
            s.state[static_cast<std::size_t>(tid)] = TState::Running;
            setThread(s, tid);
            (*s.body)();
            threadExits(s, tid);
        }
        me->thread = -1;
        toMain(me);
    }
}

Fiber* idleFiber(Scheduler& s) {
    if (!s.idle.empty()) {
        Fiber* f = s.idle.back();
        s.idle.pop_back();
        return f;
    }
    auto f = std::make_unique<Fiber>();
    void* mem = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    f->stack = static_cast<char*>(mem);
    mprotect(f->stack, 4096, PROT_NONE); // overflow guard
    s.fibers.push_back(std::move(f));
    return s.fibers.back().get();
}

void resume(Scheduler& s, Fiber* f) {
    s.current = f;
    if (f->fresh) {
        getcontext(&f->ctx);
        f->ctx.uc_stack.ss_sp = f->stack;
        f->ctx.uc_stack.ss_size = kStackBytes;
        f->ctx.uc_link = nullptr;
        makecontext(&f->ctx, fiberEntry, 0);
        f->fresh = false;
    }
    if (f->thread >= 0) setThread(s, f->thread);
    switchContext(&s.main, &f->ctx, f->stack, kStackBytes);
}

void runBlock(Scheduler& s) {
    s.next = s.exited = s.atBarrier = 0;
    std::fill(s.state.begin(), s.state.end(), TState::NotStarted);
    std::fill(s.fiberOf.begin(), s.fiberOf.end(), nullptr);
    for (WarpState& w : s.warps) w.mask = w.arrived = 0;
    s.readyWarps.clear();
    while (s.exited < s.nThreads && s.fault.empty()) {
        if (!s.readyWarps.empty()) {
            // every lane of the collective arrived: exchange, then resume the lanes in order
            const int wi = s.readyWarps.front();
            s.readyWarps.erase(s.readyWarps.begin());
            WarpState& w = s.warps[static_cast<std::size_t>(wi)];
            const unsigned mask = w.mask;
            std::uint64_t ballot = 0;
            for (int l = 0; l < 32; ++l)
                if ((mask >> l) & 1u) ballot |= (w.value[l] != 0 ? 1ull : 0ull) << l;
            for (int l = 0; l < 32; ++l) {
                if (!((mask >> l) & 1u)) continue;
                if (w.kind == Collective::Ballot)
                    w.result[l] = ballot;
                else if (w.kind == Collective::Shuffle) {
                    const int src = w.src[l];
                    // reading a lane outside the mask is undefined on a GPU
                    if (!((mask >> src) & 1u))
                        fault(s, "lane " + std::to_string(l) + " of warp " + std::to_string(wi) +
                                     " shuffles from lane " + std::to_string(src) + ", which is not in the mask");
                    w.result[l] = w.value[src];
                }
            }
            w.mask = w.arrived = 0;
            for (int l = 0; l < 32 && s.fault.empty(); ++l) {
                if (!((mask >> l) & 1u)) continue;
                const int tid = wi * 32 + l;
                s.state[static_cast<std::size_t>(tid)] = TState::Running;
                Fiber* f = s.fiberOf[static_cast<std::size_t>(tid)];
                resume(s, f);
                if (f->thread < 0) s.idle.push_back(f);
            }
            continue;
        }
        if (s.next < s.nThreads) {
            Fiber* f = idleFiber(s);
            if (!f) {
                fault(s, "cannot map a fiber stack for the emulated threads");
                break;
            }
            resume(s, f);
            if (f->thread < 0) s.idle.push_back(f);
            continue;
        }
        if (s.atBarrier > 0 && s.atBarrier == s.nThreads - s.exited) {
            if (s.exited > 0) {
                fault(s, std::to_string(s.exited) + " threads of the block exited without reaching __syncthreads");
                break;
            }
            s.atBarrier = 0;
            for (int tid = 0; tid < s.nThreads && s.fault.empty(); ++tid) {
                if (s.state[static_cast<std::size_t>(tid)] != TState::WaitBlock) continue;
                s.state[static_cast<std::size_t>(tid)] = TState::Running;
                Fiber* f = s.fiberOf[static_cast<std::size_t>(tid)];
                resume(s, f);
                if (f->thread < 0) s.idle.push_back(f);
            }
            continue;
        }
        int warpWaiting = 0;
        for (TState t : s.state) warpWaiting += t == TState::WaitWarp;
        fault(s, "deadlock: " + std::to_string(warpWaiting) + " threads wait at warp collectives and " +
                     std::to_string(s.atBarrier) + " at __syncthreads, which can never complete");
    }
    // suspended fibers of a faulted block are abandoned and restarted fresh
    for (auto& f : s.fibers)
        if (f->thread >= 0) {
            f->thread = -1;
            f->fresh = true;
            s.idle.push_back(f.get());
        }
}

void runGrid(const char* name, dim3 grid, dim3 block, const std::function<void()>& thread) {
    Scheduler& s = sched();
    s.body = &thread;
    s.name = name;
    s.fault.clear();
    s.nThreads = static_cast<int>(block.x * block.y * block.z);
    s.state.assign(static_cast<std::size_t>(s.nThreads), TState::NotStarted);
    s.fiberOf.assign(static_cast<std::size_t>(s.nThreads), nullptr);
    s.warps.assign(static_cast<std::size_t>((s.nThreads + 31) / 32), WarpState{});
    gridDim = grid;
    blockDim = block;
    for (unsigned z = 0; z < grid.z && s.fault.empty(); ++z)
        for (unsigned y = 0; y < grid.y && s.fault.empty(); ++y)
            for (unsigned x = 0; x < grid.x && s.fault.empty(); ++x) {
                blockIdx = uint3{x, y, z};
                runBlock(s);
            }
    if (!s.fault.empty())
        raiseFault(cudaErrorLaunchFailure, std::string("kernel ") + name + " block (" + std::to_string(blockIdx.x) +
                                               "," + std::to_string(blockIdx.y) + "," + std::to_string(blockIdx.z) +
                                               "): " + s.fault);
}

} // namespace

int laneId() { return sched().tid % 32; }

std::uint64_t warpCollective(Collective kind, unsigned mask, std::uint64_t value, int srcLane) {
    Scheduler& s = sched();
    const int tid = s.tid;
    const int lane = tid % 32, wi = tid / 32;
    WarpState& w = s.warps[static_cast<std::size_t>(wi)];
    const unsigned bit = 1u << lane;
    const int lanesInWarp = std::min(32, s.nThreads - wi * 32);
    const unsigned existing = lanesInWarp == 32 ? 0xffffffffu : ((1u << lanesInWarp) - 1u);
    Fiber* me = s.fiberOf[static_cast<std::size_t>(tid)];
    if (!(mask & bit))
        fault(s, "lane " + std::to_string(lane) + " calls a warp collective with a mask that excludes it");
    else if (mask & ~existing)
        fault(s, "a warp collective's mask names lanes the block does not have");
    else if (w.mask && (w.mask != mask || w.kind != kind))
        fault(s, "lanes of warp " + std::to_string(wi) + " wait at different warp collectives");
    else {
        for (int l = 0; l < 32; ++l)
            if (((mask >> l) & 1u) && s.state[static_cast<std::size_t>(wi * 32 + l)] == TState::Exited)
                fault(s, "lane " + std::to_string(l) + " of the mask has exited");
    }
    if (!s.fault.empty()) {
        toMain(me); // the block is abandoned; this fiber never resumes
        return 0;
    }
    w.mask = mask;
    w.kind = kind;
    w.arrived |= bit;
    w.value[lane] = value;
    w.src[lane] = srcLane;
    s.state[static_cast<std::size_t>(tid)] = TState::WaitWarp;
    if (warpComplete(w)) s.readyWarps.push_back(wi);
    toMain(me);
    return w.result[lane];
}

void blockBarrier() {
    Scheduler& s = sched();
    const int tid = s.tid;
    s.state[static_cast<std::size_t>(tid)] = TState::WaitBlock;
    ++s.atBarrier;
    toMain(s.fiberOf[static_cast<std::size_t>(tid)]);
}

void enqueueGrid(const char* name, dim3 grid, dim3 block, cudaStream_t stream, std::function<void()> thread) {
    std::lock_guard<std::recursive_mutex> lock(runtimeMutex());
    if (stickyError() != cudaSuccess) return; // cudaGetLastError reports it
    const unsigned long long threads = 1ull * block.x * block.y * block.z;
    if (threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64 || grid.x == 0 ||
        grid.y == 0 || grid.z == 0 || grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535) {
        setLastError(cudaErrorInvalidConfiguration);
        return;
    }
    if (takeKernelFault()) {
        enqueueOp(stream,
                  Op{name,
                     [n = std::string(name)] { raiseFault(cudaErrorIllegalAddress, "injected fault in kernel " + n); },
                     nullptr, true});
        return;
    }
    enqueueOp(stream, Op{name, [name, grid, block, thread = std::move(thread)] { runGrid(name, grid, block, thread); },
                         nullptr, true});
}

} // namespace passlens::cuda::emu
