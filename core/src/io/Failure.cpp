#include "passlens/io/Failure.h"

#include "passlens/io/JsonFile.h"
#include "passlens/ir/Error.h"

#include <atomic>
#include <exception>
#include <filesystem>
#include <functional>
#include <new>
#include <optional>
#include <stdexcept>
#include <typeinfo>
#include <variant>

namespace passlens {

namespace {
std::atomic<void*> g_reserve{nullptr};
std::size_t g_reserveBytes = 0;
std::new_handler g_previous = nullptr;
} // namespace

std::string currentExceptionMessage(const std::string& context) {
    try {
        throw;
    } catch (const Error& e) {
        return e.what();
    } catch (const std::bad_alloc&) {
        MemoryReserve::rearm(); // the work that failed is unwound: take the reserve again
        return context + ": out of memory (the input needs more memory than this process may use)";
    } catch (const nlohmann::json::exception& e) {
        return context + ": " + jsonErrorReason(e);
    } catch (const std::filesystem::filesystem_error& e) {
        return (e.path1().empty() ? context : e.path1().string()) + ": " + e.code().message();
    } catch (const std::out_of_range&) { // .at() past the end: "vector::_M_range_check: __n ..."
        return context + ": internal error: an index out of range";
    } catch (const std::length_error&) { // "cannot create std::vector larger than max_size()"
        return context + ": a size too large to allocate";
    } catch (const std::logic_error&) {
        return context + ": internal error: an invalid argument";
    } catch (const std::bad_variant_access&) { // "std::get: wrong index for variant"
        return context + ": internal error: an invalid state";
    } catch (const std::bad_optional_access&) {
        return context + ": internal error: an invalid state";
    } catch (const std::bad_function_call&) {
        return context + ": internal error: an invalid state";
    } catch (const std::bad_cast&) {
        return context + ": internal error: an invalid state";
    } catch (const std::exception& e) {
        const std::string what = e.what(); // ours (CUDA calls), or another library's words
        for (const char* library : {"std::", "basic_string", "_M_", "json.exception"})
            if (what.find(library) != std::string::npos) return context + ": internal error: an invalid state";
        return context + ": " + what;
    } catch (...) {
        return context + ": unknown error";
    }
}

namespace {
std::atomic<bool> g_spent{false};

// A failed allocation with the reserve held frees it and lets operator new retry, so that an
// allocation in a destructor (which must not throw) succeeds; throwIfSpent() then raises the
// error at the next safe point. With the reserve spent, the failure throws.
void onOutOfMemory() {
    if (void* r = g_reserve.exchange(nullptr)) {
        ::operator delete(r);
        g_spent.store(true);
        return;
    }
    throw std::bad_alloc();
}
} // namespace

MemoryReserve::MemoryReserve(std::size_t bytes) {
    g_reserveBytes = bytes;
    g_reserve.store(::operator new(bytes, std::nothrow)); // untouched pages: address space, not RAM
    g_previous = std::set_new_handler(onOutOfMemory);
}

MemoryReserve::~MemoryReserve() {
    std::set_new_handler(g_previous);
    g_reserveBytes = 0;
    if (void* r = g_reserve.exchange(nullptr)) ::operator delete(r);
}

void MemoryReserve::throwIfSpent() {
    if (g_spent.load(std::memory_order_relaxed)) throw std::bad_alloc();
}

bool MemoryReserve::rearm() {
    if (g_reserveBytes == 0 || g_reserve.load()) return true;
    void* r = ::operator new(g_reserveBytes, std::nothrow);
    if (!r) return false;
    void* expected = nullptr;
    if (!g_reserve.compare_exchange_strong(expected, r)) ::operator delete(r);
    g_spent.store(false);
    return true;
}

} // namespace passlens
