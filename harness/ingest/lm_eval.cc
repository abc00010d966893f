#include "harness/ingest/lm_eval.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/ingest/ingest.h"
#include "harness/results/metric_names.h"
#include "harness/util/json_file.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

std::string AsText(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The first response of a resps/filtered_resps list: one entry per request, itself a list
// of responses for generation tasks.
std::string FirstResponse(const Json& list) {
  if (!list.is_array() || list.empty()) return "";
  return list[0].is_array() ? (list[0].empty() ? "" : AsText(list[0][0])) : AsText(list[0]);
}

// The filter one task is read with: `wanted` when present, else the only one there is;
// none when there are several and none of that name.
std::optional<std::string> ChooseFilter(const std::set<std::string>& filters, const std::string& wanted) {
  if (filters.empty() || filters.count(wanted)) return wanted;
  if (filters.size() == 1) return *filters.begin();
  return std::nullopt;
}

std::string NoSuchFilter(const std::set<std::string>& filters, const std::string& wanted) {
  return fmt::format("no filter '{}' among {}: choose one with --filter-name", wanted, fmt::join(filters, ", "));
}

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

// The tasks that are groups of others: lm-eval lists their aggregate rows under `results`
// too, and a case per group would count its subtasks twice.
std::set<std::string> GroupNames(const Json& top) {
  std::set<std::string> groups;
  if (top.contains("groups") && top["groups"].is_object())
    for (const auto& [name, v] : top["groups"].items()) groups.insert(name);
  if (top.contains("group_subtasks") && top["group_subtasks"].is_object())
    for (const auto& [name, v] : top["group_subtasks"].items())
      if (v.is_array() && !v.empty()) groups.insert(name);
  return groups;
}

// The metric a task's accuracy is: exact_match (gsm8k and other generation tasks), else acc
// (multiple choice, lm-eval 0.3).
constexpr const char* kAccuracySources[] = {"exact_match", "acc"};

// A sample as read, before the filter is chosen.
struct SampleRow {
  std::string where;  // origin:line, or origin: [index] for a JSON list
  std::string filter;
  Sample sample;
};

// The samples file's objects with where each is: 0.4.0 wrote one JSON list; later versions
// one object per line.
Result<std::vector<std::pair<Json, std::string>>> SampleObjects(const std::string& text, const std::string& origin) {
  std::vector<std::pair<Json, std::string>> objects;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    auto json = ParseJson(text, origin);
    if (!json) return json.error();
    for (std::size_t i = 0; i < json->size(); ++i) objects.emplace_back((*json)[i], fmt::format("{}: [{}]", origin, i));
  } else {
    auto read = ForEachJsonObjectLine(text, origin, [&](const JsonObject& o, const std::string&, int line) -> Status {
      objects.emplace_back(o.json(), fmt::format("{}:{}", origin, line));
      return OkStatus();
    });
    if (!read) return read.error();
  }
  return objects;
}

Result<SampleRow> ReadSampleRow(const Json& json, const std::string& where) {
  if (!json.is_object()) return UsageError(where + ": expected a JSON object per sample");
  JsonObject o(json, where);
  auto doc_id = o.Int("doc_id");
  if (!doc_id) return doc_id.error();
  const char* metric = nullptr;
  for (const char* m : kAccuracySources)
    if (!metric && o.Has(m)) metric = m;
  if (!metric) return o.FieldError("exact_match", "missing field (a sample's score: exact_match or acc)");
  auto score = o.Number(metric);
  if (!score) return score.error();
  auto filter = o.String("filter", "");
  if (!filter) return filter.error();
  SampleRow r{where, *filter, {}};
  r.sample.key = std::to_string(*doc_id);
  r.sample.outcome = *score >= 0.5 ? SampleOutcome::kCorrect : SampleOutcome::kWrong;
  if (o.Has("target")) r.sample.expected = AsText(json.at("target"));
  for (const char* list : {"filtered_resps", "resps"})
    if (o.Has(list) && !json.at(list).is_array()) return o.FieldError(list, "expected a list");
  if (o.Has("filtered_resps")) r.sample.extracted = FirstResponse(json.at("filtered_resps"));
  // The model's answer as it wrote it; a file without resps has only the filtered one.
  r.sample.completion = o.Has("resps") ? FirstResponse(json.at("resps")) : r.sample.extracted;
  r.sample.completion.resize(Utf8Prefix(r.sample.completion, kMaxStoredCompletionBytes).size());
  return r;
}

// How many documents a task ran, from `n-samples` (effective, else original); 0 when the
// file does not say.
Result<int64_t> TaskSampleCount(const Json& top, const std::string& task, const std::string& origin) {
  if (!(top.contains("n-samples") && top["n-samples"].is_object() && top["n-samples"].contains(task))) return 0;
  JsonObject ns(top["n-samples"][task], origin, "n-samples." + task);
  auto effective = ns.Int("effective", 0);
  if (!effective) return effective.error();
  auto original = ns.Int("original", 0);
  if (!original) return original.error();
  return *effective > 0 ? *effective : *original;
}

// A task's metrics, each with the 95% interval its "_stderr" companion gives, and the
// filters they were read with ("" for a metric without one).
struct TaskMetrics {
  std::vector<Metric> metrics;
  std::set<std::string> filters;
};

Result<TaskMetrics> ReadTaskMetrics(const Json& metrics, const JsonObject& task_obj, int64_t n) {
  TaskMetrics out;
  for (const auto& [key, value] : metrics.items()) {
    const auto comma = key.find(',');
    const std::string metric = key.substr(0, comma);
    if (metric.size() >= 7 && metric.compare(metric.size() - 7, 7, "_stderr") == 0) continue;
    if (!value.is_number()) continue;  // "alias" and the like
    if (key.empty()) return task_obj.FieldError(key, "a metric name must not be empty");
    if (comma != std::string::npos) out.filters.insert(key.substr(comma + 1));
    else out.filters.insert("");
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
    out.metrics.push_back(std::move(m));
  }
  return out;
}

// Adds the accuracy metric, a copy of the first of kAccuracySources read with filter; the
// key it copied, or "" when the task has none of them.
std::string AddAccuracy(std::vector<Metric>& metrics, const std::string& filter) {
  std::string accuracy_key;
  for (const char* source : kAccuracySources) {
    const std::string key = filter.empty() ? source : std::string(source) + "," + filter;
    for (const auto& m : metrics)
      if (accuracy_key.empty() && m.name == key) {
        accuracy_key = key;
        Metric a = m;
        a.name = metric_names::kAccuracy;
        metrics.push_back(std::move(a));
        break;
      }
  }
  return accuracy_key;
}

// One task of the results (task_obj, its metrics) as a passed case.
Result<FinishedCase> ReadTask(const Json& top, const JsonObject& results, const std::string& task,
                              const JsonObject& task_obj, const std::string& suite, const std::string& wanted_filter,
                              const std::string& origin) {
  auto n = TaskSampleCount(top, task, origin);
  if (!n) return n.error();
  auto metrics = ReadTaskMetrics(task_obj.json(), task_obj, *n);
  if (!metrics) return metrics.error();
  FinishedCase c;
  c.suite = suite;
  c.result.case_id = suite + "/" + task;
  c.result.status = CaseStatus::kPass;
  c.result.metrics = std::move(metrics->metrics);
  auto filter = ChooseFilter(metrics->filters, wanted_filter);
  if (!filter) return results.FieldError(task, NoSuchFilter(metrics->filters, wanted_filter));
  const std::string accuracy_key = AddAccuracy(c.result.metrics, *filter);
  if (!accuracy_key.empty())
    c.result.message = fmt::format("accuracy is lm-eval's {}", accuracy_key);
  return c;
}

// Gives each samples file's rows to the case of its task.
Status AttachSamples(std::vector<FinishedCase>& cases, const std::vector<std::string>& tasks, const std::string& suite,
                     const std::vector<LmEvalSamplesFile>& samples, const std::string& wanted_filter,
                     const std::string& origin) {
  for (const auto& file : samples) {
    if (tasks.empty()) return UsageError(fmt::format("{}: results hold no task for the samples of {}", origin, file.origin));
    auto task = TaskOf(file.origin, tasks);
    if (!task) return task.error();
    auto rows = ParseLmEvalSamples(file.text, file.origin, wanted_filter);
    if (!rows) return rows.error();
    for (auto& c : cases)
      if (c.result.case_id == suite + "/" + *task) {
        if (!c.samples.empty())
          return UsageError(fmt::format("{}: task '{}' already has samples from another file", file.origin, *task));
        c.samples = std::move(*rows);
        // lm-eval 0.3 writes no n-samples: the samples say how many documents ran.
        for (auto& m : c.result.metrics)
          if (m.n == 0) m.n = static_cast<int64_t>(c.samples.size());
      }
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<Sample>> ParseLmEvalSamples(const std::string& text, const std::string& origin,
                                               const std::string& wanted_filter) {
  auto objects = SampleObjects(text, origin);
  if (!objects) return objects.error();
  std::vector<SampleRow> rows;
  std::set<std::string> filters;
  for (const auto& [json, where] : *objects) {
    auto r = ReadSampleRow(json, where);
    if (!r) return r.error();
    filters.insert(r->filter);
    rows.push_back(std::move(*r));
  }
  auto keep = ChooseFilter(filters, wanted_filter);
  if (!keep) return UsageError(fmt::format("{}: {}", origin, NoSuchFilter(filters, wanted_filter)));
  std::vector<Sample> out;
  std::map<std::string, std::string> seen;  // doc id -> where
  for (auto& r : rows) {
    if (r.filter != *keep) continue;
    if (auto [it, fresh] = seen.emplace(r.sample.key, r.where); !fresh)
      return UsageError(fmt::format("{}: doc_id {} already given at {}", r.where, r.sample.key, it->second));
    out.push_back(std::move(r.sample));
  }
  return out;
}

Result<std::vector<FinishedCase>> ParseLmEval(const std::string& text, const std::string& origin,
                                              const std::string& suite_override, const std::string& wanted_filter,
                                              const std::vector<LmEvalSamplesFile>& samples) {
  auto json = ParseJson(text, origin);
  if (!json) return json.error();
  if (!json->is_object()) return UsageError(fmt::format("{}: expected a JSON object (lm-eval's results file)", origin));
  JsonObject top(*json, origin);
  auto results = top.Object("results");
  if (!results) return results.error();
  const std::string suite = suite_override.empty() ? "lm-eval" : suite_override;
  const std::set<std::string> groups = GroupNames(*json);
  std::vector<std::string> tasks;
  std::vector<FinishedCase> cases;
  for (const auto& item : results->json().items()) {
    const std::string& task = item.key();
    auto task_obj = results->Object(task);
    if (!task_obj) return task_obj.error();
    if (task.empty()) return results->FieldError(task, "a task name must not be empty (it names the case)");
    if (groups.count(task)) continue;
    auto c = ReadTask(*json, *results, task, *task_obj, suite, wanted_filter, origin);
    if (!c) return c.error();
    tasks.push_back(task);
    cases.push_back(std::move(*c));
  }
  auto attached = AttachSamples(cases, tasks, suite, samples, wanted_filter, origin);
  if (!attached) return attached.error();
  return cases;
}

}  // namespace harness
