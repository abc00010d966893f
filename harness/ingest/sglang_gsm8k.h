// The JSON lines sglang's GSM8K benchmark (benchmark/gsm8k/bench_sglang.py) appends to its
// --result-file: task, backend, latency, accuracy, invalid, output_throughput, num_requests,
// other.num_questions (docs/ingest.md).
#pragma once

#include <string>
#include <vector>

#include "harness/ingest/ingest.h"
#include "harness/util/error.h"

namespace harness {

// One run per non-blank line (each line is one benchmark run), with one case SUITE/TASK
// (SUITE: `suite`, else "sglang"; TASK: the line's task, else "gsm8k"). Metrics: accuracy
// (n = the question count), invalid, latency_s, output_throughput. accuracy is required,
// the rest optional. Every line is checked before any is returned; errors name
// origin:line(:column).
Result<std::vector<ParsedRun>> ParseSglangGsm8k(const std::string& text, const std::string& origin,
                                                const std::string& suite);

// The per-question file bench_sglang.py writes with --raw-result-file (one JSON object per
// line: prompt_id, prompt, output, correct): samples keyed by prompt_id (the question's
// index in GSM8K's test file, as the native suite keys them), outcome correct or wrong,
// the output as completion (cut at kMaxStoredCompletionBytes). prompt_id and correct are
// required; a prompt_id twice is an error naming both lines, and a file without a row an error.
Result<std::vector<Sample>> ParseSglangRawResults(const std::string& text, const std::string& origin);

// The case the raw results are: accuracy = correct / questions answered (n: the rows, what
// ran) and the samples. `samples` is not empty, as ParseSglangRawResults returns them.
void ApplySglangSamples(FinishedCase& c, std::vector<Sample> samples);

// --format sglang-gsm8k-raw: one run of one case SUITE/gsm8k (SUITE: `suite`, else "sglang")
// from a raw results file alone.
Result<FinishedCase> ParseSglangGsm8kRaw(const std::string& text, const std::string& origin, const std::string& suite);

}  // namespace harness
