// ONNX backend conformance suite (issue 11): every case of the Debian package libonnx-testdata
// (node/, simple/, pytorch-operator/, pytorch-converted/; each a model.onnx and
// test_data_set_0/{input_N,output_N}.pb) is imported and run on the CPU executor, as the source
// graph and as the final graph of the `theano` and `cleanup` pipelines, in this one process. The
// outputs are compared the way ONNX's backend runner does (allCloseMismatch, rtol 1e-3, atol
// 1e-7). A failure must be listed in tests/conformance/expected_failures.txt, and a listed
// failure that no longer happens fails the test too, so the list only shrinks (except a graph
// that draws random values, whose unseeded draw may match the suite's now and then).
//
// Environment (both optional, for regenerating the files from a real run):
//   PASSLENS_CONFORMANCE_EXPECTED=FILE  write the expected-failures list of this run to FILE
//   PASSLENS_CONFORMANCE_TABLE=FILE     write the results by op (docs/CONFORMANCE.md) to FILE
#include <passlens/io/AtomicFile.h>
#include <passlens/io/Failure.h>
#include <passlens/io/GraphLoader.h>
#include <passlens/ir/Error.h>
#include <passlens/kernels/Check.h>
#include <passlens/kernels/Executor.h>
#include <passlens/kernels/TensorIO.h>
#include <passlens/pipeline/Pipeline.h>

#include <onnx/onnx_pb.h>

#include <QTest>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace passlens;
namespace fs = std::filesystem;

namespace {

/// Where Debian's libonnx-testdata puts the suite.
const char* const kDataDir = "/usr/share/libonnx-testdata/data";
const char* const kSuites[] = {"node", "simple", "pytorch-operator", "pytorch-converted"};
const char* const kGraphs[] = {"source", "theano", "cleanup"};
constexpr double kRtol = 1e-3, kAtol = 1e-7; // onnx/backend/test/runner defaults

/// The result of one case on one graph: "" when it passes, else the reason.
struct CaseResult {
    std::string caseName; ///< "node/test_abs"
    std::string op;       ///< ONNX op type of a node/ case, "(simple)" etc. otherwise
    std::string failure[3];
    /// The graph draws random values (Op::isRandomKind): its values equal the suite's NumPy
    /// draws only by chance, and an unseeded op draws anew in each run.
    bool random[3] = {false, false, false};
};

/// What runCase appends to a value mismatch of a graph with a random op (Op::isRandomKind: the
/// generators, Bernoulli, Multinomial, Dropout; the CPU kernels draw from std::mt19937_64, whose
/// values cannot match the suite's NumPy draws).
const std::string kRandomDraw = " (the graph draws random values)";

/// A reason without the per-case details (node ids and names, values), so that the failures
/// group: "no kernel for op kind 'OnnxArgMax' on the CPU backend" stays, "node #12 'y'" goes.
std::string reasonGroup(const std::string& reason) {
    if (reason.ends_with(kRandomDraw))
        return reasonGroup(reason.substr(0, reason.size() - kRandomDraw.size())) + ": a random draw";
    static const std::regex kernel("no kernel for op kind '[^']*'[^:;]*");
    std::smatch m;
    if (std::regex_search(reason, m, kernel)) return m.str();
    std::string r = reason;
    r = std::regex_replace(r, std::regex(R"(/usr/share/libonnx-testdata/data/[^ :]*)"), "FILE");
    r = std::regex_replace(r, std::regex(R"(element \d+: .*)"), "values differ");
    r = std::regex_replace(r, std::regex(R"('[^']*')"), "'…'");
    r = std::regex_replace(r, std::regex(R"(#\d+)"), "#N");
    r = std::regex_replace(r, std::regex(R"(\[[0-9, ]*\])"), "[…]");
    r = std::regex_replace(r, std::regex(R"( \([0-9.]+ [KMGTPE]iB\))"), "");
    r = std::regex_replace(r, std::regex(R"(\b\d+\b(?!-d))"), "N");
    if (r.size() > 160) r = r.substr(0, 157) + "...";
    return r;
}

/// The op a node/ case tests: its model's first node's type (a `_expanded` case shares its
/// base case's op, since its graph is the function body).
std::string caseOp(const fs::path& dir, const std::string& suite) {
    if (suite != "node") return "(" + suite + ")";
    std::string name = dir.filename().string();
    fs::path model = dir / "model.onnx";
    const std::string expanded = "_expanded";
    if (name.size() > expanded.size() && name.ends_with(expanded)) {
        const fs::path base = dir.parent_path() / name.substr(0, name.size() - expanded.size()) / "model.onnx";
        if (fs::exists(base)) model = base;
    }
    std::ifstream in(model, std::ios::binary);
    onnx::ModelProto proto;
    if (!proto.ParseFromIstream(&in) || proto.graph().node_size() == 0) return "(unreadable)";
    return proto.graph().node(0).op_type();
}

/// Runs `graph` (0 source, else the final graph of that pipeline) of the case in `dir`; sets
/// `random` when the graph draws random values.
std::string runCase(const fs::path& dir, int graph, const std::vector<Tensor>& inputs,
                    const std::vector<Tensor>& expected, bool& random) {
    try {
        LoadedGraph loaded = loadGraphFile(dir / "model.onnx");
        if (graph > 0) Pipeline::builtin(kGraphs[graph]).run(*loaded.graph, nullptr);
        if (inputs.size() != loaded.graph->inputs().size())
            return std::to_string(inputs.size()) + " input_N.pb files, the graph takes " +
                   std::to_string(loaded.graph->inputs().size()) + " inputs";
        Executor exec(*loaded.graph, ExecOptions{DeviceChoice::Cpu});
        const std::string mismatch = allCloseMismatch(exec.run(inputs), expected, kRtol, kAtol);
        const auto ops = loaded.graph->opCounts();
        random = std::any_of(ops.begin(), ops.end(), [](const auto& kv) { return Op::isRandomKind(kv.first); });
        return mismatch.empty() || !random ? mismatch : mismatch + kRandomDraw;
    } catch (...) {
        std::string msg = currentExceptionMessage("conformance");
        return msg.empty() ? std::string("unknown error") : msg;
    }
}

/// expected_failures.txt: `CASE GRAPH[,GRAPH...]` lines; `#` comments (the reason of the group
/// that follows) and blank lines are ignored.
std::map<std::string, std::set<std::string>> readExpected(const fs::path& file) {
    std::map<std::string, std::set<std::string>> out;
    std::ifstream in(file);
    if (!in) throw Error(file.string() + ": cannot read");
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream ls(line);
        std::string name, graphs;
        if (!(ls >> name >> graphs))
            throw Error(file.string() + ":" + std::to_string(lineNo) + ": expected 'CASE GRAPH[,GRAPH...]'");
        std::stringstream gs(graphs);
        std::string g;
        while (std::getline(gs, g, ',')) {
            if (std::find(std::begin(kGraphs), std::end(kGraphs), g) == std::end(kGraphs))
                throw Error(file.string() + ":" + std::to_string(lineNo) + ": unknown graph '" + g + "'");
            out[name].insert(g);
        }
    }
    return out;
}

std::string graphsOf(const CaseResult& r) {
    std::string s;
    for (int g = 0; g < 3; ++g)
        if (!r.failure[g].empty()) s += (s.empty() ? "" : ",") + std::string(kGraphs[g]);
    return s;
}

/// The first failure's reason group of a case.
std::string firstReason(const CaseResult& r) {
    for (const auto& f : r.failure)
        if (!f.empty()) return reasonGroup(f);
    return {};
}

std::string expectedFileText(const std::vector<CaseResult>& results) {
    std::map<std::string, std::vector<const CaseResult*>> byReason;
    for (const CaseResult& r : results)
        if (!graphsOf(r).empty()) byReason[firstReason(r)].push_back(&r);
    std::ostringstream out;
    out << "# ONNX backend conformance cases that may fail (tests/tst_conformance.cpp), grouped by\n"
           "# reason. Format: CASE GRAPH[,GRAPH...]. A listed case that passes fails the test: remove it.\n";
    for (const auto& [reason, cases] : byReason) {
        out << "\n# " << reason << "\n";
        for (const CaseResult* r : cases) out << r->caseName << " " << graphsOf(*r) << "\n";
    }
    return out.str();
}

std::string tableText(const std::vector<CaseResult>& results) {
    struct Row {
        int cases = 0, pass[3] = {0, 0, 0};
        std::set<std::string> why;
    };
    std::map<std::string, Row> rows;
    int pass[3] = {0, 0, 0};
    for (const CaseResult& r : results) {
        Row& row = rows[r.op];
        ++row.cases;
        for (int g = 0; g < 3; ++g) {
            if (r.failure[g].empty()) {
                ++row.pass[g];
                ++pass[g];
            } else {
                row.why.insert(reasonGroup(r.failure[g]));
            }
        }
    }
    std::ostringstream out;
    out << "# ONNX backend conformance\n\n"
           "Results of the ONNX backend test suite (Debian package `libonnx-testdata` 1.12, installed by\n"
           "`scripts/install-deps.sh`, read from "
        << kDataDir
        << ": node/, simple/, pytorch-operator/,\n"
           "pytorch-converted/) on the CPU executor: each case's source graph, and the final graph of the\n"
           "`theano` and `cleanup` pipelines, compared with the case's output_N.pb as ONNX's backend runner\n"
           "does (same dtype and shape, rtol 1e-3, atol 1e-7). The test is `tst_conformance` (ctest label\n"
           "`conformance`); failures it accepts are listed in tests/conformance/expected_failures.txt.\n\n"
           "This file is generated; to regenerate it (and the expected-failures list) from a real run:\n\n"
           "    PASSLENS_CONFORMANCE_TABLE=docs/CONFORMANCE.md \\\n"
           "    PASSLENS_CONFORMANCE_EXPECTED=tests/conformance/expected_failures.txt build/tests/tst_conformance\n\n"
        << "Cases: " << results.size() << "; passing: source " << pass[0] << ", theano " << pass[1] << ", cleanup "
        << pass[2] << ".\n\n| op | cases | source | theano | cleanup | why not |\n|---|---|---|---|---|---|\n";
    for (const auto& [op, row] : rows) {
        std::string why;
        for (const std::string& w : row.why) why += (why.empty() ? "" : "; ") + w;
        for (char& c : why)
            if (c == '|') c = '/';
        out << "| " << op << " | " << row.cases << " | " << row.pass[0] << " | " << row.pass[1] << " | " << row.pass[2]
            << " | " << why << " |\n";
    }
    return out.str();
}

} // namespace

class TestConformance : public QObject {
    Q_OBJECT
private slots:
    void suite();
};

void TestConformance::suite() {
    std::error_code ec;
    QVERIFY2(fs::is_directory(fs::path(kDataDir) / "node", ec),
             "no ONNX test data under /usr/share/libonnx-testdata/data: run scripts/install-deps.sh (package "
             "libonnx-testdata)");
    const auto expected = readExpected(fs::path(PASSLENS_SOURCE_DIR) / "tests/conformance/expected_failures.txt");

    std::vector<CaseResult> results;
    for (const char* suite : kSuites) {
        std::vector<fs::path> dirs;
        for (const auto& e : fs::directory_iterator(fs::path(kDataDir) / suite))
            if (e.is_directory()) dirs.push_back(e.path());
        std::sort(dirs.begin(), dirs.end());
        for (const fs::path& dir : dirs) {
            CaseResult r;
            r.caseName = std::string(suite) + "/" + dir.filename().string();
            r.op = caseOp(dir, suite);
            std::vector<Tensor> inputs, outputs;
            std::string dataError;
            try {
                // the graph's input and output types say which files hold sequence or optional values
                const LoadedGraph loaded = loadGraphFile(dir / "model.onnx");
                std::vector<Type> inTypes, outTypes;
                for (const Variable* v : loaded.graph->inputs()) inTypes.push_back(v->type());
                for (const Variable* v : loaded.graph->outputs()) outTypes.push_back(v->type());
                inputs = readTensorDir(dir / "test_data_set_0", "input", inTypes);
                outputs = readTensorDir(dir / "test_data_set_0", "output", outTypes);
                if (outputs.empty()) dataError = "no output_N.pb in test_data_set_0";
            } catch (...) {
                dataError = currentExceptionMessage("conformance");
            }
            for (int g = 0; g < 3; ++g)
                r.failure[g] = dataError.empty() ? runCase(dir, g, inputs, outputs, r.random[g]) : dataError;
            results.push_back(std::move(r));
        }
    }

    int passed = 0, failed = 0, unexpected = 0, fixed = 0, chance = 0;
    for (const CaseResult& r : results) {
        const auto it = expected.find(r.caseName);
        for (int g = 0; g < 3; ++g) {
            const bool listed = it != expected.end() && it->second.count(kGraphs[g]);
            if (r.failure[g].empty()) {
                ++passed;
                if (listed && r.random[g]) {
                    // an unseeded draw (std::random_device) can equal the suite's NumPy draw (a
                    // Bernoulli of 10 values now and then): it stays listed, not "fixed"
                    ++chance;
                    std::cout << "CHANCE " << r.caseName << " " << kGraphs[g]
                              << ": a listed random draw matched the suite's values this time\n";
                } else if (listed) {
                    ++fixed;
                    std::cout << "FIXED " << r.caseName << " " << kGraphs[g]
                              << ": passes, remove it from expected_failures.txt\n";
                }
            } else {
                ++failed;
                if (!listed) ++unexpected;
                std::cout << (listed ? "fail " : "UNEXPECTED FAIL ") << r.caseName << " " << kGraphs[g] << ": "
                          << r.failure[g] << "\n";
            }
        }
    }
    int perGraph[3] = {0, 0, 0};
    for (const CaseResult& r : results)
        for (int g = 0; g < 3; ++g) perGraph[g] += r.failure[g].empty();
    std::cout << "per graph (of " << results.size() << " cases): source " << perGraph[0] << ", theano " << perGraph[1]
              << ", cleanup " << perGraph[2] << " passed\n";
    std::cout << passed << " passed, " << failed << " failed (" << unexpected << " not listed, " << fixed
              << " listed but passing, " << chance << " random draws matching by chance)\n";

    if (const char* f = std::getenv("PASSLENS_CONFORMANCE_EXPECTED")) writeFileAtomic(f, expectedFileText(results));
    if (const char* f = std::getenv("PASSLENS_CONFORMANCE_TABLE")) writeFileAtomic(f, tableText(results));

    QCOMPARE(results.size(), std::size_t(1072)); // 932 node, 23 simple, 35 pytorch-operator, 82 pytorch-converted
    QVERIFY2(unexpected == 0,
             "failures not listed in tests/conformance/expected_failures.txt (lines above: UNEXPECTED FAIL)");
    QVERIFY2(
        fixed == 0,
        "listed failures that now pass (lines above: FIXED): remove them from tests/conformance/expected_failures.txt");
}

QTEST_GUILESS_MAIN(TestConformance)
#include "tst_conformance.moc"
