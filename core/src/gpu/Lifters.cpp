#include "passlens/gpu/Lifters.h"

#include "passlens/gpu/LiftReasons.h"
#include "passlens/ir/OpRegistry.h"

#include <mutex>

namespace passlens {

namespace {
using json = nlohmann::json;

Variable* mk(FunctionGraph& g, const std::string& kind, json attrs, std::vector<Variable*> ins, const Apply& like) {
    return g.apply(Op::get(kind, std::move(attrs)), std::move(ins), like.name());
}

std::vector<Variable*> gpuAll(LiftContext& c, std::vector<Variable*> ins) {
    for (auto*& v : ins) v = asGpu(c.graph, v, c.context);
    return ins;
}

// The same attributes on the GPU kind (plus extra ones).
json attrsOf(const Apply& n, json extra = json::object()) {
    json a = n.op().attrs();
    for (auto it = extra.begin(); it != extra.end(); ++it) a[it.key()] = it.value();
    return a;
}

// The GPU op with the same attributes as a host op (cached: interning builds a JSON key).
const Op& gpuTwin(const Op& host, const std::string& gpuKind) {
    static std::mutex mutex;
    static std::map<std::pair<const Op*, std::string>, const Op*> cache;
    std::lock_guard lock(mutex);
    auto [it, fresh] = cache.try_emplace({&host, gpuKind}, nullptr);
    if (fresh) it->second = &Op::get(gpuKind, host.attrs());
    return *it->second;
}

// Transfers by context (cached for the same reason).
const Op& transferOp(const char* kind, const std::string& context) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, const Op*> cache;
    std::lock_guard lock(mutex);
    auto [it, fresh] = cache.try_emplace({kind, context}, nullptr);
    if (fresh)
        it->second = std::string(kind) == "HostFromGpu" ? &Op::get(kind) : &Op::get(kind, {{"context", context}});
    return *it->second;
}

// A lifter that applies `gpuKind` with the node's attributes; `hostParams` inputs stay on the host.
LifterFn simple(const std::string& gpuKind, std::set<int> hostParams = {}) {
    return [gpuKind, hostParams](LiftContext& c) -> std::vector<Variable*> {
        std::vector<Variable*> ins;
        for (int i = 0; i < static_cast<int>(c.inputs.size()); ++i)
            ins.push_back(hostParams.count(i) ? asHost(c.graph, c.inputs[static_cast<std::size_t>(i)])
                                              : asGpu(c.graph, c.inputs[static_cast<std::size_t>(i)], c.context));
        Apply* a = c.graph.makeApply(gpuTwin(c.node.op(), gpuKind), ins, std::nullopt, c.node.name());
        return a->outputs();
    };
}

std::vector<Variable*> liftElemwise(LiftContext& c) {
    const Op& op = c.node.op();
    const std::string s = op.str("scalar");
    const Type& out = c.node.output()->type();
    if (s == "pow" && !isFloat(out.dtype())) {
        c.reason = "pow with a non-float output stays on the host (Theano lifts pow only for float outputs)";
        return {};
    }
    std::vector<Variable*> ins = gpuAll(c, c.inputs);
    const int budget = maxInputsToGpuElemwise(out.ndim(), c.node.nout());
    const Op& gop = gpuTwin(op, "GpuElemwise");
    if (static_cast<int>(ins.size()) > budget) {
        if (s != "add" && s != "mul") {
            c.reason = "Elemwise{" + s + "} has more inputs than one GPU kernel takes (" + std::to_string(budget) + ")";
            return {};
        }
        // split into a tree of GpuElemwise within the kernel-argument budget
        while (static_cast<int>(ins.size()) > budget) {
            std::vector<Variable*> next;
            for (std::size_t i = 0; i < ins.size(); i += static_cast<std::size_t>(budget)) {
                std::vector<Variable*> chunk(
                    ins.begin() + static_cast<long>(i),
                    ins.begin() + static_cast<long>(std::min(ins.size(), i + static_cast<std::size_t>(budget))));
                next.push_back(chunk.size() == 1 ? chunk[0] : c.graph.apply(gop, chunk, c.node.name()));
            }
            ins = std::move(next);
        }
    }
    return {c.graph.apply(gop, ins, c.node.name())};
}

std::vector<Variable*> liftFlatten(LiftContext& c) {
    Variable* x = asGpu(c.graph, c.inputs[0], c.context);
    const std::int64_t outdim = c.node.op().intAttr("outdim", 1);
    std::vector<Variable*> shp;
    for (std::int64_t i = 0; i + 1 < outdim; ++i) shp.push_back(mk(c.graph, "Shape_i", {{"i", i}}, {x}, c.node));
    shp.push_back(c.graph.addConstant(TensorData::fromInts(DType::Int64, {}, {-1})));
    Variable* mv = mk(c.graph, "MakeVector", {{"dtype", "int64"}}, shp, c.node);
    Variable* r = mk(c.graph, "GpuReshape", {{"ndim", outdim}}, {x, mv}, c.node);
    c.graph.refineType(r, c.node.output()->type().withLocation(r->type().location()));
    return {r};
}

std::vector<Variable*> liftAlloc(LiftContext& c) {
    std::vector<Variable*> ins{asGpu(c.graph, c.inputs[0], c.context)};
    for (std::size_t i = 1; i < c.inputs.size(); ++i) ins.push_back(asHost(c.graph, c.inputs[i]));
    return {mk(c.graph, "GpuAlloc", {{"memset_0", false}, {"context", c.context}}, ins, c.node)};
}

std::vector<Variable*> liftAllocEmpty(LiftContext& c) {
    std::vector<Variable*> ins;
    for (auto* v : c.inputs) ins.push_back(asHost(c.graph, v));
    return {mk(c.graph, "GpuAllocEmpty", {{"dtype", c.node.op().str("dtype")}, {"context", c.context}}, ins, c.node)};
}

std::vector<Variable*> liftSubtensor(LiftContext& c) {
    // Theano's local_gpua_subtensor_graph heuristic: slice on the host and transfer the slice
    // when x is a transfer of a graph input used only here and the slice has one client.
    Variable* x = c.inputs[0];
    if (const Apply* o = x->owner(); o && o->op().kind() == "GpuFromHost") {
        const Variable* cpu = o->input(0);
        const Variable* orig = c.node.input(0);
        if (!cpu->owner() && orig == cpu && cpu->clients().size() == 1 && c.node.output()->clients().size() == 1) {
            c.reason = "Subtensor single-client heuristic: x is a graph input used only here, so the slice is taken on "
                       "the host and only the slice is transferred";
            return {};
        }
    }
    // The op_lifter variant (local_gpua_subtensor, run by gpuarray_local_optimizations): x is
    // HostFromGpu(GpuFromHost(graph input)) with one client. Stay on the host when a client of
    // the slice is a graph output or touches the GPU; otherwise transfer only the slice.
    if (const Apply* h = x->owner(); h && h->op().kind() == "HostFromGpu" && x->clients().size() == 1) {
        const Apply* up = h->input(0)->owner();
        if (up && up->op().kind() == "GpuFromHost" && !up->input(0)->owner()) {
            for (const Client& cl : c.node.output()->clients()) {
                bool gpu = !cl.node;
                if (cl.node) {
                    for (const Variable* v : cl.node->inputs()) gpu |= v->type().isGpu();
                    for (const Variable* v : cl.node->outputs()) gpu |= v->type().isGpu();
                }
                if (gpu) {
                    c.reason = "Subtensor heuristic (op_lifter): x is a graph input used only here and a client of the "
                               "slice is a graph output or on the GPU";
                    return {};
                }
            }
            return {c.graph.apply(up->op(), {c.node.output()})};
        }
    }
    std::vector<Variable*> ins{asGpu(c.graph, x, c.context)};
    for (std::size_t i = 1; i < c.inputs.size(); ++i) ins.push_back(asHost(c.graph, c.inputs[i]));
    return {mk(c.graph, "GpuSubtensor", attrsOf(c.node), ins, c.node)};
}

std::vector<Variable*> liftIncSubtensor(LiftContext& c) {
    std::vector<Variable*> ins{asGpu(c.graph, c.inputs[0], c.context), asGpu(c.graph, c.inputs[1], c.context)};
    for (std::size_t i = 2; i < c.inputs.size(); ++i) ins.push_back(asHost(c.graph, c.inputs[i]));
    return {mk(c.graph, "GpuIncSubtensor", attrsOf(c.node), ins, c.node)};
}

std::vector<Variable*> liftDot(LiftContext& c) {
    if (c.inputs[0]->type().ndim() != 2 || c.inputs[1]->type().ndim() != 2) {
        c.reason = "Dot of a vector: no GPU lifter (Theano's BlasOpt turns it into Gemv first)";
        return {};
    }
    return {mk(c.graph, "GpuDot22", json::object(), gpuAll(c, c.inputs), c.node)};
}

std::vector<Variable*> liftBatchedDot(LiftContext& c) {
    // local_gpua_gemmbatch (gpuarray/opt.py): GpuGemmBatch takes 3-D operands of the output
    // dtype, so rank-2 operands get a broadcastable axis (and lose it again on the result) and
    // other dtypes a cast.
    const int na = c.inputs[0]->type().ndim(), nb = c.inputs[1]->type().ndim();
    if (!((na == 3 && nb == 3) || ((na == 2 || na == 3) && (nb == 2 || nb == 3)))) {
        c.reason = "GpuGemmBatch takes 3-D operands (or Theano's rank-2 ones), got ranks " + std::to_string(na) +
                   " and " + std::to_string(nb);
        return {};
    }
    const DType out = c.node.output()->type().dtype();
    std::vector<Variable*> ins = gpuAll(c, c.inputs);
    if (na == 2) ins[0] = mk(c.graph, "GpuDimShuffle", {{"order", {0, "x", 1}}}, {ins[0]}, c.node);
    if (nb == 2) ins[1] = mk(c.graph, "GpuDimShuffle", {{"order", {0, 1, "x"}}}, {ins[1]}, c.node);
    for (auto*& v : ins)
        if (v->type().dtype() != out)
            v = mk(c.graph, "GpuElemwise", {{"scalar", "cast"}, {"dtype", std::string(dtypeName(out))}}, {v}, c.node);
    Variable* r = mk(c.graph, "GpuGemmBatch", json::object(), ins, c.node);
    if (na == 3 && nb == 3) return {r};
    json keep = json::array({0});
    if (na == 3) keep.push_back(1);
    if (nb == 3) keep.push_back(2);
    return {mk(c.graph, "GpuDimShuffle", {{"order", keep}}, {r}, c.node)};
}

std::vector<Variable*> liftCAReduce(LiftContext& c) {
    return {mk(c.graph, "GpuCAReduceCuda", attrsOf(c.node, {{"pre_scalar_op", nullptr}}), gpuAll(c, c.inputs), c.node)};
}

std::vector<Variable*> liftShape(LiftContext& c) {
    // local_gpua_shape_graph: the shape of the GPU variable, computed on the host
    return {mk(c.graph, c.node.op().kind(), attrsOf(c.node), {asGpu(c.graph, c.inputs[0], c.context)}, c.node)};
}

// local_gpua_assert_graph (gpuarray/opt.py): the value on the GPU, the conditions on the host, as
// Assert.make_node's as_tensor_variable brings back a condition a lifted op computed.
std::vector<Variable*> liftAssert(LiftContext& c) {
    std::vector<Variable*> ins{asGpu(c.graph, c.inputs[0], c.context)};
    for (std::size_t i = 1; i < c.inputs.size(); ++i) ins.push_back(asHost(c.graph, c.inputs[i]));
    return {mk(c.graph, "Assert", attrsOf(c.node), ins, c.node)};
}

// local_gpua_topkop (gpuarray/opt.py): GpuTopKOp with k on the host. The capability table is
// read for x's dtype (output 0 is the indices when return_values is false). Theano declines
// sorted=True (its TopKOp has no sorted form); PassLens's kernels sort, so both lift
// (docs/THEANO_NOTES.md).
std::vector<Variable*> liftTopK(LiftContext& c) {
    if (auto why = c.caps.check("GpuTopKOp", c.inputs[0]->type().dtype())) {
        c.reason = *why;
        return {};
    }
    static const LifterFn lift = simple("GpuTopKOp", {1});
    return lift(c);
}

std::vector<Variable*> liftMaxAndArgmax(LiftContext& c) {
    // local_gpu_maxandargmax (gpuarray/opt.py): float16 is cast to float32 on the GPU and the
    // max cast back
    Variable* x = asGpu(c.graph, c.inputs[0], c.context);
    const bool half = x->type().dtype() == DType::Float16;
    if (half) x = mk(c.graph, "GpuElemwise", {{"scalar", "cast"}, {"dtype", "float32"}}, {x}, c.node);
    Apply* a = c.graph.makeApply(gpuTwin(c.node.op(), "GpuMaxAndArgmax"), {x}, std::nullopt, c.node.name());
    if (!half) return a->outputs();
    return {mk(c.graph, "GpuElemwise", {{"scalar", "cast"}, {"dtype", "float16"}}, {a->output(0)}, c.node),
            a->output(1)};
}

std::map<std::string, std::vector<Lifter>> buildTable() {
    std::map<std::string, std::vector<Lifter>> t;
    auto add = [&](const std::string& host, const std::string& name, const std::string& gpu, LifterFn fn) {
        t[host].push_back(Lifter{name, host, gpu, std::move(fn)});
    };
    add("Elemwise", "local_gpua_elemwise", "GpuElemwise", liftElemwise);
    add("DimShuffle", "local_gpua_dimshuffle", "GpuDimShuffle", simple("GpuDimShuffle"));
    add("Reshape", "local_gpua_reshape", "GpuReshape", simple("GpuReshape", {1}));
    add("Flatten", "local_gpua_flatten", "GpuReshape", liftFlatten);
    add("Alloc", "local_gpua_alloc", "GpuAlloc", liftAlloc);
    add("AllocEmpty", "local_gpua_alloc_empty", "GpuAllocEmpty", liftAllocEmpty);
    add("Subtensor", "local_gpua_subtensor", "GpuSubtensor", liftSubtensor);
    add("AdvancedSubtensor1", "local_gpua_advanced_subtensor1", "GpuAdvancedSubtensor1",
        simple("GpuAdvancedSubtensor1", {1}));
    add("IncSubtensor", "local_gpua_inc_subtensor", "GpuIncSubtensor", liftIncSubtensor);
    add("Join", "local_gpua_join", "GpuJoin", simple("GpuJoin"));
    add("Split", "local_gpua_split", "GpuSplit", simple("GpuSplit", {1}));
    add("CAReduce", "local_gpua_careduce", "GpuCAReduceCuda", liftCAReduce);
    add("Dot", "local_gpua_dot22", "GpuDot22", liftDot);
    add("Dot22", "local_gpua_dot22", "GpuDot22", liftDot);
    add("Gemm", "local_gpua_gemm", "GpuGemm", simple("GpuGemm", {1, 4}));
    add("Gemv", "local_gpua_gemv", "GpuGemv", simple("GpuGemv", {1, 4}));
    add("BatchedDot", "local_gpua_gemmbatch", "GpuGemmBatch", liftBatchedDot);
    add("Softmax", "local_gpua_softmax", "GpuSoftmax", simple("GpuSoftmax"));
    add("LogSoftmax", "local_gpua_logsoftmax", "GpuLogSoftmax", simple("GpuLogSoftmax"));
    add("AbstractConv2d", "local_gpua_abstractconv", "GpuCorrMM", simple("GpuCorrMM"));
    add("Pool", "local_gpua_pool", "GpuPool", simple("GpuPool"));
    add("BatchNormInference", "local_gpua_batch_norm_inference", "GpuDnnBatchNormInference",
        simple("GpuDnnBatchNormInference"));
    add("CpuContiguous", "local_gpua_contiguous", "GpuContiguous", simple("GpuContiguous"));
    add("CumOp", "local_gpua_cumop", "GpuCumOp", simple("GpuCumOp"));
    add("TopKOp", "local_gpua_topkop", "GpuTopKOp", liftTopK);
    add("MaxAndArgmax", "local_gpu_maxandargmax", "GpuMaxAndArgmax", liftMaxAndArgmax);
    add("Assert", "local_gpua_assert", "", liftAssert);
    add("Shape", "local_gpua_shape", "", liftShape);
    add("Shape_i", "local_gpua_shape_i", "", liftShape);
    return t;
}
} // namespace

const std::map<std::string, std::vector<Lifter>>& lifterTable() {
    static const auto t = buildTable();
    return t;
}

bool hasLifter(const std::string& hostKind) { return lifterTable().count(hostKind) > 0; }

Variable* asGpu(FunctionGraph& g, Variable* v, const std::string& context) {
    const Location want = Location::gpu(context);
    Variable* x = v;
    while (true) { // dig through transfers (HostFromGpu, GpuFromHost, GpuToGpu) to a value on `want`
        if (x->type().location() == want) return x;
        const Apply* o = x->owner();
        if (!o || !o->op().isTransfer()) break;
        x = o->input(0);
    }
    if (x->type().isGpu()) return g.apply(transferOp("GpuToGpu", context), {x});
    return g.apply(transferOp("GpuFromHost", context), {x});
}

Variable* asHost(FunctionGraph& g, Variable* v) {
    if (!v->type().isGpu()) return v;
    if (const Apply* o = v->owner(); o && o->op().kind() == "GpuFromHost") return o->input(0);
    return g.apply(transferOp("HostFromGpu", ""), {v});
}

bool moveToGpu(const Variable* v) {
    return v->type().rankKnown() && v->type().ndim() > 0 && !isComplex(v->type().dtype()) &&
           !isString(v->type().dtype());
}

int maxInputsToGpuElemwise(int ndim, int nout) {
    // gpuarray/elemwise.py: 4096-byte argument budget; per input a pointer, an offset and one
    // 8-byte stride per dim; mandatory: the element count and dims, and each output's arguments.
    const int perArg = 16 + 8 * ndim;
    const int mandatory = 8 * (ndim + 1) + perArg * nout;
    return (4096 - mandatory) / perArg;
}

std::vector<Variable*> runLifter(const Lifter& lifter, LiftContext& ctx) {
    if (!lifter.gpuKind.empty())
        if (auto why = ctx.caps.check(lifter.gpuKind, ctx.node.output()->type().dtype())) {
            ctx.reason = *why;
            return {};
        }
    return lifter.fn(ctx);
}

std::vector<Variable*> liftNode(LiftContext& ctx, std::string* usedLifter) {
    if (auto why = liftBlocker(ctx.node)) {
        ctx.reason = *why;
        return {};
    }
    for (const Lifter& l : lifterTable().at(ctx.node.op().kind())) {
        auto outs = runLifter(l, ctx);
        if (!outs.empty()) {
            if (usedLifter) *usedLifter = l.name;
            return outs;
        }
    }
    return {};
}

} // namespace passlens
