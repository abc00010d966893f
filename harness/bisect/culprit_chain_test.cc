#include "harness/bisect/culprit_chain.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/bisect/bisect_sim.h"

namespace harness::bisect {
namespace culprit_chain_test {

// The most culprits --max-culprits allows (kMaxCulpritsRange): the chain has no default.
constexpr int kUpToThree = 3;

// Drives a chain over positions 0..n until it answers, each run `run(position)`.
Decision Drive(CulpritChain& chain, int n, const std::function<Observation(int)>& run, int* runs = nullptr) {
  chain.Add(run(0));
  chain.Add(run(n));
  Decision d;
  for (int guard = 0; guard < 300; ++guard) {
    d = chain.Decide();
    if (d.verdict != Verdict::kSearching) break;
    chain.CountRun();
    chain.Add(run(d.next_position));
  }
  if (runs) *runs = chain.runs_requested();
  return d;
}

// A value-only series whose level at each position `level` gives, with no noise beyond a
// fixed alternation (so every test sees the same runs).
Decision RunLevels(CulpritChain& chain, const std::vector<double>& level, int* runs = nullptr) {
  int wiggle = 0;
  return Drive(
      chain, static_cast<int>(level.size()) - 1,
      [&](int p) {
        return Observation{p, 0, false, level[p] + ((wiggle++ % 2) ? 0.0004 : -0.0004), false};
      },
      runs);
}

std::vector<double> Levels(int n, std::vector<std::pair<int, double>> steps) {
  std::vector<double> level(n + 1, 0.92);
  for (int p = 0; p <= n; ++p)
    for (const auto& [at, by] : steps)
      if (p >= at) level[p] += by;
  return level;
}

// With several slots free (--jobs), the chain's batch is its part's search's own: the cuts
// placed together to part the range evenly, not K greedy choices crowding the median, and
// capped by the budget, whatever --max-culprits is. One choice beside runs in flight inside
// the part is the search's too (they are the part's runs: not the median again).
TEST(CulpritChain, ABatchIsTheSearchsOwnCutsPlacedTogether) {
  for (int max_changes : {1, 3}) {
    SCOPED_TRACE(max_changes);
    SearchOptions options;
    CulpritChain chain(65, {SeriesSpec{}}, options, max_changes);
    Search search(65, {SeriesSpec{}}, options);
    for (const Observation& o : {Observation{0, 0, true, 0, false}, Observation{64, 0, true, 0, true}}) {
      chain.Add(o);
      search.Add(o);
    }
    for (int slots : {2, 4, 6}) EXPECT_EQ(chain.DecideBatch({}, slots), search.DecideBatch({}, slots)) << slots;
    EXPECT_EQ(chain.DecideBatch({32}, 3), search.DecideBatch({32}, 3));
    for (const std::vector<int>& pending : {std::vector<int>{32}, {32, 16, 48}}) {
      const Decision beside = chain.Decide(pending);
      EXPECT_EQ(beside.next_position, search.Decide(pending).next_position) << ::testing::PrintToString(pending);
      EXPECT_EQ(std::count(pending.begin(), pending.end(), beside.next_position), 0) << beside.next_position;
    }
    options.max_runs = 2;
    CulpritChain tight(65, {SeriesSpec{}}, options, max_changes);
    tight.Add({0, 0, true, 0, false});
    tight.Add({64, 0, true, 0, true});
    EXPECT_EQ(tight.DecideBatch({}, 4).size(), 2u) << "the budget caps the batch";
  }
}

TEST(CulpritChain, TwoDropsAreBothNamedInOrderWithTheirOwnSizes) {
  CulpritChain chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  const Decision d = RunLevels(chain, Levels(40, {{9, -0.02}, {19, -0.03}}));
  ASSERT_EQ(d.verdict, Verdict::kCulprit);
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0].position, 9);
  EXPECT_EQ(d.changes[1].position, 19);
  EXPECT_NEAR(d.changes[0].size, -0.02, 0.001);
  EXPECT_NEAR(d.changes[1].size, -0.03, 0.001);
  EXPECT_GE(d.changes[0].confidence, 0.95);
  EXPECT_GE(d.changes[1].confidence, 0.95);
  EXPECT_EQ(d.culprit, 9) << "the single culprit field is the first culprit";
  EXPECT_FALSE(d.unsettled);
}

// Each part's search weighs its commits with their own prior weights (--watch), its bad end
// too: a second drop at the range's bad end, a commit that touches no watched path, is named
// after as many runs or more, and with less confidence, than the same drop with a flat prior.
TEST(CulpritChain, ALaterPartWeighsItsBadEndByItsOwnPrior) {
  const std::vector<double> levels = Levels(40, {{9, -0.02}, {40, -0.01}});
  CulpritChain flat(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  int flat_runs = 0;
  const Decision f = RunLevels(flat, levels, &flat_runs);
  CulpritChain weighed(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  std::vector<double> weights(41, 1.0);
  weights[40] = 0.001;
  weighed.SetPriorWeights(weights);
  int weighed_runs = 0;
  const Decision w = RunLevels(weighed, levels, &weighed_runs);
  ASSERT_EQ(f.changes.size(), 2u);
  ASSERT_EQ(w.changes.size(), 2u);
  EXPECT_EQ(f.changes[1].position, 40);
  EXPECT_EQ(w.changes[1].position, 40);
  EXPECT_GE(weighed_runs, flat_runs);
  EXPECT_LT(w.changes[1].confidence, f.changes[1].confidence - 1e-4)
      << "the prior of 0.001 counts in the part (9, 40] as it does in the whole range";
  EXPECT_NEAR(w.changes[0].confidence, f.changes[0].confidence, 1e-3) << "the first drop's commit weighs 1 in both";
}

// A partial fix is not searched for, and never named as a culprit.
TEST(CulpritChain, APartialFixIsNoCulprit) {
  CulpritChain chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  const Decision d = RunLevels(chain, Levels(40, {{12, -0.04}, {22, 0.02}}));
  ASSERT_EQ(d.verdict, Verdict::kCulprit);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].position, 12);
  EXPECT_EQ(d.culprit, 12);
}

// The stopping rule: a bad end explained by the culprit costs no run more than the
// one-culprit search.
TEST(CulpritChain, AnExplainedBadEndEndsTheSearchWithoutAnotherRun) {
  const std::vector<double> level = Levels(40, {{17, -0.013}});
  CulpritChain one(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, 1),
      chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  int runs_one = 0, runs_chain = 0;
  const Decision a = RunLevels(one, level, &runs_one), b = RunLevels(chain, level, &runs_chain);
  ASSERT_EQ(b.changes.size(), 1u);
  EXPECT_EQ(b.changes[0].position, 17);
  EXPECT_EQ(a.culprit, b.culprit);
  EXPECT_EQ(runs_chain, runs_one);
}

// Drops at the first commit of the range and at its last: each culprit leaves an empty part
// beside it (no commit between it and the range's end), which is no search and no change.
TEST(CulpritChain, CulpritsAtTheEdgesOfTheRangeLeaveEmptyPartsUnsearched) {
  for (const auto& steps : {std::vector<std::pair<int, double>>{{1, -0.02}, {40, -0.03}},
                            std::vector<std::pair<int, double>>{{1, -0.03}, {40, -0.02}}}) {
    CulpritChain chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
    const Decision d = RunLevels(chain, Levels(40, steps));
    ASSERT_EQ(d.verdict, Verdict::kCulprit);
    std::vector<int> at;
    for (const Change& c : d.changes) at.push_back(c.position);
    EXPECT_EQ(at, (std::vector<int>{1, 40}));
    EXPECT_FALSE(d.unsettled);
  }
}

// A range of one commit (the known-bad end is the known-good end's child): that commit is
// the culprit, the only position a change can be at, whatever --max-culprits allows.
TEST(CulpritChain, ARangeOfOneCommitNamesIt) {
  for (int max_changes : {1, kUpToThree}) {
    CulpritChain chain(2, {SeriesSpec{true, 0.0025}}, SearchOptions{}, max_changes);
    const Decision d = RunLevels(chain, Levels(1, {{1, -0.03}}));
    ASSERT_EQ(d.verdict, Verdict::kCulprit) << max_changes;
    EXPECT_EQ(d.culprit, 1);
    ASSERT_EQ(d.changes.size(), 1u);
    EXPECT_EQ(d.changes[0].position, 1);
    EXPECT_FALSE(d.unsettled);
    const auto post = chain.Posterior();
    ASSERT_EQ(post.size(), 2u) << "no culprit, and the one commit";
    EXPECT_NEAR(post[0] + post[1], 1, 1e-12);
  }
}

// The second search starts where the first culprit is, so it is found even when the first
// search names the larger, later drop first (the parent's side is asked too).
TEST(CulpritChain, TheSmallerEarlierDropIsFoundWhenTheLargerOneIsNamedFirst) {
  CulpritChain chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  const Decision d = RunLevels(chain, Levels(40, {{5, -0.02}, {30, -0.05}}));
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0].position, 5);
  EXPECT_EQ(d.changes[1].position, 30);
  EXPECT_EQ(d.culprit, 5);
}

// A run still in flight from an earlier part (--jobs with --max-culprits) at a position
// outside the part now searched is none of that part's: the part decides, and answers, as
// without it. Two drops, the earlier named first, so the later part starts at 9; a run
// pending at 3 then.
TEST(CulpritChain, ARunPendingOutsideThePartSearchedIsNotItsOwn) {
  CulpritChain chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  const std::vector<double> level = Levels(40, {{9, -0.03}, {19, -0.02}});
  int wiggle = 0;
  auto run = [&](int p) { return Observation{p, 0, false, level[p] + ((wiggle++ % 2) ? 0.0004 : -0.0004), false}; };
  chain.Add(run(0));
  chain.Add(run(40));
  int compared = 0;
  for (int guard = 0; guard < 300; ++guard) {
    // Asked of a copy first: the answer, once the part has one, moves the chain on.
    const std::vector<double> post = chain.Posterior();
    const bool later_part = std::all_of(post.begin() + 1, post.begin() + 9, [](double p) { return p == 0.0; });
    CulpritChain copy = chain;
    const Decision beside = copy.Decide({3});
    const Decision d = chain.Decide();
    if (later_part) {
      EXPECT_EQ(beside.verdict, d.verdict) << "step " << guard;
      EXPECT_EQ(beside.next_position, d.next_position) << "step " << guard;
      ++compared;
    }
    if (d.verdict != Verdict::kSearching) break;
    chain.CountRun();
    chain.Add(run(d.next_position));
  }
  EXPECT_GT(compared, 2) << "the later part was searched";
}

// Posterior() speaks in positions of the whole range whichever part was searched last: once
// done, its mass sits on a culprit the chain named (the last part's), it sums to one, and
// ProbabilityBad steps there. Both orders: the earlier drop named first (the part after it
// searched last, starting past position 0) and the later one first.
TEST(CulpritChain, ThePosteriorOfALaterPartIsInPositionsOfTheWholeRange) {
  for (const auto& drops : {std::vector<std::pair<int, double>>{{9, -0.03}, {19, -0.02}},
                            std::vector<std::pair<int, double>>{{5, -0.02}, {30, -0.05}}}) {
    SCOPED_TRACE(drops[0].first);
    CulpritChain chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
    const Decision d = RunLevels(chain, Levels(40, drops));
    ASSERT_EQ(d.changes.size(), 2u);
    const std::vector<double> post = chain.Posterior();
    ASSERT_EQ(post.size(), 41u);
    double sum = 0;
    for (double p : post) {
      EXPECT_GE(p, 0.0);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-9);
    const int peak = static_cast<int>(std::max_element(post.begin() + 1, post.end()) - post.begin());
    EXPECT_TRUE(peak == d.changes[0].position || peak == d.changes[1].position) << peak;
    EXPECT_GE(post[peak], 0.9);
    EXPECT_NEAR(chain.ProbabilityBad(peak) - chain.ProbabilityBad(peak - 1), post[peak], 1e-12);
    // Bad at the good end: never; at the bad end (and past it): unless nothing changed.
    EXPECT_EQ(chain.ProbabilityBad(0), 0.0);
    EXPECT_NEAR(chain.ProbabilityBad(40), 1.0 - post[0], 1e-12);
    EXPECT_NEAR(chain.ProbabilityBad(41), 1.0 - post[0], 1e-12);
    const std::vector<int> range = chain.CredibleRange();
    EXPECT_NE(std::find(range.begin(), range.end(), peak), range.end());
  }
}

// A culprit's size, question by question, counts only the questions answered on both sides
// of it: runs after the change leave questions 15-19 unanswered ('-'), and questions 0-9 go
// from right to wrong: -10 of 20 questions moved, whatever the runs before said of 15-19.
TEST(CulpritChain, ASizeCountsOnlyTheQuestionsAnsweredOnBothSides) {
  constexpr int kChange = 13;
  auto run = [](int p) {
    std::string q(20, '1');
    if (p >= kChange) {
      for (int i = 0; i < 10; ++i) q[i] = '0';
      for (int i = 15; i < 20; ++i) q[i] = '-';
    }
    const double answered = p >= kChange ? 15.0 : 20.0, right = p >= kChange ? 5.0 : 20.0;
    return Observation{p, 0, false, right / answered, false, q};
  };
  CulpritChain chain(31, {SeriesSpec{true, 0.01}}, SearchOptions{}, kUpToThree);
  const Decision d = Drive(chain, 30, run);
  ASSERT_EQ(d.verdict, Verdict::kCulprit);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].position, kChange);
  EXPECT_DOUBLE_EQ(d.changes[0].size, -0.5);
}

// Each question's move counts its own answers: a change that breaks the last ten of twenty
// questions and fixes the first is -9 of 20, whichever end of the questions it touches.
TEST(CulpritChain, ASizeCountsEachQuestionByItsOwnAnswers) {
  constexpr int kChange = 9;
  auto run = [](int p) {
    std::string q(20, '1');
    q[0] = '0';
    if (p >= kChange) {
      q[0] = '1';
      for (int i = 10; i < 20; ++i) q[i] = '0';
    }
    const double right = p >= kChange ? 10.0 : 19.0;
    return Observation{p, 0, false, right / 20, false, q};
  };
  CulpritChain chain(31, {SeriesSpec{true, 0.01}}, SearchOptions{}, kUpToThree);
  const Decision d = Drive(chain, 30, run);
  ASSERT_EQ(d.verdict, Verdict::kCulprit);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].position, kChange);
  EXPECT_DOUBLE_EQ(d.changes[0].size, -9.0 / 20);
}

// A run at a position outside the range (before the good end, at or past one beyond the
// bad end) is no evidence: two drops driven with such runs interleaved, each far below every
// level, are named at the same commits with the same sizes and confidences after as many runs.
TEST(CulpritChain, ARunOutsideTheRangeChangesNothing) {
  const std::vector<double> level = Levels(40, {{9, -0.02}, {19, -0.03}});
  CulpritChain clean(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree),
      noisy(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  int runs_clean = 0, runs_noisy = 0;
  const Decision a = RunLevels(clean, level, &runs_clean);
  int wiggle = 0;
  const Decision b = Drive(
      noisy, 40,
      [&](int p) {
        for (int outside : {-1, 41, 50}) noisy.Add(Observation{outside, 0, false, 0.10, false});
        return Observation{p, 0, false, level[p] + ((wiggle++ % 2) ? 0.0004 : -0.0004), false};
      },
      &runs_noisy);
  ASSERT_EQ(a.changes.size(), 2u);
  ASSERT_EQ(b.changes.size(), a.changes.size());
  for (size_t i = 0; i < a.changes.size(); ++i) {
    EXPECT_EQ(b.changes[i].position, a.changes[i].position);
    EXPECT_DOUBLE_EQ(b.changes[i].size, a.changes[i].size);
    EXPECT_DOUBLE_EQ(b.changes[i].confidence, a.changes[i].confidence);
  }
  EXPECT_EQ(runs_noisy, runs_clean);
}

TEST(CulpritChain, AtMostMaxChangesAreSearchedFor) {
  const std::vector<double> level = Levels(40, {{5, -0.03}, {15, -0.03}, {25, -0.03}, {35, -0.03}});
  CulpritChain two(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, 2),
      three(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  EXPECT_EQ(RunLevels(two, level).changes.size(), 2u);
  EXPECT_EQ(RunLevels(three, level).changes.size(), 3u);
}

TEST(CulpritChain, NoDropIsNoCulpritWithNoChanges) {
  CulpritChain chain(41, {SeriesSpec{true, 0.0025}}, SearchOptions{}, kUpToThree);
  const Decision d = RunLevels(chain, Levels(40, {}));
  EXPECT_EQ(d.verdict, Verdict::kNoCulprit);
  EXPECT_TRUE(d.changes.empty());
}

// The part before a culprit found first is searched with each series' own flip rates, as a
// search of that part alone would be: series 0 (rated) has questions right on half of the
// runs at random and an earlier, smaller drop at 6; series 1 (no rates) the larger, later drop at 14, so the
// first search names 14 and the part [0, 13] is built afresh; series 2 (rated) never changes.
// Series 0 read with series 1's rates (none) or series 2's (no flips) would see its flips as
// noise it cannot explain, and the part's posterior would differ.
TEST(CulpritChain, ThePartBeforeALaterCulpritReadsEachSeriesOwnFlipRates) {
  constexpr int kN = 20, kQuestions = 40, kEarlier = 6, kLater = 14;
  std::mt19937 coin(7);
  auto run = [&](int p) {
    std::vector<Observation> out;
    for (int series = 0; series < 3; ++series) {
      std::string q(kQuestions, '1');
      for (int i = 0; series == 0 && i < 4 && p >= kEarlier; ++i) q[i] = '0';
      for (int i = 0; series == 1 && i < 12 && p >= kLater; ++i) q[i] = '0';
      for (int i = 30; series == 0 && i < 38; ++i) q[i] = coin() % 2 ? '1' : '0';
      out.push_back({p, series, false, 0, false, q});
    }
    return out;
  };
  std::vector<std::string> flippy, settled;
  for (int k = 0; k < 8; ++k) {
    flippy.push_back(run(0)[0].questions);
    settled.push_back(run(0)[2].questions);
  }
  const SearchOptions options;
  const FlipRates flippy_rates = FlipRates::Estimate(flippy, options.solid_flip, options.fragile_share);
  const FlipRates settled_rates = FlipRates::Estimate(settled, options.solid_flip, options.fragile_share);
  const std::vector<SeriesSpec> specs(3, SeriesSpec{true, 0.01});
  CulpritChain chain(kN + 1, specs, options, kUpToThree);
  chain.SetFlipRates(0, flippy_rates);
  chain.SetFlipRates(2, settled_rates);
  std::vector<Observation> all;
  auto add = [&](int p) {
    for (const Observation& o : run(p)) chain.Add(o), all.push_back(o);
  };
  add(0);
  add(kN);
  Decision d;
  for (int guard = 0; guard < 200; ++guard) {
    d = chain.Decide();
    if (d.verdict != Verdict::kSearching) break;
    chain.CountRun();
    add(d.next_position);
  }
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0].position, kEarlier);
  EXPECT_EQ(d.changes[1].position, kLater);
  // The last part searched is [0, kLater - 1]: the later culprit was named first.
  const std::vector<double> post = chain.Posterior();
  for (int p = kLater; p <= kN; ++p) ASSERT_EQ(post[p], 0.0) << p;
  Search alone(kLater, specs, options);
  alone.SetFlipRates(0, flippy_rates);
  alone.SetFlipRates(2, settled_rates);
  for (const Observation& o : all)
    if (o.position < kLater) alone.Add(o);
  const std::vector<double> want = alone.Posterior();
  for (int p = 0; p < kLater; ++p) EXPECT_NEAR(post[p], want[p], 1e-12) << p;
  EXPECT_NEAR(d.changes[0].confidence, want[kEarlier], 1e-12);
}

// Question by question, as the simulator's noisy stand-in: two drops ten commits apart.
TEST(CulpritChain, PerQuestionHistoriesWithTwoDropsNameBoth) {
  int all_right = 0, histories = 0;
  for (int culprit : {3, 20, 41}) {
    for (uint64_t seed = 0; seed < 4; ++seed) {
      SimHistory h;
      h.drop = 0.006;
      h.culprit = culprit;
      h.second = culprit + 10;
      h.second_drop = 0.008;
      all_right += SimulateSearch(h, 4100 + seed + 10 * culprit, SearchOptions{}, 3).all_correct;
      ++histories;
    }
  }
  EXPECT_GE(all_right, histories - 1) << all_right << " of " << histories;
}

TEST(CulpritChain, PerQuestionOneCulpritHistoriesGainNoChangeAndNoRun) {
  int same_runs = 0, extra_changes = 0, histories = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    SimHistory h;
    h.drop = 0.006;
    h.culprit = 1 + static_cast<int>(seed * 5 % 64);
    const SimResult one = SimulateSearch(h, 4500 + seed, SearchOptions{}, 1);
    const SimResult chain = SimulateSearch(h, 4500 + seed, SearchOptions{}, 3);
    same_runs += one.runs == chain.runs;
    extra_changes += chain.changes.size() > one.changes.size();
    ++histories;
  }
  EXPECT_EQ(extra_changes, 0);
  EXPECT_GE(same_runs, histories - 1);
}

}  // namespace culprit_chain_test
}  // namespace harness::bisect
