// Many writers and crashes through the real binary: eight `harness run` processes on one
// database at once all succeed with every row present; kill -9 at random points of a GSM8K
// run leaves a sound database each time, and --resume completes it with exactly one
// outcome per question.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/eval/gsm8k_data.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/paths.h"
#include "runners/refstack/sim/sim_server.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;

std::string IntegrityCheck(const std::filesystem::path& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) return "cannot open";
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr);
  std::string out;
  while (sqlite3_step(st) == SQLITE_ROW) out += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

TEST(ConcurrencyE2E, EightRunsWriteOneDatabaseAtOnce) {
  TempDir dir;
  constexpr int kWriters = 8, kCases = 12, kSamples = 40, kOps = 6;
  std::string rows;
  for (int i = 0; i < kCases; ++i)
    rows += fmt::format("{}{{\"outcome\": \"pass\", \"metric\": {}, \"samples\": {}, \"ops\": {}}}", i ? "," : "", i,
                        kSamples, kOps);
  testing_util::WriteFile(dir / "suites/selftest.json", testing_util::SelftestTable(rows));
  const std::string db = (dir / "h.db").string();
  std::vector<ProcessResult> results(kWriters);
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i)
    writers.emplace_back([&, i] {
      // Half share one commit (they race to upsert it), half have their own.
      const std::string sha = i % 2 ? fmt::format("{:040x}", 0xc0ffee) : fmt::format("{:040x}", i + 1);
      results[static_cast<std::size_t>(i)] =
          RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--suite", "selftest", "--db", db, "--commit",
                      sha});
    });
  for (auto& t : writers) t.join();
  for (int i = 0; i < kWriters; ++i) {
    EXPECT_EQ(results[static_cast<std::size_t>(i)].exit_code, 0) << i << ": " << results[static_cast<std::size_t>(i)].err;
    EXPECT_EQ(results[static_cast<std::size_t>(i)].err.find("locked"), std::string::npos);
  }
  auto store = std::move(Store::OpenReadOnly(db)).value();
  std::set<int64_t> runs;
  for (int64_t id = 1; id <= kWriters; ++id) {
    auto run = store->reader().Run(id);
    ASSERT_TRUE(run.ok()) << "run " << id << " missing";
    EXPECT_EQ(run->status, RunStatus::kPass);
    auto cases = *store->reader().Cases(id);
    ASSERT_EQ(cases.size(), static_cast<std::size_t>(kCases)) << "run " << id;
    for (const auto& c : cases) {
      EXPECT_EQ(c.result.status, CaseStatus::kPass);
      EXPECT_EQ(store->reader().Samples(c.id)->size(), static_cast<std::size_t>(kSamples)) << c.result.case_id;
      EXPECT_EQ(store->reader().Ops(c.id)->size(), static_cast<std::size_t>(kOps)) << c.result.case_id;
      EXPECT_EQ(store->reader().Metrics(c.id)->size(), 1u);
    }
  }
  EXPECT_FALSE(store->reader().Run(kWriters + 1).ok());
  EXPECT_EQ(store->reader().MatchCommits(fmt::format("{:040x}", 0xc0ffee)).value().size(), 1u)
      << "one shared commit row";
  EXPECT_EQ(IntegrityCheck(db), "ok");
}

// Stored samples of the gsm8k case and the case rows of every run.
struct Stored {
  int64_t runs = 0, case_rows = 0;
  std::vector<Sample> samples;
  std::string status;
};

Stored Read(const std::string& db, const std::string& case_id) {
  Stored out;
  auto store = Store::OpenReadOnly(db);
  if (!store) return out;
  for (int64_t id = 1;; ++id) {
    auto run = (*store)->reader().Run(id);
    if (!run) break;
    ++out.runs;
    const auto cases = (*store)->reader().Cases(id).value();
    for (const auto& c : cases) {
      if (c.result.case_id != case_id) continue;
      ++out.case_rows;
      out.status = std::string(Word(c.result.status));
      out.samples = *(*store)->reader().Samples(c.id);
    }
  }
  return out;
}

// The finished run: one run, one row of the case, and one stored outcome per question.
void ExpectOneOutcomePerQuestion(const std::string& db, const std::string& case_id, std::size_t questions) {
  EXPECT_EQ(IntegrityCheck(db), "ok");
  const Stored all = Read(db, case_id);
  EXPECT_EQ(all.runs, 1);
  EXPECT_EQ(all.case_rows, 1);
  EXPECT_EQ(all.status, "pass");
  ASSERT_EQ(all.samples.size(), questions) << "exactly one outcome per question";
  std::set<std::string> keys, want;
  for (const auto& s : all.samples) keys.insert(s.key);
  for (std::size_t i = 0; i < questions; ++i) want.insert(std::to_string(i));
  EXPECT_EQ(keys, want);
}

TEST(CrashE2E, KillNineAtRandomPointsThenResumeGivesOneOutcomePerQuestion) {
  TempDir dir;
  testing_util::WriteFile(dir / "suites/gsm8k.json", testing_util::ReadFile(SuitesDir() / "gsm8k.json"));
  auto profile = ValueOrThrow(sim::LoadSimProfile(GoldenDir() / "sim" / "default.json"));
  profile.first_token_s = 0.15;  // 1319 questions / 64 in flight: about 3 s for a whole run
  const auto questions = ValueOrThrow(LoadGsm8k(Gsm8kTestFile()));
  sim::SimServer server(profile, StackConfig{}, questions);
  const std::string url = ValueOrThrow(server.Start(0));
  const std::string db = (dir / "h.db").string();
  const std::string case_id = "gsm8k/test_gsm8k_accuracy_0";
  std::vector<std::string> args = {"run",   "--suites-dir", (dir / "suites").string(), "--db",    db,
                                    "--commit", "00000001",    "--suite",      "gsm8k",     "--stack",     "openai",
                                    "--endpoint", url,   "--model",      "refstack-sim"};
  const unsigned seed = static_cast<unsigned>(std::random_device{}());
  std::mt19937 rng(seed);
  SCOPED_TRACE(fmt::format("kill delays from seed {}", seed));
  std::uniform_int_distribution<int> delay_ms(0, 900);
  int kills = 0;
  bool finished = false;
  for (int attempt = 0; attempt < 6 && !finished; ++attempt) {
    std::vector<std::string> a = args;
    if (attempt > 0) a.push_back("--resume");
    const pid_t pid = testing_util::SpawnHarness(a);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      ASSERT_TRUE(finished) << "the run ended on its own, but not with exit 0";
      break;
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) {  // it finished between the check and the kill
      finished = WEXITSTATUS(status) == 0;
      break;
    }
    ++kills;
    if (std::filesystem::exists(db)) {
      EXPECT_EQ(IntegrityCheck(db), "ok") << "after kill " << kills;
    }
    const Stored now = Read(db, case_id);
    EXPECT_LE(now.runs, 1) << "every --resume joined the killed run";
    EXPECT_LE(now.samples.size(), questions.size());
  }
  EXPECT_GE(kills, 3) << "the run was killed too rarely to test anything";
  if (!finished) {
    args.push_back("--resume");
    auto done = RunHarness(args, {.timeout_s = 120});
    ASSERT_EQ(done.exit_code, 0) << done.err;
  }
  ExpectOneOutcomePerQuestion(db, case_id, questions.size());
}

}  // namespace
}  // namespace harness
