// The lock a live run holds on its run id, so `--resume` never joins a run that is still
// running (two processes would write the same cases). An flock(2) on a file beside the
// database: the kernel drops it when the process dies, even by kill -9, so a killed run
// is resumable at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "harness/util/error.h"

namespace harness {

class RunLock {
 public:
  // Takes the lock or fails (exit 2) naming the run that holds it.
  static Result<std::unique_ptr<RunLock>> Acquire(const std::filesystem::path& db, int64_t run_id);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  RunLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::filesystem::path path_;
};

}  // namespace harness
