// Subtensor index resolution (see Subtensor.h).
#include "passlens/ir/Subtensor.h"

#include "passlens/ir/Error.h"

#include <algorithm>

namespace passlens {

ResolvedSlice resolveSlice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
                           std::optional<std::int64_t> step, std::int64_t n) {
    ResolvedSlice r;
    r.step = step.value_or(1);
    auto clampBound = [&](std::int64_t v) {
        if (v < 0) v += n;
        return r.step > 0 ? std::clamp<std::int64_t>(v, 0, n) : std::clamp<std::int64_t>(v, -1, n - 1);
    };
    r.start = start ? clampBound(*start) : (r.step > 0 ? 0 : n - 1);
    const std::int64_t end = stop ? clampBound(*stop) : (r.step > 0 ? n : -1);
    r.length = r.step > 0 ? std::max<std::int64_t>(0, (end - r.start + r.step - 1) / r.step)
                          : std::max<std::int64_t>(0, (r.start - end - r.step - 1) / (-r.step));
    return r;
}

bool SubtensorRegion::contiguous() const {
    std::int64_t acc = 1;
    for (std::size_t a = dims.size(); a-- > 0;) {
        if (dims[a] != 1 && strides[a] != acc) return false;
        acc *= dims[a];
    }
    return true;
}

SubtensorRegion resolveSubtensor(const nlohmann::json& idx, const std::vector<std::int64_t>& shape,
                                 const std::function<std::int64_t()>& nextSymbolic, const std::string& what) {
    if (idx.size() > shape.size()) throw Error("has " + std::to_string(idx.size()) + " indices for " + what);
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (std::size_t a = shape.size(); a-- > 1;) strides[a - 1] = strides[a] * shape[a];
    SubtensorRegion r;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        const std::int64_t n = shape[a];
        if (a >= idx.size()) {
            r.dims.push_back(n);
            r.strides.push_back(strides[a]);
            continue;
        }
        const nlohmann::json& e = idx[a];
        if (e.is_number_integer() || e.is_string()) {
            const std::int64_t orig = e.is_string() ? nextSymbolic() : e.get<std::int64_t>();
            const std::int64_t i = orig < 0 ? orig + n : orig;
            if (i < 0 || i >= n)
                throw Error("index " + std::to_string(orig) + " out of bounds for axis " + std::to_string(a) + " of " +
                            what);
            r.base += i * strides[a];
            continue;
        }
        auto field = [&](const char* f) -> std::optional<std::int64_t> {
            if (!e.contains(f) || e[f].is_null()) return std::nullopt;
            return e[f].is_string() ? nextSymbolic() : e[f].get<std::int64_t>();
        };
        const auto start = field("start"), stop = field("stop"), step = field("step");
        if (step == 0) throw Error("slice step cannot be 0");
        const ResolvedSlice s = resolveSlice(start, stop, step, n);
        if (s.length > 0) r.base += s.start * strides[a];
        r.dims.push_back(s.length);
        r.strides.push_back(s.step * strides[a]);
    }
    return r;
}

} // namespace passlens
