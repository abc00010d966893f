#include "harness/ingest/sglang_gsm8k.h"

#include <map>

#include <fmt/format.h>

#include "harness/results/metric_names.h"
#include "harness/util/json_file.h"
#include "harness/util/utf8.h"

namespace harness {

Result<std::vector<ParsedRun>> ParseSglangGsm8k(const std::string& text, const std::string& origin,
                                                const std::string& suite_override) {
  const std::string suite = suite_override.empty() ? "sglang" : suite_override;
  std::vector<ParsedRun> runs;
  auto read = ForEachJsonObjectLine(text, origin, [&](const JsonObject& o, const std::string& row, int line) -> Status {
    const std::string where = fmt::format("{}:{}", origin, line);
    auto accuracy = o.Number("accuracy");
    if (!accuracy) return accuracy.error();
    if (*accuracy < 0 || *accuracy > 1) return o.FieldError("accuracy", fmt::format("{} is not within [0, 1]", *accuracy));
    auto task = o.String("task", "gsm8k");
    if (!task) return task.error();
    if (task->empty()) return o.FieldError("task", "must not be empty (it names the case)");
    auto backend = o.String("backend", "");
    if (!backend) return backend.error();
    // The question count: other.num_questions (bench_sglang), else num_questions, else
    // num_requests: the first above 0. A negative one read on the way is refused by its name.
    int64_t n = 0;
    if (o.Has("other")) {
      auto other = o.Object("other");
      if (!other) return other.error();
      auto q = other->Int("num_questions", 0);
      if (!q) return q.error();
      if (*q < 0) return other->FieldError("num_questions", "is negative");
      n = *q;
    }
    for (const char* key : {"num_questions", "num_requests"}) {
      if (n > 0) break;
      auto q = o.Int(key, 0);
      if (!q) return q.error();
      if (*q < 0) return o.FieldError(key, "is negative");
      n = *q;
    }
    FinishedCase c;
    c.suite = suite;
    c.result.case_id = suite + "/" + *task;
    c.result.status = CaseStatus::kPass;
    c.result.message = backend->empty() ? "" : "backend " + *backend;
    c.result.metrics.push_back({metric_names::kAccuracy, *accuracy, n});
    for (auto [key, metric] : {std::pair{"invalid", metric_names::kSglangInvalid},
                               {"latency", metric_names::kSglangLatencySeconds},
                               {"output_throughput", metric_names::kSglangOutputThroughput}}) {
      if (!o.Has(key)) continue;
      auto v = o.Number(key);
      if (!v) return v.error();
      if (*v < 0) return o.FieldError(key, fmt::format("{} is negative", *v));  // a rate, seconds, tokens/s
      c.result.metrics.push_back({metric, *v, std::string(key) == "invalid" ? n : 0});
    }
    if (auto latency = o.Number("latency", 0); latency) c.result.duration_s = *latency;
    // The line number is part of the identity: the file only grows, so re-reading it
    // after another run appended a line stores that line alone.
    runs.push_back(ParsedRun{where, fmt::format("line {}: {}", line, row), {std::move(c)}});
    return OkStatus();
  });
  if (!read) return read.error();
  return runs;
}

Result<std::vector<Sample>> ParseSglangRawResults(const std::string& text, const std::string& origin) {
  std::vector<Sample> out;
  std::map<std::string, int> seen;  // prompt id -> line
  auto read = ForEachJsonObjectLine(text, origin, [&](const JsonObject& o, const std::string&, int line) -> Status {
    const std::string where = fmt::format("{}:{}", origin, line);
    auto id = o.Int("prompt_id");
    if (!id) return id.error();
    if (*id < 0) return o.FieldError("prompt_id", "is negative");
    auto correct = o.Bool("correct");
    if (!correct) return correct.error();
    auto output = o.String("output", "");
    if (!output) return output.error();
    Sample s;
    s.key = std::to_string(*id);
    if (auto [it, fresh] = seen.emplace(s.key, line); !fresh)
      return UsageError(fmt::format("{}: prompt_id {} already given on line {}", where, s.key, it->second));
    s.outcome = *correct ? SampleOutcome::kCorrect : SampleOutcome::kWrong;
    s.completion = std::string(Utf8Prefix(*output, kMaxStoredCompletionBytes));
    out.push_back(std::move(s));
    return OkStatus();
  });
  if (!read) return read.error();
  // A run that ended before its first answer writes no row: that is no accuracy of 0 of 0.
  if (out.empty()) return UsageError(fmt::format("{}: no raw result in it: the run answered no question", origin));
  return out;
}

void ApplySglangSamples(FinishedCase& c, std::vector<Sample> samples) {
  int64_t correct = 0;
  for (const auto& s : samples) correct += s.outcome == SampleOutcome::kCorrect;
  const auto n = static_cast<int64_t>(samples.size());
  const double accuracy = static_cast<double>(correct) / static_cast<double>(n);  // n > 0: see the header
  bool replaced = false;
  for (auto& m : c.result.metrics) {
    if (m.name == metric_names::kSglangInvalid) m.n = n;  // a rate over the questions that ran
    if (m.name == metric_names::kAccuracy) {
      // The line rounds to three digits and counts what was asked; the rows are what ran.
      if (m.value != accuracy || m.n != n)
        c.result.message += fmt::format("{}the result line said accuracy {} of {}; the raw results: {} of {}",
                                        c.result.message.empty() ? "" : "; ", m.value, m.n, correct, n);
      m.value = accuracy;
      m.n = n;
      replaced = true;
    }
  }
  if (!replaced) c.result.metrics.push_back({metric_names::kAccuracy, accuracy, n});
  c.samples = std::move(samples);
}

Result<FinishedCase> ParseSglangGsm8kRaw(const std::string& text, const std::string& origin,
                                         const std::string& suite_override) {
  auto samples = ParseSglangRawResults(text, origin);
  if (!samples) return samples.error();
  FinishedCase c;
  c.suite = suite_override.empty() ? "sglang" : suite_override;
  c.result.case_id = c.suite + "/gsm8k";
  c.result.status = CaseStatus::kPass;
  ApplySglangSamples(c, std::move(*samples));
  return c;
}

}  // namespace harness
