#pragma once
/// @file DebugPrint.h
/// Theano's debugprint (theano/compile/debugmode.py, THEANO_SEMANTICS.md §3.10).
#include <cstddef>
#include <string>

namespace passlens {

class FunctionGraph;

struct DebugPrintOptions {
    /// `depth` value: the whole graph while its listing takes at most kDebugPrintFullBytes,
    /// else kDebugPrintLargeDepth (debugprintDepth).
    static constexpr int kAutoDepth = -2;
    bool printType = false;    ///< append the type after the id: `[id A] <float32[?,4]>`
    bool printToposort = true; ///< append the node's toposort index
    /// Levels printed below and including each output (Theano's `depth`: 1 prints the outputs
    /// only); -1: unlimited; kAutoDepth: see debugprintDepth.
    int depth = -1;
};

/// Graphs whose whole listing takes at most this many bytes are listed whole by default
/// (kAutoDepth): every corpus model, for instance (PP-OCR's 656 nodes: about 150 KB).
inline constexpr std::size_t kDebugPrintFullBytes = std::size_t(4) << 20;
/// The default depth of a listing of a larger graph (a deep graph's whole listing grows as
/// nodes x depth): every line's prefix is then at most 2 x this many characters, so the
/// listing is linear in the graph.
inline constexpr int kDebugPrintLargeDepth = 50;

/// The depth a listing of `graph` uses: `requested` as is (below -1: -1) unless it is
/// kAutoDepth, which is -1 (unlimited) when the whole listing takes at most
/// kDebugPrintFullBytes and kDebugPrintLargeDepth otherwise. The whole listing's size comes
/// from a dry run of it that stops past the limit, so this costs O(kDebugPrintFullBytes) at most.
int debugprintDepth(const FunctionGraph& graph, int requested);

/// What a debugprint printed.
struct DebugPrintSummary {
    std::size_t lines = 0;
    /// Apply nodes printed at the depth limit whose inputs were left out (0 when nothing was cut).
    std::size_t cutNodes = 0;
    int depth = -1; ///< the depth used (debugprintDepth of the options' depth)
};

/// One line per variable, depth-first from each output: apply outputs as
/// `<prefix><op>[.<idx>] [id X] '<name>' <toposort index>`, inputs and constants as
/// `<name> [id X]`; children indented with ` |` (the last child of a node with two spaces below
/// it). As Theano's `done` set: a node whose inputs were printed once is printed again with the
/// same line but without its subtree, so the listing has at most one line per output and per
/// edge, each with a prefix of 2 x depth characters. (Unlike Theano, a node met first at the
/// depth limit, whose inputs were not printed, is expanded when it is met again higher up.)
/// Ids are letters A..Z, BA.. (Theano's char_from_number). Iterative, one shared prefix: deep
/// graphs do not overflow the stack and cost O(output) time and O(depth) extra memory.
std::string debugprint(const FunctionGraph& graph, const DebugPrintOptions& options = {},
                       DebugPrintSummary* summary = nullptr);

/// The line a listing of `nodes` Apply nodes prints under itself when `summary` says it was cut
/// ("debugprint cut at depth 50 (graph of 12000 nodes): 17 nodes' inputs not shown; --depth N
/// sets the depth, --depth -1 prints everything"), empty when nothing was cut.
std::string debugprintCutNote(const DebugPrintSummary& summary, std::size_t nodes);

/// debugprint followed, when the listing was cut, by the cut note in parentheses on its own line:
/// what `passlens-cli inspect` and `optimize --debugprint` print.
std::string debugprintListing(const FunctionGraph& graph, const DebugPrintOptions& options = {});

} // namespace passlens
