// The hot loops for x86-64-v3 (AVX2, FMA, BMI2), compiled with -march=x86-64-v3
// -ffp-contract=off (see kernels/CMakeLists.txt); chosen at run time by loops().
#define PASSLENS_LOOPS_NS v3
#define PASSLENS_LOOPS_NAME "x86-64-v3"
#include "Loops.inl"
