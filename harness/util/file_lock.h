// An exclusive flock(2) on a lock file beside what it guards: the kernel drops it when the
// process dies, even by kill -9, so whoever comes next knows the holder is gone.
#pragma once

#include <filesystem>
#include <memory>

#include "harness/util/error.h"

namespace harness {

class FileLock {
 public:
  enum class Wait { kNo, kYes };
  // Takes the lock on path (creating the file). With Wait::kNo a lock held by another
  // process answers nullptr at once; with kYes it waits for it. Exit-3 error when the file
  // cannot be created or locked.
  static Result<std::unique_ptr<FileLock>> Acquire(const std::filesystem::path& path, Wait wait);
  // Removes the file, then drops the lock.
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  FileLock(int fd, std::filesystem::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::filesystem::path path_;
};

}  // namespace harness
