// lm-evaluation-harness: the results JSON (results.{task}."metric,filter" with
// "metric_stderr,filter", n-samples) and the per-sample JSONL --log_samples writes
// (doc_id, target, filtered_resps, exact_match), docs/ingest.md.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"

namespace harness {

struct LmEvalSamplesFile {
  std::string text;
  std::string origin;
};

// One case per task, id SUITE/TASK (SUITE: `suite`, else "lm-eval"), status pass (lm-eval
// has no gate). Each numeric "metric,filter" becomes a metric of that name with n from
// n-samples (effective, else original) and value -/+ 1.96 stderr as its interval. Sample
// files attach to the only task, or to the task their name samples_<task>_... names.
Result<std::vector<FinishedCase>> ParseLmEval(const std::string& text, const std::string& origin,
                                              const std::string& suite,
                                              const std::vector<LmEvalSamplesFile>& samples);

// The rows of one per-sample JSONL: key doc_id, outcome correct when exact_match >= 0.5
// else wrong, expected the target, extracted the first filtered response. When rows carry
// a "filter" (one row per document and filter), the strict-match rows are kept when there
// are any, else the first filter's. Errors name origin:line(:column).
Result<std::vector<Sample>> ParseLmEvalSamples(const std::string& text, const std::string& origin);

}  // namespace harness
