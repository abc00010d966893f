#include "harness/compare/compare.h"

#include <gtest/gtest.h>

#include <utility>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;

LoadedCase Loaded(CaseStatus status, std::vector<Metric> metrics = {}, std::vector<OpRow> ops = {},
                  std::vector<Sample> samples = {}) {
  LoadedCase l;
  l.stored.result.status = status;
  l.metrics = std::move(metrics);
  l.ops = std::move(ops);
  l.samples = std::move(samples);
  return l;
}

std::vector<Sample> Outcomes(int n, int wrong_from) {
  std::vector<Sample> s;
  for (int i = 0; i < n; ++i)
    s.push_back({std::to_string(i), i >= wrong_from ? SampleOutcome::kWrong : SampleOutcome::kCorrect, "", "", 0, 0});
  return s;
}

TEST(CompareCase, PassToFailRegressesAndFailToPassDoesNot) {
  EXPECT_TRUE(CompareCase("s/t_0", Loaded(CaseStatus::kPass), Loaded(CaseStatus::kFail)).regressed);
  EXPECT_TRUE(CompareCase("s/t_0", Loaded(CaseStatus::kPass), Loaded(CaseStatus::kError)).regressed);
  EXPECT_FALSE(CompareCase("s/t_0", Loaded(CaseStatus::kFail), Loaded(CaseStatus::kPass)).regressed);
  EXPECT_FALSE(CompareCase("s/t_0", Loaded(CaseStatus::kPass), std::nullopt).regressed) << "a vanished case is shown";
  auto only_b = CompareCase("s/t_0", std::nullopt, Loaded(CaseStatus::kFail));
  EXPECT_FALSE(only_b.a.has_value());
  EXPECT_FALSE(only_b.regressed);
}

TEST(CompareCase, PairedVerdictWhenBothSidesHaveSamples) {
  // 40 questions: A right on all, B wrong on the last 12: b = 12 losses, c = 0, p ~ 0.0005.
  auto c = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {}, {}, Outcomes(40, 40)),
                       Loaded(CaseStatus::kPass, {}, {}, Outcomes(40, 28)));
  ASSERT_TRUE(c.paired.has_value());
  EXPECT_EQ(c.paired->verdict, BaselineVerdict::kRegressed);
  EXPECT_EQ(c.paired->test.b, 12);
  EXPECT_EQ(c.paired->test.c, 0);
  EXPECT_NEAR(c.paired->test.p_value, 2.0 / 4096, 1e-9);  // exact two-sided: 2 * 0.5^12
  EXPECT_TRUE(c.regressed) << "a REGRESSED verdict regresses even when both cases pass";
  EXPECT_TRUE(c.unpaired.empty()) << "the paired test replaces the unpaired one";
  auto improved = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {}, {}, Outcomes(40, 28)),
                              Loaded(CaseStatus::kPass, {}, {}, Outcomes(40, 40)));
  EXPECT_EQ(improved.paired->verdict, BaselineVerdict::kImproved);
  EXPECT_FALSE(improved.regressed);
}

TEST(CompareCase, UnpairedIntervalsForProportionMetricsWithoutSamples) {
  auto c = CompareCase("g/t_0",
                       Loaded(CaseStatus::kPass, {{"accuracy", 0.9, 1000, {}, {}}, {"ms", 12.0, 0, {}, {}},
                                                  {"gate_verdict", 0, 1000, {}, {}, "PASS"}}),
                       Loaded(CaseStatus::kPass, {{"accuracy", 0.8, 1000, {}, {}}, {"ms", 15.0, 0, {}, {}},
                                                  {"gate_verdict", 1, 1000, {}, {}, "AT-RISK"}}));
  EXPECT_FALSE(c.paired.has_value());
  ASSERT_EQ(c.unpaired.size(), 1u) << "only proportions with n > 0, not a verdict code";
  EXPECT_EQ(c.unpaired[0].name, "accuracy");
  EXPECT_FALSE(c.unpaired[0].overlap) << "0.9 vs 0.8 of 1000 each: disjoint Wilson intervals";
  EXPECT_TRUE(c.unpaired[0].regressed);
  EXPECT_TRUE(c.regressed) << "no samples, disjoint intervals and B below A: a regression (issue 21)";
  ASSERT_EQ(c.metrics.size(), 3u);
  EXPECT_EQ(c.metrics[0].name, "accuracy");
  auto close = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.5, 20, {}, {}}}),
                           Loaded(CaseStatus::kPass, {{"accuracy", 0.45, 20, {}, {}}}));
  ASSERT_EQ(close.unpaired.size(), 1u);
  EXPECT_TRUE(close.unpaired[0].overlap);
  EXPECT_FALSE(close.regressed) << "overlapping intervals only inform";
}

// Only accuracy's direction is known: a disjoint rise of error_rate or a disjoint fall of
// another proportion informs, and a disjoint rise of accuracy is no regression.
TEST(CompareCase, UnpairedRegressionOnlyForAccuracyFalling) {
  auto rates = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"error_rate", 0.0, 1000, {}, {}}, {"pass_rate", 0.9, 1000, {}, {}}}),
                           Loaded(CaseStatus::kPass, {{"error_rate", 0.5, 1000, {}, {}}, {"pass_rate", 0.1, 1000, {}, {}}}));
  ASSERT_EQ(rates.unpaired.size(), 2u);
  EXPECT_FALSE(rates.unpaired[0].overlap);
  EXPECT_FALSE(rates.unpaired[1].overlap);
  EXPECT_FALSE(rates.regressed);
  auto up = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.0, 200, {}, {}}}),
                        Loaded(CaseStatus::kPass, {{"accuracy", 0.76, 200, {}, {}}}));
  EXPECT_FALSE(up.regressed);
  // The case: sglang 0.76 -> 0.00 of 200 questions, no samples on either side.
  auto down = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.76, 200, {}, {}}}),
                          Loaded(CaseStatus::kPass, {{"accuracy", 0.0, 200, {}, {}}}));
  EXPECT_TRUE(down.regressed);
}

// A proportion is any value from 0 to 1, both ends included: a perfect baseline falling to
// 0.80 of 200 is a regression, as is one from 0.76 falling to 0; a value just outside is
// no proportion and gets no interval.
TEST(CompareCase, AProportionRunsFromZeroToOneBothIncluded) {
  auto perfect = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 1.0, 200, {}, {}}}),
                             Loaded(CaseStatus::kPass, {{"accuracy", 0.8, 200, {}, {}}}));
  ASSERT_EQ(perfect.unpaired.size(), 1u);
  EXPECT_DOUBLE_EQ(perfect.unpaired[0].ci_a.high, 1.0);
  EXPECT_TRUE(perfect.regressed);
  auto zero = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.76, 200, {}, {}}}),
                          Loaded(CaseStatus::kPass, {{"accuracy", 0.0, 200, {}, {}}}));
  ASSERT_EQ(zero.unpaired.size(), 1u);
  EXPECT_DOUBLE_EQ(zero.unpaired[0].ci_b.low, 0.0);
  for (double outside : {std::nextafter(1.0, 2.0), std::nextafter(0.0, -1.0)}) {
    auto c = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", outside, 200, {}, {}}}),
                         Loaded(CaseStatus::kPass, {{"accuracy", 0.5, 200, {}, {}}}));
    EXPECT_TRUE(c.unpaired.empty()) << outside;
    EXPECT_FALSE(c.regressed) << outside;
  }
}

// A proportion needs its count of questions on both sides: a side that stored none (an
// imported value) has no interval, whichever side it is, and the fall is no regression.
TEST(CompareCase, AProportionWithoutACountOnEitherSideGetsNoInterval) {
  for (const auto& [n_a, n_b] : {std::pair{200, 0}, {0, 200}, {0, 0}}) {
    auto c = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.76, n_a, {}, {}}}),
                         Loaded(CaseStatus::kPass, {{"accuracy", 0.0, n_b, {}, {}}}));
    EXPECT_TRUE(c.unpaired.empty()) << n_a << " and " << n_b << " questions";
    EXPECT_FALSE(c.regressed) << n_a << " and " << n_b << " questions";
    ASSERT_EQ(c.metrics.size(), 1u) << "the values are still shown";
  }
  auto counted = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.76, 200, {}, {}}}),
                             Loaded(CaseStatus::kPass, {{"accuracy", 0.0, 200, {}, {}}}));
  EXPECT_TRUE(counted.regressed) << "the same fall counted on both sides";
}

// The unpaired check in both directions and with different n on the two sides: each
// interval is its own side's (B better than A is as disjoint as B worse).
TEST(CompareCase, UnpairedIntervalsUseEachSidesOwnNInBothDirections) {
  auto up = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.8, 1000, {}, {}}}),
                        Loaded(CaseStatus::kPass, {{"accuracy", 0.9, 1000, {}, {}}}));
  ASSERT_EQ(up.unpaired.size(), 1u);
  EXPECT_FALSE(up.unpaired[0].overlap) << "0.8 -> 0.9 of 1000 each: disjoint";
  // 45/50 against 900/1000: the same rate, intervals of very different width.
  auto c = CompareCase("g/t_0", Loaded(CaseStatus::kPass, {{"accuracy", 0.9, 50, {}, {}}}),
                       Loaded(CaseStatus::kPass, {{"accuracy", 0.9, 1000, {}, {}}}));
  ASSERT_EQ(c.unpaired.size(), 1u);
  const Interval a = WilsonInterval(45, 50), b = WilsonInterval(900, 1000);
  EXPECT_EQ(c.unpaired[0].n_a, 50);
  EXPECT_EQ(c.unpaired[0].n_b, 1000);
  EXPECT_DOUBLE_EQ(c.unpaired[0].ci_a.low, a.low);
  EXPECT_DOUBLE_EQ(c.unpaired[0].ci_a.high, a.high);
  EXPECT_DOUBLE_EQ(c.unpaired[0].ci_b.low, b.low);
  EXPECT_DOUBLE_EQ(c.unpaired[0].ci_b.high, b.high);
  EXPECT_TRUE(c.unpaired[0].overlap);
}

// Samples on one side only (an ingested result without per-question outcomes against a
// native run): nothing pairs, so there is no paired verdict (it would say SAME with 0 pairs
// however far accuracy fell) and the unpaired check speaks instead.
TEST(CompareCase, SamplesOnOneSideOnlyFallBackToTheUnpairedCheck) {
  for (bool samples_on_a : {true, false}) {
    std::vector<Sample> outcomes = Outcomes(40, samples_on_a ? 40 : 28);
    auto c = CompareCase("g/t_0",
                         Loaded(CaseStatus::kPass, {{"accuracy", 0.92, 1319, {}, {}}}, {},
                                samples_on_a ? outcomes : std::vector<Sample>{}),
                         Loaded(CaseStatus::kPass, {{"accuracy", 0.80, 1319, {}, {}}}, {},
                                samples_on_a ? std::vector<Sample>{} : outcomes));
    EXPECT_FALSE(c.paired.has_value()) << "samples on " << (samples_on_a ? "A" : "B") << " only";
    ASSERT_EQ(c.unpaired.size(), 1u);
    EXPECT_FALSE(c.unpaired[0].overlap) << "a 12-point drop at n = 1319 is shown as one";
  }
}

TEST(CompareCase, OpTableDiffAndStaleHintGoFromAToB) {
  auto c = CompareCase("gmm/t_3", Loaded(CaseStatus::kPass, {}, {{"ns.fused.default", "[2]", 4, 0}}),
                       Loaded(CaseStatus::kFail, {}, {{"ns.fused_quant.default", "[2]", 4, 0}}));
  ASSERT_EQ(c.ops.removed.size(), 1u);
  EXPECT_EQ(c.ops.removed[0].op, "ns.fused.default");
  ASSERT_EQ(c.ops.stale.size(), 1u);
  EXPECT_EQ(StaleHintText(c.ops.stale[0]), "expectation may be stale: ns.fused.default → ns.fused_quant.default");
}

// Through a real store: sha prefixes, run:ID, newest finished result per case, filters.
class CompareStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = std::move(Store::Open(dir_ / "h.db")).value(); }
  int64_t Run(const std::string& sha, const std::vector<std::pair<std::string, CaseStatus>>& cases) {
    int64_t commit = *store_->writer().UpsertCommit({sha, {}, std::nullopt, std::nullopt, ""});
    int64_t run = *store_->writer().BeginRun({commit, "refstack", "h", "{}", "host", "0"});
    for (const auto& [id, status] : cases) {
      int64_t cr = *store_->writer().BeginCase(run, id.substr(0, id.find('/')), id, "{}");
      EXPECT_TRUE(store_->writer().FinishCase(cr, {id, status, 0, "", {}, {}}).ok());
    }
    return run;
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(CompareStoreTest, ResolvesPrefixesAndRunsAndRefusesAmbiguousOrUnknownOnes) {
  Run("abc1000", {{"s/t_0", CaseStatus::kPass}});
  Run("abc2000", {{"s/t_0", CaseStatus::kPass}});
  int64_t run = Run("def0000", {{"s/t_0", CaseStatus::kFail}});
  EXPECT_EQ(ResolveSide(store_->reader(), "ABC1")->sha, "abc1000") << "hex is case-insensitive";
  EXPECT_EQ(ResolveSide(store_->reader(), "abc2000")->sha, "abc2000");
  EXPECT_EQ(ResolveSide(store_->reader(), "abc0").error().code, ExitCode::kUsage) << "unknown";
  EXPECT_EQ(ResolveSide(store_->reader(), "abc").error().code, ExitCode::kUsage) << "shorter than 4 digits";
  EXPECT_EQ(ResolveSide(store_->reader(), "abcg").error().code, ExitCode::kUsage) << "not hex";
  EXPECT_NE(ResolveSide(store_->reader(), "abc0").error().message.find("no stored commit"), std::string::npos);
  EXPECT_EQ(ResolveSide(store_->reader(), "run:" + std::to_string(run))->sha, "def0000");
  EXPECT_EQ(ResolveSide(store_->reader(), "run:99").error().code, ExitCode::kUsage);
  EXPECT_EQ(ResolveSide(store_->reader(), "run:x").error().code, ExitCode::kUsage);
  EXPECT_EQ(ResolveSide(store_->reader(), "zzzz").error().code, ExitCode::kUsage);
}

// run:ID takes the whole rest as a positive id: a prefix that parses (run:1x names run 1
// here, which exists) is no id, nor is zero, a sign, a space or a number past int64.
TEST_F(CompareStoreTest, ARunSpecIsAWholePositiveIdOrAUsageErrorNamingIt) {
  const int64_t first = Run("abc1000", {{"s/t_0", CaseStatus::kPass}});
  Run("abc2000", {{"s/t_0", CaseStatus::kPass}});
  ASSERT_EQ(first, 1);
  EXPECT_EQ(ResolveSide(store_->reader(), "run:1")->sha, "abc1000");
  for (const std::string spec : {"run:", "run:1x", "run:1 ", "run: 1", "run:+1", "run:-1", "run:0", "run:01x",
                                 "run:99999999999999999999", "run:1\n<b>&"}) {
    auto side = ResolveSide(store_->reader(), spec);
    ASSERT_FALSE(side.ok()) << spec << " resolved to " << side->sha;
    EXPECT_EQ(side.error().code, ExitCode::kUsage) << spec;
    EXPECT_NE(side.error().message.find("'" + spec + "': run:ID takes a positive run id"), std::string::npos)
        << side.error().message;
  }
}

TEST_F(CompareStoreTest, AmbiguousPrefixNamesTheCandidates) {
  Run("abc1000", {{"s/t_0", CaseStatus::kPass}});
  Run("abc1999", {{"s/t_0", CaseStatus::kPass}});
  auto r = ResolveSide(store_->reader(), "abc1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  EXPECT_NE(r.error().message.find("abc1000, abc1999"), std::string::npos) << r.error().message;
}

TEST_F(CompareStoreTest, ComparesTheNewestResultPerCaseAndFilters) {
  Run("aaaa0001", {{"s/t_0", CaseStatus::kPass}, {"s/t_1", CaseStatus::kPass}, {"x/t_0", CaseStatus::kPass}});
  Run("bbbb0001", {{"s/t_0", CaseStatus::kPass}, {"x/t_0", CaseStatus::kPass}});
  Run("bbbb0001", {{"s/t_0", CaseStatus::kFail}});  // a rerun: the newest result of s/t_0 wins
  auto a = *ResolveSide(store_->reader(), "aaaa");
  auto b = *ResolveSide(store_->reader(), "bbbb");
  auto all = *CompareStored(store_->reader(), a, b, {});
  ASSERT_EQ(all.cases.size(), 3u);
  EXPECT_EQ(all.cases[0].case_id, "s/t_0");
  EXPECT_TRUE(all.cases[0].regressed);
  EXPECT_FALSE(all.cases[1].b.has_value()) << "s/t_1 is absent on B";
  EXPECT_TRUE(all.regressed());
  auto suite = *CompareStored(store_->reader(), a, b, {.suite = "x"});
  ASSERT_EQ(suite.cases.size(), 1u);
  EXPECT_FALSE(suite.regressed());
  auto glob = *CompareStored(store_->reader(), a, b, {.case_glob = "s/*_1"});
  ASSERT_EQ(glob.cases.size(), 1u);
  EXPECT_EQ(glob.cases[0].case_id, "s/t_1");
  EXPECT_EQ(CompareStored(store_->reader(), a, b, {.suite = "nope"}).error().code, ExitCode::kUsage);
}

}  // namespace
}  // namespace harness
