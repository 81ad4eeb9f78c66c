#pragma once
/// @file Profiler.h
/// Profiles an Executor: warm-up runs (so no start-up cost is charged to a node), then repeats
/// with per-node timing (steady clock for host and emulated nodes; CUDA events for CUDA nodes),
/// transfers separately, and the profiler's own overhead (profiled against unprofiled wall time).
/// Output: plain data (ProfileReport), the `profiles` entry of FORMAT.md §2 and Theano-style
/// text tables.
#include "passlens/kernels/Executor.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace passlens {

struct ProfileOptions {
    int warmup = 3;   ///< unmeasured runs first
    int repeats = 10; ///< measured runs of each mode (unprofiled and profiled runs alternate)
};

/// One node of the profiled graph.
struct ProfileNode {
    NodeId node = -1;
    std::string kind; ///< op kind (Theano class), e.g. "GpuElemwise"
    std::string op;   ///< display string, e.g. "GpuElemwise{add}<gpuarray>"
    std::string name; ///< node name (may be empty)
    StepKind stepKind = StepKind::Kernel;
    /// Mean time per run in microseconds; std::nullopt ("n/a") for a node with no kernel.
    std::optional<double> timeUs;
    /// An element-wise node applied by the kernel of node `fusedInto` (epilogue fusion, see
    /// Executor.h): its time is included in that node's; timeUs is std::nullopt and the JSON lists
    /// it under "not_run" with the reason "fused into node #N".
    std::optional<NodeId> fusedInto;
    /// An in-place Join (Executor.h) whose inputs were all written into its output by their
    /// producers: it did nothing (timeUs std::nullopt; "not_run" with the reason "in place: inputs
    /// written into its output by nodes #A, #B"); inPlaceWriters are those producers.
    bool inPlace = false;
    std::vector<NodeId> inPlaceWriters;
};

/// One transfer node (also listed in nodes).
struct ProfileTransfer {
    NodeId node = -1;
    std::size_t bytes = 0;
    TransferDirection direction = TransferDirection::HtoD;
    double timeUs = 0; ///< mean per run
    double gbPerS() const { return timeUs > 0 ? static_cast<double>(bytes) / (timeUs * 1e3) : 0.0; }
};

struct ProfileReport {
    std::string phase;  ///< "final", "source" or a phase name
    std::string device; ///< Executor::deviceDescription()
    int warmup = 0, repeats = 0;
    double wallUs = 0;         ///< mean wall time per run without per-node timing
    double profiledWallUs = 0; ///< mean wall time per run with per-node timing
    double overheadUs() const { return profiledWallUs - wallUs; }
    /// Standard deviation of the unprofiled runs' wall time (µs): an overhead smaller than this
    /// (or negative) is run-to-run noise, not a cost of profiling.
    double wallStdUs = 0;
    double nodeSumUs = 0;                   ///< sum of the node means (profiled runs)
    std::vector<ProfileNode> nodes;         ///< in execution order
    std::vector<ProfileTransfer> transfers; ///< in execution order
    std::string error;                      ///< why the run failed (nodes after the failure are n/a)

    /// The FORMAT.md §2 `profiles` entry: {"phase","device","repeats","nodes":[{"node","time_us",
    /// "kind"}],"transfers":[{"node","bytes","direction","time_us"}]} plus "warmup", "wall_us",
    /// "profiled_wall_us", "overhead_us", "node_sum_us", per node "op", per transfer "gb_per_s".
    /// Nodes without a time (n/a: no kernel, or not reached) are not in "nodes" (every entry there
    /// has a number) but in "not_run": [{"node","op","kind":"n/a","reason"}].
    nlohmann::json toJson() const;
    /// Theano-style tables: Class (per op kind), Ops (per op) and Apply (per node), each with
    /// % time, cumulative %, time, time per call, type and counts; then transfers and overhead.
    std::string text(std::size_t maxApplyRows = 40) const;
};

/// Runs `exec` warmup + 2 * repeats times on `inputs`. A run that throws stops profiling: the
/// report then has `error` set and the nodes after the failing one are n/a; the exception is
/// not propagated.
ProfileReport profileExecutor(Executor& exec, const std::vector<Tensor>& inputs, const ProfileOptions& options,
                              const std::string& phase);

} // namespace passlens
