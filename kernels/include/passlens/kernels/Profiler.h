#pragma once
/// @file Profiler.h
/// Profiles an Executor: warm-up runs (so no start-up cost is charged to a node), then repeats
/// with per-node timing (steady clock for host and emulated nodes; CUDA events for CUDA nodes),
/// transfers separately, and the profiler's own overhead (profiled against unprofiled wall time).
/// Output: core's ExecutionProfile (ProfileReport), which gives the `profiles` entry of FORMAT.md
/// §2 and Theano-style text tables.
#include "passlens/kernels/Executor.h"

#include <passlens/trace/ExecutionProfile.h>

#include <string>
#include <vector>

namespace passlens {

struct ProfileOptions {
    int warmup = 3;   ///< unmeasured runs first
    int repeats = 10; ///< measured runs of each mode (unprofiled and profiled runs alternate)
};

/// The profile of an executor's runs (core's ExecutionProfile, with the executor's plan).
using ProfileReport = ExecutionProfile;

/// Runs `exec` warmup + 2 * repeats times on `inputs`. A run that throws stops profiling: the
/// report then has `error` set and the nodes after the failing one are n/a; the exception is
/// not propagated.
ProfileReport profileExecutor(Executor& exec, const std::vector<Tensor>& inputs, const ProfileOptions& options,
                              const std::string& phase);

} // namespace passlens
