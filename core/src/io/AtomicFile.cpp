#include "passlens/io/AtomicFile.h"

#include "passlens/ir/Error.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace passlens {

namespace {

// ---- temporary files in flight, removed by a signal handler -------------------------------

constexpr std::size_t kSlots = 64;
constexpr std::size_t kPathMax = 4096;
struct Slot {
    std::atomic<int> state{0}; // 0 free, 1 being filled, 2 holds a temporary file to remove
    char path[kPathMax];
};
std::array<Slot, kSlots> g_inFlight;

// Async-signal-safe: unlink() and atomics only.
void removeInFlight() {
    for (Slot& s : g_inFlight)
        if (s.state.load(std::memory_order_acquire) == 2) ::unlink(s.path);
}

void onFatalSignal(int sig) {
    const int saved = errno;
    removeInFlight();
    ::signal(sig, SIG_DFL);
    ::raise(sig); // delivered with the default action once the handler returns
    errno = saved;
}

// Installs the cleanup handler for each of these signals whose action is the default one at
// the time of the write (a handler or SIG_IGN the application set is left alone).
void installSignalCleanup() {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        struct sigaction sa {};
        sa.sa_handler = onFatalSignal;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
    }
}

// Registers a temporary file for removal on a signal; unregisters when destroyed.
class InFlight {
public:
    explicit InFlight(const std::string& path) {
        if (path.size() >= kPathMax) return;
        for (Slot& s : g_inFlight) {
            int expected = 0;
            if (!s.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
            std::memcpy(s.path, path.c_str(), path.size() + 1);
            s.state.store(2, std::memory_order_release);
            m_slot = &s;
            return;
        }
    }
    ~InFlight() { release(); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    void release() {
        if (m_slot) m_slot->state.store(0, std::memory_order_release);
        m_slot = nullptr;
    }

private:
    Slot* m_slot = nullptr;
};

// ---- paths -----------------------------------------------------------------------------

std::string why(int err) { return std::strerror(err); }

// The file a write to `path` lands in: symlinks followed (relative links from their folder).
std::filesystem::path resolveLinks(const std::filesystem::path& path) {
    std::filesystem::path p = path;
    for (int hops = 0; hops < 40; ++hops) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
        std::error_code ec;
        const std::filesystem::path link = std::filesystem::read_symlink(p, ec);
        if (ec) return p;
        p = link.is_absolute() ? link : (p.has_parent_path() ? p.parent_path() : std::filesystem::path(".")) / link;
    }
    throw Error(path.string() + ": cannot write: too many levels of symbolic links");
}

const char* kindOf(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

bool writeAll(int fd, std::string_view bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        off += static_cast<std::size_t>(n);
    }
    return true;
}

// Removes `.NAME.tmp<pid>.<n>` files of processes that are gone, older than ten minutes
// (leftovers of a kill -9); other processes' writes in progress are left alone.
void removeStaleTemporaries(const std::filesystem::path& dir, const std::string& name) {
    const std::string prefix = "." + name + ".tmp";
    DIR* d = ::opendir(dir.c_str());
    if (!d) return;
    const std::time_t now = std::time(nullptr);
    while (const dirent* e = ::readdir(d)) {
        const std::string entry = e->d_name;
        if (!entry.starts_with(prefix)) continue;
        const std::string rest = entry.substr(prefix.size());
        const auto dot = rest.find('.');
        if (dot == std::string::npos || dot == 0 || rest.find_first_not_of("0123456789.") != std::string::npos)
            continue;
        const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
        const std::filesystem::path p = dir / entry;
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || now - st.st_mtime < 600) continue;
        if (pid == ::getpid() || (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0)) continue;
        ::unlink(p.c_str());
    }
    ::closedir(d);
}

// A device or a FIFO at the output path: written in place (a FIFO only when it has a reader).
void writeSpecial(const std::filesystem::path& label, const std::filesystem::path& target, mode_t mode,
                  std::string_view bytes) {
    if (!S_ISCHR(mode) && !S_ISFIFO(mode))
        throw Error(label.string() + ": cannot write: it is " + kindOf(mode) + ", not a file");
    const int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO)
            throw Error(label.string() + ": cannot write: it is a FIFO (named pipe) that no process reads");
        throw Error(label.string() + ": cannot write: " + why(errno));
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const bool ok = writeAll(fd, bytes);
    const int err = errno;
    ::close(fd);
    if (!ok) throw Error(label.string() + ": cannot write: " + why(err));
}

std::atomic<unsigned> g_counter{0};

} // namespace

void writeFileAtomic(const std::filesystem::path& path, std::string_view bytes) {
    const std::filesystem::path target = resolveLinks(path);
    struct stat st {};
    const bool exists = ::stat(target.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) return writeSpecial(path, target, st.st_mode, bytes);

    installSignalCleanup();
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    const std::string name = target.filename().string();
    removeStaleTemporaries(dir, name);
    std::filesystem::path tmp;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) { // a leftover may hold a name
        tmp = dir / ("." + name + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(g_counter.fetch_add(1)));
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) throw Error(path.string() + ": cannot write: " + why(errno));
    InFlight registered(tmp.string());
    auto fail = [&](int err) {
        ::unlink(tmp.c_str());
        registered.release();
        throw Error(path.string() + ": cannot write: " + why(err));
    };
    if (exists) { // keep the permission bits (and the owner, where allowed) of the file replaced
        (void)::fchown(fd, st.st_uid, st.st_gid);
        if (::fchmod(fd, st.st_mode & 07777) != 0) {
            const int err = errno;
            ::close(fd);
            fail(err);
        }
    }
    if (!writeAll(fd, bytes)) {
        const int err = errno;
        ::close(fd);
        fail(err);
    }
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        fail(err);
    }
    if (::close(fd) != 0) fail(errno);
    if (::rename(tmp.c_str(), target.c_str()) != 0) fail(errno);
}

void requireRegularFile(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) throw Error(path.string() + ": no such file");
        throw Error(path.string() + ": cannot read: " + why(errno));
    }
    if (!S_ISREG(st.st_mode)) throw Error(path.string() + ": is " + kindOf(st.st_mode) + ", not a regular file");
}

std::string readFile(const std::filesystem::path& path) {
    requireRegularFile(path);
    // O_NONBLOCK: the file may have been swapped for a FIFO since the check; fstat decides.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) throw Error(path.string() + ": cannot read: " + why(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path.string() + ": is " + kindOf(st.st_mode) + ", not a regular file");
    }
    std::string s;
    try {
        s.resize(static_cast<std::size_t>(st.st_size));
    } catch (...) {
        ::close(fd);
        throw;
    }
    std::size_t off = 0;
    while (off < s.size()) {
        const ssize_t n = ::read(fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw Error(path.string() + ": cannot read: " + why(err));
        }
        if (n == 0) break; // the file shrank while reading
        off += static_cast<std::size_t>(n);
    }
    s.resize(off);
    ::close(fd);
    return s;
}

} // namespace passlens
