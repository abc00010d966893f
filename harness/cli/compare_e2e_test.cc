// `harness compare` and `harness history --suite` end to end: the real binary, a real SQLite
// file, real git repositories, the selftest suite and the reference stack's gmm suite.
#include <gtest/gtest.h>

#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

// Three commits of one repository; the state file plays the stack changing between them
// while the table (part of the run identity) stays the same.
class CompareE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    shas_ = testing_util::MakeGitRepo(dir_ / "repo", 3);
    WriteFile(dir_ / "suites/selftest.json",
              SelftestTable(R"({"outcome": "pass", "metric": 0.75, "ops": 3, "state_file": ")" + state_ + R"("},
                               {"outcome": "pass", "metric": 0.5, "samples": 20})"));
  }
  int RunAt(const std::string& sha, const std::string& state_json) {
    WriteFile(state_, state_json);
    auto r = RunHarness({"run", "--suites-dir", (dir_ / "suites").string(), "--db", db_, "--repo",
                         (dir_ / "repo").string(), "--commit", sha});
    return r.exit_code;
  }
  // Two commits stored as given (no git behind them) that share the prefix abcd.
  void StorePrefixTwins() {
    for (const char* sha : {"abcd0001", "abcd0002"})
      ASSERT_EQ(RunHarness({"run", "--suites-dir", (dir_ / "suites").string(), "--db", db_, "--repo",
                            dir_.path().string(), "--commit", sha})
                    .exit_code,
                0);
  }
  TempDir dir_;
  std::vector<std::string> shas_;
  std::string db_ = (dir_ / "h.db").string();
  std::string state_ = (dir_ / "state.json").string();
};

TEST_F(CompareE2E, StatusChangeIsExitOneAndBackIsExitZero) {
  ASSERT_EQ(RunAt(shas_[0], R"({"outcome": "pass", "samples": 10})"), 0);
  ASSERT_EQ(RunAt(shas_[1], R"({"outcome": "fail", "samples": 10})"), 1);
  ASSERT_EQ(RunAt(shas_[2], R"({"outcome": "pass", "samples": 10})"), 0);
  auto worse = RunHarness({"compare", shas_[0].substr(0, 8), shas_[1], "--db", db_});
  EXPECT_EQ(worse.exit_code, 1) << worse.err;
  EXPECT_NE(worse.out.find("selftest/test_outcome_0  PASS → FAIL  REGRESSED"), std::string::npos) << worse.out;
  EXPECT_NE(worse.out.find("paired: SAME (b=0 lost, c=0 gained of 10 paired samples, exact McNemar p=1)"),
            std::string::npos)
      << worse.out;
  auto better = RunHarness({"compare", shas_[1], shas_[2], "--db", db_});
  EXPECT_EQ(better.exit_code, 0) << better.err;
  EXPECT_NE(better.out.find("FAIL → PASS"), std::string::npos) << better.out;

  auto json = RunHarness({"compare", shas_[0], shas_[1], "--db", db_, "--format", "json"});
  EXPECT_EQ(json.exit_code, 1);
  auto j = ParseJson(json.out, "stdout");
  ASSERT_TRUE(j.ok()) << json.out;
  EXPECT_EQ((*j)["format_version"], 1);
  EXPECT_EQ((*j)["regressed"], true);
  EXPECT_EQ((*j)["a"]["commit"], shas_[0]);
  ASSERT_EQ((*j)["cases"].size(), 2u);
  EXPECT_EQ((*j)["cases"][0]["status_a"], "pass");
  EXPECT_EQ((*j)["cases"][0]["status_b"], "fail");
  EXPECT_EQ((*j)["cases"][0]["paired"]["verdict"], "SAME");
  EXPECT_EQ((*j)["cases"][0]["paired"]["p_value"], 1.0);

  // Filters: --suite and --case; runs by id (run 1 is shas_[0], run 2 is shas_[1]).
  auto one = RunHarness({"compare", shas_[0], shas_[1], "--db", db_, "--case", "selftest/*_1", "--format", "json"});
  EXPECT_EQ(one.exit_code, 0) << "the other case did not regress";
  EXPECT_EQ((*ParseJson(one.out, "stdout"))["cases"].size(), 1u);
  auto suite = RunHarness({"compare", shas_[0], shas_[1], "--db", db_, "--suite", "selftest"});
  EXPECT_EQ(suite.exit_code, 1);
  auto runs = RunHarness({"compare", "run:1", "run:2", "--db", db_});
  EXPECT_EQ(runs.exit_code, 1) << runs.err;
  EXPECT_NE(runs.out.find("A = run 1 (" + ShortSha(shas_[0]) + ")"), std::string::npos) << runs.out;
  auto env_db = RunHarness({"compare", shas_[0], shas_[1]}, {.env = {{"HARNESS_DB", db_}}});
  EXPECT_EQ(env_db.exit_code, 1) << env_db.err;
}

TEST_F(CompareE2E, OpTableChangesAreATableAndMetricsShowTheirDelta) {
  ASSERT_EQ(RunAt(shas_[0], R"({"outcome": "pass"})"), 0);
  // Another table at the next commit: one op row fewer, no samples, another metric.
  WriteFile(dir_ / "suites/selftest.json",
            SelftestTable(R"({"outcome": "pass", "metric": 0.75, "ops": 2, "samples": 0},
                             {"outcome": "pass", "metric": 0.25, "samples": 0})"));
  ASSERT_EQ(RunHarness({"run", "--suites-dir", (dir_ / "suites").string(), "--db", db_, "--repo",
                        (dir_ / "repo").string(), "--commit", shas_[1]})
                .exit_code,
            0);
  auto r = RunHarness({"compare", shas_[0], shas_[1], "--db", db_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("removed   selftest.op2.default"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CALLS A  CALLS B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metric value: 0.5 → 0.25 (-0.25)"), std::string::npos) << r.out;
}

TEST_F(CompareE2E, BadInputIsExitTwo) {
  ASSERT_EQ(RunAt(shas_[0], R"({"outcome": "pass"})"), 0);
  ASSERT_NO_FATAL_FAILURE(StorePrefixTwins());
  auto ambiguous = RunHarness({"compare", "abcd", shas_[0], "--db", db_});
  EXPECT_EQ(ambiguous.exit_code, 2);
  EXPECT_NE(ambiguous.err.find("'abcd' is ambiguous: it matches abcd0001, abcd0002"), std::string::npos)
      << ambiguous.err;
  auto unknown = RunHarness({"compare", "abcd0001", "fedcba98", "--db", db_});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no stored commit matches 'fedcba98'"), std::string::npos) << unknown.err;
  EXPECT_EQ(RunHarness({"compare", "abcd0001", "run:77", "--db", db_}).exit_code, 2);
  EXPECT_EQ(RunHarness({"compare", "abcd0001", "abcd0002", "--db", db_, "--format", "xml"}).exit_code, 2);
  EXPECT_EQ(RunHarness({"compare", "abcd0001", "abcd0002", "--db", db_, "--suite", "nope"}).exit_code, 2);
  EXPECT_EQ(RunHarness({"compare", "abcd0001", "--db", db_}).exit_code, 2) << "B is required";
  EXPECT_EQ(RunHarness({"compare", "abcd0001", "abcd0002", "--db", (dir_ / "missing.db").string()}).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing.db"));
}

// compare, report --since and bisect --good/--bad (without --repo) name a stored commit by
// one rule (docs/cli.md, "Naming a stored commit"): 4 to 64 hex digits in either case, one
// commit, and the same words for an unknown, ambiguous or malformed one.
TEST_F(CompareE2E, OneRuleNamesAStoredCommitInCompareReportAndBisect) {
  ASSERT_EQ(RunAt(shas_[0], R"({"outcome": "pass"})"), 0);
  ASSERT_NO_FATAL_FAILURE(StorePrefixTwins());
  const std::string upper = "ABCD0001";
  EXPECT_EQ(RunHarness({"compare", upper, "abcd0002", "--db", db_}).exit_code, 0);
  auto since = RunHarness({"report", "--db", db_, "--since", upper, "--format", "json"});
  EXPECT_EQ(since.exit_code, 0) << since.err;

  const std::string candidates = "is ambiguous: it matches abcd0001, abcd0002";
  const std::string malformed = ": expected a commit sha or a prefix of one (4 to 64 hex digits)";
  struct Refusal {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<std::string> bisect = {"bisect", "--case", "selftest/test_outcome_0", "--db", db_};
  auto with = [](std::vector<std::string> args, std::initializer_list<std::string> more) {
    args.insert(args.end(), more);
    return args;
  };
  for (const Refusal& r : std::vector<Refusal>{
           {{"compare", "abcd", "abcd0002", "--db", db_}, "'abcd' " + candidates},
           {{"compare", "abc", "abcd0002", "--db", db_}, "'abc'" + malformed},
           {{"report", "--db", db_, "--since", "abcd", "--format", "json"}, "--since abcd " + candidates},
           {{"report", "--db", db_, "--since", "fedcba98", "--format", "json"},
            "no stored commit matches --since fedcba98"},
           {{"report", "--db", db_, "--since", "abc", "--format", "json"}, "--since abc" + malformed},
           {with(bisect, {"--good", "abcd", "--bad", "abcd0002"}), "--good abcd " + candidates + " (or pass --repo)"},
           {with(bisect, {"--good", shas_[0], "--bad", "fedcba98"}), "no stored commit matches --bad fedcba98"},
           {with(bisect, {"--good", "abc", "--bad", "abcd0002"}), "--good abc" + malformed}}) {
    SCOPED_TRACE(r.args[0] + " " + r.message);
    auto out = RunHarness(r.args);
    EXPECT_EQ(out.exit_code, 2) << out.err;
    EXPECT_NE(out.err.find(r.message), std::string::npos) << out.err;
  }
}

TEST_F(CompareE2E, HistoryOfASuiteShowsRepeatedRunsTogether) {
  ASSERT_EQ(RunAt(shas_[0], R"({"outcome": "pass"})"), 0);
  ASSERT_EQ(RunAt(shas_[1], R"({"outcome": "pass"})"), 0);
  ASSERT_EQ(RunAt(shas_[1], R"({"outcome": "fail"})"), 1);
  auto j = RunHarness({"history", "--db", db_, "--suite", "selftest", "--metric", "value", "--last", "1",
                       "--format", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto h = ParseJson(j.out, "stdout");
  ASSERT_TRUE(h.ok()) << j.out;
  EXPECT_EQ((*h)["format_version"], 2);
  EXPECT_EQ((*h)["suite"], "selftest");
  ASSERT_EQ((*h)["commits"].size(), 1u) << "--last 1";
  EXPECT_EQ((*h)["commits"][0]["commit"], shas_[1]);
  const Json& first = (*h)["commits"][0]["cases"][0];
  EXPECT_EQ(first["case"], "selftest/test_outcome_0");
  EXPECT_EQ(first["count"], 2);
  EXPECT_EQ(first["mean"], 0.75);
  EXPECT_EQ(first["runs"][0]["status"], "pass");
  EXPECT_EQ(first["runs"][1]["status"], "fail");
  auto text = RunHarness({"history", "--db", db_, "--suite", "selftest", "--metric", "value"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("PASS,FAIL"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("mean 0.75"), std::string::npos) << text.out;
  EXPECT_EQ(RunHarness({"history", "--db", db_}).exit_code, 2) << "one of --case and --suite";
  EXPECT_EQ(RunHarness({"history", "--db", db_, "--suite", "selftest", "--case", "selftest/test_outcome_0"}).exit_code, 2);
  auto unknown = RunHarness({"history", "--db", db_, "--suite", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("known: selftest"), std::string::npos) << unknown.err;
  EXPECT_EQ(RunHarness({"history", "--db", db_, "--suite", "selftest", "--last", "0"}).exit_code, 2);
}

// The reference stack's gmm suite with and without the fusion fault: the faulted commit
// emits the unfused op, so comparing it (A) with the fixed commit (B) says the expectation
// written for A may be stale.
TEST(CompareGmmE2E, FusionFaultShowsAStaleExpectationHint) {
  TempDir dir;
  auto db = (dir / "h.db").string();
  const std::string clean = "1111111111111111111111111111111111111111";
  const std::string faulted = "2222222222222222222222222222222222222222";
  auto r1 = RunHarness({"run", "--suite", "gmm", "--db", db, "--repo", dir.path().string(), "--commit", clean});
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  auto r2 = RunHarness({"run", "--suite", "gmm", "--fault", "gmm-no-mxfp4-quant-fusion", "--db", db, "--repo",
                        dir.path().string(), "--commit", faulted});
  ASSERT_EQ(r2.exit_code, 1) << r2.err;
  auto fixed = RunHarness({"compare", faulted.substr(0, 7), clean.substr(0, 7), "--db", db});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_NE(fixed.out.find("gmm/test_qwen3_dynamic_quant_3  FAIL → PASS"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.out.find("expectation may be stale: tensor_cast.grouped_matmul_mxfp4_swiglu.default → "
                           "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default"),
            std::string::npos)
      << fixed.out;
  auto broke = RunHarness({"compare", clean, faulted, "--db", db, "--case", "gmm/test_qwen3_dynamic_quant_3",
                           "--format", "json"});
  EXPECT_EQ(broke.exit_code, 1) << broke.err;
  auto j = ParseJson(broke.out, "stdout");
  ASSERT_TRUE(j.ok()) << broke.out;
  ASSERT_EQ((*j)["cases"].size(), 1u);
  EXPECT_EQ((*j)["cases"][0]["status_b"], "fail");
  EXPECT_TRUE((*j)["cases"][0]["ops"]["stale"].empty()) << "the other direction is not a rename to a longer name";
  EXPECT_FALSE((*j)["cases"][0]["ops"]["removed"].empty());
}

}  // namespace
}  // namespace harness
