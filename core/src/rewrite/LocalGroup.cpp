#include "passlens/rewrite/LocalGroup.h"

#include <algorithm>
#include <memory>

namespace passlens {

TracksIndex::TracksIndex(const std::vector<NodeRewriter>& members)
    : m_size(members.size()) {
    for (std::size_t i = 0; i < members.size(); ++i) {
        const Tracks& t = members[i].tracks();
        if (t.all) m_all.push_back(i);
        for (const auto& k : t.kinds) m_byKind[k].push_back(i);
        for (const Op* o : t.ops) m_byOp[o].push_back(i);
        m_every.push_back(i);
    }
}

const std::vector<std::size_t>& TracksIndex::candidates(const Op& op, bool dispatch) const {
    if (!dispatch) return m_every;
    const auto [slot, added] = m_perOp.try_emplace(&op);
    if (!added) return slot->second;
    std::vector<std::size_t>& out = slot->second;
    out = m_all;
    if (auto it = m_byKind.find(op.kind()); it != m_byKind.end())
        out.insert(out.end(), it->second.begin(), it->second.end());
    if (auto it = m_byOp.find(&op); it != m_byOp.end())
        for (std::size_t i : it->second)
            if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
    return out;
}

NodeRewriter makeLocalGroup(std::string name, std::vector<NodeRewriter> members, bool applyAllOpts, bool dispatch) {
    Tracks tracks;
    for (const auto& m : members) {
        if (m.tracks().all) tracks.all = true;
        for (const auto& k : m.tracks().kinds)
            if (std::find(tracks.kinds.begin(), tracks.kinds.end(), k) == tracks.kinds.end()) tracks.kinds.push_back(k);
        for (const Op* o : m.tracks().ops) tracks.ops.push_back(o);
    }
    auto shared = std::make_shared<std::vector<NodeRewriter>>(std::move(members));
    auto index = std::make_shared<TracksIndex>(*shared);
    auto firstResult = [shared, index, dispatch](RewriteCall& call, Apply& node) -> std::optional<Replacement> {
        std::string reasons;
        for (std::size_t i : index->candidates(node.op(), dispatch)) {
            const NodeRewriter& m = (*shared)[i];
            if (!dispatch && !m.tracksOp(node.op())) continue;
            RewriteCall sub(call.graph, node, call.wantsReasons());
            auto r = m.transform(sub);
            if (r) return r;
            if (!sub.reason().empty()) reasons += (reasons.empty() ? "" : "; ") + m.name() + ": " + sub.reason();
        }
        if (!reasons.empty()) call.decline([&] { return reasons; });
        return std::nullopt;
    };
    TransformFn fn = [firstResult, applyAllOpts](RewriteCall& call) -> std::optional<Replacement> {
        auto r = firstResult(call, call.node);
        if (!r || !applyAllOpts) return r;
        // apply_all_opts: keep rewriting the owner of the first new variable.
        for (int guard = 0; guard < 64 && !r->pairs.empty(); ++guard) {
            Variable* v = r->pairs[0].second;
            Apply* owner = v->owner();
            if (!owner || owner->inGraph()) break;
            RewriteCall sub(call.graph, *owner, false);
            auto next = firstResult(sub, *owner);
            if (!next) break;
            bool composed = false;
            for (auto& [o, n] : next->pairs)
                for (auto& p : r->pairs)
                    if (p.second == o) {
                        p.second = n;
                        composed = true;
                    }
            if (!composed) break;
        }
        return r;
    };
    return NodeRewriter(std::move(name), std::move(tracks), std::move(fn));
}

} // namespace passlens
