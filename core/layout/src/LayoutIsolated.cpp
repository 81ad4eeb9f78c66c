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

void warmUp(GVC_s* gvc) {
    static bool done = false;
    if (done) return;
    done = true;
    ErrorCapture errors;
    // Every font face and size the DOT writer uses, so that pango has them cached before a fork
    // (the child then needs no fontconfig lookup, whose locks another thread might hold).
    std::string warm = "digraph W { graph [fontname=\"Helvetica\"]; node [fontname=\"Helvetica\"]; "
                       "edge [fontname=\"Helvetica\", fontsize=7]; ";
    int k = 0;
    for (const int size : {7, 8, 9, 10, 13}) {
        for (const char* face : {"Helvetica", "Helvetica-Bold"}) {
            warm += "w" + std::to_string(k++) + " [label=<<TABLE BORDER=\"0\"><TR><TD><FONT POINT-SIZE=\"" +
                    std::to_string(size) + "\" FACE=\"" + face + "\">w</FONT></TD></TR></TABLE>>]; ";
        }
    }
    warm += "w0 -> w1 [xlabel=<x>]; }";
    GraphPtr g(agmemread(warm.c_str()));
    if (!g) return;
    if (gvLayout(gvc, g.get(), "dot") != 0) return;
    const LayoutGuard guard(gvc, g.get());
    char* data = nullptr;
    RenderLength length = 0;
    if (gvRenderData(gvc, g.get(), "dot", &data, &length) == 0) gvFreeRenderData(data);
    // the neato plugin (nop2 with spline routing) too, for layoutStable's children
    GraphPtr n(agmemread("digraph N { graph [splines=true]; a [pos=\"0,0!\"]; b [pos=\"0,-72!\"]; c [pos=\"60,-36!\"]; "
                         "a -> b [xlabel=<x>]; }"));
    if (!n || gvLayout(gvc, n.get(), "nop2") != 0) return;
    const LayoutGuard nguard(gvc, n.get());
    data = nullptr;
    if (gvRenderData(gvc, n.get(), "dot", &data, &length) == 0) gvFreeRenderData(data);
}

Positioned layoutHere(GVC_s* gvc, const std::string& dot, const char* engine) {
    ErrorCapture errors;
    errors.begin();
    GraphPtr graph(agmemread(dot.c_str()));
    if (!graph || ErrorCapture::errorReported())
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot parse DOT", "no graph in input"));
    std::string warnings = errors.text();
    errors.begin();
    if (gvLayout(gvc, graph.get(), engine) != 0)
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message(std::string(engine) + " layout failed"));
    const LayoutGuard guard(gvc, graph.get());
    warnings += errors.text();
    errors.begin();
    char* data = nullptr;
    RenderLength length = 0;
    const int rc = gvRenderData(gvc, graph.get(), "dot", &data, &length);
    const RenderDataPtr buffer(data);
    if (rc != 0 || buffer == nullptr)
        throw LayoutError(LayoutError::Kind::Graphviz, errors.message("cannot write the layout"));
    return {std::string(buffer.get(), static_cast<std::size_t>(length)), warnings};
}

#if PASSLENS_LAYOUT_FORK
namespace {

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

// The child's whole life: lay out, write 'O' + positioned DOT or 'E' + message, _exit. It never
// takes graphvizMutex (owned by the parent's thread id) and never returns.
[[noreturn]] void childLayout(GVC_s* gvc, const std::string& dot, const char* engine, int fd) {
    std::string payload;
    char status = 'E';
    {
        ErrorCapture errors;
        errors.begin();
        Agraph_t* graph = agmemread(dot.c_str());
        if (graph == nullptr || ErrorCapture::errorReported()) {
            payload = errors.message("cannot parse DOT", "no graph in input");
        } else {
            std::string warnings = errors.text();
            errors.begin();
            if (gvLayout(gvc, graph, engine) != 0) {
                payload = errors.message(std::string(engine) + " layout failed");
            } else {
                warnings += errors.text();
                errors.begin();
                char* data = nullptr;
                RenderLength length = 0;
                if (gvRenderData(gvc, graph, "dot", &data, &length) != 0 || data == nullptr) {
                    payload = errors.message("cannot write the layout");
                } else {
                    // 'O' <warning bytes> '\n' <warnings> <positioned DOT>
                    payload = std::to_string(warnings.size()) + "\n" + warnings;
                    payload.append(data, static_cast<std::size_t>(length));
                    status = 'O';
                }
            }
        }
        // No cleanup: the process ends here.
    }
    if (!writeAll(fd, &status, 1) || !writeAll(fd, payload.data(), payload.size())) _exit(3);
    _exit(0);
}

} // namespace

std::optional<Positioned> layoutIsolated(GVC_s* gvc, const std::string& dot, const char* engine,
                                         Clock::time_point deadline, const CancelToken* cancel, double budgetMs) {
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
        childLayout(gvc, dot, engine, fds[1]);
    }
    ::close(fds[1]);
    std::string received;
    char buffer[65536];
    bool eof = false;
    auto stopChild = [&]() {
        ::kill(pid, SIGKILL);
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        ::close(fds[0]);
    };
    while (!eof) {
        if (cancel != nullptr && cancel->cancelled()) {
            stopChild();
            throw LayoutError(LayoutError::Kind::Cancelled, "layout cancelled");
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            stopChild();
            throw LayoutError(LayoutError::Kind::TimedOut, "layout past its budget of " + seconds(budgetMs));
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        pollfd p{fds[0], POLLIN, 0};
        const int rc = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 1, 25)));
        if (rc < 0 && errno != EINTR) {
            stopChild();
            throw LayoutError(LayoutError::Kind::Crashed, std::string("layout: poll failed: ") + std::strerror(errno));
        }
        if (rc <= 0) continue;
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n > 0)
            received.append(buffer, static_cast<std::size_t>(n));
        else if (n == 0)
            eof = true;
        else if (errno != EINTR && errno != EAGAIN)
            eof = true;
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(status))
        throw LayoutError(LayoutError::Kind::Crashed, "Graphviz crashed (signal " + std::to_string(WTERMSIG(status)) +
                                                          ") while laying out the graph");
    if (received.empty() || (received[0] != 'O' && received[0] != 'E'))
        throw LayoutError(LayoutError::Kind::Crashed, "Graphviz's layout process ended without a result");
    if (received[0] == 'E') throw LayoutError(LayoutError::Kind::Graphviz, received.substr(1));
    const auto newline = received.find('\n');
    if (newline == std::string::npos)
        throw LayoutError(LayoutError::Kind::Crashed, "Graphviz's layout process sent a broken result");
    const std::size_t warningBytes = std::strtoull(received.c_str() + 1, nullptr, 10);
    if (newline + 1 + warningBytes > received.size())
        throw LayoutError(LayoutError::Kind::Crashed, "Graphviz's layout process sent a broken result");
    return Positioned{received.substr(newline + 1 + warningBytes), received.substr(newline + 1, warningBytes)};
}
#endif

} // namespace passlens::layoutinternal
