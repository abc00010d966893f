// The gmm suite (regression 2 in golden/regressions.json; docs/compiler.md): on one Qwen3-MoE layer
// the experts' GMM1 + SwiGLU fuse per quant type and GMM2 stays the base grouped matmul;
// for MXFP4 the dynamic quant after the swiglu fuses as well, into
// grouped_matmul_mxfp4_swiglu_quant. Fault gmm-no-mxfp4-quant-fusion (the fusion before
// PR !699) fails _3 only. Fault graph-topo-disorder misplaces the unquantized fused op
// after its consumer; the reference stack's verifier rejects that graph, so
// test_qwen3_fp_0 (BF16, the one unquantized case) fails naming both nodes.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "harness/golden/golden_ops.h"
#include "harness/results/metric_names.h"
#include "harness/run/suite.h"
#include "harness/stack/compile_request.h"
#include "harness/util/paths.h"

namespace harness {
namespace {

// Calls of every grouped-matmul op in the table, for failure messages.
std::string GroupedMatmuls(const CompileResult& result) {
  std::vector<std::string> rows;
  for (const auto& r : result.ops)
    if (r.op.find(".grouped_matmul") != std::string::npos) rows.push_back(fmt::format("{} x{}", r.op, r.calls));
  return rows.empty() ? "none" : fmt::format("{}", fmt::join(rows, ", "));
}

class Gmm : public SuiteTest {
 protected:
  // Compiles the row's request and checks the calls its golden expectation names
  // (golden/ops/gmm/<case>.json, docs/golden.md).
  void CompileAndCheckCalls() {
    const RunContext& run = Context();
    if (run.stack == nullptr || !run.stack->SupportsCompile())
      GTEST_SKIP() << "gmm needs a stack that compiles; stack '" << run.stack_config.stack << "' does not";
    const JsonObject p = Param();
    const CompileRequest request = Need(CompileRequestFromParams(p));
    const auto result = Compile(request);
    if (!result) return;
    Record().SetOps(result->ops);
    // The step time history can track.
    Record().AddMetric({metric_names::kEstTotalSeconds, result->total_seconds});
    const auto golden_path = Need(GoldenOpTablePath(GoldenDir(), GetParam().CaseId()));
    const GoldenOpTable golden = Need(LoadGoldenOpTable(golden_path));
    const GoldenCheck check = CheckGolden(golden, result->ops);
    EXPECT_TRUE(check.ok()) << GoldenCheckMessage(check, golden_path.string())
                            << "\n(grouped matmuls in the table: " << GroupedMatmuls(*result) << ")";
  }
};

class GmmFp : public Gmm {};
class GmmDynamicQuant : public Gmm {};

TEST_P(GmmFp, test_qwen3_fp) { CompileAndCheckCalls(); }
TEST_P(GmmDynamicQuant, test_qwen3_dynamic_quant) { CompileAndCheckCalls(); }

HARNESS_INSTANTIATE(gmm, GmmFp, test_qwen3_fp);
HARNESS_INSTANTIATE(gmm, GmmDynamicQuant, test_qwen3_dynamic_quant);

}  // namespace
}  // namespace harness
