#include "harness/util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace harness {
namespace {

const char* FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

std::string ByteSize(std::uintmax_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

Result<std::string> ReadInputFile(const std::filesystem::path& path, std::uintmax_t max_bytes, std::string_view kind) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like any
  // other file that is not regular. Type and size come from the open descriptor, so the
  // file checked is the file read.
  Fd in{open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (in.fd < 0) return UsageError(fmt::format("{}: cannot open file ({})", path.string(), std::strerror(errno)));
  struct stat st {};
  if (fstat(in.fd, &st) != 0)
    return UsageError(fmt::format("{}: cannot open file ({})", path.string(), std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return UsageError(fmt::format("{}: not a regular file ({})", path.string(), FileTypeName(st.st_mode)));
  const auto size = static_cast<std::uintmax_t>(st.st_size);
  if (size > max_bytes)
    return UsageError(
        fmt::format("{}: {} bytes, over the {} limit for {}", path.string(), size, ByteSize(max_bytes), kind));
  std::string text;
  text.reserve(size);
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(in.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return UsageError(fmt::format("{}: cannot read file ({})", path.string(), std::strerror(errno)));
    if (n == 0) break;
    // A file growing while it is read stops at the bound too.
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      return UsageError(
          fmt::format("{}: grew past the {} limit for {} while being read", path.string(), ByteSize(max_bytes), kind));
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace harness
