#pragma once
/// @file Pipeline.h
/// Theano's optdb SequenceDB (gof/optdb.py, THEANO_SEMANTICS §2.6, §3.6) restricted to the passes
/// PassLens implements: named phases at float positions with tags, built-in pipelines, include /
/// exclude queries on tags and names, moves, and pipeline files (FORMAT.md §3).
#include "passlens/gpu/Capabilities.h"
#include "passlens/ir/CancelToken.h"
#include "passlens/gpu/GraphToGpu.h"
#include "passlens/rewrite/Instrumentation.h"
#include "passlens/rewrite/Phase.h"

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace passlens {

/// What phase factories need.
struct PhaseBuildContext {
    GpuCapabilities caps = GpuCapabilities::defaults();
    std::set<std::string> exclude; ///< rewrite names or tags to drop from every phase
    std::string requireTag;        ///< when set, keep only rewrites with this tag (fast_compile)
    bool dispatch = true;          ///< tracks dispatch in equilibria and walkers
    double maxUseRatio = 8.0;
    bool allocSpecialCase = true;
    bool opLiftersInEquilibrium = true;
    bool localGroupDispatch = true;
    /// Drops excluded rewrites (by name or tag).
    std::vector<NodeRewriter> filter(std::vector<NodeRewriter> rws) const;
};

struct PhaseEntry {
    PhaseInfo info;
    std::set<std::string> tags;
    std::function<PhasePtr(const PhaseBuildContext&)> make;
};

/// Per phase of a run.
struct PhaseRun {
    PhaseInfo info;
    bool changed = false;  ///< a replacement was committed (rejected ones count as no change)
    bool converged = true; ///< false when an Equilibrium stopped before its fixed point
    double timeUs = 0;
    std::size_t nodesBefore = 0, nodesAfter = 0;
    std::int64_t applied = 0, rejected = 0;
    std::string profile;                            ///< Theano-style profile text of the phase
    std::map<std::string, RewriterStats> rewriters; ///< counters of this phase only
};

struct PipelineRun {
    std::string pipeline;
    std::vector<PhaseRun> phases;
    std::map<std::string, RewriterStats> rewriters;
    std::map<std::string, std::string> rewriterPhase; ///< rewriter -> first phase it ran in
    std::vector<LiftDecision> graphToGpuDecisions;
    double totalUs = 0;
    std::size_t nodesBefore = 0, nodesAfter = 0;
    std::int64_t attempts = 0;
    std::vector<std::string> messages; ///< max_use aborts and other notes
    /// Theano's optimizer profile (SeqOptimizer block, §3.9).
    std::string profileText() const;
};

class Pipeline {
public:
    /// `theano`, `cleanup`, `legacy`, `fast_compile` or `none`. Throws passlens::Error for
    /// another name.
    static Pipeline builtin(const std::string& name);
    /// Reads a pipeline file (FORMAT.md §3). Throws passlens::Error("FILE: FIELD: reason").
    static Pipeline fromFile(const std::filesystem::path& path);
    /// Applies a pipeline document (base, include, exclude, move, capabilities, disable_dtypes,
    /// max_use_ratio, tracks_dispatch); `label` names it in messages.
    static Pipeline fromJson(const nlohmann::json& doc, const std::string& label);
    /// Names of the built-in pipelines.
    static std::vector<std::string> builtinNames();

    const std::string& name() const { return m_name; }
    /// Phases in run order (position, then name).
    std::vector<PhaseInfo> phases() const;
    const PhaseBuildContext& buildContext() const { return m_ctx; }
    PhaseBuildContext& buildContext() { return m_ctx; }

    /// Adds every registered phase with this tag or name (opt-in phases such as
    /// `alloc_empty_to_zeros`, or phases of other pipelines such as `gpuarray_backward`).
    void include(const std::string& tagOrName);
    /// Removes phases with this name or tag, and rewrites with this name or tag inside phases.
    void exclude(const std::string& tagOrName);
    /// Moves a phase. Throws passlens::Error for an unknown phase.
    void move(const std::string& phase, double position);
    /// Enables or disables a phase by name (GUI); a disabled phase does not run.
    void setEnabled(const std::string& phase, bool enabled);

    /// Runs every phase on `graph`, reporting to `instr` (may be null). Validates the graph after
    /// each phase when `validate` (tests). A phase that throws passlens::Error is recorded in
    /// `messages` and the pipeline continues with the graph as that phase left it. `cancel`
    /// (may be null) is polled before every phase and every rewrite attempt: once it is
    /// cancelled the run throws Cancelled("the pipeline run was cancelled") and `graph` is left
    /// as the rewrites before it made it (the caller drops it).
    PipelineRun run(FunctionGraph& graph, Instrumentation* instr, bool validate = false,
                    const CancelToken* cancel = nullptr) const;

private:
    std::string m_name;
    std::vector<PhaseEntry> m_phases;
    std::set<std::string> m_disabled;
    PhaseBuildContext m_ctx;
    void sort();
};

/// Every phase PassLens knows (the optdb registry), for include().
const std::vector<PhaseEntry>& phaseRegistry();

} // namespace passlens
