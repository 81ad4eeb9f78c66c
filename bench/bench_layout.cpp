// Drawing speed (issue: Drawing). Prints one line per measurement:
//   bench_layout [CORPUS_DIR]
// - every corpus model, optimized with the theano pipeline: DrawGraph + Graphviz layout + SVG of
//   the final graph, and of the source -> final diff (the union of both graphs); median of 3,
//   cache off (target <= 2 s each for graphs up to 1,000 nodes);
// - a generated 5,000-node graph: layout with the default options (node threshold 1,500, budget
//   10 s) must come back within the budget with the focused view; and the same graph with the
//   threshold lifted, so the full layout runs past 70% of a 10 s budget and falls back.
// Layout + SVG is the export path (LayoutEngine::layoutAndRender with the geometry, as
// passlens-cli render). --against-dot also times `dot -Tsvg` (the whole process, median of 3) on
// the DOT that PassLens writes for each corpus drawing and prints the ratio (target: PassLens's
// layout + SVG <= 1.2x) of four paths: the export without the geometry (report), with it
// (render), layout() + render() (the window exporting the layout it shows: a second, nop2
// pass) and layout() alone (what the window pays to show a drawing).
// --models A,B limits the corpus part to those files; --in-process lays out without the forked
// child (LayoutOptions::isolate off), to tell the fork's share.
#include "BenchCli.h"
#include "LayoutServer.h"

#include <passlens/diff/GraphDiff.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/layout/DotWriter.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/resource.h>
#include <filesystem>
#include <string>
#include <vector>

using namespace passlens;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// CPU seconds (user + system) used so far by this process, by its waited-for children (`dot`,
// layout children forked here) and by the layout children of its layout server (which the server
// reaps and reports: the server's own warm-up, once, is left out): the figure that other load on
// a shared machine changes least.
double cpuSeconds() {
    double total = 0;
    for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
        rusage u{};
        ::getrusage(who, &u);
        total += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                 static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    }
    return total + layoutinternal::layoutServerChildCpuSeconds();
}

struct Timing {
    double total = 0, layout = 0, svg = 0, cpu = 0; ///< cpu: mean of the runs
    std::size_t nodes = 0, edges = 0, svgBytes = 0;
    bool focused = false;
};

// How a drawing becomes an SVG.
enum class SvgPath {
    Export,         ///< layoutAndRender, geometry read (passlens-cli render)
    ExportNoLayout, ///< layoutAndRender without the geometry (report)
    Shown,          ///< layout(), then render(): nop2 on the positioned DOT (the window's export)
    Window,         ///< layout() alone: what the window pays to show a drawing (geometry, no file)
};

const char* pathName(SvgPath p) {
    switch (p) {
    case SvgPath::Export: return "layoutAndRender";
    case SvgPath::ExportNoLayout: return "layoutAndRender, no geometry";
    case SvgPath::Shown: return "layout + render (nop2)";
    case SvgPath::Window: return "layout (window, no file)";
    }
    return "";
}

// Median (by total) of `n` runs of: DrawGraph already built -> layout -> SVG (for the export
// paths `layout` is the layout and the SVG, `svg` is 0).
Timing measure(const DrawGraph& g, int n, const LayoutOptions& options, SvgPath path = SvgPath::Export) {
    std::vector<Timing> runs;
    LayoutEngine engine(0);
    const double cpu0 = cpuSeconds();
    for (int i = 0; i < n; ++i) {
        Timing t;
        const auto a = Clock::now();
        LayoutResult r;
        std::string svg;
        if (path == SvgPath::Shown || path == SvgPath::Window) {
            r = engine.layout(g, options);
            t.layout = secondsSince(a);
            const auto b = Clock::now();
            if (path == SvgPath::Shown) svg = engine.render(r, RenderFormat::Svg);
            t.svg = secondsSince(b);
        } else {
            RenderOptions ro;
            ro.geometry = path == SvgPath::Export;
            RenderedLayout out = engine.layoutAndRender(g, ro, options);
            r = std::move(out.layout);
            svg = std::move(out.bytes);
            t.layout = secondsSince(a);
        }
        t.total = secondsSince(a);
        t.nodes = path == SvgPath::ExportNoLayout ? g.nodes.size() : r.nodes.size();
        t.edges = path == SvgPath::ExportNoLayout ? g.edges.size() : r.edges.size();
        t.svgBytes = svg.size();
        t.focused = r.focused;
        runs.push_back(t);
    }
    const double cpu = (cpuSeconds() - cpu0) / n;
    std::sort(runs.begin(), runs.end(), [](const Timing& x, const Timing& y) { return x.total < y.total; });
    Timing median = runs[runs.size() / 2];
    median.cpu = cpu;
    return median;
}

void print(const char* what, const std::string& model, const Timing& t, double drawSeconds) {
    std::printf(
        "%-6s %-32s nodes %5zu edges %5zu  draw %.3f s  layout %.3f s  svg %.3f s  total %.3f s  (%zu KiB svg)%s\n",
        what, model.c_str(), t.nodes, t.edges, drawSeconds, t.layout, t.svg, t.total + drawSeconds, t.svgBytes / 1024,
        t.focused ? "  FOCUSED" : "");
}

// `dot -Tsvg` on the DOT PassLens writes for `g`: median wall time of 3 runs of the whole process,
// and PassLens's time on each SvgPath (`ours`: the export's, measured already) as a multiple of it.
void againstDot(const DrawGraph& g, const LayoutOptions& options, const Timing& ours) {
    const auto file = std::filesystem::temp_directory_path() / "bench_layout_against.dot";
    std::ofstream(file) << writeDot(g, options.dot);
    const std::string command = "dot -Tsvg '" + file.string() + "' -o /dev/null";
    std::vector<double> t;
    const double cpu0 = cpuSeconds();
    for (int i = 0; i < 3; ++i) {
        const auto a = Clock::now();
        if (std::system(command.c_str()) != 0) {
            std::printf("       `%s` failed (is Graphviz's dot installed?)\n", command.c_str());
            return;
        }
        t.push_back(secondsSince(a));
    }
    const double cpu = (cpuSeconds() - cpu0) / 3;
    std::sort(t.begin(), t.end());
    std::printf("       dot -Tsvg on the same DOT: %.3f s (min %.3f, max %.3f), CPU %.3f s (target <= 1.2x)\n", t[1],
                t[0], t[2], cpu);
    for (const SvgPath path : {SvgPath::Export, SvgPath::ExportNoLayout, SvgPath::Shown, SvgPath::Window}) {
        const Timing p = path == SvgPath::Export ? ours : measure(g, 3, options, path);
        std::printf("       %-30s %.3f s, CPU %.3f s: %.2fx wall, %.2fx CPU\n", pathName(path), p.total, p.cpu,
                    p.total / t[1], p.cpu / cpu);
    }
    std::filesystem::remove(file);
}

std::unique_ptr<FunctionGraph> chainGraph(int n) {
    auto g = std::make_unique<FunctionGraph>();
    Variable* x = g->addInput(Type::parse("float32[4,4]"), "x");
    std::vector<Variable*> vars{x, x};
    for (int i = 0; i < n; ++i) {
        Variable* a = vars[vars.size() - 1];
        Variable* b = vars[vars.size() - 2 - static_cast<std::size_t>(i % 5 == 0 && vars.size() > 8 ? 5 : 0)];
        vars.push_back(g->apply(Op::get("Elemwise", {{"scalar", i % 2 ? "add" : "mul"}}), {a, b}));
    }
    g->setOutputs({vars.back()});
    return g;
}

} // namespace

int main(int argc, char** argv) {
    std::string corpusDir = PASSLENS_CORPUS_DIR;
    CLI::App app{
        "bench_layout: layout + SVG of the corpus models' final graphs and diffs, stepping with stable layouts, "
        "and the 5,000-node focused view and budget"};
    app.add_option("CORPUS_DIR", corpusDir, "Folder of the corpus's .onnx models")
        ->check(CLI::ExistingDirectory)
        ->capture_default_str();
    bool withDot = false;
    std::vector<std::string> only;
    bool inProcess = false;
    app.add_flag("--in-process", inProcess, "Lay out in this process (LayoutOptions::isolate off)");
    app.add_flag("--against-dot", withDot, "Also time `dot -Tsvg` on the DOT written for each corpus drawing");
    app.add_option("--models", only, "Only these corpus files (comma-separated), and skip the other parts")
        ->delimiter(',');
    if (const auto rc = bench::parseCommandLine(app, argc, argv)) return *rc;
    const std::filesystem::path corpus = corpusDir;
    const char* models[] = {"mlp.onnx",
                            "lstm.onnx",
                            "shape_ops.onnx",
                            "transformer_encoder_layer.onnx",
                            "squeezenet1_1.onnx",
                            "resnet18.onnx",
                            "mobilenet_v2.onnx",
                            "silero_vad_legacy.onnx",
                            "ch_PP-OCRv4_det_infer.onnx"};
    LayoutOptions options;
    options.cache = false;
    options.isolate = !inProcess;
    double worst = 0;
    for (const char* name : models) {
        if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
        const auto path = corpus / name;
        if (!std::filesystem::exists(path)) {
            std::printf("missing  %s\n", path.c_str());
            continue;
        }
        LoadedGraph loaded = loadGraphFile(path);
        Trace trace;
        const Pipeline p = Pipeline::builtin("theano");
        const PipelineRun run = p.run(*loaded.graph, &trace);
        trace.finish(run, *loaded.graph, p.buildContext().caps);
        const auto source = trace.graphAfterPhase("source");

        DrawOptions opt;
        opt.caption.source = name;
        opt.caption.pipeline = "theano";
        opt.caption.step = "final";
        auto a = Clock::now();
        const DrawGraph finalDrawing = drawGraph(*loaded.graph, opt);
        const double drawFinal = secondsSince(a);
        const Timing tf = measure(finalDrawing, 3, options);
        print("final", name, tf, drawFinal);
        if (withDot) againstDot(finalDrawing, options, tf);

        a = Clock::now();
        const GraphDiff d = diff(*source, *loaded.graph);
        const DrawGraph diffDrawing = drawDiff(*source, *loaded.graph, d, opt);
        const double drawDiffSeconds = secondsSince(a);
        const Timing td = measure(diffDrawing, 3, options);
        print("diff", name, td, drawDiffSeconds);
        if (withDot) againstDot(diffDrawing, options, td);
        if (tf.nodes <= 1000) worst = std::max(worst, tf.total + drawFinal);
        if (td.nodes <= 1000) worst = std::max(worst, td.total + drawDiffSeconds);
    }
    std::printf("worst layout+svg for graphs up to 1,000 nodes: %.3f s (target 2 s)\n", worst);
    if (!only.empty()) return 0;

    // Stepping in the window: each applied rewrite laid out as the successor of the step before
    // (LayoutEngine::layoutStable), as DebugSession does, on the largest models.
    for (const char* name : {"resnet18.onnx", "ch_PP-OCRv4_det_infer.onnx"}) {
        const auto path = corpus / name;
        if (!std::filesystem::exists(path)) continue;
        LoadedGraph loaded = loadGraphFile(path);
        Trace trace;
        const Pipeline p = Pipeline::builtin("theano");
        const PipelineRun run = p.run(*loaded.graph, &trace);
        trace.finish(run, *loaded.graph, p.buildContext().caps);
        std::vector<int> applied;
        for (const RewriteEvent& e : trace.events())
            if (e.status == EventStatus::Applied) applied.push_back(e.seq);
        LayoutEngine engine;
        LayoutResult previous = engine.layout(drawGraph(*trace.graphAfter(0)), options);
        std::vector<double> stableMs, freshMs;
        std::size_t drawn = 0;
        for (std::size_t k = 0; k < applied.size() && k < 80; ++k) {
            const DrawGraph d = drawGraph(*trace.graphAfter(applied[k]));
            drawn = std::max(drawn, d.nodes.size());
            const auto t0 = Clock::now();
            LayoutResult next = engine.layoutStable(d, previous, options);
            (next.stable ? stableMs : freshMs).push_back(secondsSince(t0) * 1000);
            previous = std::move(next);
        }
        auto median = [](std::vector<double> v) {
            if (v.empty()) return 0.0;
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        const double worstStable = stableMs.empty() ? 0 : *std::max_element(stableMs.begin(), stableMs.end());
        std::printf("step   %-32s up to %zu drawn nodes: %zu stable steps, median %.0f ms, max %.0f ms; %zu fresh "
                    "(median %.0f ms)\n",
                    name, drawn, stableMs.size(), median(stableMs), worstStable, freshMs.size(), median(freshMs));
    }

    // 5,000 nodes: straight to the focused view (above the node threshold).
    const auto big = chainGraph(5000);
    DrawOptions opt;
    opt.caption.source = "generated chain";
    opt.caption.step = "final";
    auto a = Clock::now();
    const DrawGraph drawing = drawGraph(*big, opt);
    const double drawBig = secondsSince(a);
    const Timing tb = measure(drawing, 3, options);
    print("5000", "chain, default options", tb, drawBig);
    std::printf("5,000-node graph: %.3f s, %s (budget %.0f s)\n", tb.total + drawBig,
                tb.focused ? "focused view" : "FULL", options.budget.count() / 1000.0);

    // The same graph with the threshold lifted: the full layout runs past 70% of the budget and
    // is killed; the focused view comes back within the budget.
    LayoutOptions lifted = options;
    lifted.nodeThreshold = 1000000;
    a = Clock::now();
    const Timing tl = measure(drawing, 1, lifted);
    std::printf("5000   chain, threshold lifted           %s after %.3f s (budget %.0f s)\n",
                tl.focused ? "focused view" : "full layout", secondsSince(a), lifted.budget.count() / 1000.0);
    return 0;
}
