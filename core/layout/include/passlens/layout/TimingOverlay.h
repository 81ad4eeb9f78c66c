#pragma once
/// @file TimingOverlay.h
/// Measured timings painted onto a drawing (FORMAT.md §2 `profiles`): node fill by its share of
/// the total time, the time printed on the node, transfers with bytes and time, and a legend
/// with units.
#include <passlens/layout/DrawGraph.h>
#include <passlens/trace/ExecutionProfile.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

namespace passlens {

/// One profile as plain data.
struct TimingProfile {
    std::string phase;  ///< the phase it was measured on ("final" when absent)
    std::string device; ///< "cuda:0 NVIDIA H200", "cpu"
    struct NodeTime {
        double timeUs = 0; ///< microseconds per run
        std::string kind;  ///< "kernel", "host", ...
    };
    struct TransferTime {
        std::optional<std::int64_t> bytes; ///< bytes per run; none: unknown (drawn "? B")
        std::string direction;             ///< "HtoD", "DtoH", "DtoD"
        double timeUs = 0;
    };
    std::map<NodeId, NodeTime> nodes;
    std::map<NodeId, TransferTime> transfers;

    /// Sum of node and transfer times, microseconds.
    double totalUs() const;
};

/// Reads a profile from JSON: a profile object (`{"phase", "device", "nodes": [{"node",
/// "time_us", "kind"}], "transfers": [{"node", "bytes", "direction", "time_us"}]}`, which is
/// also what `passlens-cli run --json` prints), an array of them, or a session document
/// (its `profiles`). With several, the one whose phase is `phase` (or the first). Throws
/// passlens::Error("LABEL: PATH: reason") for a wrong shape or no profile at all.
TimingProfile parseTimingProfile(const nlohmann::json& doc, const std::string& label, const std::string& phase = {});

/// The timings of a measured profile (nodes with a time, every transfer), without going through
/// JSON: the window's overlay of the profile it just measured.
TimingProfile timingProfileOf(const ExecutionProfile& profile);

/// Reads and parses a profile file (see parseTimingProfile). Throws passlens::Error.
TimingProfile loadTimingProfile(const std::filesystem::path& path, const std::string& phase = {});

struct TimingOptions {
    bool logScale = false; ///< colour by log(time) instead of time
    int bins = 5;          ///< colour thresholds (2..9); 0 = continuous gradient
};

/// Paints `profile` onto `g`: DrawNode::timing and detail on every node with a timing (time and
/// percent of the total; transfers also their bytes and direction), g.timing for the legend.
/// Nodes without a timing keep their category fill. Never throws.
void applyTiming(DrawGraph& g, const TimingProfile& profile, const TimingOptions& options = {});

/// "12.5 µs", "3.40 ms", "1.20 s".
std::string formatMicros(double us);

} // namespace passlens
