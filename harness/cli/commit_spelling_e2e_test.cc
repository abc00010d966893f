// One commit, one sha in the store, through the real binary: a short sha given after its full
// sha was stored (or before it) files the run under the spelling the store already has; a
// short sha two stored commits share is refused and names them (docs/cli.md, "One commit,
// one sha").
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

// Two full shas that share their first 8 digits, as two commits of a large repository may.
const std::string kFull1 = "3f2a9c10aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kFull2 = "3f2a9c10bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

class CommitSpellingE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_ / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "metric": 0.75})"));
  }
  // A run (or an import) stored without a repository that knows the commit.
  ProcessResult Run(const std::string& commit) {
    return RunHarness({"run", "--suites-dir", (dir_ / "suites").string(), "--db", db_, "--repo",
                       dir_.path().string(), "--commit", commit});
  }
  std::vector<std::string> StoredShas() {
    auto store = std::move(Store::OpenReadOnly(db_)).value();
    std::vector<std::string> shas;
    auto commits = store->reader().MatchCommits("");
    EXPECT_TRUE(commits.ok());
    if (commits.ok())
      for (const auto& c : *commits) shas.push_back(c.sha);
    return shas;
  }
  TempDir dir_;
  std::string db_ = (dir_ / "h.db").string();
};

TEST_F(CommitSpellingE2E, AShortShaAfterItsFullShaIsTheSameCommit) {
  ASSERT_EQ(Run(kFull1).exit_code, 0);
  ASSERT_EQ(Run(kFull2).exit_code, 0);
  // 3f2a9c10a is kFull1's alone; upper case is the same digits.
  auto short_sha = Run("3F2A9C10A");
  ASSERT_EQ(short_sha.exit_code, 0) << short_sha.err;
  EXPECT_EQ(StoredShas(), (std::vector<std::string>{kFull1, kFull2}));
  auto history = RunHarness({"history", "--db", db_, "--case", "selftest/test_outcome_0", "--format", "json"});
  auto j = testing_util::StdoutJson(history);
  ASSERT_EQ(j["commits"].size(), 2u) << history.out;
  EXPECT_EQ(j["commits"][0]["commit"], kFull1);
  EXPECT_EQ(j["commits"][0]["cases"][0]["count"], 2) << "both runs of kFull1 under its one sha";
}

TEST_F(CommitSpellingE2E, AShortShaTwoStoredCommitsShareIsRefusedAndNamesThem) {
  ASSERT_EQ(Run(kFull1).exit_code, 0);
  ASSERT_EQ(Run(kFull2).exit_code, 0);
  auto r = Run("3f2a9c1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("commit 3f2a9c1 is ambiguous in " + db_ + ": it matches the stored commits " + kFull1 + ", " +
                       kFull2),
            std::string::npos)
      << r.err;
  EXPECT_EQ(StoredShas(), (std::vector<std::string>{kFull1, kFull2})) << "nothing stored for the refused run";
  // An import is held to the same rule.
  WriteFile(dir_ / "r.xml", R"(<testsuite name="s"><testcase classname="c" name="t"/></testsuite>)");
  auto ingest = RunHarness({"ingest", "--format", "junit", (dir_ / "r.xml").string(), "--db", db_, "--repo",
                            dir_.path().string(), "--commit", "3f2a9c1"});
  EXPECT_EQ(ingest.exit_code, 2) << ingest.out;
  EXPECT_NE(ingest.err.find("is ambiguous"), std::string::npos) << ingest.err;
}

// At most 10 commits are named: with exactly 10 the list is whole (no "..."), with 11 it
// names the first 10 and says there are more.
TEST_F(CommitSpellingE2E, TheAmbiguousListSaysThereAreMoreOnlyWhenThereAre) {
  std::vector<std::string> shas;
  for (char c : std::string("0123456789a")) shas.push_back("3f2a9c10" + std::string(32, c));
  for (int i = 0; i < 10; ++i) ASSERT_EQ(Run(shas[i]).exit_code, 0);
  auto ten = Run("3f2a9c1");
  EXPECT_EQ(ten.exit_code, 2) << ten.out;
  std::string listed = shas[0];
  for (int i = 1; i < 10; ++i) listed += ", " + shas[i];
  EXPECT_NE(ten.err.find("it matches the stored commits " + listed + "; give more"), std::string::npos) << ten.err;
  ASSERT_EQ(Run(shas[10]).exit_code, 0);
  auto eleven = Run("3f2a9c1");
  EXPECT_EQ(eleven.exit_code, 2) << eleven.out;
  EXPECT_NE(eleven.err.find("it matches the stored commits " + listed + ", ...; give more"), std::string::npos)
      << eleven.err;
  EXPECT_EQ(eleven.err.find(shas[10]), std::string::npos) << eleven.err;
}

TEST_F(CommitSpellingE2E, AFullShaAfterItsShortShaStaysUnderTheFirstSpelling) {
  ASSERT_EQ(Run("3f2a9c1").exit_code, 0);  // nothing known yet: stored as given
  ASSERT_EQ(Run(kFull1).exit_code, 0);
  EXPECT_EQ(StoredShas(), (std::vector<std::string>{"3f2a9c1"}));
  // A commit the short one is no prefix of is a commit of its own.
  ASSERT_EQ(Run("3f2a9c2").exit_code, 0);
  EXPECT_EQ(StoredShas(), (std::vector<std::string>{"3f2a9c1", "3f2a9c2"}));
}

}  // namespace
}  // namespace harness
