#include "harness/stack/compile_request.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(CompileModelTest, RequestsComeFromSuiteParameters) {
  harness::Json j = harness::Json::parse(R"({"model": "Qwen/Qwen3-32B", "tp_size": 4, "disable_repetition": true,
                                             "quant": "FP8", "unrelated": 1})");
  auto r = CompileRequestFromParams(harness::JsonObject(j, "suite.json", "tests.t[0]"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tp_size, 4);
  EXPECT_TRUE(r->disable_repetition);
  EXPECT_EQ(r->quant, "FP8");
  EXPECT_EQ(r->query_len, 128);  // default
  j["tp_size"] = "four";
  EXPECT_EQ(CompileRequestFromParams(harness::JsonObject(j, "suite.json", "tests.t[0]")).error().message,
            "suite.json: tests.t[0].tp_size: expected an integer");
  j["tp_size"] = 99999999999999;  // would truncate to a plausible-looking int
  EXPECT_EQ(CompileRequestFromParams(harness::JsonObject(j, "suite.json", "tests.t[0]")).error().message,
            "suite.json: tests.t[0].tp_size: must be in [1, 16777216], got 99999999999999");
  j["tp_size"] = 0;
  EXPECT_FALSE(CompileRequestFromParams(harness::JsonObject(j, "suite.json", "tests.t[0]")).ok());
}

}  // namespace
}  // namespace harness
