// The stand-in endpoint over real loopback HTTP (cpp-httplib's client as the probe).
#include "runners/refstack/sim/sim_server.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "harness/eval/gsm8k_prompt.h"
#include "harness/util/paths.h"
#include "runners/refstack/sim/serve_sim.h"

namespace harness::sim {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class SimServerTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { questions_ = new std::vector<Gsm8kItem>(ValueOrThrow(LoadGsm8k(Gsm8kTestFile()))); }
  static void TearDownTestSuite() { delete questions_; }

  static SimProfile Profile() { return ValueOrThrow(LoadSimProfile(GoldenDir() / "sim" / "default.json")); }

  // Starts a server with the profile; returns a client for it.
  std::unique_ptr<httplib::Client> Start(const SimProfile& profile, const StackConfig& config = {}) {
    server_ = std::make_unique<SimServer>(profile, config, *questions_);
    auto url = server_->Start(0);
    EXPECT_TRUE(url) << url.error().message;
    auto client = std::make_unique<httplib::Client>(*url);
    client->set_read_timeout(10, 0);
    return client;
  }

  static std::string Body(int q, int max_tokens = 512) {
    return json{{"model", "refstack-sim"},
                {"prompt", Gsm8kPrompt("", (*questions_)[q].question)},
                {"max_tokens", max_tokens},
                {"stop", {"Question:"}}}
        .dump();
  }

  static std::vector<Gsm8kItem>* questions_;
  std::unique_ptr<SimServer> server_;
};
std::vector<Gsm8kItem>* SimServerTest::questions_ = nullptr;

TEST_F(SimServerTest, ListsItsModel) {
  auto client = Start(Profile());
  auto res = client->Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["data"][0]["id"], "refstack-sim");
}

TEST_F(SimServerTest, CompletionCarriesTextFinishReasonAndUsage) {
  auto client = Start(Profile());
  auto res = client->Post("/v1/completions", Body(0), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json j = json::parse(res->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], server_->model().Answer(0));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_GT(j["usage"]["completion_tokens"].get<int>(), 10);
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 10);
  EXPECT_EQ(server_->RequestsFor(0), 1);
}

TEST_F(SimServerTest, ChatCompletionAnswersTheLastUserMessage) {
  auto client = Start(Profile());
  json body = {{"model", "x"},
               {"messages", {{{"role", "user"}, {"content", Gsm8kPrompt("", (*questions_)[5].question)}}}}};
  auto res = client->Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const json j = json::parse(res->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["content"], server_->model().Answer(5));
}

TEST_F(SimServerTest, MaxTokensTruncates) {
  auto client = Start(Profile());
  auto res = client->Post("/v1/completions", Body(0, 5), "application/json");
  ASSERT_TRUE(res);
  const json j = json::parse(res->body);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
}

TEST_F(SimServerTest, UnknownQuestionGetsAnAnswerWithoutANumber) {
  auto client = Start(Profile());
  json body = {{"prompt", "Question: What is your name?\nAnswer:"}};
  auto res = client->Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_THAT(json::parse(res->body)["choices"][0]["text"].get<std::string>(), HasSubstr("do not recognise"));
}

TEST_F(SimServerTest, BadRequestsAre400WithAMessage) {
  auto client = Start(Profile());
  auto res = client->Post("/v1/completions", "{not json", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("not a JSON object"));
  res = client->Post("/v1/completions", R"({"prompt": "Question: x\nAnswer:", "max_tokens": 0})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("max_tokens"));
  res = client->Post("/v1/chat/completions", R"({"messages": []})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  // A role of another type is no user message: a 400 naming it, and the server still answers.
  res = client->Post("/v1/chat/completions", R"({"messages": [{"role": 5, "content": "Question: x\nAnswer:"}]})",
                     "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("no user message"));
  res = client->Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(SimServerTest, EachFaultKind) {
  auto profile = Profile();
  profile.faults.http_5xx = 1;
  {
    auto client = Start(profile);
    auto res = client->Post("/v1/completions", Body(1), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 503);
  }
  profile.faults.http_5xx = 0;
  profile.faults.http_429 = 1;
  profile.faults.retry_after_s = 2;
  {
    auto client = Start(profile);
    auto res = client->Post("/v1/completions", Body(1), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 429);
    EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  }
  profile.faults.http_429 = 0;
  profile.faults.malformed_json = 1;
  {
    auto client = Start(profile);
    auto res = client->Post("/v1/completions", Body(1), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_TRUE(json::parse(res->body, nullptr, false).is_discarded());
  }
  profile.faults.malformed_json = 0;
  profile.faults.dropped_connection = 1;
  {
    auto client = Start(profile);
    auto res = client->Post("/v1/completions", Body(1), "application/json");
    EXPECT_FALSE(res);   // no complete response
  }
  profile.faults.dropped_connection = 0;
  profile.faults.slow = 1;
  profile.faults.slow_s = 0.2;
  {
    auto client = Start(profile);
    const auto start = std::chrono::steady_clock::now();
    auto res = client->Post("/v1/completions", Body(1), "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.2);
  }
}

TEST_F(SimServerTest, FaultsAreDeterministicBySeedAndAttempt) {
  auto profile = Profile();
  profile.faults.http_5xx = 0.5;
  auto statuses = [&](const SimProfile& p) {
    auto client = Start(p);
    std::vector<int> out;
    for (int attempt = 0; attempt < 12; ++attempt) out.push_back(client->Post("/v1/completions", Body(3), "application/json")->status);
    EXPECT_EQ(server_->RequestsFor(3), 12);
    return out;
  };
  const auto first = statuses(profile);
  EXPECT_EQ(statuses(profile), first);
  EXPECT_NE(std::count(first.begin(), first.end(), 503), 0);
  EXPECT_NE(std::count(first.begin(), first.end(), 200), 0);
  profile.seed += 1;
  EXPECT_NE(statuses(profile), first);
}

TEST_F(SimServerTest, StopCutsSleepingHandlersShort) {
  auto profile = Profile();
  profile.faults.slow = 1;
  profile.faults.slow_s = 60;
  auto client = Start(profile);
  client->set_read_timeout(0, 100000);
  client->Post("/v1/completions", Body(1), "application/json");   // times out; the handler sleeps on
  const auto start = std::chrono::steady_clock::now();
  server_->Stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
}

TEST_F(SimServerTest, LatencyFollowsTheProfile) {
  auto profile = Profile();
  profile.first_token_s = 0.05;
  profile.per_token_s = 0.001;
  auto client = Start(profile);
  const auto start = std::chrono::steady_clock::now();
  auto res = client->Post("/v1/completions", Body(0), "application/json");
  ASSERT_TRUE(res);
  const int tokens = json::parse(res->body)["usage"]["completion_tokens"];
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.05 + 0.001 * tokens);
}

// serve-sim in a child process: URL on the first stdout line, clean exit on SIGTERM.
TEST(ServeSim, PrintsItsUrlAndStopsOnSigterm) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  // Flushed first: a pipe makes stdout fully buffered, and what GoogleTest printed so far
  // would otherwise be copied into the child and reach the pipe before the URL.
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    int code = 99;
    try {
      code = ServeSim(0, GoldenDir() / "sim" / "default.json", StackConfig{});
    } catch (...) {
      code = 98;
    }
    _exit(code);
  }
  close(out[1]);
  // A failed assertion below returns early: the child is killed and reaped all the same, so
  // it never outlives the test holding the test binary's output pipes.
  struct KillUnlessReaped {
    pid_t pid;
    bool reaped = false;
    ~KillUnlessReaped() {
      if (reaped) return;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } child_guard{child};
  std::FILE* lines = fdopen(out[0], "r");
  char line[256] = {};
  ASSERT_NE(std::fgets(line, sizeof line, lines), nullptr);
  std::string url(line);
  ASSERT_EQ(url.back(), '\n');
  url.pop_back();
  EXPECT_THAT(url, ::testing::StartsWith("http://127.0.0.1:"));
  httplib::Client client(url);
  auto res = client.Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  kill(child, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  child_guard.reaped = true;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::fclose(lines);
}

}  // namespace
}  // namespace harness::sim
