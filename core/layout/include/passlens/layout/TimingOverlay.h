#pragma once
/// @file TimingOverlay.h
/// Measured timings painted onto a drawing: node fill by its share of the total time, the time
/// printed on the node, transfers with bytes and time, and a legend with units. The profile is
/// core's typed ExecutionProfile (read from a file by ExecutionProfile::load / fromDocument).
#include <passlens/layout/DrawGraph.h>
#include <passlens/trace/ExecutionProfile.h>

#include <string>
#include <vector>

namespace passlens {

struct TimingOptions {
    bool logScale = false; ///< colour by log(time) instead of time
    int bins = 5;          ///< colour thresholds (2..9); 0 = continuous gradient
};

/// Paints `profile` onto `g`: DrawNode::timing and detail on every node with a time in the
/// profile (time and percent of ExecutionProfile::totalUs; transfers also their bytes and
/// direction), g.timing for the legend. Nodes without a time keep their category fill (n/a
/// nodes: no kernel, fused, in place). Never throws.
void applyTiming(DrawGraph& g, const ExecutionProfile& profile, const TimingOptions& options = {});

/// applyTiming with the scale (longest and shortest time, bins, legend) taken over the Apply
/// nodes of the graphs `scaleOver` instead of those drawn in `g`: with `g` a focused view made
/// straight from those graphs (drawFocused of a step: {graph}; drawDiffFocused: {before, after}),
/// the result equals the focused view cut from the whole drawing painted by applyTiming, whose
/// Apply nodes are those graphs' (nested graphs' nodes have no id and take no time). Null
/// entries are skipped. Never throws.
void applyTiming(DrawGraph& g, const ExecutionProfile& profile, const TimingOptions& options,
                 const std::vector<const FunctionGraph*>& scaleOver);

/// "12.5 µs", "3.40 ms", "1.20 s".
std::string formatMicros(double us);

} // namespace passlens
