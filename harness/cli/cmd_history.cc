// harness history: one case's (or every case of a suite's) status and metric per commit, in
// first-parent order; repeated runs of a commit shown together.
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.h"
#include "harness/cli/numeric_option.h"
#include "harness/results/case_id.h"
#include "harness/run/suite_table.h"
#include "harness/store/store.h"
#include "harness/util/json_file.h"
#include "harness/util/paths.h"
#include "harness/util/suggest.h"
#include "reports/history_report.h"

namespace harness {
namespace {

struct HistoryOptions {
  HistoryQuery query;                // the store's query: --case as given
  std::optional<CaseId> case_id;     // --case parsed once, where it is given
  std::string format = "text";
  std::string db = DefaultDbPath();
  std::string suites_dir;
};

// Without --metric, the headline metric the suite's table declares (GSM8K: accuracy), so
// the value column holds a value; "" when the table declares none or cannot be read (the
// column then shows statuses only, as it always did).
std::string HeadlineMetric(const HistoryOptions& o) {
  // History has checked that one of --case and --suite is given.
  const std::string suite = o.query.suite.empty() ? o.case_id.value().suite() : o.query.suite;
  const std::filesystem::path dir = o.suites_dir.empty() ? SuitesDir() : std::filesystem::path(o.suites_dir);
  auto table = LoadSuiteTable(dir / (suite + ".json"));
  return table && table->suite == suite ? table->headline_metric : "";
}

// A --metric none of the rows stored is a misspelling more often than not: exit 2 with
// the metrics these cases did store.
void CheckMetricStored(HistoryReads& store, const HistoryQuery& q, const std::vector<HistoryRow>& rows) {
  for (const auto& r : rows)
    if (r.value || !r.label.empty()) return;
  auto names = ValueOrThrow(store.MetricNames(q.case_id, q.suite));
  const std::string whose = q.suite.empty() ? fmt::format("case '{}'", q.case_id) : fmt::format("suite '{}'", q.suite);
  if (names.empty())
    throw FatalError(ExitCode::kUsage, fmt::format("--metric {}: {} stored no metrics", q.metric, whose));
  throw FatalError(ExitCode::kUsage, fmt::format("--metric {}: {} never stored it{}", q.metric, whose,
                                                 DidYouMean(q.metric, names)));
}

int History(const HistoryOptions& o) {
  if (o.query.case_id.empty() == o.query.suite.empty()) throw FatalError(ExitCode::kUsage, "give one of --case and --suite");
  HistoryQuery q = o.query;
  const bool asked = !q.metric.empty();
  if (!asked) q.metric = HeadlineMetric(o);
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  if (q.last_n < 1) throw FatalError(ExitCode::kUsage, "--last must be at least 1");
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  HistoryReads& reads = store->reader();
  auto rows = ValueOrThrow(reads.History(q));
  if (rows.empty()) {
    auto known = ValueOrThrow(reads.KnownCases());
    if (!q.suite.empty()) {
      std::vector<std::string> suites;
      for (const auto& k : known)
        if (auto s = CaseId(k).suite(); suites.empty() || suites.back() != s) suites.push_back(s);
      throw FatalError(ExitCode::kUsage, fmt::format("no results for suite '{}' in {} (known: {})", q.suite, o.db,
                                                     suites.empty() ? "none" : fmt::format("{}", fmt::join(suites, ", "))));
    }
    throw FatalError(ExitCode::kUsage, fmt::format("no results for case '{}' in {} (known: {})", q.case_id, o.db,
                                                   known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
  }
  if (asked) CheckMetricStored(reads, q, rows);
  if (o.format == "json") {
    const std::string text = reports::HistoryJsonText(q, rows);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    std::fputs(reports::HistoryText(q, rows).c_str(), stdout);
  }
  return 0;
}

}  // namespace

CommandMain SetupHistory(CLI::App& app) {
  auto o = std::make_shared<HistoryOptions>();
  app.add_option_function<std::string>(
      "--case",
      [o](const std::string& id) {
        o->query.case_id = id;
        o->case_id.emplace(id);
      },
      "Case id, e.g. gsm8k/test_gsm8k_accuracy_1");
  app.add_option("--suite", o->query.suite, "Every case of this suite (instead of --case)");
  app.add_option("--metric", o->query.metric,
                 "Metric to show next to the status (a verdict shows its word; default: the suite's headline metric)");
  AddNumericOption(app, "--last", o->query.last_n, kLastRange, "Number of most recent commits (default 20)");
  app.add_option("--format", o->format, "text|json");
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  app.add_option("--suites-dir", o->suites_dir, "Folder of suite tables (headline metrics; default $HARNESS_ROOT/suites)");
  return [o] { return History(*o); };
}

}  // namespace harness
