#pragma once
// passlens-cli (CLI.md): runs the real executable on the corpus, on converted graphs and on bad
// input, and checks exit codes, stdout (one JSON document with --json) and stderr messages.
// The helpers and the test class of the one executable tst_cli, whose test functions are defined
// in tst_cli*.cpp.
#include "CliRun.h"

#include <passlens/trace/Trace.h>

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <onnx/onnx_pb.h>

#include <functional>

#include <sys/resource.h>
#include <sys/stat.h>

namespace {
// A child setup that limits the size of any file written to `bytes` (RLIMIT_FSIZE).
inline std::function<void()> fileSizeLimit(rlim_t bytes) {
    return [bytes] {
        const struct rlimit lim = {bytes, bytes};
        ::setrlimit(RLIMIT_FSIZE, &lim);
    };
}

// Every file under `dir`, relative, sorted (hidden ones too).
inline QStringList filesUnder(const QString& dir) {
    QStringList out;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) out << QDir(dir).relativeFilePath(it.next());
    out.sort();
    return out;
}

inline QString corpusDir() { return QStringLiteral(PASSLENS_CORPUS_DIR); }
inline QString corpusModel(const QString& name) { return QDir(corpusDir()).filePath(name); }

const QStringList kCorpus = {"resnet18.onnx",
                             "mobilenet_v2.onnx",
                             "squeezenet1_1.onnx",
                             "mlp.onnx",
                             "transformer_encoder_layer.onnx",
                             "lstm.onnx",
                             "shape_ops.onnx",
                             "ch_PP-OCRv4_det_infer.onnx",
                             "silero_vad_legacy.onnx"};

inline bool writeBytes(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return f.write(bytes) == bytes.size();
}

inline QStringList nonEmptyLines(const QByteArray& text) {
    QStringList lines = QString::fromUtf8(text).split('\n');
    lines.removeAll(QString());
    return lines;
}

// One valid JSON object on stdout (QJsonDocument rejects trailing garbage).
inline QJsonObject parseJsonOut(const Run& r, bool* ok) {
    QJsonParseError e;
    const QJsonDocument d = QJsonDocument::fromJson(r.out, &e);
    *ok = e.error == QJsonParseError::NoError && d.isObject();
    return d.object();
}
} // namespace

// A failed run: exit code exactly 1 (not a crash), nothing on stdout, and one or two lines on
// stderr naming the file and containing `reason`.
#define CHECK_FAILS(run, fileName, reason)                                                                             \
    do {                                                                                                               \
        const Run& r_ = (run);                                                                                         \
        QVERIFY2(r_.finished, qPrintable("timed out: " + r_.describe()));                                              \
        QVERIFY2(r_.exitStatus == QProcess::NormalExit, qPrintable(r_.describe()));                                    \
        QVERIFY2(r_.exitCode == 1, qPrintable(r_.describe()));                                                         \
        QVERIFY2(r_.out.isEmpty(), qPrintable(r_.describe()));                                                         \
        const QStringList l_ = nonEmptyLines(r_.err);                                                                  \
        QVERIFY2(l_.size() >= 1 && l_.size() <= 2, qPrintable(r_.describe()));                                         \
        QVERIFY2(QString::fromUtf8(r_.err).contains(QString(fileName)), qPrintable(r_.describe()));                    \
        QVERIFY2(QString::fromUtf8(r_.err).contains(QString(reason)), qPrintable(r_.describe()));                      \
    } while (0)

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void inspectJsonCorpus_data();
    void inspectJsonCorpus();
    void inspectHuman();
    void invalidUtf8OnnxNames();
    void inspectDepth();
    void versionIsTheProjectVersion();
    void convertMlp();
    void badInput();
    void cycleInGraphJson();
    void truncatedOnnx();
    void hardenedInputs();
    void messagesNameTheirFile();
    void outOfMemoryIsAMessage();
    void failedWritesRemoveWhatTheyCreated();
    void usageErrors_data();
    void usageErrors();
    void help_data();
    void runJsonCarriesPlan();
    void runCheckPhases();
    void runCheckAbsoluteFloor();
    void runStrings();
    void reportWithRun();
    void help();
};
