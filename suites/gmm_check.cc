#include "suites/gmm_check.h"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace harness {
namespace {

// Calls of every grouped-matmul op in the table, for the failure line.
std::string GroupedMatmuls(const CompileResult& compiled) {
  std::vector<std::string> rows;
  for (const auto& r : compiled.ops)
    if (r.op.find(".grouped_matmul") != std::string::npos) rows.push_back(fmt::format("{} x{}", r.op, r.calls));
  return rows.empty() ? "none" : fmt::format("{}", fmt::join(rows, ", "));
}

}  // namespace

CaseOutcome CheckGmm(const CompileResult& compiled, const GoldenOpTable& golden, const std::string& golden_file) {
  CaseOutcome outcome;
  if (const GoldenCheck check = CheckGolden(golden, compiled.ops); !check.ok())
    outcome.failures.push_back(GoldenCheckMessage(check, golden_file) +
                               "\n(grouped matmuls in the table: " + GroupedMatmuls(compiled) + ")");
  return outcome;
}

}  // namespace harness
