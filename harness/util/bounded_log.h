// A background program's log file with a bound: its output arrives on a pipe, and a thread
// of ours writes the first head_bytes to the file as they come and keeps a rolling tail
// of the last tail_bytes after them; once bytes had to be dropped, the file is the head,
// "[... N bytes dropped ...]" where they were, and the tail, rewritten at most every
// kLogFlushS. A server that prints 1 GB/s fills head + tail + one line, not the disk.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <thread>

#include "harness/util/bounded_text.h"
#include "harness/util/error.h"

namespace harness {

inline constexpr std::size_t kLogHeadBytes = std::size_t{1} << 20;  // 1 MiB
inline constexpr std::size_t kLogTailBytes = std::size_t{4} << 20;  // 4 MiB
inline constexpr double kLogFlushS = 0.25;

class BoundedLog {
 public:
  // Appends to file (created when missing) what is written to write_fd() until every
  // writer closed it, or Finish.
  static Result<std::unique_ptr<BoundedLog>> Open(const std::filesystem::path& file,
                                                  std::size_t head_bytes = kLogHeadBytes,
                                                  std::size_t tail_bytes = kLogTailBytes);
  ~BoundedLog();
  BoundedLog(const BoundedLog&) = delete;
  BoundedLog& operator=(const BoundedLog&) = delete;

  // The pipe's write end, for the program's stdout and stderr (close-on-exec: dup it).
  int write_fd() const { return write_fd_; }
  // Closes our write end (after the program was started on it).
  void CloseWriteEnd();
  // Reads what is still in the pipe for at most drain_s, writes the file a last time and
  // stops the thread. Bytes dropped so far.
  uint64_t Finish(double drain_s);

 private:
  BoundedLog() = default;
  void Pump();
  void Flush();

  int read_fd_ = -1, write_fd_ = -1, file_fd_ = -1;
  int64_t base_ = 0;              // where our output starts in the file (it may hold lines before)
  std::size_t head_max_ = 0;
  std::size_t head_written_ = 0;  // head bytes in the file
  std::unique_ptr<BoundedText> rest_;  // what came after the head
  uint64_t rest_written_ = 0;     // bytes of rest_ in the file while nothing was dropped
  std::atomic<int64_t> stop_at_ms_{-1};  // steady-clock ms after which the thread stops; -1: not asked
  std::thread thread_;
  bool finished_ = false;
};

}  // namespace harness
