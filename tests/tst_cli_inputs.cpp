// tst_cli: bad and hostile inputs, messages naming their file, out of memory, failed writes
// (see tst_cli.h).
#include "tst_cli.h"

void TestCli::badInput() {
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    auto file = [&](const QString& name, const QByteArray& bytes) {
        const QString p = tmp.filePath(name);
        if (!writeBytes(p, bytes)) qFatal("cannot write %s", qPrintable(p));
        return p;
    };
    CHECK_FAILS(runCli({"inspect", file("empty.onnx", {})}), "empty.onnx", "empty");
    CHECK_FAILS(runCli({"inspect", "--json", file("blank.graph.json", " \n\t\r\n  ")}), "blank.graph.json",
                "white space");
    CHECK_FAILS(runCli({"inspect",
                        file("page.onnx",
                             "<!DOCTYPE html>\n<html><head><title>404</title></head><body>Not found</body></html>\n")}),
                "page.onnx", "not an ONNX model");
    QByteArray random(4096, '\0');
    QRandomGenerator rng(20240611);
    for (char& c : random) c = char(rng.bounded(256));
    CHECK_FAILS(runCli({"inspect", file("random.onnx", random)}), "random.onnx", "not a valid ONNX model");
    CHECK_FAILS(runCli({"inspect", "--json",
                        file("bad.graph.json", "{\"format\": \"passlens.graph\", \"version\": 1,\n \"nodes\": [}\n")}),
                "bad.graph.json", "invalid JSON");
    CHECK_FAILS(runCli({"inspect", tmp.filePath("does-not-exist.onnx")}), "does-not-exist.onnx", "no such file");
    QVERIFY(QDir(tmp.path()).mkdir("a_folder.onnx"));
    CHECK_FAILS(runCli({"inspect", tmp.filePath("a_folder.onnx")}), "a_folder.onnx", "directory");
    // convert fails the same way and writes nothing.
    CHECK_FAILS(runCli({"convert", tmp.filePath("empty.onnx"), "-o", tmp.filePath("x.graph.json")}), "empty.onnx",
                "empty");
    QVERIFY(!QFileInfo::exists(tmp.filePath("x.graph.json")));
}

void TestCli::cycleInGraphJson() {
    QTemporaryDir tmp;
    const QString p = tmp.filePath("cycle.graph.json");
    QVERIFY(writeBytes(
        p, "{\"format\": \"passlens.graph\", \"version\": 1,\n"
           " \"inputs\": [{\"name\": \"x\", \"type\": \"float32[3]\"}],\n"
           " \"nodes\": [\n"
           "  {\"op\": \"Elemwise\", \"attrs\": {\"scalar\": \"add\"}, \"inputs\": [\"x\", \"c\"], \"outputs\": "
           "[\"a\"]},\n"
           "  {\"op\": \"Elemwise\", \"attrs\": {\"scalar\": \"neg\"}, \"inputs\": [\"a\"], \"outputs\": [\"b\"]},\n"
           "  {\"op\": \"Elemwise\", \"attrs\": {\"scalar\": \"exp\"}, \"inputs\": [\"b\"], \"outputs\": [\"c\"]}\n"
           " ],\n"
           " \"outputs\": [\"c\"]}\n"));
    const Run r = runCli({"inspect", "--json", p});
    CHECK_FAILS(r, "cycle.graph.json", "cycle");
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains("nodes[0]") && err.contains("nodes[1]") && err.contains("nodes[2]"), qPrintable(err));
}

void TestCli::truncatedOnnx() {
    const QString model = corpusModel("mlp.onnx");
    if (!QFileInfo::exists(model)) QFAIL("mlp.onnx is not in the corpus (PASSLENS_CORPUS_DIR)");
    QFile f(model);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray full = f.readAll();
    const qint64 size = full.size();
    QVERIFY(size > 100000);
    QList<qint64> offsets = {10, 100, 1000, size - 1};
    for (int k = 1; k <= 16; ++k) offsets << size * k / 17; // spread over the file
    QCOMPARE(offsets.size(), 20);
    QTemporaryDir tmp;
    const QString p = tmp.filePath("truncated.onnx");
    for (qint64 off : offsets) {
        QVERIFY(writeBytes(p, full.left(off)));
        const Run r = runCli({"inspect", "--json", p});
        const QString ctx = QString("truncated at %1 of %2: ").arg(off).arg(size);
        QVERIFY2(r.finished, qPrintable(ctx + r.describe()));
        QVERIFY2(r.exitStatus == QProcess::NormalExit, qPrintable(ctx + r.describe()));
        QVERIFY2(r.exitCode == 1, qPrintable(ctx + r.describe()));
        QVERIFY2(r.out.isEmpty(), qPrintable(ctx + r.describe()));
        const QStringList lines = nonEmptyLines(r.err);
        QVERIFY2(lines.size() >= 1 && lines.size() <= 2, qPrintable(ctx + r.describe()));
        QVERIFY2(QString::fromUtf8(r.err).contains("truncated.onnx"), qPrintable(ctx + r.describe()));
    }
}

// Inputs that are not regular files, file-sized allocations and nesting past the limit:
// exit 1 at once with the file, the place and the reason (never a hang or a crash).
void TestCli::hardenedInputs() {
    QTemporaryDir tmp;
    const QString fifo = tmp.filePath("model.onnx");
    QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
    CHECK_FAILS(runCli({"inspect", fifo}), "model.onnx", "is a FIFO (named pipe), not a regular file");
    CHECK_FAILS(runCli({"optimize", corpusModel("mlp.onnx"), "--pipeline", fifo + ".pipeline.json"}),
                "model.onnx.pipeline.json", "no such file");
    QCOMPARE(::mkfifo((fifo + ".pipeline.json").toLocal8Bit().constData(), 0600), 0);
    CHECK_FAILS(runCli({"optimize", corpusModel("mlp.onnx"), "--pipeline", fifo + ".pipeline.json"}),
                "model.onnx.pipeline.json", "is a FIFO");
    QVERIFY(QDir(tmp.path()).mkdir("inputs"));
    QCOMPARE(::mkfifo(tmp.filePath("inputs/input_0.pb").toLocal8Bit().constData(), 0600), 0);
    CHECK_FAILS(
        runCli({"run", corpusModel("mlp.onnx"), "--inputs", tmp.filePath("inputs"), "--repeat", "1", "--warmup", "0"}),
        "input_0.pb", "is a FIFO");
    // a 250-byte graph asking for a 37 GiB constant: refused before allocating
    const QString huge = tmp.filePath("huge.graph.json");
    QVERIFY(writeBytes(huge, "{\"format\":\"passlens.graph\",\"version\":1,\"inputs\":[{\"name\":\"x\",\"type\":"
                             "\"float32[100000,100000]\"}],"
                             "\"constants\":[{\"name\":\"w\",\"type\":\"float32[100000,100000]\",\"value\":{"
                             "\"fill\":\"normal\"}}],\"nodes\":[{\"op\":"
                             "\"Elemwise\",\"attrs\":{\"scalar\":\"add\"},\"inputs\":[\"x\",\"w\"],\"outputs\":["
                             "\"y\"]}],\"outputs\":[\"y\"]}"));
    QVERIFY(QFileInfo(huge).size() < 300);
    CHECK_FAILS(runCli({"inspect", huge}), "huge.graph.json: constants[0].value (constant 'w')",
                "float32[100000,100000] is 40000000000 bytes (37.3 GiB), more than the limit of 4 GiB");
#if !defined(__SANITIZE_ADDRESS__) // AddressSanitizer's operator new ends the process instead of throwing bad_alloc
    CHECK_FAILS(runCliWith({"inspect", huge}, {}, {"PASSLENS_MAX_TENSOR_BYTES=64T"}), "huge.graph.json", "");
#endif
    // a pipeline file whose include list nests 100,000 levels
    const QString deep = tmp.filePath("deep.pipeline.json");
    QVERIFY(writeBytes(deep, "{\"format\": \"passlens.pipeline\", \"version\": 1, \"include\": " +
                                 QByteArray(100000, '[') + QByteArray(100000, ']') + "}"));
    CHECK_FAILS(runCli({"optimize", corpusModel("mlp.onnx"), "--pipeline", deep}),
                "deep.pipeline.json: include[0][0][0][0][0][0][0]...", "nested deeper than 256 levels");
}

// Messages name the file they concern, with the place; no library text reaches the user.
void TestCli::messagesNameTheirFile() {
    QTemporaryDir tmp;
    const QString model = corpusModel("shape_ops.onnx");
    auto noLibraryText = [](const Run& r) {
        const QString e = QString::fromUtf8(r.err);
        return !e.contains("json.exception") && !e.contains("std::") && !e.contains("basic_string") &&
               !e.contains("shape_ops.onnx");
    };
    const QString pipe = tmp.filePath("p.pipeline.json");
    QVERIFY(writeBytes(pipe, "{\"format\": \"passlens.pipeline\", \"version\": 1, \"base\": 5}"));
    Run r = runCli({"optimize", model, "--pipeline", pipe});
    CHECK_FAILS(r, "p.pipeline.json: base: ", "expected a string, got number");
    QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
    QVERIFY(
        writeBytes(pipe, "{\"format\": \"passlens.pipeline\", \"version\": 1, \"exclude\": [\"merge1\", {\"x\": 1}]}"));
    r = runCli({"optimize", model, "--pipeline", pipe});
    CHECK_FAILS(r, "p.pipeline.json: exclude: ", "expected a string, got object");
    QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
    // --overlay: the profile file
    const QString prof = tmp.filePath("prof.json");
    QVERIFY(writeBytes(prof, "{\"profiles\": [{\"phase\": 3, \"nodes\": [{\"node\": \"n1\", \"time_us\": 1}]}]}"));
    r = runCli({"render", model, "-o", tmp.filePath("g.svg"), "--overlay", prof});
    CHECK_FAILS(r, "prof.json: profiles[0].phase: ", "expected a string");
    QVERIFY(
        writeBytes(prof, "{\"profiles\": [{\"phase\": \"final\", \"nodes\": [{\"node\": \"n1\", \"time_us\": 1}]}]}"));
    r = runCli({"render", model, "-o", tmp.filePath("g.svg"), "--overlay", prof});
    CHECK_FAILS(r, "prof.json: profiles[0].nodes[0].node: ", "expected an integer node id");
    QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
    QVERIFY(writeBytes(prof, "{\"profiles\": " + QByteArray(70000, '[') + "}"));
    r = runCli({"render", model, "-o", tmp.filePath("g.svg"), "--overlay", prof});
    CHECK_FAILS(r, "prof.json: profiles[0][0][0][0][0][0][0]...: ", "nested deeper than 256 levels");
    QVERIFY(!QFileInfo::exists(tmp.filePath("g.svg")));
    // a session: a value of the wrong type, and events that do not replay
    const QString session = tmp.filePath("s.passlens.json");
    QVERIFY2(runCli({"optimize", model, "--session", session, "--session-format", "json"}).exitCode == 0,
             "optimize --session --session-format json");
    QFile f(session);
    QVERIFY(f.open(QIODevice::ReadOnly));
    nlohmann::json doc = nlohmann::json::parse(f.readAll().toStdString());
    f.close();
    doc["events"][0]["replaced"] = nlohmann::json::array({nlohmann::json::array({999999, 1})});
    const QString bad = tmp.filePath("bad.passlens.json");
    QVERIFY(writeBytes(
        bad, QByteArray::fromStdString(passlens::Trace::dumpSession(doc)))); // "format" first, as PassLens writes it
    r = runCli({"run", bad, "--repeat", "1", "--warmup", "0"});
    CHECK_FAILS(r, "bad.passlens.json: events[0] (", "cannot replay: replaces unknown variable 999999");
    QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
    doc["events"][0]["seq"] = "one";
    QVERIFY(writeBytes(bad, QByteArray::fromStdString(passlens::Trace::dumpSession(doc))));
    r = runCli({"report", bad, "-o", tmp.filePath("rep")});
    CHECK_FAILS(r, "bad.passlens.json: events[0]: ", "type must be number, but is string");
    QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
    QVERIFY(!QFileInfo::exists(tmp.filePath("rep")));
    // a step the run does not have: bad input (exit 1) naming the file and the option
    r = runCli({"render", model, "--diff", "nosuch..final", "-o", tmp.filePath("d.svg")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.startsWith("error: " + model.toUtf8() + ": --diff: no step 'nosuch' in this pipeline run"),
             qPrintable(r.describe()));
    r = runCli({"render", model, "--event", "99999", "-o", tmp.filePath("d.svg")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(": --event: event 99999 does not exist (this pipeline run has events 0.."),
             qPrintable(r.describe()));
    QVERIFY(!QFileInfo::exists(tmp.filePath("d.svg")));
}

// Running out of memory is a message naming the command and the file, not std::bad_alloc.
void TestCli::outOfMemoryIsAMessage() {
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("address-space limits do not apply under AddressSanitizer");
#else
    QTemporaryDir tmp;
    const QString big = tmp.filePath("big.graph.json"); // a 1 GiB constant, under the size limit
    QVERIFY(writeBytes(big, "{\"format\":\"passlens.graph\",\"version\":1,\"inputs\":[{\"name\":\"x\",\"type\":"
                            "\"float32[262144,1024]\"}],"
                            "\"constants\":[{\"name\":\"w\",\"type\":\"float32[262144,1024]\",\"value\":{\"fill\":"
                            "\"ones\"}}],\"nodes\":[{\"op\":"
                            "\"Elemwise\",\"attrs\":{\"scalar\":\"add\"},\"inputs\":[\"x\",\"w\"],\"outputs\":["
                            "\"y\"]}],\"outputs\":[\"y\"]}"));
    const Run r = runCliWith({"inspect", big}, [] {
        const struct rlimit lim = {rlim_t(800) << 20, rlim_t(800) << 20};
        ::setrlimit(RLIMIT_AS, &lim);
    });
    CHECK_FAILS(r, "inspect " + big + ": out of memory", "");
#endif
}

// A report or a convert that fails halfway (here: past a file-size limit) removes what it
// created, and the message names the output path.
void TestCli::failedWritesRemoveWhatTheyCreated() {
    QTemporaryDir tmp;
    // report: the session and the first figures fit under 120 KiB, a later figure does not
    const QString rep = tmp.filePath("out/rep");
    Run r = runCliWith({"report", corpusModel("shape_ops.onnx"), "-o", rep}, fileSizeLimit(120 << 10));
    CHECK_FAILS(r, rep + "/", "cannot write: File too large");
    QCOMPARE(filesUnder(tmp.path()), QStringList());
    // convert: some .npy files fit under 1 MiB, the classifier's weights do not
    const QString out = tmp.filePath("sq.graph.json");
    r = runCliWith({"convert", corpusModel("squeezenet1_1.onnx"), "-o", out}, fileSizeLimit(1 << 20));
    CHECK_FAILS(r, tmp.filePath("sq.data/"), "cannot write: File too large");
    QCOMPARE(filesUnder(tmp.path()), QStringList());
    // an output folder under a regular file: nothing can be created
    QVERIFY(writeBytes(tmp.filePath("plain.txt"), "x"));
    r = runCli({"report", corpusModel("shape_ops.onnx"), "-o", tmp.filePath("plain.txt/rep")});
    CHECK_FAILS(r, tmp.filePath("plain.txt/rep") + ": cannot create the report folder", "");
    r = runCli({"convert", corpusModel("squeezenet1_1.onnx"), "-o", tmp.filePath("plain.txt/sq.graph.json")});
    CHECK_FAILS(r, tmp.filePath("plain.txt/sq.data") + ": cannot create the folder for .npy constants", "");
    QCOMPARE(filesUnder(tmp.path()), QStringList({"plain.txt"}));
    // the same commands without the limit write everything
    QVERIFY(runCli({"convert", corpusModel("squeezenet1_1.onnx"), "-o", out}).exitCode == 0);
    QVERIFY(QFileInfo::exists(tmp.filePath("sq.data/classifier.1.weight_50.npy")));
}
