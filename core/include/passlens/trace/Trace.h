#pragma once
/// @file Trace.h
/// What the debugger records of an optimization run (ARCHITECTURE.md core/trace): the source
/// graph, one record per phase, one event per applied / rejected (and, with reasons, declined)
/// rewrite with the nodes it added and removed and the variables it replaced, and provenance.
/// The graph after any event is rebuilt from the source and the events. Saved and reopened as a
/// session file (io/SessionFile.h: docs/SESSION_FORMAT.md, or FORMAT.md §2's JSON sessions).
#include "passlens/gpu/LiftReasons.h"
#include "passlens/pipeline/Pipeline.h"
#include "passlens/rewrite/Instrumentation.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

/// A node created by a rewrite, as recorded (enough to recreate it with the same ids).
struct NodeDef {
    NodeId id = -1;
    const Op* opPtr = nullptr; ///< the interned op (kind, attributes, nested graphs); set in every record
    std::vector<VarId> inputs;
    struct Out {
        VarId id;
        Type type;
        std::string name;
    };
    std::vector<Out> outputs;
    std::string name;
    /// The node's tag (source nodes: make_node provenance); null when it has none, so the
    /// records of a large graph hold no empty JSON object each.
    nlohmann::json tag;
};

/// A constant created by a rewrite (constant folding, gemm merges).
struct ConstantDef {
    VarId id = -1;
    std::string name;
    Location location;
    std::shared_ptr<const TensorData> data;
};

/// What became of a rewrite attempt. The values are the compact session format's codes
/// (docs/SESSION_FORMAT.md).
enum class EventStatus : std::uint8_t {
    Applied = 0,  ///< its replacement committed
    Rejected = 1, ///< its replacement failed validation and was rolled back
    Declined = 2, ///< it did not match (recorded only with reasons, `--reasons`)
};

/// The status's name in session files, reports and the window: "applied", "rejected" or
/// "declined".
const char* statusName(EventStatus s);
/// The status named `name` (as statusName writes it), or std::nullopt.
std::optional<EventStatus> parseStatus(std::string_view name);

struct RewriteEvent {
    int seq = 0; ///< 1-based
    std::string phase;
    std::string rewriter;
    EventStatus status = EventStatus::Applied;
    NodeId node = -1; ///< the matched node (-1 for whole-graph rewrites)
    std::vector<NodeId> removed, added;
    std::vector<std::pair<VarId, VarId>> replaced;
    std::string reason; ///< rejection error or decline reason
    double timeUs = 0;
    std::vector<NodeDef> nodes;         ///< definitions of `added`, in import order
    std::vector<ConstantDef> constants; ///< constants the event introduced
};

/// Event seq per node id (Trace::createdBy / removedBy): a flat array for the ids a graph hands
/// out (0, 1, 2, ...: 4 bytes per id instead of a tree node each), an ordered map for ids far
/// beyond the entries (a session file may name any id), so memory stays proportional to them.
class SeqByNode {
public:
    /// Lets ids below `limit` be kept in the flat array (the recorder: the graph's id limit; a
    /// session reader: a bound proportional to what it read).
    void allowDense(std::size_t limit) { m_denseLimit = std::max(m_denseLimit, limit); }
    /// Records `seq` for `id` (a later call for the same id wins).
    void set(NodeId id, int seq);
    /// The seq recorded for `id`, or 0.
    int get(NodeId id) const;
    void clear();

private:
    std::vector<int> m_dense;
    std::map<NodeId, int> m_sparse;
    std::size_t m_denseLimit = 0;
};

struct PhaseRecord {
    PhaseInfo info;
    bool changed = false;
    double timeUs = 0;
    std::size_t nodesBefore = 0, nodesAfter = 0;
    int firstEvent = 0, lastEvent = 0; ///< applied/rejected events seq range [first, last]; 0 if none
    std::vector<std::pair<std::string, RewriterStats>> rewriters;
};

class Trace final : public Instrumentation {
public:
    /// `recordDeclined`: keep declined attempts with their reasons (`--reasons`).
    explicit Trace(bool recordDeclined = false)
        : m_recordDeclined(recordDeclined) {}

    // ---- recording (Instrumentation) ----
    void pipelineBegin(std::string_view name, const FunctionGraph& g) override;
    void phaseBegin(const PhaseInfo& p, const FunctionGraph& g) override;
    void phaseEnd(const PhaseInfo& p, const FunctionGraph& g, bool changed, double timeUs) override;
    bool wantsReasons() const override { return m_recordDeclined; }
    void rewriteDeclined(std::string_view rewriter, const Apply* node, const std::string& reason) override;
    void rewriteApplied(std::string_view rewriter, const Apply* node, const Replacement& r, double timeUs) override;
    void rewriteRejected(std::string_view rewriter, const Apply* node, const std::string& error) override;
    void onImport(const FunctionGraph&, const Apply& n, std::string_view reason) override;
    void onPrune(const FunctionGraph&, const Apply& n, std::string_view reason) override;
    void onReplace(const FunctionGraph&, const Variable& a, const Variable& b, std::string_view reason) override;

    /// Fills phase statistics and the lifting report after the run.
    void finish(const PipelineRun& run, const FunctionGraph& finalGraph, const GpuCapabilities& caps);

    // ---- reading ----
    const std::vector<RewriteEvent>& events() const { return m_events; }
    const std::vector<PhaseRecord>& phases() const { return m_phases; }
    const std::vector<LiftingEntry>& lifting() const { return m_lifting; }
    const std::string& pipelineName() const { return m_pipeline; }
    /// Event seq (1-based, applied or rejected) that created / removed a node; 0 = source graph
    /// or never removed.
    int createdBy(NodeId id) const;
    int removedBy(NodeId id) const;
    /// Index of the last applied event at or before the end of phase `phaseIndex`.
    int lastEventOfPhase(std::size_t phaseIndex) const;
    /// Number of applied events.
    int appliedCount() const;

    /// The source graph (as loaded), with its ids.
    std::unique_ptr<FunctionGraph> sourceGraph() const;
    /// The graph right after event `seq` (0: the source graph). Rejected and declined events
    /// change nothing. Throws passlens::Error if the events do not replay (a corrupt session).
    std::unique_ptr<FunctionGraph> graphAfter(int seq) const;
    /// The same graph, continued from `base`: a graph graphAfter made for event `baseSeq`
    /// (0 <= baseSeq <= seq), copied (FunctionGraph::copyWithHistory) and replayed through the
    /// events in (baseSeq, seq] only. Ids, removed nodes and uses are those of the full replay, so
    /// a step is built from a nearby kept step (the window's step graphs). `base` is only read.
    /// Throws passlens::Error as graphAfter(seq) does, and for baseSeq outside [0, seq].
    std::unique_ptr<FunctionGraph> graphAfter(int seq, const FunctionGraph& base, int baseSeq) const;
    /// The graph after phase `name`, or "source" / "final".
    std::unique_ptr<FunctionGraph> graphAfterPhase(const std::string& name) const;

    // ---- session files: io/SessionFile.h reads and writes them ----
    /// The JSON session document (FORMAT.md §2, version 1): SessionFile::toJson.
    nlohmann::json toSessionJson(const std::filesystem::path& source,
                                 const nlohmann::json& profiles = nlohmann::json::array()) const;
    /// A JSON session document as text, "format" and "version" first: SessionFile::dumpJson.
    static std::string dumpSession(const nlohmann::json& doc);
    /// Writes the session atomically in the compact format (SessionFile::save). Throws
    /// passlens::Error.
    void save(const std::filesystem::path& path, const std::filesystem::path& source,
              const nlohmann::json& profiles = nlohmann::json::array()) const;
    /// Reads a session file of either format (SessionFile::load). Throws
    /// passlens::Error("FILE: PLACE: reason"), e.g.
    /// "s.passlens.json: events[3].nodes[0]: type must be string, but is number".
    static Trace load(const std::filesystem::path& path);
    /// A parsed JSON session document (SessionFile::fromJson); `label` names the file in
    /// messages, also in those of graphAfter when the events do not replay.
    static Trace fromSessionJson(const nlohmann::json& doc, const std::string& label,
                                 const std::filesystem::path& baseDir);
    const nlohmann::json& profiles() const { return m_profiles; }
    /// The window's state saved with a session (`view`: the step shown), or null.
    const nlohmann::json& view() const { return m_view; }
    const std::string& sourcePath() const { return m_sourcePath; }

private:
    friend class SessionFile;
    void defineConstant(const Variable& v, RewriteEvent& e);
    void know(VarId id);
    /// Replays the applied events in (fromSeq, toSeq] on `g`, the graph after event fromSeq
    /// (graphAfter's loop). Throws passlens::Error naming the event that does not replay.
    void replay(FunctionGraph& g, int fromSeq, int toSeq) const;
    bool known(VarId id) const;
    /// A session reader has read `nodeRecords` node records: node ids are about one per record,
    /// so createdBy / removedBy index ids up to twice that flat.
    void allowDenseIds(std::size_t nodeRecords);
    bool m_recordDeclined;
    std::string m_pipeline;
    std::vector<PhaseInfo> m_pipelinePhases;
    // The source graph as plain records (cheap to capture; JSON only when a session is saved).
    struct SourceInput {
        VarId id;
        Type type;
        std::string name;
        nlohmann::json tag;
    };
    void capture(const FunctionGraph& g);
    std::string m_sourceName;
    std::vector<SourceInput> m_sourceInputs;
    std::vector<ConstantDef> m_sourceConstants;
    std::vector<NodeDef> m_sourceNodes;
    std::vector<VarId> m_sourceOutputs;
    std::string m_sourcePath;
    std::string m_label = "session"; ///< the session file, in replay messages
    std::vector<RewriteEvent> m_events;
    std::vector<PhaseRecord> m_phases;
    std::vector<LiftingEntry> m_lifting;
    nlohmann::json m_profiles = nlohmann::json::array();
    nlohmann::json m_view;
    std::string m_currentPhase;
    RewriteEvent m_pending;
    std::vector<bool> m_known; ///< by variable id: defined by the source graph or an earlier event
    SeqByNode m_created, m_removed;
};

} // namespace passlens
