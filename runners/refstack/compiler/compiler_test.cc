#include "runners/refstack/compiler/compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compile_test_util.h"

namespace harness::compiler {
namespace {

using ::testing::HasSubstr;
using testing_util::CompileOk;
using testing_util::Env;
using testing_util::GmmRequest;
using testing_util::SpRequest;

int64_t CallsOf(const harness::CompileResult& r, const std::string& op, const std::string& shapes) {
  for (const auto& row : r.ops)
    if (row.op == op && row.input_shapes == shapes) return row.calls;
  return 0;
}

TEST(CompileModelTest, SequenceParallelRemovesEveryAllReduceWithAndWithoutRepetition) {
  for (bool disable : {false, true}) {
    SCOPED_TRACE(disable ? "repetition off" : "repetition on");
    const auto r = CompileOk(SpRequest(disable));
    EXPECT_EQ(r.Calls("tensor_cast.all_reduce.default"), 0);
    // Embedding (P1), o_proj (P2) and down_proj (P3); gathers after the input norm, the
    // post-attention norm's output 0 and the final norm (the expectation docs/compiler.md
    // derives from msmodeling's sequence-parallel regression test).
    EXPECT_EQ(CallsOf(r, "tensor_cast.reduce_scatter.default", "[1, 128, 5120]"), 1);
    EXPECT_EQ(CallsOf(r, "tensor_cast.reduce_scatter.default", "[128, 5120]"), 2);
    EXPECT_EQ(CallsOf(r, "tensor_cast.all_gather.default", "[1, 64, 5120]"), 3);
    EXPECT_EQ(CallsOf(r, "tensor_cast.rms_norm.default", "[1, 64, 5120], [5120]"), disable ? 1 : 2);
    EXPECT_EQ(CallsOf(r, "tensor_cast.add_rms_norm.default", "[1, 64, 5120], [1, 64, 5120], [5120]"), disable ? 1 : 0);
    EXPECT_THAT(r.table_text, HasSubstr("Total time for analytic: "));
  }
}

TEST(CompileModelTest, BookkeepingFaultReproducesTheNightlyTable) {
  const CompileFaults fault{.sp_counts_bookkeeping_users = true};
  const auto r = CompileOk(SpRequest(false), fault);
  // The rows of the original report: one all_reduce left on the residual path.
  EXPECT_EQ(CallsOf(r, "tensor_cast.reduce_scatter.default", "[1, 128, 5120]"), 1);
  EXPECT_EQ(CallsOf(r, "tensor_cast.reduce_scatter.default", "[128, 5120]"), 1);
  EXPECT_EQ(CallsOf(r, "tensor_cast.all_gather.default", "[1, 64, 5120]"), 3);
  EXPECT_EQ(CallsOf(r, "tensor_cast.all_reduce.default", "[128, 5120]"), 1);
  // Still a local input norm, so only the all_reduce check catches it.
  EXPECT_EQ(CallsOf(r, "tensor_cast.rms_norm.default", "[1, 64, 5120], [5120]"), 1);
  // Repetition off has no bookkeeping users: the same table as without the fault.
  EXPECT_EQ(CompileOk(SpRequest(true), fault).ops, CompileOk(SpRequest(true)).ops);
}

TEST(CompileModelTest, EachQuantTypeCallsItsGroupedMatmulsOnce) {
  const std::map<std::string, std::pair<std::string, std::string>> expect = {
      {"none", {"grouped_matmul", "grouped_matmul_swiglu"}},
      {"w8a8", {"grouped_matmul_quant", "grouped_matmul_quant_swiglu"}},
      {"w4a8", {"grouped_matmul_quant_int4", "grouped_matmul_quant_int4_swiglu"}},
      {"fp8", {"grouped_matmul_fp8", "grouped_matmul_fp8_swiglu"}},
      {"mxfp4", {"grouped_matmul_mxfp4", "grouped_matmul_mxfp4_swiglu_quant"}},
  };
  for (const auto& [quant, ops] : expect) {
    SCOPED_TRACE(quant);
    const auto r = CompileOk(GmmRequest(quant));
    EXPECT_EQ(r.Calls("tensor_cast." + ops.first + ".default"), 1);
    EXPECT_EQ(r.Calls("tensor_cast." + ops.second + ".default"), 1);
    EXPECT_EQ(r.Calls("tensor_cast.swiglu.default"), 0);
    EXPECT_EQ(r.Calls("tensor_cast.moe_gating_top_k_softmax.default"), 1);
  }
  EXPECT_EQ(CompileOk(GmmRequest("mxfp4")).Calls("tensor_cast.grouped_matmul_mxfp4_swiglu.default"), 0);
  EXPECT_EQ(CompileOk(GmmRequest("mxfp4")).Calls("tensor_cast.dynamic_quantize_mxfp4.default"), 3);
}

TEST(CompileModelTest, RepetitionDoesNotChangeTheTotalMuch) {
  // msmodeling's repetition test: Qwen3-32B, 3 layers, total time within 1%.
  harness::CompileRequest r;
  r.model = "Qwen/Qwen3-32B";
  r.num_layers_override = 3;
  r.num_queries = 2;
  r.query_len = 100;
  const double on = CompileOk(r).total_seconds;
  r.disable_repetition = true;
  const double off = CompileOk(r).total_seconds;
  EXPECT_NEAR(on / off, 1.0, 0.01);
  EXPECT_NE(on, off);  // the cross-layer norm fusions differ
}

TEST(CompileModelTest, BadRequestsAreUsageErrorsListingTheKnownValues) {
  auto expect_usage = [](const harness::CompileRequest& r, const std::string& fragment,
                         CompileEnvironment env = Env()) {
    auto compiled = CompileModel(r, env);
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.error().code, harness::ExitCode::kUsage);
    EXPECT_THAT(compiled.error().message, HasSubstr(fragment));
  };
  harness::CompileRequest r = SpRequest(false);
  r.quant = "int2";
  expect_usage(r, "unknown quant type 'int2' (known: none, bf16, w8a8, w4a8, fp8, mxfp4)");
  r = SpRequest(false);
  r.device = "TPU_V9";
  expect_usage(r, "unknown device 'TPU_V9' (known: TEST_DEVICE;");
  r = SpRequest(false);
  r.model = "Qwen/Qwen4";
  expect_usage(r, "unknown model 'Qwen/Qwen4' (known: Qwen/Qwen3-235B-A22B, Qwen/Qwen3-32B;");
  r = SpRequest(false);
  r.word_embedding_tp = "diag";
  expect_usage(r, "unknown word_embedding_tp 'diag' (known: row, col)");
  CompileEnvironment env = Env();
  env.precision = "fp4";
  expect_usage(SpRequest(false), "unknown precision 'fp4' (known: bf16, fp16, fp32)", env);
}

}  // namespace
}  // namespace harness::compiler
