// lm-evaluation-harness: the results JSON (results.{task}."metric,filter" with
// "metric_stderr,filter", n-samples, groups) and the per-sample rows --log_samples writes
// (doc_id, target, resps, filtered_resps, filter, exact_match or acc), docs/ingest.md.
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

// One case per task (group rows, the tasks `groups` or a non-empty `group_subtasks` list
// names, are skipped), id SUITE/TASK (SUITE: `suite`, else "lm-eval"), status pass (lm-eval
// has no gate). Each numeric "metric,filter" becomes a metric of that name with n from
// n-samples (effective, else original, else the task's sample count) and value -/+ 1.96
// stderr as its interval. One filter per task is read for the accuracy: `filter` when the
// task has it, else the task's only filter (0.3's unfiltered keys, 0.4.0's get-answer);
// a task with several filters and none of that name is an error naming them. Its
// exact_match (else acc) is stored again as `accuracy`, the native GSM8K case's metric, and
// the message names the original. Sample files attach to the only task, or to the task
// their name samples_<task>_... names, and keep that filter's rows.
Result<std::vector<FinishedCase>> ParseLmEval(const std::string& text, const std::string& origin,
                                              const std::string& suite, const std::string& filter,
                                              const std::vector<LmEvalSamplesFile>& samples);

// The rows of one per-sample file (JSON lines, or one JSON list as 0.4.0 wrote): key
// doc_id, outcome correct when exact_match (else acc) >= 0.5 else wrong, expected the
// target, extracted the first filtered response, completion the first raw response (resps,
// cut at kMaxStoredCompletionBytes). Rows carry a "filter" when a task has several (one row
// per document and filter): `filter`'s rows are kept, else the only filter's; several and
// none of that name is an error. Errors name origin:line(:column).
Result<std::vector<Sample>> ParseLmEvalSamples(const std::string& text, const std::string& origin,
                                               const std::string& filter);

}  // namespace harness
