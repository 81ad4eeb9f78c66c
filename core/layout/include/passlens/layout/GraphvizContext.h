#pragma once

// RAII ownership of Graphviz (cgraph + gvc) state, and one-shot DOT rendering.
//
// Graphviz is not thread-safe (cgraph not even for reads) and its error hook is process-wide, so
// every Graphviz call made through this library is serialised on one internal mutex. Graphviz
// headers are deliberately not included here: the handle types are forward-declared.

#include <memory>
#include <string>
#include <string_view>

struct GVC_s;    // GVC_t
struct Agraph_s; // Agraph_t

namespace passlens {

/// Calls gvFreeContext.
struct GvcDeleter {
    void operator()(GVC_s* gvc) const noexcept;
};
/// Calls agclose.
struct GraphDeleter {
    void operator()(Agraph_s* graph) const noexcept;
};
/// Calls gvFreeRenderData on a buffer returned by gvRenderData.
struct RenderDataDeleter {
    void operator()(char* data) const noexcept;
};

using GvcPtr = std::unique_ptr<GVC_s, GvcDeleter>;
using GraphPtr = std::unique_ptr<Agraph_s, GraphDeleter>;
using RenderDataPtr = std::unique_ptr<char, RenderDataDeleter>;

/// Calls gvFreeLayout(gvc, graph) when it goes out of scope. Create it right after a successful
/// gvLayout and destroy it before the graph (declare it after the GraphPtr it guards).
class LayoutGuard {
public:
    LayoutGuard(GVC_s* gvc, Agraph_s* graph) noexcept
        : m_gvc(gvc)
        , m_graph(graph) {}
    ~LayoutGuard();
    LayoutGuard(const LayoutGuard&) = delete;
    LayoutGuard& operator=(const LayoutGuard&) = delete;
    LayoutGuard(LayoutGuard&&) = delete;
    LayoutGuard& operator=(LayoutGuard&&) = delete;

private:
    GVC_s* m_gvc;
    Agraph_s* m_graph;
};

/// Access to the process-wide Graphviz context (GVC_t, plugins loaded), created on first use and
/// freed at exit. There is deliberately only one: Graphviz 2.43's pango plugin caches font data
/// across contexts, so freeing a context and creating another one is a use-after-free.
class GraphvizContext {
public:
    /// Throws std::runtime_error when Graphviz cannot create the context.
    GraphvizContext();

    /// Parses `dot` (agmemread), lays it out with the "dot" engine and renders it in memory in
    /// `format` ("svg", "png", "pdf", "dot", "json", ...). Returns the rendered bytes (binary for
    /// png/pdf). Throws std::runtime_error carrying Graphviz's own error text on any failure
    /// (syntax error, unknown format, layout failure).
    std::string render(std::string_view dot, std::string_view format);

    GVC_s* get() const noexcept { return m_gvc; }

private:
    GVC_s* m_gvc; // not owned: the process-wide context
};

/// One-shot convenience: GraphvizContext().render(dot, format).
std::string renderDot(std::string_view dot, std::string_view format);

} // namespace passlens
