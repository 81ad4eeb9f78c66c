#pragma once
/// @file RewriteEngine.h
/// The one facade through which every phase changes the graph (MLIR's PatternRewriter idea):
/// it runs a rewrite's transform, applies the replacement with replaceAllValidate, times it,
/// counts the nodes it created, and reports tried / declined / applied / rejected to the
/// Instrumentation. As Theano's NavigatorOptimizer.process_node (gof/opt.py) with the
/// warn_inplace failure policy: a failing rewrite is recorded and the pipeline continues.
#include "passlens/ir/CancelToken.h"
#include "passlens/rewrite/Instrumentation.h"
#include "passlens/rewrite/NodeRewriter.h"

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace passlens {

/// Per rewriter (or per whole-graph pass) counters. Times in microseconds.
struct RewriterStats {
    std::int64_t tried = 0;
    std::int64_t applied = 0;
    std::int64_t rejected = 0;
    std::int64_t nodesCreated = 0;
    double timeUs = 0;
};

/// Why a node GraphToGpu saw did or did not move to the GPU; reported through
/// RewriteEngine::liftDecided and read by the Pipeline for the lifting report.
struct LiftDecision {
    NodeId node = -1; ///< the node as seen, or its host clone when a lifter refused a node with a GPU input
    bool lifted = false;
    std::string lifter; ///< when lifted
    std::string reason; ///< when not lifted, or how (e.g. "Alloc special case")
};

class RewriteEngine final : public GraphObserver {
public:
    /// Attaches itself (and `instr`, when given) to `graph` as observers until destroyed.
    RewriteEngine(FunctionGraph& graph, Instrumentation* instr);
    ~RewriteEngine() override;
    RewriteEngine(const RewriteEngine&) = delete;
    RewriteEngine& operator=(const RewriteEngine&) = delete;

    FunctionGraph& graph() { return m_graph; }
    Instrumentation* instrumentation() { return m_instr; }
    bool wantReasons() const { return m_wantReasons; }

    /// Tries `rw` on `node` (which must be in the graph). Returns true when a replacement was
    /// applied. Exceptions from the transform and validation failures are recorded as
    /// rejections; the graph is then exactly as before.
    bool tryRewrite(const NodeRewriter& rw, Apply& node);
    /// Applies a replacement computed by a whole-graph pass (GraphToGPU, Merge) under `name`.
    /// `transformUs` (>= 0) is the time spent computing it, in microseconds; `tryCounted` says
    /// that this attempt was already counted as a try (tryRewrite, or a pass that called
    /// countTry), else it is counted here. Returns false (recorded as rejected) when validation
    /// fails.
    bool applyReplacement(const std::string& name, const Apply* node, const Replacement& r, double transformUs,
                          bool tryCounted = false);
    /// Records that a whole-graph pass looked at a node and declined (reason built lazily).
    void declined(const std::string& name, const Apply* node, const std::function<std::string()>& reason);
    /// Counts a try of `name` without running anything (dispatch statistics). Every attempt
    /// (tryRewrite, tryLifter, applyReplacement) starts here: throws Cancelled when the token of
    /// setCancel is cancelled, before the attempt changes anything. Returns the rewriter's
    /// statistics entry, so an attempt looks its name up once.
    RewriterStats& countTry(const std::string& name, const Apply* node);
    /// The token polled before every rewrite attempt (null: never cancelled); it must outlive
    /// the engine's use.
    void setCancel(const CancelToken* token) { m_cancel = token; }
    /// Tries lifter `name` of a whole-graph pass (GraphToGpu builds its GPU copy in a side
    /// mapping, so nothing is applied here): counts the try, times `lift` into the lifter's
    /// statistics and reports a decline with the reason `lift` leaves in its argument. Returns
    /// the new outputs `lift` built, or empty when it declined.
    std::vector<Variable*> tryLifter(const std::string& name, const Apply* node,
                                     const std::function<std::vector<Variable*>(std::string& reason)>& lift);
    /// Records why a node did or did not move to the GPU (GraphToGpu); the Pipeline hands the
    /// decisions of its last GraphToGpu phase to the lifting report.
    void liftDecided(LiftDecision d) { m_liftDecisions.push_back(std::move(d)); }
    /// The decisions recorded since construction, in order, less those taken.
    const std::vector<LiftDecision>& liftDecisions() const { return m_liftDecisions; }
    /// Removes and returns the decisions after the first `from` (the Pipeline moves a GraphToGpu
    /// phase's decisions, one per node of the graph, into its result instead of copying them).
    std::vector<LiftDecision> takeLiftDecisions(std::size_t from);

    /// Statistics per rewriter name, since construction.
    const std::map<std::string, RewriterStats>& stats() const { return m_stats; }
    RewriterStats& stats(const std::string& name) { return m_stats[name]; }
    /// Committed graph edits seen (imports + input changes; a rolled-back replacement delivers
    /// none), for change detection by the drivers.
    std::int64_t editCount() const { return m_edits; }
    /// Whether the graph is as the last Merge pass that merged all it found (none rejected)
    /// left it: no edit since, so another Merge pass would find nothing (Merge.h).
    bool mergeComplete() const { return m_mergedAt == m_edits; }
    /// Records that a Merge pass just merged all it found.
    void setMergeComplete() { m_mergedAt = m_edits; }
    /// Total transform calls (the figure tracks dispatch saves).
    std::int64_t attempts() const { return m_attempts; }

    void onImport(const FunctionGraph&, const Apply&, std::string_view) override {
        ++m_edits;
        ++m_imports;
    }
    void onChangeInput(const FunctionGraph&, const Apply*, int, const Variable&, const Variable&,
                       std::string_view) override {
        ++m_edits;
    }

private:
    /// applyReplacement after the try was counted into `st` (the statistics of `name`).
    bool commitReplacement(RewriterStats& st, const std::string& name, const Apply* node, const Replacement& r,
                           double transformUs);
    FunctionGraph& m_graph;
    Instrumentation* m_instr;
    bool m_wantReasons;
    const CancelToken* m_cancel = nullptr;
    std::map<std::string, RewriterStats> m_stats;
    std::int64_t m_edits = 0;
    std::int64_t m_mergedAt = -1; // m_edits after the last complete Merge pass
    std::int64_t m_imports = 0;
    std::int64_t m_attempts = 0;
    std::vector<LiftDecision> m_liftDecisions;
};

/// Microseconds since `t0`.
inline double elapsedUs(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace passlens
