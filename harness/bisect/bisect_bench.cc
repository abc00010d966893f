// The search against plain bisection on simulated noisy histories (the benchmark):
// 100 histories with a 1.3 pp drop (the seed's 0.925 -> 0.912), 100 with 0.6 pp, 50 with
// none, 64 commits, 0.3 pp run-to-run noise. Plain bisection is `git bisect run` with a
// gate script: one run per commit, bad below 0.91. Prints accuracy and mean runs side by
// side; deterministic (fixed seeds).
//   build/harness/bisect/bisect_bench [--max-runs N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "harness/bisect/bisect_sim.h"

using harness::bisect::SearchOptions;
using harness::bisect::SimHistory;
using harness::bisect::SimulatePlainBisect;
using harness::bisect::SimulateSearch;
using harness::bisect::Verdict;

int main(int argc, char** argv) {
  SearchOptions options;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--max-runs") == 0) options.max_runs = std::atoi(argv[i + 1]);
  std::printf("%-10s %-9s  %-22s %-10s %-10s  %-22s %-10s\n", "drop", "histories", "search: correct", "mean runs",
              "ambiguous", "plain bisect: correct", "mean runs");
  std::mt19937_64 pick(7);
  double total_search = 0, total_plain = 0;
  int total = 0;
  for (double drop : {0.013, 0.006, 0.0}) {
    const int histories = drop > 0 ? 100 : 50;
    int ok = 0, plain_ok = 0, ambiguous = 0;
    double runs = 0, plain_runs = 0;
    for (int i = 0; i < histories; ++i) {
      SimHistory h;
      h.drop = drop;
      h.culprit = drop > 0 ? 1 + static_cast<int>(pick() % 64) : 0;
      auto r = SimulateSearch(h, 1000 + i, options);
      auto p = SimulatePlainBisect(h, 1000 + i, 0.91);
      ok += r.correct;
      ambiguous += r.verdict == Verdict::kAmbiguous;
      runs += r.runs;
      plain_ok += p.correct;
      plain_runs += p.runs;
    }
    total_search += runs;
    total_plain += plain_runs;
    total += histories;
    std::printf("%-10s %-9d  %5.1f %% (%3d/%3d)      %-10.1f %-10d  %5.1f %% (%3d/%3d)      %-10.1f\n",
                drop > 0 ? (drop > 0.01 ? "1.3 pp" : "0.6 pp") : "none", histories, 100.0 * ok / histories, ok,
                histories, runs / histories, ambiguous, 100.0 * plain_ok / histories, plain_ok, histories,
                plain_runs / histories);
  }
  std::printf("mean runs over all %d histories: search %.1f, plain %.1f (ratio %.2f); max runs %d\n", total,
              total_search / total, total_plain / total, total_search / total_plain, options.max_runs);
  return 0;
}
