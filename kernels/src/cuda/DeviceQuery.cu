// queryDevices() for builds with the CUDA backend. Every runtime call is checked; a machine
// without a driver or without a device is a normal outcome, reported in DeviceInfo::error.
#include "passlens/kernels/DeviceInfo.h"

#include <cstring>
#include <string>

#include <cuda_runtime_api.h>

namespace passlens {

namespace {

std::string describe(const char* call, cudaError_t status) {
    std::string text = call;
    text += " failed: ";
    text += cudaGetErrorName(status);
    text += " (";
    text += cudaGetErrorString(status);
    text += ")";
    return text;
}

} // namespace

DeviceInfo queryDevices() {
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

CopyBandwidth measurePinnedCopyBandwidth(std::size_t bytes, int repeats) {
    CopyBandwidth out;
    if (bytes == 0 || repeats < 1) {
        out.error = "measurePinnedCopyBandwidth needs bytes >= 1 and repeats >= 1";
        return out;
    }
    const DeviceInfo info = queryDevices();
    if (info.deviceCount == 0) {
        out.error = info.error;
        return out;
    }
    void* host = nullptr;
    void* dev = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    auto check = [&](const char* call, cudaError_t st) {
        if (st == cudaSuccess) return true;
        (void)cudaGetLastError();
        if (out.error.empty()) out.error = describe(call, st);
        return false;
    };
    if (check("cudaSetDevice(0)", cudaSetDevice(0)) && check("cudaMallocHost", cudaMallocHost(&host, bytes)) &&
        check("cudaMalloc", cudaMalloc(&dev, bytes)) && check("cudaEventCreate", cudaEventCreate(&start)) &&
        check("cudaEventCreate", cudaEventCreate(&stop))) {
        // mean and best GB/s of `repeats` timed copies
        auto measure = [&](cudaMemcpyKind kind, void* dst, const void* src, double& meanGBs, double& bestGBs) {
            double bestMs = -1, sumMs = 0;
            if (!check("cudaMemcpy", cudaMemcpy(dst, src, bytes, kind))) return;
            for (int i = 0; i < repeats; ++i) {
                float ms = 0;
                if (!check("cudaEventRecord", cudaEventRecord(start)) ||
                    !check("cudaMemcpy", cudaMemcpy(dst, src, bytes, kind)) ||
                    !check("cudaEventRecord", cudaEventRecord(stop)) ||
                    !check("cudaEventSynchronize", cudaEventSynchronize(stop)) ||
                    !check("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start, stop)))
                    return;
                sumMs += ms;
                if (bestMs < 0 || ms < bestMs) bestMs = ms;
            }
            const double meanMs = sumMs / repeats;
            if (meanMs > 0) meanGBs = static_cast<double>(bytes) / (meanMs * 1e-3) / 1e9;
            if (bestMs > 0) bestGBs = static_cast<double>(bytes) / (bestMs * 1e-3) / 1e9;
        };
        std::memset(host, 1, bytes);
        measure(cudaMemcpyHostToDevice, dev, host, out.hostToDeviceGBs, out.hostToDeviceBestGBs);
        measure(cudaMemcpyDeviceToHost, host, dev, out.deviceToHostGBs, out.deviceToHostBestGBs);
    }
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (dev) cudaFree(dev);
    if (host) cudaFreeHost(host);
    return out;
}

} // namespace passlens
