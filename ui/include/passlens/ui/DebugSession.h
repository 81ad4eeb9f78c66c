#pragma once
/// @file DebugSession.h
/// The state behind the window: the loaded file, the pipeline run and its Trace, the current
/// step, graphs of steps (cached) and their layouts. Import, pipeline and layout run on worker
/// threads; results arrive through signals on the GUI thread, so nothing blocks the event loop.
#include <passlens/diff/GraphDiff.h>
#include <passlens/layout/LayoutEngine.h>
#include <passlens/layout/ScopeGroups.h>
#include <passlens/layout/TimingOverlay.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/trace/ExecutionProfile.h>
#include <passlens/trace/Trace.h>

#include <QObject>
#include <QMap>
#include <QString>

#include <map>
#include <memory>
#include <optional>

namespace passlens {

class JobRunner;

/// One stop of the step slider: the graph after applied event `event` (0 = source).
struct StepPoint {
    int event = 0;
    int phase = -1; ///< index of the phase the event belongs to; -1 for the source
    QString label;  ///< "source", "merge1", "#17 local_cut_gpu_transfers"
    bool phaseEnd = false;
};

/// What a drawing of the shown step (or diff, or nested graph) is made from, as plain values:
/// draw() may run on a worker thread while the session that made it lives (trace is borrowed).
struct DrawingRequest {
    std::shared_ptr<const FunctionGraph> before; ///< set for a diff
    std::shared_ptr<const FunctionGraph> after;  ///< the step (or nested graph) drawn
    const Trace* trace = nullptr;
    /// The changed region of the events in (fromEvent, toEvent] (since the source; a step's own
    /// changes when it is drawn as a focused view; since the diff's first step): core's
    /// changedRegion (the nodes they added, else the surviving neighbours of what they removed),
    /// with scope grouping the nodes they added.
    int fromEvent = 0, toEvent = 0;
    bool nested = false;
    bool quick = false; ///< a neighbourhood-first drawing: only extraFocus seeds it
    Caption caption;
    std::vector<NodeId> extraFocus; ///< focus seeds (focusOnNodes), which also open their scopes
    std::optional<ExecutionProfile> profile;
    TimingOptions timing;
    /// The step `profile` was measured on (-1: unknown); another than caption.stepIndex is said in
    /// the drawing's legend (TimingLegend::measuredOn), as the window dims it.
    int profileStep = -1;
    std::optional<ScopeGrouping> grouping;
    /// drawGraph or drawDiff, the timing overlay, then the scope grouping, as the window shows
    /// it (before any focused view or layout). With `focusedBy`, a step or diff (with or without
    /// the timing overlay, not grouped) above its nodeThreshold comes as the focused view
    /// LayoutEngine::layout would cut from that drawing with those options, made directly
    /// (drawFocused, drawDiffFocused; the overlay scaled over the whole step). Grouping by scope
    /// needs every node's scope, change and time, so a grouped step is drawn whole. Throws what
    /// those throw.
    DrawGraph draw(const LayoutOptions* focusedBy = nullptr) const;
};

class DebugSession final : public QObject {
    Q_OBJECT
public:
    explicit DebugSession(QObject* parent = nullptr);
    ~DebugSession() override;

    /// Opens a model, graph JSON or session file and runs `pipeline` (built-in name or a
    /// pipeline file) unless it is a session. Asynchronous: emits opened() or failed(). A model
    /// or graph JSON above the focused-view threshold (LayoutOptions::nodeThreshold nodes) is
    /// shown as soon as it is imported, before the pipeline runs: sourceShown() and
    /// stepChanged(0), with one step labelled "source (the pipeline is still running)" and no
    /// trace (sourceOnly()); once its drawing is shown (or has failed), opened() replaces it, or
    /// pipelineFailed() keeps it, relabelled "source (the pipeline failed)". A run still going
    /// is superseded (cancelRun()).
    void open(const QString& path, const QString& pipeline = QStringLiteral("theano"));
    /// Re-runs a pipeline on the source graph (disabled phases skipped). Asynchronous: emits
    /// opened(), or failed() (the run shown stays), or pipelineFailed() when only the source is
    /// shown (sourceOnly()). A run still going is superseded (cancelRun()); while a file is
    /// being opened, that file is opened again with `pipeline`.
    /// `moves`: phase name -> new position (Pipeline::move), to reorder phases.
    void runPipeline(const QString& pipeline, const QStringList& disabledPhases = {},
                     const QMap<QString, double>& moves = {});
    bool busy() const { return m_busy; }
    /// True while the source graph of a file is shown without a trace: its pipeline is still
    /// running, or it failed (pipelineError()).
    bool sourceOnly() const { return !m_trace && !m_steps.empty(); }
    /// Why the pipeline on the source shown failed (sourceOnly()); empty otherwise.
    const QString& pipelineError() const { return m_pipelineError; }

    const Trace* trace() const { return m_trace.get(); }
    const PipelineRun* run() const { return m_run ? &*m_run : nullptr; }
    const QString& path() const { return m_path; }
    const QString& pipelineName() const { return m_pipelineName; }
    const std::vector<StepPoint>& steps() const { return m_steps; }

    /// The step shown (index into steps()).
    int currentStep() const { return m_current; }
    void setCurrentStep(int index);
    void nextEvent() { setCurrentStep(m_current + 1); }
    void previousEvent() { setCurrentStep(m_current - 1); }
    void nextPhase();
    void previousPhase();
    /// Jumps to the step of event `seq` (or the nearest applied event before it).
    void goToEvent(int seq);

    /// The graph of step `index` (the imported graph while sourceOnly()). A step not kept is
    /// built from the trace, continuing from the nearest kept earlier step (Trace::graphAfter
    /// from a base: a copy and the events between, instead of every event from the source), and
    /// kept. After each step change a worker builds the steps either side of it, with
    /// checkpoints every stepGraphCheckpointEvery() events on the way, so stepping finds them
    /// built. What is kept is bounded: at most kKeptGraphs graphs holding at most kKeptIds node
    /// and variable ids together (removed ones count), farthest steps dropped first; the shown
    /// step is always kept.
    std::shared_ptr<const FunctionGraph> graphAt(int index);
    /// Bounds of the kept step graphs (graphAt): at most this many graphs ...
    static constexpr std::size_t kKeptGraphs = 48;
    /// ... holding at most this many node and variable ids together (about 200 bytes each, so
    /// about 200 MB; see docs/BENCHMARKS.md for what a step of a generated graph holds).
    static constexpr std::size_t kKeptIds = 1'000'000;
    /// The spacing of the checkpoints the worker keeps on its way to a step (graphAt): 32 events,
    /// or a sixteenth of the trace's events when that is more.
    int stepGraphCheckpointEvery() const;
    /// The events of the steps kept now (graphAt), for tests.
    std::vector<int> keptGraphEvents() const;
    /// The step index where the current phase starts (for "diff against phase start").
    int phaseStartStep(int index) const;

    /// Diff mode: when set, the view shows the union of steps (from, current).
    void setDiffFrom(std::optional<int> stepIndex);
    std::optional<int> diffFrom() const { return m_diffFrom; }
    std::optional<GraphDiff> currentDiff();

    /// Shows a nested graph (the `then_branch` of an OnnxIf, a Loop body) instead of the step
    /// until the step changes; null returns to the step. Call requestLayout() after.
    void showNested(std::shared_ptr<const FunctionGraph> graph, QString label);
    bool showingNested() const { return m_nested != nullptr; }

    /// Lays out the current step (or diff) asynchronously; emits layoutReady(). A step graph
    /// not built yet is built by the layout's worker (graphAt's way, kept when it arrives), so
    /// the GUI thread never replays a step; a newer request supersedes it with the rest. The timing
    /// overlay is applied when a profile is set. A step is laid out as the successor of the
    /// step drawn before it (LayoutEngine::layoutStable: unchanged nodes keep their positions)
    /// and remembered, so stepping back shows the same drawing; the same holds for stepping with
    /// a diff from a fixed step shown. Nested graphs get their own dot layout.
    void requestLayout();
    /// The drawing of what is shown now, as requestLayout() makes it (exports of the view).
    DrawingRequest drawingRequest();
    /// Lays the current step out again so that `nodes` are drawn even when the graph is too big
    /// for a full drawing (they seed the focused view, with the step's own changes, and `hops`
    /// around them: the engine's default when unset; 0 draws exactly the seeds, however many).
    /// The seeds hold until the step changes. Emits layoutReady() as requestLayout() does.
    void focusOnNodes(std::vector<NodeId> nodes, std::optional<int> hops = std::nullopt);
    /// For a jump into a big step: lays out the neighbourhood of `nodes` first (a focused view
    /// whatever the step's size, so the target shows at once), then the whole step as
    /// requestLayout() would; layoutReady() is emitted for each. The seeds hold until the step
    /// changes.
    void showNeighbourhoodFirst(std::vector<NodeId> nodes);
    /// True while the whole-step layout that follows a neighbourhood-first one is still to come.
    bool followUpPending() const { return m_followUp; }
    /// Whether the shown step is drawn as a focused view (above LayoutOptions::nodeThreshold
    /// nodes), from its graph or, while a worker builds that, the nearest kept step's.
    bool currentStepIsLarge() const;
    /// True from requestLayout() until its drawing, failure or cancellation arrives.
    bool layoutPending() const { return m_layoutPending; }
    /// Forgets the remembered step drawings and lays out the current step afresh with dot
    /// (after many rewrites the pinned drawing can grow untidy).
    void relayout();
    /// Draws steps and diffs grouped by name scope (groupByScope) with `grouping`'s scopes open,
    /// or every node (nullopt). The focus seeds (focusOnNodes, showNeighbourhoodFirst) open the
    /// scopes around them. Lays the current step out again, from the drawing shown (boxes that
    /// stay keep their place). Opening another file closes every scope.
    void setScopeGrouping(std::optional<ScopeGrouping> grouping);
    const std::optional<ScopeGrouping>& scopeGrouping() const { return m_grouping; }
    const std::optional<LayoutResult>& layout() const { return m_layout; }
    LayoutEngine& layoutEngine() { return m_engine; }
    /// The runner of the window's long jobs (ui/src/JobRunner.h): the session's pipeline runs
    /// and layouts (lane layoutLane()) and the window's executions, checks, comparisons and
    /// exports, which borrow the session's layout engine. Destroying the session cancels them
    /// and waits for their workers.
    JobRunner& jobs() { return *m_jobs; }
    /// Cancels the newest layout request (Esc, Execute > Cancel): it ends with layoutCancelled()
    /// whatever its worker made, the drawing shown stays, and a neighbourhood-first jump's
    /// whole-step drawing is not started. Each request has its own CancelToken, so a request made
    /// after this one is not affected (and one superseded by a newer request is cancelled, so
    /// Graphviz stops on it). False when no layout is pending.
    bool cancelLayout();
    /// Cancels the pipeline run going (opening a file, Run, the pipeline box; Esc): it stops at
    /// its next rewrite attempt and ends with runCancelled(); nothing of it is applied, the
    /// steps shown stay. A big file's source shown while its run went (open()) gives way to the
    /// file and step shown before it, with its drawings (opened() and stepChanged() say so;
    /// cancelledOpen() names the file left); with nothing shown before, that source stays,
    /// relabelled "source (the pipeline run was cancelled)". Opening a file or starting a run
    /// while one goes supersedes it the same way, silently. False when no run is going.
    bool cancelRun();
    /// The file whose opening the last cancelRun() undid (the window went back to the file
    /// shown before it); empty when it left nothing to go back from. Reset by the next open().
    const QString& cancelledOpen() const { return m_cancelledOpen; }

    /// The profile painted on the drawings (applyTiming) with its options; std::nullopt: no overlay.
    /// `measuredOnStep`: the step whose graph was executed (-1: unknown); on any other step the
    /// overlay is drawn dimmed and its legend says where it was measured.
    void setProfile(std::optional<ExecutionProfile> p, TimingOptions options = {}, int measuredOnStep = -1);
    /// The step the overlay's profile was measured on (-1: unknown or none).
    int profileStep() const { return m_profile ? m_profileStep : -1; }
    /// The measured profile (saved into the session's `profiles`); std::nullopt forgets it.
    void setExecutionProfile(std::optional<ExecutionProfile> p) { m_executionProfile = std::move(p); }
    const std::optional<ExecutionProfile>& profile() const { return m_profile; }
    TimingOptions& timingOptions() { return m_timingOptions; }

    /// Saves a session file (atomically). Throws passlens::Error.
    void saveSession(const QString& path) const;

    struct Loaded; ///< result of a worker's open / pipeline run

Q_SIGNALS:
    void opened();
    /// A file could not be opened (or a re-run failed): what was shown before stays.
    void failed(const QString& message);
    /// A file's source graph is shown while its pipeline runs (open(); sourceOnly()).
    void sourceShown();
    /// The pipeline failed on the source graph shown (sourceOnly()): it stays, relabelled.
    void pipelineFailed(const QString& message);
    void busyChanged(bool busy, const QString& what);
    void stepChanged(int index);
    void layoutReady();
    void layoutFailed(const QString& message);
    /// A layout request started (requestLayout()); layoutReady(), layoutFailed() or
    /// layoutCancelled() ends it unless a newer request supersedes it.
    void layoutStarted();
    /// The newest layout request was cancelled (cancelLayout()): layout() is unchanged.
    void layoutCancelled();
    /// The pipeline run was cancelled (cancelRun()): nothing of it was applied.
    void runCancelled();

private:
    void finishLoad(std::shared_ptr<Loaded> result);
    void showSource(std::shared_ptr<Loaded> source);
    /// The end of the newest layout request: the drawing (or the failure) for the view.
    void showLayoutResult(std::pair<std::optional<LayoutResult>, QString> result, std::optional<int> chain, int current,
                          const std::vector<NodeId>& extraFocus, bool quick);
    /// Forgets everything of the file shown (trace, steps, graphs, drawings, focus, profile).
    void clearShown();
    void rebuildSteps();
    void setBusy(bool busy, const QString& what);
    /// The end of a run cancelled by cancelRun().
    void endCancelledRun();
    /// What a file's source shown while its run goes replaces (showSource()): the file, its
    /// trace, steps, step graphs and drawings, to go back to when that run is cancelled.
    struct Shown;
    std::unique_ptr<Shown> m_beforeOpen;
    QString m_cancelledOpen;

    QString m_path;
    QString m_openingPath; ///< the file open() is opening, until its run ends
    QString m_sourcePath;  ///< the model the session was made from
    QString m_pipelineName;
    QString m_pipelineError;
    std::optional<ExecutionProfile> m_executionProfile;
    std::shared_ptr<const Trace> m_trace; ///< (shared with the step-graph worker)
    std::optional<PipelineRun> m_run;
    std::vector<StepPoint> m_steps;
    int m_current = 0;
    std::optional<int> m_diffFrom;
    std::shared_ptr<const FunctionGraph> m_nested;
    QString m_nestedLabel;
    /// A step's graph and whether Trace::graphAfter made it (only those continue to later steps:
    /// the pipeline's own final graph holds the nodes its declined rewrites made).
    struct KeptGraph {
        std::shared_ptr<const FunctionGraph> graph;
        bool replayed = false;
    };
    std::map<int, KeptGraph> m_graphs; // by event seq
    /// Keeps `graph` as the graph after event `event` and drops the farthest ones past the bounds.
    void keepGraph(int event, std::shared_ptr<const FunctionGraph> graph, bool replayed);
    /// The nearest replayed graph kept at or before `event` (null and 0 when none).
    std::pair<std::shared_ptr<const FunctionGraph>, int> baseFor(int event) const;
    /// Starts the worker that builds the graphs of the steps either side of the shown one.
    void prefetchNeighbours();
    /// Step graphs a worker built, by event.
    using BuiltGraphs = std::vector<std::pair<int, std::shared_ptr<const FunctionGraph>>>;
    /// Keeps what a worker built for `trace` (dropped when another file or run is shown now).
    void keepBuilt(const std::shared_ptr<const Trace>& trace, BuiltGraphs built);
    /// drawingRequest() with the step graphs kept now and, for those not built yet, what a
    /// worker builds them from (PendingRequest::complete()).
    struct PendingRequest;
    PendingRequest pendingRequest();
    LayoutEngine m_engine;
    JobRunner* m_jobs; ///< (a child: cancelled and waited for in the destructor, before the members go)
    std::optional<LayoutResult> m_layout;
    /// The chain m_layout belongs to: -1 for plain steps, the diff's "from" step for diffs
    /// (stepping inside one diff continues it); empty for nested graphs and after relayout().
    std::optional<int> m_layoutChain;
    /// Drawings of this stepping chain by (chain, step): stepping back shows the same drawing.
    std::map<std::pair<int, int>, LayoutResult> m_stepLayouts;
    std::vector<NodeId> m_extraFocus; ///< focusOnNodes() seeds, until the step changes
    std::optional<int> m_extraFocusHops;
    bool m_neighbourhoodFirst = false; ///< the next layout is showNeighbourhoodFirst()'s quick one
    bool m_followUp = false;           ///< its whole-step layout is still to come
    std::optional<ExecutionProfile> m_profile;
    int m_profileStep = -1;
    TimingOptions m_timingOptions;
    std::optional<ScopeGrouping> m_grouping;
    bool m_busy = false;
    bool m_layoutPending = false; ///< the newest layout request has not ended yet
    /// A pipeline run that ended while the source shown was still being drawn (open()).
    std::shared_ptr<Loaded> m_deferredLoad;
};

} // namespace passlens
