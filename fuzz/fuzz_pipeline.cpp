// libFuzzer target: pipeline file reader (Pipeline::fromJson, FORMAT.md §3).
#include "FuzzCommon.h"

#include <passlens/io/JsonFile.h>
#include <passlens/pipeline/Pipeline.h>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::string label = "fuzz.pipeline.json";
    try {
        const nlohmann::json doc = passlens::parseJson(text, label);
        const passlens::Pipeline p = passlens::Pipeline::fromJson(doc, label);
        (void)p.phases();
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, label, text);
    }
    return 0;
}
