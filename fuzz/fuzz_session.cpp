// libFuzzer target: the session reader of both formats (SessionFile::read: the compact session of
// docs/SESSION_FORMAT.md and the JSON session of FORMAT.md §2) and the replay of its events up to
// the final graph.
#include "FuzzCommon.h"

#include <passlens/io/SessionFile.h>
#include <passlens/trace/Trace.h>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::string label = "fuzz.passlens";
    try {
        const passlens::Trace trace = passlens::SessionFile::read(text, label, "/nonexistent-fuzz-dir");
        (void)trace.graphAfterPhase("final");
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, label, text);
    }
    return 0;
}
