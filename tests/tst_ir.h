#pragma once
// passlens_core IR: types, op interning and type rules, FunctionGraph edits, debugprint.
// The helpers and the test class of the one executable tst_ir, whose test functions are defined
// in tst_ir*.cpp.
#include <passlens/ir/DebugPrint.h>
#include <passlens/ir/Error.h>
#include <passlens/ir/FunctionGraph.h>
#include <passlens/ir/GraphSearch.h>
#include <passlens/ir/OpRegistry.h>
#include <passlens/ir/ScalarOps.h>
#include <passlens/ir/Subtensor.h>
#include <passlens/io/Encoding.h>
#include <passlens/io/Npy.h>
#include <passlens/onnx/OnnxTypes.h>

#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace passlens;
using json = nlohmann::json;

namespace {
template <class F> QString errorOf(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

inline Variable* scalarInt(FunctionGraph& g, std::int64_t v) {
    return g.addConstant(TensorData::fromInts(DType::Int64, {}, {v}));
}

// Records every observer callback as text.
struct Recorder : GraphObserver {
    QStringList log;
    void onImport(const FunctionGraph&, const Apply& n, std::string_view r) override {
        log << QString("import %1 %2").arg(n.id()).arg(QString::fromUtf8(r.data(), int(r.size())));
    }
    void onPrune(const FunctionGraph&, const Apply& n, std::string_view r) override {
        log << QString("prune %1 %2").arg(n.id()).arg(QString::fromUtf8(r.data(), int(r.size())));
    }
    void onChangeInput(const FunctionGraph&, const Apply* n, int i, const Variable&, const Variable&,
                       std::string_view r) override {
        log << QString("change %1:%2 %3").arg(n ? n->id() : -1).arg(i).arg(QString::fromUtf8(r.data(), int(r.size())));
    }
};

// `n` Elemwise{add} nodes, each of two earlier values (shared inputs everywhere), after an input
// x; the last is the output.
inline void addsOfEarlierValues(FunctionGraph& g, int n) {
    std::vector<Variable*> layer{g.addInput(Type::parse("float32[8]"), "x")};
    for (int i = 0; i < n; ++i) {
        Variable* a = layer[static_cast<std::size_t>(i) % layer.size()];
        Variable* b = layer[(static_cast<std::size_t>(i) * 7 + 3) % layer.size()];
        layer.push_back(g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {a, b}));
    }
    g.setOutputs({layer.back()});
}
} // namespace

class TestIr : public QObject {
    Q_OBJECT
private slots:
    void dtypeUpcast();
    void stringDType();
    void bfloat16DType();
    void typeParseAndPrint();
    void typesAreInterned();
    void emptyTagsReadAsObjects();
    void opsAreInterned();
    void elemwiseBroadcastAndUpcast();
    void scalarOpTableRows();
    void scalarExpressions();
    void pythonArithmetic();
    void subtensorResolution();
    void shapeRules();
    void blasConvPoolRules();
    void transfersAndGpuKinds();
    void gpuHostParams();
    void replaceAndPrune();
    void rejectedReplacementRollsBack();
    void cachedOrderMatchesAFreshSortAfterEdits();
    void patchedOrderMatchesAFreshSortAfterRandomEdits();
    void randomReplacementsKeepTheGraphAcyclic();
    void clientsEqualARecountAfterReplacementsAndRollbacks();
    void clientsKeepTheirAttachmentOrder();
    void fingerprintIsStructural();
    void debugprintTheanoFormat();
    void debugprintExpandsANodeCutEarlier();
    void debugprintIsLinearOnLargeGraphs();
    void longChainIsIterative();
    void findNodesRanksWholeWordsFirst();
};
