#include "runners/refstack/compiler/region_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/model_builder.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using testing_util::Bf16;

using ::testing::HasSubstr;

// Calls per op name after replay.
std::map<std::string, int64_t> CallsByOp(const Graph& g) {
  auto events = ReplayEvents(g);
  EXPECT_TRUE(events.ok()) << events.error().message;
  std::map<std::string, int64_t> calls;
  for (const auto& e : *events) calls[std::string(e.node->op())] += e.calls;
  return calls;
}

Graph Build(const std::string& model, BuildOptions o) {
  auto config = LoadModelConfig(harness::GoldenDir() / "models" / (model + ".json"));
  EXPECT_TRUE(config.ok());
  auto g = BuildModel(*config, o);
  EXPECT_TRUE(g.ok()) << g.error().message;
  return std::move(g).value();
}

TEST(RegionReplayTest, OpsInsideARegionRunOncePerCopyMore) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* before = g.Call(OpKind::kMul, {x, 2.0});
  Node* begin = g.Call(OpKind::kRegionBegin, {before, int64_t{0}});
  Node* inside = g.Call(OpKind::kAdd, {begin, 1.0});
  Node* end = g.Call(OpKind::kRegionEnd, {inside, int64_t{0}});
  Node* c1 = g.Call(OpKind::kCopyRegionV2, {end, end, int64_t{0}});
  Node* c2 = g.Call(OpKind::kCopyRegionV2, {c1, end, int64_t{0}});
  Node* after = g.Call(OpKind::kSub, {c2, 1.0});
  g.SetOutput({after, end});
  auto events = ReplayEvents(g);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);  // markers, copies, placeholder and output are not events
  EXPECT_EQ((*events)[0].node, before);
  EXPECT_EQ((*events)[0].calls, 1);
  EXPECT_EQ((*events)[1].node, inside);
  EXPECT_EQ((*events)[1].calls, 3);
  EXPECT_EQ((*events)[2].node, after);
  EXPECT_EQ((*events)[2].calls, 1);
}

TEST(RegionReplayTest, CopyBeforeItsRegionClosesIsAnError) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({4, 4}));
  Node* begin = g.Call(OpKind::kRegionBegin, {x, int64_t{3}});
  Node* copy = g.Call(OpKind::kCopyRegion, {begin, int64_t{3}});
  g.SetOutput({copy});
  auto events = ReplayEvents(g);
  ASSERT_FALSE(events.ok());
  EXPECT_THAT(events.error().message, HasSubstr("replays region 3 before it closed"));
}

TEST(RegionReplayTest, RepetitionOnAndOffRunTheSameLayers) {
  BuildOptions o;
  o.tp_size = 2;
  o.num_layers_override = 5;
  const auto on = CallsByOp(Build("Qwen/Qwen3-32B", o));
  o.enable_repetition = false;
  const auto off = CallsByOp(Build("Qwen/Qwen3-32B", o));
  for (const char* op :
       {"tensor_cast.attention.default", "tensor_cast.reshape_and_cache.default", "tensor_cast.swiglu.default",
        "tensor_cast.all_reduce.default", "aten.mm.default", "aten.embedding.default", "aten.index_select.default"}) {
    EXPECT_EQ(on.at(op), off.at(op)) << op;
  }
  EXPECT_EQ(on.at("tensor_cast.attention.default"), 5);
  EXPECT_EQ(on.at("tensor_cast.all_reduce.default"), 1 + 2 * 5);
  // Only the fusions across layer boundaries differ: with markers every layer keeps its
  // own input rms_norm and residual add.
  EXPECT_EQ(on.at("tensor_cast.rms_norm.default"), 3 * 5 + 1);
  EXPECT_EQ(off.at("tensor_cast.rms_norm.default"), 2 * 5 + 1);
  EXPECT_EQ(off.at("tensor_cast.add_rms_norm2.default"), 2 * 5 - 1);
  EXPECT_EQ(on.at("aten.add.Tensor"), 5);
}

TEST(RegionReplayTest, EachRegionRepeatsByItsOwnCopies) {
  auto config = LoadModelConfig(harness::GoldenDir() / "models" / "Qwen/Qwen3-235B-A22B.json");
  ASSERT_TRUE(config.ok());
  config->mlp_only_layers = {1};
  BuildOptions o;
  o.query_len = 16;
  o.num_layers_override = 6;
  auto g = BuildModel(*config, o);
  ASSERT_TRUE(g.ok());
  const auto calls = CallsByOp(*g);
  EXPECT_EQ(calls.at("tensor_cast.moe_gating_top_k_softmax.default"), 5);
  EXPECT_EQ(calls.at("tensor_cast.swiglu.default"), 6);  // 5 MoE + 1 dense
  EXPECT_EQ(calls.at("tensor_cast.attention.default"), 6);
}

}  // namespace
}  // namespace harness::compiler
