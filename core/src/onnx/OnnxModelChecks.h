#pragma once
// Checks and repairs made on a parsed ONNX model before libonnx's checker and shape inference
// read it (libonnx trusts tensor sizes and names that a file can get wrong), and the one way
// messages name a place in a model.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace passlens::onnximport {

/// A list of integers as messages print it: "[2,-1,3]".
std::string intsText(const std::vector<std::int64_t>& v);

/// How messages name an ONNX node: "node 3 'conv1' (Conv)", "node 3 (unnamed) (Conv)"; `index`
/// is its position in its graph's node list.
std::string nodePlace(int index, const onnx::NodeProto& n);

/// How messages name a nested graph: "<parent place>: node 3 'if1' (If) attribute
/// 'then_branch'" (no prefix for a node of the top-level graph, whose place is empty).
std::string subgraphPlace(const std::string& parentPlace, int index, const onnx::NodeProto& n,
                          const std::string& attribute);

/// Why the data of `t` does not fit its dims and element type; empty when it does: a negative
/// dim, dims whose element count or byte size overflows 64 bits, an element type that is not an
/// ONNX one, raw_data or the typed field (float_data, int32_data, ...) of another length than
/// the dims need, external data without a location, with a malformed offset or length, or a
/// length other than the dims need. Does not read external files.
std::string tensorDataProblem(const onnx::TensorProto& t);

/// The file the external data of `t` lives in: its `location` resolved against `baseDir`
/// (the model's folder), absolute and normalised, as messages name it.
std::filesystem::path externalDataPath(const onnx::TensorProto& t, const std::filesystem::path& baseDir);

/// Checks every tensor of the model with tensorDataProblem: initializers, sparse initializers,
/// tensor-valued attributes of every node (Constant's and ConstantOfShape's `value`, ...), in
/// every nested graph (If / Loop / Scan bodies) and model-local function. libonnx 1.12's
/// shape inference (ParseData) reads raw_data of the wrong length out of bounds, so this runs
/// before it. Throws passlens::Error("LABEL: PLACE: tensor 'NAME': REASON"). Returns the
/// resolved paths (externalDataPath) of the external data files that do not exist.
std::vector<std::string> checkModelTensors(const onnx::ModelProto& m, const std::string& label,
                                           const std::filesystem::path& baseDir);

/// Checks the attribute values that libonnx 1.12's shape inference divides by or trusts
/// without a check, on every node of the default domain, nested graphs included: `strides`,
/// `dilations`, `kernel_shape` and `blocksize` (Conv, ConvTranspose, the pools, DepthToSpace,
/// SpaceToDepth, ...) must be at least 1 (a stride of 0 is a division by zero there). Throws
/// passlens::Error("LABEL: PLACE: attribute 'NAME' has value V, it must be at least 1").
void checkModelAttributes(const onnx::ModelProto& m, const std::string& label);

/// Turns what libonnx's checker and shape inference wrote to std::cerr (`said`, captured while
/// they ran) into PassLens's own warnings, one per kind of message: libonnx 1.12's "Warning:
/// Checker does not support models with experimental ops: OP" becomes "LABEL: PLACE (and N more
/// nodes): OP is one of ONNX's removed experimental ops, which the ONNX checker does not check
/// against a schema; imported as it is" (PLACE: nodePlace / subgraphPlace of the first node of
/// that op type, nested graphs included); any other line "LABEL: ONNX checker said: LINE"
/// (control characters and bytes that are not UTF-8 escaped). Empty lines are dropped.
std::vector<std::string> libonnxWarnings(const std::string& said, const onnx::ModelProto& m, const std::string& label);

/// Rewrites every name that is not valid UTF-8 with escapeInvalidUtf8 (graph, node, value,
/// tensor and attribute names, op types, domains and string attributes, in nested graphs and
/// model-local functions), so that graph JSON and session writers can write them. Returns how
/// many strings changed. Throws passlens::Error when an escaped value name equals the name of
/// another value of the file (the two values would merge).
int escapeInvalidNames(onnx::ModelProto& m, const std::string& label);

/// Adds to `out` the names a subgraph reads from enclosing scopes (ONNX outer-scope references):
/// inputs of its nodes, and its own outputs (a branch may return an outer value as it is), that
/// it does not define itself; `local` holds the names already defined around it.
void freeNames(const onnx::GraphProto& sg, std::set<std::string>& out, std::set<std::string> local);

/// The topological order of a graph's node list (which ONNX requires sorted, but real files are
/// not always), as indices into it: iterative DFS over producers, including names used by
/// nested graphs. A cycle is reported through `fail` with every node on it, each named by
/// `nodeWhere(index)`.
std::vector<int> topoOrder(const onnx::GraphProto& gp, const std::function<void(const std::string&)>& fail,
                           const std::function<std::string(int)>& nodeWhere);

/// Puts a graph's nodes (and its nested graphs' nodes) in topological order, in place, so that
/// the ONNX checker accepts files whose node lists are not sorted (runtimes accept them too).
/// Adds a warning naming each graph whose list changed (`place`: subgraphPlace, empty for the
/// model's graph); a cycle is refused with the nodes on it (passlens::Error).
void sortNodesInPlace(onnx::GraphProto& gp, const std::string& label, const std::string& place,
                      std::vector<std::string>& warnings);

} // namespace passlens::onnximport
