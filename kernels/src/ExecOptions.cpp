// ExecOptions: the executor's switches, their environment variables and defaults.
#include "passlens/kernels/ExecOptions.h"

#include <cstdlib>

namespace passlens {

std::optional<DeviceChoice> parseDeviceChoice(const std::string& text) {
    if (text == "auto") return DeviceChoice::Auto;
    if (text == "cpu") return DeviceChoice::Cpu;
    if (text == "cuda") return DeviceChoice::Cuda;
    return std::nullopt;
}

ExecOptions::ExecOptions(DeviceChoice device_, bool poison_)
    : ExecOptions(environment()) {
    device = device_;
    poison = poison_;
}

ExecOptions ExecOptions::builtIn() { return ExecOptions(BuiltIn{}); }

const ExecOptions& ExecOptions::environment() {
    static const ExecOptions env = [] {
        ExecOptions o{BuiltIn{}};
        for (const std::string& v : variables())
            if (const char* value = std::getenv(v.c_str())) o.set(v, value);
        return o;
    }();
    return env;
}

const std::vector<std::string>& ExecOptions::variables() {
    static const std::vector<std::string> names = {
        "PASSLENS_EPILOGUE_FUSION",  "PASSLENS_JOIN_IN_PLACE",  "PASSLENS_CUDA_SYNC",     "PASSLENS_EPILOGUE_CHAIN",
        "PASSLENS_DEPTHWISE_AVX512", "PASSLENS_POOL_SEPARABLE", "PASSLENS_CONV_WINOGRAD", "PASSLENS_CPU_LOOPS"};
    return names;
}

bool ExecOptions::set(std::string_view variable, std::string_view value) {
    if (variable == "PASSLENS_EPILOGUE_FUSION")
        fuseEpilogues = value != "off";
    else if (variable == "PASSLENS_JOIN_IN_PLACE")
        joinInPlace = value != "off";
    else if (variable == "PASSLENS_CUDA_SYNC")
        cudaSyncEachStep = value == "1";
    else if (variable == "PASSLENS_EPILOGUE_CHAIN")
        epilogueChain = value != "off";
    else if (variable == "PASSLENS_DEPTHWISE_AVX512")
        depthwiseAvx512 = value != "off";
    else if (variable == "PASSLENS_POOL_SEPARABLE")
        poolSeparable = !value.empty() && value != "0";
    else if (variable == "PASSLENS_CONV_WINOGRAD")
        winograd = value == "off" ? WinogradChoice::Off
                   : value == "2" ? WinogradChoice::F2
                   : value == "4" ? WinogradChoice::F4
                                  : WinogradChoice::Auto;
    else if (variable == "PASSLENS_CPU_LOOPS")
        cpuLoops = value == "baseline" ? CpuLoops::Baseline : value == "v3" ? CpuLoops::V3 : CpuLoops::Auto;
    else
        return false;
    return true;
}

} // namespace passlens
