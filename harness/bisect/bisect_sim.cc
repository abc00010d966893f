#include "harness/bisect/bisect_sim.h"

#include <random>

namespace harness::bisect {
namespace {

class Runs {
 public:
  Runs(const SimHistory& h, uint64_t seed) : h_(h), rng_(seed) {}
  double At(int position) {
    const bool bad = h_.culprit > 0 && position >= h_.culprit;
    return (bad ? h_.good - h_.drop : h_.good) + std::normal_distribution<double>(0, h_.sigma)(rng_);
  }

 private:
  SimHistory h_;
  std::mt19937_64 rng_;
};

}  // namespace

SimResult SimulateSearch(const SimHistory& h, uint64_t seed, const SearchOptions& options) {
  Runs runs(h, seed);
  Search search(h.commits + 1, {SeriesSpec{true, h.sigma}}, options);
  search.Add({0, 0, false, runs.At(0), false});
  search.Add({h.commits, 0, false, runs.At(h.commits), false});
  SimResult r;
  for (int guard = 0; guard < 10 * options.max_runs + 10; ++guard) {
    Decision d = search.Decide();
    if (d.verdict != Verdict::kSearching) {
      r.verdict = d.verdict;
      r.culprit = d.culprit;
      break;
    }
    search.Add({d.next_position, 0, false, runs.At(d.next_position), false});
    search.CountRun();
  }
  r.runs = search.runs_requested();
  r.correct = h.culprit > 0 ? (r.verdict == Verdict::kCulprit && r.culprit == h.culprit) : r.verdict == Verdict::kNoCulprit;
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
    if (runs.At(mid) < gate) hi = mid;
    else lo = mid;
  }
  r.verdict = Verdict::kCulprit;  // plain bisection always names a commit
  r.culprit = hi;
  r.correct = h.culprit > 0 && hi == h.culprit;
  return r;
}

}  // namespace harness::bisect
