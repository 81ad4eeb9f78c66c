// TensorProto files (ONNX test-data layout) and seeded random inputs.
#include "passlens/kernels/TensorIO.h"

#include <passlens/io/AtomicFile.h>
#include <passlens/io/Limits.h>
#include <passlens/ir/Error.h>

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <random>

#include <passlens/onnx/OnnxTypes.h>

namespace passlens {

namespace {
// The reader handles real dtypes and strings (complex data has no int32_data layout).
std::optional<DType> dtypeOf(int t) {
    const auto d = dtypeFromOnnx(t);
    if (d && isComplex(*d)) return std::nullopt;
    return d;
}

// A TensorProto's data as a host tensor (checks as readTensorProto's), `file` for messages.
Tensor tensorFromProto(const onnx::TensorProto& t, const std::filesystem::path& file);

// A SequenceProto or OptionalProto's value as `type` (nested values in turn).
Tensor valueFromSequence(const onnx::SequenceProto& p, const Type& type, const std::filesystem::path& file);
Tensor valueFromOptional(const onnx::OptionalProto& p, const Type& type, const std::filesystem::path& file) {
    const Type& elem = type.elementType();
    // an empty optional: elem_type UNDEFINED, or (numpy_helper.from_optional(None, dtype=...)) a
    // type without a value
    switch (p.elem_type()) {
    case onnx::OptionalProto::UNDEFINED: return Tensor::optional(std::nullopt);
    case onnx::OptionalProto::TENSOR:
        if (!elem.isTensor()) break;
        if (!p.has_tensor_value()) return Tensor::optional(std::nullopt);
        return Tensor::optional(tensorFromProto(p.tensor_value(), file));
    case onnx::OptionalProto::SEQUENCE:
        if (elem.kind() != Type::Kind::Sequence) break;
        if (!p.has_sequence_value()) return Tensor::optional(std::nullopt);
        return Tensor::optional(valueFromSequence(p.sequence_value(), elem, file));
    default: break;
    }
    throw Error(file.string() + ": optional value of element type " + std::to_string(p.elem_type()) + ", expected " +
                type.str());
}

Tensor valueFromSequence(const onnx::SequenceProto& p, const Type& type, const std::filesystem::path& file) {
    const Type& elem = type.elementType();
    std::vector<Tensor> items;
    if (p.elem_type() == onnx::SequenceProto::TENSOR && elem.isTensor()) {
        for (const auto& t : p.tensor_values()) items.push_back(tensorFromProto(t, file));
    } else if (p.elem_type() == onnx::SequenceProto::SEQUENCE && elem.kind() == Type::Kind::Sequence) {
        for (const auto& q : p.sequence_values()) items.push_back(valueFromSequence(q, elem, file));
    } else if (p.elem_type() == onnx::SequenceProto::OPTIONAL && elem.kind() == Type::Kind::Optional) {
        for (const auto& q : p.optional_values()) items.push_back(valueFromOptional(q, elem, file));
    } else if (p.elem_type() != onnx::SequenceProto::UNDEFINED) {
        throw Error(file.string() + ": sequence of element type " + std::to_string(p.elem_type()) + ", expected " +
                    type.str());
    }
    return Tensor::sequence(std::move(items));
}
} // namespace

Tensor readTensorProto(const std::filesystem::path& file, std::string* name) {
    const std::string bytes = readFile(file); // a regular file only
    onnx::TensorProto t;
    if (bytes.empty() || !t.ParseFromString(bytes)) throw Error(file.string() + ": not a serialized onnx.TensorProto");
    if (name) *name = t.name();
    return tensorFromProto(t, file);
}

Tensor readValueProto(const std::filesystem::path& file, const Type& type) {
    if (type.isTensor()) {
        Tensor t = readTensorProto(file);
        // ONNX 1.12's test data holds bfloat16 values as UINT16 tensors of their bits (NumPy has
        // no bfloat16; onnx/backend/test/case/node/cast.py): read them as the bfloat16 they are
        if (type.dtype() == DType::BFloat16 && t.dtype() == DType::UInt16 && t.isDense())
            return Tensor::fromBytes(DType::BFloat16, t.shape(), t.rawData());
        return t;
    }
    const std::string bytes = readFile(file);
    if (type.kind() == Type::Kind::Sequence) {
        onnx::SequenceProto p;
        if (!p.ParseFromString(bytes)) throw Error(file.string() + ": not a serialized onnx.SequenceProto");
        return valueFromSequence(p, type, file);
    }
    onnx::OptionalProto p;
    if (!p.ParseFromString(bytes)) throw Error(file.string() + ": not a serialized onnx.OptionalProto");
    return valueFromOptional(p, type, file);
}

namespace {
Tensor tensorFromProto(const onnx::TensorProto& t, const std::filesystem::path& file) {
    const auto dt = dtypeOf(t.data_type());
    if (!dt)
        throw Error(file.string() + ": tensor '" + t.name() + "' has unsupported element type " +
                    std::to_string(t.data_type()));
    Shape shape;
    for (auto d : t.dims()) {
        if (d < 0) throw Error(file.string() + ": tensor '" + t.name() + "' has a negative dim");
        shape.push_back(d);
    }
    checkTensorBytes(file.string() + ": tensor '" + t.name() + "'", *dt, shape); // before allocating it
    const std::int64_t n = shapeNumel(shape);
    const std::size_t need = static_cast<std::size_t>(n) * dtypeSize(*dt);
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
        throw Error(file.string() + ": external tensor data is not supported here");
    if (*dt == DType::String) { // string_data only (ONNX has no raw form of strings)
        if (t.has_raw_data())
            throw Error(file.string() + ": tensor '" + t.name() +
                        "' holds STRING data in raw_data, which ONNX does not allow");
        if (t.string_data_size() != n)
            throw Error(file.string() + ": tensor '" + t.name() + "' holds " + std::to_string(t.string_data_size()) +
                        " strings, its shape needs " + std::to_string(n));
        return Tensor::fromStrings(shape, std::vector<std::string>(t.string_data().begin(), t.string_data().end()));
    }
    if (t.has_raw_data()) {
        if (t.raw_data().size() != need)
            throw Error(file.string() + ": tensor '" + t.name() + "' has " + std::to_string(t.raw_data().size()) +
                        " bytes of raw data, its shape " + shapeStr(shape) + " needs " + std::to_string(need));
        return Tensor::fromBytes(*dt, shape, t.raw_data().data());
    }
    auto count = [&](std::int64_t have) {
        if (have != n)
            throw Error(file.string() + ": tensor '" + t.name() + "' holds " + std::to_string(have) +
                        " values, its shape needs " + std::to_string(n));
    };
    // the values present are counted before the tensor is allocated
    switch (*dt) {
    case DType::Float32: count(t.float_data_size()); break;
    case DType::Float64: count(t.double_data_size()); break;
    case DType::Int64: count(t.int64_data_size()); break;
    case DType::UInt32:
    case DType::UInt64: count(t.uint64_data_size()); break;
    default: count(t.int32_data_size());
    }
    Tensor r = Tensor::empty(*dt, shape);
    switch (*dt) {
    case DType::Float32:
        if (need) std::memcpy(r.rawData(), t.float_data().data(), need);
        break;
    case DType::Float64:
        if (need) std::memcpy(r.rawData(), t.double_data().data(), need);
        break;
    case DType::Int64:
        if (need) std::memcpy(r.rawData(), t.int64_data().data(), need);
        break;
    case DType::UInt32:
    case DType::UInt64:
        for (std::int64_t i = 0; i < n; ++i) {
            const std::uint64_t v = t.uint64_data(static_cast<int>(i));
            std::memcpy(static_cast<char*>(r.rawData()) + static_cast<std::size_t>(i) * dtypeSize(*dt), &v,
                        dtypeSize(*dt));
        }
        break;
    default:
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int32_t v = t.int32_data(static_cast<int>(i));
            std::memcpy(static_cast<char*>(r.rawData()) + static_cast<std::size_t>(i) * dtypeSize(*dt), &v,
                        dtypeSize(*dt));
        }
    }
    return r;
}
} // namespace

namespace {
void toProto(const Tensor& tensor, onnx::TensorProto& t, const std::filesystem::path& file) {
    if (!tensor.onHost()) throw Error(file.string() + ": only host tensors can be written");
    t.set_data_type(onnxTypeOf(tensor.dtype()));
    for (auto d : tensor.shape()) t.add_dims(d);
    if (tensor.dtype() == DType::String) {
        const auto* s = tensor.numel() ? tensor.data<std::string>() : nullptr;
        for (std::int64_t i = 0; i < tensor.numel(); ++i) t.add_string_data(s[i]);
        return;
    }
    t.set_raw_data(std::string(static_cast<const char*>(tensor.rawData()), tensor.nbytes()));
}

void toProto(const Tensor& value, onnx::SequenceProto& p, const std::filesystem::path& file);
void toProto(const Tensor& value, onnx::OptionalProto& p, const std::filesystem::path& file) {
    if (value.items().empty()) return; // elem_type UNDEFINED: an empty optional
    const Tensor& v = value.items().front();
    if (v.isDense()) {
        p.set_elem_type(onnx::OptionalProto::TENSOR);
        toProto(v, *p.mutable_tensor_value(), file);
    } else if (v.kind() == Type::Kind::Sequence) {
        p.set_elem_type(onnx::OptionalProto::SEQUENCE);
        toProto(v, *p.mutable_sequence_value(), file);
    } else {
        throw Error(file.string() + ": an optional value inside an optional value cannot be written");
    }
}

void toProto(const Tensor& value, onnx::SequenceProto& p, const std::filesystem::path& file) {
    const auto& items = value.items();
    if (items.empty()) return;
    if (items.front().isDense())
        p.set_elem_type(onnx::SequenceProto::TENSOR);
    else if (items.front().kind() == Type::Kind::Sequence)
        p.set_elem_type(onnx::SequenceProto::SEQUENCE);
    else
        p.set_elem_type(onnx::SequenceProto::OPTIONAL);
    for (const Tensor& x : items) {
        if (x.kind() != items.front().kind()) throw Error(file.string() + ": sequence items of different kinds");
        if (x.isDense())
            toProto(x, *p.add_tensor_values(), file);
        else if (x.kind() == Type::Kind::Sequence)
            toProto(x, *p.add_sequence_values(), file);
        else
            toProto(x, *p.add_optional_values(), file);
    }
}
} // namespace

void writeTensorProto(const Tensor& tensor, const std::filesystem::path& file, const std::string& name) {
    std::string bytes;
    bool ok = false;
    if (tensor.isDense()) {
        onnx::TensorProto t;
        t.set_name(name);
        toProto(tensor, t, file);
        ok = t.SerializeToString(&bytes);
    } else if (tensor.kind() == Type::Kind::Sequence) {
        onnx::SequenceProto p;
        p.set_name(name);
        toProto(tensor, p, file);
        ok = p.SerializeToString(&bytes);
    } else {
        onnx::OptionalProto p;
        p.set_name(name);
        toProto(tensor, p, file);
        ok = p.SerializeToString(&bytes);
    }
    if (!ok) throw Error(file.string() + ": cannot write: the value does not serialize");
    writeFileAtomic(file, bytes);
}

std::vector<Tensor> readTensorDir(const std::filesystem::path& dir, const std::string& prefix,
                                  const std::vector<Type>& types) {
    std::vector<Tensor> out;
    for (std::size_t i = 0;; ++i) {
        const auto f = dir / (prefix + "_" + std::to_string(i) + ".pb");
        std::error_code ec;
        if (!std::filesystem::exists(f, ec)) break;
        out.push_back(i < types.size() ? readValueProto(f, types[i]) : readTensorProto(f));
    }
    return out;
}

Tensor randomTensor(const Type& type, std::uint64_t seed, std::int64_t unknownLead, std::int64_t unknownDim) {
    if (type.kind() == Type::Kind::Sequence)
        return Tensor::sequence({randomTensor(type.elementType(), seed, unknownLead, unknownDim)});
    if (type.kind() == Type::Kind::Optional)
        return Tensor::optional(randomTensor(type.elementType(), seed, unknownLead, unknownDim));
    Shape shape;
    if (type.rankKnown())
        for (int a = 0; a < type.ndim(); ++a) {
            const std::int64_t d = type.dims()[static_cast<std::size_t>(a)];
            shape.push_back(d >= 0 ? d : (a == 0 ? unknownLead : unknownDim));
        }
    Tensor t = Tensor::empty(type.dtype(), shape);
    if (isString(type.dtype())) { // decimal digits, as a numeric string input usually holds
        std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
        auto* s = t.numel() ? t.data<std::string>() : nullptr;
        for (std::int64_t i = 0; i < t.numel(); ++i) s[i] = std::to_string(rng() % 10u);
        return t;
    }
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
    const std::int64_t n = t.numel();
    auto uniform01 = [&]() { return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0); };
    std::vector<double> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        if (isFloat(type.dtype())) {
            // Box-Muller: portable, unlike std::normal_distribution
            const double u1 = uniform01(), u2 = uniform01();
            v[static_cast<std::size_t>(i)] = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        } else if (type.dtype() == DType::Bool) {
            v[static_cast<std::size_t>(i)] = static_cast<double>(rng() & 1u);
        } else {
            v[static_cast<std::size_t>(i)] = static_cast<double>(rng() % 10u);
        }
    }
    convertElements(v.data(), DType::Float64, t.rawData(), type.dtype(), n);
    return t;
}

} // namespace passlens
