// `passlens-cli inspect` on large deep graphs (issue: Scale, "inspect: debugprint output linear
// in the graph ... 1M nodes inspected in <= 10 s"):
//   bench_inspect [--nodes 100000,1000000] [--depth N] [--through-json] [--emit-json FILE] [--scoped]
// For each size: a synthetic block graph (BenchGraphs.h: 9-node blocks, 8 levels deep each) is
// built in memory, then inspectText (header, debugprint with the default depth or --depth, the
// op histogram) is timed; prints the time, the listing's size and lines, and the process's peak
// RSS growth during the listing. --through-json also writes the graph as graph JSON to a
// temporary file and times what `passlens-cli inspect FILE` does: load + listing.
// --emit-json FILE writes the first size's graph JSON to FILE (to time passlens-cli itself);
// --scoped names the nodes "/stageS/blockB/Op" (to time grouping by name scope in bench_window).
#include "BenchCli.h"
#include "BenchGraphs.h"
#include "BenchMemory.h"

#include <passlens/io/AtomicFile.h>
#include <passlens/io/GraphJson.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/io/Inspect.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

using passlens::bench::procStatusKb;
using passlens::bench::resetPeakRss;

struct Listing {
    double seconds = 0;
    std::size_t bytes = 0, lines = 0;
    double peakGrowthMiB = 0;
};

Listing timeListing(const passlens::LoadedGraph& loaded, int depth) {
    const long before = procStatusKb("VmRSS:");
    resetPeakRss();
    const auto t0 = Clock::now();
    const std::string text = passlens::inspectText(loaded, "generated.graph.json", false, depth);
    Listing l;
    l.seconds = secondsSince(t0);
    l.peakGrowthMiB = static_cast<double>(procStatusKb("VmHWM:") - before) / 1024.0;
    l.bytes = text.size();
    l.lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    return l;
}
} // namespace

int main(int argc, char** argv) {
    std::vector<int> sizes = {100000, 1000000};
    int depth = passlens::DebugPrintOptions::kAutoDepth;
    bool throughJson = false;
    std::string emit;
    CLI::App app{"bench_inspect: passlens-cli inspect's listing (inspectText) on generated deep block graphs"};
    app.add_option("--nodes", sizes, "Graph sizes in nodes, comma-separated")
        ->delimiter(',')
        ->check(CLI::Range(9, 50000000))
        ->capture_default_str();
    app.add_option("--depth", depth, "Listing depth (-1: everything; default: inspect's, 50 above 10,000 nodes)")
        ->check(CLI::Range(-1, 1000000));
    app.add_flag("--through-json", throughJson,
                 "Also time loading the graph from a graph JSON file, as passlens-cli inspect FILE does");
    app.add_option("--emit-json", emit, "Write the first size's graph as graph JSON to this file");
    bool scoped = false;
    app.add_flag("--scoped", scoped, "Name the nodes by scope, /stageS/blockB/Op (ten blocks a stage)");
    if (const auto rc = passlens::bench::parseCommandLine(app, argc, argv)) return *rc;

    std::printf("inspect listing on synthetic block graphs (9-node blocks, 8 levels each), one core:\n");
    try {
        for (std::size_t k = 0; k < sizes.size(); ++k) {
            auto t0 = Clock::now();
            passlens::LoadedGraph loaded;
            loaded.graph = passlens::bench::blockGraph(sizes[k], scoped);
            loaded.format = "graph-json";
            const double build = secondsSince(t0);
            const std::size_t nodes = loaded.graph->nodeCount();
            const Listing l = timeListing(loaded, depth);
            std::printf("  %8zu nodes (built in %.2f s): listing %.3f s, %zu lines, %.1f KiB, peak RSS +%.1f MiB\n",
                        nodes, build, l.seconds, l.lines, static_cast<double>(l.bytes) / 1024.0, l.peakGrowthMiB);
            if (!throughJson && !(k == 0 && !emit.empty())) continue;
            const std::filesystem::path path =
                k == 0 && !emit.empty() ? std::filesystem::path(emit)
                                        : std::filesystem::temp_directory_path() / "bench_inspect.graph.json";
            t0 = Clock::now();
            passlens::writeFileAtomic(path, passlens::writeGraphJson(*loaded.graph).dump() + "\n");
            const double write = secondsSince(t0);
            if (k == 0 && !emit.empty())
                std::printf("           wrote %s (%.1f MiB) in %.2f s\n", path.c_str(),
                            static_cast<double>(std::filesystem::file_size(path)) / 1048576.0, write);
            if (!throughJson) continue;
            loaded = {};
            t0 = Clock::now();
            const passlens::LoadedGraph back = passlens::loadGraphFile(path);
            const double load = secondsSince(t0);
            const Listing lj = timeListing(back, depth);
            std::printf("           through graph JSON (%.1f MiB): load %.3f s + listing %.3f s = %.3f s (target for "
                        "1M nodes: <= 10 s)\n",
                        static_cast<double>(std::filesystem::file_size(path)) / 1048576.0, load, lj.seconds,
                        load + lj.seconds);
            if (path != std::filesystem::path(emit)) std::filesystem::remove(path);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_inspect: %s\n", e.what());
        return 1;
    }
    return 0;
}
