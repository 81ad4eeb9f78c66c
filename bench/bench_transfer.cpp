// Host <-> device copy bandwidth of the executor's transfers (issue: Execution, "host-device
// copies reach at least 80% of the bandwidth a plain pinned cudaMemcpy reaches there"):
//   bench_transfer [--mib 1,16,64,256] [--repeats N]
// For each size: a graph x -> GpuFromHost -> HostFromGpu run by the Executor on CUDA device 0
// and profiled (per-transfer mean time from CUDA events, ProfileTransfer::gbPerS), against
// measurePinnedCopyBandwidth (cudaMallocHost buffer, cudaMemcpy, N timed copies) on the same
// device. Prints one line per size and direction: both means, their ratio (the target: >= 0.8),
// and the pinned copy's best; exit 3 without a CUDA device (the message says why).
#include "BenchCli.h"

#include <passlens/ir/FunctionGraph.h>
#include <passlens/ir/OpRegistry.h>
#include <passlens/kernels/DeviceInfo.h>
#include <passlens/kernels/Executor.h>
#include <passlens/kernels/Profiler.h>
#include <passlens/kernels/TensorIO.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    std::vector<long> sizesMib = {1, 16, 64, 256};
    int repeats = 20;
    CLI::App app{
        "bench_transfer: the executor's GpuFromHost / HostFromGpu bandwidth against cudaMemcpy from pinned memory "
        "on CUDA device 0 (exit 3 without one)"};
    app.add_option("--mib", sizesMib, "Sizes in MiB, comma-separated")
        ->delimiter(',')
        ->check(CLI::Range(1L, 65536L))
        ->capture_default_str();
    app.add_option("--repeats", repeats, "Timed copies per size")->check(CLI::Range(1, 100000))->capture_default_str();
    if (const auto rc = passlens::bench::parseCommandLine(app, argc, argv)) return *rc;
    const passlens::DeviceInfo info = passlens::queryDevices();
    if (info.deviceCount == 0) {
        std::printf("bench_transfer: %s\n", info.error.c_str());
        return 3;
    }
    std::printf("bench_transfer: device %s, %d repeats after 3 warm-ups\n", info.name.c_str(), repeats);
    for (long mib : sizesMib) {
        const std::int64_t n = mib * (1 << 20) / 4;
        passlens::FunctionGraph g;
        passlens::Variable* x = g.addInput(passlens::Type(passlens::DType::Float32, {n}), "x");
        passlens::Variable* gx = g.apply(passlens::Op::get("GpuFromHost"), {x});
        g.setOutputs({g.apply(passlens::Op::get("HostFromGpu"), {gx})});
        try {
            passlens::Executor ex(g, passlens::ExecOptions{passlens::DeviceChoice::Cuda});
            const std::vector<passlens::Tensor> in = {passlens::randomTensor(x->type(), 1)};
            const passlens::ProfileReport rep =
                passlens::profileExecutor(ex, in, passlens::ProfileOptions{3, repeats}, "source");
            if (!rep.error.empty()) throw std::runtime_error(rep.error);
            const passlens::CopyBandwidth ref =
                passlens::measurePinnedCopyBandwidth(static_cast<std::size_t>(n) * 4, repeats);
            if (!ref.error.empty()) throw std::runtime_error(ref.error);
            for (const passlens::ProfileTransfer& t : rep.transfers) {
                const bool h2d = t.direction == passlens::TransferDirection::HtoD;
                const double r = h2d ? ref.hostToDeviceGBs : ref.deviceToHostGBs;
                const double best = h2d ? ref.hostToDeviceBestGBs : ref.deviceToHostBestGBs;
                std::printf("size_mib=%ld\tdirection=%s\texecutor_mean_gbs=%.2f\tpinned_cudamemcpy_mean_gbs=%."
                            "2f\tratio=%.2f\tpinned_best_gbs=%.2f\n",
                            mib, h2d ? "HtoD" : "DtoH", t.gbPerS(), r, r > 0 ? t.gbPerS() / r : 0.0, best);
            }
        } catch (const std::exception& e) {
            std::printf("size_mib=%ld\terror\t%s\n", mib, e.what());
        }
        std::fflush(stdout);
    }
    return 0;
}
