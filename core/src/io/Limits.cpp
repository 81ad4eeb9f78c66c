#include "passlens/io/Limits.h"

#include "passlens/ir/Error.h"
#include "passlens/ir/Type.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace passlens {

namespace {
// "4 GiB", "1.5 MiB", "312 bytes".
std::string humanBytes(std::uint64_t n) {
    static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        ++u;
    }
    char buf[48];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
    else
        std::snprintf(buf, sizeof buf, v == static_cast<double>(static_cast<std::uint64_t>(v)) ? "%.0f %s" : "%.1f %s",
                      v, units[u]);
    return buf;
}
} // namespace

std::uint64_t maxTensorBytes() {
    const char* env = std::getenv("PASSLENS_MAX_TENSOR_BYTES");
    if (!env || !*env) return kDefaultMaxTensorBytes;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(env, &end, 10);
    if (end == env) return kDefaultMaxTensorBytes;
    int shift = 0;
    switch (*end) {
    case '\0': break;
    case 'K':
    case 'k':
        shift = 10;
        ++end;
        break;
    case 'M':
    case 'm':
        shift = 20;
        ++end;
        break;
    case 'G':
    case 'g':
        shift = 30;
        ++end;
        break;
    case 'T':
    case 't':
        shift = 40;
        ++end;
        break;
    default: return kDefaultMaxTensorBytes;
    }
    if (*end != '\0' || n > (std::numeric_limits<std::uint64_t>::max() >> shift)) return kDefaultMaxTensorBytes;
    return static_cast<std::uint64_t>(n) << shift;
}

std::uint64_t tensorBytes(DType dtype, const std::vector<std::int64_t>& dims) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    for (std::int64_t d : dims)
        if (d <= 0) return 0; // whatever the other dims are (a negative dim counts as 0)
    const std::int64_t n = elementCount(dims);
    if (n == std::numeric_limits<std::int64_t>::max()) return kMax;
    const auto u = static_cast<std::uint64_t>(n);
    const std::uint64_t size = dtypeSize(dtype);
    return size != 0 && u > kMax / size ? kMax : u * size;
}

void checkTensorBytes(const std::string& where, DType dtype, const std::vector<std::int64_t>& dims) {
    const std::uint64_t n = tensorBytes(dtype, dims);
    const std::uint64_t limit = maxTensorBytes();
    if (n <= limit) return;
    const std::string size = n == std::numeric_limits<std::uint64_t>::max()
                                 ? std::string("more than 2^64 bytes")
                                 : std::to_string(n) + " bytes (" + humanBytes(n) + ")";
    throw Error(where + ": " + Type(dtype, dims).str() + " is " + size + ", more than the limit of " +
                humanBytes(limit) + " for a tensor read from a file (set PASSLENS_MAX_TENSOR_BYTES to raise it)");
}

} // namespace passlens
