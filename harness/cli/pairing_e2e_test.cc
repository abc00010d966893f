// Pairing and identity with several of everything (issue 33), through the real binary: a
// store holding two run identities (a stack config with another batch is another measured
// identity), two nightlies of one identity at one commit, and runs a bisect made between
// the nightlies. Each nightly pairs with its own identity's previous *nightly*: the report's
// "what changed since the previous nightly" with the newest earlier one, bisect --auto with
// the newest one at an earlier commit; a run's baseline is the nearest passing ancestor of
// its own identity, past a failing one and before a farther passing one.
#include <gtest/gtest.h>

#include <tuple>

#include <fmt/format.h>

#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
namespace pairing_e2e {

namespace fs = std::filesystem;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::StdoutJson;
using testing_util::TempDir;
using testing_util::WriteFile;

// A git repository of four commits and a selftest suite whose first case's outcome and
// sample count a state file decides (the stack under test changing from run to run); the
// second case always passes. Identity "a" is the default stack, identity "b" a stack config
// whose batch (measured, unlike the fault switches and where a server listens: docs/store.md)
// makes it another identity.
struct PairingE2E : ::testing::Test {
  TempDir dir;
  std::string db = (dir / "h.db").string();
  std::string repo = (dir / "repo").string();
  std::string state = (dir / "state.json").string();
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir / "repo", 4);

  void SetUp() override {
    WriteFile(dir / "suites/selftest.json",
              SelftestTable(R"({"outcome": "pass", "report_baseline": true, "state_file": ")" + state + R"("},
                               {"outcome": "pass"})"));
    WriteFile(dir / "b.json", R"({"format_version": 1, "batch": 7})");
  }

  // A run of commit i (1-based) as identity "a" or "b"; made_for non-empty: a run a bisect
  // made ($HARNESS_BISECT, as `harness bisect` sets it). Returns its JSON summary.
  Json Run(int i, const std::string& identity, const std::string& outcome, int samples = 1,
           const std::string& made_for = "") {
    WriteFile(state, fmt::format(R"({{"outcome": "{}", "samples": {}}})", outcome, samples));
    std::vector<std::string> args = {"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo", repo,
                                     "--commit", shas[i - 1], "--format", "json"};
    if (identity == "b") args.insert(args.end(), {"--stack-config", (dir / "b.json").string()});
    ProcessOptions o;
    if (!made_for.empty()) o.env = {{"HARNESS_BISECT", made_for}};
    auto r = RunHarness(args, o);
    EXPECT_EQ(r.exit_code, outcome == "pass" ? 0 : 1) << r.err;
    return StdoutJson(r);
  }
};

int64_t RunId(const Json& summary) { return summary.is_object() ? summary.value("run_id", int64_t{-1}) : -1; }

// The value of metric `name` of case `id` in a run's JSON summary (-100 when absent).
double MetricOf(const Json& summary, const std::string& id, const std::string& name) {
  if (!summary.is_object() || !summary.contains("cases")) return -100;
  for (const auto& c : summary["cases"])
    if (c["id"] == id)
      for (const auto& m : c["metrics"])
        if (m["name"] == name) return m["value"].get<double>();
  return -100;
}

// Runs in id order: the nightly at commit 3 of identity a, then at commit 3 a run a bisect
// made and b's nightly (both failing); at commit 4 a's first nightly (passing), a bisect's
// run and b's nightly (failing), and last a's second nightly at commit 4 (failing). Each of
// the failing runs in between would hide the new failure if it were taken for the previous
// nightly; the one at an earlier commit is what bisect --auto bisects from.
TEST_F(PairingE2E, EachNightlyPairsWithItsOwnIdentitysPreviousNightly) {
  ASSERT_EQ(RunId(Run(1, "a", "pass")), 1);
  const int64_t a3 = RunId(Run(3, "a", "pass"));
  Run(3, "a", "fail", 1, "session 7");
  Run(3, "b", "fail");
  const int64_t a4_first = RunId(Run(4, "a", "pass"));
  Run(4, "a", "fail", 1, "session 8");
  Run(4, "b", "fail");
  const int64_t a4_second = RunId(Run(4, "a", "fail"));
  ASSERT_EQ(a4_second, 8);

  auto report = RunHarness({"report", "--db", db, "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const Json changes = StdoutJson(report)["changes"];
  ASSERT_EQ(changes.size(), 1u) << report.out;
  EXPECT_EQ(changes[0]["kind"], "new-failure");
  EXPECT_EQ(changes[0]["case"], "selftest/test_outcome_0");
  EXPECT_EQ(changes[0]["run"], a4_second);
  EXPECT_EQ(changes[0]["before"]["run"], a4_first) << changes[0];
  EXPECT_EQ(changes[0]["before"]["status"], "pass");
  EXPECT_EQ(changes[0]["before"]["commit"], shas[3]);
  auto text = RunHarness({"report", "--db", db, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(fmt::format("new-failure FAIL selftest/test_outcome_0 at {} (run {}); previous nightly PASS "
                                      "at {} (run {})",
                                      shas[3].substr(0, 12), a4_second, shas[3].substr(0, 12), a4_first)),
            std::string::npos)
      << text.out;

  auto html = RunHarness({"report", "--db", db, "--format", "html", "--out", (dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(testing_util::ReadFile(dir / "r.html").find(fmt::format("; previous nightly: PASS in run {} at ", a4_first)),
            std::string::npos);

  // bisect --auto of a's second nightly: its previous nightly is a's at commit 3, not the
  // one at its own commit, not the bisect's run and not b's nightly there.
  auto r = RunHarness({"bisect", "--auto", "--run", std::to_string(a4_second), "--db", db, "--repo", repo,
                       "--suites-dir", (dir / "suites").string(), "--confirm", "1", "--format", "json", "--",
                       testing_util::kHarnessBinary, "run", "--db", "{db}", "--repo", repo, "--commit", "{sha}", "--suites-dir",
                       (dir / "suites").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = StdoutJson(r);
  EXPECT_EQ(j["run"], a4_second);
  EXPECT_EQ(j["previous_run"], a3) << r.out;
  EXPECT_EQ(j["previous_commit"], shas[2]);
  ASSERT_EQ(j["regressions"].size(), 1u) << r.out;
  EXPECT_EQ(j["regressions"][0]["kind"], "status");
  EXPECT_EQ(j["regressions"][0]["culprit"], shas[3]) << r.out;
}

// A run's baseline is the newest passing result on a first-parent ancestor of its identity:
// commit 1 passes with 2 samples, commit 2 with 3, commit 3 fails with 5, and b's nightly at
// commit 3 passes with 7. The run at commit 4 pairs with commit 2's 3 samples: not the
// farther pass, not the nearer failure, not the other identity. b's own run pairs with b's.
TEST_F(PairingE2E, TheBaselineIsTheNearestPassingAncestorOfTheSameIdentity) {
  Run(1, "a", "pass", 2);
  Run(2, "a", "pass", 3);
  Run(3, "a", "fail", 5);
  Run(3, "b", "pass", 7);
  const Json a = Run(4, "a", "pass", 4);
  EXPECT_EQ(MetricOf(a, "selftest/test_outcome_0", "baseline_samples"), 3) << a.dump();
  const Json b = Run(4, "b", "pass", 4);
  EXPECT_EQ(MetricOf(b, "selftest/test_outcome_0", "baseline_samples"), 7) << b.dump();
}

// Where and how a stack runs is context, what it runs is measured (store/identity_rule.cc):
// exec stacks whose cwd, device variable and timeout differ pair with each other, one whose
// command differs does not; openai stacks whose launch sections (command, env, timeouts,
// readiness path) differ pair, one serving another model does not. Each run's baseline is
// told by its sample count: the run it paired with stored as many samples as its commit.
TEST_F(PairingE2E, WhereAndHowAStackRunsIsContextWhatItRunsIsMeasured) {
  const std::string sim = testing_util::kHarnessBinary;
  const auto exec = [&](const std::string& script, const std::string& cwd, const std::string& device, int timeout) {
    fs::create_directories(dir / cwd);
    return Json{{"format_version", 1},
                {"stack", "exec"},
                {"exec", {{"command", {"sh", script}}, {"cwd", (dir / cwd).string()},
                          {"env", {{"CUDA_VISIBLE_DEVICES", device}}}, {"timeout_s", timeout}}}};
  };
  const auto openai = [&](const std::string& model, Json launch) {
    return Json{{"format_version", 1}, {"stack", "openai"}, {"openai", {{"model", model}, {"launch", std::move(launch)}}}};
  };
  const Json one = {{"command", {sim, "serve-sim", "--port", "{port}"}}, {"stop_timeout_s", 5}};
  const std::string profile = (fs::path(testing_util::kSourceRoot) / "golden/sim/default.json").string();
  const Json two = {{"command", {sim, "serve-sim", "--profile", profile, "--port", "{port}"}},
                    {"env", {{"CUDA_VISIBLE_DEVICES", "3"}}}, {"ready_timeout_s", 120}, {"ready_path", "/v1/models"}};
  // commit, stack config, samples, the samples of the baseline it must pair with (-1: none)
  const std::vector<std::tuple<int, Json, int, int>> runs = {
      {1, exec("run.sh", "w1", "0", 30), 2, -1},   {2, exec("run.sh", "w2", "1", 90), 3, 2},
      {3, exec("other.sh", "w2", "1", 90), 5, -1}, {1, openai("refstack-sim", one), 6, -1},
      {2, openai("refstack-sim", two), 7, 6},       {3, openai("other-sim", two), 8, -1}};
  for (const auto& [commit, config, samples, baseline] : runs) {
    SCOPED_TRACE(config.dump());
    WriteFile(dir / "stack.json", config.dump());
    WriteFile(state, fmt::format(R"({{"outcome": "pass", "samples": {}}})", samples));
    auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo", repo, "--commit",
                         shas[commit - 1], "--stack-config", (dir / "stack.json").string(), "--format", "json"},
                        {.cwd = dir.path()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(MetricOf(StdoutJson(r), "selftest/test_outcome_0", "baseline_samples"), baseline) << r.out;
  }
}

}  // namespace pairing_e2e
}  // namespace harness
