// libFuzzer target: profile files (`render --overlay PROFILE`: loadTimingProfile, which takes
// `run --profile` files, `run --json` output and sessions' `profiles`), and the typed reader of
// the same profile objects (ExecutionProfile::fromJson, FORMAT.md §2).
#include "FuzzCommon.h"

#include <passlens/io/JsonFile.h>
#include <passlens/layout/TimingOverlay.h>
#include <passlens/trace/ExecutionProfile.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {
std::filesystem::path g_file;
} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    // the reader takes a path: each input is written to one file in memory-backed /dev/shm
    const std::filesystem::path dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    g_file = dir / ("passlens-fuzz-" + std::to_string(::getpid()) + ".profile.json");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    {
        std::ofstream out(g_file, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
    }
    const std::string label = g_file.string();
    try {
        // as `render --overlay` reads it for the final phase
        (void)passlens::loadTimingProfile(g_file, "final");
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, label, text);
    }
    try {
        // every profile object of the file through the typed reader
        const nlohmann::json doc = passlens::readJsonFile(g_file);
        const nlohmann::json* list = doc.is_object() && doc.contains("profiles") ? &doc["profiles"] : &doc;
        if (list->is_array())
            for (std::size_t i = 0; i < list->size(); ++i)
                (void)passlens::ExecutionProfile::fromJson((*list)[i], label + ": profiles[" + std::to_string(i) + "]");
        else
            (void)passlens::ExecutionProfile::fromJson(*list, label);
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, label, text);
    }
    return 0;
}
