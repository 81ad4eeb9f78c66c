// libFuzzer target: session reader (Trace::fromSessionJson, FORMAT.md §2) and the replay of its
// events up to the final graph.
#include "FuzzCommon.h"

#include <passlens/io/JsonFile.h>
#include <passlens/trace/Trace.h>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::string label = "fuzz.passlens.json";
    try {
        const nlohmann::json doc = passlens::parseJson(text, label);
        const passlens::Trace trace = passlens::Trace::fromSessionJson(doc, label, "/nonexistent-fuzz-dir");
        (void)trace.graphAfterPhase("final");
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, label, text);
    }
    return 0;
}
