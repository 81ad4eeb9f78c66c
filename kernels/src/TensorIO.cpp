// TensorProto files (ONNX test-data layout) and seeded random inputs.
#include "passlens/kernels/TensorIO.h"

#include <passlens/io/AtomicFile.h>
#include <passlens/io/Limits.h>
#include <passlens/ir/Error.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <random>

#include <passlens/onnx/OnnxTypes.h>

namespace passlens {

namespace {
// The reader handles real dtypes only (complex data has no int32_data layout).
std::optional<DType> dtypeOf(int t) {
    const auto d = dtypeFromOnnx(t);
    if (d && isComplex(*d)) return std::nullopt;
    return d;
}
} // namespace

Tensor readTensorProto(const std::filesystem::path& file, std::string* name) {
    const std::string bytes = readFile(file); // a regular file only
    onnx::TensorProto t;
    if (bytes.empty() || !t.ParseFromString(bytes)) throw Error(file.string() + ": not a serialized onnx.TensorProto");
    const auto dt = dtypeOf(t.data_type());
    if (!dt)
        throw Error(file.string() + ": tensor '" + t.name() + "' has unsupported element type " +
                    std::to_string(t.data_type()));
    Shape shape;
    for (auto d : t.dims()) {
        if (d < 0) throw Error(file.string() + ": tensor '" + t.name() + "' has a negative dim");
        shape.push_back(d);
    }
    if (name) *name = t.name();
    checkTensorBytes(file.string() + ": tensor '" + t.name() + "'", *dt, shape); // before allocating it
    const std::int64_t n = shapeNumel(shape);
    const std::size_t need = static_cast<std::size_t>(n) * dtypeSize(*dt);
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
        throw Error(file.string() + ": external tensor data is not supported here");
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

void writeTensorProto(const Tensor& tensor, const std::filesystem::path& file, const std::string& name) {
    if (!tensor.onHost()) throw Error(file.string() + ": only host tensors can be written");
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnxTypeOf(tensor.dtype()));
    for (auto d : tensor.shape()) t.add_dims(d);
    t.set_raw_data(std::string(static_cast<const char*>(tensor.rawData()), tensor.nbytes()));
    std::string bytes;
    if (!t.SerializeToString(&bytes)) throw Error(file.string() + ": cannot write: the tensor does not serialize");
    writeFileAtomic(file, bytes);
}

std::vector<Tensor> readTensorDir(const std::filesystem::path& dir, const std::string& prefix) {
    std::vector<Tensor> out;
    for (int i = 0;; ++i) {
        const auto f = dir / (prefix + "_" + std::to_string(i) + ".pb");
        std::error_code ec;
        if (!std::filesystem::exists(f, ec)) break;
        out.push_back(readTensorProto(f));
    }
    return out;
}

Tensor randomTensor(const Type& type, std::uint64_t seed, std::int64_t unknownLead, std::int64_t unknownDim) {
    Shape shape;
    if (type.rankKnown())
        for (int a = 0; a < type.ndim(); ++a) {
            const std::int64_t d = type.dims()[static_cast<std::size_t>(a)];
            shape.push_back(d >= 0 ? d : (a == 0 ? unknownLead : unknownDim));
        }
    Tensor t = Tensor::empty(type.dtype(), shape);
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
