#include "GuiExecution.h"

#include <passlens/ir/FunctionGraph.h>
#include <passlens/kernels/Check.h>
#include <passlens/kernels/Executor.h>
#include <passlens/kernels/Profiler.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace passlens {

namespace {
class KernelsBackend final : public ExecutionBackend {
public:
    ExecutionProfile profile(const FunctionGraph& graph, const ExecuteRequest& request,
                             const std::function<void(double)>& progress, const std::atomic<bool>& cancel) override {
        ExecOptions opt;
        if (auto d = parseDeviceChoice(request.device)) opt.device = *d;
        Executor exec(graph, opt);
        const auto missing = exec.missingKernels();
        if (!missing.empty()) throw std::runtime_error("no kernel for " + missing.front());
        const std::vector<Tensor> inputs = seededInputs(graph);
        // warm-ups are part of profileExecutor; run them in slices to report progress and cancel
        ProfileOptions po;
        po.warmup = request.warmup;
        po.repeats = 1;
        ProfileReport best;
        // the wall times of the slices: their mean and spread are the profile's (each slice's
        // own spread, of one run, is 0)
        double wall = 0, wallSq = 0, profiledWall = 0;
        for (int r = 0; r < request.repeats; ++r) {
            if (cancel) throw std::runtime_error("cancelled");
            ProfileReport rep = profileExecutor(exec, inputs, po, "step");
            if (!rep.error.empty()) throw std::runtime_error(rep.error);
            po.warmup = 0;
            wall += rep.wallUs;
            wallSq += rep.wallUs * rep.wallUs;
            profiledWall += rep.profiledWallUs;
            if (r == 0)
                best = rep;
            else
                for (std::size_t i = 0; i < rep.nodes.size() && i < best.nodes.size(); ++i)
                    if (rep.nodes[i].timeUs && best.nodes[i].timeUs) *best.nodes[i].timeUs += *rep.nodes[i].timeUs;
            if (r > 0)
                for (std::size_t i = 0; i < rep.transfers.size() && i < best.transfers.size(); ++i)
                    best.transfers[i].timeUs += rep.transfers[i].timeUs;
            progress(static_cast<double>(r + 1) / request.repeats);
        }
        for (auto& n : best.nodes)
            if (n.timeUs) *n.timeUs /= request.repeats;
        for (auto& t : best.transfers) t.timeUs /= request.repeats;
        best.repeats = request.repeats;
        if (request.repeats > 0) {
            best.wallUs = wall / request.repeats;
            best.wallStdUs = std::sqrt(std::max(0.0, wallSq / request.repeats - best.wallUs * best.wallUs));
            best.profiledWallUs = profiledWall / request.repeats;
        }
        return best;
    }

    nlohmann::json compare(const FunctionGraph& graph, const FunctionGraph& reference) override {
        Executor a(graph), b(reference);
        const auto got = a.run(seededInputs(graph));
        const auto ref = b.run(seededInputs(reference));
        const CompareResult c = compareOutputs(got, ref);
        return {{"max_abs", c.maxAbs},
                {"max_rel", c.maxRel},
                {"shapes_match", c.within(std::numeric_limits<double>::infinity())}};
    }
};
} // namespace

std::shared_ptr<ExecutionBackend> makeGuiExecutionBackend() { return std::make_shared<KernelsBackend>(); }

} // namespace passlens
