// The gsm8k suite through the real binary: kill -9 a run mid-case, then --resume asks
// only the questions the killed run had not stored. The endpoint is a stand-in served
// from this test process, so it can count what each question was asked.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "harness/eval/gsm8k_data.h"
#include "harness/util/paths.h"
#include "harness/store/store.h"
#include "harness/util/subprocess.h"
#include "harness/util/test_util.h"
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

}  // namespace
}  // namespace harness
