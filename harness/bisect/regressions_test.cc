// What bisect --auto reads as a nightly's regressions (regressions.h), against a real store
// holding nightlies, reruns that share a nightly's id, and cases whose results disagree
// between them, so that reading the wrong runs changes the answer.
#include "harness/bisect/regressions.h"

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/paths.h"

namespace harness::bisect {
namespace {

using testing_util::TempDir;

class RegressionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shas_ = testing_util::MakeGitRepo(dir_ / "repo", 2);
    store_ = std::move(Store::Open(dir_ / "h.db")).value();
  }

  // A finished run at commit i (0-based) of nightly `nightly` with one result per
  // (case id, status); context_json says what else it is (a rerun: {"rerun_of": N}).
  int64_t Stored(int i, const std::string& nightly, const std::vector<std::pair<std::string, CaseStatus>>& cases,
                 const std::string& context_json = "{}") {
    const int64_t commit = *store_->writer().UpsertCommit(ReadCommit(dir_ / "repo", shas_[i]).value());
    NewRun r{commit, "refstack", "A", "{}", "host", "0.2.0", "0/1", nightly, context_json};
    const int64_t run = *store_->writer().BeginRun(r);
    for (const auto& [id, status] : cases) {
      const int64_t cr = *store_->writer().BeginCase(run, "selftest", id, "{}");
      EXPECT_TRUE(store_->writer().FinishCase(cr, {id, status, 0, "", {}, {}}).ok());
    }
    EXPECT_TRUE(store_->writer().FinishRun(run, RunStatus::kFail).ok());
    return run;
  }

  std::vector<RegressionTarget> Regressions() {
    auto pair = FindNightlyPair(store_->reader(), std::nullopt);
    EXPECT_TRUE(pair.ok()) << pair.error().message;
    if (!pair.ok() || !pair->previous) return {};
    auto found = FindRegressions(store_->reader(), pair->current, *pair->previous, SuitesDir());
    EXPECT_TRUE(found.ok()) << found.error().message;
    return found.ok() ? *found : std::vector<RegressionTarget>{};
  }

  TempDir dir_;
  std::vector<std::string> shas_;
  std::unique_ptr<Store> store_;
};

const std::string kCase = "selftest/test_outcome_0";
const std::string kOther = "selftest/test_outcome_1";

// The nightly failed the case; its rerun (same commit, same nightly id, stored later)
// passed it. The nightly alone says what regressed: read with the rerun, the case would
// look healthy and the regression would be lost.
TEST_F(RegressionsTest, ARerunSharingTheNightlyIdIsNotTheNightly) {
  Stored(0, "n1", {{kCase, CaseStatus::kPass}});
  const int64_t nightly = Stored(1, "n2", {{kCase, CaseStatus::kFail}});
  Stored(1, "n2", {{kCase, CaseStatus::kPass}}, R"({"rerun_of": )" + std::to_string(nightly) + "}");

  auto pair = FindNightlyPair(store_->reader(), std::nullopt);
  ASSERT_TRUE(pair.ok()) << pair.error().message;
  ASSERT_EQ(pair->current.runs.size(), 1u);
  EXPECT_EQ(pair->current.first().id, nightly);
  const auto found = Regressions();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(Word(found[0].kind), "status");
  EXPECT_EQ(found[0].CaseIds(), std::vector<std::string>{kCase});
}

// A case that fails in two nightlies in a row is no new regression: only the case that
// passed the night before and fails tonight is.
TEST_F(RegressionsTest, ACaseFailingTheNightBeforeIsNoNewStatusRegression) {
  Stored(0, "n1", {{kCase, CaseStatus::kFail}, {kOther, CaseStatus::kPass}});
  Stored(1, "n2", {{kCase, CaseStatus::kFail}, {kOther, CaseStatus::kError}});
  const auto found = Regressions();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(Word(found[0].kind), "status");
  EXPECT_EQ(found[0].CaseIds(), std::vector<std::string>{kOther});
}

}  // namespace
}  // namespace harness::bisect
