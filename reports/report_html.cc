#include "reports/report_html.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/versions.h"
#include "reports/html_section.h"

namespace harness::reports {

const std::string& ReportScript() {
  // Filters by status, suite and text over every element with data-suite; the choice lives
  // in the fragment (#status=fail&suite=gsm8k&q=text) so a link opens the same view. A
  // fragment without "=" is a plain anchor (#trends) and left alone.
  static const std::string kScript = R"js(
(function () {
  var form = document.getElementById('filters');
  var status = form.elements.status, suite = form.elements.suite, text = form.elements.text;
  function read() {
    var h = location.hash.slice(1);
    if (h.indexOf('=') < 0) return;
    status.value = ''; suite.value = ''; text.value = '';
    h.split('&').forEach(function (kv) {
      var i = kv.indexOf('='), k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
      if (k === 'status') status.value = v;
      else if (k === 'suite') suite.value = v;
      else if (k === 'q') text.value = v;
    });
  }
  function apply() {
    var s = status.value, u = suite.value, q = text.value.toLowerCase(), shown = 0, all = 0;
    document.querySelectorAll('[data-suite]').forEach(function (e) {
      var ok = (!s || (' ' + e.getAttribute('data-status') + ' ').indexOf(' ' + s + ' ') >= 0) &&
               (!u || e.getAttribute('data-suite') === u) &&
               (!q || e.textContent.toLowerCase().indexOf(q) >= 0);
      e.hidden = !ok; all++; if (ok) shown++;
    });
    document.getElementById('shown').textContent = shown === all ? 'showing all ' + all : 'showing ' + shown + ' of ' + all;
  }
  function write() {
    var p = [];
    if (status.value) p.push('status=' + encodeURIComponent(status.value));
    if (suite.value) p.push('suite=' + encodeURIComponent(suite.value));
    if (text.value) p.push('q=' + encodeURIComponent(text.value));
    var h = p.length ? '#' + p.join('&') : ' ';
    try { history.replaceState(null, '', h); } catch (e) { location.replace(h); }
    apply();
  }
  read(); apply();
  form.addEventListener('input', write);
  window.addEventListener('hashchange', function () { read(); apply(); });
  document.body.setAttribute('data-filters', 'ready');
})();
)js";
  return kScript;
}

std::string ScriptHashSource(const std::string& script) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(script.data(), script.size(), digest, &len, EVP_sha256(), nullptr);
  unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(b64, digest, static_cast<int>(len));
  return "'sha256-" + std::string(reinterpret_cast<char*>(b64), static_cast<std::size_t>(n)) + "'";
}

namespace {

constexpr const char* kStyle = R"css(
:root{--pass:#1a7f37;--pass-bg:#e9f6ec;--risk:#9a5b00;--risk-bg:#fff1cc;--fail:#b3261e;--fail-bg:#fde7e6;
--err:#6b3fa0;--err-bg:#f1eafa;--skip:#666;--line:#d8dce0;--muted:#5f6b76}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d232a;color:#fff;padding:.8rem 1.5rem}
header h1{font-size:1.15rem;margin:0 0 .2rem}
header p{margin:0;color:#c9d1d9;font-size:.85rem}header p a{color:#9cd0ff}header p code{color:#fff}
nav{display:flex;gap:1rem;flex-wrap:wrap;margin-top:.4rem}
nav a{color:#9cd0ff;text-decoration:none;font-size:.85rem}
#filters{display:flex;gap:.6rem;align-items:center;flex-wrap:wrap;padding:.6rem 1.5rem;background:#fff;
border-bottom:1px solid var(--line);position:sticky;top:0;z-index:2}
#filters label{font-size:.8rem;color:var(--muted)}
#filters select,#filters input{font:inherit;padding:.15rem .3rem;margin-left:.25rem}
#shown{font-size:.8rem;color:var(--muted);margin-left:auto}
main{padding:0 1.5rem 2rem;max-width:1200px}
section{margin-top:1.4rem}
h2{font-size:1.05rem;border-bottom:2px solid var(--line);padding-bottom:.2rem;margin:0 0 .6rem}
h2 .count{font-weight:400;color:var(--muted);font-size:.85rem}
h3{font-size:.95rem;margin:0 0 .3rem;word-break:break-all}
.none{color:var(--muted);font-style:italic}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:.7rem}
.card{background:#fff;border:1px solid var(--line);border-left:6px solid var(--pass);border-radius:4px;padding:.6rem .8rem}
.card.risk{border-left-color:#e0a100;background:var(--risk-bg)}.card.fail{border-left-color:var(--fail);background:var(--fail-bg)}
.card.error{border-left-color:var(--err);background:var(--err-bg)}
.card .counts{display:flex;gap:.35rem;flex-wrap:wrap;margin:.3rem 0}
.card .meta{font-size:.8rem;color:var(--muted)}
.badge{display:inline-block;border-radius:3px;padding:0 .4rem;font-size:.78rem;font-weight:600;white-space:nowrap}
.b-pass{background:var(--pass-bg);color:var(--pass)}.b-risk{background:#ffd966;color:#4d2e00}
.b-fail{background:var(--fail);color:#fff}.b-error{background:var(--err);color:#fff}.b-skip{background:#eee;color:var(--skip)}
.b-zero{background:#eef0f3;color:var(--muted);font-weight:400}
.verdict{margin:1rem 0 0;padding:.7rem 1rem;border-radius:4px;font-size:1.05rem;font-weight:700;border:1px solid var(--line)}
.verdict.v-pass{background:var(--pass-bg);color:var(--pass);border-color:var(--pass)}
.verdict.v-fail,.verdict.v-regressed{background:var(--fail-bg);color:var(--fail);border-color:var(--fail)}
.verdict.v-incomplete{background:var(--err-bg);color:var(--err);border-color:var(--err)}
.item.regressed{border-left:6px solid var(--fail)}.item.fixed{border-left:6px solid var(--pass)}
.finding{margin:.3rem 0;font-weight:600;overflow-wrap:anywhere}
h3.group{margin:.8rem 0 .4rem;color:var(--muted)}
.item{background:#fff;border:1px solid var(--line);border-radius:4px;padding:.6rem .8rem;margin-bottom:.6rem}
.item.fail{border-left:6px solid var(--fail)}.item.error{border-left:6px solid var(--err)}
.since{font-size:.8rem;color:var(--muted)}
.culprit{margin:.3rem 0;font-size:.88rem}.culprit.flaky{color:var(--muted)}
pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;
background:#f3f4f6;padding:.4rem .5rem;border-radius:3px;max-height:22rem;overflow:auto}
table{border-collapse:collapse;width:100%;background:#fff;font-size:.85rem}
th,td{border-bottom:1px solid var(--line);padding:.25rem .45rem;text-align:left;vertical-align:top}
th{background:#eef0f3;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.added td{background:#eaf7ee}tr.removed td{background:#fdeceb}tr.changed td{background:#fff6dd}
.hint{background:var(--risk-bg);border:1px solid #e0a100;border-radius:3px;padding:.3rem .5rem;margin:.3rem 0;font-size:.85rem}
.chart{display:block;max-width:100%;height:auto;background:#fff}
.chart .frame{fill:#fff;stroke:var(--line)}.chart .band{fill:#ffe08a;opacity:.55}
.chart .gate{stroke:var(--fail);stroke-width:1.2;stroke-dasharray:5 3}
.chart .whisker{stroke:#8a96a3;stroke-width:1.2}
.chart .pt-pass{fill:var(--pass)}.chart .pt-risk{fill:#e0a100;stroke:#4d2e00;stroke-width:.8}
.chart .pt-fail{fill:var(--fail)}.chart .pt-error{fill:var(--err)}
.chart .culprit line{stroke:#000;stroke-width:1;stroke-dasharray:2 2}.chart .culprit path{fill:#000}
.chart text{font-size:10px;fill:var(--muted)}.chart .axis{text-anchor:end}.chart .tick.end{text-anchor:end}
.legend{font-size:.78rem;color:var(--muted);margin:.2rem 0 0}
table.flaky{table-layout:fixed}table.flaky td{overflow-wrap:anywhere}
.w-p{width:8%}.w-case{width:26%}.w-th{width:12%}.w-v{width:10%}.w-verdict{width:8%}
.settle{margin-top:.2rem;color:var(--muted)}
.prob{font-weight:700}.q{font-size:.75rem;color:var(--muted);display:block}
details summary{cursor:pointer;color:#0b5cad;font-size:.82rem}
.flip-lost{color:var(--fail);font-weight:600}.flip-gain{color:var(--pass);font-weight:600}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:.5rem}.cols h4{margin:.2rem 0;font-size:.8rem}
a{color:#0b5cad}code{font:12px ui-monospace,Menlo,Consolas,monospace}
[hidden]{display:none!important}
)css";

// The page's frame: its head and header, the filters and the night's verdict; then the
// sections in order (reports/sections/).
class Html : HtmlSection {
 public:
  explicit Html(HtmlPage& page) : HtmlSection(page), page_(page) {}

  std::string Render() {
    // Markup already: Sha() escapes what it shows.
    const std::string window = m_.commits.size() == 1
                             ? fmt::format("commit {}", Sha(m_.commits.front().sha))
                             : fmt::format("{} commits, {} .. {}", m_.commits.size(), Sha(m_.commits.front().sha),
                                           Sha(m_.commits.back().sha));
    std::string filter;
    if (!m_.query.suite.empty()) filter += " · suite " + m_.query.suite;
    if (!m_.query.case_glob.empty()) filter += " · cases " + m_.query.case_glob;
    out_ = fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src {}; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="harness-report-version" content="{}">
<title>{}</title><style>{}</style></head><body>
<header><h1>{}</h1><p>{}, {} runs{}</p>
<nav><a href="#changes">Changes ({})</a><a href="#failures">Failures ({})</a><a href="#flaky">Flaky thresholds ({})</a><a href="#trends">Trends ({})</a><a href="#summary">Suites</a><a href="#flips">Per-question flips</a><a href="#bisect">Bisect ({})</a></nav></header>
)",
                       ScriptHashSource(ReportScript()), kReportFormat, E(o_.title), kStyle, E(o_.title), window,
                       m_.runs, E(filter), m_.changes.size(), m_.failures.size() + m_.failures_listed.size(),
                       m_.flaky.size(), m_.trends.size(), m_.bisect.size());
    Filters();
    out_ += "<main>\n";
    // The morning view: the night's verdict, what changed since the previous nightly, what
    // still fails, then the flaky thresholds and trends (docs/report.md).
    Verdict();
    ChangesHtml(page_);
    SummaryHtml(page_);
    FailuresHtml(page_);
    FlakyHtml(page_);
    TrendsHtml(page_);
    FlipsHtml(page_);
    BisectHtml(page_);
    out_ += "</main>\n<script>" + ReportScript() + "</script>\n</body></html>\n";
    return std::move(out_);
  }

 private:
  void Filters() {
    std::set<std::string> suites;
    for (const auto& s : m_.summary) suites.insert(s.suite);
    out_ += R"(<form id="filters" autocomplete="off"><label>status<select name="status"><option value="">all</option>)"
            R"(<option value="fail">fail</option><option value="error">error</option><option value="at-risk">at-risk</option>)"
            R"(<option value="flaky">flaky</option><option value="pass">pass</option></select></label>)"
            R"(<label>suite<select name="suite"><option value="">all</option>)";
    for (const auto& s : suites) out_ += fmt::format(R"(<option value="{0}">{0}</option>)", E(s));
    out_ += R"(</select></label><label>text<input name="text" type="search" placeholder="case, message, question"></label>)"
            R"(<span id="shown"></span></form>)"
            "\n";
  }

  void Verdict() {
    std::string cls(Word(m_.night.verdict));
    std::transform(cls.begin(), cls.end(), cls.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out_ += fmt::format(R"(<p id="verdict" class="verdict v-{}" role="status">{}</p>)"
                        "\n",
                        cls, E(m_.night.Line()));
  }

  HtmlPage& page_;
};

}  // namespace

std::string ReportHtml(const ReportModel& m, const HtmlOptions& o) {
  HtmlPage page{m, o, ""};
  return Html(page).Render();
}

}  // namespace harness::reports
