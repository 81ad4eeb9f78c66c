#pragma once
// The scalar-expression engine behind Elemwise / GpuElemwise (incl. fused composites) and the
// ONNX element-wise fallbacks: compiles a ScalarExpr (core/ir/ScalarOps.h: the node's
// elemwiseExpression, a composite's parsed expr) into a program typed with Theano's rules for the
// input dtypes and evaluates it block-wise over broadcast inputs.
#include "passlens/kernels/ExecOptions.h"
#include "passlens/kernels/Tensor.h"

#include <passlens/ir/ScalarOps.h>

#include <memory>
#include <string>
#include <vector>

namespace passlens {
class Apply;
class OutputEpilogue;
} // namespace passlens

namespace passlens::cpu {

/// A node of the expression with its dtype (op, input, args, p0 / p1: ScalarNode's).
struct ExprNode : ScalarNode {
    DType dtype = DType::Float32;
    /// In integer mode: computes on uint64 values (computesInUInt64 of its arguments' dtypes).
    bool unsigned64 = false;
};

/// A parsed expression, nodes in evaluation order (the last one is the root).
struct ScalarProgram {
    std::vector<ExprNode> nodes;
    int nin = 0;
    enum class Mode : std::uint8_t { Float, Double, Int } mode = Mode::Double;
};

/// One step of a chain program: v = op(v, k) (or op(k, v) when constFirst), k the per-row value
/// of input `input` (unused for Relu / Clip). Same float arithmetic as the program's node.
struct ChainStep {
    ScalarOp op = ScalarOp::Add; ///< Add, Mul, Sub, TrueDiv, Maximum, Minimum, Relu or Clip
    int input = -1;
    bool constFirst = false;
    float lo = 0, hi = 0; ///< Clip bounds
};

/// The steps of `prog` when it is a chain from input `yInput`: every node but the inputs takes
/// the previous chain value once (binary ops: and one other input), the root ends the chain,
/// and `yInput` is read once. Empty when `prog` is not of that form (bias add, relu / clip of a
/// bias add, batch-norm scale and shift are; x * sigmoid(x) is not).
std::vector<ChainStep> compileChain(const ScalarProgram& prog, int yInput);

/// Epilogue fusion (Executor): the inputs of a float-mode program applied in place to rows of a
/// float32 kernel output. Input `yInput` is the row; input i != yInput is a float32 constant read
/// as values[i][c * channelStride[i]] for row (channel) c (stride 0: a scalar).
struct RowEpilogue {
    int yInput = 0;
    std::vector<const float*> values;
    std::vector<std::int64_t> channelStride;
    /// When not empty: the program as a chain of in-place steps on the row (compileChain), run
    /// one step at a time over L1-sized blocks instead of interpreting the program.
    std::vector<ChainStep> chain;
};

/// The epilogue of an Elemwise / GpuElemwise `node` whose input `yInput` is a kernel's float32
/// output and whose other inputs are float32 host constants (`constants`, indexed like the
/// node's inputs; the entry at yInput is ignored) of the same rank with size 1 on every axis but
/// axis 1 (per-channel values or scalars), and whose program runs in float mode with a float32
/// result; null when the node is not of that form, with the reason in `why` when given ("input 2
/// is not a per-channel constant"). `options` choose the loops and the chain form.
std::unique_ptr<OutputEpilogue> makeElemwiseEpilogue(const Apply& node, int yInput,
                                                     const std::vector<Tensor>& constants, const ExecOptions& options,
                                                     std::string* why = nullptr);

/// Types `expr` for input dtypes `inTypes` (scalarResultType per node) and chooses the compute
/// mode; float16 values are computed in float32 (float64 for a cast of float64) and each float16
/// node's value rounded to float16, for the ops whose Float16Rule (ScalarOps.h) makes that float16
/// arithmetic. Throws passlens::Error("bad expression ...: why") when it reads an input beyond
/// `inTypes`, for a complex dtype or for a float16 node of another op.
ScalarProgram compileExpr(const ScalarExpr& expr, const std::vector<DType>& inTypes);
/// compileExpr of ScalarExpr::parse(text) (the ONNX element-wise kernels build their text).
ScalarProgram compileExpr(const std::string& text, const std::vector<DType>& inTypes);

/// Evaluates `prog` over `inputs` (equal ranks; a dim of 1 broadcasts) into `out`, whose shape
/// must be the broadcast shape and whose dtype is the result dtype (the root value is converted).
/// `out` may share the buffer of an input of the same shape and dtype. Throws passlens::Error
/// when shapes do not broadcast. `loopsChoice` (ExecOptions::cpuLoops) picks the loops' build.
void evalProgram(const ScalarProgram& prog, const std::vector<Tensor>& inputs, Tensor& out, CpuLoops loopsChoice);

/// The broadcast shape of equal-rank shapes (Theano/NumPy rules); throws naming the axis.
Shape broadcastShapes(const std::vector<Shape>& shapes);

} // namespace passlens::cpu
