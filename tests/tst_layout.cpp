// passlens_layout: DOT rendering through Graphviz; the focused view whose edges cross too many
// ranks for dot.
#include <passlens/layout/GraphvizContext.h>
#include <passlens/layout/LayoutEngine.h>

#include <QTest>

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
