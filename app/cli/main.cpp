// passlens-cli: the headless front end (CLI.md). Wiring only: every subcommand calls core.
#include <passlens/io/AtomicFile.h>
#include <passlens/io/Failure.h>
#include <passlens/io/GraphJson.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/io/Inspect.h>
#include <passlens/io/SessionFile.h>
#include <passlens/ir/DebugPrint.h>
#include <passlens/ir/Error.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/pipeline/OptimizeReport.h>
#include <passlens/trace/Trace.h>
#include <passlens/Version.h>

#include <CLI/CLI.hpp>

#include "DrawCommands.h"
#include "RunCommand.h"

#include <csignal>
#include <iostream>

namespace {

int runInspect(const std::string& file, bool asJson, bool types, int depth) {
    const passlens::LoadedGraph loaded = passlens::loadGraphFile(file);
    if (asJson) {
        std::cout << passlens::inspectJson(loaded, file).dump(2) << "\n";
    } else {
        std::cout << passlens::inspectText(loaded, file, types, depth);
    }
    return 0;
}

int runConvert(const std::string& file, const std::string& out, bool asJson, std::size_t inlineLimit) {
    const passlens::LoadedGraph loaded = passlens::loadGraphFile(file);
    const std::filesystem::path outPath(out);
    passlens::GraphJsonWriteOptions opt;
    opt.baseDir = outPath.has_parent_path() ? outPath.parent_path() : std::filesystem::path(".");
    std::string stem = outPath.filename().string();
    if (auto p = stem.find(".graph.json"); p != std::string::npos)
        stem.resize(p);
    else if (auto q = stem.rfind('.'); q != std::string::npos && q > 0)
        stem.resize(q);
    opt.npyDir = stem + ".data";
    opt.inlineLimit = inlineLimit;
    // A convert that fails (disk full, no such folder) removes the .npy folder it created.
    const std::filesystem::path npyDir = opt.baseDir / opt.npyDir;
    std::error_code ec;
    const bool npyDirExisted = std::filesystem::exists(npyDir, ec);
    try {
        const std::string text = passlens::writeGraphJson(*loaded.graph, opt).dump(1) + "\n";
        passlens::writeFileAtomic(outPath, text);
    } catch (...) {
        if (!npyDirExisted) std::filesystem::remove_all(npyDir, ec);
        throw;
    }
    for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
    if (asJson)
        std::cout << nlohmann::json{{"output", out}}.dump() << "\n";
    else
        std::cout << "wrote " << out << " (" << loaded.graph->nodeCount() << " nodes)\n";
    return 0;
}

struct OptimizeArgs {
    passlens::PipelineRequest request;
    std::string session, emit;
    passlens::SessionFile::Format sessionFormat = passlens::SessionFile::Format::Compact;
    bool debugprint = false;
    int depth = passlens::DebugPrintOptions::kAutoDepth;
};

// A session FILE is optimized afresh from its source graph (loadGraphFile reads it).
int runOptimize(const std::string& file, const OptimizeArgs& a, bool asJson) {
    passlens::LoadedGraph loaded = passlens::loadGraphFile(file);
    const passlens::OptimizedGraph o = passlens::optimizeGraph(std::move(loaded.graph), a.request);
    const passlens::FunctionGraph& g = *o.graph;
    if (!a.session.empty())
        passlens::SessionFile::save(*o.trace, a.session, file, nlohmann::json::array(), nullptr, a.sessionFormat);
    if (!a.emit.empty()) passlens::writeFileAtomic(a.emit, passlens::writeGraphJson(g).dump(1) + "\n");
    for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
    if (asJson) {
        std::cout << passlens::optimizeJson(o.run, g, *o.trace).dump(2) << "\n";
    } else {
        std::cout << passlens::optimizeText(o.run, g, *o.trace);
        if (a.debugprint) {
            passlens::DebugPrintOptions dp;
            dp.depth = a.depth;
            std::cout << "\n" << passlens::debugprintListing(g, dp);
        }
        if (!a.session.empty()) std::cout << "\nsession: " << a.session << "\n";
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const passlens::MemoryReserve reserve; // out of memory stays a message (io/Failure.h)
    std::signal(SIGXFSZ, SIG_IGN);         // past a file-size limit a write fails with a message
    CLI::App app{"passlens-cli: the headless side of PassLens, a debugger for Theano-style graph optimizers.\n"
                 "FILE is an ONNX model, a graph JSON or a session file (recognised by content)."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "passlens-cli " PASSLENS_VERSION);

    std::string file, out;
    bool asJson = false, types = false;
    std::size_t inlineLimit = 64;
    int depth = passlens::DebugPrintOptions::kAutoDepth;
    const std::string depthHelp =
        "Listing depth: levels below and including each output, -1 for all (default: all while the listing "
        "stays under " +
        std::to_string(passlens::kDebugPrintFullBytes >> 20) + " MiB, else " +
        std::to_string(passlens::kDebugPrintLargeDepth) + ")";

    auto* inspect =
        app.add_subcommand("inspect", "Load and validate FILE; print a debugprint-style listing and statistics");
    inspect->add_option("FILE", file, "ONNX model, graph JSON or session file")->required();
    inspect->add_flag("--json", asJson, "Print one JSON document on stdout");
    inspect->add_flag("--types", types, "Show each variable's type in the listing");
    inspect->add_option("--depth", depth, depthHelp)->check(CLI::Range(-1, 1000000));

    auto* convert =
        app.add_subcommand("convert", "Write FILE as graph JSON (large constants go to .npy files beside it)");
    convert->add_option("FILE", file, "ONNX model, graph JSON or session file")->required();
    convert->add_option("-o,--output", out, "Output .graph.json")->required();
    convert->add_option("--inline-limit", inlineLimit, "Constants with more elements go to .npy files")
        ->capture_default_str();
    convert->add_flag("--json", asJson, "Print one JSON document on stdout");

    OptimizeArgs oa;
    auto* optimize =
        app.add_subcommand("optimize", "Run an optimization pipeline on FILE and record every phase and rewrite");
    optimize->add_option("FILE", file, "ONNX model, graph JSON or session file")->required();
    optimize
        ->add_option("--pipeline", oa.request.pipeline,
                     "theano, cleanup, legacy, fast_compile, none, or a .pipeline.json file")
        ->capture_default_str();
    optimize->add_option("--include", oa.request.include, "Add phases or rewrites with this tag or name (repeatable)");
    optimize->add_option("--exclude", oa.request.exclude, "Drop phases or rewrites with this name or tag (repeatable)");
    optimize->add_option("--session", oa.session, "Write the session file (docs/SESSION_FORMAT.md)");
    optimize
        ->add_option("--session-format", oa.sessionFormat,
                     "compact (version 2, docs/SESSION_FORMAT.md) or json (version 1, FORMAT.md section 2)")
        ->transform(CLI::CheckedTransformer(std::map<std::string, passlens::SessionFile::Format>{
            {"compact", passlens::SessionFile::Format::Compact}, {"json", passlens::SessionFile::Format::Json}}))
        ->default_str("compact");
    optimize->add_option("--emit", oa.emit, "Write the final graph as graph JSON");
    optimize->add_flag("--reasons", oa.request.reasons, "Record why rewrites declined (bigger session files)");
    optimize->add_flag("--validate", oa.request.validate, "Validate the whole graph after every phase");
    optimize->add_flag("--debugprint", oa.debugprint, "Print the final graph's debugprint");
    optimize->add_option("--depth", oa.depth, depthHelp + "; with --debugprint")->check(CLI::Range(-1, 1000000));
    optimize->add_flag("--json", asJson, "Print one JSON document on stdout");

    const auto render = passlens::cli::registerRenderCommand(app);
    const auto report = passlens::cli::registerReportCommand(app);
    const auto runCmd = passlens::cli::registerRunCommand(app);

    if (argc > 1 && argv[1][0] != '-') {
        bool known = false;
        for (const auto* sub : app.get_subcommands({})) known |= sub->get_name() == argv[1];
        if (!known) {
            std::cerr << "error: unknown subcommand '" << argv[1] << "' (see passlens-cli --help)\n";
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    try {
        if (*inspect) return runInspect(file, asJson, types, depth);
        if (*convert) return runConvert(file, out, asJson, inlineLimit);
        if (*optimize) return runOptimize(file, oa, asJson);
        if (*render.app) return render.run();
        if (*report.app) return report.run();
        if (*runCmd.app) return runCmd.run();
    } catch (...) {
        const auto subs = app.get_subcommands();
        std::cerr << "error: "
                  << passlens::currentExceptionMessage((subs.empty() ? std::string() : subs[0]->get_name() + " ") +
                                                       file)
                  << "\n";
        return 1;
    }
    return 2;
}
