#include "passlens/layout/Export.h"

#include <passlens/io/AtomicFile.h>

#include <cctype>

namespace passlens {

std::optional<RenderFormat> formatFromExtension(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    if (ext.empty()) return std::nullopt;
    return parseRenderFormat(std::string_view(ext).substr(1));
}

namespace {

// `produce`'s bytes; passlens::Error messages other than LayoutError's prefixed by `path`.
template <typename F> auto withPath(const std::filesystem::path& path, F&& produce) {
    try {
        return produce();
    } catch (const LayoutError&) {
        throw;
    } catch (const Error& e) {
        throw Error(path.string() + ": " + e.what());
    }
}

} // namespace

std::size_t exportLayout(const LayoutEngine& engine, const LayoutResult& layout, const std::filesystem::path& path,
                         RenderFormat format, DiffView view, double dpi) {
    const std::string bytes = withPath(path, [&] { return engine.render(layout, format, view, dpi); });
    writeFileAtomic(path, bytes);
    return bytes.size();
}

LayoutResult exportDrawing(LayoutEngine& engine, const DrawGraph& g, const std::filesystem::path& path,
                           const RenderOptions& render, const LayoutOptions& options, std::size_t* bytesWritten,
                           const CancelToken* cancel) {
    RenderedLayout out = withPath(path, [&] { return engine.layoutAndRender(g, render, options, cancel); });
    writeFileAtomic(path, out.bytes);
    if (bytesWritten != nullptr) *bytesWritten = out.bytes.size();
    return std::move(out.layout);
}

} // namespace passlens
