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

struct Parser {
    const std::string& s;
    const std::vector<DType>& inTypes;
    ScalarProgram& prog;
    std::size_t pos = 0;

    [[noreturn]] void fail(const std::string& why) const {
        throw Error("bad expression '" + s + "' at offset " + std::to_string(pos) + ": " + why);
    }
    void skipWs() {
        while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    }
    std::string ident() {
        skipWs();
        const std::size_t b = pos;
        while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) ++pos;
        if (b == pos) fail("expected a name");
        return s.substr(b, pos - b);
    }
    int parse() {
        const std::string name = ident();
        if (name.size() > 1 && name[0] == 'i' && std::all_of(name.begin() + 1, name.end(), [](char c) {
                return std::isdigit(static_cast<unsigned char>(c));
            })) {
            const int k = std::atoi(name.c_str() + 1);
            if (k < 0 || k >= static_cast<int>(inTypes.size()))
                fail("input " + name + " does not exist (the node has " + std::to_string(inTypes.size()) + " inputs)");
            ExprNode n;
            n.op = ScalarOp::Input;
            n.input = k;
            n.dtype = inTypes[static_cast<std::size_t>(k)];
            prog.nodes.push_back(n);
            return static_cast<int>(prog.nodes.size()) - 1;
        }
        const ScalarOpInfo* info = findScalarOp(name);
        if (!info) fail("unknown scalar op '" + name + "'");
        ExprNode n;
        n.op = info->op;
        std::vector<std::string> params;
        skipWs();
        if (pos < s.size() && s[pos] == '{') {
            const std::size_t close = s.find('}', pos);
            if (close == std::string::npos) fail("unclosed '{'");
            std::string inner = s.substr(pos + 1, close - pos - 1);
            std::size_t b = 0;
            while (true) {
                const std::size_t c = inner.find(',', b);
                params.push_back(inner.substr(b, c == std::string::npos ? std::string::npos : c - b));
                if (c == std::string::npos) break;
                b = c + 1;
            }
            pos = close + 1;
        }
        skipWs();
        if (pos >= s.size() || s[pos] != '(') fail("expected '(' after " + name);
        ++pos;
        while (true) {
            n.args.push_back(parse());
            skipWs();
            if (pos < s.size() && s[pos] == ',') {
                ++pos;
                continue;
            }
            if (pos < s.size() && s[pos] == ')') {
                ++pos;
                break;
            }
            fail("expected ',' or ')'");
        }
        const int arity = info->arity;
        if (arity >= 0 && static_cast<int>(n.args.size()) != arity)
            fail(name + " takes " + std::to_string(arity) + " arguments, got " + std::to_string(n.args.size()));
        auto num = [&](std::size_t i, double dflt) {
            if (i >= params.size() || params[i].empty()) return dflt;
            char* end = nullptr;
            const double v = std::strtod(params[i].c_str(), &end);
            if (end == params[i].c_str()) fail("bad number '" + params[i] + "'");
            return v;
        };
        // types (Theano's elemwise type rule, per scalar)
        auto argType = [&](std::size_t i) { return prog.nodes[static_cast<std::size_t>(n.args[i])].dtype; };
        if (n.op == ScalarOp::Cast) {
            if (params.size() != 1) fail("cast needs {dtype}");
            auto d = parseDType(params[0]);
            if (!d) fail("cast to unknown dtype '" + params[0] + "'");
            n.dtype = *d;
        } else {
            if (info->nparams > 0) n.p0 = num(0, info->params[0].dflt);
            if (info->nparams > 1) n.p1 = num(1, info->params[1].dflt);
            std::vector<DType> argTypes;
            for (std::size_t i = 0; i < n.args.size(); ++i) argTypes.push_back(argType(i));
            n.dtype = scalarResultType(n.op, argTypes);
        }
        prog.nodes.push_back(n);
        return static_cast<int>(prog.nodes.size()) - 1;
    }
};

bool exactInFloat(DType d) {
    switch (d) {
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

ScalarProgram compileExpr(const std::string& expr, const std::vector<DType>& inTypes) {
    ScalarProgram prog;
    prog.nin = static_cast<int>(inTypes.size());
    Parser p{expr, inTypes, prog};
    p.parse();
    p.skipWs();
    if (p.pos != expr.size()) p.fail("trailing text");
    // Choose the compute mode.
    const std::size_t nn = prog.nodes.size();
    std::vector<bool> onlyUnderCast(nn, true);
    for (std::size_t i = 0; i < nn; ++i)
        for (int a : prog.nodes[i].args)
            if (prog.nodes[i].op != ScalarOp::Cast) onlyUnderCast[static_cast<std::size_t>(a)] = false;
    if (prog.nodes.back().op == ScalarOp::Input) onlyUnderCast[nn - 1] = false;
    bool floatOk = true, intOk = true;
    for (std::size_t i = 0; i < nn; ++i) {
        const ExprNode& n = prog.nodes[i];
        if (n.op == ScalarOp::Input) {
            if (!(exactInFloat(n.dtype) || (onlyUnderCast[i] && !isComplex(n.dtype)))) floatOk = false;
        } else {
            if (n.dtype != DType::Float32 && n.dtype != DType::Bool) floatOk = false;
            if (n.op == ScalarOp::Cast && n.dtype == DType::Bool) {
                // cast to bool of a float input is exact in any float mode
            }
        }
        if (!(isInteger(n.dtype) || n.dtype == DType::Bool)) intOk = false;
    }
    for (const ExprNode& n : prog.nodes)
        if (isComplex(n.dtype) || n.dtype == DType::Float16)
            throw Error("bad expression '" + expr + "': dtype " + std::string(dtypeName(n.dtype)) +
                        " is not supported by the CPU backend");
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

void evalProgram(const ScalarProgram& prog, const std::vector<Tensor>& inputs, Tensor& out) {
    for (const Tensor& t : inputs)
        if (!t.onHost()) throw Error("element-wise kernel got a device tensor");
    if (out.numel() == 0) return;
    const LoopTable& L = loops();
    switch (prog.mode) {
    case ScalarProgram::Mode::Float: L.evalFloat(prog, inputs, out); break;
    case ScalarProgram::Mode::Double: L.evalDouble(prog, inputs, out); break;
    case ScalarProgram::Mode::Int: L.evalInt(prog, inputs, out); break;
    }
}

} // namespace passlens::cpu
