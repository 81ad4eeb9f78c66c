#pragma once
// Internal to passlens_layout: what the files of the DOT writer share. DotWriter.cpp: the
// palette, node styles and labels, edges and writeDot; DotText.cpp: the text of HTML-like
// labels; DotLegend.cpp: the graph's label (caption, legend, diff summary).
#include <passlens/layout/DotWriter.h>

#include <string>

namespace passlens::dotinternal {

/// `text` (already escaped by htmlLabelText) in a <FONT> of `size` points, in `colour` (none:
/// the graph's default) and in the palette's bold face when asked; empty for empty text, which
/// Graphviz would refuse as an empty <FONT></FONT>.
std::string font(const std::string& text, int size, const char* colour, bool bold = false);

/// The graph's HTML-like label: the caption (source, pipeline and step, focus note) when
/// `o.caption`, the legend of what the drawing shows and, for a diff, the summary table when
/// `o.legend`; empty when there is nothing to show.
std::string graphLabel(const DrawGraph& g, const DotOptions& o, const Palette& p);

} // namespace passlens::dotinternal
