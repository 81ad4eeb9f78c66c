#include "passlens/rewrite/RewriteEngine.h"

#include "passlens/io/Failure.h"
#include "passlens/ir/Error.h"

#include <algorithm>
#include <iterator>
#include <new>

namespace passlens {

bool NodeRewriter::tracksOp(const Op& op) const {
    if (m_tracks.all) return true;
    for (const auto& k : m_tracks.kinds)
        if (k == op.kind()) return true;
    for (const Op* o : m_tracks.ops)
        if (o == &op) return true;
    return false;
}

RewriteEngine::RewriteEngine(FunctionGraph& graph, Instrumentation* instr)
    : m_graph(graph)
    , m_instr(instr)
    , m_wantReasons(instr && instr->wantsReasons()) {
    m_graph.addObserver(this);
    if (m_instr) m_graph.addObserver(m_instr);
}

RewriteEngine::~RewriteEngine() {
    m_graph.removeObserver(this);
    if (m_instr) m_graph.removeObserver(m_instr);
}

RewriterStats& RewriteEngine::countTry(const std::string& name, const Apply* node) {
    throwIfCancelled(m_cancel, "the pipeline run");
    ++m_attempts;
    RewriterStats& st = m_stats[name];
    ++st.tried;
    if (m_instr) m_instr->rewriteTried(name, node);
    return st;
}

void RewriteEngine::declined(const std::string& name, const Apply* node, const std::function<std::string()>& reason) {
    if (m_instr && m_wantReasons) m_instr->rewriteDeclined(name, node, reason());
}

std::vector<Variable*>
RewriteEngine::tryLifter(const std::string& name, const Apply* node,
                         const std::function<std::vector<Variable*>(std::string& reason)>& lift) {
    const auto t0 = std::chrono::steady_clock::now();
    RewriterStats& st = countTry(name, node); // map entries stay put while others are added
    std::string reason;
    std::vector<Variable*> outs = lift(reason);
    st.timeUs += elapsedUs(t0);
    if (outs.empty()) declined(name, node, [&] { return reason; });
    return outs;
}

bool RewriteEngine::tryRewrite(const NodeRewriter& rw, Apply& node) {
    const auto t0 = std::chrono::steady_clock::now();
    RewriterStats& st = countTry(rw.name(), &node);
    RewriteCall call(m_graph, node, m_wantReasons);
    std::optional<Replacement> r;
    try {
        r = rw.transform(call);
    } catch (const std::bad_alloc&) {
        throw; // out of memory ends the run (a message naming the command), it is no rejection
    } catch (const std::exception&) {
        st.timeUs += elapsedUs(t0);
        ++st.rejected;
        if (m_instr)
            m_instr->rewriteRejected(rw.name(), &node, "the rewrite threw: " + currentExceptionMessage(rw.name()));
        return false;
    }
    if (!r) {
        st.timeUs += elapsedUs(t0);
        if (m_instr && m_wantReasons)
            m_instr->rewriteDeclined(rw.name(), &node, call.reason().empty() ? "no match" : call.reason());
        return false;
    }
    return commitReplacement(st, rw.name(), &node, *r, elapsedUs(t0));
}

bool RewriteEngine::applyReplacement(const std::string& name, const Apply* node, const Replacement& r,
                                     double transformUs, bool tryCounted) {
    return commitReplacement(tryCounted ? m_stats[name] : countTry(name, node), name, node, r, transformUs);
}

bool RewriteEngine::commitReplacement(RewriterStats& st, const std::string& name, const Apply* node,
                                      const Replacement& r, double transformUs) {
    const double pre = transformUs;
    const auto t0 = std::chrono::steady_clock::now();
    Replacement changed;
    changed.remove = r.remove;
    for (const auto& p : r.pairs)
        if (p.first != p.second) changed.pairs.push_back(p);
    if (changed.pairs.empty()) {
        st.timeUs += pre + elapsedUs(t0);
        if (m_instr && m_wantReasons) m_instr->rewriteDeclined(name, node, "the replacement changes nothing");
        return false;
    }
    const std::int64_t imports0 = m_imports;
    try {
        m_graph.replaceAllValidate(changed.pairs, name, changed.remove);
    } catch (const Error& e) {
        st.timeUs += pre + elapsedUs(t0);
        ++st.rejected;
        if (m_instr) m_instr->rewriteRejected(name, node, e.what());
        return false;
    }
    const double us = pre + elapsedUs(t0);
    st.timeUs += us;
    ++st.applied;
    st.nodesCreated += m_imports - imports0;
    if (m_instr) m_instr->rewriteApplied(name, node, changed, us);
    return true;
}

std::vector<LiftDecision> RewriteEngine::takeLiftDecisions(std::size_t from) {
    from = std::min(from, m_liftDecisions.size());
    std::vector<LiftDecision> out;
    if (from == 0) {
        out.swap(m_liftDecisions);
        return out;
    }
    const auto first = m_liftDecisions.begin() + static_cast<std::ptrdiff_t>(from);
    out.assign(std::make_move_iterator(first), std::make_move_iterator(m_liftDecisions.end()));
    m_liftDecisions.erase(first, m_liftDecisions.end());
    return out;
}

} // namespace passlens
