#pragma once

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

} // namespace passlens
