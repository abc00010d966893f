// The client against small loopback servers that misbehave on purpose.
#include "runners/openai/openai_client.h"
#include "runners/openai/served_models.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "harness/testing/test_util.h"

namespace harness::openai {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

// An httplib server on a free loopback port, running `handler` for both endpoints.
class TestServer {
 public:
  explicit TestServer(httplib::Server::Handler handler) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(32); };
    server_.set_keep_alive_max_count(100000);
    server_.set_tcp_nodelay(true);
    server_.Post("/v1/completions", handler);
    server_.Post("/v1/chat/completions", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~TestServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

void Reply(httplib::Response& res, const std::string& text, const std::string& finish = "stop", int tokens = 3) {
  json body = {{"choices", {{{"index", 0}, {"text", text}, {"finish_reason", finish}}}},
               {"usage", {{"completion_tokens", tokens}}}};
  res.set_content(body.dump(), "application/json");
}

ClientOptions Options(const std::string& url) {
  ClientOptions o;
  o.target.base_url = url;
  o.target.model = "test-model";
  o.backoff_initial_s = 0.001;
  o.backoff_max_s = 0.01;
  o.timeout_s = 5;
  return o;
}

std::vector<CompletionRequest> Requests(int n) {
  std::vector<CompletionRequest> r;
  for (int i = 0; i < n; ++i) r.push_back({i, "Question: " + std::to_string(i) + "\nAnswer:"});
  return r;
}

std::vector<CompletionResult> RunAll(Client& client, const std::vector<CompletionRequest>& requests, Status* status = nullptr) {
  std::vector<CompletionResult> results;
  Status s = client.Run(requests, [&](CompletionResult&& r) { results.push_back(std::move(r)); });
  if (status) *status = s;
  else EXPECT_TRUE(s) << s.error().message;
  return results;
}

// The process's peak resident set (VmHWM) in bytes; each test runs in its own process (ctest).
int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  ADD_FAILURE() << "no VmHWM in /proc/self/status";
  return 0;
}

// A completion body of exactly `size` bytes (the text is padded with 'a').
std::string BodyOfSize(std::size_t size) {
  auto body = [](const std::string& text) {
    return json({{"choices", {{{"index", 0}, {"text", text}, {"finish_reason", "stop"}}}}}).dump();
  };
  const std::size_t empty = body("").size();
  EXPECT_GE(size, empty);
  return body(std::string(size - empty, 'a'));
}

// A loopback port that nothing listens on: bound once, then closed.
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(ServedModels, ParsesTheModelListAndRefusesAnythingElse) {
  EXPECT_EQ(openai::ParseModelList(R"({"object": "list", "data": [{"id": "b"}, {"id": "a"}, {"id": "b"}]})"),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(openai::ParseModelList(R"({"data": []})"), std::vector<std::string>{});
  EXPECT_FALSE(openai::ParseModelList("not json"));
  EXPECT_FALSE(openai::ParseModelList(R"({"data": [{"name": "a"}]})"));
  EXPECT_FALSE(openai::ParseModelList(R"({"data": {"id": "a"}})"));
}

TEST(EndpointUrl, AddsTheRouteOnce) {
  EndpointTarget t{"http://h:1", "m", false, ""};
  EXPECT_EQ(EndpointUrl(t), "http://h:1/v1/completions");
  t.base_url = "http://h:1/v1/";
  EXPECT_EQ(EndpointUrl(t), "http://h:1/v1/completions");
  t.chat = true;
  EXPECT_EQ(EndpointUrl(t), "http://h:1/v1/chat/completions");
}

TEST(Client, RejectsBadOptions) {
  auto o = Options("http://127.0.0.1:1");
  o.max_in_flight = 0;
  auto c = Client::Create(o);
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("max_in_flight"));
  o = Options("http://127.0.0.1:1");
  o.target.chat = true;
  o.generation.stop = {"a", "b", "c", "d", "e"};
  EXPECT_FALSE(Client::Create(o));
}

TEST(Client, SendsTheCompletionBodyAndReadsTheAnswer) {
  std::mutex mu;
  json seen;
  TestServer server([&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    seen = json::parse(req.body);
    Reply(res, " 2 + 2 = 4\n#### 4", "stop", 7);
  });
  auto client = Client::Create(Options(server.url()));
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].ok);
  EXPECT_EQ(results[0].text, " 2 + 2 = 4\n#### 4");
  EXPECT_EQ(results[0].finish_reason, "stop");
  EXPECT_EQ(results[0].completion_tokens, 7);
  EXPECT_EQ(results[0].attempts, 1);
  EXPECT_EQ(seen["model"], "test-model");
  EXPECT_EQ(seen["prompt"], "Question: 0\nAnswer:");
  EXPECT_EQ(seen["temperature"], 0);
  EXPECT_EQ(seen["max_tokens"], 512);
  EXPECT_EQ(seen["seed"], 1234);
  EXPECT_EQ(seen["stop"], json({"Question:", "\n\nQuestion"}));
}

TEST(Client, ChatModeSendsOneUserMessage) {
  std::mutex mu;
  json seen;
  TestServer server([&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    seen = json::parse(req.body);
    json body = {{"choices", {{{"message", {{"role", "assistant"}, {"content", "#### 5"}}}, {"finish_reason", "stop"}}}}};
    res.set_content(body.dump(), "application/json");
  });
  auto o = Options(server.url());
  o.target.chat = true;
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].ok);
  EXPECT_EQ(results[0].text, "#### 5");
  EXPECT_EQ(seen["messages"], json::array({{{"role", "user"}, {"content", "Question: 0\nAnswer:"}}}));
  EXPECT_FALSE(seen.contains("prompt"));
}

TEST(Client, RetriesServerErrorsThenSucceeds) {
  std::atomic<int> calls{0};
  TestServer server([&](const httplib::Request&, httplib::Response& res) {
    if (calls++ < 2) {
      res.status = 503;
      return;
    }
    Reply(res, "#### 1");
  });
  auto client = Client::Create(Options(server.url()));
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].ok);
  EXPECT_EQ(results[0].attempts, 3);
}

TEST(Client, DoesNotRetryABadRequest) {
  std::atomic<int> calls{0};
  TestServer server([&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.status = 400;
  });
  auto client = Client::Create(Options(server.url()));
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "HTTP 400 (after 1 attempt)");
  EXPECT_EQ(calls, 1);
}

TEST(Client, MalformedJsonIsRetriedThenAnError) {
  std::atomic<int> calls{0};
  TestServer server([&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.set_content(R"({"choices": [{"text": "cut)", "application/json");
  });
  auto o = Options(server.url());
  o.max_attempts = 3;
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "malformed response: not JSON, or nested deeper than 256 levels (after 3 attempts)");
  EXPECT_EQ(results[0].text, "");
  EXPECT_EQ(calls, 3);
}

// A response nested 150,000 deep overflowed the stack where the parsed JSON was copied;
// it is refused before it is parsed, like any malformed response.
TEST(Client, ADeeplyNestedResponseIsMalformedNotACrash) {
  const std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  CompletionResult r;
  EXPECT_EQ(ParseCompletionResponse(R"({"choices": [{"text": "4", "logprobs": )" + deep + "}]}", false, r),
            "not JSON, or nested deeper than 256 levels");
  EXPECT_EQ(ParseCompletionResponse(R"({"choices": [{"text": "4", "logprobs": [[1]]}]})", false, r), std::nullopt);
  EXPECT_EQ(r.text, "4");
}

TEST(Client, BodyOverTheCapIsAnErrorNamingItAndNotRetried) {
  constexpr int64_t kCap = 1000;
  std::atomic<int> calls_over{0};
  TestServer server([&](const httplib::Request& req, httplib::Response& res) {
    const std::string prompt = json::parse(req.body)["prompt"];
    if (prompt == "Question: 0\nAnswer:") {
      ++calls_over;
      res.set_content(BodyOfSize(kCap + 1), "application/json");
    } else {
      res.set_content(BodyOfSize(kCap), "application/json");   // exactly at the cap is fine
    }
  });
  auto o = Options(server.url());
  o.max_response_bytes = kCap;
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(3));
  ASSERT_EQ(results.size(), 3u);   // exactly one result per request
  for (const auto& r : results) {
    if (r.id == 0) {
      EXPECT_FALSE(r.ok);
      EXPECT_EQ(r.error, "response body over 1000 bytes (after 1 attempt)");
      EXPECT_EQ(r.text, "");
    } else {
      EXPECT_TRUE(r.ok) << r.error;
      EXPECT_EQ(r.text, json::parse(BodyOfSize(kCap))["choices"][0]["text"]);
    }
  }
  EXPECT_EQ(calls_over, 1);   // max_attempts is 4: the same body would come back again
}

TEST(Client, RejectsBadResponseLimits) {
  auto o = Options("http://127.0.0.1:1");
  o.max_response_bytes = 0;
  auto c = Client::Create(o);
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("max_response_bytes"));
  o = Options("http://127.0.0.1:1");
  o.low_speed_time_s = 0.5;
  c = Client::Create(o);
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("low_speed_time_s"));
}

// The hostile case: a 200 whose chunked body never ends. The server stops on its own after
// 128 MiB per response (so a client without the cap fails this test instead of the machine).
TEST(Client, EndlessChunkedBodyEndsAtTheCapWithBoundedMemory) {
  constexpr std::size_t kServerLimit = std::size_t{128} << 20;
  std::atomic<int> calls{0};
  std::atomic<int64_t> sent_total{0};
  TestServer server([&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.set_chunked_content_provider("application/json", [&, sent = std::size_t{0}](std::size_t, httplib::DataSink& sink) mutable {
      static const std::string chunk = "{\"choices\": [{\"text\": \"" + std::string(64 << 10, 'x');
      if (sent >= kServerLimit) {
        sink.done();
        return true;
      }
      if (!sink.write(chunk.data(), chunk.size())) return false;   // the client hung up
      sent += chunk.size();
      sent_total += static_cast<int64_t>(chunk.size());
      return true;
    });
  });
  auto o = Options(server.url());
  o.max_in_flight = 4;
  o.timeout_s = 60;   // the cap, not the clock, must end it
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  const int64_t peak_before = PeakRssBytes();
  const auto start = std::chrono::steady_clock::now();
  auto results = RunAll(**client, Requests(4));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t growth = PeakRssBytes() - peak_before;
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) {
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, "response body over 4194304 bytes (after 1 attempt)");
  }
  EXPECT_EQ(calls, 4);
  EXPECT_LT(elapsed, 10);
  // Under AddressSanitizer freed blocks stay resident in its quarantine (256 MiB by default),
  // so peak RSS measures ASan, not the client; the bound is checked in the normal build.
  if (!testing_util::kAddressSanitizer) {
    EXPECT_LT(growth, int64_t{64} << 20) << "peak RSS grew by " << (growth >> 20) << " MiB";
  }
  std::printf("endless body: %.2f s, peak RSS +%lld MiB, server sent %lld MiB\n", elapsed,
              static_cast<long long>(growth >> 20), static_cast<long long>(sent_total.load() >> 20));
}

// Headers, then silence: the low-speed limit ends the attempt long before timeout_s.
TEST(Client, StalledBodyEndsAtTheLowSpeedLimit) {
  std::atomic<bool> release{false};
  TestServer server([&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [&](std::size_t, httplib::DataSink& sink) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!release && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      sink.done();
      return true;
    });
  });
  auto o = Options(server.url());
  o.timeout_s = 30;
  o.low_speed_time_s = 1;
  o.max_attempts = 1;
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  const auto start = std::chrono::steady_clock::now();
  auto results = RunAll(**client, Requests(1));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  release = true;
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].ok);
  EXPECT_THAT(results[0].error, HasSubstr("timed out: Operation too slow"));
  EXPECT_LT(elapsed, 10);
}

TEST(Client, HonoursRetryAfter) {
  std::atomic<int> calls{0};
  TestServer server([&](const httplib::Request&, httplib::Response& res) {
    if (calls++ == 0) {
      res.status = 429;
      res.set_header("Retry-After", "0.3");
      return;
    }
    Reply(res, "#### 1");
  });
  auto client = Client::Create(Options(server.url()));   // own backoff: 1 to 10 ms
  ASSERT_TRUE(client);
  const auto start = std::chrono::steady_clock::now();
  auto results = RunAll(**client, Requests(1));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].ok);
  EXPECT_EQ(results[0].attempts, 2);
  EXPECT_GE(elapsed, 0.3);
}

TEST(Client, PerRequestTimeout) {
  TestServer server([&](const httplib::Request& req, httplib::Response& res) {
    if (json::parse(req.body)["prompt"] == "Question: 0\nAnswer:") std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Reply(res, "#### 1");
  });
  auto o = Options(server.url());
  o.timeout_s = 0.1;
  o.max_attempts = 2;
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(3));
  ASSERT_EQ(results.size(), 3u);
  int failed = 0;
  for (const auto& r : results) {
    if (r.id == 0) {
      EXPECT_FALSE(r.ok);
      EXPECT_EQ(r.error, "timed out after 0.1 s (after 2 attempts)");
      ++failed;
    } else {
      EXPECT_TRUE(r.ok) << r.error;   // the slow request does not hold the others back
    }
  }
  EXPECT_EQ(failed, 1);
}

TEST(Client, UnreachableEndpointStopsAtMaxErrors) {
  const int port = UnusedPort();
  auto o = Options("http://127.0.0.1:" + std::to_string(port));
  o.max_attempts = 2;
  o.max_errors = 3;
  o.max_in_flight = 2;
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  Status status = OkStatus();
  auto results = RunAll(**client, Requests(50), &status);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ExitCode::kInfra);
  EXPECT_THAT(status.error().message, HasSubstr("requests failed after retries (limit 3)"));
  EXPECT_THAT(status.error().message, HasSubstr("connection:"));
  EXPECT_LT(results.size(), 50u);
  for (const auto& r : results) EXPECT_FALSE(r.ok);
}

TEST(Client, ApiKeyComesFromTheNamedVariableAndIsNeverInMessages) {
  std::atomic<int> authorised{0};
  TestServer server([&](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") == "Bearer s3cret-key") ++authorised;
    Reply(res, "#### 1");
  });
  auto o = Options(server.url());
  o.target.api_key_env = "HARNESS_TEST_API_KEY";
  unsetenv("HARNESS_TEST_API_KEY");
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  Status status = OkStatus();
  RunAll(**client, Requests(1), &status);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message, HasSubstr("HARNESS_TEST_API_KEY"));
  setenv("HARNESS_TEST_API_KEY", "s3cret-key", 1);
  auto results = RunAll(**client, Requests(2));
  unsetenv("HARNESS_TEST_API_KEY");
  EXPECT_EQ(authorised, 2);
  for (const auto& r : results) EXPECT_THAT(r.error, Not(HasSubstr("s3cret")));
}

TEST(Client, BoundedConcurrencyOverReusedConnections) {
  std::atomic<int> in_handler{0}, most{0};
  std::mutex mu;
  std::set<std::string> peers;
  TestServer server([&](const httplib::Request& req, httplib::Response& res) {
    const int now = ++in_handler;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    {
      std::lock_guard lock(mu);
      peers.insert(req.remote_addr + ":" + std::to_string(req.remote_port));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --in_handler;
    Reply(res, "#### 1");
  });
  auto o = Options(server.url());
  o.max_in_flight = 4;   // within cpp-httplib's listen backlog of 5
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  auto results = RunAll(**client, Requests(120));
  EXPECT_EQ(results.size(), 120u);
  EXPECT_LE(most.load(), 4);
  EXPECT_GE(most.load(), 2);
  EXPECT_LE(peers.size(), 4u);   // 120 requests over at most 4 connections
}

TEST(Client, RequestStopEndsTheRunEarly) {
  TestServer server([&](const httplib::Request&, httplib::Response& res) { Reply(res, "#### 1"); });
  auto o = Options(server.url());
  o.max_in_flight = 4;
  auto client = Client::Create(o);
  ASSERT_TRUE(client);
  int delivered = 0;
  Status status = (*client)->Run(Requests(500), [&](CompletionResult&&) {
    if (++delivered == 10) (*client)->RequestStop();
  });
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message, HasSubstr("stopped after"));
  EXPECT_LT(delivered, 500);
}

}  // namespace
}  // namespace harness::openai
