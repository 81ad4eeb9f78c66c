// passlens-cli run: every failure of the execution reaches the user as one line naming the file,
// the place (node, input, constant; the control-flow node, its iteration and the node inside)
// and the reason, never raw library text (issue 16, "Messages"; docs/RELIABILITY.md).
#include "CliRun.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

#include <sys/resource.h>

namespace {
// What a `run` ended with: the exit code (-1 after a crash or a hang), stdout and stderr as text.
struct Outcome {
    int exitCode = -1;
    bool finished = false;
    QString out, err;
};

// `run FILE` (fast: one measured run) with `extra` arguments.
// OPENBLAS_NUM_THREADS=1: no per-thread BLAS buffers under an address-space limit.
Outcome runModel(const QString& file, const QStringList& extra = {}, std::function<void()> childSetup = {}) {
    const Run r = runCliWith(QStringList{"run", file, "--repeat", "1", "--warmup", "0"} + extra, std::move(childSetup),
                             {"OPENBLAS_NUM_THREADS=1"});
    return {r.finished && r.exitStatus == QProcess::NormalExit ? r.exitCode : -1, r.finished, QString::fromUtf8(r.out),
            QString::fromUtf8(r.err)};
}

bool writeBytes(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

// A graph JSON (FORMAT.md §1) of one node `node` on the input `x` of type `xType`.
QByteArray graphJson(const char* xType, const char* constants, const char* node) {
    return QByteArray(R"({"format": "passlens.graph", "version": 1, "name": "m", "inputs": [{"name": "x", "type": ")") +
           xType + R"("}], "constants": [)" + constants + R"(], "nodes": [)" + node + R"(], "outputs": ["y"]})";
}

// The one error line of a failed run, without "error: ".
#define FAILS_WITH(run, line)                                                                                          \
    do {                                                                                                               \
        const Outcome& r_ = (run);                                                                                     \
        QVERIFY2(r_.finished&& r_.exitCode == 1, qPrintable(r_.err));                                                  \
        QVERIFY2(r_.out.isEmpty(), qPrintable(r_.out));                                                                \
        QCOMPARE(r_.err, "error: " + QString(line) + "\n");                                                            \
        for (const char* raw_ : {"std::", "basic_string", "json.exception", "_M_"})                                    \
            QVERIFY2(!r_.err.contains(raw_), qPrintable(r_.err));                                                      \
    } while (0)
} // namespace

class TestCliMessages : public QObject {
    Q_OBJECT

private slots:
    // A kernel's error: file, node (op, id, name), reason.
    void kernelError() {
        QTemporaryDir tmp;
        const QString f = tmp.filePath("half.graph.json");
        QVERIFY(writeBytes(f, graphJson("float16[3]", "",
                                        R"({"op": "Elemwise", "attrs": {"scalar": "exp"}, "inputs": ["x"],
                                           "outputs": ["y"], "name": "exp"})")));
        FAILS_WITH(runModel(f, {"--phase", "source"}),
                   f + ": Elemwise{exp} (node #0 'exp'): bad expression 'exp(i0)': exp in float16 is not supported by "
                       "the CPU backend (float32 rounded to float16 is not float16 arithmetic there)");
    }

    // The random inputs of a run without --inputs: the input and its type.
    void inputWithoutRandomValues() {
        QTemporaryDir tmp;
        const QString f = tmp.filePath("complex.graph.json");
        QVERIFY(writeBytes(f, graphJson("complex64[3]", "",
                                        R"({"op": "DimShuffle", "attrs": {"order": [0, "x"]}, "inputs": ["x"],
                                           "outputs": ["y"], "name": "ds"})")));
        FAILS_WITH(runModel(f), f + ": input 0 'x' (complex64[3]): no random values: convert: dtype complex64 is not "
                                    "supported by the CPU backend");
    }

    // Planning the execution (before any node runs): the constant and the node that reads it,
    // on the source graph and on the optimized one (where a transfer reads it).
    void planningError() {
        QTemporaryDir tmp;
        const QString f = tmp.filePath("missing.graph.json");
        QVERIFY(writeBytes(
            f, graphJson("float32[3]",
                         R"({"name": "w", "type": "float32[3]", "value": {"missing": "w.bin: no such file"}})",
                         R"({"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["x", "w"],
                                           "outputs": ["y"], "name": "add"})")));
        FAILS_WITH(runModel(f, {"--phase", "source"}),
                   f + ": constant 'w' used by Elemwise{add} (node #0 'add') has no data: w.bin: no such file");
        const Outcome r = runModel(f);
        QVERIFY2(r.exitCode == 1 && r.err.startsWith("error: " + f + ": constant 'w' used by GpuFromHost") &&
                     r.err.endsWith(" has no data: w.bin: no such file\n"),
                 qPrintable(r.err));
    }

    // A node inside a Loop body: the Loop, the iteration, the node inside. ONNX's test_loop11
    // with 7 trips over a body that slices x[i:i+1] of its 5 values: trip 5 yields [].
    void loopBodyError() {
        const QString model = "/usr/share/libonnx-testdata/data/node/test_loop11/model.onnx";
        if (!QFile::exists(model)) QSKIP("libonnx-testdata is not installed");
        QTemporaryDir tmp;
        // TensorProto: dims (1), data_type (2), raw_data (9)
        QVERIFY(writeBytes(tmp.filePath("input_0.pb"), QByteArray("\x10\x07\x4a\x08\x07\0\0\0\0\0\0\0", 12)));
        QVERIFY(writeBytes(tmp.filePath("input_1.pb"), QByteArray("\x10\x09\x4a\x01\x01", 5)));
        QVERIFY(writeBytes(tmp.filePath("input_2.pb"), QByteArray("\x08\x01\x10\x01\x4a\x04\0\0\x80\x3f", 10)));
        FAILS_WITH(runModel(model, {"--phase", "source", "--inputs", tmp.path()}),
                   model + ": OnnxLoop (node #0): body, iteration 5: Elemwise{add} (node #6): output 0 has shape [0], "
                           "expected float32[1]");
    }

    // Out of memory inside a kernel (an address-space limit below the 1 GiB it allocates).
    void kernelOutOfMemory() {
#if defined(__SANITIZE_ADDRESS__)
        QSKIP("address-space limits do not apply under AddressSanitizer");
#else
        QTemporaryDir tmp;
        const QString f = tmp.filePath("big.graph.json");
        QVERIFY(
            writeBytes(f, graphJson("float32[]",
                                    R"({"name": "n", "type": "int64[]", "value": 262144},
                                           {"name": "m", "type": "int64[]", "value": 1024})",
                                    R"({"op": "Alloc", "inputs": ["x", "n", "m"], "outputs": ["y"], "name": "h"})")));
        FAILS_WITH(runModel(f, {"--phase", "source"},
                            [] {
                                const struct rlimit lim = {rlim_t(800) << 20, rlim_t(800) << 20};
                                ::setrlimit(RLIMIT_AS, &lim);
                            }),
                   f + ": Alloc (node #0 'h'): out of host memory: cannot allocate 1073741824 bytes");
#endif
    }
};

QTEST_GUILESS_MAIN(TestCliMessages)
#include "tst_cli_messages.moc"
