#pragma once
/// @file Instrumentation.h
/// The single listener through which the debugger sees an optimization run (MLIR's
/// PassInstrumentation + rewriter listener): pipeline and phase begin/end, every rewrite tried,
/// declined (with a lazily built reason), applied or rejected (with the validation error), and,
/// as a GraphObserver, every graph edit. Rewrites never call it: GraphEditor and the drivers do.
#include "passlens/ir/FunctionGraph.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

struct Replacement;

/// Static description of a pipeline phase.
struct PhaseInfo {
    std::string name;    ///< e.g. "gpuarray_cut_transfers"
    double position = 0; ///< SequenceDB position
    std::string kind;    ///< "Merge", "Equilibrium", "Walker", "GraphToGpu", ...
};

class Instrumentation : public GraphObserver {
public:
    virtual void pipelineBegin(std::string_view /*name*/, const FunctionGraph&) {}
    virtual void pipelineEnd(std::string_view /*name*/, const FunctionGraph&) {}
    virtual void phaseBegin(const PhaseInfo&, const FunctionGraph&) {}
    /// `timeUs` in microseconds of wall time.
    virtual void phaseEnd(const PhaseInfo&, const FunctionGraph&, bool /*changed*/, double /*timeUs*/) {}
    /// Return true to have declines recorded with their reasons (costs the reason strings).
    virtual bool wantsReasons() const { return false; }
    /// `node` is null for whole-graph rewrites (GraphToGPU, Merge).
    virtual void rewriteTried(std::string_view /*rewriter*/, const Apply* /*node*/) {}
    virtual void rewriteDeclined(std::string_view /*rewriter*/, const Apply* /*node*/, const std::string& /*reason*/) {}
    /// After the replacement was validated and applied; `timeUs` covers transform + replace.
    virtual void rewriteApplied(std::string_view /*rewriter*/, const Apply* /*node*/, const Replacement&,
                                double /*timeUs*/) {}
    /// The replacement failed validation (or the rewrite threw); the graph is unchanged.
    virtual void rewriteRejected(std::string_view /*rewriter*/, const Apply* /*node*/, const std::string& /*error*/) {}
    /// Free-form note (e.g. the Equilibrium max_use_ratio abort message).
    virtual void message(std::string_view /*text*/) {}
};

/// Fans out to several instrumentations (a recorder and a profiler, say).
class InstrumentationList final : public Instrumentation {
public:
    void add(Instrumentation* i) { m_list.push_back(i); }
    bool empty() const { return m_list.empty(); }
    void pipelineBegin(std::string_view n, const FunctionGraph& g) override {
        for (auto* i : m_list) i->pipelineBegin(n, g);
    }
    void pipelineEnd(std::string_view n, const FunctionGraph& g) override {
        for (auto* i : m_list) i->pipelineEnd(n, g);
    }
    void phaseBegin(const PhaseInfo& p, const FunctionGraph& g) override {
        for (auto* i : m_list) i->phaseBegin(p, g);
    }
    void phaseEnd(const PhaseInfo& p, const FunctionGraph& g, bool c, double t) override {
        for (auto* i : m_list) i->phaseEnd(p, g, c, t);
    }
    bool wantsReasons() const override {
        for (auto* i : m_list)
            if (i->wantsReasons()) return true;
        return false;
    }
    void rewriteTried(std::string_view r, const Apply* n) override {
        for (auto* i : m_list) i->rewriteTried(r, n);
    }
    void rewriteDeclined(std::string_view r, const Apply* n, const std::string& why) override {
        for (auto* i : m_list) i->rewriteDeclined(r, n, why);
    }
    void rewriteApplied(std::string_view r, const Apply* n, const Replacement& rep, double t) override {
        for (auto* i : m_list) i->rewriteApplied(r, n, rep, t);
    }
    void rewriteRejected(std::string_view r, const Apply* n, const std::string& e) override {
        for (auto* i : m_list) i->rewriteRejected(r, n, e);
    }
    void message(std::string_view t) override {
        for (auto* i : m_list) i->message(t);
    }
    void onImport(const FunctionGraph& g, const Apply& n, std::string_view r) override {
        for (auto* i : m_list) i->onImport(g, n, r);
    }
    void onPrune(const FunctionGraph& g, const Apply& n, std::string_view r) override {
        for (auto* i : m_list) i->onPrune(g, n, r);
    }
    void onChangeInput(const FunctionGraph& g, const Apply* n, int k, const Variable& a, const Variable& b,
                       std::string_view r) override {
        for (auto* i : m_list) i->onChangeInput(g, n, k, a, b, r);
    }
    void onReplace(const FunctionGraph& g, const Variable& a, const Variable& b, std::string_view r) override {
        for (auto* i : m_list) i->onReplace(g, a, b, r);
    }

private:
    std::vector<Instrumentation*> m_list;
};

} // namespace passlens
