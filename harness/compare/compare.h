// Comparison of the stored results of two commits (or runs): per case the status change,
// the op-table diff, metric deltas and a verdict on accuracy. `harness compare A B` reads
// B as the new side: "regressed" means B is worse than A.
//
// Accuracy verdicts: when both sides stored per-sample outcomes, the paired exact McNemar
// test (CompareToBaseline, A as the baseline). Otherwise, for every proportion metric
// (n > 0) on both sides, the unpaired check answers one question: do the two Wilson 95%
// intervals overlap? Disjoint intervals say the rates differ; overlapping ones do not prove
// they are the same. Disjoint intervals of `accuracy` (higher is better) with B's below A's
// are a regression; every other unpaired check only informs (whether higher or lower is
// better is not known of other proportions, e.g. error_rate).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/golden/golden_ops.h"
#include "harness/results/results.h"
#include "harness/stats/stats.h"
#include "harness/stats/verdict.h"
#include "harness/store/result_reads.h"
#include "harness/util/error.h"

namespace harness {

// One side as the user named it and what it resolved to.
struct CompareSide {
  std::string spec;          // as given: a sha prefix or run:ID
  std::string sha;           // the full commit sha
  int64_t run_id = 0;        // set for run:ID, else 0 (the newest finished run per case)
};

// A sha prefix (4 to 64 hex digits) or run:ID. An ambiguous prefix names its candidates,
// an unknown commit or run says so; both are usage errors (exit 2).
Result<CompareSide> ResolveSide(CompareReads& store, const std::string& spec);

struct MetricDelta {
  std::string name;
  std::optional<Metric> a, b;  // absent on a side that did not store it
};

// Unpaired check of one proportion metric: the two Wilson 95% intervals and whether they overlap.
struct ProportionCheck {
  std::string name;
  double a = 0, b = 0;
  int64_t n_a = 0, n_b = 0;
  Interval ci_a, ci_b;
  bool overlap = true;
  bool regressed = false;  // accuracy, the intervals disjoint and B's below A's
};

struct CaseComparison {
  std::string case_id;
  std::optional<CaseStatus> a, b;  // absent: the case has no finished result on that side
  int64_t run_a = 0, run_b = 0;
  OpTableDiff ops;
  std::vector<MetricDelta> metrics;  // every metric of either side, sorted by name
  std::optional<BaselineJudgement> paired;
  std::vector<ProportionCheck> unpaired;
  // A passed and B failed or errored, the paired verdict is REGRESSED, or (no samples) an
  // unpaired check regressed.
  bool regressed = false;
};

struct Comparison {
  CompareSide a, b;
  std::vector<CaseComparison> cases;  // sorted by case id
  bool regressed() const;
};

struct CompareFilter {
  std::string suite;      // empty: every suite
  std::string case_glob;  // empty: every case (fnmatch on the case id)
};

// Reads both sides' finished results and compares every case present on either side.
// No case left after the filter is a usage error (nothing was compared).
Result<Comparison> CompareStored(CompareReads& store, const CompareSide& a, const CompareSide& b, const CompareFilter& f);

// The comparison of two loaded cases (the part that needs no database; tested directly).
struct LoadedCase {
  StoredCase stored;
  std::vector<Metric> metrics;
  std::vector<OpRow> ops;
  std::vector<Sample> samples;
};
CaseComparison CompareCase(const std::string& case_id, const std::optional<LoadedCase>& a,
                           const std::optional<LoadedCase>& b);

}  // namespace harness
