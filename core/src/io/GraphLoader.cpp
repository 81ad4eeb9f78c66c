#include "passlens/io/GraphLoader.h"

#include "passlens/io/AtomicFile.h"
#include "passlens/io/SessionFile.h"
#include "passlens/ir/Error.h"
#include "passlens/onnx/OnnxImporter.h"
#include "passlens/trace/Trace.h"

#include <cctype>
#include <fstream>

namespace passlens {

namespace {
// First non-blank bytes of the file (at most n).
std::string head(const std::filesystem::path& path, std::size_t n) {
    requireRegularFile(path); // a FIFO or a device would block the read
    std::ifstream in(path, std::ios::binary);
    std::string s(n, '\0');
    in.read(s.data(), static_cast<std::streamsize>(n));
    s.resize(static_cast<std::size_t>(in.gcount()));
    return s;
}

std::string printable(const std::string& s) {
    std::string out;
    for (char c : s.substr(0, 16)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '.';
    return out;
}
} // namespace

FileKind sniffFileKind(const std::filesystem::path& path) {
    const std::string h = head(path, 4096);
    std::size_t i = 0;
    if (h.size() >= 3 && static_cast<unsigned char>(h[0]) == 0xEF && static_cast<unsigned char>(h[1]) == 0xBB &&
        static_cast<unsigned char>(h[2]) == 0xBF)
        i = 3;
    while (i < h.size() && std::isspace(static_cast<unsigned char>(h[i]))) ++i;
    if (SessionFile::isCompact(h)) return FileKind::Session;
    if (i >= h.size()) return FileKind::Unknown;
    if (h[i] == '{') {
        if (h.find("passlens.session") != std::string::npos) return FileKind::Session;
        return FileKind::GraphJson;
    }
    if (h[i] == '<' || h[i] == '[' || h[i] == '#') return FileKind::Unknown;
    return FileKind::Onnx;
}

LoadedGraph loadGraphFile(const std::filesystem::path& path) {
    const std::string label = path.string();
    std::error_code ec;
    requireRegularFile(path);
    if (std::filesystem::file_size(path, ec) == 0) throw Error(label + ": the file is empty");
    const FileKind kind = sniffFileKind(path);
    const std::filesystem::path base = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    switch (kind) {
    case FileKind::Session:
        if (SessionFile::isCompact(head(path, SessionFile::kCompactMagic.size()))) {
            LoadedGraph g;
            g.graph = SessionFile::load(path).graphAfter(0);
            g.format = "session";
            return g;
        }
        [[fallthrough]];
    case FileKind::GraphJson: {
        // JSON: the "format" field decides (object keys may come in any order)
        return readGraphOrSessionText(readFile(path), label, base);
    }
    case FileKind::Onnx: return importOnnxFile(path);
    case FileKind::Unknown: break;
    }
    const std::string h = head(path, 64);
    std::size_t i = 0;
    while (i < h.size() && std::isspace(static_cast<unsigned char>(h[i]))) ++i;
    if (i >= h.size()) throw Error(label + ": the file holds only white space");
    throw Error(label + ": byte 0: not an ONNX model, graph JSON or session file (it starts with '" +
                printable(h.substr(i)) + "')");
}

} // namespace passlens
