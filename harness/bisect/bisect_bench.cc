// The search against plain bisection on simulated noisy histories (the benchmark):
// 100 histories with a 1.3 pp drop (the seed's 0.925 -> 0.912), 100 with 0.6 pp, 50 with
// none, 64 commits, questions as noisy as the calibrated stand-in (bisect_sim.h). Three
// contenders on the same histories: the search reading each run's questions (what
// `harness bisect --metric gsm8k` does when samples are stored), the search reading only
// each run's accuracy, and plain bisection (`git bisect run` with a gate script: one run
// per commit, bad below 0.91). Prints accuracy and mean runs side by side; deterministic
// (fixed seeds).
// --fragile N sets the borderline questions (56: the stand-in's 0.25 pp; 81: 0.3 pp);
// --affected-right P lets an affected question still be right with probability P after the
// culprit (a fault that moves margins only part of the way; the nominal drop shrinks by P).
//   build/harness/bisect/bisect_bench [--max-runs N] [--fragile N] [--affected-right P]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "harness/bisect/bisect_sim.h"

using harness::bisect::SearchOptions;
using harness::bisect::SimHistory;
using harness::bisect::SimResult;
using harness::bisect::SimulatePlainBisect;
using harness::bisect::SimulateSearch;
using harness::bisect::Verdict;

namespace {

struct Tally {
  int correct = 0, ambiguous = 0;
  double runs = 0;
  void Add(const SimResult& r) {
    correct += r.correct;
    ambiguous += r.verdict == Verdict::kAmbiguous;
    runs += r.runs;
  }
};

}  // namespace

int main(int argc, char** argv) {
  SearchOptions options;
  int fragile = SimHistory{}.fragile;
  double affected_right = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--max-runs") == 0) options.max_runs = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--fragile") == 0) fragile = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--affected-right") == 0) affected_right = std::atof(argv[i + 1]);
  }
  std::printf("%-7s %-5s | %-26s | %-26s | %-20s\n", "drop", "hist.", "search, per question", "search, accuracy only",
              "plain bisect");
  std::printf("%-7s %-5s | %-9s %-6s %-9s | %-9s %-6s %-9s | %-9s %-9s\n", "", "", "correct", "runs", "ambiguous",
              "correct", "runs", "ambiguous", "correct", "runs");
  std::mt19937_64 pick(7);
  Tally all_q, all_v, all_p;
  int total = 0;
  for (double drop : {0.013, 0.006, 0.0}) {
    const int histories = drop > 0 ? 100 : 50;
    Tally q, v, p;
    for (int i = 0; i < histories; ++i) {
      SimHistory h;
      h.drop = drop;
      h.fragile = fragile;
      h.affected_right = affected_right;
      h.culprit = drop > 0 ? 1 + static_cast<int>(pick() % 64) : 0;
      q.Add(SimulateSearch(h, 1000 + i, options));
      p.Add(SimulatePlainBisect(h, 1000 + i, 0.91));
      h.per_question = false;
      v.Add(SimulateSearch(h, 1000 + i, options));
    }
    for (auto [from, to] : {std::pair{&q, &all_q}, {&v, &all_v}, {&p, &all_p}}) to->runs += from->runs;
    total += histories;
    std::printf("%-7s %-5d | %6.1f %%  %-6.1f %-9d | %6.1f %%  %-6.1f %-9d | %6.1f %%  %-9.1f\n",
                drop > 0 ? (drop > 0.01 ? "1.3 pp" : "0.6 pp") : "none", histories, 100.0 * q.correct / histories,
                q.runs / histories, q.ambiguous, 100.0 * v.correct / histories, v.runs / histories, v.ambiguous,
                100.0 * p.correct / histories, p.runs / histories);
  }
  std::printf("mean runs over all %d histories: per question %.1f, accuracy only %.1f, plain %.1f "
              "(ratios to plain %.2f and %.2f); max runs %d, %d borderline questions, affected right %.2f\n",
              total, all_q.runs / total, all_v.runs / total, all_p.runs / total, all_q.runs / all_p.runs,
              all_v.runs / all_p.runs, options.max_runs, fragile, affected_right);
  return 0;
}
