// tst_graphjson: limits (nesting, tensor size, non-regular files), atomic writes and their
// temporaries, long chains, the streamed reader against the tree reader, session files (see
// tst_graphjson.h).
#include "tst_graphjson.h"

// Arrays and objects nest at most kJsonMaxDepth levels in any JSON file; deeper ones are
// refused while parsing (no recursive copy or dump ever sees them), with the place.
void TestGraphJson::deepNesting() {
    // {"format", ..., "inputs": [{"name": "x", "type": ..., "tag": {"a": {"a": ... {} }}}]}
    auto withTag = [](int levels) {
        std::string tag;
        for (int i = 0; i < levels; ++i) tag += "{\"a\": ";
        tag += "1";
        for (int i = 0; i < levels; ++i) tag += "}";
        return "{\"format\": \"passlens.graph\", \"version\": 1, \"inputs\": [{\"name\": \"x\", \"type\": "
               "\"float32[2]\", \"tag\": " +
               tag + "}], \"nodes\": [], \"outputs\": [\"x\"]}";
    };
    // top-level object, inputs list, input object: 3 levels, so a tag of 253 reaches 256
    const LoadedGraph ok = load(withTag(kJsonMaxDepth - 3));
    QCOMPARE(ok.graph->inputs().size(), std::size_t(1));
    QVERIFY(ok.graph->inputs()[0]->tag.contains("a"));
    CHECK_ERROR(errorOf(withTag(kJsonMaxDepth - 2)), "inputs[0].tag.a.a.a.a.a...", "nested deeper than 256 levels");
    CHECK_ERROR(errorOf(withTag(200000)), "inputs[0].tag.a.a.a.a.a...", "nested deeper than 256 levels");
    // lists in a node's attrs, and the top level itself
    std::string attrs = "{\"format\": \"passlens.graph\", \"version\": 1, \"inputs\": [], \"nodes\": [{\"op\": "
                        "\"Elemwise\", \"attrs\": {\"scalar\": ";
    attrs += std::string(100000, '[') + std::string(100000, ']') +
             "}, \"inputs\": [], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}";
    CHECK_ERROR(errorOf(attrs), "nodes[0].attrs.scalar[0][0][0][0]...", "nested deeper than 256 levels");
    CHECK_ERROR(errorOf(std::string(60000, '[')), ": [0][0][0][0][0][0][0][0]...: ", "nested deeper than 256 levels");
    try {
        parseJson(std::string(300, '[') + std::string(300, ']'), "p.json");
        QFAIL("expected passlens::Error");
    } catch (const Error& e) {
        QCOMPARE(
            QString(e.what()),
            QString("p.json: [0][0][0][0][0][0][0][0]...: JSON nested deeper than 256 levels of arrays and objects "
                    "(the limit of every JSON file PassLens reads)"));
    }
}

// A constant whose size comes from the file is checked against maxTensorBytes() before it
// is built: {"fill"} constants, .npy headers.
void TestGraphJson::tensorSizeLimit() {
    auto filled = [](const std::string& type) {
        return graphDoc({{{"name", "x"}, {"type", type}}},
                        {{{"name", "w"}, {"type", type}, {"value", {{"fill", "normal"}}}}},
                        {elemwise("add", {"x", "w"}, {"y"})}, {"y"});
    };
    qunsetenv("PASSLENS_MAX_TENSOR_BYTES");
    QCOMPARE(maxTensorBytes(), std::uint64_t(4) << 30);
    CHECK_ERROR(errorOf(filled("float32[100000,100000]")), "constants[0].value (constant 'w')",
                "float32[100000,100000] is 40000000000 bytes (37.3 GiB), more than the limit of 4 GiB");
    CHECK_ERROR(errorOf(filled("float64[4294967296,4294967296,4294967296]")), "constants[0].value (constant 'w')",
                "more than 2^64 bytes");
    qputenv("PASSLENS_MAX_TENSOR_BYTES", "1K");
    QCOMPARE(maxTensorBytes(), std::uint64_t(1024));
    QCOMPARE(load(filled("float32[16,16]")).graph->constants().at(0)->constant()->byteSize(), std::size_t(1024));
    CHECK_ERROR(errorOf(filled("float32[16,17]")), "constants[0].value (constant 'w')",
                "float32[16,17] is 1088 bytes (1.1 KiB), more than the limit of 1 KiB for a tensor read from a "
                "file (set PASSLENS_MAX_TENSOR_BYTES");
    qputenv("PASSLENS_MAX_TENSOR_BYTES", "lots");
    QCOMPARE(maxTensorBytes(), kDefaultMaxTensorBytes);
    qunsetenv("PASSLENS_MAX_TENSOR_BYTES");
    // a .npy header claiming 2^80 bytes on 4 bytes of data: refused, not overflowed
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::string npy =
        std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header + std::string(4, '\0');
    try {
        parseNpy(npy, "w.npy");
        QFAIL("expected passlens::Error");
    } catch (const Error& e) {
        QVERIFY2(QString(e.what()).startsWith("w.npy: float32[1099511627776,1099511627776] is more than 2^64 bytes"),
                 e.what());
    }
}

// Inputs must be regular files: a FIFO, a device or a directory is refused at once, never read.
void TestGraphJson::nonRegularInputs() {
    QTemporaryDir tmp;
    const std::string fifo = tmp.filePath("model.onnx").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    auto messageOf = [](auto&& f) {
        try {
            f();
        } catch (const Error& e) {
            return QString(e.what());
        }
        return QString();
    };
    const QString expected = QString::fromStdString(fifo) + ": is a FIFO (named pipe), not a regular file";
    QCOMPARE(messageOf([&] { loadGraphFile(fifo); }), expected);
    QCOMPARE(messageOf([&] { readFile(fifo); }), expected);
    QCOMPARE(messageOf([&] { readJsonFile(fifo); }), expected);
    QCOMPARE(messageOf([&] { sniffFileKind(fifo); }), expected);
    QCOMPARE(messageOf([&] { loadGraphFile("/dev/zero"); }),
             QString("/dev/zero: is a character device, not a regular file"));
    QCOMPARE(messageOf([&] { loadGraphFile(tmp.path().toStdString()); }),
             tmp.path() + ": is a directory, not a regular file");
    QCOMPARE(messageOf([&] { loadGraphFile(tmp.filePath("none.onnx").toStdString()); }),
             tmp.filePath("none.onnx") + ": no such file");
    // a .npy constant that is a FIFO
    const std::string npy = tmp.filePath("w.npy").toStdString();
    QCOMPARE(::mkfifo(npy.c_str(), 0600), 0);
    const json doc = graphDoc({{{"name", "x"}, {"type", "float32[2]"}}},
                              {{{"name", "w"}, {"type", "float32[2]"}, {"value", {{"file", "w.npy"}}}}},
                              {elemwise("add", {"x", "w"}, {"y"})}, {"y"});
    CHECK_ERROR(errorOf(doc, tmp.path().toStdString()), "constants[0].value.file",
                "w.npy: is a FIFO (named pipe), not a regular file");
}

// Writes go through what is at the output path: a symlink stays a symlink, permission bits
// are kept, a device is written in place, a FIFO without a reader is refused.
void TestGraphJson::atomicWriteKeepsWhatIsThere() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    std::filesystem::create_directory(dir / "real");
    writeFileAtomic(dir / "real" / "a.json", "old");
    QCOMPARE(::chmod((dir / "real" / "a.json").c_str(), 0640), 0);
    std::filesystem::create_symlink("real/a.json", dir / "link.json");
    writeFileAtomic(dir / "link.json", "new");
    QVERIFY(std::filesystem::is_symlink(dir / "link.json"));
    QCOMPARE(std::filesystem::read_symlink(dir / "link.json").string(), std::string("real/a.json"));
    QCOMPARE(readFile(dir / "real" / "a.json"), std::string("new"));
    struct stat st {};
    QCOMPARE(::stat((dir / "real" / "a.json").c_str(), &st), 0);
    QCOMPARE(st.st_mode & 07777, mode_t(0640));
    QCOMPARE(entriesOf(dir / "real"), QStringList({"a.json"})); // no temporary file left
    QCOMPARE(entriesOf(dir), QStringList({"link.json", "real"}));
    // a dangling symlink: its target is created, the link stays
    std::filesystem::create_symlink("real/b.json", dir / "dangling.json");
    writeFileAtomic(dir / "dangling.json", "b");
    QVERIFY(std::filesystem::is_symlink(dir / "dangling.json"));
    QCOMPARE(readFile(dir / "real" / "b.json"), std::string("b"));
    // a character device is written in place, not replaced
    writeFileAtomic("/dev/null", "discarded");
    QVERIFY(std::filesystem::is_character_file("/dev/null"));
    // a FIFO: refused without a reader, written to with one; it stays a FIFO
    const std::filesystem::path fifo = dir / "out.fifo";
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    try {
        writeFileAtomic(fifo, "x");
        QFAIL("expected passlens::Error");
    } catch (const Error& e) {
        QCOMPARE(QString(e.what()), QString::fromStdString(fifo.string()) +
                                        ": cannot write: it is a FIFO (named pipe) that no process reads");
    }
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    QVERIFY(reader >= 0);
    writeFileAtomic(fifo, "through the pipe");
    char buf[64] = {};
    QCOMPARE(::read(reader, buf, sizeof buf), ssize_t(16));
    ::close(reader);
    QCOMPARE(std::string(buf), std::string("through the pipe"));
    QVERIFY(std::filesystem::is_fifo(fifo));
    try {
        writeFileAtomic(dir / "real", "x");
        QFAIL("expected passlens::Error");
    } catch (const Error& e) {
        QCOMPARE(QString(e.what()),
                 QString::fromStdString((dir / "real").string()) + ": cannot write: it is a directory, not a file");
    }
}

// A leftover temporary file of a killed writer (its process gone, older than ten minutes)
// is removed by the next write of the same file; others are left alone.
void TestGraphJson::staleTemporariesRemoved() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    QVERIFY(child > 0);
    QCOMPARE(::waitpid(child, nullptr, 0), child); // a pid no process has now
    const std::string dead = std::to_string(child);
    auto make = [&](const std::string& name, bool old) {
        writeFileAtomic(dir / name, "partial");
        if (old) {
            const struct timespec times[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
            QCOMPARE(::utimensat(AT_FDCWD, (dir / name).c_str(), times, 0), 0);
        }
    };
    make(".out.json.tmp" + dead + ".3", true);   // killed writer: removed
    make(".out.json.tmp" + dead + ".4", false);  // recent: kept
    make(".out.json.tmp1.5", true);              // pid 1 is alive: kept
    make(".other.json.tmp" + dead + ".1", true); // another file's: kept
    writeFileAtomic(dir / "out.json", "{}");
    QStringList kept = {".other.json.tmp" + QString::fromStdString(dead) + ".1",
                        ".out.json.tmp" + QString::fromStdString(dead) + ".4", ".out.json.tmp1.5", "out.json"};
    kept.sort();
    QCOMPARE(entriesOf(dir), kept);
}

// A signal that ends the process during a write leaves no temporary file: SIGTERM arriving
// in the middle of write(2) (raised from SIGXFSZ at a file-size limit) and SIGXFSZ itself.
void TestGraphJson::signalDuringWriteLeavesNoTemporary() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    writeFileAtomic(dir / "out.json", "old");
    for (int sig : {SIGTERM, SIGXFSZ}) {
        const pid_t child = ::fork();
        if (child == 0) {
            const struct rlimit lim = {65536, 65536};
            ::setrlimit(RLIMIT_FSIZE, &lim);
            for (int s : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) ::signal(s, SIG_DFL); // not QTest's handlers
            if (sig == SIGTERM) ::signal(SIGXFSZ, [](int) { ::kill(::getpid(), SIGTERM); });
            writeFileAtomic(dir / "out.json", std::string(1 << 20, 'x'));
            ::_exit(0);
        }
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == sig, qPrintable(QString("status %1").arg(status)));
        QCOMPARE(entriesOf(dir), QStringList({"out.json"}));
        QCOMPARE(readFile(dir / "out.json"), std::string("old"));
    }
}

void TestGraphJson::longChain() {
    constexpr int n = 20000;
    std::string text =
        "{\"format\": \"passlens.graph\", \"version\": 1, \"name\": \"chain\",\n"
        "  \"inputs\": [{\"name\": \"v0\", \"type\": \"float32[8]\"}], \"constants\": [], \"nodes\": [\n";
    for (int i = 0; i < n; ++i) {
        text += "  {\"op\": \"Elemwise\", \"attrs\": {\"scalar\": \"";
        text += (i % 2 ? "neg" : "exp");
        text += "\"}, \"inputs\": [\"v" + std::to_string(i) + "\"], \"outputs\": [\"v" + std::to_string(i + 1) + "\"]}";
        text += i + 1 < n ? ",\n" : "\n";
    }
    text += "], \"outputs\": [\"v" + std::to_string(n) + "\"]}\n";
    const LoadedGraph l = load(text);
    QCOMPARE(l.graph->nodeCount(), std::size_t(n));
    QCOMPARE(l.graph->toposort().size(), std::size_t(n));
    QVERIFY(l.warnings.empty());
    // Reversed order (the worst case for the reader's depth-first search) and a write back.
    json doc = json::parse(text);
    std::reverse(doc["nodes"].begin(), doc["nodes"].end());
    const LoadedGraph r = load(doc);
    QCOMPARE(r.graph->fingerprint(), l.graph->fingerprint());
    QCOMPARE(writeGraphJson(*r.graph)["nodes"].size(), std::size_t(n));
}

// readGraphJsonText reads nodes straight from the parser's events; readGraphJson (sessions,
// subgraphs) from a JSON tree. Both name the same place and reason for every malformed node,
// and agree on duplicate keys (the last one counts, as in nlohmann::json).
void TestGraphJson::streamedAndTreeReadersAgree() {
    auto docWith = [](const std::string& second) {
        return "{\"format\": \"passlens.graph\", \"version\": 1, \"inputs\": [{\"name\": \"a\", \"type\": "
               "\"float32[2]\"}], \"nodes\": [{\"op\": \"Elemwise\", \"attrs\": {\"scalar\": \"exp\"}, "
               "\"inputs\": [\"a\"], \"outputs\": [\"e\"]}, " +
               second + "], \"outputs\": [\"e\"]}";
    };
    auto treeErrorOf = [](const std::string& text) {
        try {
            readGraphJson(json::parse(text), kLabel, {});
        } catch (const Error& e) {
            return QString::fromStdString(e.what());
        }
        return QString();
    };
    const std::string neg = "\"attrs\": {\"scalar\": \"neg\"}, ";
    const struct {
        std::string node, path, reason;
    } cases[] = {
        {"5", "nodes[1]: ", "expected an object, got number"},
        {"{\"inputs\": [], \"outputs\": [\"y\"]}", "nodes[1]: ", "missing 'op'"},
        {"{\"op\": 3, \"inputs\": [], \"outputs\": [\"y\"]}", "nodes[1].op: ", "expected a string, got 3"},
        {"{\"op\": \"\", \"inputs\": [], \"outputs\": [\"y\"]}", "nodes[1].op: ", "must not be empty"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"]}", "nodes[1]: ", "missing 'outputs'"},
        {"{\"op\": \"Elemwise\", \"outputs\": [\"y\"]}", "nodes[1]: ", "missing 'inputs'"},
        {"{\"op\": \"Elemwise\", \"inputs\": \"a\", \"outputs\": [\"y\"]}", "nodes[1].inputs: ", "expected a list"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": {\"y\": 1}}",
         "nodes[1].outputs: ", "expected a list"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [{\"type\": \"float32[2]\"}]}",
         "nodes[1].outputs[0]: ", "missing 'name'"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [{\"name\": [7]}]}",
         "nodes[1].outputs[0].name: ", "expected a string, got [7]"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [{\"name\": \"\"}]}",
         "nodes[1].outputs[0].name: ", "must not be empty"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [7]}",
         "nodes[1].outputs[0]: ", "expected a variable name"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [\"\"]}",
         "nodes[1].outputs[0]: ", "expected a variable name"},
        {"{\"op\": \"Elemwise\", \"inputs\": [\"a\"], \"outputs\": [\"e\"]}",
         "nodes[1].outputs[0]: ", "variable 'e' is produced twice (also nodes[0].outputs[0])"},
        {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [null], \"outputs\": [\"y\"]}",
         "nodes[1].inputs[0]: ", "expected a variable name or a literal value"},
        {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [\"q\"], \"outputs\": [\"y\"]}",
         "nodes[1].inputs[0]: ", "unknown variable 'q'"},
        {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [\"a\"], \"outputs\": [{\"name\": \"y\", \"type\": 5}]}",
         "nodes[1].outputs[0].type: ", "expected a type string"},
        {"{\"op\": \"Elemwise\", " + neg +
             "\"inputs\": [\"a\"], \"outputs\": [{\"name\": \"y\", \"type\": \"int8[2]\"}]}",
         "nodes[1]: ", "int8[2]"},
        {"{\"op\": \"Elemwise\", \"op\": 3, " + neg + "\"inputs\": [\"a\"], \"outputs\": [\"y\"]}",
         "nodes[1].op: ", "expected a string, got 3"},
        {"{\"op\": \"Elemwise\", " + neg + "\"inputs\": [\"a\"], \"inputs\": 2, \"outputs\": [\"y\"]}",
         "nodes[1].inputs: ", "expected a list"},
        {"{\"op\": \"Elemwise\", \"name\": \"n1\", " + neg + "\"inputs\": [\"y\"], \"outputs\": [\"y\"]}",
         "nodes: ", "the graph has a cycle: nodes[1] (Elemwise 'n1') -> nodes[1] (Elemwise 'n1')"},
    };
    for (const auto& k : cases) {
        const std::string text = docWith(k.node);
        const QString streamed = errorOf(text);
        CHECK_ERROR(streamed, QString::fromStdString(k.path), QString::fromStdString(k.reason));
        QCOMPARE(streamed, treeErrorOf(text));
    }
    // Duplicate keys that end in a well-formed node: the same graph either way.
    for (const std::string& good :
         {"{\"op\": 3, \"op\": \"Elemwise\", " + neg + "\"inputs\": [\"a\"], \"outputs\": [\"y\"]}",
          "{\"op\": \"Elemwise\", " + neg +
              "\"inputs\": 2, \"inputs\": [\"e\"], \"outputs\": [{\"name\": 1, "
              "\"name\": \"y\", \"type\": \"float32[2]\"}]}"}) {
        const std::string text = docWith(good);
        const LoadedGraph streamed = load(text);
        const LoadedGraph tree = readGraphJson(json::parse(text), kLabel, {});
        QCOMPARE(streamed.graph->fingerprint(), tree.graph->fingerprint());
        QCOMPARE(streamed.warnings.size(), std::size_t(1)); // the node making y is pruned
        QCOMPARE(streamed.warnings, tree.warnings);
    }
    // "nodes" given twice: the last one counts.
    const std::string twice = "{\"format\": \"passlens.graph\", \"version\": 1, \"nodes\": [{\"op\": 1}], "
                              "\"inputs\": [{\"name\": \"a\", \"type\": \"float32[2]\"}], \"nodes\": 5, "
                              "\"outputs\": [\"a\"]}";
    CHECK_ERROR(errorOf(twice), "nodes: ", "expected a list");
    QCOMPARE(errorOf(twice), treeErrorOf(twice));
    std::string back = twice;
    back.replace(back.find("\"nodes\": [{\"op\": 1}]"), 20, "\"nodes\": 5");
    back.replace(back.rfind("\"nodes\": 5"), 10, "\"nodes\": []");
    QCOMPARE(load(back).graph->inputs().size(), std::size_t(1));
}

// A session as PassLens writes it has its keys sorted: "format" comes after the events, past
// the first 4 KiB that loadGraphFile sniffs; the streamed reader still finds its graph.
void TestGraphJson::sessionFormatAfterTheEvents() {
    QTemporaryDir dir;
    const std::filesystem::path path = std::filesystem::path(dir.path().toStdString()) / "s.passlens.json";
    json doc = {{"events", json::array({{{"seq", 1}, {"reason", std::string(6000, 'r')}}})},
                {"format", "passlens.session"},
                {"version", 1},
                {"graph", json::parse(kTransferPair)}};
    writeFileAtomic(path, doc.dump());
    const LoadedGraph l = loadGraphFile(path);
    QCOMPARE(l.format, std::string("session"));
    QCOMPARE(kinds(*l.graph), QStringList({"GpuFromHost", "HostFromGpu"}));
    doc.erase("graph");
    writeFileAtomic(path, doc.dump());
    try {
        loadGraphFile(path);
        QFAIL("expected passlens::Error");
    } catch (const Error& e) {
        QCOMPARE(QString(e.what()),
                 QString::fromStdString(path.string()) + ": graph: a session file needs the source graph");
    }
}
