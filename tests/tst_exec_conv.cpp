// Convolution, pooling and batch normalisation on the CPU against plain references (every
// convolution path: im2col GEMM, depthwise, Winograd F2 / F4 forced on odd sizes, strided odd
// widths), and the executor's plans around them: epilogue fusion (same bits as unfused, and
// where it must not fuse) and in-place Join.
#include "ExecTestSupport.h"

#include <cstring>

using namespace passlens;
using namespace exectest;

namespace {

std::vector<double> naiveConv(const Tensor& x, const Tensor& w, int pt, int pb, int pl, int pr, int sh, int sw, int dh,
                              int dw, int groups, Shape& outShape) {
    const auto X = x.toDoubles(), W = w.toDoubles();
    const std::int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), Wd = x.dim(3), F = w.dim(0), Cg = w.dim(1),
                       KH = w.dim(2), KW = w.dim(3);
    const std::int64_t OH = (H + pt + pb - dh * (KH - 1) - 1) / sh + 1,
                       OW = (Wd + pl + pr - dw * (KW - 1) - 1) / sw + 1;
    outShape = {N, F, OH, OW};
    std::vector<double> y(static_cast<std::size_t>(N * F * OH * OW), 0.0);
    const std::int64_t Fg = F / groups;
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t f = 0; f < F; ++f) {
            const std::int64_t g = f / Fg;
            for (std::int64_t oh = 0; oh < OH; ++oh)
                for (std::int64_t ow = 0; ow < OW; ++ow) {
                    double acc = 0;
                    for (std::int64_t c = 0; c < Cg; ++c)
                        for (std::int64_t kh = 0; kh < KH; ++kh)
                            for (std::int64_t kw = 0; kw < KW; ++kw) {
                                const std::int64_t ih = oh * sh - pt + kh * dh, iw = ow * sw - pl + kw * dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= Wd) continue;
                                acc += X[static_cast<std::size_t>(((n * C + g * Cg + c) * H + ih) * Wd + iw)] *
                                       W[static_cast<std::size_t>(((f * Cg + c) * KH + kh) * KW + kw)];
                            }
                    y[static_cast<std::size_t>(((n * F + f) * OH + oh) * OW + ow)] = acc;
                }
        }
    (void)C;
    return y;
}

} // namespace

class TestExecConv : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { (void)rng(); }

    // ------------------------------------------------------------------ convolution, pooling, BN
    void conv_data() {
        QTest::addColumn<QString>("borderMode");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("dilation");
        QTest::addColumn<int>("groups");
        QTest::addColumn<int>("kernel");
        QTest::newRow("valid 3x3") << "\"valid\"" << 1 << 1 << 1 << 3;
        QTest::newRow("full 3x3") << "\"full\"" << 1 << 1 << 1 << 3;
        QTest::newRow("half 5x5 stride 2") << "\"half\"" << 2 << 1 << 1 << 5;
        QTest::newRow("pads [1,2] dilation 2") << "[1,2]" << 1 << 2 << 1 << 3;
        QTest::newRow("asymmetric pads stride 2") << "[[0,1],[2,0]]" << 2 << 1 << 1 << 3;
        QTest::newRow("pointwise") << "\"valid\"" << 1 << 1 << 1 << 1;
        QTest::newRow("groups 2") << "[1,1]" << 1 << 1 << 2 << 3;
        QTest::newRow("depthwise") << "[1,1]" << 1 << 1 << 4 << 3;
        QTest::newRow("depthwise stride 2") << "[1,1]" << 2 << 1 << 4 << 3;
        QTest::newRow("depthwise 5x5 dilated") << "[2,2]" << 1 << 2 << 4 << 5;
    }

    void conv() {
        QFETCH(QString, borderMode);
        QFETCH(int, stride);
        QFETCH(int, dilation);
        QFETCH(int, groups);
        QFETCH(int, kernel);
        const json bm = json::parse(borderMode.toStdString());
        const int C = 4, F = groups == 4 ? 8 : 6;
        Tensor x = randn(DType::Float32, {2, C, 9, 8});
        Tensor w = randn(DType::Float32, {F, C / groups, kernel, kernel});
        for (const char* kind : {"AbstractConv2d", "GpuCorrMM"}) {
            Harness h;
            Variable *vx = h.input(x), *vw = h.input(w);
            const bool gpu = std::string(kind) == "GpuCorrMM";
            if (gpu) {
                vx = h.g.apply(Op::get("GpuFromHost"), {vx});
                vw = h.g.apply(Op::get("GpuFromHost"), {vw});
            }
            Variable* y = h.g.apply(Op::get(kind, {{"border_mode", bm},
                                                   {"subsample", {stride, stride}},
                                                   {"filter_dilation", {dilation, dilation}},
                                                   {"num_groups", groups}}),
                                    {vx, vw});
            if (gpu) y = h.g.apply(Op::get("HostFromGpu"), {y});
            auto outs = h.run({y});
            int pt, pb, pl, pr;
            const int ek = dilation * (kernel - 1) + 1;
            if (bm.is_string()) {
                const std::string m = bm.get<std::string>();
                pt = pb = pl = pr = m == "full" ? ek - 1 : m == "half" ? ek / 2 : 0;
            } else if (bm[0].is_array()) {
                pt = bm[0][0];
                pb = bm[0][1];
                pl = bm[1][0];
                pr = bm[1][1];
            } else {
                pt = pb = bm[0];
                pl = pr = bm[1];
            }
            Shape os;
            const auto want = naiveConv(x, w, pt, pb, pl, pr, stride, stride, dilation, dilation, groups, os);
            QCOMPARE(outs[0].shape(), os);
            VERIFY_CLOSE(outs[0], want, 1e-5, 1e-5);
        }
    }

    // Winograd F(2x2,3x3) / F(4x4,3x3) (forced by ExecOptions::winograd) against the plain
    // reference: odd sizes that are not a multiple of the tile, padding on any side, kernels as
    // graph inputs (transformed per call) and as constants (transformed once, cached), bias
    // through OnnxConv, batch 2.
    void convWinograd_data() {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("C");
        QTest::addColumn<int>("F");
        QTest::addColumn<int>("H");
        QTest::addColumn<int>("W");
        QTest::addColumn<QString>("pads"); // [top, left, bottom, right]
        QTest::addColumn<bool>("constWeights");
        QTest::addColumn<bool>("bias");
        for (int m : {2, 4}) {
            const std::string t = "F" + std::to_string(m) + " ";
            QTest::newRow((t + "valid 7x9").c_str()) << m << 3 << 5 << 7 << 9 << "[0,0,0,0]" << false << false;
            QTest::newRow((t + "same 13x11 const").c_str()) << m << 17 << 9 << 13 << 11 << "[1,1,1,1]" << true << false;
            QTest::newRow((t + "asymmetric pads 10x6").c_str())
                << m << 4 << 6 << 10 << 6 << "[0,2,1,0]" << false << false;
            QTest::newRow((t + "full 5x5 bias").c_str()) << m << 2 << 3 << 5 << 5 << "[2,2,2,2]" << true << true;
            QTest::newRow((t + "3x3 input bias").c_str()) << m << 6 << 4 << 3 << 3 << "[1,1,1,1]" << false << true;
            QTest::newRow((t + "wide 4x37 const").c_str()) << m << 8 << 16 << 4 << 37 << "[1,1,1,1]" << true << false;
        }
    }

    void convWinograd() {
        QFETCH(int, m);
        QFETCH(int, C);
        QFETCH(int, F);
        QFETCH(int, H);
        QFETCH(int, W);
        QFETCH(QString, pads);
        QFETCH(bool, constWeights);
        QFETCH(bool, bias);
        const json pj = json::parse(pads.toStdString());
        const int pt = pj[0], pl = pj[1], pb = pj[2], pr = pj[3];
        Tensor x = randn(DType::Float32, {2, C, H, W});
        Tensor w = randn(DType::Float32, {F, C, 3, 3});
        Tensor b = randn(DType::Float32, {F});
        Harness h;
        h.options.winograd = m == 2 ? WinogradChoice::F2 : WinogradChoice::F4;
        Variable* vx = h.input(x);
        Variable* vw = constWeights ? h.constant(w) : h.input(w);
        Variable* y;
        if (bias) {
            y = h.g.makeApply(Op::get("OnnxConv", {{"pads", {pt, pl, pb, pr}}, {"kernel_shape", {3, 3}}}),
                              {vx, vw, h.constant(b)}, std::vector<Type>{Type::parse("float32[*]")})
                    ->output(0);
        } else {
            y = h.g.apply(
                Op::get("AbstractConv2d",
                        {{"border_mode", {{pt, pb}, {pl, pr}}}, {"subsample", {1, 1}}, {"filter_dilation", {1, 1}}}),
                {vx, vw});
        }
        auto outs = h.run({y});
        Shape os;
        auto want = naiveConv(x, w, pt, pb, pl, pr, 1, 1, 1, 1, 1, os);
        if (bias) {
            const auto B = b.toDoubles();
            const std::int64_t plane = os[2] * os[3];
            for (std::size_t i = 0; i < want.size(); ++i)
                want[i] += B[(i / static_cast<std::size_t>(plane)) % static_cast<std::size_t>(F)];
        }
        QCOMPARE(outs[0].shape(), os);
        // |x|, |w| <= 2: each output sums 9*C products; the transforms lose a few ulps of the
        // largest intermediate (F(4x4) more than F(2x2))
        const double scale = 4.0 * 9 * C;
        VERIFY_CLOSE(outs[0], want, 0, (m == 4 ? 2e-6 : 5e-7) * scale);
        // deterministic: a second executor gives the same bits
        Executor ex2(h.g, h.options);
        auto again = ex2.run(h.values);
        VERIFY_CLOSE(again[0], outs[0].toDoubles(), 0, 0);
    }

    // Epilogue fusion (Executor: a convolution whose only client is an element-wise node over
    // per-channel / scalar constants applies that node in its kernel, per image and group after
    // the GEMM, per depthwise channel chunk, per Winograd image): the result has the bits of the unfused run
    // (fuseEpilogues = false), matches the reference, the element-wise step is marked fused and the
    // profile lists it as "fused into node #N".
    void epilogueFusion_data() {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("groups");
        QTest::addColumn<int>("C");
        QTest::addColumn<int>("F");
        QTest::addColumn<int>("H");
        QTest::addColumn<bool>("yFirst");
        QTest::newRow("pointwise, 64 channels") << 1 << 1 << 1 << 64 << 64 << 48 << true;
        QTest::newRow("pointwise, conv output second input") << 1 << 1 << 1 << 16 << 24 << 20 << false;
        QTest::newRow("im2col 3x3 stride 2") << 3 << 2 << 1 << 8 << 16 << 33 << true;
        QTest::newRow("grouped 3x3") << 3 << 1 << 2 << 8 << 8 << 12 << true;
        QTest::newRow("winograd 3x3") << 3 << 1 << 1 << 8 << 8 << 30 << true;
        QTest::newRow("depthwise 3x3 rows, channel chunks") << 3 << 1 << 24 << 24 << 24 << 40 << true;
        QTest::newRow("depthwise 3x3 flat") << 3 << 1 << 16 << 16 << 16 << 9 << false;
        QTest::newRow("depthwise 3x3 stride 2, multiplier 2") << 3 << 2 << 8 << 8 << 16 << 29 << true;
    }

    void epilogueFusion() {
        QFETCH(int, kernel);
        QFETCH(int, stride);
        QFETCH(int, groups);
        QFETCH(int, C);
        QFETCH(int, F);
        QFETCH(int, H);
        QFETCH(bool, yFirst);
        const int pad = kernel / 2;
        Tensor x = randn(DType::Float32, {2, C, H, H});
        Tensor w = randn(DType::Float32, {F, C / groups, kernel, kernel});
        Tensor b = randn(DType::Float32, {1, F, 1, 1});
        Tensor sc = Tensor::fromDoubles(DType::Float32, {1, 1, 1, 1}, {0.75});
        FunctionGraph g;
        Variable* vx = g.addInput(typeOf(x), "x");
        Variable* y = g.apply(Op::get("AbstractConv2d", {{"border_mode", {{pad, pad}, {pad, pad}}},
                                                         {"subsample", {stride, stride}},
                                                         {"filter_dilation", {1, 1}},
                                                         {"num_groups", groups}}),
                              {vx, g.addConstant(w.toTensorData())});
        Variable* vb = g.addConstant(b.toTensorData());
        Variable* vs = g.addConstant(sc.toTensorData());
        const std::string expr = yFirst ? "clip{0,6}(mul(add(i0,i1),i2))" : "clip{0,6}(mul(add(i1,i0),i2))";
        Variable* z = g.apply(Op::get("Elemwise", {{"scalar", "composite"}, {"expr", expr}, {"dtype", "float32"}}),
                              yFirst ? std::vector<Variable*>{y, vb, vs} : std::vector<Variable*>{vb, y, vs});
        g.setOutputs({z});
        Executor fused(g, ExecOptions{DeviceChoice::Cpu, true});
        ExecOptions off{DeviceChoice::Cpu, true};
        off.fuseEpilogues = false;
        Executor plain(g, off);
        int convStep = -1, elemStep = -1;
        for (std::size_t i = 0; i < fused.steps().size(); ++i) {
            if (fused.steps()[i].node == y->owner()) convStep = static_cast<int>(i);
            if (fused.steps()[i].node == z->owner()) elemStep = static_cast<int>(i);
        }
        QCOMPARE(fused.steps()[static_cast<std::size_t>(elemStep)].fusedInto, convStep);
        QCOMPARE(fused.steps()[static_cast<std::size_t>(convStep)].fusedStep, elemStep);
        QCOMPARE(plain.steps()[static_cast<std::size_t>(elemStep)].fusedInto, -1);
        RunTimings tm;
        fused.run({x}); // the second run reuses pooled (re-poisoned) buffers
        const auto a = fused.run({x}, &tm);
        QVERIFY(tm.stepFused[static_cast<std::size_t>(elemStep)]);
        QCOMPARE(tm.stepUs[static_cast<std::size_t>(elemStep)], 0.0);
        plain.run({x});
        const auto ref = plain.run({x});
        QCOMPARE(a[0].shape(), ref[0].shape());
        VERIFY_CLOSE(a[0], ref[0].toDoubles(), 0, 0); // same bits as the element-wise node on its own
        Shape os;
        auto want = naiveConv(x, w, pad, pad, pad, pad, stride, stride, 1, 1, groups, os);
        const auto B = b.toDoubles();
        const std::size_t plane = static_cast<std::size_t>(os[2] * os[3]);
        for (std::size_t i = 0; i < want.size(); ++i)
            want[i] = std::clamp((want[i] + B[(i / plane) % static_cast<std::size_t>(F)]) * 0.75, 0.0, 6.0);
        QCOMPARE(a[0].shape(), os);
        VERIFY_CLOSE(a[0], want, 1e-5, 1e-6 * 4 * (C / groups) * kernel * kernel);
        // the profile: no time of its own, listed as fused into the convolution
        ProfileReport rep = profileExecutor(fused, {x}, ProfileOptions{1, 2}, "final");
        bool seen = false;
        for (const ProfileNode& n : rep.nodes)
            if (n.node == z->owner()->id()) {
                seen = true;
                QVERIFY(!n.timeUs);
                QCOMPARE(n.fusedInto.value_or(-1), y->owner()->id());
            }
        QVERIFY(seen);
        const json rj = rep.toJson();
        bool listed = false;
        for (const json& n : rj.at("not_run"))
            if (n.at("node") == z->owner()->id())
                listed =
                    n.at("reason") == "fused into node #" + std::to_string(y->owner()->id()) && n.at("kind") == "n/a";
        QVERIFY(listed);
        for (const json& n : rj.at("nodes")) QVERIFY(n.at("node") != z->owner()->id());
    }

    // In-place Join: a squeezenet Fire module's concat of two convolutions (one with a fused
    // bias + clip epilogue, one plain). Same bits as the plain path; the Join is reported in place; and
    // the cases where it must not happen: a convolution output with a second client, the Join as
    // a graph output, a graph input as one of the Join's inputs.
    void joinInPlace() {
        Tensor x = randn(DType::Float32, {1, 8, 9, 9});
        Tensor w1 = randn(DType::Float32, {6, 8, 1, 1}), w3 = randn(DType::Float32, {5, 8, 3, 3}),
               b = randn(DType::Float32, {1, 6, 1, 1});
        for (int variant = 0; variant < 4; ++variant) {
            FunctionGraph g;
            Variable* vx = g.addInput(typeOf(x), "x");
            auto conv = [&](const Tensor& w, int pad) { return addConv(g, vx, w, pad); };
            Variable* c1 = conv(w1, 0);
            Variable* e1 = g.apply(
                Op::get("Elemwise", {{"scalar", "composite"}, {"expr", "clip{0,6}(add(i0,i1))"}, {"dtype", "float32"}}),
                {c1, g.addConstant(b.toTensorData())});
            Variable* c3 = conv(w3, 1);
            Variable* second = variant == 3 ? vx : c3;
            Variable* j = g.apply(Op::get("Join", {{"axis", 1}}), {e1, second});
            Variable* z = g.apply(Op::get("Elemwise", {{"scalar", "mul"}, {"dtype", "float32"}}), {j, j});
            if (variant == 0)
                g.setOutputs({z});
            else if (variant == 1)
                g.setOutputs({z, c3}); // c3 has a second client (the outputs)
            else if (variant == 2)
                g.setOutputs({z, j}); // the Join is a graph output
            else
                g.setOutputs({z, c3}); // x (a graph input) joined
            Executor inPlace(g, ExecOptions{DeviceChoice::Cpu, true});
            ExecOptions off{DeviceChoice::Cpu, true};
            off.joinInPlace = false;
            Executor plain(g, off);
            int joinStep = -1;
            for (std::size_t i = 0; i < inPlace.steps().size(); ++i)
                if (inPlace.steps()[i].node == j->owner()) joinStep = static_cast<int>(i);
            QCOMPARE(inPlace.steps()[static_cast<std::size_t>(joinStep)].joinInPlace, variant == 0);
            for (const ExecStep& st : inPlace.steps())
                if (st.node == e1->owner()) QVERIFY(st.fusedInto >= 0); // the bias + clip runs inside the convolution
            QVERIFY(!plain.steps()[static_cast<std::size_t>(joinStep)].joinInPlace);
            RunTimings tm;
            inPlace.run({x}); // the second run reuses pooled (re-poisoned) buffers
            const auto a = inPlace.run({x}, &tm);
            QCOMPARE(static_cast<bool>(tm.stepFused[static_cast<std::size_t>(joinStep)]), variant == 0);
            plain.run({x});
            const auto ref = plain.run({x});
            for (std::size_t k = 0; k < a.size(); ++k) {
                QCOMPARE(a[k].shape(), ref[k].shape());
                QVERIFY2(std::memcmp(a[k].rawData(), ref[k].rawData(), a[k].nbytes()) == 0,
                         qPrintable(QString::number(variant)));
            }
            if (variant == 0) {
                ProfileReport rep = profileExecutor(inPlace, {x}, ProfileOptions{1, 2}, "final");
                bool seen = false;
                for (const ProfileNode& n : rep.nodes)
                    if (n.node == j->owner()->id()) {
                        seen = true;
                        QVERIFY(!n.timeUs);
                        QVERIFY(n.inPlace);
                        QCOMPARE(n.inPlaceWriters, (std::vector<NodeId>{c1->owner()->id(), c3->owner()->id()}));
                    }
                QVERIFY(seen);
                bool listed = false;
                const json rj = rep.toJson();
                for (const json& n : rj.at("not_run"))
                    if (n.at("node") == j->owner()->id()) {
                        listed = true;
                        QCOMPARE(n.at("kind").get<std::string>(), std::string("n/a"));
                        QVERIFY(n.at("reason").get<std::string>().starts_with(
                            "in place: inputs written into its output by nodes #"));
                    }
                QVERIFY(listed);
                QVERIFY(rep.text().find("(in place: inputs written by nodes #") != std::string::npos);
            }
        }
    }

    // Where fusion must not happen: a second client of the convolution's output, the output also
    // a graph output, a non-constant or non-per-channel other input, float64. Nothing is fused and
    // every output equals the reference.
    void epilogueFusionDeclined() {
        for (int which = 0; which < 5; ++which) {
            const DType dt = which == 4 ? DType::Float64 : DType::Float32;
            Tensor x = randn(dt, {1, 8, 12, 12});
            Tensor w = randn(dt, {8, 8, 1, 1});
            Tensor b = randn(dt, which == 3 ? Shape{1, 1, 1, 12} : Shape{1, 8, 1, 1});
            FunctionGraph g;
            std::vector<Tensor> in{x};
            Variable* y =
                g.apply(Op::get("AbstractConv2d",
                                {{"border_mode", "valid"}, {"subsample", {1, 1}}, {"filter_dilation", {1, 1}}}),
                        {g.addInput(typeOf(x), "x"), g.addConstant(w.toTensorData())});
            Variable* vb;
            if (which == 2) {
                vb = g.addInput(typeOf(b), "b");
                in.push_back(b);
            } else {
                vb = g.addConstant(b.toTensorData());
            }
            Variable* z = elem(g, "add", {y, vb});
            std::vector<Variable*> outs{z};
            if (which == 0) outs.push_back(elem(g, "mul", {y, vb})); // a second client
            if (which == 1) outs.push_back(y);                       // also a graph output
            g.setOutputs(outs);
            Executor ex(g, ExecOptions{DeviceChoice::Cpu, true});
            for (const ExecStep& s : ex.steps()) {
                QCOMPARE(s.fusedInto, -1);
                QCOMPARE(s.fusedStep, -1);
                QVERIFY(!s.epilogue);
            }
            ex.run(in);
            RunTimings tm;
            const auto got = ex.run(in, &tm);
            for (bool f : tm.stepFused) QVERIFY(!f);
            Shape os;
            const auto conv = naiveConv(x, w, 0, 0, 0, 0, 1, 1, 1, 1, 1, os);
            const auto B = b.toDoubles();
            auto bAt = [&](std::size_t i) { return which == 3 ? B[i % 12] : B[(i / 144) % 8]; };
            std::vector<double> sum(conv.size()), prod(conv.size());
            for (std::size_t i = 0; i < conv.size(); ++i) {
                sum[i] = conv[i] + bAt(i);
                prod[i] = conv[i] * bAt(i);
            }
            VERIFY_CLOSE(got[0], sum, 1e-5, 1e-5);
            if (which == 0) VERIFY_CLOSE(got[1], prod, 1e-5, 1e-5);
            if (which == 1) VERIFY_CLOSE(got[1], conv, 1e-5, 1e-5);
        }
    }

    // Strided paths with odd widths: depthwise 3x3 stride 2 (even/odd column split) and max / sum
    // pooling with stride 2, against the references.
    void stride2OddWidths() {
        for (int W : {7, 10, 13})
            for (int pad : {0, 1}) {
                Tensor x = randn(DType::Float32, {1, 3, 9, W});
                Tensor w = randn(DType::Float32, {3, 1, 3, 3});
                Harness h;
                Variable* y = h.g.apply(Op::get("AbstractConv2d", {{"border_mode", {{pad, 0}, {pad, 1 - pad}}},
                                                                   {"subsample", {2, 2}},
                                                                   {"filter_dilation", {1, 1}},
                                                                   {"num_groups", 3}}),
                                        {h.input(x), h.input(w)});
                Variable* pm = h.g.apply(Op::get("Pool", {{"mode", "max"},
                                                          {"ws", {3, 3}},
                                                          {"stride", {2, 2}},
                                                          {"pad", {pad, pad}},
                                                          {"ignore_border", true}}),
                                         {h.input(x)});
                Variable* ps = h.g.apply(Op::get("Pool", {{"mode", "sum"},
                                                          {"ws", {3, 3}},
                                                          {"stride", {2, 2}},
                                                          {"pad", {0, 0}},
                                                          {"ignore_border", false}}),
                                         {h.input(x)});
                auto outs = h.run({y, pm, ps});
                Shape os;
                const auto want = naiveConv(x, w, pad, 0, pad, 1 - pad, 2, 2, 1, 1, 3, os);
                QCOMPARE(outs[0].shape(), os);
                VERIFY_CLOSE(outs[0], want, 1e-5, 1e-5);
                // pooling references
                const auto X = x.toDoubles();
                auto poolRef = [&](bool isMax, int p, bool ib, Shape& shape) {
                    const int OH = ib ? (9 + 2 * p - 3) / 2 + 1 : (9 - 1 - 3 + 2) / 2 + 1;
                    const int OW = ib ? (W + 2 * p - 3) / 2 + 1 : std::max(0, (W - 1 - 3 + 2) / 2) + 1;
                    shape = {1, 3, OH, OW};
                    std::vector<double> r;
                    for (int c = 0; c < 3; ++c)
                        for (int i = 0; i < OH; ++i)
                            for (int j = 0; j < OW; ++j) {
                                double acc = isMax ? -INFINITY : 0;
                                for (int a = 0; a < 3; ++a)
                                    for (int bb = 0; bb < 3; ++bb) {
                                        const int ih = 2 * i - p + a, iw = 2 * j - p + bb;
                                        if (ih < 0 || ih >= 9 || iw < 0 || iw >= W) continue;
                                        const double v = X[static_cast<std::size_t>((c * 9 + ih) * W + iw)];
                                        acc = isMax ? std::max(acc, v) : acc + v;
                                    }
                                r.push_back(acc);
                            }
                    return r;
                };
                Shape sm, ss;
                const auto wm = poolRef(true, pad, true, sm), ws = poolRef(false, 0, false, ss);
                QCOMPARE(outs[1].shape(), sm);
                VERIFY_CLOSE(outs[1], wm, 0, 0);
                QCOMPARE(outs[2].shape(), ss);
                VERIFY_CLOSE(outs[2], ws, 1e-6, 1e-6);
            }
    }

    void pool_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("pad");
        QTest::addColumn<int>("stride");
        QTest::addColumn<bool>("ignoreBorder");
        for (const char* m : {"max", "average_inc_pad", "average_exc_pad", "sum"}) {
            QTest::newRow((std::string(m) + " 3/2").c_str()) << m << "[0,0]" << 2 << true;
            QTest::newRow((std::string(m) + " pad 1").c_str()) << m << "[1,1]" << 2 << true;
            QTest::newRow((std::string(m) + " pad [0,1],[1,0]").c_str()) << m << "[[0,1],[1,0]]" << 1 << true;
            QTest::newRow((std::string(m) + " ceil").c_str()) << m << "[0,0]" << 2 << false;
        }
    }

    void pool() {
        QFETCH(QString, mode);
        QFETCH(QString, pad);
        QFETCH(int, stride);
        QFETCH(bool, ignoreBorder);
        const json pj = json::parse(pad.toStdString());
        Tensor x = randn(DType::Float32, {2, 3, 7, 6});
        Harness h;
        Variable* y = h.g.apply(Op::get("Pool", {{"mode", mode.toStdString()},
                                                 {"ws", {3, 3}},
                                                 {"stride", {stride, stride}},
                                                 {"pad", pj},
                                                 {"ignore_border", ignoreBorder}}),
                                {h.input(x)});
        auto outs = h.run({y});
        std::int64_t p0[2], p1[2];
        for (int a = 0; a < 2; ++a) {
            if (pj[static_cast<std::size_t>(a)].is_array()) {
                p0[a] = pj[static_cast<std::size_t>(a)][0];
                p1[a] = pj[static_cast<std::size_t>(a)][1];
            } else
                p0[a] = p1[a] = pj[static_cast<std::size_t>(a)].get<std::int64_t>();
        }
        const std::int64_t n[2] = {7, 6};
        std::int64_t o[2];
        for (int a = 0; a < 2; ++a) {
            const std::int64_t r = n[a] + p0[a] + p1[a];
            o[a] = ignoreBorder ? (r - 3) / stride + 1
                                : (stride >= 3 ? (r - 1) / stride + 1
                                               : std::max<std::int64_t>(0, (r - 1 - 3 + stride) / stride) + 1);
        }
        QCOMPARE(outs[0].shape(), (Shape{2, 3, o[0], o[1]}));
        const auto X = x.toDoubles();
        std::vector<double> want;
        for (int pl = 0; pl < 6; ++pl)
            for (std::int64_t r = 0; r < o[0]; ++r)
                for (std::int64_t c = 0; c < o[1]; ++c) {
                    // Theano pool.py perform(): window in padded coordinates
                    const std::int64_t r0 = r * stride, r1 = std::min(r0 + 3, n[0] + p0[0] + p1[0]);
                    const std::int64_t c0 = c * stride, c1 = std::min(c0 + 3, n[1] + p0[1] + p1[1]);
                    double mx = -INFINITY, s = 0;
                    int cnt = 0;
                    for (std::int64_t i = r0; i < r1; ++i)
                        for (std::int64_t j = c0; j < c1; ++j) {
                            const std::int64_t ii = i - p0[0], jj = j - p0[1];
                            if (ii < 0 || ii >= n[0] || jj < 0 || jj >= n[1]) continue;
                            const double v = X[static_cast<std::size_t>((pl * 7 + ii) * 6 + jj)];
                            mx = std::max(mx, v);
                            s += v;
                            ++cnt;
                        }
                    if (mode == "max")
                        want.push_back(mx);
                    else if (mode == "sum")
                        want.push_back(s);
                    else if (mode == "average_exc_pad")
                        want.push_back(cnt ? s / cnt : 0);
                    else
                        want.push_back(s / static_cast<double>((r1 - r0) * (c1 - c0)));
                }
        VERIFY_CLOSE(outs[0], want, 1e-5, 1e-6);
    }

    // Max pooling with 3-wide windows at column stride 2 runs a direct kernel: same bits as the
    // separable one, NaN, infinities and signed zeros included, on odd / even sizes, ceil mode and
    // top padding (left padding keeps the separable kernel).
    void poolMaxDirectSameBits() {
        for (const auto& [H, W, ib, pad] :
             std::vector<std::tuple<int, int, bool, std::string>>{{7, 6, true, "[0,0]"},
                                                                  {9, 9, false, "[0,0]"},
                                                                  {111, 111, false, "[0,0]"},
                                                                  {8, 13, false, "[[1,0],[0,1]]"},
                                                                  {5, 5, true, "[1,1]"}}) {
            Tensor x = randn(DType::Float32, {1, 5, H, W});
            float* xp = x.data<float>();
            for (std::int64_t i = 0; i < x.numel(); i += 7)
                xp[i] = (i / 7) % 4 == 0 ? NAN : (i / 7) % 4 == 1 ? -0.0f : (i / 7) % 4 == 2 ? 0.0f : -INFINITY;
            Harness h;
            Variable* y = h.g.apply(Op::get("Pool", {{"mode", "max"},
                                                     {"ws", {3, 3}},
                                                     {"stride", {2, 2}},
                                                     {"pad", json::parse(pad)},
                                                     {"ignore_border", ib}}),
                                    {h.input(x)});
            h.options.poolSeparable = false;
            const auto direct = h.run({y});
            h.options.poolSeparable = true;
            const auto separable = h.run({y});
            QCOMPARE(direct[0].shape(), separable[0].shape());
            QVERIFY2(std::memcmp(direct[0].rawData(), separable[0].rawData(), direct[0].nbytes()) == 0,
                     qPrintable(QString::number(H) + "x" + QString::number(W)));
        }
    }

    void batchNorm() {
        Harness h;
        Tensor x = randn(DType::Float32, {2, 3, 2, 2}), g = randn(DType::Float32, {3}), b = randn(DType::Float32, {3}),
               m = randn(DType::Float32, {3}), v = randn(DType::Float32, {3}, 0.5, 2);
        Variable* y = h.g.apply(Op::get("BatchNormInference", {{"epsilon", 1e-3}}),
                                {h.input(x), h.input(g), h.input(b), h.input(m), h.input(v)});
        auto outs = h.run({y});
        const auto X = x.toDoubles(), G = g.toDoubles(), B = b.toDoubles(), M = m.toDoubles(), V = v.toDoubles();
        std::vector<double> want;
        for (int n = 0; n < 2; ++n)
            for (int c = 0; c < 3; ++c)
                for (int i = 0; i < 4; ++i) {
                    const auto uc = static_cast<std::size_t>(c);
                    want.push_back((X[static_cast<std::size_t>((n * 3 + c) * 4 + i)] - M[uc]) /
                                       std::sqrt(V[uc] + 1e-3) * G[uc] +
                                   B[uc]);
                }
        VERIFY_CLOSE(outs[0], want, 1e-5, 1e-5);
    }
};

QTEST_GUILESS_MAIN(TestExecConv)
#include "tst_exec_conv.moc"
