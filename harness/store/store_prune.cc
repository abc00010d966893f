#include <algorithm>
#include <chrono>
#include <ctime>
#include <tuple>

#include <fmt/format.h>

#include "harness/store/sqlite_db.h"
#include "harness/store/store.h"

// ReadOnlyStore::PlanPrune, Store::PruneSamples and Store::Compact: the SQL of `harness prune` (prune.h drives it).
namespace harness {
namespace {

using store_sql::DbError;
using store_sql::Exec;
using store_sql::ForEachRow;
using store_sql::InTransaction;
using store_sql::Stmt;
using store_sql::StepDone;

// Per run: whether it is in the prune window (see PruneWindow). ?1 keep_nightlies, -1 when
// absent; ?2 the oldest started_at the day window keeps (PruneCutoff), NULL when absent. The
// cutoff is computed in C++ (SQLite's date arithmetic answers NULL past year 9999 or before
// year 0, and a NULL comparison would put every run outside the window).
constexpr const char* kPruneWindowSql = R"sql(
WITH logical AS (
  SELECT id, config_hash, started_at, status,
         CASE WHEN nightly <> '' THEN 'n' || commit_id || '/' || nightly ELSE 'r' || id END AS nightly_key
  FROM runs),
nightlies AS (
  SELECT config_hash, nightly_key, MAX(started_at) AS newest, MAX(id) AS last_id FROM logical
  GROUP BY config_hash, nightly_key),
ranked AS (
  SELECT config_hash, nightly_key,
         ROW_NUMBER() OVER (PARTITION BY config_hash ORDER BY newest DESC, last_id DESC) AS age
  FROM nightlies)
SELECT l.id,
       l.status = 'running'
       OR (?1 >= 0 AND g.age <= ?1)
       OR (?2 IS NOT NULL AND l.started_at >= ?2)
FROM logical l JOIN ranked g ON g.config_hash = l.config_hash AND g.nightly_key = l.nightly_key
ORDER BY l.id)sql";

// The runs the baselines of one in-window run's results with samples come from (?1).
constexpr const char* kBaselineRunsSql = R"sql(
SELECT DISTINCT (
  SELECT b.run_id FROM case_results b JOIN runs br ON br.id = b.run_id JOIN commits bc ON bc.id = br.commit_id
  WHERE b.case_id = k.case_id AND b.params_json = k.params_json AND br.config_hash = kr.config_hash
    AND bc.first_parent_ordinal < kc.first_parent_ordinal AND br.id <> k.run_id AND b.status = 'pass'
    AND br.partial_questions IS NULL
  ORDER BY bc.first_parent_ordinal DESC, b.id DESC LIMIT 1)
FROM case_results k JOIN runs kr ON kr.id = k.run_id JOIN commits kc ON kc.id = kr.commit_id
WHERE k.run_id = ?1 AND kc.first_parent_ordinal IS NOT NULL AND kr.partial_questions IS NULL
  AND EXISTS (SELECT 1 FROM samples s WHERE s.case_result_id = k.id))sql";

// The stored runs split by whether they are in the prune window.
struct RunsByWindow {
  std::vector<int64_t> in_window, outside;
};

// The oldest started_at inside a window of `days` days before now_seconds (UTC, the text
// form runs store), in integer seconds and saturating: a window reaching before year 1 keeps
// every run (the empty string sorts before every started_at), so a longer window never keeps
// fewer runs than a shorter one.
std::string PruneCutoff(int64_t now_seconds, int64_t days) {
  constexpr int64_t kSecondsPerDay = 86400;
  constexpr int64_t kYearOne = -62135596800;  // 0001-01-01T00:00:00Z
  if (days < 0) return "";
  if (days > (now_seconds - kYearOne) / kSecondsPerDay) return "";
  const std::time_t cutoff = static_cast<std::time_t>(now_seconds - days * kSecondsPerDay);
  std::tm tm{};
  if (gmtime_r(&cutoff, &tm) == nullptr) return "";
  char buf[64];
  if (std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return "";
  // Years before 1000 print with fewer digits; padded so text order stays time order.
  std::string text = buf;
  const auto dash = text.find('-');
  if (dash < 4) text.insert(0, 4 - dash, '0');
  return text;
}

Result<RunsByWindow> RunsByPruneWindow(sqlite3* db, const PruneWindow& window) {
  RunsByWindow runs;
  Stmt st(db, kPruneWindowSql);
  st.BindAll(window.keep_nightlies.value_or(-1));
  if (window.keep_samples_days) {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    st.Bind(2, PruneCutoff(now, *window.keep_samples_days));
  }
  auto s = ForEachRow(db, st, "find the runs in the prune window",
                      [&](const Stmt& row) { (row.Int(1) ? runs.in_window : runs.outside).push_back(row.Int(0)); });
  if (!s) return s.error();
  return runs;
}

// run id -> why its samples are kept though it is outside the window: the bisect sessions,
// regressions and golden changes that cite it, and the in-window runs it is the baseline of.
using KeptFor = std::map<int64_t, std::vector<std::string>>;

Result<KeptFor> ReasonsToKeep(sqlite3* db, const std::vector<int64_t>& in_window) {
  KeptFor kept_for;
  // Each query answers (reference id, run id); `word` names the reference.
  auto cite = [&](const std::string& sql, const char* word, std::string_view what) {
    Stmt st(db, sql.c_str());
    return ForEachRow(db, st, what, [&](const Stmt& row) {
      kept_for[row.Int(1)].push_back(fmt::format("{} {}", word, row.Int(0)));
    });
  };
  if (auto s = cite("SELECT DISTINCT session_id, run_id FROM bisect_steps WHERE run_id IS NOT NULL ORDER BY 1, 2",
                    "bisect session", "read bisect steps");
      !s)
    return s.error();
  // a regression bisect --auto found: its nightly and the previous one are its evidence
  if (auto s = cite("SELECT id, run_id FROM regressions UNION ALL SELECT id, baseline_run_id FROM regressions ORDER BY 1, 2",
                    "regression", "read regressions");
      !s)
    return s.error();
  for (const auto& [table, word] : {std::pair<const char*, const char*>{"golden_changes", "golden change"},
                                    {"golden_intents", "golden change under way"}})
    if (auto s = cite(fmt::format("SELECT g.id, cr.run_id FROM {} g JOIN case_results cr ON cr.id = g.from_case_result_id "
                                  "ORDER BY g.id",
                                  table),
                      word, fmt::format("read {}", table));
        !s)
      return s.error();
  Stmt baselines(db, kBaselineRunsSql);
  for (int64_t run : in_window) {
    baselines.Reset();
    auto s = ForEachRow(db, baselines.BindAll(run), "find the baselines of the runs in the prune window",
                        [&](const Stmt& row) {
                          if (!row.IsNull(0)) kept_for[row.Int(0)].push_back(fmt::format("baseline of run {}", run));
                        });
    if (!s) return s.error();
  }
  return kept_for;
}

// The runs outside the window that hold samples, into plan.outside (oldest first); unless
// dry_run, the samples of those nothing keeps are deleted.
Status PlanOutside(sqlite3* db, const std::vector<int64_t>& outside, const KeptFor& kept_for, bool dry_run,
                   PrunePlan& plan) {
  Stmt held(db, R"sql(
SELECT c.sha, r.started_at, r.nightly, COUNT(s.case_result_id), COALESCE(SUM(length(CAST(s.completion AS BLOB))), 0)
FROM runs r JOIN commits c ON c.id = r.commit_id JOIN case_results cr ON cr.run_id = r.id
JOIN samples s ON s.case_result_id = cr.id WHERE r.id = ?1 GROUP BY r.id)sql");
  Stmt drop(db, "DELETE FROM samples WHERE case_result_id IN (SELECT id FROM case_results WHERE run_id = ?1)");
  for (int64_t run : outside) {
    held.Reset();
    held.BindAll(run);
    const int rc = held.Step();
    if (rc == SQLITE_DONE) continue;  // no samples: nothing to drop
    if (rc != SQLITE_ROW) return DbError(db, "count the samples of a run");
    PruneCandidate c{run, held.Text(0), held.Text(1), held.Text(2), held.Int(3), held.Int(4), {}};
    if (auto it = kept_for.find(run); it != kept_for.end()) c.kept_for = it->second;
    if (!dry_run && c.kept_for.empty()) {
      drop.Reset();
      if (auto s = StepDone(db, drop.BindAll(run), "delete the samples of a run"); !s) return s;
    }
    plan.outside.push_back(std::move(c));
  }
  std::sort(plan.outside.begin(), plan.outside.end(), [](const PruneCandidate& a, const PruneCandidate& b) {
    return std::tie(a.started_at, a.run_id) < std::tie(b.started_at, b.run_id);
  });
  return OkStatus();
}

// The plan of `window`; unless dry_run, the samples nothing keeps are deleted too. The caller
// holds the transaction.
Status PlanAndDelete(sqlite3* db, const PruneWindow& window, bool dry_run, PrunePlan& plan) {
  auto runs = RunsByPruneWindow(db, window);
  if (!runs) return runs.error();
  plan.runs = static_cast<int64_t>(runs->in_window.size() + runs->outside.size());
  plan.in_window = static_cast<int64_t>(runs->in_window.size());
  auto kept_for = ReasonsToKeep(db, runs->in_window);
  if (!kept_for) return kept_for.error();
  return PlanOutside(db, runs->outside, *kept_for, dry_run, plan);
}

}  // namespace

Result<PrunePlan> ReadOnlyStore::PlanPrune(const PruneWindow& window) {
  PrunePlan plan;
  // A read transaction: one snapshot, nothing written.
  if (auto s = Exec(db(), "BEGIN", "begin transaction"); !s) return s.error();
  Status s = PlanAndDelete(db(), window, /*dry_run=*/true, plan);
  static_cast<void>(Exec(db(), "ROLLBACK", "rollback"));
  if (!s) return s.error();
  return plan;
}

Result<PrunePlan> Store::PruneSamples(const PruneWindow& window) {
  PrunePlan plan;
  if (auto s = InTransaction(db(), [&] { return PlanAndDelete(db(), window, /*dry_run=*/false, plan); }); !s)
    return s.error();
  return plan;
}

Status Store::Compact() {
  if (auto s = Exec(db(), "VACUUM", "vacuum"); !s) return s;
  Stmt st(db(), "PRAGMA wal_checkpoint(TRUNCATE)");
  if (st.Step() != SQLITE_ROW) return DbError(db(), "checkpoint after vacuum");
  return OkStatus();
}

}  // namespace harness
