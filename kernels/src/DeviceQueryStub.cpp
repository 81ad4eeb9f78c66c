// queryDevices() for builds without the CUDA backend (PASSLENS_CUDA=OFF or no nvcc).
#include "passlens/kernels/DeviceInfo.h"

namespace passlens {

DeviceInfo queryDevices() {
    DeviceInfo info;
    info.cudaCompiled = false;
    info.deviceCount = 0;
    info.error = "no CUDA device: PassLens was built without CUDA support";
    return info;
}

CopyBandwidth measurePinnedCopyBandwidth(std::size_t, int) {
    CopyBandwidth b;
    b.error = "no CUDA device: PassLens was built without CUDA support";
    return b;
}

} // namespace passlens
