#include "harness/bisect/bisect_sim.h"

#include "harness/bisect/culprit_chain.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace harness::bisect {
namespace {

class Runs {
 public:
  Runs(const SimHistory& h, uint64_t seed)
      : h_(h), rng_(seed), right_(h.questions, 0), affected_(h.questions, 0), second_(h.questions, 0) {
    // Which questions are borderline, which settled right, which the culprit breaks.
    std::vector<int> order(h.questions);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng_);
    std::uniform_real_distribution<double> borderline(0.1, 0.9);
    const int settled_right = static_cast<int>(std::lround(h.good * h.questions - 0.5 * h.fragile));
    const int affected = h.culprit > 0 ? static_cast<int>(std::lround(h.drop * h.questions)) : 0;
    for (int i = 0; i < h.questions; ++i) {
      const int q = order[i];
      if (i < h.fragile) right_[q] = borderline(rng_);
      else if (i < h.fragile + settled_right) right_[q] = 1, affected_[q] = i < h.fragile + affected;
    }
    // The second change's questions: further settled-right ones after the culprit's, or the
    // first of the culprit's (a partial fix). Drawn after everything else: the one-change
    // histories keep their draws.
    const int second = h.second > 0 ? static_cast<int>(std::lround(std::fabs(h.second_drop) * h.questions)) : 0;
    const int start = h.second_drop > 0 ? h.fragile + affected : h.fragile;
    for (int i = start; i < std::min(start + second, h.fragile + settled_right); ++i) second_[order[i]] = 1;
  }

  // A run at position; with `only`, just those questions are evaluated (the rest '-').
  Observation At(int position, const std::vector<int>* only = nullptr) {
    const bool bad = h_.culprit > 0 && position >= h_.culprit;
    const bool after_second = h_.second > 0 && position >= h_.second;
    Observation o{position, 0, false, 0, false};
    o.questions.assign(h_.questions, only ? '-' : '0');
    int right = 0, answered = 0;
    auto evaluate = [&](int q) {
      double p = !affected_[q] ? right_[q] : bad ? h_.affected_right : h_.affected_before;
      if (second_[q] && after_second) p = h_.second_drop > 0 ? h_.affected_right : h_.affected_before;
      const bool is_right = p >= 1 || (p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p);
      o.questions[q] = is_right ? '1' : '0';
      right += is_right;
      ++answered;
    };
    if (only) {
      for (int q : *only) evaluate(q);
    } else {
      for (int q = 0; q < h_.questions; ++q) evaluate(q);
    }
    o.value = answered > 0 ? static_cast<double>(right) / answered : 0;
    if (!h_.per_question) o.questions.clear();
    return o;
  }

 private:
  SimHistory h_;
  std::mt19937_64 rng_;
  std::vector<double> right_;
  std::vector<char> affected_;
  std::vector<char> second_;  // the second change's questions
};

// Exactly the culprits the history holds, and no other commit: a partial fix is no culprit.
bool AllCulpritsRight(const SimHistory& h, const SimResult& r) {
  if (h.culprit <= 0) return r.verdict == Verdict::kNoCulprit && r.changes.empty();
  std::vector<int> want = {h.culprit}, got;
  if (h.second > 0 && h.second_drop > 0) want.push_back(h.second);
  for (const Change& c : r.changes) got.push_back(c.position);
  return got == want;
}

}  // namespace

std::vector<char> WatchedCommits(const SimHistory& h, uint64_t seed) {
  std::vector<char> watched(h.commits + 1, 0);
  if (h.watched_share <= 0) return watched;
  std::mt19937_64 rng(seed ^ 0x77617463686564ull);  // its own stream: the runs' draws stay as they were
  std::uniform_real_distribution<double> u(0, 1);
  for (int j = 1; j <= h.commits; ++j) watched[j] = u(rng) < h.watched_share;
  if (h.culprit > 0) watched[h.culprit] = h.culprit_watched;
  return watched;
}

SimResult SimulateSearch(const SimHistory& h, uint64_t seed, const SearchOptions& options, int max_changes) {
  Runs runs(h, seed);
  // The value model's noise prior: the sd of one run's accuracy, as the bisector derives it.
  const double sigma = std::sqrt(h.good * (1 - h.good) / h.questions) * 0.4;
  CulpritChain search(h.commits + 1, {SeriesSpec{true, sigma}}, options, max_changes);
  if (h.watched_share > 0 && h.watched_prior > 0)
    search.SetPriorWeights(WatchedPriorWeights(WatchedCommits(h, seed), h.watched_prior));
  search.Add(runs.At(0));
  search.Add(runs.At(h.commits));
  if (h.per_question && h.history_runs > 0) {
    std::vector<std::string> history;
    for (int k = 0; k < h.history_runs; ++k) history.push_back(runs.At(0).questions);
    search.SetFlipRates(0, FlipRates::Estimate(history, options.solid_flip, options.fragile_share));
  }
  SimResult r;
  for (int guard = 0; guard < 10 * options.max_runs + 10; ++guard) {
    Decision d = search.Decide();
    if (d.verdict != Verdict::kSearching) {
      r.verdict = d.verdict;
      r.culprit = d.culprit;
      r.confidence = d.confidence;
      r.changes = d.changes;
      break;
    }
    // One round: a run in each slot the search finds worth filling, its questions chosen as
    // it starts (from what has come back so far), then every run back.
    std::vector<int> pending;
    std::vector<std::vector<int>> asked;
    if (h.jobs <= 1) pending = {d.next_position};  // one step at a time: Decide's choice
    else pending = search.DecideBatch({}, h.jobs);
    for (int p : pending) {
      asked.push_back(h.per_question ? search.QuestionsFor(p, 0) : std::vector<int>{});
      search.CountRun();
    }
    ++r.rounds;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      search.Add(h.per_question ? runs.At(pending[i], &asked[i]) : runs.At(pending[i]));
      r.questions += h.per_question ? static_cast<double>(asked[i].size()) : h.questions;
    }
  }
  r.runs = search.runs_requested();
  r.correct = h.culprit > 0 ? (r.verdict == Verdict::kCulprit && r.culprit == h.culprit) : r.verdict == Verdict::kNoCulprit;
  r.all_correct = AllCulpritsRight(h, r);
  return r;
}

SimResult SimulatePlainBisect(const SimHistory& h, uint64_t seed, double gate) {
  Runs runs(h, seed);
  runs.At(0);  // the same stored runs as the search saw, so both consume the same draws first
  runs.At(h.commits);
  int lo = 0, hi = h.commits;
  SimResult r;
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    ++r.runs;
    r.questions += h.questions;
    if (runs.At(mid).value < gate) hi = mid;
    else lo = mid;
  }
  r.verdict = Verdict::kCulprit;  // plain bisection always names a commit
  r.confidence = 1;
  r.culprit = hi;
  r.correct = h.culprit > 0 && hi == h.culprit;
  return r;
}

}  // namespace harness::bisect
