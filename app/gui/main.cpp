// passlens [FILE] [--pipeline NAME] [--screenshot OUT.png] [--phase NAME | --step N] [--diff [--side-by-side]]
// [--execute] The debugger window. With no FILE it opens the bundled example (a real model).
#include "passlens/ui/MainWindow.h"

#include "GuiExecution.h"

#include <passlens/io/Failure.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/Version.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QPixmap>
#include <QScreen>
#include <QTimer>

#include <cstdio>

int main(int argc, char* argv[]) {
    const passlens::MemoryReserve reserve; // out of memory stays a message (io/Failure.h)
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("PassLens"));
    QApplication::setOrganizationName(QStringLiteral("PassLens"));
    QApplication::setApplicationVersion(QStringLiteral(PASSLENS_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("PassLens: a debugger for Theano-style graph optimizers."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("FILE"), QStringLiteral("ONNX model, graph JSON or session file (default: the bundled example)"),
        QStringLiteral("[FILE]"));
    const QCommandLineOption pipelineOpt(
        QStringLiteral("pipeline"),
        QStringLiteral("Pipeline: theano, cleanup, legacy, fast_compile, none or a .pipeline.json"),
        QStringLiteral("NAME"), QStringLiteral("theano"));
    const QCommandLineOption screenshotOpt(
        QStringLiteral("screenshot"),
        QStringLiteral("Render the window after loading and running the pipeline, write the PNG and exit."),
        QStringLiteral("OUT.png"));
    const QCommandLineOption stepOpt(QStringLiteral("step"),
                                     QStringLiteral("Show this step (0 = source) instead of the final graph."),
                                     QStringLiteral("N"));
    const QCommandLineOption phaseOpt(QStringLiteral("phase"), QStringLiteral("Show the end of this phase."),
                                      QStringLiteral("NAME"));
    const QCommandLineOption diffOpt(QStringLiteral("diff"),
                                     QStringLiteral("Show the diff of the step against the start of its phase."));
    const QCommandLineOption executeOpt(QStringLiteral("execute"),
                                        QStringLiteral("Execute and profile the shown step (timing overlay)."));
    parser.addOption(pipelineOpt);
    parser.addOption(screenshotOpt);
    parser.addOption(stepOpt);
    parser.addOption(phaseOpt);
    parser.addOption(diffOpt);
    const QCommandLineOption sideOpt(
        QStringLiteral("side-by-side"),
        QStringLiteral("With --diff: before and after side by side instead of the overlay."));
    parser.addOption(sideOpt);
    parser.addOption(executeOpt);
    const QCommandLineOption groupOpt(
        QStringLiteral("group-scopes"),
        QStringLiteral("Group the drawing by name scope (View > Group by name scope), as render --group-scopes."));
    parser.addOption(groupOpt);
    parser.process(app);
    const QStringList pos = parser.positionalArguments();
    if (pos.size() > 1) {
        std::fprintf(stderr, "passlens: at most one FILE\n");
        return 2;
    }
    const QString file = pos.isEmpty() ? QStringLiteral(PASSLENS_EXAMPLE) : pos.first();
    { // a usage error (exit 2), like an unknown --phase: a pipeline name must be built in
        const QString pipeline = parser.value(pipelineOpt);
        const auto names = passlens::Pipeline::builtinNames();
        const bool builtin = std::find(names.begin(), names.end(), pipeline.toStdString()) != names.end();
        if (!builtin && !passlens::isPipelineFile(pipeline.toStdString())) {
            QStringList list;
            for (const auto& n : names) list << QString::fromStdString(n);
            std::fprintf(stderr,
                         "passlens: --pipeline: no built-in pipeline '%s' (built in: %s; or a .pipeline.json file)\n",
                         qPrintable(pipeline), qPrintable(list.join(QStringLiteral(", "))));
            return 2;
        }
    }
    const QString shot = parser.value(screenshotOpt);
    if (!shot.isEmpty()) qputenv("PASSLENS_NO_DIALOGS", "1");

    passlens::MainWindow window;
    window.setExecutionBackend(passlens::makeGuiExecutionBackend());
    // 1500 x 950, or what the screen has room for (a 1024 x 700 screen, QT_SCALE_FACTOR=2)
    QSize size(1500, 950);
    if (const QScreen* screen = QGuiApplication::primaryScreen(); screen && shot.isEmpty())
        size = size.boundedTo(screen->availableGeometry().size() * 0.95);
    window.resize(size.expandedTo(window.minimumSizeHint()));
    window.show();
    int rc = 0;
    auto finishShot = [&](bool ok, const QString& message) {
        if (!ok) {
            std::fprintf(stderr, "passlens: %s\n", qPrintable(message));
            rc = 1;
        }
        QTimer::singleShot(150, &app, [&] {
            if (!window.grab().save(shot)) {
                std::fprintf(stderr, "passlens: cannot write %s\n", qPrintable(shot));
                rc = 1;
            }
            app.exit(rc);
        });
    };
    // After the open: go to the requested step, diff, execute; then the screenshot.
    std::function<void(bool, QString)> afterOpen = [&](bool ok, const QString& message) {
        if (!ok) {
            if (!shot.isEmpty()) finishShot(false, message);
            return;
        }
        auto& s = window.session();
        bool moved = false;
        const int last = static_cast<int>(s.steps().size()) - 1;
        auto usage = [&](const QString& why) {
            std::fprintf(stderr, "passlens: %s\n", qPrintable(why));
            rc = 2;
            QTimer::singleShot(0, &app, [&] { app.exit(2); });
        };
        if (parser.isSet(phaseOpt)) {
            int found = -1;
            QStringList names;
            for (int i = 0; i <= last; ++i)
                if (s.steps()[static_cast<std::size_t>(i)].phaseEnd) {
                    names << s.steps()[static_cast<std::size_t>(i)].label;
                    if (s.steps()[static_cast<std::size_t>(i)].label == parser.value(phaseOpt)) found = i;
                }
            if (found < 0)
                return usage(QStringLiteral("--phase: no phase '%1' (phases: %2)")
                                 .arg(parser.value(phaseOpt), names.join(QStringLiteral(", "))));
            moved = found != s.currentStep();
            s.setCurrentStep(found);
        } else if (parser.isSet(stepOpt)) {
            bool ok = false;
            const int n = parser.value(stepOpt).toInt(&ok);
            if (!ok || n < 0 || n > last)
                return usage(QStringLiteral("--step: expected 0 to %1, got '%2'").arg(last).arg(parser.value(stepOpt)));
            moved = n != s.currentStep();
            s.setCurrentStep(n);
        }
        if (parser.isSet(diffOpt)) {
            window.setDiffMode(parser.isSet(sideOpt) ? 2 : 1);
            moved = true;
        }
        // a graph without scoped names stays as it is (the status bar says so)
        if (parser.isSet(groupOpt) && window.setGroupByScope(true)) moved = true;
        if (parser.isSet(executeOpt)) {
            window.whenIdle([&](bool, const QString&) {
                window.executeCurrent();
                if (!shot.isEmpty()) window.whenIdle(finishShot);
            });
            if (!moved) window.session().requestLayout();
            return;
        }
        if (!shot.isEmpty()) {
            if (moved)
                window.whenIdle(finishShot);
            else
                finishShot(true, {});
        }
    };
    window.whenIdle(afterOpen);
    window.openFile(QFileInfo(file).absoluteFilePath(), parser.value(pipelineOpt));
    const int r = app.exec();
    return rc ? rc : r;
}
