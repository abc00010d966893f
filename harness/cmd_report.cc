// harness report: the self-contained HTML report of a run.
#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/commands.h"
#include "harness/store.h"
#include "reports/html_report.h"

namespace harness {
namespace {

struct ReportOptions {
  std::string db = DefaultDbPath();
  std::string out = "report.html";
  int64_t run = 0;
};

int Report(const ReportOptions& o) {
  auto store = ValueOrThrow(Store::Open(o.db));
  std::string html = ValueOrThrow(reports::HtmlReport(*store, o.run));
  std::ofstream f(o.out, std::ios::binary);
  f << html;
  if (!f) throw FatalError(ExitCode::kInfra, fmt::format("{}: cannot write the report", o.out));
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
