#include "passlens/layout/GraphvizContext.h"

#include "GraphvizInternal.h"

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>

namespace passlens {

namespace gvinternal {

std::recursive_mutex& graphvizMutex() {
    static std::recursive_mutex mutex;
    return mutex;
}

ErrorCapture::ErrorCapture()
    : m_previousSink(s_sink) {
    s_sink = &m_text;
    // A capture-less generic lambda converts to agusererrf whatever its exact parameter type
    // (char* in Graphviz 2.x, possibly const char* later).
    agusererrf hook = [](auto* message) -> int {
        if (s_sink != nullptr && message != nullptr) {
            s_sink->append(message);
        }
        return 0;
    };
    m_previousHook = agseterrf(hook);
    agreseterrors();
}

ErrorCapture::~ErrorCapture() {
    agseterrf(m_previousHook);
    s_sink = m_previousSink;
}

void ErrorCapture::begin() {
    m_text.clear();
    agreseterrors();
}

bool ErrorCapture::errorReported() { return agerrors() >= AGERR; }

std::string ErrorCapture::text() const {
    std::string text = m_text;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    return text;
}

std::string ErrorCapture::message(std::string_view what, std::string_view fallback) const {
    std::string message = "Graphviz: ";
    message += what;
    std::string detail = text();
    if (detail.empty()) {
        detail = fallback;
    }
    if (!detail.empty()) {
        message += ": ";
        message += detail;
    }
    return message;
}

void ErrorCapture::fail(std::string_view what, std::string_view fallback) const {
    throw std::runtime_error(message(what, fallback));
}

// Destroyed at exit, before the mutex (constructed later, destroyed earlier).
GVC_s* sharedContext() {
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

} // namespace gvinternal

using gvinternal::ErrorCapture;
using gvinternal::graphvizMutex;
using gvinternal::RenderLength;

void GvcDeleter::operator()(GVC_s* gvc) const noexcept {
    std::lock_guard lock(graphvizMutex());
    gvFreeContext(gvc);
}

void GraphDeleter::operator()(Agraph_s* graph) const noexcept {
    std::lock_guard lock(graphvizMutex());
    agclose(graph);
}

void RenderDataDeleter::operator()(char* data) const noexcept {
    std::lock_guard lock(graphvizMutex());
    gvFreeRenderData(data);
}

LayoutGuard::~LayoutGuard() {
    if (m_gvc != nullptr && m_graph != nullptr) {
        std::lock_guard lock(graphvizMutex());
        gvFreeLayout(m_gvc, m_graph);
    }
}

GraphvizContext::GraphvizContext()
    : m_gvc([] {
        std::lock_guard lock(graphvizMutex());
        return gvinternal::sharedContext();
    }()) {}

std::string GraphvizContext::render(std::string_view dot, std::string_view format) {
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

std::string renderDot(std::string_view dot, std::string_view format) {
    GraphvizContext context;
    return context.render(dot, format);
}

} // namespace passlens
