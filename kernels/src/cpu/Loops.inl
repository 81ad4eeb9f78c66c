// The CPU backend's hot loops, included by LoopsBaseline.cpp, LoopsV3.cpp and LoopsV4.cpp with
// PASSLENS_LOOPS_NS set to the namespace of that build (see Loops.h). No FP contraction in any
// build, so all give the same bits.
#include "Loops.h"

#include <passlens/ir/Error.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace passlens::cpu::PASSLENS_LOOPS_NS {

namespace {

// The loops by family; the files share nothing but this namespace.
#include "LoopsElemwise.inl"
#include "LoopsConv.inl"
#include "LoopsPool.inl"

} // namespace

const LoopTable& table() {
    static const LoopTable t = {
        PASSLENS_LOOPS_NAME,
        [](const ScalarProgram& p, const std::vector<Tensor>& in, Tensor& out) { run<float>(p, in, out); },
        [](const ScalarProgram& p, const std::vector<Tensor>& in, Tensor& out) { run<double>(p, in, out); },
        [](const ScalarProgram& p, const std::vector<Tensor>& in, Tensor& out) { run<std::int64_t>(p, in, out); },
        &im2col<float>,
        &im2col<double>,
        &depthwise<float>,
        &depthwise<double>,
        &poolT<float>,
        &poolT<double>,
        &winogradInput,
        &winogradOutput,
        &epilogueRows,
    };
    return t;
}

} // namespace passlens::cpu::PASSLENS_LOOPS_NS
