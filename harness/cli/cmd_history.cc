// harness history: one case's status and metric per commit, in first-parent order.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/store/store.h"
#include "harness/util/json_file.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

struct HistoryOptions {
  std::string case_id;
  std::string metric;
  int last = 20;
  std::string format = "text";
  std::string db = DefaultDbPath();
};

int History(const HistoryOptions& o) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  if (o.last < 1) throw FatalError(ExitCode::kUsage, "--last must be at least 1");
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  auto rows = ValueOrThrow(store->History(o.case_id, o.metric, o.last));
  if (rows.empty()) {
    auto known = ValueOrThrow(store->KnownCases());
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw FatalError(ExitCode::kUsage, fmt::format("no results for case '{}' in {} (known: {})", o.case_id, o.db,
                                                   list.empty() ? "none" : list));
  }
  if (o.format == "json") {
    Json j{{"format_version", kHistoryFormat}, {"case", o.case_id}, {"metric", o.metric}, {"commits", Json::array()}};
    for (const auto& r : rows) {
      Json row{{"commit", r.sha}, {"subject", r.subject}, {"run_id", r.run_id}, {"started_at", r.started_at}, {"status", Word(r.status)}};
      row["ordinal"] = r.ordinal ? Json(*r.ordinal) : Json(nullptr);
      if (!o.metric.empty()) {
        row["value"] = r.value ? Json(*r.value) : Json(nullptr);
        if (r.n) row["n"] = r.n;
        if (r.low) row["low"] = *r.low;
        if (r.high) row["high"] = *r.high;
        if (!r.label.empty()) row["verdict"] = r.label;
      }
      j["commits"].push_back(row);
    }
    std::printf("%s\n", DumpJson(j).c_str());
    return 0;
  }
  std::printf("%-12s  %-6s  %-6s  %-16s  %s\n", "COMMIT", "ORD", "STATUS", o.metric.empty() ? "-" : o.metric.c_str(), "SUBJECT");
  for (const auto& r : rows) {
    std::string value = "-";
    if (!r.label.empty()) {
      value = r.label;
    } else if (r.value) {
      value = fmt::format("{:.4g}", *r.value);
      if (r.low && r.high) value += fmt::format(" [{:.3g},{:.3g}]", *r.low, *r.high);
    }
    std::printf("%-12s  %-6s  %-6s  %-16s  %s\n", r.sha.substr(0, 12).c_str(),
                r.ordinal ? std::to_string(*r.ordinal).c_str() : "-", std::string(Label(r.status)).c_str(), value.c_str(), r.subject.c_str());
  }
  return 0;
}

}  // namespace

CommandMain SetupHistory(CLI::App& app) {
  auto o = std::make_shared<HistoryOptions>();
  app.add_option("--case", o->case_id, "Case id, e.g. gsm8k/test_gsm8k_accuracy_1")->required();
  app.add_option("--metric", o->metric, "Metric to show next to the status");
  app.add_option("--last", o->last, "Number of most recent commits (default 20)");
  app.add_option("--format", o->format, "text|json");
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  return [o] { return History(*o); };
}

}  // namespace harness
