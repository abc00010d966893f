#include "harness/bisect/bisect_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "harness/bisect/bisect_sim.h"

namespace harness::bisect {
namespace {

// Drives a status search over positions 0..n where commits >= culprit fail (0: none).
Decision RunStatus(Search& s, int culprit, const std::set<int>& untestable = {}, int* runs = nullptr) {
  Decision d;
  for (int guard = 0; guard < 200; ++guard) {
    d = s.Decide();
    if (d.verdict != Verdict::kSearching) break;
    if (untestable.count(d.next_position)) {
      s.Skip(d.next_position);
      continue;
    }
    s.Add({d.next_position, 0, true, 0, culprit > 0 && d.next_position >= culprit});
    s.CountRun();
  }
  if (runs) *runs = s.runs_requested();
  return d;
}

TEST(BisectSearch, StatusFindsTheFirstFailingCommitAndVerifiesIt) {
  for (int culprit : {1, 2, 13, 31, 32}) {
    Search s(33, {SeriesSpec{}}, SearchOptions{});
    s.Add({0, 0, true, 0, false});
    s.Add({32, 0, true, 0, true});
    int runs = 0;
    Decision d = RunStatus(s, culprit, {}, &runs);
    ASSERT_EQ(d.verdict, Verdict::kCulprit) << "culprit " << culprit;
    EXPECT_EQ(d.culprit, culprit);
    EXPECT_GE(d.confidence, 0.95);
    EXPECT_LE(runs, 12) << "log2(32) = 5 steps plus the verification pair";
    EXPECT_GE(s.RunsAt(culprit), 2) << "the culprit is run again before it is reported";
    EXPECT_GE(s.RunsAt(culprit - 1), 2) << "and so is its parent";
  }
}

// Two target cases (two series) make two observations per run: a culprit and a parent
// with one stored run each are not verified until each has a second run of its own.
TEST(BisectSearch, VerificationCountsRunsNotTheObservationsOfSeveralCases) {
  const int culprit = 9;
  Search s(17, {SeriesSpec{}, SeriesSpec{}}, SearchOptions{});
  for (int position : {0, culprit - 1, culprit, 16})
    for (int series : {0, 1}) s.Add({position, series, true, 0, position >= culprit});
  EXPECT_EQ(s.RunsAt(culprit), 1);
  std::map<int, int> fresh;  // position -> runs the search asked for
  Decision d;
  for (int guard = 0; guard < 50; ++guard) {
    d = s.Decide();
    if (d.verdict != Verdict::kSearching) break;
    for (int series : {0, 1}) s.Add({d.next_position, series, true, 0, d.next_position >= culprit});
    s.CountRun();
    ++fresh[d.next_position];
  }
  ASSERT_EQ(d.verdict, Verdict::kCulprit);
  EXPECT_EQ(d.culprit, culprit);
  EXPECT_GE(fresh[culprit], 1) << "the culprit is run again before it is reported";
  EXPECT_GE(fresh[culprit - 1], 1) << "and so is its parent";
  EXPECT_EQ(s.RunsAt(culprit), 1 + fresh[culprit]);
}

TEST(BisectSearch, AFlakyBadEndIsNoCulprit) {
  // The bad end failed once; every rerun passes: it was a flake.
  Search s(17, {SeriesSpec{}}, SearchOptions{});
  s.Add({0, 0, true, 0, false});
  s.Add({16, 0, true, 0, true});
  Decision d = RunStatus(s, 0);
  EXPECT_EQ(d.verdict, Verdict::kNoCulprit);
  EXPECT_GE(d.confidence, 0.95);
}

// Every failing run of the bad end argues against "no culprit", and every passing one for
// it; runs of interior commits too. Each position's runs, one more at a time.
TEST(BisectSearch, EachFailingRunOfAStatusMakesNoCulpritLessLikely) {
  for (int position : {16, 9}) {
    SCOPED_TRACE(position);
    double last_no_culprit = 1;
    for (int fails = 1; fails <= 4; ++fails) {
      Search s(17, {SeriesSpec{}}, SearchOptions{});
      s.Add({0, 0, true, 0, false});
      if (position != 16) s.Add({16, 0, true, 0, true});
      for (int i = 0; i < fails; ++i) s.Add({position, 0, true, 0, true});
      const double no_culprit = s.Posterior()[0];
      EXPECT_LT(no_culprit, last_no_culprit) << fails << " failing runs";
      last_no_culprit = no_culprit;
    }
    Search passed(17, {SeriesSpec{}}, SearchOptions{});
    passed.Add({0, 0, true, 0, false});
    passed.Add({position, 0, true, 0, true});
    const double one_fail = passed.Posterior()[0];
    passed.Add({position, 0, true, 0, false});
    EXPECT_GT(passed.Posterior()[0], one_fail) << "a pass of the same commit argues for no culprit";
  }
}

// The status model's posterior is the flake model's, term for term: a run shows its
// commit's status with probability 1 - flake_rate, and the hypotheses start from the prior
// (no culprit, the rest shared evenly). Runs of every kind at several positions, each
// hypothesis computed by hand.
TEST(BisectSearch, TheStatusPosteriorIsTheFlakeModelsByHand) {
  SearchOptions o;
  o.flake_rate = 0.1;
  Search s(5, {SeriesSpec{}}, o);
  const std::vector<std::pair<int, bool>> runs = {{0, false}, {4, true}, {2, true}, {2, false},
                                                  {1, false}, {3, true}, {4, true}, {1, true}};
  for (const auto& [position, failed] : runs) s.Add({position, 0, true, 0, failed});
  std::vector<double> want(5);
  for (int culprit = 0; culprit < 5; ++culprit) {
    double p = culprit == 0 ? o.prior_no_culprit : (1 - o.prior_no_culprit) / 4;
    for (const auto& [position, failed] : runs) {
      const bool bad = culprit > 0 && position >= culprit;
      p *= failed == bad ? 1 - o.flake_rate : o.flake_rate;
    }
    want[culprit] = p;
  }
  double total = 0;
  for (double p : want) total += p;
  const std::vector<double> post = s.Posterior();
  ASSERT_EQ(post.size(), 5u);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(post[j], want[j] / total, 1e-12) << j;
}

TEST(BisectSearch, ASkippedNeighbourOfTheCulpritMakesItAmbiguous) {
  // Commit 9 cannot be tested; the culprit is 10: git's answer is "9 or 10".
  Search s(17, {SeriesSpec{}}, SearchOptions{});
  s.Add({0, 0, true, 0, false});
  s.Add({16, 0, true, 0, true});
  int runs = 0;
  Decision d = RunStatus(s, 10, {9}, &runs);
  ASSERT_EQ(d.verdict, Verdict::kAmbiguous);
  EXPECT_EQ(d.range, (std::vector<int>{9, 10}));
  EXPECT_LE(runs, 12) << "answered once the rest is settled, not when the run budget is spent";
}

TEST(BisectSearch, ASkippedCommitAwayFromTheCulpritDoesNotMatter) {
  Search s(17, {SeriesSpec{}}, SearchOptions{});
  s.Add({0, 0, true, 0, false});
  s.Add({16, 0, true, 0, true});
  Decision d = RunStatus(s, 12, {4, 8});
  ASSERT_EQ(d.verdict, Verdict::kCulprit);
  EXPECT_EQ(d.culprit, 12);
}

// Only a commit inside the range can be skipped: the ends define it, and a position outside
// it (a caller's off-by-one) is no commit of it.
TEST(BisectSearch, OnlyACommitInsideTheRangeIsSkipped) {
  Search s(5, {SeriesSpec{}}, SearchOptions{});
  for (int outside : {-1, 0, 4, 5, 9}) s.Skip(outside);
  EXPECT_TRUE(s.skipped().empty());
  s.Skip(1);
  s.Skip(3);
  EXPECT_EQ(s.skipped(), (std::set<int>{1, 3}));
}

// The 95 % credible range holds the positions from the one where the culprit posterior
// reaches 2.5 % to the one where it passes 97.5 %: all but certain, that is the culprit alone.
TEST(BisectSearch, TheCredibleRangeOfASettledCulpritIsThatCommit) {
  Search s(9, {SeriesSpec{}}, SearchOptions{});
  for (int position = 0; position < 9; ++position)
    for (int run = 0; run < 2; ++run) s.Add({position, 0, true, 0, position >= 5});
  EXPECT_GT(s.Posterior()[5], 0.99);
  EXPECT_EQ(s.CredibleRange(), (std::vector<int>{5}));
  EXPECT_NEAR(s.ProbabilityBad(4), 0, 1e-3);
  EXPECT_NEAR(s.ProbabilityBad(5), 1, 1e-3);
}

// A metric where lower is better (a latency): a rise is the regression, searched like a
// drop of accuracy. Values 1.0 before commit 5 and 1.2 from it on, noise 0.01.
TEST(BisectSearch, ALowerIsBetterMetricIsSearchedForARise) {
  Search s(17, {SeriesSpec{false, 0.01}}, SearchOptions{});
  std::mt19937_64 noise(5);
  std::normal_distribution<double> jitter(0, 0.01);
  auto run = [&](int position) { s.Add({position, 0, false, (position >= 5 ? 1.2 : 1.0) + jitter(noise), false}); };
  run(0);
  run(16);
  Decision d;
  for (int guard = 0; guard < 60; ++guard) {
    d = s.Decide();
    if (d.verdict != Verdict::kSearching) break;
    run(d.next_position);
    s.CountRun();
  }
  ASSERT_EQ(d.verdict, Verdict::kCulprit);
  EXPECT_EQ(d.culprit, 5);
}

// Accuracy only, one run at each end, a bad end g noise sds below the good one. Without a
// culprit the gap is noise, whose density falls as exp(-g^2 / 4) (two runs' difference); the
// drop's prior is centred on the gap the ends show, so a culprit explains any gap about as
// well. The odds of no culprit from the ends alone then fall as that density: from 8 to 12
// sds by exp(-20). A prior stuck at the smallest drop looked for (the ends' runs not read)
// makes a large gap count against a culprit too, and the odds fell by only exp(-8.7).
TEST(BisectSearch, TheDropsPriorFollowsTheGapTheEndsShow) {
  auto no_culprit_log_odds = [](double gap_sds) {
    constexpr double kSigma = 0.003;
    Search s(17, {SeriesSpec{true, kSigma}}, SearchOptions{});
    s.Add({0, 0, false, 0.925, false});
    s.Add({16, 0, false, 0.925 - gap_sds * kSigma, false});
    const double p = s.Posterior()[0];
    return std::log(p) - std::log1p(-p);
  };
  EXPECT_NEAR(no_culprit_log_odds(12) - no_culprit_log_odds(8), -(12.0 * 12 - 8 * 8) / 4, 0.5);
  EXPECT_NEAR(no_culprit_log_odds(16) - no_culprit_log_odds(12), -(16.0 * 16 - 12 * 12) / 4, 0.5);
}

TEST(BisectSearch, ARunBudgetEndsAmbiguousWithACredibleRange) {
  SearchOptions o;
  o.max_runs = 2;
  Search s(65, {SeriesSpec{}}, o);
  s.Add({0, 0, true, 0, false});
  s.Add({64, 0, true, 0, true});
  Decision d = RunStatus(s, 40);
  ASSERT_EQ(d.verdict, Verdict::kAmbiguous);
  EXPECT_EQ(s.runs_requested(), 2);
  ASSERT_FALSE(d.range.empty());
  EXPECT_LE(d.range.front(), 40);
  EXPECT_GE(d.range.back(), 40);
}

// A decision without an answer (still searching, or out of runs) carries the posterior of
// the best answer so far: "no culprit" when that leads (a bad end that failed once, then
// passed), not the leading culprit's smaller share.
TEST(BisectSearch, ADecisionWithoutAnAnswerCarriesTheLeadingPosterior) {
  for (int max_runs : {30, 0}) {
    SearchOptions o;
    o.max_runs = max_runs;
    Search s(17, {SeriesSpec{}}, o);
    s.Add({0, 0, true, 0, false});
    s.Add({16, 0, true, 0, true});
    s.Add({16, 0, true, 0, false});
    const auto post = s.Posterior();
    ASSERT_GT(post[0], *std::max_element(post.begin() + 1, post.end()));
    ASSERT_LT(post[0], o.confidence);
    const Decision d = s.Decide();
    EXPECT_EQ(d.verdict, max_runs ? Verdict::kSearching : Verdict::kAmbiguous);
    EXPECT_NEAR(d.confidence, post[0], 1e-12) << "max_runs " << max_runs;
  }
}

struct SimTally {
  int correct = 0;
  double mean_runs = 0;
};

// `count` histories shaped like `h`, history i drawn from seed seed_base + i; with a
// culprit when pick_seed > 0, at a commit drawn from pick_seed's generator.
SimTally Simulate(SimHistory h, int count, uint64_t seed_base, uint64_t pick_seed = 0) {
  std::mt19937_64 pick(pick_seed);
  SimTally t;
  for (int i = 0; i < count; ++i) {
    h.culprit = pick_seed > 0 ? 1 + static_cast<int>(pick() % 64) : 0;
    const SimResult r = SimulateSearch(h, seed_base + i, SearchOptions{});
    t.correct += r.correct;
    t.mean_runs += static_cast<double>(r.runs) / count;
  }
  return t;
}

// The noisy metric: 0.3 pp run-to-run noise at n = 1319, as the calibrated stand-in.
TEST(BisectSearch, NoisyMetricDropsOfTheSeedAreFound) {
  EXPECT_GE(Simulate(SimHistory{}, 30, 100, 11).correct, 30) << "1.3 pp is 4 noise sds: every culprit is found";
}

TEST(BisectSearch, ASmallDropIsFoundFromTheQuestionsItLoses) {
  // 0.6 pp is 8 questions, about two runs' noise sds: the accuracy alone cannot place it
  // reliably, the same 8 questions lost on every run can.
  std::mt19937_64 pick(12);
  int correct = 0;
  double runs_questions = 0, runs_values = 0;
  for (int i = 0; i < 20; ++i) {
    SimHistory h;
    h.drop = 0.006;
    h.culprit = 1 + static_cast<int>(pick() % 64);
    auto r = SimulateSearch(h, 300 + i, SearchOptions{});
    correct += r.correct;
    runs_questions += r.runs;
    h.per_question = false;
    runs_values += SimulateSearch(h, 300 + i, SearchOptions{}).runs;
  }
  EXPECT_GE(correct, 19);
  EXPECT_LT(runs_questions, 0.7 * runs_values) << "the questions settle it in far fewer runs";
}

// Hand-made runs over 400 questions at positions 0..2 (the last question always wrong):
// `lost` are the questions a run got wrong besides it.
Observation RunAt(int position, std::initializer_list<int> lost) {
  Observation o{position, 0, false, 0, false, std::string(399, '1') + "0"};
  for (int q : lost) o.questions[q] = '0';
  o.value = 1 - (1.0 + static_cast<double>(lost.size())) / 400;
  return o;
}

Search ThreeCommits() {
  Search s(3, {SeriesSpec{true, 0.005}}, SearchOptions{});
  s.Add(RunAt(0, {}));
  s.Add(RunAt(2, {0, 1, 2, 3, 4, 5, 6, 7}));  // the known-bad run lost questions 0-7
  return s;
}

TEST(BisectSearch, TheSameLostQuestionsPlaceTheCulprit) {
  Search lost_at_1 = ThreeCommits();
  lost_at_1.Add(RunAt(1, {0, 1, 2, 3, 4, 5, 6, 7}));
  auto post = lost_at_1.Posterior();
  EXPECT_GT(post[1], 20 * post[2]) << "commit 1 already lost them";
  EXPECT_GT(post[1], 0.8);
  Search kept_at_1 = ThreeCommits();
  kept_at_1.Add(RunAt(1, {}));
  post = kept_at_1.Posterior();
  EXPECT_GT(post[2], 20 * post[1]) << "commit 1 still had them";
  EXPECT_GT(post[2], 0.8);
}

TEST(BisectSearch, DifferentLostQuestionsOnEachRunAreNoise) {
  // Reruns of both ends lose other questions each time: borderline questions, not a drop.
  Search noise = ThreeCommits();
  for (auto [position, lost] : {std::pair{0, std::vector{0, 1, 2, 3}}, {2, {}}, {0, {4, 5, 6, 7}}, {2, {0, 5}}}) {
    Observation o = RunAt(position, {});
    for (int q : lost) o.questions[q] = '0';
    noise.Add(o);
  }
  const auto post = noise.Posterior();
  EXPECT_GT(post[0], 0.6) << "no culprit explains runs that disagree question by question";
  // The same reruns losing the same eight questions at the bad end: a drop after all.
  Search drop = ThreeCommits();
  drop.Add(RunAt(0, {}));
  drop.Add(RunAt(2, {0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_LT(drop.Posterior()[0], 0.1);
}

// Leaving a question out is no evidence: a run that answers nothing changes nothing, and a
// run that answers only the eight questions the ends disagree on is the full run with the
// others unanswered, and places the culprit as the full run does.
TEST(BisectSearch, UnansweredQuestionsAreNoEvidence) {
  Search base = ThreeCommits();
  const auto before = base.Posterior();
  Observation nothing = RunAt(1, {});
  nothing.questions.assign(400, '-');
  base.Add(nothing);
  const auto after = base.Posterior();
  for (std::size_t j = 0; j < before.size(); ++j) EXPECT_NEAR(after[j], before[j], 1e-12) << j;
  Observation partial = RunAt(1, {0, 1, 2, 3, 4, 5, 6, 7});
  for (int q = 8; q < 400; ++q) partial.questions[q] = '-';
  Search with_partial = ThreeCommits();
  with_partial.Add(partial);
  EXPECT_GT(with_partial.Posterior()[1], 0.8) << "the lost questions alone place the culprit";
  Observation dashed = partial;
  for (int q = 8; q < 400; ++q) dashed.questions[q] = 'x';
  Search with_dashed = ThreeCommits();
  with_dashed.Add(dashed);
  EXPECT_NEAR(with_dashed.Posterior()[1], with_partial.Posterior()[1], 1e-12) << "any non-answer character";
  // Outcomes shorter than the series (a smaller eval's run) hold only their own questions:
  // cut from a whole run, whatever the string kept past its end is not read.
  Observation cut = RunAt(1, {0, 1, 2, 3, 4, 5, 6, 7});
  cut.questions.resize(8);
  Search with_cut = ThreeCommits();
  with_cut.Add(cut);
  for (std::size_t j = 0; j < before.size(); ++j)
    EXPECT_NEAR(with_cut.Posterior()[j], with_partial.Posterior()[j], 1e-12) << j;
}

// A run inside the range evaluates the questions the ends disagree on (and a control set);
// a rerun of an end adds a larger control set; --full-evals takes every question.
TEST(BisectSearch, QuestionsForARunInsideTheRangeAreTheDifferingOnes) {
  SearchOptions o;
  o.questions.control_share = 0;
  Search s(3, {SeriesSpec{true, 0.005}}, o);
  s.Add(RunAt(0, {}));
  s.Add(RunAt(2, {0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s.QuestionsFor(1, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  const auto at_end = s.QuestionsFor(2, 0);
  EXPECT_GT(at_end.size(), 8u + 50u) << "a rerun of an end: 25 % of the rest as controls";
  EXPECT_LT(at_end.size(), 400u);
  o.questions.full = true;
  Search full(3, {SeriesSpec{true, 0.005}}, o);
  full.Add(RunAt(0, {}));
  full.Add(RunAt(2, {0, 1}));
  EXPECT_EQ(full.QuestionsFor(1, 0).size(), 400u);
}

// Each metric case has its own questions: a run's questions for one series come from that
// series' runs alone, never from another case's (a longer one, with other differing
// questions) or from a status series.
TEST(BisectSearch, QuestionsForOneSeriesAreChosenFromItsOwnRunsAlone) {
  SearchOptions o;
  o.questions.control_share = 0;
  Search s(3, {SeriesSpec{true, 0.005}, SeriesSpec{true, 0.005}, SeriesSpec{true, 0.005}}, o);
  s.Add(RunAt(0, {}));
  s.Add(RunAt(2, {0, 1, 2, 3, 4, 5, 6, 7}));  // series 0: 400 questions, 0-7 lost
  for (int end : {0, 2}) {
    Observation short_one{end, 1, false, 0, false, std::string(40, '1')};
    if (end == 2) short_one.questions[30] = short_one.questions[31] = '0';
    short_one.value = end == 2 ? 0.95 : 1;
    s.Add(short_one);
    s.Add(Observation{end, 2, true, 0, end == 2, std::string(600, end == 2 ? '0' : '1')});
  }
  EXPECT_EQ(s.QuestionsFor(1, 1), (std::vector<int>{30, 31})) << "series 1's own differing questions";
  EXPECT_EQ(s.QuestionsFor(1, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  for (int q : s.QuestionsFor(2, 1)) EXPECT_LT(q, 40) << "a question series 1 does not have";
}

// Each series keeps the flip rates it was given, in whatever order the series are given
// theirs: rates set for a lower series after a higher one leave the higher one's in place.
// Rates for a negative series belong to no series and change nothing.
TEST(BisectSearch, FlipRatesOfEachSeriesStayWhateverTheOrderTheyAreSet) {
  std::vector<std::string> history(4, std::string(400, '1'));
  for (int q = 0; q < 40; ++q) history[q % 4][q] = '0';  // questions 0-39 flipped before
  const FlipRates rates = FlipRates::Estimate(history, 0.002, 0.06);
  auto make = [&](std::vector<int> order) {
    Search s(3, {SeriesSpec{true, 0.005}, SeriesSpec{true, 0.005}}, SearchOptions{});
    for (int series : order) s.SetFlipRates(series, rates);
    for (int series : {0, 1}) {
      for (Observation o : {RunAt(0, {}), RunAt(2, {0, 1, 2, 3, 100, 101}), RunAt(1, {0, 1, 2, 3})}) {
        o.series = series;
        s.Add(o);
      }
    }
    return s.Posterior();
  };
  const auto both = make({1, 0}), other_order = make({0, 1}), first_only = make({0});
  const auto with_negative = make({-1, 1, -7, 0});
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(both[j], other_order[j], 1e-12) << j;
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(with_negative[j], both[j], 1e-12) << j;
  EXPECT_GT(std::abs(both[1] - first_only[1]), 1e-6) << "series 1's rates must matter for the test to tell";
}

// Runs that each answered only part of the questions (none answered nine in ten of them, so
// none sets the share of right answers the fixed class prior starts from) still weigh the
// culprit hypotheses: a finite posterior that sums to one and points at the culprit.
TEST(BisectSearch, RunsThatEachAnsweredPartOfTheQuestionsStillGiveAPosterior) {
  Search s(3, {SeriesSpec{true, 0.005}}, SearchOptions{});
  for (Observation o : {RunAt(0, {}), RunAt(2, {0, 1, 2, 3, 4, 5, 6, 7}), RunAt(1, {0, 1, 2, 3, 4, 5, 6, 7})}) {
    for (int q = o.position == 1 ? 0 : 200; q < (o.position == 1 ? 200 : 400); ++q)
      if (q >= 8) o.questions[q] = '-';
    s.Add(o);
  }
  const auto post = s.Posterior();
  double sum = 0;
  for (double x : post) {
    EXPECT_TRUE(std::isfinite(x)) << x;
    sum += x;
  }
  EXPECT_NEAR(sum, 1, 1e-9);
  EXPECT_GT(post[1], post[2]) << "the run at 1 lost what the bad end lost";
}

// Values alone (no per-question outcomes): the drop the two ends show sets what size of drop
// each culprit hypothesis expects. A drop thirty noise sds deep, seen twice at each end and
// once at a commit between them, is a culprit at or before that commit, never "no culprit".
TEST(BisectSearch, TheDropTheEndsShowIsTheDropEachCulpritIsExpectedToMake) {
  for (bool higher_is_better : {true, false}) {
    const double good = higher_is_better ? 0.9 : 0.6, bad = higher_is_better ? 0.6 : 0.9;
    Search s(9, {SeriesSpec{higher_is_better, 0.01}}, SearchOptions{});
    for (int k = 0; k < 2; ++k) {
      s.Add(Observation{0, 0, false, good + 0.002 * k, false, ""});
      s.Add(Observation{8, 0, false, bad - 0.002 * k, false, ""});
    }
    s.Add(Observation{4, 0, false, bad + 0.001, false, ""});
    const auto post = s.Posterior();
    EXPECT_LT(post[0], 1e-6) << "no culprit, higher is better: " << higher_is_better;
    double at_or_before = 0;
    for (int j = 1; j <= 4; ++j) at_or_before += post[j];
    EXPECT_GT(at_or_before, 0.999) << higher_is_better;
  }
}

// Heavy noise (81 borderline questions, faults that leave an affected question right a
// quarter of the time), flip rates from the earlier nightlies, runs of chosen questions:
// every culprit found, at a fraction of a whole eval per run.
TEST(BisectSearch, PartialRunsFindTheCulpritForLessThanThreeFullEvals) {
  std::mt19937_64 pick(13);
  int correct = 0;
  double evals = 0;
  for (int i = 0; i < 15; ++i) {
    SimHistory h;
    h.fragile = 81;
    h.affected_right = 0.25;
    h.culprit = 1 + static_cast<int>(pick() % 64);
    const SimResult r = SimulateSearch(h, 500 + i, SearchOptions{});
    correct += r.correct;
    evals += r.questions / h.questions;
    EXPECT_LT(r.questions, r.runs * h.questions) << "runs inside the range are partial";
  }
  EXPECT_GE(correct, 15);
  EXPECT_LT(evals / 15, 3.0);
}

// The stand-in's fault under heavy rerun noise: the questions it moves were already
// borderline, right in 3 of 4 runs before it and 1 in 4 after (bisect_sim.h). A model in
// which every affected question was settled right names wrong commits here.
TEST(BisectSearch, AFaultThatMovesBorderlineQuestionsIsFound) {
  SimHistory h;
  h.fragile = 160;
  h.affected_before = 0.75;
  h.affected_right = 0.25;
  EXPECT_GE(Simulate(h, 15, 700, 14).correct, 14);
}

// Heavy noise, faults that leave their questions right in half the runs from the culprit
// on: a model in which each affected question picked its own rate after the culprit, none of
// them 0.5, named a commit or two after the culprit here (18 of these 20).
TEST(BisectSearch, AFaultThatLeavesItsQuestionsRightHalfTheTimeIsFound) {
  SimHistory h;
  h.fragile = 160;
  h.affected_right = 0.5;
  EXPECT_GE(Simulate(h, 20, 900, 16).correct, 20);
}

// Four runs at each end that agree question by question leave no question a culprit could
// have changed: no-culprit is all but certain. A culprit hypothesis that kept "no question
// affected" in its mixture could not fall below (1 - pi)^N of H_0: 0.71 was the most this
// evidence gave no-culprit.
TEST(BisectSearch, RerunsThatAgreeQuestionByQuestionRuleEveryCulpritOut) {
  Search s(3, {SeriesSpec{true, 0.005}}, SearchOptions{});
  for (int k = 0; k < 4; ++k) {
    s.Add(RunAt(0, {}));
    s.Add(RunAt(2, {}));
  }
  EXPECT_GT(s.Posterior()[0], 0.99);
}

TEST(BisectSearch, NoisyMetricWithoutADropIsNoCulprit) {
  const SimTally t = Simulate(SimHistory{}, 20, 200);
  EXPECT_GE(t.correct, 18);
  EXPECT_LT(t.mean_runs, 12) << "no-culprit is settled at the ends, not by searching the range (15.5 runs before)";
}

// Heavy noise (160 borderline questions) and no fault: borderline questions that happen to
// be wrong more often after some commit look like a small moving fault there. The bad end
// is rerun while no-culprit leads (every culprit hypothesis is tested there at once); when
// the search bisected the range instead, it missed 3 of these 20 and took 19.2 runs on
// average.
TEST(BisectSearch, HeavyNoiseWithoutADropIsSettledAtTheBadEnd) {
  SimHistory h;
  h.fragile = 160;
  const SimTally t = Simulate(h, 20, 200);
  EXPECT_GE(t.correct, 19);
  EXPECT_LT(t.mean_runs, 16);
}

TEST(BisectSearch, PlainBisectionAtTheGateMissesTheSeedsDrop) {
  // Why the search exists: 0.9234 -> 0.9104 around a 0.91 gate, one run per commit.
  std::mt19937_64 pick(11);
  int correct = 0;
  for (int i = 0; i < 30; ++i) {
    SimHistory h;
    h.culprit = 1 + static_cast<int>(pick() % 64);
    correct += SimulatePlainBisect(h, 100 + i, 0.91).correct;
  }
  EXPECT_LE(correct, 15);
}

TEST(BisectSearch, VerdictWords) {
  EXPECT_EQ(VerdictWord(Verdict::kSearching), "searching");
  EXPECT_EQ(VerdictWord(Verdict::kCulprit), "culprit");
  EXPECT_EQ(VerdictWord(Verdict::kNoCulprit), "no-culprit");
  EXPECT_EQ(VerdictWord(Verdict::kAmbiguous), "ambiguous");
}

}  // namespace
}  // namespace harness::bisect

namespace harness::bisect {
namespace bisect_search_parallel_test {

// A status search over 64 commits with both ends stored, nothing else known yet.
Search FreshStatusSearch(int max_runs = BisectDefaults::kMaxRuns) {
  SearchOptions options;
  options.max_runs = max_runs;
  Search s(65, {SeriesSpec{}}, options);
  s.Add({0, 0, true, 0, false});
  s.Add({64, 0, true, 0, true});
  return s;
}

TEST(BisectSearchParallel, PendingRunsSpreadOverTheRangeInsteadOfCrowdingAtItsMedian) {
  Search s = FreshStatusSearch();
  const Decision first = s.Decide();
  ASSERT_EQ(first.verdict, Verdict::kSearching);
  EXPECT_NEAR(first.next_position, 32, 1) << "one step at a time: the median";
  std::vector<int> pending = {first.next_position};
  for (int k = 1; k < 4; ++k) {
    const Decision d = s.Decide(pending);
    ASSERT_EQ(d.verdict, Verdict::kSearching);
    ASSERT_GE(d.next_position, 1);
    EXPECT_EQ(std::count(pending.begin(), pending.end(), d.next_position), 0) << "a second run at one commit tells nothing new";
    pending.push_back(d.next_position);
  }
  // Four cuts leave five parts; the widest holds at most a quarter of the range (the K best
  // single choices, all at the median, would leave two halves).
  std::sort(pending.begin(), pending.end());
  int widest = pending.front(), previous = pending.front();
  for (int p : pending) widest = std::max(widest, p - previous), previous = p;
  widest = std::max(widest, 64 - previous);
  EXPECT_LE(widest, 16) << "cuts at " << ::testing::PrintToString(pending);
  EXPECT_EQ(s.Decide().next_position, first.next_position) << "asking changes nothing: no run came back";
}

// A rerun of an end in flight (the known-good end's, which a metric's search asks for
// often) is a run like any other: the cuts inside the range still count, and the next
// one splits a half rather than landing beside the median's.
TEST(BisectSearchParallel, ARunAtAnEndInFlightLeavesTheCutsInsideCounted) {
  Search s = FreshStatusSearch();
  for (const std::vector<int>& pending :
       {std::vector<int>{0, 32}, std::vector<int>{32, 64}, std::vector<int>{0, 32, 64}}) {
    const Decision d = s.Decide(pending);
    ASSERT_EQ(d.verdict, Verdict::kSearching);
    EXPECT_TRUE(std::abs(d.next_position - 16) <= 1 || std::abs(d.next_position - 48) <= 1)
        << "in flight " << ::testing::PrintToString(pending) << ", chose " << d.next_position;
  }
}

TEST(BisectSearchParallel, ABatchFillsTheFreeSlotsAndNoMore) {
  Search s = FreshStatusSearch();
  for (int slots : {1, 2, 3, 5}) {
    const std::vector<int> batch = s.DecideBatch({}, slots);
    EXPECT_EQ(batch.size(), static_cast<std::size_t>(slots)) << ::testing::PrintToString(batch);
    for (int p : batch) {
      EXPECT_GE(p, 1);
      EXPECT_LE(p, 63) << "the ends have their runs";
      EXPECT_EQ(std::count(batch.begin(), batch.end(), p), 1) << "two runs of one commit in one batch";
    }
  }
  // Chosen together, K cuts leave K + 1 parts of nearly even width (greedy placement from
  // the median would leave 32 commits between two of its cuts at K = 2, 16 at K = 6).
  for (int slots : {2, 4, 6}) {
    std::vector<int> cuts = s.DecideBatch({}, slots);
    std::sort(cuts.begin(), cuts.end());
    int widest = cuts.front(), previous = cuts.front();
    for (int p : cuts) widest = std::max(widest, p - previous), previous = p;
    EXPECT_LE(std::max(widest, 64 - previous), 64 / (slots + 1) + 3) << "cuts at " << ::testing::PrintToString(cuts);
  }
  const std::vector<int> beside = s.DecideBatch({32}, 2);
  EXPECT_EQ(beside.size(), 2u);
  EXPECT_EQ(std::count(beside.begin(), beside.end(), 32), 0) << "32 is in flight already";
  Search tight = FreshStatusSearch(/*max_runs=*/2);
  EXPECT_EQ(tight.DecideBatch({}, 4).size(), 2u) << "the budget caps the batch";
}

// Twelve commits left, 29..40 (28 good, 40 bad, the bad end run thrice): four cuts leave
// five parts, at best 2, 2, 2, 3 and 3 commits. Placed greedily from the median and then
// moved one at a time (the search before MostEvenCuts), they went to 29, 31, 34 and 37:
// parts of 1, 2, 3, 3, 3, which no single move makes more even.
TEST(BisectSearchParallel, ABatchOfCutsIsPlacedTogetherWhereThePartsAreMostEven) {
  Search s = FreshStatusSearch();
  for (int p : {14, 28, 40, 52, 64, 64}) s.Add({p, 0, true, 0, p >= 35}), s.CountRun();
  std::vector<int> cuts = s.DecideBatch({}, 4);
  ASSERT_EQ(cuts.size(), 4u);
  std::sort(cuts.begin(), cuts.end());
  std::vector<int> parts;
  int previous = 28;
  for (int c : cuts) {
    ASSERT_GT(c, 28) << ::testing::PrintToString(cuts);
    ASSERT_LT(c, 40) << ::testing::PrintToString(cuts);
    parts.push_back(c - previous), previous = c;
  }
  parts.push_back(40 - previous);
  std::sort(parts.begin(), parts.end());
  EXPECT_EQ(parts, (std::vector<int>{2, 2, 2, 3, 3})) << "cuts at " << ::testing::PrintToString(cuts);
  // A cut already in flight stays where it is; the new ones fit around it.
  const std::vector<int> beside = s.DecideBatch({31}, 3);
  ASSERT_EQ(beside.size(), 3u);
  EXPECT_EQ(std::count(beside.begin(), beside.end(), 31), 0) << ::testing::PrintToString(beside);
  for (int c : beside) EXPECT_TRUE(c > 31 && c < 40) << ::testing::PrintToString(beside);
}

// The entropy (nats) of which part between the sorted cuts holds the culprit, "no culprit"
// counted with the part after the last cut: what a batch of runs at the cuts can tell.
double PartsEntropy(const std::vector<double>& post, std::vector<int> cuts) {
  std::sort(cuts.begin(), cuts.end());
  std::vector<double> parts(cuts.size() + 1, 0.0);
  for (int j = 1; j < static_cast<int>(post.size()); ++j)
    parts[std::lower_bound(cuts.begin(), cuts.end(), j) - cuts.begin()] += post[j];
  parts.back() += post[0];
  double h = 0;
  for (double p : parts)
    if (p > 0) h -= p * std::log(p);
  return h;
}

// The highest PartsEntropy of any `count` cuts among `free` beside those in `cuts` already,
// every choice tried.
double BestPartsEntropy(const std::vector<double>& post, const std::vector<int>& free, std::size_t count,
                        std::vector<int>& cuts, std::size_t from = 0) {
  if (cuts.size() == count) return PartsEntropy(post, cuts);
  double best = 0;
  for (std::size_t i = from; i < free.size(); ++i) {
    cuts.push_back(free[i]);
    best = std::max(best, BestPartsEntropy(post, free, count, cuts, i + 1));
    cuts.pop_back();
  }
  return best;
}

// Cuts placed together split the culprit posterior, not the commits, most evenly: with prior
// weights that make a few commits of the live range likelier (watched paths), each batch's
// partition is as even as the best of every choice of as many commits not run yet; beside a
// run in flight, whose cut stays, as even as the best choice beside it.
TEST(BisectSearchParallel, ABatchOfCutsSplitsAnUnevenPosteriorMostEvenly) {
  Search s(65, {SeriesSpec{}}, SearchOptions{});
  std::vector<double> weights(65, 0.2);
  for (int j : {30, 31, 36}) weights[j] = 1;
  weights[38] = 3;
  s.SetPriorWeights(weights);
  const std::set<int> run = {0, 14, 28, 40, 52, 64};
  for (int p : {0, 64}) s.Add({p, 0, true, 0, p >= 35});
  for (int p : {14, 28, 40, 52, 64, 64}) s.Add({p, 0, true, 0, p >= 35}), s.CountRun();
  const std::vector<double> post = s.Posterior();
  std::vector<int> free;
  for (int k = 1; k < 64; ++k)
    if (!run.count(k)) free.push_back(k);
  for (std::size_t slots : {2u, 3u, 4u}) {
    std::vector<int> cuts = s.DecideBatch({}, static_cast<int>(slots));
    std::sort(cuts.begin(), cuts.end());
    ASSERT_EQ(cuts.size(), slots) << ::testing::PrintToString(cuts);
    for (int c : cuts) EXPECT_FALSE(run.count(c)) << "a cut at a commit run already: " << c;
    std::vector<int> scratch;
    EXPECT_NEAR(PartsEntropy(post, cuts), BestPartsEntropy(post, free, slots, scratch), 1e-9)
        << "cuts at " << ::testing::PrintToString(cuts);
  }
  constexpr int kInFlight = 33;
  std::vector<int> others;
  for (int k : free)
    if (k != kInFlight) others.push_back(k);
  for (std::size_t slots : {2u, 3u}) {
    std::vector<int> cuts = s.DecideBatch({kInFlight}, static_cast<int>(slots));
    ASSERT_EQ(cuts.size(), slots) << ::testing::PrintToString(cuts);
    EXPECT_EQ(std::count(cuts.begin(), cuts.end(), kInFlight), 0) << ::testing::PrintToString(cuts);
    cuts.push_back(kInFlight);
    std::vector<int> scratch = {kInFlight};
    EXPECT_NEAR(PartsEntropy(post, cuts), BestPartsEntropy(post, others, slots + 1, scratch), 1e-9)
        << "cuts at " << ::testing::PrintToString(cuts);
  }
}

// Metric values at the ends only, no drop between them: "no culprit" leads. Near the
// confidence (Search::kNearAnswer) no more than kNearAnswerRuns go out at once; further
// from it the ends are rerun in every free slot, as before.
Search EndsOnly(const std::vector<double>& good, const std::vector<double>& bad) {
  Search s(65, {SeriesSpec{true, 0.003}}, SearchOptions{});
  for (double v : good) s.Add({0, 0, false, v, false});
  for (double v : bad) s.Add({64, 0, false, v, false});
  return s;
}

TEST(BisectSearchParallel, NearTheNoCulpritAnswerOnlyTwoRunsGoOutAtOnce) {
  Search near = EndsOnly({0.920, 0.923, 0.921}, {0.921, 0.920, 0.922, 0.921});
  const double p_near = near.Posterior()[0];
  ASSERT_GE(p_near, Search::kNearAnswer);
  ASSERT_LT(p_near, SearchOptions{}.confidence);
  ASSERT_EQ(Search::kNearAnswerRuns, 2);
  const Decision first = near.Decide({64});
  EXPECT_TRUE(first.next_position == 0 || first.next_position == 64) << first.next_position;
  EXPECT_EQ(near.Decide({64, 64}).next_position, -1) << "two runs in flight may settle it";
  EXPECT_EQ(near.DecideBatch({}, 4).size(), 2u);
  EXPECT_GE(near.Decide().next_position, 0) << "with nothing in flight a run always starts";

  Search far = EndsOnly({0.920, 0.921}, {0.921, 0.920});
  const double p_far = far.Posterior()[0];
  ASSERT_GE(p_far, 0.5);
  ASSERT_LT(p_far, Search::kNearAnswer);
  const std::vector<int> batch = far.DecideBatch({}, 4);
  EXPECT_EQ(batch.size(), 4u) << ::testing::PrintToString(batch);
  for (int p : batch) EXPECT_TRUE(p == 0 || p == 64) << ::testing::PrintToString(batch);
}

// Two commits left (22 good, 24 bad twice: the culprit is 23 or 24; the bad end run thrice,
// so no-culprit is out) and both runs 23 needs in flight: no cut is left to make, so the
// run verification wants next (22, the parent of 23, has one run of two) starts now,
// rather than in a round of its own after they come back.
TEST(BisectSearchParallel, AVerificationRunStartsBesideTheLastCuts) {
  Search s = FreshStatusSearch();
  for (int p : {32, 16, 24, 24, 20, 22, 64, 64, 48, 40}) s.Add({p, 0, true, 0, p >= 23}), s.CountRun();
  const Decision d = s.Decide({23, 23});
  ASSERT_EQ(d.verdict, Verdict::kSearching);
  EXPECT_EQ(d.next_position, 22);
}

TEST(BisectSearchParallel, WithRunsPendingItWaitsRatherThanAnswers) {
  Search s = FreshStatusSearch();
  const int culprit = 23;
  for (int p : {32, 16, 24, 20, 22, 23, 23, 22})
    s.Add({p, 0, true, 0, p >= culprit}), s.CountRun();
  const Decision answer = s.Decide();
  ASSERT_EQ(answer.verdict, Verdict::kCulprit);
  EXPECT_EQ(answer.culprit, culprit);
  const Decision waiting = s.Decide({40});
  EXPECT_EQ(waiting.verdict, Verdict::kSearching) << "a run in flight may still change the answer";
  EXPECT_EQ(waiting.next_position, -1) << "and nothing is worth starting beside it";
}

TEST(BisectSearchParallel, PendingRunsCountTowardsVerificationAndTheBudget) {
  Search s = FreshStatusSearch();
  const int culprit = 23;
  for (int p : {32, 16, 24, 20, 22, 23}) s.Add({p, 0, true, 0, p >= culprit}), s.CountRun();
  const Decision alone = s.Decide();
  ASSERT_EQ(alone.verdict, Verdict::kSearching);
  const Decision next = s.Decide({alone.next_position});
  EXPECT_NE(next.next_position, alone.next_position) << "the culprit's second run is in flight";
  EXPECT_TRUE(next.next_position == culprit || next.next_position == culprit - 1) << next.next_position;
  Search spent = FreshStatusSearch(/*max_runs=*/1);
  spent.CountRun();
  EXPECT_EQ(spent.Decide({32}).next_position, -1) << "the budget counts runs as they start";
  EXPECT_EQ(spent.Decide({32}).verdict, Verdict::kSearching);
}

// Per-question runs of a 16-commit history whose culprit (9) breaks 8 of 300 questions, 20
// of them borderline: what a parallel bisect's steps would bring back, in some order.
std::vector<Observation> QuestionRuns(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Observation> out;
  for (int p : {0, 16, 8, 4, 12, 9, 10, 9, 8, 0, 16, 2}) {
    Observation o{p, 0, false, 0, false};
    o.questions.assign(300, '1');
    for (int q = 0; q < 20; ++q) o.questions[q] = rng() % 2 ? '1' : '0';
    for (int q = 20; q < 28; ++q) o.questions[q] = p >= 9 ? '0' : '1';
    for (int q = 280; q < 300; ++q) o.questions[q] = '0';
    o.value = static_cast<double>(std::count(o.questions.begin(), o.questions.end(), '1')) / 300;
    out.push_back(o);
  }
  return out;
}

TEST(BisectSearchParallel, TheOrderRunsComeBackInDoesNotChangeTheAnswerOrThePosterior) {
  const std::vector<Observation> runs = QuestionRuns(5);
  Search in_order(17, {SeriesSpec{true, 0.004}}, SearchOptions{});
  for (const auto& o : runs) in_order.Add(o);
  const std::vector<double> expected = in_order.Posterior();
  const Decision answer = in_order.Decide();
  ASSERT_EQ(answer.verdict, Verdict::kCulprit);
  EXPECT_EQ(answer.culprit, 9);
  std::mt19937_64 shuffle(11);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<Observation> order = runs;
    std::shuffle(order.begin(), order.end(), shuffle);
    Search s(17, {SeriesSpec{true, 0.004}}, SearchOptions{});
    for (const auto& o : order) s.Add(o);
    const std::vector<double> posterior = s.Posterior();
    ASSERT_EQ(posterior.size(), expected.size());
    for (std::size_t j = 0; j < expected.size(); ++j) EXPECT_NEAR(posterior[j], expected[j], 1e-9) << "hypothesis " << j;
    const Decision d = s.Decide();
    EXPECT_EQ(d.verdict, answer.verdict);
    EXPECT_EQ(d.culprit, answer.culprit);
    EXPECT_NEAR(d.confidence, answer.confidence, 1e-9);
  }
}

// With steps in parallel the posterior is read after every run that comes back, the known-bad
// end's often not among them yet: each such posterior is a distribution, the same whatever
// order those runs came in, and a run inside the range that lost the culprit's questions
// already puts the culprit at or before it.
TEST(BisectSearchParallel, ThePosteriorBeforeTheBadEndsRunIsBackIsADistributionOfTheRunsSoFar) {
  const std::vector<Observation> runs = QuestionRuns(7);  // positions 0, 16, 8, 4, 12, 9, ...
  const std::vector<std::vector<int>> arrivals = {{0, 2}, {0, 5}, {0, 3, 2}, {2, 5, 0, 3}};
  for (const auto& arrived : arrivals) {
    std::vector<double> posteriors[2];
    for (int reversed = 0; reversed < 2; ++reversed) {
      Search s(17, {SeriesSpec{true, 0.004}}, SearchOptions{});
      for (std::size_t i = 0; i < arrived.size(); ++i)
        s.Add(runs[arrived[reversed ? arrived.size() - 1 - i : i]]);
      posteriors[reversed] = s.Posterior();
      EXPECT_EQ(s.Decide({16}).verdict, Verdict::kSearching);
    }
    const std::vector<double>& post = posteriors[0];
    ASSERT_EQ(post.size(), 17u);
    double total = 0;
    for (std::size_t j = 0; j < post.size(); ++j) {
      ASSERT_TRUE(std::isfinite(post[j]) && post[j] >= 0) << "hypothesis " << j << ": " << post[j];
      EXPECT_NEAR(post[j], posteriors[1][j], 1e-9) << "hypothesis " << j;
      total += post[j];
    }
    EXPECT_NEAR(total, 1, 1e-9);
    const bool lost_seen = std::find(arrived.begin(), arrived.end(), 5) != arrived.end();  // the run at 9
    if (!lost_seen) continue;
    double at_or_before = 0;
    for (int j = 1; j <= 9; ++j) at_or_before += post[j];
    EXPECT_GT(at_or_before, 0.9) << "the run at 9 lost questions 20-27, the good end had them";
  }
}

// A run that came back with no question answered (a partial run whose questions all
// failed to run) is no evidence: the posterior is the one without it, to the last bits. Here
// it sits at the bad end, before whose run the culprits after the last run of the series
// (positions 9-16, or 10-16) are judged on the runs before them alone.
TEST(BisectSearchParallel, ARunThatAnsweredNoQuestionIsNoEvidence) {
  const std::vector<Observation> runs = QuestionRuns(7);  // positions 0, 16, 8, 4, 12, 9, ...
  for (const std::vector<int>& arrived : {std::vector<int>{0, 2}, {0, 3, 2}, {0, 5}}) {
    Search without(17, {SeriesSpec{true, 0.004}}, SearchOptions{});
    Search with(17, {SeriesSpec{true, 0.004}}, SearchOptions{});
    for (int i : arrived) without.Add(runs[i]), with.Add(runs[i]);
    Observation empty{16, 0, false, 0, false};
    empty.questions.assign(300, '-');
    with.Add(empty);
    const std::vector<double> want = without.Posterior(), got = with.Posterior();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t j = 0; j < want.size(); ++j) EXPECT_NEAR(got[j], want[j], 1e-12) << "hypothesis " << j;
  }
}

TEST(BisectSearchParallel, FourStepsAtOnceFindTheSameCulpritsInFewerRounds) {
  int rounds[2] = {0, 0}, steps[2] = {0, 0};
  for (int i = 0; i < 8; ++i) {
    for (int k : {0, 1}) {
      SimHistory h;
      h.culprit = 5 + 7 * i;
      h.jobs = k == 0 ? 1 : 4;
      const SimResult r = SimulateSearch(h, 2000 + i, SearchOptions{});
      EXPECT_TRUE(r.correct) << "history " << i << " at " << h.jobs << " jobs";
      rounds[k] += r.rounds;
      steps[k] += r.runs;
      if (k == 0) {
        EXPECT_EQ(r.rounds, r.runs) << "one step at a time, a round is a step";
      }
    }
  }
  EXPECT_LE(rounds[1] * 100, rounds[0] * 60) << rounds[1] << " rounds at 4 jobs, " << rounds[0] << " at 1";
  EXPECT_LE(steps[1] * 10, steps[0] * 20) << steps[1] << " steps at 4 jobs, " << steps[0] << " at 1";
}

}  // namespace bisect_search_parallel_test

namespace bisect_search_priors_test {

// Weights of 65 positions: the watched ones 1, the others `unwatched`.
std::vector<double> WatchWeights(const std::set<int>& watched, double unwatched) {
  std::vector<double> w(65, unwatched);
  for (int j : watched) w[j] = 1;
  return w;
}

// Steps a status search over 64 commits takes to name the culprit; its answer in *found.
int StatusSteps(int culprit, const std::vector<double>* weights, int* found) {
  Search s(65, {SeriesSpec{}}, SearchOptions{});
  if (weights) s.SetPriorWeights(*weights);
  s.Add({0, 0, true, 0, false});
  s.Add({64, 0, true, 0, true});
  int runs = 0;
  const Decision d = bisect::RunStatus(s, culprit, {}, &runs);
  *found = d.verdict == Verdict::kCulprit ? d.culprit : -1;
  return runs;
}

// The watched commits together hold the watched prior, however many they are; a list that
// most commits touch is no reason to weigh the others more than the watched ones.
TEST(BisectSearchPriors, TheWatchedCommitsTogetherHoldTheWatchedPrior) {
  for (int watched : {1, 3, 13, 31})
    for (double p : {0.3, 0.5, 0.7}) {
      const int unwatched = 64 - watched;
      const double w = UnwatchedWeight(watched, unwatched, p);
      if (watched >= p * 64) {
        EXPECT_EQ(w, 1) << watched << " watched already hold more than " << p << " of a flat prior";
        continue;
      }
      EXPECT_NEAR(watched / (watched + unwatched * w), p, 1e-12) << watched << " watched, prior " << p;
      Search s(65, {SeriesSpec{}}, SearchOptions{});
      std::set<int> marks;
      for (int j = 1; j <= watched; ++j) marks.insert(2 * j);
      s.SetPriorWeights(WatchWeights(marks, w));
      const auto post = s.Posterior();
      double mass = 0;
      for (int j : marks) mass += post[j];
      EXPECT_NEAR(mass / (1 - post[0]), p, 1e-9) << watched << " watched, prior " << p;
    }
  EXPECT_LT(UnwatchedWeight(3, 61), UnwatchedWeight(13, 51)) << "a narrower list weighs the others less";
  EXPECT_EQ(UnwatchedWeight(40, 24, 0.5), 1) << "most commits watched: no prior above theirs";
  EXPECT_NEAR(UnwatchedWeight(1, 1, 0.7), 0.3 / 0.7, 1e-12) << "a range of two commits, one watched";
  for (auto [watched, unwatched] : {std::pair{0, 64}, {64, 0}, {0, 0}}) EXPECT_EQ(UnwatchedWeight(watched, unwatched), 1);
  for (double p : {0.0, 1.0, -1.0, 1.5, std::nan("")}) EXPECT_EQ(UnwatchedWeight(5, 59, p), 1) << p << " is no probability";
}

// Which commits touch a watched path, as weights: 1 each, the others what makes the watched
// ones hold the watched prior; the known-good commit's entry is never read.
TEST(BisectSearchPriors, WatchedPriorWeightsWeighEachCommitByWhetherItTouchesAWatchedPath) {
  std::vector<char> touches(11, 0);
  touches[0] = 1, touches[3] = 1, touches[10] = 1;
  const std::vector<double> w = WatchedPriorWeights(touches, 0.4);
  ASSERT_EQ(w.size(), 11u);
  const double other = UnwatchedWeight(2, 8, 0.4);
  EXPECT_NEAR(other, 2.0 / 8 * 0.6 / 0.4, 1e-15);
  for (int j = 1; j <= 10; ++j) EXPECT_EQ(w[j], j == 3 || j == 10 ? 1 : other) << j;
  EXPECT_TRUE(WatchedPriorWeights(std::vector<char>(11, 0)).empty()) << "none watched: flat";
  EXPECT_TRUE(WatchedPriorWeights(std::vector<char>(11, 1)).empty()) << "all watched: flat";
  std::vector<char> only_good(11, 0);
  only_good[0] = 1;
  EXPECT_TRUE(WatchedPriorWeights(only_good).empty()) << "the known-good commit is no candidate";
  EXPECT_TRUE(WatchedPriorWeights({}).empty());
  EXPECT_TRUE(WatchedPriorWeights({1}).empty());
  std::vector<char> last(11, 0);
  last[10] = 1;
  EXPECT_EQ(WatchedPriorWeights(last)[10], 1) << "the known-bad end is a candidate";
  EXPECT_LT(WatchedPriorWeights(last)[9], 1);
}

TEST(BisectSearchPriors, WeightsShiftThePriorAndTheCulpritHypothesesStillShareTheSameMass) {
  Search s(65, {SeriesSpec{}}, SearchOptions{});
  s.SetPriorWeights(WatchWeights({10, 40}, 0.2));
  const auto post = s.Posterior();
  EXPECT_NEAR(post[0], SearchOptions{}.prior_no_culprit, 1e-12);
  EXPECT_NEAR(post[10] / post[11], 5.0, 1e-9) << "a watched commit weighs five unwatched ones";
  EXPECT_NEAR(post[40], post[10], 1e-15);
  double culprits = 0;
  for (int j = 1; j <= 64; ++j) culprits += post[j];
  EXPECT_NEAR(culprits, 1 - SearchOptions{}.prior_no_culprit, 1e-12);
}

TEST(BisectSearchPriors, NoWeightIsEverZeroSoAnUnwatchedCulpritIsStillFound) {
  std::vector<double> w = WatchWeights({10, 40}, 1);
  w[20] = 0, w[21] = -3, w[22] = std::nan(""), w[23] = 1e-30;
  Search s(65, {SeriesSpec{}}, SearchOptions{});
  s.SetPriorWeights(w);
  const auto post = s.Posterior();
  for (int j : {20, 21, 22, 23}) {
    EXPECT_GT(post[j], 0) << j;
    EXPECT_NEAR(post[j] / post[1], Search::kMinPriorWeight, 1e-12) << j;
  }
  for (int culprit : {20, 21, 22, 23}) {
    int found = 0;
    StatusSteps(culprit, &w, &found);
    EXPECT_EQ(found, culprit) << "a commit its prior all but rules out, found from the runs";
  }
}

TEST(BisectSearchPriors, NoWeightsAndEmptyWeightsAreExactlyTheSearchWithout) {
  for (int culprit : {1, 17, 33, 64}) {
    Search plain(65, {SeriesSpec{}}, SearchOptions{}), emptied(65, {SeriesSpec{}}, SearchOptions{});
    emptied.SetPriorWeights(WatchWeights({5}, 0.2));
    emptied.SetPriorWeights({});
    for (Search* s : {&plain, &emptied}) s->Add({0, 0, true, 0, false}), s->Add({64, 0, true, 0, true});
    for (int step = 0; step < 30; ++step) {
      const Decision a = plain.Decide(), b = emptied.Decide();
      ASSERT_EQ(plain.Posterior(), emptied.Posterior()) << "bit for bit, step " << step;
      ASSERT_EQ(a.next_position, b.next_position);
      ASSERT_EQ(a.verdict, b.verdict);
      if (a.verdict != Verdict::kSearching) break;
      for (Search* s : {&plain, &emptied}) s->Add({a.next_position, 0, true, 0, a.next_position >= culprit}), s->CountRun();
    }
  }
}

// Eight of 64 commits watched; every culprit among them found in fewer steps with the
// priors than without, and every culprit outside them (the priors wrong) still found.
TEST(BisectSearchPriors, AWatchedCulpritIsFoundInFewerStepsAndAnUnwatchedOneStillFound) {
  const std::set<int> watched = {3, 11, 20, 26, 37, 45, 52, 60};
  const std::vector<double> w = WatchWeights(watched, UnwatchedWeight(8, 56));
  int with = 0, without = 0;
  for (int culprit : watched) {
    int found_with = 0, found_without = 0;
    with += StatusSteps(culprit, &w, &found_with);
    without += StatusSteps(culprit, nullptr, &found_without);
    EXPECT_EQ(found_with, culprit);
    EXPECT_EQ(found_without, culprit);
  }
  EXPECT_LT(with, without) << with << " steps with the priors, " << without << " without";
  for (int culprit : {1, 12, 36, 64}) {
    int found = 0;
    StatusSteps(culprit, &w, &found);
    EXPECT_EQ(found, culprit) << "the priors wrong";
  }
}

// The same on noisy per-question histories (bisect_sim.h): the priors come through
// Decide and DecideBatch (--jobs 4) alike.
TEST(BisectSearchPriors, PerQuestionHistoriesTakeFewerStepsWithThePriorsAtOneAndFourJobs) {
  for (int jobs : {1, 4}) {
    int steps[2] = {0, 0};
    for (int i = 0; i < 8; ++i)
      for (int k : {0, 1}) {
        SimHistory h;
        h.culprit = 5 + 7 * i;
        h.jobs = jobs;
        h.watched_share = 0.2;
        h.watched_prior = k == 0 ? 0 : BisectDefaults::kWatchedPrior;
        const SimResult r = SimulateSearch(h, 3000 + i, SearchOptions{});
        EXPECT_TRUE(r.correct) << "history " << i << ", prior " << h.watched_prior << ", jobs " << jobs;
        steps[k] += r.runs;
      }
    EXPECT_LT(steps[1], steps[0]) << jobs << " jobs: " << steps[1] << " steps with the priors, " << steps[0] << " without";
  }
}

}  // namespace bisect_search_priors_test
}  // namespace harness::bisect
