// Output comparison.
#include "passlens/kernels/Check.h"

#include "passlens/kernels/TensorIO.h"

#include <passlens/io/Encoding.h>
#include <passlens/io/Failure.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/FunctionGraph.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace passlens {

std::vector<Tensor> seededInputs(const FunctionGraph& graph, std::uint64_t seed) {
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < graph.inputs().size(); ++i) {
        const Variable* v = graph.inputs()[i];
        const std::string where =
            "input " + std::to_string(i) + " '" + v->name() + "' (" + v->type().str() + "): no random values";
        try {
            inputs.push_back(randomTensor(v->type(), seed * 1000 + i + 1));
        } catch (const Error& e) {
            throw Error(where + ": " + e.what());
        } catch (...) {
            throw Error(currentExceptionMessage(where));
        }
    }
    return inputs;
}

bool CompareResult::within(double tolerance, double absTolerance) const {
    if (!countMatches) return false;
    for (const OutputDiff& d : outputs)
        if (!d.shapeMatches || !(d.maxRel <= tolerance || d.maxAbs <= absTolerance)) return false;
    return true;
}

namespace {
// The first element where two string tensors of one shape differ ("element 3: \"a\" vs \"b\""),
// "" when equal; "dtype string vs float32" when only one holds strings.
std::string stringMismatch(const Tensor& a, const Tensor& b) {
    if (a.dtype() != b.dtype())
        return "dtype " + std::string(dtypeName(a.dtype())) + " vs " + std::string(dtypeName(b.dtype()));
    for (std::int64_t k = 0; k < a.numel(); ++k) {
        const std::string &x = a.data<std::string>()[k], &y = b.data<std::string>()[k];
        if (x != y) return "element " + std::to_string(k) + ": " + quotedText(x) + " vs " + quotedText(y);
    }
    return {};
}
} // namespace

CompareResult compareOutputs(const std::vector<Tensor>& got, const std::vector<Tensor>& ref) {
    CompareResult r;
    r.countMatches = got.size() == ref.size();
    const std::size_t n = std::min(got.size(), ref.size());
    const double inf = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
        OutputDiff d;
        d.index = i;
        const Tensor& a = got[i];
        const Tensor& b = ref[i];
        if (!a.isDense() || !b.isDense()) {
            // sequences and optionals: same kind and item count, items compared as outputs
            if (a.kind() != b.kind() || a.items().size() != b.items().size()) {
                d.shapeMatches = false;
                d.detail = a.typeStr() + " vs " + b.typeStr();
                d.maxAbs = d.maxRel = inf;
            } else {
                const CompareResult items = compareOutputs(a.items(), b.items());
                d.shapeMatches = items.within(inf);
                d.maxAbs = items.maxAbs;
                d.maxRel = items.maxRel;
                for (const OutputDiff& e : items.outputs)
                    if (!e.shapeMatches) d.detail = "item " + std::to_string(e.index) + ": " + e.detail;
            }
        } else if (a.shape() != b.shape()) {
            d.shapeMatches = false;
            d.detail = "shape " + shapeStr(a.shape()) + " vs " + shapeStr(b.shape());
            d.maxAbs = d.maxRel = inf;
        } else if (isString(a.dtype()) || isString(b.dtype())) {
            // strings: equal or not (an error of 0 or infinity)
            const std::string bad = stringMismatch(a, b);
            d.maxAbs = d.maxRel = bad.empty() ? 0 : inf;
            if (!bad.empty()) d.detail = bad;
        } else {
            const std::vector<double> va = a.toDoubles(), vb = b.toDoubles();
            double scale = 0;
            for (double x : vb)
                if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
            for (std::size_t k = 0; k < va.size(); ++k) {
                const double x = va[k], y = vb[k];
                double e;
                if (std::isnan(x) || std::isnan(y))
                    e = (std::isnan(x) && std::isnan(y)) ? 0 : inf;
                else if (std::isinf(x) || std::isinf(y))
                    e = x == y ? 0 : inf;
                else
                    e = std::fabs(x - y);
                d.maxAbs = std::max(d.maxAbs, e);
            }
            d.maxRel = d.maxAbs == 0 ? 0 : d.maxAbs / std::max(scale, 1e-30);
        }
        r.maxAbs = std::max(r.maxAbs, d.maxAbs);
        r.maxRel = std::max(r.maxRel, d.maxRel);
        r.outputs.push_back(d);
    }
    return r;
}

std::string allCloseMismatch(const std::vector<Tensor>& got, const std::vector<Tensor>& ref, double rtol, double atol) {
    if (got.size() != ref.size())
        return std::to_string(got.size()) + " outputs vs " + std::to_string(ref.size()) + " expected";
    for (std::size_t i = 0; i < got.size(); ++i) {
        const std::string where = "output " + std::to_string(i) + ": ";
        const Tensor& a = got[i];
        const Tensor& b = ref[i];
        if (!a.isDense() || !b.isDense()) {
            // sequences and optionals: same kind and item count, each item checked as an output
            if (a.kind() != b.kind() || a.items().size() != b.items().size())
                return where + a.typeStr() + " vs " + b.typeStr();
            std::string bad = allCloseMismatch(a.items(), b.items(), rtol, atol);
            if (!bad.empty()) return where + "item " + bad.substr(std::string("output ").size());
            continue;
        }
        if (a.dtype() != b.dtype())
            return where + "dtype " + std::string(dtypeName(a.dtype())) + " vs " + std::string(dtypeName(b.dtype()));
        if (a.shape() != b.shape()) return where + "shape " + shapeStr(a.shape()) + " vs " + shapeStr(b.shape());
        if (isString(a.dtype())) {
            if (std::string bad = stringMismatch(a, b); !bad.empty()) return where + bad;
            continue;
        }
        const std::vector<double> va = a.toDoubles(), vb = b.toDoubles();
        for (std::size_t k = 0; k < va.size(); ++k) {
            const double x = va[k], y = vb[k];
            bool ok;
            if (std::isnan(x) || std::isnan(y))
                ok = std::isnan(x) && std::isnan(y);
            else if (std::isinf(x) || std::isinf(y))
                ok = x == y;
            else
                ok = std::fabs(x - y) <= atol + rtol * std::fabs(y);
            if (!ok) {
                char b2[96];
                std::snprintf(b2, sizeof b2, "element %zu: %.6g vs %.6g", k, x, y);
                return where + b2;
            }
        }
    }
    return {};
}

} // namespace passlens
