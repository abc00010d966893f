// The sequence_parallel suite (regression 1 in golden/regressions.json; docs/compiler.md): with TP 2
// every all_reduce that feeds an RMSNorm must become reduce_scatter + a norm on the
// local tokens + all_gather. The fault switch sp-counts-bookkeeping-users makes the
// reference stack's pass count region replay's bookkeeping users, which leaves the
// residual all_reduce in place: _0 (repetition on) fails naming
// tensor_cast.all_reduce.default, _1 (repetition off, no bookkeeping users) passes.
#include "harness/golden/golden_ops.h"
#include "harness/results/metric_names.h"
#include "harness/run/suite.h"
#include "harness/stack/compile_request.h"
#include "harness/util/paths.h"
#include "suites/sequence_parallel_check.h"

namespace harness {
namespace {

class SequenceParallel : public SuiteTest {};

// Compiles the row's request, records its table and step time, and reports what
// CheckSequenceParallel decides of it.
TEST_P(SequenceParallel, test_sp_reduces_rms_norm_seq_dim) {
  const RunContext& run = Context();
  if (run.stack == nullptr || !run.stack->SupportsCompile())
    GTEST_SKIP() << "sequence_parallel needs a stack that compiles; stack '" << run.stack_config.stack << "' does not";
  const JsonObject p = Param();
  const CompileRequest request = Need(CompileRequestFromParams(p));
  const LocalNormShape local{Need(p.Int("expected_local_seq")), Need(p.Int("hidden_size"))};

  const auto compiled = Compile(request);
  if (!compiled) return;
  Record().SetOps(compiled->ops);
  Record().AddMetric({metric_names::kEstTotalSeconds, compiled->total_seconds});  // the step time history can track
  const auto golden_path = Need(GoldenOpTablePath(GoldenDir(), GetParam().CaseId()));
  const GoldenOpTable golden = Need(LoadGoldenOpTable(golden_path));
  Report(CheckSequenceParallel(request, local, *compiled, golden, golden_path.string()));
}

HARNESS_INSTANTIATE(sequence_parallel, SequenceParallel, test_sp_reduces_rms_norm_seq_dim);

}  // namespace
}  // namespace harness
