// libFuzzer target: NumPy .npy reader (parseNpy, graph JSON constants `{"npy": FILE}`).
#include "FuzzCommon.h"

#include <passlens/io/Npy.h>

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    passlens::fuzz::setFuzzLimits();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    const std::string label = "fuzz.npy";
    try {
        const auto t = passlens::parseNpy(bytes, label);
        // what is read can be written back and reads the same
        const auto again = passlens::parseNpy(passlens::toNpy(*t), label);
        if (again->dtype != t->dtype || again->shape != t->shape || *again->bytes != *t->bytes) {
            std::fprintf(stderr, "fuzz: .npy round trip changed the dtype, shape or bytes\n");
            std::abort();
        }
    } catch (const passlens::Error& e) {
        passlens::fuzz::checkMessage(e, label, bytes);
    }
    return 0;
}
