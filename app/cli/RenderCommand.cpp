// passlens-cli render: draw one step or a diff between two steps through Graphviz (CLI.md).
#include "DrawCommands.h"

#include <filesystem>
#include "TraceInput.h"

#include <passlens/diff/GraphDiff.h>
#include <passlens/io/Failure.h>
#include <passlens/ir/Error.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/Export.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/layout/ScopeGroups.h>
#include <passlens/layout/TimingOverlay.h>
#include <passlens/trace/TraceSteps.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace passlens::cli {

namespace {

struct RenderArgs {
    std::string file, out, pipeline = "theano", phase, diffSpec, overlay, format, view = "overlay", rankdir = "TB";
    std::vector<std::string> openScopes;
    int event = -1;
    bool json = false, logScale = false, groupScopes = false;
    int bins = 5;
    double dpi = 96, budget = 10;
    std::size_t threshold = 1500;
};

int runRender(const RenderArgs& a, CLI::App* cmd) {
    try {
        // Format: --format, else the output's extension, else svg.
        RenderFormat format = RenderFormat::Svg;
        if (!a.format.empty()) {
            const auto f = parseRenderFormat(a.format);
            if (!f) {
                std::cerr << "error: --format: expected svg, pdf, png or dot, got '" << a.format << "'\n";
                return 2;
            }
            format = *f;
        } else if (const auto f = formatFromExtension(a.out)) {
            format = *f;
        } else if (std::filesystem::path(a.out).has_extension()) {
            std::cerr << "error: -o " << a.out
                      << ": unknown extension; use .svg, .pdf, .png or .dot, or give --format\n";
            return 2;
        }
        if (!a.diffSpec.empty()) {
            try {
                splitDiffSpec(a.diffSpec);
            } catch (const Error& e) {
                std::cerr << "error: " << e.what() << "\n";
                return 2;
            }
        }
        DiffView view = DiffView::Overlay;
        if (a.view == "before")
            view = DiffView::Before;
        else if (a.view == "after")
            view = DiffView::After;

        const bool pipelineGiven = cmd->count("--pipeline") > 0;
        const OpenedTrace in = openTrace(a.file, a.pipeline, pipelineGiven);
        const auto resolve = [&](const std::string& spec, const char* option) {
            try {
                return resolveStep(*in.trace, spec);
            } catch (const Error& e) {
                throw Error(a.file + ": " + option + ": " + e.what()); // names the file and the option
            }
        };

        DrawOptions opt;
        opt.nestedGraphs = true; // If branches, Loop bodies as clusters
        opt.caption.source = sourceLabel(in);
        opt.caption.pipeline = in.pipeline;
        DrawGraph drawing;
        std::string phaseForProfile = "final";
        nlohmann::json diffJson;
        if (!a.diffSpec.empty()) {
            const auto [from, to] = splitDiffSpec(a.diffSpec);
            const TraceStep sa = resolve(from, "--diff");
            const TraceStep sb = resolve(to, "--diff");
            const auto ga = graphAt(*in.trace, sa);
            const auto gb = graphAt(*in.trace, sb);
            const GraphDiff d = diff(*ga, *gb);
            opt.caption.step = "diff " + sa.label() + " \xE2\x86\x92 " + sb.label();
            drawing = drawDiff(*ga, *gb, d, opt);
            phaseForProfile = sb.kind == TraceStep::Kind::Phase ? sb.name : sb.label();
            diffJson = d.toJson();
        } else {
            std::string spec = "final";
            if (!a.phase.empty()) spec = a.phase;
            if (a.event >= 0) spec = std::to_string(a.event);
            const TraceStep s = resolve(spec, a.event >= 0 ? "--event" : "--phase");
            const auto g = graphAt(*in.trace, s);
            opt.caption.step = s.label();
            if (s.kind != TraceStep::Kind::Event) {
                opt.caption.stepIndex = s.index;
                opt.caption.stepCount = s.count;
                opt.caption.unit = "phase";
            } else {
                opt.caption.step += " of " + std::to_string(s.count) + " events";
            }
            // centred as the window centres a step (scope boxes count only added nodes as "new")
            opt.focus = a.groupScopes || !a.openScopes.empty() ? nodesAddedBetween(*in.trace, s.fromEvent, s.event)
                                                               : changedRegion(*in.trace, *g, s.fromEvent, s.event);
            drawing = drawGraph(*g, opt);
            phaseForProfile = s.kind == TraceStep::Kind::Phase ? s.name : s.label();
        }
        if (!a.overlay.empty()) {
            const ExecutionProfile profile = ExecutionProfile::load(a.overlay, phaseForProfile);
            TimingOptions to;
            to.logScale = a.logScale;
            to.bins = a.bins;
            applyTiming(drawing, profile, to);
            const bool matched = std::any_of(drawing.nodes.begin(), drawing.nodes.end(),
                                             [](const DrawNode& n) { return n.timing.has_value(); });
            const bool timed =
                !profile.transfers.empty() || std::any_of(profile.nodes.begin(), profile.nodes.end(),
                                                          [](const ProfileNode& n) { return n.timeUs.has_value(); });
            if (!matched && timed)
                std::cerr << "warning: " << a.overlay << ": no node of the drawn graph has a timing (profile of phase '"
                          << profile.phase << "'; node ids are those of the profiled step)\n";
        }

        if (a.groupScopes || !a.openScopes.empty()) {
            ScopeGrouping grouping;
            for (std::string s : a.openScopes) {
                while (s.size() > 1 && s.back() == '/') s.pop_back(); // "/encoder/" is "/encoder"
                grouping.expanded.insert(s);
            }
            const std::size_t before = drawing.nodes.size();
            drawing = groupByScope(drawing, grouping);
            if (drawing.nodes.size() == before &&
                std::none_of(drawing.nodes.begin(), drawing.nodes.end(),
                             [](const DrawNode& n) { return n.category == NodeCategory::Group; }))
                std::cerr << "note: " << a.file << ": no name scopes to group by ('/'-separated node names)\n";
        }

        LayoutOptions lo;
        lo.budget = std::chrono::milliseconds(static_cast<long long>(a.budget * 1000));
        lo.nodeThreshold = a.threshold;
        lo.dot.rankdir = a.rankdir;
        LayoutEngine engine;
        // laid out for this file only: rendered by the process that ran dot (`dot -T<format>` of
        // the drawing's DOT); the geometry gives the counts, the box and the scope groups below
        const LayoutResult layout = exportDrawing(engine, drawing, a.out, {format, view, a.dpi, true}, lo);
        for (const auto& w : layout.warnings) std::cerr << "warning: " << a.out << ": Graphviz: " << w << "\n";
        if (!layout.budgetNote.empty()) std::cerr << "note: " << a.out << ": " << layout.budgetNote << "\n";

        if (a.json) {
            nlohmann::json j = {{"output", a.out},
                                {"format", renderFormatName(format)},
                                {"nodes", layout.nodes.size()},
                                {"edges", layout.edges.size()},
                                {"layout_ms", layout.layoutMs},
                                {"width_pt", layout.width},
                                {"height_pt", layout.height},
                                {"focused", layout.focused}};
            if (layout.focused) {
                j["hidden_nodes"] = layout.hiddenNodes;
                j["focus_reason"] = layout.focusReason;
            }
            if (layout.simple) j["simple_layout"] = true;
            if (a.groupScopes || !a.openScopes.empty()) {
                nlohmann::json scopes = nlohmann::json::array();
                for (const LayoutNode& n : layout.nodes)
                    if (n.category == NodeCategory::Group)
                        scopes.push_back({{"scope", n.name}, {"nodes", n.hiddenCount}, {"key", n.key}});
                j["scope_groups"] = std::move(scopes);
            }
            if (!layout.budgetNote.empty()) j["budget_note"] = layout.budgetNote;
            if (!diffJson.is_null()) j["diff"] = diffJson;
            std::cout << j.dump(2) << "\n";
        } else {
            std::cout << "wrote " << a.out << " (" << renderFormatName(format) << ", " << layout.nodes.size()
                      << " nodes, " << layout.edges.size() << " edges, layout "
                      << static_cast<long long>(layout.layoutMs) << " ms)\n";
            if (layout.focused)
                std::cout << "focused view: " << layout.hiddenNodes << " of " << layout.totalNodes
                          << " nodes folded into placeholders (" << layout.focusReason << ")\n";
        }
        return 0;
    } catch (const LayoutError& e) {
        std::cerr << "error: " << a.file << ": layout: " << e.what() << "\n";
        return 1;

    } catch (...) {
        std::cerr << "error: " << currentExceptionMessage("render " + a.file) << "\n";
        return 1;
    }
}

} // namespace

DrawSubcommand registerRenderCommand(CLI::App& app) {
    auto args = std::make_shared<RenderArgs>();
    CLI::App* cmd = app.add_subcommand(
        "render", "Draw a step, or the diff between two steps, through Graphviz (legend and caption included)");
    cmd->add_option("FILE", args->file, "ONNX model, graph JSON (optimized first) or session file")->required();
    cmd->add_option("--pipeline", args->pipeline,
                    "Pipeline for a model or graph: theano, cleanup, legacy, fast_compile, none, or a .pipeline.json")
        ->capture_default_str();
    auto* phase =
        cmd->add_option("--phase", args->phase, "Step to draw: a phase name, source or final (default final)");
    auto* event = cmd->add_option("--event", args->event, "Draw the graph right after rewrite event N")
                      ->check(CLI::NonNegativeNumber);
    auto* diffOpt = cmd->add_option("--diff", args->diffSpec,
                                    "Draw the diff A..B between two steps (phase names, source, final, event numbers)");
    phase->excludes(event);
    diffOpt->excludes(phase)->excludes(event);
    cmd->add_option("--overlay", args->overlay,
                    "Paint timings from a profile JSON (FORMAT.md section 2 profiles, or run --json output)");
    cmd->add_option("--format", args->format, "svg, pdf, png or dot (default: from -o's extension, else svg)");
    cmd->add_option("-o,--output", args->out, "Output file")->required();
    cmd->add_option("--view", args->view, "For --diff: overlay (both), before, after")
        ->check(CLI::IsMember({"overlay", "before", "after"}))
        ->capture_default_str();
    cmd->add_option("--dpi", args->dpi, "PNG resolution, dots per inch (150 for print)")
        ->check(CLI::Range(1.0, 2400.0))
        ->capture_default_str();
    cmd->add_option("--budget", args->budget,
                    "Layout time budget in seconds (past 70% of it: the focused view; past all of it, or 0: a simple "
                    "layered layout)")
        ->check(CLI::Range(0.0, 3600.0))
        ->capture_default_str();
    cmd->add_option("--focus-threshold", args->threshold, "Above this many drawn nodes, draw the focused view")
        ->capture_default_str();
    cmd->add_option("--rankdir", args->rankdir, "TB (top to bottom) or LR")
        ->check(CLI::IsMember({"TB", "LR"}))
        ->capture_default_str();
    cmd->add_flag("--log-scale", args->logScale, "Overlay: colour by log(time)");
    cmd->add_option("--bins", args->bins, "Overlay: colour thresholds (2-9), 0 for a continuous gradient")
        ->check(CLI::Range(0, 9))
        ->capture_default_str();
    cmd->add_flag("--group-scopes", args->groupScopes,
                  "Draw each name scope (the '/'-separated prefixes of node names) as one box");
    cmd->add_option("--open-scope", args->openScopes,
                    "With --group-scopes: draw this scope open (repeatable), e.g. /layer1 or /encoder/layer.0");
    cmd->add_flag("--json", args->json, "Print one JSON document on stdout");
    return {cmd, [args, cmd] { return runRender(*args, cmd); }};
}

} // namespace passlens::cli
