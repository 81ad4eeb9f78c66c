#pragma once
/// @file Tensor.h
/// Runtime tensors of the execution engine: a dtype, a shape and a reference-counted buffer in
/// host memory (or, with the CUDA backend, device memory). Always dense, row-major and
/// contiguous; views (reshape, broadcastable-axis DimShuffle) share the buffer.
#include <passlens/ir/DType.h>
#include <passlens/ir/Tensor.h>
#include <passlens/ir/Type.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace passlens {

using Shape = std::vector<std::int64_t>;

/// Number of elements of a shape (elementCount: 1 for a 0-d shape, 0 when any dim is 0,
/// saturated instead of overflowing).
std::int64_t shapeNumel(const Shape& shape);
/// "[2,3,4]".
std::string shapeStr(const Shape& shape);

class BufferPool;

/// Where a buffer lives. Device buffers exist only in builds with the CUDA backend.
enum class MemoryKind : std::uint8_t { Host, Device };

/// A raw buffer. Freed (or returned to its pool) when the last Tensor referring to it goes.
class Storage {
public:
    Storage(void* ptr, std::size_t bytes, MemoryKind kind, bool readOnly, std::shared_ptr<const void> keepAlive,
            std::weak_ptr<BufferPool> pool, int device = 0, bool pinned = false);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    void* ptr() const { return m_ptr; }
    std::size_t bytes() const { return m_bytes; }
    MemoryKind kind() const { return m_kind; }
    int device() const { return m_device; }
    /// True for buffers borrowed from graph constants: kernels must never write them.
    bool readOnly() const { return m_readOnly; }
    /// Page-locked host memory (CUDA transfers from and to it are asynchronous).
    bool pinned() const { return m_pinned; }

private:
    void* m_ptr;
    std::size_t m_bytes;
    MemoryKind m_kind;
    bool m_readOnly;
    std::shared_ptr<const void> m_keepAlive; ///< owner of borrowed memory (constant bytes)
    std::weak_ptr<BufferPool> m_pool;        ///< owned memory goes back here when alive
    int m_device;
    bool m_pinned;
};

/// Reuses freed buffers of equal size (64-byte aligned host memory; device memory through the
/// CUDA backend's allocator). One per Executor; thread-compatible (one run at a time).
class BufferPool : public std::enable_shared_from_this<BufferPool> {
public:
    ~BufferPool();
    /// A buffer of at least `bytes` bytes (rounded up to 64). Throws passlens::Error when the
    /// allocation fails, naming the size.
    std::shared_ptr<Storage> allocate(std::size_t bytes, MemoryKind kind = MemoryKind::Host, int device = 0);
    /// Called by Storage's destructor.
    void release(void* ptr, std::size_t bytes, MemoryKind kind, int device, bool pinned);
    /// With the CUDA backend: host buffers come from page-locked memory (falls back to ordinary
    /// memory when that fails).
    void setPinnedHost(bool on) { m_pinnedHost = on; }
    /// Frees every cached buffer.
    void trim();
    /// Bytes currently cached (not in use).
    std::size_t cachedBytes() const { return m_cachedBytes; }
    /// Bytes handed out and not yet released.
    std::size_t liveBytes() const { return m_liveBytes; }
    /// High-water marks since the last resetPeaks(): live bytes, and live + cached bytes (the
    /// pool's whole footprint).
    std::size_t peakLiveBytes() const { return m_peakLive; }
    std::size_t peakFootprintBytes() const { return m_peakFootprint; }
    /// Tests: fill every buffer handed out with 0xFF bytes (NaN for floats, -1 for integers),
    /// so elements a kernel forgets to write show up.
    void setPoison(bool on) { m_poison = on; }
    void resetPeaks() {
        m_peakLive = m_liveBytes;
        m_peakFootprint = m_liveBytes + m_cachedBytes;
    }

private:
    struct Entry {
        std::size_t bytes;
        MemoryKind kind;
        int device;
        void* ptr;
        bool pinned;
    };
    void noteAllocated(std::size_t bytes);
    std::vector<Entry> m_free;
    std::size_t m_cachedBytes = 0;
    std::size_t m_liveBytes = 0, m_peakLive = 0, m_peakFootprint = 0;
    bool m_poison = false;
    bool m_pinnedHost = false;
};

/// Allocates raw memory of a kind (host: 64-byte aligned; device: cudaMalloc). Returns nullptr on
/// failure. Device allocation fails in builds without CUDA.
void* rawAllocate(std::size_t bytes, MemoryKind kind, int device);
void rawFree(void* ptr, MemoryKind kind, int device, bool pinned = false);

/// A dense tensor. Copying a Tensor copies the handle (both refer to the same buffer).
/// A string tensor (DType::String, ONNX's STRING) is a host tensor whose elements are
/// std::string objects (`data<std::string>()`), built by empty (empty strings), fromStrings or
/// fromConstant; views, clone, toTensorData and convertElements (numbers from and to text, as
/// ONNX's Cast) work on it; it never has device memory nor a pool buffer.
/// It also carries ONNX's non-tensor host values (Type::Kind::Sequence and Optional): a sequence
/// of values or an optional value (empty or one value), which have no buffer of their own; only
/// kind(), items(), defined(), typeStr() and clone() apply to them (the executor checks kinds
/// against the graph's types before a kernel sees a value).
class Tensor {
public:
    Tensor() = default;

    /// Uninitialised tensor. `pool` may be null (plain allocation). Throws passlens::Error when
    /// a dim is negative or memory is exhausted (message gives the bytes).
    static Tensor empty(DType dtype, Shape shape, BufferPool* pool = nullptr, MemoryKind kind = MemoryKind::Host,
                        int device = 0);
    /// Zero-filled host tensor.
    static Tensor zeros(DType dtype, Shape shape, BufferPool* pool = nullptr);
    /// A read-only host tensor sharing the bytes of graph constant data (no copy). Throws
    /// passlens::Error when the data is not loaded (`missing`).
    static Tensor fromConstant(const TensorData& data);
    /// A host tensor holding a copy of `bytes` (dtypeSize*numel bytes).
    static Tensor fromBytes(DType dtype, Shape shape, const void* bytes);
    /// A host string tensor holding `values` (row-major). Throws passlens::Error when the count
    /// does not match the shape.
    static Tensor fromStrings(Shape shape, std::vector<std::string> values);
    /// Host tensors from values converted to dtype (tests and small helpers).
    static Tensor fromDoubles(DType dtype, Shape shape, const std::vector<double>& values);
    static Tensor scalar(DType dtype, double value);
    /// A sequence value holding `items` (ONNX SequenceProto; Type::sequence).
    static Tensor sequence(std::vector<Tensor> items);
    /// An optional value: empty (nullopt) or holding `value` (ONNX OptionalProto; Type::optional).
    static Tensor optional(std::optional<Tensor> value);

    bool defined() const { return m_storage != nullptr || m_kind != Type::Kind::Tensor; }
    Type::Kind kind() const { return m_kind; }
    bool isDense() const { return m_kind == Type::Kind::Tensor; }
    /// The elements of a sequence, the value of a non-empty optional (one item); empty for a
    /// dense tensor.
    const std::vector<Tensor>& items() const;
    /// A string tensor, or a sequence or optional value holding one.
    bool holdsStrings() const;
    DType dtype() const { return m_dtype; }
    const Shape& shape() const { return m_shape; }
    int ndim() const { return static_cast<int>(m_shape.size()); }
    std::int64_t dim(int i) const { return m_shape[static_cast<std::size_t>(i)]; }
    std::int64_t numel() const { return shapeNumel(m_shape); }
    std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtypeSize(m_dtype); }
    MemoryKind memory() const { return m_storage ? m_storage->kind() : MemoryKind::Host; }
    bool onHost() const { return memory() == MemoryKind::Host; }
    int device() const { return m_storage ? m_storage->device() : 0; }
    const std::shared_ptr<Storage>& storage() const { return m_storage; }

    void* rawData() const { return static_cast<char*>(m_storage->ptr()) + m_offset; }
    template <class T> T* data() const { return static_cast<T*>(rawData()); }

    /// The buffer may be written (not borrowed from a constant).
    bool writable() const { return m_storage && !m_storage->readOnly(); }
    /// No other Tensor handle refers to this buffer: a kernel may overwrite it in place.
    bool uniquelyOwned() const { return m_storage && m_storage.use_count() == 1; }

    /// A view with another shape of the same element count. Throws passlens::Error otherwise.
    Tensor reshaped(Shape shape) const;
    /// A view of `numel(shape)` contiguous elements starting at element `offset` of this tensor
    /// (leading-axis slices, splits). Throws passlens::Error when it does not fit.
    Tensor sliceView(std::int64_t offset, Shape shape) const;
    /// A deep copy into a fresh buffer of the same memory kind (host copies only here).
    Tensor clone(BufferPool* pool = nullptr) const;
    /// Element i (row-major) converted to double (host only; any real dtype).
    double at(std::int64_t i) const;
    /// Element i converted to int64 (host only).
    std::int64_t intAt(std::int64_t i) const;
    /// All elements as doubles (tests, checks).
    std::vector<double> toDoubles() const;
    /// A copy as core constant data (host only).
    std::shared_ptr<TensorData> toTensorData() const;
    /// "float32[2,3]"; "seq(float32[2,3], int64[])" (the first 3 items), "optional()" when
    /// empty, "optional(float32[2])".
    std::string typeStr() const;

private:
    std::shared_ptr<Storage> m_storage;
    std::size_t m_offset = 0;
    DType m_dtype = DType::Float32;
    Shape m_shape;
    Type::Kind m_kind = Type::Kind::Tensor;
    std::shared_ptr<const std::vector<Tensor>> m_items; ///< sequence elements, optional's value
};

/// Calls f(T{}) with T the C++ type of a real dtype (bool as uint8_t, float16 as uint16_t bits
/// is NOT supported: throws). Throws passlens::Error("<what>: dtype X is not supported").
template <class F> decltype(auto) visitDType(DType d, const char* what, F&& f);

/// Element conversion helpers (row-major contiguous copies between dtypes; float16 from and to
/// any real dtype through float32, rounding to nearest even). Strings (std::string elements) from
/// and to every real dtype as ONNX's Cast: numbers printed by formatNumber, text parsed by
/// parseNumber (then converted as from float64, or exactly for an integer literal).
void convertElements(const void* src, DType srcType, void* dst, DType dstType, std::int64_t n);

/// A number as ONNX's Cast to STRING writes it: integers and bools in decimal ("1" / "0"),
/// floats as the shortest text that reads back to the same value of their own dtype, plain
/// ("0.1", "100.0") for magnitudes in [1e-4, 1e16) and else scientific ("1e-05", "1.5e+16"), as
/// NumPy's str() of the value; NaN, infinities as the spec's "NaN", "INF", "-INF". `dtype` is the
/// value's own real dtype (float16 / bfloat16 / float32 get their shortest text).
std::string formatNumber(double value, DType dtype);
/// Text as ONNX's Cast from STRING reads it: plain or scientific decimal ("3.14", "1000", "1e-5",
/// "1E8"; leading and trailing blanks allowed) and, in any case, "NaN", "INF", "+INF", "-INF"
/// (also "nan", "inf", "infinity"). Throws passlens::Error quoting the text otherwise.
double parseNumber(std::string_view text);

} // namespace passlens

#include "passlens/kernels/TensorVisit.inl"
