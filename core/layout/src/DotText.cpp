// The text of HTML-like labels (DotWriter.h, DotInternal.h): the one escaping function, the text
// Graphviz shows for it, the lines of node titles, and <FONT> runs.
#include "DotInternal.h"

#include <passlens/io/Encoding.h>

#include <cstdint>
#include <string_view>

namespace passlens {

namespace {

// Decodes UTF-8 into code points (io/Encoding.h's rule); each byte that does not start a
// well-formed sequence (overlong, surrogate, out of range, truncated) becomes U+FFFD.
template <class F> void forEachCodePoint(std::string_view s, F&& f) {
    for (std::size_t i = 0; i < s.size();) {
        const auto [cp, len] = utf8CodePointAt(s, i);
        f(len == 0 ? std::uint32_t{0xFFFD} : static_cast<std::uint32_t>(cp));
        i += len == 0 ? 1 : len;
    }
}

// Control characters are shown as their Unicode control pictures (␀ ␊ ␉ ␡).
std::uint32_t visible(std::uint32_t cp) {
    if (cp < 0x20) return 0x2400 + cp;
    if (cp == 0x7F) return 0x2421;
    return cp;
}

} // namespace

std::string htmlLabelText(std::string_view raw) {
    std::string out;
    out.reserve(raw.size() + 8);
    forEachCodePoint(raw, [&out](std::uint32_t cp) {
        cp = visible(cp);
        switch (cp) {
        case '&': out += "&amp;"; return;
        case '<': out += "&lt;"; return;
        case '>': out += "&gt;"; return;
        case '"': out += "&quot;"; return;
        case '\'': out += "&#39;"; return;
        case '\\': out += "\\\\"; return; // Graphviz expands \N, \G, ... even in HTML labels
        default: break;
        }
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else {
            out += "&#" + std::to_string(cp) + ";";
        }
    });
    return out;
}

std::string displayedText(std::string_view raw) {
    std::string out;
    forEachCodePoint(raw, [&out](std::uint32_t cp) { appendUtf8(out, visible(cp)); });
    return out;
}

namespace {

// Code points of UTF-8 text (a stray byte counts as one).
std::size_t codePoints(std::string_view s) {
    std::size_t n = 0;
    for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0u) != 0x80u ? 1 : 0;
    return n;
}

// Splits a long op string into at most `maxLines` lines of about `width` characters, breaking
// after ", " or an opening brace ("GpuCorrMM{border_mode=[3,3], | filter_dilation=[1,1], ..."),
// so that no attribute is lost to a cut; the last line is cut with "…" if still too long.
std::vector<std::string> wrapTitle(const std::string& title, std::size_t width, std::size_t maxLines) {
    std::vector<std::string> lines;
    std::string rest = title;
    while (!rest.empty()) {
        if (codePoints(rest) <= width || lines.size() + 1 == maxLines) {
            if (codePoints(rest) > width + 8) {
                // Cut at a code point boundary.
                std::size_t bytes = 0, count = 0;
                while (bytes < rest.size() && count < width + 7) {
                    ++bytes;
                    while (bytes < rest.size() && (static_cast<unsigned char>(rest[bytes]) & 0xC0u) == 0x80u) ++bytes;
                    ++count;
                }
                rest = rest.substr(0, bytes) + "\xE2\x80\xA6";
            }
            lines.push_back(rest);
            break;
        }
        // The last break point within `width` characters ("{" or ", "); else the first one after
        // it. A composite's expression ("add(mul(i0,i1),i2)") has neither: when that would leave
        // a line far past `width`, break after its last "," or "(" within `width` instead.
        std::size_t breakAt = std::string::npos, weakAt = std::string::npos, count = 0, countAtBreak = 0;
        for (std::size_t i = 0; i < rest.size(); ++i) {
            if ((static_cast<unsigned char>(rest[i]) & 0xC0u) != 0x80u) ++count;
            const bool spaced = rest[i] == ',' && i + 1 < rest.size() && rest[i + 1] == ' ';
            if (!spaced && (rest[i] == ',' || rest[i] == '(') && count <= width) weakAt = i + 1;
            if (!spaced && rest[i] != '{') continue;
            const std::size_t end = spaced ? i + 2 : i + 1;
            if (count <= width || breakAt == std::string::npos) {
                breakAt = end;
                countAtBreak = count;
            }
            if (count > width) break;
        }
        if (weakAt != std::string::npos && codePoints(rest) > width + 8 &&
            (breakAt == std::string::npos || countAtBreak > width + 8))
            breakAt = weakAt;
        if (breakAt == std::string::npos || breakAt >= rest.size()) {
            lines.push_back(rest);
            break;
        }
        std::string line = rest.substr(0, breakAt);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        lines.push_back(line);
        rest = rest.substr(breakAt);
    }
    if (lines.empty()) lines.emplace_back();
    return lines;
}

} // namespace

std::vector<std::string> titleLines(const std::string& title) { return wrapTitle(title, 38, 3); }

std::string dotinternal::font(const std::string& text, int size, const char* colour, bool bold) {
    if (text.empty()) return {}; // an empty <FONT></FONT> is a syntax error for Graphviz
    // Bold through the face name, not <B>: Graphviz 2.43's pango plugin leaks the markup it
    // builds for <B> on every text measurement.
    std::string s = "<FONT POINT-SIZE=\"" + std::to_string(size) + "\"";
    if (bold) s += " FACE=\"" + std::string(defaultPalette().boldFont) + "\"";
    if (colour != nullptr) s += " COLOR=\"" + std::string(colour) + "\"";
    s += ">" + text + "</FONT>";
    return s;
}

} // namespace passlens
