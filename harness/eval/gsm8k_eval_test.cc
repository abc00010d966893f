// The eval loop end to end over real loopback HTTP: the stand-in endpoint for whole
// 1319-question runs, a scripted server for the extraction pain points.
#include "harness/eval/gsm8k_eval.h"

#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "harness/eval/gsm8k_score.h"
#include "harness/util/paths.h"
#include "harness/stats/verdict.h"
#include "runners/refstack/sim/sim_server.h"

namespace harness::openai {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

Gsm8kEvalOptions Options(const std::string& url) {
  Gsm8kEvalOptions o;
  o.client.target.base_url = url;
  o.client.target.model = "refstack-sim";
  o.client.backoff_initial_s = 0.005;
  o.client.backoff_max_s = 0.05;
  o.progress_out = nullptr;
  return o;
}

// The outcome the stand-in's model means for question q.
std::string ExpectedOutcome(const sim::SimModel& m, int q) {
  switch (m.Kind(q)) {
    case sim::AnswerKind::kRight: return "correct";
    case sim::AnswerKind::kWrongNumber: return "wrong";
    case sim::AnswerKind::kNoNumber: return "invalid";
  }
  return "";
}

class SimEvalTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    questions_ = new std::vector<Gsm8kItem>(ValueOrThrow(LoadGsm8k(Gsm8kTestFile())));
  }
  static void TearDownTestSuite() { delete questions_; }

  static sim::SimProfile Profile(const char* file, int rows) {
    auto p = ValueOrThrow(sim::LoadSimProfile(GoldenDir() / "sim" / file));
    p.batch_rows = rows;
    return p;
  }
  std::string Start(const sim::SimProfile& profile, const StackConfig& config = {}) {
    server_ = std::make_unique<sim::SimServer>(profile, config, *questions_);
    return ValueOrThrow(server_->Start(0));
  }
  static Gsm8kEvalReport Run(const Gsm8kEvalOptions& o, const std::vector<Sample>& prior = {},
                             std::vector<Sample>* streamed = nullptr) {
    auto eval = ValueOrThrow(Gsm8kEval::Create(o));
    return ValueOrThrow(eval->Run(prior, [&](const Sample& s) {
      if (streamed) streamed->push_back(s);
    }));
  }
  static StackConfig WithFault() {
    StackConfig c;
    c.faults = {std::string(sim::kFp8ScaleFault)};
    return c;
  }

  static std::vector<Gsm8kItem>* questions_;
  std::unique_ptr<sim::SimServer> server_;
};
std::vector<Gsm8kItem>* SimEvalTest::questions_ = nullptr;

TEST_F(SimEvalTest, HealthyRunScoresEveryQuestionAsTheModelMeantIt) {
  const std::string url = Start(Profile("default.json", 64));
  std::vector<Sample> streamed;
  auto report = Run(Options(url), {}, &streamed);
  EXPECT_FALSE(report.infra_error);
  ASSERT_EQ(report.samples.size(), 1319u);
  EXPECT_EQ(streamed.size(), 1319u);   // each sample was handed on as it arrived
  EXPECT_EQ(report.asked, 1319);
  std::set<std::string> keys;
  for (const auto& s : report.samples) {
    keys.insert(s.key);
    const int q = std::stoi(s.key);
    EXPECT_EQ(Word(s.outcome), ExpectedOutcome(server_->model(), q)) << q;
    EXPECT_EQ(s.expected, (*questions_)[q].label);
    EXPECT_GT(s.tokens, 0);
  }
  EXPECT_EQ(keys.size(), 1319u);
  EXPECT_EQ(server_->TotalRequests(), 1319);
  EXPECT_NEAR(report.summary.accuracy, 0.925, 0.005);
  EXPECT_GT(report.output_tokens_per_s, 0);
  EXPECT_GT(report.summary.invalid_rate, 0);
  EXPECT_EQ(report.summary.error_rate, 0);
}

TEST_F(SimEvalTest, ChatModeGivesTheSameOutcomes) {
  const std::string url = Start(Profile("default.json", 1));
  auto completion = Run(Options(url));
  auto o = Options(url);
  o.client.target.chat = true;
  auto chat = Run(o);
  ASSERT_EQ(chat.samples.size(), 1319u);
  EXPECT_EQ(CompareToBaseline(completion.samples, chat.samples).test.b, 0);
  EXPECT_EQ(CompareToBaseline(completion.samples, chat.samples).test.c, 0);
  EXPECT_EQ(chat.summary.counts.correct, completion.summary.counts.correct);
}

TEST_F(SimEvalTest, FaultProfileLosesNothing) {
  // Per attempt: 5% 5xx, 2% slower than the client's timeout, 1% cut-off JSON.
  const std::string url = Start(Profile("faults.json", 64));
  auto o = Options(url);
  o.client.timeout_s = 0.4;   // below the profile's slow_s (2 s)
  std::vector<Sample> streamed;
  auto report = Run(o, {}, &streamed);
  EXPECT_FALSE(report.infra_error) << report.infra_error->message;
  ASSERT_EQ(report.samples.size(), 1319u);
  std::map<std::string, int> per_key;
  for (const auto& s : streamed) ++per_key[s.key];
  EXPECT_EQ(per_key.size(), 1319u);
  for (const auto& [key, count] : per_key) EXPECT_EQ(count, 1) << key;
  // Retries happened, and every answered question still scored as the model meant it.
  EXPECT_GT(server_->TotalRequests(), 1319 + 80);
  int errors = 0;
  for (const auto& s : report.samples) {
    if (s.outcome == SampleOutcome::kError) {
      ++errors;
      continue;
    }
    EXPECT_EQ(Word(s.outcome), ExpectedOutcome(server_->model(), std::stoi(s.key))) << s.key;
  }
  EXPECT_LE(errors, 2);   // 8% per attempt over 4 attempts: about 0.05 expected
}

TEST_F(SimEvalTest, Fp8ScaleFaultRegressesAtM64AndNotAtM1) {
  std::map<int, BaselineJudgement> verdicts;
  std::map<int, std::pair<double, double>> accuracy;
  for (int rows : {1, 64}) {
    const std::string healthy_url = Start(Profile("default.json", rows));
    auto healthy = Run(Options(healthy_url));
    const std::string fault_url = Start(Profile("default.json", rows), WithFault());
    auto faulty = Run(Options(fault_url));
    verdicts[rows] = CompareToBaseline(healthy.samples, faulty.samples);
    accuracy[rows] = {healthy.summary.accuracy, faulty.summary.accuracy};
  }
  EXPECT_EQ(verdicts[1].verdict, BaselineVerdict::kSame);
  EXPECT_EQ(verdicts[1].test.b + verdicts[1].test.c, 0);
  EXPECT_DOUBLE_EQ(accuracy[1].first, accuracy[1].second);
  EXPECT_EQ(verdicts[64].verdict, BaselineVerdict::kRegressed);
  EXPECT_LT(verdicts[64].test.p_value, 0.05);
  EXPECT_GT(verdicts[64].test.b, verdicts[64].test.c);
  EXPECT_LT(accuracy[64].second, accuracy[64].first);
  // The healthy gate story at n = 1319: 0.92 sits near a 0.91 gate, the fault below it.
  EXPECT_EQ(JudgeGate(static_cast<int64_t>(std::round(accuracy[64].first * 1319)), 1319, 0.91).verdict,
            GateVerdict::kAtRisk);
}

TEST_F(SimEvalTest, ResumeAsksOnlyTheUnfinishedQuestions) {
  const std::string url = Start(Profile("default.json", 64));
  auto eval = ValueOrThrow(Gsm8kEval::Create(Options(url)));
  std::vector<Sample> stored;   // what a store would hold when the run is killed
  auto first = ValueOrThrow(eval->Run({}, [&](const Sample& s) {
    stored.push_back(s);
    if (stored.size() == 500) eval->RequestStop();
  }));
  ASSERT_TRUE(first.infra_error);
  EXPECT_THAT(first.infra_error->message, HasSubstr("stopped after 500 of 1319"));
  ASSERT_EQ(stored.size(), 500u);
  std::vector<int> before(1319);
  for (int q = 0; q < 1319; ++q) before[q] = server_->RequestsFor(q);

  std::vector<Sample> streamed;
  auto second = Run(Options(url), stored, &streamed);
  EXPECT_FALSE(second.infra_error);
  EXPECT_EQ(second.asked, 819);
  EXPECT_EQ(streamed.size(), 819u);
  ASSERT_EQ(second.samples.size(), 1319u);
  std::set<std::string> keys;
  for (const auto& s : second.samples) keys.insert(s.key);
  EXPECT_EQ(keys.size(), 1319u);
  for (const auto& s : stored) EXPECT_EQ(server_->RequestsFor(std::stoi(s.key)), before[std::stoi(s.key)]) << s.key;
  // (An abandoned in-flight request of the first run may still reach the server late.)
  for (const auto& s : streamed) EXPECT_GE(server_->RequestsFor(std::stoi(s.key)), before[std::stoi(s.key)] + 1);
}

// A partial run (harness run --questions): only the listed questions reach the server, and
// each is answered as in a whole run.
TEST_F(SimEvalTest, APartialRunAsksOnlyItsQuestions) {
  const std::string url = Start(Profile("default.json", 64));
  const auto whole = Run(Options(url));
  auto o = Options(url);
  o.only = {3, 17, 1318};
  const auto before = server_->TotalRequests();
  const auto partial = Run(o);
  EXPECT_FALSE(partial.infra_error);
  EXPECT_EQ(partial.questions, 3);
  EXPECT_EQ(partial.asked, 3);
  EXPECT_EQ(server_->TotalRequests() - before, 3);
  ASSERT_EQ(partial.samples.size(), 3u);
  std::map<std::string, SampleOutcome> outcome;
  for (const auto& s : whole.samples) outcome[s.key] = s.outcome;
  for (const auto& s : partial.samples) EXPECT_EQ(s.outcome, outcome.at(s.key)) << s.key;
  o.only = {1319};
  auto bad = Gsm8kEval::Create(o);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("question 1319 is not one of the 1319"));
}

TEST_F(SimEvalTest, ResumeRejectsKeysFromAnotherDataSet) {
  const std::string url = Start(Profile("default.json", 1));
  auto eval = ValueOrThrow(Gsm8kEval::Create(Options(url)));
  auto r = eval->Run({{"2000", SampleOutcome::kCorrect, "1", "1", 0, 0}}, [](const Sample&) {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("stored sample key '2000' is not a question index"));
}

TEST_F(SimEvalTest, TooManyErrorsIsAnInfrastructureFailure) {
  auto profile = Profile("default.json", 1);
  profile.faults.http_5xx = 1;
  const std::string url = Start(profile);
  auto o = Options(url);
  o.client.max_attempts = 2;
  auto report = Run(o);
  ASSERT_TRUE(report.infra_error);
  EXPECT_EQ(report.infra_error->code, ExitCode::kInfra);
  EXPECT_THAT(report.infra_error->message, HasSubstr("HTTP 503"));
  EXPECT_LT(server_->TotalRequests(), 400);   // it stopped early instead of hammering on
}

TEST_F(SimEvalTest, SmallMaxTokensTruncates) {
  const std::string url = Start(Profile("default.json", 1));
  auto o = Options(url);
  o.client.generation.max_tokens = 20;
  auto report = Run(o);
  EXPECT_GT(report.summary.truncated_rate, 0.5);
  EXPECT_EQ(report.summary.counts.truncated + report.summary.counts.correct + report.summary.counts.wrong +
                report.summary.counts.invalid,
            1319);
}

// The answers extraction must get right (a sign, $ and .00, commas, #### before a later
// number, a cut-off answer, no number at all), answered by a scripted server.
TEST(Gsm8kEvalExtraction, PainPointsThroughALoopbackServer) {
  struct Case {
    const char* label;
    const char* text;
    const char* finish;
    const char* outcome;
    const char* extracted;
  };
  const std::vector<Case> cases = {
      {"-3", "The change is 5 - 8 = -3.\n#### -3", "stop", "correct", "-3"},   // sign kept
      {"-3", "#### 3", "stop", "wrong", "3"},                                   // and it matters
      {"18", "She makes 9 * 2 = $18.00 every day.", "stop", "correct", "18"},   // $ and .00
      {"1,450,000", "The house costs $1,450,000.", "stop", "correct", "1450000"},  // commas
      {"42", "#### 42\nCheck: 6 * 7 = 42, then 9 more", "stop", "correct", "42"},  // #### beats the last number
      {"7", "First 3 + 4 = 7, then we multiply 7 by", "length", "truncated", "7"},  // cut off
      {"5", "I cannot tell.", "stop", "invalid", ""},
  };
  const auto dir = std::filesystem::temp_directory_path() / "gsm8k_extraction_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "questions.jsonl");
    for (std::size_t i = 0; i < cases.size(); ++i)
      f << json{{"question", "Q" + std::to_string(i) + "?"}, {"answer", std::string("#### ") + cases[i].label}}.dump()
        << "\n";
  }
  httplib::Server server;
  server.set_tcp_nodelay(true);
  server.Post("/v1/completions", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string prompt = json::parse(req.body)["prompt"];
    const std::size_t i = std::stoul(prompt.substr(prompt.find("Question: Q") + 11));
    json body = {{"choices", {{{"text", cases[i].text}, {"finish_reason", cases[i].finish}}}},
                 {"usage", {{"completion_tokens", 9}}}};
    res.set_content(body.dump(), "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  auto o = Options("http://127.0.0.1:" + std::to_string(port));
  o.shots = 0;
  o.client.max_in_flight = 4;   // within cpp-httplib's listen backlog of 5
  o.questions_file = dir / "questions.jsonl";
  auto eval = ValueOrThrow(Gsm8kEval::Create(o));
  auto report = ValueOrThrow(eval->Run({}, [](const Sample&) {}));
  server.stop();
  thread.join();
  ASSERT_EQ(report.samples.size(), cases.size());
  for (const auto& s : report.samples) {
    const auto& c = cases[std::stoul(s.key)];
    EXPECT_EQ(Word(s.outcome), c.outcome) << c.text;
    EXPECT_EQ(s.extracted, c.extracted) << c.text;
    EXPECT_EQ(s.expected, c.label);
  }
  EXPECT_DOUBLE_EQ(report.summary.accuracy, 4.0 / 7.0);
  EXPECT_DOUBLE_EQ(report.summary.truncated_rate, 1.0 / 7.0);
  EXPECT_DOUBLE_EQ(report.summary.invalid_rate, 1.0 / 7.0);
}

}  // namespace
}  // namespace harness::openai
