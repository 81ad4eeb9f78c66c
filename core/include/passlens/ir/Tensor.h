#pragma once
/// @file Tensor.h
/// Constant data held by a graph constant (initializers, Constant nodes, graph JSON constants).
#include "passlens/ir/DType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

/// Dense little-endian row-major tensor data. The bytes live in a std::string so that protobuf's
/// raw_data can be moved in without a copy. String data (DType::String, ONNX's string_data) is
/// held encoded: per element, in row-major order, its length as 8 little-endian bytes and then its
/// bytes (fromStrings / strings()); equal strings give equal bytes, so hashing and comparing the
/// bytes works for every dtype. When `missing` is non-empty the data could not be read
/// (for example an ONNX external-data file that does not exist): the constant is still part of the
/// graph, and any attempt to read it must be refused with that message.
struct TensorData {
    DType dtype = DType::Float32;
    std::vector<std::int64_t> shape;
    std::shared_ptr<const std::string> bytes; ///< numElements()*dtypeSize(dtype) bytes when loaded (string: encoded)
    std::string missing;                      ///< why the data is not loaded; empty when it is

    bool loaded() const { return missing.empty() && bytes != nullptr; }
    std::int64_t numElements() const;
    std::size_t byteSize() const; ///< numElements() * dtypeSize(dtype), in bytes; string: the encoded size
    /// Why `data` cannot be the bytes of this dtype and shape ("holds 6 bytes, the type needs 8";
    /// for string, where the encoding breaks), empty when it can.
    std::string bytesProblem(std::string_view data) const;
    /// The elements of string data (DType::String). Throws passlens::Error when the data is not
    /// loaded, not string data or malformed.
    std::vector<std::string> strings() const;
    template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes->data()); }
    /// Element i converted to double (any real dtype; complex gives the real part; string: NaN).
    double at(std::int64_t i) const;
    /// Element i converted to int64 (integer and bool dtypes, uint64 as its bit pattern; floats
    /// truncated).
    std::int64_t intAt(std::int64_t i) const;
    /// 64-bit hash of dtype, shape and bytes (cached after the first call; 0 when not loaded).
    std::uint64_t contentHash() const;
    /// Short display: `TensorConstant{2.0}` style value text for small tensors, `{...}` otherwise.
    std::string shortValue(std::size_t maxElements = 8) const;

    /// Builds a loaded tensor from values converted to dtype.
    static std::shared_ptr<TensorData> fromDoubles(DType dtype, std::vector<std::int64_t> shape,
                                                   const std::vector<double>& values);
    /// Loaded string data (DType::String) of `shape` holding `values` (row-major).
    static std::shared_ptr<TensorData> fromStrings(std::vector<std::int64_t> shape,
                                                   const std::vector<std::string>& values);
    /// Loaded data of an integer or bool `dtype` holding `values` (row-major); int64 and uint64
    /// values as their 64-bit patterns (a uint64 at or above 2^63 as the negative int64 intAt
    /// returns for it), narrower integers wrapped to their width as NumPy's astype does, bool as
    /// value != 0.
    static std::shared_ptr<TensorData> fromInts(DType dtype, std::vector<std::int64_t> shape,
                                                const std::vector<std::int64_t>& values);

private:
    mutable std::uint64_t m_hash = 0;
    mutable bool m_hashed = false;
};

} // namespace passlens
