#include "passlens/layout/DotWriter.h"

#include "DotInternal.h"

#include <passlens/diff/GraphDiff.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace passlens {

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

const char* categoryStripe(NodeCategory c, const Palette& p) {
    return c == NodeCategory::HostOp ? p.hostStripe : categoryBorder(c, p);
}

const char* nodeStripe(NodeCategory c, OpAccent accent, bool plainFill, const Palette& p) {
    if (!isOp(c)) return nullptr;
    if (plainFill && accent == OpAccent::Elemwise) return p.elemwiseAccent;
    if (plainFill && accent == OpAccent::Alloc) return p.allocAccent;
    return categoryStripe(c, p);
}

bool isOp(NodeCategory c) {
    return c == NodeCategory::HostOp || c == NodeCategory::GpuOp || c == NodeCategory::Transfer ||
           c == NodeCategory::OnnxHostOp;
}

namespace {

using dotinternal::font;
using dotinternal::graphLabel;

// Heat fill of a node: continuous colour of its share, or the colour of its bin.
struct Heat {
    std::string fill;
    bool darkText = true;
};

Heat heatOf(const DrawNode& n, const TimingLegend& t) {
    // the share was normalised by applyTiming into [0, 1] on the chosen scale.
    const double s = std::clamp(n.timing->share, 0.0, 1.0);
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

NodeStyle styleOf(const DrawNode& n, const DrawGraph& g, const Palette& p) {
    NodeStyle s;
    s.fill = categoryFill(n.category, p);
    s.border = categoryBorder(n.category, p);
    s.penwidth = categoryPen(n.category);
    if (const char* stripe = nodeStripe(n.category, n.accent, !g.isDiff && !n.timing, p)) s.stripe = stripe;
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
    if (!n.stubOf.empty()) s.style += ",dashed"; // a repeat beside one consumer (stubFanOut)
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
        if (n.timing) { // with an overlay the time is the fill, the change the border (as the window)
            const Heat h = heatOf(n, g.timing);
            s.fill = h.fill;
            s.darkText = h.darkText;
        }
    } else if (n.timing) {
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

const char* changeBadge(NodeChange c) {
    switch (c) {
    case NodeChange::Added: return "added";
    case NodeChange::Removed: return "removed";
    case NodeChange::Rewired: return "rewired";
    case NodeChange::Unchanged: return nullptr;
    }
    return nullptr;
}

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
    // a stub sits on the rank just above its one consumer (dot's ranking puts a weightless
    // edge's source on the top rank, its edge as long as the one the stub replaces)
    if (e.fromStub) a += ", weight=1";
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
