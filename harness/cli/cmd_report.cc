// harness report: the self-contained HTML report of a run.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/store/store.h"
#include "harness/util/output_file.h"
#include "reports/html_report.h"

namespace harness {
namespace {

struct ReportOptions {
  std::string db = DefaultDbPath();
  std::string out = "report.html";
  int64_t run = 0;
};

int Report(const ReportOptions& o) {
  ValueOrThrow(CheckOutputPath(o.out, o.db, "--out"));
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  std::string html = ValueOrThrow(reports::HtmlReport(*store, o.run));
  ValueOrThrow(WriteOutputFile(o.out, html));
  std::fprintf(stderr, "harness: wrote %s\n", o.out.c_str());
  return 0;
}

}  // namespace

CommandMain SetupReport(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  app.add_option("--out", o->out, "HTML file to write (default report.html)");
  app.add_option("--run", o->run, "Run id (default: the newest run)");
  return [o] { return Report(*o); };
}

}  // namespace harness
