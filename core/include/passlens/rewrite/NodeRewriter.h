#pragma once
/// @file NodeRewriter.h
/// Theano's LocalOptimizer (gof/opt.py) under PyTensor's name: a named rewrite of one Apply node,
/// dispatched by `tracks` (exact op kinds or op instances, never subclasses; "all" must be asked
/// for explicitly, THEANO_SEMANTICS §0.5, §3.2).
#include "passlens/ir/FunctionGraph.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace passlens {

/// What a rewrite returns: pairs (old variable, new variable), applied together through
/// FunctionGraph::replaceAllValidate; `remove` lists nodes that must be gone afterwards
/// (Theano's replace_all_validate_remove), else the change is rejected and rolled back.
struct Replacement {
    std::vector<std::pair<Variable*, Variable*>> pairs;
    std::vector<const Apply*> remove;
};

/// Which nodes a rewrite wants to see. Empty kinds and ops with all == false tracks nothing.
struct Tracks {
    std::vector<std::string> kinds; ///< exact op kinds (Theano: exact classes)
    std::vector<const Op*> ops;     ///< op instances (interned, so pointer equality)
    bool all = false;               ///< Theano's tracks() == None
    static Tracks allNodes() { return {{}, {}, true}; }
    static Tracks of(std::vector<std::string> k) { return {std::move(k), {}, false}; }
};

/// One call of a rewrite on a node. `decline` records why it did not apply; the reason is
/// built only when decline reasons are being recorded (`--reasons`).
class RewriteCall {
public:
    RewriteCall(FunctionGraph& g, Apply& n, bool wantReasons)
        : graph(g)
        , node(n)
        , m_want(wantReasons) {}
    FunctionGraph& graph;
    Apply& node;
    /// Always returns std::nullopt, so a transform can `return call.decline(...)`.
    std::nullopt_t decline(const std::function<std::string()>& reason) {
        if (m_want) m_reason = reason();
        return std::nullopt;
    }
    const std::string& reason() const { return m_reason; }
    bool wantsReasons() const { return m_want; }

private:
    bool m_want;
    std::string m_reason;
};

using TransformFn = std::function<std::optional<Replacement>(RewriteCall&)>;

/// A named node rewrite. Cheap to copy (shares nothing mutable).
class NodeRewriter {
public:
    NodeRewriter(std::string name, Tracks tracks, TransformFn fn, std::set<std::string> tags = {})
        : m_name(std::move(name))
        , m_tracks(std::move(tracks))
        , m_fn(std::move(fn))
        , m_tags(std::move(tags)) {}

    const std::string& name() const { return m_name; }
    const Tracks& tracks() const { return m_tracks; }
    const std::set<std::string>& tags() const { return m_tags; }
    /// Whether tracks select this op (exact kind, op instance, or all).
    bool tracksOp(const Op& op) const;
    /// Runs the transform. Exceptions propagate (the caller records them as a rejection).
    std::optional<Replacement> transform(RewriteCall& call) const { return m_fn(call); }

private:
    std::string m_name;
    Tracks m_tracks;
    TransformFn m_fn;
    std::set<std::string> m_tags;
};

} // namespace passlens
