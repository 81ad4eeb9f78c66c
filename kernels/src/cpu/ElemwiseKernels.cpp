// Elemwise / GpuElemwise (every scalar, fused composites) on the CPU.
#include "CpuCommon.h"
#include "ElemwiseEngine.h"

#include <passlens/gpu/GpuRewrites.h>

namespace passlens::cpu {

namespace {

struct ElemwiseState : KernelState {
    std::vector<DType> inTypes;
    ScalarProgram prog;
};

void elemwise(KernelCall& c)
{
    auto* st = dynamic_cast<ElemwiseState*>(c.state.get());
    bool same = st && st->inTypes.size() == c.inputs.size();
    for (std::size_t i = 0; same && i < c.inputs.size(); ++i) same = st->inTypes[i] == c.inputs[i].dtype();
    if (!same) {
        auto s = std::make_unique<ElemwiseState>();
        for (const Tensor& t : c.inputs) s->inTypes.push_back(t.dtype());
        s->prog = compileExpr(elemwiseExpr(c.op(), c.nin()), s->inTypes);
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
            if (out[a] == 1) out[a] = s[a];
            else c.fail("shapes " + shapeStr(x0.shape()) + " and " + shapeStr(s) + " do not broadcast at axis " + std::to_string(a));
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
    evalProgram(st->prog, c.inputs, result);
    c.outputs[0] = std::move(result);
}

} // namespace

void registerElemwise(KernelRegistry& r) { addHostAndGpu(r, "Elemwise", "GpuElemwise", elemwise); }

void addHostAndGpu(KernelRegistry& r, const std::string& host, const std::string& gpu, const KernelFn& fn)
{
    if (!host.empty()) r.add(host, Backend::Cpu, fn);
    if (!gpu.empty()) r.add(gpu, Backend::Cpu, fn);
}

} // namespace passlens::cpu
