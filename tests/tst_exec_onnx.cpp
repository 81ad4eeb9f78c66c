// The CPU kernels of Onnx<Type> host ops (the ONNX fallbacks), float16 conversions, ONNX
// sequence and optional values, string tensors (Cast, CastLike, StringNormalizer, import, files),
// ONNX element-type attributes, and an ONNX If returning an outer-scope value, imported and run
// before and after the theano pipeline.
#include "ExecTestSupport.h"

#include <passlens/gpu/LiftReasons.h>
#include <passlens/gpu/Lifters.h>
#include <passlens/io/Encoding.h>
#include <passlens/io/GraphJson.h>
#include <passlens/onnx/OnnxTypes.h>

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <unistd.h>

using namespace passlens;
using namespace exectest;

namespace {

// A tensor value_info (graph input or output) with static dims, added to `list`.
void valueInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const char* name, int type,
               std::vector<std::int64_t> dims) {
    auto* vi = list->Add();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    tt->mutable_shape();
    for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// An input of oneNodeModel: a graph input, or with `initializer` an initializer holding `value`.
struct ModelInput {
    std::string name;
    Tensor value;
    bool initializer = false;
};

// An attribute of oneNodeModel's node: INT or STRING.
struct ModelAttr {
    ModelAttr(std::string n, std::int64_t v)
        : name(std::move(n))
        , i(v) {}
    ModelAttr(std::string n, std::string text)
        : name(std::move(n))
        , s(std::move(text)) {}
    std::string name;
    std::int64_t i = 0;
    std::string s;
};

// A model (opset `opset`) of one `op` node over `ins`, with its output "result" of `outType` and
// `outDims`; initializers as raw_data, so every dtype keeps its exact bits.
onnx::ModelProto oneNodeModel(const std::string& op, int opset, const std::vector<ModelInput>& ins,
                              const std::vector<ModelAttr>& attrs, DType outType, const Shape& outDims) {
    onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(opset);
    auto* g = m.mutable_graph();
    g->set_name(op);
    auto* n = g->add_node();
    n->set_op_type(op);
    for (const ModelInput& in : ins) {
        n->add_input(in.name);
        if (!in.initializer) {
            valueInfo(g->mutable_input(), in.name.c_str(), onnxTypeOf(in.value.dtype()), in.value.shape());
            continue;
        }
        auto* t = g->add_initializer();
        t->set_name(in.name);
        t->set_data_type(onnxTypeOf(in.value.dtype()));
        for (auto d : in.value.shape()) t->add_dims(d);
        t->set_raw_data(std::string(static_cast<const char*>(in.value.rawData()),
                                    static_cast<std::size_t>(in.value.numel()) * dtypeSize(in.value.dtype())));
    }
    for (const ModelAttr& a : attrs) {
        auto* at = n->add_attribute();
        at->set_name(a.name);
        if (a.s.empty()) {
            at->set_type(onnx::AttributeProto::INT);
            at->set_i(a.i);
        } else {
            at->set_type(onnx::AttributeProto::STRING);
            at->set_s(a.s);
        }
    }
    n->add_output("result");
    valueInfo(g->mutable_output(), "result", onnxTypeOf(outType), outDims);
    return m;
}

// oneNodeModel's output after `pipeline` ("none", "theano", "cleanup") on the CPU, the graph
// inputs of `ins` bound in order; `folded` tells whether the pipeline made it a constant.
Tensor runOneNode(const onnx::ModelProto& m, const std::vector<ModelInput>& ins, const std::string& pipeline,
                  bool* folded = nullptr) {
    LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), "one-node.onnx", ".");
    Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
    std::vector<Tensor> bound;
    for (const ModelInput& in : ins)
        if (!in.initializer) bound.push_back(in.value);
    if (folded) *folded = lg.graph->outputs()[0]->isConstant();
    return Executor(*lg.graph, ExecOptions{DeviceChoice::Cpu}).run(bound)[0];
}

// The elements of an integer or bool tensor as their 64-bit patterns (signed values sign-extended).
std::vector<std::uint64_t> bitsOf(const Tensor& t) {
    std::vector<std::uint64_t> v;
    visitDType(t.dtype(), "bitsOf", [&](auto z) {
        using T = decltype(z);
        if constexpr (std::is_integral_v<T>)
            for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<std::uint64_t>(t.data<T>()[i]));
    });
    return v;
}

template <class T> Tensor vec(DType dt, const std::vector<T>& v) {
    return Tensor::fromBytes(dt, {static_cast<std::int64_t>(v.size())}, v.data());
}

template <class T> Tensor scalarOf(DType dt, T v) { return Tensor::fromBytes(dt, {}, &v); }

} // namespace

class TestExecOnnx : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { (void)rng(); }

    // ------------------------------------------------------------------ ONNX fallbacks
    // TopKOp (OnnxTopK's kernel too) against hand-worked lines (ties lower index first, NaN
    // above every number, -0 and 0 equal, k = 0, k = the axis length) and, on random data
    // with many ties in every dtype, against each element's rank counted directly.
    void topKValues() {
        auto topk = [](Harness& h, Variable* x, std::int64_t k, std::int64_t axis, json extra = json::object()) {
            extra["axis"] = axis;
            Variable* kv = h.constant(ints(DType::Int64, {}, {static_cast<double>(k)}));
            return h.g.makeApply(Op::get("TopKOp", extra), {x, kv})->outputs();
        };
        {
            Harness h;
            Variable* x = h.input(ints(DType::Float32, {2, 6}, {3, 1, 3, NAN, -0.0, 0.0, 5, 5, 5, 5, 5, 5}));
            std::vector<Variable*> outs;
            for (std::int64_t k : {4, -4, 0, 6, -6})
                for (Variable* v : topk(h, x, k, 1)) outs.push_back(v);
            const auto r = h.run(outs);
            QCOMPARE(r[0].shape(), (Shape{2, 4}));
            VERIFY_CLOSE(r[0], (std::vector<double>{NAN, 3, 3, 1, 5, 5, 5, 5}));
            QCOMPARE(r[1].dtype(), DType::Int64);
            QCOMPARE(r[1].toDoubles(), (std::vector<double>{3, 0, 2, 1, 0, 1, 2, 3}));
            VERIFY_CLOSE(r[2], (std::vector<double>{-0.0, 0, 1, 3, 5, 5, 5, 5}));
            QVERIFY(std::signbit(r[2].at(0)) && !std::signbit(r[2].at(1)));
            QCOMPARE(r[3].toDoubles(), (std::vector<double>{4, 5, 1, 0, 0, 1, 2, 3}));
            QCOMPARE(r[4].shape(), (Shape{2, 0}));
            QCOMPARE(r[5].shape(), (Shape{2, 0}));
            QCOMPARE(r[7].toDoubles(), (std::vector<double>{3, 0, 2, 1, 4, 5, 0, 1, 2, 3, 4, 5}));
            QCOMPARE(r[9].toDoubles(), (std::vector<double>{4, 5, 1, 0, 2, 3, 0, 1, 2, 3, 4, 5}));
        }
        // ranks counted directly: element a of a line comes before b when more extreme, or equal
        // with a lower index; NaN is above every number
        auto reference = [](const Tensor& x, int axis, std::int64_t k) {
            const auto v = x.toDoubles();
            std::int64_t outer = 1, n = x.dim(axis), inner = 1;
            for (int a = 0; a < x.ndim(); ++a)
                if (a != axis) (a < axis ? outer : inner) *= x.dim(a);
            const std::int64_t kk = std::abs(k);
            std::vector<double> vals(static_cast<std::size_t>(outer * kk * inner)), idx(vals.size());
            auto above = [&](double p, double q) { return std::isnan(p) ? !std::isnan(q) : !std::isnan(q) && p > q; };
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t i = 0; i < inner; ++i)
                    for (std::int64_t a = 0; a < n; ++a) {
                        const double va = v[static_cast<std::size_t>((o * n + a) * inner + i)];
                        std::int64_t rank = 0;
                        for (std::int64_t b = 0; b < n; ++b) {
                            const double vb = v[static_cast<std::size_t>((o * n + b) * inner + i)];
                            const bool tie = !above(va, vb) && !above(vb, va);
                            rank += (k >= 0 ? above(vb, va) : above(va, vb)) || (tie && b < a);
                        }
                        if (rank >= kk) continue;
                        const auto e = static_cast<std::size_t>((o * kk + rank) * inner + i);
                        vals[e] = va;
                        idx[e] = static_cast<double>(a);
                    }
            return std::pair{vals, idx};
        };
        for (DType dt : {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32, DType::UInt32,
                         DType::Int64, DType::UInt64, DType::Float32, DType::Float64}) {
            Harness h;
            const Tensor xt = randn(dt, {3, 7, 4}, 0, 5); // 0..5: many ties
            Variable* x = h.input(xt);
            const std::vector<std::pair<int, std::int64_t>> cases = {{1, 3}, {1, -3}, {0, 3}, {2, -4}, {1, 7}, {-1, 1}};
            std::vector<Variable*> outs;
            for (auto [axis, k] : cases)
                for (Variable* v : topk(h, x, k, axis)) outs.push_back(v);
            Variable* i32 = topk(h, x, -2, 1, {{"idx_dtype", "int32"}, {"return_values", false}})[0];
            Variable* vOnly = topk(h, x, 2, 2, {{"return_indices", false}})[0];
            outs.push_back(i32);
            outs.push_back(vOnly);
            const auto r = h.run(outs);
            const QString what = QString::fromLatin1(dtypeName(dt).data());
            for (std::size_t c = 0; c < cases.size(); ++c) {
                const int axis = cases[c].first < 0 ? cases[c].first + 3 : cases[c].first;
                const auto [vals, idx] = reference(xt, axis, cases[c].second);
                QVERIFY2(r[2 * c].dtype() == dt, qPrintable(what));
                QVERIFY2(r[2 * c].toDoubles() == vals, qPrintable(what + QString(" case %1 values").arg(c)));
                QVERIFY2(r[2 * c + 1].toDoubles() == idx, qPrintable(what + QString(" case %1 indices").arg(c)));
            }
            QCOMPARE(r[2 * cases.size()].dtype(), DType::Int32);
            QCOMPARE(r[2 * cases.size()].toDoubles(), reference(xt, 1, -2).second);
            QCOMPARE(r[2 * cases.size() + 1].toDoubles(), reference(xt, 2, 2).first);
        }
        // OnnxTopK is the same kernel: largest = 0 is TopKOp's negative k; K out of range refused
        Harness h;
        const Tensor xt = randn(DType::Float32, {4, 6}, 0, 3);
        Variable* x = h.input(xt);
        Variable* kIn = h.constant(ints(DType::Int64, {1}, {3}));
        Apply* onnx = h.g.makeApply(Op::get("OnnxTopK", {{"axis", 0}, {"largest", 0}}), {x, kIn},
                                    std::vector<Type>{Type::parse("float32[3,6]"), Type::parse("int64[3,6]")});
        const auto mine = topk(h, x, -3, 0);
        const auto r = h.run({onnx->output(0), onnx->output(1), mine[0], mine[1]});
        QCOMPARE(r[0].toDoubles(), r[2].toDoubles());
        QCOMPARE(r[1].toDoubles(), r[3].toDoubles());
        QCOMPARE(r[1].toDoubles(), reference(xt, 0, -3).second);
        Harness bad;
        Variable* bx = bad.input(xt);
        Apply* big = bad.g.makeApply(Op::get("TopKOp", {{"axis", 1}}), {bx, bad.input(ints(DType::Int64, {}, {-7}))});
        const QString e = errorOf([&] { (void)bad.run(big->outputs()); });
        QVERIFY2(e.contains("TopKOp{axis=1, sorted=True}") && e.contains("k -7 is larger than axis 1 of float32[4,6]"),
                 qPrintable(e));
    }

    void onnxKernels() {
        Harness h;
        Tensor x = randn(DType::Float32, {1, 2, 5});
        Variable* vx = h.input(x);
        auto onnx = [&](const std::string& t, json attrs, std::vector<Variable*> ins, const std::string& type) {
            return h.g.makeApply(Op::get("Onnx" + t, attrs), ins, std::vector<Type>{Type::parse(type)})->output(0);
        };
        Variable* pad = onnx("Pad", {{"mode", "reflect"}},
                             {vx, h.constant(ints(DType::Int64, {6}, {0, 0, 2, 0, 0, 3}))}, "float32[*]");
        Variable* sl = onnx("Slice", json::object(),
                            {vx, h.constant(ints(DType::Int64, {1}, {4})), h.constant(ints(DType::Int64, {1}, {-10})),
                             h.constant(ints(DType::Int64, {1}, {2})), h.constant(ints(DType::Int64, {1}, {-2}))},
                            "float32[*]");
        Variable* rm = onnx("ReduceMean", {{"axes", {2}}, {"keepdims", 1}}, {vx}, "float32[*]");
        Variable* tr = onnx("Transpose", {{"perm", {2, 0, 1}}}, {vx}, "float32[*]");
        Variable* ad =
            onnx("Add", json::object(), {vx, h.constant(ints(DType::Float32, {5}, {1, 2, 3, 4, 5}))}, "float32[*]");
        Variable* rz =
            onnx("Resize",
                 {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}},
                 {vx, h.constant(ints(DType::Float32, {0}, {})), h.constant(ints(DType::Float32, {3}, {1, 1, 2}))},
                 "float32[*]");
        Variable* rl = onnx("Resize", {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}},
                            {vx, h.constant(ints(DType::Float32, {0}, {})), h.constant(ints(DType::Float32, {0}, {})),
                             h.constant(ints(DType::Int64, {3}, {1, 2, 9}))},
                            "float32[*]");
        auto outs = h.run({pad, sl, rm, tr, ad, rz, rl});
        const auto X = x.toDoubles();
        auto at = [&](int c, int k) { return X[static_cast<std::size_t>(c * 5 + k)]; };
        std::vector<double> wp, ws, wm, wt, wa, wz, wl;
        for (int c = 0; c < 2; ++c) {
            for (int k : {2, 1, 0, 1, 2, 3, 4, 3, 2, 1}) wp.push_back(at(c, k)); // reflect 2 left, 3 right
            for (int k : {4, 2, 0}) ws.push_back(at(c, k));
            double s = 0;
            for (int k = 0; k < 5; ++k) {
                s += at(c, k);
                wa.push_back(static_cast<float>(at(c, k) + k + 1));
            }
            wm.push_back(s / 5);
            for (int k = 0; k < 10; ++k) wz.push_back(at(c, k / 2));
            for (int k = 0; k < 9; ++k) {
                const double p = k * 4.0 / 8.0;
                const int i0 = static_cast<int>(std::floor(p));
                const int i1 = std::min(i0 + 1, 4);
                wl.push_back(at(c, i0) * (1 - (p - i0)) + at(c, i1) * (p - i0));
            }
        }
        for (int k = 0; k < 5; ++k)
            for (int c = 0; c < 2; ++c) wt.push_back(at(c, k));
        QCOMPARE(outs[0].shape(), (Shape{1, 2, 10}));
        VERIFY_CLOSE(outs[0], wp, 0, 0);
        QCOMPARE(outs[1].shape(), (Shape{1, 2, 3}));
        VERIFY_CLOSE(outs[1], ws, 0, 0);
        QCOMPARE(outs[2].shape(), (Shape{1, 2, 1}));
        VERIFY_CLOSE(outs[2], wm, 1e-6, 1e-6);
        QCOMPARE(outs[3].shape(), (Shape{5, 1, 2}));
        VERIFY_CLOSE(outs[3], wt, 0, 0);
        VERIFY_CLOSE(outs[4], wa, 0, 0);
        QCOMPARE(outs[5].shape(), (Shape{1, 2, 10}));
        VERIFY_CLOSE(outs[5], wz, 0, 0);
        QCOMPARE(outs[6].shape(), (Shape{1, 2, 9}));
        VERIFY_CLOSE(outs[6], wl, 1e-6, 1e-6);
    }

    // float16 from and to other dtypes (convertElements): exact widening, round to nearest even,
    // subnormals, overflow to infinity, NaN and signed zero.
    void float16Conversions() {
        const std::vector<std::uint16_t> half = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x7C00, 0xFC00, 0x8000};
        std::vector<double> wide(half.size());
        convertElements(half.data(), DType::Float16, wide.data(), DType::Float64,
                        static_cast<std::int64_t>(half.size()));
        const std::vector<double> want = {1.0,      -2.0,      65504.0, std::ldexp(1.0, -24), std::ldexp(1023.0, -24),
                                          INFINITY, -INFINITY, -0.0};
        for (std::size_t i = 0; i < want.size(); ++i) QCOMPARE(wide[i], want[i]);
        QVERIFY(std::signbit(wide[7]));
        const std::uint16_t nanBits = 0x7E00;
        double nan = 0;
        convertElements(&nanBits, DType::Float16, &nan, DType::Float64, 1);
        QVERIFY(std::isnan(nan));
        const std::vector<float> f = {65520.0f,
                                      65519.0f,
                                      1.0f + std::ldexp(1.0f, -11),
                                      1.0f + 3 * std::ldexp(1.0f, -11),
                                      std::ldexp(1.0f, -25),
                                      3 * std::ldexp(1.0f, -25),
                                      -1e-9f,
                                      NAN,
                                      -3.0f};
        std::vector<std::uint16_t> h(f.size());
        convertElements(f.data(), DType::Float32, h.data(), DType::Float16, static_cast<std::int64_t>(f.size()));
        const std::vector<std::uint16_t> wantBits = {0x7C00, 0x7BFF, 0x3C00, 0x3C02, 0x0000,
                                                     0x0002, 0x8000, 0x7E00, 0xC200};
        for (std::size_t i = 0; i < wantBits.size(); ++i) QCOMPARE(h[i], wantBits[i]);
        const std::int64_t big = 70000;
        std::uint16_t hb = 0;
        convertElements(&big, DType::Int64, &hb, DType::Float16, 1);
        QCOMPARE(hb, std::uint16_t(0x7C00));
    }

    // float64 to float16 rounds once (not through float32, whose rounding would land on a tie):
    // 1 + 2^-11 + 2^-40 is above the half-way point between 1 and 1 + 2^-10.
    void float16FromDoubleRoundsOnce() {
        const std::vector<double> d = {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                                       -(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)),
                                       1.0 + std::ldexp(1.0, -11),
                                       65519.99,
                                       1e300,
                                       std::ldexp(1.0, -25) + std::ldexp(1.0, -60)};
        std::vector<std::uint16_t> h(d.size());
        convertElements(d.data(), DType::Float64, h.data(), DType::Float16, static_cast<std::int64_t>(d.size()));
        const std::vector<std::uint16_t> want = {0x3C01, 0xBC01, 0x3C00, 0x7BFF, 0x7C00, 0x0001};
        for (std::size_t i = 0; i < want.size(); ++i) QCOMPARE(h[i], want[i]);
        // constant folding stores float16 the same way
        QCOMPARE(Tensor::fromConstant(*TensorData::fromDoubles(DType::Float16, {6}, d)).toDoubles(),
                 (std::vector<double>{1.0 + std::ldexp(1.0, -10), -(1.0 + std::ldexp(1.0, -10)), 1.0, 65504.0, INFINITY,
                                      std::ldexp(1.0, -24)}));
    }

    // ONNX sequence and optional values (Tensor::sequence / optional, Type::sequence / optional):
    // the Sequence* and Optional* kernels, SplitToSequence, ConcatFromSequence, a sequence graph
    // input, the file round trip, and the messages for ill-typed values.
    void onnxSequences() {
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2,4]"), "x");
        Variable* s = g.addInput(Type::parse("seq(float32[?,?])"), "s");
        auto onnx = [&](const std::string& t, json attrs, std::vector<Variable*> ins, const std::string& type) {
            return g.makeApply(Op::get("Onnx" + t, attrs), ins, std::vector<Type>{Type::parse(type)})->output(0);
        };
        auto i64 = [&](Shape shape, std::vector<double> v) {
            return g.addConstant(Tensor::fromDoubles(DType::Int64, std::move(shape), v).toTensorData());
        };
        // x split along axis 1 into [2,1] and [2,3]; s's item 0 inserted in front
        Variable* parts = onnx("SplitToSequence", {{"axis", 1}}, {x, i64({2}, {1, 3})}, "seq(float32[2,?])");
        Variable* ins = onnx("SequenceAt", json::object(), {s, i64({}, {0})}, "float32[?,?]");
        Variable* seq = onnx("SequenceInsert", json::object(), {parts, ins, i64({}, {0})}, "seq(float32[?,?])");
        Variable* len = onnx("SequenceLength", json::object(), {seq}, "int64[]");
        Variable* last = onnx("SequenceAt", json::object(), {seq, i64({}, {-1})}, "float32[?,?]");
        Variable* cat = onnx("ConcatFromSequence", {{"axis", 1}}, {seq}, "float32[2,?]");
        Variable* erased = onnx("SequenceErase", json::object(), {seq, i64({}, {0})}, "seq(float32[?,?])");
        Variable* stacked =
            onnx("ConcatFromSequence", {{"axis", 0}, {"new_axis", 1}},
                 {onnx("SplitToSequence", {{"axis", 0}, {"keepdims", 0}}, {x}, "seq(float32[4])")}, "float32[2,4]");
        Variable* opt = onnx("Optional", json::object(), {x}, "optional(float32[2,4])");
        Variable* has = onnx("OptionalHasElement", json::object(), {opt}, "bool[]");
        Variable* got = onnx("OptionalGetElement", json::object(), {opt}, "float32[2,4]");
        g.setOutputs({len, last, cat, erased, stacked, has, got, seq});
        Executor ex(g, ExecOptions{DeviceChoice::Cpu, true});
        const Tensor xv = Tensor::fromDoubles(DType::Float32, {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
        const Tensor item = Tensor::fromDoubles(DType::Float32, {2, 1}, {-1, -2});
        const Tensor sv = Tensor::sequence({item});
        const auto outs = ex.run({xv, sv});
        QCOMPARE(outs[0].intAt(0), std::int64_t(3));
        QCOMPARE(outs[1].shape(), (Shape{2, 3}));
        VERIFY_CLOSE(outs[1], (std::vector<double>{1, 2, 3, 5, 6, 7}), 0, 0);
        QCOMPARE(outs[2].shape(), (Shape{2, 5}));
        VERIFY_CLOSE(outs[2], (std::vector<double>{-1, 0, 1, 2, 3, -2, 4, 5, 6, 7}), 0, 0);
        QVERIFY(outs[3].kind() == Type::Kind::Sequence);
        QCOMPARE(outs[3].items().size(), std::size_t(2));
        QCOMPARE(outs[3].items()[0].shape(), (Shape{2, 1}));
        VERIFY_CLOSE(outs[3].items()[0], (std::vector<double>{0, 4}), 0, 0);
        VERIFY_CLOSE(outs[4], (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}), 0, 0);
        QCOMPARE(outs[5].intAt(0), std::int64_t(1));
        QVERIFY(outs[6].storage() == xv.storage()); // the optional's value is x itself
        QCOMPARE(QString::fromStdString(outs[7].typeStr()), QString("seq(float32[2,1], float32[2,1], float32[2,3])"));

        // written and read back as a SequenceProto; an empty optional as an OptionalProto
        const auto dir =
            std::filesystem::temp_directory_path() / ("passlens_tst_exec_seq_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        const std::filesystem::path file = dir / "output_0.pb";
        writeTensorProto(outs[7], file);
        const Tensor back = readValueProto(file, Type::parse("seq(float32[?,?])"));
        QCOMPARE(allCloseMismatch({back}, {outs[7]}, 0, 0), std::string());
        QVERIFY(!allCloseMismatch({outs[3]}, {outs[7]}, 0, 0).empty());
        writeTensorProto(Tensor::optional(std::nullopt), file);
        const Tensor none = readValueProto(file, Type::parse("optional(float32[2])"));
        QVERIFY(none.kind() == Type::Kind::Optional);
        QVERIFY(none.items().empty());
        writeTensorProto(Tensor::optional(xv), file);
        QVERIFY(readValueProto(file, Type::parse("optional(float32[2,4])")).items().at(0).storage() != nullptr);
        const QString bad = errorOf([&] { (void)readValueProto(file, Type::parse("optional(seq(float32[2,4]))")); });
        QVERIFY2(bad.contains("output_0.pb") && bad.contains("expected optional(seq(float32[2,4]))"), qPrintable(bad));
        std::filesystem::remove_all(dir);

        // ill-typed values: named, never a crash
        QString err = errorOf([&] { ex.run({xv, xv}); });
        QVERIFY2(err.contains("input 1 's'") && err.contains("expected seq(float32[?,?])"), qPrintable(err));
        err = errorOf([&] { ex.run({sv, sv}); });
        QVERIFY2(err.contains("input 0 'x'") && err.contains("seq(float32[2,1]), expected float32[2,4]"),
                 qPrintable(err));
        err = errorOf([&] { ex.run({xv, Tensor::sequence({})}); });
        QVERIFY2(err.contains("OnnxSequenceAt") && err.contains("position 0 is out of range for a sequence of 0 items"),
                 qPrintable(err));
        err = errorOf([&] { ex.run({xv, Tensor::sequence({Tensor::fromDoubles(DType::Int64, {2, 1}, {1, 2})})}); });
        QVERIFY2(err.contains("item 0 with dtype int64"), qPrintable(err));

        // a sequence reaching a tensor op through an untyped (float32[*]) value is refused by name
        FunctionGraph g2;
        Variable* x2 = g2.addInput(Type::parse("float32[3]"), "x");
        Variable* sq =
            g2.makeApply(Op::get("OnnxSequenceConstruct"), {x2, x2}, std::vector<Type>{Type::parse("float32[*]")})
                ->output(0);
        g2.setOutputs(
            {g2.makeApply(Op::get("OnnxRelu"), {sq}, std::vector<Type>{Type::parse("float32[*]")})->output(0)});
        Executor ex2(g2, ExecOptions{DeviceChoice::Cpu});
        err = errorOf([&] { ex2.run({Tensor::fromDoubles(DType::Float32, {3}, {1, 2, 3})}); });
        QVERIFY2(err.contains("OnnxRelu") &&
                     err.contains("input 0 is seq(float32[3], float32[3]), the op takes tensors"),
                 qPrintable(err));
    }

    void onnxElementTypeAttributes() {
        // `to` / `dtype` attributes read through core's ONNX element-type table (dtypeFromOnnx)
        Harness h;
        Variable* vx = h.input(ints(DType::Float32, {3}, {1.5, 2.5, 7}));
        auto onnx = [&](const std::string& t, json attrs, const std::string& type) {
            return h.g.makeApply(Op::get("Onnx" + t, attrs), {vx}, std::vector<Type>{Type::parse(type)})->output(0);
        };
        Variable* u32 = onnx("Cast", {{"to", 12}}, "uint32[3]");
        Variable* f64 = onnx("Cast", {{"to", 11}}, "float64[3]");
        auto outs = h.run({u32, f64});
        QCOMPARE(outs[0].dtype(), DType::UInt32);
        VERIFY_CLOSE(outs[0], (std::vector<double>{1, 2, 7}), 0, 0);
        QCOMPARE(outs[1].dtype(), DType::Float64);
        VERIFY_CLOSE(outs[1], (std::vector<double>{1.5, 2.5, 7}), 0, 0);
        // complex64 (14) is an ONNX type PassLens knows; the CPU backend refuses it by name
        Harness h2;
        Variable* v2 = h2.input(ints(DType::Float32, {3}, {1, 2, 3}));
        Variable* c64 =
            h2.g.makeApply(Op::get("OnnxCast", {{"to", 14}}), {v2}, std::vector<Type>{Type::parse("complex64[3]")})
                ->output(0);
        const QString err = errorOf([&] { h2.run({c64}); });
        QVERIFY2(err.contains("complex64") && err.contains("not supported"), qPrintable(err));
    }

    // ------------------------------------------------------------------ string tensors
    static std::vector<std::string> stringsOf(const Tensor& t) {
        const auto* p = t.numel() ? t.data<std::string>() : nullptr;
        return std::vector<std::string>(p, p + t.numel());
    }

    // ONNX's Cast from and to STRING (Operators.md: decimal and scientific text, "NaN", "INF",
    // "+INF", "-INF" in any case; numbers written plainly), CastLike, and strings refused by a
    // kernel that takes none.
    void onnxStringCasts() {
        Harness h;
        Variable* vs = h.input(
            Tensor::fromStrings({9}, {"1e-3", "NaN", "INF", "-inf", " 2.5 ", "+INF", "1E8", "-0", "3.4028235e+38"}));
        Variable* vi = h.input(Tensor::fromStrings({3}, {"9007199254740993", "-7", "100.5"}));
        const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
        Variable* vf = h.input(Tensor::fromDoubles(DType::Float32, {9},
                                                   {0.1, 1e-5, 100.0, 1.5e16, nan, -inf, 0.9767611, -0.0, 123456.789}));
        Variable* vd = h.input(Tensor::fromDoubles(DType::Float64, {2}, {0.1, 1.0 / 3}));
        Variable* vh = h.input(Tensor::fromDoubles(DType::Float16, {2}, {0.1, 65504}));
        Variable* vn = h.input(Tensor::fromDoubles(DType::Int32, {2}, {-3, 7}));
        Variable* vb = h.input(Tensor::fromDoubles(DType::Bool, {2}, {1, 0}));
        Variable* like = h.input(Tensor::fromStrings({1}, {"x"}));
        auto cast = [&](Variable* x, int to, const std::string& type) {
            return h.g.makeApply(Op::get("OnnxCast", {{"to", to}}), {x}, std::vector<Type>{Type::parse(type)})
                ->output(0);
        };
        Variable* toF = cast(vs, 1, "float32[9]");
        Variable* toI = cast(vi, 7, "int64[3]");
        Variable* fS = cast(vf, 8, "string[9]");
        Variable* dS = cast(vd, 8, "string[2]");
        Variable* hS = cast(vh, 8, "string[2]");
        Variable* nS = cast(vn, 8, "string[2]");
        Variable* bS = cast(vb, 8, "string[2]");
        Variable* cl =
            h.g.makeApply(Op::get("OnnxCastLike"), {vn, like}, std::vector<Type>{Type::parse("string[2]")})->output(0);
        const auto outs = h.run({toF, toI, fS, dS, hS, nS, bS, cl});
        QCOMPARE(outs[0].dtype(), DType::Float32);
        const float* f = outs[0].data<float>();
        QCOMPARE(f[0], 1e-3f);
        QVERIFY(std::isnan(f[1]));
        QCOMPARE(f[2], inf);
        QCOMPARE(f[3], -inf);
        QCOMPARE(f[4], 2.5f);
        QCOMPARE(f[5], inf);
        QCOMPARE(f[6], 1e8f);
        QVERIFY(f[7] == 0.0f && std::signbit(f[7]));
        QCOMPARE(f[8], std::numeric_limits<float>::max());
        const std::int64_t* i = outs[1].data<std::int64_t>();
        QCOMPARE(i[0], std::int64_t(9007199254740993)); // exact beyond 2^53
        QCOMPARE(i[1], std::int64_t(-7));
        QCOMPARE(i[2], std::int64_t(100)); // "100.5" to an integer: 100 (the spec's example)
        QCOMPARE(stringsOf(outs[2]), (std::vector<std::string>{"0.1", "1e-05", "100.0", "1.5e+16", "NaN", "-INF",
                                                               "0.9767611", "-0.0", "123456.79"}));
        QCOMPARE(stringsOf(outs[3]), (std::vector<std::string>{"0.1", "0.3333333333333333"}));
        QCOMPARE(stringsOf(outs[4]), (std::vector<std::string>{"0.1", "65500.0"})); // float16's shortest digits
        QCOMPARE(stringsOf(outs[5]), (std::vector<std::string>{"-3", "7"}));
        QCOMPARE(stringsOf(outs[6]), (std::vector<std::string>{"1", "0"}));
        QCOMPARE(stringsOf(outs[7]), (std::vector<std::string>{"-3", "7"}));
        // text that is no number is refused with the text quoted
        Harness h2;
        Variable* bad = h2.input(Tensor::fromStrings({2}, {"1", "Hello"}));
        Variable* badF =
            h2.g.makeApply(Op::get("OnnxCast", {{"to", 1}}), {bad}, std::vector<Type>{Type::parse("float32[2]")})
                ->output(0);
        QString err = errorOf([&] { h2.run({badF}); });
        QVERIFY2(err.contains("cannot read \"Hello\" as a number"), qPrintable(err));
        // a kernel that takes no strings never sees them
        Harness h3;
        Variable* s3 = h3.input(Tensor::fromStrings({2}, {"a", "b"}));
        Variable* tr =
            h3.g.makeApply(Op::get("OnnxTranspose"), {s3}, std::vector<Type>{Type::parse("string[2]")})->output(0);
        err = errorOf([&] { h3.run({tr}); });
        QVERIFY2(err.contains("input 0 is string[2], the op's kernel takes no string tensors"), qPrintable(err));
    }

    // ONNX's StringNormalizer: stopwords (case-insensitive unless is_case_sensitive), then
    // case_change_action; an empty result is [1] / [1, 1] holding "".
    void onnxStringNormalizer() {
        Harness h;
        Variable* x =
            h.input(Tensor::fromStrings({5}, {"Monday", "tuesday", "MONDAY", "wednesday", "\xc3\xa9t\xc3\xa9"}));
        Variable* x2 = h.input(Tensor::fromStrings({1, 2}, {"monday", "MONDAY"}));
        auto norm = [&](Variable* in, json attrs, const std::string& type) {
            return h.g.makeApply(Op::get("OnnxStringNormalizer", attrs), {in}, std::vector<Type>{Type::parse(type)})
                ->output(0);
        };
        const json stop = json::array({"monday"});
        Variable* upper = norm(x, {{"case_change_action", "UPPER"}, {"stopwords", stop}}, "string[?]");
        Variable* lowerSensitive =
            norm(x, {{"case_change_action", "LOWER"}, {"is_case_sensitive", 1}, {"stopwords", stop}}, "string[?]");
        Variable* none = norm(x, json::object(), "string[?]");
        Variable* empty = norm(x2, {{"case_change_action", "UPPER"}, {"stopwords", stop}}, "string[1,?]");
        const auto outs = h.run({upper, lowerSensitive, none, empty});
        QCOMPARE(stringsOf(outs[0]), (std::vector<std::string>{"TUESDAY", "WEDNESDAY", "\xc3\x89T\xc3\x89"}));
        QCOMPARE(outs[0].shape(), Shape({3}));
        QCOMPARE(stringsOf(outs[1]),
                 (std::vector<std::string>{"monday", "tuesday", "monday", "wednesday", "\xc3\xa9t\xc3\xa9"}));
        QCOMPARE(stringsOf(outs[2]), stringsOf(h.values[0]));
        QCOMPARE(outs[3].shape(), Shape({1, 1}));
        QCOMPARE(stringsOf(outs[3]), (std::vector<std::string>{""}));
        Harness h2;
        Variable* bad = h2.input(Tensor::fromStrings({2, 2}, {"a", "b", "c", "d"}));
        Variable* y =
            h2.g.makeApply(Op::get("OnnxStringNormalizer"), {bad}, std::vector<Type>{Type::parse("string[?]")})
                ->output(0);
        const QString err = errorOf([&] { h2.run({y}); });
        QVERIFY2(err.contains("must have shape [C] or [1, C], got [2,2]"), qPrintable(err));
    }

    // A model with a STRING initializer (string_data) imported, run, written as graph JSON and
    // read back; string tensors through TensorProto files; string values never lift to a GPU.
    void onnxStringValues() {
        onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        auto* g = m.mutable_graph();
        g->set_name("strings");
        auto* init = g->add_initializer();
        init->set_name("s");
        init->set_data_type(onnx::TensorProto::STRING);
        init->add_dims(3);
        for (const char* v : {"1.5", "-INF", "a\"b"}) init->add_string_data(v);
        auto* n = g->add_node();
        n->set_op_type("Identity");
        n->add_input("s");
        n->add_output("y");
        auto* out = g->add_output();
        out->set_name("y");
        out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
        out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
        LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), "strings.onnx", ".");
        QCOMPARE(lg.graph->constants().size(), std::size_t(1));
        const TensorData& c = *lg.graph->constants()[0]->constant();
        QCOMPARE(c.dtype, DType::String);
        QCOMPARE(c.strings(), (std::vector<std::string>{"1.5", "-INF", "a\"b"}));
        QCOMPARE(c.shortValue(), std::string("{\"1.5\", \"-INF\", \"a\\\"b\"}"));
        QCOMPARE(lg.graph->outputs()[0]->type().str(), std::string("string[3]"));
        auto outs = Executor(*lg.graph, ExecOptions{DeviceChoice::Cpu}).run({});
        QCOMPARE(stringsOf(outs[0]), (std::vector<std::string>{"1.5", "-INF", "a\"b"}));
        // graph JSON: the constant as its encoded elements, read back equal
        const std::string text = writeGraphJson(*lg.graph).dump();
        LoadedGraph back = readGraphJsonText(text, "strings.json", ".");
        QCOMPARE(back.graph->constants()[0]->constant()->strings(), c.strings());
        // a truncated encoding is refused with the place named
        auto doc = nlohmann::json::parse(text);
        auto& v = doc["constants"][0]["value"]["base64"];
        v = base64Encode(base64Decode(v.get<std::string>()).substr(0, 33)); // the last element cut short
        const QString err = errorOf([&] { readGraphJson(doc, "bad.json", "."); });
        QVERIFY2(err.contains("bad.json") && err.contains("constants[0]") && err.contains("runs past the end"),
                 qPrintable(err));
        // TensorProto files: string_data written and read back
        const auto dir = std::filesystem::temp_directory_path() / ("passlens_strings_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        writeTensorProto(outs[0], dir / "output_0.pb", "y");
        const Tensor r = readValueProto(dir / "output_0.pb", Type::parse("string[3]"));
        std::filesystem::remove_all(dir);
        QCOMPARE(r.dtype(), DType::String);
        QCOMPARE(stringsOf(r), stringsOf(outs[0]));
        QVERIFY(allCloseMismatch({r}, {outs[0]}, 1e-3, 1e-7).empty());
        const Tensor other = Tensor::fromStrings({3}, {"1.5", "-INF", "ab"});
        QCOMPARE(allCloseMismatch({other}, {outs[0]}, 1e-3, 1e-7),
                 std::string("output 0: element 2: \"ab\" vs \"a\\\"b\""));
        QVERIFY(!compareOutputs({other}, {outs[0]}).within(1e9));
        // GPU lifting: string values stay on the host, with the reason
        const Apply* id = lg.graph->outputs()[0]->owner();
        QVERIFY(id);
        QCOMPARE(complexInputReason(*id).value_or(""), std::string("string value: string tensors stay on the host"));
        QVERIFY(!moveToGpu(lg.graph->outputs()[0]));
        QVERIFY2(errorOf([] {
                     Tensor::empty(DType::String, {2}, nullptr, MemoryKind::Device);
                 }).contains("string tensors stay on the host"),
                 "device string tensor");
    }

    // uint64 Div, Mod, Greater, Max and Sub of values at and above 2^63, as NumPy computes them
    // (Python integers below): on inputs (the CPU engine's integer mode) and on initializers,
    // which the theano and cleanup pipelines fold into constants.
    void onnxUInt64Arithmetic() {
        const std::vector<std::uint64_t> xv = {~0ull, (1ull << 63) + 6, 1ull << 63, 10, (1ull << 63) + 5};
        const std::vector<std::uint64_t> yv = {2, 3, (1ull << 63) + 1, 1ull << 63, 1ull << 62};
        const std::vector<std::pair<const char*, std::vector<std::uint64_t>>> want = {
            {"Div", {9223372036854775807ull, 3074457345618258604ull, 0, 0, 2}},
            {"Mod", {1, 2, 9223372036854775808ull, 10, 5}},
            {"Greater", {1, 1, 0, 0, 1}},
            {"Max",
             {18446744073709551615ull, 9223372036854775814ull, 9223372036854775809ull, 9223372036854775808ull,
              9223372036854775813ull}},
            {"Sub", {3, 9223372036854775805ull, 1, 9223372036854775798ull, 13835058055282163707ull}}, // y - x
        };
        onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        auto* g = m.mutable_graph();
        g->set_name("uint64");
        for (const char* name : {"x", "y"}) valueInfo(g->mutable_input(), name, onnx::TensorProto::UINT64, {5});
        for (const auto& [name, vals] : {std::pair{"cx", xv}, std::pair{"cy", yv}}) {
            auto* t = g->add_initializer();
            t->set_name(name);
            t->set_data_type(onnx::TensorProto::UINT64);
            t->add_dims(5);
            for (auto v : vals) t->add_uint64_data(v);
        }
        for (const char* prefix : {"", "c"}) {
            for (const auto& [op, vals] : want) {
                auto* n = g->add_node();
                n->set_op_type(op);
                const bool sub = std::string(op) == "Sub";
                n->add_input(std::string(prefix) + (sub ? "y" : "x"));
                n->add_input(std::string(prefix) + (sub ? "x" : "y"));
                n->add_output(std::string(prefix) + op);
                valueInfo(g->mutable_output(), n->output(0).c_str(),
                          op == std::string("Greater") ? onnx::TensorProto::BOOL : onnx::TensorProto::UINT64, {5});
            }
        }
        const Tensor x = Tensor::fromBytes(DType::UInt64, {5}, xv.data());
        const Tensor y = Tensor::fromBytes(DType::UInt64, {5}, yv.data());
        for (const std::string pipeline : {"none", "theano", "cleanup"}) {
            LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), "uint64.onnx", ".");
            Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
            const auto outs = Executor(*lg.graph, ExecOptions{DeviceChoice::Cpu}).run({x, y});
            for (std::size_t k = 0; k < outs.size(); ++k) {
                const auto& [op, vals] = want[k % want.size()];
                const QString where =
                    QString("%1 %2 (%3)").arg(pipeline.c_str()).arg(op).arg(k < want.size() ? "inputs" : "constants");
                std::vector<std::uint64_t> got;
                for (std::int64_t i = 0; i < outs[k].numel(); ++i)
                    got.push_back(outs[k].dtype() == DType::Bool ? outs[k].data<std::uint8_t>()[i]
                                                                 : outs[k].data<std::uint64_t>()[i]);
                QVERIFY2(got == vals, qPrintable(where));
                // the constants' results are folded by the pipelines
                QVERIFY2(lg.graph->outputs()[k]->isConstant() == (pipeline != "none" && k >= want.size()),
                         qPrintable(where + " folded?"));
            }
        }
    }

    // ONNX Clip of int64 and uint64 values and bounds beyond 2^53 (np.clip's values, written out
    // below), the bounds as initializers and as graph inputs, x as a graph input and as an
    // initializer (folded by the theano and cleanup pipelines): integer Clip imports as
    // minimum(maximum(x, min), max), so nothing goes through double.
    void onnxClipIntegersExact() {
        const std::int64_t p62 = std::int64_t(1) << 62;
        const std::vector<std::int64_t> xs = {p62 + 1, p62 + 3, -p62 - 3, -p62 - 1, 5, INT64_MIN, INT64_MAX};
        const std::vector<std::int64_t> wantS = {p62 + 1, p62 + 1, -p62 - 1, -p62 - 1, 5, -p62 - 1, p62 + 1};
        const std::uint64_t p63 = std::uint64_t(1) << 63;
        const std::vector<std::uint64_t> xu = {~0ull, ~0ull - 1, p63 + 1, p63, 3, p63 + 2};
        const std::vector<std::uint64_t> wantU = {~0ull - 1, ~0ull - 1, p63 + 1, p63 + 1, p63 + 1, p63 + 2};
        struct Case {
            DType dt;
            Tensor x, lo, hi;
            std::vector<std::uint64_t> want;
        };
        const std::vector<Case> cases = {
            {DType::Int64, vec(DType::Int64, xs), scalarOf(DType::Int64, -p62 - 1), scalarOf(DType::Int64, p62 + 1),
             std::vector<std::uint64_t>(wantS.begin(), wantS.end())},
            {DType::UInt64, vec(DType::UInt64, xu), scalarOf(DType::UInt64, p63 + 1),
             scalarOf(DType::UInt64, ~0ull - 1), wantU},
        };
        for (const Case& k : cases)
            for (bool xInit : {false, true})
                for (bool boundsInit : {false, true}) {
                    const std::vector<ModelInput> ins = {
                        {"x", k.x, xInit}, {"lo", k.lo, boundsInit}, {"hi", k.hi, boundsInit}};
                    const auto m = oneNodeModel("Clip", 13, ins, {}, k.dt, k.x.shape());
                    for (const std::string pipeline : {"none", "theano", "cleanup"}) {
                        const QString where = QString("%1 x %2, bounds %3, %4")
                                                  .arg(dtypeName(k.dt).data())
                                                  .arg(xInit ? "constant" : "input")
                                                  .arg(boundsInit ? "constant" : "input")
                                                  .arg(pipeline.c_str());
                        bool folded = false;
                        const Tensor y = runOneNode(m, ins, pipeline, &folded);
                        QCOMPARE(y.dtype(), k.dt);
                        QVERIFY2(bitsOf(y) == k.want, qPrintable(where));
                        QVERIFY2(folded == (xInit && boundsInit && pipeline != "none"), qPrintable(where + " folded?"));
                    }
                }
        // only a lower bound, and only an upper one (an absent optional input in between)
        const std::vector<ModelInput> lower = {{"x", vec(DType::Int64, xs)}, {"lo", scalarOf(DType::Int64, p62 + 2)}};
        QCOMPARE(bitsOf(runOneNode(oneNodeModel("Clip", 13, lower, {}, DType::Int64, {7}), lower, "theano")),
                 (std::vector<std::uint64_t>{std::uint64_t(p62 + 2), std::uint64_t(p62 + 3), std::uint64_t(p62 + 2),
                                             std::uint64_t(p62 + 2), std::uint64_t(p62 + 2), std::uint64_t(p62 + 2),
                                             std::uint64_t(INT64_MAX)}));
        const std::vector<ModelInput> upper = {
            {"x", vec(DType::UInt64, xu)}, {"", Tensor()}, {"hi", scalarOf(DType::UInt64, p63 + 1)}};
        auto mu = oneNodeModel("Clip", 13, {upper[0], upper[2]}, {}, DType::UInt64, {6});
        mu.mutable_graph()->mutable_node(0)->clear_input();
        for (const char* name : {"x", "", "hi"}) mu.mutable_graph()->mutable_node(0)->add_input(name);
        QCOMPARE(bitsOf(runOneNode(mu, {upper[0], upper[2]}, "none")),
                 (std::vector<std::uint64_t>{p63 + 1, p63 + 1, p63 + 1, p63, 3, p63 + 1}));
    }

    // The CPU engine's integer clip (Elemwise{clip}, whose bounds are doubles of the expression
    // text's 9 digits) and OnnxClip's kernel keep int64 / uint64 values exact: bounds are
    // truncated and saturated to the integer range (NaN is no bound), the values never pass
    // through double.
    void integerClipKernelsExact() {
        const std::int64_t p62 = std::int64_t(1) << 62;
        const std::uint64_t p63 = std::uint64_t(1) << 63;
        {
            Harness h;
            Variable* xs = h.input(vec(DType::Int64, std::vector<std::int64_t>{p62 + 1, -p62 - 1, 7, -7, INT64_MAX}));
            Variable* xu = h.input(vec(DType::UInt64, std::vector<std::uint64_t>{~0ull, p63 + 1, 0, 7}));
            auto clip = [&](Variable* x, double lo, double hi) {
                return h.g.makeApply(Op::get("Elemwise", {{"scalar", "clip"}, {"min", lo}, {"max", hi}}), {x})
                    ->output(0);
            };
            const auto r = h.run({clip(xs, -1e300, 1e300), clip(xs, -6.5, 6.5), clip(xu, -1.0, 1e300),
                                  clip(xu, 2.5, 1e9), clip(xs, NAN, 3.9)});
            QCOMPARE(bitsOf(r[0]), (std::vector<std::uint64_t>{std::uint64_t(p62 + 1), std::uint64_t(-p62 - 1), 7,
                                                               std::uint64_t(-7), std::uint64_t(INT64_MAX)}));
            QCOMPARE(bitsOf(r[1]), (std::vector<std::uint64_t>{6, std::uint64_t(-6), 6, std::uint64_t(-6), 6}));
            QCOMPARE(bitsOf(r[2]), (std::vector<std::uint64_t>{~0ull, p63 + 1, 0, 7}));
            QCOMPARE(bitsOf(r[3]), (std::vector<std::uint64_t>{1000000000, 1000000000, 2, 7}));
            QCOMPARE(bitsOf(r[4]), (std::vector<std::uint64_t>{3, std::uint64_t(-p62 - 1), 3, std::uint64_t(-7), 3}));
        }
        // OnnxClip's kernel: a one-element bound of rank 1 on a rank-0 x is left to it
        const std::vector<ModelInput> ins = {{"x", scalarOf(DType::Int64, p62 + 3)},
                                             {"lo", vec(DType::Int64, std::vector<std::int64_t>{p62 + 1})},
                                             {"hi", vec(DType::Int64, std::vector<std::int64_t>{p62 + 2})}};
        const auto m = oneNodeModel("Clip", 13, ins, {}, DType::Int64, {});
        LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), "clip.onnx", ".");
        QCOMPARE(lg.graph->outputs()[0]->owner()->op().kind(), std::string("OnnxClip"));
        QCOMPARE(bitsOf(runOneNode(m, ins, "none")), (std::vector<std::uint64_t>{std::uint64_t(p62 + 2)}));
    }

    // ONNX Cast between 64-bit integers, floats and narrower integers, as NumPy's astype gives
    // (values written out below): floats in [2^63, 2^64) to uint64 and near 2^63 to int64
    // exactly, int64 / uint64 beyond 2^53 to float32 rounded once (through double they would
    // land on a tie and round to even), wrapping to int32 / uint8, uint64 to int64 as its bit
    // pattern, 0.5 and NaN to bool true; on a graph input (the CPU engine) and on an
    // initializer (constant folding in the theano and cleanup pipelines).
    void onnxCastExact() {
        const std::uint64_t p63 = std::uint64_t(1) << 63;
        const std::int64_t p62 = std::int64_t(1) << 62;
        struct Case {
            Tensor x;
            DType to;
            Tensor want;
        };
        const std::vector<Case> cases = {
            {vec(DType::Float64, std::vector<double>{1e19, 0x1p63, 9.21e18, 0x1p64 - 2048, 7.9}), DType::UInt64,
             vec(DType::UInt64, std::vector<std::uint64_t>{10000000000000000000ull, p63, 9210000000000000000ull,
                                                           18446744073709549568ull, 7})},
            {vec(DType::Float32, std::vector<float>{1e19f, 0x1p63f}), DType::UInt64,
             vec(DType::UInt64, std::vector<std::uint64_t>{9999999980506447872ull, p63})},
            {vec(DType::Float64, std::vector<double>{9.21e18, -9.21e18, -0x1p63}), DType::Int64,
             vec(DType::Int64, std::vector<std::int64_t>{9210000000000000000ll, -9210000000000000000ll, INT64_MIN})},
            {vec(DType::Int64, std::vector<std::int64_t>{p62 + (std::int64_t(1) << 38) + 1, -p62 - 1}), DType::Float32,
             vec(DType::Float32, std::vector<float>{0x1p62f + 0x1p39f, -0x1p62f})},
            {vec(DType::UInt64, std::vector<std::uint64_t>{p63 + (std::uint64_t(1) << 39) + 1, ~0ull}), DType::Float32,
             vec(DType::Float32, std::vector<float>{0x1p63f + 0x1p40f, 0x1p64f})},
            {vec(DType::UInt64, std::vector<std::uint64_t>{p63 + 1, ~0ull}), DType::Float64,
             vec(DType::Float64, std::vector<double>{0x1p63, 0x1p64})},
            {vec(DType::UInt64, std::vector<std::uint64_t>{p63 + 5, 3}), DType::Int64,
             vec(DType::Int64, std::vector<std::int64_t>{-9223372036854775803ll, 3})},
            {vec(DType::Int64, std::vector<std::int64_t>{-5, p62 + 1}), DType::UInt64,
             vec(DType::UInt64, std::vector<std::uint64_t>{18446744073709551611ull, std::uint64_t(p62) + 1})},
            {vec(DType::Int64, std::vector<std::int64_t>{(std::int64_t(1) << 32) + 5, std::int64_t(1) << 31, -1}),
             DType::Int32, vec(DType::Int32, std::vector<std::int32_t>{5, INT32_MIN, -1})},
            {vec(DType::UInt64, std::vector<std::uint64_t>{~0ull, 263}), DType::UInt8,
             vec(DType::UInt8, std::vector<std::uint8_t>{255, 7})},
            {vec(DType::Float32, std::vector<float>{0.5f, NAN, 0.0f, -0.0f}), DType::Bool,
             vec(DType::Bool, std::vector<std::uint8_t>{1, 1, 0, 0})},
        };
        const auto show = [](const Tensor& t) {
            QStringList l;
            if (isFloat(t.dtype()))
                for (double v : t.toDoubles()) l << QString::number(v, 'g', 17);
            else
                for (std::uint64_t v : bitsOf(t)) l << QString::number(v);
            return l.join(", ");
        };
        const auto bytes = [](const Tensor& t) {
            return std::string(static_cast<const char*>(t.rawData()),
                               static_cast<std::size_t>(t.numel()) * dtypeSize(t.dtype()));
        };
        for (const Case& k : cases)
            for (bool init : {false, true}) {
                const std::vector<ModelInput> ins = {{"x", k.x, init}};
                const auto m = oneNodeModel("Cast", 13, ins, {{"to", onnxTypeOf(k.to)}}, k.to, k.x.shape());
                for (const std::string pipeline : {"none", "theano", "cleanup"}) {
                    const QString where = QString("%1 to %2 (%3, %4)")
                                              .arg(dtypeName(k.x.dtype()).data())
                                              .arg(dtypeName(k.to).data())
                                              .arg(init ? "constant" : "input")
                                              .arg(pipeline.c_str());
                    bool folded = false;
                    const Tensor y = runOneNode(m, ins, pipeline, &folded);
                    QCOMPARE(y.dtype(), k.to);
                    QVERIFY2(bytes(y) == bytes(k.want), qPrintable(where + ": " + show(y)));
                    QVERIFY2(folded == (init && pipeline != "none"), qPrintable(where + " folded?"));
                }
            }
    }

    // Integer ops exact beyond 2^53 and at or above 2^63 (NumPy's values, written out below):
    // BitShift of uint64, 64 and more included (NumPy's shifts give 0 there), by a computed
    // amount (OnnxBitShift) or a constant one (Elemwise mul / int_div, folded with x constant);
    // ArgMin (max - x) and ArgMax of uint64; Mod with fmod 1 (OnnxMod: C's remainder,
    // INT64_MIN % -1 is 0), PRelu of int64 and uint64 (OnnxPRelu, opset 16), Unique of int64
    // and uint64 (OnnxUnique), Range of int64 (OnnxRange); inputs as graph inputs and
    // initializers, before and after the theano and cleanup pipelines.
    void onnxIntegerOpsExact() {
        const std::uint64_t p63 = std::uint64_t(1) << 63;
        const std::int64_t p62 = std::int64_t(1) << 62;
        const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
        struct Case {
            std::string op;
            int opset;
            std::vector<ModelInput> ins;
            std::vector<ModelAttr> attrs;
            DType out;
            Shape outDims;
            std::vector<std::uint64_t> want;
        };
        const Tensor shiftX = vec(DType::UInt64, std::vector<std::uint64_t>{~0ull, p63 + 1, 1, p63, p63 + 3});
        const Tensor shiftY = vec(DType::UInt64, std::vector<std::uint64_t>{1, 63, 64, 200, 2});
        const Tensor argX =
            Tensor::fromBytes(DType::UInt64, {2, 3}, std::vector<std::uint64_t>{p63 + 1, p63, ~0ull, 5, p63, 4}.data());
        const std::vector<Case> cases = {
            {"BitShift",
             11,
             {{"x", shiftX}, {"y", shiftY}},
             {{"direction", "LEFT"}},
             DType::UInt64,
             {5},
             {~0ull - 1, p63, 0, 0, 12}},
            {"BitShift",
             11,
             {{"x", shiftX}, {"y", shiftY}},
             {{"direction", "RIGHT"}},
             DType::UInt64,
             {5},
             {p63 - 1, 1, 0, 0, p63 / 4}},
            {"ArgMin", 13, {{"x", argX}}, {{"axis", 1}, {"keepdims", 0}}, DType::Int64, {2}, {1, 2}},
            {"ArgMax", 13, {{"x", argX}}, {{"axis", 1}, {"keepdims", 0}}, DType::Int64, {2}, {2, 1}},
            {"Mod",
             13,
             {{"x", vec(DType::UInt64, std::vector<std::uint64_t>{~0ull, p63 + 5, 10})},
              {"y", vec(DType::UInt64, std::vector<std::uint64_t>{p63 + 1, p63, 3})}},
             {{"fmod", 1}},
             DType::UInt64,
             {3},
             {p63 - 2, 5, 1}},
            {"Mod",
             13,
             {{"x", vec(DType::Int64, std::vector<std::int64_t>{INT64_MIN, -7, p62 + 1, INT64_MIN})},
              {"y", vec(DType::Int64, std::vector<std::int64_t>{-1, 3, -3, 3})}},
             {{"fmod", 1}},
             DType::Int64,
             {4},
             {0, u(-1), 2, u(-2)}},
            {"PRelu",
             16,
             {{"x", vec(DType::Int64, std::vector<std::int64_t>{p62 + 1, -3, -p62})},
              {"slope", vec(DType::Int64, std::vector<std::int64_t>{5, 2, 2})}},
             {},
             DType::Int64,
             {3},
             {u(p62 + 1), u(-6), u(INT64_MIN)}},
            {"Unique",
             11,
             {{"x", vec(DType::Int64, std::vector<std::int64_t>{p62 + 1, p62, p62 + 1, 5})}},
             {},
             DType::Int64,
             {3},
             {5, u(p62), u(p62 + 1)}},
            {"Unique",
             11,
             {{"x", vec(DType::UInt64, std::vector<std::uint64_t>{~0ull, ~0ull - 1, ~0ull})}},
             {{"sorted", 0}},
             DType::UInt64,
             {2},
             {~0ull, ~0ull - 1}},
            {"PRelu",
             16,
             {{"x", vec(DType::UInt64, std::vector<std::uint64_t>{~0ull, p63 + 1})},
              {"slope", vec(DType::UInt64, std::vector<std::uint64_t>{3, 3})}},
             {},
             DType::UInt64,
             {2},
             {~0ull, p63 + 1}},
        };
        for (const Case& k : cases)
            for (bool init : {false, true}) {
                std::vector<ModelInput> ins = k.ins;
                for (ModelInput& in : ins) in.initializer = init;
                const auto m = oneNodeModel(k.op, k.opset, ins, k.attrs, k.out, k.outDims);
                for (const std::string pipeline : {"none", "theano", "cleanup"}) {
                    const QString where = QString("%1 %2 (%3, %4)")
                                              .arg(k.op.c_str())
                                              .arg(k.attrs.empty() ? "" : k.attrs[0].name.c_str())
                                              .arg(init ? "constants" : "inputs")
                                              .arg(pipeline.c_str());
                    Tensor y;
                    const QString error = errorOf([&] { y = runOneNode(m, ins, pipeline); });
                    QVERIFY2(error.isEmpty(), qPrintable(where + ": " + error));
                    QCOMPARE(y.dtype(), k.out);
                    QVERIFY2(bitsOf(y) == k.want, qPrintable(where));
                }
            }
        // Range of int64 beyond 2^53, rising and falling
        for (const auto& [start, limit, delta, want] :
             {std::tuple{p62 + 1, p62 + 7, std::int64_t(2),
                         std::vector<std::uint64_t>{u(p62 + 1), u(p62 + 3), u(p62 + 5)}},
              std::tuple{p62 + 1, p62 - 4, std::int64_t(-2),
                         std::vector<std::uint64_t>{u(p62 + 1), u(p62 - 1), u(p62 - 3)}},
              std::tuple{INT64_MIN, INT64_MAX, INT64_MAX,
                         std::vector<std::uint64_t>{u(INT64_MIN), u(-1), u(INT64_MAX - 1)}}}) {
            const std::vector<ModelInput> ins = {{"start", scalarOf(DType::Int64, start), true},
                                                 {"limit", scalarOf(DType::Int64, limit), true},
                                                 {"delta", scalarOf(DType::Int64, delta), true}};
            const auto m = oneNodeModel("Range", 11, ins, {}, DType::Int64, {3});
            for (const std::string pipeline : {"none", "theano"})
                QVERIFY2(bitsOf(runOneNode(m, ins, pipeline)) == want,
                         qPrintable(QString("Range, %1").arg(pipeline.c_str())));
        }
    }

    // An ONNX TopK (opset 11, smallest, K a graph input) imported as TopKOp behind the Assert on
    // K, run before and after the theano pipeline (GpuTopKOp emulated on the CPU): the values and
    // indices of the 2 smallest per row, and a negative K refused by the Assert.
    void onnxTopKWithInputK() {
        onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(11);
        auto* g = m.mutable_graph();
        g->set_name("topk");
        valueInfo(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {2, 4});
        valueInfo(g->mutable_input(), "k", onnx::TensorProto::INT64, {1});
        auto* n = g->add_node();
        n->set_op_type("TopK");
        n->set_name("topk1");
        n->add_input("x");
        n->add_input("k");
        n->add_output("v");
        n->add_output("i");
        auto* a = n->add_attribute();
        a->set_name("largest");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(0);
        valueInfo(g->mutable_output(), "v", onnx::TensorProto::FLOAT, {2, 2});
        valueInfo(g->mutable_output(), "i", onnx::TensorProto::INT64, {2, 2});
        const Tensor x = Tensor::fromDoubles(DType::Float32, {2, 4}, {4, 1, 3, 1, 0, -2, 7, -2});
        for (const std::string pipeline : {"none", "theano"}) {
            LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), "topk.onnx", ".");
            Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
            QVERIFY(pipeline == "none" || lg.graph->opCounts().count("GpuTopKOp"));
            Executor ex(*lg.graph, ExecOptions{DeviceChoice::Cpu});
            const auto outs = ex.run({x, Tensor::fromDoubles(DType::Int64, {1}, {2})});
            QCOMPARE(outs[0].toDoubles(), (std::vector<double>{1, 1, -2, -2}));
            QCOMPARE(outs[1].toDoubles(), (std::vector<double>{1, 3, 1, 3}));
            const QString e = errorOf([&] { (void)ex.run({x, Tensor::fromDoubles(DType::Int64, {1}, {-1})}); });
            QVERIFY2(e.contains("assertion failed: TopK: K must not be negative"), qPrintable(e));
        }
    }

    // An ONNX If whose then branch returns an outer-scope value as it is (no node of its own,
    // valid ONNX), its producer listed after the If: imported (the value captured as an explicit
    // input, core/README.md) and run on both branches, before and after the theano pipeline.
    void onnxIfReturningOuterValue() {
        onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        auto* g = m.mutable_graph();
        g->set_name("if_outer");
        auto node = [](onnx::GraphProto* gp, const char* op, std::vector<std::string> ins, const char* out,
                       const char* name) {
            auto* n = gp->add_node();
            n->set_op_type(op);
            n->set_name(name);
            for (auto& i : ins) n->add_input(i);
            n->add_output(out);
            return n;
        };
        valueInfo(g->mutable_input(), "c", onnx::TensorProto::BOOL, {});
        valueInfo(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {3});
        auto* ifNode = node(g, "If", {"c"}, "y", "if1");
        auto branch = [&](const char* attr) {
            auto* a = ifNode->add_attribute();
            a->set_name(attr);
            a->set_type(onnx::AttributeProto::GRAPH);
            a->mutable_g()->set_name(attr);
            return a->mutable_g();
        };
        valueInfo(branch("then_branch")->mutable_output(), "a", onnx::TensorProto::FLOAT, {3});
        auto* elseG = branch("else_branch");
        node(elseG, "Relu", {"x"}, "e", "relu1");
        valueInfo(elseG->mutable_output(), "e", onnx::TensorProto::FLOAT, {3});
        node(g, "Neg", {"x"}, "a", "neg1");
        valueInfo(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {3});
        const Tensor x = Tensor::fromDoubles(DType::Float32, {3}, {-1.5, 0.0, 2.0});
        for (const std::string pipeline : {"none", "theano"}) {
            LoadedGraph lg = importOnnxBytes(m.SerializeAsString(), "if_outer.onnx", ".");
            Pipeline::builtin(pipeline).run(*lg.graph, nullptr);
            Executor ex(*lg.graph, ExecOptions{DeviceChoice::Cpu});
            for (bool c : {true, false}) {
                const auto outs = ex.run({Tensor::fromDoubles(DType::Bool, {}, {c ? 1.0 : 0.0}), x});
                QCOMPARE(outs.size(), std::size_t(1));
                const std::vector<double> want =
                    c ? std::vector<double>{1.5, -0.0, -2.0} : std::vector<double>{0.0, 0.0, 2.0};
                QCOMPARE(outs[0].shape(), Shape({3}));
                for (std::int64_t i = 0; i < 3; ++i) QCOMPARE(outs[0].at(i), want[static_cast<std::size_t>(i)]);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestExecOnnx)
#include "tst_exec_onnx.moc"
