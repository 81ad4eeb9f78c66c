// ONNX Gather and Slice to Theano Subtensor, AdvancedSubtensor1 and Shape_i (OPS.md "Import
// rules"): constant indices and bounds become index lists, symbolic ones scalar inputs.
#include "NodeMapper.h"

#include "passlens/ir/OpRegistry.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>

namespace passlens::onnximport {
namespace {

std::vector<Variable*> mapGather(NodeMapper& m) {
    m.need(2);
    const int nd = m.rank(m.in[0]);
    const std::int64_t axis = m.axisAttr("axis", 0, nd);
    auto idx = m.constInts(m.in[1]);
    if (!isInteger(m.in[1]->type().dtype())) m.fail("indices must be integers, got " + m.in[1]->type().str());
    if (idx) {
        const std::int64_t d = m.in[0]->type().dims()[static_cast<std::size_t>(axis)];
        for (auto i : *idx)
            if (d >= 0 && (i < -d || i >= d))
                m.fail("index " + std::to_string(i) + " out of range for axis " + std::to_string(axis) + " of " +
                       m.in[0]->type().str());
    }
    if (!idx && m.in[1]->type().ndim() == 0 && isInteger(m.in[1]->type().dtype())) {
        json list = json::array();
        for (std::int64_t a = 0; a < axis; ++a) list.push_back(json::object());
        list.push_back("?");
        Variable* i = m.in[1];
        if (i->type().dtype() != DType::Int64) i = m.elem("cast", {i}, {{"dtype", "int64"}});
        return {m.mk("Subtensor", {{"idx", list}}, {m.in[0], i})};
    }
    if (idx && m.in[1]->type().ndim() == 0) {
        // x.shape[i] is Shape_i{i}(x) (Theano's shape graph after local_shape_to_shape_i)
        if (Apply* o = m.in[0]->owner(); o && o->op().kind() == "Shape" && axis == 0) {
            const std::int64_t i = m.normAxis((*idx)[0], m.rank(o->input(0)), "index into the shape:");
            return {m.mk("Shape_i", {{"i", i}}, {o->input(0)})};
        }
        json list = json::array();
        for (std::int64_t a = 0; a < axis; ++a) list.push_back(json::object());
        list.push_back((*idx)[0]);
        return {m.mk("Subtensor", {{"idx", list}}, {m.in[0]})};
    }
    if (axis == 0 && m.in[1]->type().ndim() == 1)
        return {m.mk("AdvancedSubtensor1", json::object(), {m.in[0], m.in[1]})};
    if (m.in[1]->type().ndim() == 1) {
        // take along another axis: move it to the front, AdvancedSubtensor1, move it back
        json fwd = json::array({axis}), back = json::array();
        for (int a = 0; a < nd; ++a)
            if (a != axis) fwd.push_back(a);
        for (int a = 1; a <= nd - 1; ++a) {
            if (a - 1 == axis) back.push_back(0);
            back.push_back(a);
        }
        if (axis == nd - 1) back.push_back(0);
        Variable* moved = m.mk("DimShuffle", {{"order", fwd}}, {m.in[0]});
        Variable* taken = m.mk("AdvancedSubtensor1", json::object(), {moved, m.in[1]});
        return {m.mk("DimShuffle", {{"order", back}}, {taken})};
    }
    return {};
}

std::vector<Variable*> mapSlice(NodeMapper& m) {
    if (m.opset < 10) {
        m.need(1);
        return {};
    }
    m.need(3);
    // starts, ends, axes and steps: one entry per sliced axis, axes distinct, steps not 0
    const int nd = m.rank(m.in[0]);
    auto checkLists = [&](std::size_t k, const std::vector<std::int64_t>& ax, const std::vector<std::int64_t>& steps) {
        for (std::size_t i = 2; i < std::min<std::size_t>(m.in.size(), 5); ++i) {
            if (!m.input(i)) continue;
            const Type& ti = m.input(i)->type();
            if (ti.ndim() != 1 || (ti.dims()[0] >= 0 && static_cast<std::size_t>(ti.dims()[0]) != k))
                m.fail("input " + std::to_string(i) + " has type " + ti.str() + ", starts has " + std::to_string(k) +
                       " entries");
        }
        if (ax.size() != k || steps.size() != k) m.fail("axes and steps must have one entry per start");
        m.normAxes(ax, nd, "axes", true);
        for (auto st : steps)
            if (st == 0) m.fail("Slice step cannot be 0");
    };
    for (std::size_t i = 1; i < std::min<std::size_t>(m.in.size(), 5); ++i)
        if (m.input(i) && !isInteger(m.input(i)->type().dtype()))
            m.fail("input " + std::to_string(i) + " must be integers, got " + m.input(i)->type().str());
    auto starts = m.constInts(m.input(1)), ends = m.constInts(m.input(2));
    if (!starts || !ends) {
        // symbolic bounds: Subtensor{int64:int64:} with scalar inputs (Theano's x[a:b])
        const Type& st = m.input(1)->type();
        if (st.ndim() != 1 || st.dims()[0] < 0) return {};
        const std::int64_t k = st.dims()[0];
        std::vector<std::int64_t> ax(static_cast<std::size_t>(k)), steps(static_cast<std::size_t>(k), 1);
        std::iota(ax.begin(), ax.end(), 0);
        if (m.input(3)) {
            auto a = m.constInts(m.input(3));
            if (!a) return {};
            ax = *a;
        }
        if (m.input(4)) {
            auto sp = m.constInts(m.input(4));
            if (!sp) return {};
            steps = *sp;
        }
        checkLists(static_cast<std::size_t>(k), ax, steps);
        if (k == 0) return {m.in[0]};
        std::vector<json> idx(static_cast<std::size_t>(nd), json::object());
        std::vector<std::pair<std::int64_t, std::pair<Variable*, Variable*>>> bounds;
        for (std::int64_t j = 0; j < k; ++j) {
            const auto a = m.normAxis(ax[static_cast<std::size_t>(j)], nd);
            json e = {{"start", "?"}, {"stop", "?"}};
            if (steps[static_cast<std::size_t>(j)] != 1) e["step"] = steps[static_cast<std::size_t>(j)];
            idx[static_cast<std::size_t>(a)] = e;
            bounds.push_back({a, {m.scalarAt(m.input(1), j), m.scalarAt(m.input(2), j)}});
        }
        std::sort(bounds.begin(), bounds.end(), [](auto& x, auto& y) { return x.first < y.first; });
        std::vector<Variable*> ins{m.in[0]};
        for (auto& b : bounds) {
            ins.push_back(b.second.first);
            ins.push_back(b.second.second);
        }
        json list = json::array();
        for (int a = 0; a <= bounds.back().first; ++a) list.push_back(idx[static_cast<std::size_t>(a)]);
        return {m.mk("Subtensor", {{"idx", list}}, ins)};
    }
    std::vector<std::int64_t> ax, steps;
    if (m.input(3)) {
        auto a = m.constInts(m.input(3));
        if (!a) return {};
        ax = *a;
    } else {
        ax.resize(starts->size());
        std::iota(ax.begin(), ax.end(), 0);
    }
    if (m.input(4)) {
        auto s = m.constInts(m.input(4));
        if (!s) return {};
        steps = *s;
    } else
        steps.assign(starts->size(), 1);
    checkLists(starts->size(), ax, steps);
    std::vector<json> idx(static_cast<std::size_t>(nd), json::object());
    int last = -1;
    for (std::size_t k = 0; k < ax.size(); ++k) {
        const auto a = m.normAxis(ax[k], nd);
        json s = json::object();
        const std::int64_t big = INT64_MAX / 2;
        if (!((*starts)[k] == 0 && steps[k] > 0) && !((*starts)[k] >= big && steps[k] < 0))
            s["start"] = std::clamp((*starts)[k], -big, big);
        if ((*ends)[k] < big && (*ends)[k] > -big)
            s["stop"] = (*ends)[k];
        else if ((*ends)[k] <= -big && steps[k] > 0)
            s["stop"] = 0;
        if (steps[k] != 1) s["step"] = steps[k];
        idx[static_cast<std::size_t>(a)] = s;
        last = std::max(last, static_cast<int>(a));
    }
    json list = json::array();
    for (int a = 0; a <= last; ++a) list.push_back(idx[static_cast<std::size_t>(a)]);
    return {m.mk("Subtensor", {{"idx", list}}, {m.in[0]})};
}

} // namespace

void addIndexMappers(MapperTable& table) {
    addMapper(table, "Gather", mapGather);
    addMapper(table, "Slice", mapSlice);
}

} // namespace passlens::onnximport
