// applyStartOptions: the command line's state (StartOptions.h), reached one stage at a time
// through MainWindow's own operations, each stage waiting for the drawing the one before asked for.
#include "passlens/ui/StartOptions.h"

#include "passlens/ui/DebugSession.h"
#include "passlens/ui/MainWindow.h"

#include <passlens/pipeline/Pipeline.h>

#include <QLineEdit>
#include <QStringList>
#include <QTimer>

#include <algorithm>
#include <memory>
#include <vector>

namespace passlens {

namespace {

struct Run;
using RunPtr = std::shared_ptr<Run>;

// The stages still to run and the one `done`; shared by the continuations that the window's
// whenIdle and the event loop call. A stage gets the run as its argument rather than holding it,
// so no cycle keeps a run alive once no continuation is pending.
struct Run {
    MainWindow* window = nullptr;
    std::vector<std::function<void(const RunPtr&)>> stages;
    std::size_t next = 0;
    std::function<void(int, QString)> done;

    void finish(int rc, const QString& message) {
        auto d = std::move(done);
        done = nullptr;
        if (d) d(rc, message);
    }
};

// Runs the next stage once the window has drawn (or executed, compared) what the stage before
// asked for: at once from the event loop when nothing is pending, else when the window is idle.
void proceed(const RunPtr& run, bool waitForIdle) {
    auto step = [run] {
        if (run->next == run->stages.size()) return run->finish(0, {});
        run->stages[run->next++](run);
    };
    if (!waitForIdle) {
        QTimer::singleShot(0, run->window, step);
        return;
    }
    run->window->whenIdle([run, step](bool ok, const QString& message) {
        if (!ok) return run->finish(1, message);
        step();
    });
}

// True while a drawing the window asked for has not arrived (a step, a diff, a Find's focus).
bool drawingPending(MainWindow& w) {
    const DebugSession& s = w.session();
    return s.busy() || s.layoutPending() || s.followUpPending();
}

} // namespace

void applyStartOptions(MainWindow& window, const StartOptions& o, std::function<void(int, QString)> done) {
    auto run = std::make_shared<Run>();
    run->window = &window;
    run->done = std::move(done);
    auto usage = [&](const QString& why) { QTimer::singleShot(0, &window, [run, why] { run->finish(2, why); }); };
    DebugSession& s = window.session();
    const int last = static_cast<int>(s.steps().size()) - 1;

    // usage errors first, before anything changes
    int target = -1;
    if (!o.phase.isEmpty()) {
        QStringList names;
        for (int i = 0; i <= last; ++i) {
            const StepPoint& p = s.steps()[static_cast<std::size_t>(i)];
            if (!p.phaseEnd) continue;
            names << p.label;
            if (p.label == o.phase) target = i;
        }
        if (target < 0)
            return usage(QStringLiteral("--phase: no phase '%1' (phases: %2)").arg(o.phase, names.join(", ")));
    } else if (!o.step.isEmpty()) {
        bool ok = false;
        target = o.step.toInt(&ok);
        if (!ok || target < 0 || target > last)
            return usage(QStringLiteral("--step: expected 0 to %1, got '%2'").arg(last).arg(o.step));
    }
    if (!o.compare.isEmpty()) {
        const auto names = Pipeline::builtinNames();
        QStringList list;
        for (const auto& n : names) list << QString::fromStdString(n);
        if (!list.contains(o.compare))
            return usage(
                QStringLiteral("--compare: no built-in pipeline '%1' (built in: %2)").arg(o.compare, list.join(", ")));
        if (o.compare == s.pipelineName())
            return usage(QStringLiteral("--compare: '%1' is the pipeline shown; name another one").arg(o.compare));
        if (!s.trace()) return usage(QStringLiteral("--compare: a session file has no pipeline to compare with"));
    }

    // the stages, in the order StartOptions.h gives
    MainWindow* w = &window;
    if (target >= 0 && target != s.currentStep())
        run->stages.push_back([w, target](const RunPtr& r) {
            w->session().setCurrentStep(target);
            proceed(r, drawingPending(*w));
        });
    if (o.diffMode > 0)
        run->stages.push_back([w, mode = o.diffMode](const RunPtr& r) {
            w->setDiffMode(mode);
            proceed(r, drawingPending(*w));
        });
    if (o.groupScopes || !o.openScopes.isEmpty()) // without scoped names: as it is (the status bar says so)
        run->stages.push_back([w](const RunPtr& r) {
            w->setGroupByScope(true);
            proceed(r, drawingPending(*w));
        });
    for (const QString& scope : o.openScopes)
        run->stages.push_back([w, scope](const RunPtr& r) {
            // the drawn box of `scope`, as a double-click finds it
            QStringList boxes;
            QString key;
            if (const auto& layout = w->session().layout())
                for (const LayoutNode& n : layout->nodes) {
                    if (n.category != NodeCategory::Group) continue;
                    boxes << QString::fromStdString(n.name);
                    if (QString::fromStdString(n.name) == scope) key = QString::fromStdString(n.key);
                }
            if (key.isEmpty() || !w->openScope(key)) {
                boxes.sort();
                if (boxes.size() > 12) boxes = boxes.mid(0, 12) << QStringLiteral("…");
                return r->finish(2, QStringLiteral("--open-scope: no closed scope box '%1' drawn (boxes: %2)")
                                        .arg(scope, boxes.isEmpty() ? QStringLiteral("none") : boxes.join(", ")));
            }
            proceed(r, drawingPending(*w));
        });
    if (!o.rewriteFilter.isEmpty())
        run->stages.push_back([w, text = o.rewriteFilter](const RunPtr& r) {
            w->rewriteFilter()->setText(text);
            proceed(r, false);
        });
    if (!o.find.isEmpty())
        run->stages.push_back([w, text = o.find](const RunPtr& r) {
            w->findNext(text);
            proceed(r, drawingPending(*w));
        });
    if (o.execute)
        run->stages.push_back([w](const RunPtr& r) {
            w->executeCurrent();
            proceed(r, true);
        });
    if (o.check)
        run->stages.push_back([w](const RunPtr& r) {
            w->runCheck();
            proceed(r, true);
        });
    if (!o.compare.isEmpty())
        run->stages.push_back([w, other = o.compare](const RunPtr& r) {
            w->compareWith(other);
            proceed(r, true);
        });
    proceed(run, false);
}

} // namespace passlens
