#pragma once
// passlens-cli `run` (CLI.md): execute the graph of a phase, profile it, check it. Registration
// on the CLI11 app, so main.cpp only registers it and dispatches. Wiring only: execution,
// profiling and comparison live in passlens_kernels.
#include <CLI/CLI.hpp>

#include <functional>

namespace passlens::cli {

/// The registered `run` subcommand: `*command.app` is true once the command line chose it;
/// `run()` does the work and returns the exit code (0 ok, 1 the work failed or --check found a
/// divergence, 2 usage). run() prints its own error messages and never throws.
struct RunSubcommand {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

/// `run FILE [--phase NAME] [--pipeline NAME] [--device auto|cpu|cuda] [--inputs DIR]
/// [--repeat N] [--warmup N] [--profile OUT.json] [--check] [--tolerance X] [--seed N] [--json]`.
RunSubcommand registerRunCommand(CLI::App& app);

} // namespace passlens::cli
