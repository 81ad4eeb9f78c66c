// Executor's plan passes on the CPU backend (ExecOptions, docs/BENCHMARKS.md): epilogue fusion
// of a convolution's element-wise consumer and Join written in place by its producers; each
// decision, taken or declined with its reason, goes to Executor::plan().
#include "passlens/kernels/Executor.h"

#include "cpu/ElemwiseEngine.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace passlens {

namespace {
// "AbstractConv2d #9": a node in plan decisions.
std::string planName(const Apply& n) { return n.op().kind() + " #" + std::to_string(n.id()); }

bool isConvKind(const std::string& k) { return k == "GpuCorrMM" || k == "AbstractConv2d" || k == "OnnxConv"; }
} // namespace

std::string Executor::passOff(bool enabled, const char* pass, const char* option, const char* variable) const {
    if (m_ctx->gpu) return "not planned with a CUDA device";
    if (!enabled) return std::string(pass) + " is off (ExecOptions::" + option + ", " + variable + "=off)";
    return {};
}

void Executor::declined(PlanDecision::Pass pass, const Apply& node, const std::string& reason) {
    m_plan.push_back(
        {pass,
         node.id(),
         false,
         {},
         planName(node) + (pass == PlanDecision::Pass::EpilogueFusion ? ": no epilogue fused" : ": not in place"),
         reason});
}

// Epilogue fusion (CPU backend only): a convolution step whose output 0 has exactly one use, as
// one input of an Elemwise / GpuElemwise node whose other inputs are all float32 constants of
// size 1 on every axis but axis 1 (bias, scalars), is given that node's program as an epilogue.
// The output is neither a graph output nor read by anyone else, so overwriting it in place with
// the element-wise result is invisible; the kernel checks the runtime shapes (accepts) and the
// element-wise step passes the value through only when the kernel applied it. Every convolution
// on the CPU backend gets a PlanDecision: the fusion, or why there is none.
void Executor::planEpilogueFusion() {
    std::unordered_map<const Apply*, int> stepOf;
    for (std::size_t i = 0; i < m_steps.size(); ++i) stepOf[m_steps[i].node] = static_cast<int>(i);
    for (std::size_t i = 0; i < m_steps.size(); ++i) {
        ExecStep& s = m_steps[i];
        if (s.backend != Backend::Cpu || s.kind == StepKind::Missing || s.kind == StepKind::Transfer ||
            !isConvKind(s.node->op().kind()))
            continue;
        auto decline = [&](const std::string& reason) {
            declined(PlanDecision::Pass::EpilogueFusion, *s.node, reason);
        };
        if (const std::string off =
                passOff(m_ctx->options.fuseEpilogues, "epilogue fusion", "fuseEpilogues", "PASSLENS_EPILOGUE_FUSION");
            !off.empty()) {
            decline(off);
            continue;
        }
        if (s.node->nout() != 1) {
            decline("it has " + std::to_string(s.node->nout()) + " outputs");
            continue;
        }
        const Variable* v = s.node->output(0);
        if (std::find(m_outputSlots.begin(), m_outputSlots.end(), s.outSlots[0]) != m_outputSlots.end()) {
            decline("its output is a graph output");
            continue;
        }
        if (v->clients().size() != 1 || !v->clients().front().node) {
            decline("its output is read by " + std::to_string(v->clients().size()) + " nodes");
            continue;
        }
        const Apply* consumer = v->clients().front().node;
        const std::string& ck = consumer->op().kind();
        if (ck != "Elemwise" && ck != "GpuElemwise") {
            decline("its only client " + planName(*consumer) + " is not element-wise");
            continue;
        }
        auto it = stepOf.find(consumer);
        if (it == stepOf.end()) {
            decline("its client is not scheduled");
            continue;
        }
        ExecStep& c = m_steps[static_cast<std::size_t>(it->second)];
        if (c.backend != Backend::Cpu || c.kind == StepKind::Missing || c.fusedInto >= 0 || c.fusedStep >= 0 ||
            c.outSlots.size() != 1) {
            decline(planName(*consumer) + " does not run on the CPU backend as one step");
            continue;
        }
        int yInput = -1;
        std::string why;
        std::vector<Tensor> constants;
        for (std::size_t k = 0; k < c.inSlots.size() && why.empty(); ++k) {
            if (c.inSlots[k] == s.outSlots[0]) {
                if (yInput >= 0) why = planName(*consumer) + " reads it twice";
                yInput = static_cast<int>(k);
                constants.emplace_back();
            } else {
                const Tensor& t = m_constSlots[static_cast<std::size_t>(c.inSlots[k])];
                if (!t.defined())
                    why = "input " + std::to_string(k) + " of " + planName(*consumer) + " is not a constant";
                constants.push_back(t);
            }
        }
        if (why.empty() && (yInput < 0 || !c.lastUse[static_cast<std::size_t>(yInput)]))
            why = planName(*consumer) + " is not the last reader of its output";
        std::unique_ptr<OutputEpilogue> ep;
        if (why.empty()) {
            ep = cpu::makeElemwiseEpilogue(*consumer, yInput, constants, m_ctx->options, &why);
            if (!ep && !why.empty()) why = planName(*consumer) + ": " + why;
        }
        if (!ep) {
            decline(why);
            continue;
        }
        s.epilogue = std::move(ep);
        s.fusedStep = it->second;
        c.fusedInto = static_cast<int>(i);
        c.fusedInput = yInput;
        m_plan.push_back({PlanDecision::Pass::EpilogueFusion,
                          consumer->id(),
                          true,
                          {s.node->id()},
                          planName(*consumer) + " fused into " + planName(*s.node) + " as its epilogue",
                          "the convolution's only client; its other inputs are per-channel or scalar float32 "
                          "constants (the kernel applies it to each block it computes)"});
    }
}

// In-place Join (CPU backend only): a Join / GpuJoin that is not a graph output, with a static
// output shape whose dims before the axis are all 1 (so each input is one contiguous block of the
// output), whose inputs are each read by it alone (once) and each written by a convolution
// kernel: the convolution's own output, or the output of the element-wise node fused into it
// (planned above; the convolution applies it in place). Before the first of them runs, the
// executor allocates the Join's output and hands each convolution its block as output 0
// (KernelCall::outputInto); when every input then arrives as its block, the Join passes the
// buffer on without copying. Anything else (a kernel that declined the block, an epilogue that was
// not applied, other shapes at run time) runs the Join's kernel as usual. Every Join on the CPU
// backend gets a PlanDecision.
void Executor::planJoinInPlace() {
    std::unordered_map<const Apply*, int> stepOf;
    for (std::size_t i = 0; i < m_steps.size(); ++i) stepOf[m_steps[i].node] = static_cast<int>(i);
    auto isConv = [](const ExecStep& s) {
        return isConvKind(s.node->op().kind()) && s.backend == Backend::Cpu && s.kind != StepKind::Missing &&
               s.kind != StepKind::Transfer && s.node->nout() == 1;
    };
    auto isOutput = [&](int slot) {
        return std::find(m_outputSlots.begin(), m_outputSlots.end(), slot) != m_outputSlots.end();
    };
    auto isGraphInput = [&](int slot) {
        return std::find(m_inputSlots.begin(), m_inputSlots.end(), slot) != m_inputSlots.end();
    };
    auto staticShape = [](const Type& t, Shape& out) {
        if (!t.rankKnown()) return false;
        for (std::int64_t d : t.dims())
            if (d < 0) return false;
        out.assign(t.dims().begin(), t.dims().end());
        return true;
    };
    // why a variable is not read by one node (no graph output) once; "" when it is
    auto soleUse = [&](const Variable* v, int slot) -> std::string {
        if (v->isConstant()) return "is a constant";
        if (isGraphInput(slot)) return "is a graph input";
        if (isOutput(slot)) return "is a graph output";
        if (v->clients().size() != 1 || !v->clients().front().node)
            return "is read by " + std::to_string(v->clients().size()) + " nodes";
        return {};
    };
    for (std::size_t j = 0; j < m_steps.size(); ++j) {
        ExecStep& js = m_steps[j];
        const std::string& kind = js.node->op().kind();
        if ((kind != "Join" && kind != "GpuJoin") || js.backend != Backend::Cpu || js.kind == StepKind::Missing ||
            js.outSlots.size() != 1)
            continue;
        auto decline = [&](const std::string& reason) { declined(PlanDecision::Pass::JoinInPlace, *js.node, reason); };
        if (const std::string off =
                passOff(m_ctx->options.joinInPlace, "in-place Join", "joinInPlace", "PASSLENS_JOIN_IN_PLACE");
            !off.empty()) {
            decline(off);
            continue;
        }
        if (js.inSlots.empty() || js.fusedInto >= 0) {
            decline("it has no inputs to join");
            continue;
        }
        if (isOutput(js.outSlots[0])) {
            decline("its output is a graph output");
            continue;
        }
        const Variable* out = js.node->output(0);
        Shape os;
        if (!staticShape(out->type(), os) || os.empty()) {
            decline("its output shape " + out->type().str() + " is not static");
            continue;
        }
        std::int64_t axis = js.node->op().intAttr("axis");
        if (axis < 0) axis += static_cast<std::int64_t>(os.size());
        if (axis < 0 || axis >= static_cast<std::int64_t>(os.size())) {
            decline("its axis is out of range");
            continue;
        }
        std::string why;
        for (std::int64_t a = 0; a < axis && why.empty(); ++a)
            if (os[static_cast<std::size_t>(a)] != 1)
                why = "dim " + std::to_string(a) + " before the axis is not 1: the inputs are not contiguous blocks";
        const std::int64_t inner = shapeNumel(Shape(os.begin() + axis + 1, os.end()));
        std::vector<int> writers;
        std::vector<std::int64_t> offsets;
        std::vector<Shape> shapes;
        std::int64_t along = 0;
        for (std::size_t k = 0; k < js.inSlots.size() && why.empty(); ++k) {
            const Variable* v = js.node->input(static_cast<int>(k));
            const std::string input = "input " + std::to_string(k);
            why = soleUse(v, js.inSlots[k]);
            if (!why.empty()) {
                why = input + " " + why;
                break;
            }
            Shape vs;
            bool ok = v->owner() && v->type().dtype() == out->type().dtype() && staticShape(v->type(), vs) &&
                      vs.size() == os.size();
            for (std::size_t a = 0; a < vs.size() && ok; ++a)
                ok = static_cast<std::int64_t>(a) == axis || vs[a] == os[a];
            auto it = ok ? stepOf.find(v->owner()) : stepOf.end();
            if (it == stepOf.end()) {
                why = input + " has no static shape matching the output's";
                break;
            }
            int w = it->second;
            const ExecStep& p = m_steps[static_cast<std::size_t>(w)];
            if (p.fusedInto >= 0) {
                // an element-wise node fused into a convolution: the convolution writes the block
                // (its output is read by that node alone, checked by the fusion) and applies it
                w = p.fusedInto;
                Shape cs;
                const ExecStep& cstep = m_steps[static_cast<std::size_t>(w)];
                ok = isConv(cstep) && staticShape(cstep.node->output(0)->type(), cs) && cs == vs &&
                     cstep.node->output(0)->type().dtype() == v->type().dtype();
                if (!ok)
                    why = input + " comes from " + planName(*p.node) + " fused into a convolution of another shape";
            } else if (!isConv(p) || p.fusedStep >= 0) {
                why = input + " comes from " + planName(*p.node) + ", not a convolution";
            }
            if (why.empty() && (m_steps[static_cast<std::size_t>(w)].joinStep >= 0 ||
                                std::find(writers.begin(), writers.end(), w) != writers.end()))
                why = input + " comes from " + planName(*m_steps[static_cast<std::size_t>(w)].node) +
                      ", which already writes another block";
            writers.push_back(w);
            offsets.push_back(along * inner);
            shapes.push_back(vs);
            along += vs[static_cast<std::size_t>(axis)];
        }
        if (why.empty() && along != os[static_cast<std::size_t>(axis)])
            why = "the inputs do not add up to the output along the axis";
        if (!why.empty()) {
            decline(why);
            continue;
        }
        std::vector<NodeId> with;
        std::string ids;
        for (std::size_t k = 0; k < writers.size(); ++k) {
            ExecStep& w = m_steps[static_cast<std::size_t>(writers[k])];
            w.joinStep = static_cast<int>(j);
            w.joinOffset = offsets[k];
            w.joinShape = shapes[k];
            with.push_back(w.node->id());
            ids += (k ? ", #" : "#") + std::to_string(w.node->id());
        }
        js.joinInPlace = true;
        js.joinDType = out->type().dtype();
        js.joinShape = os;
        js.joinOffsets = offsets;
        m_plan.push_back({PlanDecision::Pass::JoinInPlace, js.node->id(), true, with,
                          planName(*js.node) + " written in place: " + (writers.size() == 1 ? "node " : "nodes ") +
                              ids + " write into its slices",
                          "each input is one contiguous block of its output, read by it alone and written by a "
                          "convolution kernel"});
    }
}

} // namespace passlens
