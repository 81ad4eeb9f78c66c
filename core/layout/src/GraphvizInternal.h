#pragma once
// Internal to passlens_layout: the one Graphviz lock, per-call error capture and the shared
// context. Includes Graphviz headers, so it never appears in a public header.

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

#include <cgraph.h>
#include <gvc.h>

namespace passlens::gvinternal {

// gvRenderData's length parameter: `unsigned int*` before Graphviz 13, `size_t*` since
// (detected by core/layout/CMakeLists.txt).
#if PASSLENS_GVRENDERDATA_SIZE_T
using RenderLength = std::size_t;
#else
using RenderLength = unsigned int;
#endif

// cgraph is not thread-safe and agseterrf is process-wide: every Graphviz call of this library
// goes through this lock. Recursive because the RAII deleters take it too and may run while it
// is held. Never taken in a forked layout child (the owner there is another thread id).
std::recursive_mutex& graphvizMutex();

// The one GVC_t of the process. Call with graphvizMutex() held.
GVC_s* sharedContext();

// Installs a Graphviz error hook collecting the messages of the calls made while it is alive,
// and restores the previous hook afterwards. Create it with graphvizMutex() held (or in a
// forked child, where no other thread exists).
class ErrorCapture {
public:
    ErrorCapture();
    ~ErrorCapture();
    ErrorCapture(const ErrorCapture&) = delete;
    ErrorCapture& operator=(const ErrorCapture&) = delete;

    // Starts a new Graphviz call: forget earlier messages and the error level.
    void begin();
    // True when Graphviz reported an error (not just a warning) since begin().
    static bool errorReported();
    // Graphviz's messages since begin(), trailing blanks removed.
    std::string text() const;
    // "Graphviz: <what>: <Graphviz's text, or fallback>".
    std::string message(std::string_view what, std::string_view fallback = {}) const;
    // Throws std::runtime_error(message(what, fallback)).
    [[noreturn]] void fail(std::string_view what, std::string_view fallback = {}) const;

private:
    static inline std::string* s_sink = nullptr;
    std::string m_text;
    std::string* m_previousSink;
    agusererrf m_previousHook = nullptr;
};

} // namespace passlens::gvinternal
