#pragma once
/// @file Export.h
/// Writing renderings to disk: SVG, PDF, PNG or DOT, always atomically (io/AtomicFile.h), PNG
/// refused past cairo's 32,767-pixel limit with a message pointing to SVG or PDF. A layout that
/// is shown is exported with exportLayout (rendered again from its positions); a drawing laid
/// out only for the file with exportDrawing (rendered by the process that laid it out).
#include <passlens/layout/LayoutEngine.h>

#include <filesystem>
#include <optional>

namespace passlens {

/// The format named by a file's extension (.svg, .pdf, .png, .dot / .gv); nullopt otherwise.
std::optional<RenderFormat> formatFromExtension(const std::filesystem::path& path);

/// Renders `layout` in `format` and writes it to `path` atomically (nothing is written when
/// rendering fails, an existing file stays intact). Returns the number of bytes written.
/// Throws passlens::Error: a PNG past kMaxPngPixels at `dpi` ("... is W x H px at 96 dpi, past
/// cairo's 32,767 px limit: export SVG or PDF instead, or lower --dpi"), a write failure
/// ("PATH: cannot write: reason"), or LayoutError when Graphviz fails.
std::size_t exportLayout(const LayoutEngine& engine, const LayoutResult& layout, const std::filesystem::path& path,
                         RenderFormat format, DiffView view = DiffView::Overlay, double dpi = 96);

/// Lays out `g` and writes its rendering to `path` atomically, both from one Graphviz process
/// (LayoutEngine::layoutAndRender): the file is exactly what `dot -T<format>` draws from the DOT
/// that writeDot(g, options.dot) writes. Returns the layout (its geometry as `render.geometry`
/// asks) and sets `*bytesWritten`. Throws as layoutAndRender (`cancel` as there) and
/// exportLayout (messages other than LayoutError's start with the path).
LayoutResult exportDrawing(LayoutEngine& engine, const DrawGraph& g, const std::filesystem::path& path,
                           const RenderOptions& render, const LayoutOptions& options = {},
                           std::size_t* bytesWritten = nullptr, const CancelToken* cancel = nullptr);

} // namespace passlens
