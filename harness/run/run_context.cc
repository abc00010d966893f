#include "harness/run/run_context.h"

namespace harness {

BoundRun::BoundRun(RunContext& run, const std::vector<std::shared_ptr<RunSlot>>& slots) {
  for (const auto& slot : slots) {
    before_.emplace_back(slot, slot->run_);
    slot->run_ = &run;
  }
}

BoundRun::~BoundRun() {
  for (auto it = before_.rbegin(); it != before_.rend(); ++it) it->first->run_ = it->second;
}

Result<CompileResult> CompileForCase(RunContext& run, const CompileRequest& request) {
  if (run.stack == nullptr) return UsageError("no stack: CompileForCase runs inside `harness run`");
  auto result = run.stack->Compile(request);
  if (!result.ok() && result.error().code == ExitCode::kInfra) run.record.SetInfraError(result.error().message);
  return result;
}

}  // namespace harness
