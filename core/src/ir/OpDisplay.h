#pragma once
// Display strings of interned ops (Op::str), computed once when OpRegistry interns an op.
#include "passlens/ir/Op.h"

#include <string>

namespace passlens::opkinds {

/// The Theano-style display string of `op` (see Op::str): attributes of its kind's own form
/// (`Elemwise{clip{0,6}}`, `GpuAlloc<None>{memset_0=True}`, `CAReduce{add}{axis=[1]}`), Onnx ops
/// by kind only, other kinds as `Kind{name=value, ...}`.
std::string displayString(const Op& op);

} // namespace passlens::opkinds
