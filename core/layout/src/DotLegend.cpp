// The graph label of the DOT writer (DotInternal.h): caption, legend and the diff summary.
#include "DotInternal.h"

#include <passlens/diff/GraphDiff.h>

#include "passlens/layout/TimingOverlay.h"

#include <algorithm>
#include <set>
#include <vector>

namespace passlens {

namespace {

using dotinternal::font;

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
        // with an overlay, timed nodes take the heat as their fill and show the change by the
        // border alone (styleOf): the swatches then are borders on white
        const bool timed =
            std::any_of(g.nodes.begin(), g.nodes.end(), [](const DrawNode& n) { return n.timing.has_value(); });
        auto fill = [&](const char* f) { return std::string(timed ? "#FFFFFF" : f); };
        rows.push_back({timed ? "diff (border)" : "diff",
                        {{swatch(fill(p.addedFill), p.addedBorder), "added"},
                         {swatch(fill(p.removedFill), p.removedBorder, "dashed"), "removed"},
                         {swatch(fill(p.rewiredFill), p.rewiredBorder), "rewired"},
                         {swatch(fill(p.unchangedFill), p.unchangedBorder), "unchanged"}}});
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
        // (in a diff, a node without a time keeps its diff fill: no separate swatch)
        if (!g.isDiff) t.entries.push_back({swatch("#FFFFFF", p.hostBorder, "dotted"), "no timing"});
        rows.push_back(t);
        std::string total = "per run, total " + formatMicros(g.timing.totalUs);
        if (!g.timing.device.empty()) total += " on " + g.timing.device;
        if (!g.timing.measuredOn.empty()) total += ", measured on " + g.timing.measuredOn + ", not the step drawn";
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

} // namespace

std::string dotinternal::graphLabel(const DrawGraph& g, const DotOptions& o, const Palette& p) {
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

} // namespace passlens
