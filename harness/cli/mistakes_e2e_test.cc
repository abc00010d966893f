// What a person mistypes, through the real binary: an unknown command, flag or metric is
// exit 2 with the nearest known name; `harness --version` is `harness version`; compare
// names git revisions when it is given the repository.
#include <gtest/gtest.h>

#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

class MistakesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    shas_ = testing_util::MakeGitRepo(dir_ / "repo", 3);
    WriteFile(dir_ / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "metric": 0.75, "samples": 4})"));
  }
  void RunAt(const std::string& rev) {
    auto r = RunHarness({"run", "--suites-dir", (dir_ / "suites").string(), "--db", db_, "--repo",
                         (dir_ / "repo").string(), "--commit", rev});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  TempDir dir_;
  std::vector<std::string> shas_;
  std::string db_ = (dir_ / "h.db").string();
};

TEST_F(MistakesE2E, VersionFlagPrintsWhatTheVersionCommandPrints) {
  auto flag = RunHarness({"--version"});
  auto command = RunHarness({"version"});
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out, command.out);
  EXPECT_EQ(flag.out.rfind(std::string("harness ") + kHarnessVersion + "\n", 0), 0u) << flag.out;
}

TEST_F(MistakesE2E, AnUnknownFlagNamesTheNearestFlagOfItsCommand) {
  RunAt(shas_[0]);
  auto r = RunHarness({"history", "--db", db_, "--suit", "selftest"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("unknown option '--suit' of 'history' (did you mean '--suite'?)"), std::string::npos) << r.err;
  // The flag with its value after '=' is the same flag; another command's flags are its own.
  auto eq = RunHarness({"compare", "a", "b", "--formt=json"});
  EXPECT_EQ(eq.exit_code, 2);
  EXPECT_NE(eq.err.find("unknown option '--formt' of 'compare' (did you mean '--format'?)"), std::string::npos)
      << eq.err;
  // Nothing near: the known flags are listed instead of a guess.
  auto far = RunHarness({"history", "--db", db_, "--zzzzzzzz"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_NE(far.err.find("unknown option '--zzzzzzzz' of 'history' (known: "), std::string::npos) << far.err;
  EXPECT_NE(far.err.find("--metric"), std::string::npos) << far.err;
  auto command = RunHarness({"histroy", "--db", db_});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_NE(command.err.find("unknown command 'histroy' (did you mean 'history'?)"), std::string::npos) << command.err;
}

TEST_F(MistakesE2E, AMetricNoResultStoredIsExitTwoWithTheNearestStoredOne) {
  RunAt(shas_[0]);
  auto typo = RunHarness({"history", "--db", db_, "--case", "selftest/test_outcome_0", "--metric", "valeu"});
  EXPECT_EQ(typo.exit_code, 2) << typo.out;
  EXPECT_NE(typo.err.find("--metric valeu: case 'selftest/test_outcome_0' never stored it (did you mean 'value'?)"),
            std::string::npos)
      << typo.err;
  EXPECT_EQ(typo.out, "") << "no table of dashes before the error";
  auto suite = RunHarness({"history", "--db", db_, "--suite", "selftest", "--metric", "accuracy"});
  EXPECT_EQ(suite.exit_code, 2);
  EXPECT_NE(suite.err.find("--metric accuracy: suite 'selftest' never stored it (known: value)"), std::string::npos)
      << suite.err;
  auto right = RunHarness({"history", "--db", db_, "--case", "selftest/test_outcome_0", "--metric", "value"});
  EXPECT_EQ(right.exit_code, 0) << right.err;
  EXPECT_NE(right.out.find("0.75"), std::string::npos) << right.out;
}

TEST_F(MistakesE2E, CompareNamesGitRevisionsThroughTheRepository) {
  RunAt(shas_[1]);
  WriteFile(dir_ / "suites/selftest.json", SelftestTable(R"({"outcome": "fail", "metric": 0.5, "samples": 4})"));
  auto failing = RunHarness({"run", "--suites-dir", (dir_ / "suites").string(), "--db", db_, "--repo",
                             (dir_ / "repo").string(), "--commit", shas_[2]});
  ASSERT_EQ(failing.exit_code, 1) << failing.err;
  const std::string repo = (dir_ / "repo").string();
  auto r = RunHarness({"compare", "HEAD~1", "HEAD", "--db", db_, "--repo", repo});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("PASS → FAIL"), std::string::npos) << r.out;
  auto j = testing_util::StdoutJson(RunHarness({"compare", "HEAD~1", "main", "--db", db_, "--repo", repo, "--format", "json"}));
  EXPECT_EQ(j["a"]["commit"], shas_[1]);
  EXPECT_EQ(j["b"]["commit"], shas_[2]);
  // A revision git knows but the store does not: the store's words for it.
  auto unstored = RunHarness({"compare", "HEAD~2", "HEAD", "--db", db_, "--repo", repo});
  EXPECT_EQ(unstored.exit_code, 2);
  EXPECT_NE(unstored.err.find("no stored commit matches '" + shas_[0] + "'"), std::string::npos) << unstored.err;
  // Without --repo a revision is refused, saying what would name it.
  auto bare = RunHarness({"compare", "HEAD~1", "HEAD", "--db", db_});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("a git revision such as HEAD~1 needs --repo DIR"), std::string::npos) << bare.err;
}

}  // namespace
}  // namespace harness
