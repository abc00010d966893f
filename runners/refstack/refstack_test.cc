#include "runners/refstack/refstack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using ::testing::HasSubstr;

TEST(RefStackTest, CompilesWithTheConfigsDeviceAndFaults) {
  harness::StackConfig config;
  auto made = MakeRefStack(config);
  ASSERT_TRUE(made.ok()) << made.error().message;
  auto& stack = *made;
  EXPECT_EQ(stack->name(), "refstack");
  EXPECT_TRUE(stack->SupportsCompile());
  harness::CompileRequest r;
  r.model = "Qwen/Qwen3-32B";
  r.tp_size = 2;
  r.num_layers_override = 1;
  r.enable_sequence_parallel = true;
  auto clean = stack->Compile(r);
  ASSERT_TRUE(clean.ok()) << clean.error().message;
  EXPECT_EQ(clean->Calls("tensor_cast.all_reduce.default"), 0);
  EXPECT_GT(clean->total_seconds, 0);
  EXPECT_THAT(clean->table_text, HasSubstr("tensor_cast.rms_norm.default"));
  config.faults = {"sp-counts-bookkeeping-users"};
  auto faulty = (*MakeRefStack(config))->Compile(r);
  ASSERT_TRUE(faulty.ok());
  EXPECT_EQ(faulty->Calls("tensor_cast.all_reduce.default"), 1);
  config.faults = {};
  config.device = "NO_SUCH_DEVICE";
  auto bad = MakeRefStack(config);  // refused before any compile: an input error
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, harness::ExitCode::kUsage);
  EXPECT_THAT(bad.error().message, HasSubstr("unknown device 'NO_SUCH_DEVICE' (known: TEST_DEVICE;"));
}

}  // namespace
