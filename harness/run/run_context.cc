#include "harness/run/run_context.h"

#include "harness/run/case_record.h"

namespace harness {

RunContext& CurrentRun() {
  static RunContext context;
  return context;
}

Result<CompileResult> CompileForCase(const CompileRequest& request) {
  RunContext& run = CurrentRun();
  if (run.stack == nullptr) return UsageError("no stack: CompileForCase runs inside `harness run`");
  auto result = run.stack->Compile(request);
  if (!result.ok() && result.error().code == ExitCode::kInfra) CurrentCase().SetInfraError(result.error().message);
  return result;
}

}  // namespace harness
