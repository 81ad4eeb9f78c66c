#include "passlens/layout/GraphvizContext.h"

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>

#include <cgraph.h>
#include <gvc.h>

namespace passlens {

namespace {

// gvRenderData's length parameter: `unsigned int*` before Graphviz 13, `size_t*` since
// (detected by core/layout/CMakeLists.txt).
#if PASSLENS_GVRENDERDATA_SIZE_T
using RenderLength = std::size_t;
#else
using RenderLength = unsigned int;
#endif

// cgraph is not thread-safe and agseterrf is process-wide: every Graphviz call goes through this
// lock. Recursive because the RAII deleters take it too and may run while it is held.
std::recursive_mutex& graphvizMutex()
{
    static std::recursive_mutex mutex;
    return mutex;
}

// Installs a Graphviz error hook collecting the messages of the calls made while it is alive,
// and restores the previous hook afterwards. Must be created with graphvizMutex() held.
class ErrorCapture {
public:
    ErrorCapture()
        : m_previousSink(s_sink)
    {
        s_sink = &m_text;
        // A capture-less generic lambda converts to agusererrf whatever its exact parameter
        // type (char* in Graphviz 2.x, possibly const char* later).
        agusererrf hook = [](auto* message) -> int {
            if (s_sink != nullptr && message != nullptr) {
                s_sink->append(message);
            }
            return 0;
        };
        m_previousHook = agseterrf(hook);
        agreseterrors();
    }
    ~ErrorCapture()
    {
        agseterrf(m_previousHook);
        s_sink = m_previousSink;
    }
    ErrorCapture(const ErrorCapture&) = delete;
    ErrorCapture& operator=(const ErrorCapture&) = delete;

    // Starts a new Graphviz call: forget earlier messages and the error level.
    void begin()
    {
        m_text.clear();
        agreseterrors();
    }

    // True when Graphviz reported an error (not just a warning) since begin().
    static bool errorReported() { return agerrors() >= AGERR; }

    // Throws std::runtime_error("Graphviz: <what>: <Graphviz's text, or fallback>").
    [[noreturn]] void fail(std::string_view what, std::string_view fallback = {}) const
    {
        std::string message = "Graphviz: ";
        message += what;
        std::string text = m_text;
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
            text.pop_back();
        }
        if (text.empty()) {
            text = fallback;
        }
        if (!text.empty()) {
            message += ": ";
            message += text;
        }
        throw std::runtime_error(message);
    }

private:
    static inline std::string* s_sink = nullptr;
    std::string m_text;
    std::string* m_previousSink;
    agusererrf m_previousHook = nullptr;
};

} // namespace

void GvcDeleter::operator()(GVC_s* gvc) const noexcept
{
    std::lock_guard lock(graphvizMutex());
    gvFreeContext(gvc);
}

void GraphDeleter::operator()(Agraph_s* graph) const noexcept
{
    std::lock_guard lock(graphvizMutex());
    agclose(graph);
}

void RenderDataDeleter::operator()(char* data) const noexcept
{
    std::lock_guard lock(graphvizMutex());
    gvFreeRenderData(data);
}

LayoutGuard::~LayoutGuard()
{
    if (m_gvc != nullptr && m_graph != nullptr) {
        std::lock_guard lock(graphvizMutex());
        gvFreeLayout(m_gvc, m_graph);
    }
}

namespace {

// The one GVC_t of the process (see GraphvizContext). Call with graphvizMutex() held. Destroyed
// at exit, before the mutex (constructed later, destroyed earlier).
GVC_s* sharedContext()
{
    static const GvcPtr context = [] {
        ErrorCapture errors;
        GvcPtr created(gvContext());
        if (!created) {
            errors.fail("cannot create a context (gvContext)");
        }
        return created;
    }();
    return context.get();
}

} // namespace

GraphvizContext::GraphvizContext()
    : m_gvc([] {
        std::lock_guard lock(graphvizMutex());
        return sharedContext();
    }())
{
}

std::string GraphvizContext::render(std::string_view dot, std::string_view format)
{
    std::lock_guard lock(graphvizMutex());
    ErrorCapture errors;

    const std::string text(dot); // agmemread needs a NUL-terminated buffer
    const std::string formatName(format);

    errors.begin();
    GraphPtr graph(agmemread(text.c_str()));
    if (!graph || ErrorCapture::errorReported()) {
        errors.fail("cannot parse DOT", "no graph in input");
    }

    errors.begin();
    if (gvLayout(m_gvc, graph.get(), "dot") != 0) {
        errors.fail("dot layout failed");
    }
    const LayoutGuard layoutGuard(m_gvc, graph.get());

    errors.begin();
    char* data = nullptr;
    RenderLength length = 0;
    const int rc = gvRenderData(m_gvc, graph.get(), formatName.c_str(), &data, &length);
    const RenderDataPtr buffer(data);
    if (rc != 0 || buffer == nullptr) {
        errors.fail("cannot render format '" + formatName + "'");
    }
    // The length is a byte count: png and pdf contain NUL bytes.
    return std::string(buffer.get(), static_cast<std::size_t>(length));
}

std::string renderDot(std::string_view dot, std::string_view format)
{
    GraphvizContext context;
    return context.render(dot, format);
}

} // namespace passlens
