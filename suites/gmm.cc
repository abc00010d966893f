// The gmm suite (regression 2 in golden/regressions.json; docs/compiler.md): on one Qwen3-MoE layer
// the experts' GMM1 + SwiGLU fuse per quant type and GMM2 stays the base grouped matmul;
// for MXFP4 the dynamic quant after the swiglu fuses as well, into
// grouped_matmul_mxfp4_swiglu_quant. Fault gmm-no-mxfp4-quant-fusion (the fusion before
// PR !699) fails _3 only. Fault graph-topo-disorder misplaces the unquantized fused op
// after its consumer; the reference stack's verifier rejects that graph, so
// test_qwen3_fp_0 (BF16, the one unquantized case) fails naming both nodes.
#include "harness/golden/golden_ops.h"
#include "harness/results/metric_names.h"
#include "harness/run/suite.h"
#include "harness/stack/compile_request.h"
#include "harness/util/paths.h"
#include "suites/gmm_check.h"

namespace harness {
namespace {

class Gmm : public SuiteTest {
 protected:
  // Compiles the row's request, records its table and step time, and reports what CheckGmm
  // decides of it against the case's golden expectation.
  void CompileAndCheckCalls() {
    const RunContext& run = Context();
    if (run.stack == nullptr || !run.stack->SupportsCompile())
      GTEST_SKIP() << "gmm needs a stack that compiles; stack '" << run.stack_config.stack << "' does not";
    const CompileRequest request = Need(CompileRequestFromParams(Param()));
    const auto compiled = Compile(request);
    if (!compiled) return;
    Record().SetOps(compiled->ops);
    Record().AddMetric({metric_names::kEstTotalSeconds, compiled->total_seconds});  // the step time history can track
    const auto golden_path = Need(GoldenOpTablePath(GoldenDir(), GetParam().CaseId()));
    const GoldenOpTable golden = Need(LoadGoldenOpTable(golden_path));
    Report(CheckGmm(*compiled, golden, golden_path.string()));
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
