#pragma once
/// @file GraphSearch.h
/// Finding nodes of a graph by what a user types: an id, an op kind, a node name or a variable
/// name. Shared by the window's Find and anything else that searches a step.
#include "passlens/ir/FunctionGraph.h"

#include <string_view>
#include <vector>

namespace passlens {

/// The nodes of `g` that match `query`, best first. A node matches when the query equals
/// (case-insensitively) one of its words: its id (`17` or `#17`), op kind (`Elemwise`), display
/// string (`Elemwise{add}`), node name, the name of an output variable, or a `/`-, `.`- or
/// `:`-separated part of such a name (`attn` in `/encoder/attn/MatMul`); such whole-word
/// matches come first. Then come nodes that consume a variable of that name, and nodes where
/// the query is a substring of any of those words. Inside each rank, nodes keep topological
/// order. An empty (or all-space) query matches nothing.
std::vector<const Apply*> findNodes(const FunctionGraph& g, std::string_view query);

} // namespace passlens
