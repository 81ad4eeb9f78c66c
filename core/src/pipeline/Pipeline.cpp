#include "passlens/pipeline/Pipeline.h"

#include "passlens/gpu/GpuRewrites.h"
#include "passlens/io/JsonFile.h"
#include "passlens/ir/Error.h"
#include "passlens/rewrite/ConstantFolding.h"
#include "passlens/rewrite/Equilibrium.h"
#include "passlens/rewrite/Merge.h"
#include "passlens/rewrite/UselessRewrites.h"
#include "passlens/rewrite/Walker.h"

#include <algorithm>
#include <cstdio>

namespace passlens {

std::vector<NodeRewriter> PhaseBuildContext::filter(std::vector<NodeRewriter> rws) const {
    std::vector<NodeRewriter> out;
    for (auto& r : rws) {
        bool drop = exclude.count(r.name()) > 0 || (!requireTag.empty() && !r.tags().count(requireTag));
        for (const auto& t : r.tags()) drop |= exclude.count(t) > 0;
        if (!drop) out.push_back(std::move(r));
    }
    return out;
}

namespace {
using Ctx = PhaseBuildContext;

PhasePtr merge(const std::string& n) { return std::make_shared<Merge>(n); }

PhasePtr useless(const Ctx& c) {
    std::vector<NodeRewriter> rws = c.filter(uselessRewrites());
    auto w = std::make_shared<Walker>(
        "useless", std::vector<NodeRewriter>{makeLocalGroup("local_useless", rws, true, c.localGroupDispatch)},
        WalkerConfig{WalkerConfig::Order::InToOut, false, true});
    return w;
}

PhasePtr canonicalize(const Ctx& c, bool fastCompile) {
    std::vector<NodeRewriter> rws{localCutGpuTransfers("local_cut_gpua_host_gpua")};
    if (!fastCompile) {
        auto u = uselessRewrites();
        rws.insert(rws.end(), u.begin(), u.end());
        rws.push_back(localAddMulFusion());
    }
    auto eq = std::make_shared<Equilibrium>("canonicalize", c.filter(rws),
                                            EquilibriumConfig{c.maxUseRatio, false, c.dispatch});
    auto finals = c.filter({constantFolding("topo_constant_folding")});
    if (!finals.empty()) eq->addFinal(in2out("topo_constant_folding", finals));
    eq->addCleanup(std::make_shared<Merge>("merge"));
    return eq;
}

PhasePtr gpuLocal(const Ctx& c, bool withLifters) {
    std::vector<NodeRewriter> rws;
    if (withLifters) rws = opLifters(c.caps);
    for (auto r :
         {constantFolding("gpua_constant_folding"), localGpuAllocMemset0(), localGpuContiguousContiguous(),
          localJoin1("GpuJoin", "local_gpua_join_1"), localUselessElemwise("GpuElemwise", "local_useless_gpuelemwise"),
          localGpuGemmAlphaMerge(), localGpuGemmOutputMerge(), localGpuElemwiseCAReduce()})
        rws.push_back(r);
    return std::make_shared<Equilibrium>("gpuarray_local_optimizations", c.filter(rws),
                                         EquilibriumConfig{c.maxUseRatio, true, c.dispatch});
}

PhasePtr cutTransfers(const Ctx& c) {
    return std::make_shared<Equilibrium>(
        "gpuarray_cut_transfers",
        c.filter({localCutGpuTransfers("local_cut_gpu_transfers"), constantFolding("cut_gpua_constant_transfers")}),
        EquilibriumConfig{c.maxUseRatio, true, c.dispatch});
}

NodeRewriter allocEmptyToZeros() {
    return NodeRewriter(
        "local_gpua_alloc_empty_to_zeros", Tracks::of({"GpuAllocEmpty"}),
        [](RewriteCall& call) -> std::optional<Replacement> {
            Apply& n = call.node;
            Variable* zero = call.graph.apply(
                Op::get("GpuFromHost", {{"context", n.op().str("context")}}),
                {call.graph.addConstant(TensorData::fromDoubles(n.output()->type().dtype(), {}, {0.0}))});
            std::vector<Variable*> ins{zero};
            ins.insert(ins.end(), n.inputs().begin(), n.inputs().end());
            Replacement r;
            r.pairs.push_back(
                {n.output(),
                 call.graph.apply(Op::get("GpuAlloc", {{"memset_0", true}, {"context", n.op().str("context")}}), ins)});
            return r;
        },
        {"alloc_empty_to_zeros"});
}

PhaseEntry entry(const std::string& name, double pos, const std::string& kind, std::set<std::string> tags,
                 std::function<PhasePtr(const Ctx&)> make) {
    return PhaseEntry{PhaseInfo{name, pos, kind}, std::move(tags), [name, make](const Ctx& c) {
                          PhasePtr p = make(c);
                          p->name = name;
                          return p;
                      }};
}

std::vector<PhaseEntry> buildRegistry() {
    // gpu_seqopt (48.5) is flattened: GraphToGPU at -0.5, InputToGpu at 0, the equilibria at 1
    // and 2, each scaled by 1/100 around 48.5; our backward pass right after GraphToGPU.
    return {
        entry("merge1", 0, "Merge", {"fast_run", "fast_compile", "merge"}, [](const Ctx&) { return merge("merge1"); }),
        entry("useless", 0.6, "Walker", {"fast_run", "useless"}, useless),
        entry("merge1.1", 0.65, "Merge", {"fast_run", "merge"}, [](const Ctx&) { return merge("merge1.1"); }),
        entry("canonicalize", 1, "Equilibrium", {"fast_run", "canonicalize"},
              [](const Ctx& c) { return canonicalize(c, false); }),
        entry("canonicalize_fast_compile", 1, "Equilibrium", {"fast_compile_only"},
              [](const Ctx& c) { return canonicalize(c, true); }),
        entry("merge1.2", 1.2, "Merge", {"fast_run", "fast_compile", "merge"},
              [](const Ctx&) { return merge("merge1.2"); }),
        entry("gpuarray_graph_optimization", 48.495, "GraphToGpu", {"fast_run", "fast_compile", "gpuarray"},
              [](const Ctx& c) { return std::make_shared<GraphToGpu>(c.caps, c.allocSpecialCase); }),
        entry("gpuarray_backward", 48.497, "Walker", {"backward", "cleanup_only"},
              [](const Ctx& c) { return out2in("gpuarray_backward", c.filter(backwardLifters(c.caps)), false); }),
        entry("InputToGpuArrayOptimizer", 48.5, "InputToGpu", {"fast_run", "fast_compile", "merge", "gpuarray"},
              [](const Ctx&) { return std::make_shared<InputToGpu>(); }),
        entry("gpuarray_local_optimizations", 48.51, "Equilibrium", {"fast_run", "fast_compile", "gpuarray"},
              [](const Ctx& c) { return gpuLocal(c, c.opLiftersInEquilibrium); }),
        entry("gpuarray_cut_transfers", 48.52, "Equilibrium", {"fast_run", "fast_compile", "gpuarray"}, cutTransfers),
        entry("gpua_elemwise_fusion", 49, "Fusion", {"fast_run", "fusion", "gpuarray"},
              [](const Ctx&) { return std::make_shared<GpuElemwiseFusion>(); }),
        entry("merge2", 49, "Merge", {"fast_run", "merge"}, [](const Ctx&) { return merge("merge2"); }),
        entry("local_gpua_alloc_empty_to_zeros", 49.3, "Walker", {"alloc_empty_to_zeros"},
              [](const Ctx& c) { return in2out("local_gpua_alloc_empty_to_zeros", c.filter({allocEmptyToZeros()})); }),
        entry("merge3", 100, "Merge", {"fast_run", "merge"}, [](const Ctx&) { return merge("merge3"); }),
    };
}

const PhaseEntry& findEntry(const std::string& name) {
    for (const auto& e : phaseRegistry())
        if (e.info.name == name) return e;
    throw Error("unknown phase '" + name + "'");
}
} // namespace

const std::vector<PhaseEntry>& phaseRegistry() {
    static const auto r = buildRegistry();
    return r;
}

std::vector<std::string> Pipeline::builtinNames() { return {"theano", "cleanup", "legacy", "fast_compile", "none"}; }

void Pipeline::sort() {
    std::stable_sort(m_phases.begin(), m_phases.end(), [](const PhaseEntry& a, const PhaseEntry& b) {
        return a.info.position != b.info.position ? a.info.position < b.info.position : a.info.name < b.info.name;
    });
}

Pipeline Pipeline::builtin(const std::string& name) {
    Pipeline p;
    p.m_name = name;
    std::vector<std::string> names;
    if (name == "theano") {
        names = {"merge1",
                 "useless",
                 "merge1.1",
                 "canonicalize",
                 "merge1.2",
                 "gpuarray_graph_optimization",
                 "InputToGpuArrayOptimizer",
                 "gpuarray_local_optimizations",
                 "gpuarray_cut_transfers",
                 "gpua_elemwise_fusion",
                 "merge2",
                 "merge3"};
        p.m_ctx.localGroupDispatch = false;
    } else if (name == "cleanup") {
        names = {"merge1",
                 "useless",
                 "merge1.1",
                 "canonicalize",
                 "merge1.2",
                 "gpuarray_graph_optimization",
                 "gpuarray_backward",
                 "InputToGpuArrayOptimizer",
                 "gpuarray_local_optimizations",
                 "gpuarray_cut_transfers",
                 "gpua_elemwise_fusion",
                 "merge2",
                 "merge3"};
        p.m_ctx.allocSpecialCase = false;
        p.m_ctx.opLiftersInEquilibrium = false;
        p.m_ctx.localGroupDispatch = true;
    } else if (name == "legacy") {
        names = {"merge1",
                 "useless",
                 "merge1.1",
                 "canonicalize",
                 "merge1.2",
                 "InputToGpuArrayOptimizer",
                 "gpuarray_local_optimizations",
                 "gpuarray_cut_transfers",
                 "gpua_elemwise_fusion",
                 "merge2",
                 "merge3"};
    } else if (name == "fast_compile") {
        names = {"merge1",
                 "canonicalize_fast_compile",
                 "merge1.2",
                 "gpuarray_graph_optimization",
                 "InputToGpuArrayOptimizer",
                 "gpuarray_local_optimizations",
                 "gpuarray_cut_transfers"};
        p.m_ctx.requireTag = "fast_compile";
    } else if (name != "none") {
        throw Error("unknown pipeline '" + name + "' (built-in: theano, cleanup, legacy, fast_compile, none)");
    }
    for (const auto& n : names) p.m_phases.push_back(findEntry(n));
    p.sort();
    return p;
}

Pipeline Pipeline::fromJson(const nlohmann::json& doc, const std::string& label) {
    auto fail = [&](const std::string& field, const std::string& why) {
        return Error(label + ": " + field + ": " + why);
    };
    if (!doc.is_object() || !doc.contains("format") || doc["format"] != "passlens.pipeline")
        throw fail("format", "not a pipeline file: expected \"format\": \"passlens.pipeline\"");
    if (!doc.contains("version") || doc["version"] != 1)
        throw fail("version", "unsupported version (this build reads version 1)");
    // an optional string field; a value of another type is named with its place
    auto text = [&](const char* key, const std::string& fallback) {
        if (!doc.contains(key)) return fallback;
        if (!doc[key].is_string()) throw fail(key, std::string("expected a string, got ") + doc[key].type_name());
        return doc[key].get<std::string>();
    };
    const std::string base = text("base", "theano");
    Pipeline p;
    try {
        p = builtin(base);
    } catch (const Error& e) {
        throw fail("base", e.what());
    }
    p.m_name = text("name", base);
    auto strings = [&](const char* key) {
        std::vector<std::string> out;
        if (!doc.contains(key)) return out;
        if (!doc[key].is_array()) throw fail(key, "expected a list of names or tags");
        for (const auto& e : doc[key]) {
            if (!e.is_string()) throw fail(key, std::string("expected a string, got ") + e.type_name());
            out.push_back(e.get<std::string>());
        }
        return out;
    };
    for (const auto& t : strings("include")) p.include(t);
    for (const auto& t : strings("exclude")) p.exclude(t);
    if (doc.contains("move")) {
        if (!doc["move"].is_array()) throw fail("move", "expected a list of {phase, position}");
        for (std::size_t i = 0; i < doc["move"].size(); ++i) {
            const auto& m = doc["move"][i];
            const std::string where = "move[" + std::to_string(i) + "]";
            if (!m.is_object() || !m.contains("phase") || !m["phase"].is_string() || !m.contains("position") ||
                !m["position"].is_number())
                throw fail(where, "expected {\"phase\": NAME, \"position\": NUMBER}");
            try {
                p.move(m["phase"].get<std::string>(), m["position"].get<double>());
            } catch (const Error& e) {
                throw fail(where, e.what());
            }
        }
    }
    if (doc.contains("max_use_ratio")) {
        if (!doc["max_use_ratio"].is_number() || doc["max_use_ratio"].get<double>() <= 0)
            throw fail("max_use_ratio", "expected a positive number");
        p.m_ctx.maxUseRatio = doc["max_use_ratio"].get<double>();
    }
    if (doc.contains("tracks_dispatch")) {
        if (!doc["tracks_dispatch"].is_boolean()) throw fail("tracks_dispatch", "expected true or false");
        p.m_ctx.dispatch = doc["tracks_dispatch"].get<bool>();
    }
    try {
        p.m_ctx.caps.apply(doc);
    } catch (const Error& e) {
        throw Error(label + ": " + e.what());
    }
    return p;
}

Pipeline Pipeline::fromFile(const std::filesystem::path& path) {
    const nlohmann::json doc = readJsonFile(path);
    return fromJson(doc, path.string());
}

std::vector<PhaseInfo> Pipeline::phases() const {
    std::vector<PhaseInfo> out;
    for (const auto& e : m_phases)
        if (!m_disabled.count(e.info.name)) out.push_back(e.info);
    return out;
}

void Pipeline::include(const std::string& t) {
    bool found = false;
    for (const auto& e : phaseRegistry()) {
        if (e.info.name != t && !e.tags.count(t)) continue;
        found = true;
        const bool present = std::any_of(m_phases.begin(), m_phases.end(),
                                         [&](const PhaseEntry& p) { return p.info.name == e.info.name; });
        if (!present) m_phases.push_back(e);
    }
    (void)found; // a tag that names no phase may still re-enable excluded rewrites
    m_ctx.exclude.erase(t);
    sort();
}

void Pipeline::exclude(const std::string& t) {
    m_phases.erase(std::remove_if(m_phases.begin(), m_phases.end(),
                                  [&](const PhaseEntry& e) { return e.info.name == t || e.tags.count(t); }),
                   m_phases.end());
    m_ctx.exclude.insert(t);
}

void Pipeline::move(const std::string& phase, double position) {
    for (auto& e : m_phases)
        if (e.info.name == phase) {
            e.info.position = position;
            sort();
            return;
        }
    throw Error("no phase '" + phase + "' in pipeline '" + m_name + "'");
}

void Pipeline::setEnabled(const std::string& phase, bool enabled) {
    if (enabled)
        m_disabled.erase(phase);
    else
        m_disabled.insert(phase);
}

PipelineRun Pipeline::run(FunctionGraph& graph, Instrumentation* instr, bool validate,
                          const CancelToken* cancel) const {
    PipelineRun out;
    out.pipeline = m_name;
    out.nodesBefore = graph.nodeCount();
    const auto t0 = std::chrono::steady_clock::now();
    struct Notes final : Instrumentation {
        std::vector<std::string>* sink = nullptr;
        void message(std::string_view t) override { sink->emplace_back(t); }
    } notes;
    notes.sink = &out.messages;
    InstrumentationList list;
    if (instr) list.add(instr);
    list.add(&notes);
    RewriteEngine engine(graph, &list);
    engine.setCancel(cancel);
    list.pipelineBegin(m_name, graph);
    for (const auto& e : m_phases) {
        if (m_disabled.count(e.info.name)) continue;
        throwIfCancelled(cancel, "the pipeline run");
        PhasePtr phase = e.make(m_ctx);
        PhaseRun pr;
        pr.info = e.info;
        pr.nodesBefore = graph.nodeCount();
        std::map<std::string, RewriterStats> before = engine.stats();
        const std::size_t decisionsBefore = engine.liftDecisions().size();
        list.phaseBegin(e.info, graph);
        const auto tp = std::chrono::steady_clock::now();
        try {
            const PhaseResult res = phase->apply(engine);
            pr.changed = res.changed;
            pr.converged = res.converged;
        } catch (const Cancelled&) {
            throw; // not a failing phase: the run ends
        } catch (const Error& err) {
            out.messages.push_back("phase " + e.info.name + " failed: " + err.what());
        }
        pr.timeUs = elapsedUs(tp);
        pr.nodesAfter = graph.nodeCount();
        for (const auto& [n, st] : engine.stats()) {
            auto it = before.find(n);
            const std::int64_t a = st.applied - (it == before.end() ? 0 : it->second.applied);
            const std::int64_t r = st.rejected - (it == before.end() ? 0 : it->second.rejected);
            const std::int64_t tr = st.tried - (it == before.end() ? 0 : it->second.tried);
            pr.applied += a;
            pr.rejected += r;
            if (tr > 0 || a > 0) {
                RewriterStats d = st;
                if (it != before.end()) {
                    d.tried -= it->second.tried;
                    d.applied -= it->second.applied;
                    d.rejected -= it->second.rejected;
                    d.nodesCreated -= it->second.nodesCreated;
                    d.timeUs -= it->second.timeUs;
                }
                pr.rewriters[n] = d;
            }
            if (tr > 0 && !out.rewriterPhase.count(n)) out.rewriterPhase[n] = e.info.name;
        }
        pr.profile = phase->profile(engine, 4);
        if (engine.liftDecisions().size() > decisionsBefore) // a GraphToGpu phase: the report explains its decisions
            out.graphToGpuDecisions = engine.takeLiftDecisions(decisionsBefore);
        list.phaseEnd(e.info, graph, pr.changed, pr.timeUs);
        if (validate) {
            try {
                graph.validate();
            } catch (const Error& err) {
                out.messages.push_back("validation after " + e.info.name + " failed: " + err.what());
            }
        }
        out.phases.push_back(std::move(pr));
    }
    list.pipelineEnd(m_name, graph);
    out.rewriters = engine.stats();
    out.attempts = engine.attempts();
    out.totalUs = elapsedUs(t0);
    out.nodesAfter = graph.nodeCount();
    return out;
}

std::string PipelineRun::profileText() const {
    char buf[512];
    std::string out;
    std::snprintf(buf, sizeof buf,
                  "Optimizer Profile\n-----------------\n SeqOptimizer OPT_%s time %.3fs for %zu/%zu nodes "
                  "before/after optimization\n",
                  pipeline.c_str(), totalUs / 1e6, nodesBefore, nodesAfter);
    out += buf;
    out += "   time      - (name, class, index, nodes before, nodes after) - applied\n";
    std::vector<std::size_t> order(phases.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return phases[a].timeUs > phases[b].timeUs; });
    for (std::size_t i : order) {
        const auto& p = phases[i];
        std::snprintf(buf, sizeof buf, "   %.6fs - ('%s', '%s', %zu) - (%zu, %zu) - %lld\n", p.timeUs / 1e6,
                      p.info.name.c_str(), p.info.kind.c_str(), i, p.nodesBefore, p.nodesAfter,
                      static_cast<long long>(p.applied));
        out += buf;
    }
    for (std::size_t i : order)
        if (!phases[i].profile.empty()) out += phases[i].profile;
    for (const auto& m : messages) out += " note: " + m + "\n";
    return out;
}

} // namespace passlens
