#pragma once
/// @file FunctionGraph.h
/// Variable, Apply and FunctionGraph: Theano's graph (theano/gof/graph.py, gof/fg.py). The graph
/// owns every variable and node it ever created; ids are stable and never reused, so a node keeps
/// its id across all phases of a pipeline and removed nodes stay addressable for provenance.
#include "passlens/ir/Op.h"
#include "passlens/ir/Tensor.h"
#include "passlens/ir/Type.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace passlens {

using NodeId = std::int64_t;
using VarId = std::int64_t;

class Apply;
class FunctionGraph;

/// A use of a variable: input `index` of `node`, or graph output `index` when node is nullptr
/// (Theano's 'output' client).
struct Client {
    Apply* node = nullptr;
    int index = 0;
    bool operator==(const Client&) const = default;
};

/// The uses of a variable in the order they were attached (Theano's var.clients: a new use goes
/// to the end, a removed one leaves the others in their order). Removing a use is O(1): it
/// leaves a hole that iteration skips, and the holes are squeezed out once they outnumber the
/// uses, so a variable with a million uses (a shared weight) costs no linear search per edit.
class ClientList {
public:
    /// Forward iterator over the uses, skipping holes.
    class const_iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Client;
        using difference_type = std::ptrdiff_t;
        using pointer = const Client*;
        using reference = const Client&;
        const_iterator() = default;
        const_iterator(const Client* p, const Client* end)
            : m_p(p)
            , m_end(end) {
            skip();
        }
        const Client& operator*() const { return *m_p; }
        const Client* operator->() const { return m_p; }
        const_iterator& operator++() {
            ++m_p;
            skip();
            return *this;
        }
        const_iterator operator++(int) {
            const_iterator t = *this;
            ++*this;
            return t;
        }
        bool operator==(const const_iterator& o) const { return m_p == o.m_p; }

    private:
        void skip() {
            while (m_p != m_end && m_p->index < 0) ++m_p;
        }
        const Client* m_p = nullptr;
        const Client* m_end = nullptr;
    };
    const_iterator begin() const { return {m_slots.data(), m_slots.data() + m_slots.size()}; }
    const_iterator end() const { return {m_slots.data() + m_slots.size(), m_slots.data() + m_slots.size()}; }
    /// Number of uses.
    std::size_t size() const { return m_live; }
    bool empty() const { return m_live == 0; }
    /// The oldest use; the list must not be empty.
    const Client& front() const { return *begin(); }
    /// The uses as a plain vector, in order.
    std::vector<Client> toVector() const { return {begin(), end()}; }

private:
    friend class FunctionGraph;
    std::vector<Client> m_slots; // uses and holes (index -1), in attachment order
    std::size_t m_live = 0;
};

/// Free-form tags of a variable or node (Theano's var.tag / node.tag): a JSON object, e.g.
/// {"target": "cpu"} from graph JSON. Reads as nlohmann::json's object interface. An empty tag
/// (nearly every one) holds no JSON object, so a graph of a million nodes and variables does not
/// allocate an empty object for each.
class Tag {
public:
    /// Sets the tag to `j` (an object); an empty object or null empties it.
    Tag& operator=(nlohmann::json j) {
        m_json = j.is_object() && j.empty() ? nlohmann::json() : std::move(j);
        return *this;
    }
    /// The tag as JSON: an empty object when the tag is empty.
    const nlohmann::json& json() const { return m_json.is_null() ? emptyObject() : m_json; }
    operator const nlohmann::json&() const { return json(); }
    bool empty() const { return m_json.empty(); }
    template <class Key> bool contains(Key&& key) const {
        return !m_json.is_null() && m_json.contains(std::forward<Key>(key));
    }
    /// nlohmann::json::value on the tag object: the member `key`, or the default.
    template <class... Args> auto value(Args&&... args) const { return json().value(std::forward<Args>(args)...); }
    /// The member `key` (added as null when absent), as nlohmann::json's operator[].
    template <class Key> nlohmann::json& operator[](Key&& key) {
        if (m_json.is_null()) m_json = nlohmann::json::object();
        return m_json[std::forward<Key>(key)];
    }
    /// The member `key`, which must exist (nlohmann::json's const operator[]).
    template <class Key> const nlohmann::json& operator[](Key&& key) const { return json()[std::forward<Key>(key)]; }
    bool operator==(const Tag& o) const { return json() == o.json(); }
    bool operator==(const nlohmann::json& j) const { return json() == j; }

private:
    static const nlohmann::json& emptyObject() {
        static const nlohmann::json empty = nlohmann::json::object();
        return empty;
    }
    nlohmann::json m_json; // null when empty
};

/// A value in the graph: a graph input, a constant, or output `index()` of `owner()`.
class Variable {
public:
    VarId id() const { return m_id; }
    const Type& type() const { return m_type; }
    const std::string& name() const { return m_name; }
    void setName(std::string name) { m_name = std::move(name); }
    Apply* owner() const { return m_owner; }
    int index() const { return m_index; }
    bool isConstant() const { return m_constant != nullptr; }
    bool isInput() const { return m_owner == nullptr && m_constant == nullptr; }
    const std::shared_ptr<const TensorData>& constant() const { return m_constant; }
    /// The uses of this variable by nodes in the graph and by graph outputs, oldest first.
    const ClientList& clients() const { return m_clients; }
    /// Display name: the name, or `<float32[?,4]>` for unnamed inputs, `Op.index` for outputs.
    std::string displayName() const;
    /// Free-form tags (Theano's var.tag), e.g. {"target": "cpu"} from graph JSON.
    Tag tag;

private:
    friend class FunctionGraph;
    VarId m_id = 0;
    Type m_type;
    std::string m_name;
    Apply* m_owner = nullptr;
    int m_index = 0;
    std::shared_ptr<const TensorData> m_constant;
    ClientList m_clients;
};

/// One application of an op to input variables, producing output variables.
class Apply {
public:
    NodeId id() const { return m_id; }
    const Op& op() const { return *m_op; }
    const std::vector<Variable*>& inputs() const { return m_inputs; }
    const std::vector<Variable*>& outputs() const { return m_outputs; }
    Variable* input(int i) const { return m_inputs[static_cast<std::size_t>(i)]; }
    Variable* output(int i = 0) const { return m_outputs[static_cast<std::size_t>(i)]; }
    int nin() const { return static_cast<int>(m_inputs.size()); }
    int nout() const { return static_cast<int>(m_outputs.size()); }
    /// Display name (ONNX node name); may be empty and need not be unique.
    const std::string& name() const { return m_name; }
    /// True while the node is part of its graph (imported and not pruned).
    bool inGraph() const { return m_inGraph; }
    /// Free-form tags (Theano's node.tag), e.g. {"provenance": "make_node"} on a node that
    /// building another node inserted (see MakeNode.h).
    Tag tag;

private:
    friend class FunctionGraph;
    NodeId m_id = 0;
    const Op* m_op = nullptr;
    std::vector<Variable*> m_inputs;
    std::vector<Variable*> m_outputs;
    std::vector<std::uint32_t> m_clientSlots; // per input: its use's place in the input's ClientList
    std::string m_name;
    bool m_inGraph = false;
};

/// Listener of graph edits (Theano's Feature callbacks, gof/toolbox.py). `reason` is the rewrite
/// or pass that caused the edit ("GraphToGPU", "local_cut_gpu_transfers", "init").
/// The edits of a replace / replaceAllValidate are delivered when it commits, in the order they
/// were made; a replacement that is rolled back delivers nothing (it left no trace).
class GraphObserver {
public:
    virtual ~GraphObserver() = default;
    virtual void onImport(const FunctionGraph&, const Apply&, std::string_view /*reason*/) {}
    virtual void onPrune(const FunctionGraph&, const Apply&, std::string_view /*reason*/) {}
    /// Input `index` of `node` (or graph output `index` when node is nullptr) changed.
    virtual void onChangeInput(const FunctionGraph&, const Apply* /*node*/, int /*index*/, const Variable& /*oldVar*/,
                               const Variable& /*newVar*/, std::string_view /*reason*/) {}
    virtual void onReplace(const FunctionGraph&, const Variable& /*oldVar*/, const Variable& /*newVar*/,
                           std::string_view /*reason*/) {}
};

/// A graph between inputs and outputs (Theano's FunctionGraph). Only nodes reachable from the
/// outputs belong to it. All traversals are iterative (chains of 100,000 nodes are fine).
class FunctionGraph {
public:
    FunctionGraph();
    ~FunctionGraph();
    FunctionGraph(const FunctionGraph&) = delete;
    FunctionGraph& operator=(const FunctionGraph&) = delete;

    std::string name;       ///< display name (graph JSON name, ONNX graph name)
    std::string sourcePath; ///< file it came from, for messages

    // ---- building ----
    /// A new graph input.
    Variable* addInput(Type type, std::string name = {});
    /// A new constant (not an input). The type's dtype and dims must match the data.
    Variable* addConstant(std::shared_ptr<const TensorData> data, std::string name = {},
                          std::optional<Location> loc = std::nullopt);
    /// Creates a node that is not yet part of the graph (it joins when it becomes reachable from
    /// an output through setOutputs or replace). Output types come from the op's type rule;
    /// `outputTypes`, when given, are checked against the rule (passlens::Error "type mismatch")
    /// and merged, and are required for ops without a type rule (Onnx ops). Throws
    /// passlens::Error for a wrong number of inputs or a failing type rule.
    Apply* makeApply(const Op& op, std::vector<Variable*> inputs,
                     std::optional<std::vector<Type>> outputTypes = std::nullopt, std::string name = {});
    /// Convenience: makeApply(...)->output(0).
    Variable* apply(const Op& op, std::vector<Variable*> inputs, std::string name = {});
    /// Narrows a variable's type to `type` merged with the current one (importers use it to take
    /// static dims from ONNX shape inference). Only for variables not yet in the graph. Throws
    /// passlens::Error when the two types are not compatible.
    void refineType(Variable* v, const Type& type);
    /// Ids for the next node and the next variables created (rebuilding a recorded graph from a
    /// session file). Each id must be unused; skipped ids stay empty. Throws passlens::Error for
    /// an id already in use.
    void hintNextIds(NodeId node, std::vector<VarId> vars);
    /// Sets the graph outputs and imports every node reachable from them (reason "init").
    void setOutputs(std::vector<Variable*> outputs);

    // ---- reading ----
    const std::vector<Variable*>& inputs() const { return m_inputs; }
    const std::vector<Variable*>& outputs() const { return m_outputs; }
    /// Nodes currently in the graph, in topological order: Theano's io_toposort, a depth-first
    /// walk from the outputs, inputs in order. Cached; a replacement that only substitutes a node
    /// by one with the same inputs, folds nodes into constants or merges a node into an earlier
    /// twin patches the cached order in place (the order a new sort would give), any other edit
    /// sorts again on the next call.
    const std::vector<Apply*>& toposort() const;
    /// Number of nodes currently in the graph.
    std::size_t nodeCount() const { return m_liveNodes; }
    /// Node or variable by id (also removed ones); nullptr if the id was never created here.
    Apply* node(NodeId id) const;
    Variable* variable(VarId id) const;
    /// Ids handed out so far (the next id is this value).
    NodeId nodeIdLimit() const { return static_cast<NodeId>(m_nodes.size()); }
    VarId varIdLimit() const { return static_cast<VarId>(m_vars.size()); }
    /// Constants used by nodes in the graph, in first-use order.
    std::vector<Variable*> constants() const;
    /// Structural 64-bit fingerprint: op keys, wiring, types, input order and constant contents;
    /// independent of ids and names. Equal graphs give equal fingerprints.
    std::uint64_t fingerprint() const;
    /// Count of nodes per op kind.
    std::map<std::string, int> opCounts() const;

    // ---- mutation (the only ways to edit) ----
    /// Replaces every use of `var` by `newVar` (Theano's fgraph.replace): imports newVar's new
    /// nodes, prunes nodes left without clients, notifies observers. Throws ReplacementError
    /// (graph rolled back) when the types are not compatible or a cycle would be created.
    void replace(Variable* var, Variable* newVar, std::string_view reason);
    /// Replaces all pairs, then validates; on any failure rolls back completely (same
    /// fingerprint as before) and throws ReplacementError with the reason (Theano's
    /// ReplaceValidate.replace_all_validate).
    /// `mustRemove`: nodes that must no longer be in the graph afterwards (Theano's
    /// replace_all_validate_remove); a survivor rejects the whole replacement.
    void replaceAllValidate(const std::vector<std::pair<Variable*, Variable*>>& pairs, std::string_view reason,
                            const std::vector<const Apply*>& mustRemove = {});
    /// Full validation: acyclic, one producer per variable, input types equal to producers'
    /// types. Throws ReplacementError naming the problem.
    void validate() const;

    void addObserver(GraphObserver* observer);
    void removeObserver(GraphObserver* observer);

    // ---- copying ----
    /// A copy of the graph as it is now, with the same ids, names, tags, types, ops and constant
    /// data (shared): its inputs, the constants its nodes use, its nodes in topological order
    /// and its outputs; removed nodes and observers are not copied. Equal fingerprint.
    std::unique_ptr<FunctionGraph> clone() const;
    /// An exact copy: every variable and node ever created here, the removed ones too (with the
    /// inputs they had when removed, still addressable by id), uses in the same order, the same
    /// ids, names, tags and constant data (shared); observers are not copied. The same edits made
    /// on the copy and on this graph give the same graphs (Trace::graphAfter continues a replay
    /// from a kept step this way; clone() forgets removed nodes, which a replay looks up).
    /// Throws passlens::Error inside a replacement.
    std::unique_ptr<FunctionGraph> copyWithHistory() const;

private:
    struct UndoEntry;
    struct PendingEvent;
    class Transaction;
    /// Delivers `e` to the observers now (outside a transaction) or at the commit.
    void notify(PendingEvent e);
    void deliver(const PendingEvent& e);
    void importVar(Variable* v, std::string_view reason);
    /// Attaches / detaches the use `c` of `v` (graph output when c.node is nullptr), O(1).
    void addClient(Variable* v, Client c);
    void removeClient(Variable* v, Client c);
    std::uint32_t& clientSlot(Client c);
    void changeInput(Apply* node, int index, Variable* newVar, std::string_view reason);
    void pruneIfUnused(Apply* node, std::string_view reason);
    void checkNoCycle(Variable* var, Variable* newVar) const;
    void computeRanks() const;
    double rankOf(const Variable* v) const;
    void rollback(std::size_t mark);
    void clearUndo();
    void invalidate() { m_topoValid = false; }
    NodeId allocNodeId();
    VarId allocVarId();
    Variable* placeVar(std::unique_ptr<Variable> v);
    NodeId m_hintNode = -1;
    std::vector<VarId> m_hintVars;

    std::vector<std::unique_ptr<Variable>> m_vars;
    std::vector<std::unique_ptr<Apply>> m_nodes;
    std::vector<Variable*> m_inputs;
    std::vector<Variable*> m_outputs;
    std::vector<std::uint32_t> m_outputSlots; // per graph output: its use's place in the ClientList
    std::vector<GraphObserver*> m_observers;
    std::vector<UndoEntry> m_undo;
    std::vector<PendingEvent> m_pending; // edits of the open transaction, delivered at commit
    bool m_recording = false;
    std::size_t m_liveNodes = 0;
    // Topological ranks of in-graph nodes (by node id), kept valid across replacements so the
    // cycle check only searches the region between a replacement's inputs and its clients.
    mutable std::vector<double> m_rank;
    mutable bool m_ranksValid = false;
    mutable double m_pendingUpper = 0;
    std::vector<std::uint32_t> m_mark; // per node id: epoch of the last visit (importVar)
    std::uint32_t m_epoch = 0;
    /// Keeps the cached order valid across the replacement logged from undo entry `mark` on when
    /// the sort would give that order with nodes substituted or removed in place; false when a
    /// sort is needed (see the definition).
    bool patchOrder(std::size_t mark);
    // The order of the last sort, kept across the replacements patchOrder accepts: a substituted
    // node takes its predecessor's place, a removed one leaves a hole (nullptr), so places stay
    // put; m_topoView is the order without the holes, built when asked for.
    mutable std::vector<Apply*> m_topo;
    mutable std::vector<std::uint32_t> m_topoPos; // per node id: its place in m_topo
    mutable std::vector<Apply*> m_topoView;
    mutable std::size_t m_topoHoles = 0;
    mutable bool m_topoViewStale = false;
    mutable bool m_topoValid = false;
    mutable std::uint64_t m_topoGeneration = 0; // counts the sorts, so a rollback knows m_topo is still its own
};

} // namespace passlens
