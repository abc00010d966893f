#include "harness/golden/golden_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/testing/test_util.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

TEST(GoldenOpsTest, DiffNamesMissingUnexpectedAndChangedRows) {
  const std::vector<harness::OpRow> expected = {
      {"a.x.default", "[2]", 1, 0}, {"a.y.default", "", 2, 0}, {"a.z.default", "[4], [4]", 3, 0}};
  const std::vector<harness::OpRow> actual = {{"a.y.default", "", 1, 9.0},
                                              {"a.y.default", "", 1, 9.0},
                                              {"a.z.default", "[4], [4]", 1, 0},
                                              {"a.w.default", "[1]", 5, 0}};
  EXPECT_THAT(
      DiffOpTables(expected, actual),
      ::testing::ElementsAre("missing: a.x.default [2] x1", "calls differ: a.z.default [4], [4]: expected 3, got 1",
                             "unexpected: a.w.default [1] x5"));
  EXPECT_THAT(DiffOpTables(expected, expected), ::testing::IsEmpty());
  const harness::Json j = GoldenOpTableJson("s/t_0", actual);
  EXPECT_EQ(j["format_version"], kGoldenOpsFormat);
  ASSERT_EQ(j["ops"].size(), 3u);  // a.y merged into one row of 2 calls
  EXPECT_EQ(j["ops"][1]["op"], "a.y.default");
  EXPECT_EQ(j["ops"][1]["calls"], 2);
}

TEST(GoldenOpsTest, StructuredDiffListsAddedRemovedChangedRows) {
  const std::vector<harness::OpRow> before = {
      {"a.x.default", "[2]", 1, 0}, {"a.y.default", "", 2, 0}, {"a.z.default", "[4]", 3, 0}};
  const std::vector<harness::OpRow> after = {{"a.y.default", "", 2, 5.0}, {"a.z.default", "[4]", 1, 0}};
  const OpTableDiff d = DiffOpTableRows(before, after);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].op, "a.x.default");
  EXPECT_EQ(d.removed[0].calls_before, 1);
  EXPECT_TRUE(d.added.empty());
  ASSERT_EQ(d.changed.size(), 1u);
  EXPECT_EQ(d.changed[0].calls_before, 3);
  EXPECT_EQ(d.changed[0].calls_after, 1);
  EXPECT_TRUE(d.stale.empty()) << "a.x vanished but nothing replaced it";
  EXPECT_TRUE(DiffOpTableRows(before, before).empty());
}

TEST(GoldenOpsTest, StaleHintWhenAnOpIsReplacedByOneExtendingItsNameWithTheSameCalls) {
  const std::vector<harness::OpRow> before = {{"tensor_cast.grouped_matmul_mxfp4_swiglu.default", "[8, 64]", 2, 0},
                                              {"aten.mm.default", "[2]", 1, 0}};
  const std::vector<harness::OpRow> after = {{"tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default", "[8, 64]", 2, 0},
                                             {"aten.mm.default", "[2]", 1, 0}};
  const OpTableDiff d = DiffOpTableRows(before, after);
  ASSERT_EQ(d.stale.size(), 1u);
  EXPECT_EQ(StaleHintText(d.stale[0]),
            "expectation may be stale: tensor_cast.grouped_matmul_mxfp4_swiglu.default → "
            "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default");
  EXPECT_TRUE(DiffOpTableRows(after, before).stale.empty()) << "a shorter name does not start with the old stem";
  auto other_calls = after;
  other_calls[0].calls = 3;
  EXPECT_TRUE(DiffOpTableRows(before, other_calls).stale.empty()) << "different calls: not the same work";
  auto unrelated = after;
  unrelated[0].op = "tensor_cast.rms_norm.default";
  EXPECT_TRUE(DiffOpTableRows(before, unrelated).stale.empty()) << "another name: not a rename";
  auto still_there = after;
  still_there.push_back({"tensor_cast.grouped_matmul_mxfp4_swiglu.default", "[1, 64]", 1, 0});
  EXPECT_TRUE(DiffOpTableRows(before, still_there).stale.empty()) << "the old op did not vanish";
}

// The seed's case B: the expectation named the MXFP4 GMM SwiGLU op; the fused op with the
// quant tail replaced it. A calls list reports the difference and the stale hint, and
// accepting the actual table adds the new op after the one it replaces.
TEST(GoldenOpsTest, CallsExpectationHintsAtTheStaleFusedOpAndAcceptRewritesIt) {
  GoldenOpTable expected;
  expected.case_id = "gmm/test_qwen3_dynamic_quant_3";
  expected.kind = GoldenOpTable::Kind::kCalls;
  expected.note = "why";
  expected.calls = {{"tensor_cast.grouped_matmul_mxfp4_swiglu.default", 1}, {"tensor_cast.grouped_matmul_mxfp4.default", 1}};
  const std::vector<OpRow> actual = {{"tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default", "", 1, 0.5},
                                     {"tensor_cast.grouped_matmul_mxfp4.default", "", 1, 0.5},
                                     {"aten.mm.default", "[1, 2]", 1, 0},
                                     {"aten.mm.default", "[3, 2]", 2, 0}};
  const GoldenCheck check = CheckGolden(expected, actual);
  EXPECT_FALSE(check.ok());
  EXPECT_THAT(check.Lines(),
              ::testing::ElementsAre("tensor_cast.grouped_matmul_mxfp4_swiglu.default: expected 1 call(s), got 0",
                                     "expectation may be stale: tensor_cast.grouped_matmul_mxfp4_swiglu.default → "
                                     "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default"));
  const GoldenOpTable accepted = AcceptActual(expected, actual);
  ASSERT_EQ(accepted.calls.size(), 3u);
  EXPECT_EQ(accepted.calls[0].calls, 0);
  EXPECT_EQ(accepted.calls[1].op, "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default");
  EXPECT_EQ(accepted.calls[1].calls, 1);
  EXPECT_EQ(accepted.note, "why");
  EXPECT_TRUE(CheckGolden(accepted, actual).ok());
  // The stack regressed instead (the fused op is gone, the old one back): no hint, the
  // named fused op is what is missing.
  const std::vector<OpRow> regressed = {{"tensor_cast.grouped_matmul_mxfp4_swiglu.default", "", 1, 0},
                                        {"tensor_cast.grouped_matmul_mxfp4.default", "", 1, 0}};
  const GoldenCheck back = CheckGolden(accepted, regressed);
  EXPECT_TRUE(back.stale.empty());
  EXPECT_THAT(back.differences,
              ::testing::ElementsAre("tensor_cast.grouped_matmul_mxfp4_swiglu.default: expected 0 call(s), got 1",
                                     "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default: expected 1 call(s), got 0"));
  // Counts sum over shapes: aten.mm named with 3 calls is met by the two rows above.
  GoldenOpTable mm = expected;
  mm.calls = {{"aten.mm.default", 3}};
  EXPECT_TRUE(CheckGolden(mm, actual).ok());
}

TEST(GoldenOpsTest, WholeTableAcceptAndFileRoundTrip) {
  testing_util::TempDir dir;
  const std::vector<OpRow> actual = {{"a.y.default", "[2]", 2, 1.0}, {"a.x.default", "", 1, 0}};
  GoldenOpTable whole;
  whole.case_id = "s/t_0";
  whole.ops = {{"a.x.default", "", 1, 0}};
  EXPECT_THAT(CheckGolden(whole, actual).Lines(), ::testing::ElementsAre("unexpected: a.y.default [2] x2"));
  const GoldenOpTable accepted = AcceptActual(whole, actual);
  EXPECT_TRUE(CheckGolden(accepted, actual).ok());
  testing_util::WriteFile(dir / "t_0.json", DumpJson(GoldenOpTableJson(accepted)));
  auto back = LoadGoldenOpTable(dir / "t_0.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kind, GoldenOpTable::Kind::kWholeTable);
  EXPECT_EQ(back->ops.size(), 2u);
  EXPECT_EQ(*GoldenOpTablePath("g", "gmm/t_3"), std::filesystem::path("g/ops/gmm/t_3.json"));
  EXPECT_EQ(*GoldenOpTablePath("g/./x/..", "gmm/t_3"), std::filesystem::path("g/ops/gmm/t_3.json"));
  for (const char* bad : {"../../../outside", "/abs/target", "gmm/../../x", ""}) {
    auto refused = GoldenOpTablePath("g", bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code, ExitCode::kUsage);
    EXPECT_NE(refused.error().message.find(std::string("'") + bad + "'"), std::string::npos) << refused.error().message;
  }
}

TEST(GoldenOpsTest, MalformedFilesNameTheField) {
  testing_util::TempDir dir;
  auto load = [&](const std::string& text) {
    testing_util::WriteFile(dir / "g.json", text);
    auto r = LoadGoldenOpTable(dir / "g.json");
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(load(R"({"format_version": 2, "case": "c", "calls": [{"op": "x", "calls": 1}]})"), "ok");
  EXPECT_THAT(load(R"({"format_version": 1, "case": "c", "ops": []})"), ::testing::HasSubstr("unsupported version 1"));
  EXPECT_THAT(load(R"({"format_version": 2, "case": "c"})"), ::testing::HasSubstr("give exactly one of"));
  EXPECT_THAT(load(R"({"format_version": 2, "case": "c", "ops": [], "calls": []})"),
              ::testing::HasSubstr("give exactly one of"));
  EXPECT_THAT(load(R"({"format_version": 2, "case": "c", "calls": [{"op": "x", "calls": -1}]})"),
              ::testing::HasSubstr("calls[0].calls: must be 0 (absent) or more"));
  EXPECT_THAT(load(R"({"format_version": 2, "case": "c", "calls": [{"op": "x", "calls": 1}, {"op": "x", "calls": 2}]})"),
              ::testing::HasSubstr("calls[1].op: x is named twice"));
  EXPECT_THAT(load(R"({"format_version": 2, "case": "c", "ops": [{"op": "x", "input_shapes": "", "calls": 0}]})"),
              ::testing::HasSubstr("ops[0].calls: must be at least 1"));
  EXPECT_THAT(load(R"({"format_version": 2, "case": "c", "cals": []})"), ::testing::HasSubstr("cals"));
}

}  // namespace
}  // namespace harness
