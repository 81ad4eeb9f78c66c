#pragma once
// passlens-cli `render` and `report` (CLI.md): registration on the CLI11 app, so main.cpp only
// registers them and dispatches. Wiring only: the drawing lives in passlens_layout.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace passlens::cli {

/// A registered subcommand: `*command.app` is true once the command line chose it; `run()`
/// does the work and returns the exit code (0 ok, 1 the work failed, 2 usage). run() prints its
/// own error messages and never throws.
struct DrawSubcommand {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

/// `render FILE [--pipeline NAME] [--phase NAME|--event N] [--diff A..B] [--overlay PROFILE.json]
/// [--format svg|pdf|png|dot] -o OUT [--json]`.
DrawSubcommand registerRenderCommand(CLI::App& app);

/// `report FILE -o DIR [--pipeline NAME] [--json]`.
DrawSubcommand registerReportCommand(CLI::App& app);

} // namespace passlens::cli
