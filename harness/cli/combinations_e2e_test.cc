// Combinations of options (issue 33), through the real binary: a partial run (--questions)
// killed mid-case, then the whole run started with --resume: it never joins the partial
// run, asks every question, and the killed partial run stays partial, apart. The endpoint
// is a stand-in served from this test process, so it counts what each question was asked.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "harness/eval/gsm8k_data.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/paths.h"
#include "runners/refstack/sim/sim_server.h"

namespace harness {
namespace combinations_e2e {

using testing_util::TempDir;
constexpr char kCase[] = "gsm8k/test_gsm8k_accuracy_0";
constexpr int kQuestions = 1319;

// The run's kCase: its samples' keys and status (no keys while it has none).
struct CaseState {
  std::set<std::string> keys;
  std::string status;
  std::optional<int64_t> partial;  // the run's partial_questions
};

CaseState StateOf(const std::string& db, int64_t run_id) {
  CaseState out;
  auto store = Store::OpenReadOnly(db);
  if (!store) return out;
  auto run = (*store)->reader().Run(run_id);
  if (!run) return out;
  out.partial = run->partial_questions;
  auto cases = (*store)->reader().Cases(run_id);
  if (!cases) return out;
  for (const auto& c : *cases) {
    if (c.result.case_id != kCase) continue;
    out.status = std::string(Word(c.result.status));
    if (auto samples = (*store)->reader().Samples(c.id))
      for (const auto& s : *samples) out.keys.insert(s.key);
  }
  return out;
}

TEST(CombinationsE2E, APartialRunKilledAndThenResumedWholeAsksEveryQuestionInARunOfItsOwn) {
  TempDir dir;
  auto profile = ValueOrThrow(sim::LoadSimProfile(GoldenDir() / "sim" / "default.json"));
  profile.first_token_s = 0.1;  // 64 questions in flight: about 2 s for the whole set
  sim::SimServer server(profile, StackConfig{}, ValueOrThrow(LoadGsm8k(Gsm8kTestFile())));
  const std::string url = ValueOrThrow(server.Start(0));
  const std::string db = (dir / "h.db").string();
  std::string keys = "# the first thousand questions\n";
  for (int i = 0; i < 1000; ++i) keys += std::to_string(i) + "\n";
  testing_util::WriteFile(dir / "questions.txt", keys);
  const std::vector<std::string> whole = {"run",        "--db", db,      "--commit", "00000001", "--suite", "gsm8k",
                                          "--stack",    "openai", "--endpoint", url,  "--model",  "refstack-sim"};
  std::vector<std::string> partial = whole;
  partial.insert(partial.end(), {"--questions", (dir / "questions.txt").string()});

  const pid_t pid = testing_util::SpawnHarness(partial);
  ASSERT_GE(pid, 0);
  for (int i = 0; i < 400 && StateOf(db, 1).keys.size() < 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const CaseState killed = StateOf(db, 1);
  ASSERT_GE(killed.keys.size(), 200u) << "the partial run never streamed its samples";
  ASSERT_LT(killed.keys.size(), 1000u) << "the partial run finished before it could be killed";
  ASSERT_EQ(killed.partial, 1000);
  const int asked_before = server.TotalRequests();

  std::vector<std::string> resume = whole;
  resume.push_back("--resume");
  auto r = testing_util::RunHarness(resume, {.timeout_s = 120});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const CaseState resumed = StateOf(db, 2);
  EXPECT_EQ(resumed.partial, std::nullopt) << "the whole run is a run of its own, not the partial one finished";
  EXPECT_EQ(resumed.status, "pass");
  EXPECT_EQ(resumed.keys.size(), static_cast<std::size_t>(kQuestions));
  for (const auto& key : killed.keys) EXPECT_EQ(server.RequestsFor(std::stoi(key)), 2) << "asked again: " << key;
  EXPECT_EQ(server.TotalRequests() - asked_before, kQuestions) << "every question asked by the whole run";
  const CaseState left = StateOf(db, 1);
  EXPECT_EQ(left.partial, 1000) << "the killed partial run stays partial";
  EXPECT_EQ(left.keys, killed.keys) << "and keeps only what it stored";

  // history shows one run at the commit: the whole one, over every question.
  auto h = testing_util::RunHarness({"history", "--case", kCase, "--db", db, "--format", "json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const Json j = testing_util::StdoutJson(h);
  ASSERT_EQ(j["commits"].size(), 1u) << h.out;
  ASSERT_EQ(j["commits"][0]["cases"].size(), 1u) << h.out;
  EXPECT_EQ(j["commits"][0]["cases"][0]["count"], 1) << h.out;
}

}  // namespace combinations_e2e
}  // namespace harness
