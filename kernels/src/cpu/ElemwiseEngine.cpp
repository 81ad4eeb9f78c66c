// Scalar-expression engine of Elemwise (see ElemwiseEngine.h).
#include "ElemwiseEngine.h"
#include "Loops.h"

#include <passlens/ir/Error.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

namespace passlens::cpu {

namespace {

bool exactInFloat(DType d) {
    switch (d) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32:
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16: return true;
    default: return false;
    }
}

// ------------------------------------------------------------------ evaluation
} // namespace

ScalarProgram compileExpr(const std::string& text, const std::vector<DType>& inTypes) {
    return compileExpr(ScalarExpr::parse(text), inTypes);
}

ScalarProgram compileExpr(const ScalarExpr& e, const std::vector<DType>& inTypes) {
    ScalarProgram prog;
    prog.nin = static_cast<int>(inTypes.size());
    if (e.nodes.empty()) throw Error("bad expression: it is empty");
    for (const ScalarNode& sn : e.nodes) {
        ExprNode n;
        static_cast<ScalarNode&>(n) = sn;
        if (n.op == ScalarOp::Input) {
            if (n.input < 0 || n.input >= prog.nin)
                throw Error("bad expression '" + e.str() + "': input i" + std::to_string(n.input) +
                            " does not exist (the node has " + std::to_string(prog.nin) + " inputs)");
            n.dtype = inTypes[static_cast<std::size_t>(n.input)];
        } else if (n.op == ScalarOp::Cast) {
            n.dtype = n.castTo;
        } else {
            // Theano's elemwise type rule, per scalar
            std::vector<DType> argTypes;
            for (int a : n.args) argTypes.push_back(prog.nodes[static_cast<std::size_t>(a)].dtype);
            n.dtype = scalarResultType(n.op, argTypes);
            n.unsigned64 = computesInUInt64(argTypes);
        }
        prog.nodes.push_back(std::move(n));
    }
    // Choose the compute mode.
    const std::size_t nn = prog.nodes.size();
    std::vector<bool> onlyUnderCast(nn, true);
    for (std::size_t i = 0; i < nn; ++i)
        for (int a : prog.nodes[i].args)
            // a float64 input cast to float16 (bfloat16) is rounded (truncated) once, in double mode
            if (prog.nodes[i].op != ScalarOp::Cast || prog.nodes[i].dtype == DType::Float16 ||
                prog.nodes[i].dtype == DType::BFloat16)
                onlyUnderCast[static_cast<std::size_t>(a)] = false;
    if (prog.nodes.back().op == ScalarOp::Input) onlyUnderCast[nn - 1] = false;
    bool floatOk = true, intOk = true;
    for (std::size_t i = 0; i < nn; ++i) {
        const ExprNode& n = prog.nodes[i];
        if (n.op == ScalarOp::Input) {
            if (!(exactInFloat(n.dtype) || (onlyUnderCast[i] && !isComplex(n.dtype)))) floatOk = false;
        } else {
            if (n.dtype != DType::Float32 && n.dtype != DType::Float16 && n.dtype != DType::BFloat16 &&
                n.dtype != DType::Bool)
                floatOk = false;
        }
        if (!(isInteger(n.dtype) || n.dtype == DType::Bool)) intOk = false;
    }
    for (const ExprNode& n : prog.nodes) {
        if (isComplex(n.dtype))
            throw Error("bad expression '" + e.str() + "': dtype " + std::string(dtypeName(n.dtype)) +
                        " is not supported by the CPU backend");
        // float16 values are computed in float32 (or float64) and rounded to float16 at each node
        // (applyNode), which is float16 arithmetic only for the ops the table says; bfloat16 (whose
        // conversion truncates) only for the exact ones
        const ScalarOpInfo& info = scalarOpInfo(n.op);
        const bool refused =
            n.dtype == DType::Float16
                ? info.float16 == Float16Rule::Refused || (info.float16 == Float16Rule::Pair && n.args.size() > 2)
                : n.dtype == DType::BFloat16 && info.float16 != Float16Rule::Exact;
        if (refused && n.op != ScalarOp::Input)
            throw Error("bad expression '" + e.str() + "': " + std::string(info.name) +
                        (n.args.size() > 2 ? " of " + std::to_string(n.args.size()) + " arguments" : std::string()) +
                        " in " + std::string(dtypeName(n.dtype)) +
                        " is not supported by the CPU backend (float32 rounded to " + std::string(dtypeName(n.dtype)) +
                        " is not " + std::string(dtypeName(n.dtype)) + " arithmetic there)");
    }
    prog.mode = floatOk ? ScalarProgram::Mode::Float : intOk ? ScalarProgram::Mode::Int : ScalarProgram::Mode::Double;
    return prog;
}

std::vector<ChainStep> compileChain(const ScalarProgram& prog, int yInput) {
    const std::size_t nn = prog.nodes.size();
    // uses of every node; the chain value must be used exactly once, by the next chain node
    std::vector<int> uses(nn, 0);
    for (const ExprNode& n : prog.nodes)
        for (int a : n.args) ++uses[static_cast<std::size_t>(a)];
    std::vector<ChainStep> steps;
    int head = -1; // node holding the current chain value
    for (std::size_t i = 0; i < nn; ++i) {
        const ExprNode& n = prog.nodes[i];
        if (n.op == ScalarOp::Input) {
            if (n.input == yInput) {
                if (head != -1) return {};
                head = static_cast<int>(i);
            }
            continue;
        }
        if (head == -1 || uses[static_cast<std::size_t>(head)] != 1 || n.dtype != DType::Float32) return {};
        ChainStep st;
        st.op = n.op;
        switch (n.op) {
        case ScalarOp::Relu:
        case ScalarOp::Clip:
            if (n.args.size() != 1 || n.args[0] != head) return {};
            st.lo = static_cast<float>(n.p0);
            st.hi = static_cast<float>(n.p1);
            break;
        case ScalarOp::Add:
        case ScalarOp::Mul:
        case ScalarOp::Sub:
        case ScalarOp::TrueDiv:
        case ScalarOp::Maximum:
        case ScalarOp::Minimum: {
            if (n.args.size() != 2) return {};
            const int other = n.args[0] == head ? n.args[1] : n.args[1] == head ? n.args[0] : -1;
            if (other < 0 || other == head) return {};
            const ExprNode& o = prog.nodes[static_cast<std::size_t>(other)];
            if (o.op != ScalarOp::Input || o.input == yInput || o.dtype != DType::Float32) return {};
            st.input = o.input;
            st.constFirst = n.args[1] == head;
            break;
        }
        default: return {};
        }
        steps.push_back(st);
        head = static_cast<int>(i);
    }
    if (head != static_cast<int>(nn) - 1 || steps.empty()) return {};
    return steps;
}

Shape broadcastShapes(const std::vector<Shape>& shapes) {
    if (shapes.empty()) return {};
    const std::size_t r = shapes[0].size();
    Shape out(r, 1);
    for (const Shape& s : shapes) {
        if (s.size() != r)
            throw Error("inputs have different ranks (" + shapeStr(shapes[0]) + " and " + shapeStr(s) + ")");
        for (std::size_t a = 0; a < r; ++a) {
            if (s[a] == 1) continue;
            if (out[a] == 1)
                out[a] = s[a];
            else if (out[a] != s[a])
                throw Error("shapes " + shapeStr(shapes[0]) + " and " + shapeStr(s) + " do not broadcast at axis " +
                            std::to_string(a));
        }
    }
    // a dim of 0 wins over 1 (numpy)
    for (const Shape& s : shapes)
        for (std::size_t a = 0; a < r; ++a)
            if (s[a] == 0) out[a] = 0;
    return out;
}

void evalProgram(const ScalarProgram& prog, const std::vector<Tensor>& inputs, Tensor& out, CpuLoops loopsChoice) {
    for (const Tensor& t : inputs)
        if (!t.onHost()) throw Error("element-wise kernel got a device tensor");
    if (out.numel() == 0) return;
    const LoopTable& L = loops(loopsChoice);
    switch (prog.mode) {
    case ScalarProgram::Mode::Float: L.evalFloat(prog, inputs, out); break;
    case ScalarProgram::Mode::Double: L.evalDouble(prog, inputs, out); break;
    case ScalarProgram::Mode::Int: L.evalInt(prog, inputs, out); break;
    }
}

} // namespace passlens::cpu
