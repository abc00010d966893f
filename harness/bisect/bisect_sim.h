// Simulated noisy histories for measuring the search against plain bisection
// (bisect_bench.cc) and for testing it (bisect_search_test.cc): a metric at `good` before
// the culprit and `good - drop` from it on, each run adding Gaussian run-to-run noise of
// sd `sigma` (the calibrated stand-in's 0.3 pp at n = 1319). The known-good and known-bad
// commits start with one stored run each, as after a nightly: they cost nothing.
#pragma once

#include <cstdint>

#include "harness/bisect/bisect_search.h"

namespace harness::bisect {

struct SimHistory {
  int commits = 64;          // positions 1..commits; position 0 is the known-good commit
  int culprit = 0;           // 0: no drop (the bad run was noise)
  double good = 0.9234;
  double drop = 0.013;
  double sigma = 0.003;
};

struct SimResult {
  Verdict verdict = Verdict::kSearching;
  int culprit = -1;
  int runs = 0;              // runs asked for (the two stored runs excluded)
  bool correct = false;      // the right culprit, or no-culprit when there is none
};

// Both draw the initial two runs from the same seed, so they see the same "nightly".
SimResult SimulateSearch(const SimHistory& h, uint64_t seed, const SearchOptions& options);
// git bisect run with a gate script: one run per commit, bad when the value is below the gate.
SimResult SimulatePlainBisect(const SimHistory& h, uint64_t seed, double gate);

}  // namespace harness::bisect
