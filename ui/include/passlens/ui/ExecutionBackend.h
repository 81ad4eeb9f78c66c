#pragma once
/// @file ExecutionBackend.h
/// How the window runs a graph. ui/ does not link kernels/ (ARCHITECTURE.md): app/ provides an
/// implementation and hands it to the MainWindow; a profile crosses as core's typed
/// ExecutionProfile (JSON only when written to a file), a comparison as plain JSON.
#include <passlens/trace/ExecutionProfile.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <string>

namespace passlens {

class FunctionGraph;

struct ExecuteRequest {
    std::string device = "auto"; ///< "auto", "cpu" or "cuda"
    int repeats = 10;
    int warmup = 3;
};

class ExecutionBackend {
public:
    virtual ~ExecutionBackend() = default;
    /// Profiles `graph` (any step) on the seeded random inputs the CLI's `run` uses by default
    /// (kernels' seededInputs, seed 0). Returns the profile (per-node and transfer times, the
    /// executor's plan); throws std::exception with a user-facing message (unsupported op,
    /// cancelled). `progress` gets a fraction in [0, 1]; `cancel` is polled between runs. Called
    /// on a worker thread.
    virtual ExecutionProfile profile(const FunctionGraph& graph, const ExecuteRequest& request,
                                     const std::function<void(double)>& progress, const std::atomic<bool>& cancel) = 0;
    /// Outputs of `graph` vs `reference` on the same seeded inputs (as profile):
    /// {"max_abs", "max_rel", "shapes_match"} (shapes_match: same number and shapes of outputs;
    /// true when absent). Throws std::exception when a graph cannot run.
    virtual nlohmann::json compare(const FunctionGraph& graph, const FunctionGraph& reference) = 0;
};

} // namespace passlens
