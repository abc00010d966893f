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

}  // namespace harness
