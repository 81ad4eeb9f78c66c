// queryDevices() for builds with the CUDA backend. Every runtime call is checked; a machine
// without a driver or without a device is a normal outcome, reported in DeviceInfo::error.
#include "passlens/kernels/DeviceInfo.h"

#include <string>

#include <cuda_runtime_api.h>

namespace passlens {

namespace {

std::string describe(const char* call, cudaError_t status)
{
    std::string text = call;
    text += " failed: ";
    text += cudaGetErrorName(status);
    text += " (";
    text += cudaGetErrorString(status);
    text += ")";
    return text;
}

} // namespace

DeviceInfo queryDevices()
{
    DeviceInfo info;
    info.cudaCompiled = true;

    int count = 0;
    const cudaError_t countStatus = cudaGetDeviceCount(&count);
    if (countStatus != cudaSuccess) {
        (void)cudaGetLastError(); // clear the runtime's last-error state
        info.error = "no CUDA device: " + describe("cudaGetDeviceCount", countStatus);
        return info;
    }
    if (count <= 0) {
        info.error = "no CUDA device: cudaGetDeviceCount found none";
        return info;
    }

    cudaDeviceProp properties{};
    const cudaError_t propStatus = cudaGetDeviceProperties(&properties, 0);
    if (propStatus != cudaSuccess) {
        (void)cudaGetLastError();
        info.deviceCount = count;
        info.error = describe("cudaGetDeviceProperties(0)", propStatus);
        return info;
    }
    info.deviceCount = count;
    info.name = properties.name;
    return info;
}

} // namespace passlens
