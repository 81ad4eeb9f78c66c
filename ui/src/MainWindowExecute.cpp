// MainWindow's execution: Execute and profile a step, Check every phase against the source, and the
// Profile dock's tables and line.
#include "passlens/ui/MainWindow.h"

#include "JobRunner.h"
#include "PipelineModel.h"
#include "ProfileModel.h"

#include <passlens/layout/TimingOverlay.h>
#include <passlens/pipeline/PhaseCheck.h>

#include <QAction>
#include <QDockWidget>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QTableView>

namespace passlens {

void MainWindow::executeCurrent(const ExecuteRequest& request) {
    if (!m_backend || m_executing) return;
    auto g = m_session->graphAt(m_session->currentStep());
    if (!g) return;
    m_executing = true;
    auto* progress = new QProgressBar;
    progress->setRange(0, 100);
    progress->setMaximumWidth(200);
    statusBar()->addPermanentWidget(progress);
    log(tr("Executing step %1 on %2 (%3 repeats) …")
            .arg(m_session->currentStep())
            .arg(QString::fromStdString(request.device))
            .arg(request.repeats));
    auto backend = m_backend;
    using Profiled = std::pair<ExecutionProfile, QString>;
    Job<Profiled> job;
    const int step = m_session->currentStep();
    // (a cancelled execution ends as its backend makes it end: an error, or the profile it had)
    job.done = job.cancelled = [this, progress, g, step](Profiled result) {
        auto [profile, error] = std::move(result);
        statusBar()->removeWidget(progress);
        progress->deleteLater();
        m_executing = false;
        if (!error.isEmpty()) {
            log(tr("execution failed: %1").arg(error));
            settleIdle(false, error);
            return;
        }
        m_profile = profile;
        m_session->setExecutionProfile(profile);
        m_profileNodes->setProfile(profile, g.get());
        m_profileOps->setProfile(profile, g.get());
        m_profileStep = step;
        updateProfileLabel();
        log(tr("Profiled on %1: %2 µs per run")
                .arg(QString::fromStdString(profile.device))
                .arg(m_profileNodes->totalUs(), 0, 'f', 1));
        if (!m_overlayAction->isEnabled()) { // the first profile: the overlay shows it
            const QSignalBlocker quiet(m_overlayAction);
            m_overlayAction->setEnabled(true);
            m_overlayAction->setChecked(true);
        }
        if (m_overlayAction->isChecked()) m_session->setProfile(profile, m_session->timingOptions(), step);
        m_session->requestLayout();
    };
    job.work = [backend, g, request](const JobControl<Profiled>& control) -> Profiled {
        try {
            return {backend->profile(
                        *g, request, [&control](double f) { control.progress(f); }, control.flag()),
                    {}};
        } catch (const std::exception& e) {
            return {{}, QString::fromStdString(e.what())};
        }
    };
    const JobId id = m_session->jobs().start(std::move(job));
    m_executeJob = id;
    connect(&m_session->jobs(), &JobRunner::progressed, progress, [progress, id](JobId job, double f) {
        if (job == id) progress->setValue(static_cast<int>(f * 100));
    });
}

void MainWindow::runCheck() {
    if (!m_backend || !m_session->trace()) return;
    auto backend = m_backend;
    auto source = m_session->graphAt(0);
    // the phases to check, with the graphs of their end steps (taken now: the worker must not
    // read a trace that a re-run may replace)
    std::vector<CheckedPhase> phases = phasesToCheck(*m_session->trace());
    for (CheckedPhase& ph : phases)
        for (int i = 1; i < static_cast<int>(m_session->steps().size()); ++i) {
            const StepPoint& st = m_session->steps()[static_cast<std::size_t>(i)];
            if (!st.phaseEnd || st.phase != static_cast<int>(ph.index)) continue;
            ph.graph = [g = m_session->graphAt(i)] { return g; };
            break;
        }
    log(tr("Checking %1 phases that changed the graph against the source …").arg(phases.size()));
    const Trace* checked = m_session->trace();
    const std::string context = "check " + QFileInfo(m_session->path()).fileName().toStdString();
    Job<PhaseCheckResult> job;
    job.done = [this, checked](const PhaseCheckResult& result) {
        for (const PhaseCheckEntry& e : result.phases) {
            const QString name = QString::fromStdString(e.name);
            const auto mark = !e.diff       ? PipelineModel::CheckMark::Failed
                              : !e.diverges ? PipelineModel::CheckMark::Match
                              : e.first     ? PipelineModel::CheckMark::FirstDivergent
                                            : PipelineModel::CheckMark::Diverged;
            const QString line = e.diff
                                     ? QStringLiteral("%1: max_abs %2, max_rel %3%4")
                                           .arg(name)
                                           .arg(e.diff->maxAbs, 0, 'g', 3)
                                           .arg(e.diff->maxRel, 0, 'g', 3)
                                           .arg(e.first ? QStringLiteral("   <-- first divergent phase") : QString())
                                     : QStringLiteral("%1: %2%3")
                                           .arg(name, QString::fromStdString(e.error))
                                           .arg(e.first ? QStringLiteral("   <-- first divergent phase") : QString());
            log(QStringLiteral("  ") + line);
            // the marks go into the tree, unless another run replaced the trace meanwhile
            if (m_session->trace() == checked)
                m_pipelineModel->setCheckMark(static_cast<int>(e.index), mark, tr("check: %1").arg(line));
        }
        if (m_session->trace() == checked) m_checkLegend->show();
        if (result.firstDivergent.empty())
            log(tr("  every phase matches the source within max_rel %1").arg(kCheckTolerance, 0, 'g', 3));
        settleIdle(true, {});
    };
    job.cancelled = [this](const PhaseCheckResult&) { // (what it compared is dropped: no marks)
        const QString what = tr("Check cancelled: no phase marked.");
        log(what);
        statusBar()->showMessage(what, 8000);
        settleIdle(false, tr("check cancelled"));
    };
    job.lane = checkLane();
    job.work = [backend, source, phases, context](const JobControl<PhaseCheckResult>& control) {
        try {
            return checkPhases(
                phases,
                [&](const FunctionGraph& g) {
                    const nlohmann::json r = backend->compare(g, *source);
                    return OutputsDiff{r.value("max_abs", 0.0), r.value("max_rel", 0.0), r.value("shapes_match", true)};
                },
                kCheckTolerance, context, &control.token());
        } catch (const Cancelled&) { // the job ends as cancelled
            return PhaseCheckResult{};
        }
    };
    m_session->jobs().start(std::move(job));
}

void MainWindow::updateProfileLabel() {
    const auto& steps = m_session->steps();
    auto* dock = qobject_cast<QDockWidget*>(
        m_profileTabs->parentWidget() ? m_profileTabs->parentWidget()->parentWidget() : nullptr);
    if (m_profileStep < 0 || m_profileStep >= static_cast<int>(steps.size()) || !m_profile) {
        m_profileStep = -1;
        m_profileLabel->setText(tr("No profile yet: Execute and profile this step (F5)"));
        m_profileLabel->setEnabled(true);
        for (QTableView* t : {m_profileTable, m_profileOpTable}) t->setEnabled(true);
        m_profileTabs->hide(); // an empty Profile dock is one line high
        if (dock) resizeDocks({dock}, {dock->minimumSizeHint().height()}, Qt::Vertical);
        return;
    }
    if (m_profileTabs->isHidden()) {
        m_profileTabs->show();
        if (dock) resizeDocks({dock}, {std::max(220, height() / 4)}, Qt::Vertical);
    }
    const QString where =
        tr("step %1: %2").arg(m_profileStep).arg(steps[static_cast<std::size_t>(m_profileStep)].label);
    const QString device = QString::fromStdString(m_profile->device);
    const bool here = m_profileStep == m_session->currentStep();
    // the run-to-run spread, so that a 10x difference between two F5 on a tiny graph reads as
    // noise (more repeats, from the Execute menu, steady it)
    QString spread;
    if (m_profile->wallUs > 0 && m_profile->repeats > 0) {
        const QString wall = QString::fromStdString(formatMicros(m_profile->wallUs)),
                      sd = QString::fromStdString(formatMicros(m_profile->wallStdUs));
        // (a profile read from a file may carry no spread: the mean alone)
        spread = m_profile->wallStdUs <= 0 ? tr(" · %1 per run over %2 run(s)").arg(wall).arg(m_profile->repeats)
                 : m_profile->repeats == 1
                     ? tr(" · %1 ± %2 per run over 1 run").arg(wall, sd)
                     : tr(" · %1 ± %2 per run over %3 runs").arg(wall, sd).arg(m_profile->repeats);
        if (m_profile->wallStdUs > 0.25 * m_profile->wallUs) spread += tr(" (noisy: more repeats steady it)");
    }
    m_profileLabel->setText(
        here ? tr("Measured on %1 (%2)%3").arg(where, device, spread)
             : tr("Measured on %1 (%2)%3, not on the step shown: execute again (F5) to time this one")
                   .arg(where, device, spread));
    // dimmed on another step: its node ids and times describe another graph
    for (QTableView* t : {m_profileTable, m_profileOpTable}) t->setEnabled(here);
}

void MainWindow::clearProfile() {
    m_profile.reset();
    { // no profile, nothing to overlay
        const QSignalBlocker quiet(m_overlayAction);
        m_overlayAction->setChecked(false);
        m_overlayAction->setEnabled(false);
    }
    m_profileNodes->setProfile({}, nullptr);
    m_profileOps->setProfile({}, nullptr);
    m_profileStep = -1;
    updateProfileLabel();
}

QString MainWindow::profileStatus() const { return m_profileLabel->text(); }

bool MainWindow::profileDimmed() const { return !m_profileTable->isEnabled(); }

bool MainWindow::profileTablesShown() const { return !m_profileTabs->isHidden(); }

} // namespace passlens
