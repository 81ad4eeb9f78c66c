#pragma once
// What the ONNX importer's parts share (OnnxImporter.cpp reads graphs, NodeMapper and the Map*.cpp
// families map nodes): the per-graph name scope, the importer's state and tensor reader, and the
// attribute and type lookups. Internal to core/src/onnx.
#include "passlens/ir/Error.h"
#include "passlens/ir/FunctionGraph.h"
#include "passlens/io/GraphJson.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace passlens::onnximport {

using json = nlohmann::json;
inline constexpr std::int64_t U = Type::kUnknownDim;

/// The DType of an ONNX element type (dtypeFromOnnx); std::nullopt when PassLens has none.
std::optional<DType> dtypeOf(int onnxType);

/// An ONNX element type as messages name it: "FLOAT", or "type 99" for an unknown number.
std::string onnxTypeName(int t);

/// The PassLens type of an ONNX tensor type (unknown dims for symbolic ones, unknown rank when no
/// shape is given); std::nullopt for non-tensor types and unsupported element types.
std::optional<Type> typeOf(const onnx::TypeProto& tp);

/// The names visible in one (possibly nested) ONNX graph being imported.
struct Scope {
    Scope* parent = nullptr;
    FunctionGraph* graph = nullptr;
    std::unordered_map<std::string, Variable*> vars;
    std::unordered_map<std::string, Type> types; // from shape inference / value_info
    std::vector<std::string> captured;           // outer names this graph imported
    Variable* lookup(const std::string& name);
};

/// The state of one model's import: its label for messages, the folder external data is read
/// from, the opset of the default domain, and the warnings gathered so far.
struct Importer {
    std::string label;
    std::filesystem::path baseDir;
    int opset = 0;
    std::vector<std::string> warnings;
    int missingTensors = 0;
    bool verifySchemas = false; // the ONNX checker stopped early: importGraph checks each node

    [[noreturn]] void fail(const std::string& where, const std::string& why) const {
        throw Error(label + ": " + where + ": " + why);
    }

    // ------------------------------------------------------------ tensors
    // The data of a tensor (its size already checked by checkModelTensors; checked again here
    // for the callers' sake). External data that cannot be read leaves the constant missing,
    // with a warning naming the file as resolved.
    std::shared_ptr<TensorData> tensor(onnx::TensorProto& t, const std::string& where);

    // ------------------------------------------------------------ graphs
    // `place` names a nested graph in messages (subgraphPlace); empty for the model's graph.
    std::unique_ptr<FunctionGraph> importGraph(onnx::GraphProto& gp, Scope* parent, Scope*& outScope,
                                               std::vector<std::unique_ptr<Scope>>& scopes, const std::string& place);
};

/// The attribute `name` of a node; nullptr when absent.
const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name);

/// The attribute `name` of a node, of the type the ONNX schema gives it (files of IR version 1
/// leave the type unset, which is accepted); nullptr when absent; `fail` when of another type.
const onnx::AttributeProto* findAttrOfType(const onnx::NodeProto& n, const std::string& name,
                                           onnx::AttributeProto::AttributeType type,
                                           const std::function<void(const std::string&)>& fail);

} // namespace passlens::onnximport
