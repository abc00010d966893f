#include "harness/store/store_rows.h"

#include <fmt/format.h>

#include "harness/util/json_file.h"
#include "harness/util/utf8.h"

namespace harness {

bool IsNightlyRun(const RunRow& run) {
  if (run.partial_questions || run.superseded_by) return false;
  const Json context = ParseJsonOrDiscarded(run.context_json);
  return !context.is_object() || (!context.contains("bisect") && !context.contains("rerun_of"));
}

namespace store_sql {

RunRow RunRowOf(const Stmt& st) {
  constexpr const auto& c = kRunRowColumns;
  RunRow r;
  r.id = st.Int(c["id"]);
  r.sha = st.Text(c["sha"]);
  r.subject = st.Text(c["subject"]);
  r.stack = st.Text(c["stack"]);
  r.config_hash = st.Text(c["config_hash"]);
  r.config_json = st.Text(c["config_json"]);
  r.host = st.Text(c["host"]);
  r.started_at = st.Text(c["started_at"]);
  r.finished_at = st.Text(c["finished_at"]);
  r.status = ParseRunStatus(st.Text(c["status"])).value_or(RunStatus::kError);
  r.shard = st.Text(c["shard"]);
  r.nightly = st.Text(c["nightly"]);
  r.context_json = st.Text(c["context_json"]);
  r.partial_questions = st.OptInt(c["partial_questions"]);
  r.uid = st.Text(c["uid"]);
  r.attempt = st.Int(c["attempt"]);
  r.superseded_by = st.OptInt(c["superseded_by"]);
  return r;
}

GoldenChange GoldenChangeOf(const Stmt& st) {
  constexpr const auto& c = kGoldenChangeColumns;
  return GoldenChange{st.Int(c["id"]),       st.Text(c["case_id"]), st.Text(c["path"]),
                      st.Text(c["old_hash"]), st.Text(c["new_hash"]), st.Text(c["reason"]),
                      st.Text(c["sha"]),      st.Text(c["user"]),     st.Text(c["at"]),
                      st.OptInt(c["from_case_result_id"])};
}

CaseStatus StatusOf(const std::string& word) { return ParseCaseStatus(word).value_or(CaseStatus::kError); }

std::string UnknownOutcome(std::string_view word) {
  return fmt::format("outcome '{}' is not one of {}", TerminalText(Utf8Prefix(word, 64)), SampleOutcomeWords());
}

}  // namespace store_sql
}  // namespace harness
