#pragma once
// Internal to passlens_layout: the parts of LayoutEngine kept in their own files. The forked,
// isolated layout and the in-process one (LayoutIsolated.cpp), the reader of a positioned DOT's
// geometry (LayoutGeometry.cpp); the cache is LayoutCache.cpp. Includes Graphviz headers, so it
// never appears in a public header.

#include "GraphvizInternal.h"

#include <passlens/layout/LayoutEngine.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#if defined(__unix__) || defined(__APPLE__)
#define PASSLENS_LAYOUT_FORK 1
#else
#define PASSLENS_LAYOUT_FORK 0
#endif

namespace passlens::layoutinternal {

using Clock = std::chrono::steady_clock;

inline double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// "1.5 s" for a duration in milliseconds.
inline std::string seconds(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", ms / 1000.0);
    return buf;
}

/// A laid-out graph as Graphviz writes it ("dot" output: every position as an attribute) and
/// Graphviz's messages while laying it out.
struct Positioned {
    std::string dot;
    std::string warnings;
};

/// Loads the layout and text-layout plugins and the font machinery in this process, once, so a
/// forked child never has to dlopen or initialise fontconfig. Call with the lock held.
void warmUp(GVC_s* gvc);

/// In-process: parse `dot`, lay it out with `engine` ("dot", "nop2"), return the positioned DOT.
/// Lock held. Throws LayoutError(Graphviz).
Positioned layoutHere(GVC_s* gvc, const std::string& dot, const char* engine);

#if PASSLENS_LAYOUT_FORK
/// layoutHere in a forked child, waiting until `deadline` or `cancel` (then the child is killed:
/// LayoutError TimedOut / Cancelled; a crash of Graphviz is LayoutError Crashed). Lock held, so
/// the child starts from a consistent Graphviz state. nullopt when fork is impossible.
std::optional<Positioned> layoutIsolated(GVC_s* gvc, const std::string& dot, const char* engine,
                                         Clock::time_point deadline, const CancelToken* cancel, double budgetMs);
#endif

/// Reads the geometry of a positioned DOT into `r` (box, caption, nodes, edges), mapping keys
/// back to `drawn` when given. Lock held. Throws LayoutError(Graphviz).
void readGeometry(const std::string& positioned, const DrawGraph* drawn, LayoutResult& r);

} // namespace passlens::layoutinternal
