// tst_ir: types, op interning, type rules of the op families, scalar ops and subtensor indices
// (see tst_ir.h).
#include "tst_ir.h"

void TestIr::dtypeUpcast() {
    QCOMPARE(upcast(DType::Int8, DType::Float32), DType::Float32);
    QCOMPARE(upcast(DType::Int64, DType::Float32), DType::Float32); // floatX=float32 rule
    QCOMPARE(upcast(DType::Int64, DType::Float64), DType::Float64);
    QCOMPARE(upcast(DType::Int32, DType::Int64), DType::Int64);
    QCOMPARE(upcast(DType::UInt8, DType::Int8), DType::Int16);
    QCOMPARE(upcast(DType::UInt64, DType::Int64), DType::Float32); // numpy float64, kept float32
    QCOMPARE(upcast(DType::Bool, DType::UInt8), DType::UInt8);
    QCOMPARE(upcast(DType::Float32, DType::Complex64), DType::Complex64);
    QCOMPARE(upcast(DType::Float64, DType::Complex64), DType::Complex128);
}

// ONNX's STRING: DType::String, neither numeric nor Theano's; constant data encoded per
// element as an 8-byte little-endian length and the bytes, checked when read from a file.
void TestIr::stringDType() {
    QCOMPARE(dtypeName(DType::String), std::string_view("string"));
    QCOMPARE(parseDType("string"), std::optional<DType>(DType::String));
    QVERIFY(isString(DType::String) && !isInteger(DType::String) && !isFloat(DType::String) &&
            !isComplex(DType::String) && !isString(DType::UInt8));
    QCOMPARE(dtypeFromOnnx(8), std::optional<DType>(DType::String));
    QCOMPARE(onnxTypeOf(DType::String), 8);
    QCOMPARE(QString::fromStdString(Type::parse("string[2,?]").str()), QString("string[2,?]"));
    const auto t = TensorData::fromStrings({2}, {"ab", ""});
    QCOMPARE(*t->bytes, std::string("\x02\0\0\0\0\0\0\0ab\0\0\0\0\0\0\0\0", 18));
    QCOMPARE(t->byteSize(), std::size_t(18));
    QCOMPARE(t->strings(), (std::vector<std::string>{"ab", ""}));
    QCOMPARE(t->shortValue(), std::string("{\"ab\", \"\"}"));
    QVERIFY(std::isnan(t->at(0)));
    QVERIFY(t->bytesProblem(*t->bytes).empty());
    QCOMPARE(t->bytesProblem(t->bytes->substr(0, 15)),
             std::string("holds 15 bytes, too few for the string[2] elements"));
    QCOMPARE(t->bytesProblem(t->bytes->substr(0, 17)),
             std::string("string data ends inside the length of element 1 of 2"));
    QCOMPARE(t->bytesProblem(std::string("\x64", 1) + std::string(15, '\0')), // a length of 100
             std::string("string element 0 of 100 bytes runs past the end"));
    QCOMPARE(t->bytesProblem(*t->bytes + "x"), std::string("1 bytes follow the last string element"));
    TensorData huge;
    huge.dtype = DType::String;
    huge.shape = {std::int64_t(1) << 40, std::int64_t(1) << 40}; // the count saturates
    QVERIFY(huge.bytesProblem(*t->bytes).starts_with("holds 18 bytes, too few"));
    // equal strings, equal hashes; a different string, another hash
    QCOMPARE(TensorData::fromStrings({2}, {"ab", ""})->contentHash(), t->contentHash());
    QVERIFY(TensorData::fromStrings({2}, {"a", "b"})->contentHash() != t->contentHash());
    QVERIFY(errorOf([&] { (void)toNpy(*t); }).contains(".npy has no dtype for string data"));
    QCOMPARE(quotedText("a\"\\\n\x01\xff\xc3\xa9"), std::string("\"a\\\"\\\\\\n\\x01\\xFF\xc3\xa9\""));
}

// ONNX's bfloat16: a 2-byte float DType after the others; float16 with bfloat16 is float32;
// constants truncate to it as ONNX 1.12's Cast reference; .npy has no dtype for it.
void TestIr::bfloat16DType() {
    QCOMPARE(dtypeName(DType::BFloat16), std::string_view("bfloat16"));
    QCOMPARE(parseDType("bfloat16"), std::optional<DType>(DType::BFloat16));
    QCOMPARE(dtypeSize(DType::BFloat16), std::size_t(2));
    QVERIFY(isFloat(DType::BFloat16) && !isInteger(DType::BFloat16) && !isComplex(DType::BFloat16));
    QCOMPARE(dtypeFromOnnx(16), std::optional<DType>(DType::BFloat16));
    QCOMPARE(onnxTypeOf(DType::BFloat16), 16);
    QCOMPARE(upcast(DType::Float16, DType::BFloat16), DType::Float32);
    QCOMPARE(upcast(DType::UInt8, DType::BFloat16), DType::BFloat16);
    QCOMPARE(QString::fromStdString(Type::parse("bfloat16[2,3]").str()), QString("bfloat16[2,3]"));
    // 1.99 truncates to 1.984375 (0x3FFE), -0.48033667 to -0.478515625; NaN stays NaN
    const auto t = TensorData::fromDoubles(DType::BFloat16, {3}, {1.99, -0.48033667, NAN});
    QCOMPARE(t->at(0), 1.984375);
    QCOMPARE(t->at(1), -0.478515625);
    QVERIFY(std::isnan(t->at(2)));
    QVERIFY(errorOf([&] { (void)toNpy(*t); }).contains(".npy has no dtype for bfloat16 data"));
    // the scalar-op table's float16 rule: exact, correctly rounded pairs, refused
    QCOMPARE(scalarOpInfo(ScalarOp::Maximum).float16, Float16Rule::Exact);
    QCOMPARE(scalarOpInfo(ScalarOp::Cast).float16, Float16Rule::Exact);
    QCOMPARE(scalarOpInfo(ScalarOp::TrueDiv).float16, Float16Rule::Pair);
    QCOMPARE(scalarOpInfo(ScalarOp::Exp).float16, Float16Rule::Refused);
    QCOMPARE(scalarOpInfo(ScalarOp::Mod).float16, Float16Rule::Refused);
}

void TestIr::typeParseAndPrint() {
    QCOMPARE(QString::fromStdString(Type::parse("float32[?,4]@gpu").str()), QString("float32[?,4]@gpu"));
    QCOMPARE(QString::fromStdString(Type::parse("int64[]").str()), QString("int64[]"));
    QCOMPARE(QString::fromStdString(Type::parse("float16[2,3]@host").str()), QString("float16[2,3]"));
    const Type t = Type::parse("uint8[1,2,3]@gpu:dev1");
    QCOMPARE(t.location().context, std::string("dev1"));
    QCOMPARE(t.ndim(), 3);
    QCOMPARE(t.numElements(), 6);
    QVERIFY(Type::parse("float32[?,4]").compatible(Type::parse("float32[3,4]")));
    QVERIFY(!Type::parse("float32[2,4]").compatible(Type::parse("float32[3,4]")));
    QVERIFY(!Type::parse("float32[3,4]").compatible(Type::parse("float32[3,4]@gpu")));
    QVERIFY(errorOf([] { Type::parse("float33[2]"); }).contains("unknown dtype 'float33'"));
    QVERIFY(errorOf([] { Type::parse("float32[2,-1]"); }).contains("not a non-negative integer"));
    QVERIFY(errorOf([] { Type::parse("float32"); }).contains("expected DTYPE[DIMS]"));
    QVERIFY(errorOf([] { Type::parse("float32[2]@tpu"); }).contains("location"));
}

void TestIr::typesAreInterned() {
    // Equal types share one record however they are built: equal, same hash, same dims.
    const Type a = Type::parse("float32[?,4]@gpu:dev1");
    const Type b(DType::Float32, {Type::kUnknownDim, 4}, Location::gpu("dev1"));
    QVERIFY(a == b);
    QCOMPARE(a.hash(), b.hash());
    QCOMPARE(&a.dims(), &b.dims());
    QVERIFY(!(a == Type::parse("float32[?,4]@gpu")));
    // Deriving a type makes another value and leaves the original as it was.
    const Type c = a.withDims({3, 4});
    QCOMPARE(QString::fromStdString(c.str()), QString("float32[3,4]@gpu:dev1"));
    QCOMPARE(QString::fromStdString(a.str()), QString("float32[?,4]@gpu:dev1"));
    QVERIFY(a.merged(Type::parse("float32[3,?]@gpu:dev1")) == c);
    QCOMPARE(QString::fromStdString(a.withLocation(Location::host()).withDType(DType::Int8).str()),
             QString("int8[?,4]"));
    // Sequences and optionals intern by their element type.
    QVERIFY(Type::parse("seq(int64[2])") == Type::sequence(Type::parse("int64[2]")));
    QVERIFY(!(Type::sequence(Type::parse("int64[2]")) == Type::optional(Type::parse("int64[2]"))));
    QCOMPARE(QString::fromStdString(Type::parse("seq(int64[?])").merged(Type::parse("seq(int64[5])")).str()),
             QString("seq(int64[5])"));
    QCOMPARE(&Type::parse("optional(seq(int8[*]))").elementType().elementType(),
             &Type::parse("seq(int8[*])").elementType());
    QVERIFY(Type() == Type::parse("float32[]"));
    QVERIFY(!(Type::unknownRank(DType::Float32) == Type::parse("float32[]")));
}

void TestIr::emptyTagsReadAsObjects() {
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[2]"), "x");
    QVERIFY(x->tag.empty());
    QCOMPARE(QString::fromStdString(x->tag.json().dump()), QString("{}"));
    QVERIFY(!x->tag.contains("target"));
    QCOMPARE(x->tag.value("target", std::string("gpu")), std::string("gpu"));
    x->tag["target"] = "cpu";
    QVERIFY(!x->tag.empty());
    QCOMPARE(x->tag.value("target", ""), std::string("cpu"));
    QVERIFY(x->tag == json({{"target", "cpu"}}));
    const Tag kept = x->tag;
    x->tag = json::object(); // an empty object empties the tag
    QVERIFY(x->tag.empty());
    QCOMPARE(QString::fromStdString(kept.json().dump()), QString(R"({"target":"cpu"})"));
}

void TestIr::opsAreInterned() {
    const Op& a = Op::get("Elemwise", {{"scalar", "add"}});
    const Op& b = Op::get("Elemwise", json{{"scalar", "add"}});
    QCOMPARE(&a, &b);
    QVERIFY(&a != &Op::get("Elemwise", {{"scalar", "mul"}}));
    QCOMPARE(QString::fromStdString(a.str()), QString("Elemwise{add}"));
    QCOMPARE(QString::fromStdString(Op::get("GpuFromHost").str()), QString("GpuFromHost<None>"));
    QCOMPARE(QString::fromStdString(Op::get("GpuFromHost", {{"context", "dev1"}}).str()), QString("GpuFromHost<dev1>"));
    QCOMPARE(QString::fromStdString(Op::get("HostFromGpu").str()), QString("HostFromGpu(gpuarray)"));
    QCOMPARE(QString::fromStdString(Op::get("GpuAlloc", {{"memset_0", true}}).str()),
             QString("GpuAlloc<None>{memset_0=True}"));
    QCOMPARE(QString::fromStdString(Op::get("DimShuffle", {{"order", {"x", 0}}}).str()), QString("DimShuffle{x,0}"));
    QCOMPARE(QString::fromStdString(Op::get("Subtensor", {{"idx", {json{{"start", 3}, {"stop", 4}}}}}).str()),
             QString("Subtensor{3:4}"));
    QCOMPARE(QString::fromStdString(Op::get("Shape_i", {{"i", 0}}).str()), QString("Shape_i{0}"));
    QCOMPARE(QString::fromStdString(Op::get("GpuElemwise", {{"scalar", "mul"}}).str()),
             QString("GpuElemwise{mul}<gpuarray>"));
    QVERIFY(Op::get("GpuFromHost").isTransfer());
    QVERIFY(Op::get("GpuElemwise", {{"scalar", "mul"}}).isGpu());
    QCOMPARE(QString::fromStdString(Op::get("Elemwise", {{"scalar", "add"}}).info().gpuCounterpart),
             QString("GpuElemwise"));
    QVERIFY(errorOf([] { Op::get("Frobnicate"); }).contains("unknown op kind 'Frobnicate'"));
    QVERIFY(errorOf([] { Op::get("Elemwise", {{"scalar", "bogus"}}); }).contains("unknown scalar op 'bogus'"));
    QVERIFY(errorOf([] {
                Op::get("Elemwise", {{"scalar", "add"}, {"colour", 1}});
            }).contains("unknown attribute 'colour'"));
    QVERIFY(errorOf([] { Op::get("Join", {{"axis", "zero"}}); }).contains("must be an integer"));
    QVERIFY(errorOf([] { Op::get("Reshape"); }).contains("missing attribute 'ndim'"));
    QVERIFY(Op::get("OnnxLSTM", {{"hidden_size", 64}}).isOnnx());
}

void TestIr::elemwiseBroadcastAndUpcast() {
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[?,4]"), "x");
    Variable* b = g.addInput(Type::parse("int8[1,4]"), "b");
    Variable* y = g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, b});
    QCOMPARE(QString::fromStdString(y->type().str()), QString("float32[?,4]"));
    Variable* c = g.apply(Op::get("Elemwise", {{"scalar", "lt"}}), {x, b});
    QCOMPARE(c->type().dtype(), DType::Bool);
    Variable* i = g.addInput(Type::parse("int64[3]"), "i");
    QCOMPARE(g.apply(Op::get("Elemwise", {{"scalar", "exp"}}), {i})->type().dtype(), DType::Float64);
    Variable* z = g.addInput(Type::parse("float32[3,5]"), "z");
    QVERIFY(errorOf([&] {
                g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, z});
            }).contains("incompatible static shapes at axis 1"));
    Variable* v = g.addInput(Type::parse("float32[4]"), "v");
    QVERIFY(errorOf([&] { g.apply(Op::get("Elemwise", {{"scalar", "add"}}), {x, v}); }).contains("different ranks"));
    QVERIFY(errorOf([&] { g.apply(Op::get("Elemwise", {{"scalar", "sub"}}), {x}); }).contains("takes 2 inputs, got 1"));
    Variable* xg = g.apply(Op::get("GpuFromHost"), {x});
    QVERIFY(errorOf([&] {
                g.apply(Op::get("Elemwise", {{"scalar", "neg"}}), {xg});
            }).contains("a host op needs host inputs"));
    Variable* ng = g.apply(Op::get("GpuElemwise", {{"scalar", "neg"}}), {xg});
    QCOMPARE(QString::fromStdString(ng->type().str()), QString("float32[?,4]@gpu"));
    QVERIFY(errorOf([&] {
                g.apply(Op::get("GpuElemwise", {{"scalar", "neg"}}), {x});
            }).contains("a GPU op needs GPU inputs"));
    Variable* xd = g.apply(Op::get("GpuFromHost", {{"context", "dev1"}}), {x});
    QVERIFY(errorOf([&] { g.apply(Op::get("GpuElemwise", {{"scalar", "add"}}), {xg, xd}); }).contains("expected gpu"));
}

void TestIr::scalarOpTableRows() {
    // one row per op, found by Theano's name
    const ScalarOpInfo* td = findScalarOp("true_div");
    QVERIFY(td && td->op == ScalarOp::TrueDiv && td->arity == 2 && td->floatResult);
    QCOMPARE(findScalarOp("add")->arity, -1);
    QCOMPARE(findScalarOp("switch")->arity, 3);
    QVERIFY(!findScalarOp("composite") && !findScalarOp("frob"));
    QCOMPARE(scalarOpInfo(ScalarOp::Clip).name, std::string_view("clip"));
    QCOMPARE(QString(scalarOpInfo(ScalarOp::LeakyRelu).params[0].attr), QString("alpha"));
    QCOMPARE(scalarOpInfo(ScalarOp::LeakyRelu).params[0].dflt, 0.01);
    QCOMPARE(scalarOpInfo(ScalarOp::HardSigmoid).params[1].dflt, 0.5);
    for (const ScalarOpInfo& r : passlens::scalarOpTable()) QVERIFY(&scalarOpInfo(r.op) == &r);
    // Theano's upgrade_to_float and the per-scalar type rule
    QCOMPARE(upgradeToFloat(DType::Int16), DType::Float32);
    QCOMPARE(upgradeToFloat(DType::Int32), DType::Float64);
    QCOMPARE(upgradeToFloat(DType::Float64), DType::Float64);
    const DType i8f32[] = {DType::Int8, DType::Float32}, b_i32_i16[] = {DType::Bool, DType::Int32, DType::Int16},
                i32[] = {DType::Int32}, u8[] = {DType::UInt8};
    QCOMPARE(scalarResultType(ScalarOp::Lt, i8f32), DType::Bool);
    QCOMPARE(scalarResultType(ScalarOp::Add, i8f32), DType::Float32);
    QCOMPARE(scalarResultType(ScalarOp::Switch, b_i32_i16), DType::Int32);
    QCOMPARE(scalarResultType(ScalarOp::Exp, i32), DType::Float64);
    QCOMPARE(scalarResultType(ScalarOp::Sqrt, u8), DType::Float32);
    QCOMPARE(scalarResultType(ScalarOp::Neg, i32), DType::Int32);
    // the table's parameters: display strings and attribute defaults
    QCOMPARE(QString::fromStdString(Op::get("Elemwise", {{"scalar", "clip"}, {"min", 0.0}}).str()),
             QString("Elemwise{clip{0.0,None}}"));
    QCOMPARE(QString::fromStdString(Op::get("Elemwise", {{"scalar", "hard_sigmoid"}, {"alpha", 0.1}}).str()),
             QString("Elemwise{hard_sigmoid}"));
    const Op& leaky = Op::get("Elemwise", {{"scalar", "leaky_relu"}});
    QCOMPARE(scalarParamsOf(leaky, *findScalarOp("leaky_relu")).p0, 0.01);
    const Op& clip = Op::get("Elemwise", {{"scalar", "clip"}, {"max", 6.0}});
    const ScalarParams cp = scalarParamsOf(clip, *findScalarOp("clip"));
    QVERIFY(cp.p0 == -INFINITY && cp.p1 == 6.0);
}

void TestIr::scalarExpressions() {
    // parse: nodes after their arguments, the root last; the text back unchanged
    const ScalarExpr e = ScalarExpr::parse("add(i0,mul(i1,i2))");
    QCOMPARE(e.nodes.size(), std::size_t(5));
    QVERIFY(e.nodes[2].op == ScalarOp::Input && e.nodes[2].input == 2);
    QVERIFY(e.nodes[3].op == ScalarOp::Mul && e.nodes[4].op == ScalarOp::Add);
    QCOMPARE(e.nodes[4].args, (std::vector<int>{0, 3}));
    QCOMPARE(QString::fromStdString(e.str()), QString("add(i0,mul(i1,i2))"));
    QCOMPARE(e.numInputs(), 3);
    QCOMPARE(QString::fromStdString(ScalarExpr::parse("clip{0,6}(i0)").str()), QString("clip{0,6}(i0)"));
    QCOMPARE(QString::fromStdString(ScalarExpr::parse(" clip ( i0 ) ").str()), QString("clip{-inf,inf}(i0)"));
    QCOMPARE(ScalarExpr::parse("leaky_relu(i0)").nodes.back().p0, 0.01);
    QCOMPARE(ScalarExpr::parse("cast{int32}(i1)").nodes.back().castTo, DType::Int32);
    // composing (GPU fusion): every iK replaced by a copy of parts[K]
    const ScalarExpr f = ScalarExpr::parse("relu(add(i0,i0))").withInputs({ScalarExpr::parse("mul(i1,i2)")});
    QCOMPARE(QString::fromStdString(f.str()), QString("relu(add(mul(i1,i2),mul(i1,i2)))"));
    QCOMPARE(f.nodes.size(), std::size_t(8));
    QVERIFY(errorOf([&] { (void)e.withInputs({ScalarExpr::input(0)}); }).contains("i1 has no replacement"));
    // errors name the text, the offset and the reason
    QVERIFY(errorOf([] {
                ScalarExpr::parse("frob(i0)");
            }).contains("bad expression 'frob(i0)' at offset 4: unknown scalar op 'frob'"));
    QVERIFY(errorOf([] { ScalarExpr::parse("sub(i0)"); }).contains("sub takes 2 arguments, got 1"));
    QVERIFY(errorOf([] { ScalarExpr::parse("add(i0"); }).contains("expected ',' or ')'"));
    QVERIFY(errorOf([] { ScalarExpr::parse("cast{float99}(i0)"); }).contains("cast to unknown dtype 'float99'"));
    QVERIFY(errorOf([] { ScalarExpr::parse("exp(i0) x"); }).contains("trailing text"));
    // an op's expression: parameters at the 9 digits of the text
    const Op& leaky = Op::get("Elemwise", {{"scalar", "leaky_relu"}, {"alpha", double(0.1f)}});
    const ScalarExpr le = elemwiseExpression(leaky, 1);
    QCOMPARE(QString::fromStdString(le.str()), QString("leaky_relu{0.100000001}(i0)"));
    QCOMPARE(le.nodes.back().p0, std::strtod("0.100000001", nullptr));
    QCOMPARE(QString::fromStdString(elemwiseExpression(Op::get("Elemwise", {{"scalar", "add"}}), 3).str()),
             QString("add(i0,i1,i2)"));
    // a composite's expression is parsed once per op; Op::get refuses one that does not parse
    const Op& comp =
        Op::get("GpuElemwise", {{"scalar", "composite"}, {"expr", "relu(add(i0,i1))"}, {"dtype", "float32"}});
    QVERIFY(compositeExpression(comp) && compositeExpression(comp) == compositeExpression(comp));
    QVERIFY(!compositeExpression(leaky));
    QCOMPARE(QString::fromStdString(elemwiseExpression(comp, 2).str()), QString("relu(add(i0,i1))"));
    QCOMPARE(QString::fromStdString(comp.str()), QString("GpuElemwise{Composite{relu(add(i0,i1))}}<gpuarray>"));
    QVERIFY(errorOf([] {
                Op::get("GpuElemwise", {{"scalar", "composite"}, {"expr", "relu(i0,i1)"}});
            }).contains("GpuElemwise: bad expression 'relu(i0,i1)'"));
    QVERIFY(errorOf([] { Op::get("Elemwise", {{"scalar", "composite"}}); }).contains("needs an 'expr'"));
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[3]"), "x");
    QVERIFY(errorOf([&] {
                g.apply(Op::get("Elemwise", {{"scalar", "composite"}, {"expr", "add(i0,i2)"}}), {x, x});
            }).contains("the expression reads i2 but the node has 2 inputs"));
}

void TestIr::pythonArithmetic() {
    // Python's % and // (the sign of the divisor; rounding toward minus infinity)
    QCOMPARE(pyMod<std::int64_t>(-7, 3), std::int64_t(2));
    QCOMPARE(pyMod<std::int64_t>(7, -3), std::int64_t(-2));
    QCOMPARE(pyMod<std::int64_t>(INT64_MIN, -1), std::int64_t(0));
    QCOMPARE(pyMod<std::int64_t>(5, 0), std::int64_t(0));
    QCOMPARE(floorDiv<std::int64_t>(-7, 2), std::int64_t(-4));
    QCOMPARE(floorDiv<std::int64_t>(7, -2), std::int64_t(-4));
    QCOMPARE(floorDiv<std::int64_t>(INT64_MIN, -1), INT64_MIN);
    QCOMPARE(pyMod(7.5, -2.0), -0.5);
    QCOMPARE(pyMod(-0.5f, 2.0f), 1.5f);
    QCOMPARE(floorDiv(-7.0, 2.0), -4.0);
    QCOMPARE(ipow<std::int64_t>(3, 4), std::int64_t(81));
    QCOMPARE(ipow<std::int64_t>(-1, -3), std::int64_t(-1));
    QCOMPARE(ipow<std::int64_t>(2, -1), std::int64_t(0));
    QCOMPARE(ipow<std::int64_t>(2, 64), std::int64_t(0)); // wraps
    QCOMPARE(maxOf(1.0, double(NAN)), 1.0);               // a NaN in the running value stays, one in v does not win
    QVERIFY(std::isnan(maxOf(double(NAN), 1.0)) && std::isnan(minOf(double(NAN), 1.0)));
    QCOMPARE(reluOf(std::nan("")) == 0.0, true);
    // the reference evaluator (constant folding) in long double
    using LD = long double;
    const LD m[] = {-7, 3}, z[] = {5, 0}, three[] = {1, -2, 3};
    QCOMPARE(double(*evalScalarReference(ScalarOp::Mod, {}, m, DType::Int64)), 2.0);
    QCOMPARE(double(*evalScalarReference(ScalarOp::IntDiv, {}, m, DType::Int64)), -3.0);
    QVERIFY(!evalScalarReference(ScalarOp::Mod, {}, z, DType::Int64));
    QVERIFY(!evalScalarReference(ScalarOp::IntDiv, {}, z, DType::Int64));
    QCOMPARE(double(*evalScalarReference(ScalarOp::Add, {}, three, DType::Int64)), 2.0);
    QCOMPARE(double(*evalScalarReference(ScalarOp::Maximum, {}, three, DType::Int64)), 3.0);
    QVERIFY(!evalScalarReference(ScalarOp::Sub, {}, three, DType::Int64));
    const LD x[] = {-2.5L};
    QCOMPARE(double(*evalScalarReference(ScalarOp::Cast, {}, x, DType::Int32)), -2.0);
    QCOMPARE(double(*evalScalarReference(ScalarOp::Cast, {}, x, DType::Float32)), -2.5);
    QCOMPARE(double(*evalScalarReference(ScalarOp::Round, {}, x, DType::Float32)), -2.0);
    QCOMPARE(double(*evalScalarReference(ScalarOp::Clip, {-1, 1}, x, DType::Float32)), -1.0);
    QCOMPARE(double(*evalScalarReference(ScalarOp::LeakyRelu, {0.5, 0}, x, DType::Float32)), -1.25);
    QCOMPARE(double(*evalScalarReference(ScalarOp::HardSigmoid, {0.2, 0.5}, x, DType::Float32)), 0.0);
    // uint64: NumPy's unsigned division and modulo of values of 2^63 and more, exact in long
    // double; add, sub and mul wrap modulo 2^64 (int64 results modulo 2^64 too)
    QCOMPARE(floorDiv<std::uint64_t>(~0ull, 2), std::uint64_t((1ull << 63) - 1));
    QCOMPARE(pyMod<std::uint64_t>(~0ull, ~0ull - 1), std::uint64_t(1));
    QCOMPARE(floorDiv<std::uint64_t>(1ull << 63, ~0ull), std::uint64_t(0));
    const LD big[] = {0x1p64L - 1, 3}, wrap[] = {2, 0x1p63L + 1}, i64[] = {0x1p62L, 4};
    const auto u64 = [](std::optional<LD> v) { return v ? static_cast<unsigned long long>(*v) : 12345ull; };
    QCOMPARE(u64(evalScalarReference(ScalarOp::IntDiv, {}, big, DType::UInt64)), 6148914691236517205ull);
    QCOMPARE(u64(evalScalarReference(ScalarOp::Mod, {}, big, DType::UInt64)), 0ull);
    QCOMPARE(u64(evalScalarReference(ScalarOp::Sub, {}, wrap, DType::UInt64)), (1ull << 63) + 1);
    QCOMPARE(u64(evalScalarReference(ScalarOp::Mul, {}, wrap, DType::UInt64)), 2ull);
    QCOMPARE(u64(evalScalarReference(ScalarOp::Add, {}, big, DType::UInt64)), 2ull);
    QCOMPARE(u64(evalScalarReference(ScalarOp::Gt, {}, big, DType::Bool)), 1ull);
    QCOMPARE(u64(evalScalarReference(ScalarOp::Mul, {}, i64, DType::Int64)), 0ull);
    // the arguments under which integer ops compute on uint64 values
    QVERIFY(computesInUInt64(std::vector<DType>{DType::UInt64, DType::UInt8, DType::Bool}));
    QVERIFY(!computesInUInt64(std::vector<DType>{DType::UInt64, DType::Int8}));
    QVERIFY(!computesInUInt64(std::vector<DType>{DType::UInt32, DType::UInt32}));
}

void TestIr::subtensorResolution() {
    // Python's slice.indices(n) and the length
    auto sl = [](std::optional<std::int64_t> a, std::optional<std::int64_t> b, std::optional<std::int64_t> c,
                 std::int64_t n) {
        const ResolvedSlice r = resolveSlice(a, b, c, n);
        return std::vector<std::int64_t>{r.start, r.step, r.length};
    };
    QCOMPARE(sl({}, {}, -1, 5), (std::vector<std::int64_t>{4, -1, 5})); // x[::-1]
    QCOMPARE(sl(-2, {}, {}, 5), (std::vector<std::int64_t>{3, 1, 2}));  // x[-2:]
    QCOMPARE(sl(1, 100, 2, 5), (std::vector<std::int64_t>{1, 2, 2}));   // x[1:100:2]: 1, 3
    QCOMPARE(sl(10, 0, -3, 5), (std::vector<std::int64_t>{4, -3, 2}));  // x[10:0:-3]: 4, 1
    QCOMPARE(sl(0, 0, {}, 5).back(), std::int64_t(0));                  // x[0:0]
    QCOMPARE(sl(-100, -100, -1, 5).back(), std::int64_t(0));            // x[-100:-100:-1]
    // a Subtensor's region of a row-major [3,6]: x[1, ?::2] with ? = 1 -> elements 7, 9, 11
    const json idx = json::parse(R"([1, {"start": "?", "step": 2}])");
    int calls = 0;
    const SubtensorRegion r = resolveSubtensor(
        idx, {3, 6}, [&] { return std::int64_t(++calls); }, "float32[3,6]");
    QCOMPARE(calls, 1);
    QCOMPARE(r.base, std::int64_t(7));
    QCOMPARE(r.dims, (std::vector<std::int64_t>{3}));
    QCOMPARE(r.strides, (std::vector<std::int64_t>{2}));
    QVERIFY(!r.contiguous());
    const SubtensorRegion rows = resolveSubtensor(
        json::parse(R"([{"start": 1}])"), {4, 3}, [] { return std::int64_t(0); }, "x");
    QVERIFY(rows.contiguous() && rows.base == 3 && rows.dims == (std::vector<std::int64_t>{3, 3}));
    // errors name the axis and the tensor
    auto err = [](const char* idxText, std::vector<std::int64_t> shape) {
        return errorOf([&] {
            resolveSubtensor(
                json::parse(idxText), shape, [] { return std::int64_t(-9); }, "float32[T]");
        });
    };
    QCOMPARE(err("[5]", {3}), QString("index 5 out of bounds for axis 0 of float32[T]"));
    QCOMPARE(err(R"([0, "?"])", {2, 4}), QString("index -9 out of bounds for axis 1 of float32[T]"));
    QCOMPARE(err(R"([{"step": 0}])", {3}), QString("slice step cannot be 0"));
    QCOMPARE(err("[0, 0, 0]", {2, 2}), QString("has 3 indices for float32[T]"));
}

void TestIr::shapeRules() {
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[2,3,4]"), "x");
    auto t = [&](const Op& op, std::vector<Variable*> in) {
        return QString::fromStdString(g.apply(op, in)->type().str());
    };
    QCOMPARE(t(Op::get("DimShuffle", {{"order", {2, "x", 0, 1}}}), {x}), QString("float32[4,1,2,3]"));
    Variable* one = g.addInput(Type::parse("float32[1,5]"), "one");
    QCOMPARE(t(Op::get("DimShuffle", {{"order", {1}}}), {one}), QString("float32[5]"));
    QVERIFY(errorOf([&] { g.apply(Op::get("DimShuffle", {{"order", {0}}}), {x}); }).contains("not broadcastable"));
    QCOMPARE(t(Op::get("Reshape", {{"ndim", 2}}), {x, g.addConstant(TensorData::fromInts(DType::Int64, {2}, {6, -1}))}),
             QString("float32[6,4]"));
    QVERIFY(errorOf([&] {
                g.apply(Op::get("Reshape", {{"ndim", 2}}),
                        {x, g.addConstant(TensorData::fromInts(DType::Int64, {2}, {5, 5}))});
            }).contains("incompatible static shapes"));
    Variable* mv = g.apply(Op::get("MakeVector"), {g.apply(Op::get("Shape_i", {{"i", 0}}), {x}), scalarInt(g, 12)});
    QCOMPARE(QString::fromStdString(mv->type().str()), QString("int64[2]"));
    QCOMPARE(t(Op::get("Reshape", {{"ndim", 2}}), {x, mv}), QString("float32[2,12]"));
    QCOMPARE(t(Op::get("Flatten", {{"outdim", 2}}), {x}), QString("float32[2,12]"));
    QCOMPARE(t(Op::get("Shape"), {x}), QString("int64[3]"));
    QCOMPARE(t(Op::get("Subtensor", {{"idx", {1, json{{"start", 0}, {"stop", 3}, {"step", 2}}}}}), {x}),
             QString("float32[2,4]"));
    QCOMPARE(t(Op::get("Subtensor", {{"idx", {json{{"start", -1}}}}}), {x}), QString("float32[1,3,4]"));
    QVERIFY(errorOf([&] { g.apply(Op::get("Subtensor", {{"idx", {5}}}), {x}); }).contains("out of bounds"));
    QCOMPARE(t(Op::get("Alloc"), {g.addConstant(TensorData::fromDoubles(DType::Float32, {}, {0.0})), scalarInt(g, 3),
                                  g.apply(Op::get("Shape_i", {{"i", 2}}), {x})}),
             QString("float32[3,4]"));
    QCOMPARE(t(Op::get("Join", {{"axis", 1}}), {x, x}), QString("float32[2,6,4]"));
    Apply* sp = g.makeApply(Op::get("Split", {{"axis", 2}, {"n_splits", 2}}),
                            {x, g.addConstant(TensorData::fromInts(DType::Int64, {2}, {1, 3}))});
    QCOMPARE(sp->nout(), 2);
    QCOMPARE(QString::fromStdString(sp->output(1)->type().str()), QString("float32[2,3,3]"));
    QVERIFY(errorOf([&] {
                g.makeApply(Op::get("Split", {{"axis", 2}, {"n_splits", 2}}),
                            {x, g.addConstant(TensorData::fromInts(DType::Int64, {2}, {1, 1}))});
            }).contains("sum to 2"));
    QCOMPARE(t(Op::get("CAReduce", {{"scalar", "add"}, {"axis", {0, 2}}}), {x}), QString("float32[3]"));
    QCOMPARE(t(Op::get("CAReduce", {{"scalar", "maximum"}}), {x}), QString("float32[]"));
    QCOMPARE(t(Op::get("CumOp", {{"axis", nullptr}}), {x}), QString("float32[24]"));
}

void TestIr::blasConvPoolRules() {
    FunctionGraph g;
    Variable* a = g.addInput(Type::parse("float32[8,16]"), "a");
    Variable* b = g.addInput(Type::parse("float32[16,4]"), "b");
    auto t = [&](const Op& op, std::vector<Variable*> in) {
        return QString::fromStdString(g.apply(op, in)->type().str());
    };
    QCOMPARE(t(Op::get("Dot22"), {a, b}), QString("float32[8,4]"));
    QVERIFY(errorOf([&] { g.apply(Op::get("Dot22"), {b, b}); }).contains("inner dimensions"));
    Variable* z = g.addInput(Type::parse("float32[8,4]"), "z");
    Variable* s = g.addConstant(TensorData::fromDoubles(DType::Float32, {}, {1.0}));
    QCOMPARE(t(Op::get("Gemm"), {z, s, a, b, s}), QString("float32[8,4]"));
    Variable* img = g.addInput(Type::parse("float32[1,3,224,224]"), "img");
    Variable* w = g.addInput(Type::parse("float32[64,3,7,7]"), "w");
    QCOMPARE(t(Op::get("AbstractConv2d", {{"border_mode", {3, 3}}, {"subsample", {2, 2}}}), {img, w}),
             QString("float32[1,64,112,112]"));
    Variable* wg = g.addInput(Type::parse("float32[32,1,3,3]"), "wg");
    Variable* f = g.addInput(Type::parse("float32[1,32,10,10]"), "f");
    QCOMPARE(t(Op::get("AbstractConv2d", {{"border_mode", "half"}, {"num_groups", 32}}), {f, wg}),
             QString("float32[1,32,10,10]"));
    QVERIFY(errorOf([&] { g.apply(Op::get("AbstractConv2d"), {img, wg}); }).contains("channels"));
    Variable* p = g.addInput(Type::parse("float32[1,64,112,112]"), "p");
    QCOMPARE(t(Op::get("Pool", {{"ws", {3, 3}}, {"stride", {2, 2}}, {"pad", {1, 1}}}), {p}),
             QString("float32[1,64,56,56]"));
    QCOMPARE(t(Op::get("Pool", {{"ws", {3, 3}}, {"stride", {2, 2}}, {"ignore_border", false}}),
               {g.addInput(Type::parse("float32[1,1,6,6]"))}),
             QString("float32[1,1,3,3]"));
    QCOMPARE(t(Op::get("BatchedDot"),
               {g.addInput(Type::parse("float32[4,2,3]")), g.addInput(Type::parse("float32[4,3,5]"))}),
             QString("float32[4,2,5]"));
    QVERIFY(errorOf([&] { g.makeApply(Op::get("BatchNormInference"), {p, p}); }).contains("takes 5 inputs, got 2"));
}

void TestIr::transfersAndGpuKinds() {
    FunctionGraph g;
    Variable* x = g.addInput(Type::parse("float32[2,3]"), "x");
    Variable* xg = g.apply(Op::get("GpuFromHost"), {x});
    QCOMPARE(QString::fromStdString(xg->type().str()), QString("float32[2,3]@gpu"));
    QVERIFY(errorOf([&] { g.apply(Op::get("GpuFromHost"), {xg}); }).contains("already on gpu"));
    QCOMPARE(QString::fromStdString(g.apply(Op::get("HostFromGpu"), {xg})->type().str()), QString("float32[2,3]"));
    QCOMPARE(QString::fromStdString(g.apply(Op::get("GpuToGpu", {{"context", "dev1"}}), {xg})->type().str()),
             QString("float32[2,3]@gpu:dev1"));
    // GpuAlloc: value on the GPU, shape scalars on the host.
    Variable* v = g.apply(Op::get("GpuFromHost"), {g.addConstant(TensorData::fromDoubles(DType::Float32, {}, {0.0}))});
    QCOMPARE(
        QString::fromStdString(g.apply(Op::get("GpuAlloc", {{"memset_0", true}}), {v, scalarInt(g, 5)})->type().str()),
        QString("float32[5]@gpu"));
    QCOMPARE(QString::fromStdString(
                 g.apply(Op::get("GpuAllocEmpty", {{"dtype", "float16"}, {"context", "dev1"}}), {scalarInt(g, 5)})
                     ->type()
                     .str()),
             QString("float16[5]@gpu:dev1"));
    // Shape and Shape_i read a GPU variable's shape and stay on the host.
    QCOMPARE(QString::fromStdString(g.apply(Op::get("Shape_i", {{"i", 1}}), {xg})->type().str()), QString("int64[]"));
    // Every host kind with a lifter has a registered GPU kind that mirrors it.
    for (const auto& k : OpRegistry::instance().kinds()) {
        const OpKindInfo* info = OpRegistry::instance().find(k);
        if (info->gpuCounterpart.empty()) continue;
        const OpKindInfo* gpu = OpRegistry::instance().find(info->gpuCounterpart);
        QVERIFY2(gpu && gpu->gpu, k.c_str());
        if (gpu->hostCounterpart == k) QCOMPARE(gpu->minInputs, info->minInputs);
    }
}

// Which inputs of a GPU kind stay on the host (HostParams): listed indices or a range; 'h' a
// host input, 'g' a GPU one. Host kinds and transfers have none.
void TestIr::gpuHostParams() {
    auto sides = [](const char* kind, int n) {
        const OpKindInfo* info = OpRegistry::instance().find(kind);
        QString s;
        for (int i = 0; i < n; ++i) s += info->isGpuHostParam(i) ? 'h' : 'g';
        return s;
    };
    QCOMPARE(sides("GpuGemm", 5), QString("ghggh"));
    QCOMPARE(sides("GpuReshape", 2), QString("gh"));
    QCOMPARE(sides("GpuAlloc", 4), QString("ghhh"));
    QCOMPARE(sides("GpuAllocEmpty", 2), QString("hh"));
    QCOMPARE(sides("GpuSubtensor", 3), QString("ghh"));
    QCOMPARE(sides("GpuIncSubtensor", 4), QString("gghh"));
    QCOMPARE(sides("GpuElemwise", 3), QString("ggg"));
    QCOMPARE(sides("GpuFromHost", 1), QString("g"));
    QCOMPARE(sides("Gemm", 5), QString("ggggg"));
    // a GPU value at a host parameter is refused by the type rule, naming the input
    FunctionGraph g;
    Variable* xg = g.apply(Op::get("GpuFromHost"), {g.addInput(Type::parse("float32[6]"), "x")});
    Variable* shape = g.apply(Op::get("GpuFromHost"), {g.addInput(Type::parse("int64[1]"), "s")});
    QVERIFY(errorOf([&] {
                g.makeApply(Op::get("GpuReshape", {{"ndim", 1}}), {xg, shape});
            }).contains("input 1 must be on the host"));
}

QTEST_GUILESS_MAIN(TestIr)
