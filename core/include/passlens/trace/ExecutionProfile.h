#pragma once
/// @file ExecutionProfile.h
/// The profile of one execution of a graph as a typed value: per-node mean times, transfers,
/// the executor's plan (epilogue fusion, in-place Join, with reasons) and the run's wall times.
/// kernels' profileExecutor fills it, the window and the CLI read it; it becomes JSON (FORMAT.md
/// §2 `profiles` entry) only at file borders: `passlens-cli run --json` / `--profile`, sessions,
/// HTML reports. Times are microseconds per run, bytes per run.
#include <passlens/ir/FunctionGraph.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace passlens {

/// How a node was executed (kernels' Executor).
enum class StepKind : std::uint8_t {
    Kernel,   ///< a kernel on the backend of its kind (host kind on the CPU, GPU kind on CUDA)
    Emulated, ///< a GPU kind run by its CPU kernel (no CUDA device, or no CUDA kernel)
    Transfer, ///< GpuFromHost / HostFromGpu / GpuToGpu (a copy)
    Missing   ///< no kernel: running the graph fails when this node is reached
};
/// "kernel", "emulated", "transfer", "n/a".
const char* stepKindName(StepKind k);

/// Direction of a transfer.
enum class TransferDirection : std::uint8_t { HtoD, DtoH, DtoD };
/// "HtoD", "DtoH", "DtoD".
const char* transferDirectionName(TransferDirection d);

/// One decision of the executor's own planning about one node, taken or declined, with its
/// reason (kernels' Executor::planEpilogueFusion / planJoinInPlace).
struct PlanDecision {
    enum class Pass : std::uint8_t {
        EpilogueFusion, ///< an element-wise node applied by the convolution before it
        JoinInPlace     ///< a Join whose inputs are written by their convolutions into its output
    };
    Pass pass = Pass::EpilogueFusion;
    /// Fusion taken: the element-wise node; fusion declined: the convolution; Join: the Join.
    NodeId node = -1;
    bool applied = false;
    /// Fusion taken: the convolution; Join taken: the convolutions writing its inputs, in order.
    std::vector<NodeId> with;
    /// What was decided: "Elemwise #12 fused into AbstractConv2d #9 as its epilogue",
    /// "Join #30 written in place: inputs #21, #22 write into its slices",
    /// "AbstractConv2d #9: no epilogue fused", "Join #30: not in place".
    std::string decision;
    /// Why: "the convolution's only client; its other inputs are per-channel float32 constants",
    /// "output 0 is read by 2 nodes", "input 1 comes from Elemwise #17, not a convolution".
    std::string reason;
};
/// "epilogue_fusion", "join_in_place".
const char* planPassName(PlanDecision::Pass p);

/// One node of the profiled graph.
struct ProfileNode {
    NodeId node = -1;
    std::string kind; ///< op kind (Theano class), e.g. "GpuElemwise"
    std::string op;   ///< display string, e.g. "GpuElemwise{add}<gpuarray>"
    std::string name; ///< node name (may be empty)
    StepKind stepKind = StepKind::Kernel;
    /// Mean time per run in microseconds; std::nullopt ("n/a") for a node with no kernel, not
    /// reached, fused or in place (below).
    std::optional<double> timeUs;
    /// An element-wise node applied by the kernel of node `fusedInto` (epilogue fusion): its time
    /// is included in that node's; the JSON lists it under "not_run" with the reason "fused into
    /// node #N".
    std::optional<NodeId> fusedInto;
    /// An in-place Join whose inputs were all written into its output by their producers
    /// (inPlaceWriters): it did nothing; "not_run" with the reason "in place: inputs written into
    /// its output by nodes #A, #B".
    bool inPlace = false;
    std::vector<NodeId> inPlaceWriters;
};

/// One transfer node (also listed in nodes), or an implicit copy around a node.
struct ProfileTransfer {
    NodeId node = -1;
    std::optional<std::size_t> bytes; ///< per run; none: unknown (a profile file without "bytes")
    TransferDirection direction = TransferDirection::HtoD;
    double timeUs = 0; ///< mean per run
    /// Not a transfer node: a copy the executor made around `node` on a CUDA run (a CPU node's
    /// device inputs downloaded, an emulated node's outputs uploaded), timed apart from the node
    /// (whose time leaves it out); JSON "implicit": true.
    bool implicit = false;
    /// Bytes per nanosecond (GB/s); 0 without a time or without bytes.
    double gbPerS() const { return timeUs > 0 && bytes ? static_cast<double>(*bytes) / (timeUs * 1e3) : 0.0; }
};

/// A profiled execution.
struct ExecutionProfile {
    std::string phase;  ///< "final", "source", "step" or a phase name
    std::string device; ///< kernels' Executor::deviceDescription(), e.g. "cpu (GPU ops emulated on CPU)"
    int warmup = 0, repeats = 0;
    double wallUs = 0;         ///< mean wall time per run without per-node timing
    double profiledWallUs = 0; ///< mean wall time per run with per-node timing
    double overheadUs() const { return profiledWallUs - wallUs; }
    /// Standard deviation of the unprofiled runs' wall time (µs): an overhead smaller than this
    /// (or negative) is run-to-run noise, not a cost of profiling.
    double wallStdUs = 0;
    double nodeSumUs = 0;                   ///< sum of the node means (profiled runs)
    std::vector<ProfileNode> nodes;         ///< in execution order
    std::vector<ProfileTransfer> transfers; ///< in execution order
    std::vector<PlanDecision> plan;         ///< the executor's plan (kernels' Executor::plan())
    std::string error;                      ///< why the run failed (nodes after the failure are n/a)

    /// The node with id `id`, or null.
    const ProfileNode* find(NodeId id) const;
    /// Microseconds per run of the nodes with a time plus the transfers without a timed node
    /// (each node id counted once, its last entry): what the timing overlay's percentages are of.
    double totalUs() const;

    /// The FORMAT.md §2 `profiles` entry: {"phase","device","repeats","nodes":[{"node","time_us",
    /// "kind"}],"transfers":[{"node","bytes","direction","time_us"}]} plus "warmup", "wall_us",
    /// "wall_std_us", "profiled_wall_us", "overhead_us", "node_sum_us", per node "op", per
    /// transfer "gb_per_s", and "plan": [{"node","pass","applied","with","decision","reason"}].
    /// Nodes without a time (n/a) are not in "nodes" (every entry there has a number) but in
    /// "not_run": [{"node","op","kind":"n/a","reason"}] (plus "fused_into" or "written_by").
    nlohmann::json toJson() const;
    /// Reads toJson()'s form; keys other than "nodes" / "transfers" may be absent (profiles of
    /// earlier versions, hand-written files; a transfer without "bytes" has unknown bytes).
    /// Throws passlens::Error("LABEL.nodes[3].time_us: reason") naming the place of a wrong shape
    /// or value.
    static ExecutionProfile fromJson(const nlohmann::json& j, const std::string& label);
    /// The one reader of profile documents (the file border; `render --overlay`, reports): one
    /// profile object (fromJson's form, also what `passlens-cli run --json` prints), an array of
    /// them, or a session or `run --profile` document (its "profiles"). With several, the one
    /// whose phase is `phase` (or the first). Throws passlens::Error naming the place:
    /// "LABEL.nodes[0].time_us: missing", "LABEL[1].transfers: expected an array",
    /// "LABEL: profiles[0].nodes[2].node: expected an integer node id",
    /// "LABEL: profiles: no profile in this file".
    static ExecutionProfile fromDocument(const nlohmann::json& doc, const std::string& label,
                                         const std::string& phase = {});
    /// readJsonFile(path) then fromDocument, the path as the label. Throws passlens::Error.
    static ExecutionProfile load(const std::filesystem::path& path, const std::string& phase = {});
    /// Theano-style tables: Class (per op kind), Ops (per op) and Apply (per node), each with
    /// % time, cumulative %, time, time per call, type and counts; then transfers, and the plan.
    std::string text(std::size_t maxApplyRows = 40) const;
};

} // namespace passlens
