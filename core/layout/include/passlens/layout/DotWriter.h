#pragma once
/// @file DotWriter.h
/// DrawGraph -> DOT text: HTML-like labels (never `record` shapes) with every piece of user text
/// passed through the one escaping function `htmlLabelText`, styles from the palette below, a
/// legend and a caption in the graph label, and, for diffs, the summary table.
#include <passlens/layout/DrawGraph.h>

#include <string>
#include <string_view>
#include <vector>

namespace passlens {

/// The one escaping function for text inside HTML-like labels. Returns pure ASCII:
/// `& < > " '` become entities, `\` is doubled (Graphviz expands `\N`, `\G` even inside HTML
/// labels), every non-ASCII code point becomes a numeric reference `&#NNN;`, control characters
/// become their visible Unicode "control picture" (U+2400 + c, U+2421 for DEL), and bytes that
/// are not valid UTF-8 become U+FFFD. The empty string stays empty. Never throws.
std::string htmlLabelText(std::string_view raw);

/// What a label shows after htmlLabelText has been rendered by Graphviz: the same
/// normalisation (control pictures, U+FFFD) as raw UTF-8. Tests compare SVG text with it.
std::string displayedText(std::string_view raw);

/// The lines a node title is drawn on (at most 3 of about 38 characters): long op strings
/// break after "{", ", " or, inside a composite's scalar expression, after "," or "(", so no
/// attribute is lost to a cut; the last line is cut with "…" if still too long. The DOT writer
/// and the window's node items use it, so both draw the same lines. Never throws.
std::vector<std::string> titleLines(const std::string& title);

/// Colours of the drawing (RGB hex). Chosen for print: pale fills under black text, borders
/// that differ in darkness, width and dash pattern, so every class still reads in grayscale.
struct Palette {
    // Fills by category.
    const char* hostFill = "#F4F4F4";
    const char* gpuFill = "#D5E5F5";
    const char* transferFill = "#F6C3BC";
    const char* onnxFill = "#E9E1F2";
    const char* inputFill = "#FFFFFF";
    const char* constantFill = "#FAFAFA";
    const char* outputFill = "#FFFFFF";
    const char* collapsedFill = "#FFFFFF";
    const char* groupFill = "#FFF3D1"; ///< a closed name scope (ScopeGroups.h)
    // Op-family accents (left stripe): Elemwise pink, Alloc orange.
    const char* elemwiseAccent = "#E07AA0";
    const char* allocAccent = "#F0A030";
    // Borders / stripes by location.
    const char* hostBorder = "#5A5A5A";
    const char* hostStripe = "#B4B4B4";
    const char* gpuBorder = "#1B4F8A";
    const char* transferBorder = "#B2281E";
    const char* onnxBorder = "#6A4C93";
    const char* constantBorder = "#9A9A9A";
    const char* groupBorder = "#8A6D1F";
    // Edges.
    const char* hostEdge = "#555555";
    const char* gpuEdge = "#1B4F8A";
    // Diff classes: fill, border.
    const char* addedFill = "#CDEBC5";
    const char* addedBorder = "#1E7B34";
    const char* removedFill = "#FBE0DE";
    const char* removedBorder = "#C62828";
    const char* rewiredFill = "#FFE1B8";
    const char* rewiredBorder = "#D35400";
    const char* unchangedFill = "#FFFFFF";
    const char* unchangedBorder = "#8C8C8C";
    // Text.
    const char* text = "#111111";
    const char* subtleText = "#555555";
    const char* font = "Helvetica";
    const char* boldFont = "Helvetica-Bold";
};

/// The default palette.
const Palette& defaultPalette();

/// Fill of a node of category `c` (RGB hex from `p`): the DOT writer's and the window's.
const char* categoryFill(NodeCategory c, const Palette& p = defaultPalette());

/// Border of a node of category `c` (RGB hex from `p`): the DOT writer's and the window's.
const char* categoryBorder(NodeCategory c, const Palette& p = defaultPalette());

/// Whether nodes of category `c` are ops (host, GPU, transfer, Onnx host op): they get the
/// location stripe and the timing colours.
bool isOp(NodeCategory c);

/// The location stripe of an op node (RGB hex from `p`): light gray on the host, dark on a
/// GPU, so it also reads in grayscale. Drawn at the box's left where the fill says something
/// else (a diff's change, a time): in exports and in the window.
const char* categoryStripe(NodeCategory c, const Palette& p = defaultPalette());

/// The stripe at the left of a node's box, or nullptr (not an op): the location stripe, or in
/// a plain drawing (neither a diff nor timed: `plainFill`) the op family's accent (Theano's
/// pydotprint: Elemwise pink, Alloc orange). The DOT writer's and the window's.
const char* nodeStripe(NodeCategory c, OpAccent accent, bool plainFill, const Palette& p = defaultPalette());

/// The sequential heat colour (white -> yellow -> orange -> dark red, lightness decreasing
/// monotonically so it reads in grayscale) of a share in [0, 1].
std::string heatColour(double share);

struct DotOptions {
    std::string rankdir = "TB"; ///< "TB" (top to bottom, as pydotprint) or "LR"
    bool legend = true;         ///< legend and summary in the graph label
    bool caption = true;        ///< caption line in the graph label
    /// Extra graph attributes for speed on big graphs (nslimit, mclimit) are added
    /// automatically above this many nodes.
    std::size_t fastAbove = 300;
};

/// The DOT text of `g`. Deterministic: the same DrawGraph and options give the same bytes
/// (the layout cache relies on it). Node ids are the DrawNode keys; each node and edge carries
/// `pl_change` (diff class) and each edge `pl_edge` (its index in g.edges) so that layout
/// results map back. Never throws for any text content.
std::string writeDot(const DrawGraph& g, const DotOptions& options = {});

} // namespace passlens
