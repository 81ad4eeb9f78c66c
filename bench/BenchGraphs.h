#pragma once
// Synthetic graphs shared by the bench programs (header only; bench/CMakeLists.txt builds one
// executable per bench/*.cpp).
#include <passlens/ir/FunctionGraph.h>
#include <passlens/ir/OpRegistry.h>

#include <memory>
#include <string>

namespace passlens::bench {

/// A deep graph of `nodes / 9` repeated 9-node blocks (Dot, Elemwise tanh, Shape_i, Alloc, Join,
/// Subtensor, CAReduce, DimShuffle, Elemwise add), each block feeding the next; the weight `w`,
/// `zero` and `c64` are shared by every block (one client per block). Every block lifts to the
/// GPU under the theano pipeline. Longest path: 8 nodes per block. With `scoped`, every node is
/// named as an ONNX exporter names it, "/stageS/blockB/Dot" (ten blocks a stage, so View > Group
/// by name scope has one box per stage, each opening to ten block boxes).
inline std::unique_ptr<FunctionGraph> blockGraph(int nodes, bool scoped = false) {
    using json = nlohmann::json;
    auto g = std::make_unique<FunctionGraph>();
    Variable* h = g->addInput(Type::parse("float32[64,64]"), "x");
    Variable* w = g->addInput(Type::parse("float32[64,64]"), "w");
    Variable* zero = g->addConstant(TensorData::fromDoubles(DType::Float32, {}, {0.0}), "zero");
    Variable* c64 = g->addConstant(TensorData::fromInts(DType::Int64, {}, {64}), "c64");
    for (int i = 0; i < nodes / 9; ++i) {
        const std::string scope =
            scoped ? "/stage" + std::to_string(i / 10) + "/block" + std::to_string(i) + "/" : std::string();
        auto nm = [&](const char* op) { return scoped ? scope + op : std::string(); };
        Variable* d = g->apply(Op::get("Dot"), {h, w}, nm("Dot"));
        Variable* e = g->apply(Op::get("Elemwise", {{"scalar", "tanh"}}), {d}, nm("Tanh"));
        Variable* s = g->apply(Op::get("Shape_i", {{"i", 0}}), {e}, nm("Shape"));
        Variable* a = g->apply(Op::get("Alloc"), {zero, s, c64}, nm("Alloc"));
        Variable* j = g->apply(Op::get("Join", {{"axis", 0}}), {e, a}, nm("Concat"));
        Variable* sub = g->apply(Op::get("Subtensor", {{"idx", {json{{"stop", 64}}}}}), {j}, nm("Slice"));
        Variable* r = g->apply(Op::get("CAReduce", {{"scalar", "add"}, {"axis", {1}}}), {sub}, nm("ReduceSum"));
        Variable* ds = g->apply(Op::get("DimShuffle", {{"order", {0, "x"}}}), {r}, nm("Unsqueeze"));
        h = g->apply(Op::get("Elemwise", {{"scalar", "add"}}), {sub, ds}, nm("Add"));
    }
    g->setOutputs({h});
    return g;
}

} // namespace passlens::bench
