// Latency of the executor (issue: Execution). Prints one line per model and graph:
//   bench_exec [CORPUS_DIR] [--threads N] [--runs N] [--warmup N] [--models a,b,c] [--phase source|final]
//              [--ab VAR=A,B] [--device cpu|cuda] [--batch N]
// --device cuda runs the graphs on CUDA device 0 (exit 3 when there is none); --batch N binds
// dim 0 of every graph input to N before ONNX shape inference (random inputs then).
// --ab compares two settings of an executor switch (ExecOptions::variables(), named by its
// environment variable) in one process: one executor built with each value, runs alternating
// A, B, A, B ..., so both see the same machine load; prints both medians and median_ratio_B/A,
// the median of the per-pair ratios (not the ratio of the two medians).
// Each line also gives cpu_median_ms, the median of the runs' thread CPU time (1 thread: less
// sensitive than wall time to other processes taking the cores on a busy machine).
// - resnet18, mobilenet_v2, squeezenet1_1, transformer_encoder_layer, mlp (default): median (and
//   min) of 30 runs after 5 warm-ups, OpenBLAS at 1 thread (same count as onnxruntime in
//   bench/ort_latency.mjs, docs/BENCHMARKS.md), for the source graph and the final graph of
//   the theano pipeline (GPU ops emulated on the CPU);
// - resnet18 without --phase, --ab, --batch or --device cuda: peak host memory of the executor
//   (buffer pool footprint) and of the process, against weights + the largest live activations.
// Exit status: 0, 1 when a model is missing or fails, 2 for a usage error, 3 without a CUDA device.
#include "BenchMemory.h"

#include <passlens/io/GraphLoader.h>
#include <passlens/kernels/DeviceInfo.h>
#include <passlens/kernels/Executor.h>
#include <passlens/kernels/TensorIO.h>
#include <passlens/onnx/OnnxImporter.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

passlens::DeviceChoice g_device = passlens::DeviceChoice::Cpu;

int usage(const std::string& why, FILE* to = stderr) {
    std::fprintf(to,
                 "bench_exec: %s\nusage: bench_exec [CORPUS_DIR] [--threads N] [--runs N] [--warmup N] [--models "
                 "a,b,c] [--phase source|final]\n"
                 "                  [--ab VAR=A,B] [--device cpu|cuda] [--batch N]\n",
                 why.c_str());
    return 2;
}

using passlens::bench::procStatusKb;
using passlens::bench::resetPeakRss;

std::vector<passlens::Tensor> inputsFor(const passlens::FunctionGraph& g, const std::filesystem::path& dir) {
    std::vector<passlens::Tensor> in = passlens::readTensorDir(dir, "input");
    bool match = in.size() == g.inputs().size();
    for (std::size_t i = 0; match && i < in.size(); ++i) {
        // the test data fits a declared shape; a dynamic dim (< 0) takes any size
        const std::vector<std::int64_t>& d = g.inputs()[i]->type().dims();
        match = in[i].shape().size() == d.size();
        for (std::size_t k = 0; match && k < d.size(); ++k) match = d[k] < 0 || d[k] == in[i].shape()[k];
    }
    if (match) return in;
    in.clear();
    for (std::size_t i = 0; i < g.inputs().size(); ++i)
        in.push_back(passlens::randomTensor(g.inputs()[i]->type(), i + 1));
    return in;
}

std::size_t constantBytes(const passlens::FunctionGraph& g) {
    std::size_t n = 0;
    for (const passlens::Variable* v : g.constants())
        if (v->constant() && v->constant()->loaded()) n += v->constant()->byteSize();
    return n;
}

struct Timing {
    double median = 0, min = 0, cpuMedian = 0;
};

double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Wall milliseconds of one run.
double runMs(passlens::Executor& ex, const std::vector<passlens::Tensor>& in) {
    const auto t0 = std::chrono::steady_clock::now();
    ex.run(in);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Timing timeRuns(passlens::Executor& ex, const std::vector<passlens::Tensor>& in, int warmup, int runs) {
    for (int i = 0; i < warmup; ++i) ex.run(in);
    std::vector<double> t, cpu;
    for (int i = 0; i < runs; ++i) {
        const double c0 = threadCpuMs();
        t.push_back(runMs(ex, in));
        cpu.push_back(threadCpuMs() - c0);
    }
    return {median(t), *std::min_element(t.begin(), t.end()), median(cpu)};
}

// Alternating A/B runs of the same graph (see --ab above).
void abRuns(const passlens::FunctionGraph& g, const std::vector<passlens::Tensor>& in, const std::string& var,
            const std::string& a, const std::string& b, int warmup, int runs, const char* model, const char* phase) {
    auto build = [&](const std::string& v) {
        passlens::ExecOptions o{g_device};
        o.set(var, v);
        return std::make_unique<passlens::Executor>(g, o);
    };
    auto exA = build(a);
    auto exB = build(b);
    for (int i = 0; i < warmup; ++i) {
        runMs(*exA, in);
        runMs(*exB, in);
    }
    std::vector<double> ta, tb, ratio;
    for (int i = 0; i < runs; ++i) {
        ta.push_back(runMs(*exA, in));
        tb.push_back(runMs(*exB, in));
        ratio.push_back(tb.back() / ta.back());
    }
    std::printf("%s\t%s\t%s=%s median_ms=%.3f min_ms=%.3f\t%s=%s median_ms=%.3f min_ms=%.3f\tmedian_ratio_B/A=%.3f\n",
                model, phase, var.c_str(), a.c_str(), median(ta), *std::min_element(ta.begin(), ta.end()), var.c_str(),
                b.c_str(), median(tb), *std::min_element(tb.begin(), tb.end()), median(ratio));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    std::filesystem::path corpus = PASSLENS_CORPUS_DIR;
    int threads = 1, runs = 30, warmup = 5;
    std::string onlyPhase, abVar, abA, abB, deviceName = "cpu";
    std::int64_t batch = 0;
    std::vector<std::string> models = {"mlp", "transformer_encoder_layer", "squeezenet1_1", "mobilenet_v2", "resnet18"};
    std::string current; // the option being read, for the message below
    for (int i = 1; i < argc; ++i) try {
            const std::string a = argv[i];
            current = a;
            auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
            if (a == "--threads")
                threads = std::stoi(next());
            else if (a == "--runs")
                runs = std::max(1, std::stoi(next()));
            else if (a == "--warmup")
                warmup = std::max(0, std::stoi(next()));
            else if (a == "--phase")
                onlyPhase = next();
            else if (a == "--device")
                deviceName = next();
            else if (a == "--batch")
                batch = std::max<std::int64_t>(0, std::stoll(next()));
            else if (a == "--ab") {
                const std::string v = next();
                const auto eq = v.find('='), comma = v.find(',', eq == std::string::npos ? 0 : eq);
                if (eq == std::string::npos || comma == std::string::npos)
                    return usage("--ab needs VAR=A,B, got '" + v + "'");
                abVar = v.substr(0, eq);
                if (!passlens::ExecOptions().set(abVar, "")) {
                    std::string known;
                    for (const std::string& k : passlens::ExecOptions::variables())
                        known += (known.empty() ? "" : ", ") + k;
                    return usage("--ab: " + abVar + " is not a switch it can compare (" + known + ")");
                }
                abA = v.substr(eq + 1, comma - eq - 1);
                abB = v.substr(comma + 1);
            } else if (a == "--models") {
                models.clear();
                std::stringstream ss(next());
                for (std::string m; std::getline(ss, m, ',');) models.push_back(m);
            } else if (a == "--help" || a == "-h") {
                usage("latency of the corpus models' graphs", stdout);
                return 0;
            } else if (!a.empty() && a[0] == '-')
                return usage("unknown option '" + a + "'");
            else
                corpus = a;
        } catch (const std::logic_error&) { // std::stoi / stoll: not a number
            return usage("option " + current + " needs a number");
        }
    if (!onlyPhase.empty() && onlyPhase != "source" && onlyPhase != "final")
        return usage("--phase must be source or final, got '" + onlyPhase + "'");
    passlens::setCpuThreads(threads);
    std::string deviceText = "cpu";
    if (deviceName == "cuda") {
        const passlens::DeviceInfo info = passlens::queryDevices();
        if (info.deviceCount == 0) {
            std::printf("bench_exec: %s\n", info.error.c_str());
            return 3;
        }
        g_device = passlens::DeviceChoice::Cuda;
        deviceText = "cuda (" + info.name + ")";
    } else if (deviceName != "cpu") {
        return usage("--device must be cpu or cuda, got '" + deviceName + "'");
    }
    std::printf("bench_exec: device %s, %s, %d thread(s), batch %s, median of %d runs after %d warm-ups\n",
                deviceText.c_str(), passlens::cpuBackendDescription().c_str(), threads,
                batch > 0 ? std::to_string(batch).c_str() : "as in the model", runs, warmup);
    bool failed = false;
    for (const std::string& m : models) {
        const auto file = corpus / (m + ".onnx");
        if (!std::filesystem::exists(file)) {
            std::printf("%s\tmissing\t%s\n", m.c_str(), file.string().c_str());
            failed = true;
            continue;
        }
        try {
            passlens::LoadedGraph loaded = passlens::loadGraphFile(file);
            if (batch > 0) {
                passlens::OnnxImportOptions o;
                for (const passlens::Variable* v : loaded.graph->inputs()) {
                    std::vector<std::int64_t> d = v->type().dims();
                    if (!d.empty()) d[0] = batch;
                    o.inputShapes[v->name()] = d;
                }
                loaded = passlens::importOnnxFile(file, o);
            }
            passlens::Trace trace;
            passlens::Pipeline p = passlens::Pipeline::builtin("theano");
            const passlens::PipelineRun pr = p.run(*loaded.graph, &trace);
            trace.finish(pr, *loaded.graph, p.buildContext().caps);
            std::unique_ptr<passlens::FunctionGraph> source = trace.sourceGraph();
            const auto in =
                inputsFor(*source, corpus / "testdata" / m / "test_data_set_0"); // random when batch differs
            for (const char* phase : {"source", "final"}) {
                if (!onlyPhase.empty() && onlyPhase != phase) continue;
                const passlens::FunctionGraph& g = std::strcmp(phase, "source") == 0 ? *source : *loaded.graph;
                if (!abVar.empty()) {
                    abRuns(g, in, abVar, abA, abB, warmup, runs, m.c_str(), phase);
                    continue;
                }
                passlens::Executor ex(g, passlens::ExecOptions{g_device});
                const Timing t = timeRuns(ex, in, warmup, runs);
                std::printf("%s\t%s\tnodes=%zu\tmedian_ms=%.3f\tmin_ms=%.3f\tcpu_median_ms=%.3f\tthreads=%d\tdevice=%"
                            "s\tbatch=%lld\n",
                            m.c_str(), phase, g.nodeCount(), t.median, t.min, t.cpuMedian, threads, deviceName.c_str(),
                            static_cast<long long>(in.empty() || in[0].ndim() == 0 ? 0 : in[0].dim(0)));
                std::fflush(stdout);
            }
            if (m == "resnet18" && onlyPhase.empty() && abVar.empty() && g_device == passlens::DeviceChoice::Cpu &&
                batch == 0) {
                passlens::Executor ex(*source, passlens::ExecOptions{passlens::DeviceChoice::Cpu});
                ex.run(in);
                ex.context().pool->trim();
                ex.context().pool->resetPeaks();
                const long rssBefore = procStatusKb("VmRSS:");
                resetPeakRss();
                ex.run(in);
                const long hwm = procStatusKb("VmHWM:");
                const double weights = static_cast<double>(constantBytes(*source)) / (1 << 20);
                const double live = static_cast<double>(ex.context().pool->peakLiveBytes()) / (1 << 20);
                const double foot = static_cast<double>(ex.context().pool->peakFootprintBytes()) / (1 << 20);
                const double scratch =
                    static_cast<double>(ex.context().scratchBuffer.capacity() * sizeof(float)) / (1 << 20);
                std::printf("resnet18\tmemory\tweights_mib=%.1f\tpeak_live_activations_mib=%.1f\tpool_footprint_mib=%."
                            "1f\tscratch_mib=%.1f\t"
                            "executor_peak/(weights+live)=%.2f\tprocess_rss_growth_during_run_mib=%.1f\n",
                            weights, live, foot, scratch, (weights + foot + scratch) / (weights + live),
                            static_cast<double>(hwm - rssBefore) / 1024.0);
            }
        } catch (const std::exception& e) {
            std::printf("%s\terror\t%s\n", m.c_str(), e.what());
            failed = true;
        }
    }
    return failed ? 1 : 0;
}
