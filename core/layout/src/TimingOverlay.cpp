#include "passlens/layout/TimingOverlay.h"

#include <passlens/io/JsonFile.h>
#include <passlens/ir/Error.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace passlens {

double TimingProfile::totalUs() const {
    double t = 0;
    for (const auto& [id, n] : nodes) t += n.timeUs;
    for (const auto& [id, x] : transfers)
        if (!nodes.count(id)) t += x.timeUs;
    return t;
}

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

double number(const nlohmann::json& j, const char* key, const std::string& where) {
    if (!j.contains(key)) throw Error(where + "." + key + ": missing");
    const auto& v = j.at(key);
    if (!v.is_number()) throw Error(where + "." + key + ": expected a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0) throw Error(where + "." + key + ": expected a finite non-negative number");
    return d;
}

NodeId nodeId(const nlohmann::json& j, const std::string& where) {
    if (!j.contains("node") || !j.at("node").is_number_integer())
        throw Error(where + ".node: expected an integer node id");
    return j.at("node").get<NodeId>();
}

// A profile's phase ("final" when absent or not a string).
std::string phaseOf(const nlohmann::json& p) {
    return p.contains("phase") && p["phase"].is_string() ? p["phase"].get<std::string>() : "final";
}

TimingProfile parseOne(const nlohmann::json& p, const std::string& where) {
    if (!p.is_object()) throw Error(where + ": expected a profile object");
    TimingProfile t;
    t.phase = phaseOf(p);
    if (p.contains("device") && p["device"].is_string()) t.device = p["device"].get<std::string>();
    if (p.contains("nodes")) {
        if (!p["nodes"].is_array()) throw Error(where + ".nodes: expected an array");
        for (std::size_t i = 0; i < p["nodes"].size(); ++i) {
            const auto& n = p["nodes"][i];
            const std::string w = where + ".nodes[" + std::to_string(i) + "]";
            if (!n.is_object()) throw Error(w + ": expected an object");
            TimingProfile::NodeTime nt;
            nt.timeUs = number(n, "time_us", w);
            if (n.contains("kind") && n["kind"].is_string()) nt.kind = n["kind"].get<std::string>();
            t.nodes[nodeId(n, w)] = nt;
        }
    }
    if (p.contains("transfers")) {
        if (!p["transfers"].is_array()) throw Error(where + ".transfers: expected an array");
        for (std::size_t i = 0; i < p["transfers"].size(); ++i) {
            const auto& n = p["transfers"][i];
            const std::string w = where + ".transfers[" + std::to_string(i) + "]";
            if (!n.is_object()) throw Error(w + ": expected an object");
            TimingProfile::TransferTime tt;
            tt.timeUs = number(n, "time_us", w);
            if (n.contains("bytes") && n["bytes"].is_number_integer() && n["bytes"].get<std::int64_t>() >= 0)
                tt.bytes = n["bytes"].get<std::int64_t>();
            if (n.contains("direction") && n["direction"].is_string()) tt.direction = n["direction"].get<std::string>();
            t.transfers[nodeId(n, w)] = tt;
        }
    }
    if (!p.contains("nodes") && !p.contains("transfers"))
        throw Error(where + ": a profile needs \"nodes\" or \"transfers\"");
    return t;
}

} // namespace

TimingProfile parseTimingProfile(const nlohmann::json& doc, const std::string& label, const std::string& phase) {
    const nlohmann::json* list = nullptr;
    std::string where = label;
    if (doc.is_object() && doc.contains("profiles")) {
        list = &doc["profiles"];
        where += ": profiles";
        if (!list->is_array()) throw Error(where + ": expected an array");
    } else if (doc.is_array()) {
        list = &doc;
    }
    if (list == nullptr) return parseOne(doc, label);
    if (list->empty()) throw Error(where + ": no profile in this file");
    std::size_t pick = 0;
    if (!phase.empty())
        for (std::size_t i = 0; i < list->size(); ++i)
            if ((*list)[i].is_object() && phaseOf((*list)[i]) == phase) {
                pick = i;
                break;
            }
    return parseOne((*list)[pick], where + "[" + std::to_string(pick) + "]");
}

TimingProfile timingProfileOf(const ExecutionProfile& profile) {
    TimingProfile t;
    t.phase = profile.phase;
    t.device = profile.device;
    for (const ProfileNode& n : profile.nodes)
        if (n.timeUs) t.nodes[n.node] = {*n.timeUs, stepKindName(n.stepKind)};
    for (const ProfileTransfer& x : profile.transfers)
        t.transfers[x.node] = {static_cast<std::int64_t>(x.bytes), transferDirectionName(x.direction), x.timeUs};
    return t;
}

TimingProfile loadTimingProfile(const std::filesystem::path& path, const std::string& phase) {
    const nlohmann::json doc = readJsonFile(path);
    return parseTimingProfile(doc, path.string(), phase);
}

void applyTiming(DrawGraph& g, const TimingProfile& profile, const TimingOptions& options) {
    const double total = profile.totalUs();
    double maxUs = 0, minPositive = 0;
    auto timeOf = [&profile](NodeId id, double& us) {
        if (auto it = profile.nodes.find(id); it != profile.nodes.end()) {
            us = it->second.timeUs;
            return true;
        }
        if (auto it = profile.transfers.find(id); it != profile.transfers.end()) {
            us = it->second.timeUs;
            return true;
        }
        return false;
    };
    for (const DrawNode& n : g.nodes) {
        double us = 0;
        if (n.node < 0 || !timeOf(n.node, us)) continue;
        maxUs = std::max(maxUs, us);
        if (us > 0 && (minPositive == 0 || us < minPositive)) minPositive = us;
    }
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
        if (auto it = profile.transfers.find(n.node); it != profile.transfers.end()) {
            const auto& t = it->second;
            std::string bytes = t.bytes ? formatBytes(*t.bytes) : std::string("? B");
            if (auto open = bytes.find('('); open != std::string::npos)
                bytes = bytes.substr(open + 1, bytes.size() - open - 2);
            text =
                (t.direction.empty() ? n.transferDirection : t.direction) + " \xC2\xB7 " + bytes + " \xC2\xB7 " + text;
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

} // namespace passlens
