#include "passlens/io/Npy.h"

#include "passlens/io/Limits.h"
#include "passlens/ir/Error.h"

#include <cstring>
#include <regex>

namespace passlens {
namespace {
struct Descr {
    const char* code;
    DType dtype;
};
constexpr Descr kDescrs[] = {{"|b1", DType::Bool},      {"|i1", DType::Int8},        {"<i2", DType::Int16},
                             {"<i4", DType::Int32},     {"<i8", DType::Int64},       {"|u1", DType::UInt8},
                             {"<u2", DType::UInt16},    {"<u4", DType::UInt32},      {"<u8", DType::UInt64},
                             {"<f2", DType::Float16},   {"<f4", DType::Float32},     {"<f8", DType::Float64},
                             {"<c8", DType::Complex64}, {"<c16", DType::Complex128}, {"<i1", DType::Int8},
                             {"<u1", DType::UInt8},     {"<b1", DType::Bool}};
} // namespace

std::shared_ptr<TensorData> parseNpy(const std::string& b, const std::string& label) {
    auto fail = [&](const std::string& why) { return Error(label + ": " + why); };
    if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) throw fail("not a .npy file (bad magic)");
    const int major = static_cast<unsigned char>(b[6]);
    std::size_t hlen, off;
    if (major == 1) {
        hlen = static_cast<unsigned char>(b[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8);
        off = 10;
    } else if (major == 2 || major == 3) {
        if (b.size() < 12) throw fail("truncated .npy header");
        hlen = 0;
        for (int i = 0; i < 4; ++i) hlen |= static_cast<std::size_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
        off = 12;
    } else {
        throw fail("unsupported .npy version " + std::to_string(major));
    }
    if (off + hlen > b.size()) throw fail("truncated .npy header");
    const std::string header = b.substr(off, hlen);
    std::smatch m;
    if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']+)'"))) throw fail("no 'descr' in .npy header");
    const std::string descr = m[1];
    auto t = std::make_shared<TensorData>();
    bool found = false;
    for (const auto& d : kDescrs)
        if (descr == d.code) {
            t->dtype = d.dtype;
            found = true;
        }
    if (!found) throw fail("unsupported .npy dtype '" + descr + "' (little-endian numeric types only)");
    if (std::regex_search(header, m, std::regex("'fortran_order'\\s*:\\s*True")))
        throw fail("Fortran-ordered .npy arrays are not supported");
    if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
        throw fail("no 'shape' in .npy header");
    const std::string shape = m[1];
    const std::regex num("\\d+");
    for (std::sregex_iterator it(shape.begin(), shape.end(), num), end; it != end; ++it) {
        if (it->length() > 18) throw fail("dimension " + it->str() + " in the .npy header is too large");
        t->shape.push_back(std::stoll(it->str()));
    }
    checkTensorBytes(label, t->dtype, t->shape);
    const std::uint64_t need = tensorBytes(t->dtype, t->shape);
    if (b.size() - off - hlen != need)
        throw fail("data has " + std::to_string(b.size() - off - hlen) + " bytes, the header says " +
                   std::to_string(need));
    t->bytes = std::make_shared<const std::string>(b.substr(off + hlen));
    return t;
}

std::string toNpy(const TensorData& t) {
    std::string descr;
    for (const auto& d : kDescrs)
        if (d.dtype == t.dtype) {
            descr = d.code;
            break;
        }
    if (descr.empty()) throw Error(".npy has no dtype for " + std::string(dtypeName(t.dtype)) + " data");
    std::string shape = "(";
    for (std::size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + ", ";
    if (t.shape.size() > 1) shape.resize(shape.size() - 2);
    if (t.shape.size() == 1) shape.pop_back();
    shape += ")";
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>((header.size() >> 8) & 0xff);
    out += header;
    out += *t.bytes;
    return out;
}

} // namespace passlens
