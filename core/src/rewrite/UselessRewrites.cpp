#include "passlens/rewrite/UselessRewrites.h"

#include "passlens/ir/OpRegistry.h"

#include <algorithm>

namespace passlens {

namespace {
Replacement one(Variable* from, Variable* to) {
    Replacement r;
    r.pairs.push_back({from, to});
    return r;
}
const std::set<std::string> kUseless = {"fast_run", "useless"};

// Theano's ones_like / zeros_like(x, dtype, opt=True) as local_fill_to_alloc leaves it: the
// constant itself for a 0-d x, else Alloc(constant, Shape_i{0}(x), ...) with a static dim as
// an int64 constant.
Variable* filledLike(FunctionGraph& g, Variable* x, DType dtype, bool ones) {
    Variable* value = g.addConstant(TensorData::fromDoubles(dtype, {}, {ones ? 1.0 : 0.0}));
    if (x->type().ndim() == 0) return value;
    std::vector<Variable*> ins{value};
    for (int d = 0; d < x->type().ndim(); ++d) {
        const std::int64_t n = x->type().dims()[static_cast<std::size_t>(d)];
        ins.push_back(n == Type::kUnknownDim
                          ? g.apply(Op::get("Shape_i", {{"i", d}}), {x})
                          : g.addConstant(TensorData::fromDoubles(DType::Int64, {}, {static_cast<double>(n)})));
    }
    return g.apply(Op::get("Alloc"), ins);
}
} // namespace

NodeRewriter localUselessAlloc() {
    return NodeRewriter(
        "local_useless_alloc", Tracks::of({"Alloc"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Variable* v = c.node.input(0);
            const Type& o = c.node.output()->type();
            if (!(v->type() == o))
                return c.decline(
                    [&] { return "the value's type " + v->type().str() + " differs from the output's " + o.str(); });
            return one(c.node.output(), v);
        },
        kUseless);
}

NodeRewriter localMergeAlloc() {
    // As Theano's local_merge_alloc (tensor/opt.py): the shapes are matched from the right; an
    // inner dim that is the outer one (the same variable or the same known value) or a constant 1
    // merges as is, any other outer dim is wrapped in Assert(dim, eq(dim, inner dim)).
    return NodeRewriter(
        "local_merge_alloc", Tracks::of({"Alloc"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            const Apply* inner = c.node.input(0)->owner();
            if (!inner || inner->op().kind() != "Alloc")
                return c.decline([] { return std::string("the value is not an Alloc"); });
            std::vector<Variable*> outer(c.node.inputs().begin() + 1, c.node.inputs().end());
            const int ni = inner->nin() - 1, no = static_cast<int>(outer.size());
            for (int k = 0; k < std::min(ni, no); ++k) {
                Variable* di = inner->input(ni - k);
                Variable*& dout = outer[static_cast<std::size_t>(no - 1 - k)];
                if (di == dout) continue;
                const auto ki = knownIntScalar(di), ko = knownIntScalar(dout);
                if ((ki && ko && *ki == *ko) || (di->isConstant() && ki && *ki == 1)) continue;
                Variable* eq = c.graph.apply(Op::get("Elemwise", {{"scalar", "eq"}}), {dout, di});
                dout = c.graph.apply(
                    Op::get("Assert", {{"msg", "You have a shape error in your graph. To see a better error message "
                                               "and a stack trace of where in your code the error is created, use the "
                                               "Theano flags optimizer=None or optimizer=fast_compile."}}),
                    {dout, eq});
            }
            std::vector<Variable*> ins{inner->input(0)};
            ins.insert(ins.end(), outer.begin(), outer.end());
            return one(c.node.output(), c.graph.apply(c.node.op(), ins));
        },
        kUseless);
}

NodeRewriter localJoin1(const std::string& kind, const std::string& name) {
    return NodeRewriter(
        name, Tracks::of({kind}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            if (c.node.nin() != 1)
                return c.decline([&] { return "joins " + std::to_string(c.node.nin()) + " tensors"; });
            if (!(c.node.input(0)->type() == c.node.output()->type())) return std::nullopt;
            return one(c.node.output(), c.node.input(0));
        },
        kUseless);
}

NodeRewriter localUselessReshape() {
    return NodeRewriter(
        "local_useless_reshape", Tracks::of({"Reshape"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            Variable* x = c.node.input(0);
            const Type &i = x->type(), &o = c.node.output()->type();
            if (i.isStatic() && i == o) return one(c.node.output(), x);
            if (i.ndim() == 1 && o.ndim() == 1 && i.dtype() == o.dtype()) return one(c.node.output(), x);
            if (i.rankKnown() && i.ndim() == o.ndim() && i.dtype() == o.dtype()) {
                // Theano's symbolic cases (tensor/opt.py): Reshape(x, Shape(x)), and Reshape(x,
                // MakeVector(...)) where each entry is Shape_i{d}(x), a constant equal to x's static
                // dim d (1 for a broadcastable dim), or -1 (at most once).
                const Apply* s = c.node.input(1)->owner();
                if (s && s->op().kind() == "Shape" && s->input(0) == x) return one(c.node.output(), x);
                if (s && s->op().kind() == "MakeVector" && s->nin() == i.ndim()) {
                    int minusOne = 0;
                    bool all = true;
                    for (int d = 0; d < i.ndim() && all; ++d) {
                        const Variable* e = s->input(d);
                        const Apply* eo = e->owner();
                        if (eo && eo->op().kind() == "Shape_i" && eo->op().intAttr("i") == d && eo->input(0) == x)
                            continue;
                        const auto k = e->isConstant() ? knownIntScalar(e) : std::nullopt;
                        if (k && *k == -1) {
                            ++minusOne;
                            continue;
                        }
                        if (k && *k == i.dims()[static_cast<std::size_t>(d)]) continue;
                        all = false;
                    }
                    if (all && minusOne <= 1) return one(c.node.output(), x);
                }
            }
            return c.decline([&] { return "reshapes " + i.str() + " to " + o.str(); });
        },
        kUseless);
}

NodeRewriter localUselessElemwise(const std::string& kind, const std::string& name) {
    return NodeRewriter(
        name, Tracks::of({kind}),
        [kind](RewriteCall& c) -> std::optional<Replacement> {
            const std::string s = c.node.op().str("scalar");
            Variable* x = c.node.input(0);
            const bool sameType = x->type() == c.node.output()->type();
            if (kind == "Elemwise" && (s == "eq" || s == "neq") && c.node.nin() == 2 && c.node.input(1) == x)
                return one(c.node.output(), filledLike(c.graph, x, c.node.output()->type().dtype(), s == "eq"));
            if (c.node.nin() == 1 && sameType &&
                (s == "identity" || s == "cast" || s == "add" || s == "mul" || s == "maximum" || s == "minimum"))
                return one(c.node.output(), x);
            return c.decline(
                [&] { return "Elemwise{" + s + "} with " + std::to_string(c.node.nin()) + " inputs is not useless"; });
        },
        kUseless);
}

NodeRewriter localUselessSplit() {
    return NodeRewriter(
        "local_useless_split", Tracks::of({"Split"}),
        [](RewriteCall& c) -> std::optional<Replacement> {
            if (c.node.op().intAttr("n_splits") != 1 || !(c.node.input(0)->type() == c.node.output()->type()))
                return c.decline([] { return std::string("splits into several pieces"); });
            return one(c.node.output(), c.node.input(0));
        },
        kUseless);
}

NodeRewriter localAddMulFusion(const std::string& kind, const std::string& name) {
    return NodeRewriter(name, Tracks::of({kind}),
                        [kind](RewriteCall& c) -> std::optional<Replacement> {
                            const std::string s = c.node.op().str("scalar");
                            if (s != "add" && s != "mul")
                                return c.decline([&] { return "Elemwise{" + s + "} is not add or mul"; });
                            std::vector<Variable*> ins;
                            bool fused = false;
                            for (Variable* in : c.node.inputs()) {
                                const Apply* o = in->owner();
                                if (o && &o->op() == &c.node.op() && in->clients().size() == 1 &&
                                    in->type() == c.node.output()->type() &&
                                    o->output()->type().ndim() == c.node.output()->type().ndim()) {
                                    ins.insert(ins.end(), o->inputs().begin(), o->inputs().end());
                                    fused = true;
                                } else {
                                    ins.push_back(in);
                                }
                            }
                            if (!fused)
                                return c.decline(
                                    [] { return std::string("no input is a single-client node of the same op"); });
                            return one(c.node.output(), c.graph.apply(c.node.op(), ins, c.node.name()));
                        },
                        {"fast_run", "fusion"});
}

std::vector<NodeRewriter> uselessRewrites() {
    return {localUselessAlloc(),   localMergeAlloc(),      localJoin1(),
            localUselessReshape(), localUselessElemwise(), localUselessSplit()};
}

} // namespace passlens
