// harness prune --db DB [--keep-nightlies N] [--keep-samples-days D] [--dry-run]: drops the
// samples and completion text of runs outside the window and compacts the file
// (store/prune.h). Exit 0 pruned, 2 usage or a run still writing, 3 a database error.
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/numeric_option.h"
#include "harness/run/run_lock.h"
#include "harness/store/prune.h"

namespace harness {
namespace {

struct PruneOptions {
  std::string db = DefaultDbPath();
  std::optional<int64_t> keep_nightlies;
  std::optional<int64_t> keep_samples_days;
  bool dry_run = false;
};

int RunPrune(const PruneOptions& o) {
  std::vector<std::unique_ptr<RunLock>> held;  // released when the prune is done
  const PruneWindow window{o.keep_nightlies, o.keep_samples_days};
  PruneRequest request{o.db, window, o.dry_run, [&](int64_t run_id) -> Status {
                         auto lock = RunLock::Acquire(o.db, run_id);
                         if (!lock) {
                           if (lock.error().code != ExitCode::kUsage) return lock.error();
                           return UsageError(fmt::format(
                               "run {} is still running in another process (it holds {}); harness prune changes "
                               "nothing while a run writes: wait for it to finish",
                               run_id, RunLock::PathFor(o.db, run_id).string()));
                         }
                         held.push_back(std::move(lock).value());
                         return OkStatus();
                       }};
  const PruneResult result = ValueOrThrow(Prune(request));
  std::fputs(PruneSummary(request, result).c_str(), stdout);
  return 0;
}

}  // namespace

CommandMain SetupPrune(CLI::App& app) {
  auto o = std::make_shared<PruneOptions>();
  app.add_option("--db", o->db, "Results database (default $HARNESS_DB or harness.db)");
  AddNumericOption(app, "--keep-nightlies", o->keep_nightlies, WholeIn(0, kMaxKeepNightlies),
                   "Keep the samples of the N newest nightlies of each run identity");
  AddNumericOption(app, "--keep-samples-days", o->keep_samples_days, WholeIn(0, kMaxKeepSamplesDays),
                   "Keep the samples of runs started in the last D days");
  app.add_flag("--dry-run", o->dry_run, "Print what would be dropped; change nothing");
  return [o] { return RunPrune(*o); };
}

}  // namespace harness
