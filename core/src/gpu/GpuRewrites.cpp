#include "passlens/gpu/GpuRewrites.h"

#include "passlens/gpu/LiftReasons.h"
#include "passlens/ir/OpRegistry.h"
#include "passlens/ir/ScalarOps.h"
#include "passlens/rewrite/LocalGroup.h"

#include <algorithm>
#include <unordered_map>

namespace passlens {

namespace {
using json = nlohmann::json;
// Tags of gpuarray/opt.py's register_opt() without 'fast_compile': FAST_COMPILE does not run these.
const std::set<std::string> kGpuTags = {"fast_run", "gpuarray"};

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

// find_node of gpuarray/opt_util.py: the node of kind `kind` computing v, when v has one client,
// digging through GpuFromHost(HostFromGpu(.)) pairs whose values have one client.
const Apply* findSingleClientNode(const Variable* v, const char* kind) {
    while (v->owner() && v->clients().size() == 1) {
        const Apply* o = v->owner();
        if (o->op().kind() == kind) return o;
        const Variable* h = o->op().kind() == "GpuFromHost" ? o->input(0) : nullptr;
        if (!h || !h->owner() || h->owner()->op().kind() != "HostFromGpu" || h->clients().size() != 1) return nullptr;
        v = h->owner()->input(0);
    }
    return nullptr;
}

// grab_cpu_scalar of gpuarray/opt_util.py: the constant behind `v`, digging through transfers
// and DimShuffles that only add `nd` broadcastable axes; the constant's axes all broadcastable.
const Variable* grabCpuScalar(const Variable* v, int nd) {
    while (const Apply* o = v->owner()) {
        const std::string& k = o->op().kind();
        if (k == "GpuDimShuffle" || k == "DimShuffle") {
            const json order = o->op().attrs().value("order", json::array());
            if (static_cast<int>(order.size()) != nd ||
                !std::all_of(order.begin(), order.end(), [](const json& e) { return e.is_string() && e == "x"; }))
                return nullptr;
            v = o->input(0);
            nd = v->type().ndim();
        } else if (k == "GpuFromHost" || k == "HostFromGpu") {
            v = o->input(0);
        } else {
            return nullptr;
        }
    }
    if (!v->isConstant() || !v->constant()->loaded() || v->type().ndim() != nd) return nullptr;
    for (int d = 0; d < nd; ++d)
        if (!v->type().broadcastable(d)) return nullptr;
    return v;
}
} // namespace

NodeRewriter opLifter(const Lifter& lifter, const GpuCapabilities& caps) {
    return NodeRewriter(
        lifter.name, Tracks::of({lifter.hostKind}),
        [lifter, caps](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            if (auto why = complexInputReason(n)) return c.decline([&] { return *why; });
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
            LiftContext lc{c.graph, n, *ctx, n.inputs(), caps, {}};
            auto outs = runLifter(lifter, lc);
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
    // alpha_merge(GpuGemm, alpha_in=1, beta_in=4) of gpuarray/opt_util.py.
    return NodeRewriter(
        "local_gpua_gemm_alpha_merge", Tracks::of({"GpuElemwise"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            if (n.op().str("scalar") != "mul" || n.nin() != 2)
                return c.decline([] { return std::string("not a binary mul"); });
            int i = 0;
            const Apply* gm = findSingleClientNode(n.input(0), "GpuGemm");
            if (!gm) gm = findSingleClientNode(n.input(i = 1), "GpuGemm");
            if (!gm) return c.decline([] { return std::string("no input is a GpuGemm with this mul as only client"); });
            const Variable* lr = grabCpuScalar(n.input(1 - i), gm->output()->type().ndim());
            const DType dt = gm->output()->type().dtype();
            if (!lr || lr->type().dtype() != dt)
                return c.decline(
                    [] { return std::string("the other factor is not a constant scalar of the GpuGemm's dtype"); });
            const double k = lr->constant()->at(0);
            std::vector<Variable*> ins = gm->inputs();
            if (k == 0) {
                ins[1] = ins[4] = c.graph.addConstant(TensorData::fromDoubles(dt, {}, {0.0}));
            } else if (k != 1) {       // k == 1 keeps alpha and beta
                for (int j : {1, 4}) { // lr * alpha, lr * beta; folded here when constant
                    if (auto v = uniformConstant(ins[j]); v && ins[j]->type().ndim() == 0)
                        ins[j] = c.graph.addConstant(
                            TensorData::fromDoubles(upcast(dt, ins[j]->type().dtype()), {}, {k * *v}));
                    else
                        ins[j] = c.graph.apply(Op::get("Elemwise", {{"scalar", "mul"}}),
                                               {c.graph.addConstant(TensorData::fromDoubles(dt, {}, {k})), ins[j]});
                }
            }
            return one(n.output(), c.graph.apply(gm->op(), ins, n.name()));
        },
        kGpuTags);
}

NodeRewriter localGpuGemmOutputMerge() {
    // output_merge(GpuGemm, alpha_in=1, beta_in=4, out_in=0) of gpuarray/opt_util.py.
    return NodeRewriter(
        "local_gpua_gemm_output_merge", Tracks::of({"GpuElemwise"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Apply& n = c.node;
            if (n.op().str("scalar") != "add" || n.nin() != 2)
                return c.decline([] { return std::string("not a binary add"); });
            const Apply* gm = findSingleClientNode(n.input(0), "GpuGemm");
            Variable* w = n.input(1);
            if (!gm) {
                gm = findSingleClientNode(n.input(1), "GpuGemm");
                w = n.input(0);
            }
            if (!gm) return c.decline([] { return std::string("no input is a GpuGemm with this add as only client"); });
            if (w->type().dtype() != gm->output()->type().dtype())
                return c.decline([] { return std::string("the added value has another dtype than the GpuGemm"); });
            if (!isConstValue(gm->input(4), 0.0))
                return c.decline([] { return std::string("the GpuGemm's beta is not a constant 0"); });
            const Type &tw = w->type(), &tz = gm->input(0)->type();
            bool sameBroadcast = tw.ndim() == tz.ndim();
            for (int d = 0; sameBroadcast && d < tw.ndim(); ++d)
                sameBroadcast = tw.broadcastable(d) == tz.broadcastable(d);
            if (!sameBroadcast) // Theano would need to tile the added value
                return c.decline(
                    [] { return std::string("the added value broadcasts other axes than the GpuGemm's z"); });
            std::vector<Variable*> ins = gm->inputs();
            ins[0] = w;
            ins[4] = c.graph.addConstant(TensorData::fromDoubles(gm->input(4)->type().dtype(), {}, {1.0}));
            Apply* merged = c.graph.makeApply(gm->op(), ins, std::nullopt, n.name());
            // static dims PassLens knows of the sum and Theano's types do not carry
            c.graph.refineType(merged->output(), n.output()->type());
            return one(n.output(), merged->output());
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
            std::vector<ScalarExpr> parts;
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
                    std::vector<ScalarExpr> renamed;
                    for (int k : map) renamed.push_back(ScalarExpr::input(k));
                    parts.push_back(elemwiseExpression(o->op(), o->nin()).withInputs(renamed));
                    fused = true;
                } else {
                    parts.push_back(ScalarExpr::input(indexOf(in)));
                }
            }
            if (!fused) continue;
            if (static_cast<int>(ins.size()) > maxInputsToGpuElemwise(ot.ndim())) continue;
            const std::string expr = elemwiseExpression(n->op(), n->nin()).withInputs(parts).str();
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
            if (engine.applyReplacement("local_gpua_elemwise_fusion", n, r, elapsedUs(t0), true)) changed = any = true;
        }
        if (!changed) break;
    }
    return {any};
}

} // namespace passlens
