#pragma once
/// @file Npy.h
/// NumPy .npy files (format versions 1.0-3.0, little-endian, C order) for graph JSON constants.
#include "passlens/ir/Tensor.h"

#include <filesystem>
#include <memory>
#include <string>

namespace passlens {

/// Parses .npy bytes. Throws passlens::Error("LABEL: reason") for a bad magic, an unsupported
/// dtype ('>f4', objects), Fortran order or a size that does not match the header.
std::shared_ptr<TensorData> parseNpy(const std::string& bytes, const std::string& label);
/// Serialises a loaded tensor as .npy (version 1.0).
std::string toNpy(const TensorData& t);

} // namespace passlens
