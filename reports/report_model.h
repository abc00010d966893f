// The triage report's model: read from the store in one place, rendered as HTML, text and
// JSON (reports/report_html, report_text, report_json) and summarised in Markdown
// (report_markdown). Its readers triage a red nightly or a flaky threshold: what failed, is it
// real, since when, why (docs/report.md). Each section's part of it, its loader and its
// renderers are in reports/sections/ (docs/architecture.md, "The report's sections"); here the
// frame: the window of commits and runs, the night's verdict, and the list of sections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/night_verdict.h"
#include "harness/results/results.h"
#include "harness/store/bisect_changes.h"
#include "harness/store/nightly_shards.h"
#include "harness/store/store.h"
#include "harness/util/error.h"
#include "reports/sections/bisect.h"
#include "reports/sections/changes.h"
#include "reports/sections/failures.h"
#include "reports/sections/flaky.h"
#include "reports/sections/flips.h"
#include "reports/sections/regressions.h"
#include "reports/sections/summary.h"
#include "reports/sections/trends.h"

namespace harness::reports {

struct ReportQuery {
  int last_n = 30;           // the newest N commits holding a finished run
  std::string since;         // else: this commit (a sha prefix) and every later one
  std::string suite;         // empty: every suite
  std::string case_glob;     // empty: every case (fnmatch on the case id)
};

// Bounds that keep a year of nightlies a report one can open (docs/report.md); each section
// has its own beside its part of the model.
inline constexpr std::size_t kMaxSubjectBytes = 200;      // of each commit subject (its first line)

struct ReportCommit {
  std::string sha;
  std::string subject;
  std::optional<int64_t> ordinal;
};

struct ReportModel {
  ReportQuery query;
  // The night's verdict over the summary's runs and the shards they lack: the same function
  // and line as harness run's stdout, exit code and JUnit (harness/results/night_verdict.h).
  NightSummary night;
  std::vector<ChangeEntry> changes;   // new failures, paired regressions, fixes; by kind, case id
  std::vector<ReportCommit> commits;  // the window, first-parent order
  int64_t runs = 0;
  std::vector<SuiteSummary> summary;  // by suite name
  // The nightlies the summary shows that lack shards (a lost CI job): their counts are of
  // part of the cases. Judged over every run of the nightly, whatever the filters.
  std::vector<NightlyGap> incomplete_nightlies;
  std::vector<FailureEntry> failures;         // shown in full, by case id
  std::vector<ListedFailure> failures_listed; // the other failing cases, by case id
  std::vector<Trend> trends;
  std::vector<FlakyEntry> flaky;      // most likely false verdict first
  std::vector<FlipSet> flips;
  std::vector<ReportSession> bisect;
  // By bisect session id, the sessions of bisect that named several culprits: every one,
  // subjects cut at kMaxSubjectBytes. A one-culprit session is not here (its row says it).
  std::map<int64_t, std::vector<BisectChange>> session_culprits;
  // What the store held that could not be read (a session's malformed list of culprits: that
  // session shows its first culprit only; a stored word outside its table: ReportSession,
  // CulpritNote). harness report prints them to stderr.
  std::vector<std::string> warnings;
  // The regressions bisect --auto found in the window's latest runs: "N regressions, K with
  // a culprit".
  std::vector<RegressionEntry> regressions;
  std::size_t RegressionsWithCulprit() const;
};

// A usage error (exit 2) when the database holds no finished run, --since names no commit
// with a finished run (or an ambiguous prefix), or the filters leave no case.
Result<ReportModel> BuildReport(ReadOnlyStore& store, const ReportQuery& q);

// A case is AT-RISK when it stored gate_verdict AT-RISK (it passed unless fail_at_risk).
bool IsAtRisk(const std::vector<Metric>& metrics);

// A message's headline: its text up to the first newline.
std::string FirstLine(const std::string& s);

}  // namespace harness::reports
