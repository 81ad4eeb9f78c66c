#include "passlens/ui/DebugSession.h"
#include "passlens/ui/WindowLayout.h"

#include "JobRunner.h"

#include <passlens/trace/TraceSteps.h>
#include <passlens/io/SessionFile.h>
#include <passlens/io/Failure.h>
#include <passlens/layout/DrawGraph.h>

#include <QFileInfo>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

namespace passlens {

struct DebugSession::Loaded {
    QString path, pipeline, error, sourcePath;
    int viewStep = -1;
    std::unique_ptr<Trace> trace;
    std::optional<PipelineRun> run;
    std::shared_ptr<const FunctionGraph> finalGraph;
    /// Set for the imported source graph reported while the pipeline runs (open()).
    std::shared_ptr<const FunctionGraph> source;
    bool sourceShown = false; ///< a source result came before this final one
};

struct DebugSession::Shown {
    QString path, sourcePath, pipelineName;
    std::shared_ptr<const Trace> trace;
    std::optional<PipelineRun> run;
    std::vector<StepPoint> steps;
    int current = 0;
    std::optional<int> diffFrom;
    std::map<int, KeptGraph> graphs;
    std::optional<LayoutResult> layout;
    std::optional<int> layoutChain;
    std::map<std::pair<int, int>, LayoutResult> stepLayouts;
    std::optional<std::set<std::string>> expanded; ///< the open scopes, when grouped
};

DebugSession::DebugSession(QObject* parent)
    : QObject(parent)
    , m_jobs(new JobRunner(this)) {}
DebugSession::~DebugSession() {
    // workers use m_engine and the trace: stop them and let them end before those go
    m_jobs->cancelAll();
    m_jobs->waitForAll();
}

void DebugSession::setBusy(bool busy, const QString& what) {
    m_busy = busy;
    emit busyChanged(busy, what);
}

namespace {
using SourceShown = std::function<void(std::shared_ptr<const FunctionGraph>)>;
std::shared_ptr<DebugSession::Loaded> loadAndRun(QString path, QString pipeline, QStringList disabled,
                                                 std::shared_ptr<const FunctionGraph> source, const CancelToken* cancel,
                                                 QMap<QString, double> moves = {}, SourceShown sourceShown = {});
} // namespace

void DebugSession::open(const QString& path, const QString& pipeline) {
    m_deferredLoad.reset(); // a finished run waiting for its source's drawing is superseded too
    m_cancelledOpen.clear();
    m_openingPath = path;
    setBusy(true, tr("Opening %1 …").arg(QFileInfo(path).fileName()));
    // results: the imported source graph (a model or graph JSON), then the pipeline's run
    Job<std::shared_ptr<Loaded>> job;
    job.lane = pipelineLane(); // supersedes (stops) a run still going
    job.work = [path, pipeline](const JobControl<std::shared_ptr<Loaded>>& control) {
        const auto shown = [&](std::shared_ptr<const FunctionGraph> graph) {
            auto r = std::make_shared<Loaded>();
            r->path = path;
            r->pipeline = pipeline;
            r->source = std::move(graph);
            control.partial(std::move(r));
        };
        return loadAndRun(path, pipeline, {}, nullptr, &control.token(), {}, shown);
    };
    job.partial = [this](std::shared_ptr<Loaded> r) { showSource(std::move(r)); };
    job.done = [this](std::shared_ptr<Loaded> r) { finishLoad(std::move(r)); };
    job.cancelled = [this](std::shared_ptr<Loaded>) { endCancelledRun(); };
    m_jobs->start(std::move(job));
}

void DebugSession::runPipeline(const QString& pipeline, const QStringList& disabledPhases,
                               const QMap<QString, double>& moves) {
    // another pipeline chosen while a file opens: that file, with this pipeline
    if (!m_openingPath.isEmpty()) return open(m_openingPath, pipeline);
    if (m_path.isEmpty()) return;
    m_deferredLoad.reset();
    setBusy(true, tr("Running pipeline %1 …").arg(pipeline));
    Job<std::shared_ptr<Loaded>> job;
    job.lane = pipelineLane();          // supersedes (stops) a run still going
    const bool onSource = sourceOnly(); // a failure keeps the source shown, as open()'s does
    job.done = [this, onSource](std::shared_ptr<Loaded> r) {
        r->sourceShown = r->sourceShown || onSource;
        finishLoad(std::move(r));
    };
    job.cancelled = [this](std::shared_ptr<Loaded>) { endCancelledRun(); };
    const QString path = m_path;
    std::shared_ptr<const FunctionGraph> source = graphAt(0); // cached: read-only from here on
    job.work = [path, pipeline, disabledPhases, source, moves](const JobControl<std::shared_ptr<Loaded>>& control) {
        return loadAndRun(path, pipeline, disabledPhases, source, &control.token(), moves);
    };
    m_jobs->start(std::move(job));
}

bool DebugSession::cancelRun() {
    const JobId id = m_jobs->newest(pipelineLane());
    return id != 0 && m_jobs->cancel(id);
}

void DebugSession::endCancelledRun() {
    const QString opening = std::exchange(m_openingPath, QString());
    setBusy(false, {});
    if (sourceOnly() && m_beforeOpen) { // back to the file and step shown before
        std::unique_ptr<Shown> before = std::move(m_beforeOpen);
        clearShown();
        m_path = before->path;
        m_sourcePath = before->sourcePath;
        m_pipelineName = before->pipelineName;
        m_trace = std::move(before->trace);
        m_run = std::move(before->run);
        m_steps = std::move(before->steps);
        m_current = before->current;
        m_diffFrom = before->diffFrom;
        m_graphs = std::move(before->graphs);
        m_layout = std::move(before->layout);
        m_layoutChain = before->layoutChain;
        m_stepLayouts = std::move(before->stepLayouts);
        if (m_grouping && before->expanded) m_grouping->expanded = std::move(*before->expanded);
        m_cancelledOpen = opening;
        emit opened();
        emit stepChanged(m_current);
    } else if (sourceOnly()) { // the source of the file being opened stays, labelled
        m_steps.front().label = tr("source (the pipeline run was cancelled)");
        m_stepLayouts.clear(); // its caption said the pipeline was running
        emit stepChanged(m_current);
    }
    emit runCancelled();
}

namespace {
std::shared_ptr<DebugSession::Loaded> loadAndRun(QString path, QString pipeline, QStringList disabled,
                                                 std::shared_ptr<const FunctionGraph> source, const CancelToken* cancel,
                                                 QMap<QString, double> moves, SourceShown sourceShown) {
    auto r = std::make_shared<DebugSession::Loaded>();
    r->path = path;
    r->pipeline = pipeline;
    try {
        PipelineRequest request;
        request.cancel = cancel; // (a cancelled run's result goes to its job's `cancelled`)
        request.pipeline = pipeline.toStdString();
        request.reasons = true; // the Inspector and the pipeline tree show why rewrites declined
        for (const auto& d : disabled) request.disabled.push_back(d.toStdString());
        for (auto it = moves.begin(); it != moves.end(); ++it) request.moves[it.key().toStdString()] = it.value();
        if (source) { // a re-run starts from a copy of the source graph of the trace shown
            OptimizedGraph o = optimizeGraph(source->clone(), request);
            r->trace = std::move(o.trace);
            r->run = std::move(o.run);
            o.graph->toposort();
            r->finalGraph = std::shared_ptr<const FunctionGraph>(std::move(o.graph));
            return r;
        }
        // a big graph (drawn as a focused view): the view draws a copy of the source while the
        // pipeline changes the imported graph; a smaller one's run is quick, its result comes first
        const auto showCopy = [&](const FunctionGraph& imported) {
            if (imported.nodeCount() <= LayoutOptions{}.nodeThreshold) return;
            std::shared_ptr<const FunctionGraph> copy(imported.clone());
            copy->toposort(); // (filled now: read-only from here on, on any thread)
            sourceShown(std::move(copy));
            r->sourceShown = true;
        };
        OpenedTrace opened = openAndOptimize(path.toStdString(), request, false,
                                             sourceShown ? std::function<void(const FunctionGraph&)>(showCopy)
                                                         : std::function<void(const FunctionGraph&)>());
        r->trace = std::move(opened.trace);
        r->run = std::move(opened.run);
        if (opened.fromSession) {
            r->pipeline = QString::fromStdString(opened.pipeline);
            if (opened.view.is_object()) r->viewStep = opened.view.value("step", -1);
            r->sourcePath = QString::fromStdString(opened.sourcePath);
            opened.finalGraph = r->trace->graphAfterPhase("final");
        }
        opened.finalGraph->toposort();
        r->finalGraph = std::shared_ptr<const FunctionGraph>(std::move(opened.finalGraph));
    } catch (...) {
        r->error = QString::fromStdString(currentExceptionMessage("open " + path.toStdString()));
    }
    return r;
}
} // namespace

void DebugSession::clearShown() {
    m_trace.reset();
    m_run.reset();
    m_steps.clear();
    m_graphs.clear();
    m_layout.reset();
    m_layoutChain.reset();
    m_stepLayouts.clear();
    m_diffFrom.reset();
    m_nested.reset();
    m_extraFocus.clear(); // (node ids of the graph shown before)
    m_extraFocusHops.reset();
    m_neighbourhoodFirst = m_followUp = false;
    m_profile.reset();
    m_executionProfile.reset();
    m_pipelineError.clear();
}

void DebugSession::showSource(std::shared_ptr<Loaded> r) {
    if (m_trace) { // kept until the run ends: a cancelled open goes back to it (endCancelledRun)
        m_beforeOpen = std::make_unique<Shown>();
        Shown& b = *m_beforeOpen;
        b.path = m_path;
        b.sourcePath = m_sourcePath;
        b.pipelineName = m_pipelineName;
        b.trace = m_trace;
        b.run = m_run;
        b.steps = m_steps;
        b.current = m_current;
        b.diffFrom = m_diffFrom;
        b.graphs = m_graphs;
        b.layout = m_layout;
        b.layoutChain = m_layoutChain;
        b.stepLayouts = m_stepLayouts;
        if (m_grouping) b.expanded = m_grouping->expanded;
    } // (a source shown while a superseded run went leaves the file before it in m_beforeOpen)
    if (m_grouping) m_grouping->expanded.clear(); // another file
    clearShown();
    m_path = m_sourcePath = r->path;
    m_pipelineName = r->pipeline;
    m_steps.push_back({0, -1, tr("source (the pipeline is still running)"), true});
    m_current = 0;
    keepGraph(0, std::move(r->source), false);
    setBusy(true, tr("Running pipeline %1 on %2 … (the source graph is shown meanwhile)")
                      .arg(m_pipelineName, QFileInfo(m_path).fileName()));
    emit sourceShown();
    emit stepChanged(m_current);
}

void DebugSession::finishLoad(std::shared_ptr<Loaded> r) {
    if (r->sourceShown && sourceOnly() && m_layoutPending) { // the source's drawing comes first
        m_deferredLoad = std::move(r);
        return;
    }
    m_openingPath.clear();
    m_beforeOpen.reset(); // the run ended: its file (or its failed source) is what is shown now
    setBusy(false, {});
    if (!r->error.isEmpty()) {
        if (r->sourceShown && sourceOnly()) { // the source stays, with what went wrong
            m_pipelineError = r->error;
            m_pipelineName = r->pipeline;
            m_steps.front().label = tr("source (the pipeline failed)");
            m_stepLayouts.clear(); // its caption said the pipeline was running
            emit pipelineFailed(r->error);
            emit stepChanged(m_current);
            return;
        }
        emit failed(r->error);
        return;
    }
    if (m_grouping && r->path != m_path) m_grouping->expanded.clear();
    clearShown();
    m_path = r->path;
    m_sourcePath = r->sourcePath.isEmpty() ? r->path : r->sourcePath;
    m_pipelineName = r->pipeline;
    m_trace = std::move(r->trace);
    m_run = std::move(r->run);
    rebuildSteps();
    m_current = static_cast<int>(m_steps.size()) - 1;
    if (r->viewStep >= 0 && r->viewStep < static_cast<int>(m_steps.size())) m_current = r->viewStep;
    keepGraph(m_steps.back().event, r->finalGraph, false);
    emit opened();
    emit stepChanged(m_current);
}

void DebugSession::rebuildSteps() {
    m_steps.clear();
    m_steps.push_back({0, -1, QStringLiteral("source"), true});
    const auto& phases = m_trace->phases();
    const auto& events = m_trace->events();
    for (std::size_t p = 0; p < phases.size(); ++p) {
        const PhaseRecord& ph = phases[p];
        if (ph.firstEvent)
            for (int s = ph.firstEvent; s <= ph.lastEvent; ++s) {
                const RewriteEvent& e = events[static_cast<std::size_t>(s - 1)];
                if (e.status != EventStatus::Applied) continue;
                m_steps.push_back({s, static_cast<int>(p),
                                   QStringLiteral("#%1 %2").arg(s).arg(QString::fromStdString(e.rewriter)), false});
            }
        // every phase ends at a step (unchanged phases show the same graph)
        m_steps.push_back(
            {m_trace->lastEventOfPhase(p), static_cast<int>(p), QString::fromStdString(ph.info.name), true});
    }
}

void DebugSession::showNested(std::shared_ptr<const FunctionGraph> graph, QString label) {
    if (graph) graph->toposort();
    m_nested = std::move(graph);
    m_nestedLabel = std::move(label);
}

void DebugSession::setCurrentStep(int index) {
    if (m_steps.empty()) return;
    index = std::clamp(index, 0, static_cast<int>(m_steps.size()) - 1);
    m_nested.reset();
    if (index == m_current) return;
    m_current = index;
    // the worker's graphs were for the step before: it stops at its next graph (the CPU goes to
    // this step's graph and drawing); the drawing of this step starts the next one
    m_jobs->cancel(m_jobs->newest(stepGraphLane()));
    m_extraFocus.clear();
    m_extraFocusHops.reset();
    m_neighbourhoodFirst = m_followUp = false;
    emit stepChanged(m_current);
}

void DebugSession::nextPhase() {
    for (int i = m_current + 1; i < static_cast<int>(m_steps.size()); ++i)
        if (m_steps[static_cast<std::size_t>(i)].phaseEnd) return setCurrentStep(i);
}

void DebugSession::previousPhase() {
    for (int i = m_current - 1; i >= 0; --i)
        if (m_steps[static_cast<std::size_t>(i)].phaseEnd) return setCurrentStep(i);
}

void DebugSession::goToEvent(int seq) {
    // the step of that event, else the last step at or before it
    int best = 0;
    for (int i = 0; i < static_cast<int>(m_steps.size()); ++i) {
        const StepPoint& s = m_steps[static_cast<std::size_t>(i)];
        if (s.event == seq && !s.phaseEnd) return setCurrentStep(i);
        if (s.event <= seq) best = i;
    }
    setCurrentStep(best);
}

int DebugSession::phaseStartStep(int index) const {
    const int phase = m_steps[static_cast<std::size_t>(index)].phase;
    for (int i = index - 1; i >= 0; --i)
        if (m_steps[static_cast<std::size_t>(i)].phaseEnd && m_steps[static_cast<std::size_t>(i)].phase != phase)
            return i;
    return 0;
}

namespace {
// The graph after `event`, continued from `base` (the graph after baseEvent), or replayed from
// the source when there is none.
std::shared_ptr<const FunctionGraph> buildStepGraph(const Trace& trace, int event, const FunctionGraph* base,
                                                    int baseEvent) {
    std::shared_ptr<const FunctionGraph> g(base ? trace.graphAfter(event, *base, baseEvent) : trace.graphAfter(event));
    g->toposort(); // fill the cache now: shared graphs are only read from here on (any thread)
    return g;
}

std::size_t idCount(const FunctionGraph& g) { return static_cast<std::size_t>(g.nodeIdLimit() + g.varIdLimit()); }
} // namespace

std::shared_ptr<const FunctionGraph> DebugSession::graphAt(int index) {
    if (index < 0 || index >= static_cast<int>(m_steps.size())) return nullptr;
    const int ev = m_steps[static_cast<std::size_t>(index)].event;
    auto it = m_graphs.find(ev);
    if (it != m_graphs.end()) return it->second.graph;
    if (!m_trace) return nullptr;
    const auto [base, baseEvent] = baseFor(ev);
    auto g = buildStepGraph(*m_trace, ev, base.get(), baseEvent);
    keepGraph(ev, g, true);
    return g;
}

std::pair<std::shared_ptr<const FunctionGraph>, int> DebugSession::baseFor(int event) const {
    for (auto it = m_graphs.upper_bound(event); it != m_graphs.begin();) {
        --it;
        if (it->second.replayed) return {it->second.graph, it->first};
    }
    return {nullptr, 0};
}

void DebugSession::keepGraph(int event, std::shared_ptr<const FunctionGraph> graph, bool replayed) {
    m_graphs[event] = KeptGraph{std::move(graph), replayed};
    const bool stepShown = m_current >= 0 && m_current < static_cast<int>(m_steps.size());
    const int shown = stepShown ? m_steps[static_cast<std::size_t>(m_current)].event : event;
    std::size_t ids = 0;
    for (const auto& [e, kept] : m_graphs) ids += idCount(*kept.graph);
    while (m_graphs.size() > kKeptGraphs || ids > kKeptIds) {
        auto farthest = m_graphs.end();
        for (auto it = m_graphs.begin(); it != m_graphs.end(); ++it)
            if (it->first != shown && it->first != event &&
                (farthest == m_graphs.end() || std::abs(it->first - shown) > std::abs(farthest->first - shown)))
                farthest = it;
        if (farthest == m_graphs.end()) break; // the shown step and the new one stay whatever their size
        ids -= idCount(*farthest->second.graph);
        m_graphs.erase(farthest);
    }
}

int DebugSession::stepGraphCheckpointEvery() const {
    const int events = m_trace ? static_cast<int>(m_trace->events().size()) : 0;
    return std::max(32, events / 16);
}

std::vector<int> DebugSession::keptGraphEvents() const {
    std::vector<int> out;
    for (const auto& [e, kept] : m_graphs) out.push_back(e);
    return out;
}

void DebugSession::prefetchNeighbours() {
    if (!m_trace || m_steps.empty()) return;
    std::vector<int> targets; // ascending: the step before, then the one after
    for (int i : {m_current - 1, m_current + 1})
        if (i >= 0 && i < static_cast<int>(m_steps.size()))
            if (const int ev = m_steps[static_cast<std::size_t>(i)].event; !m_graphs.count(ev)) targets.push_back(ev);
    if (targets.empty()) return;
    // The replayed graphs kept now, as bases; checkpoints only while a few graphs of the shown
    // step's size fit the bound (graphAt).
    std::map<int, std::shared_ptr<const FunctionGraph>> bases;
    for (const auto& [e, kept] : m_graphs)
        if (kept.replayed) bases[e] = kept.graph;
    const auto shown = m_graphs.find(m_steps[static_cast<std::size_t>(m_current)].event);
    const std::size_t size = shown == m_graphs.end() ? 0 : idCount(*shown->second.graph);
    const int every = size == 0 || kKeptIds / size >= 8 ? stepGraphCheckpointEvery() : 0;
    using Built = BuiltGraphs;
    Job<Built> job;
    job.lane = stepGraphLane();
    job.work = [trace = m_trace, bases, targets, every](const JobControl<Built>& control) mutable -> Built {
        Built built;
        try {
            for (int target : targets) {
                auto it = bases.upper_bound(target);
                std::shared_ptr<const FunctionGraph> base = it == bases.begin() ? nullptr : std::prev(it)->second;
                int baseEvent = it == bases.begin() ? 0 : std::prev(it)->first;
                std::vector<int> stops;
                if (every > 0)
                    for (int c = (baseEvent / every + 1) * every; c < target; c += every) stops.push_back(c);
                stops.push_back(target);
                for (int stop : stops) {
                    if (control.cancelled()) return built;
                    base = buildStepGraph(*trace, stop, base.get(), baseEvent);
                    baseEvent = stop;
                    bases[stop] = base;
                    built.push_back({stop, base});
                }
            }
        } catch (const std::exception&) { // a corrupt session: graphAt says so when the step is shown
        }
        return built;
    };
    job.done = [this, trace = m_trace](Built built) { keepBuilt(trace, std::move(built)); };
    m_jobs->start(std::move(job));
}

void DebugSession::keepBuilt(const std::shared_ptr<const Trace>& trace, BuiltGraphs built) {
    if (trace != m_trace) return; // another file or run meanwhile
    for (auto& [event, graph] : built)
        if (!m_graphs.count(event)) keepGraph(event, std::move(graph), true);
}

bool DebugSession::currentStepIsLarge() const {
    const std::size_t threshold = LayoutOptions{}.nodeThreshold;
    if (m_nested) return m_nested->nodeCount() > threshold;
    if (m_steps.empty() || m_graphs.empty()) return false;
    const int ev = m_steps[static_cast<std::size_t>(m_current)].event;
    auto nearest = m_graphs.begin();
    for (auto it = m_graphs.begin(); it != m_graphs.end(); ++it)
        if (std::abs(it->first - ev) < std::abs(nearest->first - ev)) nearest = it;
    return nearest->second.graph->nodeCount() > threshold;
}

void DebugSession::setDiffFrom(std::optional<int> stepIndex) {
    m_diffFrom = m_trace ? stepIndex : std::nullopt; // (the source alone has nothing to compare)
}

std::optional<GraphDiff> DebugSession::currentDiff() {
    if (!m_diffFrom) return std::nullopt;
    auto a = graphAt(*m_diffFrom), b = graphAt(m_current);
    if (!a || !b) return std::nullopt;
    return diff(*a, *b);
}

void DebugSession::setProfile(std::optional<ExecutionProfile> p, TimingOptions options, int measuredOnStep) {
    m_profile = std::move(p);
    m_profileStep = measuredOnStep;
    m_timingOptions = options;
    m_stepLayouts.clear(); // labels change; the next layout is pinned to the current drawing
}

void DebugSession::focusOnNodes(std::vector<NodeId> nodes, std::optional<int> hops) {
    m_extraFocus = std::move(nodes);
    m_extraFocusHops = hops;
    requestLayout();
}

void DebugSession::showNeighbourhoodFirst(std::vector<NodeId> nodes) {
    m_extraFocus = std::move(nodes);
    m_extraFocusHops.reset();
    m_neighbourhoodFirst = !m_extraFocus.empty();
    m_followUp = m_neighbourhoodFirst;
    requestLayout();
}

void DebugSession::setScopeGrouping(std::optional<ScopeGrouping> grouping) {
    // Turning grouping on or off replaces most of the drawing: a fresh layout (pinning the boxes
    // at their members' old places left a tall, sparse drawing). Opening or closing a scope keeps
    // the shown drawing as the anchor, so the other boxes stay where they are.
    const bool toggled = grouping.has_value() != m_grouping.has_value();
    m_grouping = std::move(grouping);
    m_stepLayouts.clear(); // every remembered drawing has the old boxes
    if (toggled) m_layoutChain.reset();
    requestLayout();
}

void DebugSession::relayout() {
    m_stepLayouts.clear();
    m_layoutChain.reset();
    m_layout.reset();
    requestLayout();
}

DrawGraph DrawingRequest::draw(const LayoutOptions* focusedBy) const {
    DrawOptions opt;
    opt.caption = caption;
    DrawGraph dg;
    // the focused view the layout would cut from the whole drawing, without drawing it all (scope
    // boxes are made from the whole drawing: every node's scope, change and time)
    const bool cut = focusedBy && !grouping;
    if (before) {
        const GraphDiff d = diff(*before, *after);
        dg = cut ? drawDiffFocused(*before, *after, d, opt, focusedBy->nodeThreshold, focusedBy->focusHops,
                                   focusedBy->focusMaxNodes)
                 : drawDiff(*before, *after, d, opt);
    } else {
        // a quick drawing centres on its targets alone; a step on its changes too: what its
        // rewrites added, or around what they removed (scope boxes count only added nodes as "new")
        if (!nested && !quick && trace)
            opt.focus = grouping ? nodesAddedBetween(*trace, fromEvent, toEvent)
                                 : changedRegion(*trace, *after, fromEvent, toEvent);
        // a Find hit or jump target with more changes than the view holds (the end of merge2 on
        // the 20k graph: 2,222): the view is around the target alone, not one piece of them
        const std::size_t holds = focusedBy ? focusedBy->focusMaxNodes : LayoutOptions{}.focusMaxNodes;
        if (!extraFocus.empty() && opt.focus.size() + extraFocus.size() > holds) opt.focus.clear();
        opt.focus.insert(opt.focus.end(), extraFocus.begin(), extraFocus.end());
        dg = cut ? drawFocused(*after, opt, focusedBy->nodeThreshold, focusedBy->focusHops, focusedBy->focusMaxNodes)
                 : drawGraph(*after, opt);
    }
    // (scaled over every node of the step, or of both steps of a diff, as on the whole drawing)
    if (profile) {
        applyTiming(dg, *profile, timing, {before.get(), after.get()});
        if (profileStep >= 0 && profileStep != caption.stepIndex)
            dg.timing.measuredOn = "step " + std::to_string(profileStep);
    }
    if (grouping) {
        ScopeGrouping open = *grouping;
        open.reveal.insert(open.reveal.end(), extraFocus.begin(), extraFocus.end());
        dg = groupByScope(dg, open);
    }
    return dg;
}

/// What a layout worker finishes a drawing request with: the step graphs not built yet (built as
/// graphAt builds them, from the nearest kept step) and where the changed region starts, which
/// depends on the step graph's size.
struct DebugSession::PendingRequest {
    struct Build {
        int event = 0;
        std::shared_ptr<const FunctionGraph> base; ///< the nearest kept replayed graph before it, or null
        int baseEvent = 0;
    };
    DrawingRequest request; ///< after / before set when kept (or nested)
    std::optional<Build> after, before;
    std::shared_ptr<const Trace> trace;
    std::optional<int> diffEvent; ///< a diff's changed region starts at its first step
    int stepFrom = 0;             ///< a step drawn as a focused view: its own changes

    /// Builds the graphs still missing and sets request.fromEvent; returns what it built. Any
    /// thread; throws what Trace::graphAfter throws (a corrupt session).
    BuiltGraphs complete() {
        BuiltGraphs built;
        for (auto [build, graph] : {std::pair{&after, &request.after}, std::pair{&before, &request.before}})
            if (*build) {
                *graph = buildStepGraph(*trace, (*build)->event, (*build)->base.get(), (*build)->baseEvent);
                built.push_back({(*build)->event, *graph});
            }
        // A plain step's changed region: what rewrites added since the source (its scope boxes
        // count it as "new"); in a graph drawn as a focused view, the view centres on it, so
        // there it is the step's own changes, as TraceStep::fromEvent has them for `render` and
        // the report (its event, or its phase's events at a phase end): thousands of nodes added
        // since the source made a 400-node view around none of them that dot took seconds to lay out.
        const bool focusedView = request.after && request.after->nodeCount() > LayoutOptions{}.nodeThreshold;
        request.fromEvent = diffEvent ? *diffEvent : focusedView ? stepFrom : 0;
        return built;
    }
};

DebugSession::PendingRequest DebugSession::pendingRequest() {
    PendingRequest p;
    DrawingRequest& r = p.request;
    if (m_steps.empty()) return p;
    p.trace = m_trace;
    // the kept graph of step `index`, or what a worker builds it from
    auto kept = [this](int index, std::optional<PendingRequest::Build>& build) -> std::shared_ptr<const FunctionGraph> {
        const int ev = m_steps[static_cast<std::size_t>(index)].event;
        if (auto it = m_graphs.find(ev); it != m_graphs.end()) return it->second.graph;
        if (!m_trace) return nullptr;
        const auto [base, baseEvent] = baseFor(ev);
        build = PendingRequest::Build{ev, base, baseEvent};
        return nullptr;
    };
    r.after = m_nested ? m_nested : kept(m_current, p.after);
    r.before = m_diffFrom && !m_nested ? kept(*m_diffFrom, p.before) : nullptr;
    const StepPoint step = m_steps[static_cast<std::size_t>(m_current)];
    Caption& cap = r.caption;
    cap.source = QFileInfo(m_path).fileName().toStdString();
    cap.pipeline = m_pipelineName.toStdString();
    cap.step = m_nested     ? m_nestedLabel.toStdString()
               : m_diffFrom ? ("diff " + m_steps[static_cast<std::size_t>(*m_diffFrom)].label.toStdString() + " .. " +
                               step.label.toStdString())
                            : step.label.toStdString();
    cap.stepIndex = m_current;
    cap.stepCount = static_cast<int>(m_steps.size()) - 1;
    r.profile = m_nested ? std::nullopt : m_profile;
    r.profileStep = profileStep();
    r.timing = m_timingOptions;
    r.trace = m_trace.get();
    if (m_diffFrom) p.diffEvent = m_steps[static_cast<std::size_t>(*m_diffFrom)].event;
    p.stepFrom = !step.phaseEnd   ? step.event - 1
                 : step.phase > 0 ? m_trace->lastEventOfPhase(static_cast<std::size_t>(step.phase - 1))
                                  : 0;
    r.toEvent = step.event;
    r.nested = m_nested != nullptr;
    r.extraFocus = m_nested ? std::vector<NodeId>{} : m_extraFocus;
    r.grouping = m_nested ? std::nullopt : m_grouping;
    return p;
}

DrawingRequest DebugSession::drawingRequest() {
    PendingRequest p = pendingRequest();
    keepBuilt(m_trace, p.complete()); // (the step shown is normally built already)
    return p.request;
}

void DebugSession::requestLayout() {
    if (m_steps.empty()) return;
    // (a step graph not built yet is built by the worker: the GUI thread never replays a step)
    PendingRequest pending = pendingRequest();
    DrawingRequest& request = pending.request;
    LayoutEngine* engine = &m_engine;
    const bool nested = request.nested;
    const std::optional<int> chain = nested ? std::nullopt : std::optional<int>(m_diffFrom ? *m_diffFrom : -1);
    std::optional<LayoutResult> remembered, anchor;
    if (chain) {
        if (auto it = m_stepLayouts.find({*chain, m_current}); it != m_stepLayouts.end())
            remembered = it->second;
        else if (m_layout && m_layoutChain == chain)
            anchor = m_layout;
    }
    const int current = m_current;
    const std::vector<NodeId> extraFocus = request.extraFocus;
    LayoutOptions layoutOptions = windowLayoutOptions();
    if (!extraFocus.empty() && m_extraFocusHops) {
        layoutOptions.focusHops = *m_extraFocusHops;
        layoutOptions.focusMaxNodes = std::max(layoutOptions.focusMaxNodes, extraFocus.size() + 16);
    }
    const bool quick = m_neighbourhoodFirst && !extraFocus.empty() && !m_nested && !m_diffFrom;
    request.quick = quick;
    m_neighbourhoodFirst = false;
    if (quick) layoutOptions.nodeThreshold = 0; // the focused view, whatever the size
    if (!extraFocus.empty()) {                  // the remembered or pinned drawing may lack the seeds
        remembered.reset();
        anchor.reset();
    }
    // the newest request of the lane: it supersedes the one before (whose token is cancelled at
    // once, and whose result is dropped)
    struct Laid {
        std::pair<std::optional<LayoutResult>, QString> result; ///< the layout, or why there is none
        BuiltGraphs built;                                      ///< the step graphs the worker built
        bool plain = false; ///< a neighbourhood-first drawing whose step has none of its seeds: not drawn
    };
    Job<Laid> job;
    job.lane = layoutLane();
    job.done = [this, chain, current, extraFocus, quick, trace = m_trace](Laid res) {
        m_layoutPending = false;
        keepBuilt(trace, std::move(res.built)); // before the view reads the step's graph
        if (res.plain) {                        // the step is drawn as stepping draws it
            m_extraFocus.clear();
            m_followUp = false;
            requestLayout();
            return;
        }
        showLayoutResult(std::move(res.result), chain, current, extraFocus, quick);
        // a run that finished while the source was being drawn comes after its drawing
        if (m_deferredLoad && !m_layoutPending) finishLoad(std::exchange(m_deferredLoad, nullptr));
        if (!m_layoutPending) prefetchNeighbours(); // while the user looks at the drawing
    };
    job.cancelled = [this, trace = m_trace](Laid res) { // cancelLayout(): the drawing is dropped
        m_layoutPending = false;
        keepBuilt(trace, std::move(res.built)); // (the graphs are right whatever happened to the drawing)
        m_followUp = false;
        emit layoutCancelled();
        if (m_deferredLoad && !m_layoutPending) finishLoad(std::exchange(m_deferredLoad, nullptr));
    };
    job.work = [=](const JobControl<Laid>& control) -> Laid {
        Laid out;
        try {
            PendingRequest p = pending;
            out.built = p.complete();
            if (p.request.quick) { // a jump's seeds: the nodes its step has
                const FunctionGraph& g = *p.request.after;
                std::erase_if(p.request.extraFocus, [&g](NodeId id) { return !g.node(id) || !g.node(id)->inGraph(); });
                if (p.request.extraFocus.empty()) {
                    out.plain = true;
                    return out;
                }
            }
            if (remembered) {
                out.result = {remembered, {}};
            } else if (!control.cancelled()) {
                const DrawGraph dg = p.request.draw(&layoutOptions);
                out.result = {anchor ? engine->layoutStable(dg, *anchor, layoutOptions, &control.token())
                                     : engine->layout(dg, layoutOptions, &control.token()),
                              {}};
            }
        } catch (const std::exception& e) {
            out.result = {std::nullopt, QString::fromStdString(e.what())};
        }
        return out;
    };
    m_layoutPending = true;
    emit layoutStarted();
    m_jobs->start(std::move(job));
}

bool DebugSession::cancelLayout() {
    if (!m_layoutPending) return false;
    m_jobs->cancel(m_jobs->newest(layoutLane()));
    return true;
}

void DebugSession::showLayoutResult(std::pair<std::optional<LayoutResult>, QString> res, std::optional<int> chain,
                                    int current, const std::vector<NodeId>& extraFocus, bool quick) {
    if (!res.first) {
        m_followUp = false;
        emit layoutFailed(res.second);
        return;
    }
    if (quick) {
        // shown now; the whole step follows, laid out afresh (not pinned to this excerpt)
        res.first->focusReason = "the neighbourhood of the target first; the whole step follows";
        m_layout = std::move(res.first);
        m_layoutChain.reset();
        const bool whole = m_layout->hiddenNodes > 0;
        m_extraFocus.clear();
        m_followUp = whole;
        emit layoutReady();
        if (whole) requestLayout();
        return;
    }
    m_followUp = false;
    m_layoutChain = chain;
    if (chain && extraFocus.empty()) {
        m_stepLayouts[{*chain, current}] = *res.first;
        // keep it bounded: drop the drawings farthest from this step
        while (m_stepLayouts.size() > 48) {
            auto farthest = m_stepLayouts.begin();
            for (auto it = m_stepLayouts.begin(); it != m_stepLayouts.end(); ++it)
                if (std::abs(it->first.second - current) > std::abs(farthest->first.second - current)) farthest = it;
            m_stepLayouts.erase(farthest);
        }
    }
    m_layout = std::move(res.first);
    emit layoutReady();
}

void DebugSession::saveSession(const QString& path) const {
    if (!m_trace) return;
    nlohmann::json profiles = nlohmann::json::array();
    if (m_executionProfile) profiles.push_back(m_executionProfile->toJson());
    // the window's own state (SESSION_FORMAT.md `view`): the step shown
    const nlohmann::json view = {{"event", m_steps.empty() ? 0 : m_steps[static_cast<std::size_t>(m_current)].event},
                                 {"step", m_current},
                                 {"diff", m_diffFrom.has_value()}};
    SessionFile::save(*m_trace, path.toStdString(), m_sourcePath.toStdString(), profiles, view);
}

} // namespace passlens
