#pragma once
/// @file DType.h
/// Element types of tensors, named as Theano and NumPy name them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace passlens {

/// Element type. The names (dtypeName) are the ones of FORMAT.md §1: bool, int8 ... complex128,
/// bfloat16 (ONNX's BFLOAT16: float32's exponent, 8 significand bits; no Theano counterpart, last
/// so that the others keep their numbers), string (ONNX's STRING: each element a byte string;
/// host values only, never on a GPU; neither numeric nor a Theano dtype).
enum class DType : std::uint8_t {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
    Complex64,
    Complex128,
    BFloat16,
    String
};

/// "float32" etc.
std::string_view dtypeName(DType d);
/// Inverse of dtypeName; std::nullopt for an unknown name.
std::optional<DType> parseDType(std::string_view name);
/// Size of one element in bytes (bool: 1; string: sizeof(std::string), the element object a
/// host tensor holds, not the characters).
std::size_t dtypeSize(DType d);
bool isFloat(DType d); ///< float16, bfloat16, float32, float64
bool isComplex(DType d);
bool isInteger(DType d); ///< signed or unsigned integer (not bool)
bool isUnsigned(DType d);
bool isString(DType d); ///< ONNX's STRING

/// Theano's scalar.upcast with floatX=float32 (theano/scalar/basic.py): NumPy's type promotion of
/// the two dtypes, except that a float64 result becomes float32 unless one operand is float64
/// itself (so int64 + float32 is float32, int8 + float32 is float32, int32 + int64 is int64).
DType upcast(DType a, DType b);

/// IEEE 754 binary16 (float16) bits to float; exact.
float halfToFloat(std::uint16_t h);
/// float to binary16 bits, rounding to nearest even (NumPy's astype(float16)); beyond the largest
/// half (65504) after rounding: infinity; NaN stays a (quiet) NaN of the same sign.
std::uint16_t floatToHalf(float f);
/// double to binary16 bits rounding once to nearest even, as NumPy's float64 astype(float16) (not
/// through float, whose rounding first could move a value onto a half-way point).
std::uint16_t doubleToHalf(double d);
/// bfloat16 bits (the high half of a float32) to float; exact.
float bfloat16ToFloat(std::uint16_t b);
/// float / double to bfloat16 bits, truncating toward zero as ONNX 1.12's Cast reference does
/// (onnx/backend/test/case/node/cast.py keeps a float32's high 16 bits; onnxruntime of that time
/// too); NaN stays a quiet NaN of the same sign.
std::uint16_t floatToBFloat16(float f);
std::uint16_t doubleToBFloat16(double d);

} // namespace passlens
