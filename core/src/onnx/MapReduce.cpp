// ONNX reductions to Theano CAReduce (mean as a sum divided by the element count, as Theano
// does), the global pools, CumSum, TopK and ArgMax / ArgMin (OPS.md "Import rules").
#include "NodeMapper.h"

#include "passlens/ir/OpRegistry.h"

#include <set>

namespace passlens::onnximport {
namespace {

std::vector<Variable*> mapReduce(NodeMapper& m) {
    const std::string& t = m.node.op_type();
    m.need(1);
    bool dyn;
    auto ax = m.axes(1, t == "ReduceSum" ? 13 : 18, dyn);
    if (dyn) return {};
    const int nd = m.rank(m.in[0]);
    const bool keep = m.intAttr("keepdims", 1) != 0;
    std::set<std::int64_t> red;
    if (ax && !ax->empty())
        for (auto a : m.normAxes(*ax, nd, "axes", false)) red.insert(a);
    else if (m.intAttr("noop_with_empty_axes", 0))
        return {m.in[0]};
    else
        for (int i = 0; i < nd; ++i) red.insert(i);
    const std::string scalar = t == "ReduceMax"    ? "maximum"
                               : t == "ReduceMin"  ? "minimum"
                               : t == "ReduceProd" ? "mul"
                                                   : "add";
    json axisList = json::array();
    for (auto a : red) axisList.push_back(a);
    Variable* r = m.mk("CAReduce", {{"scalar", scalar}, {"axis", axisList}}, {m.in[0]});
    if (t == "ReduceMean") r = m.elem("true_div", {r, m.countOf(m.in[0], red, r->type().dtype())});
    if (r->type().dtype() != m.in[0]->type().dtype())
        r = m.elem("cast", {r}, {{"dtype", std::string(dtypeName(m.in[0]->type().dtype()))}});
    if (keep) {
        json order = json::array();
        int src = 0;
        for (int i = 0; i < nd; ++i) order.push_back(red.count(i) ? json("x") : json(src++));
        r = m.mk("DimShuffle", {{"order", order}}, {r});
    }
    return {r};
}

std::vector<Variable*> mapGlobalPool(NodeMapper& m) {
    const std::string& t = m.node.op_type();
    m.need(1);
    const int nd = m.rank(m.in[0]);
    if (nd < 3) return {};
    json axisList = json::array();
    std::set<std::int64_t> red;
    for (int i = 2; i < nd; ++i) {
        axisList.push_back(i);
        red.insert(i);
    }
    const bool avg = t == "GlobalAveragePool";
    Variable* r = m.mk("CAReduce", {{"scalar", avg ? "add" : "maximum"}, {"axis", axisList}}, {m.in[0]});
    if (avg) r = m.elem("true_div", {r, m.countOf(m.in[0], red, r->type().dtype())});
    json order = {0, 1};
    for (int i = 2; i < nd; ++i) order.push_back("x");
    return {m.mk("DimShuffle", {{"order", order}}, {r})};
}

std::vector<Variable*> mapCumSum(NodeMapper& m) {
    m.need(2);
    if (m.in[1]->type().ndim() > 1 || !isInteger(m.in[1]->type().dtype()))
        m.fail("axis must be an integer scalar, got " + m.in[1]->type().str());
    if (m.intAttr("exclusive", 0) || m.intAttr("reverse", 0)) return {};
    auto ax = m.constInts(m.in[1]);
    if (!ax || ax->size() != 1) return {};
    return {m.mk("CumOp", {{"axis", m.normAxis((*ax)[0], m.rank(m.in[0]))}, {"mode", "add"}}, {m.in[0]})};
}

// TopK to TopKOp (tensor/sort.py topk_and_argtopk): k an int64 scalar, negated for the
// smallest (largest=0), Theano's convention. Opset 1 takes k as an attribute, opset 10 as input
// 1: a constant, or else its element 0 read on the host behind an Assert that it is not
// negative. Opset 11 adds largest and sorted (TopKOp's `sorted`; its kernels always sort, with
// ONNX's order: docs/THEANO_NOTES.md).
std::vector<Variable*> mapTopK(NodeMapper& m) {
    m.need(m.opset < 10 ? 1 : 2);
    const std::int64_t axis = m.axisAttr("axis", -1, m.rank(m.in[0]));
    const bool largest = m.opset < 11 || m.intAttr("largest", 1) != 0;
    const bool sorted = m.opset < 11 || m.intAttr("sorted", 1) != 0;
    std::optional<std::int64_t> known;
    Variable* k = nullptr;
    if (m.opset < 10) {
        const auto* a = m.attr("k", onnx::AttributeProto::INT);
        if (!a) m.fail("TopK-1 needs the attribute 'k'");
        known = a->i();
    } else {
        Variable* kIn = m.in[1];
        if (!isInteger(kIn->type().dtype()) || kIn->type().ndim() > 1 ||
            (kIn->type().ndim() == 1 && kIn->type().dims()[0] >= 0 && kIn->type().dims()[0] != 1))
            m.fail("K must be an integer tensor of one element, got " + kIn->type().str());
        if (auto c = m.constInts(kIn)) {
            if (c->size() != 1) m.fail("K must hold one value, holds " + std::to_string(c->size()));
            known = (*c)[0];
        } else {
            Variable* k0 = m.scalarAt(kIn, 0);
            k = m.mk("Assert", {{"msg", "TopK: K must not be negative"}},
                     {k0, m.elem("ge", {k0, m.constInt64({0}, true)})});
            if (!largest) k = m.elem("neg", {k});
        }
    }
    if (known) {
        if (*known < 0) m.fail("K must not be negative, got " + std::to_string(*known));
        k = m.constInt64({largest ? *known : -*known}, true);
    }
    Apply* a = m.g.makeApply(Op::get("TopKOp", {{"axis", axis}, {"sorted", sorted}}), {m.in[0], k}, std::nullopt,
                             m.node.name());
    return a->outputs();
}

// ArgMax / ArgMin (opsets 1-13): Theano's argmax, output 1 of MaxAndArgmax{axis}(x), with a
// DimShuffle adding the axis back for keepdims (tensor/basic.py argmax, makeKeepDims). ArgMin is
// the argmax of a decreasing bijection of x, as Theano's argmin: -x for floats, max - x for
// unsigned integers; for signed integers (-1) - x (that is ~x), where Theano's -x wraps at the
// minimum value; uint64's max is built from its bit pattern (a double would round it). Stay Onnx
// ops: select_last_index (Theano's argmax takes the first index), bool and bfloat16 (no Theano
// argmax).
std::vector<Variable*> mapArgExtreme(NodeMapper& m) {
    m.need(1);
    Variable* x = m.in[0];
    const int nd = m.rank(x);
    const std::int64_t axis = m.axisAttr("axis", 0, nd);
    const bool keep = m.intAttr("keepdims", 1) != 0;
    const DType dt = x->type().dtype();
    if (m.intAttr("select_last_index", 0) != 0 || dt == DType::Bool || dt == DType::BFloat16) return {};
    if (m.node.op_type() == "ArgMin") {
        if (isFloat(dt))
            x = m.elem("neg", {x});
        else if (dt == DType::UInt64)
            x = m.elem("sub", {m.g.addConstant(TensorData::fromInts(dt, {}, {-1})), x});
        else if (isUnsigned(dt))
            x = m.elem("sub",
                       {m.constScalar(dt, static_cast<double>((std::uint64_t(1) << (8 * dtypeSize(dt))) - 1)), x});
        else
            x = m.elem("sub", {m.constScalar(dt, -1), x});
    }
    Apply* a =
        m.g.makeApply(Op::get("MaxAndArgmax", {{"axis", json::array({axis})}}), {x}, std::nullopt, m.node.name());
    Variable* r = a->output(1);
    if (keep) {
        json order = json::array();
        for (int i = 0, src = 0; i < nd; ++i) order.push_back(i == axis ? json("x") : json(src++));
        r = m.mk("DimShuffle", {{"order", order}}, {r});
    }
    return {r};
}

} // namespace

void addReductionMappers(MapperTable& table) {
    addMapper(table, "ReduceSum", mapReduce);
    addMapper(table, "ReduceMean", mapReduce);
    addMapper(table, "ReduceMax", mapReduce);
    addMapper(table, "ReduceMin", mapReduce);
    addMapper(table, "ReduceProd", mapReduce);
    addMapper(table, "GlobalAveragePool", mapGlobalPool);
    addMapper(table, "GlobalMaxPool", mapGlobalPool);
    addMapper(table, "CumSum", mapCumSum);
    addMapper(table, "TopK", mapTopK);
    addMapper(table, "ArgMax", mapArgExtreme);
    addMapper(table, "ArgMin", mapArgExtreme);
}

} // namespace passlens::onnximport
