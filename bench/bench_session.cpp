// Session files (issue: Scale, sessions). On synthetic block graphs (BenchGraphs.h) the theano
// pipeline runs with recording; its session is saved in the compact format (version 2,
// docs/SESSION_FORMAT.md) and as JSON (version 1, FORMAT.md §2), then reopened in a fresh
// process to the source graph, the middle event and the final graph, against recomputing (a
// fresh process building the graph and running the recorded pipeline). Times are medians of
// --repeat runs; peak memory is each child process's VmHWM.
//   bench_session [--nodes 10000,100000] [--repeat 3] [--keep]
#include "BenchCli.h"
#include "BenchGraphs.h"
#include "BenchMemory.h"

#include <passlens/io/AtomicFile.h>
#include <passlens/io/SessionFile.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

using namespace passlens;

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The recorded run of the theano pipeline on a block graph of `nodes` nodes.
struct Recorded {
    Trace trace;
    std::size_t sourceNodes = 0, finalNodes = 0;
    double seconds = 0;
};

void record(int nodes, Recorded& out) {
    auto g = bench::blockGraph(nodes);
    out.sourceNodes = g->nodeCount();
    Pipeline p = Pipeline::builtin("theano");
    const double t0 = now();
    const PipelineRun r = p.run(*g, &out.trace);
    out.trace.finish(r, *g, p.buildContext().caps);
    out.seconds = now() - t0;
    out.finalNodes = g->nodeCount();
}

double cpuSeconds() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Child process modes: print "SECONDS CPU_SECONDS PEAK_KIB NODES" on stdout.
int child(const std::string& mode, int nodes, const std::string& file, int step) {
    const double t0 = now(), c0 = cpuSeconds();
    std::size_t n = 0;
    if (mode == "recompute") {
        Recorded r;
        record(nodes, r);
        n = r.finalNodes;
    } else {
        const Trace t = SessionFile::load(file);
        n = t.graphAfter(step < 0 ? static_cast<int>(t.events().size()) : step)->nodeCount();
    }
    std::printf("%.6f %.6f %ld %zu\n", now() - t0, cpuSeconds() - c0, bench::procStatusKb("VmHWM:"), n);
    return 0;
}

struct ChildResult {
    double seconds = 0, cpu = 0;
    long peakKb = 0;
    std::size_t nodes = 0;
};

// Runs this program as a child (a fresh process, so its peak memory is its own); median of `repeat`.
ChildResult runChild(const std::string& args, int repeat) {
    std::vector<double> secs, cpus, peaks;
    ChildResult last;
    for (int i = 0; i < repeat; ++i) {
        const std::string cmd = "/proc/" + std::to_string(::getpid()) + "/exe " + args;
        FILE* p = ::popen(cmd.c_str(), "r");
        if (!p || std::fscanf(p, "%lf %lf %ld %zu", &last.seconds, &last.cpu, &last.peakKb, &last.nodes) != 4) {
            std::fprintf(stderr, "bench_session: child failed: %s\n", cmd.c_str());
            if (p) ::pclose(p);
            std::exit(1);
        }
        ::pclose(p);
        secs.push_back(last.seconds);
        cpus.push_back(last.cpu);
        peaks.push_back(static_cast<double>(last.peakKb));
    }
    return {median(secs), median(cpus), static_cast<long>(median(peaks)), last.nodes};
}

double medianTime(int repeat, const std::function<void()>& f) {
    std::vector<double> t;
    for (int i = 0; i < repeat; ++i) {
        const double t0 = now();
        f();
        t.push_back(now() - t0);
    }
    return median(t);
}
} // namespace

int main(int argc, char** argv) {
    std::vector<int> sizes{10000, 100000};
    int repeat = 3;
    bool keep = false;
    std::string childMode, childFile;
    int childNodes = 0, childStep = -1;
    CLI::App app{"bench_session: session files of the theano pipeline on synthetic block graphs: size, save "
                 "overhead, reopen time and peak memory (compact version 2 and JSON version 1) against recomputing"};
    app.add_option("--nodes", sizes, "Graph sizes, in nodes")->delimiter(',')->check(CLI::Range(1000, 10000000));
    app.add_option("--repeat", repeat, "Runs per figure (the median is printed)")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    app.add_flag("--keep", keep, "Keep the session files (their folder is printed)");
    auto* c = app.add_option("--child", childMode, "(internal) recompute or reopen, in a fresh process")
                  ->check(CLI::IsMember({"recompute", "reopen"}));
    c->group("");
    app.add_option("--child-nodes", childNodes)->group("");
    app.add_option("--child-file", childFile)->group("");
    app.add_option("--child-step", childStep)->group("");
    if (const auto rc = bench::parseCommandLine(app, argc, argv)) return *rc;
    if (!childMode.empty()) return child(childMode, childNodes, childFile, childStep);

    const auto dir = std::filesystem::temp_directory_path() / ("bench_session." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::printf("theano pipeline with recording on synthetic blocks; medians of %d runs\n", repeat);
    for (int n : sizes) {
        Recorded rec;
        record(n, rec);
        std::vector<double> runs{rec.seconds};
        for (int i = 1; i < repeat; ++i) {
            Recorded r;
            record(n, r);
            runs.push_back(r.seconds);
        }
        const double runS = median(runs);
        const std::size_t events = rec.trace.events().size();
        const auto compact = dir / (std::to_string(n) + ".passlens");
        const auto json = dir / (std::to_string(n) + ".passlens.json");
        const double saveCompact = medianTime(repeat, [&] { SessionFile::save(rec.trace, compact, ""); });
        const double saveJson = medianTime(repeat, [&] {
            SessionFile::save(rec.trace, json, "", nlohmann::json::array(), nullptr, SessionFile::Format::Json);
        });
        const auto compactBytes = std::filesystem::file_size(compact);
        const auto jsonBytes = std::filesystem::file_size(json);
        const double budget = 40.0 * static_cast<double>(rec.sourceNodes) + 200.0 * static_cast<double>(events);
        std::printf("%zu source nodes -> %zu, %zu events; run with recording %.3f s\n", rec.sourceNodes, rec.finalNodes,
                    events, runS);
        std::printf("  size: compact %.2f MiB (%.1f bytes per source node; budget 40/node + 200/event = %.2f MiB: %s), "
                    "JSON v1 %.2f MiB (%.1fx)\n",
                    compactBytes / 1048576.0, static_cast<double>(compactBytes) / static_cast<double>(rec.sourceNodes),
                    budget / 1048576.0, static_cast<double>(compactBytes) <= budget ? "within" : "OVER",
                    jsonBytes / 1048576.0, static_cast<double>(jsonBytes) / static_cast<double>(compactBytes));
        std::printf("  save: compact %.3f s (+%.1f%% of the run), JSON v1 %.3f s (+%.1f%%)\n", saveCompact,
                    100 * saveCompact / runS, saveJson, 100 * saveJson / runS);
        const std::string nodesArg = " --child-nodes " + std::to_string(n);
        const ChildResult re = runChild("--child recompute" + nodesArg, repeat);
        std::printf("  recompute (fresh process: build the graph, run the pipeline recording): %.3f s (CPU %.3f s), "
                    "peak %.0f MiB, %zu nodes\n",
                    re.seconds, re.cpu, re.peakKb / 1024.0, re.nodes);
        const int steps[] = {0, static_cast<int>(events / 2), -1};
        const char* names[] = {"source", "middle event", "final"};
        for (int i = 0; i < 3; ++i) {
            const ChildResult ro = runChild("--child reopen --child-file " + compact.string() + " --child-step " +
                                                std::to_string(steps[i]),
                                            repeat);
            std::printf("  reopen compact to %-12s: %.3f s (CPU %.3f s, %.2fx recompute's), peak %.0f MiB (%.2fx), %zu "
                        "nodes\n",
                        names[i], ro.seconds, ro.cpu, ro.cpu / re.cpu, ro.peakKb / 1024.0,
                        static_cast<double>(ro.peakKb) / static_cast<double>(re.peakKb), ro.nodes);
        }
        const ChildResult rj = runChild("--child reopen --child-file " + json.string() + " --child-step -1", repeat);
        std::printf(
            "  reopen JSON v1 to final     : %.3f s (CPU %.3f s, %.2fx recompute's), peak %.0f MiB (%.2fx), %zu "
            "nodes\n",
            rj.seconds, rj.cpu, rj.cpu / re.cpu, rj.peakKb / 1024.0,
            static_cast<double>(rj.peakKb) / static_cast<double>(re.peakKb), rj.nodes);
    }
    if (keep)
        std::printf("session files kept in %s\n", dir.string().c_str());
    else
        std::filesystem::remove_all(dir);
    return 0;
}
