// The window's responsiveness (issue 13), measured on the real MainWindow (offscreen):
//   bench_window [--model FILE]... [--pipeline NAME] [--steps N] [--draw step|diff|timing]
// For each model: file chosen -> first drawing (first_ms: the source graph's view, drawn while the
// pipeline runs, for a model or graph JSON), open -> the final step drawn (open_ms: import,
// pipeline, layout), a provenance jump from the
// source step to the event that made the final graph's newest node (-> its neighbourhood drawn,
// -> the whole step drawn), and the median / worst of N rewrite steps from the source (each:
// setCurrentStep -> drawing shown; step_gui: the median time setCurrentStep itself takes, the GUI
// thread's part; draw_all / draw_view: the median time the step's focused view takes to draw, cut
// from the whole drawing as before / straight from the graph as now, DrawingRequest::draw, on the
// GUI thread after the step is shown, checked to give the same DOT; with `--draw diff` every step is shown as the diff
// from the step before (the window's Diff toggle), with `--draw timing` under a timing overlay (a made-up profile:
// every node id of the final graph timed), so the steps time those drawings), then on the final step grouping by name
// scope (View > Group by name scope -> drawing shown) and opening the largest scope box (double-click -> drawing shown;
// -1 for a model without scoped names). Then, for the same N steps, what building a step's graph costs, outside the
// window: replayed from the source (replay_ms, median; what every step cost before the window kept step graphs) and
// continued from the step before (cont_ms: Trace::graphAfter(seq, base, baseSeq), what DebugSession::graphAt does), and
// the node and variable ids the final step's replayed graph holds, in thousands (ids_k: what it counts against
// DebugSession::kKeptIds). Wall-clock milliseconds on this machine: run it on an idle machine, several times; figures
// go to docs/BENCHMARKS.md.
#include "BenchCli.h"

#include "passlens/ui/MainWindow.h"

#include <passlens/layout/DotWriter.h>
#include <passlens/layout/TimingOverlay.h>
#include <passlens/trace/Trace.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

using namespace passlens;

namespace {

// Waits until `done` holds (processing events), at most 10 minutes; false on timeout.
template <class F> bool waitFor(F done) { return QTest::qWaitFor(done, 600000); }

// Runs `action` and returns the milliseconds until the session shows a new drawing.
// An action that returns false starts no drawing: -1 at once.
template <class F> double msToNextDrawing(MainWindow& w, F action) {
    int drawings = 0;
    const auto c = QObject::connect(&w.session(), &DebugSession::layoutReady, [&] { ++drawings; });
    QElapsedTimer t;
    t.start();
    bool started = true;
    if constexpr (std::is_same_v<decltype(action()), bool>)
        started = action();
    else
        action();
    const bool ok = started && waitFor([&] { return drawings > 0; });
    const double ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    QObject::disconnect(c);
    return ok ? ms : -1;
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM",
            qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    qputenv("PASSLENS_NO_DIALOGS", "1");
    CLI::App cli{"bench_window: the window's open, provenance-jump and step times (offscreen)"};
    std::vector<std::string> models;
    std::string pipeline = "theano";
    int steps = 20;
    cli.add_option("--model", models,
                   "model, graph JSON or session file (repeatable; default: resnet18 and PP-OCR from the corpus)");
    cli.add_option("--pipeline", pipeline, "pipeline to run")->capture_default_str();
    cli.add_option("--steps", steps, "rewrite steps to time")->check(CLI::Range(1, 10000))->capture_default_str();
    std::string drawMode = "step";
    cli.add_option("--draw", drawMode,
                   "how the timed steps are drawn: step (as they are), diff (from the step before), timing (under a "
                   "timing overlay of a made-up profile)")
        ->check(CLI::IsMember({"step", "diff", "timing"}))
        ->capture_default_str();
    if (auto rc = bench::parseCommandLine(cli, argc, argv)) return *rc;
    if (models.empty())
        models = {PASSLENS_CORPUS_DIR "/resnet18.onnx", PASSLENS_CORPUS_DIR "/ch_PP-OCRv4_det_infer.onnx"};

    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("PassLensBench"));
    std::printf("%-28s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s %7s\n", "model", "first_ms",
                "open_ms", "jump_ms", "whole_ms", "step_med", "step_gui", "step_max", "draw_all", "draw_view",
                "back_ms", "group_ms", "scope_ms", "replay_ms", "cont_ms", "ids_k", "nodes");
    for (const std::string& model : models) {
        MainWindow w;
        w.resize(1500, 950);
        w.show();
        bool opened = false, good = false;
        QElapsedTimer t;
        double firstMs = -1;
        const auto first = QObject::connect(&w.session(), &DebugSession::layoutReady, [&] {
            if (firstMs < 0) firstMs = static_cast<double>(t.nsecsElapsed()) / 1e6;
        });
        t.start();
        w.whenIdle([&](bool ok, const QString&) {
            opened = true;
            good = ok;
        });
        w.openFile(QString::fromStdString(model), QString::fromStdString(pipeline));
        if (!waitFor([&] { return opened; }) || !good) {
            std::fprintf(stderr, "bench_window: %s did not open\n", model.c_str());
            return 1;
        }
        const double openMs = static_cast<double>(t.nsecsElapsed()) / 1e6;
        QObject::disconnect(first);
        DebugSession& s = w.session();
        const int last = static_cast<int>(s.steps().size()) - 1;
        auto finalGraph = s.graphAt(last);
        NodeId target = -1;
        int created = 0;
        for (const Apply* a : finalGraph->toposort())
            if (const int ev = s.trace()->createdBy(a->id()); ev > created) {
                created = ev;
                target = a->id();
            }
        // the jump, from the source step
        msToNextDrawing(w, [&] { s.setCurrentStep(0); });
        double jumpMs = -1, wholeMs = -1;
        if (target >= 0) {
            QElapsedTimer j;
            j.start();
            jumpMs = msToNextDrawing(w, [&] { w.jumpToEvent(created, target); });
            waitFor([&] { return !s.followUpPending(); });
            wholeMs = static_cast<double>(j.nsecsElapsed()) / 1e6;
        }
        // rewrite steps from the source, each as a fresh step (drawings are remembered per step)
        msToNextDrawing(w, [&] { s.setCurrentStep(0); });
        if (drawMode == "timing") { // every node a time (1-97 µs by id), as a run of the final step would give
            ExecutionProfile profile;
            profile.phase = "final";
            profile.device = "made-up (bench_window)";
            for (NodeId id = 0; id < finalGraph->nodeIdLimit(); ++id) {
                ProfileNode n;
                n.node = id;
                n.timeUs = 1.0 + static_cast<double>(id % 97);
                profile.nodes.push_back(std::move(n));
            }
            s.setProfile(std::move(profile), TimingOptions{});
        }
        std::vector<double> stepMs, guiMs, drawAllMs, drawViewMs;
        for (int k = 1; k <= std::min(steps, last); ++k) {
            if (drawMode == "diff") s.setDiffFrom(k - 1);
            stepMs.push_back(msToNextDrawing(w, [&] {
                QElapsedTimer g;
                g.start();
                s.setCurrentStep(k); // (the GUI thread's part: the step's graph, the window's refresh)
                guiMs.push_back(static_cast<double>(g.nsecsElapsed()) / 1e6);
            }));
            // what the layout worker drew of this step: the whole drawing cut to its focused view
            // (before) against the focused view drawn straight from the graph (now)
            const DrawingRequest request = s.drawingRequest();
            const LayoutOptions layoutOptions;
            QElapsedTimer d;
            d.start();
            DrawGraph all = request.draw();
            if (all.nodes.size() > layoutOptions.nodeThreshold)
                all = focusView(all, layoutOptions.focusHops, layoutOptions.focusMaxNodes);
            drawAllMs.push_back(static_cast<double>(d.nsecsElapsed()) / 1e6);
            d.restart();
            DrawGraph view = request.draw(&layoutOptions);
            // (a drawing the session does not cut itself, e.g. a diff before drawDiffFocused: cut here as the layout
            // would)
            if (!view.focused && view.nodes.size() > layoutOptions.nodeThreshold)
                view = focusView(view, layoutOptions.focusHops, layoutOptions.focusMaxNodes);
            drawViewMs.push_back(static_cast<double>(d.nsecsElapsed()) / 1e6);
            if (writeDot(view) != writeDot(all)) {
                std::fprintf(stderr, "bench_window: step %d of %s is drawn differently both ways\n", k, model.c_str());
                return 1;
            }
        }
        std::sort(stepMs.begin(), stepMs.end());
        const double med = stepMs.empty() ? -1 : stepMs[stepMs.size() / 2];
        const double worst = stepMs.empty() ? -1 : stepMs.back();
        // grouping by name scope on the final step, then opening its largest scope box
        s.setDiffFrom(std::nullopt);
        msToNextDrawing(w, [&] { s.setCurrentStep(last); });
        // one step back from the final step (Left), a phase's end on the generated graphs, until
        // the window has shown it (the view on what the phase changed)
        double backMs = -1;
        if (last > 0) {
            QElapsedTimer b;
            b.start();
            if (msToNextDrawing(w, [&] { s.setCurrentStep(last - 1); }) >= 0) {
                QCoreApplication::processEvents();
                backMs = static_cast<double>(b.nsecsElapsed()) / 1e6;
            }
            msToNextDrawing(w, [&] { s.setCurrentStep(last); });
        }
        double scopeMs = -1;
        const double groupMs = msToNextDrawing(w, [&] { return w.setGroupByScope(true); });
        if (groupMs >= 0) {
            std::string largest;
            std::size_t members = 0;
            for (const LayoutNode& n : s.layout()->nodes)
                if (n.category == NodeCategory::Group && n.hiddenCount > members) {
                    members = n.hiddenCount;
                    largest = n.key;
                }
            if (!largest.empty())
                scopeMs = msToNextDrawing(w, [&] { return w.openScope(QString::fromStdString(largest)); });
        }
        // a step's graph, replayed from the source against continued from the step before
        std::vector<double> replayMs, contMs;
        {
            const Trace& trace = *s.trace();
            int previousEvent = s.steps().front().event;
            std::unique_ptr<FunctionGraph> previous = trace.graphAfter(previousEvent);
            for (int k = 1; k <= std::min(steps, last); ++k) {
                const int ev = s.steps()[static_cast<std::size_t>(k)].event;
                QElapsedTimer c;
                c.start();
                const auto full = trace.graphAfter(ev);
                replayMs.push_back(static_cast<double>(c.nsecsElapsed()) / 1e6);
                c.restart();
                auto next = trace.graphAfter(ev, *previous, previousEvent);
                contMs.push_back(static_cast<double>(c.nsecsElapsed()) / 1e6);
                previous = std::move(next);
                previousEvent = ev;
            }
        }
        // what a step's graph holds against the bound of the kept graphs (DebugSession::kKeptIds)
        const auto replayedFinal = s.trace()->graphAfter(s.steps().back().event);
        const double idsK = static_cast<double>(replayedFinal->nodeIdLimit() + replayedFinal->varIdLimit()) / 1000.0;
        const auto median = [](std::vector<double> v) {
            std::sort(v.begin(), v.end());
            return v.empty() ? -1.0 : v[v.size() / 2];
        };
        std::string name = model.substr(model.find_last_of('/') + 1);
        std::printf(
            "%-28s %9.0f %9.0f %9.0f %9.0f %9.0f %9.1f %9.0f %9.1f %9.1f %9.0f %9.0f %9.0f %9.1f %9.1f %7.1f %7zu\n",
            name.c_str(), firstMs, openMs, jumpMs, wholeMs, med, median(guiMs), worst, median(drawAllMs),
            median(drawViewMs), backMs, groupMs, scopeMs, median(replayMs), median(contMs), idsK,
            finalGraph->nodeCount());
        std::fflush(stdout);
    }
    return 0;
}
