// passlens-cli run: load FILE, take the graph of a phase (running the pipeline when needed),
// execute and profile it, and with --check compare it with the source graph and the reference
// outputs, naming the first phase whose outputs diverge.
#include "RunCommand.h"

#include <passlens/io/AtomicFile.h>
#include <passlens/io/Failure.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/kernels/Check.h>
#include <passlens/kernels/Executor.h>
#include <passlens/kernels/Profiler.h>
#include <passlens/kernels/TensorIO.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/pipeline/PhaseCheck.h>
#include <passlens/trace/Trace.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

namespace passlens::cli {

namespace {

using json = nlohmann::json;

struct RunArgs {
    std::string file, phase = "final", pipeline = "theano", device = "auto", inputs, profile, saveOutputs;
    int repeat = 10, warmup = 3, threads = 0;
    bool check = false, asJson = false;
    double tolerance = kCheckTolerance, absTolerance = kCheckAbsTolerance;
    std::uint64_t seed = 0;
};

// Output i's name: its own, else the source graph's output i (rewrites replace the variable
// but keep the position), else the display name.
std::string outputName(const FunctionGraph& g, const FunctionGraph* source, std::size_t i) {
    const Variable* v = g.outputs()[i];
    if (!v->name().empty()) return v->name();
    if (source && i < source->outputs().size() && !source->outputs()[i]->name().empty())
        return source->outputs()[i]->name();
    return v->displayName();
}

json outputsJson(const FunctionGraph& g, const FunctionGraph* source, const std::vector<Tensor>& outs) {
    json a = json::array();
    for (std::size_t i = 0; i < outs.size(); ++i) {
        if (!outs[i].isDense()) { // an ONNX sequence or optional value
            a.push_back({{"name", outputName(g, source, i)}, {"value", outs[i].typeStr()}});
            continue;
        }
        a.push_back({{"name", outputName(g, source, i)},
                     {"shape", outs[i].shape()},
                     {"dtype", std::string(dtypeName(outs[i].dtype()))}});
    }
    return a;
}

json diffJson(const CompareResult& r) {
    json outs = json::array();
    for (const OutputDiff& d : r.outputs) {
        json e = {{"index", d.index}, {"max_abs", d.maxAbs}, {"max_rel", d.maxRel}};
        if (!d.shapeMatches || !d.detail.empty()) e["detail"] = d.detail; // shapes, or the strings that differ
        outs.push_back(e);
    }
    return {{"max_abs", r.maxAbs}, {"max_rel", r.maxRel}, {"outputs", outs}};
}

// Call inside a catch block: the error again, with `file` in front unless it names it already.
// The executor's messages name the node, input or constant ("OnnxConv (node #3 'conv'): ..."),
// the model file is the command's.
[[noreturn]] void rethrowNamingFile(const std::string& file) {
    const std::string msg = currentExceptionMessage(file);
    throw Error(msg.starts_with(file) ? msg : file + ": " + msg);
}

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

int runRun(const RunArgs& a) {
    const auto device = parseDeviceChoice(a.device);
    if (!device) {
        std::cerr << "error: --device must be auto, cpu or cuda, got '" << a.device << "'\n";
        return 2;
    }
    if (a.threads > 0) setCpuThreads(a.threads);
    // ---- the graphs
    std::unique_ptr<Trace> trace;
    std::unique_ptr<FunctionGraph> source, graph;
    std::string pipelineName;
    if (a.phase == "source" && !a.check && sniffFileKind(a.file) != FileKind::Session) {
        LoadedGraph loaded = loadGraphFile(a.file); // the source as it is: no pipeline to run
        for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
        graph = std::move(loaded.graph);
    } else {
        PipelineRequest request;
        request.pipeline = a.pipeline;
        OpenedTrace opened = openAndOptimize(a.file, request);
        for (const auto& w : opened.warnings) std::cerr << "warning: " << w << "\n";
        if (opened.run)
            for (const auto& m : opened.run->messages) std::cerr << "note: " << m << "\n";
        trace = std::move(opened.trace);
        pipelineName = opened.pipeline;
        source = trace->sourceGraph();
        if (a.phase == "final" && opened.finalGraph)
            graph = std::move(opened.finalGraph);
        else if (a.phase == "source")
            graph = trace->sourceGraph();
        else
            graph = trace->graphAfterPhase(a.phase);
    }

    // ---- inputs and reference outputs
    std::vector<Tensor> inputs, reference;
    if (!a.inputs.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(a.inputs, ec)) throw Error(a.inputs + ": --inputs: no such directory");
        std::vector<Type> inTypes, outTypes; // sequence and optional values are read as such
        for (const Variable* v : graph->inputs()) inTypes.push_back(v->type());
        for (const Variable* v : graph->outputs()) outTypes.push_back(v->type());
        inputs = readTensorDir(a.inputs, "input", inTypes);
        reference = readTensorDir(a.inputs, "output", outTypes);
        if (inputs.size() != graph->inputs().size())
            throw Error(a.inputs + ": holds " + std::to_string(inputs.size()) + " input_N.pb files, the graph takes " +
                        std::to_string(graph->inputs().size()) + " inputs");
    } else {
        try {
            inputs = seededInputs(*graph, a.seed);
        } catch (...) {
            rethrowNamingFile(a.file);
        }
    }

    // ---- execute and profile
    std::unique_ptr<Executor> planned;
    try {
        planned = std::make_unique<Executor>(*graph, ExecOptions{*device});
    } catch (...) {
        rethrowNamingFile(a.file);
    }
    Executor& exec = *planned;
    ProfileOptions po;
    po.warmup = a.warmup;
    po.repeats = a.repeat;
    const ProfileReport rep = profileExecutor(exec, inputs, po, a.phase);
    if (!a.profile.empty()) writeFileAtomic(a.profile, json{{"profiles", json::array({rep.toJson()})}}.dump(1) + "\n");
    if (!rep.error.empty()) { // the work failed: one line on stderr, nothing half-done on stdout
        std::cerr << "error: " << a.file << ": " << rep.error << "\n";
        return 1;
    }
    std::vector<Tensor> outs;
    try {
        outs = exec.run(inputs);
    } catch (...) {
        rethrowNamingFile(a.file);
    }
    if (!a.saveOutputs.empty()) {
        std::filesystem::create_directories(a.saveOutputs);
        for (std::size_t i = 0; i < outs.size(); ++i)
            writeTensorProto(outs[i], std::filesystem::path(a.saveOutputs) / ("output_" + std::to_string(i) + ".pb"),
                             outputName(*graph, source.get(), i));
    }

    // ---- check
    json check;
    bool checkOk = true;
    std::string checkText;
    if (a.check) {
        std::vector<Tensor> srcOuts;
        if (source && a.phase != "source") {
            try {
                srcOuts = Executor(*source, ExecOptions{DeviceChoice::Cpu}).run(inputs);
            } catch (...) {
                rethrowNamingFile(a.file + ": --check: the source graph");
            }
        } else {
            srcOuts = outs;
        }
        const CompareResult vsSource = compareOutputs(outs, srcOuts);
        const bool haveRef = !reference.empty();
        const CompareResult main = haveRef ? compareOutputs(outs, reference) : vsSource;
        check = {{"against", haveRef ? "reference" : "source"},
                 {"max_abs", main.maxAbs},
                 {"max_rel", main.maxRel},
                 {"tolerance", a.tolerance},
                 {"abs_tolerance", a.absTolerance},
                 {"outputs", diffJson(main)["outputs"]},
                 {"source", diffJson(vsSource)}};
        checkOk = main.within(a.tolerance, a.absTolerance) && vsSource.within(a.tolerance, a.absTolerance);
        if (haveRef) {
            const CompareResult srcRef = compareOutputs(srcOuts, reference);
            check["source_vs_reference"] = diffJson(srcRef);
        }
        // first phase whose outputs diverge from the source run
        json firstDiv = nullptr, phases = json::array();
        if (trace && a.phase != "source") {
            const PhaseCheckResult pc = checkPhases(
                phasesToCheck(*trace, a.phase),
                [&](const FunctionGraph& pg) {
                    const CompareResult r =
                        compareOutputs(Executor(pg, ExecOptions{DeviceChoice::Cpu}).run(inputs), srcOuts);
                    return OutputsDiff{r.maxAbs, r.maxRel, r.within(std::numeric_limits<double>::infinity())};
                },
                a.tolerance, "run " + a.file, nullptr, a.absTolerance);
            for (const PhaseCheckEntry& e : pc.phases) {
                json pe = {{"name", e.name}};
                if (e.diff) {
                    pe["max_abs"] = e.diff->maxAbs;
                    pe["max_rel"] = e.diff->maxRel;
                } else {
                    pe["error"] = e.error;
                }
                phases.push_back(pe);
            }
            if (!pc.firstDivergent.empty()) firstDiv = pc.firstDivergent;
        }
        check["first_divergent_phase"] = firstDiv;
        check["phases"] = phases;
        check["ok"] = checkOk;
        checkText = "check against " + std::string(haveRef ? "reference outputs" : "the source graph") + ": max_abs " +
                    num(main.maxAbs) + ", max_rel " + num(main.maxRel) + " (tolerance " + num(a.tolerance) +
                    ", or max_abs " + num(a.absTolerance) + ") -> " + (checkOk ? "OK" : "DIVERGES") + "\n";
        if (a.phase != "source")
            checkText +=
                "  vs source graph: max_abs " + num(vsSource.maxAbs) + ", max_rel " + num(vsSource.maxRel) + "\n";
        checkText +=
            "  first divergent phase: " + (firstDiv.is_null() ? std::string("none") : firstDiv.get<std::string>()) +
            "\n";
    }

    if (a.asJson) {
        json j = rep.toJson();
        j["file"] = a.file;
        if (!pipelineName.empty()) j["pipeline"] = pipelineName;
        j["outputs"] = outputsJson(*graph, source.get(), outs);
        j["total_us"] = rep.wallUs;
        j["cpu_blas"] = cpuBackendDescription();
        j["cpu_threads"] = cpuThreads();
        if (a.check) j["check"] = check;
        std::cout << j.dump(2) << "\n";
    } else {
        std::cout << a.file << ": phase " << a.phase << (pipelineName.empty() ? "" : " of pipeline " + pipelineName)
                  << ", " << graph->nodeCount() << " nodes, device " << rep.device
                  << "; CPU BLAS: " << cpuBackendDescription() << ", " << cpuThreads()
                  << (cpuThreads() == 1 ? " thread" : " threads") << "\n";
        for (std::size_t i = 0; i < outs.size(); ++i)
            std::cout << "  output " << i << " " << outputName(*graph, source.get(), i) << ": " << outs[i].typeStr()
                      << (outs[i].isDense() && isString(outs[i].dtype()) ? " " + outs[i].toTensorData()->shortValue()
                                                                         : std::string())
                      << "\n";
        std::cout << "\n" << rep.text();
        if (a.check) std::cout << "\n" << checkText;
        if (!a.profile.empty()) std::cout << "\nprofile: " << a.profile << "\n";
    }
    if (a.check && !checkOk) {
        std::cerr << "error: " << a.file << ": outputs of phase " << a.phase << " diverge (max_rel "
                  << num(check["max_rel"].get<double>()) << " > " << num(a.tolerance) << " and max_abs "
                  << num(check["max_abs"].get<double>()) << " > " << num(a.absTolerance) << ")\n";
        return 1;
    }
    return 0;
}

} // namespace

RunSubcommand registerRunCommand(CLI::App& app) {
    auto args = std::make_shared<RunArgs>();
    auto* cmd =
        app.add_subcommand("run", "Execute the graph of a phase (default: final), profile it, optionally check it");
    cmd->add_option("FILE", args->file, "ONNX model, graph JSON or session file")->required();
    cmd->add_option("--phase", args->phase, "source, final or a phase name of the pipeline")->capture_default_str();
    cmd->add_option("--pipeline", args->pipeline,
                    "theano, cleanup, legacy, fast_compile, none, or a .pipeline.json file")
        ->capture_default_str();
    cmd->add_option("--device", args->device, "auto, cpu or cuda (GPU ops run on the CPU when there is no CUDA device)")
        ->capture_default_str();
    cmd->add_option("--inputs", args->inputs, "Directory with input_N.pb (and optional output_N.pb reference outputs)");
    cmd->add_option("--repeat", args->repeat, "Measured runs")->capture_default_str()->check(CLI::Range(1, 1000000));
    cmd->add_option("--warmup", args->warmup, "Unmeasured runs before measuring")
        ->capture_default_str()
        ->check(CLI::Range(0, 1000000));
    cmd->add_option("--profile", args->profile, "Write the profile (FORMAT.md section 2 profiles) to this JSON file");
    cmd->add_flag("--check", args->check,
                  "Compare with the source graph and the reference outputs; name the first divergent phase");
    cmd->add_option("--tolerance", args->tolerance, "--check: largest accepted max_rel")->capture_default_str();
    cmd->add_option("--abs-tolerance", args->absTolerance,
                    "--check: an output whose max_abs is at most this matches whatever its max_rel (numpy's atol)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--threads", args->threads,
                    "BLAS threads of the CPU backend (0: OpenBLAS's default, OPENBLAS_NUM_THREADS or every core)")
        ->capture_default_str()
        ->check(CLI::Range(0, 1024));
    cmd->add_option("--seed", args->seed, "Seed of the random inputs (without --inputs)")->capture_default_str();
    cmd->add_option("--save-outputs", args->saveOutputs,
                    "Write the outputs as output_N.pb (TensorProto) into this directory");
    cmd->add_flag("--json", args->asJson, "Print one JSON document on stdout");
    RunSubcommand sub;
    sub.app = cmd;
    sub.run = [args]() -> int {
        try {
            return runRun(*args);
        } catch (...) {
            std::cerr << "error: " << currentExceptionMessage("run " + args->file) << "\n";
            return 1;
        }
    };
    return sub;
}

} // namespace passlens::cli
