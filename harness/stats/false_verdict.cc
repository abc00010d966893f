#include "harness/stats/false_verdict.h"

#include <cmath>
#include <numbers>

#include "harness/stats/stats.h"

namespace harness {

std::string_view Word(FlakeQuestion q) {
  switch (q) {
    case FlakeQuestion::kRerunNoise: return "rerun-noise";
    case FlakeQuestion::kTrueRate: return "true-rate";
    case FlakeQuestion::kCommitSpread: return "commit-spread";
    case FlakeQuestion::kStatusFlips: return "status-flips";
  }
  return "true-rate";
}

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double StudentTCdf(double t, int64_t dof) {
  if (dof <= 0) return 0.5;
  if (dof > 1000) return NormalCdf(t);
  // A(t | dof) = P(|T| < |t|) by the finite series for integer degrees of freedom
  // (Abramowitz and Stegun 26.7.3 and 26.7.4), theta = atan(|t| / sqrt(dof)).
  const double theta = std::atan(std::fabs(t) / std::sqrt(static_cast<double>(dof)));
  const double c2 = std::cos(theta) * std::cos(theta), sn = std::sin(theta);
  double a;
  if (dof % 2 == 1) {
    double term = std::cos(theta), sum = dof > 1 ? term : 0;
    for (int64_t j = 3; j <= dof - 2; j += 2) {
      term *= c2 * static_cast<double>(j - 1) / static_cast<double>(j);
      sum += term;
    }
    a = 2 / std::numbers::pi * (theta + sn * sum);
  } else {
    double term = 1, sum = 1;
    for (int64_t j = 2; j <= dof - 2; j += 2) {
      term *= c2 * static_cast<double>(j - 1) / static_cast<double>(j);
      sum += term;
    }
    a = sn * sum;
  }
  return t < 0 ? (1 - a) / 2 : (1 + a) / 2;
}

namespace {

// Observations needed for a 95% interval of half-width kZ95 * sigma / sqrt(k) to leave
// the threshold at distance margin; -1 when that is never.
// Beyond this many the answer is "never" in practice (and would overflow an int64).
constexpr double kNever = 1e15;

int64_t Ceil(double k) { return !(k < kNever) ? -1 : static_cast<int64_t>(std::ceil(k - 1e-9)); }


// Searched up to here; beyond, "never" in practice.
constexpr int64_t kMaxNeeded = 10'000'000;

// t_{0.975, dof} by bisection on the CDF (dof >= 1).
double StudentTQuantile975(int64_t dof) {
  double lo = 0, hi = 20;
  while (StudentTCdf(hi, dof) < 0.975) hi *= 2;
  for (int i = 0; i < 80; ++i) {
    const double mid = (lo + hi) / 2;
    (StudentTCdf(mid, dof) < 0.975 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

FalseVerdictEstimate SpreadEstimate(FlakeQuestion q, const std::vector<double>& values, double threshold) {
  FalseVerdictEstimate e;
  e.question = q;
  e.observations = static_cast<int64_t>(values.size());
  if (values.empty()) return e;
  double sum = 0;
  for (double v : values) sum += v;
  e.center = sum / static_cast<double>(values.size());
  double ss = 0;
  for (double v : values) ss += (v - e.center) * (v - e.center);
  e.sigma = values.size() > 1 ? std::sqrt(ss / static_cast<double>(values.size() - 1)) : 0;
  const double margin = std::fabs(e.center - threshold);
  if (e.sigma == 0) {
    // Every observation agreed exactly: a rerun lands where they did.
    e.probability = margin == 0 ? 0.5 : 0;
    e.needed = margin == 0 ? -1 : 0;
    return e;
  }
  // The next observation's predictive distribution: Student t with k - 1 degrees of
  // freedom and scale s * sqrt(1 + 1/k). Few reruns say little about sigma, and the t's
  // heavy tails say so (two reruns: a Cauchy), where a normal would claim certainty.
  const auto k = static_cast<int64_t>(values.size());
  const double kd = static_cast<double>(k);
  e.probability = StudentTCdf(-margin / (e.sigma * std::sqrt(1 + 1 / kd)), k - 1);
  if (margin == 0) {
    e.needed = -1;
    return e;
  }
  // Results in total for the mean's 95% t interval to clear the threshold, sigma as observed.
  e.needed = -1;
  for (int64_t n = 2; n <= kMaxNeeded; n = n < 1000 ? n + 1 : n + n / 100) {
    if (StudentTQuantile975(n - 1) * e.sigma / std::sqrt(static_cast<double>(n)) < margin) {
      e.needed = n;
      break;
    }
  }
  return e;
}

}  // namespace

FalseVerdictEstimate RerunNoiseEstimate(const std::vector<double>& values, double threshold) {
  return SpreadEstimate(FlakeQuestion::kRerunNoise, values, threshold);
}

FalseVerdictEstimate CommitSpreadEstimate(const std::vector<double>& values, double threshold) {
  return SpreadEstimate(FlakeQuestion::kCommitSpread, values, threshold);
}

FalseVerdictEstimate TrueRateEstimate(int64_t correct, int64_t n, double gate) {
  FalseVerdictEstimate e;
  e.question = FlakeQuestion::kTrueRate;
  e.observations = n;
  if (n <= 0) {
    e.probability = 0.5;
    e.needed = -1;
    return e;
  }
  const double p = static_cast<double>(correct) / static_cast<double>(n);
  e.center = p;
  const double var = p * (1 - p);
  e.sigma = std::sqrt(var / static_cast<double>(n));
  const double margin = std::fabs(p - gate);
  if (e.sigma == 0) {
    // All right or all wrong: the normal approximation has no spread; Wilson still does.
    const Interval ci = WilsonInterval(correct, n);
    const bool straddles = ci.low < gate && ci.high >= gate;
    e.probability = straddles ? 0.5 : 0;
    e.needed = straddles ? -1 : 0;
    return e;
  }
  e.probability = NormalCdf(-margin / e.sigma);
  // n' p(1-p) / n' ... : the questions whose standard error times z is the margin.
  e.needed = margin == 0 ? -1 : Ceil(kZ95 * kZ95 * var / (margin * margin));
  return e;
}

FalseVerdictEstimate StatusFlipEstimate(int64_t minority, int64_t runs) {
  FalseVerdictEstimate e;
  e.question = FlakeQuestion::kStatusFlips;
  e.observations = runs;
  if (runs <= 0 || minority <= 0) return e;
  const double q = static_cast<double>(minority) / static_cast<double>(runs);
  e.center = q;
  e.probability = q;
  e.sigma = std::sqrt(q * (1 - q) / static_cast<double>(runs));
  // (1 - q)^k <= 0.05: k reruns show the minority status at least once with 95%.
  e.needed = q >= 1 ? 1 : Ceil(std::log(0.05) / std::log(1 - q));
  return e;
}

}  // namespace harness
