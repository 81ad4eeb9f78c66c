// libFuzzer target: graph JSON reader (readGraphJsonText, FORMAT.md §1).
#include "FuzzCommon.h"

#include <passlens/io/GraphJson.h>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        passlens::LoadedGraph g = passlens::readGraphJsonText(text, "fuzz.graph.json", "/nonexistent-fuzz-dir");
        if (g.graph) (void)g.graph->toposort();
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, "fuzz.graph.json", text);
    }
    return 0;
}
