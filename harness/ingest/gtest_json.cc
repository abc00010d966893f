#include "harness/ingest/gtest_json.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/ingest/ingest.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

// The fields GoogleTest itself writes on a test; any other key is a RecordProperty.
constexpr std::array kTestFields = {"name",   "value_param", "type_param", "file",      "line",     "status",
                                    "result", "timestamp",   "time",       "classname", "failures", "skipped"};

bool IsTestField(const std::string& key) {
  return std::find(kTestFields.begin(), kTestFields.end(), key) != kTestFields.end();
}

Result<FinishedCase> ReadTest(const JsonObject& t, const std::string& suite, const std::string& test_suite) {
  auto name = t.String("name");
  if (!name) return name.error();
  FinishedCase c;
  c.suite = suite;
  c.result.case_id = fmt::format("{}/{}.{}", suite, test_suite, *name);
  c.result.status = CaseStatus::kPass;
  if (t.Has("time")) {
    auto time = t.String("time");
    if (!time) return time.error();
    auto seconds = ParseNumber(*time);
    if (!seconds || *seconds < 0) return t.FieldError("time", fmt::format("'{}' is not a duration like \"0.1s\"", *time));
    c.result.duration_s = *seconds;
  }
  auto status = t.String("status", "RUN");
  if (!status) return status.error();
  auto result = t.String("result", "COMPLETED");
  if (!result) return result.error();
  if (*status != "RUN" && *status != "NOTRUN")
    return t.FieldError("status", fmt::format("'{}' is neither RUN nor NOTRUN", *status));
  if (*result != "COMPLETED" && *result != "SKIPPED" && *result != "SUPPRESSED")
    return t.FieldError("result", fmt::format("'{}' is not COMPLETED, SKIPPED or SUPPRESSED", *result));
  if (*status == "NOTRUN" || *result != "COMPLETED") {
    c.result.status = CaseStatus::kSkip;
    c.result.message = *status == "NOTRUN" ? "NOTRUN" : *result;
  }
  if (t.Has("failures")) {
    const Json& failures = t.json()["failures"];
    if (!failures.is_array()) return t.FieldError("failures", "expected a list");
    std::vector<std::string> texts;
    for (std::size_t i = 0; i < failures.size(); ++i) {
      JsonObject f(failures[i], t.origin(), t.PathOf("failures") + fmt::format("[{}]", i));
      // 1.12.1 writes "failure"; the documented schema says "message".
      auto text = f.Has("failure") ? f.String("failure") : f.String("message", "");
      if (!text) return text.error();
      texts.push_back(*text);
    }
    if (!texts.empty()) {
      c.result.status = CaseStatus::kFail;
      c.result.message = fmt::format("{}", fmt::join(texts, "\n"));
    }
  }
  for (const auto& [key, value] : t.json().items()) {
    if (IsTestField(key)) continue;
    // A recorded property becomes a metric by its name: one without a name has none to store.
    if (key.empty()) return t.FieldError(key, "a recorded property has no name");
    std::optional<double> v;
    if (value.is_number()) v = value.get<double>();
    else if (value.is_string()) v = ParseNumber(value.get<std::string>());
    if (v) c.result.metrics.push_back({key, *v});
  }
  return c;
}

}  // namespace

Result<std::vector<FinishedCase>> ParseGtestJson(const std::string& text, const std::string& origin,
                                                 const std::string& suite_override) {
  auto json = ParseJson(text, origin);
  if (!json) return json.error();
  const std::string suite = suite_override.empty() ? "gtest" : suite_override;
  JsonObject top(*json, origin);
  if (!json->is_object()) return UsageError(fmt::format("{}: expected a JSON object (GoogleTest's report)", origin));
  if (!top.Has("testsuites")) return top.FieldError("testsuites", "missing field (expected a list)");
  const Json& suites = (*json)["testsuites"];
  if (!suites.is_array()) return top.FieldError("testsuites", "expected a list");
  std::vector<FinishedCase> cases;
  for (std::size_t i = 0; i < suites.size(); ++i) {
    JsonObject s(suites[i], origin, fmt::format("testsuites[{}]", i));
    if (!suites[i].is_object()) return UsageError(fmt::format("{}: testsuites[{}]: expected an object", origin, i));
    auto name = s.String("name");
    if (!name) return name.error();
    if (!s.Has("testsuite")) continue;  // a suite with no tests
    const Json& tests = suites[i]["testsuite"];
    if (!tests.is_array()) return s.FieldError("testsuite", "expected a list");
    for (std::size_t k = 0; k < tests.size(); ++k) {
      JsonObject t(tests[k], origin, s.PathOf("testsuite") + fmt::format("[{}]", k));
      if (!tests[k].is_object()) return UsageError(fmt::format("{}: {}[{}]: expected an object", origin, s.PathOf("testsuite"), k));
      auto c = ReadTest(t, suite, *name);
      if (!c) return c.error();
      cases.push_back(std::move(*c));
    }
  }
  return MergeRepeatedCases(std::move(cases));
}

}  // namespace harness
