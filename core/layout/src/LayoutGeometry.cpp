#include "LayoutInternal.h"

#include <passlens/layout/GraphvizContext.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <vector>

namespace passlens::layoutinternal {

using gvinternal::ErrorCapture;

namespace {

std::vector<double> numbers(const char* text) {
    std::vector<double> v;
    if (text == nullptr) return v;
    const char* s = text;
    while (*s != '\0') {
        char* end = nullptr;
        const double d = std::strtod(s, &end);
        if (end == s) {
            ++s;
            continue;
        }
        v.push_back(d);
        s = end;
    }
    return v;
}

std::optional<LayoutPoint> pointAttr(void* obj, const char* name) {
    const char* text = agget(obj, const_cast<char*>(name));
    if (text == nullptr || *text == '\0') return std::nullopt;
    const auto v = numbers(text);
    if (v.size() < 2) return std::nullopt;
    return LayoutPoint{v[0], v[1]};
}

double doubleAttr(void* obj, const char* name, double fallback) {
    const char* text = agget(obj, const_cast<char*>(name));
    if (text == nullptr || *text == '\0') return fallback;
    char* end = nullptr;
    const double d = std::strtod(text, &end);
    return end == text ? fallback : d;
}

// "e,x,y s,x,y x1,y1 x2,y2 ..." (the first spline when there are several, ';'-separated).
void parseSpline(const char* text, LayoutEdge& e) {
    if (text == nullptr) return;
    std::string s(text);
    if (auto semi = s.find(';'); semi != std::string::npos) s.resize(semi);
    std::size_t i = 0;
    auto skipSpaces = [&]() {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    };
    auto readPoint = [&](LayoutPoint& p) {
        const char* begin = s.c_str() + i;
        char* end = nullptr;
        p.x = std::strtod(begin, &end);
        if (end == begin || *end != ',') return false;
        const char* second = end + 1;
        p.y = std::strtod(second, &end);
        if (end == second) return false;
        i = static_cast<std::size_t>(end - s.c_str());
        return true;
    };
    while (i < s.size()) {
        skipSpaces();
        if (i >= s.size()) break;
        if ((s[i] == 'e' || s[i] == 's') && i + 1 < s.size() && s[i + 1] == ',') {
            const char which = s[i];
            i += 2;
            LayoutPoint p;
            if (!readPoint(p)) return;
            if (which == 'e') e.arrowTip = p;
            continue;
        }
        LayoutPoint p;
        if (!readPoint(p)) return;
        e.spline.push_back(p);
    }
}

} // namespace

bool readBox(const char* text, LayoutResult& r) {
    const auto bb = numbers(text);
    if (bb.size() != 4) return false;
    r.width = bb[2] - bb[0];
    r.height = bb[3] - bb[1];
    r.x0 = bb[0];
    r.y0 = bb[1];
    return true;
}

void readGeometry(const std::string& positioned, const DrawGraph* drawn, LayoutResult& r) {
    ErrorCapture errors;
    errors.begin();
    GraphPtr graph(agmemread(positioned.c_str()));
    if (!graph) throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot read the layout", "no graph"));
    Agraph_t* g = graph.get();
    readBox(agget(g, const_cast<char*>("bb")), r);
    r.captionPos = pointAttr(g, "lp");

    std::unordered_map<std::string, const DrawNode*> byKey;
    if (drawn != nullptr)
        for (const DrawNode& n : drawn->nodes) byKey.emplace(n.key, &n);

    for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
        LayoutNode ln;
        ln.key = agnameof(n);
        if (auto p = pointAttr(n, "pos")) ln.center = *p;
        ln.width = doubleAttr(n, "width", 0) * 72.0;
        ln.height = doubleAttr(n, "height", 0) * 72.0;
        if (auto it = byKey.find(ln.key); it != byKey.end()) {
            const DrawNode& d = *it->second;
            ln.node = d.node;
            ln.var = d.var;
            ln.category = d.category;
            ln.accent = d.accent;
            ln.change = d.change;
            ln.title = d.title;
            ln.subtitle = d.subtitle;
            ln.detail = d.detail;
            ln.transferDirection = d.transferDirection;
            ln.name = d.name;
            ln.scope = d.scope;
            ln.timeShare = d.timeShare;
            ln.timeUs = d.timeUs;
            ln.seed = d.seed;
            ln.hiddenCount = d.hiddenCount;
        }
        r.nodes.push_back(std::move(ln));
        for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e)) {
            LayoutEdge le;
            le.tail = agnameof(agtail(e));
            le.head = agnameof(aghead(e));
            parseSpline(agget(e, const_cast<char*>("pos")), le);
            le.labelPos = pointAttr(e, "xlp");
            if (!le.labelPos) le.labelPos = pointAttr(e, "lp");
            const char* index = agget(e, const_cast<char*>("pl_edge"));
            if (drawn != nullptr && index != nullptr && *index != '\0') {
                const long k = std::strtol(index, nullptr, 10);
                if (k >= 0 && static_cast<std::size_t>(k) < drawn->edges.size()) {
                    const DrawEdge& d = drawn->edges[static_cast<std::size_t>(k)];
                    le.inputIndex = d.inputIndex;
                    le.change = d.change;
                    le.gpu = d.gpu;
                    le.collapsed = d.collapsed;
                    le.label = d.label;
                }
            }
            r.edges.push_back(std::move(le));
        }
    }
}

} // namespace passlens::layoutinternal
