// tst_cli: run (--json with the executor's plan, --check phases, strings) and report with a run
// (see tst_cli.h).
#include "tst_cli.h"

// run --check names the first divergent phase with core's check (pipeline/PhaseCheck.h, the
// window's too): the phases that changed the graph, as optimize lists them, each within the
// `run --json` carries the executor's plan: a convolution + bias add fused (which nodes, and
// the element-wise node listed as fused into the convolution), a convolution whose output is a
// graph output declined with its reason; PASSLENS_EPILOGUE_FUSION=off turns the fusion off.
void TestCli::runJsonCarriesPlan() {
    QTemporaryDir dir;
    const QString path = dir.filePath("conv.graph.json");
    QVERIFY(
        writeBytes(path,
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
void TestCli::runCheckPhases() {
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
    QCOMPARE(QJsonDocument::fromJson(upTo.out).object().value("check").toObject().value("phases").toArray().size(), 2);
}

// --check against reference outputs whose values are all near 0: ch_PP-OCRv4_det_infer's are
// below 1e-4 and differ from onnxruntime's by about 1.2e-7, a max_rel near 2e-3; the absolute
// floor (--abs-tolerance, default 1e-6) accepts them, without it the check diverges.
void TestCli::runCheckAbsoluteFloor() {
    const QString model = corpusModel("ch_PP-OCRv4_det_infer.onnx");
    const QString data = QDir(corpusDir()).filePath("testdata/ch_PP-OCRv4_det_infer/test_data_set_0");
    const QStringList args{"run",     model,      "--phase", "source",   "--inputs", data,
                           "--check", "--repeat", "1",       "--warmup", "0",        "--json"};
    const Run r = runCli(args);
    QVERIFY2(r.finished && r.exitCode == 0, qPrintable(r.describe()));
    const QJsonObject check = QJsonDocument::fromJson(r.out).object().value("check").toObject();
    QCOMPARE(check.value("against").toString(), QString("reference"));
    QCOMPARE(check.value("abs_tolerance").toDouble(), 1e-6);
    QVERIFY(check.value("ok").toBool());
    QVERIFY(check.value("max_abs").toDouble() > 0 && check.value("max_abs").toDouble() <= 1e-6);
    QVERIFY(check.value("max_rel").toDouble() > 1e-4); // what the relative check alone refused
    const Run strict = runCli(QStringList(args) << "--abs-tolerance"
                                                << "0");
    QCOMPARE(strict.exitCode, 1);
    QVERIFY2(strict.err.contains("diverge (max_rel"), strict.err.constData());
    QVERIFY(!QJsonDocument::fromJson(strict.out).object().value("check").toObject().value("ok").toBool());
    QCOMPARE(runCli(QStringList(args) << "--abs-tolerance"
                                      << "-1")
                 .exitCode,
             2);
}

// run with ONNX string tensors: string_data input and reference files, the values shown
// after the output's type, --check comparing strings (the first differing element named).
void TestCli::runStrings() {
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

void TestCli::reportWithRun() {
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
