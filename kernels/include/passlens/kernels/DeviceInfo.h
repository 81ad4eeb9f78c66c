#pragma once

#include <cstddef>
#include <string>

namespace passlens {

/// What the CUDA backend can use on this machine. Plain data.
struct DeviceInfo {
    /// True when this build contains the CUDA backend (PASSLENS_HAVE_CUDA).
    bool cudaCompiled = false;
    /// Number of CUDA devices visible to the runtime; 0 when none, or when CUDA is not compiled.
    int deviceCount = 0;
    /// Name of device 0 (e.g. "NVIDIA H200"); empty when there is no device.
    std::string name;
    /// Why no device can be used ("no CUDA device: ..."), or why the query failed; empty on
    /// success. Never empty when deviceCount == 0.
    std::string error;
};

/// Asks the CUDA runtime which devices exist. Never throws and never aborts: every failure
/// (no driver, no device, CUDA not compiled in) is reported in DeviceInfo::error.
DeviceInfo queryDevices();

/// The copy bandwidth a plain program reaches on CUDA device 0: `bytes` copied between a pinned
/// host buffer (cudaMallocHost) and device memory with cudaMemcpy, `repeats` times each way
/// timed with CUDA events after one untimed copy. The reference for the executor's transfers
/// (bench_transfer compares means with means). GB/s = 1e9 bytes per second.
struct CopyBandwidth {
    double hostToDeviceGBs = 0;     ///< from the mean copy time
    double deviceToHostGBs = 0;     ///< from the mean copy time
    double hostToDeviceBestGBs = 0; ///< from the fastest copy
    double deviceToHostBestGBs = 0; ///< from the fastest copy
    /// Why it could not be measured (no device, CUDA not compiled, bytes or repeats < 1, out of
    /// memory); empty on success.
    std::string error;
};
/// Never throws; failures are reported in CopyBandwidth::error.
CopyBandwidth measurePinnedCopyBandwidth(std::size_t bytes, int repeats);

} // namespace passlens
