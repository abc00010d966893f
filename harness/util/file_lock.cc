#include "harness/util/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace harness {

Result<std::unique_ptr<FileLock>> FileLock::Acquire(const std::filesystem::path& path, Wait wait) {
  for (;;) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return InfraError(fmt::format("{}: cannot create the lock: {}", path.string(), std::strerror(errno)));
    int rc;
    do rc = flock(fd, LOCK_EX | (wait == Wait::kNo ? LOCK_NB : 0));
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int err = errno;
      close(fd);
      if (err == EWOULDBLOCK) return std::unique_ptr<FileLock>();
      return InfraError(fmt::format("{}: cannot lock: {}", path.string(), std::strerror(err)));
    }
    // The holder we waited for removed the file before it let go: a lock on that file
    // guards nothing any more, so lock the one at path now.
    struct stat held {}, named {};
    if (fstat(fd, &held) == 0 && stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      return std::unique_ptr<FileLock>(new FileLock(fd, path));
    close(fd);
  }
}

FileLock::~FileLock() {
  // Unlink while holding the lock, so a process that takes it next sees the file is gone.
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  close(fd_);
}

}  // namespace harness
