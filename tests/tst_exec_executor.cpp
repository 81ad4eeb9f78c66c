// The executor: transfers as emulated copies on the CPU backend, missing kernels and constants,
// Assert, memory released after a value's last use, and the output comparison of `run --check`.
#include "ExecTestSupport.h"

#include <passlens/io/JsonFile.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <utility>
#include <variant>

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

    // The executor's plan: per convolution the epilogue fused into it or why none is, per Join
    // whether it is written in place or why not; carried by the profile and its JSON.
    void planRecordsDecisions() {
        Tensor x = randn(DType::Float32, {1, 8, 9, 9});
        Tensor w1 = randn(DType::Float32, {6, 8, 1, 1}), w3 = randn(DType::Float32, {5, 8, 3, 3}),
               b = randn(DType::Float32, {1, 6, 1, 1});
        FunctionGraph g;
        Variable* vx = g.addInput(typeOf(x), "x");
        Variable* other = g.addInput(Type::parse("float32[1,6,9,9]"), "other");
        auto conv = [&](const Tensor& w, int pad) { return addConv(g, vx, w, pad); };
        Variable* c1 = conv(w1, 0);
        Variable* e1 = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {c1, g.addConstant(b.toTensorData())});
        Variable* c3 = conv(w3, 1);
        Variable* j = g.apply(Op::get("Join", {{"axis", 1}}), {e1, c3});
        Variable* c4 = conv(w1, 0);
        Variable* e4 = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {c4, other}); // not a constant
        Variable* c5 = conv(w1, 0);
        Variable* e5 = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {c5});
        Variable* z = g.apply(Op::get("Elemwise", {{"scalar", "mul"}}), {j, j});
        g.setOutputs({z, e4, e5, c5}); // c5 is also a graph output
        auto id = [](const Variable* v) { return v->owner()->id(); };
        auto name = [&](const char* kind, const Variable* v) {
            return std::string(kind) + " #" + std::to_string(id(v));
        };
        auto find = [](const std::vector<PlanDecision>& plan, NodeId node) -> const PlanDecision* {
            for (const PlanDecision& d : plan)
                if (d.node == node) return &d;
            return nullptr;
        };

        Executor ex(g, ExecOptions{DeviceChoice::Cpu});
        const std::vector<PlanDecision>& plan = ex.plan();
        QCOMPARE(plan.size(), std::size_t(5)); // c1 (as e1's fusion), c3, c4, c5 and the Join
        const PlanDecision* f = find(plan, id(e1));
        QVERIFY(f && f->applied && f->pass == PlanDecision::Pass::EpilogueFusion);
        QCOMPARE(f->with, std::vector<NodeId>{id(c1)});
        QCOMPARE(f->decision, name("Elemwise", e1) + " fused into " + name("AbstractConv2d", c1) + " as its epilogue");
        const PlanDecision* d3 = find(plan, id(c3));
        QVERIFY(d3 && !d3->applied);
        QCOMPARE(d3->decision, name("AbstractConv2d", c3) + ": no epilogue fused");
        QCOMPARE(d3->reason, "its only client " + name("Join", j) + " is not element-wise");
        const PlanDecision* d4 = find(plan, id(c4));
        QVERIFY(d4 && !d4->applied);
        QCOMPARE(d4->reason, "input 1 of " + name("Elemwise", e4) + " is not a constant");
        const PlanDecision* d5 = find(plan, id(c5));
        QVERIFY(d5 && !d5->applied);
        QCOMPARE(d5->reason, std::string("its output is a graph output"));
        const PlanDecision* dj = find(plan, id(j));
        QVERIFY(dj && dj->applied && dj->pass == PlanDecision::Pass::JoinInPlace);
        QCOMPARE(dj->with, (std::vector<NodeId>{id(c1), id(c3)}));
        QCOMPARE(dj->decision, name("Join", j) + " written in place: nodes #" + std::to_string(id(c1)) + ", #" +
                                   std::to_string(id(c3)) + " write into its slices");

        // the profile carries the plan, in its JSON too, and reads it back
        ProfileReport rep =
            profileExecutor(ex, {x, randn(DType::Float32, {1, 6, 9, 9})}, ProfileOptions{0, 1}, "source");
        QVERIFY2(rep.error.empty(), rep.error.c_str());
        QCOMPARE(rep.plan.size(), plan.size());
        const json pj = rep.toJson();
        QCOMPARE(pj.at("plan").size(), std::size_t(5));
        bool jsonJoin = false;
        for (const json& d : pj.at("plan"))
            if (d.at("node") == id(j))
                jsonJoin = d.at("pass") == "join_in_place" && d.at("applied") == true &&
                           d.at("with") == json::array({id(c1), id(c3)});
        QVERIFY(jsonJoin);
        const ExecutionProfile back = ExecutionProfile::fromJson(pj, "profile");
        QCOMPARE(back.plan.size(), std::size_t(5));
        const PlanDecision* bd = find(back.plan, id(c4));
        QVERIFY(bd && !bd->applied && bd->reason == d4->reason && bd->decision == d4->decision);
        const ProfileNode* fused = back.find(id(e1));
        QVERIFY(fused && !fused->timeUs && fused->fusedInto == id(c1));
        const ProfileNode* joined = back.find(id(j));
        QVERIFY(joined && joined->inPlace);
        QCOMPARE(joined->inPlaceWriters, (std::vector<NodeId>{id(c1), id(c3)}));
        QVERIFY(QString::fromStdString(rep.text()).contains(QString::fromStdString("+ " + f->decision)));

        // fusion off: every convolution says why, and the Join's first input is now element-wise
        ExecOptions off{DeviceChoice::Cpu};
        off.fuseEpilogues = false;
        Executor ex2(g, off);
        QCOMPARE(ex2.plan().size(), std::size_t(5));
        const PlanDecision* o1 = find(ex2.plan(), id(c1));
        QVERIFY(o1 && !o1->applied);
        QCOMPARE(o1->reason,
                 std::string("epilogue fusion is off (ExecOptions::fuseEpilogues, PASSLENS_EPILOGUE_FUSION=off)"));
        const PlanDecision* oj = find(ex2.plan(), id(j));
        QVERIFY(oj && !oj->applied);
        QCOMPARE(oj->reason, "input 0 comes from " + name("Elemwise", e1) + ", not a convolution");
    }

    // Findings of fuzz_profile (tests/fixtures/fuzz/profile): counts past their integer type were
    // converted from double (undefined behaviour); now refused naming the place.
    void profileFuzzFindings() {
        const std::filesystem::path dir = std::filesystem::path(PASSLENS_SOURCE_DIR) / "tests/fixtures/fuzz/profile";
        auto errorOfFile = [&dir](const char* file) {
            const std::string label = (dir / file).string();
            return errorOf([&] { ExecutionProfile::fromJson(readJsonFile(dir / file).at("profiles").at(0), label); })
                .mid(static_cast<int>(label.size()));
        };
        QCOMPARE(errorOfFile("repeats-outside-int.profile.json"),
                 QString(".repeats: expected a count of at most 2147483647"));
        QCOMPARE(errorOfFile("transfer-bytes-outside-size.profile.json"),
                 QString(".transfers[0].bytes: expected a count of at most 9007199254740992"));
        // the largest accepted values read back exactly
        const ExecutionProfile p = ExecutionProfile::fromJson(
            json::parse(
                R"({"repeats": 2147483647, "transfers": [{"node": 1, "bytes": 9007199254740992, "time_us": 1}]})"),
            "p");
        QCOMPARE(p.repeats, 2147483647);
        QCOMPARE(p.transfers.at(0).bytes, std::size_t(9007199254740992));
    }

    // Whatever a kernel throws reaches the user as "NODE: reason": passlens::Error with the node
    // in front, out of memory and the standard library's exceptions in words, never their raw
    // text (issue 16, "Messages").
    void kernelFailuresNameTheNode() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* e = g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {x});
        Variable* y =
            g.makeApply(Op::get("OnnxFailing"), {e}, std::vector<Type>{Type::parse("float32[4]")}, "fail_1")->output(0);
        g.setOutputs({y});
        const std::string node = describeNode(*y->owner());
        QCOMPARE(node, "OnnxFailing (node #" + std::to_string(y->owner()->id()) + " 'fail_1')");
        const std::vector<std::pair<std::function<void()>, std::string>> cases = {
            {[] { (void)std::vector<int>().at(3); }, "internal error: an index out of range"},
            {[] { std::vector<double>().reserve(std::vector<double>().max_size() + 1); },
             "a size too large to allocate"},
            {[] { (void)std::get<int>(std::variant<int, float>(1.0f)); }, "internal error: an invalid state"},
            {[] { throw std::bad_alloc(); }, "out of host memory"},
            {[] { throw std::runtime_error("std::future_error: Broken promise"); }, "internal error: an invalid state"},
            {[] { throw std::runtime_error("cudaMemcpy failed: cudaErrorIllegalAddress"); },
             "cudaMemcpy failed: cudaErrorIllegalAddress"},
            {[] { throw Error("weights do not match"); }, "weights do not match"},
            {[] { throw 42; }, "unknown error"},
        };
        for (const auto& [thrower, reason] : cases) {
            KernelRegistry::instance().add("OnnxFailing", Backend::Cpu,
                                           [&thrower = thrower](KernelCall&) { thrower(); });
            Executor ex(g, ExecOptions{DeviceChoice::Cpu});
            const QString err = errorOf([&] { ex.run({randn(DType::Float32, {4})}); });
            QCOMPARE(err, QString::fromStdString(node + ": " + reason));
            // the profile (run's message) says the same and ran the node before it
            const ProfileReport rep = profileExecutor(ex, {randn(DType::Float32, {4})}, ProfileOptions{0, 1}, "final");
            QCOMPARE(QString::fromStdString(rep.error), err);
            QVERIFY(rep.nodes[0].timeUs.has_value() && !rep.nodes[1].timeUs.has_value());
        }
        KernelRegistry::instance().add("OnnxFailing", Backend::Cpu, [](KernelCall& c) { c.outputs[0] = c.in(0); });
        Executor ok(g, ExecOptions{DeviceChoice::Cpu});
        QCOMPARE(ok.run({randn(DType::Float32, {4})}).at(0).numel(), 4);
    }

    // A failure inside an If branch, a Loop or a Scan body names the control-flow node, the
    // branch or iteration, and the node inside (ONNX backend test models of libonnx-testdata).
    void controlFlowFailuresNameTheirPath() {
        const std::filesystem::path data = "/usr/share/libonnx-testdata/data/node";
        if (!std::filesystem::exists(data / "test_loop11/model.onnx")) QSKIP("libonnx-testdata is not installed");
        // the CPU kernel of `kind` throws std::out_of_range while this lives
        struct Failing {
            std::string kind;
            KernelFn saved;
            explicit Failing(std::string k)
                : kind(std::move(k))
                , saved(*KernelRegistry::instance().find(kind, Backend::Cpu)) {
                KernelRegistry::instance().add(kind, Backend::Cpu, [](KernelCall&) { (void)std::vector<int>().at(1); });
            }
            ~Failing() { KernelRegistry::instance().add(kind, Backend::Cpu, saved); }
        };
        auto failure = [&](const char* model, const char* kind, const std::vector<Tensor>& inputs) {
            const LoadedGraph lg = loadGraphFile((data / model / "model.onnx").string());
            Failing f(kind);
            Executor ex(*lg.graph, ExecOptions{DeviceChoice::Cpu});
            const QString err = errorOf([&] { ex.run(inputs); });
            return std::make_pair(describeNode(*lg.graph->outputs().at(0)->owner()), err.toStdString());
        };
        const std::string reason = ": internal error: an index out of range";
        auto [loop, loopErr] =
            failure("test_loop11", "Elemwise",
                    {Tensor::scalar(DType::Int64, 5), Tensor::scalar(DType::Bool, 1), randn(DType::Float32, {1})});
        QVERIFY2(loopErr.starts_with(loop + ": body, iteration 0: Elemwise{add} (node #") && loopErr.ends_with(reason),
                 loopErr.c_str());
        auto [scan, scanErr] =
            failure("test_scan9_sum", "Elemwise", {randn(DType::Float32, {2}), randn(DType::Float32, {3, 2})});
        QVERIFY2(scanErr.starts_with(scan + ": body, iteration 0: Elemwise{add} (node #") && scanErr.ends_with(reason),
                 scanErr.c_str());
        auto [branch, ifErr] = failure("test_if_seq", "OnnxSequenceConstruct", {Tensor::scalar(DType::Bool, 1)});
        QVERIFY2(ifErr.starts_with(branch + ": then_branch: OnnxSequenceConstruct (node #") && ifErr.ends_with(reason),
                 ifErr.c_str());
        // the real kernels are back
        const LoadedGraph lg = loadGraphFile((data / "test_scan9_sum/model.onnx").string());
        QCOMPARE(Executor(*lg.graph, ExecOptions{DeviceChoice::Cpu})
                     .run({randn(DType::Float32, {2}), randn(DType::Float32, {3, 2})})
                     .size(),
                 std::size_t(2));
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
