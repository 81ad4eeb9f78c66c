// passlens [FILE] [--screenshot OUT.png]
// Opens FILE (default: the bundled example) and shows its debugprint listing.
#include "MainWindow.h"

#include <passlens/io/GraphLoader.h>
#include <passlens/ir/DebugPrint.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>
#include <QPixmap>
#include <QTimer>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>

namespace {

// Returns the listing, or the error message in `error`.
std::optional<QString> loadListing(const QString& file, QString& error)
{
    try {
        const std::filesystem::path path(QFile::encodeName(file).toStdString());
        const passlens::LoadedGraph loaded = passlens::loadGraphFile(path);
        std::string listing = passlens::debugprint(*loaded.graph);
        for (const std::string& warning : loaded.warnings) {
            listing += "\nwarning: " + warning;
        }
        return QString::fromStdString(listing);
    } catch (const std::exception& e) {
        error = QString::fromLocal8Bit(e.what());
    }
    return std::nullopt;
}

} // namespace

int main(int argc, char* argv[])
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("PassLens"));
    QApplication::setApplicationVersion(QStringLiteral(PASSLENS_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Debugger for Theano-style graph optimizers."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("FILE"),
                                 QStringLiteral("Graph to open (PassLens JSON or ONNX). "
                                                "Default: the bundled example."),
                                 QStringLiteral("[FILE]"));
    const QCommandLineOption screenshotOption(
        QStringLiteral("screenshot"),
        QStringLiteral("Save a PNG of the window once it is shown, then exit."),
        QStringLiteral("OUT.png"));
    parser.addOption(screenshotOption);
    parser.process(app);

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        std::fprintf(stderr, "passlens: at most one FILE\n");
        return 2;
    }
    const QString file =
        positional.isEmpty() ? QStringLiteral(PASSLENS_EXAMPLE) : positional.first();
    const QString screenshot = parser.value(screenshotOption);

    passlens::MainWindow window;
    window.resize(1100, 750);

    QString error;
    if (const auto listing = loadListing(file, error)) {
        window.showText(QFileInfo(file).fileName(), *listing);
    } else {
        window.showText(QFileInfo(file).fileName(),
                        QStringLiteral("Cannot open %1:\n%2").arg(file, error));
    }
    window.show();

    if (!screenshot.isEmpty()) {
        // Headless mode (works with QT_QPA_PLATFORM=offscreen): no dialogs, report on stderr.
        if (!error.isEmpty()) {
            std::fprintf(stderr, "passlens: %s\n", qPrintable(error));
        }
        const bool loaded = error.isEmpty();
        QTimer::singleShot(0, &app, [&window, &screenshot, loaded] {
            if (!window.grab().save(screenshot, "PNG")) {
                std::fprintf(stderr, "passlens: cannot write %s\n", qPrintable(screenshot));
                QApplication::exit(1);
                return;
            }
            QApplication::exit(loaded ? 0 : 1);
        });
    } else if (!error.isEmpty()) {
        QTimer::singleShot(0, &window, [&window, &file, &error] {
            QMessageBox::critical(&window, QStringLiteral("PassLens"),
                                  QStringLiteral("Cannot open %1:\n\n%2").arg(file, error));
        });
    }
    return QApplication::exec();
}
