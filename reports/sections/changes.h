// What changed since the previous nightly, the report's first section: new failures, paired
// regressions and fixes, each with its finding and its culprit or why it has none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/results/results.h"
#include "reports/sections/regressions.h"
#include "reports/sections/section.h"

namespace harness::reports {

// Changes since the previous nightly shown in full, per kind; the others are listed by id
// (a night that breaks a whole suite still opens fast).
inline constexpr std::size_t kMaxFullChangesPerKind = 100;

// The kinds of change, in the order the report lists them (the model sorts by it).
enum class ChangeKind { kNewFailure, kPairedRegression, kFixed };
// new-failure | paired-regression | fixed: the word the text and JSON print.
std::string_view Word(ChangeKind k);

// What changed since the previous nightly, for a case of the latest runs (the report opens
// with these): a new failure (failing or erroring now, passing or absent in the previous
// nightly of its run identity), a paired regression (its baseline_verdict is REGRESSED
// while its gate holds; it may pass tonight) or a fix (passing now, failing before).
struct ChangeEntry {
  ChangeKind kind = ChangeKind::kNewFailure;
  std::string case_id;
  CaseStatus status = CaseStatus::kFail;
  int64_t run_id = 0;
  std::size_t commit = 0;
  std::optional<std::size_t> before_commit;  // the previous nightly's result of the case
  int64_t before_run = 0;
  CaseStatus before_status = CaseStatus::kPass;
  std::string finding;                    // the first line of its message
  std::optional<CulpritNote> culprit;     // what bisect --auto said of it
  std::string no_culprit;                 // else: why it has none
  std::string suite;                      // case_id's suite, parsed once where the model is loaded
};

// Reads them last: a change carries its failure's culprit.
Status LoadChanges(ReportLoad& load);
void ChangesHtml(HtmlPage& page);
void ChangesMarkdown(MarkdownPage& page);
std::string ChangesText(const ReportModel& m);
Json ChangesJson(const ReportModel& m);

}  // namespace harness::reports
