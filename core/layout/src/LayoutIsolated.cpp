#include "LayoutInternal.h"

#include <passlens/layout/GraphvizContext.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#if PASSLENS_LAYOUT_FORK
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace passlens::layoutinternal {

using gvinternal::ErrorCapture;
using gvinternal::RenderLength;

namespace {

// Lays out `text` with dot and renders it as `format`, discarding the output; false when any step
// failed. Lock held.
bool renderOnce(GVC_s* gvc, const char* text, const char* engine, const char* format) {
    GraphPtr g(agmemread(text));
    if (!g || gvLayout(gvc, g.get(), engine) != 0) return false;
    const LayoutGuard guard(gvc, g.get());
    char* data = nullptr;
    RenderLength length = 0;
    if (gvRenderData(gvc, g.get(), format, &data, &length) != 0) return false;
    gvFreeRenderData(data);
    return true;
}

// After a successful gvLayout of `g`: `job`'s rendering (a PNG past kMaxPngPixels is refused,
// not rendered) and its geometry record when it asks for one; without a job, the positioned DOT.
// Returns Graphviz's message on failure, empty on success. Frees Graphviz's buffers itself (no lock taken): lock
// held, or in a forked child.
std::string writeOutputs(GVC_s* gvc, Agraph_t* g, const RenderJob* job, ErrorCapture& errors, Positioned& out) {
    auto renderAs = [&](const char* name, std::string& into) {
        errors.begin();
        char* data = nullptr;
        RenderLength length = 0;
        const int rc = gvRenderData(gvc, g, name, &data, &length);
        if (data != nullptr && rc == 0) into.assign(data, static_cast<std::size_t>(length));
        if (data != nullptr) gvFreeRenderData(data);
        return rc == 0 && data != nullptr;
    };
    if (const char* bb = agget(g, const_cast<char*>("bb"))) out.bb = bb;
    if (job != nullptr) {
        if (job->format == RenderFormat::Png) {
            LayoutResult box;
            if (readBox(out.bb.c_str(), box)) {
                const auto [w, h] = box.pixelSize(job->dpi);
                if (w > kMaxPngPixels || h > kMaxPngPixels) {
                    out.pngTooLarge = true;
                    return {};
                }
            }
        }
        // With clusters (whose written order geometryRecord does not reproduce) the geometry
        // comes from the positioned DOT, written before the rendering as layout() writes it.
        const bool viaText = job->geometry && agfstsubg(g) != nullptr;
        if (viaText && job->format != RenderFormat::Dot && !renderAs("dot", out.dot))
            return errors.message("cannot write the layout");
        const char* name = renderFormatName(job->format);
        if (!renderAs(name, out.rendered)) return errors.message(std::string("cannot render ") + name);
        if (job->format == RenderFormat::Dot) out.dot = out.rendered;
        if (!job->geometry || !out.dot.empty()) return {};
        if (auto record = geometryRecord(g)) {
            out.geometry = std::move(*record);
            return {};
        }
    }
    if (!renderAs("dot", out.dot)) return errors.message("cannot write the layout");
    return {};
}

} // namespace

void warmUp(GVC_s* gvc, const RenderJob* job) {
    // Every font face and size the DOT writer uses, so that pango has them cached before a fork
    // (the child then needs no fontconfig lookup, whose locks another thread might hold).
    static const std::string warm = [] {
        std::string text = "digraph W { graph [fontname=\"Helvetica\"]; node [fontname=\"Helvetica\"]; "
                           "edge [fontname=\"Helvetica\", fontsize=7]; ";
        int k = 0;
        for (const int size : {7, 8, 9, 10, 13}) {
            for (const char* face : {"Helvetica", "Helvetica-Bold"}) {
                text += "w" + std::to_string(k++) + " [label=<<TABLE BORDER=\"0\"><TR><TD><FONT POINT-SIZE=\"" +
                        std::to_string(size) + "\" FACE=\"" + face + "\">w</FONT></TD></TR></TABLE>>]; ";
            }
        }
        return text + "w0 -> w1 [xlabel=<x>]; }";
    }();
    static bool done = false;
    if (!done) {
        done = true;
        ErrorCapture errors;
        // the neato plugin (nop2 with spline routing) too, for layoutStable's children
        if (renderOnce(gvc, warm.c_str(), "dot", "dot"))
            renderOnce(gvc,
                       "digraph N { graph [splines=true]; a [pos=\"0,0!\"]; b [pos=\"0,-72!\"]; c [pos=\"60,-36!\"]; "
                       "a -> b [xlabel=<x>]; }",
                       "nop2", "dot");
    }
    // layoutAndRender's children render too: the renderer's plugin (cairo for PDF and PNG) and its
    // fonts are loaded here, once per format.
    static bool rendered[4] = {};
    if (job == nullptr || job->format == RenderFormat::Dot) return;
    bool& formatDone = rendered[static_cast<int>(job->format)];
    if (formatDone) return;
    formatDone = true;
    ErrorCapture errors;
    renderOnce(gvc, warm.c_str(), "dot", renderFormatName(job->format));
}

const char* applyView(Agraph_t* g, DiffView view, RenderFormat format, double dpi) {
    auto set = [](void* obj, const char* name, const char* value) {
        return agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value), const_cast<char*>("")) == 0;
    };
    if (view != DiffView::Overlay) {
        const char* hide = view == DiffView::Before ? "added" : "removed";
        auto hidden = [hide](void* obj) {
            const char* change = agget(obj, const_cast<char*>("pl_change"));
            return change != nullptr && std::strcmp(change, hide) == 0;
        };
        for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
            const bool hiddenNode = hidden(n);
            if (hiddenNode && !set(n, "style", "invis")) return "style";
            for (Agedge_t* e = agfstout(g, n); e != nullptr; e = agnxtout(g, e))
                if ((hiddenNode || hidden(e) || hidden(aghead(e))) && !set(e, "style", "invis")) return "style";
        }
    }
    if (format == RenderFormat::Png) {
        const std::string d = std::to_string(dpi);
        if (!set(g, "dpi", d.c_str())) return "dpi";
    }
    return nullptr;
}

Positioned layoutHere(GVC_s* gvc, const std::string& dot, const char* engine, const RenderJob* job) {
    ErrorCapture errors;
    errors.begin();
    GraphPtr graph(agmemread(dot.c_str()));
    if (!graph || ErrorCapture::errorReported())
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot parse DOT", "no graph in input"));
    std::string warnings = errors.text();
    if (job != nullptr)
        if (const char* refused = applyView(graph.get(), job->view, job->format, job->dpi))
            throw LayoutError(LayoutError::Kind::Graphviz,
                              errors.message(std::string("cannot set attribute ") + refused));
    errors.begin();
    if (gvLayout(gvc, graph.get(), engine) != 0)
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message(std::string(engine) + " layout failed"));
    const LayoutGuard guard(gvc, graph.get());
    warnings += errors.text();
    Positioned out;
    if (const std::string failed = writeOutputs(gvc, graph.get(), job, errors, out); !failed.empty())
        throw LayoutError(LayoutError::Kind::Graphviz, failed);
    out.warnings = std::move(warnings);
    return out;
}

#if PASSLENS_LAYOUT_FORK
bool writeAll(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

namespace {

// Closes a descriptor when it goes out of scope.
struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
};

} // namespace

[[noreturn]] void childLayout(GVC_s* gvc, const std::string& dot, const char* engine, const RenderJob* job, int fd) {
    std::string payload;
    char status = 'E';
    {
        ErrorCapture errors;
        errors.begin();
        Agraph_t* graph = agmemread(dot.c_str());
        const char* refused = nullptr;
        if (graph == nullptr || ErrorCapture::errorReported()) {
            payload = errors.message("cannot parse DOT", "no graph in input");
        } else if (job != nullptr && (refused = applyView(graph, job->view, job->format, job->dpi)) != nullptr) {
            payload = errors.message(std::string("cannot set attribute ") + refused);
        } else {
            std::string warnings = errors.text();
            errors.begin();
            if (gvLayout(gvc, graph, engine) != 0) {
                payload = errors.message(std::string(engine) + " layout failed");
            } else {
                warnings += errors.text();
                if (!writeAll(fd, "L", 1)) _exit(3);
                Positioned out;
                payload = writeOutputs(gvc, graph, job, errors, out);
                if (payload.empty()) {
                    // 'O' <png too large: 0|1> <bytes of warnings, dot, geometry, rendered, bb> '\n' <them>
                    const std::string* parts[] = {&warnings, &out.dot, &out.geometry, &out.rendered, &out.bb};
                    payload = out.pngTooLarge ? "1" : "0";
                    for (const std::string* part : parts) payload += " " + std::to_string(part->size());
                    payload += "\n";
                    for (const std::string* part : parts) payload += *part;
                    status = 'O';
                }
            }
        }
        // No cleanup: the process ends here.
    }
    if (!writeAll(fd, &status, 1) || !writeAll(fd, payload.data(), payload.size())) _exit(3);
    _exit(0);
}

Positioned awaitLayoutChild(int fd, ChildWatch& child, Clock::time_point deadline, const CancelToken* cancel,
                            double budgetMs) {
    const FdCloser closer{fd};
    std::string received;
    char buffer[65536];
    bool eof = false;
    bool laidOut = false; // the child sent 'L': past the layout, the deadline no longer applies
    while (!eof) {
        if (cancel != nullptr && cancel->cancelled()) {
            child.stop();
            throw LayoutError(LayoutError::Kind::Cancelled, "layout cancelled");
        }
        const auto now = Clock::now();
        if (!laidOut && now >= deadline) {
            child.stop();
            throw LayoutError(LayoutError::Kind::TimedOut, "layout past its budget of " + seconds(budgetMs));
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        pollfd p[2] = {{fd, POLLIN, 0}, {child.controlFd(), POLLIN, 0}};
        const int rc = ::poll(p, p[1].fd >= 0 ? 2 : 1, static_cast<int>(std::clamp<long long>(left, 1, 25)));
        if (rc < 0 && errno != EINTR) {
            const int error = errno;
            child.stop();
            throw LayoutError(LayoutError::Kind::Crashed, std::string("layout: poll failed: ") + std::strerror(error));
        }
        if (rc <= 0) continue;
        if (p[1].fd >= 0 && p[1].revents != 0) child.onControl();
        if (p[0].revents == 0) continue;
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            received.append(buffer, static_cast<std::size_t>(n));
            if (!laidOut && received[0] == 'L') {
                laidOut = true;
                received.erase(0, 1);
            }
        } else if (n == 0)
            eof = true;
        else if (errno != EINTR && errno != EAGAIN)
            eof = true;
    }
    const int status = child.status();
    if (WIFSIGNALED(status))
        throw LayoutError(LayoutError::Kind::Crashed, "Graphviz crashed (signal " + std::to_string(WTERMSIG(status)) +
                                                          ") while laying out the graph");
    if (received.empty() || (received[0] != 'O' && received[0] != 'E'))
        throw LayoutError(LayoutError::Kind::Crashed, "Graphviz's layout process ended without a result");
    if (received[0] == 'E') throw LayoutError(LayoutError::Kind::Graphviz, received.substr(1));
    const auto newline = received.find('\n');
    const LayoutError broken(LayoutError::Kind::Crashed, "Graphviz's layout process sent a broken result");
    if (newline == std::string::npos) throw broken;
    Positioned out;
    out.pngTooLarge = received[1] == '1';
    const char* field = received.c_str() + 2;
    std::size_t at = newline + 1;
    for (std::string* part : {&out.warnings, &out.dot, &out.geometry, &out.rendered, &out.bb}) {
        char* end = nullptr;
        const std::size_t bytes = std::strtoull(field, &end, 10);
        if (end == field || end > received.c_str() + newline || bytes > received.size() - at) throw broken;
        part->assign(received, at, bytes);
        at += bytes;
        field = end;
    }
    if (at != received.size()) throw broken;
    return out;
}

namespace {

// A child forked from the caller itself (layoutForked): killed and reaped here.
class ForkedChild final : public ChildWatch {
public:
    explicit ForkedChild(pid_t pid)
        : m_pid(pid) {}
    void stop() override {
        ::kill(m_pid, SIGKILL);
        status();
    }
    int status() override {
        int st = 0;
        while (::waitpid(m_pid, &st, 0) < 0 && errno == EINTR) {}
        return st;
    }

private:
    pid_t m_pid;
};

} // namespace

std::optional<Positioned> layoutForked(GVC_s* gvc, const std::string& dot, const char* engine,
                                       Clock::time_point deadline, const CancelToken* cancel, double budgetMs,
                                       const RenderJob* job) {
    warmUp(gvc, job);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return std::nullopt;
    }
    if (pid == 0) {
        ::close(fds[0]);
        childLayout(gvc, dot, engine, job, fds[1]);
    }
    ::close(fds[1]);
    const ChildPidScope running(pid);
    ForkedChild child(pid);
    return awaitLayoutChild(fds[0], child, deadline, cancel, budgetMs);
}
#endif

} // namespace passlens::layoutinternal
