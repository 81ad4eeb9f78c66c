#pragma once
/// @file Error.h
/// The one exception type of passlens_core. Every message names the file, the place in it and the
/// reason, e.g. "model.onnx: node 'Conv_3' (#12): input 1 'w' is undefined".
#include <stdexcept>
#include <string>

namespace passlens {

/// Thrown for bad input (files, types, attributes) and rejected graph edits. what() is a complete,
/// user-facing message of one or two lines; nothing is partially applied when it is thrown.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message)
        : std::runtime_error(message) {}
};

/// Thrown by FunctionGraph::replace / replaceAllValidate when a replacement fails validation
/// (type change, cycle, second producer). The graph has been rolled back when it is caught.
class ReplacementError : public Error {
public:
    using Error::Error;
};

} // namespace passlens
