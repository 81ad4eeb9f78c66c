#pragma once
/// @file GraphJson.h
/// Graph JSON (`*.graph.json`, FORMAT.md §1, version 1): reading and writing.
#include "passlens/ir/FunctionGraph.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace passlens {

/// Result of reading a graph: the graph plus non-fatal notes (pruned unused nodes, constants
/// whose data is missing).
struct LoadedGraph {
    std::unique_ptr<FunctionGraph> graph;
    std::vector<std::string> warnings;
    std::string format; ///< "graph-json", "onnx" or "session"
};

/// Builds a graph from a parsed graph JSON document. `label` names the file in messages and
/// `baseDir` resolves `{"file": "w.npy"}` constants. Nodes may be listed in any order.
/// Throws passlens::Error("LABEL: JSONPATH: reason"), e.g.
/// "g.graph.json: nodes[3].inputs[1]: unknown variable 'w'", or a cycle naming its nodes.
/// Nothing is partially loaded.
LoadedGraph readGraphJson(const nlohmann::json& doc, const std::string& label, const std::filesystem::path& baseDir);

/// readGraphJson on the text of a document, in one streaming pass: the nodes are read straight
/// from the parser's events (nlohmann::json::sax_parse), without a JSON tree of them. A JSON
/// syntax error is reported with its byte offset, nesting past kJsonMaxDepth as parseJson does.
LoadedGraph readGraphJsonText(const std::string& text, const std::string& label, const std::filesystem::path& baseDir);

/// readGraphJsonText, or the source graph of a session file (FORMAT.md §2) when the document's
/// "format" is "passlens.session" (format "session" in the result); what loadGraphFile does with
/// a JSON file.
LoadedGraph readGraphOrSessionText(const std::string& text, const std::string& label,
                                   const std::filesystem::path& baseDir);

struct GraphJsonWriteOptions {
    /// Constants with more elements than this are written to .npy files under `npyDir`
    /// (relative to the graph file's folder) when npyDir is set (bfloat16 ones, which .npy cannot
    /// hold, inline); otherwise inline.
    std::size_t inlineLimit = 64;
    std::filesystem::path baseDir; ///< folder of the graph file being written
    std::filesystem::path npyDir;  ///< relative to baseDir, e.g. "model.data"
    bool withIds = false;          ///< add "id" to nodes, inputs and constants (session files)
    bool base64 = false;           ///< constants above inlineLimit as {"base64": ...} (no npyDir)
};

/// A loaded tensor as a graph JSON `value`: nested lists of numbers ("nan", "inf", "-inf" for
/// non-finite values).
nlohmann::json tensorValueJson(const TensorData& t);

/// The graph as a graph JSON document (nodes in topological order; every node output carries
/// its type). Variables without a unique name get `v<id>`. Writes .npy files when asked (each
/// atomically). Throws passlens::Error when a file cannot be written.
nlohmann::json writeGraphJson(const FunctionGraph& graph, const GraphJsonWriteOptions& options = {});

} // namespace passlens
