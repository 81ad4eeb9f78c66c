// passlens_layout: DOT rendering through Graphviz; the focused view whose edges cross too many
// ranks for dot; the layout server that forks the isolated layouts (core/layout/src/LayoutServer.h).
#include "LayoutServer.h"

#include <passlens/ir/CancelToken.h>
#include <passlens/layout/GraphvizContext.h>
#include <passlens/layout/LayoutEngine.h>

#include <QTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A DOT that dot needs seconds for (mincross and network simplex over a braided 500-node chain:
// about 9 s on the 2-core development machine), so that a budget of 200 ms, a cancel or a kill
// always finds its layout running.
std::string slowDot() {
    std::string dot = "digraph S {\n";
    constexpr int n = 500;
    for (int i = 0; i < n; ++i) {
        for (const int d : {1, 2, 5})
            if (i + d < n) dot += "n" + std::to_string(i) + " -> n" + std::to_string(i + d) + ";\n";
        if (i % 7 == 0 && i + 40 < n) dot += "n" + std::to_string(i) + " -> n" + std::to_string(i + 40) + ";\n";
    }
    return dot + "}\n";
}

passlens::LayoutOptions serverOptions(bool isolate = true) {
    passlens::LayoutOptions o;
    o.isolate = isolate;
    o.cache = false;
    o.budget = std::chrono::minutes(10); // a hang guard: what the test stops, it stops itself
    return o;
}

// The kind of LayoutError that `f` throws (its message in `*message`) as an int, -1 for none.
template <class F> int layoutErrorOf(F&& f, std::string* message = nullptr) {
    try {
        f();
    } catch (const passlens::LayoutError& e) {
        if (message != nullptr) *message = e.what();
        return static_cast<int>(e.kind());
    }
    return -1;
}

int kindCode(passlens::LayoutError::Kind k) { return static_cast<int>(k); }

// Runs `act(pid)` on another thread once a layout child is running (layoutChildPid), while `layout`
// runs here; returns the LayoutError kind `layout` threw (layoutErrorOf).
int whileChildRuns(const std::function<void()>& layout, const std::function<void(int)>& act,
                   std::string* message = nullptr) {
    std::atomic<bool> finished{false};
    std::thread actor([&] {
        int pid = 0;
        while ((pid = passlens::layoutinternal::layoutChildPid()) == 0 && !finished)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (pid != 0) act(pid);
    });
    auto kind = layoutErrorOf(layout, message);
    finished = true;
    actor.join();
    return kind;
}

// "Threads:" of /proc/<pid>/status, -1 when there is no such process.
int threadsOf(int pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
    return -1;
}

// The parent pid of `pid` (/proc/<pid>/stat), -1 when there is no such process.
int parentOf(int pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text)) return -1;
    const auto close = text.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream fields(text.substr(close + 1));
    std::string state;
    int parent = -1;
    fields >> state >> parent;
    return parent;
}

// True while `pid` is a process that has not ended (a zombie has).
bool running(int pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text)) return false;
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
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

#ifdef __linux__
    // Isolated layouts are forked by one layout server, a single-threaded process that serves
    // one layout after the other, and give what an in-process layout gives, byte for byte.
    void serverServesLayoutsAsInProcess() {
        using namespace passlens;
        using layoutinternal::layoutServerPid;
        LayoutEngine engine;
        const std::string braid = "digraph B { a -> b -> c -> d; a -> c; b -> d [label=<x>]; e -> b; }";
        const LayoutResult first = engine.layoutDot(std::string(kThreeNodes), serverOptions());
        const int server = layoutServerPid();
        QVERIFY(server > 0);
        QVERIFY(server != ::getpid());
        QCOMPARE(threadsOf(server), 1);
        const LayoutResult second = engine.layoutDot(braid, serverOptions());
        QCOMPARE(layoutServerPid(), server);
        QCOMPARE(engine.layoutDot(std::string(kThreeNodes), serverOptions(false)).positionedDot, first.positionedDot);
        QCOMPARE(engine.layoutDot(braid, serverOptions(false)).positionedDot, second.positionedDot);
        QCOMPARE(second.nodes.size(), std::size_t(5));
        // a rendering with its RenderJob (view, format, geometry) too
        DrawGraph g;
        for (const char* key : {"x", "y", "z"}) {
            DrawNode n;
            n.key = key;
            n.title = std::string("op ") + key;
            g.nodes.push_back(n);
        }
        g.edges = {edge("x", "y"), edge("y", "z"), edge("x", "z", 1)};
        RenderOptions render;
        render.format = RenderFormat::Svg;
        const RenderedLayout served = engine.layoutAndRender(g, render, serverOptions());
        const RenderedLayout here = engine.layoutAndRender(g, render, serverOptions(false));
        QCOMPARE(layoutServerPid(), server);
        QVERIFY(served.bytes.find("<svg") != std::string::npos);
        QCOMPARE(served.bytes, here.bytes);
        QCOMPARE(served.layout.nodes.size(), std::size_t(3));
        QVERIFY(served.layout.nodes[2].center == here.layout.nodes[2].center);
    }

    // Past its budget the server's child is killed (TimedOut), the server stays and lays out the
    // next graph.
    void serverSurvivesTimeout() {
        using namespace passlens;
        using layoutinternal::layoutServerPid;
        LayoutEngine engine;
        engine.layoutDot(std::string(kThreeNodes), serverOptions());
        const int server = layoutServerPid();
        QVERIFY(server > 0);
        LayoutOptions o = serverOptions();
        o.budget = std::chrono::milliseconds(200);
        std::string message;
        const std::string slow = slowDot();
        QCOMPARE(layoutErrorOf([&] { engine.layoutDot(slow, o); }, &message), kindCode(LayoutError::Kind::TimedOut));
        QCOMPARE(message, std::string("layout past its budget of 0.2 s"));
        QCOMPARE(layoutServerPid(), server);
        QCOMPARE(engine.layoutDot(std::string(kThreeNodes), serverOptions()).nodes.size(), std::size_t(3));
        QCOMPARE(layoutServerPid(), server);
    }

    // A cancel kills the server's child (Cancelled); the next layout works on the same server.
    void serverSurvivesCancel() {
        using namespace passlens;
        using layoutinternal::layoutServerPid;
        LayoutEngine engine;
        engine.layoutDot(std::string(kThreeNodes), serverOptions());
        const int server = layoutServerPid();
        CancelToken token;
        const std::string slow = slowDot();
        QCOMPARE(whileChildRuns([&] { engine.layoutDot(slow, serverOptions(), &token); }, [&](int) { token.cancel(); }),
                 kindCode(LayoutError::Kind::Cancelled));
        QCOMPARE(layoutServerPid(), server);
        QCOMPARE(engine.layoutDot(std::string(kThreeNodes), serverOptions()).nodes.size(), std::size_t(3));
        QCOMPARE(layoutServerPid(), server);
    }

    // A layout child that dies by a signal (as Graphviz's aborts do; SIGTERM here, which ASan does
    // not catch and which leaves no core file) is Crashed, with the signal;
    // the server reaps it and lays out the next graph.
    void childKilledBySignalIsCrashed() {
        using namespace passlens;
        using layoutinternal::layoutServerPid;
        LayoutEngine engine;
        engine.layoutDot(std::string(kThreeNodes), serverOptions());
        const int server = layoutServerPid();
        std::string message;
        const std::string slow = slowDot();
        int parent = 0;
        QCOMPARE(whileChildRuns([&] { engine.layoutDot(slow, serverOptions()); },
                                [&](int pid) {
                                    parent = parentOf(pid);
                                    ::kill(pid, SIGTERM);
                                },
                                &message),
                 kindCode(LayoutError::Kind::Crashed));
        QCOMPARE(parent, server); // the server's child
        QCOMPARE(message, std::string("Graphviz crashed (signal 15) while laying out the graph"));
        QCOMPARE(layoutServerPid(), server);
        QCOMPARE(engine.layoutDot(std::string(kThreeNodes), serverOptions()).nodes.size(), std::size_t(3));
        QCOMPARE(layoutServerPid(), server);
    }

    // The server ends with the process that started it: a forked child of this test lays out once
    // (starting its own server, not using this process's) and _exits; its server goes.
    void serverEndsWithItsParent() {
        using namespace passlens;
        using layoutinternal::layoutServerPid;
        LayoutEngine().layoutDot(std::string(kThreeNodes), serverOptions());
        const int ours = layoutServerPid();
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            ::close(fds[0]);
            int server = 0;
            try {
                if (LayoutEngine().layoutDot(std::string(kThreeNodes), serverOptions()).nodes.size() == 3)
                    server = layoutServerPid();
            } catch (...) {}
            const bool written = ::write(fds[1], &server, sizeof server) == sizeof server;
            _exit(written ? 0 : 1);
        }
        ::close(fds[1]);
        int server = 0;
        const bool read = ::read(fds[0], &server, sizeof server) == sizeof server;
        ::close(fds[0]);
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(read);
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        QVERIFY(server > 0);
        QVERIFY(server != ours);
        QCOMPARE(layoutServerPid(), ours); // this process's server is untouched
        // (a hang guard, not a timing: the server sees the end of its socket at once)
        for (int i = 0; i < 3000 && running(server); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        QVERIFY(!running(server));
        QCOMPARE(LayoutEngine().layoutDot(std::string(kThreeNodes), serverOptions()).nodes.size(), std::size_t(3));
        QCOMPARE(layoutServerPid(), ours);
    }

    // Without the server (one that cannot be started), the caller forks the layout child itself,
    // with the same outputs, budget and crash report.
    void directForkWithoutServer() {
        using namespace passlens;
        using namespace passlens::layoutinternal;
        LayoutEngine engine;
        engine.layoutDot(std::string(kThreeNodes), serverOptions());
        const int server = layoutServerPid();
        QVERIFY(server > 0);
        setLayoutServerAllowed(false);
        const LayoutResult forked = engine.layoutDot(std::string(kThreeNodes), serverOptions());
        QCOMPARE(forked.positionedDot, engine.layoutDot(std::string(kThreeNodes), serverOptions(false)).positionedDot);
        LayoutOptions o = serverOptions();
        o.budget = std::chrono::milliseconds(200);
        const std::string slow = slowDot();
        const int timedOut = layoutErrorOf([&] { engine.layoutDot(slow, o); });
        std::string message;
        int parent = 0;
        // SIGKILL: a child forked here has the test's own handlers of the other signals (QtTest's
        // crash handler, which does not end it); the server's child has none of them
        const int crashed = whileChildRuns([&] { engine.layoutDot(slow, serverOptions()); },
                                           [&](int pid) {
                                               parent = parentOf(pid);
                                               ::kill(pid, SIGKILL);
                                           },
                                           &message);
        setLayoutServerAllowed(true);
        QCOMPARE(timedOut, kindCode(LayoutError::Kind::TimedOut));
        QCOMPARE(crashed, kindCode(LayoutError::Kind::Crashed));
        QCOMPARE(message, std::string("Graphviz crashed (signal 9) while laying out the graph"));
        QCOMPARE(parent, int(::getpid()));   // forked here
        QCOMPARE(layoutServerPid(), server); // left alone, and used again
        QCOMPARE(engine.layoutDot(std::string(kThreeNodes), serverOptions()).positionedDot, forked.positionedDot);
        QCOMPARE(layoutServerPid(), server);
    }
#endif

    void contextRendersRepeatedly() {
        passlens::GraphvizContext context;
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(countOf(context.render(kThreeNodes, "svg"), "BetaNode"), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_layout.moc"
