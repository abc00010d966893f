// The triage report over a year of nightlies (harness/store/nightly_db.h: 365 commits of
// every nightly case, 2 x 1319 per-question samples with completions per night). Prints
// the time to open the database, build the model and render each format, and the sizes.
// Goal (the report issue): the HTML report of the whole year in under 2 s and under 5 MB.
//   build/reports/report_bench            (HARNESS_BENCH_DB=FILE keeps the database)
// Exit status 1 when a goal is missed, so the figures cannot be misread.
#include <chrono>
#include <cstdio>

#include "harness/store/nightly_db.h"
#include "harness/store/store.h"
#include "harness/util/json_file.h"
#include "reports/report_html.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace {

using namespace harness;  // NOLINT: a benchmark of the project's own API
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

}  // namespace

int main() {
  const auto& db = bench::NightlyDatabase();
  const reports::ReportQuery query{.last_n = bench::kNightlyCommits};
  std::printf("report over %d nightly commits (%s)\n", bench::kNightlyCommits, db.c_str());
  bool ok = true;
  for (const char* format : {"html", "text", "json"}) {
    double best = 1e9;
    std::size_t bytes = 0;
    for (int rep = 0; rep < 3; ++rep) {
      const auto start = Clock::now();
      auto store = Store::OpenReadOnly(db);
      if (!store) return std::fprintf(stderr, "%s\n", store.error().message.c_str()), 3;
      auto model = reports::BuildReport(**store, query);
      if (!model) return std::fprintf(stderr, "%s\n", model.error().message.c_str()), 3;
      std::string out = std::string(format) == "html"   ? reports::ReportHtml(*model, {})
                        : std::string(format) == "text" ? reports::ReportText(*model)
                                                        : DumpJson(reports::ReportJson(*model));
      best = std::min(best, Seconds(start));
      bytes = out.size();
    }
    std::printf("  %-4s  %7.3f s  %9zu bytes (%.2f MB)\n", format, best, bytes, static_cast<double>(bytes) / 1e6);
    if (std::string(format) == "html") ok = best < 2.0 && bytes < 5'000'000;
  }
  std::printf("goal (html): under 2 s and under 5 MB: %s\n", ok ? "met" : "MISSED");
  return ok ? 0 : 1;
}
