// The night's verdict: the one word every output of a nightly states (stdout's last line,
// the exit code, JUnit, the Markdown headline, the HTML banner; docs/report.md, "The night
// verdict"). Computed here, once, from the night's cases and the shards it lacks.
//
//   INCOMPLETE  a case could not run (error, or never finished), a shard of the nightly is
//               missing, or the results could not be stored: part of the night is no
//               evidence (exit 3);
//   FAIL        else, a case failed its own check (a gate, a tolerance, a test; exit 1);
//   REGRESSED   else, the only failures are paired regressions: a case that meets its gate
//               but lost significantly against its baseline, question by question (exit 1);
//   PASS        every case ran and passed or was skipped (exit 0). An AT-RISK gate is an
//               annotation on a passing case, counted beside the passes, never against them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/results/results.h"

namespace harness {

enum class NightVerdict { kPass, kFail, kRegressed, kIncomplete };
// PASS, FAIL, REGRESSED, INCOMPLETE.
std::string_view Word(NightVerdict v);

// Counts of the night's cases. pass includes the at_risk ones; fail excludes the regressed.
struct NightCounts {
  int pass = 0, at_risk = 0, fail = 0, regressed = 0, error = 0, skip = 0;
  int64_t missing_shards = 0;   // shards of the nightly with no finished run
  bool not_stored = false;      // the run could not store its results (the store failed)
  void Add(const CaseResult& c) { Add(c.status, c.metrics); }
  void Add(CaseStatus status, const std::vector<Metric>& metrics);
  NightCounts& operator+=(const NightCounts& o);
};

// A failing case whose only failure is its paired comparison: it stored baseline_verdict
// REGRESSED and a gate verdict other than FAIL (a paired GSM8K drop still above the gate).
bool IsPairedRegressionOnly(CaseStatus status, const std::vector<Metric>& metrics);
// The case's gate verdict is AT-RISK (an annotation; the case passes unless fail_at_risk).
bool HasAtRiskGate(const std::vector<Metric>& metrics);

struct NightSummary {
  NightVerdict verdict = NightVerdict::kPass;
  NightCounts counts;
  int ExitCode() const;          // 0 PASS, 1 FAIL or REGRESSED, 3 INCOMPLETE
  // "harness nightly: PASS - 13 passed (2 AT-RISK), 0 failed, 0 regressed, 0 errors,
  // 0 skipped": the line every output states, word for word.
  std::string Line() const;
};

NightSummary JudgeNight(const NightCounts& counts);
NightSummary JudgeNight(const std::vector<CaseResult>& cases, int64_t missing_shards = 0);

}  // namespace harness
