// Simulated noisy histories for measuring the search against plain bisection
// (bisect_bench.cc) and for testing it (bisect_search_test.cc), question by question as the
// calibrated stand-in behaves (docs/gsm8k.md): of 1319 questions most are settled (always
// right or always wrong) and `fragile` are borderline, each answered right with its own
// probability drawn uniformly from 0.1..0.9 on every run. That gives two reruns about 22
// discordant questions and accuracy a run-to-run sd of about 0.25 pp, the stand-in's
// measured 22.9 and 0.246 pp. A culprit turns round(drop * 1319) settled-right questions
// wrong from its commit on (or right only with probability `affected_right`; and right
// before it only with probability `affected_before`, when below 1). The known-good and
// known-bad commits start with one stored run each, as after a nightly: they cost nothing. The store also holds `history_runs` earlier nightlies (commits before
// the known-good one, behaving as it does): the search learns its per-question flip rates
// from them (flip_rates.h), also at no cost, since the nightly ran them anyway. A run the
// search asks for evaluates the questions Search::QuestionsFor chooses; its cost is counted
// in questions.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/bisect/bisect_search.h"

namespace harness::bisect {

struct SimHistory {
  int commits = 64;          // positions 1..commits; position 0 is the known-good commit
  int culprit = 0;           // 0: no drop (the bad run was noise)
  double good = 0.9234;      // accuracy of the known-good commit's settled questions and mean
  double drop = 0.013;
  int questions = 1319;
  int fragile = 56;
  double affected_right = 0; // how often an affected question is still right after the culprit
  // How often an affected question was right before the culprit: 1, a settled-right question
  // the fault breaks; below 1, a borderline one it moves further (the stand-in's fault moves
  // the questions just below its accuracy boundary, right in about 0.7 of runs before it).
  double affected_before = 1;
  bool per_question = true;  // hand the search each run's questions, or only its accuracy
  int history_runs = 8;      // earlier nightlies the flip rates are learned from (0: the fixed prior)
  // Runs at once (`--jobs K`): every step takes the same time, so a round starts a run in
  // each free slot (Search::Decide with the others pending) and they all come back at its end.
  int jobs = 1;
  // Priors from what a commit changed (Search::SetPriorWeights): each commit touches a
  // watched path with probability watched_share (0: no commit is marked, no priors), the
  // culprit does when culprit_watched (else it touches none: the priors are wrong), and a
  // commit that touches none weighs what UnwatchedWeight gives for watched_prior, as in a
  // bisect (0: no priors, the same histories).
  double watched_share = 0;
  bool culprit_watched = true;
  double watched_prior = 0;
  // A second change (CulpritChain, culprit_chain.h): at position `second` (> culprit; 0:
  // none), second_drop > 0 breaks round(second_drop * questions) further settled-right
  // questions; < 0 is a partial fix: round(-second_drop * questions) of the culprit's
  // affected questions behave as before it again.
  int second = 0;
  double second_drop = 0;
};

struct SimResult {
  Verdict verdict = Verdict::kSearching;
  int culprit = -1;
  int runs = 0;              // runs asked for (the two stored runs excluded)
  int rounds = 0;            // wall time in units of one step (runs, with one job)
  double questions = 0;      // questions those runs evaluated (a whole eval: SimHistory::questions)
  double confidence = 0;     // the confidence the answer was given with
  bool correct = false;      // the right culprit, or no-culprit when there is none
  std::vector<Change> changes;  // every culprit the chain named, in position order
  // Every culprit right: exactly the culprit and a second drop, no other commit (a partial
  // fix is no culprit); no-culprit when there is none.
  bool all_correct = false;
};

// Which positions 1..commits touch a watched path (index 0 unused), drawn from the seed
// alone: a search with and one without the priors see the same marks.
std::vector<char> WatchedCommits(const SimHistory& h, uint64_t seed);

// Both draw the history and the initial two runs from the same seed, so they see the same
// "nightly".
// The search is a CulpritChain looking for up to max_changes culprits (1: the one-culprit
// search, `harness bisect`'s default).
SimResult SimulateSearch(const SimHistory& h, uint64_t seed, const SearchOptions& options, int max_changes = BisectDefaults::kMaxCulprits);
// git bisect run with a gate script: one run per commit, bad when the value is below the gate.
SimResult SimulatePlainBisect(const SimHistory& h, uint64_t seed, double gate);

}  // namespace harness::bisect
