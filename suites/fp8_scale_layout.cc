// The fp8_scale_layout suite: the layout contract between the fused RMSNorm + FP8
// group-quant producer and the block-scaled FP8 GEMM (regression 3 in golden/regressions.json;
// docs/kernels.md). With transpose_scale=true the kernel writes its scales column-major
// but returns row-major-looking metadata; the producer repairs that with a zero-copy
// strided view. The fault switch fp8-scale-unrepaired skips the repair: the M=64 cases
// fail naming the strides, the M=1 cases pass because at one row the layouts coincide.
#include "harness/run/suite.h"
#include "suites/fp8_scale_layout_check.h"

namespace harness {
namespace {

class Fp8ScaleLayout : public SuiteTest {};

// Runs the row through the reference kernels and reports what CheckScaleLayout decides of
// it, with the metrics of the producer's path.
TEST_P(Fp8ScaleLayout, test_transposed_scale_matches_bpreshuffle_layout_contract) {
  const RunContext& run = Context();
  if (run.stack == nullptr || !run.stack->RunsReferenceKernels())
    GTEST_SKIP() << "fp8_scale_layout drives the reference stack's kernels directly; stack '" << run.stack_config.stack
                 << "' brings its kernel results in with `harness ingest`";
  const JsonObject p = Param();
  const ScaleLayoutRow row{.m = Need(p.Int("m")),
                           .k = Need(p.Int("k")),
                           .n = Need(p.Int("n")),
                           .group_size = Need(p.Int("group_size")),
                           .eps = static_cast<float>(Need(p.Number("eps"))),
                           .seed = static_cast<uint64_t>(Need(p.Int("seed")))};
  const ScaleLayoutRun kernels_run = RunScaleLayout(row, run.stack_config.HasFault("fp8-scale-unrepaired"));
  Report(CheckScaleLayout(row, kernels_run));
}

HARNESS_INSTANTIATE(fp8_scale_layout, Fp8ScaleLayout, test_transposed_scale_matches_bpreshuffle_layout_contract);

}  // namespace
}  // namespace harness
