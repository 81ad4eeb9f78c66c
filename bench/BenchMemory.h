#pragma once
// Process memory figures for the bench programs (Linux /proc; -1 elsewhere).
#include <fstream>
#include <string>

namespace passlens::bench {

/// A "Vm...:" line of /proc/self/status in KiB (e.g. "VmRSS:", "VmHWM:"), or -1.
inline long procStatusKb(const char* key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::string(key).size()));
    return -1;
}

/// Resets the resident set's high-water mark (VmHWM) to the current RSS.
inline void resetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

} // namespace passlens::bench
