#include "passlens/ir/Tensor.h"

#include "passlens/io/Encoding.h"
#include "passlens/ir/Error.h"
#include "passlens/ir/Type.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace passlens {

std::int64_t TensorData::numElements() const { return elementCount(shape); }

std::size_t TensorData::byteSize() const {
    if (dtype == DType::String) return loaded() ? bytes->size() : 0;
    return static_cast<std::size_t>(numElements()) * dtypeSize(dtype);
}

namespace {
// The elements of encoded string data (see TensorData), or the reason it is malformed.
std::string decodeStrings(std::string_view b, std::int64_t n, std::vector<std::string>* out) {
    std::size_t at = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        if (b.size() - at < 8)
            return "string data ends inside the length of element " + std::to_string(i) + " of " + std::to_string(n);
        std::uint64_t len = 0;
        for (int k = 7; k >= 0; --k) len = (len << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(k)]);
        at += 8;
        if (len > b.size() - at)
            return "string element " + std::to_string(i) + " of " + std::to_string(len) + " bytes runs past the end";
        if (out) out->emplace_back(b.substr(at, static_cast<std::size_t>(len)));
        at += static_cast<std::size_t>(len);
    }
    if (at != b.size()) return std::to_string(b.size() - at) + " bytes follow the last string element";
    return {};
}
} // namespace

std::string TensorData::bytesProblem(std::string_view data) const {
    if (dtype == DType::String) {
        // each element takes at least its 8 length bytes: a bound before anything is decoded
        // (the count saturates, so dims from a file cannot overflow it)
        const std::uint64_t most = data.size() / 8;
        std::uint64_t n = 1;
        for (const std::int64_t d : shape) {
            if (d < 0) return "has a negative dim";
            n = (d != 0 && n > most / static_cast<std::uint64_t>(d)) ? most + 1 : n * static_cast<std::uint64_t>(d);
        }
        if (n > most)
            return "holds " + std::to_string(data.size()) + " bytes, too few for the " + Type(dtype, shape).str() +
                   " elements";
        return decodeStrings(data, static_cast<std::int64_t>(n), nullptr);
    }
    if (data.size() != byteSize())
        return "holds " + std::to_string(data.size()) + " bytes, the type needs " + std::to_string(byteSize());
    return {};
}

std::vector<std::string> TensorData::strings() const {
    if (dtype != DType::String)
        throw Error("constant data of dtype " + std::string(dtypeName(dtype)) + " is not string data");
    if (!loaded()) throw Error("constant data is not loaded" + (missing.empty() ? std::string() : ": " + missing));
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(numElements()));
    if (const std::string why = decodeStrings(*bytes, numElements(), &out); !why.empty()) throw Error(why);
    return out;
}

std::shared_ptr<TensorData> TensorData::fromStrings(std::vector<std::int64_t> shape,
                                                    const std::vector<std::string>& values) {
    auto t = std::make_shared<TensorData>();
    t->dtype = DType::String;
    t->shape = std::move(shape);
    std::string b;
    for (const std::string& v : values) {
        std::uint64_t len = v.size();
        for (int k = 0; k < 8; ++k, len >>= 8) b.push_back(static_cast<char>(len & 0xffu));
        b += v;
    }
    t->bytes = std::make_shared<const std::string>(std::move(b));
    return t;
}

namespace {
template <class T> T load(const std::string& b, std::int64_t i) {
    T v;
    std::memcpy(&v, b.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return v;
}
} // namespace

double TensorData::at(std::int64_t i) const {
    const std::string& b = *bytes;
    switch (dtype) {
    case DType::Bool: return load<std::uint8_t>(b, i) != 0;
    case DType::Int8: return load<std::int8_t>(b, i);
    case DType::Int16: return load<std::int16_t>(b, i);
    case DType::Int32: return load<std::int32_t>(b, i);
    case DType::Int64: return static_cast<double>(load<std::int64_t>(b, i));
    case DType::UInt8: return load<std::uint8_t>(b, i);
    case DType::UInt16: return load<std::uint16_t>(b, i);
    case DType::UInt32: return load<std::uint32_t>(b, i);
    case DType::UInt64: return static_cast<double>(load<std::uint64_t>(b, i));
    case DType::Float16: return halfToFloat(load<std::uint16_t>(b, i));
    case DType::BFloat16: return bfloat16ToFloat(load<std::uint16_t>(b, i));
    case DType::Float32: return load<float>(b, i);
    case DType::Float64: return load<double>(b, i);
    case DType::Complex64: return load<float>(b, 2 * i);
    case DType::Complex128: return load<double>(b, 2 * i);
    case DType::String: break;
    }
    return std::numeric_limits<double>::quiet_NaN();
}

std::int64_t TensorData::intAt(std::int64_t i) const {
    switch (dtype) {
    case DType::Int64: return load<std::int64_t>(*bytes, i);
    case DType::UInt64: return static_cast<std::int64_t>(load<std::uint64_t>(*bytes, i));
    default: return static_cast<std::int64_t>(at(i));
    }
}

std::uint64_t TensorData::contentHash() const {
    if (m_hashed) return m_hash;
    std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(dtype);
    for (auto d : shape) h = (h ^ static_cast<std::uint64_t>(d)) * 1099511628211ull;
    if (loaded()) {
        const std::string& b = *bytes;
        std::size_t i = 0;
        for (; i + 8 <= b.size(); i += 8) {
            std::uint64_t w;
            std::memcpy(&w, b.data() + i, 8);
            h = (h ^ w) * 1099511628211ull;
            h ^= h >> 29;
        }
        for (; i < b.size(); ++i) h = (h ^ static_cast<unsigned char>(b[i])) * 1099511628211ull;
    } else {
        h ^= 0x9e3779b97f4a7c15ull;
    }
    m_hash = h;
    m_hashed = true;
    return h;
}

std::string TensorData::shortValue(std::size_t maxElements) const {
    if (!loaded()) return "{missing}";
    const auto n = numElements();
    if (n > static_cast<std::int64_t>(maxElements)) return "{...}";
    if (dtype == DType::String) {
        std::string s = "{";
        try {
            const auto values = strings();
            for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + quotedText(values[i]);
        } catch (const Error&) {
            return "{malformed}";
        }
        return s + "}";
    }
    std::ostringstream os;
    os.precision(6);
    if (shape.empty()) {
        if (isFloat(dtype)) {
            double v = at(0);
            os << v;
            if (v == static_cast<double>(static_cast<long long>(v)) &&
                os.str().find_first_of("e.naif") == std::string::npos)
                os << ".0";
        } else {
            os << intAt(0);
        }
        return "{" + os.str() + "}";
    }
    os << "{";
    for (std::int64_t i = 0; i < n; ++i) {
        if (i) os << ", ";
        if (isFloat(dtype))
            os << at(i);
        else
            os << intAt(i);
    }
    os << "}";
    return os.str();
}

namespace {
// Stores v at p as an element of an integer or bool `dtype` (a static_cast to the element type,
// so an int64 v wraps to narrower integers as NumPy's astype does; bool as v != 0); false for
// the other dtypes.
template <class V> bool putInteger(char* p, DType dtype, V v) {
    auto put = [p](auto x) { std::memcpy(p, &x, sizeof(x)); };
    switch (dtype) {
    case DType::Bool: put(static_cast<std::uint8_t>(v != 0)); return true;
    case DType::Int8: put(static_cast<std::int8_t>(v)); return true;
    case DType::Int16: put(static_cast<std::int16_t>(v)); return true;
    case DType::Int32: put(static_cast<std::int32_t>(v)); return true;
    case DType::Int64: put(static_cast<std::int64_t>(v)); return true;
    case DType::UInt8: put(static_cast<std::uint8_t>(v)); return true;
    case DType::UInt16: put(static_cast<std::uint16_t>(v)); return true;
    case DType::UInt32: put(static_cast<std::uint32_t>(v)); return true;
    case DType::UInt64: put(static_cast<std::uint64_t>(v)); return true;
    default: return false;
    }
}
} // namespace

std::shared_ptr<TensorData> TensorData::fromDoubles(DType dtype, std::vector<std::int64_t> shape,
                                                    const std::vector<double>& values) {
    auto t = std::make_shared<TensorData>();
    t->dtype = dtype;
    t->shape = std::move(shape);
    std::string b(values.size() * dtypeSize(dtype), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) {
        double v = values[i];
        char* p = b.data() + i * dtypeSize(dtype);
        if (putInteger(p, dtype, v)) continue;
        auto put = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
        switch (dtype) {
        case DType::Float16: put(doubleToHalf(v)); break;
        case DType::BFloat16: put(doubleToBFloat16(v)); break;
        case DType::Float32: put(static_cast<float>(v)); break;
        case DType::Float64: put(v); break;
        case DType::Complex64:
            put(static_cast<float>(v));
            {
                float z = 0;
                std::memcpy(p + 4, &z, 4);
            }
            break;
        case DType::Complex128: {
            put(v);
            double z = 0;
            std::memcpy(p + 8, &z, 8);
        } break;
        case DType::String: throw Error("TensorData::fromDoubles: string data is built with fromStrings");
        default: break; // integers and bool: putInteger
        }
    }
    t->bytes = std::make_shared<const std::string>(std::move(b));
    return t;
}

std::shared_ptr<TensorData> TensorData::fromInts(DType dtype, std::vector<std::int64_t> shape,
                                                 const std::vector<std::int64_t>& values) {
    if (isInteger(dtype) || dtype == DType::Bool) {
        auto t = std::make_shared<TensorData>();
        t->dtype = dtype;
        t->shape = std::move(shape);
        const std::size_t size = dtypeSize(dtype);
        std::string b(values.size() * size, '\0');
        for (std::size_t i = 0; i < values.size(); ++i) putInteger(b.data() + i * size, dtype, values[i]);
        t->bytes = std::make_shared<const std::string>(std::move(b));
        return t;
    }
    std::vector<double> d(values.begin(), values.end());
    return fromDoubles(dtype, std::move(shape), d);
}

} // namespace passlens
