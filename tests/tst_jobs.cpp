// The window's job runner (ui/src/JobRunner.h): a job superseded in its lane has its token
// cancelled and its result dropped while the newest job's result is delivered; cancel() ends a
// job as cancelled; partial results and progress arrive before the end, in order. Workers wait
// on semaphores the test releases, so every verdict is about values and order, never time.
#include "JobRunner.h"

#include <QCoreApplication>
#include <QSemaphore>
#include <QThread>
#include <QSignalSpy>
#include <QTest>

using namespace passlens;

namespace {
// Waits (event loop running) until `runner` has no job left; false when it hangs.
bool waitAllEnded(JobRunner& runner) {
    return QTest::qWaitFor([&] { return runner.runningCount() == 0; }, 600000);
}
} // namespace

class TestJobs : public QObject {
    Q_OBJECT
private slots:
    // Two layouts in one lane: the first, still running when the second starts, sees its token
    // cancelled (Graphviz would stop on it), its result never reaches `done`; the second's does.
    void supersededJobIsCancelledAndDropped() {
        JobRunner runner;
        QSignalSpy ends(&runner, &JobRunner::finished);
        QSemaphore releaseFirst, firstSawCancel;
        std::atomic<bool> firstCancelled{false};
        QStringList delivered;
        Job<QString> first;
        first.lane = layoutLane();
        first.work = [&](const JobControl<QString>& control) {
            releaseFirst.acquire(); // runs until the test has started the second
            firstCancelled = control.token().cancelled();
            return QStringLiteral("step 3");
        };
        first.done = [&](QString r) { delivered << r; };
        first.cancelled = [&](QString r) { delivered << "cancelled " + r; };
        const JobId a = runner.start(std::move(first));
        QVERIFY(runner.running(a));
        QCOMPARE(runner.newest(layoutLane()), a);
        QVERIFY(!runner.cancelRequested(a));

        Job<QString> second;
        second.lane = layoutLane();
        second.work = [](const JobControl<QString>& control) {
            return control.cancelled() ? QStringLiteral("second cancelled") : QStringLiteral("step 4");
        };
        second.done = [&](QString r) { delivered << r; };
        const JobId b = runner.start(std::move(second));
        QVERIFY(b != a);
        QVERIFY(runner.cancelRequested(a)); // superseded: cancelled at once
        QVERIFY(!runner.cancelRequested(b));
        QCOMPARE(runner.newest(layoutLane()), b);
        releaseFirst.release();
        QVERIFY(waitAllEnded(runner));
        QVERIFY(firstCancelled.load());
        QCOMPARE(delivered, QStringList{"step 4"});
        QCOMPARE(ends.size(), 2);
        std::map<JobId, JobEnd> how;
        for (const auto& e : ends) {
            QCOMPARE(e.at(1).toString(), layoutLane());
            how[e.at(0).value<JobId>()] = e.at(2).value<JobEnd>();
        }
        QCOMPARE(how.at(a), JobEnd::Superseded);
        QCOMPARE(how.at(b), JobEnd::Done);
    }

    // Jobs of no lane (exports) never supersede each other: both results arrive.
    void jobsWithoutALaneRunSideBySide() {
        JobRunner runner;
        QStringList delivered;
        for (const QString& name : {QStringLiteral("a.svg"), QStringLiteral("b.svg")}) {
            Job<QString> job;
            job.work = [name](const JobControl<QString>&) { return name; };
            job.done = [&](QString r) { delivered << r; };
            runner.start(std::move(job));
        }
        QCOMPARE(runner.runningCount(), 2);
        QVERIFY(waitAllEnded(runner));
        delivered.sort();
        QCOMPARE(delivered, QStringList({"a.svg", "b.svg"}));
    }

    // cancel(): the token is set, the job ends as cancelled with what its worker made; a second
    // cancel and a cancel of a job that ended say false.
    void cancelEndsTheJobAsCancelled() {
        JobRunner runner;
        QSignalSpy ends(&runner, &JobRunner::finished);
        QSemaphore release;
        QStringList delivered;
        Job<int> job;
        job.lane = QStringLiteral("execute");
        job.work = [&](const JobControl<int>& control) {
            release.acquire();
            return control.flag().load() ? -1 : 7; // the flag ExecutionBackend polls
        };
        job.done = [&](int r) { delivered << QStringLiteral("done %1").arg(r); };
        job.cancelled = [&](int r) { delivered << QStringLiteral("cancelled %1").arg(r); };
        const JobId id = runner.start(std::move(job));
        QVERIFY(runner.cancel(id));
        QVERIFY(!runner.cancel(id));
        QVERIFY(runner.cancelRequested(id));
        release.release();
        QVERIFY(waitAllEnded(runner));
        QCOMPARE(delivered, QStringList{"cancelled -1"});
        QCOMPARE(ends.size(), 1);
        QCOMPARE(ends.at(0).at(2).value<JobEnd>(), JobEnd::Cancelled);
        QVERIFY(!runner.cancel(id));
        QVERIFY(!runner.running(id));
    }

    // A worker's partial results and progress reach the GUI thread in order, before its end.
    void partialResultsAndProgressComeFirst() {
        JobRunner runner;
        QStringList seen;
        connect(&runner, &JobRunner::progressed, this,
                [&](JobId, double f) { seen << QStringLiteral("progress %1").arg(f); });
        connect(&runner, &JobRunner::finished, this, [&](JobId, const QString&, JobEnd) { seen << "finished"; });
        Job<QString> job;
        job.work = [](const JobControl<QString>& control) {
            control.partial(QStringLiteral("source"));
            control.progress(0.5);
            control.partial(QStringLiteral("half"));
            return QStringLiteral("final");
        };
        job.partial = [&](QString r) { seen << "partial " + r; };
        job.done = [&](QString r) { seen << "done " + r; };
        runner.start(std::move(job));
        QVERIFY(waitAllEnded(runner));
        QCOMPARE(seen, QStringList({"partial source", "progress 0.5", "partial half", "done final", "finished"}));
    }

    // Destroying the runner cancels its jobs and waits for their workers; no callback runs.
    void destructionCancelsAndWaits() {
        std::atomic<bool> sawCancel{false}, returned{false};
        bool delivered = false;
        QSemaphore started;
        {
            JobRunner runner;
            Job<int> job;
            job.lane = layoutLane();
            job.work = [&](const JobControl<int>& control) {
                started.release();
                while (!control.cancelled()) QThread::yieldCurrentThread(); // a worker polling its token
                sawCancel = true;
                returned = true;
                return 1;
            };
            job.done = job.cancelled = [&](int) { delivered = true; };
            runner.start(std::move(job));
            started.acquire();
        }
        QVERIFY(sawCancel.load() && returned.load());
        QCoreApplication::processEvents();
        QVERIFY(!delivered);
    }
};

QTEST_MAIN(TestJobs)
#include "tst_jobs.moc"
