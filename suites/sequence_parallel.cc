// The sequence_parallel suite (regression 1 in golden/regressions.json; docs/compiler.md): with TP 2
// every all_reduce that feeds an RMSNorm must become reduce_scatter + a norm on the
// local tokens + all_gather. The fault switch sp-counts-bookkeeping-users makes the
// reference stack's pass count region replay's bookkeeping users, which leaves the
// residual all_reduce in place: _0 (repetition on) fails naming
// tensor_cast.all_reduce.default, _1 (repetition off, no bookkeeping users) passes.
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

std::vector<std::string> RowsOf(const CompileResult& result, std::string_view op) {
  std::vector<std::string> rows;
  for (const auto& r : result.ops)
    if (r.op == op) rows.push_back(fmt::format("{} {} x{}", r.op, r.input_shapes, r.calls));
  return rows;
}

class SequenceParallel : public SuiteTest {};

TEST_P(SequenceParallel, test_sp_reduces_rms_norm_seq_dim) {
  const RunContext& run = Context();
  if (run.stack == nullptr || !run.stack->SupportsCompile())
    GTEST_SKIP() << "sequence_parallel needs a stack that compiles; stack '" << run.stack_config.stack << "' does not";
  const JsonObject p = Param();
  const CompileRequest request = Need(CompileRequestFromParams(p));
  const int64_t local_seq = Need(p.Int("expected_local_seq"));
  const int64_t hidden = Need(p.Int("hidden_size"));

  const auto result = Compile(request);
  if (!result) return;
  Record().SetOps(result->ops);
  Record().AddMetric({metric_names::kEstTotalSeconds, result->total_seconds});  // the step time history can track

  const std::string norm_shapes = fmt::format("[{}, {}, {}], [{}]", request.num_queries, local_seq, hidden, hidden);
  bool local_norm = false;
  for (const auto& r : result->ops)
    local_norm = local_norm || (r.op == "tensor_cast.rms_norm.default" && r.input_shapes == norm_shapes);
  EXPECT_TRUE(local_norm) << "no tensor_cast.rms_norm.default on the local shard (" << norm_shapes << ") in:\n"
                          << result->table_text;
  if (request.tp_size > 1) {
    EXPECT_EQ(result->Calls("tensor_cast.all_reduce.default"), 0)
        << "tensor_cast.all_reduce.default is left in the table: "
        << fmt::format("{}", fmt::join(RowsOf(*result, "tensor_cast.all_reduce.default"), "; "));
    EXPECT_GT(result->Calls("tensor_cast.reduce_scatter.default"), 0) << "no tensor_cast.reduce_scatter.default in:\n"
                                                                      << result->table_text;
    EXPECT_GT(result->Calls("tensor_cast.all_gather.default"), 0) << "no tensor_cast.all_gather.default in:\n"
                                                                  << result->table_text;
  } else {
    EXPECT_EQ(result->Calls("tensor_cast.reduce_scatter.default"), 0) << "TP 1 has no tokens to scatter:\n"
                                                                      << result->table_text;
  }

  const auto golden_path = Need(GoldenOpTablePath(GoldenDir(), GetParam().CaseId()));
  const GoldenOpTable golden = Need(LoadGoldenOpTable(golden_path));
  const GoldenCheck check = CheckGolden(golden, result->ops);
  EXPECT_TRUE(check.ok()) << GoldenCheckMessage(check, golden_path.string());
}

HARNESS_INSTANTIATE(sequence_parallel, SequenceParallel, test_sp_reduces_rms_norm_seq_dim);

}  // namespace
}  // namespace harness
