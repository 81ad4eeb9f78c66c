// Grouping by name scope (ScopeGroups.h): the scope of a name, the scope unnamed nodes inherit,
// which boxes a drawing gets for which open scopes, merged edges, diffs, and the CLI's
// `render --group-scopes` on a corpus model.
#include <passlens/diff/GraphDiff.h>
#include <passlens/ir/FunctionGraph.h>
#include <passlens/layout/DotWriter.h>
#include <passlens/layout/DrawGraph.h>
#include <passlens/layout/ScopeGroups.h>

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

using namespace passlens;

namespace {

const Op& elemwise(const char* scalar) { return Op::get("Elemwise", {{"scalar", scalar}}); }

// x -> /enc/l0/Mul -> /enc/l0/Add -> (unnamed) Exp -> /enc/l1/Mul -> /enc/l1/Tanh -> /head/Neg -> y
// and /enc/l0/Add also feeds /head/Neg's sibling /head/Sub (two edges from /enc/l0 to /head).
struct Scoped {
    std::unique_ptr<FunctionGraph> g;
    std::map<std::string, NodeId> id; // by node name ("exp" for the unnamed one)
};

Scoped scopedGraph() {
    Scoped s;
    s.g = std::make_unique<FunctionGraph>();
    FunctionGraph& g = *s.g;
    Variable* x = g.addInput(Type::parse("float32[2,4]"), "x");
    auto op = [&](const char* scalar, std::vector<Variable*> in, const std::string& name) {
        Variable* v = g.apply(elemwise(scalar), std::move(in), name);
        s.id[name.empty() ? std::string("exp") : name] = v->owner()->id();
        return v;
    };
    Variable* a = op("mul", {x, x}, "/enc/l0/Mul");
    Variable* b = op("add", {a, x}, "/enc/l0/Add");
    Variable* e = op("exp", {b}, "");
    Variable* c = op("mul", {e, e}, "/enc/l1/Mul");
    Variable* d = op("tanh", {c}, "/enc/l1/Tanh");
    Variable* y = op("add", {d, b}, "/head/Add");
    Variable* z = op("sub", {y, b}, "/head/Sub");
    z->setName("y");
    g.setOutputs({z});
    return s;
}

const DrawNode* byKey(const DrawGraph& g, const std::string& key) {
    const int i = g.indexOf(key);
    return i < 0 ? nullptr : &g.nodes[static_cast<std::size_t>(i)];
}

const DrawNode* groupOf(const DrawGraph& g, const std::string& scope) {
    for (const DrawNode& n : g.nodes)
        if (n.category == NodeCategory::Group && n.name == scope) return &n;
    return nullptr;
}

std::vector<std::string> groupScopes(const DrawGraph& g) {
    std::vector<std::string> v;
    for (const DrawNode& n : g.nodes)
        if (n.category == NodeCategory::Group) v.push_back(n.name);
    std::sort(v.begin(), v.end());
    return v;
}

// Occurrences of `needle` in `text`.
int countOf(const std::string& text, const std::string& needle) {
    int n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

int edgesBetween(const DrawGraph& g, const std::string& tail, const std::string& head) {
    return static_cast<int>(std::count_if(g.edges.begin(), g.edges.end(),
                                          [&](const DrawEdge& e) { return e.tail == tail && e.head == head; }));
}

} // namespace

class TestScopes : public QObject {
    Q_OBJECT

private slots:
    void nameScopes() {
        QCOMPARE(nameScope("/conv1/Conv"), std::string("/conv1"));
        QCOMPARE(nameScope("/encoder/layer.0/attn/MatMul"), std::string("/encoder/layer.0/attn"));
        QCOMPARE(nameScope("/Add"), std::string());
        QCOMPARE(nameScope("Conv_3"), std::string());
        QCOMPARE(nameScope(""), std::string());
        QCOMPARE(nameScope("//features/features.0/Conv"), std::string("//features/features.0"));
        QCOMPARE(nameScope("a/b//c"), std::string("a/b"));
        QCOMPARE(parentScope("/encoder/layer.0"), std::string("/encoder"));
        QCOMPARE(parentScope("/encoder"), std::string());
    }

    void unnamedNodesInheritTheirProducersScope() {
        const Scoped s = scopedGraph();
        const DrawGraph d = drawGraph(*s.g);
        const std::vector<std::string> scopes = nodeScopes(d);
        QCOMPARE(scopes.size(), d.nodes.size());
        auto scopeOf = [&](const std::string& name) {
            return scopes[static_cast<std::size_t>(d.indexOf("n" + std::to_string(s.id.at(name))))];
        };
        QCOMPARE(scopeOf("/enc/l0/Mul"), std::string("/enc/l0"));
        QCOMPARE(scopeOf("exp"), std::string("/enc/l0")); // its producer /enc/l0/Add
        QCOMPARE(scopeOf("/head/Sub"), std::string("/head"));
        QCOMPARE(scopes[static_cast<std::size_t>(d.indexOf(d.nodes.front().key))], std::string()); // the input
        const auto sizes = scopeSizes(d);
        QCOMPARE(sizes.at("/enc"), std::size_t(5));
        QCOMPARE(sizes.at("/enc/l0"), std::size_t(3));
        QCOMPARE(sizes.at("/enc/l1"), std::size_t(2));
        QCOMPARE(sizes.at("/head"), std::size_t(2));
        QCOMPARE(sizes.size(), std::size_t(4));
    }

    void closedScopesAreOneBoxWithMergedEdges() {
        const Scoped s = scopedGraph();
        const DrawGraph d = drawGraph(*s.g);
        const DrawGraph top = groupByScope(d);
        QCOMPARE(groupScopes(top), (std::vector<std::string>{"/enc", "/head"}));
        // input x, the two boxes, output y: nothing else
        QCOMPARE(top.nodes.size(), std::size_t(4));
        const DrawNode* enc = groupOf(top, "/enc");
        const DrawNode* head = groupOf(top, "/head");
        QVERIFY(enc && head);
        QCOMPARE(enc->hiddenCount, std::size_t(5));
        QCOMPARE(enc->title, std::string("enc/"));
        QVERIFY(enc->subtitle.find("5 nodes") != std::string::npos);
        QCOMPARE(enc->scope, std::string());
        // /enc -> /head: /enc/l1/Tanh -> /head/Add, /enc/l0/Add -> /head/Add and -> /head/Sub: one edge, "×3"
        QCOMPARE(edgesBetween(top, enc->key, head->key), 1);
        const auto e = std::find_if(top.edges.begin(), top.edges.end(),
                                    [&](const DrawEdge& x) { return x.tail == enc->key && x.head == head->key; });
        QCOMPARE(e->label, std::string("\xC3\x97"
                                       "3"));
        // x feeds /enc twice (Mul's two inputs and Add's second): one edge; no edge inside a box
        QCOMPARE(edgesBetween(top, top.nodes.front().key, enc->key), 1);
        QCOMPARE(edgesBetween(top, enc->key, enc->key), 0);
        QCOMPARE(top.edges.size(), std::size_t(3)); // x -> /enc, /enc -> /head, /head -> y
        // the same scope gets the same key in another drawing (stable layouts keep the box)
        QCOMPARE(groupByScope(drawGraph(*s.g)).nodes[1].key, top.nodes[1].key);
    }

    void openScopesShowTheirChildren() {
        const Scoped s = scopedGraph();
        const DrawGraph d = drawGraph(*s.g);
        ScopeGrouping open;
        open.expanded = {"/enc"};
        const DrawGraph g = groupByScope(d, open);
        QCOMPARE(groupScopes(g), (std::vector<std::string>{"/enc/l0", "/enc/l1", "/head"}));
        const DrawNode* l0 = groupOf(g, "/enc/l0");
        QCOMPARE(l0->hiddenCount, std::size_t(3)); // Mul, Add and the unnamed Exp
        QCOMPARE(l0->scope, std::string("/enc"));
        QCOMPARE(edgesBetween(g, l0->key, groupOf(g, "/enc/l1")->key), 1);
        // every scope open: the plain drawing, each node in its scope
        open.expanded = {"/enc", "/enc/l0", "/enc/l1", "/head"};
        const DrawGraph all = groupByScope(d, open);
        QCOMPARE(all.nodes.size(), d.nodes.size());
        QCOMPARE(all.edges.size(), d.edges.size());
        QCOMPARE(byKey(all, "n" + std::to_string(s.id.at("/enc/l1/Tanh")))->scope, std::string("/enc/l1"));
    }

    void revealedNodesOpenTheirScopes() {
        const Scoped s = scopedGraph();
        ScopeGrouping open;
        open.reveal = {s.id.at("/enc/l1/Tanh")};
        const DrawGraph g = groupByScope(drawGraph(*s.g), open);
        QVERIFY(byKey(g, "n" + std::to_string(s.id.at("/enc/l1/Tanh"))));
        QCOMPARE(groupScopes(g), (std::vector<std::string>{"/enc/l0", "/head"}));
    }

    void aLoneScopeOpensByItself() {
        // everything under /model: the first picture shows /model's children, not one box
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[4]"), "x");
        Variable* a = g.apply(elemwise("exp"), {x}, "/model/a/Exp");
        Variable* b = g.apply(elemwise("neg"), {a}, "/model/a/Neg");
        Variable* c = g.apply(elemwise("tanh"), {b}, "/model/b/Tanh");
        Variable* d = g.apply(elemwise("sqr"), {c}, "/model/b/Sqr");
        g.setOutputs({d});
        const DrawGraph drawn = drawGraph(g);
        QCOMPARE(groupScopes(groupByScope(drawn)), (std::vector<std::string>{"/model/a", "/model/b"}));
        ScopeGrouping shut;
        shut.openLoneScopes = false;
        QCOMPARE(groupScopes(groupByScope(drawn, shut)), (std::vector<std::string>{"/model"}));
        // no scopes at all: the drawing is returned as it is
        FunctionGraph plain;
        Variable* p = plain.addInput(Type::parse("float32[4]"), "p");
        plain.setOutputs({plain.apply(elemwise("exp"), {p}, "Exp_0")});
        const DrawGraph pd = drawGraph(plain);
        QCOMPARE(groupByScope(pd).nodes.size(), pd.nodes.size());
    }

    void diffsCountTheChangesInsideABox() {
        const Scoped s = scopedGraph();
        // the same graph with one more node in /head (ids of the shared nodes stay the same)
        FunctionGraph g;
        Variable* x = g.addInput(Type::parse("float32[2,4]"), "x");
        Variable* a = g.apply(elemwise("mul"), {x, x}, "/enc/l0/Mul");
        Variable* b = g.apply(elemwise("add"), {a, x}, "/enc/l0/Add");
        Variable* e = g.apply(elemwise("exp"), {b});
        Variable* c = g.apply(elemwise("mul"), {e, e}, "/enc/l1/Mul");
        Variable* d = g.apply(elemwise("tanh"), {c}, "/enc/l1/Tanh");
        Variable* y = g.apply(elemwise("add"), {d, b}, "/head/Add");
        Variable* z = g.apply(elemwise("sub"), {y, b}, "/head/Sub");
        g.setOutputs({g.apply(elemwise("neg"), {z}, "/head/Neg")});
        const GraphDiff gd = diff(*s.g, g);
        const DrawGraph dd = drawDiff(*s.g, g, gd);
        const DrawGraph grouped = groupByScope(dd);
        const DrawNode* head = groupOf(grouped, "/head");
        const DrawNode* enc = groupOf(grouped, "/enc");
        QVERIFY(head && enc);
        QCOMPARE(head->hiddenCount, std::size_t(3));
        QCOMPARE(head->change, NodeChange::Rewired); // one of three added: changed, not all new
        QVERIFY(head->seed);
        QVERIFY2(head->detail.rfind("1 added", 0) == 0, head->detail.c_str());
        QCOMPARE(enc->change, NodeChange::Unchanged);
        QCOMPARE(enc->detail, std::string());
        QVERIFY(!enc->seed);
        QVERIFY(grouped.isDiff);
        // a box whose members are all new is drawn as added
        FunctionGraph bigger;
        Variable* bx = bigger.addInput(Type::parse("float32[2,4]"), "x");
        Variable* p = bigger.apply(elemwise("exp"), {bx}, "Exp_0");
        Variable* q = bigger.apply(elemwise("neg"), {p}, "/new/Neg");
        bigger.setOutputs({bigger.apply(elemwise("tanh"), {q}, "/new/Tanh")});
        FunctionGraph small;
        Variable* sx = small.addInput(Type::parse("float32[2,4]"), "x");
        small.setOutputs({small.apply(elemwise("exp"), {sx}, "Exp_0")});
        const DrawGraph added = groupByScope(drawDiff(small, bigger, diff(small, bigger)));
        QVERIFY(groupOf(added, "/new"));
        QCOMPARE(groupOf(added, "/new")->change, NodeChange::Added);
        QCOMPARE(groupOf(added, "/new")->detail, std::string("2 added"));
    }

    void manyConsumersAreDrawnAsStubs() {
        // w -> (unnamed) Exp read by twelve blocks /s/bK/Mul in a chain: a weight's transfer
        FunctionGraph g;
        Variable* h = g.addInput(Type::parse("float32[4]"), "x");
        Variable* w = g.addInput(Type::parse("float32[4]"), "w");
        Variable* shared = g.apply(elemwise("exp"), {w});
        std::vector<NodeId> blocks;
        for (int k = 0; k < 12; ++k) {
            h = g.apply(elemwise("mul"), {h, shared}, "/s/b" + std::to_string(k) + "/Mul");
            h = g.apply(elemwise("tanh"), {h}, "/s/b" + std::to_string(k) + "/Tanh");
            blocks.push_back(h->owner()->id());
        }
        g.setOutputs({h});
        const DrawGraph d = drawGraph(g);
        const std::string sharedKey = "n" + std::to_string(shared->owner()->id());
        // the consumers' common scope, not the first consumer's
        QCOMPARE(nodeScopes(d)[static_cast<std::size_t>(d.indexOf(sharedKey))], std::string("/s"));

        ScopeGrouping open;
        open.expanded = {"/s"}; // twelve boxes /s/bK in a chain, the transfer between them
        const DrawGraph top = groupByScope(d, open);
        QCOMPARE(groupScopes(top).size(), std::size_t(12));
        const DrawNode* original = byKey(top, sharedKey);
        QVERIFY(original && original->stubOf.empty());
        std::vector<const DrawNode*> stubs;
        for (const DrawNode& n : top.nodes)
            if (!n.stubOf.empty()) stubs.push_back(&n);
        QCOMPARE(stubs.size(), std::size_t(11)); // one per box but the first
        for (const DrawNode* stub : stubs) {
            QCOMPARE(stub->stubOf, sharedKey);
            QCOMPARE(stub->node, shared->owner()->id());
            QCOMPARE(stub->title, original->title);
            QCOMPARE(stub->scope, std::string("/s"));
            // one edge out of each stub, into the box it stands beside, with weight 1 (so that
            // dot ranks the stub just above its box: a weightless edge may stay long)
            int out = 0;
            for (const DrawEdge& e : top.edges)
                if (e.tail == stub->key) {
                    ++out;
                    QVERIFY(e.fromStub);
                    QVERIFY(groupOf(top, "/s/b0")->key != e.head);
                }
            QCOMPARE(out, 1);
        }
        QCOMPARE(edgesBetween(top, sharedKey, groupOf(top, "/s/b0")->key), 1); // the first box: the node itself
        for (int k = 1; k < 12; ++k)
            QCOMPARE(edgesBetween(top, sharedKey, groupOf(top, "/s/b" + std::to_string(k))->key), 0);
        const std::string dot = writeDot(top);
        QCOMPARE(static_cast<int>(
                     std::count_if(top.edges.begin(), top.edges.end(), [](const DrawEdge& e) { return e.fromStub; })),
                 11);
        QCOMPARE(countOf(dot, "weight=1"), 11);
        QVERIFY(dot.find("weight=0") == std::string::npos);

        // below the threshold nothing changes
        const DrawGraph few = stubFanOut(d, 13);
        QCOMPARE(few.nodes.size(), d.nodes.size());
        QCOMPARE(few.edges.size(), d.edges.size());
    }

    void cliRendersGroups() {
#ifndef PASSLENS_CLI
        QSKIP("passlens-cli is not built (PASSLENS_GUI=OFF builds it too; check the build)");
#else
        const QString model = QStringLiteral(PASSLENS_CORPUS_DIR "/resnet18.onnx");
        if (!QFileInfo::exists(model)) QSKIP("corpus not present");
        QTemporaryDir dir;
        QProcess p;
        p.start(QStringLiteral(PASSLENS_CLI), {"render", model, "--phase", "source", "--group-scopes", "--json",
                                               "--format", "dot", "-o", dir.filePath("r.dot")});
        QVERIFY(p.waitForFinished(600000));
        QCOMPARE(p.exitCode(), 0);
        const auto j = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        std::map<std::string, std::size_t> groups;
        for (const auto& g : j.at("scope_groups")) groups[g.at("scope")] = g.at("nodes");
        // torchvision's resnet18: /layer1../layer4 hold two BasicBlocks of 5-7 ops each
        for (const char* layer : {"/layer1", "/layer2", "/layer3", "/layer4"}) QVERIFY2(groups.count(layer), layer);
        // a BasicBlock: two Convs, each imported as conv + bias DimShuffle + add with its W and b
        // constants (5 boxes), two Relus and the Add: 13; /layer1 holds two blocks
        QCOMPARE(groups.at("/layer1"), std::size_t(26));
        QCOMPARE(groups.at("/conv1"), std::size_t(5));
        p.start(QStringLiteral(PASSLENS_CLI), {"render", model, "--phase", "source", "--group-scopes", "--open-scope",
                                               "/layer1", "--json", "--format", "dot", "-o", dir.filePath("o.dot")});
        QVERIFY(p.waitForFinished(600000));
        QCOMPARE(p.exitCode(), 0);
        const auto k = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        std::set<std::string> opened;
        for (const auto& g : k.at("scope_groups")) opened.insert(g.at("scope"));
        QVERIFY(opened.count("/layer1/layer1.0") && opened.count("/layer1/layer1.1") && !opened.count("/layer1"));
#endif
    }
};

QTEST_GUILESS_MAIN(TestScopes)
#include "tst_scopes.moc"
