// ONNX neural-network ops to Theano Dot, BatchedDot, Gemm, Softmax, AbstractConv2d, Pool and
// BatchNormInference (OPS.md "Import rules").
#include "NodeMapper.h"
#include "OnnxModelChecks.h"

#include "passlens/ir/OpRegistry.h"

#include <algorithm>

namespace passlens::onnximport {
namespace {

std::vector<Variable*> mapMatMul(NodeMapper& m) {
    m.need(2);
    const int ra = m.rank(m.in[0]), rb = m.rank(m.in[1]);
    if (ra <= 2 && rb <= 2 && ra >= 1 && rb >= 1) return {m.mk("Dot", json::object(), {m.in[0], m.in[1]})};
    if (ra >= 3 && ra == rb) return {m.mk("BatchedDot", json::object(), {m.in[0], m.in[1]})};
    if (ra >= 3 && rb == 2) {
        // Theano's tensordot: reshape to 2-D, Dot, reshape back.
        const Type& ta = m.in[0]->type();
        std::int64_t rows = 1;
        for (int i = 0; i < ra - 1; ++i) {
            const std::int64_t d = ta.dims()[static_cast<std::size_t>(i)];
            rows = (rows < 0 || d < 0) ? U : rows * d;
        }
        const std::int64_t k = ta.dims().back(), n = m.in[1]->type().dims()[1];
        if (rows < 0 || k < 0 || n < 0) return {};
        Variable* a2 = m.mk("Reshape", {{"ndim", 2}}, {m.in[0], m.constInt64({rows, k})});
        Variable* d = m.mk("Dot", json::object(), {a2, m.in[1]});
        std::vector<std::int64_t> outShape(ta.dims().begin(), ta.dims().end() - 1);
        outShape.push_back(n);
        return {m.mk("Reshape", {{"ndim", ra}}, {d, m.constInt64(outShape)})};
    }
    return {};
}

std::vector<Variable*> mapGemm(NodeMapper& m) {
    m.need(2);
    m.needRank(0, 2);
    m.needRank(1, 2);
    Variable* a = m.in[0];
    Variable* b = m.in[1];
    if (m.intAttr("transA", 0)) a = m.mk("DimShuffle", {{"order", {1, 0}}}, {a});
    if (m.intAttr("transB", 0)) b = m.mk("DimShuffle", {{"order", {1, 0}}}, {b});
    const std::int64_t rowCount = a->type().dims()[0], n = b->type().dims()[1];
    const DType dt = upcast(a->type().dtype(), b->type().dtype());
    double beta = m.floatAttr("beta", 1.0f);
    const double alpha = m.floatAttr("alpha", 1.0f);
    Variable* c = m.input(2);
    if (!c) {
        c = m.constScalar(dt, 0.0);
        beta = 0.0;
    }
    Variable* rows = rowCount >= 0 ? m.constInt64({rowCount}, true) : m.mk("Shape_i", {{"i", 0}}, {a});
    Variable* cols = n >= 0 ? m.constInt64({n}, true) : m.mk("Shape_i", {{"i", 1}}, {b});
    Variable* z = m.mk("Alloc", json::object(), {c, rows, cols});
    return {m.mk("Gemm", json::object(), {z, m.constScalar(dt, alpha), a, b, m.constScalar(dt, beta)})};
}

std::vector<Variable*> mapSoftmax(NodeMapper& m) {
    const std::string& t = m.node.op_type();
    m.need(1);
    const int nd = m.rank(m.in[0]);
    const std::int64_t axis = m.axisAttr("axis", m.opset < 13 ? 1 : -1, nd);
    if (m.opset < 13 && axis != nd - 1) return {};
    return {m.mk(t, {{"axis", axis}}, {m.in[0]})};
}

std::vector<Variable*> mapConv(NodeMapper& m) {
    m.need(2);
    const int nd = m.rank(m.in[0]);
    if (nd < 3) m.fail("input 0 must have rank at least 3 (N, C, spatial axes), has type " + m.in[0]->type().str());
    m.needRank(1, nd);
    const int spatial = nd - 2;
    const std::int64_t group = m.intAttr("group", 1);
    if (group < 1) m.fail("attribute 'group' is " + std::to_string(group) + ", it must be at least 1");
    const std::int64_t outChannels = m.in[1]->type().dims()[0];
    if (outChannels >= 0 && outChannels % group)
        m.fail("the kernel " + m.in[1]->type().str() + " has " + std::to_string(outChannels) +
               " output channels, not a multiple of group " + std::to_string(group));
    const auto ks = m.spatialAttr("kernel_shape", spatial, 1);
    if (m.attr("kernel_shape", onnx::AttributeProto::INTS))
        for (int a = 0; a < spatial; ++a) {
            const std::int64_t k = m.in[1]->type().dims()[static_cast<std::size_t>(2 + a)];
            if (k >= 0 && k != ks[static_cast<std::size_t>(a)])
                m.fail("attribute 'kernel_shape' " + intsText(ks) + " does not match the kernel " +
                       m.in[1]->type().str());
        }
    std::vector<std::int64_t> strides = m.spatialAttr("strides", spatial, 1),
                              dil = m.spatialAttr("dilations", spatial, 1);
    std::vector<std::int64_t> pads = m.padsAttr(spatial);
    const std::string autoPad = m.autoPadAttr();
    if (m.input(2)) m.needRank(2, 1);
    if (nd != 3 && nd != 4) return {};
    Variable* x = m.in[0];
    Variable* w = m.in[1];
    if (nd == 3) {
        // conv1d as conv2d over a height of 1
        strides.insert(strides.begin(), 1);
        dil.insert(dil.begin(), 1);
        pads = {0, pads[0], 0, pads[1]};
        x = m.mk("DimShuffle", {{"order", {0, 1, "x", 2}}}, {x});
        w = m.mk("DimShuffle", {{"order", {0, 1, "x", 2}}}, {w});
    }
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        for (int a = 0; a < 2; ++a) {
            const std::int64_t n = x->type().dims()[static_cast<std::size_t>(2 + a)],
                               k = w->type().dims()[static_cast<std::size_t>(2 + a)];
            if (n < 0 || k < 0) return {};
            const std::int64_t s = strides[static_cast<std::size_t>(a)], out = (n + s - 1) / s;
            const std::int64_t total =
                std::max<std::int64_t>(0, (out - 1) * s + dil[static_cast<std::size_t>(a)] * (k - 1) + 1 - n);
            const std::int64_t small = total / 2, big = total - small;
            pads[static_cast<std::size_t>(a)] = autoPad == "SAME_UPPER" ? small : big;
            pads[static_cast<std::size_t>(a + 2)] = autoPad == "SAME_UPPER" ? big : small;
        }
    } else if (autoPad == "VALID") {
        pads.assign(4, 0);
    }
    json bm;
    if (pads[0] == pads[2] && pads[1] == pads[3])
        bm = json::array({pads[0], pads[1]});
    else
        bm = json::array({json::array({pads[0], pads[2]}), json::array({pads[1], pads[3]})});
    if (pads == std::vector<std::int64_t>{0, 0, 0, 0}) bm = "valid";
    Variable* y =
        m.mk("AbstractConv2d",
             {{"border_mode", bm}, {"subsample", strides}, {"filter_dilation", dil}, {"num_groups", group}}, {x, w});
    if (Variable* b = m.input(2)) y = m.elem("add", {y, m.mk("DimShuffle", {{"order", {"x", 0, "x", "x"}}}, {b})});
    if (nd == 3) y = m.mk("DimShuffle", {{"order", {0, 1, 3}}}, {y});
    return {y};
}

std::vector<Variable*> mapPool(NodeMapper& m) {
    const std::string& t = m.node.op_type();
    m.need(1);
    const int spatial = m.rank(m.in[0]) - 2;
    if (spatial < 1)
        m.fail("input 0 must have rank at least 3 (N, C, spatial axes), has type " + m.in[0]->type().str());
    if (!m.attr("kernel_shape", onnx::AttributeProto::INTS)) m.fail("attribute 'kernel_shape' is required");
    const auto ks = m.spatialAttr("kernel_shape", spatial, 1);
    const auto strides = m.spatialAttr("strides", spatial, 1), dil = m.spatialAttr("dilations", spatial, 1);
    auto p = m.padsAttr(spatial);
    const std::string autoPad = m.autoPadAttr();
    const std::int64_t ceil = m.intAttr("ceil_mode", 0), includePad = m.intAttr("count_include_pad", 0);
    if (m.node.output_size() > 1 || spatial != 2) return {};
    // Theano's Pool takes float inputs only; integer pools (MaxPool of uint8, int8) stay ONNX ops
    const DType dt = m.in[0]->type().dtype();
    if (dt != DType::Float32 && dt != DType::Float64) return {};
    if (std::any_of(dil.begin(), dil.end(), [](auto x) { return x != 1; })) return {};
    if (autoPad != "NOTSET" && autoPad != "VALID") return {};
    if (autoPad == "VALID") p.assign(4, 0);
    json pad = json::array();
    for (int a = 0; a < 2; ++a) {
        if (p[static_cast<std::size_t>(a)] == p[static_cast<std::size_t>(a + 2)])
            pad.push_back(p[static_cast<std::size_t>(a)]);
        else
            pad.push_back(json::array({p[static_cast<std::size_t>(a)], p[static_cast<std::size_t>(a + 2)]}));
    }
    std::string mode = "max";
    if (t == "AveragePool") mode = includePad ? "average_inc_pad" : "average_exc_pad";
    return {m.mk("Pool", {{"mode", mode}, {"ws", ks}, {"stride", strides}, {"pad", pad}, {"ignore_border", ceil == 0}},
                 {m.in[0]})};
}

std::vector<Variable*> mapBatchNormalization(NodeMapper& m) {
    m.need(5);
    if (m.rank(m.in[0]) < 2) m.fail("input 0 must have rank at least 2 (N, C, ...), has type " + m.in[0]->type().str());
    // before m.opset 9, spatial=0 gives scale, B, mean and var one value per (C, D1, ...)
    if (m.opset < 9 && m.intAttr("spatial", 1) == 0) return {};
    for (std::size_t k = 1; k < 5; ++k) m.needRank(k, 1);
    if (m.node.output_size() > 1 || m.intAttr("training_mode", 0)) return {};
    return {m.mk("BatchNormInference", {{"epsilon", m.floatAttr("epsilon", 1e-5f)}},
                 {m.in[0], m.in[1], m.in[2], m.in[3], m.in[4]})};
}

} // namespace

void addNetworkMappers(MapperTable& table) {
    addMapper(table, "MatMul", mapMatMul);
    addMapper(table, "Gemm", mapGemm);
    addMapper(table, "Softmax", mapSoftmax);
    addMapper(table, "LogSoftmax", mapSoftmax);
    addMapper(table, "Conv", mapConv);
    addMapper(table, "MaxPool", mapPool);
    addMapper(table, "AveragePool", mapPool);
    addMapper(table, "BatchNormalization", mapBatchNormalization);
}

} // namespace passlens::onnximport
