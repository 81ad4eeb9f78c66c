// The hot loops for baseline x86-64 (and other CPUs), plus the run-time choice (Loops.h).
#define PASSLENS_LOOPS_NS baseline
#define PASSLENS_LOOPS_NAME "baseline"
#include "Loops.inl"

namespace passlens::cpu {

namespace {
// The best build the CPU supports among those `choice` allows.
const LoopTable* pickLoops(CpuLoops choice) {
#if defined(__x86_64__) && defined(PASSLENS_HAVE_LOOPS_V3)
    __builtin_cpu_init();
    const bool v3ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#if defined(PASSLENS_HAVE_LOOPS_V4)
    if (choice == CpuLoops::Auto && v3ok && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return &v4::table();
#endif
    if (choice != CpuLoops::Baseline && v3ok) return &v3::table();
#else
    (void)choice;
#endif
    return &baseline::table();
}
} // namespace

const LoopTable& loops(CpuLoops choice) {
    static const LoopTable* const picked[] = {pickLoops(CpuLoops::Auto), pickLoops(CpuLoops::Baseline),
                                              pickLoops(CpuLoops::V3)};
    return *picked[static_cast<std::size_t>(choice)];
}

#if !defined(PASSLENS_HAVE_LOOPS_V3)
namespace v3 {
const LoopTable& table() { return baseline::table(); }
} // namespace v3
#endif
#if !defined(PASSLENS_HAVE_LOOPS_V4)
namespace v4 {
const LoopTable& table() { return v3::table(); }
} // namespace v4
#endif

} // namespace passlens::cpu
