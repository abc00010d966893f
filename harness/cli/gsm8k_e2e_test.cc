// The gsm8k suite through the real binary: kill -9 a run mid-case, then --resume asks
// only the questions the killed run had not stored (the endpoint is a stand-in served
// from this test process, so it can count what each question was asked); reruns of the
// noisy stand-in pair as baselines and disagree only when their --seed differs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "harness/eval/gsm8k_data.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/paths.h"
#include "harness/util/subprocess.h"
#include "runners/refstack/sim/sim_server.h"

namespace harness {
namespace {

using testing_util::TempDir;

// Samples stored so far for the case in the newest run (0 while there is none).
std::vector<Sample> StoredSamples(const std::string& db, const std::string& case_id, std::string* status = nullptr) {
  auto store = Store::Open(db);
  if (!store) return {};
  auto run = (*store)->Run(0);
  if (!run) return {};
  auto cases = (*store)->Cases(run->id);
  if (!cases) return {};
  for (const auto& c : *cases) {
    if (c.result.case_id != case_id) continue;
    if (status) *status = std::string(Word(c.result.status));
    auto samples = (*store)->Samples(c.id);
    return samples ? *samples : std::vector<Sample>{};
  }
  return {};
}

TEST(Gsm8kE2E, KillThenResumeAsksOnlyTheRest) {
  TempDir dir;
  testing_util::WriteFile(dir / "suites/gsm8k.json", testing_util::ReadFile(SuitesDir() / "gsm8k.json"));
  auto profile = ValueOrThrow(sim::LoadSimProfile(GoldenDir() / "sim" / "default.json"));
  profile.first_token_s = 0.1;   // 1319 questions / 64 in flight: about 2 s per full run
  sim::SimServer server(profile, StackConfig{}, ValueOrThrow(LoadGsm8k(Gsm8kTestFile())));
  const std::string url = ValueOrThrow(server.Start(0));
  const std::string db = (dir / "h.db").string();
  const std::string case_id = "gsm8k/test_gsm8k_accuracy_0";
  std::vector<std::string> args = {"run",   "--suites-dir", (dir / "suites").string(), "--db",    db,
                                    "--commit", "00000001",    "--suite",      "gsm8k",     "--stack",     "openai",
                                    "--endpoint", url,   "--model",      "refstack-sim"};
  const pid_t pid = testing_util::SpawnHarness(args);
  ASSERT_GE(pid, 0);
  std::size_t streamed = 0;
  for (int i = 0; i < 400 && streamed < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    streamed = StoredSamples(db, case_id).size();
  }
  kill(pid, SIGKILL);
  int wait_status = 0;
  waitpid(pid, &wait_status, 0);
  const auto killed = StoredSamples(db, case_id);
  ASSERT_GE(killed.size(), 200u) << "the case never streamed its samples";
  ASSERT_LT(killed.size(), 1319u) << "the run finished before it could be killed";

  args.push_back("--resume");
  auto resumed = testing_util::RunHarness(args, {.timeout_s = 120});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;

  std::string status;
  const auto all = StoredSamples(db, case_id, &status);
  EXPECT_EQ(status, "pass");
  ASSERT_EQ(all.size(), 1319u);
  std::set<std::string> keys;
  for (const auto& s : all) keys.insert(s.key);
  EXPECT_EQ(keys.size(), 1319u);
  // What the killed run stored was asked once and never again.
  for (const auto& s : killed) EXPECT_EQ(server.RequestsFor(std::stoi(s.key)), 1) << s.key;
  // Only the requests in flight at the kill were asked twice.
  EXPECT_LE(server.TotalRequests(), 1319 + 64);
}

// The value of a metric of the first case in a `--format json` summary (-1 when absent).
double SummaryMetric(const std::string& out, const std::string& name) {
  auto j = ParseJson(out, "harness run stdout");
  if (!j.ok() || (*j)["cases"].empty()) return -1;
  for (const auto& m : (*j)["cases"][0]["metrics"])
    if (m["name"] == name) return m["value"].get<double>();
  return -1;
}

TEST(Gsm8kE2E, NoisyStandInRerunsPairAndDifferOnlyByTheirSeed) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 1);
  // The real table with only the default profile changed (format 2 wants its params).
  testing_util::WriteGsm8kTableWithProfile(dir.path(), "sim/noisy.json");
  // Reruns on one commit: the default baseline is a strict ancestor's, so later runs name
  // the commit with --baseline (its newest finished result, never the running one).
  auto run = [&](const std::string& db_name, std::vector<std::string> seed) {
    std::vector<std::string> args = {"run", "--suites-dir", (dir / "suites").string(), "--db", (dir / db_name).string(),
                                     "--repo", (dir / "repo").string(), "--commit", shas[0], "--suite", "gsm8k",
                                     "--filter", "gsm8k/*_1", "--format", "json"};
    args.insert(args.end(), seed.begin(), seed.end());
    return testing_util::RunHarness(args);
  };
  auto first = run("a.db", {"--seed", "1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(SummaryMetric(first.out, "baseline_verdict"), -1) << "nothing to pair the first run with";

  // Another seed: the same identity, so the first run is its baseline; the noise makes
  // some questions disagree, too few for McNemar to call it anything but SAME.
  auto second = run("a.db", {"--seed", "2", "--baseline", shas[0]});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(SummaryMetric(second.out, "baseline_verdict"), 0) << second.out;   // SAME
  EXPECT_EQ(SummaryMetric(second.out, "baseline_paired"), 1319);
  const double discordant = SummaryMetric(second.out, "mcnemar_b") + SummaryMetric(second.out, "mcnemar_c");
  EXPECT_GT(discordant, 0) << second.out;
  EXPECT_LT(discordant, 60) << "rerun noise flips borderline questions, not the whole set";

  // The same seed twice answers identically.
  ASSERT_EQ(run("b.db", {"--seed", "1"}).exit_code, 0);
  auto same = run("b.db", {"--seed", "1", "--baseline", shas[0]});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_EQ(SummaryMetric(same.out, "baseline_verdict"), 0);
  EXPECT_EQ(SummaryMetric(same.out, "baseline_paired"), 1319);
  EXPECT_EQ(SummaryMetric(same.out, "mcnemar_b"), 0) << same.out;
  EXPECT_EQ(SummaryMetric(same.out, "mcnemar_c"), 0) << same.out;

  // Without --seed the seed is the run id (3 here), so a plain rerun is noisy too.
  auto derived = run("b.db", {"--baseline", shas[0]});
  ASSERT_EQ(derived.exit_code, 0) << derived.err;
  EXPECT_EQ(SummaryMetric(derived.out, "baseline_verdict"), 0);
  EXPECT_GT(SummaryMetric(derived.out, "mcnemar_b") + SummaryMetric(derived.out, "mcnemar_c"), 0) << derived.out;
}

}  // namespace
}  // namespace harness
