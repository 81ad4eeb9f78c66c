// The executor: transfers as emulated copies on the CPU backend, missing kernels and constants,
// Assert, memory released after a value's last use, and the output comparison of `run --check`.
#include "ExecTestSupport.h"

#include <cstring>

using namespace passlens;
using namespace exectest;

class TestExecExecutor : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { (void)rng(); }

    // ------------------------------------------------------------------ executor
    void transfersAreEmulatedCopies() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* gx = g.apply(Op::get("GpuFromHost"), {x});
        Variable* e = g.apply(Op::get("GpuElemwise", {{"scalar", "exp"}}), {gx});
        g.setOutputs({g.apply(Op::get("HostFromGpu"), {e})});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        QVERIFY(ex.gpuEmulated());
        QVERIFY(QString::fromStdString(ex.deviceDescription()).contains("emulated on CPU"));
        QCOMPARE(ex.steps()[0].kind, StepKind::Transfer);
        QCOMPARE(ex.steps()[1].kind, StepKind::Emulated);
        Tensor in = randn(DType::Float32, {4});
        RunTimings tm;
        auto out = ex.run({in}, &tm);
        QCOMPARE(tm.stepBytes[0], std::size_t(16));
        QVERIFY(out[0].storage() != in.storage());
        ProfileReport rep = profileExecutor(ex, {in}, ProfileOptions{1, 3}, "final");
        QVERIFY(rep.error.empty());
        QCOMPARE(rep.transfers.size(), std::size_t(2));
        QCOMPARE(rep.transfers[0].direction, TransferDirection::HtoD);
        QCOMPARE(rep.transfers[1].direction, TransferDirection::DtoH);
        const json j = rep.toJson();
        QCOMPARE(j["nodes"].size(), std::size_t(3));
        QCOMPARE(j["transfers"][0]["bytes"].get<int>(), 16);
        QVERIFY(j["nodes"][1]["time_us"].is_number());
        QCOMPARE(QString::fromStdString(j["nodes"][1]["kind"].get<std::string>()), QString("emulated"));
        const QString text = QString::fromStdString(rep.text());
        QVERIFY(text.contains("Class") && text.contains("Apply") && text.contains("GpuElemwise{exp}") &&
                text.contains("overhead"));
    }

    // ExecOptions: each switch's environment variable and values, as the environment sets them.
    void execOptionsSettings() {
        ExecOptions o = ExecOptions::builtIn();
        QCOMPARE(ExecOptions::variables().size(), std::size_t(8));
        QVERIFY(o.fuseEpilogues && o.joinInPlace && o.epilogueChain && o.depthwiseAvx512);
        QVERIFY(!o.cudaSyncEachStep && !o.poolSeparable);
        QVERIFY(o.set("PASSLENS_EPILOGUE_FUSION", "off") && !o.fuseEpilogues);
        QVERIFY(o.set("PASSLENS_EPILOGUE_FUSION", "on") && o.fuseEpilogues);
        QVERIFY(o.set("PASSLENS_JOIN_IN_PLACE", "off") && !o.joinInPlace);
        QVERIFY(o.set("PASSLENS_CUDA_SYNC", "1") && o.cudaSyncEachStep);
        QVERIFY(o.set("PASSLENS_EPILOGUE_CHAIN", "off") && !o.epilogueChain);
        QVERIFY(o.set("PASSLENS_DEPTHWISE_AVX512", "off") && !o.depthwiseAvx512);
        QVERIFY(o.set("PASSLENS_POOL_SEPARABLE", "1") && o.poolSeparable);
        QVERIFY(o.set("PASSLENS_POOL_SEPARABLE", "0") && !o.poolSeparable);
        QVERIFY(o.set("PASSLENS_CONV_WINOGRAD", "2") && o.winograd == WinogradChoice::F2);
        QVERIFY(o.set("PASSLENS_CONV_WINOGRAD", "off") && o.winograd == WinogradChoice::Off);
        QVERIFY(o.set("PASSLENS_CONV_WINOGRAD", "7") && o.winograd == WinogradChoice::Auto);
        QVERIFY(o.set("PASSLENS_CPU_LOOPS", "baseline") && o.cpuLoops == CpuLoops::Baseline);
        QVERIFY(!o.set("PASSLENS_NO_SUCH_SWITCH", "1"));
        // the device and poison arguments override only themselves
        const ExecOptions d{DeviceChoice::Cpu, true};
        QCOMPARE(d.device, DeviceChoice::Cpu);
        QVERIFY(d.poison);
        QCOMPARE(d.fuseEpilogues, ExecOptions::environment().fuseEpilogues);
    }

    void missingKernelIsNamed() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* e = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x});
        Variable* y =
            g.makeApply(Op::get("OnnxFrobnicate"), {e}, std::vector<Type>{Type::parse("float32[4]")}, "frob_1")
                ->output(0);
        g.setOutputs({y});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        QCOMPARE(ex.missingKernels().size(), std::size_t(1));
        const QString err = errorOf([&] { ex.run({randn(DType::Float32, {4})}); });
        QVERIFY2(err.contains("OnnxFrobnicate") && err.contains("frob_1") && err.contains("no kernel"),
                 qPrintable(err));
        ProfileReport rep = profileExecutor(ex, {randn(DType::Float32, {4})}, ProfileOptions{1, 2}, "source");
        QVERIFY(!rep.error.empty());
        QVERIFY(rep.nodes[0].timeUs.has_value());
        QVERIFY(!rep.nodes[1].timeUs.has_value()); // n/a, not 0
        const json j = rep.toJson();
        QCOMPARE(j["nodes"].size(), std::size_t(1));
        QCOMPARE(j["not_run"].size(), std::size_t(1));
        QVERIFY(QString::fromStdString(rep.text()).contains("n/a"));
    }

    void missingConstantIsRefused() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2]"), "x");
        auto d = std::make_shared<TensorData>();
        d->dtype = DType::Float32;
        d->shape = {2};
        d->missing = "external data file 'w.bin' of tensor 'w' cannot be read";
        Variable* w = g.addConstant(d, "w");
        g.setOutputs({g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, w})});
        const QString err = errorOf([&] { Executor ex(g); });
        QVERIFY2(err.contains("'w'") && err.contains("w.bin") && err.contains("Elemwise{add}"), qPrintable(err));
    }

    void assertFails() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2]"), "x");
        Variable* c = g.addInput(Type::parse("bool[]"), "c");
        g.setOutputs({g.apply(Op::get("Assert", {{"msg", "shapes differ"}}), {x, c})});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        QCOMPARE(ex.run({randn(DType::Float32, {2}), ints(DType::Bool, {}, {1})}).size(), std::size_t(1));
        QVERIFY(errorOf([&] {
                    ex.run({randn(DType::Float32, {2}), ints(DType::Bool, {}, {0})});
                }).contains("shapes differ"));
    }

    void memoryIsReleasedAfterLastUse() {
        // a chain of 50 element-wise nodes over 1 MiB tensors keeps only a few alive at once
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[262144]"), "x");
        Variable* v = x;
        for (int i = 0; i < 50; ++i) v = g.apply(Op::get("Elemwise", {{"scalar", i % 2 ? "neg" : "abs"}}), {v});
        g.setOutputs({v});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        Tensor in = randn(DType::Float32, {262144});
        ex.run({in});
        ex.context().pool->resetPeaks();
        ex.run({in});
        QVERIFY2(ex.context().pool->peakLiveBytes() <= 2u * (1u << 20),
                 qPrintable(QString::number(ex.context().pool->peakLiveBytes())));
        // deterministic: equal runs give equal bits
        auto a = ex.run({in}), b = ex.run({in});
        QVERIFY(std::memcmp(a[0].rawData(), b[0].rawData(), a[0].nbytes()) == 0);
    }

    void compareOutputsDefinition() {
        std::vector<Tensor> a = {Tensor::fromDoubles(DType::Float32, {3}, {1, 2, 4})};
        std::vector<Tensor> b = {Tensor::fromDoubles(DType::Float32, {3}, {1, 2, 3.9})};
        const CompareResult r = compareOutputs(a, b);
        QVERIFY(std::fabs(r.maxAbs - 0.1) < 1e-6);
        QVERIFY(std::fabs(r.maxRel - 0.1 / 3.9) < 1e-6);
        QVERIFY(!r.within(1e-3));
        QVERIFY(r.within(0.03));
        std::vector<Tensor> c = {Tensor::fromDoubles(DType::Float32, {2}, {1, 2})};
        QVERIFY(!compareOutputs(a, c).within(1));
        std::vector<Tensor> n1 = {Tensor::fromDoubles(DType::Float32, {1}, {NAN})},
                            n2 = {Tensor::fromDoubles(DType::Float32, {1}, {1})};
        QVERIFY(compareOutputs(n1, n1).within(0));
        QVERIFY(!compareOutputs(n1, n2).within(1e9));
    }
};

QTEST_GUILESS_MAIN(TestExecExecutor)
#include "tst_exec_executor.moc"
