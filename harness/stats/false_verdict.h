// How likely a threshold's verdict is wrong, and what would settle it (the report's flaky
// thresholds). Two different questions hide behind "is this gate flaky?", and every
// estimate says which one it answers:
//   kRerunNoise  "will the nightly flip on a rerun?": run-to-run noise on the same
//                questions, from stored reruns of one commit and run identity: the
//                predictive probability that one more rerun lands on the other side, Student
//                t with k - 1 degrees of freedom over k >= 2 reruns (mean m, sample sd s,
//                scale s * sqrt(1 + 1/k));
//   kTrueRate    "is the true rate on the verdict's side of the gate?": the binomial
//                question (normal approximation of the observed proportion), used only
//                when no reruns exist;
//   kCommitSpread  a tolerance metric without reruns: the spread over recent commits,
//                which includes real changes, so an upper bound on rerun noise;
//   kStatusFlips the share of runs whose status disagreed (reruns of one commit, or
//                changes back and forth across consecutive commits).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace harness {

enum class FlakeQuestion { kRerunNoise, kTrueRate, kCommitSpread, kStatusFlips };
// rerun-noise, true-rate, commit-spread, status-flips.
std::string_view Word(FlakeQuestion q);

struct FalseVerdictEstimate {
  FlakeQuestion question = FlakeQuestion::kTrueRate;
  double probability = 0;      // of a false verdict (the other side of the threshold)
  double center = 0;           // the mean of the observations, or the observed rate
  double sigma = 0;            // the spread used (standard deviation or standard error)
  int64_t observations = 0;    // reruns, questions or runs behind the estimate
  // What would settle it: for kRerunNoise and kCommitSpread the results in total whose
  // mean's 95% t interval (t_{0.975, n-1} * s / sqrt(n)) clears the threshold; for kTrueRate the questions at the observed rate
  // whose 95% interval clears the gate; for kStatusFlips the reruns that show the minority
  // status at least once with 95% probability. 0: already settled; -1: never (the center
  // sits on the threshold).
  int64_t needed = 0;
};

// values: the metric in k >= 2 reruns of one commit and identity; threshold: the gate or bound.
FalseVerdictEstimate RerunNoiseEstimate(const std::vector<double>& values, double threshold);
// The same arithmetic over the values of recent commits (no reruns stored).
FalseVerdictEstimate CommitSpreadEstimate(const std::vector<double>& values, double threshold);
// correct of n against gate (n > 0).
FalseVerdictEstimate TrueRateEstimate(int64_t correct, int64_t n, double gate);
// minority of runs disagreed with the rest (0 < minority <= runs / 2).
FalseVerdictEstimate StatusFlipEstimate(int64_t minority, int64_t runs);

// P(Z <= z) for a standard normal Z.
double NormalCdf(double z);
// P(T <= t) for Student's t with dof degrees of freedom (exact for integer dof; the normal
// beyond 1000).
double StudentTCdf(double t, int64_t dof);

}  // namespace harness
