// The noise-aware search of `harness bisect`: a posterior over "which commit is the
// culprit" plus "no culprit: the bad result was noise" (docs/sources.md §1),
// updated with every run, that picks the next commit to run and says when it knows.
//
// Positions are the first-parent commits from the known-good one (0) to the known-bad
// one (n). Hypothesis H_j (1 <= j <= n): position j is the first bad commit, so every
// position >= j is bad. H_0: no culprit, every position is good and what looked bad was
// noise. Three kinds of evidence, one per run and series:
//
// - Metric values (accuracy of a GSM8K case, one value per run, several cases combine):
//   a change-point model with unknown levels. Under H_j a series is x = mu - delta at
//   positions >= j and mu before, with Gaussian run-to-run noise sigma; under H_0, delta = 0.
//   mu has a flat prior (the values are centred); the drop delta (in the direction of
//   "worse") a normal prior truncated below at delta_min = min_effect sigma: its mean is the
//   gap the two endpoints show (never less than delta_min), its sd that gap's standard
//   error (sigma when an endpoint has no run yet). So the Bayes factor of each H_j against
//   H_0 is closed-form: with y the centred values, u the centred "is at or after j"
//   indicator signed by the direction, s the prior's sd and m its mean,
//       A = |u|^2 / sigma^2 + 1 / s^2,  B = (y . u) / sigma^2 + m / s^2,
//       BF_j = exp(B^2 / 2A - m^2 / 2s^2) Phi((B / A - delta_min) sqrt(A))
//              / (s sqrt(A) Phi((m - delta_min) / s)).
//   It answers "which split of these runs explains them best", so rerun spread (sigma, the
//   run-to-run noise on the same questions) is what it must know: sigma is estimated from
//   the runs repeated at one commit, pooled and shrunk towards the series' prior
//   noise_sigma (docs/sources.md §2: about 0.3 pp at n = 1319 on real servers).
// - Per-question outcomes (a GSM8K run's samples, when stored): a drop caused by a commit
//   loses the same questions on every run, while run-to-run noise flips different ones,
//   mostly among a few borderline questions. Each question is either unaffected (settled
//   right or settled wrong, answered otherwise with probability `solid_flip`, or, a share
//   `fragile_share` of them, borderline: right with probability 0.1, 0.2, 0.5, 0.8 or 0.9),
//   or affected by the culprit. A fault is one of two kinds and affects questions of its
//   kind only (bisect_search.cc, FaultKinds), and from the culprit on all its questions
//   share one rate (a fault is one change): three in four break settled-right questions
//   (right before the culprit but for `affected_flip`; from it on wrong but for
//   `affected_flip`, or right in 0.3 of runs, or in half of them: faults that moved a margin
//   part of the way), one in four moves questions near the accuracy boundary (right in 0.8
//   of runs before it, from it on wrong or right in a quarter of runs). Under H_j a share pi
//   of the questions is affected (pi from the grid 0.25 %, 0.5 %, 1 %, 2 %, 4 %, equally
//   likely; 0.5 % up for the half-the-time faults, which borderline noise mimics), at least
//   one of them (the mixture without "none affected", which is H_0 itself); under H_0 none
//   is. Each question's likelihood mixes both, so the Bayes factor of H_j weighs every
//   question that consistently changed at j against the noise that could have flipped it.
//   A series with per-question outcomes uses this model instead of the value model (the
//   value is a function of the outcomes: counting both would count the evidence twice). A
//   question a run did not answer is no evidence (a partial run, QuestionsFor). With
//   SetFlipRates, each question's class prior is learned from earlier runs (flip_rates.h)
//   instead of the fixed fragile_share, and its history weighs in on whether it could be
//   affected (as often right before the culprit as the fault kind's shape says: a question
//   that flipped before cannot be a settled one broken).
// - Pass/fail statuses (a compile case, or a command's git-style exit code): a two-sided
//   flake model; a run shows the wrong status with probability flake_rate.
//
// The next position is, among the endpoints and the unskipped positions either side of the
// culprit posterior's median, the one whose run is expected to leave the least posterior
// entropy; the known-good end goes first whenever it has fewer than half the runs of the
// known-bad end, and the known-bad end while no culprit is the likelier answer and it has
// fewer than 10 runs (metric series: a rerun there tests every culprit hypothesis at once,
// which the entropy estimate, with the last end runs standing in for the outcome, cannot
// see). The search stops when one hypothesis (or one group of hypotheses that skipped
// commits make indistinguishable) holds `confidence`. A culprit is then verified while runs
// are left: it and its parent each need two runs (stored runs count; the target cases of
// one run are one run, not one each), and the search asks for a run of whichever has fewer
// before it reports.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/bisect/flip_rates.h"
#include "harness/bisect/question_choice.h"

namespace harness::bisect {

struct Observation {
  int position = 0;
  int series = 0;            // which metric case; statuses use their own series numbers too
  bool is_status = false;
  double value = 0;          // the metric's value (is_status false)
  bool failed = false;       // the status (is_status true)
  // Per-question outcomes of the run, one character per question of the series in a fixed
  // order: '1' right, '0' wrong, anything else not answered. Empty: the value only.
  std::string questions;
};

struct SeriesSpec {
  bool higher_is_better = true;
  double noise_sigma = 0;    // prior run-to-run sd of one value (> 0)
};

// The defaults every way into a bisect shares: the search, `harness bisect`'s flags,
// `bisect --auto`, and a replayed log that leaves a field out.
struct BisectDefaults {
  static constexpr int kMaxRuns = 60;
  static constexpr double kConfidence = 0.95;
  static constexpr double kFlakeRate = 0.01;
  // Culprits searched for in one range (--max-culprits; CulpritChain): one, the one-culprit
  // search, unless asked (docs/bisect.md, "Several culprits": it costs one-culprit histories
  // accuracy).
  static constexpr int kMaxCulprits = 1;
  // Priors from what a commit changed: the prior probability that the culprit is one of the
  // range's commits that touch a watched path, whatever their number (UnwatchedWeight;
  // measured with bisect_bench --watched-share: docs/bisect.md, "Priors from what a commit
  // changed").
  static constexpr double kWatchedPrior = 0.5;
};

// The prior weight of a commit that touches no watched path, against 1 for one that does,
// such that the `watched` commits of a range together hold `watched_prior` of the culprit
// prior and the `unwatched` ones the rest: (watched / unwatched) (1 - p) / p, at most 1 (a
// list most commits touch says nothing). 1 when either count is 0. A narrow list (few
// commits watched) so weighs each other commit less than a broad one, for the same belief
// that the list names the culprit's paths.
double UnwatchedWeight(int watched, int unwatched, double watched_prior = BisectDefaults::kWatchedPrior);

// The prior weights of a range's commits 1..n from which of them touch a watched path
// (`touches[j]`; entry 0, the known-good commit, is not read): 1 for one that does,
// UnwatchedWeight for the others. Empty, the prior flat, when none or every one does.
std::vector<double> WatchedPriorWeights(const std::vector<char>& touches,
                                        double watched_prior = BisectDefaults::kWatchedPrior);

struct SearchOptions {
  double confidence = BisectDefaults::kConfidence;
  double prior_no_culprit = 0.2;
  double flake_rate = BisectDefaults::kFlakeRate;  // statuses
  double sigma_prior_weight = 10;    // degrees of freedom the sigma prior is worth
  double min_effect = 1.5;           // the smallest drop looked for, in run-to-run noise sds
  double solid_flip = 0.002;         // per-question model: a settled question answered otherwise
  double fragile_share = 0.06;       // per-question model: borderline questions
  double affected_flip = 0.02;       // per-question model: an affected question not showing it
  int max_runs = BisectDefaults::kMaxRuns;  // runs the search may ask for (evidence already stored is free)
  QuestionChoice questions;          // which questions a run inside the range evaluates (QuestionsFor)
};

enum class Verdict { kSearching, kCulprit, kNoCulprit, kAmbiguous };
std::string_view VerdictWord(Verdict v);   // searching, culprit, no-culprit, ambiguous

// One culprit of several in a range, as CulpritChain (culprit_chain.h) names it, with its
// own confidence and size.
struct Change {
  int position = -1;
  double confidence = 0;             // the posterior its search found it with
  double size = 0;                   // level after minus level before, in the metric's units
};

struct Decision {
  Verdict verdict = Verdict::kSearching;
  int next_position = -1;            // when searching: run this position next
  int culprit = -1;                  // kCulprit (the first culprit, when CulpritChain found several)
  std::vector<int> range;            // kAmbiguous: the positions the culprit may be
  double confidence = 0;             // the posterior of the answer (or of the best hypothesis)
  std::vector<Change> changes;       // CulpritChain's answer: every culprit found, in position order
  bool unsettled = false;            // CulpritChain: a later search ran out of runs or ended ambiguous
};

class Search {
 public:
  // positions: n + 1 (good endpoint 0 .. bad endpoint n), n >= 1.
  Search(int positions, std::vector<SeriesSpec> series, SearchOptions options);

  void Add(const Observation& o);
  void CountRun() { ++runs_requested_; }            // a run the search asked for (counts to max_runs)
  void Skip(int position);                          // untestable (exit 125, a build that fails)
  // Per-question flip rates of a series learned from runs the search is not given as
  // observations (flip_rates.h): each question's class prior instead of the fixed one.
  void SetFlipRates(int series, FlipRates rates);
  // The relative prior weight of each culprit hypothesis (index j: position j; index 0, "no
  // culprit", is not used), set once before the first Decide: the culprit hypotheses still
  // share 1 - prior_no_culprit, in proportion to their weights. A weight below
  // kMinPriorWeight, or not a finite number, counts as kMinPriorWeight, so no commit is ever
  // ruled out by its prior.
  // Empty (the default): every commit alike, exactly as without weights. Every choice of
  // the next position reads the posterior, so it follows the weights.
  void SetPriorWeights(std::vector<double> weights);
  static constexpr double kMinPriorWeight = 1e-3;
  // The question indices (ascending) the next run at `position` should evaluate for a series
  // with per-question outcomes (question_choice.h): all of them at the ends of the range or
  // with options.questions.full, else the ones that tell the hypotheses apart. Pass the run's
  // outcomes back with the others not answered ('-').
  std::vector<int> QuestionsFor(int position, int series) const;

  // [0] = no culprit, [j] = position j is the first bad commit.
  std::vector<double> Posterior() const;
  Decision Decide() { return Decide({}); }
  // The same with runs in flight (started, not back yet) at `pending`, one entry per run:
  // the next position to start beside them, chosen with them (parallel steps, `--jobs K`),
  // or next_position -1 when nothing is worth starting now (wait for one to come back).
  // With runs pending it never answers: the answer waits for every run in flight, so it is
  // the answer to the evidence, whatever order the runs came back in. With none pending it
  // is the choice one step at a time makes. A pending run counts for the end and
  // verification rules as a run there; among the positions inside the range it picks the
  // one that, with the pending ones, splits the culprit posterior into the most even parts
  // (the entropy of the outcome pattern the batch would show without noise), so concurrent
  // runs spread over the range instead of crowding at its median.
  Decision Decide(const std::vector<int>& pending);
  // Beside runs pending, while "no culprit" holds at least kNearAnswer (short of the
  // confidence), no more than kNearAnswerRuns are in flight at once: a run or two at the
  // ends may settle it, and a full batch would overshoot.
  static constexpr double kNearAnswer = 0.85;
  static constexpr int kNearAnswerRuns = 2;
  // Up to `slots` positions to start at once beside `pending` (several slots free together):
  // Decide one after another, then the new runs inside the range not run yet placed, all
  // together, where they split the culprit posterior most evenly (exactly, not one at a
  // time). Empty: wait (or answer: Decide()).
  std::vector<int> DecideBatch(const std::vector<int>& pending, int slots);
  // The culprit positions between the 2.5 % and 97.5 % points of the culprit posterior.
  std::vector<int> CredibleRange() const;
  // P(position is bad) = sum of the posterior of H_1 .. H_position.
  double ProbabilityBad(int position) const;

  int runs_requested() const { return runs_requested_; }
  int positions() const { return positions_; }
  const std::set<int>& skipped() const { return skipped_; }
  // Runs at a position: the observations of its best-covered series (one per run).
  int RunsAt(int position) const;

 private:
  std::vector<double> LogPosteriorOf(const std::vector<Observation>& extra) const;
  double ExpectedEntropyAfter(int position, const std::vector<double>& posterior) const;
  // The per-question model's log Bayes factor of each H_j against H_0 (index 0 unused),
  // added to logp, for the series' runs that carry questions.
  void AddQuestionEvidence(const std::vector<const Observation*>& runs, int series, std::vector<double>& logp) const;
  // Groups of hypotheses that no run can tell apart: each culprit hypothesis at a
  // skipped position joins the next unskipped one. Returns, per hypothesis, its group's head.
  std::vector<int> GroupHeads() const;
  // Decide's answer when one group holds the confidence asked: ambiguous when the group is
  // several commits, else the culprit once it and its parent have two runs each (or the
  // budget is spent), else the position to run.
  Decision VerifyCulprit(int best, double confidence, const std::vector<int>& heads) const;
  std::set<int> MedianCandidates(const std::vector<double>& posterior) const;
  // Decide's choice with nothing pending once no rule applies: among the endpoints and the
  // commits around the posterior median, the run expected to leave the least entropy.
  int LeastExpectedEntropy(const std::vector<double>& posterior) const;
  // Decide's choice beside pending runs once no end or verification rule applies.
  int SpreadChoice(const std::vector<double>& posterior, const std::vector<int>& pending) const;

  int positions_;
  std::vector<SeriesSpec> series_;
  SearchOptions options_;
  std::vector<Observation> observations_;
  std::set<int> skipped_;
  std::vector<FlipRates> rates_;     // per series; empty: the fixed prior
  std::vector<double> prior_weights_;  // per position, normalized over 1..n; empty: flat
  int runs_requested_ = 0;
};

}  // namespace harness::bisect
