// The CUDA backend against the CPU backend: every corpus model's final graph, every CUDA kernel
// on fresh random inputs with poisoned buffers, reductions, GEMM shapes, element-wise parameters,
// host-side validation, the profile of a failing run; on the emulated device also injected
// faults, the pageable fallback, profile windows and implicit transfers, staged uploads and
// several devices. Built twice: against passlens::kernels
// (ctest entry tst_exec_gpu, label gpu: QSKIPs without a device) and against the emulated
// device's passlens::kernels_emu (tst_exec_emu, label gpu-emulated).
#include "ExecTestSupport.h"

#if PASSLENS_CUDA_EMULATED
#include "cuda/emu/EmuControl.h"
#endif

using namespace passlens;
using namespace exectest;

namespace {

bool gpuTestsEnabled() { return std::getenv("PASSLENS_TEST_GPU") != nullptr; }

// The GPU checks run only in their ctest entries (tst_exec_gpu on a device, tst_exec_emu on the
// emulated device) and skip without a device.
#define NEED_CUDA()                                                                                                    \
    do {                                                                                                               \
        if (!gpuTestsEnabled())                                                                                        \
            QSKIP("GPU checks run in the ctest entries tst_exec_gpu (label gpu) and tst_exec_emu");                    \
        const DeviceInfo info_ = queryDevices();                                                                       \
        if (info_.deviceCount == 0) QSKIP(qPrintable(QString::fromStdString(info_.error)));                            \
    } while (0)

// A graph of GPU kinds whose inputs are uploaded (GpuFromHost) and whose outputs are downloaded
// (host(v)), run on the CPU backend and on CUDA, both with poisoned buffers and twice (the
// second run reuses pooled buffers and cached state).
struct GpuHarness {
    FunctionGraph g;
    std::vector<Tensor> values;
    Variable* input(const Tensor& t) { return input(t, typeOf(t)); }
    Variable* input(const Tensor& t, const Type& type) {
        values.push_back(t);
        return g.apply(Op::get("GpuFromHost"), {g.addInput(type, "in" + std::to_string(values.size() - 1))});
    }
    Variable* host(Variable* v) { return g.apply(Op::get("HostFromGpu"), {v}); }
    Variable* op(const std::string& kind, json attrs, std::vector<Variable*> ins) {
        return g.apply(Op::get(kind, std::move(attrs)), std::move(ins));
    }
    std::vector<Tensor> run(DeviceChoice d) {
        ExecOptions o{d, true};
        o.cudaSyncEachStep = d == DeviceChoice::Cuda;
        Executor ex(g, o);
        ex.run(values);
        return ex.run(values);
    }
    // outputs (downloaded with host()) on the CPU backend, then on CUDA
    std::pair<std::vector<Tensor>, std::vector<Tensor>> both(std::vector<Variable*> outs) {
        g.setOutputs(std::move(outs));
        return {run(DeviceChoice::Cpu), run(DeviceChoice::Cuda)};
    }
};

// The same bits (NaN where NaN), dtype and shape.
bool sameBits(const Tensor& a, const Tensor& b, QString* why) {
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
        *why = QString::fromStdString(a.typeStr() + " vs " + b.typeStr());
        return false;
    }
    const auto va = a.toDoubles(), vb = b.toDoubles();
    for (std::size_t i = 0; i < va.size(); ++i)
        if (!(va[i] == vb[i] || (std::isnan(va[i]) && std::isnan(vb[i])))) {
            *why = QString("element %1: %2 vs %3").arg(i).arg(va[i], 0, 'g', 17).arg(vb[i], 0, 'g', 17);
            return false;
        }
    return true;
}

#define VERIFY_SAME(a, b)                                                                                              \
    do {                                                                                                               \
        QString why_;                                                                                                  \
        QVERIFY2(sameBits(a, b, &why_), qPrintable(why_));                                                             \
    } while (0)

} // namespace

class TestExecGpu : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { (void)rng(); }

    // ------------------------------------------------------------------ CUDA (label gpu)
    void cudaMatchesCpu() {
        NEED_CUDA();
        const DeviceInfo info = queryDevices();
        // every corpus model's final graph, against the reference outputs (ch_PP-OCRv4_det_infer:
        // max_abs <= 1e-6, see corpus()) and against the CPU backend on the same graph;
        // PASSLENS_GPU_MODELS=a,b: a subset (scripts/device-check.sh carries resnet18 separately)
        std::vector<std::string> models = corpusModels();
        if (const char* sel = std::getenv("PASSLENS_GPU_MODELS")) {
            models.clear();
            for (const QString& m : QString(sel).split(',', Qt::SkipEmptyParts)) models.push_back(m.toStdString());
        }
        for (const std::string& m : models) {
            const auto file = corpusDir() / (m + ".onnx");
            const auto inputs = readTensorDir(corpusDir() / "testdata" / m / "test_data_set_0", "input");
            const auto reference = readTensorDir(corpusDir() / "testdata" / m / "test_data_set_0", "output");
            LoadedGraph loaded = loadGraphFile(file);
            Pipeline::builtin("theano").run(*loaded.graph, nullptr);
            Executor cuda(*loaded.graph, ExecOptions{DeviceChoice::Cuda});
            QVERIFY(!cuda.gpuEmulated());
            const auto outs = cuda.run(inputs);
            const CompareResult r = compareOutputs(outs, reference);
            const bool ok = m == "ch_PP-OCRv4_det_infer" ? (r.countMatches && r.maxAbs <= 1e-6) : r.within(1e-3);
            QVERIFY2(ok, qPrintable(QString("%1 on %2: max_abs %3 max_rel %4")
                                        .arg(QString::fromStdString(m), QString::fromStdString(info.name))
                                        .arg(r.maxAbs)
                                        .arg(r.maxRel)));
            const auto cpu = Executor(*loaded.graph, ExecOptions{DeviceChoice::Cpu}).run(inputs);
            const CompareResult vsCpu = compareOutputs(outs, cpu);
            QVERIFY2(
                vsCpu.within(1e-3),
                qPrintable(QString("%1: CUDA vs CPU max_rel %2").arg(QString::fromStdString(m)).arg(vsCpu.maxRel)));
        }
    }

    void cudaKernels() {
        NEED_CUDA();
        // every GPU kind on small random inputs, CUDA against the CPU backend
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2,3,8,8]"), "x");
        Variable* w = g.addInput(Type::parse("float32[4,3,3,3]"), "w");
        Variable* gx = g.apply(Op::get("GpuFromHost"), {x});
        Variable* gw = g.apply(Op::get("GpuFromHost"), {w});
        Variable* c = g.apply(
            Op::get("GpuCorrMM",
                    {{"border_mode", {1, 1}}, {"subsample", {1, 1}}, {"filter_dilation", {1, 1}}, {"num_groups", 1}}),
            {gx, gw});
        Variable* e = g.apply(
            Op::get("GpuElemwise", {{"scalar", "composite"}, {"expr", "relu(add(i0,i0))"}, {"dtype", "float32"}}), {c});
        Variable* p = g.apply(
            Op::get("GpuPool",
                    {{"mode", "max"}, {"ws", {2, 2}}, {"stride", {2, 2}}, {"pad", {0, 0}}, {"ignore_border", true}}),
            {e});
        Variable* r =
            g.apply(Op::get("GpuCAReduceCuda", {{"scalar", "add"}, {"axis", {2, 3}}, {"pre_scalar_op", "sqr"}}), {p});
        Variable* s = g.apply(Op::get("GpuSoftmax", {{"axis", 1}}), {r});
        g.setOutputs({g.apply(Op::get("HostFromGpu"), {s}), g.apply(Op::get("HostFromGpu"), {p})});
        std::vector<Tensor> in = {randn(DType::Float32, {2, 3, 8, 8}), randn(DType::Float32, {4, 3, 3, 3})};
        const auto cpu = Executor(g, ExecOptions{DeviceChoice::Cpu}).run(in);
        Executor cu(g, ExecOptions{DeviceChoice::Cuda});
        const auto gpu = cu.run(in);
        QVERIFY(compareOutputs(gpu, cpu).within(1e-4));
        ProfileReport rep = profileExecutor(cu, in, ProfileOptions{2, 5}, "final");
        QVERIFY(rep.error.empty());
        QVERIFY(QString::fromStdString(rep.device).startsWith("cuda:0"));
        QCOMPARE(rep.transfers.size(), std::size_t(4));
    }

    // Every CUDA kernel against the CPU backend on fresh random inputs with poisoned buffers,
    // including 0-size and broadcasting shapes.
    void cudaKernelsEach() {
        NEED_CUDA();
        GpuHarness h;
        Variable* a = h.input(randn(DType::Float32, {3, 4, 5}));
        Variable* b = h.input(randn(DType::Float32, {1, 4, 1}));
        Variable* z = h.input(randn(DType::Float32, {0, 4, 5}));
        Variable* d = h.input(randn(DType::Float64, {3, 4, 5}));
        Variable* n = h.input(ints(DType::Int32, {3, 1, 5}, std::vector<double>(15, 3)));
        auto comp = [&](const std::string& expr, std::vector<Variable*> ins, const std::string& dtype) {
            return h.op("GpuElemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", dtype}}, std::move(ins));
        };
        std::vector<Variable*> outs = {
            comp("mul(add(i0,i1),exp(i1))", {a, b}, "float32"), // broadcasting
            comp("add(i0,i1)", {z, b}, "float32"),              // 0-size
            comp("true_div(i0,i1)", {d, n}, "float64"),         // double mode, int input
            comp("int_div(i0,i0)", {n}, "int32"),               // integer mode
            h.op("GpuDimShuffle", {{"order", {2, 0, 1}}}, {a}), // strided gather
            h.op("GpuReshape", {{"ndim", 2}}, {a, h.g.addConstant(ints(DType::Int64, {2}, {-1, 10}).toTensorData())}),
            h.op("GpuSubtensor", {{"idx", json::array({json{{"start", 1}}, json{{"step", -2}}})}}, {a}),
            h.op("GpuIncSubtensor", {{"idx", json::array({json{{"start", 1}}})}}, {a, b}),
            h.op("GpuIncSubtensor", {{"idx", json::array({0})}, {"set_instead_of_inc", true}},
                 {d, h.input(randn(DType::Float32, {4, 1}))}), // float32 into float64
            h.op("GpuAdvancedSubtensor1", json::object(),
                 {a, h.g.addConstant(ints(DType::Int64, {4}, {2, -3, 0, 2}).toTensorData())}),
            h.op("GpuJoin", {{"axis", 0}}, {a, z, a}),
            h.op("GpuAlloc", json::object(),
                 {b, h.g.addConstant(ints(DType::Int64, {}, {2}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {3}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {4}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {6}).toTensorData())}),
            h.op("GpuCAReduceCuda", {{"scalar", "add"}, {"axis", {0, 2}}}, {a}),
            h.op("GpuCAReduceCuda", {{"scalar", "maximum"}, {"axis", {1}}, {"pre_scalar_op", "abs"}}, {d}),
            h.op("GpuCAReduceCuda", {{"scalar", "mul"}, {"axis", nullptr}}, {n}),
            h.op("GpuCAReduceCuda", {{"scalar", "add"}, {"axis", {1}}}, {z}),
            h.op("GpuLogSoftmax", {{"axis", -1}}, {a}),
            h.op("GpuCumOp", {{"axis", 1}, {"mode", "add"}}, {a}),
            h.op("GpuCumOp", {{"axis", nullptr}, {"mode", "mul"}}, {d}),
            h.op("GpuCumOp", {{"axis", 0}, {"mode", "add"}},
                 {h.input(ints(DType::Int64, {3, 2}, {1, -2, 3, 4, -5, 6}))}),
            h.op("GpuSoftmax", {{"axis", 1}}, {d}),
            h.op("GpuContiguous", json::object(), {h.op("GpuDimShuffle", {{"order", {1, 0, 2}}}, {a})}),
            h.op("GpuIncSubtensor", {{"idx", json::array({json{{"start", 1}}})}},
                 {n, h.input(ints(DType::Int32, {5}, {1, 2, 3, 4, 5}))}), // int32 add
            h.op("GpuAllocEmpty", {{"dtype", "float32"}},
                 {h.g.addConstant(ints(DType::Int64, {}, {2}).toTensorData()),
                  h.g.addConstant(ints(DType::Int64, {}, {3}).toTensorData())}),
            h.op("GpuAlloc", {{"memset_0", true}},
                 {h.input(ints(DType::Float32, {}, {0})), h.g.addConstant(ints(DType::Int64, {}, {4}).toTensorData())}),
        };
        Apply* sp = h.g.makeApply(Op::get("GpuSplit", {{"axis", 2}, {"n_splits", 3}}),
                                  {a, h.g.addConstant(ints(DType::Int64, {3}, {2, 0, 3}).toTensorData())});
        for (int k = 0; k < 3; ++k) outs.push_back(sp->output(k));
        // BLAS
        Variable* m1 = h.input(randn(DType::Float32, {3, 4}));
        Variable* m2 = h.input(randn(DType::Float32, {4, 2}));
        Variable* zz = h.input(randn(DType::Float32, {3, 2}));
        Variable* vv = h.input(randn(DType::Float32, {4}));
        Variable* v3 = h.input(randn(DType::Float32, {3}));
        Variable* alpha = h.g.addConstant(ints(DType::Float32, {}, {0.5}).toTensorData());
        Variable* beta = h.g.addConstant(ints(DType::Float32, {}, {-2}).toTensorData());
        outs.push_back(h.op("GpuDot22", json::object(), {m1, m2}));
        outs.push_back(h.op("GpuGemm", json::object(), {zz, alpha, m1, m2, beta}));
        outs.push_back(h.op("GpuGemv", json::object(), {v3, alpha, m1, vv, beta}));
        outs.push_back(h.op("GpuGemmBatch", json::object(),
                            {h.input(randn(DType::Float64, {2, 3, 4})), h.input(randn(DType::Float64, {2, 4, 5}))}));
        // convolution (grouped, strided, dilated; depthwise), pooling, batch norm
        Variable* img = h.input(randn(DType::Float32, {2, 4, 9, 8}));
        auto conv = [&](Variable* w, json pad, int stride, int dil, int groups) {
            return h.op("GpuCorrMM",
                        {{"border_mode", pad},
                         {"subsample", {stride, stride}},
                         {"filter_dilation", {dil, dil}},
                         {"num_groups", groups}},
                        {img, w});
        };
        outs.push_back(conv(h.input(randn(DType::Float32, {6, 2, 3, 3})), {1, 2}, 2, 1, 2));
        outs.push_back(conv(h.input(randn(DType::Float32, {8, 1, 3, 3})), {1, 1}, 1, 2, 4));
        outs.push_back(conv(h.input(randn(DType::Float32, {3, 4, 1, 1})), "valid", 1, 1, 1));
        outs.push_back(h.op(
            "GpuPool",
            {{"mode", "average_exc_pad"}, {"ws", {3, 3}}, {"stride", {2, 2}}, {"pad", {1, 1}}, {"ignore_border", true}},
            {img}));
        outs.push_back(h.op(
            "GpuPool", {{"mode", "max"}, {"ws", {3, 3}}, {"stride", {2, 2}}, {"pad", {0, 0}}, {"ignore_border", false}},
            {img}));
        outs.push_back(h.op(
            "GpuPool", {{"mode", "sum"}, {"ws", {2, 3}}, {"stride", {1, 2}}, {"pad", {0, 0}}, {"ignore_border", true}},
            {img}));
        outs.push_back(h.op(
            "GpuPool",
            {{"mode", "average_inc_pad"}, {"ws", {3, 3}}, {"stride", {3, 3}}, {"pad", {1, 1}}, {"ignore_border", true}},
            {img}));
        Variable* scale = h.input(randn(DType::Float32, {4}));
        Variable* var = h.input(randn(DType::Float32, {4}, 0.5, 2));
        outs.push_back(h.op("GpuDnnBatchNormInference", {{"epsilon", 1e-3}}, {img, scale, scale, scale, var}));
        std::vector<Variable*> hosted;
        for (Variable* v : outs) hosted.push_back(h.host(v));
        const auto [cpu, gpu] = h.both(hosted);
        QCOMPARE(gpu.size(), cpu.size());
        for (std::size_t i = 0; i < cpu.size(); ++i) {
            const CompareResult r = compareOutputs({gpu[i]}, {cpu[i]});
            QVERIFY2(
                gpu[i].dtype() == cpu[i].dtype() && gpu[i].shape() == cpu[i].shape() && r.within(1e-5),
                qPrintable(QString("output %1: %2 vs %3, max_rel %4")
                               .arg(i)
                               .arg(QString::fromStdString(gpu[i].typeStr()), QString::fromStdString(cpu[i].typeStr()))
                               .arg(r.maxRel)));
        }
    }

    // Reductions as the CPU: NaN propagates through max / min, integer identities, the output's
    // accumulator, refusals (empty max axis, float16, unknown pre_scalar_op).
    void cudaReductions() {
        NEED_CUDA();
        GpuHarness h;
        Variable* f = h.input(ints(DType::Float32, {3, 4}, {1, 2, 3, 4, 5, NAN, -7, 8, -1, -2, -3, -4}));
        Variable* i = h.input(ints(DType::Int64, {2, 3}, {-5, -9, -1, 7, 3, 5}));
        Tensor ut = Tensor::empty(DType::UInt64, {3});
        ut.data<std::uint64_t>()[0] = 1;
        ut.data<std::uint64_t>()[1] = (std::uint64_t(1) << 63) + 5; // negative as int64
        ut.data<std::uint64_t>()[2] = 4;
        Variable* u = h.input(ut);
        Variable* e = h.input(ints(DType::Float32, {3, 0}, {}));
        auto red = [&](const std::string& s, json axis, Variable* x) {
            return h.host(h.op("GpuCAReduceCuda", {{"scalar", s}, {"axis", axis}}, {x}));
        };
        const auto [cpu, gpu] = h.both({red("maximum", {1}, f), red("minimum", {1}, f), red("maximum", nullptr, f),
                                        red("minimum", {1}, i), red("maximum", {0}, i), red("maximum", nullptr, u),
                                        red("add", {1}, e), red("mul", {1}, e), red("maximum", {0}, e)});
        for (std::size_t k = 0; k < cpu.size(); ++k) VERIFY_SAME(gpu[k], cpu[k]);
        QVERIFY(std::isnan(gpu[0].at(1)) && std::isnan(gpu[1].at(1)) && std::isnan(gpu[2].at(0)));
        QCOMPARE(gpu[0].at(2), -1.0);
        QCOMPARE(gpu[3].intAt(0), -9);
        QCOMPARE(gpu[5].data<std::uint64_t>()[0], (std::uint64_t(1) << 63) + 5);
        QCOMPARE(gpu[6].numel(), 3);
        QCOMPARE(gpu[6].at(0), 0.0);
        QCOMPARE(gpu[7].at(2), 1.0);
        QCOMPARE(gpu[8].numel(), 0);
        // refusals
        auto refused = [&](const Tensor& x, json attrs) {
            GpuHarness r;
            Variable* v = r.input(x);
            r.g.setOutputs({r.host(r.op("GpuCAReduceCuda", std::move(attrs), {v}))});
            return errorOf([&] { (void)r.run(DeviceChoice::Cuda); });
        };
        const QString empty = refused(ints(DType::Float32, {3, 0}, {}), {{"scalar", "minimum"}, {"axis", {1}}});
        QVERIFY2(empty.contains("GpuCAReduceCuda") &&
                     empty.contains("cannot take the minimum of an empty axis of float32[3,0]"),
                 qPrintable(empty));
        const QString pre =
            refused(randn(DType::Float32, {2, 2}), {{"scalar", "add"}, {"axis", {1}}, {"pre_scalar_op", "exp"}});
        QVERIFY2(pre.contains("unsupported pre_scalar_op 'exp'"), qPrintable(pre));
        const QString half = refused(Tensor::zeros(DType::Float16, {2, 2}), {{"scalar", "add"}, {"axis", {1}}});
        QVERIFY2(half.contains("dtype float16 is not supported by the CUDA backend"), qPrintable(half));
    }

    // GpuTopKOp as the CPU's TopKOp, bit for bit: every dtype it takes, ties (values 0..4), NaN,
    // -0 and 0, k = 0, k = the axis length, negative k, lines longer than a block, idx_dtype
    // int32 and one output only; then k beyond the axis refused.
    void cudaTopK() {
        NEED_CUDA();
        GpuHarness h;
        auto topk = [&](Variable* x, std::int64_t k, std::int64_t axis, json extra = json::object()) {
            extra["axis"] = axis;
            Variable* kv = h.g.addConstant(ints(DType::Int64, {}, {static_cast<double>(k)}).toTensorData());
            std::vector<Variable*> outs;
            for (Variable* o : h.g.makeApply(Op::get("GpuTopKOp", extra), {x, kv})->outputs())
                outs.push_back(h.host(o));
            return outs;
        };
        std::vector<Variable*> outs;
        auto add = [&](const std::vector<Variable*>& v) { outs.insert(outs.end(), v.begin(), v.end()); };
        for (DType dt : {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32, DType::UInt32,
                         DType::Int64, DType::UInt64, DType::Float32, DType::Float64}) {
            Variable* x = h.input(randn(dt, {3, 9, 4}, 0, 4));
            add(topk(x, 4, 1));
            add(topk(x, -4, 1));
            add(topk(x, 3, 0));
            add(topk(x, 9, -2));
            add(topk(x, 0, 2));
        }
        Variable* special =
            h.input(ints(DType::Float32, {2, 6}, {3, NAN, 1, -0.0, 0.0, NAN, -INFINITY, 2, INFINITY, 2, NAN, 0}));
        for (std::int64_t k : {6, -6, 2, -2}) add(topk(special, k, 1));
        Variable* longLines = h.input(randn(DType::Float32, {2, 600, 3}, 0, 50)); // ties, 600 > one block
        add(topk(longLines, 37, 1));
        add(topk(longLines, -600, 1));
        add(topk(h.input(randn(DType::Float64, {5, 6})), -3, 0, {{"idx_dtype", "int32"}, {"return_values", false}}));
        add(topk(h.input(randn(DType::Int32, {5, 6}, -3, 3)), 2, 1, {{"return_indices", false}}));
        const auto [cpu, gpu] = h.both(outs);
        QCOMPARE(gpu.size(), cpu.size());
        for (std::size_t i = 0; i < cpu.size(); ++i) {
            QString why;
            QVERIFY2(sameBits(gpu[i], cpu[i], &why), qPrintable(QString("output %1: %2").arg(i).arg(why)));
        }
        const std::size_t sp = 10 * 10; // the special line's outputs: k = 6 values, indices, ...
        QCOMPARE(gpu[sp + 1].toDoubles(), (std::vector<double>{1, 5, 0, 2, 3, 4, 4, 2, 1, 3, 5, 0}));
        QCOMPARE(gpu[sp + 3].toDoubles(), (std::vector<double>{3, 4, 2, 0, 1, 5, 0, 5, 1, 3, 2, 4}));
        QVERIFY(std::signbit(gpu[sp + 2].at(0)) && !std::signbit(gpu[sp + 2].at(1)));
        QCOMPARE(gpu[outs.size() - 2].dtype(), DType::Int32);
        // refusal at run time (k a graph input: the type rule refuses a known k beyond the axis)
        GpuHarness r;
        Variable* rx = r.input(randn(DType::Float32, {2, 3}));
        r.values.push_back(ints(DType::Int64, {}, {-4}));
        Apply* big =
            r.g.makeApply(Op::get("GpuTopKOp", {{"axis", 1}}), {rx, r.g.addInput(Type::parse("int64[]"), "k")});
        r.g.setOutputs({r.host(big->output(0))});
        const QString e = errorOf([&] { (void)r.run(DeviceChoice::Cuda); });
        QVERIFY2(e.contains("k -4 is larger than axis 1 of float32[2,3]"), qPrintable(e));
    }

    // GpuMaxAndArgmax as the CPU (the same bits): every dtype, NaN (the first NaN wins), ties (the
    // first index), one axis, several axes (row-major over them), a negative axis, every axis,
    // 0-d and empty results; an empty reduction refused with the CPU's message.
    void cudaMaxAndArgmax() {
        NEED_CUDA();
        GpuHarness h;
        const double nan = std::nan("");
        std::vector<Variable*> outs;
        auto both = [&](Variable* x, json axis) {
            Apply* a = h.g.makeApply(Op::get("GpuMaxAndArgmax", {{"axis", std::move(axis)}}), {x});
            outs.push_back(h.host(a->output(0)));
            outs.push_back(h.host(a->output(1)));
        };
        Variable* f = h.input(ints(DType::Float32, {3, 4}, {1, 5, 5, -3, nan, 2, nan, 9, -1, -1, -1, -1}));
        both(f, {1});
        both(f, {0});
        both(f, nullptr);
        both(h.input(randn(DType::Float64, {2, 3, 5, 2})), {1, 3});
        both(h.input(randn(DType::Float64, {2, 3, 5, 2})), {-2});
        for (DType d : {DType::Bool, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8, DType::UInt16,
                        DType::UInt32})
            both(h.input(randn(d, {4, 6}, d == DType::Bool ? 0 : -3, 3)), {0});
        Tensor u = Tensor::empty(DType::UInt64, {3});
        u.data<std::uint64_t>()[0] = 1;
        u.data<std::uint64_t>()[1] = (std::uint64_t(1) << 63) + 5; // negative as int64
        u.data<std::uint64_t>()[2] = 4;
        both(h.input(u), {0});
        both(h.input(ints(DType::Int64, {}, {7})), nullptr);
        both(h.input(ints(DType::Float32, {0, 3}, {})), {1});
        const auto [cpu, gpu] = h.both(outs);
        QCOMPARE(gpu.size(), cpu.size());
        for (std::size_t k = 0; k < cpu.size(); ++k) VERIFY_SAME(gpu[k], cpu[k]);
        QCOMPARE(gpu[1].intAt(0), 1); // tie 5, 5: the first
        QCOMPARE(gpu[1].intAt(1), 0); // NaN at 0
        QVERIFY(std::isnan(gpu[0].at(1)));
        QCOMPARE(gpu[3].intAt(0), 1); // column 0: NaN below 1
        QCOMPARE(gpu[5].intAt(0), 4); // the first NaN of the whole tensor
        QCOMPARE(gpu[5].dtype(), DType::Int64);
        QCOMPARE(gpu[27].intAt(0), 1); // uint64 2^63 + 5 is the max
        QCOMPARE(gpu[29].intAt(0), 0); // 0-d: index 0
        QCOMPARE(gpu[31].shape(), (Shape{0}));
        GpuHarness r;
        Variable* z = r.input(ints(DType::Float32, {2, 0}, {}));
        r.g.setOutputs({r.host(r.g.makeApply(Op::get("GpuMaxAndArgmax", {{"axis", {1}}}), {z})->output(1))});
        const QString cpuWhy = errorOf([&] { (void)r.run(DeviceChoice::Cpu); });
        const QString gpuWhy = errorOf([&] { (void)r.run(DeviceChoice::Cuda); });
        QVERIFY2(gpuWhy.contains("GpuMaxAndArgmax") &&
                     gpuWhy.contains("cannot take the argmax of an empty axis of float32[2,0]"),
                 qPrintable(gpuWhy));
        QVERIFY2(cpuWhy.contains("cannot take the argmax of an empty axis of float32[2,0]"), qPrintable(cpuWhy));
    }

    // GEMMs as the CPU: batch 0, K = 0, mixed dtypes (read in the output dtype), broadcast batches.
    void cudaGemmShapes() {
        NEED_CUDA();
        GpuHarness h;
        Variable* zb = h.op("GpuGemmBatch", json::object(),
                            {h.input(randn(DType::Float32, {0, 2, 3})), h.input(randn(DType::Float32, {0, 3, 4}))});
        Variable* k0 = h.op("GpuDot22", json::object(),
                            {h.input(randn(DType::Float32, {2, 0})), h.input(randn(DType::Float32, {0, 3}))});
        Variable* half = h.g.addConstant(ints(DType::Float64, {}, {0.5}).toTensorData());
        Variable* gk0 = h.op("GpuGemm", json::object(),
                             {h.input(randn(DType::Float64, {2, 3})), half, h.input(randn(DType::Float64, {2, 0})),
                              h.input(randn(DType::Float64, {0, 3})), half});
        // mixed: float64 z with float32 x (read as float64), float32 z with a float64 matrix
        Variable* mixed = h.op("GpuGemm", json::object(),
                               {h.input(randn(DType::Float64, {2, 3})), half, h.input(randn(DType::Float32, {2, 4})),
                                h.input(randn(DType::Float64, {4, 3})), half});
        Variable* mixedv = h.op("GpuGemv", json::object(),
                                {h.input(randn(DType::Float32, {3})), half, h.input(randn(DType::Float64, {3, 4})),
                                 h.input(randn(DType::Float32, {4})), half});
        // broadcast batches: one shared operand (stride 0) and a mixed broadcast (one GEMM per batch)
        Variable* bc1 = h.op("GpuGemmBatch", json::object(),
                             {h.input(randn(DType::Float32, {1, 2, 3}), Type::parse("float32[?,2,3]")),
                              h.input(randn(DType::Float32, {4, 3, 5}), Type::parse("float32[?,3,5]"))});
        Variable* bc2 = h.op("GpuGemmBatch", json::object(),
                             {h.input(randn(DType::Float32, {2, 1, 2, 3}), Type::parse("float32[?,?,2,3]")),
                              h.input(randn(DType::Float32, {1, 3, 3, 4}), Type::parse("float32[?,?,3,4]"))});
        const auto [cpu, gpu] =
            h.both({h.host(zb), h.host(k0), h.host(gk0), h.host(mixed), h.host(mixedv), h.host(bc1), h.host(bc2)});
        QCOMPARE(gpu[0].shape(), (Shape{0, 2, 4}));
        VERIFY_SAME(gpu[1], cpu[1]); // zeros
        QCOMPARE(gpu[1].at(5), 0.0);
        VERIFY_SAME(gpu[2], cpu[2]); // 0.5 * z
        QCOMPARE(gpu[5].shape(), (Shape{4, 2, 5}));
        QCOMPARE(gpu[6].shape(), (Shape{2, 3, 2, 4}));
        for (std::size_t k = 3; k < cpu.size(); ++k) {
            QCOMPARE(gpu[k].dtype(), cpu[k].dtype());
            QVERIFY2(compareOutputs({gpu[k]}, {cpu[k]}).within(1e-6), qPrintable(QString("output %1").arg(k)));
        }
    }

    // Element-wise parameters in double, as the CPU: clip bounds of float64 and large int64
    // values, leaky_relu and hard_sigmoid parameters.
    void cudaElemwiseParameters() {
        NEED_CUDA();
        GpuHarness h;
        Variable* d = h.input(ints(DType::Float64, {6}, {0.1, 0.1000000001, 0.7, 0.69999999999, -1, 2}));
        Variable* i = h.input(ints(DType::Int64, {3}, {2199023255552.0, -5, 7}));
        auto comp = [&](const std::string& expr, Variable* x, const std::string& dtype) {
            return h.host(h.op("GpuElemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", dtype}}, {x}));
        };
        const auto [cpu, gpu] =
            h.both({comp("clip{0.1,0.7}(i0)", d, "float64"), comp("clip{-3,1099511627777}(i0)", i, "int64"),
                    comp("leaky_relu{0.1}(i0)", d, "float64"), comp("hard_sigmoid{0.3,0.1}(i0)", d, "float64")});
        for (std::size_t k = 0; k < cpu.size(); ++k) VERIFY_SAME(gpu[k], cpu[k]);
        QCOMPARE(gpu[0].at(0), 0.1);
        QCOMPARE(gpu[0].at(1), 0.1000000001);
        QCOMPARE(gpu[0].at(3), 0.69999999999);
        QCOMPARE(gpu[1].intAt(0), 1099511627777);
        QCOMPARE(gpu[1].intAt(1), -3);
        QCOMPARE(gpu[2].at(4), -1 * 0.1);
    }

    // GpuElemwise on uint64 values at and above 2^63 (NumPy's uint64 semantics, as the CPU
    // engine: computesInUInt64): floor division, modulo, comparisons, maximum /
    // minimum, abs / sgn, an integer clip, a fused composite, and float64 at and above 2^63 cast
    // to uint64; the same bytes as the CPU backend and the values written out below.
    void cudaUInt64Elemwise() {
        NEED_CUDA();
        const std::uint64_t p63 = std::uint64_t(1) << 63;
        const auto u64 = [](std::vector<std::uint64_t> v) {
            return Tensor::fromBytes(DType::UInt64, {static_cast<std::int64_t>(v.size())}, v.data());
        };
        GpuHarness h;
        Variable* x = h.input(u64({~0ull, p63 + 6, p63, 10, p63 + 5}));
        Variable* y = h.input(u64({2, 3, p63 + 1, p63, 1ull << 62}));
        Variable* f = h.input(ints(DType::Float64, {3}, {1e19, 0x1p63, 7.5}));
        auto el = [&](const std::string& scalar, std::vector<Variable*> ins) {
            return h.host(h.op("GpuElemwise", {{"scalar", scalar}}, std::move(ins)));
        };
        auto comp = [&](const std::string& expr, std::vector<Variable*> ins, const std::string& dtype) {
            return h.host(
                h.op("GpuElemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", dtype}}, std::move(ins)));
        };
        const auto [cpu, gpu] = h.both(
            {el("int_div", {x, y}), el("mod", {x, y}), el("gt", {x, y}), el("lt", {x, y}), el("maximum", {x, y}),
             el("minimum", {x, y}), el("abs", {x}), el("sgn", {x}), comp("clip{3,1000000000}(i0)", {x}, "uint64"),
             comp("int_div(maximum(i0,i1),i1)", {x, y}, "uint64"), comp("cast{uint64}(i0)", {f}, "uint64")});
        const auto bytes = [](const Tensor& t) {
            return std::string(static_cast<const char*>(t.rawData()),
                               static_cast<std::size_t>(t.numel()) * dtypeSize(t.dtype()));
        };
        const auto bits = [](const Tensor& t) {
            std::vector<std::uint64_t> v;
            for (std::int64_t i = 0; i < t.numel(); ++i)
                v.push_back(t.dtype() == DType::Bool ? t.data<std::uint8_t>()[i] : t.data<std::uint64_t>()[i]);
            return v;
        };
        const std::vector<std::vector<std::uint64_t>> want = {
            {p63 - 1, 3074457345618258604ull, 0, 0, 2},
            {1, 2, p63, 10, 5},
            {1, 1, 0, 0, 1},
            {0, 0, 1, 1, 0},
            {~0ull, p63 + 6, p63 + 1, p63, p63 + 5},
            {2, 3, p63, 10, 1ull << 62},
            {~0ull, p63 + 6, p63, 10, p63 + 5},
            {1, 1, 1, 1, 1},
            {1000000000, 1000000000, 1000000000, 10, 1000000000},
            {p63 - 1, 3074457345618258604ull, 1, 1, 2},
            {10000000000000000000ull, p63, 7},
        };
        for (std::size_t k = 0; k < cpu.size(); ++k) {
            QVERIFY2(bytes(gpu[k]) == bytes(cpu[k]), qPrintable(QString("output %1: CUDA and CPU differ").arg(k)));
            QVERIFY2(bits(gpu[k]) == want[k], qPrintable(QString("output %1").arg(k)));
        }
    }

    // Host-side validation as on the CPU: stride or dilation 0, a kernel larger than the padded
    // input, AdvancedSubtensor1 of a 0-d tensor: a message naming the node, no crash.
    void cudaValidation() {
        NEED_CUDA();
        // (a zero stride is refused when the node is made; the kernel refuses it too)
        auto convError = [&](Shape xs, Shape ws, json pad, json sub, json dil) {
            return errorOf([&] {
                GpuHarness h;
                Variable* x = h.input(randn(DType::Float32, xs));
                Variable* w = h.input(randn(DType::Float32, ws));
                h.g.setOutputs({h.host(h.op(
                    "GpuCorrMM",
                    {{"border_mode", pad}, {"subsample", sub}, {"filter_dilation", dil}, {"num_groups", 1}}, {x, w}))});
                (void)h.run(DeviceChoice::Cuda);
            });
        };
        const QString st = convError({1, 1, 5, 5}, {1, 1, 3, 3}, "valid", {0, 1}, {1, 1});
        QVERIFY2(st.contains("GpuCorrMM") && st.contains("must be >= 1"), qPrintable(st));
        const QString di = convError({1, 1, 5, 5}, {1, 1, 3, 3}, "valid", {1, 1}, {1, 0});
        QVERIFY2(di.contains("GpuCorrMM") && di.contains("must be >= 1"), qPrintable(di));
        const QString big = convError({1, 1, 2, 2}, {1, 1, 3, 3}, "valid", {2, 2}, {1, 1});
        QVERIFY2(big.contains("is larger than the padded input float32[1,1,2,2]"), qPrintable(big));
        GpuHarness h;
        Variable* x = h.input(ints(DType::Float32, {}, {3}), Type::parse("float32[*]"));
        h.g.setOutputs({h.host(h.op("GpuAdvancedSubtensor1", json::object(),
                                    {x, h.g.addConstant(ints(DType::Int64, {1}, {0}).toTensorData())}))});
        const QString sc = errorOf([&] { (void)h.run(DeviceChoice::Cuda); });
        QVERIFY2(sc.contains("GpuAdvancedSubtensor1") && sc.contains("cannot index a scalar"), qPrintable(sc));
    }

    // A profile whose run fails at a later node keeps the event times of the CUDA steps that
    // completed (they read 0 us before) and leaves the failing node and those after it n/a.
    void cudaProfileAfterFailure() {
        NEED_CUDA();
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[256,64]"), "x");
        Variable* idx = g.addInput(Type::parse("int64[2]"), "idx");
        Variable* e = g.apply(Op::get("GpuElemwise", {{"scalar", "exp"}}), {g.apply(Op::get("GpuFromHost"), {x})});
        Variable* sel = g.apply(Op::get("GpuAdvancedSubtensor1"), {e, idx});
        g.setOutputs({g.apply(Op::get("HostFromGpu"), {sel})});
        Executor ex(g, ExecOptions{DeviceChoice::Cuda});
        const ProfileReport rep = profileExecutor(
            ex, {randn(DType::Float32, {256, 64}), ints(DType::Int64, {2}, {1, 300})}, ProfileOptions{1, 2}, "final");
        QVERIFY2(QString::fromStdString(rep.error).contains("index 300 out of bounds"), rep.error.c_str());
        bool sawExp = false, sawSel = false;
        for (const ProfileNode& n : rep.nodes) {
            if (n.kind == "GpuElemwise") {
                sawExp = true;
                QVERIFY2(n.timeUs && *n.timeUs > 0, "the completed CUDA step has its event time");
            }
            if (n.kind == "GpuAdvancedSubtensor1" || n.kind == "HostFromGpu") {
                sawSel = sawSel || n.kind == "GpuAdvancedSubtensor1";
                QVERIFY(!n.timeUs);
            }
        }
        QVERIFY(sawExp && sawSel);
    }

#if PASSLENS_CUDA_EMULATED
    // Emulated device only (faults are injected): a kernel fault is reported against the node
    // that launched it when steps are synchronised (PASSLENS_CUDA_SYNC=1), the executor's device
    // buffers are then released without terminating the process, and out of device memory names
    // the node and the bytes.
    void cudaFaults() {
        NEED_CUDA();
        auto graph = [](GpuHarness& h) {
            Variable* x = h.input(randn(DType::Float32, {64}));
            Variable* e = h.op("GpuElemwise", {{"scalar", "exp"}}, {x});
            Variable* n = h.op("GpuElemwise", {{"scalar", "neg"}}, {e});
            h.g.setOutputs({h.host(h.op("GpuElemwise", {{"scalar", "abs"}}, {n}))});
        };
        {
            GpuHarness h;
            graph(h);
            ExecOptions o{DeviceChoice::Cuda, true};
            o.cudaSyncEachStep = true;
            QString msg;
            {
                Executor ex(h.g, o);
                cuda::emu::faultKernel(1); // the second kernel: neg
                msg = errorOf([&] { (void)ex.run(h.values); });
            } // the executor's buffers are freed after the fault: no exception leaves a destructor
            QVERIFY2(msg.contains("GpuElemwise{neg}") && msg.contains("cudaErrorIllegalAddress"), qPrintable(msg));
            QVERIFY(QString::fromStdString(cuda::emu::lastFault()).contains("injected fault in kernel elemKernel"));
            cuda::emu::reset();
        }
        {
            GpuHarness h;
            graph(h);
            Executor ex(h.g, ExecOptions{DeviceChoice::Cuda, true});
            cuda::emu::failAllocation(1); // the upload's buffer, then exp's output
            const QString msg = errorOf([&] { (void)ex.run(h.values); });
            cuda::emu::reset();
            QVERIFY2(msg.contains("GpuElemwise{exp}") &&
                         msg.contains("out of device memory: cannot allocate 256 bytes"),
                     qPrintable(msg));
            const auto outs = ex.run(h.values); // the same executor runs once memory is back
            QCOMPARE(outs[0].numel(), 64);
        }
        {
            // a GPU input is uploaded when the run binds it: out of device memory names the input
            FunctionGraph g;
            Variable* x = g.addInput(Type::parse("float32[64]@gpu"), "xg");
            g.setOutputs(
                {g.apply(Op::get("HostFromGpu"), {g.apply(Op::get("GpuElemwise", {{"scalar", "exp"}}), {x})})});
            Executor ex(g, ExecOptions{DeviceChoice::Cuda, true});
            cuda::emu::failAllocation(0);
            const QString msg = errorOf([&] { (void)ex.run({randn(DType::Float32, {64})}); });
            cuda::emu::reset();
            QVERIFY2(msg.startsWith("input 0 'xg': ") &&
                         msg.contains("out of device memory: cannot allocate 256 bytes"),
                     qPrintable(msg));
            QCOMPARE(ex.run({randn(DType::Float32, {64})})[0].numel(), 64);
        }
    }

    // Without page-locked memory (injected), host buffers fall back to pageable memory, and
    // those fallbacks are reused by later runs instead of growing the pool run after run.
    void cudaPageableFallbackReused() {
        NEED_CUDA();
        GpuHarness h;
        Variable* x = h.input(randn(DType::Float32, {1000}));
        h.g.setOutputs({h.host(h.op("GpuElemwise", {{"scalar", "exp"}}, {x}))});
        Executor ex(h.g, ExecOptions{DeviceChoice::Cuda});
        cuda::emu::failPinnedAllocation(true);
        const auto first = ex.run(h.values);
        const double want = std::exp(h.values[0].at(7));
        QCOMPARE(first[0].at(7), static_cast<double>(static_cast<float>(want)));
        QVERIFY(!first[0].storage()->pinned());
        (void)ex.run(h.values); // `first` is still held: this run's output is a second buffer
        const std::size_t footprint = ex.context().pool->peakFootprintBytes();
        for (int i = 0; i < 4; ++i) (void)ex.run(h.values);
        const std::size_t after = ex.context().pool->peakFootprintBytes();
        cuda::emu::reset();
        QCOMPARE(after, footprint);
    }

    // The profile of a CUDA run. A CPU node's device input is downloaded before it: that copy is
    // listed as an implicit transfer of the node with its bytes, apart from the transfer nodes.
    // Each CUDA node's time covers only its device work: in the call trace of the first (pool
    // missing) timed run, no host work (cudaMalloc, cudaMallocHost, a wait, cublasCreate) falls
    // between the two event records of a timing window, and every queued operation is inside one.
    void cudaProfileWindows() {
        NEED_CUDA();
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[16,8]"), "x");
        Variable* w = g.addInput(Type::parse("float32[8,4]"), "w");
        Variable* gx = g.apply(Op::get("GpuFromHost"), {x});
        Variable* gw = g.apply(Op::get("GpuFromHost"), {w});
        Variable* e = g.apply(Op::get("GpuElemwise", {{"scalar", "exp"}}), {gx});
        Variable* d = g.apply(Op::get("GpuDot22"), {e, gw});
        // a host ONNX node on a device value: its input is downloaded before it
        Variable* n =
            g.makeApply(Op::get("OnnxNeg"), {d}, std::vector<Type>{Type::parse("float32[16,4]")}, "neg")->output(0);
        g.setOutputs({n, g.apply(Op::get("HostFromGpu"), {e})});
        const std::vector<Tensor> in = {randn(DType::Float32, {16, 8}), randn(DType::Float32, {8, 4})};
        const auto cpu = Executor(g, ExecOptions{DeviceChoice::Cpu}).run(in);
        Executor ex(g, ExecOptions{DeviceChoice::Cuda});
        RunTimings tm;
        cuda::emu::traceCalls(true);
        const auto outs = ex.run(in, &tm);
        const std::vector<std::string> trace = cuda::emu::callTrace();
        cuda::emu::traceCalls(false);
        QVERIFY(compareOutputs(outs, cpu).within(1e-5));

        std::size_t negStep = ex.steps().size();
        for (std::size_t i = 0; i < ex.steps().size(); ++i)
            if (ex.steps()[i].node == n->owner()) negStep = i;
        QCOMPARE(tm.implicitTransfers.size(), std::size_t(1));
        QCOMPARE(tm.implicitTransfers[0].step, negStep);
        QVERIFY(!tm.implicitTransfers[0].toDevice);
        QCOMPARE(tm.implicitTransfers[0].bytes, std::size_t(16 * 4 * 4));
        QVERIFY(tm.implicitTransfers[0].us > 0);

        int windows = 0, mallocs = 0, queued = 0;
        bool open = false;
        QStringList wrong;
        for (const std::string& call : trace) {
            if (call == "queue cudaEventRecord") {
                open = !open;
                windows += open;
                continue;
            }
            mallocs += call == "cudaMalloc";
            const bool device = call.rfind("queue ", 0) == 0;
            queued += device && call != "queue cudaEventRecord (sync only)";
            if (device && !open && call != "queue cudaEventRecord (sync only)")
                wrong << QString::fromStdString(call) + " outside every window";
            if (!device && open) wrong << QString::fromStdString(call) + " inside a window";
        }
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong.join("; ")));
        QVERIFY(!open);
        QCOMPARE(mallocs, 4); // pool misses of the first run: 2 uploads, exp, the GEMM
        // one operation and one window each: 2 uploads, exp, the GEMM, the implicit download, HostFromGpu
        QCOMPARE(queued, 6);
        QCOMPARE(windows, 6);

        const ProfileReport rep = profileExecutor(ex, in, ProfileOptions{1, 2}, "final");
        QVERIFY2(rep.error.empty(), rep.error.c_str());
        std::vector<std::tuple<NodeId, std::size_t, TransferDirection, bool>> got;
        for (const ProfileTransfer& t : rep.transfers) {
            QVERIFY(t.bytes && t.timeUs > 0);
            got.emplace_back(t.node, *t.bytes, t.direction, t.implicit);
        }
        const NodeId up0 = gx->owner()->id(), up1 = gw->owner()->id();
        const NodeId down = g.outputs()[1]->owner()->id();
        std::sort(got.begin(), got.end());
        decltype(got) want = {{up0, 512, TransferDirection::HtoD, false},
                              {up1, 128, TransferDirection::HtoD, false},
                              {down, 512, TransferDirection::DtoH, false},
                              {n->owner()->id(), 256, TransferDirection::DtoH, true}};
        std::sort(want.begin(), want.end());
        QVERIFY(got == want);
        QVERIFY(QString::fromStdString(rep.text()).contains("(implicit: its input)"));
    }

    // Pageable uploads go through the runtime's two page-locked staging buffers in 4 MiB chunks:
    // the result is unchanged, no pageable copy reaches the device queue, and later runs make no
    // page-locked allocation (the staging buffers and the pool's host buffers are reused).
    void cudaPageableUploadsStaged() {
        NEED_CUDA();
        GpuHarness h;
        const Tensor big = randn(DType::Float32, {(std::int64_t(9) << 20) / 4 + 5}); // 3 chunks, the last partial
        QVERIFY(!big.storage()->pinned());
        Variable* x = h.input(big);
        h.g.setOutputs({h.host(h.op("GpuElemwise", {{"scalar", "neg"}}, {x}))});
        const auto cpu = h.run(DeviceChoice::Cpu);
        Executor ex(h.g, ExecOptions{DeviceChoice::Cuda, true});
        const cuda::emu::Stats before = cuda::emu::stats();
        cuda::emu::traceCalls(true);
        VERIFY_SAME(ex.run(h.values)[0], cpu[0]);
        const std::vector<std::string> trace = cuda::emu::callTrace();
        cuda::emu::traceCalls(false);
        const cuda::emu::Stats first = cuda::emu::stats();
        for (int i = 0; i < 3; ++i) VERIFY_SAME(ex.run(h.values)[0], cpu[0]);
        const cuda::emu::Stats after = cuda::emu::stats();
        QCOMPARE(std::count(trace.begin(), trace.end(), "queue cudaEventRecord (sync only)"), 3L);
        QCOMPARE(first.pageableCopies, before.pageableCopies);
        QCOMPARE(after.pageableCopies, before.pageableCopies);
        QVERIFY(first.pinnedAllocations - before.pinnedAllocations <=
                3); // 2 staging buffers (once per process), 1 output
        QCOMPARE(after.pinnedAllocations, first.pinnedAllocations);
    }

    // Several devices (emulated): a context naming another existing device is refused with a
    // message (every kernel runs on device 0); names of missing devices mean device 0.
    void cudaSeveralDevices() {
        NEED_CUDA();
        cuda::emu::setDeviceCount(2);
        auto runContext = [](const std::string& ctx) {
            FunctionGraph g;
            Variable* x = g.addInput(Type::parse("float32[3]"), "x");
            Variable* gx = g.apply(Op::get("GpuFromHost", {{"context", ctx}}), {x});
            g.setOutputs(
                {g.apply(Op::get("HostFromGpu"), {g.apply(Op::get("GpuElemwise", {{"scalar", "neg"}}), {gx})})});
            Executor ex(g, ExecOptions{DeviceChoice::Cuda});
            std::vector<Tensor> out;
            const QString err = errorOf([&] { out = ex.run({ints(DType::Float32, {3}, {1, 2, 3})}); });
            return std::make_pair(err, out);
        };
        const auto [err1, out1] = runContext("dev1");
        const auto [err7, out7] = runContext("dev7");
        const auto [err0, out0] = runContext("dev0");
        cuda::emu::reset();
        QVERIFY2(err1.contains("GpuFromHost") &&
                     err1.contains("context 'dev1' is CUDA device 1, but PassLens runs every CUDA kernel on device 0"),
                 qPrintable(err1));
        QVERIFY2(err7.isEmpty() && err0.isEmpty(), qPrintable(err7 + err0));
        QCOMPARE(out7[0].at(2), -3.0);
        QCOMPARE(out0[0].at(0), -1.0);
    }
#endif
};

QTEST_GUILESS_MAIN(TestExecGpu)
#include "tst_exec_gpu.moc"
