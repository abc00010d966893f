// CheckGmm called directly: a table that meets its golden expectation passes; one that does
// not fails with the golden difference and the table's grouped matmuls ("none" when it has
// none), as the MXFP4 case does under its catalogued fault through the reference compiler.
#include "suites/gmm_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

GoldenOpTable ExpectsCalls(std::vector<ExpectedCalls> calls) {
  GoldenOpTable g;
  g.kind = GoldenOpTable::Kind::kCalls;
  g.calls = std::move(calls);
  return g;
}

CompileResult GmmTable(std::vector<OpRow> ops) {
  CompileResult c;
  c.ops = std::move(ops);
  return c;
}

TEST(CheckGmm, ATableWithTheExpectedCallsPasses) {
  const CaseOutcome outcome = CheckGmm(GmmTable({{"tensor_cast.grouped_matmul_swiglu.default", "[100, 4096]", 1, 1e-4}}),
                                       ExpectsCalls({{"tensor_cast.grouped_matmul_swiglu.default", 1}}), "g.json");
  EXPECT_THAT(outcome.failures, IsEmpty());
  EXPECT_THAT(outcome.metrics, IsEmpty()) << "the body records the table and its time";
}

TEST(CheckGmm, ATableWithoutGroupedMatmulsSaysNone) {
  const CaseOutcome outcome = CheckGmm(GmmTable({{"aten.mm.default", "[100, 4096], [4096, 128]", 1, 1e-5}}),
                                       ExpectsCalls({{"tensor_cast.grouped_matmul_swiglu.default", 1}}), "g.json");
  EXPECT_THAT(outcome.failures,
              ElementsAre("op table differs from its golden expectation: tensor_cast.grouped_matmul_swiglu.default: "
                          "expected 1 call(s), got 0\nexpected by g.json:\ntensor_cast.grouped_matmul_swiglu.default: "
                          "expected 1 call(s), got 0\n(grouped matmuls in the table: none)"));
}

// The catalogued fault gmm-no-mxfp4-quant-fusion through the reference compiler, against
// the case's real golden; without the fault the same case passes.
TEST(CheckGmm, TheCataloguedFaultFailsTheMxfp4CaseNamingItsGroupedMatmuls) {
  const std::string file = "golden/ops/gmm/test_qwen3_dynamic_quant_3.json";
  const GoldenOpTable golden = LoadGoldenOpTable(GoldenDir() / "ops/gmm/test_qwen3_dynamic_quant_3.json").value();
  const CompileRequest request = compiler::testing_util::GmmRequest("MXFP4");
  EXPECT_THAT(CheckGmm(compiler::testing_util::CompileOk(request), golden, file).failures, IsEmpty());
  const CompileResult broken = compiler::testing_util::CompileOk(request, {.gmm_no_mxfp4_quant_fusion = true});
  EXPECT_THAT(CheckGmm(broken, golden, file).failures,
              ElementsAre("op table differs from its golden expectation: "
                          "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default: expected 1 call(s), got 0 (and 1 "
                          "more difference)\nexpected by golden/ops/gmm/test_qwen3_dynamic_quant_3.json:\n"
                          "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default: expected 1 call(s), got 0\n"
                          "tensor_cast.grouped_matmul_mxfp4_swiglu.default: expected 0 call(s), got 1\n"
                          "(grouped matmuls in the table: tensor_cast.grouped_matmul_mxfp4_swiglu.default x1, "
                          "tensor_cast.grouped_matmul_mxfp4.default x1)"));
}

}  // namespace
}  // namespace harness
