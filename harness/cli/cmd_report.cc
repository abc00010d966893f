// harness report: the triage report over the database's history (docs/report.md): one
// self-contained HTML file, the same triage as text, the model as JSON, or a short Markdown
// summary for a CI job page; several of them from one model with --also.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/cli/numeric_option.h"
#include "harness/store/store.h"
#include "harness/util/json_file.h"
#include "harness/util/output_file.h"
#include "harness/util/utf8.h"
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
  std::vector<std::string> also;  // FORMAT=FILE: more outputs from the same model
  std::string commit_url;
  std::string html_url;
  reports::ReportQuery query;
};

// One row per output format: its name, where it goes without --out (empty: stdout), and
// how the one model of the run becomes its text.
struct ReportFormat {
  const char* name;
  const char* default_out;
  std::string (*render)(const reports::ReportModel&, const ReportOptions&);
};

constexpr ReportFormat kFormats[] = {
    {"html", "report.html",
     [](const reports::ReportModel& m, const ReportOptions& o) {
       return reports::ReportHtml(m, {.commit_url = o.commit_url});
     }},
    {"text", "", [](const reports::ReportModel& m, const ReportOptions&) { return reports::ReportText(m); }},
    {"json", "",
     [](const reports::ReportModel& m, const ReportOptions&) { return DumpJson(reports::ReportJson(m)) + "\n"; }},
    {"markdown", "",
     [](const reports::ReportModel& m, const ReportOptions& o) {
       return reports::ReportMarkdown(m, {.html_url = o.html_url, .commit_url = o.commit_url});
     }},
};

const ReportFormat* FindFormat(const std::string& name) {
  for (const auto& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

struct ReportOutput {
  const ReportFormat* format;
  std::string path;  // empty: stdout
};

// --format/--out, then each --also FORMAT=FILE; usage errors before anything is read or written.
std::vector<ReportOutput> Outputs(const ReportOptions& o) {
  std::vector<ReportOutput> outs = {{FindFormat(o.format), !o.out.empty() ? o.out : FindFormat(o.format)->default_out}};
  for (const auto& spec : o.also) {
    const auto eq = spec.find('=');
    const ReportFormat* f = eq == std::string::npos ? nullptr : FindFormat(spec.substr(0, eq));
    if (!f || eq + 1 == spec.size())
      throw FatalError(UsageError(fmt::format("--also {}: expected FORMAT=FILE, FORMAT one of html, text, json, markdown",
                                              spec)));
    outs.push_back({f, spec.substr(eq + 1)});
  }
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].path.empty()) continue;
    ValueOrThrow(CheckOutputPath(outs[i].path, o.db, i == 0 ? "--out" : "--also"));
    for (std::size_t j = 0; j < i; ++j)
      if (!outs[j].path.empty() && std::filesystem::weakly_canonical(outs[j].path) ==
                                       std::filesystem::weakly_canonical(outs[i].path))
        throw FatalError(UsageError(fmt::format("{} is named twice among --out and --also: each output needs a file "
                                                "of its own", outs[i].path)));
  }
  return outs;
}

int Report(const ReportOptions& o) {
  for (const auto& [flag, url] : {std::pair{"--commit-url", &o.commit_url}, std::pair{"--html-url", &o.html_url}})
    if (!url->empty() && !url->starts_with("https://") && !url->starts_with("http://"))
      throw FatalError(UsageError(fmt::format("{} {}: must start with https:// or http://", flag, *url)));
  const std::vector<ReportOutput> outs = Outputs(o);
  const bool markdown = std::any_of(outs.begin(), outs.end(), [](const auto& x) { return x.format->name == std::string("markdown"); });
  if (!o.html_url.empty() && !markdown)
    throw FatalError(UsageError("--html-url links the full report from the Markdown summary: use it with --format markdown"));
  auto store = ValueOrThrow(Store::OpenReadOnly(o.db));
  // One model for every output: the same history, read once.
  const reports::ReportModel model = ValueOrThrow(reports::BuildReport(*store, o.query));
  for (const auto& w : model.warnings) std::fprintf(stderr, "harness: warning: %s\n", TerminalText(w).c_str());
  for (const auto& out : outs) {
    const std::string content = out.format->render(model, o);
    if (out.path.empty()) {
      std::fputs(content.c_str(), stdout);
      continue;
    }
    ValueOrThrow(WriteOutputFile(out.path, content));
    std::fprintf(stderr, "harness: wrote %s (%zu bytes)\n", out.path.c_str(), content.size());
  }
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
  app.add_option("--also", o->also,
                 "FORMAT=FILE: write this format too, from the same model (repeatable; e.g. --also markdown=report.md)")
      ->allow_extra_args(false);
  return [o] { return Report(*o); };
}

}  // namespace harness
