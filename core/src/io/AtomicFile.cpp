#include "passlens/io/AtomicFile.h"

#include "passlens/ir/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <unistd.h>

namespace passlens {

void writeFileAtomic(const std::filesystem::path& path, std::string_view bytes) {
    const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
    std::random_device rd;
    const std::filesystem::path tmp =
        dir / ("." + path.filename().string() + ".tmp" + std::to_string(rd() % 1000000));
    auto fail = [&](const std::string& why) {
        ::unlink(tmp.c_str());
        throw Error(path.string() + ": cannot write: " + why);
    };
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error(path.string() + ": cannot write: " + std::strerror(errno));
    std::size_t off = 0;
    while (off < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            const std::string why = std::strerror(errno);
            ::close(fd);
            fail(why);
        }
        off += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) fail(std::strerror(errno));
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail(std::strerror(errno));
}

std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path.string() + ": cannot read: " + std::strerror(errno));
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw Error(path.string() + ": is a directory");
    std::string s;
    in.seekg(0, std::ios::end);
    const auto size = in.tellg();
    if (size > 0) {
        s.resize(static_cast<std::size_t>(size));
        in.seekg(0);
        in.read(s.data(), size);
    }
    if (!in) throw Error(path.string() + ": cannot read: I/O error");
    return s;
}

} // namespace passlens
