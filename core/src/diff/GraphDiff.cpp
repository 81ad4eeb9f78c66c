#include "passlens/diff/GraphDiff.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace passlens {

const char* nodeChangeName(NodeChange c) {
    switch (c) {
    case NodeChange::Unchanged: return "unchanged";
    case NodeChange::Added: return "added";
    case NodeChange::Removed: return "removed";
    case NodeChange::Rewired: return "rewired";
    }
    return "unchanged";
}

std::int64_t staticBytes(const Variable& v) {
    const std::int64_t n = v.type().numElements();
    if (n < 0) return -1;
    return n * static_cast<std::int64_t>(dtypeSize(v.type().dtype()));
}

std::string groupThousands(std::int64_t v) {
    const std::string digits = std::to_string(v < 0 ? -v : v);
    std::string out;
    const std::size_t n = digits.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0 && (n - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return v < 0 ? "-" + out : out;
}

std::string formatBytes(std::int64_t bytes) {
    std::string s = groupThousands(bytes) + " B";
    double scaled = static_cast<double>(bytes < 0 ? -bytes : bytes);
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB"};
    int unit = -1;
    while (scaled >= 1024.0 && unit < 3) {
        scaled /= 1024.0;
        ++unit;
    }
    if (unit >= 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, " (%.1f %s)", scaled, units[unit]);
        s += buf;
    }
    return s;
}

std::string TransferBytes::str() const {
    std::string s = formatBytes(crossing());
    s += " in " + std::to_string(transfers) + (transfers == 1 ? " transfer" : " transfers");
    if (unknownHostGpu > 0) s += " + " + std::to_string(unknownHostGpu) + " of unknown size";
    return s;
}

TransferBytes transferBytes(const FunctionGraph& graph) {
    TransferBytes t;
    for (const Apply* n : graph.toposort()) {
        if (!n->op().isTransfer()) continue;
        ++t.transfers;
        const std::string& kind = n->op().kind();
        std::int64_t bytes = 0;
        bool known = true;
        for (const Variable* out : n->outputs()) {
            const std::int64_t b = staticBytes(*out);
            if (b < 0)
                known = false;
            else
                bytes += b;
        }
        if (kind == "GpuToGpu") {
            if (known)
                t.gpuToGpu += bytes;
            else
                ++t.unknownGpuGpu;
        } else if (!known) {
            ++t.unknownHostGpu;
        } else if (kind == "GpuFromHost") {
            t.hostToGpu += bytes;
        } else {
            t.gpuToHost += bytes;
        }
    }
    return t;
}

nlohmann::json transferBytesJson(const TransferBytes& t) {
    return {{"host_to_gpu", t.hostToGpu},         {"gpu_to_host", t.gpuToHost}, {"gpu_to_gpu", t.gpuToGpu},
            {"crossing", t.crossing()},           {"transfers", t.transfers},   {"unknown_host_gpu", t.unknownHostGpu},
            {"unknown_gpu_gpu", t.unknownGpuGpu}, {"exact", t.exact()}};
}

NodeChange GraphDiff::changeOf(NodeId id) const {
    auto has = [id](const std::vector<NodeId>& v) { return std::binary_search(v.begin(), v.end(), id); };
    if (has(added)) return NodeChange::Added;
    if (has(removed)) return NodeChange::Removed;
    if (has(rewired)) return NodeChange::Rewired;
    return NodeChange::Unchanged;
}

bool GraphDiff::empty() const { return added.empty() && removed.empty() && rewired.empty() && outputsChanged.empty(); }

std::string GraphDiff::summary() const {
    std::string s = "+" + std::to_string(added.size()) + " nodes, -" + std::to_string(removed.size()) + " nodes, " +
                    std::to_string(rewired.size()) + " rewired; transfers +" + std::to_string(transfersAdded.size()) +
                    " / -" + std::to_string(transfersCut.size()) + "; host<->GPU bytes per run " +
                    formatBytes(bytesBefore.crossing());
    if (!bytesBefore.exact()) s += " (+" + std::to_string(bytesBefore.unknownHostGpu) + " unknown)";
    s += " -> " + formatBytes(bytesAfter.crossing());
    if (!bytesAfter.exact()) s += " (+" + std::to_string(bytesAfter.unknownHostGpu) + " unknown)";
    return s;
}

nlohmann::json GraphDiff::toJson() const {
    return {{"added", added},
            {"removed", removed},
            {"rewired", rewired},
            {"unchanged", unchanged.size()},
            {"transfers_added", transfersAdded},
            {"transfers_cut", transfersCut},
            {"outputs_changed", outputsChanged},
            {"bytes_before", transferBytesJson(bytesBefore)},
            {"bytes_after", transferBytesJson(bytesAfter)}};
}

GraphDiff diff(const FunctionGraph& before, const FunctionGraph& after) {
    GraphDiff d;
    std::unordered_map<NodeId, const Apply*> inBefore;
    inBefore.reserve(before.nodeCount() * 2 + 1);
    for (const Apply* n : before.toposort()) inBefore.emplace(n->id(), n);

    auto sameInputs = [](const Apply& a, const Apply& b) {
        if (a.nin() != b.nin()) return false;
        for (int i = 0; i < a.nin(); ++i)
            if (a.input(i)->id() != b.input(i)->id()) return false;
        return true;
    };

    for (const Apply* n : after.toposort()) {
        auto it = inBefore.find(n->id());
        if (it == inBefore.end()) {
            d.added.push_back(n->id());
            if (n->op().isTransfer()) d.transfersAdded.push_back(n->id());
            continue;
        }
        const Apply* old = it->second;
        inBefore.erase(it);
        // Ops are interned: same op is the same pointer. Within one trace a node id never
        // changes op; for unrelated graphs a different op counts as rewired in place.
        if (&old->op() == &n->op() && sameInputs(*old, *n))
            d.unchanged.push_back(n->id());
        else
            d.rewired.push_back(n->id());
    }
    for (const auto& [id, n] : inBefore) {
        d.removed.push_back(id);
        if (n->op().isTransfer()) d.transfersCut.push_back(id);
    }
    for (auto* v : {&d.added, &d.removed, &d.rewired, &d.unchanged, &d.transfersAdded, &d.transfersCut})
        std::sort(v->begin(), v->end());

    const auto& ob = before.outputs();
    const auto& oa = after.outputs();
    const std::size_t n = std::max(ob.size(), oa.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (i >= ob.size() || i >= oa.size() || ob[i]->id() != oa[i]->id())
            d.outputsChanged.push_back(static_cast<int>(i));
    }
    d.bytesBefore = transferBytes(before);
    d.bytesAfter = transferBytes(after);
    return d;
}

} // namespace passlens
