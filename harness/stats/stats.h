// Statistics for proportion metrics (docs/gsm8k.md, "Statistics and verdicts"): Wilson score
// intervals, exact binomial tails, the exact McNemar test for paired outcomes, quantiles
// (latency percentiles). Used by the verdicts (verdict.h), the eval summaries, compare and
// the report.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>



namespace harness {

constexpr double kZ95 = 1.959963984540054;  // two-sided 95%

struct Interval {
  double low = 0;
  double high = 1;
};

// Wilson score interval for successes out of n; n = 0 gives [0, 1].
Interval WilsonInterval(int64_t successes, int64_t n, double z = kZ95);

// P(X = k) and P(X <= k) for X ~ Binomial(n, p), exact (summed in log space).
double BinomialPmf(int64_t k, int64_t n, double p);
double BinomialCdf(int64_t k, int64_t n, double p);

// Exact McNemar on the discordant pairs: b = right before and wrong now (losses),
// c = wrong before and right now (gains). p_value is two-sided,
// min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2); mid_p subtracts half the
// point probability (less conservative; reported beside the exact p).
struct McNemarTest {
  int64_t b = 0;
  int64_t c = 0;
  double p_value = 1;
  double mid_p = 1;
};
McNemarTest ExactMcNemar(int64_t b, int64_t c);

// log Phi(z), Phi the standard normal distribution function: exact (through erfc) down to
// z = -30, where Phi is about 5e-198; below, where Phi underflows, the first term of its
// asymptotic series (-z^2/2 - log(-z) - log(2 pi)/2, about 1/z^2 too high). The bisect
// search's drop prior is a normal truncated far out in its tail.
double LogNormalCdf(double z);

// The q-quantile (0 <= q <= 1) with linear interpolation between order statistics
// (numpy's default); 0 for an empty list.
double Quantile(std::vector<double> values, double q);

}  // namespace harness
