// The hot loops for baseline x86-64 (and other CPUs), plus the run-time choice (Loops.h).
#define PASSLENS_LOOPS_NS baseline
#define PASSLENS_LOOPS_NAME "baseline"
#include "Loops.inl"

#include <cstdlib>
#include <cstring>

namespace passlens::cpu {

const LoopTable& loops()
{
    static const LoopTable* t = [] {
#if defined(__x86_64__) && defined(PASSLENS_HAVE_LOOPS_V3)
        const char* force = std::getenv("PASSLENS_CPU_LOOPS");
        __builtin_cpu_init();
        if (!(force && std::strcmp(force, "baseline") == 0) && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
            __builtin_cpu_supports("bmi2"))
            return &v3::table();
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

} // namespace passlens::cpu
