#include "reports/html_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/utf8.h"
#include "harness/util/versions.h"

namespace harness::reports {

std::string HtmlEscape(const std::string& raw) {
  const std::string s = ValidUtf8(raw);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// The status a logical run of several shards shows: its worst shard's.
int Severity(RunStatus s) {
  switch (s) {
    case RunStatus::kPass: return 0;
    case RunStatus::kFail: return 1;
    case RunStatus::kRunning: return 2;
    case RunStatus::kError: return 3;
  }
  return 3;
}

const char* kStyle = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#222}
h1{font-size:1.3rem}table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f4f4f4}.pass{color:#176b2c}.fail,.error{color:#b00020;font-weight:600}.skip{color:#777}
pre{white-space:pre-wrap;margin:0;font-size:12px}.meta td{border:none;padding:.1rem .5rem}
)css";

std::string MetricsCell(const std::vector<Metric>& metrics) {
  std::string out;
  for (const auto& m : metrics) {
    if (!m.label.empty()) out += fmt::format("{}={}", HtmlEscape(m.name), HtmlEscape(m.label));
    else out += fmt::format("{}={:.6g}", HtmlEscape(m.name), m.value);
    if (m.low && m.high) out += fmt::format(" [{:.4g}, {:.4g}]", *m.low, *m.high);
    if (m.n) out += fmt::format(" n={}", m.n);
    out += "<br>";
  }
  return out;
}

}  // namespace

Result<std::string> HtmlReport(Store& store, int64_t run_id) {
  auto run = store.Run(run_id);
  if (!run) return run.error();
  // The shards of a sharded nightly (one nightly id) are one run here: every shard's cases.
  auto shards = store.LogicalRun(run->id);
  if (!shards) return shards.error();
  std::vector<StoredCase> cases;
  std::vector<std::string> shard_words;
  RunStatus status = RunStatus::kPass;
  for (const auto& shard : *shards) {
    auto some = store.Cases(shard.id);
    if (!some) return some.error();
    cases.insert(cases.end(), some->begin(), some->end());
    shard_words.push_back(fmt::format("{} (run {}, {})", shard.shard, shard.id, Word(shard.status)));
    status = std::max(status, shard.status, [](RunStatus a, RunStatus b) { return Severity(a) < Severity(b); });

  }
  std::sort(cases.begin(), cases.end(),
            [](const StoredCase& a, const StoredCase& b) { return a.result.case_id < b.result.case_id; });
  std::string shard_row;
  if (!run->nightly.empty())
    shard_row = fmt::format("<tr><td>nightly</td><td>{}: {} shards: {}</td></tr>\n", HtmlEscape(run->nightly),
                            shards->size(), HtmlEscape(fmt::format("{}", fmt::join(shard_words, ", "))));
  StatusCounts n;
  for (const auto& c : cases) n.Add(c.result.status);
  std::string html = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="harness-report-version" content="{}">
<title>harness report: run {}</title><style>{}</style></head><body>
<h1>harness run {} &mdash; {}</h1>
<table class="meta">
<tr><td>commit</td><td><code>{}</code> {}</td></tr>
<tr><td>stack</td><td>{} (config {})</td></tr>
<tr><td>host</td><td>{}</td></tr>
<tr><td>started / finished</td><td>{} / {}</td></tr>
<tr><td>cases</td><td>{} passed, {} failed, {} errors, {} skipped</td></tr>
{}</table>
<h2>Cases</h2>
<table><thead><tr><th>status</th><th>case</th><th>metrics</th><th>message</th><th>time</th></tr></thead><tbody>
)",
                                 kHtmlReportFormat, run->id, kStyle, run->id, Label(status),
                                 HtmlEscape(run->sha), HtmlEscape(run->subject), HtmlEscape(run->stack),
                                 HtmlEscape(run->config_hash), HtmlEscape(run->host), HtmlEscape(run->started_at),
                                 HtmlEscape(run->finished_at), n.pass, n.fail, n.error, n.skip, shard_row);
  for (const auto& c : cases) {
    auto metrics = store.Metrics(c.id);
    if (!metrics) return metrics.error();
    html += fmt::format("<tr><td class=\"{0}\">{1}</td><td>{2}</td><td>{3}</td><td><pre>{4}</pre></td><td>{5:.3f}s</td></tr>\n",
                        Word(c.result.status), Label(c.result.status), HtmlEscape(c.result.case_id),
                        MetricsCell(*metrics), HtmlEscape(c.result.message), c.result.duration_s);
  }
  html += "</tbody></table>\n<h2>Stack config</h2>\n<pre>" + HtmlEscape(run->config_json) + "</pre>\n</body></html>\n";
  return html;
}

}  // namespace harness::reports
