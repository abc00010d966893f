#include "harness/ingest/lm_eval.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/ingest/ingest.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

std::string AsText(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The task a samples file belongs to: the only one, else the longest task its file name
// (samples_<task>_<timestamp>.jsonl) starts with.
Result<std::string> TaskOf(const std::string& origin, const std::vector<std::string>& tasks) {
  if (tasks.size() == 1) return tasks.front();
  const std::string name = std::filesystem::path(origin).filename().string();
  std::string best;
  for (const auto& t : tasks)
    if (name.rfind("samples_" + t + "_", 0) == 0 && t.size() > best.size()) best = t;
  if (best.empty())
    return UsageError(fmt::format("{}: cannot tell which task these samples belong to: the results hold {} tasks and "
                                  "the file name is not samples_<task>_....jsonl",
                                  origin, tasks.size()));
  return best;
}

}  // namespace

Result<std::vector<Sample>> ParseLmEvalSamples(const std::string& text, const std::string& origin) {
  struct Row {
    int line;
    std::string filter;
    Sample sample;
  };
  std::vector<Row> rows;
  const auto lines = SplitLines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int line = static_cast<int>(i + 1);
    if (lines[i].find_first_not_of(" \t") == std::string::npos) continue;
    auto json = ParseJsonLine(lines[i], origin, line);
    if (!json) return json.error();
    const std::string where = fmt::format("{}:{}", origin, line);
    JsonObject o(*json, where);
    if (!json->is_object()) return UsageError(where + ": expected a JSON object per line");
    auto doc_id = o.Int("doc_id");
    if (!doc_id) return doc_id.error();
    auto exact = o.Number("exact_match");
    if (!exact) return exact.error();
    auto filter = o.String("filter", "");
    if (!filter) return filter.error();
    Row r{line, *filter, {}};
    r.sample.key = std::to_string(*doc_id);
    r.sample.outcome = *exact >= 0.5 ? "correct" : "wrong";
    if (o.Has("target")) r.sample.expected = AsText(json->at("target"));
    if (o.Has("filtered_resps")) {
      const Json& f = json->at("filtered_resps");
      if (!f.is_array()) return o.FieldError("filtered_resps", "expected a list");
      // One response per request; a generation filter leaves a string, a list for some tasks.
      if (!f.empty()) r.sample.extracted = f[0].is_array() && !f[0].empty() ? AsText(f[0][0]) : AsText(f[0]);
    }
    rows.push_back(std::move(r));
  }
  std::string keep;
  for (const auto& r : rows)
    if (r.filter == "strict-match") keep = r.filter;
  if (keep.empty() && !rows.empty()) keep = rows.front().filter;
  std::vector<Sample> out;
  std::map<std::string, int> seen;
  for (auto& r : rows) {
    if (r.filter != keep) continue;
    if (auto [it, fresh] = seen.emplace(r.sample.key, r.line); !fresh)
      return UsageError(fmt::format("{}:{}: doc_id {} already given on line {}", origin, r.line, r.sample.key, it->second));
    out.push_back(std::move(r.sample));
  }
  return out;
}

Result<std::vector<FinishedCase>> ParseLmEval(const std::string& text, const std::string& origin,
                                              const std::string& suite_override,
                                              const std::vector<LmEvalSamplesFile>& samples) {
  auto json = ParseJson(text, origin);
  if (!json) return json.error();
  if (!json->is_object()) return UsageError(fmt::format("{}: expected a JSON object (lm-eval's results file)", origin));
  JsonObject top(*json, origin);
  auto results = top.Object("results");
  if (!results) return results.error();
  const std::string suite = suite_override.empty() ? "lm-eval" : suite_override;
  std::vector<std::string> tasks;
  std::vector<FinishedCase> cases;
  for (const auto& [task, metrics] : results->json().items()) {
    auto task_obj = results->Object(task);
    if (!task_obj) return task_obj.error();
    if (task.empty()) return results->FieldError(task, "a task name must not be empty (it names the case)");
    int64_t n = 0;
    if (json->contains("n-samples") && (*json)["n-samples"].is_object() && (*json)["n-samples"].contains(task)) {
      JsonObject ns((*json)["n-samples"][task], origin, "n-samples." + task);
      auto effective = ns.Int("effective", 0);
      if (!effective) return effective.error();
      auto original = ns.Int("original", 0);
      if (!original) return original.error();
      n = *effective > 0 ? *effective : *original;
    }
    FinishedCase c;
    c.suite = suite;
    c.result.case_id = suite + "/" + task;
    c.result.status = CaseStatus::kPass;
    for (const auto& [key, value] : metrics.items()) {
      const auto comma = key.find(',');
      const std::string metric = key.substr(0, comma);
      if (metric.size() >= 7 && metric.compare(metric.size() - 7, 7, "_stderr") == 0) continue;
      if (!value.is_number()) continue;  // "alias" and the like
      if (key.empty()) return task_obj->FieldError(key, "a metric name must not be empty");
      Metric m{key, value.get<double>(), n, std::nullopt, std::nullopt, ""};
      const std::string stderr_key =
          metric + "_stderr" + (comma == std::string::npos ? std::string() : key.substr(comma));
      if (metrics.contains(stderr_key) && metrics[stderr_key].is_number()) {
        // A negative stderr, or one so large the bounds overflow, gives no interval.
        const double se = metrics[stderr_key].get<double>();
        const double low = m.value - 1.96 * se, high = m.value + 1.96 * se;
        if (se >= 0 && std::isfinite(low) && std::isfinite(high)) {
          m.low = low;
          m.high = high;
        }
      }
      c.result.metrics.push_back(std::move(m));
    }
    tasks.push_back(task);
    cases.push_back(std::move(c));
  }
  for (const auto& file : samples) {
    if (tasks.empty()) return UsageError(fmt::format("{}: results hold no task for the samples of {}", origin, file.origin));
    auto task = TaskOf(file.origin, tasks);
    if (!task) return task.error();
    auto rows = ParseLmEvalSamples(file.text, file.origin);
    if (!rows) return rows.error();
    for (auto& c : cases)
      if (c.result.case_id == suite + "/" + *task) {
        if (!c.samples.empty())
          return UsageError(fmt::format("{}: task '{}' already has samples from another file", file.origin, *task));
        c.samples = std::move(*rows);
      }
  }
  return cases;
}

}  // namespace harness
