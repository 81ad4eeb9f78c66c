// The CPU backend's per-ISA loop tables (internal header kernels/src/cpu/Loops.h): the x86-64-v4
// build's AVX-512 loops and the chain form of epilogues against the portable loops and the
// interpreted program, bit for bit. The one execution test that reads kernels/src.
#include "ExecTestSupport.h"

#include "cpu/Conv.h"
#include "cpu/ElemwiseEngine.h"
#include "cpu/Loops.h"

#include <array>
#include <cstring>

using namespace passlens;
using namespace exectest;

class TestExecLoops : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { (void)rng(); }

    // The x86-64-v4 build's AVX-512 loops (3x3 depthwise for stride 1 and 2, the stride-2
    // gather of im2col) and the chain form of epilogues give exactly the bits of the portable
    // loops / the interpreted program: every output element compared as bits, outputs poisoned
    // with NaN first, on the shapes where vector tails, padding and parity change.
    void loopBuildsAgree() {
        using namespace passlens::cpu;
        const LoopTable& base = baseline::table();
        const LoopTable& best = loops();
        auto sameBits = [](const std::vector<float>& a, const std::vector<float>& b) {
            return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
        };
        std::mt19937 gen(7);
        std::uniform_real_distribution<float> u(-2, 2);
        int cases = 0;
        for (int s : {1, 2})
            for (int H : {1, 2, 5, 9, 16})
                for (int W : {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 57})
                    for (auto pads : std::vector<std::array<int, 4>>{
                             {1, 1, 1, 1}, {0, 0, 0, 0}, {0, 1, 1, 0}, {2, 2, 2, 2}, {1, 0, 0, 1}})
                        for (int mult : {1, 2}) {
                            Conv2dParams p;
                            p.padTop = pads[0], p.padBottom = pads[1], p.padLeft = pads[2], p.padRight = pads[3];
                            p.strideH = p.strideW = s;
                            const int C = 3;
                            p.groups = C;
                            const std::int64_t OH = (H + p.padTop + p.padBottom - 3) / s + 1,
                                               OW = (W + p.padLeft + p.padRight - 3) / s + 1;
                            if (H + p.padTop + p.padBottom < 3 || W + p.padLeft + p.padRight < 3) continue;
                            std::vector<float> x(static_cast<std::size_t>(C * H * W)),
                                w(static_cast<std::size_t>(C * mult * 9));
                            for (float& v : x) v = u(gen);
                            for (float& v : w) v = u(gen);
                            std::vector<float> ya(static_cast<std::size_t>(C * mult * OH * OW), NAN), yb = ya;
                            base.depthwiseFloat(x.data(), w.data(), ya.data(), C, mult, H, W, 3, 3, OH, OW, p);
                            best.depthwiseFloat(x.data(), w.data(), yb.data(), C, mult, H, W, 3, 3, OH, OW, p);
                            QVERIFY2(sameBits(ya, yb), qPrintable(QString("depthwise s%1 H%2 W%3 pads %4%5%6%7 mult %8")
                                                                      .arg(s)
                                                                      .arg(H)
                                                                      .arg(W)
                                                                      .arg(pads[0])
                                                                      .arg(pads[1])
                                                                      .arg(pads[2])
                                                                      .arg(pads[3])
                                                                      .arg(mult)));
                            for (float v : yb) QVERIFY(!std::isnan(v));
                            // im2col of the same input with a 3x3 kernel (stride 2: the vector gather)
                            p.groups = 1;
                            std::vector<float> ca(static_cast<std::size_t>(C * 9 * OH * OW), NAN), cb = ca;
                            base.im2colFloat(x.data(), C, H, W, 3, 3, OH, OW, p, ca.data());
                            best.im2colFloat(x.data(), C, H, W, 3, 3, OH, OW, p, cb.data());
                            QVERIFY2(sameBits(ca, cb), qPrintable(QString("im2col s%1 H%2 W%3").arg(s).arg(H).arg(W)));
                            ++cases;
                        }
        QVERIFY(cases > 700);

        // epilogue chains: the chain loop against the interpreted program, on rows holding NaN,
        // infinities, signed zeros and subnormals; and which programs form a chain
        const std::vector<float> special = {NAN,     INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f,
                                            -1e-40f, 6.0f,     -6.0f,     3.5f, -0.25f};
        struct Case {
            const char* expr;
            bool chain;
        };
        for (const Case& c :
             {Case{"add(i0,i1)", true}, Case{"relu(add(i1,i0))", true}, Case{"clip{0,6}(add(i0,i1))", true},
              Case{"sub(i1,i0)", true}, Case{"true_div(sub(i0,i1),i2)", true}, Case{"maximum(i1,mul(i0,i2))", true},
              Case{"minimum(add(i0,i1),i2)", true}, Case{"true_div(i1,relu(i0))", true},
              Case{"maximum(add(i0,i1),i2)", true}, Case{"minimum(i2,sub(i0,i1))", true}, Case{"mul(i1,i0)", true},
              Case{"mul(i0,sigmoid(i0))", false}, Case{"add(mul(i0,i1),i0)", false}, Case{"exp(add(i0,i1))", false},
              Case{"add(i1,i2)", false}}) {
            const ScalarProgram prog = compileExpr(c.expr, {DType::Float32, DType::Float32, DType::Float32});
            RowEpilogue e;
            e.yInput = 0;
            const std::vector<float> k1 = {0.5f, -1.5f, NAN, 2.0f}, k2 = {3.0f, 0.0f, -2.0f, 1e-39f};
            e.values = {nullptr, k1.data(), k2.data()};
            e.channelStride = {0, 1, 1};
            e.chain = compileChain(prog, 0);
            QVERIFY2(e.chain.empty() != c.chain, c.expr);
            if (!c.chain) continue;
            const std::int64_t rows = 4, len = 2048 + 37; // one full block of the chain loop and a tail
            std::vector<float> y(static_cast<std::size_t>(rows * len));
            for (std::size_t i = 0; i < y.size(); ++i) y[i] = i % 5 == 0 ? special[(i / 5) % special.size()] : u(gen);
            std::vector<float> viaChain = y, viaProgram = y;
            base.epilogueRows(prog, e, viaChain.data(), 0, rows, len, len);
            RowEpilogue interpreted = e;
            interpreted.chain.clear();
            base.epilogueRows(prog, interpreted, viaProgram.data(), 0, rows, len, len);
            QVERIFY2(sameBits(viaChain, viaProgram), c.expr);
            std::vector<float> viaBest = y;
            best.epilogueRows(prog, e, viaBest.data(), 0, rows, len, len);
            QVERIFY2(sameBits(viaBest, viaProgram), c.expr);
        }
    }

    // Element-wise programs over float16 (ONNX's float16 tensors): computed in float32 and rounded
    // to float16 at every float16 node, bit for bit float16 arithmetic for the ops whose
    // Float16Rule allows it; the others are refused with the op named.
    void float16Elementwise() {
        using namespace cpu;
        auto half = [](std::vector<std::uint16_t> bits) {
            return Tensor::fromBytes(DType::Float16, {static_cast<std::int64_t>(bits.size())}, bits.data());
        };
        auto bitsOf = [](const Tensor& t) {
            std::vector<std::uint16_t> b(static_cast<std::size_t>(t.numel()));
            std::memcpy(b.data(), t.rawData(), b.size() * 2);
            return b;
        };
        auto run = [&](const char* expr, const std::vector<Tensor>& ins, DType outType) {
            std::vector<DType> types;
            for (const Tensor& t : ins) types.push_back(t.dtype());
            const ScalarProgram prog = compileExpr(std::string(expr), types);
            Tensor out = Tensor::empty(outType, ins[0].shape());
            evalProgram(prog, ins, out, CpuLoops::Auto);
            return out;
        };
        // 1 + 2^-11 ties to 1; 1 + 3 * 2^-11 ties to 1 + 2^-9; -2 vs 0.5; 65504 + 65504 overflows
        const Tensor x = half({0x3C00, 0x3C00, 0xC000, 0x7BFF}), y = half({0x1000, 0x1600, 0x3800, 0x7BFF});
        const Tensor three = half({0x4200, 0x4200, 0x4200, 0x4200});
        QCOMPARE(bitsOf(run("add(i0,i1)", {x, y}, DType::Float16)),
                 (std::vector<std::uint16_t>{0x3C00, 0x3C02, 0xBE00, 0x7C00}));
        // the sum is rounded before the product: 3 * 1 = 3, not 3 * (1 + 2^-11) -> 3 + 2^-9
        QCOMPARE(bitsOf(run("mul(add(i0,i1),i2)", {x, y, three}, DType::Float16))[0], std::uint16_t(0x4200));
        QCOMPARE(bitsOf(run("maximum(i0,i1)", {x, y}, DType::Float16)),
                 (std::vector<std::uint16_t>{0x3C00, 0x3C00, 0x3800, 0x7BFF}));
        // a float16 comparison and a widening cast are exact
        QCOMPARE(run("lt(i0,i1)", {x, y}, DType::Bool).toDoubles(), (std::vector<double>{0, 0, 1, 0}));
        QCOMPARE(run("cast{float64}(i0)", {y}, DType::Float64).toDoubles()[1], 3 * std::ldexp(1.0, -11));
        // a float64 input cast to float16 is rounded once (double mode)
        const std::vector<double> d = {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 0.1};
        const Tensor wide = Tensor::fromBytes(DType::Float64, {2}, d.data());
        QCOMPARE(bitsOf(run("cast{float16}(i0)", {wide}, DType::Float16)),
                 (std::vector<std::uint16_t>{0x3C01, 0x2E66}));
        // refused: a function whose float32 value rounded is not float16's, a sum of three
        const QString fn = errorOf([&] { (void)run("exp(i0)", {x}, DType::Float16); });
        QVERIFY2(fn.contains("exp in float16 is not supported by the CPU backend"), qPrintable(fn));
        const QString sum3 = errorOf([&] { (void)run("add(i0,i1,i2)", {x, y, three}, DType::Float16); });
        QVERIFY2(sum3.contains("add of 3 arguments in float16"), qPrintable(sum3));
    }

    // bfloat16 (ONNX's BFLOAT16): exact widening; narrowing truncates toward zero as ONNX 1.12's
    // Cast reference (the high 16 bits of a float32), from float64 once; NaN stays quiet; an
    // element-wise cast to bfloat16 computes the same, arithmetic in bfloat16 is refused.
    void bfloat16Conversions() {
        using namespace cpu;
        const std::vector<float> f = {0.48033667f, -0.48033667f, 1.0f, NAN, -INFINITY, 3.0e38f, 1e-40f};
        std::vector<std::uint16_t> b(f.size());
        convertElements(f.data(), DType::Float32, b.data(), DType::BFloat16, static_cast<std::int64_t>(f.size()));
        const std::vector<std::uint16_t> want = {0x3EF5, 0xBEF5, 0x3F80, 0x7FC0, 0xFF80, 0x7F61, 0x0001};
        for (std::size_t i = 0; i < want.size(); ++i) QCOMPARE(b[i], want[i]);
        std::vector<double> wide(b.size());
        convertElements(b.data(), DType::BFloat16, wide.data(), DType::Float64, static_cast<std::int64_t>(b.size()));
        QCOMPARE(wide[0], 0.478515625);
        QCOMPARE(wide[2], 1.0);
        QVERIFY(std::isnan(wide[3]));
        QCOMPARE(wide[4], -INFINITY);
        // float64 just below 2: truncated once (through a float32 rounded to nearest it would be 2)
        const double below2 = 2.0 - std::ldexp(1.0, -40);
        std::uint16_t nb = 0;
        convertElements(&below2, DType::Float64, &nb, DType::BFloat16, 1);
        QCOMPARE(nb, std::uint16_t(0x3FFF));
        // float16 <-> bfloat16 goes through float32: 65504 (0x7BFF) truncates to 65280
        const std::uint16_t h = 0x7BFF;
        convertElements(&h, DType::Float16, &nb, DType::BFloat16, 1);
        QCOMPARE(nb, std::uint16_t(0x477F));
        QCOMPARE(upcast(DType::Float16, DType::BFloat16), DType::Float32);
        QCOMPARE(upcast(DType::BFloat16, DType::Float32), DType::Float32);
        QCOMPARE(upcast(DType::Int8, DType::BFloat16), DType::BFloat16);

        const Tensor x = Tensor::fromBytes(DType::Float32, {2}, f.data());
        Tensor y = Tensor::empty(DType::BFloat16, {2});
        evalProgram(compileExpr(std::string("cast{bfloat16}(i0)"), {DType::Float32}), {x}, y, CpuLoops::Auto);
        QCOMPARE(std::memcmp(y.rawData(), want.data(), 4), 0);
        Tensor back = Tensor::empty(DType::Float32, {2});
        evalProgram(compileExpr(std::string("maximum(i0,i1)"), {DType::BFloat16, DType::BFloat16}), {y, y}, y,
                    CpuLoops::Auto);
        evalProgram(compileExpr(std::string("cast{float32}(i0)"), {DType::BFloat16}), {y}, back, CpuLoops::Auto);
        QCOMPARE(back.toDoubles(), (std::vector<double>{0.478515625, -0.478515625}));
        const QString sum = errorOf([&] {
            (void)compileExpr(std::string("add(i0,i1)"), {DType::BFloat16, DType::BFloat16});
        });
        QVERIFY2(sum.contains("add in bfloat16 is not supported by the CPU backend"), qPrintable(sum));
    }
};

QTEST_GUILESS_MAIN(TestExecLoops)
#include "tst_exec_loops.moc"
