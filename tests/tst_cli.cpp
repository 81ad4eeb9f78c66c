// passlens-cli (CLI.md): runs the real executable on the corpus, on converted graphs and on bad
// input, and checks exit codes, stdout (one JSON document with --json) and stderr messages.
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
constexpr int kTimeoutMs = 600000; // a hang guard only: far above any run on a loaded machine

struct Run {
    int exitCode = -1;
    QProcess::ExitStatus exitStatus = QProcess::CrashExit;
    QByteArray out;
    QByteArray err;
    bool finished = false;
    QString describe() const {
        return QString("exit %1 (%2)\nstdout: %3\nstderr: %4")
            .arg(exitCode)
            .arg(exitStatus == QProcess::NormalExit ? "normal" : "crash")
            .arg(QString::fromUtf8(out.left(2000)), QString::fromUtf8(err.left(2000)));
    }
};

// Runs passlens-cli; `childSetup` runs in the child before exec (resource limits), `env` adds
// NAME=VALUE entries to the environment.
Run runCliWith(const QStringList& args, std::function<void()> childSetup, const QStringList& env = {}) {
    QProcess p;
    p.setProgram(QStringLiteral(PASSLENS_CLI));
    p.setArguments(args);
    if (childSetup) p.setChildProcessModifier(std::move(childSetup));
    if (!env.isEmpty()) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
        p.setProcessEnvironment(e);
    }
    p.start();
    Run r;
    if (!p.waitForStarted(kTimeoutMs)) return r;
    r.finished = p.waitForFinished(kTimeoutMs);
    if (!r.finished) {
        p.kill();
        p.waitForFinished(5000);
    }
    r.exitCode = p.exitCode();
    r.exitStatus = p.exitStatus();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

Run runCli(const QStringList& args) { return runCliWith(args, {}); }

// A child setup that limits the size of any file written to `bytes` (RLIMIT_FSIZE).
std::function<void()> fileSizeLimit(rlim_t bytes) {
    return [bytes] {
        const struct rlimit lim = {bytes, bytes};
        ::setrlimit(RLIMIT_FSIZE, &lim);
    };
}

// Every file under `dir`, relative, sorted (hidden ones too).
QStringList filesUnder(const QString& dir) {
    QStringList out;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) out << QDir(dir).relativeFilePath(it.next());
    out.sort();
    return out;
}

QString corpusDir() { return QStringLiteral(PASSLENS_CORPUS_DIR); }
QString corpusModel(const QString& name) { return QDir(corpusDir()).filePath(name); }

const QStringList kCorpus = {"resnet18.onnx",
                             "mobilenet_v2.onnx",
                             "squeezenet1_1.onnx",
                             "mlp.onnx",
                             "transformer_encoder_layer.onnx",
                             "lstm.onnx",
                             "shape_ops.onnx",
                             "ch_PP-OCRv4_det_infer.onnx",
                             "silero_vad_legacy.onnx"};

bool writeBytes(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    return f.write(bytes) == bytes.size();
}

QStringList nonEmptyLines(const QByteArray& text) {
    QStringList lines = QString::fromUtf8(text).split('\n');
    lines.removeAll(QString());
    return lines;
}

// One valid JSON object on stdout (QJsonDocument rejects trailing garbage).
QJsonObject parseJsonOut(const Run& r, bool* ok) {
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
    void initTestCase() { QVERIFY2(QFileInfo(QStringLiteral(PASSLENS_CLI)).isExecutable(), PASSLENS_CLI); }

    void inspectJsonCorpus_data() {
        QTest::addColumn<QString>("model");
        for (const QString& m : kCorpus) QTest::newRow(qPrintable(m)) << m;
    }
    void inspectJsonCorpus() {
        QFETCH(QString, model);
        if (!QDir(corpusDir()).exists())
            QFAIL(qPrintable("the ONNX corpus is not at " + corpusDir() +
                             " (configure with -DPASSLENS_CORPUS_DIR=<folder>)"));
        const QString path = corpusModel(model);
        if (!QFileInfo::exists(path)) QFAIL(qPrintable("corpus model missing: " + path));
        const Run r = runCli({"inspect", "--json", path});
        QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit && r.exitCode == 0, qPrintable(r.describe()));
        bool ok = false;
        const QJsonObject j = parseJsonOut(r, &ok);
        QVERIFY2(ok, qPrintable("stdout is not one JSON object: " + r.describe()));
        for (const char* key : {"nodes", "inputs", "outputs", "op_counts", "toposort"}) QVERIFY2(j.contains(key), key);
        QVERIFY(j["inputs"].isArray());
        QVERIFY(j["outputs"].isArray());
        QVERIFY(!j["outputs"].toArray().isEmpty());
        const QJsonArray topo = j["toposort"].toArray();
        const QJsonObject counts = j["op_counts"].toObject();
        const int nodes = j["nodes"].toInt(-1);
        QVERIFY(nodes > 0);
        QCOMPARE(nodes, int(topo.size()));
        int sum = 0;
        for (auto it = counts.begin(); it != counts.end(); ++it) sum += it.value().toInt();
        QCOMPARE(sum, nodes);
        // op_counts is the histogram of toposort.
        QMap<QString, int> hist;
        for (const auto& k : topo) ++hist[k.toString()];
        for (auto it = counts.begin(); it != counts.end(); ++it) QCOMPARE(hist.value(it.key()), it.value().toInt());

        if (model == "resnet18.onnx") {
            QCOMPARE(counts["AbstractConv2d"].toInt(), 20);
            QCOMPARE(counts["Pool"].toInt(), 1);
            QCOMPARE(counts["Gemm"].toInt(), 1);
            QCOMPARE(counts["Flatten"].toInt(), 1);
            QVERIFY(topo.contains(QJsonValue("Pool")));
            // The first node is the stem conv, or a node of constants only: the importer's
            // Alloc that broadcasts the fc bias into Gemm's z (no graph input reaches it).
            QStringList order;
            for (const auto& k : topo) order << k.toString();
            QVERIFY2(QStringList({"DimShuffle", "AbstractConv2d", "Alloc"}).contains(order.first()),
                     qPrintable(order.first()));
            order.removeAll("Alloc");
            QVERIFY2(order.first() == "DimShuffle" || order.first() == "AbstractConv2d", qPrintable(order.first()));
            QVERIFY(order.indexOf("AbstractConv2d") < order.indexOf("Pool"));
            QCOMPARE(order.last(), QString("Gemm"));
        } else if (model == "lstm.onnx") {
            QCOMPARE(counts["OnnxLSTM"].toInt(), 1);
        } else if (model == "silero_vad_legacy.onnx") {
            QCOMPARE(counts["OnnxIf"].toInt(), 1);
            QVERIFY2(j["subgraphs"].toInt() > 0, qPrintable(r.describe()));
        }
    }

    void inspectHuman() {
        const QString path =
            QDir(QStringLiteral(PASSLENS_SOURCE_DIR)).filePath("resources/examples/transformer_encoder_layer.onnx");
        QVERIFY2(QFileInfo::exists(path), qPrintable(path));
        const Run r = runCli({"inspect", path});
        QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit && r.exitCode == 0, qPrintable(r.describe()));
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("[id A]"), qPrintable(out.left(2000)));
        QVERIFY2(out.contains("\nOp kinds:\n"), qPrintable(out.right(2000)));
        QVERIFY(out.contains("transformer_encoder_layer.onnx"));
        QVERIFY2(nonEmptyLines(r.out).size() > 50, qPrintable(out.left(2000)));
    }

    // ONNX names that are not valid UTF-8 are escaped (\xNN) on import: convert writes the graph
    // JSON and optimize --session the session file (nlohmann's type_error 316 before), both
    // holding the escaped names.
    void invalidUtf8OnnxNames() {
        onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        auto* g = m.mutable_graph();
        g->set_name("names\xff");
        auto valueInfo = [](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name) {
            auto* vi = list->Add();
            vi->set_name(name);
            auto* tt = vi->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(onnx::TensorProto::FLOAT);
            for (auto d : {2, 3}) tt->mutable_shape()->add_dim()->set_dim_value(d);
        };
        valueInfo(g->mutable_input(), "x\xfe");
        auto* relu = g->add_node();
        relu->set_op_type("Relu");
        relu->set_name("relu\xff\x41");
        relu->add_input("x\xfe");
        relu->add_output("r\xc3");
        auto* exp = g->add_node();
        exp->set_op_type("Exp");
        exp->set_name("exp1");
        exp->add_input("r\xc3");
        exp->add_output("y");
        valueInfo(g->mutable_output(), "y");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString model = tmp.filePath("names.onnx");
        {
            QFile f(model);
            QVERIFY(f.open(QIODevice::WriteOnly));
            const std::string bytes = m.SerializeAsString();
            QCOMPARE(f.write(bytes.data(), static_cast<qint64>(bytes.size())), static_cast<qint64>(bytes.size()));
        }
        const QString graphOut = tmp.filePath("names.graph.json");
        const Run c = runCli({"convert", model, "-o", graphOut});
        QVERIFY2(c.finished && c.exitStatus == QProcess::NormalExit && c.exitCode == 0, qPrintable(c.describe()));
        QFile gf(graphOut);
        QVERIFY(gf.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(gf.readAll());
        QCOMPARE(doc["name"].toString(), QString("names\\xFF"));
        QCOMPARE(doc["inputs"][0]["name"].toString(), QString("x\\xFE"));
        QStringList nodeNames;
        for (const auto& n : doc["nodes"].toArray()) nodeNames << n.toObject()["name"].toString();
        QCOMPARE(nodeNames, QStringList({"relu\\xFFA", "exp1"}));
        const QString session = tmp.filePath("names.passlens.json");
        const Run o = runCli({"optimize", model, "--session", session, "--session-format", "json"});
        QVERIFY2(o.finished && o.exitStatus == QProcess::NormalExit && o.exitCode == 0, qPrintable(o.describe()));
        QFile sf(session);
        QVERIFY(sf.open(QIODevice::ReadOnly));
        const QByteArray text = sf.readAll();
        QJsonParseError err;
        QVERIFY(QJsonDocument::fromJson(text, &err).isObject());
        QCOMPARE(err.error, QJsonParseError::NoError);
        QVERIFY2(text.contains("relu\\\\xFFA") && text.contains("r\\\\xC3"), text.left(2000).constData());
        // the compact session (the default) keeps the escaped names as well
        const QString compact = tmp.filePath("names.passlens");
        QCOMPARE(runCli({"optimize", model, "--session", compact}).exitCode, 0);
        const auto source = passlens::Trace::load(compact.toStdString()).graphAfter(0);
        QCOMPARE(source->name, std::string("names\\xFF"));
        QCOMPARE(source->inputs()[0]->name(), std::string("x\\xFE"));
    }

    void inspectDepth() {
        // A 12,000-node chain (above the 10,000 nodes listed whole by default): the listing stops
        // at depth 50 and says so; --depth sets it; --depth -1 is the whole graph.
        QTemporaryDir dir;
        QString json =
            R"({"format": "passlens.graph", "version": 1, "name": "chain", "inputs": [{"name": "x", "type": "float32[?,64]"}], "nodes": [)";
        const int n = 12000;
        for (int i = 0; i < n; ++i)
            json += QString(R"(%1{"op": "Elemwise", "attrs": {"scalar": "%2"}, "inputs": ["%3"], "outputs": ["v%4"]})")
                        .arg(i ? "," : "", i % 2 ? "exp" : "neg", i ? QString("v%1").arg(i - 1) : QString("x"))
                        .arg(i);
        json += QString(R"(], "outputs": ["v%1"]})").arg(n - 1);
        const QString path = dir.filePath("chain.graph.json");
        QVERIFY(writeBytes(path, json.toUtf8()));
        auto listingLines = [](const QByteArray& out) { return QString::fromUtf8(out).count("[id "); };
        const Run def = runCli({"inspect", path});
        QVERIFY2(def.finished && def.exitCode == 0, qPrintable(def.describe()));
        QCOMPARE(listingLines(def.out), 50);
        QVERIFY2(def.out.contains("(debugprint cut at depth 50 (graph of 12000 nodes): 1 node's inputs not shown; "
                                  "--depth N sets the depth, "
                                  "--depth -1 prints everything)\n"),
                 qPrintable(def.describe()));
        QVERIFY(def.out.size() < 20000); // 50 lines, not 12,000 lines of up to 24,000 characters
        const Run three = runCli({"inspect", "--depth", "3", path});
        QVERIFY2(three.finished && three.exitCode == 0, qPrintable(three.describe()));
        QCOMPARE(listingLines(three.out), 3);
        QVERIFY(three.out.contains("Elemwise{exp} [id A] 'v11999' 11999\n |Elemwise{neg} [id B] 'v11998' 11998\n   "
                                   "|Elemwise{exp} [id C] 'v11997' 11997\n"));
        QVERIFY(three.out.contains("(debugprint cut at depth 3 (graph of 12000 nodes)"));
        // optimize --debugprint follows the same rule
        const Run opt = runCli({"optimize", path, "--pipeline", "none", "--debugprint", "--depth", "2"});
        QVERIFY2(opt.finished && opt.exitCode == 0, qPrintable(opt.describe()));
        QVERIFY2(opt.out.contains("Elemwise{exp} [id A] 'v11999' 11999\n |Elemwise{neg} [id B] 'v11998' "
                                  "11998\n(debugprint cut at depth 2"),
                 qPrintable(opt.describe()));
        // a small graph is listed whole, the same with --depth -1, and without a note
        const QString small =
            QDir(QStringLiteral(PASSLENS_SOURCE_DIR)).filePath("resources/examples/transformer_encoder_layer.onnx");
        const Run whole = runCli({"inspect", small});
        const Run all = runCli({"inspect", "--depth", "-1", small});
        QVERIFY2(whole.exitCode == 0 && all.exitCode == 0, qPrintable(whole.describe() + all.describe()));
        QCOMPARE(whole.out, all.out);
        QVERIFY(!whole.out.contains("debugprint cut"));
        const Run bad = runCli({"inspect", "--depth", "deep", small});
        QCOMPARE(bad.exitCode, 2);
    }

    // --version prints the version of the CMake project (top-level CMakeLists.txt), which reaches
    // the CLI through the generated passlens/Version.h.
    void versionIsTheProjectVersion() {
        QFile cmake(QStringLiteral(PASSLENS_SOURCE_DIR "/CMakeLists.txt"));
        QVERIFY(cmake.open(QIODevice::ReadOnly));
        const QRegularExpression projectVersion(
            QStringLiteral(R"(project\(PassLens\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+))"));
        const QRegularExpressionMatch m = projectVersion.match(QString::fromUtf8(cmake.readAll()));
        QVERIFY2(m.hasMatch(), "no project(PassLens VERSION x.y.z) in CMakeLists.txt");
        const Run r = runCli({"--version"});
        QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit && r.exitCode == 0, qPrintable(r.describe()));
        QCOMPARE(QString::fromUtf8(r.out).trimmed(), QStringLiteral("passlens-cli ") + m.captured(1));
    }

    void convertMlp() {
        const QString model = corpusModel("mlp.onnx");
        if (!QFileInfo::exists(model)) QFAIL("mlp.onnx is not in the corpus (PASSLENS_CORPUS_DIR)");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString outPath = tmp.filePath("mlp.graph.json");
        const Run r = runCli({"convert", model, "-o", outPath});
        QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit && r.exitCode == 0, qPrintable(r.describe()));
        QVERIFY(QFileInfo::exists(outPath));

        // Large constants went to .npy files in mlp.data/, small ones stayed inline.
        QFile f(outPath);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
        QVERIFY(doc.isObject());
        QCOMPARE(doc["format"].toString(), QString("passlens.graph"));
        int files = 0;
        for (const auto& cv : doc["constants"].toArray()) {
            const QJsonObject c = cv.toObject();
            const QString type = c["type"].toString();
            qint64 elems = 1;
            const QString dims = type.mid(type.indexOf('[') + 1, type.indexOf(']') - type.indexOf('[') - 1);
            for (const QString& d : dims.split(',', Qt::SkipEmptyParts)) elems *= d.toLongLong();
            if (elems > 64) {
                QVERIFY2(c["value"].isObject() && c["value"].toObject().contains("file"),
                         qPrintable(c["name"].toString()));
                const QString rel = c["value"]["file"].toString();
                QVERIFY2(rel.startsWith("mlp.data/") && rel.endsWith(".npy"), qPrintable(rel));
                QVERIFY2(QFileInfo(tmp.filePath(rel)).size() > elems, qPrintable(rel));
                ++files;
            } else {
                QVERIFY2(!c["value"].isObject(), qPrintable(c["name"].toString()));
            }
        }
        QVERIFY(files >= 3); // the weights of the three Linear layers at least
        QCOMPARE(QDir(tmp.filePath("mlp.data")).entryList({"*.npy"}, QDir::Files).size(), files);

        // The graph JSON is the same graph as the model.
        const Run a = runCli({"inspect", "--json", model});
        const Run b = runCli({"inspect", "--json", outPath});
        QVERIFY2(a.exitCode == 0, qPrintable(a.describe()));
        QVERIFY2(b.exitCode == 0, qPrintable(b.describe()));
        bool okA = false, okB = false;
        const QJsonObject ja = parseJsonOut(a, &okA), jb = parseJsonOut(b, &okB);
        QVERIFY(okA && okB);
        QVERIFY(!ja["fingerprint"].toString().isEmpty());
        QCOMPARE(jb["fingerprint"].toString(), ja["fingerprint"].toString());
        QCOMPARE(jb["format"].toString(), QString("graph-json"));
        QCOMPARE(jb["nodes"].toInt(), ja["nodes"].toInt());

        // --json prints {"output": ...}.
        const QString out2 = tmp.filePath("again.graph.json");
        const Run j = runCli({"convert", "--json", model, "-o", out2});
        QVERIFY2(j.exitCode == 0, qPrintable(j.describe()));
        bool ok = false;
        const QJsonObject o = parseJsonOut(j, &ok);
        QVERIFY2(ok, qPrintable(j.describe()));
        QCOMPARE(o["output"].toString(), out2);
        QVERIFY(QFileInfo::exists(out2));
        QVERIFY(QDir(tmp.filePath("again.data")).exists());
    }

    void badInput() {
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
        CHECK_FAILS(
            runCli({"inspect",
                    file("page.onnx",
                         "<!DOCTYPE html>\n<html><head><title>404</title></head><body>Not found</body></html>\n")}),
            "page.onnx", "not an ONNX model");
        QByteArray random(4096, '\0');
        QRandomGenerator rng(20240611);
        for (char& c : random) c = char(rng.bounded(256));
        CHECK_FAILS(runCli({"inspect", file("random.onnx", random)}), "random.onnx", "not a valid ONNX model");
        CHECK_FAILS(
            runCli({"inspect", "--json",
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

    void cycleInGraphJson() {
        QTemporaryDir tmp;
        const QString p = tmp.filePath("cycle.graph.json");
        QVERIFY(writeBytes(
            p,
            "{\"format\": \"passlens.graph\", \"version\": 1,\n"
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

    void truncatedOnnx() {
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
    void hardenedInputs() {
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
        CHECK_FAILS(runCli({"run", corpusModel("mlp.onnx"), "--inputs", tmp.filePath("inputs"), "--repeat", "1",
                            "--warmup", "0"}),
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
    void messagesNameTheirFile() {
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
        QVERIFY(writeBytes(
            pipe, "{\"format\": \"passlens.pipeline\", \"version\": 1, \"exclude\": [\"merge1\", {\"x\": 1}]}"));
        r = runCli({"optimize", model, "--pipeline", pipe});
        CHECK_FAILS(r, "p.pipeline.json: exclude: ", "expected a string, got object");
        QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
        // --overlay: the profile file
        const QString prof = tmp.filePath("prof.json");
        QVERIFY(writeBytes(prof, "{\"profiles\": [{\"phase\": 3, \"nodes\": [{\"node\": \"n1\", \"time_us\": 1}]}]}"));
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
        QVERIFY(writeBytes(bad, QByteArray::fromStdString(
                                    passlens::Trace::dumpSession(doc)))); // "format" first, as PassLens writes it
        r = runCli({"run", bad, "--repeat", "1", "--warmup", "0"});
        CHECK_FAILS(r, "bad.passlens.json: events[0] (", "cannot replay: replaces unknown variable 999999");
        QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
        doc["events"][0]["seq"] = "one";
        QVERIFY(writeBytes(bad, QByteArray::fromStdString(passlens::Trace::dumpSession(doc))));
        r = runCli({"report", bad, "-o", tmp.filePath("rep")});
        CHECK_FAILS(r, "bad.passlens.json: events[0]: ", "type must be number, but is string");
        QVERIFY2(noLibraryText(r), qPrintable(r.describe()));
        QVERIFY(!QFileInfo::exists(tmp.filePath("rep")));
    }

    // Running out of memory is a message naming the command and the file, not std::bad_alloc.
    void outOfMemoryIsAMessage() {
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
    void failedWritesRemoveWhatTheyCreated() {
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

    void usageErrors_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("no subcommand") << QStringList();
        QTest::newRow("unknown subcommand") << QStringList({"frobnicate", "x.onnx"});
        QTest::newRow("inspect without FILE") << QStringList({"inspect"});
        QTest::newRow("inspect --json without FILE") << QStringList({"inspect", "--json"});
        QTest::newRow("unknown flag") << QStringList({"inspect", "--frobnicate", "x.onnx"});
        QTest::newRow("convert without -o") << QStringList({"convert", "x.onnx"});
    }
    void usageErrors() {
        QFETCH(QStringList, args);
        const Run r = runCli(args);
        QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit, qPrintable(r.describe()));
        QVERIFY2(r.exitCode == 2, qPrintable(r.describe()));
        QVERIFY2(r.out.isEmpty(), qPrintable(r.describe()));
        QVERIFY2(!r.err.isEmpty(), qPrintable(r.describe()));
    }

    void help_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("--help") << QStringList({"--help"});
        QTest::newRow("inspect --help") << QStringList({"inspect", "--help"});
        QTest::newRow("convert --help") << QStringList({"convert", "--help"});
    }
    // run --check names the first divergent phase with core's check (pipeline/PhaseCheck.h, the
    // window's too): the phases that changed the graph, as optimize lists them, each within the
    // `run --json` carries the executor's plan: a convolution + bias add fused (which nodes, and
    // the element-wise node listed as fused into the convolution), a convolution whose output is a
    // graph output declined with its reason; PASSLENS_EPILOGUE_FUSION=off turns the fusion off.
    void runJsonCarriesPlan() {
        QTemporaryDir dir;
        const QString path = dir.filePath("conv.graph.json");
        QVERIFY(writeBytes(
            path,
            R"({"format": "passlens.graph", "version": 1, "inputs": [{"name": "x", "type": "float32[1,3,6,6]"}],
 "constants": [{"name": "w", "type": "float32[4,3,3,3]", "value": {"fill": "normal"}},
               {"name": "b", "type": "float32[1,4,1,1]", "value": {"fill": "normal"}}],
 "nodes": [
  {"op": "AbstractConv2d", "attrs": {"border_mode": [[1,1],[1,1]], "subsample": [1,1], "filter_dilation": [1,1],
   "num_groups": 1}, "inputs": ["x", "w"], "outputs": ["c"]},
  {"op": "Elemwise", "attrs": {"scalar": "add"}, "inputs": ["c", "b"], "outputs": ["y"]},
  {"op": "AbstractConv2d", "attrs": {"border_mode": [[1,1],[1,1]], "subsample": [1,1], "filter_dilation": [1,1],
   "num_groups": 1}, "inputs": ["x", "w"], "outputs": ["c2"]},
  {"op": "Elemwise", "attrs": {"scalar": "exp"}, "inputs": ["c2"], "outputs": ["e2"]}],
 "outputs": ["y", "c2", "e2"]})"));
        const QStringList args = {"run",      path, "--phase",  "source", "--device", "cpu",
                                  "--repeat", "1",  "--warmup", "0",      "--json"};
        const Run r = runCli(args);
        QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
        bool ok = false;
        const QJsonObject j = parseJsonOut(r, &ok);
        QVERIFY(ok);
        const QJsonArray plan = j.value("plan").toArray();
        QCOMPARE(plan.size(), 2);
        const bool firstFused = plan[0].toObject().value("applied").toBool();
        const QJsonObject fused = plan[firstFused ? 0 : 1].toObject(), declined = plan[firstFused ? 1 : 0].toObject();
        const QRegularExpression fusedText("^Elemwise #(\\d+) fused into AbstractConv2d #(\\d+) as its epilogue$");
        const auto m = fusedText.match(fused.value("decision").toString());
        QVERIFY2(m.hasMatch(), qPrintable(fused.value("decision").toString()));
        QCOMPARE(fused.value("pass").toString(), QString("epilogue_fusion"));
        QVERIFY(fused.value("applied").toBool());
        QCOMPARE(fused.value("node").toInteger(), m.captured(1).toLongLong());
        QCOMPARE(fused.value("with").toArray().first().toInteger(), m.captured(2).toLongLong());
        QVERIFY(!declined.value("applied").toBool());
        QCOMPARE(declined.value("reason").toString(), QString("its output is a graph output"));
        QVERIFY(declined.value("decision").toString().endsWith(": no epilogue fused"));
        bool listed = false; // the fused node has no time of its own
        for (const auto& n : j.value("not_run").toArray())
            if (n.toObject().value("node").toInteger() == m.captured(1).toLongLong())
                listed = n.toObject().value("fused_into").toInteger() == m.captured(2).toLongLong();
        QVERIFY(listed);
        // the environment variable still switches it off
        const Run off = runCliWith(args, {}, {"PASSLENS_EPILOGUE_FUSION=off"});
        QVERIFY2(off.finished && off.exitCode == 0, qPrintable(off.describe()));
        const QJsonArray offPlan = parseJsonOut(off, &ok).value("plan").toArray();
        QCOMPARE(offPlan.size(), 2);
        for (const auto& d : offPlan) {
            QVERIFY(!d.toObject().value("applied").toBool());
            QCOMPARE(d.toObject().value("reason").toString(),
                     QString("epilogue fusion is off (ExecOptions::fuseEpilogues, PASSLENS_EPILOGUE_FUSION=off)"));
        }
    }

    // default tolerance on the seeded inputs; --phase stops the check at that phase.
    void runCheckPhases() {
        const QString model = corpusModel("mlp.onnx");
        const Run opt = runCli({"optimize", model, "--json"});
        QVERIFY2(opt.finished && opt.exitCode == 0, qPrintable(opt.describe()));
        QStringList changed;
        for (const auto& ph : QJsonDocument::fromJson(opt.out).object().value("phases").toArray())
            if (ph.toObject().value("changed").toBool()) changed << ph.toObject().value("name").toString();
        QVERIFY(changed.size() >= 3);
        const Run r = runCli({"run", model, "--check", "--repeat", "1", "--warmup", "0", "--json"});
        QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
        const QJsonObject check = QJsonDocument::fromJson(r.out).object().value("check").toObject();
        QStringList checked;
        for (const auto& ph : check.value("phases").toArray()) {
            checked << ph.toObject().value("name").toString();
            QVERIFY(ph.toObject().value("max_rel").toDouble(1) <= 1e-4);
        }
        QCOMPARE(checked, changed);
        QVERIFY(check.value("first_divergent_phase").isNull());
        QCOMPARE(check.value("tolerance").toDouble(), 1e-4);
        const Run upTo =
            runCli({"run", model, "--check", "--phase", changed[1], "--repeat", "1", "--warmup", "0", "--json"});
        QVERIFY2(upTo.finished && upTo.exitCode == 0, qPrintable(upTo.describe()));
        QCOMPARE(QJsonDocument::fromJson(upTo.out).object().value("check").toObject().value("phases").toArray().size(),
                 2);
    }

    // run with ONNX string tensors: string_data input and reference files, the values shown
    // after the output's type, --check comparing strings (the first differing element named).
    void runStrings() {
        onnx::ModelProto m;
        m.set_ir_version(7);
        m.add_opset_import()->set_version(13);
        auto* g = m.mutable_graph();
        g->set_name("strings");
        auto* in = g->add_input();
        in->set_name("s");
        in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
        in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
        auto* n = g->add_node();
        n->set_op_type("StringNormalizer");
        n->add_input("s");
        n->add_output("y");
        auto* a = n->add_attribute();
        a->set_name("case_change_action");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s("UPPER");
        a = n->add_attribute();
        a->set_name("stopwords");
        a->set_type(onnx::AttributeProto::STRINGS);
        a->add_strings("b");
        auto* out = g->add_output();
        out->set_name("y");
        out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
        out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("C");
        QTemporaryDir tmp;
        const QString model = tmp.filePath("strings.onnx");
        QVERIFY(writeBytes(model, QByteArray::fromStdString(m.SerializeAsString())));
        QDir(tmp.path()).mkpath("data");
        auto strings = [&](const QString& file, std::vector<std::string> values) {
            onnx::TensorProto t;
            t.set_data_type(onnx::TensorProto::STRING);
            t.add_dims(static_cast<std::int64_t>(values.size()));
            for (const auto& v : values) t.add_string_data(v);
            QVERIFY(writeBytes(tmp.filePath("data/" + file), QByteArray::fromStdString(t.SerializeAsString())));
        };
        strings("input_0.pb", {"a", "B", "c"});
        strings("output_0.pb", {"A", "C"});
        const QStringList args = {"run", model,      "--inputs", tmp.filePath("data"), "--check", "--repeat",
                                  "1",   "--warmup", "0"};
        const Run ok = runCli(args);
        QVERIFY2(ok.finished && ok.exitCode == 0, qPrintable(ok.describe()));
        QVERIFY2(ok.out.contains("output 0 y: string[2] {\"A\", \"C\"}") && ok.out.contains("-> OK"),
                 qPrintable(ok.describe()));
        strings("output_0.pb", {"A", "X"});
        const Run bad = runCli(args + QStringList{"--json"});
        QVERIFY2(bad.finished && bad.exitCode == 1, qPrintable(bad.describe()));
        const QJsonObject check = QJsonDocument::fromJson(bad.out).object().value("check").toObject();
        QCOMPARE(check.value("outputs").toArray().at(0).toObject().value("detail").toString(),
                 QString("element 1: \"C\" vs \"X\""));
        QVERIFY(!check.value("ok").toBool());
    }

    void reportWithRun() {
        // report --run: the final graph profiled, the profile saved and painted onto it
        QTemporaryDir dir;
        const Run r = runCli({"report", corpusDir() + "/mlp.onnx", "-o", dir.path() + "/rep", "--run", "--json"});
        QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
        const QJsonDocument doc = QJsonDocument::fromJson(r.out);
        QVERIFY(doc.isObject());
        QStringList names;
        for (const auto& f : doc.object().value("files").toArray()) names << QFileInfo(f.toString()).fileName();
        QVERIFY2(names.contains("profile.json") && names.contains("final_timing.svg") && names.contains("index.html"),
                 qPrintable(names.join(' ')));
        QFile prof(dir.path() + "/rep/profile.json");
        QVERIFY(prof.open(QIODevice::ReadOnly));
        const QJsonObject p = QJsonDocument::fromJson(prof.readAll()).object();
        QVERIFY(p.value("nodes").toArray().size() >= 6); // every node of the optimized mlp timed
        QFile svg(dir.path() + "/rep/final_timing.svg");
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().contains("GpuGemm"));
    }

    void help() {
        QFETCH(QStringList, args);
        const Run r = runCli(args);
        QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit && r.exitCode == 0, qPrintable(r.describe()));
        QVERIFY2(QString::fromUtf8(r.out + r.err).contains("Usage", Qt::CaseInsensitive), qPrintable(r.describe()));
        if (args.size() > 1) QVERIFY2(QString::fromUtf8(r.out).contains(args[0]), qPrintable(r.describe()));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
