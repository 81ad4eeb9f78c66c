#pragma once
/// @file JobRunner.h
/// The window's long jobs (pipeline runs, layouts, executions, checks, comparisons, exports) on
/// Qt's global thread pool (QtConcurrent::run, one QFutureWatcher each). Every job has its own
/// cancellation token; a job started in a lane supersedes the one running there (a layout for
/// the step shown supersedes the layout of the step before): the superseded job's token is
/// cancelled, so Graphviz stops on it, and what its worker makes is dropped. Results reach the
/// job's callbacks on the runner's (GUI) thread as values; the runner's signals carry only ids,
/// lane names, fractions and how a job ended.
#include <passlens/layout/LayoutEngine.h>

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <utility>

namespace passlens {

/// Identifies one job of a JobRunner (1, 2, ...; 0 is no job).
using JobId = quint64;

/// The lane of the session's layouts (DebugSession::requestLayout): each supersedes the one before.
inline QString layoutLane() { return QStringLiteral("layout"); }
/// The lane of the session's pipeline runs (opening a file, Run, the pipeline box): a newer run
/// supersedes the one before, whose token stops it at its next rewrite attempt.
inline QString pipelineLane() { return QStringLiteral("pipeline"); }
/// The lane of Execute > Check: a newer check supersedes the one before.
inline QString checkLane() { return QStringLiteral("check"); }
/// The lane of the worker building the graphs of the steps next to the shown one
/// (DebugSession::graphAt): a newer one supersedes the one before.
inline QString stepGraphLane() { return QStringLiteral("step graphs"); }

/// How a job ended (JobRunner::finished).
enum class JobEnd {
    Done,       ///< its result went to Job::done
    Cancelled,  ///< JobRunner::cancel: its result went to Job::cancelled (dropped when unset)
    Superseded, ///< a newer job of its lane started: its result was dropped
};

/// The cancellation state of one job: the CancelToken LayoutEngine polls and the flag
/// ExecutionBackend polls (its interface takes a std::atomic<bool>), set together.
struct JobCancel {
    CancelToken token;
    std::atomic<bool> flag{false};
    void cancel() noexcept {
        token.cancel();
        flag.store(true);
    }
    bool cancelled() const noexcept { return flag.load(); }
};

class JobRunner;

/// What a job's worker gets (on a pool thread): its own cancellation state and ways to report
/// progress and intermediate results to the GUI thread.
template <class R> class JobControl {
public:
    /// This job's own token (pass it to LayoutEngine::layout and layoutStable).
    const CancelToken& token() const { return m_cancel->token; }
    /// This job's flag, for ExecutionBackend::profile.
    const std::atomic<bool>& flag() const { return m_cancel->flag; }
    bool cancelled() const { return m_cancel->cancelled(); }
    /// Emits JobRunner::progressed(id, fraction) on the runner's thread.
    void progress(double fraction) const;
    /// Hands `value` to Job::partial on the runner's thread, before the job's end, unless the
    /// job is cancelled or superseded by then.
    void partial(R value) const;

private:
    friend class JobRunner;
    JobControl(JobRunner* runner, JobId id, std::shared_ptr<JobCancel> cancel, std::function<void(R)> partial)
        : m_runner(runner)
        , m_id(id)
        , m_cancel(std::move(cancel))
        , m_partial(std::move(partial)) {}
    JobRunner* m_runner; ///< outlives the worker: ~JobRunner waits for every worker
    JobId m_id;
    std::shared_ptr<JobCancel> m_cancel;
    std::function<void(R)> m_partial;
};

/// One job: what runs on the pool and what the GUI thread does with its result. `work` must not
/// throw (a worker reports its failure in its result, as every job of the window does).
template <class R> struct Job {
    /// Jobs of one lane supersede each other ("layout"); an empty lane never supersedes.
    QString lane;
    std::function<R(const JobControl<R>&)> work;
    std::function<void(R)> done;
    /// What a cancelled job's worker made (JobRunner::cancel); unset: dropped.
    std::function<void(R)> cancelled;
    /// Intermediate results (JobControl::partial), in the order the worker reports them.
    std::function<void(R)> partial;
};

class JobRunner final : public QObject {
    Q_OBJECT
public:
    explicit JobRunner(QObject* parent = nullptr);
    /// Cancels every job and waits for its worker (workers borrow their owner's state, such as
    /// the session's layout engine and trace); no callback runs after this.
    ~JobRunner() override;

    /// Starts `job` on the global thread pool; emits started(). A job running in the same
    /// (non-empty) lane is superseded: its token is cancelled at once and its result dropped.
    template <class R> JobId start(Job<R> job);
    /// Cancels job `id`: its token is set now, and it ends as JobEnd::Cancelled whatever its
    /// worker makes. False when `id` is not running (or its cancellation was already asked).
    bool cancel(JobId id);
    /// Cancels every running job (as cancel()).
    void cancelAll();
    /// Blocks until every running worker has returned (their callbacks run later, from the
    /// event loop).
    void waitForAll();
    /// The newest running job of `lane`; 0 when none runs.
    JobId newest(const QString& lane) const;
    /// True while job `id` has not ended (its end is delivered on the runner's thread).
    bool running(JobId id) const { return m_jobs.count(id) > 0; }
    /// True when job `id` runs and its token was cancelled (cancel(), or superseded).
    bool cancelRequested(JobId id) const;
    /// The number of jobs that have not ended.
    int runningCount() const { return static_cast<int>(m_jobs.size()); }

Q_SIGNALS:
    /// Job `id` started in `lane`.
    void started(JobId id, const QString& lane);
    /// A worker's progress (JobControl::progress), a fraction in [0, 1].
    void progressed(JobId id, double fraction);
    /// Job `id` ended; emitted after its callback ran.
    void finished(JobId id, const QString& lane, JobEnd end);

private:
    template <class R> friend class JobControl;
    struct Entry {
        QString lane;
        std::shared_ptr<JobCancel> cancel;
        QFutureWatcherBase* watcher = nullptr;
        bool superseded = false;
    };
    /// Removes job `id` and says how it ended.
    JobEnd settle(JobId id);
    void supersede(const QString& lane);

    JobId m_lastId = 0;
    std::map<JobId, Entry> m_jobs;
};

template <class R> JobId JobRunner::start(Job<R> job) {
    const JobId id = ++m_lastId;
    if (!job.lane.isEmpty()) supersede(job.lane);
    auto cancel = std::make_shared<JobCancel>();
    auto* watcher = new QFutureWatcher<R>(this);
    m_jobs[id] = Entry{job.lane, cancel, watcher, false};
    connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, id, lane = job.lane, done = std::move(job.done), cancelled = std::move(job.cancelled)] {
                R result = watcher->result();
                watcher->deleteLater();
                const JobEnd end = settle(id);
                if (end == JobEnd::Done && done) done(std::move(result));
                if (end == JobEnd::Cancelled && cancelled) cancelled(std::move(result));
                emit finished(id, lane, end);
            });
    emit started(id, job.lane);
    watcher->setFuture(QtConcurrent::run(
        [work = std::move(job.work), control = JobControl<R>(this, id, cancel, std::move(job.partial))] {
            return work(control);
        }));
    return id;
}

template <class R> void JobControl<R>::progress(double fraction) const {
    JobRunner* runner = m_runner;
    const JobId id = m_id;
    QMetaObject::invokeMethod(
        runner, [runner, id, fraction] { emit runner->progressed(id, fraction); }, Qt::QueuedConnection);
}

template <class R> void JobControl<R>::partial(R value) const {
    if (!m_partial) return;
    JobRunner* runner = m_runner;
    // (queued before the worker's end, so it arrives before the job's end)
    QMetaObject::invokeMethod(
        runner,
        [runner, id = m_id, cancel = m_cancel, deliver = m_partial, value = std::move(value)]() mutable {
            if (runner->running(id) && !cancel->cancelled()) deliver(std::move(value));
        },
        Qt::QueuedConnection);
}

} // namespace passlens
