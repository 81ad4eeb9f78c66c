// libFuzzer target: profile files, through the one reader (ExecutionProfile::load, core/trace):
// what `render --overlay PROFILE` reads (`run --profile` files, `run --json` output, sessions'
// `profiles`), for the final phase and for any phase.
#include "FuzzCommon.h"

#include <passlens/trace/ExecutionProfile.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {
std::filesystem::path g_file;
} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    g_file = passlens::fuzz::scratchFile(".profile.json"); // the reader takes a path
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    {
        std::ofstream out(g_file, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    const std::string label = g_file.string();
    for (const char* phase : {"final", ""}) {
        try {
            // as `render --overlay` reads it for the final phase, then whichever phase comes first
            (void)passlens::ExecutionProfile::load(g_file, phase);
        } catch (const passlens::Error& e) {
            passlens::fuzz::checkMessage(e, label, text);
        }
    }
    return 0;
}
