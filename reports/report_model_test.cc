#include "reports/report_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/stats/false_verdict.h"
#include "harness/stats/stats.h"
#include "harness/store/bisect_changes.h"
#include "harness/testing/io_fault_vfs.h"
#include "harness/testing/test_util.h"
#include "reports/report_html.h"
#include "reports/report_json.h"

namespace harness::reports {
namespace {

// A small history written through the Store API: four commits; a GSM8K-like case with
// per-question samples (three reruns at the newest commit), a compile case that passes
// twice and then fails with a changed op table, and a kernel case whose bound use creeps up.
class ReportModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(Store::Open(dir_ / "r.db")).value();
    for (int i = 1; i <= 4; ++i)
      commits_.push_back(*store_->writer().UpsertCommit({Sha(i), {}, i, 1700000000 + i, fmt::format("commit {}", i)}));
    Nightly(1, {0.925}, CaseStatus::kPass, 0.40);
    Nightly(2, {0.924}, CaseStatus::kPass, 0.55);
    Nightly(3, {0.913}, CaseStatus::kFail, 0.70);
    Nightly(4, {0.9128, 0.9105, 0.9143}, CaseStatus::kFail, 0.80);
  }

  static std::string Sha(int i) { return fmt::format("{:040x}", 0xabc000 + i); }

  // One run per accuracy value at commit i; 1000 questions, the first `wrong` of them wrong.
  void Nightly(int i, const std::vector<double>& accuracies, CaseStatus compile_status, double bound_use,
               const std::string& identity = "id1") {
    for (double acc : accuracies) {
      const int64_t run = *store_->writer().BeginRun({commits_[i - 1], "refstack", identity, "{}", "host", "0.2.0"});
      const int64_t g = *store_->writer().BeginCase(run, "gsm8k", "gsm8k/test_accuracy_0", "{}");
      const int wrong = static_cast<int>(std::lround((1 - acc) * 1000));
      for (int q = 0; q < 1000; ++q) {
        const SampleOutcome outcome = q < wrong ? SampleOutcome::kWrong : SampleOutcome::kCorrect;
        ASSERT_TRUE(store_->writer()
                        .WriteSample(g, {std::to_string(q), outcome, "42", q < wrong ? "41" : "42", 0, 0,
                                         fmt::format("run {} says <b>{}</b>", run, q < wrong ? 41 : 42)})
                        .ok());
      }
      const auto ci = WilsonInterval(1000 - wrong, 1000);
      const auto verdict = ci.low >= 0.91 ? GateVerdict::kPass : GateVerdict::kAtRisk;
      ASSERT_TRUE(store_->writer()
                      .FinishCase(g, {"gsm8k/test_accuracy_0",
                                      CaseStatus::kPass,
                                      2.0,
                                      "note",
                                      {{"accuracy", acc, 1000, ci.low, ci.high},
                                       {"gate", 0.91, 0, {}, {}},
                                       VerdictMetric("gate_verdict", verdict)},
                                      {}})
                      .ok());
      const int64_t c = *store_->writer().BeginCase(run, "compile", "compile/test_ops_0", "{}");
      std::vector<OpRow> ops = {{"ns.matmul.default", "[4, 4]", 2, 0}};
      ops.push_back(compile_status == CaseStatus::kPass ? OpRow{"ns.swiglu.default", "[4]", 1, 0}
                                                        : OpRow{"ns.swiglu_quant.default", "[4]", 1, 0});
      ASSERT_TRUE(store_->writer()
                      .FinishCase(c, {"compile/test_ops_0",
                                      compile_status,
                                      0.1,
                                      compile_status == CaseStatus::kPass ? "" : "op table differs\nsecond line",
                                      {},
                                      ops})
                      .ok());
      const int64_t k = *store_->writer().BeginCase(run, "kernels", "kernels/test_gemm_0", "{}");
      ASSERT_TRUE(store_->writer()
                      .FinishCase(k, {"kernels/test_gemm_0",
                                      CaseStatus::kPass,
                                      0.1,
                                      "",
                                      {{"gemm_max_bound_use", bound_use, 0, {}, {}}},
                                      {}})
                      .ok());
      ASSERT_TRUE(store_->writer().FinishRun(run, RunStatus::kFail).ok());
    }
  }

  // The report after runs of a fifth commit, each with its compile status and identity.
  ReportModel WithRunsAtCommit5(const std::vector<std::pair<CaseStatus, std::string>>& runs) {
    commits_.push_back(*store_->writer().UpsertCommit({Sha(5), {}, 5, 1700000005, "commit 5"}));
    for (const auto& [status, identity] : runs) Nightly(5, {0.93}, status, 0.80, identity);
    auto m = BuildReport(*store_, {});
    EXPECT_TRUE(m.ok()) << m.error().message;
    return m.ok() ? std::move(*m) : ReportModel{};
  }

  testing_util::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::vector<int64_t> commits_;
};

// What a reader of the report of q from the database at db sees (its JSON and its HTML), or
// the error that stopped it. A connection of its own each time: a warm page cache would
// answer later reads.
Result<std::string> ReportTextsOf(const std::filesystem::path& db, const ReportQuery& q) {
  auto store = Store::OpenReadOnly(db);
  if (!store) return store.error();
  auto m = BuildReport(**store, q);
  if (!m) return m.error();
  return ReportJson(*m).dump() + "\n" + ReportHtml(*m, {});
}

// A read of the database that fails anywhere while the report is built (a failing disk, a
// file cut short) is an error naming the file, never a report with a part left out or
// another answer: each read and lock fails in turn, alone (once) and from then on, until the
// report builds whole; what builds is the clean report.
void ExpectEveryReadFaultIsAnError(const std::filesystem::path& db, const ReportQuery& q) {
  const auto clean = ReportTextsOf(db, q);
  ASSERT_TRUE(clean.ok()) << clean.error().message;
  testing_util::IoFaultVfs vfs(db.string());
  int errors = 0;
  for (bool once : {false, true})
    for (int64_t budget = 0;; ++budget) {
      ASSERT_LT(budget, 20000) << "kept reading";
      once ? vfs.FailOnceAfter(budget) : vfs.FailAfter(budget);
      const auto texts = ReportTextsOf(db, q);
      const int64_t refused = vfs.refused();
      vfs.Off();
      if (texts.ok()) {
        EXPECT_TRUE(*texts == *clean) << budget << (once ? " once" : "") << ": another report" << [&] {
          std::size_t i = 0;
          while (i < texts->size() && i < clean->size() && (*texts)[i] == (*clean)[i]) ++i;
          return "\n  got:  " + texts->substr(i > 80 ? i - 80 : 0, 300) + "\n  want: " + clean->substr(i > 80 ? i - 80 : 0, 300);
        }();
        if (refused == 0) break;
        continue;
      }
      ++errors;
      ASSERT_GT(refused, 0) << "an error with no fault behind it: " << texts.error().message;
      EXPECT_EQ(texts.error().code, ExitCode::kInfra) << budget << ": " << texts.error().message;
      EXPECT_NE(texts.error().message.find(db.filename().string()), std::string::npos)
          << budget << ": " << texts.error().message;
    }
  EXPECT_GT(errors, 0);
}

TEST_F(ReportModelTest, AReadFaultAnywhereIsAnErrorNamingTheFileNeverAnotherReport) {
  store_.reset();
  ExpectEveryReadFaultIsAnError(dir_ / "r.db", {});
  ExpectEveryReadFaultIsAnError(dir_ / "r.db", {.since = Sha(2)});
}

TEST_F(ReportModelTest, SummaryCountsTheLatestRunPerSuiteWithAtRiskAnAnnotationOfAPass) {
  auto m = BuildReport(*store_, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->commits.size(), 4u);
  EXPECT_EQ(m->runs, 6);
  ASSERT_EQ(m->summary.size(), 3u);
  EXPECT_EQ(m->summary[0].suite, "compile");
  EXPECT_EQ(m->summary[0].fail, 1);
  EXPECT_EQ(m->summary[1].suite, "gsm8k");
  EXPECT_EQ(m->summary[1].at_risk, 1) << "the newest run's 0.9143 straddles 0.91";
  EXPECT_EQ(m->summary[1].pass, 1) << "an AT-RISK gate annotates a passing case";
  // The night: compile fails, gsm8k and kernels pass (one of them AT-RISK).
  EXPECT_EQ(m->night.verdict, NightVerdict::kFail);
  EXPECT_EQ(m->night.Line(), "harness nightly: FAIL - 2 passed (1 AT-RISK), 1 failed, 0 regressed, 0 errors, 0 skipped");
  EXPECT_EQ(m->summary[1].run_id, 6);
  EXPECT_EQ(m->summary[1].commit, 3u);
  EXPECT_TRUE(m->summary[1].shards.empty()) << "an unsharded run names no shards";
  EXPECT_TRUE(m->failures.at(0).shard.empty());
}

TEST_F(ReportModelTest, FailuresSayWhenTheyStartedAndDiffTheOpTableWithAStaleHint) {
  auto m = BuildReport(*store_, {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->failures.size(), 1u);
  const auto& f = m->failures[0];
  EXPECT_EQ(f.case_id, "compile/test_ops_0");
  EXPECT_EQ(f.failing_since, 2u) << "commit 3 is the first of the failing streak";
  ASSERT_TRUE(f.ops_against_commit);
  EXPECT_EQ(*f.ops_against_commit, 1u);
  ASSERT_EQ(f.ops.added.size(), 1u);
  EXPECT_EQ(f.ops.added[0].op, "ns.swiglu_quant.default");
  ASSERT_EQ(f.ops.removed.size(), 1u);
  ASSERT_EQ(f.ops.stale.size(), 1u);
  EXPECT_EQ(f.ops.stale[0].to, "ns.swiglu_quant.default");
}

// A nightly in two shards (harness run --shard I/2 --nightly n7, then merge): the summary names
// the shards holding each suite, a failure the shard and host it ran on.
TEST_F(ReportModelTest, AShardedNightlyNamesItsShardsAndWhereEachFailureRan) {
  const int64_t c5 = *store_->writer().UpsertCommit({Sha(5), {}, 5, 1700000005, "commit 5"});
  for (int shard = 1; shard >= 0; --shard) {  // written out of order: the report sorts them
    const int64_t run = *store_->writer().BeginRun(
        {c5, "refstack", "id1", "{}", fmt::format("ci-{}", shard), "0.2.0", fmt::format("{}/2", shard), "n7"});
    const std::string id = shard == 0 ? "compile/test_ops_0" : "compile/test_ops_1";
    const int64_t c = *store_->writer().BeginCase(run, "compile", id, "{}");
    ASSERT_TRUE(store_->writer()
                    .FinishCase(c, {id, shard == 0 ? CaseStatus::kFail : CaseStatus::kPass, 0.1, "x", {}, {}})
                    .ok());
    ASSERT_TRUE(store_->writer().FinishRun(run, RunStatus::kPass).ok());
  }
  auto m = BuildReport(*store_, {.suite = "compile"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->summary.size(), 1u);
  const auto& s = m->summary[0];
  EXPECT_EQ(s.fail + s.pass, 2) << "one logical run of two shards";
  EXPECT_EQ(s.nightly, "n7");
  ASSERT_EQ(s.shards.size(), 2u);
  EXPECT_EQ(s.shards[0].shard, "0/2");
  EXPECT_EQ(s.shards[0].host, "ci-0");
  EXPECT_EQ(s.shards[1].shard, "1/2");
  ASSERT_EQ(m->failures.size(), 1u);
  EXPECT_EQ(m->failures[0].shard, "0/2");
  EXPECT_EQ(m->failures[0].host, "ci-0");
}

TEST_F(ReportModelTest, TrendsHaveAPointPerRunTheGateAndTheAtRiskBand) {
  auto m = BuildReport(*store_, {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->trends.size(), 2u);
  const Trend& t = m->trends[0];
  EXPECT_EQ(t.case_id, "gsm8k/test_accuracy_0");
  EXPECT_EQ(t.metric, "accuracy");
  ASSERT_EQ(t.points.size(), 6u);
  EXPECT_EQ(t.points[3].commit, 3u);
  EXPECT_EQ(t.points[5].commit, 3u);
  EXPECT_DOUBLE_EQ(*t.gate, 0.91);
  ASSERT_TRUE(t.band_low && t.band_high);
  EXPECT_LT(*t.band_low, 0.91);
  EXPECT_GT(*t.band_high, 0.91);
  EXPECT_EQ(m->trends[1].metric, "gemm_max_bound_use");
  EXPECT_DOUBLE_EQ(*m->trends[1].bound, 1.0);
}

// A case's chart shows accuracy when it has one, else its first proportion with an interval,
// else a bound use, whatever order the metrics come in: here each case's first metric (by
// name and by writing) is a plain number the chart must not take.
TEST_F(ReportModelTest, ATrendShowsAccuracyElseAProportionElseABoundUse) {
  const int64_t run = *store_->writer().BeginRun({commits_[3], "refstack", "id1", "{}", "host", "0.2.0"});
  const std::vector<std::pair<std::string, std::vector<Metric>>> cases = {
      {"mix/a_all", {{"a_mean", 3.0, 0, {}, {}}, {"a_rate", 0.5, 100, 0.4, 0.6}, {"accuracy", 0.9, 1000, 0.88, 0.92}}},
      {"mix/b_rate", {{"a_mean", 3.0, 0, {}, {}}, {"a_count", 7.0, 0, {}, {}}, {"a_rate", 0.5, 100, 0.4, 0.6}}},
      {"mix/c_bound", {{"a_mean", 3.0, 0, {}, {}}, {"gemm_bound_use", 0.7, 0, {}, {}}}},
  };
  for (const auto& [id, metrics] : cases) {
    const int64_t c = *store_->writer().BeginCase(run, "mix", id, "{}");
    ASSERT_TRUE(store_->writer().FinishCase(c, {id, CaseStatus::kPass, 0.1, "", metrics, {}}).ok());
  }
  ASSERT_TRUE(store_->writer().FinishRun(run, RunStatus::kPass).ok());
  auto m = BuildReport(*store_, {.suite = "mix"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  std::map<std::string, std::string> shown;
  for (const auto& t : m->trends) shown[t.case_id] = t.metric;
  EXPECT_EQ(shown, (std::map<std::string, std::string>{
                       {"mix/a_all", "accuracy"}, {"mix/b_rate", "a_rate"}, {"mix/c_bound", "gemm_bound_use"}}));
}

TEST_F(ReportModelTest, FlakyRanksByFalseVerdictProbabilityAndNamesTheQuestion) {
  auto m = BuildReport(*store_, {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->flaky.size(), 2u) << "the gate and the kernel's bound; the compile case failed twice in a row (no flake)";
  const FlakyEntry& gate = m->flaky[0];
  EXPECT_EQ(gate.kind, FlakyKind::kGate);
  EXPECT_EQ(gate.estimate.question, FlakeQuestion::kRerunNoise) << "three reruns at the newest commit";
  // Same hand computation as RerunNoiseEstimate's test: mean 0.912533, sd 0.0019140.
  EXPECT_NEAR(gate.estimate.center, (0.9128 + 0.9105 + 0.9143) / 3, 1e-12);
  EXPECT_NEAR(gate.estimate.probability, RerunNoiseEstimate({0.9128, 0.9105, 0.9143}, 0.91).probability, 1e-15);
  EXPECT_NE(gate.detail.find("will a rerun flip it?"), std::string::npos) << gate.detail;
  const FlakyEntry& bound = m->flaky[1];
  EXPECT_EQ(bound.kind, FlakyKind::kTolerance);
  EXPECT_EQ(bound.estimate.question, FlakeQuestion::kRerunNoise) << "0.80 three times: no spread";
  EXPECT_EQ(bound.estimate.probability, 0);
  EXPECT_GT(gate.estimate.probability, bound.estimate.probability);
  // What would settle each: more reruns of the gate's commit; the bound is settled.
  EXPECT_GT(gate.estimate.needed, 3);
  EXPECT_EQ(gate.settle, fmt::format("{} results in total at {} (harness run --rerun-at-risk N), 3 stored",
                                     gate.estimate.needed, Sha(4).substr(0, 12)));
  EXPECT_EQ(bound.settle, "settled: the mean of 3 results clears the threshold");
}

// The flaky section's row for a status, or none.
std::optional<FlakyEntry> StatusRow(const ReportModel& m) {
  for (const auto& e : m.flaky)
    if (e.kind == FlakyKind::kStatus) return e;
  return std::nullopt;
}

// Three runs of one commit disagree on a case's status, 2 passes and a failure: the flaky row
// counts each side for what it is (another identity's failure there is not a rerun).
TEST_F(ReportModelTest, RerunsOfOneCommitThatDisagreeCountThePassesAndTheOthersApart) {
  const CaseStatus pass = CaseStatus::kPass, fail = CaseStatus::kFail;
  const std::optional<FlakyEntry> status =
      StatusRow(WithRunsAtCommit5({{fail, "id2"}, {pass, "id1"}, {fail, "id1"}, {pass, "id1"}}));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->case_id, "compile/test_ops_0");
  EXPECT_EQ(status->verdict, "PASS") << "the newest run passed";
  EXPECT_EQ(status->metric, "status");
  EXPECT_EQ(status->threshold, 0.0) << "a status has no threshold";
  EXPECT_NE(status->detail.find("2 passed and 1 did not"), std::string::npos) << status->detail;
  EXPECT_EQ(status->estimate.question, StatusFlipEstimate(1, 3).question);
  EXPECT_DOUBLE_EQ(status->estimate.probability, StatusFlipEstimate(1, 3).probability);
  EXPECT_EQ(status->settle, fmt::format("{} reruns at {} show the minority status at least once with 95% probability",
                                        StatusFlipEstimate(1, 3).needed, Sha(5).substr(0, 12)));
}

// The fewest reruns that disagree: one pass and one failure at a commit.
TEST_F(ReportModelTest, OnePassAndOneFailureOfACommitDisagree) {
  const std::optional<FlakyEntry> status =
      StatusRow(WithRunsAtCommit5({{CaseStatus::kFail, "id1"}, {CaseStatus::kPass, "id1"}}));
  ASSERT_TRUE(status);
  EXPECT_NE(status->detail.find("runs of one commit disagree: 1 passed and 1 did not"), std::string::npos)
      << status->detail;
  EXPECT_DOUBLE_EQ(status->estimate.probability, StatusFlipEstimate(1, 2).probability);
}

// A case whose last pass stored no op table and whose failure stores one: the failure still
// shows what changed, every row added, against that pass (an empty table is a table).
TEST_F(ReportModelTest, AFailureDiffsItsOpsAgainstALastPassThatHadNone) {
  for (int i : {5, 6}) {
    commits_.push_back(*store_->writer().UpsertCommit({Sha(i), {}, i, 1700000000 + i, fmt::format("commit {}", i)}));
    const int64_t run = *store_->writer().BeginRun({commits_[i - 1], "refstack", "id1", "{}", "host", "0.2.0"});
    const int64_t c = *store_->writer().BeginCase(run, "compile", "compile/test_new_0", "{}");
    const bool pass = i == 5;
    ASSERT_TRUE(
        store_->writer()
            .FinishCase(c, {"compile/test_new_0",
                            pass ? CaseStatus::kPass : CaseStatus::kFail,
                            0.1,
                            pass ? "" : "op table differs",
                            {},
                            pass ? std::vector<OpRow>{} : std::vector<OpRow>{{"ns.matmul.default", "[4, 4]", 2, 0}}})
            .ok());
    ASSERT_TRUE(store_->writer().FinishRun(run, pass ? RunStatus::kPass : RunStatus::kFail).ok());
  }
  auto m = BuildReport(*store_, {.case_glob = "compile/test_new_*"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->failures.size(), 1u);
  const FailureEntry& f = m->failures[0];
  ASSERT_TRUE(f.ops_against_commit);
  EXPECT_EQ(m->commits[*f.ops_against_commit].sha, Sha(5));
  EXPECT_EQ(f.ops.added.size(), 1u) << "the one row the failure's table adds";
  EXPECT_TRUE(f.ops.removed.empty());
}

// Runs of another identity (a --fault run, another model) between the nightly's own: the
// flaky rows count only the newest identity's results (its reruns, and its status commit by
// commit), the flips and the op-table diff pair only with that identity's earlier results,
// and "not passing since" follows that identity's streak.
TEST_F(ReportModelTest, AnotherIdentitysRunsAreNeitherRerunsNorBaselines) {
  commits_.push_back(*store_->writer().UpsertCommit({Sha(5), {}, 5, 1700000005, "commit 5"}));
  Nightly(4, {0.70}, CaseStatus::kPass, 0.30, "id2");  // newest at commit 4
  Nightly(5, {0.9130}, CaseStatus::kFail, 0.80);
  Nightly(5, {0.70}, CaseStatus::kPass, 0.80, "id2");
  Nightly(5, {0.9120}, CaseStatus::kFail, 0.80);
  auto m = BuildReport(*store_, {});
  ASSERT_TRUE(m.ok()) << m.error().message;

  const FlakyEntry* gate = nullptr;
  for (const auto& e : m->flaky) {
    EXPECT_NE(e.kind, FlakyKind::kStatus) << "id1's compile case failed at commits 3, 4 and 5; id2's passes are not its flips: "
                                << e.detail;
    if (e.kind == FlakyKind::kGate) gate = &e;
  }
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->estimate.question, FlakeQuestion::kRerunNoise);
  EXPECT_EQ(gate->estimate.observations, 2) << gate->detail;
  EXPECT_NEAR(gate->estimate.center, (0.9130 + 0.9120) / 2, 1e-12);

  ASSERT_EQ(m->flips.size(), 1u);
  EXPECT_EQ(m->flips[0].baseline_commit, 3u) << "commit 4's newest id1 result (0.9143), not id2's 0.70";
  EXPECT_EQ(m->flips[0].losses, 2) << "86 wrong before, 88 now";
  EXPECT_EQ(m->flips[0].gains, 0);

  ASSERT_EQ(m->failures.size(), 1u);
  const FailureEntry& f = m->failures[0];
  EXPECT_EQ(f.case_id, "compile/test_ops_0");
  EXPECT_EQ(f.failing_since, 2u) << "id1 has not passed since commit 2";
  ASSERT_TRUE(f.ops_against_commit);
  EXPECT_EQ(*f.ops_against_commit, 1u) << "id1's last pass, not id2's at commit 5";
}

// Without reruns a tolerance row falls back to the spread over recent commits: of this
// identity's results only (id2's 0.30 at commit 4 is another stack's number).
TEST_F(ReportModelTest, TheCommitSpreadOfAToleranceIsOneIdentitys) {
  commits_.push_back(*store_->writer().UpsertCommit({Sha(5), {}, 5, 1700000005, "commit 5"}));
  Nightly(4, {0.70}, CaseStatus::kPass, 0.30, "id2");
  Nightly(5, {0.9130}, CaseStatus::kFail, 0.85);
  auto m = BuildReport(*store_, {.case_glob = "kernels/*"});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->flaky.size(), 1u);
  const FlakyEntry& t = m->flaky[0];
  EXPECT_EQ(t.kind, FlakyKind::kTolerance);
  EXPECT_EQ(t.estimate.question, FlakeQuestion::kCommitSpread);
  EXPECT_EQ(t.estimate.observations, 5);
  EXPECT_NEAR(t.estimate.sigma, CommitSpreadEstimate({0.85, 0.80, 0.70, 0.55, 0.40}, 1.0).sigma, 1e-12) << t.detail;
}

TEST_F(ReportModelTest, WithoutRerunsTheGateIsTheBinomialQuestion) {
  auto m = BuildReport(*store_, {.last_n = 2, .case_glob = "gsm8k/*"});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->flaky.size(), 1u);
  auto only3 = BuildReport(*store_, {.since = Sha(3), .case_glob = "gsm8k/*"});
  ASSERT_TRUE(only3.ok());
  EXPECT_EQ(only3->commits.size(), 2u);
  // A single result and no reruns: the binomial question (same numbers as TrueRateEstimate's test).
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "one.db")).value();
  const int64_t c = *store->writer().UpsertCommit({Sha(9), {}, 1, 0, "one"});
  const int64_t run = *store->writer().BeginRun({c, "refstack", "id1", "{}", "host", "0.2.0"});
  const int64_t g = *store->writer().BeginCase(run, "gsm8k", "gsm8k/test_accuracy_0", "{}");
  ASSERT_TRUE(store->writer()
                  .FinishCase(g, {"gsm8k/test_accuracy_0",
                                  CaseStatus::kPass,
                                  1,
                                  "",
                                  {{"accuracy", 1206.0 / 1319, 1319, 0.9, 0.93}, {"gate", 0.91, 0, {}, {}}},
                                  {}})
                  .ok());
  ASSERT_TRUE(store->writer().FinishRun(run, RunStatus::kPass).ok());
  auto one = BuildReport(*store, {});
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->flaky.size(), 1u);
  EXPECT_EQ(one->flaky[0].estimate.question, FlakeQuestion::kTrueRate);
  EXPECT_NEAR(one->flaky[0].estimate.probability, 0.287142, 1e-5);
  EXPECT_EQ(one->flaky[0].estimate.needed, 16057);
  EXPECT_NE(one->flaky[0].settle.find("16057 questions"), std::string::npos) << one->flaky[0].settle;
}

// A tolerance measured once, at one commit: nothing tells its spread yet, and the row says
// how to measure it. Measured again alike (0.75 twice, exact in binary: no spread at all), it
// is settled by its two results, not "one result only".
TEST(ReportFlaky, AToleranceMeasuredOnceAsksForARerun) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "one.db")).value();
  const std::string sha = fmt::format("{:040x}", 0xfeed01);
  const int64_t c = *store->writer().UpsertCommit({sha, {}, 1, 0, "one"});
  auto measure = [&] {
    const int64_t run = *store->writer().BeginRun({c, "refstack", "id1", "{}", "host", "0.2.0"});
    const int64_t k = *store->writer().BeginCase(run, "kernels", "kernels/test_gemm_0", "{}");
    ASSERT_TRUE(
        store->writer()
            .FinishCase(
                k, {"kernels/test_gemm_0", CaseStatus::kPass, 0.1, "", {{"gemm_max_bound_use", 0.75, 0, {}, {}}}, {}})
            .ok());
    ASSERT_TRUE(store->writer().FinishRun(run, RunStatus::kPass).ok());
  };
  measure();
  auto m = BuildReport(*store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->flaky.size(), 1u);
  EXPECT_EQ(m->flaky[0].kind, FlakyKind::kTolerance);
  EXPECT_EQ(m->flaky[0].settle, fmt::format("one result only: rerun {} to measure its spread", sha.substr(0, 12)));
  measure();
  auto twice = BuildReport(*store, {});
  ASSERT_TRUE(twice.ok()) << twice.error().message;
  ASSERT_EQ(twice->flaky.size(), 1u);
  EXPECT_EQ(twice->flaky[0].estimate.sigma, 0);
  EXPECT_EQ(twice->flaky[0].settle, "settled: the mean of 2 results clears the threshold");
}

TEST_F(ReportModelTest, FlipsPairTheNewestRunWithTheNewestEarlierPassingResult) {
  auto m = BuildReport(*store_, {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->flips.size(), 1u);
  const FlipSet& s = m->flips[0];
  // Newest run: 86 wrong (0.9143 -> 1000 - 914 = 86); baseline commit 3: 87 wrong. Question 86 gained.
  EXPECT_EQ(s.baseline_commit, 2u);
  EXPECT_EQ(s.losses, 0);
  EXPECT_EQ(s.gains, 1);
  ASSERT_EQ(s.flips.size(), 1u);
  EXPECT_EQ(s.flips[0].key, "86");
  EXPECT_FALSE(s.flips[0].lost);
  EXPECT_EQ(s.flips[0].before_extracted, "41");
  EXPECT_EQ(s.flips[0].after_extracted, "42");
  EXPECT_NE(s.flips[0].before_completion.find("<b>41</b>"), std::string::npos) << "kept as stored; escaped when rendered";
}

// Partial runs (harness run --questions: a bisect step's few questions) at commits 3, 4 and a
// commit 5 of their own, each newer than the whole runs: without the report's filter they
// would be a commit of the window, trend points, reruns of the gate's flaky row, the newest
// result the flips pair and its baseline.
TEST_F(ReportModelTest, PartialRunsAreNoCommitTrendPointRerunOrBaseline) {
  commits_.push_back(*store_->writer().UpsertCommit({Sha(5), {}, 5, 1700000005, "commit 5"}));
  for (int i : {3, 4, 5}) {
    NewRun r{commits_[i - 1], "refstack", "id1", "{}", "host", "0.2.0"};
    r.partial_questions = 40;
    const int64_t run = *store_->writer().BeginRun(r);
    const int64_t g = *store_->writer().BeginCase(run, "gsm8k", "gsm8k/test_accuracy_0", "{}");
    for (int q = 0; q < 40; ++q)
      ASSERT_TRUE(
          store_->writer().WriteSample(g, {std::to_string(q), SampleOutcome::kWrong, "42", "41", 0, 0, ""}).ok());
    ASSERT_TRUE(
        store_->writer()
            .FinishCase(g,
                        {"gsm8k/test_accuracy_0", CaseStatus::kPass, 1, "partial", {{"accuracy", 0.5, 40, {}, {}}}, {}})
            .ok());
    ASSERT_TRUE(store_->writer().FinishRun(run, RunStatus::kPass).ok());
  }
  auto m = BuildReport(*store_, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->commits.size(), 4u) << "commit 5 holds only a partial run";
  EXPECT_EQ(m->runs, 6);
  ASSERT_FALSE(m->trends.empty());
  EXPECT_EQ(m->trends[0].points.size(), 6u) << "a trend point per whole run";
  const FlakyEntry* gate = nullptr;
  for (const auto& e : m->flaky)
    if (e.kind == FlakyKind::kGate) gate = &e;
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->estimate.observations, 3) << gate->detail;
  EXPECT_NEAR(gate->estimate.center, (0.9128 + 0.9105 + 0.9143) / 3, 1e-12);
  ASSERT_EQ(m->flips.size(), 1u);
  EXPECT_EQ(m->flips[0].run_id, 6) << "the newest whole run";
  EXPECT_EQ(m->flips[0].baseline_run, 3) << "commit 3's whole run, not its partial one";
}

// A question whose request errored on either side was not answered there: no flip.
TEST(ReportModel, FlipsLeaveOutQuestionsThatErroredOnEitherSide) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "f.db")).value();
  const std::vector<std::vector<const char*>> outcomes = {{"correct", "correct", "wrong", "error", "wrong"},
                                                          {"error", "wrong", "error", "correct", "correct"}};
  for (int i = 0; i < 2; ++i) {
    const int64_t c = *store->writer().UpsertCommit({fmt::format("{:040x}", 0xf00 + i), {}, i + 1, 0, "c"});
    const int64_t run = *store->writer().BeginRun({c, "refstack", "id1", "{}", "host", "0.2.0"});
    const int64_t g = *store->writer().BeginCase(run, "gsm8k", "gsm8k/t_0", "{}");
    for (int q = 0; q < 5; ++q) {
      const SampleOutcome outcome = ParseSampleOutcome(outcomes[i][q]).value();
      ASSERT_TRUE(store->writer().WriteSample(g, {std::to_string(q), outcome, "1", "", 0, 0, ""}).ok());
    }
    ASSERT_TRUE(store->writer().FinishCase(g, {"gsm8k/t_0", CaseStatus::kPass, 1, "", {}, {}}).ok());
    ASSERT_TRUE(store->writer().FinishRun(run, RunStatus::kPass).ok());
  }
  auto m = BuildReport(*store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->flips.size(), 1u);
  EXPECT_EQ(m->flips[0].losses, 1) << "question 1; question 0 errored now";
  EXPECT_EQ(m->flips[0].gains, 1) << "question 4; question 3 errored before";
  ASSERT_EQ(m->flips[0].flips.size(), 2u);
  EXPECT_EQ(m->flips[0].flips[0].key, "1");
  EXPECT_EQ(m->flips[0].flips[1].key, "4");
}

TEST_F(ReportModelTest, WindowAndFilters) {
  auto last = BuildReport(*store_, {.last_n = 1});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->commits.size(), 1u);
  EXPECT_EQ(last->runs, 3);
  auto suite = BuildReport(*store_, {.suite = "kernels"});
  ASSERT_TRUE(suite.ok());
  ASSERT_EQ(suite->summary.size(), 1u);
  EXPECT_EQ(suite->summary[0].suite, "kernels");
  auto none = BuildReport(*store_, {.case_glob = "nothing/*"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ExitCode::kUsage);
  auto unknown = BuildReport(*store_, {.since = "ffff"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("--since ffff"), std::string::npos);
  auto ambiguous = BuildReport(*store_, {.since = "0000"});
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.error().message.find("ambiguous"), std::string::npos);
}

}  // namespace
}  // namespace harness::reports

namespace harness::reports {
namespace {

// A store for the morning-view tests: commits 1..n, runs written case by case.
struct History {
  testing_util::TempDir dir;
  std::unique_ptr<Store> store = std::move(Store::Open(dir / "m.db")).value();
  std::vector<int64_t> commits;

  explicit History(int n) {
    for (int i = 1; i <= n; ++i)
      commits.push_back(*store->writer().UpsertCommit(
          {fmt::format("{:040x}", 0xdef000 + i), {}, i, 1700000000 + i, fmt::format("commit {}", i)}));
  }
  // One run at commit i (1-based) holding `cases`; context holds the fault switches, if any.
  void Run(int i, const std::vector<CaseResult>& cases, const std::string& context = "{}") {
    NewRun r{commits[i - 1], "refstack", "id1", "{}", "host", "0.2.0"};
    r.context_json = context;
    const int64_t run = *store->writer().BeginRun(r);
    for (const auto& c : cases) {
      const int64_t id = *store->writer().BeginCase(run, CaseId(c.case_id).suite(), c.case_id, "{}");
      ASSERT_TRUE(store->writer().FinishCase(id, c).ok());
    }
    ASSERT_TRUE(store->writer().FinishRun(run, CountStatuses(cases).Overall()).ok());
  }
  // A confirmed status regression of case_id in run against baseline, bisected by session.
  void ConfirmedRegression(int64_t run, int64_t baseline, const std::string& case_id, int64_t session) {
    RegressionRow g;
    g.run_id = run;
    g.baseline_run_id = baseline;
    g.suite = CaseId(case_id).suite();
    g.kind = "status";
    g.cases = {case_id};
    g.confirmation = "confirmed";
    g.confirm_json = "[]";
    g.session_id = session;
    ASSERT_TRUE(store->bisect_record().AddRegression(g).ok());
  }
  void Culprit(int good, int culprit, const std::string& case_id, const std::vector<BisectChange>& changes = {}) {
    BisectSessionRow b;
    b.good = fmt::format("{:040x}", 0xdef000 + good);
    b.bad = fmt::format("{:040x}", 0xdef000 + culprit);
    b.target = case_id;
    b.args_json = R"({"format_version": 1, "target": {"cases": [")" + case_id + R"("]}})";
    const int64_t session = *store->bisect_record().BeginBisect(b);
    b.status = "culprit";
    b.culprit = changes.empty() ? b.bad : changes.front().sha;  // a chain's culprit is its first change
    b.confidence = 1.0;
    b.result_json = Json{{"changes", ChangesJson(changes)}}.dump();
    ASSERT_TRUE(store->bisect_record().FinishBisect(session, b).ok());
  }
};

CaseResult Case(const std::string& id, CaseStatus status, std::vector<Metric> metrics = {}, std::string message = "") {
  return {id, status, 0.1, std::move(message), std::move(metrics), {}};
}

Metric Bound(double use) { return {"gemm_max_bound_use", use, 0, {}, {}}; }

// A gated accuracy stored without its count of questions (an imported value) gives no
// binomial question to ask, so no gate row; the same value with its count gives one. Each
// run is one commit's only run, so no rerun noise is measured either.
TEST(ReportFlaky, AGatedAccuracyWithoutACountOfQuestionsIsNoGateRow) {
  for (const int64_t n : {int64_t{0}, int64_t{1000}}) {
    History h(1);
    h.Run(1, {Case("eval/test_gsm8k_0", CaseStatus::kFail, {{"accuracy", 0.905, n, {}, {}}, {"gate", 0.91, 0, {}, {}}})});
    auto m = BuildReport(*h.store, {});
    ASSERT_TRUE(m.ok()) << m.error().message;
    const auto gates =
        std::count_if(m->flaky.begin(), m->flaky.end(), [](const FlakyEntry& e) { return e.kind == FlakyKind::kGate; });
    EXPECT_EQ(gates, n > 0 ? 1 : 0) << n << " questions";
    for (const FlakyEntry& e : m->flaky) EXPECT_TRUE(std::isfinite(e.estimate.probability)) << e.detail;
  }
}

// New failures, paired regressions and fixes since the previous nightly, each with why it
// has no culprit; the night's verdict from the same counts as harness run's.
TEST(ReportChanges, NewFailuresPairedRegressionsAndFixesComeWithTheirReason) {
  History h(2);
  const Metric regressed = VerdictMetric("baseline_verdict", BaselineVerdict::kRegressed);
  const Metric gate_pass = VerdictMetric("gate_verdict", GateVerdict::kPass);
  h.Run(1, {Case("s/a_0", CaseStatus::kPass), Case("s/b_0", CaseStatus::kFail, {}, "b broke"),
            Case("s/c_0", CaseStatus::kFail, {}, "c broke"), Case("g/acc_0", CaseStatus::kPass, {gate_pass})});
  h.Run(2, {Case("s/a_0", CaseStatus::kFail, {}, "a: 3 calls expected, 2 seen\nsuites/a.cc:1"),
            Case("s/b_0", CaseStatus::kPass), Case("s/c_0", CaseStatus::kFail, {}, "c broke"),
            Case("s/d_0", CaseStatus::kError, {}, "endpoint down"),
            Case("g/acc_0", CaseStatus::kFail, {gate_pass, regressed}, "gsm8k REGRESSED vs baseline: b = 30, c = 5")});
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->changes.size(), 4u);
  EXPECT_EQ(m->changes[0].kind, ChangeKind::kNewFailure);
  EXPECT_EQ(m->changes[0].case_id, "s/a_0");
  EXPECT_EQ(m->changes[0].finding, "a: 3 calls expected, 2 seen");
  ASSERT_TRUE(m->changes[0].before_commit);
  EXPECT_EQ(m->changes[0].before_status, CaseStatus::kPass);
  EXPECT_NE(m->changes[0].no_culprit.find("bisect --auto has not looked"), std::string::npos);
  EXPECT_EQ(m->changes[1].kind, ChangeKind::kNewFailure);
  EXPECT_EQ(m->changes[1].case_id, "s/d_0");
  EXPECT_FALSE(m->changes[1].before_commit);
  EXPECT_NE(m->changes[1].no_culprit.find("no earlier nightly"), std::string::npos);
  EXPECT_EQ(m->changes[2].kind, ChangeKind::kPairedRegression);
  EXPECT_EQ(m->changes[2].case_id, "g/acc_0");
  EXPECT_EQ(m->changes[3].kind, ChangeKind::kFixed);
  EXPECT_EQ(m->changes[3].case_id, "s/b_0");
  EXPECT_EQ(m->changes[3].no_culprit.rfind("a fix: ", 0), 0u) << m->changes[3].no_culprit;
  // s/c_0 still fails: no change. The night: an error makes it INCOMPLETE.
  EXPECT_EQ(m->night.verdict, NightVerdict::kIncomplete);
  EXPECT_EQ(m->night.counts.regressed, 1);
  EXPECT_EQ(m->night.counts.fail, 2);
}

// The regressions listed are those of the latest runs shown: a regression of an earlier
// nightly still names the culprit of a case failing since, but is not listed again.
TEST(ReportChanges, OnlyTheLatestNightlysRegressionsAreListed) {
  History h(3);
  h.Run(1, {Case("s/a_0", CaseStatus::kPass), Case("s/b_0", CaseStatus::kPass)});
  h.Run(2, {Case("s/a_0", CaseStatus::kFail, {}, "a broke"), Case("s/b_0", CaseStatus::kPass)});
  h.Run(3, {Case("s/a_0", CaseStatus::kFail, {}, "a broke"), Case("s/b_0", CaseStatus::kFail, {}, "b broke")});
  h.Culprit(1, 2, "s/a_0");
  h.ConfirmedRegression(2, 1, "s/a_0", 1);
  h.Culprit(2, 3, "s/b_0");
  h.ConfirmedRegression(3, 2, "s/b_0", 2);
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->regressions.size(), 1u);
  EXPECT_EQ(m->regressions[0].run_id, 3);
  EXPECT_EQ(m->regressions[0].cases, std::vector<std::string>{"s/b_0"});
  ASSERT_EQ(m->failures.size(), 2u);
  ASSERT_TRUE(m->failures[0].culprit) << "a, failing since commit 2, still names its culprit";
  EXPECT_EQ(m->failures[0].culprit->culprit, fmt::format("{:040x}", 0xdef000 + 2));
}

// A change carries the culprit bisect --auto found for its own case and run, and only that:
// the other change of the same night has none, and says why.
TEST(ReportChanges, EachChangeCarriesTheCulpritOfItsOwnCaseAndRun) {
  History h(2);
  h.Run(1, {Case("s/a_0", CaseStatus::kPass), Case("s/b_0", CaseStatus::kPass)});
  h.Run(2, {Case("s/a_0", CaseStatus::kFail, {}, "a broke"), Case("s/b_0", CaseStatus::kFail, {}, "b broke")});
  h.Culprit(1, 2, "s/a_0");
  h.ConfirmedRegression(2, 1, "s/a_0", 1);
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->changes.size(), 2u);
  EXPECT_EQ(m->changes[0].case_id, "s/a_0");
  ASSERT_TRUE(m->changes[0].culprit);
  EXPECT_EQ(m->changes[0].culprit->verdict, RegressionVerdict::kCulprit);
  EXPECT_EQ(m->changes[0].culprit->culprit, fmt::format("{:040x}", 0xdef000 + 2));
  EXPECT_EQ(m->changes[0].culprit->session, 1);
  EXPECT_EQ(m->changes[0].culprit->subject, "commit 2");
  EXPECT_EQ(m->changes[0].no_culprit, "");
  EXPECT_EQ(m->changes[1].case_id, "s/b_0");
  EXPECT_FALSE(m->changes[1].culprit);
  EXPECT_NE(m->changes[1].no_culprit.find("bisect --auto has not looked"), std::string::npos);
}

// A night's two regressions, each bisected: one session named one culprit, the other two
// (a drop and a later one in one range). Each change carries its own session's culprits,
// every one of them where there were several, none where there was one.
TEST(ReportChanges, AChangeCarriesEveryCulpritOfItsSessionAndOnlyThose) {
  History h(3);
  h.Run(1, {Case("s/a_0", CaseStatus::kPass), Case("s/b_0", CaseStatus::kPass)});
  h.Run(3, {Case("s/a_0", CaseStatus::kFail, {}, "a broke"), Case("s/b_0", CaseStatus::kFail, {}, "b broke")});
  const auto sha = [](int i) { return fmt::format("{:040x}", 0xdef000 + i); };
  h.Culprit(1, 3, "s/a_0");
  h.Culprit(1, 3, "s/b_0", {{sha(2), "commit 2", 0.97, -0.006}, {sha(3), "commit 3", 0.99, -0.008}});
  h.ConfirmedRegression(2, 1, "s/a_0", 1);
  h.ConfirmedRegression(2, 1, "s/b_0", 2);
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->changes.size(), 2u);
  ASSERT_TRUE(m->changes[0].culprit && m->changes[1].culprit);
  EXPECT_EQ(m->changes[0].culprit->session, 1);
  EXPECT_TRUE(m->changes[0].culprit->culprits.empty()) << "one culprit is the note's own";
  EXPECT_EQ(m->changes[1].culprit->session, 2);
  EXPECT_EQ(m->changes[1].culprit->culprit, sha(2));
  ASSERT_EQ(m->changes[1].culprit->culprits.size(), 2u);
  EXPECT_EQ(m->changes[1].culprit->culprits[0].sha, sha(2));
  EXPECT_EQ(m->changes[1].culprit->culprits[1].sha, sha(3));
  EXPECT_DOUBLE_EQ(m->changes[1].culprit->culprits[1].size, -0.008);
}

// A regression whose nightly is before the report's window (--since) is no change of the
// window and lends its culprit to none of its failures, though the case still fails there.
TEST(ReportChanges, ARegressionBeforeTheWindowNamesNoCulpritInIt) {
  History h(4);
  h.Run(1, {Case("s/a_0", CaseStatus::kPass)});
  for (int i = 2; i <= 4; ++i) h.Run(i, {Case("s/a_0", CaseStatus::kFail, {}, "a broke")});
  h.Culprit(1, 2, "s/a_0");
  h.ConfirmedRegression(2, 1, "s/a_0", 1);
  auto m = BuildReport(*h.store, {.since = fmt::format("{:040x}", 0xdef000 + 3)});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->failures.size(), 1u);
  EXPECT_EQ(m->failures[0].case_id, "s/a_0");
  EXPECT_FALSE(m->failures[0].culprit) << "culprit " << m->failures[0].culprit->culprit;
  EXPECT_TRUE(m->regressions.empty());
}

// The summary names the nightly it shows whose shard never ran, and only that one: the
// night before, whole, is not named, though its last shard is the run stored just before.
TEST(ReportChanges, ANightlyWithAShardMissingIsNamedAndTheWholeOneBeforeItIsNot) {
  History h(2);
  const auto shard_run = [&](int commit, const std::string& nightly, int shard) {
    NewRun r{h.commits[commit - 1], "refstack", "id1", "{}", "host", "0.2.0"};
    r.shard = fmt::format("{}/2", shard);
    r.nightly = nightly;
    const int64_t run = *h.store->writer().BeginRun(r);
    const std::string id = fmt::format("s/case_{}", shard);
    const int64_t c = *h.store->writer().BeginCase(run, "s", id, "{}");
    ASSERT_TRUE(h.store->writer().FinishCase(c, Case(id, CaseStatus::kPass)).ok());
    ASSERT_TRUE(h.store->writer().FinishRun(run, RunStatus::kPass).ok());
  };
  shard_run(1, "n1", 0);
  shard_run(1, "n1", 1);
  shard_run(2, "n2", 0);  // shard 1/2 of n2 never ran
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->incomplete_nightlies.size(), 1u);
  EXPECT_EQ(m->incomplete_nightlies[0].nightly, "n2");
  EXPECT_EQ(m->incomplete_nightlies[0].sha, fmt::format("{:040x}", 0xdef000 + 2));
  EXPECT_EQ(m->incomplete_nightlies[0].missing, (std::vector<std::string>{"1/2"}));
}

// The same read-fault sweep over what the first store lacks: nightlies (the summary asks for
// each one's shards), a failing case whose op table is diffed against its last pass, a
// bisect session with a culprit and the regression that names it.
TEST(ReportChanges, AReadFaultAnywhereInANightlyWithACulpritIsAnError) {
  History h(3);
  for (int i = 1; i <= 3; ++i) {
    NewRun r{h.commits[i - 1], "refstack", "id1", "{}", "host", "0.2.0"};
    r.nightly = fmt::format("n{}", i);
    const int64_t run = *h.store->writer().BeginRun(r);
    const int64_t c = *h.store->writer().BeginCase(run, "s", "s/a_0", "{}");
    CaseResult a = Case("s/a_0", i < 3 ? CaseStatus::kPass : CaseStatus::kFail, {}, i < 3 ? "" : "a broke");
    a.ops = {{"ns.mm.default", "[4, 4]", i < 3 ? 2 : 3, 0.1}};
    ASSERT_TRUE(h.store->writer().FinishCase(c, a).ok());
    ASSERT_TRUE(h.store->writer().FinishRun(run, i < 3 ? RunStatus::kPass : RunStatus::kFail).ok());
  }
  h.Culprit(2, 3, "s/a_0");
  h.ConfirmedRegression(3, 2, "s/a_0", 1);
  h.store.reset();
  ExpectEveryReadFaultIsAnError(h.dir / "m.db", {});
}

// The op table of a failure's last passing result is read after the failure's own. Small
// tables share a page, which the first read leaves in SQLite's page cache, so a fault never
// reached the second read and its error could be dropped unseen. Tables of a few hundred
// rows each span their own pages (more than the 10 an IoFaultVfs-limited cache keeps).
TEST(ReportFailures, AReadFaultInTheLastPassingResultsOpTableIsAnError) {
  History h(2);
  auto ops = [](const char* prefix) {
    std::vector<OpRow> rows;
    for (int k = 0; k < 300; ++k)
      rows.push_back({fmt::format("ns.{}_{}.default", prefix, k), fmt::format("[{}, {}]", 4096 + k, 64), 1 + k % 3, 0});
    return rows;
  };
  CaseResult pass = Case("s/a_0", CaseStatus::kPass, {}, "");
  pass.ops = ops("fused_rms_norm_with_a_long_kernel_name");
  h.Run(1, {pass});
  CaseResult fail = Case("s/a_0", CaseStatus::kFail, {}, "op table differs");
  fail.ops = ops("unfused_rms_norm_with_a_long_kernel_name");
  h.Run(2, {fail});
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->failures.size(), 1u);
  EXPECT_EQ(m->failures[0].ops.added.size(), 300u);
  EXPECT_EQ(m->failures[0].ops.removed.size(), 300u);
  h.store.reset();
  ExpectEveryReadFaultIsAnError(h.dir / "m.db", {});
}

// A tolerance's commit spread is measured since the newest culprit bisect tied to the case:
// the jump the culprit made is a change, not noise. Another case's culprit does not cut it,
// nor marks its trend.
TEST(ReportFlaky, CommitSpreadIsMeasuredWithinTheSegmentSinceTheCulprit) {
  History h(6);
  const std::vector<double> use = {0.55, 0.56, 0.55, 0.95, 0.96, 0.95};
  for (int i = 1; i <= 6; ++i)
    h.Run(i, {Case("k/gemm_0", CaseStatus::kPass, {Bound(use[i - 1])}),
              Case("k/other_0", CaseStatus::kPass, {Bound(use[i - 1])})});
  auto before = BuildReport(*h.store, {});
  ASSERT_TRUE(before.ok());
  h.Culprit(3, 4, "k/gemm_0");
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->flaky.size(), 2u);
  for (const auto& f : m->flaky) {
    const auto& was = *std::find_if(before->flaky.begin(), before->flaky.end(),
                                    [&](const FlakyEntry& e) { return e.case_id == f.case_id; });
    EXPECT_EQ(was.estimate.observations, 6) << "no change point: the whole window";
    if (f.case_id == "k/gemm_0") {
      EXPECT_EQ(f.estimate.observations, 3) << f.detail;
      EXPECT_NEAR(f.estimate.sigma, CommitSpreadEstimate({0.95, 0.96, 0.95}, 1.0).sigma, 1e-12);
      EXPECT_LT(f.estimate.probability, was.estimate.probability) << f.detail;
      EXPECT_NE(f.detail.find("the culprit bisect session 1 found"), std::string::npos) << f.detail;
    } else {
      EXPECT_EQ(f.estimate.observations, 6) << "another case's culprit is no change point of this one";
    }
  }
  std::map<std::string, std::size_t> markers;
  for (const auto& t : m->trends) markers[t.case_id] += t.culprits.size();
  EXPECT_EQ(markers, (std::map<std::string, std::size_t>{{"k/gemm_0", 1}, {"k/other_0", 0}}));
}

// A culprit at the newest result's own commit cuts there too: the segment is that result
// alone, not the window.
TEST(ReportFlaky, ACulpritAtTheNewestResultsCommitLeavesItAlone) {
  History h(4);
  const std::vector<double> use = {0.55, 0.56, 0.55, 0.95};
  for (int i = 1; i <= 4; ++i) h.Run(i, {Case("k/gemm_0", CaseStatus::kPass, {Bound(use[i - 1])})});
  h.Culprit(3, 4, "k/gemm_0");
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->flaky.size(), 1u);
  EXPECT_EQ(m->flaky[0].estimate.observations, 1) << m->flaky[0].detail;
  EXPECT_NE(m->flaky[0].detail.find("the culprit bisect session 1 found"), std::string::npos) << m->flaky[0].detail;
}

// A paired REGRESSED or IMPROVED at a commit is a change point too, and several segments
// keep only the newest.
TEST(ReportFlaky, PairedChangesCutTheSpreadAndTheNewestSegmentCounts) {
  History h(7);
  const std::vector<double> use = {0.5, 0.9, 0.91, 0.6, 0.61, 0.6, 0.62};
  for (int i = 1; i <= 7; ++i) {
    std::vector<Metric> metrics = {Bound(use[i - 1])};
    if (i == 2) metrics.push_back(VerdictMetric("baseline_verdict", BaselineVerdict::kRegressed));
    if (i == 4) metrics.push_back(VerdictMetric("baseline_verdict", BaselineVerdict::kImproved));
    h.Run(i, {Case("k/gemm_0", CaseStatus::kPass, metrics)});
  }
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->flaky.size(), 1u);
  EXPECT_EQ(m->flaky[0].estimate.observations, 4) << m->flaky[0].detail;
  EXPECT_NE(m->flaky[0].detail.find("where the paired test said IMPROVED"), std::string::npos) << m->flaky[0].detail;
}

// Runs with fault switches share their healthy runs' identity (faults are context), yet are
// a deliberately broken stack: a faulted run failing beside healthy nightlies is no flip.
TEST(ReportFlaky, FaultRunsNeverEnterTheRanking) {
  History h(3);
  const std::string faulted = R"({"format_version": 1, "stack_config": {"faults": ["graph-topo-disorder"]}})";
  for (int i = 1; i <= 3; ++i) {
    h.Run(i, {Case("gmm/fp_0", CaseStatus::kPass)});
    h.Run(i, {Case("gmm/fp_0", CaseStatus::kFail, {}, "graph verification failed")}, faulted);
  }
  h.Run(3, {Case("gmm/fp_0", CaseStatus::kPass)});
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->flaky.empty()) << m->flaky.front().detail;
  EXPECT_EQ(FlakyCount(m->flaky), "0 rows: 0 gates, 0 tolerances, 0 status flips");

  // A case measured only on a faulted stack has no healthy run to rank: it is left out.
  for (int i = 1; i <= 3; ++i)
    h.Run(i, {Case("gmm/only_faulted_0", i == 2 ? CaseStatus::kPass : CaseStatus::kFail, {}, "broken")}, faulted);
  auto only = BuildReport(*h.store, {});
  ASSERT_TRUE(only.ok()) << only.error().message;
  EXPECT_TRUE(only->flaky.empty()) << only->flaky.front().case_id;
}

// Across commits, one change of status is a regression or a fix; two are a flip: pass, fail,
// pass over three commits is ranked with both changes counted, pass, pass, fail is not.
TEST(ReportFlaky, TwoChangesOfStatusAcrossCommitsAreAFlipOneIsNot) {
  History h(3);
  const CaseStatus flip[] = {CaseStatus::kPass, CaseStatus::kFail, CaseStatus::kPass};
  const CaseStatus once[] = {CaseStatus::kPass, CaseStatus::kPass, CaseStatus::kFail};
  for (int i = 1; i <= 3; ++i)
    h.Run(i, {Case("gmm/flip_0", flip[i - 1], {}, "x"), Case("gmm/once_0", once[i - 1], {}, "x")});
  auto m = BuildReport(*h.store, {});
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->flaky.size(), 1u) << FlakyCount(m->flaky);
  EXPECT_EQ(m->flaky[0].case_id, "gmm/flip_0");
  EXPECT_NE(m->flaky[0].detail.find("status changed 2 times between consecutive commits over the last 3 commits"),
            std::string::npos)
      << m->flaky[0].detail;
}

}  // namespace
}  // namespace harness::reports
