#include "runners/refstack/compiler/perf_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/perf_model.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using testing_util::Bf16;
using testing_util::TestDevice;

TEST(PerfTableTest, InputShapesListTopLevelTensorsOnly) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 64, 5120}));
  Node* w = g.AddGetAttr("w", Bf16({5120}));
  EXPECT_EQ(InputShapes(*g.Call(OpKind::kRmsNorm, {x, w, 1e-6})), "[1, 64, 5120], [5120]");
  Node* rows = g.AddPlaceholder("rows", Bf16({16, 64}));
  Node* experts = g.AddGetAttr("experts", Bf16({4, 64, 32}));
  EXPECT_EQ(InputShapes(*g.Call(OpKind::kGroupedMatmul, {NodeList{rows}, NodeList{experts}, NodeList{}})), "");
}

TEST(PerfTableTest, TimesUseThreeDecimalsInTheLargestFittingUnit) {
  EXPECT_EQ(FormatTime(1.7441739), "1.744s");
  EXPECT_EQ(FormatTime(0.884004), "884.004ms");
  EXPECT_EQ(FormatTime(1.973e-3), "1.973ms");
  EXPECT_EQ(FormatTime(69.4726e-6), "69.473us");
  EXPECT_EQ(FormatTime(2.5e-9), "2.500ns");
  EXPECT_EQ(FormatTime(0), "0.000ns");
}

TEST(PerfTableTest, ReplayedOpsAreCountedPerLayerAndRowsSortByTotal) {
  Graph g;
  Node* x = g.AddPlaceholder("x", Bf16({1, 64, 5120}));
  Node* w = g.AddGetAttr("w", Bf16({5120}));
  Node* outside = g.Call(OpKind::kRmsNorm, {x, w, 1e-6});
  Node* begin = g.Call(OpKind::kRegionBegin, {outside, int64_t{0}});
  Node* inside = g.Call(OpKind::kRmsNorm, {begin, w, 1e-6});
  Node* view = g.Call(OpKind::kView, {inside, IntList{64, 5120}});
  Node* flat = g.Call(OpKind::kView, {view, IntList{1, 64, 5120}});
  Node* end = g.Call(OpKind::kRegionEnd, {flat, int64_t{0}});
  Node* copy1 = g.Call(OpKind::kCopyRegionV2, {end, end, int64_t{0}});
  Node* copy2 = g.Call(OpKind::kCopyRegionV2, {copy1, end, int64_t{0}});
  Node* big = g.Call(OpKind::kMul, {g.AddPlaceholder("big", Bf16({64, 5120, 64})), 2.0});
  g.SetOutput({copy2, big, end});
  const DeviceProfile d = TestDevice();
  auto table = BuildPerfTable(g, d);
  ASSERT_TRUE(table.ok()) << table.error().message;
  const double norm = *EstimateSeconds(*inside, d);
  const double mul = *EstimateSeconds(*big, d);
  ASSERT_GT(mul, 4 * norm);
  // Both norms share op and shapes: one row of 1 + 3 calls. Views: two shapes, zero time.
  ASSERT_EQ(table->rows.size(), 4u);
  EXPECT_EQ(table->rows[0], (harness::OpRow{"aten.mul.Tensor", "[64, 5120, 64]", 1, mul}));
  EXPECT_EQ(table->rows[1], (harness::OpRow{"tensor_cast.rms_norm.default", "[1, 64, 5120], [5120]", 4, 4 * norm}));
  EXPECT_EQ(table->rows[2], (harness::OpRow{"aten.view.default", "[1, 64, 5120]", 3, 0}));
  EXPECT_EQ(table->rows[3], (harness::OpRow{"aten.view.default", "[64, 5120]", 3, 0}));
  EXPECT_DOUBLE_EQ(table->total_seconds, mul + 4 * norm);
  auto by_name = BuildPerfTable(g, d, false);
  ASSERT_EQ(by_name->rows.size(), 3u);
  EXPECT_EQ(by_name->rows[2], (harness::OpRow{"aten.view.default", "", 6, 0}));
}

TEST(PerfTableTest, TextLayoutMatchesMsmodeling) {
  PerfTable t;
  t.rows = {{"tensor_cast.rms_norm.default", "[1, 64, 5120], [5120]", 2, 25e-6},
            {"aten.view.default", "[128, 5120]", 3, 0}};
  t.total_seconds = 25e-6;
  const std::string sep = std::string(28, '-') + "  " + std::string(21, '-') + "  " + std::string(14, '-') + "  " +
                          std::string(12, '-') + "  " + std::string(10, '-') + "\n";
  const std::string expected =
      sep +
      // "Name" centred in 28 (12 + 12), "Input Shapes" in 21 (odd margin 9: 5 left, 4 right).
      std::string(12, ' ') + "Name" + std::string(12, ' ') + "  " + std::string(5, ' ') + "Input Shapes" +
      std::string(4, ' ') + "  analytic total  analytic avg  # of Calls\n" + sep +
      "tensor_cast.rms_norm.default  [1, 64, 5120], [5120]        25.000us      12.500us           2\n"
      "aten.view.default             [128, 5120]                   0.000ns       0.000ns           3\n" +
      sep + "Total time for analytic: 25.000us\n";
  EXPECT_EQ(RenderPerfTableText(t), expected);
  t.grouped_by_input_shapes = false;
  EXPECT_THAT(RenderPerfTableText(t), ::testing::StartsWith("----------------------------  --------------  ---"));
}

TEST(PerfTableTest, JsonCarriesAVersionAndEveryRow) {
  PerfTable t;
  t.device = "TEST_DEVICE";
  t.rows = {{"aten.mm.default", "[128, 5120], [5120, 4096]", 4, 2e-4}};
  t.total_seconds = 2e-4;
  const harness::Json j = RenderPerfTableJson(t);
  EXPECT_EQ(j["format_version"], 1);
  EXPECT_EQ(j["device"], "TEST_DEVICE");
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["input_shapes"], "[128, 5120], [5120, 4096]");
  EXPECT_EQ(j["rows"][0]["calls"], 4);
  EXPECT_DOUBLE_EQ(j["rows"][0]["avg_seconds"].get<double>(), 5e-5);
}

}  // namespace
}  // namespace harness::compiler
