// The at-risk band of a trend (the loader's part is tested through BuildReport,
// reports/report_model_test.cc).
#include "reports/sections/trends.h"

#include <gtest/gtest.h>

#include "reports/report_model.h"

namespace harness::reports {
namespace {

TEST(ReportModel, AtRiskBandIsWhereTheWilsonIntervalStraddlesTheGate) {
  // Hand computation (python3): at n = 100 and gate 0.9 the Wilson 95% interval straddles
  // the gate for k = 85 ([0.7672, 0.9069]) up to k = 95 ([0.8882, 0.9785]).
  auto band = AtRiskBand(100, 0.9);
  ASSERT_TRUE(band);
  EXPECT_DOUBLE_EQ(band->first, 0.85);
  EXPECT_DOUBLE_EQ(band->second, 0.95);
  EXPECT_FALSE(AtRiskBand(0, 0.9));
}

}  // namespace
}  // namespace harness::reports
