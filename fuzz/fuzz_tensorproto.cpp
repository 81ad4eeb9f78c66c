// libFuzzer target: ONNX test-data values (readValueProto: TensorProto, SequenceProto and
// OptionalProto files, as `run --inputs DIR` reads input_N.pb / output_N.pb).
#include "FuzzCommon.h"

#include <passlens/ir/Type.h>
#include <passlens/kernels/TensorIO.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {
std::filesystem::path g_file;
} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    g_file = passlens::fuzz::scratchFile(".pb"); // the reader takes a path
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // the first byte picks the type the file is read as; the rest is the file
    static const passlens::Type kTypes[] = {
        passlens::Type::parse("float32[?,?]"),         passlens::Type::parse("int64[?]"),
        passlens::Type::parse("bfloat16[?]"),          passlens::Type::parse("seq(int64[*])"),
        passlens::Type::parse("optional(float32[?])"), passlens::Type::parse("optional(seq(int32[?]))"),
    };
    const passlens::Type& type = kTypes[data[0] % (sizeof kTypes / sizeof kTypes[0])];
    const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    {
        std::ofstream out(g_file, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const std::string label = g_file.string();
    try {
        (void)passlens::readValueProto(g_file, type);
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, label, bytes);
    }
    return 0;
}
