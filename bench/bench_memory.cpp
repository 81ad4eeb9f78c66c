// Memory of big ONNX models as bug reports bring them (issue 16, "Memory bounds"): models of
// thousands of repeated blocks and a chain of diamonds, written as ONNX files here, then opened
// and optimized (the theano pipeline, recorded), listed (`inspect`), drawn (`render`: the
// focused view of the final step, through Graphviz) and saved as a session, each stage's peak
// resident memory against the session's own data: what the opened trace (its source graph,
// events and final graph) keeps resident once the stage that built it is over. Each model runs
// in a fresh child process, so every figure is its own. Target: every stage's peak ≤ 2x the
// session's own data.
//   bench_memory [--blocks 5000,20000] [--diamonds 1000] [--width 16] [--keep DIR]
#include "BenchCli.h"
#include "BenchMemory.h"

#include <passlens/io/GraphLoader.h>
#include <passlens/io/Inspect.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/Export.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/trace/TraceSteps.h>

#include <onnx/onnx_pb.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <malloc.h>
#include <unistd.h>

using namespace passlens;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// ---- ONNX models ----------------------------------------------------------------------------

void addFloatInitializer(onnx::GraphProto& g, const std::string& name, std::vector<std::int64_t> dims, float seed) {
    onnx::TensorProto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t count = 1;
    for (const std::int64_t d : dims) {
        t->add_dims(d);
        count *= d;
    }
    for (std::int64_t i = 0; i < count; ++i) t->add_float_data(seed * static_cast<float>((i % 7) - 3) / 16.0f);
}

onnx::NodeProto* addNode(onnx::GraphProto& g, const std::string& op, const std::string& name,
                         std::vector<std::string> inputs, const std::string& output) {
    onnx::NodeProto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& in : inputs) n->add_input(in);
    n->add_output(output);
    return n;
}

void addValue(onnx::ValueInfoProto* v, const std::string& name, int width) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(width);
}

onnx::ModelProto newModel(const std::string& name) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("bench_memory");
    m.add_opset_import()->set_version(17);
    m.mutable_graph()->set_name(name);
    return m;
}

// `blocks` residual MLP blocks, named as exporters name them (/blocks.I/fc/MatMul): MatMul by the
// block's own [width, width] weight, Add its own bias, Relu, Mul by a shared scale, Add the
// block's input. Five nodes and two initializers a block.
onnx::ModelProto blockModel(int blocks, int width) {
    onnx::ModelProto m = newModel("blocks");
    onnx::GraphProto& g = *m.mutable_graph();
    addValue(g.add_input(), "x", width);
    addFloatInitializer(g, "scale", {}, 1.0f);
    std::string h = "x";
    for (int i = 0; i < blocks; ++i) {
        const std::string p = "/blocks." + std::to_string(i) + "/";
        const std::string w = "blocks." + std::to_string(i) + ".fc.weight";
        const std::string b = "blocks." + std::to_string(i) + ".fc.bias";
        addFloatInitializer(g, w, {width, width}, 0.5f);
        addFloatInitializer(g, b, {width}, 0.25f);
        addNode(g, "MatMul", p + "fc/MatMul", {h, w}, p + "fc/MatMul_output_0");
        addNode(g, "Add", p + "fc/Add", {p + "fc/MatMul_output_0", b}, p + "fc/Add_output_0");
        addNode(g, "Relu", p + "act/Relu", {p + "fc/Add_output_0"}, p + "act/Relu_output_0");
        addNode(g, "Mul", p + "Mul", {p + "act/Relu_output_0", "scale"}, p + "Mul_output_0");
        addNode(g, "Add", p + "Add", {p + "Mul_output_0", h}, p + "Add_output_0");
        h = p + "Add_output_0";
    }
    addValue(g.add_output(), h, width);
    return m;
}

// A chain of `diamonds` diamonds: each splits its input into MatMul (a shared weight) and Tanh
// and joins them with Add. Three nodes a diamond; every node has two paths to the output per
// diamond after it.
onnx::ModelProto diamondModel(int diamonds, int width) {
    onnx::ModelProto m = newModel("diamonds");
    onnx::GraphProto& g = *m.mutable_graph();
    addValue(g.add_input(), "x", width);
    addFloatInitializer(g, "w", {width, width}, 0.5f);
    std::string h = "x";
    for (int i = 0; i < diamonds; ++i) {
        const std::string p = "/d" + std::to_string(i) + "/";
        addNode(g, "MatMul", p + "MatMul", {h, "w"}, p + "MatMul_output_0");
        addNode(g, "Tanh", p + "Tanh", {h}, p + "Tanh_output_0");
        addNode(g, "Add", p + "Add", {p + "MatMul_output_0", p + "Tanh_output_0"}, p + "Add_output_0");
        h = p + "Add_output_0";
    }
    addValue(g.add_output(), h, width);
    return m;
}

void writeModel(const onnx::ModelProto& m, const std::filesystem::path& path) {
    std::ofstream out(path, std::ios::binary);
    if (!out || !m.SerializeToOstream(&out)) {
        std::fprintf(stderr, "bench_memory: cannot write %s\n", path.c_str());
        std::exit(1);
    }
}

// ---- one model, in a child process ----------------------------------------------------------

long rssKb() { return bench::procStatusKb("VmRSS:"); }

// Resets the peak, runs `stage`, returns its peak over `baseKb` in KiB and its seconds.
template <class F> std::pair<long, double> measure(long baseKb, F&& stage) {
    ::malloc_trim(0);
    bench::resetPeakRss();
    const double t0 = now();
    stage();
    const double s = now() - t0;
    return {bench::procStatusKb("VmHWM:") - baseKb, s};
}

// Prints one line: the model, its nodes, the session's own data and each stage's peak (MiB,
// over the process before the model was opened) with its ratio to the data, and seconds.
int child(const std::filesystem::path& model, const std::filesystem::path& dir) {
    // Graphviz and the importer's libraries are loaded and warmed before the baseline: a tiny
    // layout first, so the baseline holds what any process that draws holds.
    LayoutEngine engine;
    {
        DrawGraph tiny;
        tiny.nodes.push_back({});
        tiny.nodes.back().key = "n1";
        tiny.nodes.back().title = "warm";
        LayoutOptions lo;
        (void)engine.layout(tiny, lo);
    }
    ::malloc_trim(0);
    const long base = rssKb();

    OpenedTrace opened;
    const auto [openPeak, openS] = measure(base, [&] { opened = openAndOptimize(model, PipelineRequest{}); });
    ::malloc_trim(0);
    const long held = rssKb() - base;

    std::size_t listing = 0;
    const auto [inspectPeak, inspectS] = measure(base, [&] {
        const LoadedGraph loaded = loadGraphFile(model);
        listing = inspectText(loaded, model.string(), false).size();
    });

    std::size_t drawn = 0;
    const auto [renderPeak, renderS] = measure(base, [&] {
        const FunctionGraph& g = *opened.finalGraph;
        DrawOptions opt;
        const int events = static_cast<int>(opened.trace->events().size());
        opt.focus = changedRegion(*opened.trace, g, 0, events);
        const DrawGraph d = drawGraph(g, opt);
        LayoutOptions lo;
        lo.budget = std::chrono::seconds(60);
        const LayoutResult r =
            exportDrawing(engine, d, dir / (model.stem().string() + ".svg"), {RenderFormat::Svg}, lo);
        drawn = r.nodes.size();
    });

    const auto [savePeak, saveS] =
        measure(base, [&] { opened.trace->save(dir / (model.stem().string() + ".passlens"), model); });

    const auto [replayPeak, replayS] = measure(base, [&] {
        const int events = static_cast<int>(opened.trace->events().size());
        const auto g = opened.trace->graphAfter(events / 2);
        drawn += g->nodeCount() * 0; // built, then dropped
    });

    auto mib = [](long kb) { return static_cast<double>(kb) / 1024.0; };
    auto ratio = [&](long kb) { return held > 0 ? static_cast<double>(kb) / static_cast<double>(held) : 0.0; };
    std::printf("%s\tsource_nodes=%zu\tfinal_nodes=%zu\tevents=%zu\tdata_mib=%.1f", model.filename().c_str(),
                opened.trace->sourceGraph()->nodeCount(), opened.finalGraph->nodeCount(), opened.trace->events().size(),
                mib(held));
    const struct {
        const char* name;
        long peak;
        double s;
    } stages[] = {{"open", openPeak, openS},
                  {"inspect", inspectPeak, inspectS},
                  {"render", renderPeak, renderS},
                  {"save", savePeak, saveS},
                  {"replay", replayPeak, replayS}};
    for (const auto& s : stages)
        std::printf("\t%s_peak_mib=%.1f\t%s_ratio=%.2f\t%s_s=%.2f", s.name, mib(s.peak), s.name, ratio(s.peak), s.name,
                    s.s);
    std::printf("\tlisting_bytes=%zu\tdrawn_nodes=%zu\n", listing, drawn);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<int> blocks{5000, 20000};
    std::vector<int> diamonds{1000};
    int width = 16;
    std::string keep, childModel, childDir;
    CLI::App app{"bench_memory: peak memory of opening, listing, drawing and saving big ONNX models (repeated "
                 "blocks, diamonds) against the session's own data"};
    app.add_option("--blocks", blocks, "Residual-block models, in blocks (5 nodes each)")
        ->delimiter(',')
        ->check(CLI::Range(1, 1000000));
    app.add_option("--diamonds", diamonds, "Diamond-chain models, in diamonds (3 nodes each)")
        ->delimiter(',')
        ->check(CLI::Range(1, 1000000));
    app.add_option("--width", width, "Feature width of every tensor ([1, W]; weights [W, W])")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    app.add_option("--keep", keep, "Write the models, drawings and sessions here and keep them");
    app.add_option("--child-model", childModel)->group("");
    app.add_option("--child-dir", childDir)->group("");
    if (const auto rc = bench::parseCommandLine(app, argc, argv)) return *rc;
    try {
        if (!childModel.empty()) return child(childModel, childDir);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_memory: %s: %s\n", childModel.c_str(), e.what());
        return 1;
    }

    const std::filesystem::path dir =
        keep.empty() ? std::filesystem::temp_directory_path() / ("bench_memory." + std::to_string(::getpid()))
                     : std::filesystem::path(keep);
    std::filesystem::create_directories(dir);
    std::vector<std::filesystem::path> models;
    for (const int b : blocks) {
        models.push_back(dir / ("blocks-" + std::to_string(b) + ".onnx"));
        writeModel(blockModel(b, width), models.back());
    }
    for (const int d : diamonds) {
        models.push_back(dir / ("diamonds-" + std::to_string(d) + ".onnx"));
        writeModel(diamondModel(d, width), models.back());
    }
    int failed = 0;
    for (const auto& model : models) {
        std::fflush(stdout);
        const std::string cmd = "/proc/" + std::to_string(::getpid()) + "/exe --child-model '" + model.string() +
                                "' --child-dir '" + dir.string() + "'";
        if (std::system(cmd.c_str()) != 0) ++failed;
    }
    if (keep.empty()) std::filesystem::remove_all(dir);
    return failed == 0 ? 0 : 1;
}
