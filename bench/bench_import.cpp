// Import speed and memory (issue: Foundation). Prints one line per measurement:
//   bench_import [CORPUS_DIR]
// - every corpus model: median wall time of 5 imports (checker + shape inference + mapping);
// - resnet18.onnx: peak resident memory of the first import above the process baseline, against
//   the file size (target <= 2x);
// - a generated 100,000-node graph JSON: median load time of 3 (target <= 0.5 s);
// - each --graph-json FILE (e.g. a block graph from `bench_inspect --emit-json`): median of 3 of
//   loadGraphFile, as `passlens-cli` opens it (targets: 100k nodes <= 0.5 s, 1M nodes <= 5 s).
// --no-corpus skips the ONNX part.
#include "BenchCli.h"
#include "BenchMemory.h"

#include <passlens/io/GraphJson.h>
#include <passlens/io/GraphLoader.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace {
double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

template <class F> double median(int n, F&& f) {
    std::vector<double> t;
    for (int i = 0; i < n; ++i) {
        auto a = std::chrono::steady_clock::now();
        f();
        t.push_back(seconds(a, std::chrono::steady_clock::now()));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::string chainJson(int n) {
    std::ostringstream os;
    os << R"({"format": "passlens.graph", "version": 1, "name": "chain",)"
       << R"( "inputs": [{"name": "x", "type": "float32[?,64]"}], "nodes": [)";
    static const char* ops[] = {"exp", "neg", "tanh", "sigmoid"};
    for (int i = 0; i < n; ++i) {
        os << (i ? "," : "") << R"({"op": "Elemwise", "attrs": {"scalar": ")" << ops[i % 4] << R"("}, "inputs": [")"
           << (i ? "v" + std::to_string(i - 1) : std::string("x")) << R"("], "outputs": ["v)" << i << R"("]})";
    }
    os << R"(], "outputs": ["v)" << n - 1 << R"("]})";
    return os.str();
}
void importCorpus(const std::filesystem::path& dir) {
    // resnet18 first, in a fresh process state, for the memory figure.
    const auto resnet = dir / "resnet18.onnx";
    if (std::filesystem::exists(resnet)) {
        const long base = passlens::bench::procStatusKb("VmRSS:");
        passlens::bench::resetPeakRss();
        auto t0 = std::chrono::steady_clock::now();
        auto g = passlens::loadGraphFile(resnet);
        const double first = seconds(t0, std::chrono::steady_clock::now());
        const long peak = passlens::bench::procStatusKb("VmHWM:");
        const double fileMiB = std::filesystem::file_size(resnet) / 1048576.0;
        std::printf("resnet18.onnx first import: %.3f s, peak RSS %.1f MiB above baseline (file %.1f MiB, ratio %.2fx, "
                    "target <= 2x)\n",
                    first, (peak - base) / 1024.0, fileMiB, (peak - base) / 1024.0 / fileMiB);
    }
    std::vector<std::filesystem::path> models;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".onnx") models.push_back(e.path());
    std::sort(models.begin(), models.end());
    for (const auto& m : models) {
        std::size_t nodes = 0;
        const double t = median(5, [&] { nodes = passlens::loadGraphFile(m).graph->nodeCount(); });
        std::printf("import %-32s %5zu nodes  median %.4f s  (target for resnet18: <= 0.5 s)\n", m.filename().c_str(),
                    nodes, t);
    }
}
} // namespace

int main(int argc, char** argv) {
    std::string corpus = PASSLENS_CORPUS_DIR;
    CLI::App app{"bench_import: ONNX import time of every corpus model, resnet18's peak memory, and the load time of a "
                 "generated 100,000-node graph JSON"};
    app.add_option("CORPUS_DIR", corpus, "Folder of the corpus's .onnx models")
        ->check(CLI::ExistingDirectory)
        ->capture_default_str();
    bool noCorpus = false;
    std::vector<std::string> graphFiles;
    app.add_flag("--no-corpus", noCorpus, "Skip the ONNX imports");
    app.add_option("--graph-json", graphFiles, "Also time loading these graph JSON files (median of 3)")
        ->check(CLI::ExistingFile);
    if (const auto rc = passlens::bench::parseCommandLine(app, argc, argv)) return *rc;
    const std::filesystem::path dir = corpus;
    if (!noCorpus) importCorpus(dir);
    const std::string text = chainJson(100000);
    std::size_t nodes = 0;
    std::vector<double> times;
    for (int i = 0; i < 3; ++i) {
        auto a = std::chrono::steady_clock::now();
        passlens::LoadedGraph g = passlens::readGraphJsonText(text, "chain.graph.json", ".");
        times.push_back(seconds(a, std::chrono::steady_clock::now()));
        nodes = g.graph->nodeCount(); // g is destroyed here, outside the timed region
    }
    std::sort(times.begin(), times.end());
    const double t = times[1];
    std::printf("graph JSON %zu nodes (%.1f MiB): median load %.3f s (target <= 0.5 s)\n", nodes,
                text.size() / 1048576.0, t);
    for (const std::string& file : graphFiles) {
        std::size_t n = 0;
        std::vector<double> tf, cpu;
        for (int i = 0; i < 3; ++i) {
            const std::clock_t c = std::clock();
            auto a = std::chrono::steady_clock::now();
            passlens::LoadedGraph g = passlens::loadGraphFile(file);
            tf.push_back(seconds(a, std::chrono::steady_clock::now()));
            cpu.push_back(static_cast<double>(std::clock() - c) / CLOCKS_PER_SEC);
            n = g.graph->nodeCount(); // destroyed outside the timed region
        }
        std::sort(tf.begin(), tf.end());
        std::sort(cpu.begin(), cpu.end());
        std::printf(
            "graph JSON file %s: %zu nodes (%.1f MiB): load %.3f s median (min %.3f, max %.3f), CPU time %.3f s "
            "median\n",
            file.c_str(), n, std::filesystem::file_size(file) / 1048576.0, tf[1], tf[0], tf[2], cpu[1]);
    }
    return 0;
}
