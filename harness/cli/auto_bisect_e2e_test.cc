// harness bisect --auto through the real binary: nightlies of a stack repository the test
// makes (a stack.json per commit turns a catalogued fault on from some commit), then the
// nightly's own regressions confirmed and bisected.
#include <sqlite3.h>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/store/store.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;

std::string StackJson(const std::string& fault) {
  return fault.empty() ? R"({"format_version": 1})"
                       : fmt::format(R"({{"format_version": 1, "faults": ["{}"]}})", fault);
}

// A stack repository of n commits whose stack.json turns `fault` on from commit k (1-based).
struct StackHistory {
  TempDir dir;
  std::vector<std::string> shas;
  std::string db = (dir / "h.db").string();
  std::string repo = (dir / "repo").string();

  StackHistory(int n, int k, const std::string& fault) {
    shas = testing_util::MakeGitRepo(dir / "repo", n, [&](int i) {
      return std::map<std::string, std::string>{{"stack.json", StackJson(i >= k ? fault : "")}};
    });
  }
  // A nightly of commit i (1-based): `harness run` with that commit's stack.json.
  ProcessResult Nightly(int i, std::vector<std::string> extra = {}) {
    const auto config = dir / fmt::format("stack-{}.json", i);
    auto show = RunProcess({"git", "-C", repo, "show", fmt::format("{}:stack.json", shas[i - 1])});
    testing_util::WriteFile(config, show.ok() ? show->out : "");
    std::vector<std::string> args = {"run", "--db", db, "--repo", repo, "--commit", shas[i - 1], "--stack-config",
                                     config.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args);
  }
  // The command bisect runs per commit: a nightly of that commit from its worktree.
  std::vector<std::string> Command() const {
    return {"--", testing_util::kHarnessBinary, "run", "--db", "{db}", "--repo", repo, "--commit", "{sha}", "--stack-config",
            "{worktree}/stack.json"};
  }
  ProcessResult Auto(std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"bisect", "--auto", "--db", db, "--repo", repo, "--format", "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    for (const auto& a : Command()) args.push_back(a);
    return RunHarness(args);
  }
};

struct FaultCase {
  std::string fault;
  std::string suite;    // the suite whose regression names the culprit
};

// So that ctest's listing names the fault instead of dumping the struct's bytes.
void PrintTo(const FaultCase& c, std::ostream* os) { *os << c.fault << " (" << c.suite << ")"; }

class AutoBisectFault : public testing::TestWithParam<FaultCase> {};

// Per catalogued fault: it lands between two nightlies; bisect --auto confirms the
// regression by a rerun of the bad commit and names the commit that turned it on.
TEST_P(AutoBisectFault, NamesTheCommitThatTurnedTheFaultOn) {
  const int n = 10, k = 7;
  StackHistory h(n, k, GetParam().fault);
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(n).exit_code, 1) << "the fault fails a case";
  auto r = h.Auto();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["commit"], h.shas[n - 1]);
  EXPECT_EQ(j["previous_commit"], h.shas[0]);
  ASSERT_FALSE(j["regressions"].empty()) << r.out;
  bool found = false;
  for (const auto& g : j["regressions"]) {
    EXPECT_EQ(g["confirmed"], true) << g;
    EXPECT_EQ(g["verdict"], "culprit") << g;
    EXPECT_EQ(g["culprit"], h.shas[k - 1]) << g;
    EXPECT_EQ(g["subject"], fmt::format("commit {}", k));
    EXPECT_GE(g["confidence"].get<double>(), 0.95);
    EXPECT_TRUE(g["session"].is_number()) << "every bisection is a stored session";
    found = found || g["suite"] == GetParam().suite;
  }
  EXPECT_TRUE(found) << "a regression of " << GetParam().suite << " in " << r.out;
  EXPECT_EQ(j["confirming_runs"].size(), 1u);
  EXPECT_LE(j["runs_total"].get<int>(), 20) << r.out;

  // Stored: each regression with its confirmation and session, linked to the nightly.
  auto store = Store::OpenReadOnly(h.db);
  ASSERT_TRUE(store.ok());
  auto stored = (*store)->bisect_reader().Regressions();
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), j["regressions"].size());
  for (const auto& g : *stored) {
    EXPECT_EQ(g.run_id, j["run"].get<int64_t>());
    EXPECT_EQ(g.baseline_run_id, j["previous_run"].get<int64_t>());
    EXPECT_EQ(g.confirmation, "confirmed");
    ASSERT_TRUE(g.session_id.has_value());
    auto session = (*store)->bisect_reader().BisectSession(*g.session_id);
    ASSERT_TRUE(session.ok());
    EXPECT_EQ(session->culprit, h.shas[k - 1]);
  }

  // The runs the bisection made are evidence, not nightlies: run again, it reads the same pair.
  auto again = h.Auto({"--max-runs", "0"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(testing_util::StdoutJson(again)["run"], j["run"]) << again.out;
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, AutoBisectFault,
    testing::Values(FaultCase{"sp-counts-bookkeeping-users", "sequence_parallel"},
                    FaultCase{"gmm-no-mxfp4-quant-fusion", "gmm"}, FaultCase{"graph-topo-disorder", "gmm"},
                    FaultCase{"fp8-scale-unrepaired", "gsm8k"}),
    [](const testing::TestParamInfo<FaultCase>& p) {
      std::string name;
      for (char c : p.param.fault) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

// The fp8 fault regresses GSM8K paired (b = 16, c = 0) and fails two status cases: one
// target per suite, each with its kind, both bisected within the shared budget.
TEST(AutoBisectE2E, OneTargetPerSuiteWithItsKind) {
  StackHistory h(6, 4, "fp8-scale-unrepaired");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(6).exit_code, 1);
  auto r = h.Auto();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 2u) << r.out;
  const Json& fp8 = j["regressions"][0];
  const Json& gsm = j["regressions"][1];
  EXPECT_EQ(fp8["suite"], "fp8_scale_layout");
  EXPECT_EQ(fp8["kind"], "status");
  EXPECT_EQ(fp8["cases"].size(), 2u) << "_1 and _3 regressed together: one target";
  EXPECT_EQ(gsm["suite"], "gsm8k");
  EXPECT_EQ(gsm["kind"], "paired");
  EXPECT_EQ(gsm["metric"], "accuracy");
  ASSERT_EQ(gsm["cases"].size(), 1u) << "_0 runs at M = 1, where the fault is harmless";
  EXPECT_EQ(gsm["cases"][0]["case"], "gsm8k/test_gsm8k_accuracy_1");
  for (const auto& g : j["regressions"]) EXPECT_EQ(g["culprit"], h.shas[3]) << g;
  // Asked again, the stored answer is the same answer, target by target: its kind, metric
  // and cases (a paired target beside a status one), not only its culprit.
  auto stored = h.Auto();
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  const Json again = testing_util::StdoutJson(stored);
  EXPECT_EQ(again["stored"], true) << stored.out;
  ASSERT_EQ(again["regressions"].size(), 2u) << stored.out;
  for (std::size_t i = 0; i < 2; ++i)
    for (const auto& [key, value] : j["regressions"][i].items())
      EXPECT_EQ(again["regressions"][i][key], value) << i << " " << key << ": " << stored.out;
}

// JUnit carries the culprit line in the failing GSM8K case, and none in the passing one.
void ExpectJunitCulpritLine(const std::filesystem::path& junit, const std::string& culprit12) {
  const std::string xml = testing_util::ReadFile(junit);
  const auto at = xml.find("name=\"test_gsm8k_accuracy_1\"");
  ASSERT_NE(at, std::string::npos) << xml;
  const auto culprit_line = xml.find("bisect --auto: culprit " + culprit12, at);
  EXPECT_NE(culprit_line, std::string::npos) << xml;
  EXPECT_LT(culprit_line, xml.find("</testcase>", at)) << "inside the failing testcase";
  const auto pass_case = xml.find("name=\"test_gsm8k_accuracy_0\"");
  ASSERT_NE(pass_case, std::string::npos);
  const std::string pass_block = xml.substr(pass_case, xml.find("</testcase>", pass_case) - pass_case);
  EXPECT_EQ(pass_block.find("bisect --auto"), std::string::npos) << "no culprit line on a case that did not regress";
}

// The culprit where people look: each failing case of the nightly names it in the report
// (text, JSON, HTML with the --commit-url link), the summary counts regressions with a
// culprit, JUnit carries the culprit line, and a merge keeps all of it.
TEST(AutoBisectE2E, TheCulpritInTheReportJunitAndAfterAMerge) {
  StackHistory h(7, 4, "fp8-scale-unrepaired");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(6).exit_code, 1);
  const auto junit = h.dir / "junit.xml";
  auto r = h.Auto({"--junit", junit.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string culprit12 = ShortSha(h.shas[3]);

  auto text = RunHarness({"report", "--db", h.db, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("2 regressions found by bisect --auto, 2 with a culprit"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("culprit " + culprit12 + " commit 4"), std::string::npos) << text.out;

  auto json = RunHarness({"report", "--db", h.db, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  Json rj = testing_util::StdoutJson(json);
  ASSERT_EQ(rj["failures"].size(), 3u) << "_1, _3 and gsm8k _1 fail in the nightly (not in a bisect's runs)";
  for (const auto& f : rj["failures"]) {
    EXPECT_EQ(f["culprit"]["verdict"], "culprit") << f;
    EXPECT_EQ(f["culprit"]["culprit"], h.shas[3]) << f;
    EXPECT_TRUE(f["culprit"]["session"].is_number());
  }
  EXPECT_EQ(rj["regressions_with_culprit"], 2);

  auto html = RunHarness({"report", "--db", h.db, "--commit-url", "https://git.example/c/{sha}", "--out",
                          (h.dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = testing_util::ReadFile(h.dir / "r.html");
  EXPECT_NE(page.find(R"(<p class="culprit"><strong>Culprit</strong> <a href="https://git.example/c/)" + h.shas[3]),
            std::string::npos);

  ASSERT_NO_FATAL_FAILURE(ExpectJunitCulpritLine(junit, culprit12));

  const auto merged = (h.dir / "merged.db").string();
  auto m = RunHarness({"merge", merged, h.db});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  auto again = RunHarness({"report", "--db", merged, "--format", "json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(testing_util::StdoutJson(again)["regressions_with_culprit"], 2) << again.out;

  // A night later the cases still fail: they still name the culprit found the night they broke.
  ASSERT_EQ(h.Nightly(7).exit_code, 1);
  auto later = RunHarness({"report", "--db", h.db, "--format", "json"});
  ASSERT_EQ(later.exit_code, 0) << later.err;
  const Json lj = testing_util::StdoutJson(later);
  ASSERT_EQ(lj["failures"].size(), 3u) << later.out;
  for (const auto& f : lj["failures"]) EXPECT_EQ(f["culprit"]["culprit"], h.shas[3]) << f;

  // The nightlies a regression compared keep their samples when the store is pruned.
  auto prune = RunHarness({"prune", "--db", h.db, "--keep-nightlies", "1", "--dry-run"});
  ASSERT_EQ(prune.exit_code, 0) << prune.err;
  EXPECT_NE(prune.out.find("regression 1"), std::string::npos) << prune.out;
}

// A regression the rerun of the bad commit does not show is stored and reported as not
// confirmed, and never bisected: here the nightly ran with a fault switch the commit's own
// stack.json does not have (as a flaky machine would), so the confirming rerun is healthy.
TEST(AutoBisectE2E, ARegressionTheRerunDoesNotShowIsNotConfirmedAndNotBisected) {
  StackHistory h(6, 100, "");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(6, {"--fault", "sp-counts-bookkeeping-users"}).exit_code, 1);
  auto r = h.Auto();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 1u) << r.out;
  const Json& g = j["regressions"][0];
  EXPECT_EQ(g["confirmed"], false);
  EXPECT_EQ(g["verdict"], "not-confirmed");
  EXPECT_TRUE(g["session"].is_null()) << "never bisected";
  EXPECT_TRUE(g["culprit"].is_null());
  EXPECT_EQ(j["runs_total"], 1) << "the confirming rerun only";
  auto store = Store::OpenReadOnly(h.db);
  ASSERT_TRUE(store.ok());
  auto sessions = (*store)->bisect_reader().BisectSessionIds();
  ASSERT_TRUE(sessions.ok());
  EXPECT_TRUE(sessions->empty());
  auto stored = (*store)->bisect_reader().Regressions();
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ(stored->front().confirmation, "not-confirmed");

  auto text = RunHarness({"bisect", "--auto", "--db", h.db, "--repo", h.repo, "--max-runs", "1", "--", testing_util::kHarnessBinary,
                          "run", "--db", "{db}", "--repo", h.repo, "--commit", "{sha}"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("NOT CONFIRMED (flaky)"), std::string::npos) << text.out;

  // The morning report says the same of the failure, in every format: not confirmed, flaky,
  // not bisected (neither a culprit nor an open question).
  const std::string words = "not confirmed (flaky): a rerun of the bad commit did not show the regression";
  auto report_json = RunHarness({"report", "--db", h.db, "--format", "json"});
  ASSERT_EQ(report_json.exit_code, 0) << report_json.err;
  const Json rj = testing_util::StdoutJson(report_json);
  ASSERT_EQ(rj["regressions"].size(), 1u) << report_json.out;
  EXPECT_EQ(rj["regressions"][0]["bisect"]["verdict"], "not-confirmed") << report_json.out;
  EXPECT_EQ(rj["regressions_with_culprit"], 0);
  ASSERT_FALSE(rj["failures"].empty()) << report_json.out;
  for (const auto& f : rj["failures"]) EXPECT_EQ(f["culprit"]["verdict"], "not-confirmed") << f;
  for (const auto& [format, shown] :
       {std::pair<std::string, std::string>{"text", words},
        {"markdown", "not confirmed \\(flaky\\)\\: a rerun of the bad commit did not show the regression"}}) {
    auto report = RunHarness({"report", "--db", h.db, "--format", format});
    ASSERT_EQ(report.exit_code, 0) << format << ": " << report.err;
    EXPECT_NE(report.out.find(shown), std::string::npos) << format << ": " << report.out;
  }
  auto html = RunHarness({"report", "--db", h.db, "--out", (h.dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = testing_util::ReadFile(h.dir / "r.html");
  EXPECT_NE(page.find(R"(<p class="culprit flaky">)" + words), std::string::npos) << "the failure's note is the flaky kind";
}

// A budget too small for the search is ambiguous with a range that holds the culprit, never
// a wrong culprit.
TEST(AutoBisectE2E, ABudgetTooSmallIsAmbiguousWithItsRangeNeverAWrongCulprit) {
  const int n = 24, k = 13;
  StackHistory h(n, k, "sp-counts-bookkeeping-users");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(n).exit_code, 1);
  auto r = h.Auto({"--max-runs", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 1u) << r.out;
  const Json& g = j["regressions"][0];
  EXPECT_EQ(g["verdict"], "ambiguous") << g;
  EXPECT_TRUE(g["culprit"].is_null());
  const auto range = g["range"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(range.begin(), range.end(), h.shas[k - 1]), range.end()) << g;
  EXPECT_LE(j["runs_total"].get<int>(), 3);
}

// Two confirmed regressions share one budget (issue 33): the fp8 fault fails fp8_scale_layout
// by status and gsm8k by its paired verdict. --max-runs 5 is one confirming rerun and two
// runs each: neither target gets the whole rest, each is ambiguous with a range holding the
// culprit, and both are reported.
TEST(AutoBisectE2E, TwoConfirmedRegressionsShareTheBudgetEqually) {
  const int n = 24, k = 13;
  StackHistory h(n, k, "fp8-scale-unrepaired");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(n).exit_code, 1);
  auto r = h.Auto({"--max-runs", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 2u) << r.out;
  for (const auto& g : j["regressions"]) {
    EXPECT_EQ(g["confirmed"], true) << g;
    EXPECT_EQ(g["verdict"], "ambiguous") << g;
    EXPECT_EQ(g["runs"], 2) << "an equal share of what the confirmation left: " << g;
    const auto range = g["range"].get<std::vector<std::string>>();
    EXPECT_NE(std::find(range.begin(), range.end(), h.shas[k - 1]), range.end()) << g;
  }
  EXPECT_EQ(j["runs_total"], 5) << r.out;
}

// A budget that ends among the confirming reruns (--confirm 2, --max-runs 1): one rerun runs,
// and each of the two regressions is reported as not confirmed for want of runs, never
// bisected, never dropped.
TEST(AutoBisectE2E, ABudgetSpentWhileConfirmingReportsEveryRegressionAsNotReached) {
  StackHistory h(4, 3, "fp8-scale-unrepaired");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(4).exit_code, 1);
  auto r = h.Auto({"--max-runs", "1", "--confirm", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["runs_total"], 1) << r.out;
  EXPECT_EQ(j["confirming_runs"].size(), 1u) << r.out;
  ASSERT_EQ(j["regressions"].size(), 2u) << r.out;
  for (const auto& g : j["regressions"]) {
    EXPECT_EQ(g["confirmed"], false) << g;
    EXPECT_EQ(g["confirmation"], "not-tried") << g;
    EXPECT_EQ(g["verdict"], "ambiguous") << g;
    EXPECT_EQ(g["reason"], "--max-runs spent before it was confirmed") << g;
    EXPECT_TRUE(g["session"].is_null()) << g;
  }
}

// One commit apart: after the confirmation that commit is the culprit. The confirming
// rerun's progress line (stderr, a pipe: a line per event) says what it showed.
TEST(AutoBisectE2E, NightliesOneCommitApartNameTheBadCommit) {
  StackHistory h(2, 2, "graph-topo-disorder");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(2).exit_code, 1);
  auto r = h.Auto();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 1u) << r.out;
  EXPECT_EQ(j["regressions"][0]["culprit"], h.shas[1]) << r.out;
  EXPECT_NE(r.err.find("bisect --auto confirm 1: " + ShortSha(h.shas[1]) + " reproduced 1 of 1 regressions"),
            std::string::npos)
      << r.err;
  // Its start is told as a confirming rerun's (not as a bisect step's), before its end.
  const auto start = r.err.find("bisect --auto confirm 1: rerunning the bad commit " + ShortSha(h.shas[1]));
  EXPECT_NE(start, std::string::npos) << r.err;
  EXPECT_LT(start, r.err.find("bisect --auto confirm 1: " + ShortSha(h.shas[1]) + " reproduced")) << r.err;
}

// --max-culprits reaches each bisection bisect --auto starts: its session's log names it (so
// a replay searches for as many), out of range it is exit 2. A stored answer whose list of
// culprits is malformed is still the answer: a warning on stderr says what could not be read.
TEST(AutoBisectE2E, MaxCulpritsReachesEachBisectionAndAMalformedStoredListIsAWarning) {
  StackHistory h(8, 5, "graph-topo-disorder");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(8).exit_code, 1);
  auto wide = h.Auto({"--max-culprits", "4"});
  EXPECT_EQ(wide.exit_code, 2) << wide.err;
  EXPECT_NE(wide.err.find("--max-culprits"), std::string::npos) << wide.err;
  auto r = h.Auto({"--max-culprits", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 1u) << r.out;
  EXPECT_EQ(j["regressions"][0]["culprit"], h.shas[4]) << r.out;
  const std::string session = std::to_string(j["regressions"][0]["session"].get<int64_t>());
  auto log = RunHarness({"bisect", "log", session, "--db", h.db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  const std::string header = log.out.substr(0, log.out.find('\n'));
  EXPECT_NE(header.find("\"max_culprits\":2"), std::string::npos) << header;

  testing_util::ExecSql(h.db, "UPDATE bisect_sessions SET result_json = json_set(result_json, '$.changes', "
                              "json('[{\"commit\": 5}]')) WHERE id = " + session);
  auto stored = h.Auto();
  ASSERT_EQ(stored.exit_code, 0) << stored.err;
  EXPECT_EQ(testing_util::StdoutJson(stored)["regressions"][0]["culprit"], h.shas[4]) << stored.out;
  EXPECT_NE(stored.err.find("warning: bisect session " + session +
                            ": changes[0].commit is missing or not a string: its culprits beyond the first are not shown"),
            std::string::npos)
      << stored.err;
  auto report = RunHarness({"report", "--db", h.db, "--format", "text"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.err.find("warning: bisect session " + session + ": changes[0].commit"), std::string::npos)
      << report.err;
  EXPECT_NE(report.out.find("culprit " + ShortSha(h.shas[4])), std::string::npos) << report.out;
}

// The noisy stand-in with no fault: nightlies differ only by rerun noise, and nothing is
// bisected: a paired verdict of noise alone is rare, and the confirming rerun stops it.
// The regressed cases' suites' "watch" lists are what their bisections watch: here the
// sequence_parallel table watches stack.json, which only the commit that turns the fault on
// changes; each session's log names the list, and the culprit is found.
TEST(AutoBisectE2E, TheRegressedCasesSuitesWatchListsAreWatched) {
  const int n = 10, k = 7;
  StackHistory h(n, k, "sp-counts-bookkeeping-users");
  const auto suites = h.dir / "suites";
  std::filesystem::create_directories(suites);
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(testing_util::kSourceRoot) / "suites")) {
    if (e.path().extension() != ".json") continue;
    auto table = ParseJson(testing_util::ReadFile(e.path()), e.path().string());
    ASSERT_TRUE(table.ok());
    if ((*table)["suite"] == "sequence_parallel") (*table)["watch"] = Json{"stack.json"};
    testing_util::WriteFile(suites / e.path().filename(), table->dump(2));
  }
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(n).exit_code, 1);
  auto r = h.Auto({"--suites-dir", suites.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  int watched = 0;
  for (const auto& g : j["regressions"]) {
    EXPECT_EQ(g["culprit"], h.shas[k - 1]) << g;
    auto log = RunHarness({"bisect", "log", std::to_string(g["session"].get<int>()), "--db", h.db});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    const bool sp = g["suite"] == "sequence_parallel";
    EXPECT_EQ(log.out.find(R"("watch":["stack.json"])") != std::string::npos, sp) << log.out;
    watched += sp;
  }
  EXPECT_EQ(watched, 1) << r.out;
}

TEST(AutoBisectE2E, ANoisyHistoryWithoutAFaultHasNoCulprit) {
  StackHistory h(4, 100, "");
  const auto suites = testing_util::WriteGsm8kTableWithProfile(h.dir.path(), "sim/noisy.json");
  for (int i : {1, 4}) ASSERT_NE(h.Nightly(i, {"--suite", "gsm8k", "--suites-dir", suites.string()}).exit_code, 3);
  auto args = std::vector<std::string>{"bisect", "--auto", "--db", h.db, "--repo", h.repo, "--suites-dir",
                                       suites.string(), "--format", "json", "--", testing_util::kHarnessBinary, "run", "--db", "{db}",
                                       "--repo", h.repo, "--commit", "{sha}", "--suite", "gsm8k", "--suites-dir",
                                       suites.string()};
  auto r = RunHarness(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  for (const auto& g : j["regressions"]) EXPECT_TRUE(g["culprit"].is_null()) << g;
}

// ci/nightly.sh's shape on the noisy stand-in: each nightly has a nightly id and reruns its
// AT-RISK cases under the same id. The reruns are neither the nightly's cases (the report
// counts each case once) nor what bisect --auto compares: the nightly's own paired
// REGRESSED is found, whatever a rerun said.
TEST(AutoBisectE2E, RerunsSharingTheNightlyIdAreNotTheNightly) {
  StackHistory h(4, 3, "fp8-scale-unrepaired");
  const auto suites = testing_util::WriteGsm8kTableWithProfile(h.dir.path(), "sim/noisy.json");
  for (int i : {1, 4}) {
    auto run = h.Nightly(i, {"--suite", "gsm8k", "--suites-dir", suites.string(), "--nightly", fmt::format("n{}", i),
                             "--rerun-at-risk", "2", "--seed", std::to_string(40 + i)});
    ASSERT_NE(run.exit_code, 3) << run.err;
  }
  auto report = RunHarness({"report", "--db", h.db, "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const Json summary = testing_util::StdoutJson(report)["summary"][0];
  EXPECT_EQ(summary["pass"].get<int>() + summary["fail"].get<int>() +
                summary["error"].get<int>(),
            2)
      << "two cases, each counted once: " << summary;

  auto r = RunHarness({"bisect", "--auto", "--db", h.db, "--repo", h.repo, "--suites-dir", suites.string(), "--format",
                       "json", "--", testing_util::kHarnessBinary, "run", "--db", "{db}", "--repo", h.repo, "--commit", "{sha}",
                       "--stack-config", "{worktree}/stack.json", "--suite", "gsm8k", "--suites-dir", suites.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 1u) << r.out;
  EXPECT_EQ(j["regressions"][0]["kind"], "paired");
  EXPECT_EQ(j["regressions"][0]["culprit"], h.shas[2]) << r.out;
}

TEST(AutoBisectE2E, NoEarlierNightlyIsAnAnswerAndBadInputIsExit2) {
  StackHistory h(3, 100, "");
  ASSERT_EQ(h.Nightly(3).exit_code, 0);
  auto r = h.Auto();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  EXPECT_TRUE(j["previous_run"].is_null());
  EXPECT_TRUE(j["regressions"].empty());
  auto longest = h.Auto({"--timeout", "86400"});
  EXPECT_EQ(longest.exit_code, 0) << "a timeout of a day is in range: " << longest.err;

  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"bisect", "--auto", "--db", h.db},                                         // no command
           {"bisect", "--auto", "--db", h.db, "--timeout", "86401", "--", "true"},
           {"bisect", "--auto", "--db", h.db, "--timeout", "0", "--", "true"},
           {"bisect", "--auto", "--db", h.db, "--good", h.shas[0], "--", "true"},      // --good with --auto
           {"bisect", "--auto", "--db", h.db, "--confirm", "-1", "--", "true"},
           {"bisect", "--auto", "--db", h.db, "--run", "99", "--", "true"},            // no such run
           {"bisect", "--good", h.shas[0], "--bad", h.shas[2], "--db", h.db, "--confirm", "2", "--", "true"}}) {
    auto e = RunHarness(bad);
    EXPECT_EQ(e.exit_code, 2) << fmt::format("{}", fmt::join(bad, " ")) << e.err;
    EXPECT_FALSE(e.err.empty());
  }
}

// A command that dies on the confirming rerun is no answer: exit 3; the nightly is kept.
TEST(AutoBisectE2E, ACommandThatCrashesIsExit3) {
  StackHistory h(3, 3, "sp-counts-bookkeeping-users");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(3).exit_code, 1);
  auto r = RunHarness({"bisect", "--auto", "--db", h.db, "--repo", h.repo, "--", "sh", "-c", "exit 200"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("exited 200"), std::string::npos) << r.err;
}

// Writes past the schema's CHECKs on the stored words, as another tool or a damaged file would.
void ExecOn(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  const std::string unchecked = "PRAGMA ignore_check_constraints = ON; " + sql;
  EXPECT_EQ(sqlite3_exec(h, unchecked.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h) << "\n" << sql;
  sqlite3_close(h);
}

// --run names the nightly; one still running (or killed before it finished) is no nightly
// to pair: a usage error naming it, before any step. Of two, the finished one is taken.
TEST(AutoBisectE2E, ARunThatHasNotFinishedIsRefusedByNameAndAFinishedOneIsTaken) {
  StackHistory h(3, 100, "");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(3).exit_code, 0);
  ExecOn(h.db, "UPDATE runs SET status = 'running' WHERE id = 2");
  auto refused = h.Auto({"--run", "2"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("--run 2: the run has not finished"), std::string::npos) << refused.err;
  EXPECT_TRUE(refused.out.empty()) << refused.out;

  auto taken = h.Auto({"--run", "1"});
  ASSERT_EQ(taken.exit_code, 0) << taken.err;
  Json j = testing_util::StdoutJson(taken);
  EXPECT_EQ(j["run"], 1) << taken.out;
  EXPECT_TRUE(j["previous_run"].is_null()) << taken.out;
}

// A stored word bisect does not know (a regression's kind or confirmation, a session's
// status: another tool's, a damaged row) is an error naming it, exit 3, never read as some
// default: a kind 'gates' was read as the target's own kind, and answered. The schema's
// CHECKs guard confirmation and status too: a writer's check of the file (PRAGMA
// quick_check) refuses it first, while a reader (bisect log) reaches bisect's own word
// table. Either way the stored answer stays as it was, and read back restored it works.
TEST(AutoBisectE2E, AStoredWordOutsideItsTableIsAnErrorNamingIt) {
  StackHistory h(6, 100, "");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(6, {"--fault", "sp-counts-bookkeeping-users"}).exit_code, 1);
  auto first = h.Auto();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(testing_util::StdoutJson(first)["regressions"].size(), 1u) << first.out;
  // A session of this database: a bisect on the stored runs alone.
  auto plain = RunHarness({"bisect", "--good", h.shas[0], "--bad", h.shas[5], "--case",
                           "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0", "--db", h.db, "--format", "json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const int64_t session = testing_util::StdoutJson(plain)["session"].get<int64_t>();

  struct Damage {
    std::string sql, restore, named;
  };
  for (const Damage& d : std::vector<Damage>{
           {"UPDATE regressions SET kind = 'gates\x1b[31m <b>'", "UPDATE regressions SET kind = 'status'",
            "regression 1: its kind 'gates\\x1b[31m <b>' is none of status, gate, paired"},
           {"UPDATE regressions SET confirmation = 'maybe'", "UPDATE regressions SET confirmation = 'not-confirmed'",
            "CHECK constraint failed in regressions"},
           {fmt::format("UPDATE regressions SET session_id = {0}; UPDATE bisect_sessions SET status = 'done' WHERE id = {0}",
                        session),
            fmt::format("UPDATE bisect_sessions SET status = 'ambiguous' WHERE id = {}", session),
            "CHECK constraint failed in bisect_sessions"}}) {
    SCOPED_TRACE(d.sql);
    ExecOn(h.db, d.sql);
    auto r = h.Auto();
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find(d.named), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "shown as terminal text: " << r.err;
    auto store = Store::OpenReadOnly(h.db);
    ASSERT_TRUE(store.ok());
    auto rows = (*store)->bisect_reader().Regressions();
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(rows->size(), 1u) << "the stored answer is kept, not answered anew";
    ExecOn(h.db, d.restore);
    auto again = h.Auto();
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(testing_util::StdoutJson(again)["stored"], true) << again.out;
  }
  // bisect log reads the status as the same word, and names one outside the table.
  auto log = RunHarness({"bisect", "log", std::to_string(session), "--db", h.db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_NE(log.out.find("\"status\":\"ambiguous\""), std::string::npos) << log.out;
  ExecOn(h.db, fmt::format("UPDATE bisect_sessions SET status = 'Ambiguous' WHERE id = {}", session));
  log = RunHarness({"bisect", "log", std::to_string(session), "--db", h.db});
  EXPECT_EQ(log.exit_code, 3) << log.out;
  EXPECT_NE(log.err.find(fmt::format("bisect session {}: its status 'Ambiguous' is none of culprit, no-culprit, "
                                     "ambiguous, running, error",
                                     session)),
            std::string::npos)
      << log.err;
  EXPECT_TRUE(log.out.empty()) << "no log of a session whose status does not read: " << log.out;
}

// The report reads the same stored words through the same tables, once, where it loads its
// rows; one outside its table is what the report does with any row it cannot read: a
// warning on stderr naming the row, the column and the word, and the rest of the report
// (exit 0). A session whose status does not read is shown as stored (escaped) and names no
// culprit, so the regression it answered is ambiguous; a confirmation that does not read is
// not-tried (before, the word passed through as the note's verdict, without a warning).
TEST(AutoBisectE2E, TheReportWarnsOfAStoredWordOutsideItsTableAndShowsTheRest) {
  StackHistory h(7, 4, "fp8-scale-unrepaired");
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(6).exit_code, 1);
  ASSERT_EQ(h.Auto().exit_code, 0);
  ExecOn(h.db, "UPDATE bisect_sessions SET status = 'Culprit\x1b[31m <b>'");
  auto json = RunHarness({"report", "--db", h.db, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  for (const char* session : {"1", "2"})
    EXPECT_NE(json.err.find(fmt::format("harness: warning: damaged database: bisect session {}: its status "
                                        "'Culprit\\x1b[31m <b>' is none of culprit, no-culprit, ambiguous, running, "
                                        "error: the report shows it as stored and names no culprit of it\n",
                                        session)),
              std::string::npos)
        << json.err;
  EXPECT_EQ(json.err.find('\x1b'), std::string::npos) << "shown as terminal text: " << json.err;
  const Json rj = testing_util::StdoutJson(json);
  EXPECT_EQ(rj["regressions_with_culprit"], 0) << json.out;
  ASSERT_EQ(rj["failures"].size(), 3u) << json.out;
  for (const auto& f : rj["failures"]) EXPECT_EQ(f["culprit"]["verdict"], "ambiguous") << f;
  ASSERT_EQ(rj["bisect"].size(), 2u) << json.out;
  EXPECT_EQ(rj["bisect"][0]["status"], "Culprit\x1b[31m <b>") << "as stored";
  auto html = RunHarness({"report", "--db", h.db, "--out", (h.dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = testing_util::ReadFile(h.dir / "r.html");
  EXPECT_NE(page.find("[31m &lt;b&gt;"), std::string::npos) << "escaped as stored";
  EXPECT_EQ(page.find("[31m <b>"), std::string::npos);
  EXPECT_EQ(page.find("<strong>Culprit</strong>"), std::string::npos) << "no culprit named";
  auto md = RunHarness({"report", "--db", h.db, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.find("culprit `"), std::string::npos) << md.out;

  ExecOn(h.db, "UPDATE bisect_sessions SET status = 'culprit'; UPDATE regressions SET confirmation = 'maybe', "
               "session_id = NULL");
  auto text = RunHarness({"report", "--db", h.db, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* regression : {"1", "2"})
    EXPECT_NE(text.err.find(fmt::format("harness: warning: damaged database: regression {}: its confirmation 'maybe' "
                                        "is none of confirmed, not-confirmed, not-tried: the report reads it as "
                                        "not-tried\n",
                                        regression)),
              std::string::npos)
        << text.err;
  EXPECT_NE(text.out.find("bisect ambiguous: the budget ran out before the regression was confirmed"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("2 regressions found by bisect --auto, 0 with a culprit"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace harness
