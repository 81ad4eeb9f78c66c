// The isolated layout (layoutIsolated) and, on Linux, the layout server that forks its children.
//
// A bare fork() of the caller copies a process that is multi-threaded (the window's pool threads,
// Qt's) and often large (tens of step graphs): the child inherits every lock another thread held
// at the fork (ASan's allocator, fontconfig's), on which it can wait forever, and the fork copies
// the page tables of all that memory. So the first isolated layout starts a helper instead: this
// very program exec'ed afresh (posix_spawn of /proc/self/exe) with PASSLENS_LAYOUT_SERVER set
// and one end of a socket pair on descriptor 3. The constructor below sees the variable before
// any other static initialiser of the program, serves, and _exits: main never runs there. The
// server has one thread and little memory; it warms Graphviz up once and forks one child per
// layout, which runs childLayout as a child forked here would.
//
// Protocol (the server's socket, SOCK_STREAM):
// - caller -> server: a request of kRequestBytes ('R', the RenderJob fields, the engine, the
//   DOT's size) with two descriptors (SCM_RIGHTS): a memfd holding the DOT text and the write end
//   of the result pipe, which the child writes as in layoutForked (childLayout's 'L', 'O', 'E').
//   A single 'K' while the child runs: kill it. A 'K' that arrives after the child ended is
//   skipped.
// - server -> caller, kReplyBytes each: 'P' + the child's pid once forked; 'S' + its wait status
//   and CPU microseconds once reaped (after a 'K' too: each request ends with exactly one 'S', so
//   a kill leaves the two in step); 'F' + errno when it could not fork.
// The server ends (and its child with it) at the end of the socket, when its parent has gone
// (getppid() checked every 2 s; PR_SET_PDEATHSIG too when the main thread started it: the
// "parent" of that signal is the starting thread, and the window lays out on pool threads that
// end when idle), and never returns into main.
#include "LayoutInternal.h"
#include "LayoutServer.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#if PASSLENS_LAYOUT_FORK
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#if defined(__linux__)
#define PASSLENS_LAYOUT_SERVER 1
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
extern char** environ;
#else
#define PASSLENS_LAYOUT_SERVER 0
#endif

namespace passlens::layoutinternal {

namespace {

// Constant-initialised: valid before any dynamic initialiser runs (the server's constructor).
std::atomic<int> g_serverPid{0};
std::atomic<int> g_childPid{0};
std::atomic<long long> g_childCpuMicros{0};
std::atomic<bool> g_serverAllowed{true};

} // namespace

int layoutServerPid() { return g_serverPid.load(); }
int layoutChildPid() { return g_childPid.load(); }
double layoutServerChildCpuSeconds() { return static_cast<double>(g_childCpuMicros.load()) / 1e6; }
void setLayoutServerAllowed(bool allowed) { g_serverAllowed = allowed; }

#if PASSLENS_LAYOUT_FORK
ChildPidScope::ChildPidScope(int pid) { g_childPid = pid; }
ChildPidScope::~ChildPidScope() { g_childPid = 0; }
#endif

#if PASSLENS_LAYOUT_SERVER
namespace {

constexpr int kServerFd = 3;
constexpr const char* kServerVariable = "PASSLENS_LAYOUT_SERVER";
constexpr std::size_t kRequestBytes = 32;
constexpr std::size_t kReplyBytes = 16;
constexpr std::size_t kEngineBytes = 11; // "dot", "nop2": up to 10 characters and a NUL

// A request as the server reads it.
struct Request {
    bool hasJob = false;
    RenderJob job;
    char engine[kEngineBytes] = {};
    std::uint64_t dotBytes = 0;
};

// 'R' hasJob format view geometry engine[11] | dpi (8 bytes) | DOT bytes (8 bytes).
void encodeRequest(char (&out)[kRequestBytes], const char* engine, std::size_t dotBytes, const RenderJob* job) {
    std::memset(out, 0, sizeof out);
    out[0] = 'R';
    const RenderJob none;
    const RenderJob& j = job != nullptr ? *job : none;
    out[1] = job != nullptr ? 1 : 0;
    out[2] = static_cast<char>(j.format);
    out[3] = static_cast<char>(j.view);
    out[4] = j.geometry ? 1 : 0;
    std::memcpy(out + 5, engine, std::strlen(engine));
    std::memcpy(out + 16, &j.dpi, sizeof j.dpi);
    const std::uint64_t bytes = dotBytes;
    std::memcpy(out + 24, &bytes, sizeof bytes);
}

// False for a request this program would not have sent.
bool decodeRequest(const char (&in)[kRequestBytes], Request& r) {
    if (in[0] != 'R' || in[1] > 1 || in[2] < 0 || in[2] > static_cast<char>(RenderFormat::Dot) || in[3] < 0 ||
        in[3] > static_cast<char>(DiffView::After) || in[4] > 1 || in[5 + kEngineBytes - 1] != 0)
        return false;
    r.hasJob = in[1] == 1;
    r.job.format = static_cast<RenderFormat>(in[2]);
    r.job.view = static_cast<DiffView>(in[3]);
    r.job.geometry = in[4] == 1;
    std::memcpy(r.engine, in + 5, kEngineBytes);
    std::memcpy(&r.job.dpi, in + 16, sizeof r.job.dpi);
    std::memcpy(&r.dotBytes, in + 24, sizeof r.dotBytes);
    return r.engine[0] != 0;
}

bool readAll(int fd, char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::read(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// ---- the server ----

// Sends one reply; the caller gone ends the server (SIGPIPE is ignored there).
void reply(int sock, char tag, std::int32_t a, std::int64_t b) {
    char m[kReplyBytes] = {};
    m[0] = tag;
    std::memcpy(m + 4, &a, sizeof a);
    std::memcpy(m + 8, &b, sizeof b);
    if (!writeAll(sock, m, sizeof m)) _exit(0);
}

// The next request, with its descriptors (the DOT's memfd, the result pipe's write end); a 'K'
// that came after its child ended is skipped. False at the end of the socket, when `parent` is no
// longer this process's parent, or on anything this program would not have sent.
bool nextRequest(int sock, pid_t parent, char (&header)[kRequestBytes], int& dotFd, int& resultFd) {
    for (;;) {
        pollfd p{sock, POLLIN, 0};
        const int rc = ::poll(&p, 1, 2000);
        if (rc < 0 && errno != EINTR) return false;
        if (rc <= 0) {
            if (::getppid() != parent) return false;
            continue;
        }
        char tag = 0;
        alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))];
        iovec io{&tag, 1};
        msghdr msg{};
        msg.msg_iov = &io;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        int fds[2] = {-1, -1};
        int count = 0;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            const std::size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < k; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (count < 2)
                    fds[count++] = fd;
                else
                    ::close(fd);
            }
        }
        if (tag == 'K' && count == 0) continue;
        if (tag == 'R' && count == 2 && (msg.msg_flags & MSG_CTRUNC) == 0) {
            header[0] = tag;
            if (readAll(sock, header + 1, kRequestBytes - 1)) {
                dotFd = fds[0];
                resultFd = fds[1];
                return true;
            }
        }
        for (int i = 0; i < count; ++i) ::close(fds[i]);
        return false;
    }
}

// The layout child the server forks: reads the DOT from `dotFd` and runs childLayout.
[[noreturn]] void serverChild(GVC_s* gvc, pid_t server, int sock, int dotFd, int resultFd, const Request& r) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL); // the server's one thread: its death ends this child
    if (::getppid() != server) _exit(5);
    ::close(sock);
    std::string dot(r.dotBytes, '\0');
    std::size_t at = 0;
    while (at < dot.size()) {
        const ssize_t n = ::pread(dotFd, dot.data() + at, dot.size() - at, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(4);
        at += static_cast<std::size_t>(n);
    }
    ::close(dotFd);
    childLayout(gvc, dot, r.engine, r.hasJob ? &r.job : nullptr, resultFd);
}

// The server's whole life (see the top of this file). Never returns.
[[noreturn]] void serve(int sock, pid_t parent, bool deathSignal) {
    if (deathSignal) ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(0); // the parent ended before the line above
    ::prctl(PR_SET_NAME, "passlens-layout");
    ::signal(SIGPIPE, SIG_IGN);
    GVC_s* gvc = nullptr;
    {
        std::lock_guard lock(gvinternal::graphvizMutex());
        try {
            gvc = gvinternal::sharedContext();
        } catch (...) {
            _exit(1);
        }
        warmUp(gvc);
    }
    const pid_t self = ::getpid();
    char header[kRequestBytes];
    int dotFd = -1, resultFd = -1;
    while (nextRequest(sock, parent, header, dotFd, resultFd)) {
        Request r;
        if (!decodeRequest(header, r)) _exit(1);
        {
            std::lock_guard lock(gvinternal::graphvizMutex());
            warmUp(gvc, r.hasJob ? &r.job : nullptr); // the renderer of a format, once
        }
        // The child holds the write end of `life` until it ends: its hang-up says so at once.
        int life[2];
        if (::pipe2(life, O_CLOEXEC) != 0) {
            const int error = errno;
            ::close(dotFd);
            ::close(resultFd);
            reply(sock, 'F', error, 0);
            continue;
        }
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(life[0]);
            serverChild(gvc, self, sock, dotFd, resultFd, r);
        }
        const int forkError = errno;
        ::close(life[1]);
        ::close(dotFd);
        ::close(resultFd);
        if (pid < 0) {
            ::close(life[0]);
            reply(sock, 'F', forkError, 0);
            continue;
        }
        reply(sock, 'P', pid, 0);
        pollfd p[2] = {{sock, POLLIN, 0}, {life[0], POLLIN, 0}};
        for (;;) {
            if (::poll(p, 2, -1) < 0) {
                if (errno == EINTR) continue;
                break;
            }
            if (p[1].revents != 0) break; // the child has ended
            if (p[0].revents == 0) continue;
            char c = 0;
            const ssize_t n = ::read(sock, &c, 1);
            if (n < 0 && errno == EINTR) continue;
            if (n == 1 && c == 'K') {
                ::kill(pid, SIGKILL); // not reaped yet: still this child's pid
                continue;
            }
            // The caller has gone (or sent what it never sends): end the child and the server.
            ::kill(pid, SIGKILL);
            int ignored = 0;
            while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {}
            _exit(0);
        }
        int status = 0;
        rusage usage{};
        while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {}
        ::close(life[0]);
        const std::int64_t micros = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * std::int64_t(1000000) +
                                    usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
        reply(sock, 'S', status, micros);
    }
    _exit(0);
}

// Runs before every default-priority static initialiser of the program (101: the first priority
// open to programs; the shared libraries' initialisers, ASan's included, have run already). In a
// process started by startServer it serves and never returns, so nothing else of the program
// starts there: no Qt application, no thread. Anywhere else it only reads the environment.
__attribute__((constructor(101))) void layoutServerEntry() {
    const char* value = std::getenv(kServerVariable);
    if (value == nullptr) return;
    int fd = -1, death = 0;
    long parent = 0;
    struct stat st {};
    // "<descriptor>:<parent pid>:<death signal 0|1>" on a socket: else a stray variable, ignored
    if (std::sscanf(value, "%d:%ld:%d", &fd, &parent, &death) != 3 || fd != kServerFd || ::fstat(fd, &st) != 0 ||
        !S_ISSOCK(st.st_mode))
        return;
    serve(fd, static_cast<pid_t>(parent), death != 0);
}

// True when layoutServerEntry is part of the main program, not of a shared library (whose
// /proc/self/exe would be some other program, which the variable would not stop from running).
bool entryInMainProgram() {
    struct Find {
        ElfW(Addr) address;
        bool found = false;
    } find{reinterpret_cast<ElfW(Addr)>(&layoutServerEntry)};
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) -> int {
            auto* f = static_cast<Find*>(data);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                const ElfW(Addr) start = info->dlpi_addr + ph.p_vaddr;
                if (ph.p_type == PT_LOAD && f->address >= start && f->address < start + ph.p_memsz) f->found = true;
            }
            return 1; // the first object listed is the program itself
        },
        &find);
    return find.found;
}

// ---- the caller's side (graphvizMutex held) ----

struct ServerState {
    pid_t pid = 0;       ///< the server, 0 when none
    int fd = -1;         ///< this process's end of its socket
    pid_t owner = 0;     ///< getpid() of the process that started it (a fork's child has the fd too)
    bool served = false; ///< it forked a child at least once
    int failedStarts = 0;
    bool disabled = false; ///< no more starts: layoutForked from now on
    std::string inbox;     ///< a reply's first bytes
};

ServerState& serverState() {
    static ServerState state;
    return state;
}

// Ends the server (SIGKILL unless it has ended already), reaps it and forgets it. A server
// inherited through a fork is not this process's: only its descriptor is closed.
void dropServer(ServerState& s) {
    if (s.pid > 0 && s.owner == ::getpid()) {
        int st = 0;
        pid_t r = 0;
        while ((r = ::waitpid(s.pid, &st, WNOHANG)) < 0 && errno == EINTR) {}
        if (r == 0) {
            ::kill(s.pid, SIGKILL);
            while (::waitpid(s.pid, &st, 0) < 0 && errno == EINTR) {}
        }
    }
    if (s.fd >= 0) ::close(s.fd);
    s.pid = 0;
    s.fd = -1;
    s.owner = 0;
    s.served = false;
    s.inbox.clear();
    g_serverPid = 0;
}

// Starts a server: a fresh exec of this program that the constructor above turns into one.
bool startServer(ServerState& s) {
    if (!entryInMainProgram()) {
        s.disabled = true;
        return false;
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
    int serverEnd = sv[1];
    if (serverEnd == kServerFd) { // a dup2 onto itself would keep FD_CLOEXEC
        serverEnd = ::fcntl(sv[1], F_DUPFD_CLOEXEC, kServerFd + 1);
        ::close(sv[1]);
        if (serverEnd < 0) {
            ::close(sv[0]);
            return false;
        }
    }
    // argv[0] names the program in ps; the exec itself goes through /proc/self/exe, which is this
    // very file even when a rebuild has replaced or removed it at its path.
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    std::string name = n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string("passlens");
    char* argv[] = {name.data(), nullptr};
    const std::string prefix = std::string(kServerVariable) + "=";
    std::string variable = prefix + std::to_string(kServerFd) + ":" + std::to_string(::getpid()) + ":" +
                           (::gettid() == ::getpid() ? "1" : "0");
    std::vector<char*> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e)
        if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.push_back(*e);
    env.push_back(variable.data());
    env.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, serverEnd, kServerFd);
    ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    // Nothing else of this process's: only stdout and stderr (Graphviz's own prints) and the socket.
    ::posix_spawn_file_actions_addclosefrom_np(&actions, kServerFd + 1);
    posix_spawnattr_t attr;
    ::posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGCHLD); // an ignored SIGCHLD would reap its children before wait4
    sigaddset(&defaults, SIGPIPE);
    ::posix_spawnattr_setsigmask(&attr, &none);
    ::posix_spawnattr_setsigdefault(&attr, &defaults);
    ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, "/proc/self/exe", &actions, &attr, argv, env.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attr);
    ::close(serverEnd);
    if (rc != 0) {
        ::close(sv[0]);
        return false;
    }
    s.pid = pid;
    s.fd = sv[0];
    s.owner = ::getpid();
    s.served = false;
    s.inbox.clear();
    g_serverPid = pid;
    return true;
}

// The server could not take a request before forking its child: `dead`, it is gone (dropped);
// otherwise it could not fork.
struct ServerUnavailable {
    bool dead;
};

// The server's child of one request, as awaitLayoutChild watches it.
class ServerChild final : public ChildWatch {
public:
    explicit ServerChild(ServerState& s)
        : m_s(s) {}
    ~ServerChild() override { g_childPid = 0; }
    ServerChild(const ServerChild&) = delete;
    ServerChild& operator=(const ServerChild&) = delete;

    int controlFd() const override { return m_status ? -1 : m_s.fd; }
    void onControl() override { receive(); }

    // A 'K', then the child's 'S' (2 s at most, then the server is dropped: it is stuck, or still
    // starting up).
    void stop() override {
        if (m_status || m_s.fd < 0) return;
        const char kKill = 'K';
        if (::send(m_s.fd, &kKill, 1, MSG_NOSIGNAL) != 1) {
            dropServer(m_s);
            return;
        }
        try {
            if (!awaitStatus(std::chrono::seconds(2))) dropServer(m_s);
        } catch (const ServerUnavailable&) {
        } catch (const LayoutError&) {}
    }

    // The child closed its pipe: its 'S' follows at once (10 s at most, then Crashed).
    int status() override {
        if (!awaitStatus(std::chrono::seconds(10))) {
            dropServer(m_s);
            throw LayoutError(LayoutError::Kind::Crashed, "the layout server did not report how the layout ended");
        }
        return *m_status;
    }

private:
    // Takes replies until the 'S' or `limit`: false at the limit. Throws as receive().
    bool awaitStatus(std::chrono::milliseconds limit) {
        const auto until = Clock::now() + limit;
        while (!m_status) {
            if (m_s.fd < 0) return false;
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
            if (left <= 0) return false;
            pollfd p{m_s.fd, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left)) > 0) receive();
        }
        return true;
    }

    // Reads what the server sent, without blocking, and takes every whole reply. The server gone
    // (or garbled): dropped, then ServerUnavailable{true} before its child started, LayoutError
    // Crashed after; 'F' (no fork): ServerUnavailable{false}.
    void receive() {
        char buffer[256];
        const ssize_t n = ::recv(m_s.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            gone();
            return;
        }
        m_s.inbox.append(buffer, static_cast<std::size_t>(n));
        while (m_s.inbox.size() >= kReplyBytes) {
            const char tag = m_s.inbox[0];
            std::int32_t a = 0;
            std::int64_t b = 0;
            std::memcpy(&a, m_s.inbox.data() + 4, sizeof a);
            std::memcpy(&b, m_s.inbox.data() + 8, sizeof b);
            m_s.inbox.erase(0, kReplyBytes);
            if (tag == 'P' && !m_started) {
                m_started = true;
                m_s.served = true;
                m_s.failedStarts = 0;
                g_childPid = a;
            } else if (tag == 'S' && m_started && !m_status) {
                m_status = a;
                g_childCpuMicros += b;
                g_childPid = 0;
            } else if (tag == 'F' && !m_started) {
                throw ServerUnavailable{false};
            } else {
                gone();
            }
        }
    }

    void gone() {
        const bool started = m_started;
        if (!m_s.served) ++m_s.failedStarts; // it never forked a child: a failed start
        dropServer(m_s);
        if (m_status) return;
        if (!started) throw ServerUnavailable{true};
        throw LayoutError(LayoutError::Kind::Crashed, "the layout server ended while laying out the graph");
    }

    ServerState& m_s;
    bool m_started = false;
    std::optional<int> m_status;
};

// One layout by the server. nullopt when it could not take the request (ServerUnavailable:
// `dead` says whether it is gone), or when the DOT could not be handed over.
std::optional<Positioned> serverLayout(ServerState& s, const std::string& dot, const char* engine,
                                       Clock::time_point deadline, const CancelToken* cancel, double budgetMs,
                                       const RenderJob* job, bool& dead) {
    dead = false;
    if (std::strlen(engine) >= kEngineBytes) return std::nullopt;
    const int dotFd = ::memfd_create("passlens-dot", MFD_CLOEXEC);
    if (dotFd < 0) return std::nullopt;
    const char* data = dot.data();
    std::size_t left = dot.size();
    while (left > 0) {
        const ssize_t n = ::write(dotFd, data, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        data += n;
        left -= static_cast<std::size_t>(n);
    }
    int pipeFds[2];
    if (left > 0 || ::pipe2(pipeFds, O_CLOEXEC) != 0) {
        ::close(dotFd);
        return std::nullopt;
    }
    char header[kRequestBytes];
    encodeRequest(header, engine, dot.size(), job);
    alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
    iovec io{header, sizeof header};
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(2 * sizeof(int));
    const int passed[2] = {dotFd, pipeFds[1]};
    std::memcpy(CMSG_DATA(c), passed, sizeof passed);
    ssize_t sent = -1;
    while ((sent = ::sendmsg(s.fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    ::close(dotFd);
    ::close(pipeFds[1]);
    if (sent != static_cast<ssize_t>(sizeof header)) {
        ::close(pipeFds[0]);
        if (!s.served) ++s.failedStarts;
        dropServer(s);
        dead = true;
        return std::nullopt;
    }
    ServerChild child(s);
    try {
        return awaitLayoutChild(pipeFds[0], child, deadline, cancel, budgetMs);
    } catch (const ServerUnavailable& u) {
        dead = u.dead;
        return std::nullopt;
    }
}

} // namespace
#endif

#if PASSLENS_LAYOUT_FORK
std::optional<Positioned> layoutIsolated(GVC_s* gvc, const std::string& dot, const char* engine,
                                         Clock::time_point deadline, const CancelToken* cancel, double budgetMs,
                                         const RenderJob* job) {
#if PASSLENS_LAYOUT_SERVER
    ServerState& s = serverState();
    if (s.fd >= 0 && s.owner != ::getpid()) dropServer(s); // this process is a fork's child
    // A server gone since the last layout is started again once; one that cannot be started
    // twice in a row is given up for layoutForked.
    for (int attempt = 0; attempt < 2 && !s.disabled && g_serverAllowed; ++attempt) {
        if (s.fd < 0 && !startServer(s)) {
            ++s.failedStarts;
            if (s.failedStarts >= 2) s.disabled = true;
            break;
        }
        bool dead = false;
        if (auto out = serverLayout(s, dot, engine, deadline, cancel, budgetMs, job, dead)) return out;
        if (s.failedStarts >= 2) s.disabled = true;
        if (!dead) break;
    }
#endif
    return layoutForked(gvc, dot, engine, deadline, cancel, budgetMs, job);
}
#endif

} // namespace passlens::layoutinternal
