#include "harness/ingest/tensorcast_ingest.h"

#include <filesystem>

#include "harness/results/metric_names.h"
#include "harness/stack/tensorcast_table.h"

namespace harness {

Result<FinishedCase> ParseTensorCastFile(const std::string& text, const std::string& origin, const std::string& suite) {
  auto table = ParseTensorCastTable(text, origin);
  if (!table) return table.error();
  FinishedCase c;
  c.suite = suite.empty() ? "tensorcast" : suite;
  c.result.case_id = c.suite + "/" + std::filesystem::path(origin).stem().string();
  c.result.status = CaseStatus::kPass;
  c.result.ops = std::move(table->ops);
  c.result.metrics.push_back({metric_names::kEstTotalSeconds, table->total_seconds});
  // What the reader skipped (an elision row, a cut last row) is said with the result.
  for (const auto& note : table->notes) c.result.message += (c.result.message.empty() ? "" : "\n") + note;
  return c;
}

}  // namespace harness
