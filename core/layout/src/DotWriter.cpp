#include "passlens/layout/DotWriter.h"

#include <passlens/diff/GraphDiff.h>

#include "passlens/layout/TimingOverlay.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>

namespace passlens {

namespace {

// Decodes UTF-8 into code points; each byte that does not start a valid sequence (overlong,
// surrogate, out of range, truncated) becomes U+FFFD.
template <class F> void forEachCodePoint(std::string_view s, F&& f) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::uint32_t cp = 0;
        std::size_t len = 0;
        if (c < 0x80) {
            cp = c;
            len = 1;
        } else if (c >= 0xC2 && c <= 0xDF) {
            cp = c & 0x1Fu;
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            cp = c & 0x0Fu;
            len = 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            cp = c & 0x07u;
            len = 4;
        }
        bool ok = len > 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0u) != 0x80u)
                ok = false;
            else
                cp = (cp << 6) | (cc & 0x3Fu);
        }
        if (ok) {
            if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                (cp >= 0xD800 && cp <= 0xDFFF))
                ok = false;
        }
        if (!ok) {
            f(0xFFFDu);
            ++i;
            continue;
        }
        f(cp);
        i += len;
    }
}

// Control characters are shown as their Unicode control pictures (␀ ␊ ␉ ␡).
std::uint32_t visible(std::uint32_t cp) {
    if (cp < 0x20) return 0x2400 + cp;
    if (cp == 0x7F) return 0x2421;
    return cp;
}

void appendUtf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
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

const Palette& defaultPalette() {
    static const Palette palette;
    return palette;
}

const char* categoryFill(NodeCategory c, const Palette& p) {
    switch (c) {
    case NodeCategory::HostOp: return p.hostFill;
    case NodeCategory::GpuOp: return p.gpuFill;
    case NodeCategory::Transfer: return p.transferFill;
    case NodeCategory::OnnxHostOp: return p.onnxFill;
    case NodeCategory::Input: return p.inputFill;
    case NodeCategory::Constant: return p.constantFill;
    case NodeCategory::Output: return p.outputFill;
    case NodeCategory::Collapsed: return p.collapsedFill;
    case NodeCategory::Group: return p.groupFill;
    }
    return p.hostFill;
}

const char* categoryBorder(NodeCategory c, const Palette& p) {
    switch (c) {
    case NodeCategory::GpuOp: return p.gpuBorder;
    case NodeCategory::Transfer: return p.transferBorder;
    case NodeCategory::OnnxHostOp: return p.onnxBorder;
    case NodeCategory::Constant: return p.constantBorder;
    case NodeCategory::Collapsed: return p.constantBorder;
    case NodeCategory::Group: return p.groupBorder;
    case NodeCategory::Input:
    case NodeCategory::Output: return p.text;
    case NodeCategory::HostOp: return p.hostBorder;
    }
    return p.hostBorder;
}

namespace {

// ColorBrewer YlOrRd (5 classes): lightness falls monotonically, so it reads in grayscale.
constexpr std::array<std::array<int, 3>, 5> kHeat = {
    {{255, 255, 178}, {254, 204, 92}, {253, 141, 60}, {240, 59, 32}, {189, 0, 38}}};

std::string hexColour(int r, int g, int b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02X%02X%02X", std::clamp(r, 0, 255), std::clamp(g, 0, 255),
                  std::clamp(b, 0, 255));
    return buf;
}

} // namespace

std::string heatColour(double share) {
    if (!(share >= 0)) share = 0; // NaN too
    share = std::min(share, 1.0);
    const double pos = share * static_cast<double>(kHeat.size() - 1);
    const auto i = static_cast<std::size_t>(std::floor(pos));
    if (i + 1 >= kHeat.size()) return hexColour(kHeat.back()[0], kHeat.back()[1], kHeat.back()[2]);
    const double t = pos - static_cast<double>(i);
    auto mix = [&](int k) {
        return static_cast<int>(std::lround(kHeat[i][static_cast<std::size_t>(k)] * (1 - t) +
                                            kHeat[i + 1][static_cast<std::size_t>(k)] * t));
    };
    return hexColour(mix(0), mix(1), mix(2));
}

namespace {

// Heat fill of a node: continuous colour of its share, or the colour of its bin.
struct Heat {
    std::string fill;
    bool darkText = true;
};

Heat heatOf(const DrawNode& n, const TimingLegend& t) {
    // timeShare was normalised by applyTiming into [0, 1] on the chosen scale.
    const double s = std::clamp(n.timeShare, 0.0, 1.0);
    Heat h;
    h.fill = heatColour(s);
    h.darkText = s < 0.62;
    (void)t;
    return h;
}

struct NodeStyle {
    std::string shape = "box";
    std::string style = "rounded,filled";
    std::string fill, border, stripe;
    double penwidth = 1.0;
    int peripheries = 1;
    bool darkText = true;
    int titleSize = 10;
};

// The location stripe: light gray on the host, dark on a GPU, so it also reads in grayscale.
const char* categoryStripe(NodeCategory c, const Palette& p) {
    return c == NodeCategory::HostOp ? p.hostStripe : categoryBorder(c, p);
}

double categoryPen(NodeCategory c) {
    switch (c) {
    case NodeCategory::GpuOp: return 1.4;
    case NodeCategory::Transfer: return 2.2;
    case NodeCategory::OnnxHostOp: return 1.6;
    case NodeCategory::Input:
    case NodeCategory::Output: return 1.4;
    default: return 1.0;
    }
}

bool isOp(NodeCategory c) {
    return c == NodeCategory::HostOp || c == NodeCategory::GpuOp || c == NodeCategory::Transfer ||
           c == NodeCategory::OnnxHostOp;
}

NodeStyle styleOf(const DrawNode& n, const DrawGraph& g, const Palette& p) {
    NodeStyle s;
    s.fill = categoryFill(n.category, p);
    s.border = categoryBorder(n.category, p);
    s.penwidth = categoryPen(n.category);
    if (isOp(n.category)) {
        s.stripe = categoryStripe(n.category, p);
        if (!g.isDiff && n.timeShare < 0) {
            if (n.accent == OpAccent::Elemwise)
                s.stripe = p.elemwiseAccent;
            else if (n.accent == OpAccent::Alloc)
                s.stripe = p.allocAccent;
        }
    }
    switch (n.category) {
    case NodeCategory::Input:
        s.shape = "ellipse";
        s.style = "filled";
        break;
    case NodeCategory::Output:
        s.shape = "ellipse";
        s.style = "filled";
        s.peripheries = 2;
        break;
    case NodeCategory::Constant:
        s.style = "filled";
        s.titleSize = 8;
        break;
    case NodeCategory::Collapsed: s.style = "rounded,dashed,filled"; break;
    case NodeCategory::Group:
        s.style = "filled";
        s.penwidth = 1.6;
        s.peripheries = 2; // a box that holds boxes
        break;
    default: break;
    }
    if (g.isDiff) {
        switch (n.change) {
        case NodeChange::Added:
            s.fill = p.addedFill;
            s.border = p.addedBorder;
            s.penwidth = 2.4;
            break;
        case NodeChange::Removed:
            s.fill = p.removedFill;
            s.border = p.removedBorder;
            s.penwidth = 2.0;
            s.style += ",dashed";
            break;
        case NodeChange::Rewired:
            s.fill = p.rewiredFill;
            s.border = p.rewiredBorder;
            s.penwidth = 2.4;
            break;
        case NodeChange::Unchanged:
            s.fill = p.unchangedFill;
            s.border = p.unchangedBorder;
            s.penwidth = 1.0;
            break;
        }
    } else if (n.timeShare >= 0) {
        const Heat h = heatOf(n, g.timing);
        s.fill = h.fill;
        s.darkText = h.darkText;
    } else if (g.timing.present && isOp(n.category)) {
        // No timing for this op: white and dotted, apart from every heat colour even in grayscale.
        s.fill = "#FFFFFF";
        s.style += ",dotted";
    }
    return s;
}

std::string fmtNum(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    std::string s = buf;
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

std::string font(const std::string& text, int size, const char* colour, bool bold = false) {
    if (text.empty()) return {}; // an empty <FONT></FONT> is a syntax error for Graphviz
    // Bold through the face name, not <B>: Graphviz 2.43's pango plugin leaks the markup it
    // builds for <B> on every text measurement.
    std::string s = "<FONT POINT-SIZE=\"" + std::to_string(size) + "\"";
    if (bold) s += " FACE=\"" + std::string(defaultPalette().boldFont) + "\"";
    if (colour != nullptr) s += " COLOR=\"" + std::string(colour) + "\"";
    s += ">" + text + "</FONT>";
    return s;
}

const char* changeBadge(NodeChange c) {
    switch (c) {
    case NodeChange::Added: return "added";
    case NodeChange::Removed: return "removed";
    case NodeChange::Rewired: return "rewired";
    case NodeChange::Unchanged: return nullptr;
    }
    return nullptr;
}

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

namespace {

std::string nodeLabel(const DrawNode& n, const NodeStyle& s, const DrawGraph& g, const Palette& p) {
    const char* textColour = s.darkText ? p.text : "#FFFFFF";
    const char* subtle = s.darkText ? p.subtleText : "#F2F2F2";
    std::vector<std::string> rows;
    const bool bold = isOp(n.category) || n.category == NodeCategory::Input || n.category == NodeCategory::Output;
    for (const std::string& line : titleLines(n.title))
        rows.push_back(font(htmlLabelText(line), s.titleSize, textColour, bold));
    std::string sub = htmlLabelText(n.subtitle);
    if (g.isDiff) {
        if (const char* badge = changeBadge(n.change)) {
            sub += (sub.empty() ? "" : " &#183; ");
            sub += "<FONT FACE=\"" + std::string(p.boldFont) + "\">" + std::string(badge) + "</FONT>";
        }
    }
    if (!sub.empty()) rows.push_back(font(sub, s.titleSize >= 10 ? 8 : 7, subtle));
    if (!n.detail.empty()) rows.push_back(font(htmlLabelText(n.detail), 8, textColour));

    // One column of text rows, beside the stripe in a one-row table. (Tables with several rows
    // and columns at once go through Graphviz 2.43's span solver, which leaks per label.)
    std::string t = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">";
    for (const std::string& row : rows) t += "<TR><TD>" + row + "</TD></TR>";
    t += "</TABLE>";
    if (s.stripe.empty()) return t;
    return "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"0\"><TR><TD BGCOLOR=\"" + s.stripe +
           "\" WIDTH=\"4\"></TD><TD WIDTH=\"2\"></TD><TD>" + t + "</TD></TR></TABLE>";
}

// ---- legend ----

// The legend is one grid (heading, then swatch + text pairs): Graphviz 2.43 stretches nested
// tables to their cell, so rows of nested tables would spread their entries apart.
struct LegendEntry {
    std::string swatch; // a <TD ...></TD> of fixed size
    std::string text;   // raw text
};
struct LegendRow {
    std::string heading;
    std::vector<LegendEntry> entries;
};

std::string swatch(const std::string& fill, const std::string& border, const char* cellStyle = nullptr) {
    std::string s = "<TD FIXEDSIZE=\"TRUE\" BORDER=\"1\" COLOR=\"" + border + "\" BGCOLOR=\"" + fill +
                    "\" WIDTH=\"18\" HEIGHT=\"11\"";
    if (cellStyle != nullptr) s += std::string(" STYLE=\"") + cellStyle + "\"";
    return s + "></TD>";
}

std::string stripeSwatch(const std::string& colour) {
    return "<TD FIXEDSIZE=\"TRUE\" BGCOLOR=\"" + colour + "\" WIDTH=\"5\" HEIGHT=\"13\"></TD>";
}

std::string glyphSwatch(const std::string& glyphs, const char* colour, bool bold) {
    const std::string text = htmlLabelText(glyphs);
    return "<TD>" + font(text, 9, colour, bold) + "</TD>";
}

std::string legendGrid(const std::vector<LegendRow>& rows, const Palette& p) {
    std::size_t width = 0;
    for (const LegendRow& r : rows) width = std::max(width, r.entries.size());
    if (width == 0) return {};
    std::string t = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"1\">";
    for (const LegendRow& r : rows) {
        t += r.heading.empty() ? std::string("<TR><TD></TD>")
                               : "<TR><TD ALIGN=\"LEFT\">" + font(htmlLabelText(r.heading), 9, p.text, true) + "</TD>";
        for (std::size_t i = 0; i < r.entries.size(); ++i) {
            // The last entry of a short row spans the rest, so its text widens no column.
            const std::size_t span = i + 1 == r.entries.size() ? 1 + 2 * (width - r.entries.size()) : 1;
            t += r.entries[i].swatch + "<TD ALIGN=\"LEFT\"" +
                 (span > 1 ? " COLSPAN=\"" + std::to_string(span) + "\"" : std::string()) + ">" +
                 font(htmlLabelText(r.entries[i].text), 9, p.text) + "</TD>";
        }
        if (r.entries.empty()) t += "<TD COLSPAN=\"" + std::to_string(2 * width) + "\"></TD>";
        t += "</TR>";
    }
    return t + "</TABLE>";
}

std::string legendTable(const DrawGraph& g, const Palette& p) {
    std::set<NodeCategory> present;
    bool elemwise = false, alloc = false, gpuEdges = false, hostEdges = false, labelled = false;
    for (const DrawNode& n : g.nodes) {
        present.insert(n.category);
        elemwise |= isOp(n.category) && n.accent == OpAccent::Elemwise;
        alloc |= isOp(n.category) && n.accent == OpAccent::Alloc;
    }
    for (const DrawEdge& e : g.edges) {
        labelled |= !e.label.empty();
        if (e.collapsed) continue;
        (e.gpu ? gpuEdges : hostEdges) = true;
    }
    std::vector<LegendRow> rows;
    // Node kinds: fills in the plain view; in diffs and overlays the left stripe keeps the location.
    const bool plainFills = !g.isDiff && !g.timing.present;
    LegendRow kinds{plainFills ? "nodes" : "location", {}};
    for (NodeCategory c : {NodeCategory::HostOp, NodeCategory::GpuOp, NodeCategory::Transfer, NodeCategory::OnnxHostOp,
                           NodeCategory::Input, NodeCategory::Constant, NodeCategory::Output, NodeCategory::Collapsed,
                           NodeCategory::Group}) {
        if (!present.count(c)) continue;
        const bool op = isOp(c);
        std::string sw;
        if (op && !plainFills)
            sw = stripeSwatch(categoryStripe(c, p));
        else
            sw = swatch(categoryFill(c, p), categoryBorder(c, p), c == NodeCategory::Collapsed ? "dashed" : nullptr);
        std::string name = nodeCategoryName(c);
        if (c == NodeCategory::Collapsed) name = "hidden nodes";
        if (c == NodeCategory::Group) name = "name scope (closed)";
        kinds.entries.push_back({sw, name});
    }
    if (!kinds.entries.empty()) rows.push_back(kinds);
    if (plainFills && (elemwise || alloc)) {
        LegendRow accents{"stripe", {}};
        if (elemwise) accents.entries.push_back({stripeSwatch(p.elemwiseAccent), "Elemwise family"});
        if (alloc) accents.entries.push_back({stripeSwatch(p.allocAccent), "Alloc family"});
        rows.push_back(accents);
    }
    LegendRow edges{"edges", {}};
    if (hostEdges)
        edges.entries.push_back({glyphSwatch("\xE2\x94\x80\xE2\x94\x80\xE2\x94\x80", p.hostEdge, false), "host value"});
    if (gpuEdges)
        edges.entries.push_back({glyphSwatch("\xE2\x94\x81\xE2\x94\x81\xE2\x94\x81", p.gpuEdge, false), "GPU value"});
    if (labelled) edges.entries.push_back({"<TD></TD>", "label: dtype[shape], ? unknown"});
    if (!edges.entries.empty()) rows.push_back(edges);

    if (g.isDiff) {
        rows.push_back({"diff",
                        {{swatch(p.addedFill, p.addedBorder), "added"},
                         {swatch(p.removedFill, p.removedBorder, "dashed"), "removed"},
                         {swatch(p.rewiredFill, p.rewiredBorder), "rewired"},
                         {swatch(p.unchangedFill, p.unchangedBorder), "unchanged"}}});
    }
    if (g.timing.present) {
        LegendRow t{g.timing.logScale ? "time (log)" : "time", {}};
        const auto& bins = g.timing.binUpperUs;
        double lower = 0;
        for (std::size_t i = 0; i < bins.size(); ++i) {
            const double share = bins.size() == 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(bins.size() - 1);
            std::string text;
            if (g.timing.continuous)
                text = formatMicros(bins[i]);
            else if (i == 0)
                text = "\xE2\x89\xA4 " + formatMicros(bins[i]);
            else
                text = formatMicros(lower) + " \xE2\x80\x93 " + formatMicros(bins[i]);
            t.entries.push_back({swatch(heatColour(share), "#8C8C8C"), text});
            lower = bins[i];
        }
        t.entries.push_back({swatch("#FFFFFF", p.hostBorder, "dotted"), "no timing"});
        rows.push_back(t);
        std::string total = "per run, total " + formatMicros(g.timing.totalUs);
        if (!g.timing.device.empty()) total += " on " + g.timing.device;
        rows.push_back({"", {{"<TD></TD>", total}}});
    }
    return legendGrid(rows, p);
}

// Raw text (cells escape it).
std::string bytesCell(const TransferBytes& t) {
    std::string s = formatBytes(t.crossing());
    if (!t.exact()) s += " + " + std::to_string(t.unknownHostGpu) + " of unknown size";
    return s;
}

std::string summaryTable(const DrawGraph& g, const Palette& p) {
    if (!g.isDiff || !g.diff) return {};
    const GraphDiff& d = *g.diff;
    // Every cell's text is raw and escaped here.
    auto cell = [&p](const std::string& raw, bool left = false, bool bold = false) {
        const std::string text = htmlLabelText(raw);
        return std::string("<TD") + (left ? " ALIGN=\"LEFT\"" : " ALIGN=\"RIGHT\"") + ">" +
               (text.empty() ? std::string() : font(text, 9, p.text, bold)) + "</TD>";
    };
    std::string t = "<TABLE BORDER=\"1\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\" COLOR=\"#8C8C8C\">";
    t += "<TR>" + cell("", true) + cell("before", false, true) + cell("after", false, true) +
         cell("change", false, true) + "</TR>";
    auto delta = [](long long a, long long b) {
        const long long x = b - a;
        std::string magnitude = formatBytes(x < 0 ? -x : x);
        if (auto open = magnitude.find(" ("); open != std::string::npos) magnitude.resize(open);
        return (x > 0 ? "+" : x < 0 ? "\xE2\x88\x92" : "\xC2\xB1") + magnitude;
    };
    t += "<TR>" + cell("nodes", true) + cell(std::to_string(g.nodesBefore)) + cell(std::to_string(g.nodesAfter)) +
         cell("+" + std::to_string(d.added.size()) + " / \xE2\x88\x92" + std::to_string(d.removed.size()) + " / " +
              std::to_string(d.rewired.size()) + " rewired") +
         "</TR>";
    t += "<TR>" + cell("transfers", true) + cell(std::to_string(d.bytesBefore.transfers)) +
         cell(std::to_string(d.bytesAfter.transfers)) +
         cell("+" + std::to_string(d.transfersAdded.size()) + " added / " + std::to_string(d.transfersCut.size()) +
              " cut") +
         "</TR>";
    t += "<TR>" + cell("bytes host\xE2\x86\x94GPU per run", true) + cell(bytesCell(d.bytesBefore)) +
         cell(bytesCell(d.bytesAfter)) + cell(delta(d.bytesBefore.crossing(), d.bytesAfter.crossing())) + "</TR>";
    t += "</TABLE>";
    return t;
}

std::string graphLabel(const DrawGraph& g, const DotOptions& o, const Palette& p) {
    std::vector<std::string> rows;
    if (o.caption) {
        // Two lines: the source in bold, then pipeline and step. (A caption wider than the legend
        // would make Graphviz stretch the legend grid, so the long part gets the smaller font.)
        Caption rest = g.caption;
        rest.source.clear();
        const std::string title = g.caption.source;
        const std::string line = rest.text();
        if (!title.empty()) rows.push_back(font(htmlLabelText(title), 13, p.text, true));
        if (!line.empty()) rows.push_back(font(htmlLabelText(line), 10, p.text, title.empty()));
        if (!g.caption.note.empty()) rows.push_back(font(htmlLabelText(g.caption.note), 9, p.subtleText));
        if (g.focused) {
            rows.push_back(
                font(htmlLabelText("focused view: " + groupThousands(g.totalNodes - g.hiddenNodes) + " of " +
                                   groupThousands(g.totalNodes) + " nodes, " + std::to_string(g.focusHops) +
                                   (g.focusHops == 1 ? " hop" : " hops") + " around " +
                                   (g.focusAround.empty() ? std::string("the changed region") : g.focusAround) + "; " +
                                   groupThousands(g.hiddenNodes) +
                                   " folded into dashed \xE2\x80\x9C\xE2\x80\xA6 N nodes\xE2\x80\x9D boxes"),
                     9, p.subtleText));
        }
    }
    if (o.legend) {
        const std::string legend = legendTable(g, p);
        const std::string summary = summaryTable(g, p);
        if (!legend.empty() && !summary.empty()) {
            rows.push_back("<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"0\"><TR><TD "
                           "ALIGN=\"LEFT\" VALIGN=\"TOP\">" +
                           summary + "</TD><TD WIDTH=\"14\"></TD><TD ALIGN=\"LEFT\" VALIGN=\"TOP\">" + legend +
                           "</TD></TR></TABLE>");
        } else if (!legend.empty()) {
            rows.push_back(legend);
        } else if (!summary.empty()) {
            rows.push_back(summary);
        }
    }
    if (rows.empty()) return {};
    std::string t = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"2\">";
    for (const std::string& r : rows) t += "<TR><TD ALIGN=\"LEFT\">" + r + "</TD></TR>";
    t += "</TABLE>";
    return t;
}

std::string edgeAttrs(const DrawEdge& e, const DrawGraph& g, const Palette& p, std::size_t index) {
    std::string colour = e.gpu ? p.gpuEdge : p.hostEdge;
    double pen = e.gpu ? 1.5 : 0.9;
    std::string style;
    if (e.headCluster >= 0 && static_cast<std::size_t>(e.headCluster) < g.clusters.size()) {
        // a node to its nested graph: ends at the cluster's border
        return "color=\"#9A9A9A\", penwidth=0.9, style=dashed, lhead=" +
               g.clusters[static_cast<std::size_t>(e.headCluster)].key + ", pl_edge=" + std::to_string(index);
    }
    if (e.collapsed) {
        colour = "#9A9A9A";
        style = "dashed";
        pen = 0.9;
    } else if (g.isDiff) {
        switch (e.change) {
        case NodeChange::Added:
            colour = p.addedBorder;
            pen = 2.0;
            break;
        case NodeChange::Removed:
            colour = p.removedBorder;
            pen = 1.6;
            style = "dashed";
            break;
        default: break;
        }
    }
    std::string a = "color=\"" + colour + "\", penwidth=" + fmtNum(pen);
    if (!style.empty()) a += ", style=" + style;
    if (!e.label.empty()) a += ", xlabel=<" + htmlLabelText(e.label) + ">";
    if (g.isDiff) a += ", pl_change=" + std::string(nodeChangeName(e.change));
    a += ", pl_edge=" + std::to_string(index);
    return a;
}

} // namespace

std::string writeDot(const DrawGraph& g, const DotOptions& o) {
    const Palette& p = defaultPalette();
    const std::size_t n = g.nodes.size();
    std::string out;
    out.reserve(256 + n * 400 + g.edges.size() * 120);
    out += "digraph G {\n";
    out += "  graph [rankdir=" + std::string(o.rankdir == "LR" ? "LR" : "TB") + ", fontname=\"" + p.font +
           "\", bgcolor=\"#FFFFFF\", pad=0.15, nodesep=0.22, ranksep=0.32, forcelabels=false, "
           "labelloc=t, labeljust=l";
    if (n > o.fastAbove) out += ", nslimit=4, nslimit1=4, mclimit=0.5, searchsize=20, remincross=false";
    if (!g.clusters.empty()) out += ", compound=true";
    const std::string label = graphLabel(g, o, p);
    if (!label.empty()) out += ",\n    label=<" + label + ">";
    out += "];\n";
    out += "  node [shape=box, style=\"rounded,filled\", fontname=\"" + std::string(p.font) +
           "\", fontsize=10, margin=\"0.05,0.02\", height=0.3, penwidth=1, color=\"" + p.hostBorder +
           "\", fillcolor=\"" + p.hostFill + "\", fontcolor=\"" + p.text + "\"];\n";
    out += "  edge [fontname=\"" + std::string(p.font) + "\", fontsize=7, fontcolor=\"" + p.subtleText +
           "\", arrowsize=0.55, penwidth=0.9, color=\"" + p.hostEdge + "\"];\n";
    auto writeNode = [&](const DrawNode& node, const std::string& indent) {
        const NodeStyle s = styleOf(node, g, p);
        out += indent + node.key + " [label=<" + nodeLabel(node, s, g, p) + ">";
        if (s.shape != "box") out += ", shape=" + s.shape;
        if (s.style != "rounded,filled") out += ", style=\"" + s.style + "\"";
        if (s.fill != p.hostFill) out += ", fillcolor=\"" + s.fill + "\"";
        if (s.border != p.hostBorder) out += ", color=\"" + s.border + "\"";
        if (s.penwidth != 1.0) out += ", penwidth=" + fmtNum(s.penwidth);
        if (s.peripheries != 1) out += ", peripheries=" + std::to_string(s.peripheries);
        if (node.category == NodeCategory::Constant) out += ", margin=\"0.03,0.01\", height=0.2";
        if (g.isDiff) out += ", pl_change=" + std::string(nodeChangeName(node.change));
        out += "];\n";
    };
    const std::size_t clusterCount = g.clusters.size();
    auto clusterOf = [&](const DrawNode& node) {
        return node.cluster >= 0 && static_cast<std::size_t>(node.cluster) < clusterCount ? node.cluster : -1;
    };
    for (const DrawNode& node : g.nodes)
        if (clusterOf(node) < 0) writeNode(node, "  ");
    if (clusterCount > 0) {
        // Nested graphs: one cluster each, inside its parent's; clusters left without nodes (a
        // focused view hid them) are not written.
        std::vector<std::vector<std::size_t>> members(clusterCount), children(clusterCount);
        std::vector<std::size_t> roots;
        for (std::size_t i = 0; i < g.nodes.size(); ++i)
            if (const int c = clusterOf(g.nodes[i]); c >= 0) members[static_cast<std::size_t>(c)].push_back(i);
        for (std::size_t c = 0; c < clusterCount; ++c) {
            const int parent = g.clusters[c].parent;
            if (parent >= 0 && static_cast<std::size_t>(parent) < c)
                children[static_cast<std::size_t>(parent)].push_back(c);
            else
                roots.push_back(c);
        }
        std::vector<bool> used(clusterCount, false); // has nodes, itself or below
        for (std::size_t c = clusterCount; c-- > 0;) {
            used[c] = used[c] || !members[c].empty();
            const int parent = g.clusters[c].parent;
            if (used[c] && parent >= 0 && static_cast<std::size_t>(parent) < c)
                used[static_cast<std::size_t>(parent)] = true;
        }
        // iterative, so that deep nesting cannot overflow the stack
        std::vector<std::pair<std::size_t, bool>> stack; // cluster, closing
        for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, false});
        int depth = 0;
        while (!stack.empty()) {
            const auto [c, closing] = stack.back();
            stack.pop_back();
            if (closing) {
                --depth;
                out += std::string(static_cast<std::size_t>(2 + 2 * depth), ' ') + "}\n";
                continue;
            }
            if (!used[c]) continue;
            const std::string indent(static_cast<std::size_t>(2 + 2 * depth), ' ');
            out += indent + "subgraph " + g.clusters[c].key + " {\n" + indent + "  graph [label=<" +
                   font(htmlLabelText(g.clusters[c].title), 9, p.subtleText) +
                   ">, labeljust=l, labelloc=t, style=\"rounded,dashed\", color=\"#9A9A9A\", penwidth=1, "
                   "bgcolor=\"#FBFBFB\"];\n";
            for (std::size_t i : members[c]) writeNode(g.nodes[i], indent + "  ");
            ++depth;
            stack.push_back({c, true});
            for (auto it = children[c].rbegin(); it != children[c].rend(); ++it) stack.push_back({*it, false});
        }
    }
    for (std::size_t i = 0; i < g.edges.size(); ++i) {
        const DrawEdge& e = g.edges[i];
        out += "  " + e.tail + " -> " + e.head + " [" + edgeAttrs(e, g, p, i) + "];\n";
    }
    out += "}\n";
    return out;
}

} // namespace passlens
