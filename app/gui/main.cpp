// passlens [FILE] [--pipeline NAME] [--screenshot OUT.png] [--phase NAME | --step N] [--diff [--side-by-side]]
// [--group-scopes] [--open-scope SCOPE]... [--filter-rewrites TEXT] [--find TEXT] [--execute] [--check]
// [--compare PIPELINE]
// The debugger window. With no FILE it opens the bundled example (a real model).
#include "passlens/ui/MainWindow.h"
#include "passlens/ui/StartOptions.h"

#include "GuiExecution.h"

#include <passlens/io/Failure.h>
#include <passlens/pipeline/OpenAndOptimize.h>
#include <passlens/Version.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QDialog>
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
    const QCommandLineOption openScopeOpt(
        QStringLiteral("open-scope"),
        QStringLiteral(
            "Open the scope box SCOPE (a double-click; repeatable, outer scopes first; implies --group-scopes)."),
        QStringLiteral("SCOPE"));
    parser.addOption(openScopeOpt);
    const QCommandLineOption checkOpt(
        QStringLiteral("check"),
        QStringLiteral("Execute > Check every phase against the source (marks the phases in the pipeline tree)."));
    parser.addOption(checkOpt);
    const QCommandLineOption filterOpt(
        QStringLiteral("filter-rewrites"),
        QStringLiteral("Type TEXT into the Pipeline dock's \"Filter rewrites\" box (the events of matching rewrites)."),
        QStringLiteral("TEXT"));
    parser.addOption(filterOpt);
    const QCommandLineOption findOpt(
        QStringLiteral("find"),
        QStringLiteral("Find TEXT in the shown step, as Ctrl+F, TEXT, Enter (id, op kind or name; \"match 1 of n\")."),
        QStringLiteral("TEXT"));
    parser.addOption(findOpt);
    const QCommandLineOption compareOpt(
        QStringLiteral("compare"),
        QStringLiteral(
            "Tools > Compare with PIPELINE (another built-in one); --screenshot then captures the comparison."),
        QStringLiteral("PIPELINE"));
    parser.addOption(compareOpt);
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

    passlens::StartOptions start;
    start.phase = parser.value(phaseOpt);
    start.step = parser.value(stepOpt);
    if (parser.isSet(diffOpt)) start.diffMode = parser.isSet(sideOpt) ? 2 : 1;
    start.groupScopes = parser.isSet(groupOpt);
    start.openScopes = parser.values(openScopeOpt);
    start.check = parser.isSet(checkOpt);
    start.rewriteFilter = parser.value(filterOpt);
    start.find = parser.value(findOpt);
    start.execute = parser.isSet(executeOpt);
    start.compare = parser.value(compareOpt);

    passlens::MainWindow window;
    window.setExecutionBackend(passlens::makeGuiExecutionBackend());
    // 1500 x 950, or what the screen has room for (a 1024 x 700 screen, QT_SCALE_FACTOR=2)
    const QSize size(1500, 950);
    if (const QScreen* screen = QGuiApplication::primaryScreen(); screen && shot.isEmpty())
        window.fitScreen(screen->availableGeometry().size(), size.boundedTo(screen->availableGeometry().size() * 0.95));
    else
        window.resize(size.expandedTo(window.minimumSizeHint()));
    window.show();
    int rc = 0;
    auto finishShot = [&](bool ok, const QString& message) {
        if (!ok) {
            std::fprintf(stderr, "passlens: %s\n", qPrintable(message));
            rc = 1;
        }
        QTimer::singleShot(150, &app, [&] {
            QWidget* shown = &window;
            if (window.compareDialog() && !start.compare.isEmpty()) shown = window.compareDialog();
            if (!shown->grab().save(shot)) {
                std::fprintf(stderr, "passlens: cannot write %s\n", qPrintable(shot));
                rc = 1;
            }
            app.exit(rc);
        });
    };
    // After the open: the state the options ask for (ui's StartOptions.h: step, diff, grouping and
    // open scopes, rewrite filter, Find, Execute, Check, Compare, through the window's own
    // operations); then the
    // screenshot: of the comparison dialog with --compare, else of the window.
    std::function<void(bool, QString)> afterOpen = [&](bool ok, const QString& message) {
        if (!ok) {
            if (!shot.isEmpty()) finishShot(false, message);
            return;
        }
        passlens::applyStartOptions(window, start, [&](int code, const QString& why) {
            if (code == 2) {
                std::fprintf(stderr, "passlens: %s\n", qPrintable(why));
                rc = 2;
                app.exit(2);
                return;
            }
            if (!shot.isEmpty()) finishShot(code == 0, why);
        });
    };
    window.whenIdle(afterOpen);
    window.openFile(QFileInfo(file).absoluteFilePath(), parser.value(pipelineOpt));
    const int r = app.exec();
    return rc ? rc : r;
}
