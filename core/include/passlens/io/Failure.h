#pragma once
/// @file Failure.h
/// Turning any exception into the one-line message the user sees, and keeping out of memory a
/// message instead of a crash (docs/RELIABILITY.md).
#include <cstddef>
#include <string>

namespace passlens {

/// The message of the exception being handled; call it inside a catch block. passlens::Error
/// gives its own text (it names file, place and reason); std::bad_alloc gives "CONTEXT: out of
/// memory"; a nlohmann::json exception, a filesystem error or another std::exception gives
/// "CONTEXT: reason" without the library's tags; the standard library's own exceptions, whose
/// text names only library internals (std::out_of_range from .at(), std::length_error,
/// std::bad_variant_access), give the reason in words ("CONTEXT: internal error: an index out of
/// range", "CONTEXT: a size too large to allocate"). After std::bad_alloc the MemoryReserve is
/// taken again. `context` names the command and the file,
/// e.g. "optimize model.onnx".
std::string currentExceptionMessage(const std::string& context);

/// While alive, keeps `bytes` of address space in reserve and installs a new-handler: the first
/// failed allocation frees the reserve and is retried (so it succeeds, also inside a destructor:
/// nlohmann::json's destructor allocates its work list, and a std::bad_alloc leaving a noexcept
/// destructor ends the process in std::terminate); long writers call throwIfSpent() at points
/// where unwinding is safe, which throws std::bad_alloc once the reserve was spent, and the
/// unwinding has the memory the reserve gave back. With the reserve spent, a failed allocation
/// throws. currentExceptionMessage() takes the reserve again (rearm) after std::bad_alloc. One
/// instance per process (the CLI's and the window's main).
class MemoryReserve {
public:
    explicit MemoryReserve(std::size_t bytes = std::size_t(64) << 20);
    ~MemoryReserve();
    MemoryReserve(const MemoryReserve&) = delete;
    MemoryReserve& operator=(const MemoryReserve&) = delete;
    /// Throws std::bad_alloc when the reserve was spent on a failed allocation (call it where no
    /// destructor is running, e.g. between the items a writer serialises).
    static void throwIfSpent();
    /// Allocates the reserve again when it was spent (no-op without a MemoryReserve); false when
    /// that fails.
    static bool rearm();
};

} // namespace passlens
