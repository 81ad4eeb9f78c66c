#pragma once
/// @file OnnxImporter.h
/// ONNX models to Theano-vocabulary graphs (OPS.md "Import rules"), through Debian's libonnx:
/// the ONNX checker, then shape inference (check_type, data propagation) with the inputs'
/// static dims, then a per-node mapping to Theano ops or small Theano subgraphs; ops with no
/// Theano counterpart become `Onnx<Type>` host ops that keep every attribute.
#include "passlens/io/GraphJson.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace passlens {

struct OnnxImportOptions {
    /// Binds graph inputs' dims before shape inference (name -> full shape; -1 keeps a dim
    /// dynamic). Inputs not named keep the dims the model declares. When any input is bound, the
    /// dims the model declares for its outputs and value_info, subgraphs included, are forgotten
    /// (rank and element type kept) and inferred from the new input shapes (e.g. the batch size
    /// of a model exported at 1).
    std::map<std::string, std::vector<std::int64_t>> inputShapes;
};

/// Imports an ONNX model file. External tensor data is resolved relative to the model's folder;
/// a missing or too short data file is reported per tensor in `warnings`, naming the file as
/// resolved, and the constant is marked missing (the graph still loads). Throws
/// passlens::Error("FILE: PLACE: reason") for anything that prevents a complete import (not
/// protobuf, truncated, a tensor whose data does not fit its dims and type, an attribute of the
/// wrong type or with a value the spec or the input ranks refuse, a missing required input,
/// checker failure, a node whose inputs are undefined, a cycle). Names that are not valid UTF-8
/// are escaped as `\xNN`, node lists out of order are sorted (both with a warning). Peak memory
/// stays near the size of the tensors: raw data is moved, not copied, out of the protobuf
/// message.
LoadedGraph importOnnxFile(const std::filesystem::path& path, const OnnxImportOptions& options = {});

/// Imports an ONNX model from memory; `label` names it in messages, `baseDir` resolves external
/// data.
LoadedGraph importOnnxBytes(const std::string& bytes, const std::string& label, const std::filesystem::path& baseDir,
                            const OnnxImportOptions& options = {});

/// The ONNX opset version libonnx knows best for the default domain (17 for libonnx 1.12).
int onnxLatestKnownOpset();

} // namespace passlens
