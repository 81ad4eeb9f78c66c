// Implementation of visitDType (included by Tensor.h).
#pragma once
#include <passlens/ir/Error.h>

#include <string>

namespace passlens {

template <class F> decltype(auto) visitDType(DType d, const char* what, F&& f) {
    switch (d) {
    case DType::Bool: return f(std::uint8_t{});
    case DType::Int8: return f(std::int8_t{});
    case DType::Int16: return f(std::int16_t{});
    case DType::Int32: return f(std::int32_t{});
    case DType::Int64: return f(std::int64_t{});
    case DType::UInt8: return f(std::uint8_t{});
    case DType::UInt16: return f(std::uint16_t{});
    case DType::UInt32: return f(std::uint32_t{});
    case DType::UInt64: return f(std::uint64_t{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    default: break;
    }
    throw Error(std::string(what) + ": dtype " + std::string(dtypeName(d)) + " is not supported by the CPU backend");
}

} // namespace passlens
