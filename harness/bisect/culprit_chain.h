// Several culprits in one range (issue 35 §3): a chain of Search (bisect_search.h) runs over
// parts of the range, each with the evidence model unchanged and every run already stored
// reused, that keeps going while an end of the range is not explained by the culprits found
// so far.
//
// The first search is the one-culprit search over (good, bad], exactly as before. Once a
// search names a commit c, up to two parts are left that may hold another drop: (c, bad]
// while its end is the known-bad commit (is the bad end's level c's, or did it drop
// further?) and (good, c - 1] while its start is the known-good commit (did the search name
// the later of two drops?). A part is asked, on the runs already stored and without a run of
// its own, whether it is explained: a Search over it (its good end the first commit of the
// part) gives the posterior of "no culprit in this part". Below kUnexplained, the part is
// searched like any range, and a culprit it finds splits it again; else it is explained and
// costs nothing. A search of a part that ends with no culprit explains it; one that ends
// ambiguous or out of runs leaves it unsettled (Decision::unsettled) and adds nothing. A
// part between two culprits is not asked (docs/bisect.md, "Several culprits"). At most
// max_changes culprits are searched for; runs come from the one budget (max_runs).
// First-parent semantics are the Search's: positions are first-parent commits. A partial
// fix (a later commit that moves the metric back) is not searched for: on the runs a search
// leaves, the questions it fixed were never asked at the culprit (docs/bisect.md).
//
// Each culprit carries its own confidence (the posterior its search named it with) and its
// size: the level of the runs from it up to the next culprit less the level of the runs from
// the previous one up to its parent (per-question outcomes: the sum of the per-question
// rate changes over the questions both sides answered, over every question of the series;
// else the mean values; the first series).
#pragma once

#include <deque>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "harness/bisect/bisect_search.h"

namespace harness::bisect {

class CulpritChain {
 public:
  // A part is unexplained when the posterior of "no culprit" in it falls below this on the
  // runs stored (bisect_bench --two-drops: docs/bisect.md, "Several culprits").
  static constexpr double kUnexplained = 0.01;

  // max_changes: the culprits looked for, as the request asked (BisectDefaults::kMaxCulprits
  // unless --max-culprits); no default of its own.
  CulpritChain(int positions, std::vector<SeriesSpec> series, SearchOptions options, int max_changes);

  void Add(const Observation& o);
  void CountRun();
  void Skip(int position);
  void SetFlipRates(int series, FlipRates rates);
  void SetPriorWeights(std::vector<double> weights);
  std::vector<int> QuestionsFor(int position, int series) const;

  // Search::Decide over the part being searched, positions those of the whole range. The
  // answer: the first search's verdict (culprit: the first culprit in position order, with
  // its confidence; ambiguous and no-culprit as before), with every culprit in `changes`.
  Decision Decide() { return Decide({}); }
  Decision Decide(const std::vector<int>& pending);
  std::vector<int> DecideBatch(const std::vector<int>& pending, int slots);

  // The part being searched (the last one once done), in positions of the whole range:
  // [0] no change in it, [j] position j is its change; 0 outside it.
  std::vector<double> Posterior() const;
  double ProbabilityBad(int position) const;
  std::vector<int> CredibleRange() const;
  int runs_requested() const { return runs_requested_; }
  const std::set<int>& skipped() const { return skipped_; }
  int positions() const { return positions_; }

 private:
  struct Part {
    int lo = 0, hi = 0;       // positions lo (its good end) .. hi
  };
  // The search Posterior and CredibleRange show, with its part: the active one, else the
  // last one once done; none before the first.
  std::pair<const Search*, const Part*> Shown() const;
  Search MakeSearch(const Part& part, int max_runs, bool with_observations) const;
  Observation Mapped(const Observation& o, const Part& part) const;
  // The posterior of no culprit in the part on the runs stored.
  double NoChange(const Part& part) const;
  // Pops parts until one is not explained (it becomes the active search) or none is left.
  void NextPart();
  void Found(const Decision& d);
  Decision Answer() const;
  double SizeOf(int position, const std::vector<int>& bounds) const;

  int positions_;
  std::vector<SeriesSpec> series_;
  SearchOptions options_;
  int max_changes_;
  // Every run of the whole range, in its positions: a part's search is built from them
  // (MakeSearch), and SizeOf and QuestionsFor read runs outside the active part. The active
  // Search keeps its own copy, in the part's positions: a Search owns its evidence, and one
  // copy for both would have every likelihood loop of Search read through a window and an
  // offset (a few runs of at most 1319 questions each: the copy costs little).
  std::vector<Observation> observations_;
  std::set<int> skipped_;
  std::vector<std::optional<FlipRates>> rates_;
  std::vector<double> weights_;
  int runs_requested_ = 0;

  Part part_;                       // the part the active search covers
  std::optional<Search> active_;    // empty: done
  Part last_;
  std::optional<Search> last_search_;  // the last active search, for Posterior once done
  std::deque<Part> todo_;
  std::vector<Change> changes_;
  Decision first_;                  // the first search's answer
  bool first_done_ = false, unsettled_ = false;
};

}  // namespace harness::bisect
