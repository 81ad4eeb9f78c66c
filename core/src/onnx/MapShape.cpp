// ONNX shape ops to Theano DimShuffle, Reshape, Flatten, Shape, Join, Split and Alloc
// (OPS.md "Import rules").
#include "NodeMapper.h"
#include "OnnxModelChecks.h"

#include "passlens/ir/OpRegistry.h"

#include <algorithm>
#include <set>

namespace passlens::onnximport {
namespace {

std::vector<Variable*> mapTranspose(NodeMapper& m) {
    m.need(1);
    return {m.mk("DimShuffle", {{"order", m.permAttr(m.rank(m.in[0]))}}, {m.in[0]})};
}

std::vector<Variable*> mapUnsqueeze(NodeMapper& m) {
    m.need(1);
    bool dyn;
    auto ax = m.axes(1, 13, dyn);
    if (!ax || dyn) return {};
    const int nd = m.rank(m.in[0]) + static_cast<int>(ax->size());
    const auto normed = m.normAxes(*ax, nd, "axes", true);
    const std::set<std::int64_t> newAxes(normed.begin(), normed.end());
    json order = json::array();
    int src = 0;
    for (int i = 0; i < nd; ++i) {
        if (newAxes.count(i))
            order.push_back("x");
        else
            order.push_back(src++);
    }
    return {m.mk("DimShuffle", {{"order", order}}, {m.in[0]})};
}

std::vector<Variable*> mapSqueeze(NodeMapper& m) {
    m.need(1);
    bool dyn;
    auto ax = m.axes(1, 13, dyn);
    if (dyn) return {};
    const Type& ty = m.in[0]->type();
    std::set<std::int64_t> drop;
    if (ax) {
        for (auto a : m.normAxes(*ax, ty.ndim(), "axes", true)) {
            const std::int64_t d = ty.dims()[static_cast<std::size_t>(a)];
            if (d >= 0 && d != 1)
                m.fail("axes: axis " + std::to_string(a) + " of " + ty.str() + " has size " + std::to_string(d) +
                       ", it cannot be squeezed");
            drop.insert(a);
        }
    } else {
        for (int i = 0; i < ty.ndim(); ++i) {
            if (ty.dims()[static_cast<std::size_t>(i)] < 0) return {};
            if (ty.dims()[static_cast<std::size_t>(i)] == 1) drop.insert(i);
        }
    }
    json order = json::array();
    for (int i = 0; i < ty.ndim(); ++i)
        if (!drop.count(i)) order.push_back(i);
    return {m.mk("DimShuffle", {{"order", order}}, {m.in[0]})};
}

std::vector<Variable*> mapReshape(NodeMapper& m) {
    if (m.opset < 5) return {}; // Reshape-1 takes the shape as an attribute
    m.need(2);
    if (m.intAttr("allowzero", 0)) return {};
    const Type& st = m.in[1]->type();
    if (!st.rankKnown() || st.ndim() != 1 || st.dims()[0] < 0) return {};
    const std::int64_t nd = st.dims()[0];
    Variable* shape = m.in[1];
    if (auto c = m.constInts(m.in[1])) {
        // ONNX's 0 copies the input dim; Theano's Reshape has no such rule.
        bool hasZero = false;
        std::vector<std::int64_t> s = *c;
        if (std::count(s.begin(), s.end(), -1) > 1) m.fail("shape " + intsText(s) + " has more than one -1");
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (s[i] < -1)
                m.fail("shape " + intsText(s) + " has entry " + std::to_string(s[i]) + ", entries must be at least -1");
            if (s[i] != 0) continue;
            hasZero = true;
            if (static_cast<int>(i) >= m.rank(m.in[0]))
                m.fail("Reshape copies dim " + std::to_string(i) + " that the input does not have");
            s[i] = m.in[0]->type().dims()[i];
            if (s[i] < 0) return {};
        }
        if (hasZero) shape = m.constInt64(s);
    } else if (!m.scope.parent && m.in[1]->isInput()) {
        // a shape the model's caller gives may hold ONNX's 0 (copy the input's dim), which
        // Theano's Reshape takes literally: OnnxReshape applies the rule at run time
        return {};
    }
    return {m.mk("Reshape", {{"ndim", nd}}, {m.in[0], shape})};
}

std::vector<Variable*> mapFlatten(NodeMapper& m) {
    m.need(1);
    const Type& ty = m.in[0]->type();
    std::int64_t axis = m.intAttr("axis", 1);
    if (!ty.rankKnown()) return {};
    if (axis < -ty.ndim() || axis > ty.ndim())
        m.fail("attribute 'axis': " + std::to_string(axis) + " out of range for rank " + std::to_string(ty.ndim()) +
               " (Flatten allows [-r, r])");
    if (axis < 0) axis += ty.ndim();
    if (axis == 1 && ty.ndim() >= 2)
        return {m.mk("Flatten", {{"outdim", 2}}, {m.in[0]})}; // Theano's Flatten{2} needs rank >= 2
    if (!ty.isStatic()) return {};
    std::int64_t a = 1, b = 1;
    for (int i = 0; i < ty.ndim(); ++i) (i < axis ? a : b) *= ty.dims()[static_cast<std::size_t>(i)];
    return {m.mk("Reshape", {{"ndim", 2}}, {m.in[0], m.constInt64({a, b})})};
}

std::vector<Variable*> mapShape(NodeMapper& m) {
    m.need(1);
    const int nd = m.rank(m.in[0]);
    std::int64_t start = m.intAttr("start", 0), end = m.intAttr("end", nd);
    Variable* s = m.mk("Shape", json::object(), {m.in[0]});
    // negative values count from the end; both are clamped to [0, rank] (Shape-15)
    if (start < 0) start += nd;
    if (end < 0) end += nd;
    start = std::clamp<std::int64_t>(start, 0, nd);
    end = std::clamp<std::int64_t>(end, 0, nd);
    if (start == 0 && end == nd) return {s};
    return {m.mk("Subtensor", {{"idx", json::array({json{{"start", start}, {"stop", end}}})}}, {s})};
}

std::vector<Variable*> mapSize(NodeMapper& m) {
    m.need(1);
    return {};
}

std::vector<Variable*> mapConcat(NodeMapper& m) {
    m.need(std::max<std::size_t>(m.in.size(), 1));
    // axis is required from Concat-4 on; Concat-1 defaults it to 1
    if (m.opset >= 4 && !m.attr("axis", onnx::AttributeProto::INT)) m.fail("attribute 'axis' is required");
    for (std::size_t k = 1; k < m.in.size(); ++k)
        if (m.rank(m.in[k]) != m.rank(m.in[0]))
            m.fail("input " + std::to_string(k) + " has type " + m.in[k]->type().str() + ", input 0 has " +
                   m.in[0]->type().str());
    return {m.mk("Join", {{"axis", m.axisAttr("axis", 1, m.rank(m.in[0]))}}, m.in)};
}

std::vector<Variable*> mapSplit(NodeMapper& m) {
    m.need(1);
    const int nd = m.rank(m.in[0]);
    const std::int64_t axis = m.axisAttr("axis", 0, nd);
    const std::int64_t n = m.node.output_size();
    if (n < 1) m.fail("Split has no outputs");
    const std::int64_t d = m.in[0]->type().dims()[static_cast<std::size_t>(axis)];
    std::vector<std::int64_t> sizes;
    if (m.opset < 13) {
        if (auto s = m.intsAttr("split")) sizes = *s;
    } else if (m.input(1)) {
        auto s = m.constInts(m.input(1));
        if (!s) return {};
        sizes = *s;
    }
    if (!sizes.empty()) m.checkSplitSizes(sizes, n, d);
    if (sizes.empty()) {
        if (d < 0 || d % n) return {};
        sizes.assign(static_cast<std::size_t>(n), d / n);
    }
    Apply* a = m.g.makeApply(Op::get("Split", {{"axis", axis}, {"n_splits", n}}), {m.in[0], m.constInt64(sizes)},
                             std::nullopt, m.node.name());
    return a->outputs();
}

std::vector<Variable*> mapExpand(NodeMapper& m) {
    m.need(2);
    const Type& st = m.in[1]->type();
    if (!st.rankKnown() || st.ndim() != 1 || st.dims()[0] < 0) return {};
    const std::int64_t n = st.dims()[0];
    const int r = m.rank(m.in[0]);
    if (!isInteger(st.dtype())) m.fail("shape must be integers, got " + st.str());
    auto c = m.constInts(m.in[1]);
    std::vector<Variable*> ins{m.in[0]};
    const int outRank = static_cast<int>(std::max<std::int64_t>(n, r));
    // Each output dim: the input's m.where the shape has no entry or the input's dim is > 1,
    // the shape's entry m.where the input's is 1 or absent; both broadcast (one is 1 or equal).
    for (int i = 0; i < outRank; ++i) {
        const int xi = i - (outRank - r), si = i - (outRank - static_cast<int>(n));
        const std::int64_t xd = xi >= 0 ? m.in[0]->type().dims()[static_cast<std::size_t>(xi)] : 1;
        auto xDim = [&] { return xd >= 0 ? m.constInt64({xd}, true) : m.mk("Shape_i", {{"i", xi}}, {m.in[0]}); };
        if (si < 0) {
            ins.push_back(xDim());
            continue;
        }
        if (c) {
            const std::int64_t cd = (*c)[static_cast<std::size_t>(si)];
            if (cd < 0 || (xd >= 0 && xd != 1 && cd != 1 && cd != xd))
                m.fail("cannot expand " + m.in[0]->type().str() + " to shape " + intsText(*c));
            if (xd < 0 && cd == 1) {
                ins.push_back(xDim());
                continue;
            }
            ins.push_back(m.constInt64({std::max(xd, cd)}, true));
            continue;
        }
        if (xd > 1) {
            ins.push_back(xDim());
            continue;
        }
        Variable* sd = m.mk("Subtensor", {{"idx", json::array({si})}}, {m.in[1]});
        if (sd->type().dtype() != DType::Int64) sd = m.elem("cast", {sd}, {{"dtype", "int64"}});
        ins.push_back(xd < 0 ? m.elem("maximum", {xDim(), sd}) : sd);
    }
    return {m.mk("Alloc", json::object(), ins)};
}

std::vector<Variable*> mapConstantOfShape(NodeMapper& m) {
    m.need(1);
    Variable* value;
    if (const auto* a = m.attr("value", onnx::AttributeProto::TENSOR)) {
        onnx::TensorProto tp = a->t();
        auto d = m.imp.tensor(tp, m.where);
        if (d->numElements() != 1) m.fail("attribute 'value' must hold one element, has dims " + intsText(d->shape));
        d->shape.clear();
        value = m.g.addConstant(d);
    } else {
        value = m.constScalar(DType::Float32, 0.0);
    }
    const Type& st = m.in[0]->type();
    if (!isInteger(st.dtype()) || st.ndim() != 1) m.fail("input must be a vector of integers, got " + st.str());
    if (st.dims()[0] < 0) return {};
    std::vector<Variable*> ins{value};
    auto c = m.constInts(m.in[0]);
    if (c)
        for (auto x : *c)
            if (x < 0) m.fail("shape " + intsText(*c) + " has a negative entry");
    for (std::int64_t i = 0; i < st.dims()[0]; ++i)
        ins.push_back(c ? m.constInt64({(*c)[static_cast<std::size_t>(i)]}, true)
                        : m.mk("Subtensor", {{"idx", json::array({i})}}, {m.in[0]}));
    return {m.mk("Alloc", json::object(), ins)};
}

} // namespace

void addShapeMappers(MapperTable& table) {
    addMapper(table, "Transpose", mapTranspose);
    addMapper(table, "Unsqueeze", mapUnsqueeze);
    addMapper(table, "Squeeze", mapSqueeze);
    addMapper(table, "Reshape", mapReshape);
    addMapper(table, "Flatten", mapFlatten);
    addMapper(table, "Shape", mapShape);
    addMapper(table, "Size", mapSize);
    addMapper(table, "Concat", mapConcat);
    addMapper(table, "Split", mapSplit);
    addMapper(table, "Expand", mapExpand);
    addMapper(table, "ConstantOfShape", mapConstantOfShape);
}

} // namespace passlens::onnximport
