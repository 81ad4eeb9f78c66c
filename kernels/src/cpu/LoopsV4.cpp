// The hot loops for x86-64-v4 (AVX-512 F/BW/CD/DQ/VL, 512-bit vectors), compiled with
// -march=x86-64-v4 -mprefer-vector-width=512 -ffp-contract=off (see kernels/CMakeLists.txt), so
// they give the bits of the other builds; chosen at run time by loops().
#define PASSLENS_LOOPS_NS v4
#define PASSLENS_LOOPS_NAME "x86-64-v4"
#include "Loops.inl"
