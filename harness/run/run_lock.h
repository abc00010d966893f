// The lock a live run holds on its run id, so `--resume` never joins a run that is still
// running (two processes would write the same cases). A FileLock beside the database: the
// kernel drops it when the process dies, even by kill -9, so a killed run is resumable at
// once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "harness/util/error.h"
#include "harness/util/file_lock.h"

namespace harness {

class RunLock {
 public:
  // Takes the lock or fails (exit 2) naming the run that holds it.
  static Result<std::unique_ptr<RunLock>> Acquire(const std::filesystem::path& db, int64_t run_id);
  // The lock file of run_id of db: db + ".run-<id>.lock".
  static std::filesystem::path PathFor(const std::filesystem::path& db, int64_t run_id);

 private:
  explicit RunLock(std::unique_ptr<FileLock> lock) : lock_(std::move(lock)) {}
  std::unique_ptr<FileLock> lock_;
};

}  // namespace harness
