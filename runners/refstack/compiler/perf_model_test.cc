#include "runners/refstack/compiler/perf_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using testing_util::Bf16;
using testing_util::TestDevice;

using ::testing::HasSubstr;

// msmodeling's TEST_DEVICE numbers (its tensor_cast/device.py, docs/compiler.md), independent of
// the JSON file.
constexpr double kBf16Mma = 353.9e12, kBf16Gp = 11e12, kComputeEff = 0.7;
const double kMemBw = 1.6 * std::pow(2.0, 40) * 0.6;
constexpr double kStaticMma = 5e-6, kStaticGp = 2e-6;

TEST(DeviceProfileTest, TestDeviceCarriesTheDocumentedNumbers) {
  DeviceProfile d = TestDevice();
  EXPECT_DOUBLE_EQ(d.mma_peak.at(DType::kBFloat16), kBf16Mma);
  EXPECT_DOUBLE_EQ(d.mma_peak.at(DType::kFloat4E2M1), 1415.6e12);
  EXPECT_DOUBLE_EQ(d.gp_peak.at(DType::kFloat32), 5.5e12);
  EXPECT_DOUBLE_EQ(d.memory_bandwidth * d.memory_efficiency, kMemBw);
  EXPECT_DOUBLE_EQ(d.memory_bytes, 64.0 * (1 << 30));
  ASSERT_EQ(d.levels.size(), 2u);
  EXPECT_TRUE(d.levels[0].full_mesh);
  EXPECT_EQ(d.levels[0].size, 8);
  EXPECT_DOUBLE_EQ(d.levels[1].bandwidth, 50e9);
  EXPECT_DOUBLE_EQ(d.static_comm, 0);
}

TEST(DeviceProfileTest, UnknownDeviceAndBadFieldsAreNamed) {
  auto unknown = LoadDeviceProfile(harness::GoldenDir() / "devices", "H100");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("unknown device 'H100' (known: TEST_DEVICE;"));
  harness::Json j = harness::Json::parse(R"({"format_version": 1, "name": "X", "mma_tflops": {"bfloat16": 1},
      "gp_tflops": {"float32": 1}, "memory_gib": 1, "memory_bandwidth_tib_per_s": 1, "compute_efficiency": 0.5,
      "memory_efficiency": 0.5, "interconnect": {"comm_efficiency": 0.5, "levels": [{"name": "a", "size": 8,
      "topology": "torus", "bandwidth_gb_per_s": 1, "latency_us": 1}]},
      "static_cost_us": {"mma": 1, "gp": 1, "comm": 1}})");
  auto bad = ParseDeviceProfile(j, "X.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "X.json: interconnect.levels[0].topology: unknown topology 'torus' (known: full_mesh, switch)");
  j["interconnect"]["levels"][0]["topology"] = "switch";
  j["compute_efficiency"] = 1.5;
  EXPECT_EQ(ParseDeviceProfile(j, "X.json").error().message, "X.json: compute_efficiency: must be in (0, 1]");
  j["compute_efficiency"] = 0.5;
  j["mma_tflops"] = {{"bfloat17", 1}};
  EXPECT_EQ(ParseDeviceProfile(j, "X.json").error().message, "X.json: mma_tflops.bfloat17: unknown dtype");
}

TEST(PerfModelTest, MatmulIsTheRooflineMaxPlusTheMmaStaticCost) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({128, 5120}));
  Node* w = g.AddGetAttr("w", Bf16({5120, 4096}));
  Node* mm = g.Call(OpKind::kMm, {x, w});
  const double mma = 2.0 * 128 * 5120 * 4096 / (kBf16Mma * kComputeEff);
  const double memory = 2.0 * (128 * 5120 + 5120 * 4096 + 128 * 4096) / kMemBw;
  ASSERT_GT(memory, mma);  // memory bound at 128 tokens
  auto t = EstimateSeconds(*mm, TestDevice());
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(*t, memory + kStaticMma);
}

TEST(PerfModelTest, NormIsMemoryBoundWithTheGpStaticCost) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 4096, 5120}));
  Node* w = g.AddGetAttr("w", Bf16({5120}));
  Node* norm = g.Call(OpKind::kRmsNorm, {x, w, 1e-6});
  const double elements = 4096.0 * 5120;
  const double gp = 4 * elements / (kBf16Gp * kComputeEff);
  const double memory = 2.0 * (2 * elements + 5120) / kMemBw;
  ASSERT_GT(memory, gp);  // 4 GP ops per 4 bytes moved: HBM is the bound
  EXPECT_DOUBLE_EQ(*EstimateSeconds(*norm, TestDevice()), memory + kStaticGp);
}

TEST(PerfModelTest, ViewsCostNothing) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({128, 5120}));
  Node* view = g.Call(OpKind::kView, {x, IntList{1, 128, 5120}});
  EXPECT_EQ(*EstimateSeconds(*view, TestDevice()), 0.0);
}

TEST(PerfModelTest, CollectivesUseTheCheaperOfRingAndTree) {
  const DeviceProfile d = TestDevice();
  const double bytes = 128.0 * 5120 * 2;
  // Two ranks inside the full-mesh level: one of its seven links.
  const double mesh = 196e9 * 0.7 / 7;
  const double ring2 = 2 * 1.3e-6 + bytes / mesh;
  EXPECT_DOUBLE_EQ(*CollectiveSeconds(Collective::kAllReduce, bytes, 2, d), ring2);
  EXPECT_DOUBLE_EQ(*CollectiveSeconds(Collective::kReduceScatter, bytes, 2, d), 1.3e-6 + 0.5 * bytes / mesh);
  EXPECT_DOUBLE_EQ(*CollectiveSeconds(Collective::kAllGather, bytes / 2, 2, d), 1.3e-6 + 0.5 * bytes / mesh);
  // Sixteen ranks span the outer switch level, where the tree's fewer latencies win.
  const double outer = 50e9 * 0.7;
  const double ring16 = 2 * 15 * 10e-6 + 2 * 15.0 / 16 * bytes / outer;
  const double tree16 = 2 * 4 * 10e-6 + 2 * bytes / outer;
  ASSERT_LT(tree16, ring16);
  EXPECT_DOUBLE_EQ(*CollectiveSeconds(Collective::kAllReduce, bytes, 16, d), tree16);
  auto too_big = CollectiveSeconds(Collective::kAllReduce, bytes, 4096, d);
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.error().message,
              HasSubstr("a group of 4096 ranks is larger than the interconnect (2048 devices)"));
}

TEST(PerfModelTest, AllReduceNodeIsItsCommTimeWhenThatExceedsMemory) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({128, 5120}));
  Node* ar = g.Call(OpKind::kAllReduce, {x, int64_t{0}, IntList{0, 1}});
  const DeviceProfile d = TestDevice();
  EXPECT_DOUBLE_EQ(*EstimateSeconds(*ar, d), *CollectiveSeconds(Collective::kAllReduce, 128.0 * 5120 * 2, 2, d));
}

TEST(PerfModelTest, GroupedMatmulCountsEveryExpertWeightAndQuantizedPeaks) {
  Graph g;
  Node* x = g.AddPlaceholder("x", {{800, 4096}, DType::kFloat4E2M1});
  Node* w = g.AddGetAttr("w", {{128, 4096, 3072}, DType::kFloat4E2M1});
  Node* ws = g.AddGetAttr("ws", {{128, 128, 3072}, DType::kFloat8E8M0});
  Node* xs = g.AddPlaceholder("xs", {{800, 128}, DType::kFloat8E8M0});
  Node* gmm = g.Call(OpKind::kGroupedMatmulMxfp4,
                     {NodeList{x}, NodeList{w}, NodeList{ws}, NodeList{xs}, NodeList{}, DType::kBFloat16});
  const OpCost c = CostOf(*gmm);
  EXPECT_DOUBLE_EQ(c.mma_ops, 2.0 * 800 * 4096 * 3072);
  EXPECT_EQ(c.mma_dtype, DType::kFloat4E2M1);
  const double bytes = 800.0 * 4096 / 2 + 128.0 * 4096 * 3072 / 2 + 128.0 * 128 * 3072 + 800.0 * 128 + 800.0 * 3072 * 2;
  EXPECT_DOUBLE_EQ(c.bytes, bytes);
  EXPECT_DOUBLE_EQ(*EstimateSeconds(*gmm, TestDevice()), bytes / kMemBw + kStaticMma);
}

TEST(PerfModelTest, MissingDTypePeakListsTheProfilesDTypes) {
  DeviceProfile d = TestDevice();
  d.mma_peak.erase(DType::kBFloat16);
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({8, 8}));
  Node* mm = g.Call(OpKind::kMm, {x, x});
  auto t = EstimateSeconds(*mm, d);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.error().message, HasSubstr("no MMA peak for bfloat16 (needed by 'mm', aten.mm.default; the profile "
                                           "has: int8, float4_e2m1fn, float8_e4m3fn, float16, float32)"));
}

}  // namespace
}  // namespace harness::compiler
