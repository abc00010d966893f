#include "harness/run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace harness {

Result<std::unique_ptr<RunLock>> RunLock::Acquire(const std::filesystem::path& db, int64_t run_id) {
  std::filesystem::path path = db;
  path += fmt::format(".run-{}.lock", run_id);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return InfraError(fmt::format("{}: cannot create the run lock: {}", path.string(), std::strerror(errno)));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);
    if (err == EWOULDBLOCK)
      return UsageError(fmt::format("run {} is still running in another process (it holds {}); wait for it to "
                                    "finish or stop it before --resume",
                                    run_id, path.string()));
    return InfraError(fmt::format("{}: cannot lock: {}", path.string(), std::strerror(err)));
  }
  return std::unique_ptr<RunLock>(new RunLock(fd, path));
}

RunLock::~RunLock() {
  // Unlink while holding the lock, so a waiting process never locks a file about to vanish.
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  close(fd_);
}

}  // namespace harness
