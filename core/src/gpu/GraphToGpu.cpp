#include "passlens/gpu/GraphToGpu.h"

#include "passlens/ir/OpRegistry.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

namespace passlens {

GraphToGpu::GraphToGpu(GpuCapabilities caps, bool allocSpecialCase, std::string phaseName)
    : m_caps(std::move(caps))
    , m_allocSpecialCase(allocSpecialCase) {
    name = std::move(phaseName);
}

namespace {
// Apply nodes between the mapped inputs `ins` and `outs` (Theano's node_created).
std::int64_t countNew(const std::vector<Variable*>& outs, const std::vector<Variable*>& ins) {
    std::int64_t n = 0;
    std::vector<const Apply*> st;
    std::unordered_set<const Apply*> seen;
    for (auto* v : ins)
        if (v->owner()) seen.insert(v->owner());
    for (auto* v : outs)
        if (v->owner() && !v->owner()->inGraph() && seen.insert(v->owner()).second) st.push_back(v->owner());
    while (!st.empty()) {
        const Apply* a = st.back();
        st.pop_back();
        ++n;
        for (auto* in : a->inputs())
            if (in->owner() && !in->owner()->inGraph() && seen.insert(in->owner()).second) st.push_back(in->owner());
    }
    return n;
}
} // namespace

PhaseResult GraphToGpu::apply(RewriteEngine& engine) {
    FunctionGraph& g = engine.graph();
    const auto t0 = std::chrono::steady_clock::now();
    m_processCount.clear();
    m_nodeCreated.clear();
    m_timeBefore.clear();
    const std::vector<Apply*> topo = g.toposort();
    m_toposortUs = elapsedUs(t0);

    // The target context: the first GPU context among the inputs, else the default one.
    std::string target;
    for (const Variable* in : g.inputs())
        if (in->type().isGpu()) {
            target = in->type().location().context;
            break;
        } else if (in->tag.contains("context") && in->tag["context"].is_string()) {
            target = in->tag["context"].get<std::string>();
            break;
        }
    // Variable -> its replacement, by variable id (every key existed before the phase began).
    std::vector<Variable*> mapping(static_cast<std::size_t>(g.varIdLimit()), nullptr);
    auto mapped = [&](Variable* v) {
        const auto i = static_cast<std::size_t>(v->id());
        return i < mapping.size() && mapping[i] ? mapping[i] : v;
    };
    auto slot = [&](Variable* v) -> Variable*& { return mapping[static_cast<std::size_t>(v->id())]; };
    for (Variable* in : g.inputs()) {
        const bool cpuTag = in->tag.contains("target") && in->tag["target"] == "cpu";
        if (!in->type().isGpu() && !cpuTag && moveToGpu(in))
            slot(in) = g.apply(Op::get("GpuFromHost", {{"context", target}}), {in});
    }

    for (Apply* node : topo) {
        const std::string& kind = node->op().kind();
        if (kind == "HostFromGpu") { // the transfer is dropped; consumers see the GPU variable
            slot(node->output()) = mapped(node->input(0));
            continue;
        }
        std::vector<Variable*> ins;
        bool move = false;
        std::string ctx;
        for (Variable* in : node->inputs()) {
            Variable* m = mapped(in);
            ins.push_back(m);
            if (!move && m->type().isGpu()) {
                move = true;
                ctx = m->type().location().context;
            }
        }
        LiftDecision d{node->id(), false, "", ""};
        if (!move && m_allocSpecialCase && (kind == "Alloc" || kind == "AllocEmpty")) {
            for (const Client& c : node->output()->clients())
                if (c.node && hasLifter(c.node->op().kind())) {
                    move = true;
                    ctx.clear();
                    d.reason = allocSpecialCaseReason(c.node->op());
                    break;
                }
        }
        if (move)
            if (auto why = complexInputReason(*node)) {
                move = false;
                d.reason = *why;
            }
        std::vector<Variable*> outs;
        if (move && !node->op().isGpu() && !node->op().isTransfer()) {
            auto it = lifterTable().find(kind);
            if (it == lifterTable().end()) {
                d.reason = noLifterReason(kind);
            } else {
                for (const Lifter& l : it->second) {
                    m_timeBefore.try_emplace(l.name, engine.stats(l.name).timeUs);
                    LiftContext lc{g, *node, ctx, ins, m_caps, {}};
                    const std::vector<Variable*> r = engine.tryLifter(l.name, node, [&](std::string& reason) {
                        std::vector<Variable*> lifted = runLifter(l, lc);
                        reason = lc.reason;
                        return lifted;
                    });
                    if (r.empty()) {
                        d.reason = lc.reason;
                        continue;
                    }
                    // dtype guard: "The optimization %s returned bad dtype. Skipping it."
                    bool badDtype = r.size() != node->outputs().size();
                    for (std::size_t k = 0; !badDtype && k < r.size(); ++k)
                        badDtype = r[k]->type().dtype() != node->output(static_cast<int>(k))->type().dtype();
                    if (badDtype) {
                        d.reason = badDtypeReason(l.name);
                        if (engine.instrumentation()) engine.instrumentation()->message("GraphToGPU: " + d.reason);
                        break;
                    }
                    ++m_processCount[l.name];
                    m_nodeCreated[l.name] += countNew(r, ins);
                    outs = r;
                    d.lifted = true;
                    d.lifter = l.name;
                    break;
                }
            }
        } else if (!move && d.reason.empty()) {
            d.reason = notMovedReason(node->op());
        }
        if (outs.empty()) {
            // Strict clone: reuse the node when its inputs are unchanged (keeps its id), else
            // rebuild it on host versions of the mapped inputs (Theano's implicit HostFromGpu).
            bool same = true;
            for (std::size_t i = 0; i < ins.size(); ++i) same &= ins[i] == node->input(static_cast<int>(i));
            if (same) {
                outs = node->outputs();
            } else {
                std::vector<Variable*> hostIns;
                for (std::size_t i = 0; i < ins.size(); ++i) {
                    const bool wantsGpu = node->input(static_cast<int>(i))->type().isGpu();
                    // Theano's strict clone: TensorType.filter_variable -> host_from_gpu(var), even
                    // when var is itself a GpuFromHost (the pair is left to cut_transfers)
                    const bool onGpu = ins[i]->type().isGpu();
                    hostIns.push_back(wantsGpu || !onGpu ? ins[i] : g.apply(Op::get("HostFromGpu"), {ins[i]}));
                }
                std::vector<Type> types;
                for (auto* o : node->outputs()) types.push_back(o->type());
                const Apply* clone = g.makeApply(
                    node->op(), hostIns, node->op().info().infer ? std::nullopt : std::optional(types), node->name());
                outs = clone->outputs();
                // a refused lift: the clone left in the graph carries the lifter's reason (liftingReport)
                if (move) d.node = clone->id();
            }
        }
        for (std::size_t k = 0; k < outs.size(); ++k) {
            if (outs[k]->name().empty()) outs[k]->setName(node->output(static_cast<int>(k))->name());
            slot(node->output(static_cast<int>(k))) = outs[k];
        }
        if (!node->op().isGpu() && !node->op().isTransfer()) engine.liftDecided(std::move(d));
    }

    Replacement r;
    for (Variable* o : g.outputs()) {
        Variable* n = mapped(o);
        if (n == o) continue;
        if (n->type().isGpu() && !o->type().isGpu()) {
            // input-is-output (commit 7d303ff): GpuFromHost(v) with v of the old type is just v
            if (const Apply* a = n->owner(); a && a->op().kind() == "GpuFromHost" && a->input(0)->type() == o->type())
                n = a->input(0);
            else
                n = g.apply(Op::get("HostFromGpu"), {n}); // safe_to_cpu (commit 195f9b1)
        }
        if (n != o) r.pairs.push_back({o, n});
    }
    m_totalUs = elapsedUs(t0);
    if (r.pairs.empty()) return {};
    return {engine.applyReplacement("GraphToGPU", nullptr, r, m_totalUs)};
}

std::string GraphToGpu::profile(const RewriteEngine& engine, int indent) const {
    const std::string p(static_cast<std::size_t>(indent), ' ');
    char buf[256];
    std::map<std::string, double> timeUs; // per lifter tried, in the last apply
    for (const auto& [n, before] : m_timeBefore) {
        const auto it = engine.stats().find(n);
        timeUs[n] = (it == engine.stats().end() ? before : it->second.timeUs) - before;
    }
    std::string out = p + "GraphToGPUOptimizer " + name + "\n";
    std::snprintf(buf, sizeof buf, "%s  time io_toposort %.6fs\n", p.c_str(), m_toposortUs / 1e6);
    out += buf;
    double total = 0;
    for (const auto& [n, t] : timeUs) total += t;
    std::snprintf(buf, sizeof buf,
                  "%s  Total time taken by local optimizers %.6fs\n%s  times - times applied - Node created - name:\n",
                  p.c_str(), total / 1e6, p.c_str());
    out += buf;
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [n, t] : timeUs)
        if (m_processCount.count(n)) rows.emplace_back(t, n);
    std::sort(rows.rbegin(), rows.rend());
    for (const auto& [t, n] : rows) {
        std::snprintf(buf, sizeof buf, "%s    %.6fs - %lld - %lld - %s\n", p.c_str(), t / 1e6,
                      static_cast<long long>(m_processCount.at(n)),
                      static_cast<long long>(m_nodeCreated.count(n) ? m_nodeCreated.at(n) : 0), n.c_str());
        out += buf;
    }
    double unused = 0;
    int nUnused = 0;
    for (const auto& [n, t] : timeUs)
        if (!m_processCount.count(n) && t > 0) {
            unused += t;
            ++nUnused;
        }
    std::snprintf(buf, sizeof buf,
                  "%s  %.6fs - in %d optimization that were not used (display only those with a runtime > 0)\n",
                  p.c_str(), unused / 1e6, nUnused);
    out += buf;
    return out;
}

} // namespace passlens
