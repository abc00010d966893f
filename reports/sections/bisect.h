// The bisect sessions stored, newest first: each one's range, status, culprits and steps.
#pragma once

#include <optional>
#include <string>

#include "harness/store/bisect_evidence.h"
#include "harness/store/bisect_record.h"
#include "harness/store/bisect_words.h"
#include "reports/sections/section.h"

namespace harness::reports {

// A stored session's timing (from its result), none for an untimed or unfinished one.
std::optional<BisectTiming> SessionTiming(const BisectSessionRow& session);

// A stored bisect session as the report holds it: its row, the status printed as stored,
// and that status read through its word table once, where the report loads it (none: a word
// outside the table, which the report warns of; such a session names no culprit, and a
// regression it answered is ambiguous).
struct ReportSession : BisectSessionRow {
  std::optional<SessionStatus> read_status;
};

// Reads them after the trends (it marks their culprits) and before the flaky ranking and the
// regressions (their change points and notes).
Status LoadBisect(ReportLoad& load);
void BisectHtml(HtmlPage& page);
// The sessions that bisected into the window.
void BisectMarkdown(MarkdownPage& page);
std::string BisectText(const ReportModel& m);
Json BisectJson(const ReportModel& m);

}  // namespace harness::reports
