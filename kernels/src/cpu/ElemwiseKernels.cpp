// Elemwise / GpuElemwise (every scalar, fused composites) on the CPU.
#include "CpuCommon.h"
#include "ElemwiseEngine.h"
#include "Loops.h"

namespace passlens::cpu {

namespace {

struct ElemwiseState : KernelState {
    std::vector<DType> inTypes;
    ScalarProgram prog;
};

void elemwise(KernelCall& c) {
    auto* st = dynamic_cast<ElemwiseState*>(c.state.get());
    bool same = st && st->inTypes.size() == c.inputs.size();
    for (std::size_t i = 0; same && i < c.inputs.size(); ++i) same = st->inTypes[i] == c.inputs[i].dtype();
    if (!same) {
        auto s = std::make_unique<ElemwiseState>();
        for (const Tensor& t : c.inputs) s->inTypes.push_back(t.dtype());
        s->prog = compileExpr(elemwiseExpression(c.op(), c.nin()), s->inTypes);
        st = s.get();
        c.state = std::move(s);
    }
    // output shape: Theano's broadcasting (equal ranks; a dim of 1 broadcasts)
    const Tensor& x0 = c.in(0);
    Shape out = x0.shape();
    for (int i = 1; i < c.nin(); ++i) {
        const Shape& s = c.in(i).shape();
        if (s.size() != out.size())
            c.fail("inputs have different ranks (" + x0.typeStr() + " and " + c.in(i).typeStr() + ")");
        for (std::size_t a = 0; a < out.size(); ++a) {
            if (s[a] == out[a] || s[a] == 1) continue;
            if (out[a] == 1)
                out[a] = s[a];
            else
                c.fail("shapes " + shapeStr(x0.shape()) + " and " + shapeStr(s) + " do not broadcast at axis " +
                       std::to_string(a));
        }
    }
    for (int i = 0; i < c.nin(); ++i)
        for (std::size_t a = 0; a < out.size(); ++a)
            if (c.in(i).shape()[a] == 0) out[a] = 0;
    const DType dt = outDType(c);
    Tensor result;
    for (int i = 0; i < c.nin() && !result.defined(); ++i)
        if (c.in(i).shape() == out && c.canReuse(i, dt, shapeNumel(out))) result = c.in(i);
    if (!result.defined()) result = c.allocate(dt, std::move(out));
    evalProgram(st->prog, c.inputs, result, c.ctx.options.cpuLoops);
    c.outputs[0] = std::move(result);
}

// Epilogue fusion: the element-wise node applied by the producing kernel to rows of its output.
class ElemwiseEpilogue final : public OutputEpilogue {
public:
    ScalarProgram prog;
    RowEpilogue rows;
    std::vector<Tensor> consts; // the constant inputs (kept alive), undefined at rows.yInput
    const LoopTable* loops = nullptr;

    bool accepts(const Tensor& y) const override {
        if (y.dtype() != DType::Float32 || !y.onHost() || y.ndim() < 2) return false;
        for (std::size_t i = 0; i < consts.size(); ++i)
            if (static_cast<int>(i) != rows.yInput && consts[i].dim(1) != 1 && consts[i].dim(1) != y.dim(1))
                return false;
        return true;
    }
    void apply(Tensor& y, std::int64_t n, std::int64_t c0, std::int64_t c1, std::int64_t s0,
               std::int64_t s1) const override {
        if (c1 <= c0 || s1 <= s0) return;
        const std::int64_t C = y.dim(1), S = y.numel() / (y.dim(0) * C);
        loops->epilogueRows(prog, rows, y.data<float>() + (n * C + c0) * S + s0, c0, c1, S, s1 - s0);
    }
};

} // namespace

std::unique_ptr<OutputEpilogue> makeElemwiseEpilogue(const Apply& node, int yInput,
                                                     const std::vector<Tensor>& constants, const ExecOptions& options,
                                                     std::string* why) {
    auto decline = [&](const std::string& reason) -> std::unique_ptr<OutputEpilogue> {
        if (why) *why = reason;
        return nullptr;
    };
    const Variable* y = node.input(yInput);
    const int rank = y->type().rankKnown() ? y->type().ndim() : -1;
    if (rank < 2) return decline("the convolution's output is not of rank 2 or more");
    if (y->type().dtype() != DType::Float32 || node.nout() != 1 || node.output(0)->type().dtype() != DType::Float32)
        return decline("not float32");
    if (static_cast<int>(constants.size()) != node.nin()) return decline("internal: constants do not match inputs");
    auto e = std::make_unique<ElemwiseEpilogue>();
    e->rows.yInput = yInput;
    e->loops = &loops(options.cpuLoops);
    std::vector<DType> types;
    for (int i = 0; i < node.nin(); ++i) {
        const Tensor& t = constants[static_cast<std::size_t>(i)];
        types.push_back(DType::Float32);
        e->rows.values.push_back(nullptr);
        e->rows.channelStride.push_back(0);
        if (i == yInput) {
            e->consts.emplace_back();
            continue;
        }
        // a float32 host constant of the same rank, of size 1 on every axis but axis 1
        const std::string input = "input " + std::to_string(i);
        if (!t.defined() || !t.onHost() || t.dtype() != DType::Float32 || t.ndim() != rank)
            return decline(input + " is not a float32 constant of rank " + std::to_string(rank));
        for (int a = 0; a < rank; ++a)
            if (a != 1 && t.dim(a) != 1) return decline(input + " is not per-channel (size 1 but on axis 1)");
        if (t.numel() == 0) return decline(input + " is empty");
        e->rows.values.back() = t.data<float>();
        e->rows.channelStride.back() = t.dim(1) == 1 ? 0 : 1;
        e->consts.push_back(t);
    }
    try {
        e->prog = compileExpr(elemwiseExpression(node.op(), node.nin()), types);
    } catch (const std::exception& ex) {
        return decline(ex.what());
    }
    if (e->prog.mode != ScalarProgram::Mode::Float || e->prog.nodes.empty() ||
        e->prog.nodes.back().op == ScalarOp::Input || e->prog.nodes.back().dtype != DType::Float32)
        return decline("its program does not compute a float32 value in float arithmetic");
    if (options.epilogueChain) e->rows.chain = compileChain(e->prog, yInput);
    return e;
}

void registerElemwise(KernelRegistry& r) { addHostAndGpu(r, "Elemwise", "GpuElemwise", elemwise); }

void addHostAndGpu(KernelRegistry& r, const std::string& host, const std::string& gpu, const KernelFn& fn) {
    if (!host.empty()) r.add(host, Backend::Cpu, fn);
    if (!gpu.empty()) r.add(gpu, Backend::Cpu, fn);
}

} // namespace passlens::cpu
