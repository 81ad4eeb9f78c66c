// libFuzzer target: ONNX importer (importOnnxBytes, OPS.md "Import rules").
#include "FuzzCommon.h"

#include <passlens/onnx/OnnxImporter.h>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        passlens::LoadedGraph g = passlens::importOnnxBytes(bytes, "fuzz.onnx", "/nonexistent-fuzz-dir");
        if (g.graph) (void)g.graph->toposort();
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, "fuzz.onnx", bytes);
    }
    return 0;
}
