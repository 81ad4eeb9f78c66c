// tst_cli: inspect (corpus, human output, names, depth), the version, convert, usage errors and
// help (see tst_cli.h).
#include "tst_cli.h"

void TestCli::initTestCase() { QVERIFY2(QFileInfo(QStringLiteral(PASSLENS_CLI)).isExecutable(), PASSLENS_CLI); }

void TestCli::inspectJsonCorpus_data() {
    QTest::addColumn<QString>("model");
    for (const QString& m : kCorpus) QTest::newRow(qPrintable(m)) << m;
}

void TestCli::inspectJsonCorpus() {
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

void TestCli::inspectHuman() {
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
void TestCli::invalidUtf8OnnxNames() {
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

void TestCli::inspectDepth() {
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
void TestCli::versionIsTheProjectVersion() {
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

void TestCli::convertMlp() {
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
            QVERIFY2(c["value"].isObject() && c["value"].toObject().contains("file"), qPrintable(c["name"].toString()));
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

void TestCli::usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("no subcommand") << QStringList();
    QTest::newRow("unknown subcommand") << QStringList({"frobnicate", "x.onnx"});
    QTest::newRow("inspect without FILE") << QStringList({"inspect"});
    QTest::newRow("inspect --json without FILE") << QStringList({"inspect", "--json"});
    QTest::newRow("unknown flag") << QStringList({"inspect", "--frobnicate", "x.onnx"});
    QTest::newRow("convert without -o") << QStringList({"convert", "x.onnx"});
}

void TestCli::usageErrors() {
    QFETCH(QStringList, args);
    const Run r = runCli(args);
    QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit, qPrintable(r.describe()));
    QVERIFY2(r.exitCode == 2, qPrintable(r.describe()));
    QVERIFY2(r.out.isEmpty(), qPrintable(r.describe()));
    QVERIFY2(!r.err.isEmpty(), qPrintable(r.describe()));
}

void TestCli::help_data() {
    QTest::addColumn<QStringList>("args");
    QTest::newRow("--help") << QStringList({"--help"});
    QTest::newRow("inspect --help") << QStringList({"inspect", "--help"});
    QTest::newRow("convert --help") << QStringList({"convert", "--help"});
}

void TestCli::help() {
    QFETCH(QStringList, args);
    const Run r = runCli(args);
    QVERIFY2(r.finished && r.exitStatus == QProcess::NormalExit && r.exitCode == 0, qPrintable(r.describe()));
    QVERIFY2(QString::fromUtf8(r.out + r.err).contains("Usage", Qt::CaseInsensitive), qPrintable(r.describe()));
    if (args.size() > 1) QVERIFY2(QString::fromUtf8(r.out).contains(args[0]), qPrintable(r.describe()));
}

QTEST_GUILESS_MAIN(TestCli)
