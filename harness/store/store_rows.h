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

// The columns of a RunRow (runs r JOIN commits c); a query may select more after them.
inline constexpr ColumnList<14> kRunRowColumns{{{
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
