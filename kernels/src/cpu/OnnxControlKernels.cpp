// OnnxLSTM, OnnxIf, OnnxLoop, OnnxScan and OnnxSequenceMap (nested graphs run by nested executors sharing the parent's
// context).
#include "CpuCommon.h"
#include "Gemm.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace passlens::cpu {

namespace {

using json = nlohmann::json;

const Tensor* optIn(const KernelCall& c, int k) {
    const json& a = c.op().attrs();
    if (a.contains("inputs_present")) {
        const json& pr = a["inputs_present"];
        if (k >= static_cast<int>(pr.size()) || !pr[static_cast<std::size_t>(k)].get<bool>()) return nullptr;
        int idx = 0;
        for (int i = 0; i < k; ++i) idx += pr[static_cast<std::size_t>(i)].get<bool>() ? 1 : 0;
        return &c.inputs[static_cast<std::size_t>(idx)];
    }
    return k < c.nin() ? &c.inputs[static_cast<std::size_t>(k)] : nullptr;
}

inline float sigm(float x) { return 1.f / (1.f + std::exp(-x)); }

// ONNX LSTM (gates i, o, f, c), default activations (sigmoid, tanh, tanh), optional peepholes,
// clip, input_forget, sequence_lens, layout 0 or 1, forward / reverse / bidirectional.
void onnxLstm(KernelCall& c) {
    const json& a = c.op().attrs();
    for (const char* unsupported : {"activations", "activation_alpha", "activation_beta"})
        if (a.contains(unsupported)) {
            const json& acts = a[unsupported];
            if (std::string(unsupported) == "activations") {
                static const std::vector<std::string> dflt = {"Sigmoid", "Tanh", "Tanh"};
                bool ok = acts.is_array();
                for (std::size_t i = 0; ok && i < acts.size(); ++i) ok = acts[i].get<std::string>() == dflt[i % 3];
                if (ok) continue;
            }
            c.fail("attribute '" + std::string(unsupported) + "' (non-default activations) is not supported");
        }
    const Tensor* X = optIn(c, 0);
    const Tensor* W = optIn(c, 1);
    const Tensor* R = optIn(c, 2);
    if (!X || !W || !R) c.fail("needs X, W and R");
    const Tensor* B = optIn(c, 3);
    const Tensor* seqLens = optIn(c, 4);
    const Tensor* h0 = optIn(c, 5);
    const Tensor* c0 = optIn(c, 6);
    const Tensor* P = optIn(c, 7);
    for (const Tensor* t : {X, W, R, B, h0, c0, P})
        if (t && t->dtype() != DType::Float32) c.fail("needs float32 tensors, got " + t->typeStr());
    const std::int64_t Hs = c.op().intAttr("hidden_size", 0);
    const std::string dir = a.contains("direction") ? c.op().str("direction") : "forward";
    const int dirs = dir == "bidirectional" ? 2 : 1;
    const bool batchFirst = c.op().intAttr("layout", 0) == 1;
    const bool inputForget = c.op().intAttr("input_forget", 0) != 0;
    const double clip = c.op().floatAttr("clip", 0.0);
    if (X->ndim() != 3) c.fail("X must be 3-d, got " + X->typeStr());
    const std::int64_t T = batchFirst ? X->dim(1) : X->dim(0), Bt = batchFirst ? X->dim(0) : X->dim(1), I = X->dim(2);
    const std::int64_t H = Hs > 0 ? Hs : R->dim(2);
    if (W->ndim() != 3 || W->dim(0) != dirs || W->dim(1) != 4 * H || W->dim(2) != I)
        c.fail("W " + W->typeStr() + " does not match X " + X->typeStr() + " and hidden_size " + std::to_string(H));
    if (R->ndim() != 3 || R->dim(0) != dirs || R->dim(1) != 4 * H || R->dim(2) != H)
        c.fail("R " + R->typeStr() + " does not match hidden_size " + std::to_string(H));
    if (B && B->numel() != dirs * 8 * H) c.fail("B " + B->typeStr() + " does not match");
    if (P && P->numel() != dirs * 3 * H) c.fail("P " + P->typeStr() + " does not match");
    for (const Tensor* s : {h0, c0})
        if (s && s->numel() != dirs * Bt * H)
            c.fail("initial state " + s->typeStr() + " does not match [" + std::to_string(dirs) + "," +
                   std::to_string(Bt) + "," + std::to_string(H) + "]");

    // X as [T, Bt, I] contiguous
    std::vector<float> xs(static_cast<std::size_t>(T * Bt * I));
    for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t b = 0; b < Bt; ++b) {
            const float* src = X->data<float>() + (batchFirst ? (b * T + t) : (t * Bt + b)) * I;
            std::memcpy(xs.data() + (t * Bt + b) * I, src, static_cast<std::size_t>(I) * sizeof(float));
        }
    std::vector<float> Y(static_cast<std::size_t>(T * dirs * Bt * H), 0.f), Yh(static_cast<std::size_t>(dirs * Bt * H)),
        Yc(static_cast<std::size_t>(dirs * Bt * H));
    std::vector<float> gx(static_cast<std::size_t>(T * Bt * 4 * H)), gates(static_cast<std::size_t>(Bt * 4 * H));
    for (int d = 0; d < dirs; ++d) {
        const bool reverse = dir == "reverse" || d == 1;
        const float* Wd = W->data<float>() + d * 4 * H * I;
        const float* Rd = R->data<float>() + d * 4 * H * H;
        // gx[T*Bt, 4H] = X * W^T (+ Wb + Rb)
        sgemm(false, true, T * Bt, 4 * H, I, 1.f, xs.data(), I, Wd, I, 0.f, gx.data(), 4 * H);
        if (B) {
            const float* Bd = B->data<float>() + d * 8 * H;
            for (std::int64_t r = 0; r < T * Bt; ++r)
                for (std::int64_t j = 0; j < 4 * H; ++j)
                    gx[static_cast<std::size_t>(r * 4 * H + j)] += Bd[j] + Bd[4 * H + j];
        }
        std::vector<float> h(static_cast<std::size_t>(Bt * H), 0.f), cs(static_cast<std::size_t>(Bt * H), 0.f);
        if (h0) std::memcpy(h.data(), h0->data<float>() + d * Bt * H, h.size() * sizeof(float));
        if (c0) std::memcpy(cs.data(), c0->data<float>() + d * Bt * H, cs.size() * sizeof(float));
        const float* Pd = P ? P->data<float>() + d * 3 * H : nullptr;
        for (std::int64_t step = 0; step < T; ++step) {
            const std::int64_t t = reverse ? T - 1 - step : step;
            std::memcpy(gates.data(), gx.data() + t * Bt * 4 * H, gates.size() * sizeof(float));
            sgemm(false, true, Bt, 4 * H, H, 1.f, h.data(), H, Rd, H, 1.f, gates.data(), 4 * H);
            for (std::int64_t b = 0; b < Bt; ++b) {
                const std::int64_t len = seqLens ? seqLens->intAt(b) : T;
                const bool active = reverse ? (t < len) : (t < len);
                if (!active) continue;
                float* g = gates.data() + b * 4 * H;
                float* hb = h.data() + b * H;
                float* cb = cs.data() + b * H;
                for (std::int64_t j = 0; j < H; ++j) {
                    float gi = g[j], go = g[H + j], gf = g[2 * H + j], gc = g[3 * H + j];
                    if (Pd) {
                        gi += Pd[j] * cb[j];
                        gf += Pd[2 * H + j] * cb[j];
                    }
                    if (clip > 0) {
                        const float cl = static_cast<float>(clip);
                        gi = std::clamp(gi, -cl, cl);
                        gf = std::clamp(gf, -cl, cl);
                        gc = std::clamp(gc, -cl, cl);
                    }
                    const float ii = sigm(gi);
                    const float ff = inputForget ? 1.f - ii : sigm(gf);
                    const float cc = std::tanh(gc);
                    const float cn = ff * cb[j] + ii * cc;
                    if (Pd) go += Pd[H + j] * cn;
                    if (clip > 0) go = std::clamp(go, -static_cast<float>(clip), static_cast<float>(clip));
                    const float oo = sigm(go);
                    cb[j] = cn;
                    hb[j] = oo * std::tanh(cn);
                }
                std::memcpy(Y.data() + ((t * dirs + d) * Bt + b) * H, hb, static_cast<std::size_t>(H) * sizeof(float));
            }
        }
        std::memcpy(Yh.data() + d * Bt * H, h.data(), h.size() * sizeof(float));
        std::memcpy(Yc.data() + d * Bt * H, cs.data(), cs.size() * sizeof(float));
    }
    const int nout = c.node.nout();
    if (nout > 0) {
        Tensor y;
        if (batchFirst) {
            y = c.allocate(DType::Float32, {Bt, T, dirs, H});
            for (std::int64_t t = 0; t < T; ++t)
                for (int d = 0; d < dirs; ++d)
                    for (std::int64_t b = 0; b < Bt; ++b)
                        std::memcpy(y.data<float>() + ((b * T + t) * dirs + d) * H,
                                    Y.data() + ((t * dirs + d) * Bt + b) * H,
                                    static_cast<std::size_t>(H) * sizeof(float));
        } else {
            y = Tensor::fromBytes(DType::Float32, {T, dirs, Bt, H}, Y.data());
        }
        c.outputs[0] = std::move(y);
    }
    auto state = [&](const std::vector<float>& v) {
        if (batchFirst) {
            Tensor t = c.allocate(DType::Float32, {Bt, dirs, H});
            for (int d = 0; d < dirs; ++d)
                for (std::int64_t b = 0; b < Bt; ++b)
                    std::memcpy(t.data<float>() + (b * dirs + d) * H, v.data() + (d * Bt + b) * H,
                                static_cast<std::size_t>(H) * sizeof(float));
            return t;
        }
        return Tensor::fromBytes(DType::Float32, {dirs, Bt, H}, v.data());
    };
    if (nout > 1) c.outputs[1] = state(Yh);
    if (nout > 2) c.outputs[2] = state(Yc);
}

// The nested executor of `g` sharing the parent's context; fails naming `what`.
std::unique_ptr<Executor> nestedExecutor(const KernelCall& c, const FunctionGraph& g, const std::string& what) {
    try {
        return std::make_unique<Executor>(g, std::shared_ptr<ExecContext>(&c.ctx, [](ExecContext*) {}));
    } catch (const Error& e) {
        c.fail(what + ": " + e.what());
    }
}

struct IfState : KernelState {
    std::unique_ptr<Executor> branch[2];
    std::vector<int> bind[2]; // per branch input: node input index
};

void onnxIf(KernelCall& c) {
    const Tensor& cond = c.in(0);
    if (cond.numel() != 1) c.fail("condition must hold one element, got " + cond.typeStr());
    const bool takeThen = cond.at(0) != 0;
    const char* attr = takeThen ? "then_branch" : "else_branch";
    const FunctionGraph* g = nullptr;
    for (const Subgraph& s : c.op().subgraphs())
        if (s.attribute == attr) g = s.graph.get();
    if (!g) c.fail("has no " + std::string(attr));
    auto* st = dynamic_cast<IfState*>(c.state.get());
    if (!st) {
        auto s = std::make_unique<IfState>();
        st = s.get();
        c.state = std::move(s);
    }
    const int bi = takeThen ? 0 : 1;
    if (!st->branch[bi]) {
        const json& a = c.op().attrs();
        const int nOnnx = a.contains("n_onnx_inputs") ? static_cast<int>(a["n_onnx_inputs"].get<std::int64_t>()) : 1;
        std::vector<std::string> outer;
        if (a.contains("outer_scope"))
            for (const auto& e : a["outer_scope"]) outer.push_back(e.get<std::string>());
        std::vector<int> bind;
        for (const Variable* in : g->inputs()) {
            auto it = std::find(outer.begin(), outer.end(), in->name());
            if (it == outer.end())
                c.fail(std::string(attr) + " input '" + in->name() + "' is not an outer-scope value of the node");
            bind.push_back(nOnnx + static_cast<int>(it - outer.begin()));
        }
        st->branch[bi] = nestedExecutor(c, *g, attr);
        st->bind[bi] = std::move(bind);
    }
    std::vector<Tensor> ins;
    for (int k : st->bind[bi]) {
        if (k >= c.nin()) c.fail("outer-scope input " + std::to_string(k) + " is missing");
        ins.push_back(c.in(k));
    }
    std::vector<Tensor> outs;
    try {
        outs = st->branch[bi]->run(ins);
    } catch (const Error& e) {
        c.fail(std::string(attr) + ": " + e.what());
    }
    if (static_cast<int>(outs.size()) != c.node.nout())
        c.fail(std::string(attr) + " produced " + std::to_string(outs.size()) + " outputs, the node has " +
               std::to_string(c.node.nout()));
    for (std::size_t k = 0; k < outs.size(); ++k) c.outputs[k] = std::move(outs[k]);
}

// The inputs of a nested graph `g`: each outer-scope value by name (node inputs from nOnnx on, in
// the order of the node's `outer_scope` attribute), the others from `formal` in order.
std::vector<Tensor> bindBodyInputs(const KernelCall& c, const FunctionGraph& g, int nOnnx,
                                   const std::vector<Tensor>& formal) {
    std::vector<std::string> outer;
    if (c.op().attrs().contains("outer_scope"))
        for (const auto& e : c.op().attrs()["outer_scope"]) outer.push_back(e.get<std::string>());
    std::vector<Tensor> ins;
    std::size_t next = 0;
    for (const Variable* in : g.inputs()) {
        const auto it = std::find(outer.begin(), outer.end(), in->name());
        if (it != outer.end())
            ins.push_back(c.in(nOnnx + static_cast<int>(it - outer.begin())));
        else if (next < formal.size())
            ins.push_back(formal[next++]);
        else
            c.fail("body input '" + in->name() + "' is neither formal nor an outer-scope value");
    }
    return ins;
}

// The `body` graph of a Loop or Scan node and its nested executor, made on the first run.
struct BodyState : KernelState {
    std::unique_ptr<Executor> body;
};

std::pair<const FunctionGraph*, Executor*> loopBody(KernelCall& c) {
    const FunctionGraph* g = nullptr;
    for (const Subgraph& s : c.op().subgraphs())
        if (s.attribute == "body") g = s.graph.get();
    if (!g) c.fail("has no body");
    auto* st = dynamic_cast<BodyState*>(c.state.get());
    if (!st) {
        auto s = std::make_unique<BodyState>();
        s->body = nestedExecutor(c, *g, "body");
        st = s.get();
        c.state = std::move(s);
    }
    return {g, st->body.get()};
}

// The per-iteration values of scan output `index` stacked along a new axis 0 (`emptyType` gives
// the dtype and the other dims when there was no iteration).
Tensor stackIterations(const KernelCall& c, const std::vector<Tensor>& parts, std::size_t index,
                       const Type& emptyType) {
    if (parts.empty()) {
        Shape s{0};
        for (int d = 1; emptyType.rankKnown() && d < emptyType.ndim(); ++d)
            s.push_back(std::max<std::int64_t>(emptyType.dims()[static_cast<std::size_t>(d)], 0));
        return c.allocate(emptyType.dtype(), s);
    }
    Shape s = parts[0].shape();
    s.insert(s.begin(), static_cast<std::int64_t>(parts.size()));
    Tensor y = c.allocate(parts[0].dtype(), s);
    std::size_t at = 0;
    for (const Tensor& p : parts) {
        if (p.shape() != parts[0].shape() || p.dtype() != parts[0].dtype())
            c.fail("scan output " + std::to_string(index) + " changes type across iterations");
        std::memcpy(static_cast<char*>(y.rawData()) + at, p.rawData(), p.nbytes());
        at += p.nbytes();
    }
    return y;
}

// ONNX Loop: runs `body` (inputs: iteration number, condition, the loop-carried values, then the
// outer-scope values it reads; outputs: condition, carried values, scan outputs) while the trip
// count M (input 0, optional) and the condition (input 1, optional) allow. Outputs: the final
// carried values, then each scan output's per-iteration values stacked along a new axis 0.
void onnxLoop(KernelCall& c) {
    const auto [g, body] = loopBody(c);
    const json& a = c.op().attrs();
    const int nOnnx = a.contains("n_onnx_inputs") ? static_cast<int>(a["n_onnx_inputs"].get<std::int64_t>()) : c.nin();
    const Tensor* maxTrips = optIn(c, 0);
    const Tensor* condIn = optIn(c, 1);
    // the carried initial values: ONNX inputs from 2 on
    std::vector<Tensor> carried;
    const int present = a.contains("inputs_present") ? static_cast<int>(a["inputs_present"].size()) : nOnnx;
    for (int k = 2; k < present; ++k) {
        const Tensor* t = optIn(c, k);
        if (!t) c.fail("loop-carried input " + std::to_string(k) + " is missing");
        carried.push_back(*t);
    }
    const std::size_t nCarried = carried.size();
    if (g->outputs().size() < 1 + nCarried)
        c.fail("body has fewer outputs than 1 + " + std::to_string(nCarried) + " carried values");
    const std::size_t nScan = g->outputs().size() - 1 - nCarried;
    if (static_cast<std::size_t>(c.node.nout()) != nCarried + nScan) c.fail("node outputs do not match the body's");
    std::vector<std::vector<Tensor>> scans(nScan);
    const std::int64_t trips =
        maxTrips && maxTrips->numel() ? maxTrips->intAt(0) : std::numeric_limits<std::int64_t>::max();
    bool cond = condIn && condIn->numel() ? condIn->at(0) != 0 : true;
    for (std::int64_t i = 0; i < trips && cond; ++i) {
        std::vector<Tensor> formal = {Tensor::scalar(DType::Int64, static_cast<double>(i)),
                                      Tensor::scalar(DType::Bool, cond ? 1.0 : 0.0)};
        formal.insert(formal.end(), carried.begin(), carried.end());
        std::vector<Tensor> outs;
        try {
            outs = body->run(bindBodyInputs(c, *g, nOnnx, formal));
        } catch (const Error& e) {
            c.fail("body, iteration " + std::to_string(i) + ": " + e.what());
        }
        cond = outs[0].numel() ? outs[0].at(0) != 0 : false;
        for (std::size_t k = 0; k < nCarried; ++k) carried[k] = outs[1 + k];
        for (std::size_t k = 0; k < nScan; ++k) scans[k].push_back(outs[1 + nCarried + k]);
    }
    for (std::size_t k = 0; k < nCarried; ++k) c.outputs[k] = carried[k];
    for (std::size_t k = 0; k < nScan; ++k)
        c.outputs[nCarried + k] =
            stackIterations(c, scans[k], k, c.node.output(static_cast<int>(nCarried + k))->type());
}

// ONNX Scan (opset 9 on): the state values (the first inputs) carried through one body run per
// slice of the scan inputs (num_scan_inputs, scan_input_axes, scan_input_directions); outputs
// the final states, then the body's scan outputs stacked along axis 0 (reversed with
// scan_output_directions 1).
// ONNX Scan-8: input 0 is the optional sequence_lens, every state and scan input has a batch axis
// 0 (scan inputs their sequence axis 1, scanned as `directions` says); the body runs per batch
// entry, and the outputs stack the entries' final states and scan outputs along axis 0.
// `nOnnx` counts the ONNX inputs (absent ones too), `nBound` the node inputs before the outer-scope
// values.
void onnxScan8(KernelCall& c, const FunctionGraph& g, Executor& body, int nOnnx, int nBound, int m) {
    const json& a = c.op().attrs();
    const Tensor* lens = optIn(c, 0);
    const int n = nOnnx - 1 - m;
    if (m <= 0 || n < 0)
        c.fail("num_scan_inputs " + std::to_string(m) + " does not fit " + std::to_string(nOnnx) + " inputs");
    std::vector<Tensor> vals; // the states, then the scan inputs
    for (int k = 1; k < nOnnx; ++k) {
        const Tensor* t = optIn(c, k);
        if (!t || !t->isDense() || t->ndim() < (k > n ? 2 : 1))
            c.fail("input " + std::to_string(k) + " must be a tensor with a batch axis" +
                   (k > n ? " and a sequence axis" : ""));
        vals.push_back(*t);
    }
    const std::int64_t B = vals[0].dim(0), T = vals[static_cast<std::size_t>(n)].dim(1);
    for (const Tensor& t : vals)
        if (t.dim(0) != B) c.fail("inputs have different batch sizes " + std::to_string(B) + " and " + t.typeStr());
    for (int j = 0; j < m; ++j)
        if (vals[static_cast<std::size_t>(n + j)].dim(1) != T) c.fail("scan inputs have different lengths");
    if (lens && lens->numel() != B)
        c.fail("sequence_lens " + lens->typeStr() + " does not match batch " + std::to_string(B));
    std::vector<std::int64_t> dirs(static_cast<std::size_t>(m), 0);
    if (a.contains("directions"))
        for (std::size_t j = 0; j < a["directions"].size() && j < dirs.size(); ++j)
            dirs[j] = a["directions"][j].get<std::int64_t>();
    // entry i of a tensor along axis 0 (a view)
    auto entry = [](const Tensor& t, std::int64_t i) {
        const Shape s(t.shape().begin() + 1, t.shape().end());
        return t.sliceView(i * shapeNumel(s), s);
    };
    const std::size_t k = g.outputs().size() - static_cast<std::size_t>(n);
    std::vector<std::vector<Tensor>> states(static_cast<std::size_t>(n)), scans(k);
    for (std::int64_t b = 0; b < B; ++b) {
        const std::int64_t len = lens ? lens->intAt(b) : T;
        if (len < 0 || len > T)
            c.fail("sequence_lens " + std::to_string(len) + " is out of range [0, " + std::to_string(T) + "]");
        std::vector<Tensor> state;
        for (int i = 0; i < n; ++i) state.push_back(entry(vals[static_cast<std::size_t>(i)], b));
        std::vector<std::vector<Tensor>> parts(k);
        for (std::int64_t t = 0; t < len; ++t) {
            std::vector<Tensor> formal = state;
            for (int j = 0; j < m; ++j)
                formal.push_back(entry(entry(vals[static_cast<std::size_t>(n + j)], b),
                                       dirs[static_cast<std::size_t>(j)] ? len - 1 - t : t));
            std::vector<Tensor> outs;
            try {
                outs = body.run(bindBodyInputs(c, g, nBound, formal));
            } catch (const Error& e) {
                c.fail("body, batch " + std::to_string(b) + ", iteration " + std::to_string(t) + ": " + e.what());
            }
            for (int i = 0; i < n; ++i) state[static_cast<std::size_t>(i)] = outs[static_cast<std::size_t>(i)];
            for (std::size_t j = 0; j < k; ++j) parts[j].push_back(outs[static_cast<std::size_t>(n) + j]);
        }
        for (int i = 0; i < n; ++i) states[static_cast<std::size_t>(i)].push_back(state[static_cast<std::size_t>(i)]);
        for (std::size_t j = 0; j < k; ++j) {
            const Type& ot = c.node.output(n + static_cast<int>(j))->type();
            const Type per = ot.rankKnown() && ot.ndim() > 0
                                 ? ot.withDims(std::vector<std::int64_t>(ot.dims().begin() + 1, ot.dims().end()))
                                 : ot;
            scans[j].push_back(stackIterations(c, parts[j], j, per));
        }
    }
    for (int i = 0; i < n; ++i)
        c.outputs[static_cast<std::size_t>(i)] = stackIterations(c, states[static_cast<std::size_t>(i)],
                                                                 static_cast<std::size_t>(i), c.node.output(i)->type());
    for (std::size_t j = 0; j < k; ++j)
        c.outputs[static_cast<std::size_t>(n) + j] =
            stackIterations(c, scans[j], j, c.node.output(n + static_cast<int>(j))->type());
}

void onnxScan(KernelCall& c) {
    const auto [g, body] = loopBody(c);
    const json& a = c.op().attrs();
    const int nOnnx = a.contains("n_onnx_inputs") ? static_cast<int>(a["n_onnx_inputs"].get<std::int64_t>()) : c.nin();
    const int m = static_cast<int>(c.op().intAttr("num_scan_inputs", 0));
    // Scan-8 has one ONNX input more than the body has formal inputs: sequence_lens
    std::size_t formal = 0;
    std::vector<std::string> outer;
    if (a.contains("outer_scope"))
        for (const auto& e : a["outer_scope"]) outer.push_back(e.get<std::string>());
    for (const Variable* in : g->inputs())
        formal += std::find(outer.begin(), outer.end(), in->name()) == outer.end() ? 1 : 0;
    const int nPresent = a.contains("inputs_present") ? static_cast<int>(a["inputs_present"].size()) : nOnnx;
    if (static_cast<std::size_t>(nPresent) == formal + 1) return onnxScan8(c, *g, *body, nPresent, nOnnx, m);
    const int n = nOnnx - m;
    if (m <= 0 || n < 0)
        c.fail("num_scan_inputs " + std::to_string(m) + " does not fit " + std::to_string(nOnnx) + " inputs");
    auto ints = [&](const char* name, int count) {
        std::vector<std::int64_t> v(static_cast<std::size_t>(count), 0);
        if (a.contains(name))
            for (std::size_t k = 0; k < a[name].size() && k < v.size(); ++k) v[k] = a[name][k].get<std::int64_t>();
        return v;
    };
    const auto inAxes = ints("scan_input_axes", m), inDirs = ints("scan_input_directions", m);
    std::int64_t T = -1;
    std::vector<int> axes;
    for (int j = 0; j < m; ++j) {
        const Tensor& x = c.in(n + j);
        axes.push_back(normAxis(c, inAxes[static_cast<std::size_t>(j)], x.ndim()));
        const std::int64_t len = x.dim(axes.back());
        if (T >= 0 && len != T)
            c.fail("scan inputs have different lengths " + std::to_string(T) + " and " + std::to_string(len));
        T = len;
    }
    const std::size_t k = g->outputs().size() - static_cast<std::size_t>(n);
    const auto outAxes = ints("scan_output_axes", static_cast<int>(k)),
               outDirs = ints("scan_output_directions", static_cast<int>(k));
    for (auto ax : outAxes)
        if (ax != 0) c.fail("scan_output_axes other than 0 are not supported");
    std::vector<Tensor> state;
    for (int i = 0; i < n; ++i) state.push_back(c.in(i));
    std::vector<std::vector<Tensor>> scans(k);
    for (std::int64_t t = 0; t < T; ++t) {
        std::vector<Tensor> formal = state;
        for (int j = 0; j < m; ++j) {
            const Tensor& x = c.in(n + j);
            const int ax = axes[static_cast<std::size_t>(j)];
            const std::int64_t at = inDirs[static_cast<std::size_t>(j)] ? T - 1 - t : t;
            const auto xs = stridesOf(x.shape());
            Shape s = x.shape();
            std::vector<std::int64_t> strides(xs.begin(), xs.end());
            s.erase(s.begin() + ax);
            strides.erase(strides.begin() + ax);
            Tensor slice = c.allocate(x.dtype(), s);
            const std::size_t es = dtypeSize(x.dtype());
            stridedCopy(static_cast<const char*>(x.rawData()) +
                            static_cast<std::size_t>(at * xs[static_cast<std::size_t>(ax)]) * es,
                        strides, slice.rawData(), s, es);
            formal.push_back(slice);
        }
        std::vector<Tensor> outs;
        try {
            outs = body->run(bindBodyInputs(c, *g, nOnnx, formal));
        } catch (const Error& e) {
            c.fail("body, iteration " + std::to_string(t) + ": " + e.what());
        }
        for (int i = 0; i < n; ++i) state[static_cast<std::size_t>(i)] = outs[static_cast<std::size_t>(i)];
        for (std::size_t j = 0; j < k; ++j) scans[j].push_back(outs[static_cast<std::size_t>(n) + j]);
    }
    for (int i = 0; i < n; ++i) c.outputs[static_cast<std::size_t>(i)] = state[static_cast<std::size_t>(i)];
    for (std::size_t j = 0; j < k; ++j) {
        std::vector<Tensor>& parts = scans[j];
        if (outDirs[j]) std::reverse(parts.begin(), parts.end());
        c.outputs[static_cast<std::size_t>(n) + j] =
            stackIterations(c, parts, j, c.node.output(n + static_cast<int>(j))->type());
    }
}

// ONNX SequenceMap (opset 17): runs `body` once per item of the input sequence (input 0); the
// body's inputs are that item, then for each further input its item at the same position (a
// sequence of the same length) or the input itself (a tensor). Body output j's values, in order,
// form output sequence j.
void onnxSequenceMap(KernelCall& c) {
    const auto [g, body] = loopBody(c);
    const json& a = c.op().attrs();
    const int nOnnx = a.contains("n_onnx_inputs") ? static_cast<int>(a["n_onnx_inputs"].get<std::int64_t>()) : c.nin();
    if (nOnnx < 1 || c.in(0).kind() != Type::Kind::Sequence)
        c.fail("input 0 must be a sequence, got " + (nOnnx < 1 ? std::string("none") : c.in(0).typeStr()));
    const std::size_t n = c.in(0).items().size();
    for (int k = 1; k < nOnnx; ++k) {
        const Tensor& x = c.in(k);
        if (x.kind() == Type::Kind::Optional) c.fail("input " + std::to_string(k) + " is " + x.typeStr());
        if (x.kind() == Type::Kind::Sequence && x.items().size() != n)
            c.fail("input " + std::to_string(k) + " holds " + std::to_string(x.items().size()) +
                   " items, input 0 holds " + std::to_string(n));
    }
    if (g->outputs().size() != static_cast<std::size_t>(c.node.nout()))
        c.fail("body has " + std::to_string(g->outputs().size()) + " outputs, the node has " +
               std::to_string(c.node.nout()));
    std::vector<std::vector<Tensor>> results(g->outputs().size());
    for (std::size_t i = 0; i < n; ++i) {
        std::vector<Tensor> formal;
        for (int k = 0; k < nOnnx; ++k) {
            const Tensor& x = c.in(k);
            formal.push_back(x.kind() == Type::Kind::Sequence ? x.items()[i] : x);
        }
        std::vector<Tensor> outs;
        try {
            outs = body->run(bindBodyInputs(c, *g, nOnnx, formal));
        } catch (const Error& e) {
            c.fail("body, item " + std::to_string(i) + ": " + e.what());
        }
        for (std::size_t j = 0; j < outs.size(); ++j) results[j].push_back(std::move(outs[j]));
    }
    for (std::size_t j = 0; j < results.size(); ++j) c.outputs[j] = Tensor::sequence(std::move(results[j]));
}

} // namespace

void registerOnnxControlKernels(KernelRegistry& r) {
    r.add("OnnxSequenceMap", Backend::Cpu, onnxSequenceMap);
    r.add("OnnxLSTM", Backend::Cpu, onnxLstm);
    r.add("OnnxIf", Backend::Cpu, onnxIf);
    r.add("OnnxLoop", Backend::Cpu, onnxLoop);
    r.add("OnnxScan", Backend::Cpu, onnxScan);
}

void registerCpuKernels(KernelRegistry& r) {
    registerElemwise(r);
    registerShapeKernels(r);
    registerIndexKernels(r);
    registerReduceKernels(r);
    registerBlasKernels(r);
    registerConvKernels(r);
    registerOnnxKernels(r);
    registerOnnxControlKernels(r);
}

} // namespace passlens::cpu

namespace passlens {
void registerCpuKernels(KernelRegistry& r) { cpu::registerCpuKernels(r); }
} // namespace passlens
