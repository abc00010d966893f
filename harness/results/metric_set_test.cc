#include "harness/results/metric_set.h"

#include <gtest/gtest.h>

#include "harness/results/metric_names.h"

namespace harness {
namespace metric_set_test {

TEST(MetricSet, FindsTheFirstMetricOfANameAndItsValue) {
  const std::vector<Metric> metrics = {{metric_names::kAccuracy, 0.75, 8, 0.4, 0.9},
                                       {metric_names::kGate, 0.5, 0, {}, {}},
                                       {metric_names::kAccuracy, 0.25, 8, {}, {}}};
  const MetricSet set(metrics);
  ASSERT_NE(set.Find(metric_names::kAccuracy), nullptr);
  EXPECT_EQ(set.Find(metric_names::kAccuracy), &metrics[0]);
  EXPECT_EQ(set.Value(metric_names::kGate), 0.5);
  EXPECT_EQ(set.Find("accuracy "), nullptr);
  EXPECT_EQ(set.Value(metric_names::kErrorRate), std::nullopt);
}

TEST(MetricSet, ReadsEachStoredVerdictBackIntoItsType) {
  for (GateVerdict g : {GateVerdict::kPass, GateVerdict::kAtRisk, GateVerdict::kFail})
    for (BaselineVerdict b : {BaselineVerdict::kSame, BaselineVerdict::kImproved, BaselineVerdict::kRegressed}) {
      const std::vector<Metric> metrics = {VerdictMetric(metric_names::kBaselineVerdict, b),
                                           VerdictMetric(metric_names::kGateVerdict, g)};
      EXPECT_EQ(MetricSet(metrics).Gate(), g) << Word(g);
      EXPECT_EQ(MetricSet(metrics).Paired(), b) << Word(b);
    }
}

TEST(MetricSet, NoVerdictWhenNoneIsStoredOrItsWordIsNoVerdict) {
  const std::vector<Metric> none = {{metric_names::kAccuracy, 1, 1, {}, {}}};
  EXPECT_EQ(MetricSet(none).Gate(), std::nullopt);
  EXPECT_EQ(MetricSet(none).Paired(), std::nullopt);
  // A word only another table holds, another case, a space, hostile text: no verdict.
  for (const char* word : {"REGRESSED", "at-risk", "PASS ", "", "<b>FAIL</b>\n"}) {
    const std::vector<Metric> odd = {{metric_names::kGateVerdict, 1, 0, {}, {}, word}};
    EXPECT_EQ(MetricSet(odd).Gate(), std::nullopt) << word;
  }
  const std::vector<Metric> odd = {{metric_names::kBaselineVerdict, 2, 0, {}, {}, "AT-RISK"}};
  EXPECT_EQ(MetricSet(odd).Paired(), std::nullopt);
}

}  // namespace metric_set_test
}  // namespace harness
