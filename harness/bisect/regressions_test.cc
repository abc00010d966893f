// What bisect --auto reads as a nightly's regressions (regressions.h), against a real store
// holding nightlies, reruns that share a nightly's id, and cases whose results disagree
// between them, so that reading the wrong runs changes the answer; and cases of each kind
// (paired, gate, status) in suites with and without a headline metric.
#include "harness/bisect/regressions.h"

#include <gtest/gtest.h>

#include <map>

#include "harness/results/metric_names.h"
#include "harness/store/store.h"
#include "harness/testing/io_fault_vfs.h"
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
    std::vector<CaseResult> results;
    for (const auto& [id, status] : cases) results.push_back({id, status, 0, "", {}, {}});
    return StoredResults(i, nightly, results, context_json);
  }

  // The same with whole results (their metrics too), each in the suite its id names.
  // wrong_samples: per case id, a case with 40 per-question samples, the first N of them wrong.
  int64_t StoredResults(int i, const std::string& nightly, const std::vector<CaseResult>& cases,
                        const std::string& context_json = "{}", const std::map<std::string, int>& wrong_samples = {}) {
    const int64_t commit = *store_->writer().UpsertCommit(ReadCommit(dir_ / "repo", shas_[i]).value());
    NewRun r{commit, "refstack", "A", "{}", "host", "0.2.0", "0/1", nightly, context_json};
    const int64_t run = *store_->writer().BeginRun(r);
    for (const auto& c : cases) {
      const int64_t cr = *store_->writer().BeginCase(run, c.case_id.substr(0, c.case_id.find('/')), c.case_id, "{}");
      if (const auto w = wrong_samples.find(c.case_id); w != wrong_samples.end()) {
        for (int q = 0; q < 40; ++q) {
          const SampleOutcome outcome = q < w->second ? SampleOutcome::kWrong : SampleOutcome::kCorrect;
          EXPECT_TRUE(store_->writer().WriteSample(cr, {std::to_string(q), outcome, "", "", 0, 0}).ok());
        }
      }
      EXPECT_TRUE(store_->writer().FinishCase(cr, c).ok());
    }
    EXPECT_TRUE(store_->writer().FinishRun(run, RunStatus::kFail).ok());
    return run;
  }

  // Reads the pair of the newest nightly (then the same named by its run id), its
  // regressions and each one's answer in the rerun after the case result `last`, through a
  // store whose reads fail at each point in turn, for good and once. Each outcome is an error
  // naming the database, or the clean answer: `targets` regressions, each failing again.
  void ExpectEveryReadFaultIsAnErrorOrTheCleanAnswer(int64_t nightly, int64_t last, std::size_t targets) {
    const auto clean = Regressions();
    ASSERT_EQ(clean.size(), targets);
    store_.reset();
    testing_util::IoFaultVfs vfs((dir_ / "h.db").string());
    for (bool once : {false, true})
      for (int64_t budget = 0;; ++budget) {
        ASSERT_LT(budget, 5000) << "kept reading";
        once ? vfs.FailOnceAfter(budget) : vfs.FailAfter(budget);
        // A connection of its own each time: a warm page cache would answer later reads.
        auto store = Store::OpenReadOnly(dir_ / "h.db");
        if (!store) {
          vfs.Off();
          EXPECT_EQ(store.error().code, ExitCode::kInfra) << budget << ": " << store.error().message;
          continue;
        }
        auto pair = FindNightlyPair((*store)->reader(), std::nullopt);
        if (pair) pair = FindNightlyPair((*store)->reader(), nightly);
        Result<std::vector<RegressionTarget>> found = std::vector<RegressionTarget>{};
        if (pair && pair->previous)
          found = FindRegressions((*store)->reader(), pair->current, *pair->previous, SuitesDir());
        Result<std::optional<bool>> again = std::optional<bool>{};
        for (std::size_t t = 0; pair && found && again && t < found->size(); ++t) {
          again = Reproduces((*store)->reader(), found->at(t), shas_[1], last);
          if (again && *again != std::optional<bool>(true)) break;
        }
        const int64_t refused = vfs.refused();
        vfs.Off();
        const Error* error = !pair ? &pair.error() : !found ? &found.error() : !again ? &again.error() : nullptr;
        if (!error) {
          ASSERT_TRUE(pair->previous) << budget << ": a fault lost the previous nightly";
          ASSERT_EQ(found->size(), targets) << budget;
          for (std::size_t t = 0; t < targets; ++t) EXPECT_EQ(found->at(t).CaseIds(), clean[t].CaseIds()) << budget;
          EXPECT_EQ(*again, std::optional<bool>(true)) << budget << ": the rerun failed each again";
          if (refused == 0) break;
          continue;
        }
        ASSERT_GT(refused, 0) << "an error with no fault behind it: " << error->message;
        EXPECT_EQ(error->code, ExitCode::kInfra) << budget << ": " << error->message;
        EXPECT_NE(error->message.find("h.db"), std::string::npos) << budget << ": " << error->message;
      }
  }

  // Nightlies n1 and n2 of a passing gsm8k/paired case with 40 questions, the first
  // previous_wrong and nightly_wrong of them lost, n2 judged REGRESSED against n1: n2's run id.
  int64_t StoredPairedNightlies(int previous_wrong, int nightly_wrong) {
    const auto paired = VerdictMetric(metric_names::kBaselineVerdict, BaselineVerdict::kRegressed);
    StoredResults(0, "n1", {{"gsm8k/paired", CaseStatus::kPass, 0, "", {}, {}}}, "{}",
                  {{"gsm8k/paired", previous_wrong}});
    return StoredResults(1, "n2", {{"gsm8k/paired", CaseStatus::kPass, 0, "", {paired}, {}}}, "{}",
                         {{"gsm8k/paired", nightly_wrong}});
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

// A status regression is a case that passed and now fails or errs: one that passed and is
// skipped tonight (its stack cannot run it, a filter) is not, nor one still running, nor one
// that only went from skip to fail. Every status of the night after beside every other.
TEST_F(RegressionsTest, OnlyAPassThatNowFailsOrErrsIsAStatusRegression) {
  const CaseStatus pass = CaseStatus::kPass, fail = CaseStatus::kFail, error = CaseStatus::kError,
                   skip = CaseStatus::kSkip;
  Stored(0, "n1", {{"selftest/to_fail", pass}, {"selftest/to_error", pass}, {"selftest/to_skip", pass},
                   {"selftest/still_pass", pass}, {"selftest/skip_to_fail", skip}, {"selftest/error_to_fail", error}});
  Stored(1, "n2", {{"selftest/to_fail", fail}, {"selftest/to_error", error}, {"selftest/to_skip", skip},
                   {"selftest/still_pass", pass}, {"selftest/skip_to_fail", fail}, {"selftest/error_to_fail", fail}});
  const auto found = Regressions();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(Word(found[0].kind), "status");
  EXPECT_EQ(found[0].CaseIds(), (std::vector<std::string>{"selftest/to_error", "selftest/to_fail"}));
}

// Each case takes the first kind that holds: its paired verdict REGRESSED (whatever its gate
// and status say), else its gate fallen to FAIL from PASS or AT-RISK, else its status fallen
// from pass. A suite with a headline metric (gsm8k) is bisected by that metric for its paired
// and gate cases and by status for the rest; one without (selftest), by status alone, the
// target's kind the worst of its cases'.
TEST_F(RegressionsTest, EachCaseTakesTheFirstKindThatHoldsAndEachTargetTheWorst) {
  const auto gate = [](GateVerdict v) { return VerdictMetric(metric_names::kGateVerdict, v); };
  const auto paired = [](BaselineVerdict v) { return VerdictMetric(metric_names::kBaselineVerdict, v); };
  const CaseStatus pass = CaseStatus::kPass, fail = CaseStatus::kFail;
  StoredResults(0, "n1", {{"gsm8k/paired", pass, 0, "", {gate(GateVerdict::kPass)}, {}},
                          {"gsm8k/paired_gate_status", pass, 0, "", {gate(GateVerdict::kPass)}, {}},
                          {"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kAtRisk)}, {}},
                          {"gsm8k/status", pass, 0, "", {}, {}},
                          {"gsm8k/failing_both_nights", fail, 0, "", {gate(GateVerdict::kFail)}, {}},
                          {"gsm8k/improved", pass, 0, "", {gate(GateVerdict::kPass)}, {}},
                          {"selftest/paired", pass, 0, "", {}, {}},
                          {"selftest/status", pass, 0, "", {}, {}}});
  StoredResults(1, "n2",
                {{"gsm8k/paired", pass, 0, "", {gate(GateVerdict::kPass), paired(BaselineVerdict::kRegressed)}, {}},
                 {"gsm8k/paired_gate_status", fail, 0, "",
                  {gate(GateVerdict::kFail), paired(BaselineVerdict::kRegressed)}, {}},
                 {"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kFail), paired(BaselineVerdict::kSame)}, {}},
                 {"gsm8k/status", CaseStatus::kError, 0, "", {}, {}},
                 {"gsm8k/failing_both_nights", fail, 0, "",
                  {gate(GateVerdict::kFail), paired(BaselineVerdict::kImproved)}, {}},
                 {"gsm8k/improved", pass, 0, "", {gate(GateVerdict::kPass), paired(BaselineVerdict::kImproved)}, {}},
                 {"selftest/paired", pass, 0, "", {paired(BaselineVerdict::kRegressed)}, {}},
                 {"selftest/status", fail, 0, "", {}, {}}});
  using Kinds = std::vector<std::pair<std::string, std::string>>;
  const auto kinds = [](const RegressionTarget& t) {
    Kinds out;
    for (const auto& c : t.cases) out.emplace_back(c.case_id, Word(c.kind));
    return out;
  };
  const auto found = Regressions();
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].suite, "gsm8k");
  EXPECT_EQ(found[0].metric, "accuracy");
  EXPECT_EQ(Word(found[0].kind), "paired");
  EXPECT_EQ(kinds(found[0]),
            (Kinds{{"gsm8k/gate", "gate"}, {"gsm8k/paired", "paired"}, {"gsm8k/paired_gate_status", "paired"}}));
  EXPECT_EQ(found[1].suite, "gsm8k");
  EXPECT_EQ(found[1].metric, "");
  EXPECT_EQ(Word(found[1].kind), "status");
  EXPECT_EQ(kinds(found[1]), (Kinds{{"gsm8k/status", "status"}}));
  EXPECT_EQ(found[2].suite, "selftest");
  EXPECT_EQ(found[2].metric, "") << "selftest has no headline metric";
  EXPECT_EQ(Word(found[2].kind), "paired");
  EXPECT_EQ(kinds(found[2]), (Kinds{{"selftest/paired", "paired"}, {"selftest/status", "status"}}));
}

// A confirming rerun reproduces each case by its own kind's measure: a gate case by its gate
// (FAIL again, whatever its status), a status case by its status; a result stored before the
// rerun, or an infrastructure error, shows nothing. Two targets, each with its own case.
TEST_F(RegressionsTest, ARerunReproducesEachCaseByItsOwnKindsMeasure) {
  const auto gate = [](GateVerdict v) { return VerdictMetric(metric_names::kGateVerdict, v); };
  const CaseStatus pass = CaseStatus::kPass, fail = CaseStatus::kFail;
  StoredResults(0, "n1", {{"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kAtRisk)}, {}}, {"gsm8k/status", pass, 0, "", {}, {}}});
  StoredResults(1, "n2", {{"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kFail)}, {}}, {"gsm8k/status", fail, 0, "", {}, {}}});
  const auto found = Regressions();
  ASSERT_EQ(found.size(), 2u);
  const RegressionTarget& by_gate = found[0].kind == RegressionKind::kGate ? found[0] : found[1];
  const RegressionTarget& by_status = found[0].kind == RegressionKind::kGate ? found[1] : found[0];
  ASSERT_EQ(Word(by_gate.kind), "gate");
  ASSERT_EQ(Word(by_status.kind), "status");
  int64_t last = 0;
  const auto reproduces = [&](const RegressionTarget& t) {
    auto r = Reproduces(store_->reader(), t, shas_[1], last);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : std::nullopt;
  };
  const auto newest_result = [&] {
    const auto cases = store_->reader().Cases(store_->reader().Run(0)->id);
    return cases->back().id;
  };
  last = newest_result();
  EXPECT_EQ(reproduces(by_gate), std::nullopt) << "the nightly's own results are before the rerun";
  EXPECT_EQ(reproduces(by_status), std::nullopt);
  const std::string rerun_of = R"({"rerun_of": 2})";
  // The gate FAIL again with the case passing; the status case errs (no evidence).
  StoredResults(1, "n2", {{"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kFail)}, {}},
                          {"gsm8k/status", CaseStatus::kError, 0, "", {}, {}}}, rerun_of);
  EXPECT_EQ(reproduces(by_gate), std::optional<bool>(true)) << "gate FAIL again";
  EXPECT_EQ(reproduces(by_status), std::nullopt) << "an error shows nothing";
  last = newest_result();
  // The gate back to AT-RISK with the case failing; the status case fails again.
  StoredResults(1, "n2", {{"gsm8k/gate", fail, 0, "", {gate(GateVerdict::kAtRisk)}, {}},
                          {"gsm8k/status", fail, 0, "", {}, {}}}, rerun_of);
  EXPECT_EQ(reproduces(by_gate), std::optional<bool>(false)) << "a gate case is judged by its gate, not its status";
  EXPECT_EQ(reproduces(by_status), std::optional<bool>(true));
}

// A paired case is reproduced only when the rerun loses questions against the previous
// nightly again (REGRESSED): the same questions right (SAME) or more of them (IMPROVED) is
// no reproduction. The previous nightly lost 6 of 40, the nightly 18.
TEST_F(RegressionsTest, APairedRerunReproducesOnlyWhenItIsRegressedAgain) {
  const int64_t nightly = StoredPairedNightlies(6, 18);
  const auto found = Regressions();
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(Word(found[0].kind), "paired");
  const std::string rerun_of = R"({"rerun_of": )" + std::to_string(nightly) + "}";
  for (const auto& [wrong, again] : {std::pair{18, true}, std::pair{6, false}, std::pair{0, false}}) {
    const int64_t last = store_->reader().Cases(store_->reader().Run(0)->id)->back().id;
    StoredResults(1, "n2", {{"gsm8k/paired", CaseStatus::kPass, 0, "", {}, {}}}, rerun_of, {{"gsm8k/paired", wrong}});
    auto r = Reproduces(store_->reader(), found[0], shas_[1], last);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, std::optional<bool>(again)) << wrong << " of 40 wrong in the rerun";
  }
}

// The pair and its regressions read through a store that fails to read at any point, for
// good or once: each read that fails is an error naming the database, never a pair or a list
// of regressions other than the one a clean read gives (nor a read of what was not read).
TEST_F(RegressionsTest, AReadFaultAnywhereIsAnErrorNeverAnotherAnswer) {
  // A status target (selftest) and a gate one (gsm8k), each failing again in the rerun.
  const auto gate = [](GateVerdict v) { return VerdictMetric(metric_names::kGateVerdict, v); };
  const CaseStatus pass = CaseStatus::kPass, fail = CaseStatus::kFail;
  StoredResults(0, "n1", {{kCase, pass, 0, "", {}, {}}, {kOther, pass, 0, "", {}, {}},
                          {"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kAtRisk)}, {}}});
  const int64_t nightly = StoredResults(1, "n2", {{kCase, fail, 0, "", {}, {}}, {kOther, pass, 0, "", {}, {}},
                                                  {"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kFail)}, {}}});
  const int64_t last = store_->reader().Cases(nightly)->back().id;
  StoredResults(1, "n2", {{kCase, fail, 0, "", {}, {}}, {"gsm8k/gate", pass, 0, "", {gate(GateVerdict::kFail)}, {}}},
                R"({"rerun_of": )" + std::to_string(nightly) + "}");
  ExpectEveryReadFaultIsAnErrorOrTheCleanAnswer(nightly, last, 2);
}

// The same for a paired target: the rerun's answer compares its questions with the previous
// nightly's, so both results' samples are read (40 questions, 12 lost in the nightly and in
// its rerun: REGRESSED again).
TEST_F(RegressionsTest, AReadFaultWhileAPairedRerunIsComparedIsAnError) {
  const int64_t nightly = StoredPairedNightlies(0, 12);
  const int64_t last = store_->reader().Cases(nightly)->back().id;
  StoredResults(1, "n2", {{"gsm8k/paired", CaseStatus::kPass, 0, "", {}, {}}},
                R"({"rerun_of": )" + std::to_string(nightly) + "}", {{"gsm8k/paired", 12}});
  ExpectEveryReadFaultIsAnErrorOrTheCleanAnswer(nightly, last, 1);
}

// Regressions read against suite tables that cannot be read are an error naming the table,
// never regressions judged without their headline metrics.
TEST_F(RegressionsTest, ASuiteTableThatCannotBeReadIsAnError) {
  Stored(0, "n1", {{kCase, CaseStatus::kPass}});
  Stored(1, "n2", {{kCase, CaseStatus::kFail}});
  testing_util::WriteFile(dir_ / "suites" / "broken.json", "{\"suite\": ");
  auto pair = FindNightlyPair(store_->reader(), std::nullopt);
  ASSERT_TRUE(pair.ok() && pair->previous);
  auto found = FindRegressions(store_->reader(), pair->current, *pair->previous, dir_ / "suites");
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.error().message.find("broken.json"), std::string::npos) << found.error().message;
}

}  // namespace
}  // namespace harness::bisect
