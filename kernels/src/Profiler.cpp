// Profiler: warm-up, unprofiled and profiled repeats, per-node and per-transfer means, overhead,
// FORMAT.md §2 JSON and Theano-style text tables.
#include "passlens/kernels/Profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace passlens {

namespace {
using Clock = std::chrono::steady_clock;

TransferDirection directionOf(const Apply& n) {
    const std::string& k = n.op().kind();
    if (k == "GpuFromHost") return TransferDirection::HtoD;
    if (k == "HostFromGpu") return TransferDirection::DtoH;
    return TransferDirection::DtoD;
}

} // namespace

ProfileReport profileExecutor(Executor& exec, const std::vector<Tensor>& inputs, const ProfileOptions& options,
                              const std::string& phase) {
    ProfileReport rep;
    rep.phase = phase;
    rep.device = exec.deviceDescription();
    rep.plan = exec.plan();
    rep.warmup = std::max(0, options.warmup);
    rep.repeats = std::max(1, options.repeats);
    const auto& steps = exec.steps();
    const std::size_t ns = steps.size();
    std::vector<double> sum(ns, 0.0);
    std::vector<std::size_t> bytes(ns, 0);
    std::vector<bool> ran(ns, false), fused(ns, false);
    std::vector<RunTimings::ImplicitTransfer> implicit; // summed over the profiled runs
    bool implicitRan = false;
    auto fill = [&]() {
        double total = 0;
        for (std::size_t i = 0; i < ns; ++i) {
            const ExecStep& s = steps[i];
            ProfileNode n;
            n.node = s.node->id();
            n.kind = s.node->op().kind();
            n.op = s.node->op().str();
            n.name = s.node->name();
            n.stepKind = s.kind;
            if (ran[i] && fused[i] && s.fusedInto >= 0) {
                n.fusedInto = steps[static_cast<std::size_t>(s.fusedInto)].node->id();
            } else if (ran[i] && fused[i] && s.joinInPlace) {
                n.inPlace = true;
                for (const ExecStep& w : steps)
                    if (w.joinStep == static_cast<int>(i)) n.inPlaceWriters.push_back(w.node->id());
            } else if (ran[i]) {
                n.timeUs = sum[i];
                total += sum[i];
                if (s.kind == StepKind::Transfer)
                    rep.transfers.push_back({n.node, bytes[i], directionOf(*s.node), sum[i]});
            }
            rep.nodes.push_back(std::move(n));
        }
        if (implicitRan)
            for (const RunTimings::ImplicitTransfer& x : implicit)
                rep.transfers.push_back({steps[x.step].node->id(), x.bytes,
                                         x.toDevice ? TransferDirection::HtoD : TransferDirection::DtoH, x.us, true});
        rep.nodeSumUs = total;
    };
    try {
        for (int i = 0; i < rep.warmup; ++i) exec.run(inputs);
        // unprofiled and profiled runs alternate, so a machine that speeds up or slows down
        // during the measurement moves both means alike and the overhead stays their difference
        RunTimings tm;
        double wall = 0, plain = 0, plainSq = 0;
        for (int i = 0; i < rep.repeats; ++i) {
            const auto t0 = Clock::now();
            exec.run(inputs);
            const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
            plain += us;
            plainSq += us * us;
            exec.run(inputs, &tm);
            wall += tm.totalUs;
            for (std::size_t k = 0; k < ns; ++k) {
                sum[k] += tm.stepUs[k];
                bytes[k] = tm.stepBytes[k];
                if (k < tm.stepFused.size() && tm.stepFused[k]) fused[k] = true;
            }
            if (i == 0) implicit.assign(tm.implicitTransfers.size(), {});
            // the same copies every run (the steps and their placement do not change)
            for (std::size_t j = 0; j < implicit.size() && j < tm.implicitTransfers.size(); ++j) {
                const RunTimings::ImplicitTransfer& x = tm.implicitTransfers[j];
                implicit[j] = {x.step, x.toDevice, x.bytes, implicit[j].us + x.us};
            }
        }
        rep.wallUs = plain / rep.repeats;
        rep.wallStdUs = std::sqrt(std::max(0.0, plainSq / rep.repeats - rep.wallUs * rep.wallUs));
        rep.profiledWallUs = wall / rep.repeats;
        for (std::size_t k = 0; k < ns; ++k) {
            sum[k] /= rep.repeats;
            ran[k] = true;
        }
        for (RunTimings::ImplicitTransfer& x : implicit) x.us /= rep.repeats;
        implicitRan = true;
    } catch (const std::exception& e) {
        rep.error = e.what();
        // one timed run up to the failure, for the nodes that can run
        RunTimings tm;
        std::fill(sum.begin(), sum.end(), 0.0);
        try {
            exec.run(inputs, &tm);
        } catch (const std::exception&) {}
        for (std::size_t k = 0; k < ns && k < tm.stepUs.size(); ++k) {
            sum[k] = tm.stepUs[k];
            bytes[k] = tm.stepBytes[k];
        }
        // steps up to (not including) the failing one ran
        for (std::size_t k = 0; k < ns; ++k) {
            if (steps[k].kind == StepKind::Missing || rep.error.find(describeNode(*steps[k].node)) != std::string::npos)
                break;
            ran[k] = k < tm.stepUs.size() && !std::isnan(tm.stepUs[k]); // NaN: a device time that was not recorded
        }
        rep.repeats = 0;
    }
    fill();
    return rep;
}

} // namespace passlens
