// passlens_layout: DOT rendering through Graphviz.
#include <passlens/layout/GraphvizContext.h>

#include <QTest>

#include <stdexcept>
#include <string>
#include <string_view>

namespace {

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
