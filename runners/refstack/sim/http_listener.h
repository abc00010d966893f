// A bounded HTTP/1.1 listener on 127.0.0.1 for routes kept in a httplib::Server (its request
// parsing, routing and response writing). cpp-httplib 0.11's own accept loop gives each
// connection a worker for as long as the client sends a byte within the read timeout, queues
// every other connection behind those without limit, and reads a body of any size (chunked,
// or up to the end of the connection) into memory. Here:
//  - at most max_connections connections are open. At the cap a new connection closes the
//    one that has waited longest for its request to arrive (a slow sender or an idle
//    keep-alive connection), so slow clients cannot starve the others; when every open
//    connection is busy with a request, the new one is answered 503 and closed;
//  - a request (request line, headers and body) must arrive within request_seconds of its
//    first byte; its request line and headers are read up to max_header_bytes (to the blank
//    line that ends them), its body up to max_body_bytes: beyond either the request fails
//    (413 for a Content-Length over max_body_bytes, else 400) and the connection is closed
//    after the reply;
//  - a keep-alive connection waits idle_seconds for its next request, a write write_seconds.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

#include "harness/util/error.h"

namespace harness::sim {

struct HttpLimits {
  // Keep-alive connections each hold one: room for the harness client's 64 plus a
  // connection-per-request client running beside it.
  std::size_t max_connections = 256;
  double request_seconds = 5;
  double idle_seconds = 5;
  double write_seconds = 5;
  std::size_t max_header_bytes = 64 * 1024;
  std::size_t max_body_bytes = 1024 * 1024;
};

// The routes; HttpListener hands it each request (Server::process_request is protected, for
// subclasses that bring their own connections).
class HttpRoutes : public httplib::Server {
 public:
  // Reads one request from stream, routes it and writes the response; false when the
  // connection cannot go on. connection_closed: the client asked to close.
  bool ServeRequest(httplib::Stream& stream, bool& connection_closed);
};

class HttpListener {
 public:
  // Sets routes' payload maximum to limits.max_body_bytes.
  HttpListener(HttpRoutes& routes, HttpLimits limits);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Listens on 127.0.0.1:port (0: any free port) and returns the port.
  Result<int> Start(int port);
  // Stops accepting, shuts every connection down and joins every thread. Idempotent.
  void Stop();

 private:
  struct Connection;
  void AcceptLoop();
  void Admit(int fd);
  void Work();
  void Serve(const std::shared_ptr<Connection>& c);

  HttpRoutes& routes_;
  const HttpLimits limits_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::list<std::shared_ptr<Connection>> open_;      // admitted and not yet closed
  std::deque<std::shared_ptr<Connection>> pending_;  // admitted, waiting for a worker
};

}  // namespace harness::sim
