#pragma once
// Theano 1.0.5's own optimizer tests, ported (issue 12 part 2). Each case names the Theano test
// function it comes from, builds the same graph in graph JSON, runs the same mode and asserts what
// the Theano test asserts. Modes: mode_with_gpu = the `theano` pipeline (no cuDNN: the GPU
// backend has none), mode_without_gpu = `theano` without the phases tagged `gpuarray`,
// FAST_COMPILE = `fast_compile`. Where PassLens differs on purpose, or Theano's result depends on
// something PassLens does not model, the case says so (and docs/THEANO_NOTES.md lists it).
// The helpers and the test class of the one executable tst_theano_port, whose test functions
// are defined by Theano test file in tst_theano_port*.cpp.
#include <passlens/gpu/Lifters.h>
#include <passlens/io/GraphJson.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/OpRegistry.h>
#include <passlens/kernels/Executor.h>
#include <passlens/pipeline/Pipeline.h>
#include <passlens/trace/Trace.h>

#include <QTest>

#include <cmath>

using namespace passlens;
using json = nlohmann::json;

namespace {

// A compiled function: the graph after the pipeline, as theano.function's fgraph.
struct Compiled {
    std::unique_ptr<FunctionGraph> g;
    PipelineRun run;
    std::vector<const Apply*> topo() const { return {g->toposort().begin(), g->toposort().end()}; }
};

// graph JSON with the header filled in: `body` holds "inputs", "constants", "nodes", "outputs".
inline std::string doc(const std::string& body) {
    return R"({"format": "passlens.graph", "version": 1, )" + body + "}";
}

inline Compiled compile(const std::string& body, const std::string& pipeline = "theano",
                        const std::vector<std::string>& exclude = {}, const std::vector<std::string>& include = {}) {
    LoadedGraph lg = readGraphJsonText(doc(body), "port.graph.json", {});
    Pipeline p = Pipeline::builtin(pipeline);
    for (const auto& e : exclude) p.exclude(e);
    for (const auto& i : include) p.include(i);
    Compiled c;
    c.run = p.run(*lg.graph, nullptr, true);
    c.g = std::move(lg.graph);
    return c;
}

// mode_without_gpu: FAST_RUN without the GPU phases.
inline Compiled compileCpu(const std::string& body, const std::vector<std::string>& exclude = {}) {
    std::vector<std::string> ex = exclude;
    ex.push_back("gpuarray");
    return compile(body, "theano", ex);
}

inline QString kinds(const Compiled& c) {
    QStringList k;
    for (const Apply* n : c.g->toposort()) k << QString::fromStdString(n->op().kind());
    return k.join(' ');
}
inline int count(const Compiled& c, const char* kind) {
    int n = 0;
    for (const Apply* a : c.g->toposort()) n += a->op().kind() == kind;
    return n;
}
inline std::vector<const Apply*> nodesOf(const Compiled& c, const char* kind) {
    std::vector<const Apply*> out;
    for (const Apply* a : c.g->toposort())
        if (a->op().kind() == kind) out.push_back(a);
    return out;
}

// Runs the compiled graph on the CPU executor (GPU kinds emulated).
inline std::vector<passlens::Tensor> eval(const Compiled& c, const std::vector<passlens::Tensor>& inputs) {
    Executor ex(*c.g, ExecOptions{DeviceChoice::Cpu});
    return ex.run(inputs);
}
// Pseudo-random values in [lo, lo + span), as rand() * span + lo (whole numbers for int dtypes).
inline passlens::Tensor values(DType dt, std::vector<std::int64_t> shape, std::uint32_t seed = 1, double lo = 0,
                               double span = 10) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    std::vector<double> v(static_cast<std::size_t>(n));
    std::uint32_t s = seed;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = lo + static_cast<double>(s >> 8) / double(1u << 24) * span;
        if (!isFloat(dt)) x = std::floor(x);
    }
    return passlens::Tensor::fromDoubles(dt, passlens::Shape(shape.begin(), shape.end()), v);
}
inline passlens::Tensor scalarOf(DType dt, double v) { return passlens::Tensor::scalar(dt, v); }
inline std::vector<double> asVector(const passlens::Tensor& t) {
    std::vector<double> v;
    for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(t.at(i));
    return v;
}
inline bool allClose(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-4) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::abs(a[i] - b[i]) > tol * (1 + std::abs(b[i]))) return false;
    return true;
}

} // namespace

class TestTheanoPort : public QObject {
    Q_OBJECT
private slots:
    // ------------------------------------------------------------ gpuarray/tests/test_opt.py
    void test_local_assert();
    void test_local_gpu_contiguous_gpu_contiguous();
    void test_local_gpu_contiguous();
    void test_flatten();
    void test_reduce_data();
    void test_reduce();
    void test_local_gpualloc_memset_0();
    void test_local_gpualloc_empty();
    void test_local_gpu_elemwise_careduce_data();
    void test_local_gpu_elemwise_careduce();
    void test_local_gpu_subtensor();
    void test_local_gpu_elemwise();
    void test_many_arg_elemwise_data();
    void test_many_arg_elemwise();
    void test_composite_elemwise();
    void test_batched_dot_lifter_data();
    void test_batched_dot_lifter();
    void test_no_complex();

    // ------------------------------------------------------------ gpuarray/opt.py's own code
    void test_local_cut_gpu_transfers_data();
    void test_local_cut_gpu_transfers();
    void test_cut_gpua_constant_transfers();
    void test_gemm_alpha_merge_data();
    void test_gemm_alpha_merge();
    void test_gemm_output_merge_data();
    void test_gemm_output_merge();

    // ------------------------------------------------------------ gpuarray/tests/test_basic_ops.py
    void test_transfer_cpu_gpu();
    void test_transfer_gpu_gpu();
    void test_alloc_empty();
    void test_shape();
    void test_gpu_contiguous();
    void test_gpusplit_opt();
    void test_gpujoin_gpualloc();

    // ------------------------------------------------------------ gpuarray/tests/test_nnet.py,
    // test_extra_ops.py, test_pool.py, test_blas.py: the remaining lifters
    void test_softmax_data();
    void test_softmax();
    void test_gpu_cumop_data();
    void test_gpu_cumop();
    void test_gpu_topk();
    void test_pool2d();
    void test_corrmm_conv2d_fwd();
    void test_incsub();
    void test_lifter_table_data();
    void test_lifter_table();
    void test_gemv_zeros();

    // ------------------------------------------------------------ tensor/tests/test_opt.py
    void test_local_join_1();
    void test_local_useless_split();
    void test_local_useless_reshape();
    void test_local_canonicalize_alloc();
    void test_local_merge_alloc();
    void test_useless_elemwise();
    void test_useless_elemwise_eq_neq();
    void test_constant_folding();

    // ------------------------------------------------------------ tensor/tests/test_basic.py
    void test_alloc_output();
    void test_ones_zeros();

    // ------------------------------------------------------------ make_node (issue 12 part 1)
    void makeNodePadsRanks();
    void makeNodeConvertsGpuInputs();
    void makeNodeHostAndGpuSides();
};
