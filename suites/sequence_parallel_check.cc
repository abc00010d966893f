#include "suites/sequence_parallel_check.h"

#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness {
namespace {

constexpr std::string_view kAllReduce = "tensor_cast.all_reduce.default";
constexpr std::string_view kReduceScatter = "tensor_cast.reduce_scatter.default";
constexpr std::string_view kAllGather = "tensor_cast.all_gather.default";

// "op [shapes] xN" of every row of one op, for the line that names what is left.
std::vector<std::string> RowsOf(const CompileResult& compiled, std::string_view op) {
  std::vector<std::string> rows;
  for (const auto& r : compiled.ops)
    if (r.op == op) rows.push_back(fmt::format("{} {} x{}", r.op, r.input_shapes, r.calls));
  return rows;
}

// The collectives TP needs: none left to all_reduce, both halves of its replacement present;
// at TP 1 nothing is scattered.
void CheckCollectives(int64_t tp_size, const CompileResult& compiled, std::vector<std::string>& failures) {
  if (tp_size <= 1) {
    if (compiled.Calls(kReduceScatter) != 0)
      failures.push_back("TP 1 has no tokens to scatter:\n" + compiled.table_text);
    return;
  }
  if (compiled.Calls(kAllReduce) != 0)
    failures.push_back(
        fmt::format("{} is left in the table: {}", kAllReduce, fmt::join(RowsOf(compiled, kAllReduce), "; ")));
  for (const std::string_view op : {kReduceScatter, kAllGather})
    if (compiled.Calls(op) <= 0) failures.push_back(fmt::format("no {} in:\n{}", op, compiled.table_text));
}

}  // namespace

CaseOutcome CheckSequenceParallel(const CompileRequest& request, const LocalNormShape& local,
                                  const CompileResult& compiled, const GoldenOpTable& golden,
                                  const std::string& golden_file) {
  CaseOutcome outcome;
  const std::string norm_shapes =
      fmt::format("[{}, {}, {}], [{}]", request.num_queries, local.local_seq, local.hidden, local.hidden);
  bool local_norm = false;
  for (const auto& r : compiled.ops)
    local_norm = local_norm || (r.op == "tensor_cast.rms_norm.default" && r.input_shapes == norm_shapes);
  if (!local_norm)
    outcome.failures.push_back(fmt::format("no tensor_cast.rms_norm.default on the local shard ({}) in:\n{}",
                                           norm_shapes, compiled.table_text));
  CheckCollectives(request.tp_size, compiled, outcome.failures);
  if (const GoldenCheck check = CheckGolden(golden, compiled.ops); !check.ok())
    outcome.failures.push_back(GoldenCheckMessage(check, golden_file));
  return outcome;
}

}  // namespace harness
