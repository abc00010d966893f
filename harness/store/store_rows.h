// What more than one of the store's files reads the same way, for those files (and the
// store's test helpers) only: the columns of a RunRow and of a golden change and their
// readers, and the words of stored statuses and outcomes.
#pragma once

#include <string>
#include <string_view>

#include "harness/results/results.h"
#include "harness/store/golden_log.h"
#include "harness/store/run_row.h"
#include "harness/store/sqlite_db.h"

namespace harness::store_sql {

// Whether run X could be its nightly's (IsNightlyRun without the attempts): no bisect or
// --rerun-at-risk context and not partial. SQL over the alias X, spelled out for r and l below.
#define HARNESS_NIGHTLY_CANDIDATE(X)                                                                   \
  "(" X ".partial_questions IS NULL AND NOT (json_valid(" X ".context_json) AND json_type(" X         \
  ".context_json) = 'object' AND (json_type(" X ".context_json, '$.bisect') IS NOT NULL OR json_type(" X \
  ".context_json, '$.rerun_of') IS NOT NULL)))"
// Another run l of r's shard of r's nightly (same nightly id, commit, identity and shard).
#define HARNESS_SAME_SHARD                                                                              \
  "l.nightly = r.nightly AND l.commit_id = r.commit_id AND l.config_hash = r.config_hash AND l.shard = " \
  "r.shard AND l.id <> r.id AND " HARNESS_NIGHTLY_CANDIDATE("l")
// Attempts of one shard in the order CI made them: start, finish, then uid, so the answer
// does not depend on the order databases were merged in (run ids do).
#define HARNESS_ATTEMPT_KEY(X) "(" X ".started_at, COALESCE(" X ".finished_at, ''), " X ".uid)"

// RunRow::attempt: 1 + the earlier attempts of its shard.
inline constexpr const char* kRunAttemptSql =
    "CASE WHEN r.nightly = '' OR NOT " HARNESS_NIGHTLY_CANDIDATE("r") " THEN 1 ELSE 1 + (SELECT COUNT(*) FROM runs l "
    "WHERE " HARNESS_SAME_SHARD " AND " HARNESS_ATTEMPT_KEY("l") " < " HARNESS_ATTEMPT_KEY("r") ") END";
// RunRow::superseded_by: the latest finished attempt of its shard when that is not r (an
// unfinished r is superseded by any finished attempt, a finished one by a later one).
inline constexpr const char* kRunSupersededBySql =
    "CASE WHEN r.nightly = '' OR NOT " HARNESS_NIGHTLY_CANDIDATE("r") " THEN NULL ELSE (SELECT l.id FROM runs l "
    "WHERE " HARNESS_SAME_SHARD " AND l.status <> 'running' AND (r.status = 'running' OR " HARNESS_ATTEMPT_KEY("l")
    " > " HARNESS_ATTEMPT_KEY("r") ") ORDER BY l.started_at DESC, COALESCE(l.finished_at, '') DESC, l.uid DESC "
    "LIMIT 1) END";
#undef HARNESS_ATTEMPT_KEY
#undef HARNESS_SAME_SHARD
#undef HARNESS_NIGHTLY_CANDIDATE

// The columns of a RunRow (runs r JOIN commits c); a query may select more after them.
inline constexpr ColumnList<17> kRunRowColumns{{{
    {"id", "r.id"},
    {"sha", "c.sha"},
    {"subject", "c.subject"},
    {"stack", "r.stack"},
    {"config_hash", "r.config_hash"},
    {"config_json", "r.config_json"},
    {"host", "r.host"},
    {"started_at", "r.started_at"},
    {"finished_at", "COALESCE(r.finished_at, '')"},
    {"status", "r.status"},
    {"shard", "r.shard"},
    {"nightly", "r.nightly"},
    {"context_json", "r.context_json"},
    {"partial_questions", "r.partial_questions"},
    {"uid", "r.uid"},
    {"attempt", kRunAttemptSql},
    {"superseded_by", kRunSupersededBySql},
}}};

RunRow RunRowOf(const Stmt& st);

// The columns of golden_changes and golden_intents (an intent is a change not yet made).
inline constexpr ColumnList<10> kGoldenChangeColumns{{{
    {"id", "id"},
    {"case_id", "case_id"},
    {"path", "path"},
    {"old_hash", "old_hash"},
    {"new_hash", "new_hash"},
    {"reason", "reason"},
    {"sha", "sha"},
    {"user", "user"},
    {"at", "at"},
    {"from_case_result_id", "from_case_result_id"},
}}};

GoldenChange GoldenChangeOf(const Stmt& st);

// Stored words are written by the store only; an unknown one means a damaged row.
CaseStatus StatusOf(const std::string& word);

// Why a stored sample outcome word is refused, quoting it (escaped, cut to 64 bytes).
std::string UnknownOutcome(std::string_view word);

}  // namespace harness::store_sql
