#include "runners/refstack/sim/http_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

namespace harness::sim {

using Clock = std::chrono::steady_clock;

struct HttpListener::Connection {
  explicit Connection(int socket) : fd(socket) {}
  const int fd;
  std::atomic<bool> in_read{false};  // blocked waiting for the client's bytes
  Clock::time_point waiting_since;   // when it began waiting for its current request (mu_)
  bool evicted = false;              // shut down to make room (mu_)
};

namespace {

Clock::time_point After(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Waits until fd is ready for events or deadline; in_read, when given, is set meanwhile. A
// hang-up or error counts as ready: the read or write that follows finds out.
bool WaitFor(int fd, short events, Clock::time_point deadline, std::atomic<bool>* in_read) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    if (in_read) in_read->store(true);
    const int n = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (in_read) in_read->store(false);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

void Address(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  const int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len)
                      : getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  if (rc != 0 || a.sin_family != AF_INET) return;
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  ip = text;
  port = ntohs(a.sin_port);
}

// One accepted connection as httplib reads and writes it. Reads are buffered (httplib reads
// a request line byte by byte), keep pipelined bytes for the next request, stop at the
// request's deadline and at its byte budget.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int fd, std::atomic<bool>& in_read, const HttpLimits& limits)
      : fd_(fd), in_read_(in_read), limits_(limits) {}

  // Waits for the first byte of the next request (up to idle_seconds); then its clock and
  // byte budget start.
  bool NextRequest() {
    request_bytes_ = 0;
    header_bytes_ = 0;
    line_length_ = 1;  // the request line is no blank line
    if (begin_ == end_ && !WaitFor(fd_, POLLIN, After(limits_.idle_seconds), &in_read_)) return false;
    deadline_ = After(limits_.request_seconds);
    return true;
  }
  // The request needed more than its byte budget.
  bool over_budget() const { return over_budget_; }
  // A read failed: the deadline passed, the client closed or the connection broke. httplib
  // still answers such a request (400), but the connection cannot go on.
  bool read_failed() const { return read_failed_; }

  bool is_readable() const override { return begin_ < end_ || WaitFor(fd_, POLLIN, deadline_, &in_read_); }
  bool is_writable() const override { return WaitFor(fd_, POLLOUT, After(limits_.write_seconds), nullptr); }

  ssize_t read(char* ptr, size_t size) override {
    // The request line and headers have max_header_bytes of their own (until the blank line
    // that ends them); the body max_body_bytes after them.
    const std::size_t budget = header_bytes_ ? header_bytes_ + limits_.max_body_bytes : limits_.max_header_bytes;
    if (request_bytes_ >= budget) {
      over_budget_ = true;
      return -1;
    }
    if (begin_ == end_ && !Fill()) {
      read_failed_ = true;
      return -1;
    }
    const std::size_t n = std::min({size, end_ - begin_, budget - request_bytes_});
    std::memcpy(ptr, buf_.data() + begin_, n);
    begin_ += n;
    for (std::size_t i = 0; i < n && !header_bytes_; ++i) {
      // "\r\n\r\n" (or a bare "\n\n") ends the headers.
      if (ptr[i] == '\r') continue;
      if (ptr[i] != '\n') {
        ++line_length_;
        continue;
      }
      if (line_length_ == 0) header_bytes_ = request_bytes_ + i + 1;
      line_length_ = 0;
    }
    request_bytes_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    const ssize_t n = send(fd_, ptr, size, MSG_NOSIGNAL);
    return n < 0 ? -1 : n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  bool Fill() {
    for (;;) {
      if (!WaitFor(fd_, POLLIN, deadline_, &in_read_)) return false;
      const ssize_t n = recv(fd_, buf_.data(), buf_.size(), 0);
      if (n > 0) {
        begin_ = 0;
        end_ = static_cast<std::size_t>(n);
        return true;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) return false;
    }
  }

  const int fd_;
  std::atomic<bool>& in_read_;
  const HttpLimits& limits_;
  std::array<char, 16384> buf_{};
  std::size_t begin_ = 0, end_ = 0;
  Clock::time_point deadline_ = Clock::now();
  std::size_t request_bytes_ = 0;
  std::size_t header_bytes_ = 0;  // the request line and headers, once their blank line was read
  std::size_t line_length_ = 1;   // bytes of the header line being read, '\r' left out
  bool over_budget_ = false;
  bool read_failed_ = false;
};

// After the error reply to a request over its budget: stop sending, then read and drop what
// the client still sends (for at most seconds), so that closing does not reset the
// connection before the client has read the reply.
void Drain(int fd, double seconds, std::atomic<bool>& in_read) {
  shutdown(fd, SHUT_WR);
  const auto deadline = After(seconds);
  std::array<char, 16384> sink;
  while (WaitFor(fd, POLLIN, deadline, &in_read) && recv(fd, sink.data(), sink.size(), 0) > 0) {
  }
}

}  // namespace

bool HttpRoutes::ServeRequest(httplib::Stream& stream, bool& connection_closed) {
  return process_request(stream, false, connection_closed, nullptr);
}

HttpListener::HttpListener(HttpRoutes& routes, HttpLimits limits) : routes_(routes), limits_(limits) {
  routes_.set_payload_max_length(limits_.max_body_bytes);
}

HttpListener::~HttpListener() { Stop(); }

Result<int> HttpListener::Start(int port) {
  if (listen_fd_ >= 0) return UsageError("the listener is already started");
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return InfraError(fmt::format("cannot create a socket: {}", std::strerror(errno)));
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    return InfraError(fmt::format("cannot listen on 127.0.0.1:{}: {}", port, why));
  }
  listen_fd_ = fd;
  stopping_ = false;
  for (std::size_t i = 0; i < limits_.max_connections; ++i) workers_.emplace_back([this] { Work(); });
  accept_thread_ = std::thread([this] { AcceptLoop(); });
  return static_cast<int>(ntohs(a.sin_port));
}

void HttpListener::Stop() {
  if (listen_fd_ < 0) return;
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  if (accept_thread_.joinable()) accept_thread_.join();
  close(listen_fd_);
  listen_fd_ = -1;
  {
    std::lock_guard lock(mu_);
    for (const auto& c : open_) shutdown(c->fd, SHUT_RDWR);
  }
  work_cv_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

void HttpListener::AcceptLoop() {
  while (!stopping_) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      Admit(fd);
      continue;
    }
    if (stopping_) return;
    // Out of descriptors or memory: let connections finish; other errors concern one connection.
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void HttpListener::Admit(int fd) {
  const int yes = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);  // else Nagle and delayed ACKs stall replies ~40 ms
  std::unique_lock lock(mu_);
  std::size_t admitted = 0;
  Connection* longest_waiting = nullptr;
  for (const auto& c : open_) {
    if (c->evicted) continue;
    ++admitted;
    if (c->in_read && (!longest_waiting || c->waiting_since < longest_waiting->waiting_since))
      longest_waiting = c.get();
  }
  if (admitted >= limits_.max_connections) {
    if (!longest_waiting) {
      lock.unlock();
      static constexpr char kBusy[] =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n";
      static_cast<void>(send(fd, kBusy, sizeof kBusy - 1, MSG_DONTWAIT | MSG_NOSIGNAL));
      close(fd);
      return;
    }
    longest_waiting->evicted = true;
    shutdown(longest_waiting->fd, SHUT_RDWR);  // its worker's poll returns; the worker closes it
  }
  auto c = std::make_shared<Connection>(fd);
  c->waiting_since = Clock::now();
  open_.push_back(c);
  pending_.push_back(std::move(c));
  lock.unlock();
  work_cv_.notify_one();
}

void HttpListener::Work() {
  for (;;) {
    std::shared_ptr<Connection> c;
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping
      c = std::move(pending_.front());
      pending_.pop_front();
    }
    if (!stopping_) Serve(c);
    std::lock_guard lock(mu_);
    open_.remove(c);
    close(c->fd);
  }
}

void HttpListener::Serve(const std::shared_ptr<Connection>& c) {
  ConnectionStream stream(c->fd, c->in_read, limits_);
  while (!stopping_) {
    {
      std::lock_guard lock(mu_);
      c->waiting_since = Clock::now();
    }
    if (!stream.NextRequest()) return;
    bool client_closes = false;
    const bool ok = routes_.ServeRequest(stream, client_closes);
    if (stream.over_budget()) return Drain(c->fd, limits_.request_seconds, c->in_read);
    if (!ok || client_closes || stream.read_failed()) return;
  }
}

}  // namespace harness::sim
