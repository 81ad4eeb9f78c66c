// Lists the entries of a CUDA fat binary: the `.nv_fatbin` section of an nvcc object, dumped with
// `objcopy -O binary --only-section=.nv_fatbin OBJ OUT` (used by cuda_fatbin.cmake, the GPU-free
// ctest entry cuda_fatbin_arches, in place of `cuobjdump --list-elf`, which this toolkit
// installation lacks).
//   fatbin_list FILE [--require-elf 80,90]
// Prints one line per entry ("ELF sm_80", "PTX sm_90"); exits 1 with a message naming the file and
// the offset when the data is not a fat binary, or when an architecture of --require-elf has no
// ELF entry.
//
// Layout (little-endian; as read by cuobjdump and documented by projects that decode fat binaries,
// e.g. nvopen-tools' fatbin/FORMAT_SPECIFICATION.md): the section holds one or more containers,
// each a 16-byte header { u32 magic 0xBA55ED50, u16 version 1, u16 header size, u64 size of the
// entries that follow } and then the entries back to back. An entry starts with { u16 kind (1 PTX,
// 2 ELF), u16 flags, u32 entry header size, u64 payload size, ..., u32 SM architecture at offset
// 28 }; its payload follows its header, and the next entry follows the payload. Containers of
// several objects linked together may be separated by zero padding.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t kMagic = 0xBA55ED50u;
constexpr std::size_t kHeaderBytes = 16;
constexpr std::size_t kEntryMinBytes = 32; // up to and including the architecture field

template <typename T> T readLe(const std::vector<unsigned char>& b, std::size_t at) {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(b[at + i]) << (8 * i));
    return v;
}

struct Entry {
    int kind = 0; // 1 PTX, 2 ELF
    unsigned arch = 0;
};

// The entries of every container in `b`; throws a message with the offset on malformed data.
std::vector<Entry> parse(const std::vector<unsigned char>& b) {
    std::vector<Entry> entries;
    std::size_t pos = 0;
    while (pos < b.size()) {
        if (b[pos] == 0) { // padding between containers
            ++pos;
            continue;
        }
        if (b.size() - pos < kHeaderBytes) throw "truncated container header at offset " + std::to_string(pos);
        const auto magic = readLe<std::uint32_t>(b, pos);
        if (magic != kMagic) {
            char m[16];
            std::snprintf(m, sizeof m, "0x%08X", magic);
            throw "no fat binary header at offset " + std::to_string(pos) + " (magic " + m + ", expected 0xBA55ED50)";
        }
        const auto headerBytes = readLe<std::uint16_t>(b, pos + 6);
        const auto size = readLe<std::uint64_t>(b, pos + 8);
        if (headerBytes < kHeaderBytes || size > b.size() - pos - headerBytes)
            throw "container at offset " + std::to_string(pos) + " claims " + std::to_string(size) +
                " bytes of entries, beyond the end of the data";
        std::size_t e = pos + headerBytes;
        const std::size_t end = e + size;
        while (e < end) {
            if (end - e < kEntryMinBytes) throw "truncated entry at offset " + std::to_string(e);
            const auto entryHeader = readLe<std::uint32_t>(b, e + 4);
            const auto payload = readLe<std::uint64_t>(b, e + 8);
            if (entryHeader < kEntryMinBytes || entryHeader > end - e || payload > end - e - entryHeader)
                throw "entry at offset " + std::to_string(e) + " extends beyond its container (ends at " +
                    std::to_string(end) + ")";
            entries.push_back({readLe<std::uint16_t>(b, e), readLe<std::uint32_t>(b, e + 28)});
            e += entryHeader + payload;
        }
        pos = end;
    }
    return entries;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2 && !(argc == 4 && std::strcmp(argv[2], "--require-elf") == 0)) {
        std::fprintf(stderr, "usage: fatbin_list FILE [--require-elf 80,90]\n");
        return 2;
    }
    const std::string file = argv[1];
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "%s: cannot be read\n", file.c_str());
        return 1;
    }
    const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<Entry> entries;
    try {
        entries = parse(bytes);
    } catch (const std::string& why) {
        std::fprintf(stderr, "%s: %s\n", file.c_str(), why.c_str());
        return 1;
    }
    if (entries.empty()) {
        std::fprintf(stderr, "%s: no fat binary entries (%zu bytes)\n", file.c_str(), bytes.size());
        return 1;
    }
    std::set<unsigned> elf;
    for (const Entry& x : entries) {
        if (x.kind == 1 || x.kind == 2)
            std::printf("%s sm_%u\n", x.kind == 1 ? "PTX" : "ELF", x.arch);
        else
            std::printf("kind %d sm_%u\n", x.kind, x.arch);
        if (x.kind == 2) elf.insert(x.arch);
    }
    if (argc == 4) {
        std::stringstream want(argv[3]);
        std::string arch;
        int missing = 0;
        while (std::getline(want, arch, ',')) {
            if (arch.empty() || arch.find_first_not_of("0123456789") != std::string::npos || arch.size() > 4) {
                std::fprintf(stderr, "--require-elf: '%s' is not an SM number such as 80\n", arch.c_str());
                return 2;
            }
            if (elf.count(static_cast<unsigned>(std::stoul(arch)))) continue;
            std::fprintf(stderr, "%s: no ELF entry for sm_%s\n", file.c_str(), arch.c_str());
            ++missing;
        }
        if (missing) return 1;
    }
    return 0;
}
