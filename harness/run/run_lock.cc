#include "harness/run/run_lock.h"

#include <fmt/format.h>

namespace harness {

std::filesystem::path RunLock::PathFor(const std::filesystem::path& db, int64_t run_id) {
  std::filesystem::path path = db;
  path += fmt::format(".run-{}.lock", run_id);
  return path;
}

Result<std::unique_ptr<RunLock>> RunLock::Acquire(const std::filesystem::path& db, int64_t run_id) {
  const std::filesystem::path path = PathFor(db, run_id);
  auto lock = FileLock::Acquire(path, FileLock::Wait::kNo);
  if (!lock) return lock.error();
  if (!*lock)
    return UsageError(fmt::format("run {} is still running in another process (it holds {}); wait for it to "
                                  "finish or stop it before --resume",
                                  run_id, path.string()));
  return std::unique_ptr<RunLock>(new RunLock(std::move(*lock)));
}

}  // namespace harness
