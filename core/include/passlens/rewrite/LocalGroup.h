#pragma once
/// @file LocalGroup.h
/// Theano's LocalOptGroup (gof/opt.py): several node rewrites behind one, dispatched by tracks.
#include "passlens/rewrite/NodeRewriter.h"

#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace passlens {

/// Which rewrites of a set may apply to an op: `all` members first, then those tracking the op's
/// exact kind, then those tracking the op instance (THEANO_SEMANTICS §3.4 order), or with
/// dispatch off every member in registration order.
class TracksIndex {
public:
    TracksIndex() = default;
    explicit TracksIndex(const std::vector<NodeRewriter>& members);
    /// Indices into the member list, in trial order. Computed once per op (ops are interned);
    /// the list stays valid as long as the index. Not for concurrent use (one index per phase).
    const std::vector<std::size_t>& candidates(const Op& op, bool dispatch) const;
    std::size_t size() const { return m_size; }

private:
    std::size_t m_size = 0;
    std::vector<std::size_t> m_all;
    std::map<std::string, std::vector<std::size_t>> m_byKind;
    std::map<const Op*, std::vector<std::size_t>> m_byOp;
    std::vector<std::size_t> m_every;                                        // 0 .. size-1
    mutable std::unordered_map<const Op*, std::vector<std::size_t>> m_perOp; // candidates by op
};

/// A LocalOptGroup as one NodeRewriter named `name`: the first member that applies wins.
/// With `applyAllOpts` (the `useless` phase) it keeps applying members to the owner of the first
/// new variable until nothing applies and returns the composed replacement. Its tracks are the
/// union of the members' tracks (all when any member tracks all, unlike Theano's quirk of
/// ignoring None-tracked members; see core/README.md). `dispatch` false tries every member on
/// every node (to measure what tracks save).
NodeRewriter makeLocalGroup(std::string name, std::vector<NodeRewriter> members, bool applyAllOpts = false,
                            bool dispatch = true);

} // namespace passlens
