// The gsm8k suite through the real binary: kill -9 a run mid-case, then --resume asks
// only the questions the killed run had not stored (the endpoint is a stand-in served
// from this test process, so it can count what each question was asked); reruns of the
// noisy stand-in pair as baselines and disagree only when their --seed differs; a partial
// run (--questions) asks only its questions and is nobody's baseline.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
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
  auto run = (*store)->reader().Run(0);
  if (!run) return {};
  auto cases = (*store)->reader().Cases(run->id);
  if (!cases) return {};
  for (const auto& c : *cases) {
    if (c.result.case_id != case_id) continue;
    if (status) *status = std::string(Word(c.result.status));
    auto samples = (*store)->reader().Samples(c.id);
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

// The metrics of the first case of a `--format json` summary, by name.
std::map<std::string, Json> SummaryMetrics(const std::string& out) {
  std::map<std::string, Json> metrics;
  auto j = ParseJson(out, "harness run stdout");
  if (j.ok() && !(*j)["cases"].empty())
    for (const auto& m : (*j)["cases"][0]["metrics"]) metrics[m["name"].get<std::string>()] = m;
  return metrics;
}

// harness run --questions FILE: only the listed questions are asked and stored; the run is
// stored partial, judged by no gate and paired with no baseline, and the whole run of the
// next commit pairs with the whole run before it, not with the newer partial one.
TEST(Gsm8kE2E, APartialRunAsksOnlyItsQuestionsAndIsNobodysBaseline) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 2);
  const std::string db = (dir / "h.db").string();
  auto run = [&](const std::string& sha, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run",     "--db",    db,      "--repo", (dir / "repo").string(), "--commit", sha,
                                     "--suite", "gsm8k", "--filter", "gsm8k/*_1", "--format",            "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing_util::RunHarness(args);
  };
  auto whole = run(shas[0], {});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  testing_util::WriteFile(dir / "q.txt", "# three questions\n1318\n5\n\n17  # and a comment\n");
  auto partial = run(shas[0], {"--questions", (dir / "q.txt").string()});
  ASSERT_EQ(partial.exit_code, 0) << partial.err;
  const Json pj = testing_util::StdoutJson(partial);
  EXPECT_EQ(pj["partial_questions"], 3) << partial.out;
  auto metrics = SummaryMetrics(partial.out);
  EXPECT_EQ(metrics.at("accuracy")["n"], 3) << partial.out;
  EXPECT_EQ(metrics.count("gate_verdict"), 0u) << "no gate judges a partial run: " << partial.out;
  EXPECT_EQ(metrics.count("baseline_verdict"), 0u) << "nor a baseline: " << partial.out;
  EXPECT_NE(pj["cases"][0]["message"].get<std::string>().find("partial run: 3 of 1319 questions"), std::string::npos)
      << partial.out;
  {
    auto store = std::move(Store::OpenReadOnly(db)).value();
    const RunRow stored = *store->reader().Run(pj["run_id"].get<int64_t>());
    EXPECT_EQ(stored.partial_questions, 3);
    std::vector<std::string> keys;
    const auto samples = store->reader().Samples(store->reader().Cases(stored.id)->at(0).id);
    ASSERT_TRUE(samples.ok());
    for (const auto& s : *samples) keys.push_back(s.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"1318", "17", "5"})) << "only the listed questions, by key";
  }
  // A file naming every question ('*') asks for a whole run: gated, and paired with the
  // whole run before it, not with the newer partial one.
  testing_util::WriteFile(dir / "all.txt", "*\n");
  auto next = run(shas[1], {"--questions", (dir / "all.txt").string()});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  EXPECT_TRUE(testing_util::StdoutJson(next)["partial_questions"].is_null()) << next.out;
  auto paired = SummaryMetrics(next.out);
  EXPECT_EQ(paired.count("gate_verdict"), 1u) << next.out;
  EXPECT_EQ(paired.at("baseline_paired")["value"], 1319) << "paired with the whole run: " << next.out;
}

TEST(Gsm8kE2E, ABadQuestionsFileIsExit2NamingFileAndLine) {
  TempDir dir;
  const std::string q = (dir / "q.txt").string();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"1\n2\n1319\n", q + ":3: '1319' is not a question key"},
      {"4\n# again\n4\n", q + ":3: question 4 again (first on line 1)"},
      {"# nothing\n", "--questions " + q + ": lists no question"},
  };
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--db", (dir / "h.db").string(), "--commit", "00000001", "--questions", q};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing_util::RunHarness(args);
  };
  for (const auto& [text, message] : bad) {
    testing_util::WriteFile(dir / "q.txt", text);
    auto r = run({"--suite", "gsm8k"});
    EXPECT_EQ(r.exit_code, 2) << text << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  std::filesystem::remove(dir / "q.txt");
  auto missing = run({"--suite", "gsm8k"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("--questions " + q + ": cannot open"), std::string::npos) << missing.err;
  testing_util::WriteFile(dir / "q.txt", "1\n");
  auto other = run({"--suite", "sequence_parallel"});
  EXPECT_EQ(other.exit_code, 2) << other.err;
  EXPECT_NE(other.err.find("only the gsm8k suite evaluates questions"), std::string::npos) << other.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "h.db")) << "refused before the database was opened";
  auto resume = run({"--suite", "gsm8k", "--resume"});
  EXPECT_EQ(resume.exit_code, 2) << resume.err;
  EXPECT_NE(resume.err.find("a partial run is never resumed"), std::string::npos) << resume.err;
}

// Which suites take --questions is the tables' word, not a suite name in the CLI: a
// selftest table that says "evaluates_questions" is let through (stored partial), the same
// table without it is refused naming the case, before any database is opened.
TEST(Gsm8kE2E, TheSuiteTablesSayWhichSuitesTakeQuestions) {
  TempDir dir;
  testing_util::WriteFile(dir / "q <\"1\">.txt", "1\n");
  const std::string q = (dir / "q <\"1\">.txt").string();
  auto run = [&](const std::string& db) {
    return testing_util::RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", (dir / db).string(),
                                     "--commit", "00000001", "--repo", dir.path().string(), "--questions", q,
                                     "--format", "json"});
  };
  std::string table = testing_util::SelftestTable(R"({"outcome": "pass"})");
  testing_util::WriteFile(dir / "suites/selftest.json", table);
  auto refused = run("refused.db");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("--questions " + q + ": no suite table says \"evaluates_questions\": true, and "
                             "selftest/test_outcome_0 is selected"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "refused.db"));
  table.replace(table.find(R"("nightly": true,)"), 16, R"("nightly": true, "evaluates_questions": true,)");
  testing_util::WriteFile(dir / "suites/selftest.json", table);
  auto taken = run("taken.db");
  ASSERT_EQ(taken.exit_code, 0) << taken.err;
  auto summary = ParseJson(taken.out, "stdout");
  ASSERT_TRUE(summary.ok()) << taken.out;
  EXPECT_EQ((*summary)["partial_questions"], 1) << taken.out;
}

}  // namespace
}  // namespace harness
