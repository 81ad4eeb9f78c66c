#pragma once
/// @file Type.h
/// Tensor type: dtype, static shape (dims may be unknown) and location (host or a GPU context),
/// as Theano's TensorType / GpuArrayType(context_name).
#include "passlens/ir/DType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

/// Where a value lives. The default GPU context has an empty name (Theano's context_name=None).
struct Location {
    enum class Kind : std::uint8_t { Host, Gpu };
    Kind kind = Kind::Host;
    std::string context; ///< GPU context name; empty for the default context and for the host

    static Location host() { return {}; }
    static Location gpu(std::string ctx = {}) { return {Kind::Gpu, std::move(ctx)}; }
    bool isGpu() const { return kind == Kind::Gpu; }
    bool operator==(const Location&) const = default;
    /// "host", "gpu" or "gpu:NAME".
    std::string str() const;
};

/// Number of elements of a shape of known dims: 1 for 0-d, 0 when any dim is 0 (whatever the
/// other dims are), saturated at INT64_MAX instead of overflowing (a size check then refuses it).
std::int64_t elementCount(const std::vector<std::int64_t>& dims);

/// A tensor type. Printable and parseable as `DTYPE[DIMS]@LOCATION` (FORMAT.md §1), e.g.
/// `float32[?,4]@gpu`; `@host` is omitted when printing. An unknown rank (possible only for ONNX
/// values that shape inference could not type) prints as `float32[*]`.
/// ONNX's non-tensor values are types of their own kind around an element type: a sequence of
/// tensors `seq(float32[?,4])` and an optional value `optional(seq(int64[*]))` (host values of
/// the Onnx ops; ONNX's TypeProto sequence_type / optional_type). Their dtype() is the innermost
/// tensor's dtype and their rank is unknown, so tensor-only code treats them as untyped values.
/// Types are interned (as ops are, Op.h): a Type is one pointer to a shared, immutable record
/// that lives to the end of the process, so copying one allocates nothing and a million
/// variables of the same type share one record. Thread-safe.
class Type {
public:
    static constexpr std::int64_t kUnknownDim = -1;
    enum class Kind : std::uint8_t { Tensor, Sequence, Optional };

    /// float32[] (a float32 scalar) on the host.
    Type();
    Type(DType dtype, std::vector<std::int64_t> dims, Location loc = {});
    /// A type of unknown rank.
    static Type unknownRank(DType dtype, Location loc = {});
    /// A sequence of values of type `element` (host).
    static Type sequence(const Type& element);
    /// An optional value: empty, or one value of type `element` (host).
    static Type optional(const Type& element);
    /// Parses `DTYPE[DIMS]@LOCATION`, `seq(TYPE)` or `optional(TYPE)`. Throws
    /// passlens::Error("bad type string '...': reason").
    static Type parse(std::string_view text);

    Kind kind() const { return m_rep->kind; }
    bool isTensor() const { return m_rep->kind == Kind::Tensor; }
    /// The element type of a sequence or optional type (the type itself for a tensor type).
    const Type& elementType() const { return m_rep->elem ? *m_rep->elem : *this; }

    DType dtype() const { return m_rep->dtype; }
    const std::vector<std::int64_t>& dims() const { return m_rep->dims; }
    bool rankKnown() const { return m_rep->rankKnown; }
    int ndim() const { return static_cast<int>(m_rep->dims.size()); }
    const Location& location() const { return m_rep->loc; }
    bool isGpu() const { return m_rep->loc.isGpu(); }
    /// True when every dim is known (and the rank is known).
    bool isStatic() const;
    /// Element count when static, else -1; INT64_MAX when the count does not fit 64 bits (dims
    /// from a file), so a size check refuses it.
    std::int64_t numElements() const;
    /// Dim i is statically 1 (Theano's broadcastable flag).
    bool broadcastable(int i) const { return m_rep->dims[static_cast<std::size_t>(i)] == 1; }

    Type withLocation(Location loc) const;
    Type withDType(DType d) const;
    Type withDims(std::vector<std::int64_t> dims) const;

    /// Same kind, dtype, rank and location, and no known dim disagrees (element types alike for
    /// sequences and optionals). This is the check
    /// FunctionGraph::replace applies (Theano's convert_variable between TensorTypes).
    bool compatible(const Type& other) const;
    /// Dim-wise merge of two compatible types, keeping the more specific dims.
    Type merged(const Type& other) const;

    std::string str() const;
    /// Structural equality (kind, dtype, dims, location, rank, element type): one pointer
    /// comparison, since equal types share their interned record.
    bool operator==(const Type& o) const { return m_rep == o.m_rep; }
    std::size_t hash() const { return m_rep->hash; }

private:
    struct Rep {
        DType dtype = DType::Float32;
        std::vector<std::int64_t> dims;
        Location loc;
        bool rankKnown = true;
        Kind kind = Kind::Tensor;
        const Type* elem = nullptr; ///< element type of a sequence or optional
        std::size_t hash = 0;
    };
    explicit Type(Rep rep);
    /// The interned record equal to `rep` (added when new).
    static const Rep* intern(Rep rep);
    const Rep* m_rep;
};

} // namespace passlens
