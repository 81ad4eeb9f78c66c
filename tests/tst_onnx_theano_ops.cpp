// ONNX ops imported as Theano ops. ArgMax / ArgMin as Theano's argmax (MaxAndArgmax output 1,
// tensor/basic.py): the op kinds (type rule, display string, attribute checks), the importer's
// mapping for every opset form, values on the CPU against hand-computed references (NaN, ties,
// several axes, empty axes), and lifting to GpuMaxAndArgmax in the theano and cleanup pipelines
// (local_gpu_maxandargmax, gpuarray/opt.py); CUDA against the CPU: tst_exec_gpu.cpp
// cudaMaxAndArgmax (tst_exec_emu on the emulated device). BitShift by a constant as an
// Elemwise mul / int_div, against hand-computed shifts.
#include "ExecTestSupport.h"

#include <passlens/gpu/LiftReasons.h>

#include <onnx/onnx_pb.h>

#include <QStringList>

using namespace passlens;
using exectest::ints;
using json = nlohmann::json;

namespace {

// A one-node ONNX model: x (static dims, element type `elem`) and further inputs -> op_type ->
// y (outElem, int64 unless set).
struct OneNode {
    onnx::ModelProto m;
    onnx::NodeProto* node;
    int rank = 0;
    int outElem = onnx::TensorProto::INT64;
    OneNode(const std::string& opType, int opset, std::vector<std::int64_t> dims, int elem = onnx::TensorProto::FLOAT) {
        m.set_ir_version(7);
        auto* os = m.add_opset_import();
        os->set_domain("");
        os->set_version(opset);
        auto* g = m.mutable_graph();
        g->set_name("argmax");
        auto* x = g->add_input();
        x->set_name("x");
        x->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
        x->mutable_type()->mutable_tensor_type()->mutable_shape();
        for (auto d : dims) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
        rank = static_cast<int>(dims.size());
        node = g->add_node();
        node->set_op_type(opType);
        node->set_name("n1");
        node->add_input("x");
        node->add_output("y");
    }
    // a second input: an initializer of the given element type and values
    OneNode& initializer(const std::string& name, std::vector<std::int64_t> dims, int elem,
                         std::vector<std::uint64_t> vals) {
        auto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(elem);
        for (auto d : dims) t->add_dims(d);
        for (auto v : vals) // as TensorProto stores them: uint32 / uint64 in uint64_data, smaller in int32_data
            if (elem == onnx::TensorProto::UINT32 || elem == onnx::TensorProto::UINT64)
                t->add_uint64_data(v);
            else
                t->add_int32_data(static_cast<std::int32_t>(v));
        node->add_input(name);
        return *this;
    }
    OneNode& stringAttr(const std::string& name, const std::string& v) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(v);
        return *this;
    }
    OneNode& attr(const std::string& name, std::int64_t v) {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
        return *this;
    }
    // y of x's rank (less one with keepdims=0), its dims left to shape inference
    LoadedGraph import() const {
        onnx::ModelProto full = m;
        bool keep = true;
        for (const auto& a : node->attribute())
            if (a.name() == "keepdims") keep = a.i() != 0;
        auto* y = full.mutable_graph()->add_output();
        y->set_name("y");
        auto* tt = y->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(outElem);
        tt->mutable_shape();
        for (int i = 0; i < (keep ? rank : rank - 1); ++i)
            tt->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(i));
        return importOnnxBytes(full.SerializeAsString(), "argmax.onnx", ".");
    }
};

// Op display strings in topological order.
QString opsOf(const FunctionGraph& g) {
    QStringList k;
    for (const Apply* n : g.toposort()) k << QString::fromStdString(n->op().str());
    return k.join(' ');
}

std::vector<Tensor> runCpu(const FunctionGraph& g, const std::vector<Tensor>& in) {
    Executor ex(g, ExecOptions{DeviceChoice::Cpu, true});
    return ex.run(in);
}

std::vector<std::int64_t> intsOf(const Tensor& t) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = t.intAt(static_cast<std::int64_t>(i));
    return v;
}

} // namespace

class TestOnnxTheanoOps : public QObject {
    Q_OBJECT

private slots:
    // Output types, Theano's display strings and the attribute checks.
    void opKind() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2,3,4]"), "x");
        Apply* a = g.makeApply(Op::get("MaxAndArgmax", {{"axis", {1}}}), {x});
        QCOMPARE(QString::fromStdString(a->op().str()), QString("MaxAndArgmax{axis=(1,)}"));
        QCOMPARE(QString::fromStdString(a->output(0)->type().str()), QString("float32[2,4]"));
        QCOMPARE(QString::fromStdString(a->output(1)->type().str()), QString("int64[2,4]"));
        Apply* b = g.makeApply(Op::get("MaxAndArgmax", {{"axis", {0, -1}}}), {x});
        QCOMPARE(QString::fromStdString(b->op().str()), QString("MaxAndArgmax{axis=(0, -1)}"));
        QCOMPARE(QString::fromStdString(b->output(1)->type().str()), QString("int64[3]"));
        Apply* c = g.makeApply(Op::get("MaxAndArgmax"), {x});
        QCOMPARE(QString::fromStdString(c->op().str()), QString("MaxAndArgmax{axis=None}"));
        QCOMPARE(QString::fromStdString(c->output(0)->type().str()), QString("float32[]"));
        QCOMPARE(QString::fromStdString(Op::get("GpuMaxAndArgmax", {{"axis", {2}}}).str()),
                 QString("GpuMaxAndArgmax{axis=(2,)}"));
        QCOMPARE(QString::fromStdString(Op::get("MaxAndArgmax").info().gpuCounterpart), QString("GpuMaxAndArgmax"));
        const QString twice = exectest::errorOf([] { (void)Op::get("MaxAndArgmax", {{"axis", {1, 1}}}); });
        QVERIFY2(twice.contains("MaxAndArgmax: axis 1 is named twice"), qPrintable(twice));
        const QString range = exectest::errorOf([&] {
            (void)g.makeApply(Op::get("MaxAndArgmax", {{"axis", {3}}}), {x});
        });
        QVERIFY2(range.contains("axis 3 out of range for rank 3"), qPrintable(range));
        const QString kind = exectest::errorOf([] { (void)Op::get("MaxAndArgmax", {{"axis", "1"}}); });
        QVERIFY2(kind.contains("attribute 'axis' must be a list of integers or null"), qPrintable(kind));
    }

    // Every opset form: the op kinds in order and the values on the CPU.
    void importForms_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("opset");
        QTest::addColumn<int>("axis"); // 99: no attribute (default 0)
        QTest::addColumn<int>("keepdims");
        QTest::addColumn<QString>("kinds");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QList<qlonglong>>("want");
        // x (float32[2,3]) = [[1, 7, 7], [9, -2, 9]]
        QTest::newRow("ArgMax-1 default") << "ArgMax" << 1 << 99 << -1 << "MaxAndArgmax{axis=(0,)} DimShuffle{x,0}"
                                          << "int64[1,3]" << QList<qlonglong>{1, 0, 1};
        QTest::newRow("ArgMax-11 axis -1") << "ArgMax" << 11 << -1 << 1 << "MaxAndArgmax{axis=(1,)} DimShuffle{0,x}"
                                           << "int64[2,1]" << QList<qlonglong>{1, 0};
        QTest::newRow("ArgMax-12 no keepdims") << "ArgMax" << 12 << 1 << 0 << "MaxAndArgmax{axis=(1,)}"
                                               << "int64[2]" << QList<qlonglong>{1, 0};
        QTest::newRow("ArgMax-13 axis -2") << "ArgMax" << 13 << -2 << 0 << "MaxAndArgmax{axis=(0,)}"
                                           << "int64[3]" << QList<qlonglong>{1, 0, 1};
        QTest::newRow("ArgMin-1 default")
            << "ArgMin" << 1 << 99 << -1 << "Elemwise{neg} MaxAndArgmax{axis=(0,)} DimShuffle{x,0}"
            << "int64[1,3]" << QList<qlonglong>{0, 1, 0};
        QTest::newRow("ArgMin-13 axis 1")
            << "ArgMin" << 13 << 1 << 1 << "Elemwise{neg} MaxAndArgmax{axis=(1,)} DimShuffle{0,x}"
            << "int64[2,1]" << QList<qlonglong>{0, 1};
    }
    void importForms() {
        QFETCH(QString, op);
        QFETCH(int, opset);
        QFETCH(int, axis);
        QFETCH(int, keepdims);
        QFETCH(QString, kinds);
        QFETCH(QString, type);
        QFETCH(QList<qlonglong>, want);
        OneNode b(op.toStdString(), opset, {2, 3});
        if (axis != 99) b.attr("axis", axis);
        if (keepdims >= 0) b.attr("keepdims", keepdims);
        LoadedGraph l = b.import();
        QCOMPARE(opsOf(*l.graph), kinds);
        QCOMPARE(QString::fromStdString(l.graph->outputs()[0]->type().str()), type);
        const auto out = runCpu(*l.graph, {ints(DType::Float32, {2, 3}, {1, 7, 7, 9, -2, 9})});
        const std::vector<std::int64_t> got = intsOf(out[0]);
        QCOMPARE(QList<qlonglong>(got.begin(), got.end()), want);
        QCOMPARE(out[0].dtype(), DType::Int64);
    }

    // ArgMin of integers: max - x for unsigned, (-1) - x for signed (exact at the minimum value,
    // where Theano's -x wraps); uint64, select_last_index and bfloat16 stay Onnx ops.
    void importIntegerArgMin() {
        struct Case {
            int elem;
            DType dt;
            std::vector<double> x;
            QString kinds;
            std::vector<std::int64_t> want;
        };
        const std::vector<Case> cases = {
            {onnx::TensorProto::INT8,
             DType::Int8,
             {5, -128, 127, -128},
             "DimShuffle{x} Elemwise{sub} MaxAndArgmax{axis=(0,)}",
             {1}},
            {onnx::TensorProto::INT64,
             DType::Int64,
             {3, -9.2233720368547758e18, 0, 1},
             "DimShuffle{x} Elemwise{sub} MaxAndArgmax{axis=(0,)}",
             {1}},
            {onnx::TensorProto::UINT8,
             DType::UInt8,
             {255, 3, 0, 0},
             "DimShuffle{x} Elemwise{sub} MaxAndArgmax{axis=(0,)}",
             {2}},
            {onnx::TensorProto::UINT32,
             DType::UInt32,
             {4294967295.0, 7, 4294967295.0, 6},
             "DimShuffle{x} Elemwise{sub} MaxAndArgmax{axis=(0,)}",
             {3}},
            {onnx::TensorProto::UINT64,
             DType::UInt64,
             {9, 2, 4, 2},
             "DimShuffle{x} Elemwise{sub} MaxAndArgmax{axis=(0,)}",
             {1}},
        };
        for (const Case& c : cases) {
            OneNode b("ArgMin", 13, {4}, c.elem);
            b.attr("keepdims", 0);
            LoadedGraph l = b.import();
            QCOMPARE(opsOf(*l.graph), c.kinds);
            const auto out = runCpu(*l.graph, {ints(c.dt, {4}, c.x)});
            QCOMPARE(intsOf(out[0]), c.want);
        }
        // the constant of the unsigned form is the dtype's max
        OneNode u("ArgMin", 13, {4}, onnx::TensorProto::UINT16);
        LoadedGraph lu = u.import();
        const Apply* ds = lu.graph->toposort().front(); // DimShuffle{x} of the scalar, as Elemwise.make_node
        QVERIFY(ds->input(0)->isConstant());
        QCOMPARE(ds->input(0)->constant()->at(0), 65535.0);
        // select_last_index: Theano's argmax takes the first index; the Onnx op takes the last
        OneNode last("ArgMax", 12, {4});
        last.attr("select_last_index", 1).attr("keepdims", 0);
        LoadedGraph ll = last.import();
        QCOMPARE(opsOf(*ll.graph), QString("OnnxArgMax"));
        QCOMPARE(intsOf(runCpu(*ll.graph, {ints(DType::Float32, {4}, {2, 8, 8, 1})})[0]), std::vector<std::int64_t>{2});
        OneNode bf("ArgMax", 13, {4}, onnx::TensorProto::BFLOAT16);
        QCOMPARE(opsOf(*bf.import().graph), QString("OnnxArgMax"));
        // a bad axis is refused at import, naming it
        OneNode bad("ArgMax", 13, {2, 3});
        bad.attr("axis", 2);
        const QString why = exectest::errorOf([&] { (void)bad.import(); });
        QVERIFY2(why.contains("attribute 'axis': 2 out of range for rank 2"), qPrintable(why));
    }

    // MaxAndArgmax on the CPU: NaN is the max (the first NaN, as NumPy), ties give the first
    // index, several axes count row-major over the reduced axes, null is every axis; an empty
    // axis is refused unless the result is empty too.
    void cpuValues() {
        exectest::Harness h;
        const double nan = std::nan("");
        Variable* f = h.input(ints(DType::Float32, {2, 4}, {1, 5, 5, -3, nan, 2, nan, 9}));
        Variable* t = h.input(ints(DType::Int16, {2, 2, 3}, {4, 1, 4, 0, 9, 2, -7, 3, 3, 3, 8, 8}));
        Variable* e = h.input(Tensor::empty(DType::Float32, {0, 3}));
        auto mx = [&](Variable* x, json axis) {
            return h.g.makeApply(Op::get("MaxAndArgmax", {{"axis", std::move(axis)}}), {x});
        };
        Apply* rows = mx(f, {1});
        Apply* cols = mx(f, {0});
        Apply* outer = mx(t, {0, 2});
        Apply* all = mx(t, nullptr);
        Apply* emptyOk = mx(e, {1});
        const auto out = h.run({rows->output(0), rows->output(1), cols->output(0), cols->output(1), outer->output(0),
                                outer->output(1), all->output(0), all->output(1), emptyOk->output(1)});
        QCOMPARE(out[0].at(0), 5.0);
        QVERIFY(std::isnan(out[0].at(1)));
        QCOMPARE(intsOf(out[1]), (std::vector<std::int64_t>{1, 0}));
        QVERIFY(std::isnan(out[2].at(0)));
        QCOMPARE(out[2].at(3), 9.0);
        QCOMPARE(intsOf(out[3]), (std::vector<std::int64_t>{1, 0, 1, 1}));
        // t[:, j, :] for j = 0: {4, 1, 4, -7, 3, 3} -> 4 at 0; j = 1: {0, 9, 2, 3, 8, 8} -> 9 at 1
        QCOMPARE(intsOf(out[4]), (std::vector<std::int64_t>{4, 9}));
        QCOMPARE(intsOf(out[5]), (std::vector<std::int64_t>{0, 1}));
        QCOMPARE(out[6].at(0), 9.0);
        QCOMPARE(intsOf(out[7]), (std::vector<std::int64_t>{4}));
        QCOMPARE(out[8].shape(), (Shape{0}));
        exectest::Harness bad;
        Variable* z = bad.input(Tensor::empty(DType::Float32, {2, 0}));
        const QString why = exectest::errorOf([&] {
            (void)bad.run({bad.g.makeApply(Op::get("MaxAndArgmax", {{"axis", {1}}}), {z})->output(1)});
        });
        QVERIFY2(why.contains("cannot take the argmax of an empty axis of float32[2,0]"), qPrintable(why));
    }

    // The theano and cleanup pipelines lift MaxAndArgmax to GpuMaxAndArgmax (and ArgMin's
    // Elemwise to a GpuElemwise); the results stay those of the source graph.
    void liftsToGpu_data() {
        QTest::addColumn<QString>("pipeline");
        QTest::addColumn<QString>("op");
        QTest::newRow("theano ArgMax") << "theano"
                                       << "ArgMax";
        QTest::newRow("theano ArgMin") << "theano"
                                       << "ArgMin";
        QTest::newRow("cleanup ArgMax") << "cleanup"
                                        << "ArgMax";
        QTest::newRow("cleanup ArgMin") << "cleanup"
                                        << "ArgMin";
    }
    void liftsToGpu() {
        QFETCH(QString, pipeline);
        QFETCH(QString, op);
        OneNode b(op.toStdString(), 13, {3, 4});
        b.attr("axis", -1);
        LoadedGraph src = b.import();
        LoadedGraph opt = b.import();
        Pipeline::builtin(pipeline.toStdString()).run(*opt.graph, nullptr);
        const auto counts = opt.graph->opCounts();
        QCOMPARE(counts.count("MaxAndArgmax"), std::size_t(0));
        QCOMPARE(counts.at("GpuMaxAndArgmax"), 1);
        QCOMPARE(counts.count("GpuElemwise"), std::size_t(op == "ArgMin" ? 1 : 0));
        const Tensor x = ints(DType::Float32, {3, 4}, {3, -1, 3, 2, 0, 0, -5, 0.5, 6, 6, 6, 7});
        const auto a = runCpu(*src.graph, {x}), z = runCpu(*opt.graph, {x});
        QCOMPARE(intsOf(z[0]), intsOf(a[0]));
        QCOMPARE(intsOf(z[0]),
                 (op == "ArgMax" ? std::vector<std::int64_t>{0, 3, 3} : std::vector<std::int64_t>{1, 2, 0}));
        QCOMPARE(z[0].shape(), (Shape{3, 1}));
    }

    // BitShift by a constant: Elemwise{mul} / Elemwise{int_div} by 2**y (0 from the bit width
    // on), values against shifts computed by hand; a computed y stays OnnxBitShift.
    void importBitShift() {
        struct Case {
            int elem;
            DType dt;
            const char* dir;
            std::vector<double> x;
            std::vector<std::uint64_t> y;
            QString kinds;
            std::vector<std::int64_t> want;
        };
        const std::vector<Case> cases = {
            // 3 << 7 = 384 wraps to 128; a shift by 8 or more gives 0
            {onnx::TensorProto::UINT8,
             DType::UInt8,
             "LEFT",
             {1, 255, 3, 200},
             {1, 1, 7, 8},
             "Elemwise{mul}",
             {2, 254, 128, 0}},
            {onnx::TensorProto::UINT8,
             DType::UInt8,
             "RIGHT",
             {255, 128, 7, 200},
             {1, 7, 8, 9},
             "Elemwise{int_div}",
             {127, 1, 0, 0}},
            {onnx::TensorProto::UINT16,
             DType::UInt16,
             "LEFT",
             {65535, 3, 1, 7},
             {15, 16, 0, 1},
             "Elemwise{mul}",
             {32768, 0, 1, 14}},
            {onnx::TensorProto::UINT32,
             DType::UInt32,
             "LEFT",
             {4294967295.0, 5, 1, 9},
             {31, 2, 32, 40},
             "Elemwise{mul}",
             {2147483648LL, 20, 0, 0}},
            {onnx::TensorProto::UINT32,
             DType::UInt32,
             "RIGHT",
             {4294967295.0, 4294967295.0, 16, 1},
             {31, 0, 4, 33},
             "Elemwise{int_div}",
             {1, 4294967295LL, 1, 0}},
            {onnx::TensorProto::UINT64,
             DType::UInt64,
             "RIGHT",
             {16, 4, 1, 9},
             {1, 2, 3, 64},
             "Elemwise{int_div}",
             {8, 1, 0, 0}},
        };
        for (const Case& c : cases) {
            OneNode b("BitShift", 11, {4}, c.elem);
            b.initializer("s", {4}, c.elem, c.y).stringAttr("direction", c.dir);
            b.outElem = c.elem;
            LoadedGraph l = b.import();
            QCOMPARE(opsOf(*l.graph), c.kinds);
            const Tensor x = ints(c.dt, {4}, c.x);
            QCOMPARE(intsOf(runCpu(*l.graph, {x})[0]), c.want);
            LoadedGraph t = b.import(); // the theano pipeline lifts the Elemwise; same values
            Pipeline::builtin("theano").run(*t.graph, nullptr);
            QCOMPARE(t.graph->opCounts().count("GpuElemwise"), std::size_t(c.kinds.startsWith("Elemwise") ? 1 : 0));
            QCOMPARE(intsOf(runCpu(*t.graph, {x})[0]), c.want);
        }
        // x a constant too: constant folding gives the same bits (every value below 2^63)
        OneNode f("BitShift", 11, {4}, onnx::TensorProto::UINT32);
        f.initializer("s", {4}, onnx::TensorProto::UINT32, {31, 2, 32, 40}).stringAttr("direction", "LEFT");
        f.initializer("xc", {4}, onnx::TensorProto::UINT32, {4294967295u, 5, 1, 9});
        f.node->set_input(0, "xc");
        f.node->mutable_input()->RemoveLast();
        f.outElem = onnx::TensorProto::UINT32;
        LoadedGraph lf = f.import();
        Pipeline::builtin("theano").run(*lf.graph, nullptr);
        QVERIFY(lf.graph->outputs()[0]->isConstant());
        QCOMPARE(intsOf(runCpu(*lf.graph, {ints(DType::UInt32, {4}, {0, 0, 0, 0})})[0]),
                 (std::vector<std::int64_t>{2147483648LL, 20, 0, 0}));
        // a shift given at run time stays OnnxBitShift
        OneNode d("BitShift", 11, {2}, onnx::TensorProto::UINT8);
        d.stringAttr("direction", "LEFT");
        auto* k = d.m.mutable_graph()->add_input();
        k->set_name("k");
        k->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
        k->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
        d.node->add_input("k");
        d.outElem = onnx::TensorProto::UINT8;
        LoadedGraph ld = d.import();
        QCOMPARE(opsOf(*ld.graph), QString("OnnxBitShift"));
        QCOMPARE(intsOf(runCpu(*ld.graph, {ints(DType::UInt8, {2}, {3, 1}), ints(DType::UInt8, {2}, {2, 9})})[0]),
                 (std::vector<std::int64_t>{12, 0}));
        // a bad direction is refused, naming it
        OneNode bad("BitShift", 11, {4}, onnx::TensorProto::UINT8);
        bad.initializer("s", {4}, onnx::TensorProto::UINT8, {1, 1, 1, 1}).stringAttr("direction", "UP");
        bad.outElem = onnx::TensorProto::UINT8;
        const QString why = exectest::errorOf([&] { (void)bad.import(); });
        QVERIFY2(why.contains("attribute 'direction' is 'UP', not LEFT or RIGHT"), qPrintable(why));
    }

    // float16 goes through float32 on the GPU and the max is cast back (local_gpu_maxandargmax);
    // a capability table without the dtype keeps the node on the host with the reason.
    void liftFloat16AndCapabilities() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float16[3,4]"), "x");
        Apply* a = g.makeApply(Op::get("MaxAndArgmax", {{"axis", {1}}}), {x});
        g.setOutputs({a->output(0), a->output(1)});
        Pipeline::builtin("theano").run(g, nullptr);
        QCOMPARE(opsOf(g), QString("GpuFromHost<None> GpuElemwise{Cast{float32}}<gpuarray> GpuMaxAndArgmax{axis=(1,)} "
                                   "GpuElemwise{Cast{float16}}<gpuarray> HostFromGpu(gpuarray) HostFromGpu(gpuarray)"));
        QCOMPARE(QString::fromStdString(g.outputs()[0]->type().str()), QString("float16[3]"));
        FunctionGraph h;
        Variable* y = h.addInput(Type::parse("float64[3,4]"), "y");
        h.setOutputs({h.makeApply(Op::get("MaxAndArgmax", {{"axis", {1}}}), {y})->output(1)});
        Pipeline p = Pipeline::fromJson(json::parse(R"({"format": "passlens.pipeline", "version": 1, "base": "theano",
                            "capabilities": {"GpuMaxAndArgmax": ["float32"]}})"),
                                        "p.json");
        const PipelineRun run = p.run(h, nullptr);
        QCOMPARE(h.opCounts().count("GpuMaxAndArgmax"), std::size_t(0));
        bool reason = false;
        for (const auto& l : liftingReport(h, p.buildContext().caps, run.graphToGpuDecisions))
            reason |= l.op == "MaxAndArgmax{axis=(1,)}" &&
                      QString::fromStdString(l.reason).startsWith("GpuMaxAndArgmax does not support float64");
        QVERIFY(reason);
    }
};

QTEST_GUILESS_MAIN(TestOnnxTheanoOps)
#include "tst_onnx_theano_ops.moc"
