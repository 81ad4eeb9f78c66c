// Optimizer speed (issue: Optimizer). The `theano` pipeline with recording on and off on
// synthetic graphs of repeated blocks (Dot, Elemwise, Shape_i, Alloc, Join, Subtensor, CAReduce,
// DimShuffle), the session file of the largest run reopened, and the rewrite attempts that tracks
// dispatch saves.
//   bench_optimizer [max_nodes]        (default 100000)
#include "BenchCli.h"
#include "BenchGraphs.h"

#include <passlens/ir/OpRegistry.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

using namespace passlens;
using json = nlohmann::json;

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Result {
    double seconds;
    std::size_t before, after;
    std::int64_t attempts;
};

Result run(int nodes, Trace* trace, bool dispatch = true) {
    auto g = bench::blockGraph(nodes);
    Pipeline p = Pipeline::builtin("theano");
    p.buildContext().dispatch = dispatch;
    p.buildContext().localGroupDispatch = dispatch;
    const std::size_t before = g->nodeCount();
    const double t0 = now();
    const PipelineRun r = p.run(*g, trace);
    const double t = now() - t0;
    if (trace) trace->finish(r, *g, p.buildContext().caps);
    for (const auto& m : r.messages) std::printf("    note: %s\n", m.c_str());
    return {t, before, g->nodeCount(), r.attempts};
}
} // namespace

int main(int argc, char** argv) {
    int maxNodes = 100000;
    CLI::App app{
        "bench_optimizer: the theano pipeline on synthetic block graphs of 1,000, 10,000, ... nodes up to MAX_NODES, "
        "recording on and off; the 100k run's session saved and reopened; tracks dispatch on 10k nodes"};
    app.add_option("MAX_NODES", maxNodes, "Largest graph, in nodes")
        ->check(CLI::Range(1000, 100000000))
        ->capture_default_str();
    if (const auto rc = bench::parseCommandLine(app, argc, argv)) return *rc;
    std::printf("theano pipeline on synthetic blocks, one core (recording on / off):\n");
    double t10k = 0, t100k = 0;
    for (int n = 1000; n <= maxNodes; n *= 10) {
        Trace trace;
        const Result on = run(n, &trace);
        const Result off = run(n, nullptr);
        std::printf("  %7zu -> %6zu nodes: recording on %.3f s, off %.3f s (overhead %.2fx), %zu events\n", on.before,
                    on.after, on.seconds, off.seconds, on.seconds / off.seconds, trace.events().size());
        if (n == 10000) t10k = on.seconds;
        if (n == 100000) {
            t100k = on.seconds;
            const auto path = std::filesystem::temp_directory_path() / "bench_optimizer_100k.passlens.json";
            double s0 = now();
            trace.save(path, "");
            const double saveS = now() - s0;
            s0 = now();
            Trace back = Trace::load(path);
            const double loadS = now() - s0;
            s0 = now();
            const auto fin = back.graphAfterPhase("final");
            const double rebuildS = now() - s0;
            std::printf("  session of the 100k run: %.1f MiB, saved in %.3f s, reopened in %.3f s, final graph rebuilt "
                        "from %zu events in %.3f s (%zu nodes)\n",
                        std::filesystem::file_size(path) / 1048576.0, saveS, loadS, back.events().size(), rebuildS,
                        fin->nodeCount());
            if (!std::getenv("KEEP_SESSION")) std::filesystem::remove(path);
        }
    }
    if (t10k > 0 && t100k > 0) std::printf("  time(100k) / time(10k) = %.2f (target <= 12)\n", t100k / t10k);
    const Result on = run(10000, nullptr, true);
    const Result off = run(10000, nullptr, false);
    std::printf("tracks dispatch on 10k nodes: %lld rewrite attempts with dispatch, %lld without (%.1fx fewer); %.3f s "
                "vs %.3f s\n",
                static_cast<long long>(on.attempts), static_cast<long long>(off.attempts),
                static_cast<double>(off.attempts) / static_cast<double>(on.attempts), on.seconds, off.seconds);
    return 0;
}
