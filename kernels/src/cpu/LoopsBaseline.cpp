// The hot loops for baseline x86-64 (and other CPUs), plus the run-time choice (Loops.h).
#define PASSLENS_LOOPS_NS baseline
#define PASSLENS_LOOPS_NAME "baseline"
#include "Loops.inl"

#include <cstdlib>
#include <cstring>

namespace passlens::cpu {

const LoopTable& loops() {
    static const LoopTable* t = [] {
#if defined(__x86_64__) && defined(PASSLENS_HAVE_LOOPS_V3)
        const char* force = std::getenv("PASSLENS_CPU_LOOPS");
        const bool baselineOnly = force && std::strcmp(force, "baseline") == 0,
                   v3Only = force && std::strcmp(force, "v3") == 0;
        __builtin_cpu_init();
        const bool v3ok =
            __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#if defined(PASSLENS_HAVE_LOOPS_V4)
        if (!baselineOnly && !v3Only && v3ok && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
            return &v4::table();
#endif
        if (!baselineOnly && v3ok) return &v3::table();
#endif
        return &baseline::table();
    }();
    return *t;
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
