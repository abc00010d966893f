// harness report: the triage report over the database's history (docs/report.md): one
// self-contained HTML file, the same triage as text, the model as JSON, or a short Markdown
// summary for a CI job page.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/numeric_option.h"
#include "harness/store/store.h"
#include "harness/util/json_file.h"
#include "harness/util/output_file.h"
#include "reports/report_html.h"
#include "reports/report_json.h"
#include "reports/report_markdown.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace harness {
namespace {

struct ReportOptions {
  std::string db = DefaultDbPath();
  std::string out;
  std::string format = "html";
  std::string commit_url;
  std::string html_url;
  reports::ReportQuery query;
};

int Report(const ReportOptions& o) {
  for (const auto& [flag, url] : {std::pair{"--commit-url", &o.commit_url}, std::pair{"--html-url", &o.html_url}})
    if (!url->empty() && !url->starts_with("https://") && !url->starts_with("http://"))
      throw FatalError(UsageError(fmt::format("{} {}: must start with https:// or http://", flag, *url)));
  if (!o.html_url.empty() && o.format != "markdown")
    throw FatalError(UsageError("--html-url links the full report from the Markdown summary: use it with --format markdown"));
  // HTML goes to a file (report.html unless --out); text, JSON and Markdown to stdout unless --out.
  const std::string out = !o.out.empty() ? o.out : o.format == "html" ? "report.html" : "";
  if (!out.empty()) ValueOrThrow(CheckOutputPath(out, o.db, "--out"));
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  const reports::ReportModel model = ValueOrThrow(reports::BuildReport(*store, o.query));
  std::string content;
  if (o.format == "html") content = reports::ReportHtml(model, {.commit_url = o.commit_url});
  else if (o.format == "json") content = DumpJson(reports::ReportJson(model)) + "\n";
  else if (o.format == "markdown")
    content = reports::ReportMarkdown(model, {.html_url = o.html_url, .commit_url = o.commit_url});
  else content = reports::ReportText(model);
  if (out.empty()) {
    std::fputs(content.c_str(), stdout);
    return 0;
  }
  ValueOrThrow(WriteOutputFile(out, content));
  std::fprintf(stderr, "harness: wrote %s (%zu bytes)\n", out.c_str(), content.size());
  return 0;
}

}  // namespace

CommandMain SetupReport(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  auto* last = AddNumericOption(app, "--last", o->query.last_n, kLastRange,
                                "The newest N commits with a finished run (default 30)");
  app.add_option("--since", o->query.since, "This commit (sha prefix) and every later one, instead of --last")
      ->excludes(last);
  app.add_option("--suite", o->query.suite, "Only this suite's cases");
  app.add_option("--case", o->query.case_glob, "Only cases whose id matches this glob (e.g. 'gsm8k/*')");
  app.add_option("--commit-url", o->commit_url, "Link commits through this URL template, {sha} replaced (https://host/repo/commit/{sha})");
  app.add_option("--format", o->format, "html (default), text, json or markdown (a short summary for a CI job page)")
      ->check(CLI::IsMember({"html", "text", "json", "markdown"}));
  app.add_option("--html-url", o->html_url, "With --format markdown: link the full HTML report at this URL (http/https)");
  app.add_option("--out", o->out, "File to write (default report.html for html; stdout for the others)");
  return [o] { return Report(*o); };
}

}  // namespace harness
