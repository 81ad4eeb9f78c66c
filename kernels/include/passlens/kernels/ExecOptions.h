#pragma once
/// @file ExecOptions.h
/// The executor's switches in one place: which device GPU kinds run on, the CPU backend's own
/// planning (epilogue fusion, in-place Join) and the kernel choices benchmarks and tests force.
/// Each switch starts from its built-in default overridden by its PASSLENS_* environment variable
/// (read once per process; docs/USER_GUIDE.md "Executor switches"); the caller may then set any field. The
/// executor keeps its options in ExecContext::options, where the kernels read them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

/// Which device GPU kinds run on.
enum class DeviceChoice : std::uint8_t {
    Auto, ///< CUDA when a device exists (and the build has CUDA), else the CPU
    Cpu,  ///< always the CPU backend (GPU kinds emulated on the CPU)
    Cuda  ///< the CUDA device; construction throws when there is none
};
/// Parses "auto", "cpu" or "cuda"; std::nullopt otherwise.
std::optional<DeviceChoice> parseDeviceChoice(const std::string& text);

/// Tile size of the CPU backend's Winograd convolutions (see Conv.h winogradTileSize).
enum class WinogradChoice : std::uint8_t {
    Auto, ///< the measured rule: F(4x4,3x3), F(2x2,3x3) or im2col by output size and channels
    Off,  ///< always im2col + SGEMM
    F2,   ///< F(2x2,3x3) for every 3x3 stride-1 undilated ungrouped float32 convolution
    F4    ///< F(4x4,3x3) likewise
};

/// Which build of the CPU backend's hot loops (Loops.inl) runs.
enum class CpuLoops : std::uint8_t {
    Auto,     ///< the best the CPU supports: x86-64-v4, x86-64-v3 or baseline
    Baseline, ///< the baseline x86-64 build
    V3        ///< the x86-64-v3 (AVX2) build when the CPU has it, else baseline
};

/// Options of an Executor (and of the executors of its nested graphs). The environment variable
/// of each switch is named beside it; a value other than those listed leaves the default.
struct ExecOptions {
    /// The built-in defaults overridden by the environment (environment()), then `device` and
    /// `poison`.
    ExecOptions(DeviceChoice device = DeviceChoice::Auto, bool poison = false);
    /// The built-in defaults, ignoring the environment.
    static ExecOptions builtIn();
    /// The built-in defaults overridden by the PASSLENS_* variables below, read at the first call.
    static const ExecOptions& environment();
    /// Applies one setting as its environment variable would ("PASSLENS_JOIN_IN_PLACE", "off").
    /// False (and nothing changed) when `variable` is not one of the switches below.
    bool set(std::string_view variable, std::string_view value);
    /// The switches' environment variable names, in the order of the fields below.
    static const std::vector<std::string>& variables();

    DeviceChoice device = DeviceChoice::Auto;
    /// Tests: every buffer a kernel gets is pre-filled with NaN / -1 bytes (BufferPool::setPoison).
    bool poison = false;
    /// Epilogue fusion on the CPU backend (see Executor): a convolution's only client, an
    /// element-wise node over per-channel or scalar float32 constants, is applied by the
    /// convolution kernel to its output while in cache. PASSLENS_EPILOGUE_FUSION=off.
    bool fuseEpilogues = true;
    /// In-place Join (CPU backend): a Join / GpuJoin whose inputs are each one contiguous block of
    /// its output and are all written by convolution kernels (directly or through a fused
    /// epilogue) for it alone gets its output buffer before they run; each convolution writes its
    /// block there and the Join does nothing. PASSLENS_JOIN_IN_PLACE=off.
    bool joinInPlace = true;
    /// With a CUDA device: synchronise the stream and check for errors after every CUDA step, so
    /// a fault inside a kernel (reported by CUDA at the next synchronising call) is reported
    /// against the node that launched it. Slower. PASSLENS_CUDA_SYNC=1.
    bool cudaSyncEachStep = false;
    /// A fused epilogue that is a chain of per-row steps runs as in-place loops (compileChain)
    /// rather than through the program interpreter (same bits). PASSLENS_EPILOGUE_CHAIN=off.
    bool epilogueChain = true;
    /// 3x3 depthwise convolutions use the AVX-512 intrinsics of the x86-64-v4 loops (same bits as
    /// the portable loop). PASSLENS_DEPTHWISE_AVX512=off.
    bool depthwiseAvx512 = true;
    /// Every pooling window runs the separable kernel (not the direct 3-wide stride-2 max pool;
    /// same bits). PASSLENS_POOL_SEPARABLE=1 (any value but empty or "0").
    bool poolSeparable = false;
    /// PASSLENS_CONV_WINOGRAD=off|2|4.
    WinogradChoice winograd = WinogradChoice::Auto;
    /// PASSLENS_CPU_LOOPS=baseline|v3.
    CpuLoops cpuLoops = CpuLoops::Auto;

private:
    struct BuiltIn {};
    explicit ExecOptions(BuiltIn) {}
};

} // namespace passlens
