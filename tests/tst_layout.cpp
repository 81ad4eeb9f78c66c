// passlens_layout: DOT rendering through Graphviz; the focused view whose edges cross too many
// ranks for dot.
#include <passlens/layout/GraphvizContext.h>
#include <passlens/layout/LayoutEngine.h>

#include <QTest>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <string_view>

namespace {

// A drawn edge from `tail` into input `index` of `head`.
passlens::DrawEdge edge(std::string tail, std::string head, int index = 0) {
    passlens::DrawEdge e;
    e.tail = std::move(tail);
    e.head = std::move(head);
    e.inputIndex = index;
    return e;
}

constexpr std::string_view kThreeNodes = R"(digraph G {
    a [label="AlphaNode"];
    b [label="BetaNode"];
    c [label="GammaNode"];
    a -> b;
    b -> c;
    a -> c;
})";

int countOf(const std::string& haystack, std::string_view needle) {
    int count = 0;
    for (auto pos = haystack.find(needle); pos != std::string::npos; pos = haystack.find(needle, pos + needle.size())) {
        ++count;
    }
    return count;
}

// Returns the message of the std::runtime_error `f` throws, or an empty string.
template <class F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestLayout : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // A focused view whose "… N nodes" box ties into a 400-node chain along its whole length
    // (edges crossing 0 + 1 + ... + 399 = 79,800 rank levels) is drawn with the simple layout at
    // once, saying why: dot would spend seconds on its virtual nodes and run into the budget.
    void tangledFocusedViewGetsTheSimpleLayout() {
        using namespace passlens;
        DrawGraph g;
        for (int k = 0; k < 400; ++k) { // the changed region: a chain
            DrawNode n;
            n.key = "n" + std::to_string(k);
            n.node = k;
            n.title = "exp";
            n.seed = true;
            g.nodes.push_back(n);
            if (k > 0) g.edges.push_back(edge("n" + std::to_string(k - 1), n.key));
        }
        for (int k = 0; k < 1200; ++k) { // hidden: a chain feeding the changed one all along
            DrawNode n;
            n.key = "n" + std::to_string(1000 + k);
            n.node = 1000 + k;
            n.title = "neg";
            g.nodes.push_back(n);
            if (k > 0) g.edges.push_back(edge("n" + std::to_string(999 + k), n.key));
            g.edges.push_back(edge(n.key, "n" + std::to_string(k % 400), 1));
        }
        LayoutOptions o;
        o.nodeThreshold = 1000;
        o.cache = false;
        const LayoutResult r = LayoutEngine().layout(g, o);
        QVERIFY(r.focused && r.simple);
        QCOMPARE(r.nodes.size(), std::size_t(401)); // the chain and one "… 1,200 nodes" box
        QCOMPARE(r.budgetNote, std::string("the focused view's edges cross 79,800 rank levels, too many for "
                                           "Graphviz's layout: simple layout drawn instead"));
        QCOMPARE(r.focusReason, std::string("1,600 nodes (threshold 1,000)"));
    }

    // A chain of 100 diamonds reading one shared weight (an ONNX model from a bug report: its
    // drawing ran past the budget into the simple layout): the weight's 100 edges cross about
    // 10,000 rank levels, so it is drawn beside its first consumer and again, dashed, just above each
    // other one, by dot, with a caption note; a weight with fewer consumers stays one node.
    void longFanOutEdgesBecomeStubs() {
        using namespace passlens;
        auto diamonds = [](int count, int readers) {
            DrawGraph g;
            DrawNode w;
            w.key = "w";
            w.category = NodeCategory::Input;
            w.title = "w";
            g.nodes.push_back(w);
            std::string h = "x";
            DrawNode x;
            x.key = "x";
            x.category = NodeCategory::Input;
            x.title = "x";
            g.nodes.push_back(x);
            for (int k = 0; k < count; ++k) {
                const std::string s = std::to_string(k);
                for (const char* op : {"dot", "tanh", "add"}) {
                    DrawNode n;
                    n.key = std::string(op) + s;
                    n.node = static_cast<NodeId>(g.nodes.size());
                    n.title = op;
                    g.nodes.push_back(n);
                }
                g.edges.push_back(edge(h, "dot" + s));
                if (k < readers) g.edges.push_back(edge("w", "dot" + s, 1));
                g.edges.push_back(edge(h, "tanh" + s));
                g.edges.push_back(edge("dot" + s, "add" + s));
                g.edges.push_back(edge("tanh" + s, "add" + s, 1));
                h = "add" + s;
            }
            return g;
        };
        LayoutOptions o;
        o.cache = false;
        o.budget = std::chrono::minutes(10); // dot decides here, never the budget
        const LayoutResult r = LayoutEngine().layout(diamonds(100, 100), o);
        QVERIFY(!r.simple);
        QVERIFY(r.budgetNote.empty());
        std::map<std::string, const LayoutNode*> at;
        for (const LayoutNode& n : r.nodes) at[n.key] = &n;
        QCOMPARE(r.nodes.size(), std::size_t(2 + 300 + 99));
        int stubs = 0;
        for (const LayoutNode& n : r.nodes) {
            if (n.stubOf.empty()) continue;
            QCOMPARE(n.stubOf, std::string("w"));
            ++stubs;
            // "w_dotK": just above dotK (one rank: less than two box heights apart)
            const std::string consumer = n.key.substr(2);
            QVERIFY2(at.count(consumer), n.key.c_str());
            const double dy = std::abs(at[consumer]->center.y - n.center.y);
            QVERIFY2(dy > 0 && dy < 2 * (n.height + at[consumer]->height), (n.key + " " + std::to_string(dy)).c_str());
        }
        QCOMPARE(stubs, 99);
        QVERIFY(at.count("w") && at.count("dot0") && at["w"]->stubOf.empty());
        QVERIFY(r.dot.find("1 node with 8 or more consumers drawn again beside each (dashed)") != std::string::npos);
        // read by the first 10 diamonds only: 8 or more consumers, but short edges: one node
        const LayoutResult few = LayoutEngine().layout(diamonds(100, 10), o);
        QCOMPARE(few.nodes.size(), std::size_t(2 + 300));
        for (const LayoutNode& n : few.nodes) QVERIFY(n.stubOf.empty());
        QVERIFY(few.dot.find("drawn again beside each") == std::string::npos);
    }

    void svgHasEachLabelOnce() {
        const std::string svg = passlens::renderDot(kThreeNodes, "svg");
        QVERIFY(svg.find("<svg") != std::string::npos);
        QCOMPARE(countOf(svg, "AlphaNode"), 1);
        QCOMPARE(countOf(svg, "BetaNode"), 1);
        QCOMPARE(countOf(svg, "GammaNode"), 1);
    }

    void invalidDotThrowsGraphvizMessage() {
        const std::string message = errorOf([] { passlens::renderDot("digraph G { a -> ; }", "svg"); });
        QVERIFY2(!message.empty(), "renderDot accepted invalid DOT");
        QVERIFY2(message.find("syntax error") != std::string::npos, message.c_str());
        QVERIFY2(message.find("Graphviz") != std::string::npos, message.c_str());
    }

    void validAfterInvalidStillWorks() {
        QVERIFY(!errorOf([] { passlens::renderDot("graph { -- }", "svg"); }).empty());
        const std::string svg = passlens::renderDot(kThreeNodes, "svg");
        QCOMPARE(countOf(svg, "GammaNode"), 1);
    }

    void unknownFormatThrows() {
        const std::string message = errorOf([] { passlens::renderDot(kThreeNodes, "no-such-format"); });
        QVERIFY2(message.find("no-such-format") != std::string::npos, message.c_str());
    }

    void pngIsBinarySafe() {
        const std::string png = passlens::renderDot(kThreeNodes, "png");
        QVERIFY(png.size() > 8);
        QCOMPARE(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    }

    void contextRendersRepeatedly() {
        passlens::GraphvizContext context;
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(countOf(context.render(kThreeNodes, "svg"), "BetaNode"), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_layout.moc"
