#pragma once
/// @file Op.h
/// An operation: kind (Theano class name), typed attributes and optional nested graphs. Ops are
/// interned, so op equality is pointer equality (as Theano's props-based __eq__/__hash__).
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace passlens {

class FunctionGraph;
struct OpKindInfo;

/// Attributes of an op: a JSON object whose keys are the attribute names of OPS.md
/// (`{"scalar": "add"}`, `{"order": [1, 0]}`). Keys are kept sorted, so equal attributes give
/// equal dumps; the dump is part of the interning key.
using Attrs = nlohmann::json;

/// A nested graph held by an op (the `then_branch` of OnnxIf, the body of OnnxLoop).
struct Subgraph {
    std::string attribute; ///< the ONNX attribute name
    std::shared_ptr<const FunctionGraph> graph;
};

/// An interned op. Obtain one with Op::get; never construct directly.
class Op {
public:
    /// The interned op of this kind and these attributes. Attributes are validated against the
    /// kind's schema and completed with defaults. Throws passlens::Error on an unknown kind
    /// ("unknown op kind 'Foo'") or a bad attribute ("Elemwise: attribute 'scalar' must be ...").
    /// Kinds starting with "Onnx" are always accepted (host ops with no Theano counterpart).
    static const Op& get(const std::string& kind, Attrs attrs = Attrs::object(), std::vector<Subgraph> subgraphs = {});

    const std::string& kind() const { return m_kind; }
    const Attrs& attrs() const { return m_attrs; }
    const std::vector<Subgraph>& subgraphs() const { return m_subgraphs; }
    const OpKindInfo& info() const { return *m_info; }
    /// Theano-style display string: `Elemwise{add}`, `GpuFromHost<None>`, `DimShuffle{1,0}`,
    /// `GpuAlloc<None>{memset_0=True}`, `Shape_i{0}`.
    const std::string& str() const { return m_str; }
    /// The interning key (kind, attributes, nested graph identities).
    const std::string& key() const { return m_key; }

    bool has(const char* attr) const { return m_attrs.contains(attr); }
    std::string str(const char* attr) const; ///< string attribute or "" when absent
    std::int64_t intAttr(const char* attr, std::int64_t dflt = 0) const;
    double floatAttr(const char* attr, double dflt = 0.0) const;
    bool boolAttr(const char* attr, bool dflt = false) const;

    bool isGpu() const;      ///< a GPU kind (GpuElemwise, GpuFromHost, ...)
    bool isTransfer() const; ///< GpuFromHost, HostFromGpu or GpuToGpu
    bool isOnnx() const;     ///< an `Onnx<Type>` host op
    /// A random generator of ONNX (RandomNormal, RandomUniform, RandomNormalLike,
    /// RandomUniformLike, Bernoulli, Multinomial) or Dropout, whose training mode draws a mask:
    /// its values are a draw, not a function of its inputs. Never constant-folded.
    bool isRandom() const { return isRandomKind(m_kind); }
    /// Whether ops of `kind` are random (isRandom).
    static bool isRandomKind(const std::string& kind);
    /// isRandom without a `seed` attribute: every evaluation draws other values, so two such
    /// nodes are two values even with equal inputs (Merge keeps both, as Theano's random ops
    /// never merge: each takes its own rng state input). A seeded one gives the same values in
    /// every evaluation.
    bool isUnseededRandom() const { return isRandom() && !has("seed"); }

    Op(const Op&) = delete;
    Op& operator=(const Op&) = delete;

private:
    friend class OpRegistry;
    Op() = default;
    std::string m_kind;
    Attrs m_attrs;
    std::vector<Subgraph> m_subgraphs;
    const OpKindInfo* m_info = nullptr;
    std::string m_str;
    std::string m_key;
};

} // namespace passlens
