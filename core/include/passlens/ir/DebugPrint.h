#pragma once
/// @file DebugPrint.h
/// Theano's debugprint (theano/compile/debugmode.py, THEANO_SEMANTICS.md §3.10).
#include <string>

namespace passlens {

class FunctionGraph;

struct DebugPrintOptions {
    bool printType = false;    ///< append the type after the id: `[id A] <float32[?,4]>`
    bool printToposort = true; ///< append the node's toposort index
    int depth = -1;            ///< -1: unlimited
};

/// One line per variable, depth-first from each output: apply outputs as
/// `<prefix><op>[.<idx>] [id X] '<name>' <toposort index>`, inputs and constants as
/// `<name> [id X]`; children indented with ` |` (the last child of a node with two spaces below
/// it); a node already printed is shown again by id only. Ids are letters A..Z, BA.. (Theano's
/// char_from_number). Iterative: deep graphs do not overflow the stack.
std::string debugprint(const FunctionGraph& graph, const DebugPrintOptions& options = {});

} // namespace passlens
