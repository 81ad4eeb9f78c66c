#pragma once
// Internal: the scalar ops of Elemwise expressions. Plain C++17, shared with the CUDA sources.
#include <cstdint>

namespace passlens::cpu {

enum class ScalarOp : std::uint8_t {
    Input,
    Add,
    Sub,
    Mul,
    TrueDiv,
    IntDiv,
    Mod,
    Neg,
    Abs,
    Exp,
    Log,
    Sqrt,
    Sqr,
    Pow,
    Maximum,
    Minimum,
    Tanh,
    Sigmoid,
    Relu,
    Erf,
    Sin,
    Cos,
    Floor,
    Ceil,
    Round,
    Sgn,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Neq,
    And,
    Or,
    Not,
    Switch,
    Identity,
    Cast,
    Clip,
    LeakyRelu,
    HardSigmoid,
    Reciprocal
};

} // namespace passlens::cpu
