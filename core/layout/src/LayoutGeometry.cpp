#include "LayoutInternal.h"

#include <passlens/layout/GraphvizContext.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
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

std::optional<LayoutPoint> pointOf(const char* text) {
    if (text == nullptr || *text == '\0') return std::nullopt;
    const auto v = numbers(text);
    if (v.size() < 2) return std::nullopt;
    return LayoutPoint{v[0], v[1]};
}

double doubleOf(const char* text, double fallback) {
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

namespace {

const char* attr(void* obj, const char* name) { return agget(obj, const_cast<char*>(name)); }

// The attributes readGeometry reads, in its order: the graph's, then each node's followed by its
// out-edges'. Every geometry reader goes through it, from a Graphviz graph or from a record.
struct GeometrySink {
    const DrawGraph* drawn;
    LayoutResult& r;
    std::unordered_map<std::string, const DrawNode*> byKey;

    GeometrySink(const DrawGraph* d, LayoutResult& result)
        : drawn(d)
        , r(result) {
        if (drawn != nullptr)
            for (const DrawNode& n : drawn->nodes) byKey.emplace(n.key, &n);
    }

    void graph(const char* bb, const char* lp) {
        readBox(bb, r);
        r.captionPos = pointOf(lp);
    }

    void node(const char* name, const char* pos, const char* width, const char* height) {
        LayoutNode ln;
        ln.key = name;
        if (auto p = pointOf(pos)) ln.center = *p;
        ln.width = doubleOf(width, 0) * 72.0;
        ln.height = doubleOf(height, 0) * 72.0;
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
            ln.timing = d.timing;
            ln.seed = d.seed;
            ln.hiddenCount = d.hiddenCount;
            ln.stubOf = d.stubOf;
        }
        r.nodes.push_back(std::move(ln));
    }

    void edge(const char* tail, const char* head, const char* pos, const char* xlp, const char* lp, const char* index) {
        LayoutEdge le;
        le.tail = tail;
        le.head = head;
        parseSpline(pos, le);
        le.labelPos = pointOf(xlp);
        if (!le.labelPos) le.labelPos = pointOf(lp);
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
};

// Walks `g`'s geometry attributes into `visit` (a GeometrySink or the record writer): the
// nodes in `order`, each followed by its out-edges, in agfstout's order or, with `rank` (each
// node's place in `order`), in the order a parse of agwrite's output has them: cgraph orders a
// node's out-edges by their head's creation, then by their own.
template <typename Visitor>
void walkGeometry(Agraph_t* g, const std::vector<Agnode_t*>& order, Visitor& visit,
                  const std::unordered_map<Agnode_t*, std::size_t>* rank = nullptr) {
    visit.graph(attr(g, "bb"), attr(g, "lp"));
    std::vector<Agedge_t*> out;
    for (Agnode_t* n : order) {
        visit.node(agnameof(n), attr(n, "pos"), attr(n, "width"), attr(n, "height"));
        out.clear();
        for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e)) out.push_back(e);
        if (rank != nullptr)
            std::stable_sort(out.begin(), out.end(),
                             [rank](Agedge_t* a, Agedge_t* b) { return rank->at(aghead(a)) < rank->at(aghead(b)); });
        for (Agedge_t* e : out)
            visit.edge(agnameof(agtail(e)), agnameof(aghead(e)), attr(e, "pos"), attr(e, "xlp"), attr(e, "lp"),
                       attr(e, "pl_edge"));
    }
}

std::vector<Agnode_t*> nodeOrder(Agraph_t* g) {
    std::vector<Agnode_t*> order;
    for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) order.push_back(n);
    return order;
}

// The order in which agwrite writes the nodes of a graph without subgraphs, so the order in
// which a parse of its "dot" output holds them (cgraph's write.c, write_body): for each node in
// creation order, the node itself, then the heads of its out-edges, each at the first node (by
// creation) that is the head or one of its tails.
std::vector<Agnode_t*> writtenOrder(Agraph_t* g) {
    auto firstAt = [g](Agnode_t* m, IDTYPE at) {
        if (AGSEQ(m) < at) return false;
        for (Agedge_t* e = agfstin(g, m); e != nullptr; e = agnxtin(g, e))
            if (AGSEQ(agtail(e)) < at) return false;
        return true;
    };
    std::vector<Agnode_t*> order;
    std::unordered_set<Agnode_t*> written;
    auto write = [&](Agnode_t* m) {
        if (written.insert(m).second) order.push_back(m);
    };
    for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
        const IDTYPE at = AGSEQ(n);
        if (firstAt(n, at)) write(n);
        for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e))
            if (firstAt(aghead(e), at)) write(aghead(e));
    }
    return order;
}

// The record: 'G', 'N' or 'E', then each field as <decimal length> ':' <bytes>; a missing
// attribute is an empty field (readGeometry treats both alike).
struct RecordWriter {
    std::string out;
    void field(const char* text) {
        const std::size_t n = text != nullptr ? std::strlen(text) : 0;
        out += std::to_string(n);
        out += ':';
        out.append(text != nullptr ? text : "", n);
    }
    void graph(const char* bb, const char* lp) {
        out += 'G';
        field(bb);
        field(lp);
    }
    void node(const char* name, const char* pos, const char* width, const char* height) {
        out += 'N';
        for (const char* f : {name, pos, width, height}) field(f);
    }
    void edge(const char* tail, const char* head, const char* pos, const char* xlp, const char* lp, const char* index) {
        out += 'E';
        for (const char* f : {tail, head, pos, xlp, lp, index}) field(f);
    }
};

} // namespace

void readGeometry(const std::string& positioned, const DrawGraph* drawn, LayoutResult& r) {
    ErrorCapture errors;
    errors.begin();
    GraphPtr graph(agmemread(positioned.c_str()));
    if (!graph) throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot read the layout", "no graph"));
    GeometrySink sink(drawn, r);
    walkGeometry(graph.get(), nodeOrder(graph.get()), sink);
}

std::optional<std::string> geometryRecord(Agraph_t* g) {
    if (agfstsubg(g) != nullptr) return std::nullopt; // clusters: agwrite's order is not writtenOrder's
    const std::vector<Agnode_t*> order = writtenOrder(g);
    if (order.size() != static_cast<std::size_t>(agnnodes(g))) return std::nullopt;
    std::unordered_map<Agnode_t*, std::size_t> rank;
    for (std::size_t i = 0; i < order.size(); ++i) rank.emplace(order[i], i);
    attach_attrs(g);
    RecordWriter writer;
    walkGeometry(g, order, writer, &rank);
    return std::move(writer.out);
}

void readGeometryRecord(const std::string& record, const DrawGraph* drawn, LayoutResult& r) {
    const LayoutError broken(LayoutError::Kind::Crashed, "Graphviz's layout process sent a broken geometry");
    GeometrySink sink(drawn, r);
    std::size_t at = 0;
    std::vector<std::string> fields;
    auto read = [&](std::size_t count) {
        fields.clear();
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t colon = record.find(':', at);
            if (colon == std::string::npos || colon == at || colon - at > 19) throw broken;
            const std::size_t n = std::strtoull(record.c_str() + at, nullptr, 10);
            if (n > record.size() - colon - 1) throw broken;
            fields.push_back(record.substr(colon + 1, n));
            at = colon + 1 + n;
        }
    };
    while (at < record.size()) {
        const char kind = record[at++];
        if (kind == 'G') {
            read(2);
            sink.graph(fields[0].c_str(), fields[1].c_str());
        } else if (kind == 'N') {
            read(4);
            sink.node(fields[0].c_str(), fields[1].c_str(), fields[2].c_str(), fields[3].c_str());
        } else if (kind == 'E') {
            read(6);
            sink.edge(fields[0].c_str(), fields[1].c_str(), fields[2].c_str(), fields[3].c_str(), fields[4].c_str(),
                      fields[5].c_str());
        } else {
            throw broken;
        }
    }
}

} // namespace passlens::layoutinternal
