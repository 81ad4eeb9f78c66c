#include "passlens/gpu/GpuRewrites.h"

#include "passlens/ir/OpRegistry.h"
#include "passlens/rewrite/LocalGroup.h"

#include <algorithm>
#include <unordered_map>

namespace passlens {

namespace {
using json = nlohmann::json;
const std::set<std::string> kGpuTags = {"fast_run", "fast_compile", "gpuarray"};

Replacement one(Variable* a, Variable* b) {
    Replacement r;
    r.pairs.push_back({a, b});
    return r;
}

std::string ctxOf(const Variable* v) { return v->type().location().context; }

bool isConstValue(const Variable* v, double value) {
    if (!v->isConstant() || !v->constant()->loaded()) return false;
    const auto& t = *v->constant();
    for (std::int64_t i = 0; i < t.numElements(); ++i)
        if (t.at(i) != value) return false;
    return t.numElements() > 0;
}

// The single value of a constant (all elements equal), possibly behind DimShuffles.
std::optional<double> uniformConstant(const Variable* v) {
    while (v->owner() && (v->owner()->op().kind() == "GpuDimShuffle" || v->owner()->op().kind() == "DimShuffle"))
        v = v->owner()->input(0);
    if (!v->isConstant() || !v->constant()->loaded() || v->constant()->numElements() < 1) return std::nullopt;
    const double x = v->constant()->at(0);
    for (std::int64_t i = 1; i < v->constant()->numElements(); ++i)
        if (v->constant()->at(i) != x) return std::nullopt;
    return x;
}
} // namespace

NodeRewriter opLifter(const Lifter& lifter, const GpuCapabilities& caps) {
    return NodeRewriter(
        lifter.name, Tracks::of({lifter.hostKind}),
        [lifter, caps](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            for (const Variable* in : n.inputs())
                if (isComplex(in->type().dtype())) return c.decline([] { return std::string("complex input"); });
            std::optional<std::string> ctx;
            for (Variable* in : n.inputs())
                if (const Apply* o = in->owner();
                    o && o->op().kind() == "HostFromGpu" && moveToGpu(in)) { // forward rule
                    ctx = ctxOf(o->input(0));
                    break;
                }
            if (!ctx) { // backward rule: every client of every output is a GpuFromHost
                bool any = false, all = true;
                for (const Variable* out : n.outputs())
                    for (const Client& cl : out->clients()) {
                        any = true;
                        if (!cl.node || cl.node->op().kind() != "GpuFromHost")
                            all = false;
                        else if (!ctx)
                            ctx = cl.node->op().str("context");
                    }
                if (!any || !all) {
                    ctx.reset();
                    return c.decline([] {
                        return std::string("no input comes from HostFromGpu and not every client is a GpuFromHost");
                    });
                }
            }
            if (!lifter.gpuKind.empty())
                if (auto why = caps.check(lifter.gpuKind, n.output()->type().dtype()))
                    return c.decline([&] { return *why; });
            LiftContext lc{c.graph, n, *ctx, n.inputs(), caps, {}};
            auto outs = lifter.fn(lc);
            if (outs.empty()) return c.decline([&] { return lc.reason; });
            // "Returning the same op as before counts as no change" (op_lifter)
            if (const Apply* o = outs[0]->owner(); o && &o->op() == &n.op() && o->inputs() == n.inputs())
                return c.decline([] { return std::string("the lifter returned the same node"); });
            Replacement r;
            for (std::size_t k = 0; k < outs.size(); ++k) {
                Variable* v = outs[k];
                if (v->type().isGpu()) v = c.graph.apply(Op::get("HostFromGpu"), {v});
                r.pairs.push_back({n.output(static_cast<int>(k)), v});
            }
            return r;
        },
        lifter.tags);
}

std::vector<NodeRewriter> opLifters(const GpuCapabilities& caps) {
    std::vector<NodeRewriter> out;
    std::set<std::string> names;
    for (const auto& [k, ls] : lifterTable())
        for (const Lifter& l : ls) {
            std::string nm = l.name;
            if (!names.insert(nm).second) nm += "_" + k; // Dot and Dot22 share a lifter name
            Lifter copy = l;
            copy.name = nm;
            out.push_back(opLifter(copy, caps));
        }
    return out;
}

NodeRewriter localCutGpuTransfers(const std::string& name) {
    return NodeRewriter(
        name, Tracks::of({"GpuFromHost", "GpuToGpu", "HostFromGpu"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            const std::string& k = n.op().kind();
            Variable* x = n.input(0);
            const Apply* o = x->owner();
            const std::string ok = o ? o->op().kind() : "";
            if (k == "GpuFromHost" && ok == "HostFromGpu") {
                Variable* g = o->input(0);
                if (ctxOf(g) == n.op().str("context")) return one(n.output(), g);
                return one(n.output(), c.graph.apply(Op::get("GpuToGpu", {{"context", n.op().str("context")}}), {g}));
            }
            if (k == "HostFromGpu" && ok == "GpuFromHost") return one(n.output(), o->input(0));
            if (k == "HostFromGpu" && ok == "GpuToGpu")
                return one(n.output(), c.graph.apply(Op::get("HostFromGpu"), {o->input(0)}));
            if (k == "GpuToGpu") {
                const std::string b = n.op().str("context");
                if (ctxOf(x) == b) return one(n.output(), x);
                if (ok == "GpuFromHost") // as_gpuarray_variable: digs through transfers of the host value
                    return one(n.output(), asGpu(c.graph, o->input(0), b));
                if (ok == "GpuToGpu") {
                    Variable* ga = o->input(0);
                    if (ctxOf(ga) == b) return one(n.output(), ga);
                    return one(n.output(), c.graph.apply(Op::get("GpuToGpu", {{"context", b}}), {ga}));
                }
            }
            return c.decline([&] {
                return n.op().str() + " of " + (o ? o->op().str() : std::string("an input")) +
                       " has no transfer to cut";
            });
        },
        {"fast_run", "fast_compile", "gpuarray"});
}

NodeRewriter localGpuAllocMemset0() {
    return NodeRewriter(
        "local_gpualloc_memset_0", Tracks::of({"GpuAlloc"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            if (n.op().boolAttr("memset_0")) return c.decline([] { return std::string("already memset_0"); });
            Variable* v = n.input(0);
            if (!v->isConstant() || v->constant()->numElements() != 1 || !isConstValue(v, 0.0))
                return c.decline([] { return std::string("the fill value is not a constant 0 of size 1"); });
            json a = n.op().attrs();
            a["memset_0"] = true;
            return one(n.output(), c.graph.apply(Op::get("GpuAlloc", a), n.inputs(), n.name()));
        },
        kGpuTags);
}

NodeRewriter localGpuElemwiseCAReduce() {
    // As Theano's (gpuarray/opt.py): any reduction without pre_scalar_op over a GpuElemwise{sqr}
    // or {abs}, whatever the elemwise's other clients (they keep it).
    return NodeRewriter(
        "local_gpu_elemwise_careduce", Tracks::of({"GpuCAReduceCuda"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            if (!n.op().attrs().value("pre_scalar_op", json()).is_null())
                return c.decline([] { return std::string("the reduction already has a pre_scalar_op"); });
            const Apply* e = n.input(0)->owner();
            if (!e || e->op().kind() != "GpuElemwise")
                return c.decline([] { return std::string("the input is not a GpuElemwise"); });
            const std::string s = e->op().str("scalar");
            if (s != "sqr" && s != "abs") return c.decline([&] { return "GpuElemwise{" + s + "} is not sqr or abs"; });
            json a = n.op().attrs();
            a["pre_scalar_op"] = s;
            return one(n.output(), c.graph.apply(Op::get("GpuCAReduceCuda", a), {e->input(0)}, n.name()));
        },
        {"fast_run", "gpuarray", "low_memory"});
}

NodeRewriter localGpuContiguousContiguous() {
    return NodeRewriter(
        "local_gpu_contiguous_gpu_contiguous", Tracks::of({"GpuContiguous"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            const Apply* in = c.node.input(0)->owner();
            if (!in || in->op().kind() != "GpuContiguous")
                return c.decline([] { return std::string("the input is not a GpuContiguous"); });
            return one(c.node.output(), c.node.input(0));
        },
        kGpuTags);
}

NodeRewriter localGpuGemmAlphaMerge() {
    return NodeRewriter(
        "local_gpua_gemm_alpha_merge", Tracks::of({"GpuElemwise"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            if (n.op().str("scalar") != "mul" || n.nin() != 2)
                return c.decline([] { return std::string("not a binary mul"); });
            for (int i = 0; i < 2; ++i) {
                const Apply* gm = n.input(i)->owner();
                if (!gm || gm->op().kind() != "GpuGemm" || n.input(i)->clients().size() != 1) continue;
                auto k = uniformConstant(n.input(1 - i));
                auto a = uniformConstant(gm->input(1)), b = uniformConstant(gm->input(4));
                if (!k || !a || !b || !(n.output()->type() == gm->output()->type())) continue;
                const DType dt = gm->input(1)->type().dtype();
                Variable* na = c.graph.addConstant(TensorData::fromDoubles(dt, {}, {*a * *k}));
                Variable* nb = c.graph.addConstant(TensorData::fromDoubles(dt, {}, {*b * *k}));
                return one(n.output(),
                           c.graph.apply(gm->op(), {gm->input(0), na, gm->input(2), gm->input(3), nb}, n.name()));
            }
            return c.decline([] { return std::string("not mul(GpuGemm, constant) with constant alpha and beta"); });
        },
        kGpuTags);
}

NodeRewriter localGpuGemmOutputMerge() {
    return NodeRewriter(
        "local_gpua_gemm_output_merge", Tracks::of({"GpuElemwise"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            if (n.op().str("scalar") != "add" || n.nin() != 2)
                return c.decline([] { return std::string("not a binary add"); });
            for (int i = 0; i < 2; ++i) {
                const Apply* gm = n.input(i)->owner();
                Variable* w = n.input(1 - i);
                if (!gm || gm->op().kind() != "GpuGemm" || n.input(i)->clients().size() != 1) continue;
                if (!isConstValue(gm->input(4), 0.0) || !(w->type() == gm->output()->type())) continue;
                Variable* one1 = c.graph.addConstant(TensorData::fromDoubles(gm->input(4)->type().dtype(), {}, {1.0}));
                return one(n.output(),
                           c.graph.apply(gm->op(), {w, gm->input(1), gm->input(2), gm->input(3), one1}, n.name()));
            }
            return c.decline([] { return std::string("not add(GpuGemm with beta 0, W of the same type)"); });
        },
        kGpuTags);
}

PhaseResult InputToGpu::apply(RewriteEngine& engine) {
    FunctionGraph& g = engine.graph();
    bool changed = false;
    const std::vector<Variable*> inputs = g.inputs();
    for (Variable* x : inputs) {
        if (x->type().isGpu() || !moveToGpu(x)) continue;
        if (x->tag.contains("target") && x->tag["target"] == "cpu") continue;
        bool allTransfers = true;
        for (const Client& c : x->clients())
            if (c.node && c.node->op().kind() != "GpuFromHost") allTransfers = false;
        if (allTransfers) continue;
        const auto t0 = std::chrono::steady_clock::now();
        std::string target;
        if (x->tag.contains("target") && x->tag["target"].is_string()) target = x->tag["target"].get<std::string>();
        Variable* wave = g.apply(Op::get("HostFromGpu"), {g.apply(Op::get("GpuFromHost", {{"context", target}}), {x})});
        Replacement r;
        r.pairs.push_back({x, wave});
        changed |= engine.applyReplacement("InputToGpuOptimizer", nullptr, r, elapsedUs(t0));
    }
    return {changed};
}

std::vector<NodeRewriter> backwardLifters(const GpuCapabilities& caps) {
    std::vector<NodeRewriter> out;
    std::set<std::string> seen;
    for (const auto& [kind, ls] : lifterTable()) {
        if (kind == "Shape" || kind == "Shape_i" || kind == "Assert") continue; // host results
        const Lifter l = ls.front();
        std::string nm = "backward_" + l.name;
        if (!seen.insert(nm).second) nm += "_" + kind;
        out.emplace_back(
            nm, Tracks::of({kind}),
            [l, caps](RewriteCall& c) -> std::optional<Replacement> {
                Apply& n = c.node;
                std::string ctx;
                bool any = false;
                for (const Variable* o : n.outputs())
                    for (const Client& cl : o->clients()) {
                        if (!cl.node || cl.node->op().kind() != "GpuFromHost")
                            return c.decline([&] {
                                return std::string("a client is not a GpuFromHost: ") +
                                       (cl.node ? cl.node->op().str() : std::string("a graph output"));
                            });
                        if (!any) ctx = cl.node->op().str("context");
                        any = true;
                    }
                if (!any) return c.decline([] { return std::string("no clients"); });
                LiftContext lc{c.graph, n, ctx, n.inputs(), caps, {}};
                std::vector<Variable*> outs = liftNode(lc);
                if (outs.empty()) return c.decline([&] { return lc.reason; });
                Replacement r;
                for (std::size_t k = 0; k < outs.size(); ++k)
                    for (const Client& cl : n.output(static_cast<int>(k))->clients()) {
                        Variable* v = outs[k];
                        const std::string want = cl.node->op().str("context");
                        if (ctxOf(v) != want) v = c.graph.apply(Op::get("GpuToGpu", {{"context", want}}), {v});
                        r.pairs.push_back({cl.node->output(), v});
                    }
                return r;
            },
            std::set<std::string>{"fast_run", "gpuarray", "backward"});
    }
    return out;
}

// ------------------------------------------------------------------ fusion
std::string elemwiseExpr(const Op& op, int nin) {
    const std::string s = op.str("scalar");
    if (s == "composite") return op.str("expr");
    std::string head = s;
    auto num = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.9g", v);
        return std::string(b);
    };
    if (s == "cast")
        head += "{" + op.str("dtype") + "}";
    else if (s == "clip")
        head += "{" + (op.has("min") ? num(op.floatAttr("min")) : std::string("-inf")) + "," +
                (op.has("max") ? num(op.floatAttr("max")) : std::string("inf")) + "}";
    else if (s == "leaky_relu")
        head += "{" + num(op.floatAttr("alpha", 0.01)) + "}";
    else if (s == "hard_sigmoid")
        head += "{" + num(op.floatAttr("alpha", 0.2)) + "," + num(op.floatAttr("beta", 0.5)) + "}";
    std::string args;
    for (int i = 0; i < nin; ++i) args += (i ? "," : "") + std::string("i") + std::to_string(i);
    return head + "(" + args + ")";
}

namespace {
// Renames placeholders iK in `expr` through `map` (old index -> new index).
std::string renumber(const std::string& expr, const std::vector<int>& map) {
    std::string out;
    for (std::size_t i = 0; i < expr.size();) {
        const bool boundary = i == 0 || expr[i - 1] == '(' || expr[i - 1] == ',';
        if (boundary && expr[i] == 'i' && i + 1 < expr.size() &&
            std::isdigit(static_cast<unsigned char>(expr[i + 1]))) {
            std::size_t j = i + 1;
            while (j < expr.size() && std::isdigit(static_cast<unsigned char>(expr[j]))) ++j;
            const int k = std::stoi(expr.substr(i + 1, j - i - 1));
            out += "i" + std::to_string(map[static_cast<std::size_t>(k)]);
            i = j;
        } else {
            out += expr[i++];
        }
    }
    return out;
}
} // namespace

PhaseResult GpuElemwiseFusion::apply(RewriteEngine& engine) {
    FunctionGraph& g = engine.graph();
    bool any = false;
    for (int round = 0; round < 100; ++round) {
        bool changed = false;
        std::vector<Apply*> topo = g.toposort();
        std::reverse(topo.begin(), topo.end());
        for (Apply* n : topo) {
            if (!n->inGraph() || n->op().kind() != "GpuElemwise" || n->nout() != 1) continue;
            const auto t0 = std::chrono::steady_clock::now();
            engine.countTry("local_gpua_elemwise_fusion", n);
            const Type& ot = n->output()->type();
            std::vector<Variable*> ins;
            std::vector<std::string> parts;
            bool fused = false;
            auto indexOf = [&](Variable* v) {
                auto it = std::find(ins.begin(), ins.end(), v);
                if (it != ins.end()) return static_cast<int>(it - ins.begin());
                ins.push_back(v);
                return static_cast<int>(ins.size() - 1);
            };
            for (Variable* in : n->inputs()) {
                const Apply* o = in->owner();
                if (o && o->op().kind() == "GpuElemwise" && o->nout() == 1 && in->clients().size() == 1 &&
                    in->type().dims() == ot.dims()) {
                    std::vector<int> map;
                    for (Variable* x : o->inputs()) map.push_back(indexOf(x));
                    parts.push_back(renumber(elemwiseExpr(o->op(), o->nin()), map));
                    fused = true;
                } else {
                    parts.push_back("i" + std::to_string(indexOf(in)));
                }
            }
            if (!fused) continue;
            if (static_cast<int>(ins.size()) > maxInputsToGpuElemwise(ot.ndim())) continue;
            std::string self = elemwiseExpr(n->op(), n->nin());
            // substitute the node's own placeholders by the parts
            std::string expr;
            {
                std::string e = self;
                std::string out;
                for (std::size_t i = 0; i < e.size();) {
                    const bool boundary = i == 0 || e[i - 1] == '(' || e[i - 1] == ',';
                    if (boundary && e[i] == 'i' && i + 1 < e.size() &&
                        std::isdigit(static_cast<unsigned char>(e[i + 1]))) {
                        std::size_t j = i + 1;
                        while (j < e.size() && std::isdigit(static_cast<unsigned char>(e[j]))) ++j;
                        out += parts[static_cast<std::size_t>(std::stoi(e.substr(i + 1, j - i - 1)))];
                        i = j;
                    } else {
                        out += e[i++];
                    }
                }
                expr = out;
            }
            Variable* f = g.apply(
                Op::get("GpuElemwise",
                        {{"scalar", "composite"}, {"expr", expr}, {"dtype", std::string(dtypeName(ot.dtype()))}}),
                ins, n->name());
            if (f->type().dtype() != ot.dtype()) {
                // the composite takes the upcast of its inputs; keep the node's own dtype
                continue;
            }
            Replacement r;
            r.pairs.push_back({n->output(), f});
            if (engine.applyReplacement("local_gpua_elemwise_fusion", n, r, -1.0 - elapsedUs(t0))) changed = any = true;
        }
        if (!changed) break;
    }
    return {any};
}

} // namespace passlens
