#include "passlens/layout/Export.h"

#include <passlens/io/AtomicFile.h>

#include <cctype>

namespace passlens {

std::optional<RenderFormat> formatFromExtension(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    if (ext.empty()) return std::nullopt;
    return parseRenderFormat(std::string_view(ext).substr(1));
}

std::size_t exportLayout(const LayoutEngine& engine, const LayoutResult& layout, const std::filesystem::path& path,
                         RenderFormat format, DiffView view, double dpi) {
    std::string bytes;
    try {
        bytes = engine.render(layout, format, view, dpi);
    } catch (const LayoutError&) {
        throw;
    } catch (const Error& e) {
        throw Error(path.string() + ": " + e.what());
    }
    writeFileAtomic(path, bytes);
    return bytes.size();
}

} // namespace passlens
