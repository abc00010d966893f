// The baseline policy (baseline.h) against a real store and a real git history: which
// stored result a running case pairs with, among results that differ in every way the
// policy distinguishes (identity, parameter row, status, commit, ancestry, the running run).
#include "harness/store/baseline.h"

#include <gtest/gtest.h>

#include <optional>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;

class BaselineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shas_ = testing_util::MakeGitRepo(dir_ / "repo", 4);
    store_ = std::move(Store::Open(dir_ / "h.db")).value();
  }

  CommitInfo Commit(int i) { return ReadCommit(dir_ / "repo", shas_[i]).value(); }  // ordinal i + 1

  // A finished run of identity `hash` at commit i holding case g/t_0 (one sample); its id.
  int64_t Stored(int i, const std::string& hash, CaseStatus status, const std::string& params = "{}") {
    return StoredAt(Commit(i), hash, status, params);
  }
  int64_t StoredAt(const CommitInfo& at, const std::string& hash, CaseStatus status, const std::string& params = "{}") {
    const int64_t commit = *store_->writer().UpsertCommit(at);
    const int64_t run = *store_->writer().BeginRun({commit, "refstack", hash, "{}", "host", "0.2.0"});
    const int64_t cr = *store_->writer().BeginCase(run, "g", "g/t_0", params);
    EXPECT_TRUE(store_->writer().WriteSample(cr, {"0", SampleOutcome::kCorrect, "", "", 0, 0, ""}).ok());
    EXPECT_TRUE(store_->writer().FinishCase(cr, {"g/t_0", status, 0, "", {}, {}}).ok());
    EXPECT_TRUE(
        store_->writer().FinishRun(run, status == CaseStatus::kPass ? RunStatus::kPass : RunStatus::kFail).ok());
    return run;
  }

  // The run whose result a run of identity "A" (row "{}") at commit i pairs g/t_0 with; 0: none.
  Result<int64_t> Baseline(int i, const std::string& baseline_rev = "", int64_t running = 0,
                           const std::string& repo = "repo") {
    return BaselineAt(Commit(i), repo, baseline_rev, running);
  }
  Result<int64_t> BaselineAt(const CommitInfo& at, const std::string& repo, const std::string& baseline_rev = "",
                             int64_t running = 0) {
    auto lookup =
        MakeBaselineLookup(store_->reader(), dir_ / repo, baseline_rev, at, "A", running, {{"g/t_0", "{}"}});
    auto b = lookup("g/t_0");
    if (!b) return b.error();
    return *b ? (*b)->run_id : int64_t{0};
  }

  TempDir dir_;
  std::vector<std::string> shas_;
  std::unique_ptr<Store> store_;
};

TEST_F(BaselineTest, TheNewestPassingResultOfTheSameIdentityAndRowOnAFirstParentAncestor) {
  const int64_t a0 = Stored(0, "A", CaseStatus::kPass);
  Stored(1, "A", CaseStatus::kFail);                     // newer, but failed
  Stored(1, "B", CaseStatus::kPass);                     // another identity
  Stored(1, "A", CaseStatus::kPass, R"({"m":2})");      // another parameter row
  Stored(3, "A", CaseStatus::kPass);                     // not an ancestor of commit 2
  EXPECT_EQ(*Baseline(2), a0);
  EXPECT_EQ(*Baseline(0), 0) << "the root commit has no ancestor";
}

// Git's first-parent ancestors decide, not the stored ordinals: in a history with a merged
// branch (c1, c2; side s1, s2 from c1; the merge; c3), a passing result on the branch at
// ordinal 3 is nearer c3 (ordinal 4) by number than the one at c2, and is no ancestor of it.
TEST_F(BaselineTest, AResultOnAMergedBranchIsNoBaselineThoughItsOrdinalIsNearer) {
  const auto shas = testing_util::MakeGitRepoWithMerge(dir_ / "merged");
  ASSERT_EQ(shas.size(), 6u);
  const auto at = [&](int i) { return ReadCommit(dir_ / "merged", shas[i]).value(); };
  ASSERT_EQ(at(3).first_parent_ordinal, std::optional<int64_t>(3)) << "side 2";
  const int64_t c2 = StoredAt(at(1), "A", CaseStatus::kPass);
  StoredAt(at(3), "A", CaseStatus::kPass);
  EXPECT_EQ(*BaselineAt(at(5), "merged"), c2);
}

TEST_F(BaselineTest, AnExplicitBaselineIsTheNewestFinishedResultThereWhateverItsStatus) {
  const int64_t a1 = Stored(1, "A", CaseStatus::kFail);
  Stored(1, "B", CaseStatus::kPass);
  Stored(1, "A", CaseStatus::kPass, R"({"m":2})");
  const int64_t running = Stored(1, "A", CaseStatus::kPass);  // the run asking, at the same commit
  EXPECT_EQ(*Baseline(1, shas_[1], running), a1);
  EXPECT_EQ(*Baseline(3, shas_[1]), running) << "for a later run, the newest one of them";

  Stored(2, "B", CaseStatus::kPass);
  auto other = Baseline(3, shas_[2]);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ExitCode::kUsage);
  EXPECT_NE(other.error().message.find("another identity"), std::string::npos) << other.error().message;
}

// Without git (the commit is not in --repo) the stored first-parent ordinals stand in for
// ancestry: the nearest lower ordinal wins, not the result stored last.
TEST_F(BaselineTest, WithoutGitTheNearestLowerOrdinalWins) {
  const int64_t a2 = Stored(2, "A", CaseStatus::kPass);
  Stored(2, "A", CaseStatus::kFail);
  Stored(2, "B", CaseStatus::kPass);
  Stored(2, "A", CaseStatus::kPass, R"({"m":2})");
  Stored(0, "A", CaseStatus::kPass);  // stored last, two commits further back
  Stored(3, "A", CaseStatus::kPass);  // the same ordinal as the asking commit: not below it
  std::filesystem::create_directories(dir_ / "nogit");
  EXPECT_EQ(*Baseline(3, "", 0, "nogit"), a2);
}

TEST_F(BaselineTest, AnExplicitBaselineMustHoldARunOfThisIdentity) {
  Stored(1, "B", CaseStatus::kPass);
  Stored(2, "A", CaseStatus::kFail);
  EXPECT_TRUE(CheckExplicitBaseline(store_->reader(), dir_ / "repo", shas_[2], "A").ok()) << "a failed run still pairs";
  auto other = CheckExplicitBaseline(store_->reader(), dir_ / "repo", shas_[1], "A");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ExitCode::kUsage);
  EXPECT_NE(other.error().message.find("another identity"), std::string::npos) << other.error().message;
  auto none = CheckExplicitBaseline(store_->reader(), dir_ / "repo", shas_[3], "A");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no finished run"), std::string::npos) << none.error().message;
}

}  // namespace
}  // namespace harness
