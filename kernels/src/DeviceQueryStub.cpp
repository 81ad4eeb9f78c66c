// queryDevices() for builds without the CUDA backend (PASSLENS_CUDA=OFF or no nvcc).
#include "passlens/kernels/DeviceInfo.h"

namespace passlens {

DeviceInfo queryDevices()
{
    DeviceInfo info;
    info.cudaCompiled = false;
    info.deviceCount = 0;
    info.error = "no CUDA device: PassLens was built without CUDA support";
    return info;
}

} // namespace passlens
