#include "harness/store/prune.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/file_lock.h"
#include "harness/util/git.h"

namespace harness {
namespace {

int64_t FileBytes(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

// The database and its WAL: what the store takes on disk (the -shm index is rebuilt on open).
int64_t StoreBytes(const std::filesystem::path& db) {
  std::filesystem::path wal = db;
  wal += "-wal";
  return FileBytes(db) + FileBytes(wal);
}

std::string WindowText(const PruneWindow& w) {
  std::vector<std::string> parts;
  if (w.keep_nightlies) parts.push_back(fmt::format("the {} newest nightlies of each identity", *w.keep_nightlies));
  if (w.keep_samples_days) parts.push_back(fmt::format("runs started in the last {} days", *w.keep_samples_days));
  return fmt::format("{}", fmt::join(parts, " and "));
}

}  // namespace

Result<PruneResult> Prune(const PruneRequest& request) {
  const PruneWindow& w = request.window;
  if (!w.keep_nightlies && !w.keep_samples_days)
    return UsageError("prune: name the window to keep: --keep-nightlies N and/or --keep-samples-days D");
  if (w.keep_nightlies && (*w.keep_nightlies < 0 || *w.keep_nightlies > kMaxKeepNightlies))
    return UsageError(fmt::format("prune: --keep-nightlies must be from 0 to {}", kMaxKeepNightlies));
  if (w.keep_samples_days && (*w.keep_samples_days < 0 || *w.keep_samples_days > kMaxKeepSamplesDays))
    return UsageError(fmt::format("prune: --keep-samples-days must be from 0 to {}", kMaxKeepSamplesDays));
  std::error_code ec;
  if (request.db.empty()) return UsageError("--db is empty: name the results database file");
  if (!std::filesystem::exists(request.db, ec))
    return UsageError(fmt::format("{}: no results database there", request.db.string()));
  PruneResult out;
  out.bytes_before = StoreBytes(request.db);
  if (request.dry_run) {
    // Read-only: no lock files, no migration of an older file, nothing written.
    auto store = Store::OpenReadOnly(request.db);
    if (!store) return store.error();
    auto plan = (*store)->PlanPrune(request.window);
    if (!plan) return plan.error();
    out.plan = std::move(plan).value();
    out.bytes_after = out.bytes_before;
    return out;
  }
  // A second prune of the same file would only wait on the first one's transactions; say so.
  std::filesystem::path prune_lock_path = request.db;
  prune_lock_path += ".prune.lock";
  auto prune_lock = FileLock::Acquire(prune_lock_path, FileLock::Wait::kNo);
  if (!prune_lock) return prune_lock.error();
  if (!*prune_lock)
    return UsageError(fmt::format("{}: another harness prune is working on it (it holds {})", request.db.string(),
                                  prune_lock_path.string()));
  auto store = Store::Open(request.db);
  if (!store) return store.error();
  // A run another process still writes keeps its lock; while we hold the lock of every
  // unfinished run, none of them can be resumed under us.
  auto running = (*store)->RunningRunIds();
  if (!running) return running.error();
  for (int64_t run : *running)
    if (auto s = request.claim_unfinished_run(run); !s) return s.error();
  auto plan = (*store)->PruneSamples(request.window);
  if (!plan) return plan.error();
  out.plan = std::move(plan).value();
  if (auto s = (*store)->Compact(); !s) return s.error();
  store->reset();
  out.bytes_after = StoreBytes(request.db);
  return out;
}

std::string PruneSummary(const PruneRequest& request, const PruneResult& result) {
  const PrunePlan& plan = result.plan;
  std::string out = fmt::format("{}: {} runs, {} in the window ({})\n", request.db.string(), plan.runs,
                                plan.in_window, WindowText(request.window));
  int64_t runs = 0, samples = 0, completion = 0;
  for (const PruneCandidate& c : plan.outside) {
    if (!c.kept_for.empty()) {
      out += fmt::format("  keep run {} ({} {}): {} samples, for {}\n", c.run_id, ShortSha(c.sha), c.started_at,
                         c.samples, fmt::join(c.kept_for, ", "));
      continue;
    }
    out += fmt::format("  {} run {} ({} {}{}): {} samples, {} bytes of completion text\n",
                       request.dry_run ? "would drop" : "dropped", c.run_id, ShortSha(c.sha), c.started_at,
                       c.nightly.empty() ? "" : ", nightly " + c.nightly, c.samples, c.completion_bytes);
    ++runs;
    samples += c.samples;
    completion += c.completion_bytes;
  }
  out += fmt::format("{} the samples of {} runs ({} samples, {} bytes of completion text); statuses and metrics kept\n",
                     request.dry_run ? "would drop" : "dropped", runs, samples, completion);
  if (request.dry_run)
    out += fmt::format("bytes: {} (--dry-run: nothing changed)\n", result.bytes_before);
  else
    out += fmt::format("bytes: {} before, {} after\n", result.bytes_before, result.bytes_after);
  return out;
}

}  // namespace harness
