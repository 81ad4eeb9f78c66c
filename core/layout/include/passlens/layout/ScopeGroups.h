#pragma once
/// @file ScopeGroups.h
/// A drawing grouped by name scope, as TensorBoard's graph view and Google's Model Explorer do:
/// the '/'-separated prefixes of node names ("/encoder/layer.0/attn/MatMul" lies in "/encoder",
/// "/encoder/layer.0" and "/encoder/layer.0/attn") form a hierarchy; every scope that is not
/// open is drawn as one Group box with its node count, and the edges that cross its border are
/// merged into one per pair of boxes. Works on DrawGraph (no Graphviz, no FunctionGraph), so
/// steps, diffs and timing overlays are grouped alike.
#include <passlens/layout/DrawGraph.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

/// The scope of a node name: everything before its last '/', without trailing '/'s; "" when
/// there is none. "/conv1/Conv" -> "/conv1"; "/a/b/Add" -> "/a/b"; "/Add", "Conv_3" -> "".
std::string nameScope(std::string_view name);

/// The name a node's scope is read from: the Apply's name, else (a lifted or inserted node
/// whose outputs kept the ONNX names) its first output's name. DrawNode::name holds it.
std::string scopedName(const Apply& n);

/// True when some node of `graph` has a scoped name (View > Group by name scope has boxes to draw).
bool hasNameScopes(const FunctionGraph& graph);

/// The enclosing scope: "/encoder/layer.0" -> "/encoder"; "/encoder" -> "" (the top level).
std::string parentScope(std::string_view scope);

/// What is open. Scopes not listed (and not opened by the rules below) are drawn as one box.
struct ScopeGrouping {
    /// Scopes drawn open: their own nodes and their child scopes are shown.
    std::set<std::string> expanded;
    /// Nodes that must be drawn as themselves (a search hit, a jump target): every scope around
    /// them is opened.
    std::vector<NodeId> reveal;
    /// Opens a scope that would be the only box at its level (a model-wide "/model" prefix),
    /// repeatedly, so the first picture is never one box.
    bool openLoneScopes = true;
};

/// The scope of every node of `g` (index-aligned with g.nodes): an op's name scope (the Apply's
/// name, DrawNode::name: "/Add" and "Gemm_3" are at the top level); an op without any name (a
/// transfer or GPU op a rewrite inserted) takes the scope of its first producer op with a name
/// or an inherited scope, else of its first such consumer; a constant
/// the scope its consumers share (else the top level); inputs, outputs, placeholders and nested
/// graphs' nodes the top level (""). Linear in the drawing.
std::vector<std::string> nodeScopes(const DrawGraph& g);

/// Every scope of `g` (at every level, "" excluded) with the number of drawn nodes inside it.
std::map<std::string, std::size_t> scopeSizes(const DrawGraph& g);

/// `g` with every outermost closed scope of two or more nodes folded into one Group node:
/// key "g" + a hash of the scope (stable across steps, so stable layouts keep the box in place),
/// DrawNode::name the scope, title its last part ("attn"), subtitle "/encoder/layer.0/attn ·
/// 42 nodes", hiddenCount the member count; detail what changed inside: "3 added, 1 removed" in
/// diffs, "2 new" for nodes of the step's changed region (added by rewrites; the group is then a
/// seed); timing summed (NodeTiming::us) and coloured as its slowest member (NodeTiming::share). Edges between
/// the same pair of boxes become one (gpu when any is; labelled "×k" when k > 1; in a diff, added
/// or removed only when all of them are). Nested-graph clusters are kept as they are, beside their
/// owner. Without any scope in `g`, returns `g` unchanged. Linear in the drawing; never throws.
DrawGraph groupByScope(const DrawGraph& g, const ScopeGrouping& grouping = {});

/// Consumers from which a node is drawn as stubs (stubFanOut) in a grouped drawing.
inline constexpr std::size_t kStubFanOut = 8;

/// `g` with every node that feeds `minConsumers` or more distinct nodes (a shared weight's
/// transfer, a mask every layer reads, a box whose output every later box uses) kept beside its
/// first consumer and repeated as a stub beside each other one (DrawNode::stubOf: the same ids
/// and text, drawn dashed), as TensorBoard's graph view extracts high-degree nodes. Graphviz's
/// dot needs minutes for a few hundred boxes in a chain with one node feeding them all (every
/// long edge becomes a chain of virtual nodes through every rank); stubs keep every edge short.
/// Edges into nested-graph clusters are left as they are; so are the "… N nodes" boxes of a
/// focused view unless `collapsedToo`. Linear in the drawing; never throws.
DrawGraph stubFanOut(const DrawGraph& g, std::size_t minConsumers = kStubFanOut, bool collapsedToo = true);

} // namespace passlens
