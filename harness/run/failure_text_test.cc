#include "harness/run/failure_text.h"

#include <gtest/gtest.h>

#include "harness/util/paths.h"

namespace harness {
namespace {

// The texts below are what GoogleTest 1.12+ writes for these assertions (TestPartResult::message()).
TEST(SplitGtestMessage, SeparatesEachAssertionsTextFromTheFinding) {
  auto b = SplitGtestMessage("Value of: check.ok()\n  Actual: false\nExpected: true\nthe op table does not meet x:\n  row 1");
  EXPECT_EQ(b.framework, "Value of: check.ok()\n  Actual: false\nExpected: true");
  EXPECT_EQ(b.finding, "the op table does not meet x:\n  row 1");
  auto eq = SplitGtestMessage("Expected equality of these values:\n  violations\n    Which is: 3\n  0\nFP8 GEMM outside the bound");
  EXPECT_EQ(eq.framework, "Expected equality of these values:\n  violations\n    Which is: 3\n  0");
  EXPECT_EQ(eq.finding, "FP8 GEMM outside the bound");
  auto diff = SplitGtestMessage(
      "Expected equality of these values:\n  a\n    Which is: \"x\\ny\"\n  b\n    Which is: \"x\\nz\"\nWith diff:\n@@ -1,2 +1,2 @@\n x\n-y\n+z\nq differs");
  EXPECT_EQ(diff.finding, "q differs");
  auto gt = SplitGtestMessage("Expected: (calls) > (0), actual: 0 vs 0\nno reduce_scatter in:\ntable");
  EXPECT_EQ(gt.framework, "Expected: (calls) > (0), actual: 0 vs 0");
  EXPECT_EQ(gt.finding, "no reduce_scatter in:\ntable");
  auto near = SplitGtestMessage(
      "The difference between a and b is 0.5, which exceeds 0.1, where\na evaluates to 1,\nb evaluates to 0.5, and\n0.1 "
      "evaluates to 0.1.\nerror too large");
  EXPECT_EQ(near.finding, "error too large");
  auto failed = SplitGtestMessage("Failed\nserver gone");
  EXPECT_EQ(failed.framework, "Failed");
  EXPECT_EQ(failed.finding, "server gone");
  // The suite's own failure lines (GTEST_NONFATAL_FAILURE_) carry no framework text.
  auto own = SplitGtestMessage("gsm8k FAIL at gate 0.91 (...): gsm8k accuracy 0.8800");
  EXPECT_EQ(own.framework, "");
  EXPECT_EQ(own.finding, "gsm8k FAIL at gate 0.91 (...): gsm8k accuracy 0.8800");
}

TEST(FailureText, FindingsLeadAndLocationsAreRelativeToTheRepository) {
  const std::string root = SourceRoot().string();
  FailureText text;
  text.Add(root + "/suites/gmm.cc", 50,
           "Value of: check.ok()\n  Actual: false\nExpected: true\nthe op table does not meet " + root +
               "/golden/ops/gmm/x.json:\nrow changed");
  text.Add(root + "/suites/gmm.cc", 43, "Value of: result.ok()\n  Actual: false\nExpected: true");
  EXPECT_EQ(text.Text(),
            "the op table does not meet golden/ops/gmm/x.json:\nrow changed\nValue of: result.ok()\n  Actual: false\n"
            "Expected: true\nsuites/gmm.cc:50: Value of: check.ok()\n  Actual: false\nExpected: true\nsuites/gmm.cc:43");
  EXPECT_EQ(text.Text().find(root), std::string::npos);
}

}  // namespace
}  // namespace harness
