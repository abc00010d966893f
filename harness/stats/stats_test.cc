// Worked numbers of docs/gsm8k.md (n = 1319, gate 0.91).
#include "harness/stats/stats.h"

#include <cmath>
#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(WilsonInterval, ResearchWorkedNumbers) {
  auto ci = WilsonInterval(1180, 1319);
  EXPECT_NEAR(ci.low, 0.8769, 5e-5);
  EXPECT_NEAR(ci.high, 0.9101, 5e-5);
  ci = WilsonInterval(1220, 1319);
  EXPECT_NEAR(ci.low, 0.9095, 5e-5);
  EXPECT_NEAR(ci.high, 0.9380, 5e-5);
}

TEST(WilsonInterval, StaysInsideTheUnitInterval) {
  auto all = WilsonInterval(200, 200);
  EXPECT_DOUBLE_EQ(all.high, 1.0);
  EXPECT_LT(all.low, 1.0);
  auto none = WilsonInterval(0, 200);
  EXPECT_DOUBLE_EQ(none.low, 0.0);
  EXPECT_GT(none.high, 0.0);
  auto empty = WilsonInterval(0, 0);
  EXPECT_EQ(empty.low, 0);
  EXPECT_EQ(empty.high, 1);
}

TEST(Binomial, ExactLowerTailAgainstTheGate) {
  EXPECT_NEAR(BinomialCdf(1180, 1319, 0.91), 0.031, 5e-4);
  EXPECT_NEAR(BinomialCdf(1190, 1319, 0.91), 0.173, 5e-4);
  EXPECT_NEAR(BinomialCdf(1200, 1319, 0.91), 0.503, 5e-4);
  EXPECT_NEAR(BinomialCdf(1220, 1319, 0.91), 0.976, 5e-4);
  EXPECT_EQ(BinomialCdf(-1, 10, 0.5), 0);
  EXPECT_EQ(BinomialCdf(10, 10, 0.5), 1);
  EXPECT_DOUBLE_EQ(BinomialPmf(2, 4, 0.5), 6.0 / 16.0);
}

TEST(ExactMcNemar, ResearchWorkedNumbers) {
  auto t = ExactMcNemar(24, 10);
  EXPECT_NEAR(t.p_value, 0.024, 5e-4);
  EXPECT_NEAR(t.mid_p, 0.017, 5e-4);
  EXPECT_NEAR(ExactMcNemar(35, 20).p_value, 0.058, 5e-4);
  EXPECT_NEAR(ExactMcNemar(50, 30).p_value, 0.033, 5e-4);
  EXPECT_NEAR(ExactMcNemar(10, 24).p_value, 0.024, 5e-4);   // symmetric
  EXPECT_DOUBLE_EQ(ExactMcNemar(6, 0).p_value, 2.0 / 64.0);
  EXPECT_EQ(ExactMcNemar(0, 0).p_value, 1);
  EXPECT_EQ(ExactMcNemar(7, 7).p_value, 1);
}

TEST(Quantile, LinearInterpolationBetweenOrderStatistics) {
  std::vector<double> v = {4, 1, 3, 2, 5};
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(Quantile(v, 1.0), 5);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5), 0);
}

}  // namespace
// log Phi(z) against 25-digit values (mpmath's log(ncdf(z))): exact down to z = -30, the
// last values Phi itself can hold; beyond, within the asymptotic series' first term (1/z^2).
TEST(LogNormalCdf, ExactToMinusThirtyAndWithinOneOverZSquaredBeyond) {
  EXPECT_NEAR(LogNormalCdf(0), -0.6931471805599453, 1e-15);
  EXPECT_NEAR(LogNormalCdf(-5), -15.06499839398872574, 1e-12);
  EXPECT_NEAR(LogNormalCdf(-29.5), -439.4294746091502278, 1e-9);
  EXPECT_NEAR(LogNormalCdf(-30.5), -469.4627373229121144, 1.1 / (30.5 * 30.5));
  EXPECT_NEAR(LogNormalCdf(-40), -804.6084420137537882, 1.1 / (40.0 * 40.0));
  EXPECT_TRUE(std::isfinite(LogNormalCdf(-1e3)));
}

}  // namespace harness
