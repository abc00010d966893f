#include "harness/run/run_context.h"

namespace harness {
namespace {

RunContext* installed_run = nullptr;

}  // namespace

ScopedRunContext::ScopedRunContext(RunContext& context) : previous_(installed_run) { installed_run = &context; }

ScopedRunContext::~ScopedRunContext() { installed_run = previous_; }

RunContext* InstalledRunContext() { return installed_run; }

RunContext& CurrentRun() {
  if (installed_run == nullptr) throw FatalError(UsageError("no run context: suite cases run inside `harness run`"));
  return *installed_run;
}

Result<CompileResult> CompileForCase(const CompileRequest& request) {
  RunContext& run = CurrentRun();
  if (run.stack == nullptr) return UsageError("no stack: CompileForCase runs inside `harness run`");
  auto result = run.stack->Compile(request);
  if (!result.ok() && result.error().code == ExitCode::kInfra) run.record.SetInfraError(result.error().message);
  return result;
}

}  // namespace harness
