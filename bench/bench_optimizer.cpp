// Optimizer speed (issue: Optimizer). The `theano` pipeline with recording on and off on
// synthetic graphs of repeated blocks (Dot, Elemwise, Shape_i, Alloc, Join, Subtensor, CAReduce,
// DimShuffle), the session file of the largest run reopened, and the rewrite attempts that tracks
// dispatch saves.
//   bench_optimizer [max_nodes]        (default 100000)
//   bench_optimizer --nodes 10000,100000,1000000 [--phases]
// --nodes runs only the given sizes, recording on (the issue Scale targets): wall and CPU time,
// the process's peak RSS (VmHWM, which includes the generated graph), the final graph's
// fingerprint and a digest of the recorded events (to check that two builds give bit-identical
// results), and with --phases the time of every phase.
#include "BenchCli.h"
#include "BenchGraphs.h"
#include "BenchMemory.h"

#include <passlens/ir/OpRegistry.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <vector>

using namespace passlens;
using json = nlohmann::json;

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU time of the process in seconds (the machine is shared: wall time includes waiting).
double cpuNow() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

// Digest of what a run recorded: every event's rewriter, status, node, added / removed nodes,
// replaced variables and the ids, ops and inputs of the nodes it defines.
std::uint64_t eventsDigest(const Trace& trace) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const RewriteEvent& e : trace.events()) {
        for (char c : e.phase + '\x1f' + e.rewriter + '\x1f' + statusName(e.status))
            h = mix(h, static_cast<unsigned char>(c));
        h = mix(h, static_cast<std::uint64_t>(e.node));
        for (NodeId n : e.added) h = mix(h, static_cast<std::uint64_t>(n));
        h = mix(h, 0xadd);
        for (NodeId n : e.removed) h = mix(h, static_cast<std::uint64_t>(n));
        h = mix(h, 0x4e4);
        for (const auto& [a, b] : e.replaced)
            h = mix(mix(h, static_cast<std::uint64_t>(a)), static_cast<std::uint64_t>(b));
        for (const NodeDef& d : e.nodes) {
            h = mix(h, static_cast<std::uint64_t>(d.id));
            for (char c : d.opPtr->kind()) h = mix(h, static_cast<unsigned char>(c));
            for (VarId v : d.inputs) h = mix(h, static_cast<std::uint64_t>(v));
            for (const auto& o : d.outputs) h = mix(h, static_cast<std::uint64_t>(o.id));
        }
        for (const ConstantDef& c : e.constants) h = mix(h, static_cast<std::uint64_t>(c.id));
    }
    return h;
}

// The --nodes mode: one recorded run per size.
int runSizes(const std::vector<int>& sizes, bool phases) {
    std::printf("theano pipeline on synthetic blocks, recording on, one core:\n");
    std::vector<double> times;
    for (int n : sizes) {
        bench::resetPeakRss();
        auto g = bench::blockGraph(n);
        Pipeline p = Pipeline::builtin("theano");
        Trace trace;
        const std::size_t before = g->nodeCount();
        const double w0 = now(), c0 = cpuNow();
        const PipelineRun r = p.run(*g, &trace);
        trace.finish(r, *g, p.buildContext().caps);
        const double wall = now() - w0, cpu = cpuNow() - c0;
        times.push_back(wall);
        std::printf("  %8zu -> %8zu nodes: %.3f s wall, %.3f s CPU, peak RSS %.0f MiB, %zu events, fingerprint "
                    "%016llx, events digest %016llx\n",
                    before, g->nodeCount(), wall, cpu, static_cast<double>(bench::procStatusKb("VmHWM:")) / 1024.0,
                    trace.events().size(), static_cast<unsigned long long>(g->fingerprint()),
                    static_cast<unsigned long long>(eventsDigest(trace)));
        for (const auto& m : r.messages) std::printf("    note: %s\n", m.c_str());
        if (phases)
            for (const PhaseRun& pr : r.phases)
                std::printf("      %-30s %8.3f s  %8zu -> %8zu nodes, %lld applied\n", pr.info.name.c_str(),
                            pr.timeUs / 1e6, pr.nodesBefore, pr.nodesAfter, static_cast<long long>(pr.applied));
    }
    for (std::size_t i = 1; i < times.size(); ++i)
        std::printf("  time(%d) / time(%d) = %.2f\n", sizes[i], sizes[i - 1], times[i] / times[i - 1]);
    return 0;
}

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
    std::vector<int> sizes;
    bool phases = false;
    CLI::App app{
        "bench_optimizer: the theano pipeline on synthetic block graphs of 1,000, 10,000, ... nodes up to MAX_NODES, "
        "recording on and off; the 100k run's session saved and reopened; tracks dispatch on 10k nodes"};
    app.add_option("MAX_NODES", maxNodes, "Largest graph, in nodes")
        ->check(CLI::Range(1000, 100000000))
        ->capture_default_str();
    app.add_option("--nodes", sizes, "Only these sizes (comma-separated), recording on: time, CPU, peak RSS, digests")
        ->delimiter(',')
        ->check(CLI::Range(9, 100000000));
    app.add_flag("--phases", phases, "With --nodes: the time of every phase");
    if (const auto rc = bench::parseCommandLine(app, argc, argv)) return *rc;
    if (!sizes.empty()) return runSizes(sizes, phases);
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
    if (t10k > 0 && t100k > 0) std::printf("  time(100k) / time(10k) = %.2f (target <= 11)\n", t100k / t10k);
    const Result on = run(10000, nullptr, true);
    const Result off = run(10000, nullptr, false);
    std::printf("tracks dispatch on 10k nodes: %lld rewrite attempts with dispatch, %lld without (%.1fx fewer); %.3f s "
                "vs %.3f s\n",
                static_cast<long long>(on.attempts), static_cast<long long>(off.attempts),
                static_cast<double>(off.attempts) / static_cast<double>(on.attempts), on.seconds, off.seconds);
    return 0;
}
