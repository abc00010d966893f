#include "harness/util/bounded_log.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace harness {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Writes all of text at offset (the file is ours; a short write is retried).
void WriteAt(int fd, const std::string& text, int64_t offset) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = pwrite(fd, text.data() + done, text.size() - done, offset + static_cast<int64_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // a full disk loses log lines, never the run
    done += static_cast<std::size_t>(w);
  }
}

}  // namespace

Result<std::unique_ptr<BoundedLog>> BoundedLog::Open(const std::filesystem::path& file, std::size_t head_bytes,
                                                     std::size_t tail_bytes) {
  std::unique_ptr<BoundedLog> log(new BoundedLog());
  log->file_fd_ = open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (log->file_fd_ < 0)
    return InfraError(fmt::format("cannot open the log {}: {}", file.string(), std::strerror(errno)));
  log->base_ = lseek(log->file_fd_, 0, SEEK_END);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return InfraError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  log->read_fd_ = fds[0];
  log->write_fd_ = fds[1];
  log->head_max_ = head_bytes;
  log->rest_ = std::make_unique<BoundedText>(0, tail_bytes);
  log->thread_ = std::thread([p = log.get()] { p->Pump(); });
  return log;
}

BoundedLog::~BoundedLog() {
  Finish(0);
  if (file_fd_ >= 0) close(file_fd_);
}

void BoundedLog::CloseWriteEnd() {
  if (write_fd_ >= 0) close(write_fd_);
  write_fd_ = -1;
}

uint64_t BoundedLog::Finish(double drain_s) {
  if (!finished_) {
    CloseWriteEnd();
    stop_at_ms_ = NowMs() + static_cast<int64_t>(drain_s * 1000);
    if (thread_.joinable()) thread_.join();
    if (read_fd_ >= 0) close(read_fd_);
    read_fd_ = -1;
    finished_ = true;
  }
  return rest_->dropped();
}

void BoundedLog::Pump() {
  char buf[65536];
  int64_t last_flush = NowMs();
  bool dirty = false;
  for (;;) {
    const int64_t stop_at = stop_at_ms_.load();
    if (stop_at >= 0 && NowMs() >= stop_at) break;
    pollfd p{read_fd_, POLLIN, 0};
    const int n = poll(&p, 1, static_cast<int>(kLogFlushS * 1000));
    if (n < 0 && errno != EINTR) break;
    if (n > 0) {
      const ssize_t r = read(read_fd_, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;  // every writer closed it
      std::string_view bytes(buf, static_cast<std::size_t>(r));
      const std::size_t to_head = std::min(bytes.size(), head_max_ - head_written_);
      if (to_head > 0) {
        WriteAt(file_fd_, std::string(bytes.substr(0, to_head)), base_ + static_cast<int64_t>(head_written_));
        head_written_ += to_head;
        bytes.remove_prefix(to_head);
      }
      if (!bytes.empty()) {
        rest_->Append(bytes);
        dirty = true;
      }
    }
    if (dirty && NowMs() - last_flush >= static_cast<int64_t>(kLogFlushS * 1000)) {
      Flush();
      dirty = false;
      last_flush = NowMs();
    }
  }
  Flush();
}

// The part after the head: while nothing was dropped, what is new is appended; after
// that the marker and the tail are rewritten in place and the file cut after them.
void BoundedLog::Flush() {
  const int64_t rest_at = base_ + static_cast<int64_t>(head_written_);
  if (rest_->dropped() == 0) {
    const std::string text = rest_->Text();
    if (text.size() > rest_written_) {
      WriteAt(file_fd_, text.substr(rest_written_), rest_at + static_cast<int64_t>(rest_written_));
      rest_written_ = text.size();
    }
    return;
  }
  // Text() starts with the marker here: the rest has no head of its own.
  const std::string text = rest_->Text();
  WriteAt(file_fd_, text, rest_at);
  while (ftruncate(file_fd_, rest_at + static_cast<int64_t>(text.size())) != 0 && errno == EINTR) {}
}

}  // namespace harness
