// passlens-cli report: a folder with the session file, one SVG per changed phase and per diff
// between consecutive changed steps, and a self-contained index.html to step through them (CLI.md).
#include "DrawCommands.h"
#include "TraceInput.h"

#include <passlens/diff/GraphDiff.h>
#include <passlens/io/AtomicFile.h>
#include <passlens/io/Failure.h>
#include <passlens/ir/Error.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/Export.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/report/Report.h>
#include <passlens/trace/TraceSteps.h>
#include <passlens/kernels/Executor.h>
#include <passlens/kernels/Profiler.h>
#include <passlens/kernels/Check.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <unistd.h>

namespace passlens::cli {

namespace {

struct ReportArgs {
    std::string file, dir, pipeline = "theano";
    bool json = false, run = false;
    double budget = 10;
};

// --run: profiles the final graph on the seeded random inputs (CPU, or CUDA when present).
ExecutionProfile profileFinal(const Trace& trace) {
    auto g = trace.graphAfterPhase("final");
    Executor exec(*g);
    const ProfileReport rep = profileExecutor(exec, seededInputs(*g), ProfileOptions{}, "final");
    if (!rep.error.empty()) throw Error("report --run: " + rep.error);
    return rep;
}

int runReport(const ReportArgs& a, CLI::App* cmd) {
    const bool progress = ::isatty(2) != 0 && !a.json;
    try {
        const OpenedTrace in = openTrace(a.file, a.pipeline, cmd->count("--pipeline") > 0);
        ReportOptions opt;
        opt.sourcePath = in.sourcePath;
        opt.sourceLabel = sourceLabel(in);
        opt.pipeline = in.pipeline;
        opt.budgetSeconds = a.budget;
        if (progress)
            opt.progress = [](int k, int n) {
                std::cerr << "\rreport: step " << k << " of " << n << "   " << std::flush;
            };
        if (a.run) opt.profile = profileFinal(*in.trace);
        const ReportResult r = writeReport(*in.trace, a.dir, opt);
        if (progress) std::cerr << "\r" << std::string(40, ' ') << "\r";
        for (const auto& w : r.warnings) std::cerr << "warning: " << w << "\n";
        const std::vector<std::string>& files = r.files;
        const int failures = r.failures;
        const std::filesystem::path dir(a.dir);
        const std::size_t stepCount = r.steps;
        if (a.json) {
            std::cout
                << nlohmann::json{{"dir", a.dir}, {"files", files}, {"steps", stepCount}, {"failed", failures}}.dump(2)
                << "\n";
        } else {
            std::cout << "wrote " << a.dir << ": " << files.size() << " files, " << stepCount - 1
                      << " changed phases; open " << (dir / "index.html").string() << "\n";
        }
        if (failures > 0) {
            std::cerr << "error: " << a.file << ": " << failures
                      << " figure(s) could not be drawn (see the warnings above)\n";
            return 1;
        }
        return 0;
    } catch (...) {
        std::cerr << "error: " << currentExceptionMessage("report " + a.file) << "\n";
        return 1;
    }
}

} // namespace

DrawSubcommand registerReportCommand(CLI::App& app) {
    auto args = std::make_shared<ReportArgs>();
    CLI::App* cmd = app.add_subcommand(
        "report", "Write a browsable report: session file, one SVG per changed phase and per diff, index.html");
    cmd->add_option("FILE", args->file, "ONNX model, graph JSON (optimized first) or session file")->required();
    cmd->add_option("-o,--output", args->dir, "Report folder (created)")->required();
    cmd->add_option("--pipeline", args->pipeline, "Pipeline for a model or graph")->capture_default_str();
    cmd->add_option("--budget", args->budget,
                    "Layout time budget per figure, seconds (past it, or 0: a simpler layout, see render)")
        ->check(CLI::Range(0.0, 3600.0))
        ->capture_default_str();
    cmd->add_flag("--run", args->run, "Execute and profile the final graph; add the profile and its timing overlay");
    cmd->add_flag("--json", args->json, "Print one JSON document on stdout");
    return {cmd, [args, cmd] { return runReport(*args, cmd); }};
}

} // namespace passlens::cli
