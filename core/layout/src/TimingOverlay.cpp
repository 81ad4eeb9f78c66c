#include "passlens/layout/TimingOverlay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace passlens {

std::string formatMicros(double us) {
    char buf[32];
    if (!std::isfinite(us)) return "?";
    if (us < 1000)
        std::snprintf(buf, sizeof buf, us < 10 ? "%.2f \xC2\xB5s" : "%.1f \xC2\xB5s", us);
    else if (us < 1e6)
        std::snprintf(buf, sizeof buf, "%.2f ms", us / 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
    return buf;
}

namespace {

// applyTiming with the scale taken over the node ids `scaleOver` yields (each Apply node id, or
// -1 for a node that is none); duplicates are harmless.
template <class ScaleOver>
void paint(DrawGraph& g, const ExecutionProfile& profile, const TimingOptions& options, const ScaleOver& scaleOver) {
    // each node id's time and transfer (its last entry, as totalUs counts them)
    std::map<NodeId, double> nodeUs;
    for (const ProfileNode& n : profile.nodes)
        if (n.timeUs) nodeUs[n.node] = *n.timeUs;
    std::map<NodeId, const ProfileTransfer*> transferOf;
    for (const ProfileTransfer& x : profile.transfers) transferOf[x.node] = &x;
    const double total = profile.totalUs();
    double maxUs = 0, minPositive = 0;
    auto timeOf = [&](NodeId id, double& us) {
        if (auto it = nodeUs.find(id); it != nodeUs.end()) {
            us = it->second;
            return true;
        }
        if (auto it = transferOf.find(id); it != transferOf.end()) {
            us = it->second->timeUs;
            return true;
        }
        return false;
    };
    scaleOver([&](NodeId id) {
        double us = 0;
        if (id < 0 || !timeOf(id, us)) return;
        maxUs = std::max(maxUs, us);
        if (us > 0 && (minPositive == 0 || us < minPositive)) minPositive = us;
    });
    const int bins = options.bins <= 0 ? 0 : std::clamp(options.bins, 2, 9);
    const bool logScale = options.logScale && minPositive > 0 && maxUs > minPositive;
    // Scale value in [0, 1].
    auto scaled = [&](double us) {
        if (maxUs <= 0) return 0.0;
        if (logScale) {
            if (us <= minPositive) return 0.0;
            return std::log(us / minPositive) / std::log(maxUs / minPositive);
        }
        return us / maxUs;
    };
    std::vector<double> bounds;
    if (bins > 0 && maxUs > 0) {
        for (int i = 1; i <= bins; ++i) {
            const double f = static_cast<double>(i) / bins;
            bounds.push_back(logScale ? minPositive * std::pow(maxUs / minPositive, f) : maxUs * f);
        }
    }
    for (DrawNode& n : g.nodes) {
        double us = 0;
        if (n.node < 0 || !timeOf(n.node, us)) continue;
        double s = scaled(us);
        if (!bounds.empty()) {
            std::size_t bin = 0;
            while (bin + 1 < bounds.size() && us > bounds[bin] * (1 + 1e-12)) ++bin;
            s = bounds.size() == 1 ? 1.0 : static_cast<double>(bin) / static_cast<double>(bounds.size() - 1);
        }
        n.timing = NodeTiming{std::clamp(s, 0.0, 1.0), us};
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.1f%%", total > 0 ? 100.0 * us / total : 0.0);
        std::string text = formatMicros(us) + " \xC2\xB7 " + pct;
        if (auto it = transferOf.find(n.node); it != transferOf.end()) {
            const ProfileTransfer& t = *it->second;
            std::string bytes = t.bytes ? formatBytes(static_cast<std::int64_t>(*t.bytes)) : std::string("? B");
            if (auto open = bytes.find('('); open != std::string::npos)
                bytes = bytes.substr(open + 1, bytes.size() - open - 2);
            // the drawn node's direction (its op); the profile's for a node not drawn as a transfer
            const std::string direction =
                n.transferDirection.empty() ? std::string(transferDirectionName(t.direction)) : n.transferDirection;
            text = direction + " \xC2\xB7 " + bytes + " \xC2\xB7 " + text;
        }
        n.detail = text;
    }
    g.timing.present = true;
    g.timing.logScale = logScale;
    g.timing.maxUs = maxUs;
    g.timing.totalUs = total;
    g.timing.device = profile.device;
    g.timing.continuous = bounds.empty();
    if (bounds.empty() && maxUs > 0) {
        for (int i = 0; i <= 4; ++i) {
            const double f = i / 4.0;
            bounds.push_back(logScale ? minPositive * std::pow(maxUs / minPositive, f) : maxUs * f);
        }
    }
    g.timing.binUpperUs = bounds;
}

} // namespace

void applyTiming(DrawGraph& g, const ExecutionProfile& profile, const TimingOptions& options) {
    paint(g, profile, options, [&g](const auto& visit) {
        for (const DrawNode& n : g.nodes) visit(n.node);
    });
}

void applyTiming(DrawGraph& g, const ExecutionProfile& profile, const TimingOptions& options,
                 const std::vector<const FunctionGraph*>& scaleOver) {
    paint(g, profile, options, [&scaleOver](const auto& visit) {
        for (const FunctionGraph* graph : scaleOver)
            if (graph)
                for (const Apply* a : graph->toposort()) visit(a->id());
    });
}

} // namespace passlens
