#include "harness/stats/stats.h"

#include <algorithm>
#include <cmath>


namespace harness {

Interval WilsonInterval(int64_t successes, int64_t n, double z) {
  if (n <= 0) return {0, 1};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(successes) / nn;
  const double z2 = z * z;
  const double denom = 1 + z2 / nn;
  const double center = (p + z2 / (2 * nn)) / denom;
  const double half = z / denom * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

double BinomialPmf(int64_t k, int64_t n, double p) {
  if (k < 0 || k > n) return 0;
  if (p <= 0) return k == 0 ? 1 : 0;
  if (p >= 1) return k == n ? 1 : 0;
  const double kk = static_cast<double>(k), nn = static_cast<double>(n);
  const double log_choose = std::lgamma(nn + 1) - std::lgamma(kk + 1) - std::lgamma(nn - kk + 1);
  return std::exp(log_choose + kk * std::log(p) + (nn - kk) * std::log1p(-p));
}

double LogNormalCdf(double z) {
  constexpr double kLn2Pi = 1.8378770664093453;
  if (z > -30) return std::log(0.5 * std::erfc(-z / std::sqrt(2.0)));
  return -0.5 * z * z - std::log(-z) - 0.5 * kLn2Pi;
}

double BinomialCdf(int64_t k, int64_t n, double p) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  double sum = 0;
  for (int64_t i = 0; i <= k; ++i) sum += BinomialPmf(i, n, p);
  return std::min(1.0, sum);
}

McNemarTest ExactMcNemar(int64_t b, int64_t c) {
  McNemarTest t{b, c, 1, 1};
  const int64_t n = b + c;
  if (n == 0) return t;
  const int64_t low = std::min(b, c);
  const double tail = BinomialCdf(low, n, 0.5);
  t.p_value = std::min(1.0, 2 * tail);
  t.mid_p = std::min(1.0, 2 * (tail - 0.5 * BinomialPmf(low, n, 0.5)));
  return t;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace harness
