#include "reports/report_html.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/git.h"
#include "harness/util/versions.h"
#include "reports/html_escape.h"
#include "reports/trend_chart.h"

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

std::string E(std::string_view s) { return HtmlEscape(s); }

class Html {
 public:
  Html(const ReportModel& m, const HtmlOptions& o) : m_(m), o_(o) {}

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
    Changes();
    Summary();
    Failures();
    Flaky();
    Trends();
    Flips();
    Bisect();
    out_ += "</main>\n<script>" + ReportScript() + "</script>\n</body></html>\n";
    return std::move(out_);
  }

 private:
  std::string Sha(const std::string& sha) const {
    const std::string text = fmt::format("<code>{}</code>", E(ShortSha(sha)));
    const std::string url = CommitUrl(o_.commit_url, sha);
    return url.empty() ? text : fmt::format(R"(<a href="{}" title="{}">{}</a>)", E(url), E(sha), text);
  }
  // A session's several culprits, each with its own drop and posterior, in first-parent order
  // ("" for fewer than two: the culprit line says it all). Styled as a culprit line, so the
  // stylesheet of a one-culprit report stays as it was.
  std::string CulpritList(const std::vector<BisectChange>& culprits) const {
    if (culprits.size() < 2) return "";
    std::string out = fmt::format(R"(<p class="culprit">{} culprits in the range, in first-parent order:</p><ol class="culprit culprits">)",
                                  culprits.size());
    for (const auto& c : culprits)
      out += fmt::format("<li>{} {} · moved {:+.4f} ({:+.2f} pp) · posterior {:.3f}</li>", Sha(c.sha), E(c.subject), c.size,
                         100 * c.size, c.confidence);
    return out + "</ol>";
  }
  std::string CommitCell(std::size_t i) const {
    const auto& c = m_.commits[i];
    return Sha(c.sha) + " " + E(c.subject);
  }
  static std::string Badge(const char* cls, const std::string& text) {
    return fmt::format(R"(<span class="badge {}">{}</span>)", cls, E(text));
  }
  static const char* StatusBadgeClass(CaseStatus s) {
    switch (s) {
      case CaseStatus::kPass: return "b-pass";
      case CaseStatus::kFail: return "b-fail";
      case CaseStatus::kSkip: return "b-skip";
      default: return "b-error";
    }
  }
  // A model verdict is a gate verdict's word, else the case's status label (report_model.h).
  static const char* VerdictClass(const std::string& v) {
    if (const auto gate = ParseGateVerdict(v)) {
      switch (*gate) {
        case GateVerdict::kAtRisk: return "b-risk";
        case GateVerdict::kPass: return "b-pass";
        case GateVerdict::kFail: return "b-fail";
      }
    }
    if (v == Label(CaseStatus::kSkip)) return "b-skip";
    return "b-error";
  }
  static bool AtRisk(const std::string& verdict) { return ParseGateVerdict(verdict) == GateVerdict::kAtRisk; }

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

  // What bisect --auto said of the failure's regression; the culprit's sha links to it.
  void Culprit(const CulpritNote& n) {
    if (n.verdict == RegressionVerdict::kCulprit) {
      out_ += fmt::format(R"(<p class="culprit"><strong>Culprit</strong> {} {} · confidence {:.3f} · {} runs · )"
                          R"(<a href="#bisect-{}">bisect session {}</a>{}</p>)",
                          Sha(n.culprit), E(n.subject), n.confidence, n.runs, n.session, n.session,
                          n.timing ? " · " + E(TimingWords(*n.timing)) : "");
      out_ += CulpritList(n.culprits);
      return;
    }
    out_ += fmt::format(R"(<p class="culprit {}">{}</p>)", n.verdict == RegressionVerdict::kNotConfirmed ? "flaky" : "open",
                        E(CulpritWords(n)));
  }

  void Verdict() {
    std::string cls(Word(m_.night.verdict));
    std::transform(cls.begin(), cls.end(), cls.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out_ += fmt::format(R"(<p id="verdict" class="verdict v-{}" role="status">{}</p>)"
                        "\n",
                        cls, E(m_.night.Line()));
  }

  void Changes() {
    out_ += fmt::format("<section id=\"changes\"><h2>What changed since the previous nightly <span class=\"count\">{} "
                        "{}</span></h2>\n",
                        m_.changes.size(), m_.changes.size() == 1 ? "case" : "cases");
    if (m_.changes.empty())
      out_ += "<p class=\"none\">No case changed: no new failure, no paired regression, no fix since the previous "
              "nightly.</p>\n";
    const std::pair<ChangeKind, const char*> groups[] = {{ChangeKind::kNewFailure, "New failures"},
                                                         {ChangeKind::kPairedRegression, "Paired regressions"},
                                                         {ChangeKind::kFixed, "Fixed"}};
    for (const auto& group : groups) {
      const ChangeKind kind = group.first;
      const auto n = std::count_if(m_.changes.begin(), m_.changes.end(), [&](const ChangeEntry& c) { return c.kind == kind; });
      if (n == 0) continue;
      out_ += fmt::format("<h3 class=\"group\">{} ({})</h3>\n", group.second, n);
      std::size_t shown = 0;
      std::string more;
      for (const auto& c : m_.changes) {
        if (c.kind != kind) continue;
        if (shown++ < kMaxFullChangesPerKind) Change(c);
        else more += (more.empty() ? "" : ", ") + E(c.case_id);
      }
      if (shown > kMaxFullChangesPerKind)
        out_ += fmt::format("<p class=\"more\">{} more, by id: {}</p>\n", shown - kMaxFullChangesPerKind, more);
    }
    out_ += "</section>\n";
  }

  // One change: its status now, the finding, against the previous nightly, and its culprit
  // or why it has none. A paired regression answers to "fail" in the filter whatever its
  // status, so #status=fail shows it.
  void Change(const ChangeEntry& c) {
    std::string kind, status;
    switch (c.kind) {
      case ChangeKind::kNewFailure:
        kind = "fail";
        status = std::string(Word(c.status)) + " new";
        break;
      case ChangeKind::kPairedRegression:
        kind = "regressed";
        status = "fail regressed";
        break;
      case ChangeKind::kFixed:
        kind = "fixed";
        status = "pass fixed";
        break;
    }
    out_ += fmt::format(R"(<article class="item {}" data-suite="{}" data-status="{}"><h3>{} {}</h3>)", kind,
                        E(c.suite), status, Badge(StatusBadgeClass(c.status), std::string(Label(c.status))),
                        E(c.case_id));
    if (!c.finding.empty()) out_ += "<p class=\"finding\">" + E(c.finding) + "</p>";
    std::string before = "no earlier nightly of its run identity";
    if (c.before_commit)
      before = fmt::format("previous nightly: {} in run {} at {}", Label(c.before_status), c.before_run,
                           CommitCell(*c.before_commit));
    out_ += fmt::format(R"(<div class="since">run {} at {}; {}</div>)", c.run_id, CommitCell(c.commit), before);
    if (c.culprit) Culprit(*c.culprit);
    else out_ += "<p class=\"culprit open\">No culprit: " + E(c.no_culprit) + "</p>";
    out_ += "</article>\n";
  }

  void Summary() {
    out_ += "<section id=\"summary\"><h2>Suites <span class=\"count\">latest nightly per suite</span></h2>\n";
    // A lost shard job: the counts below are of part of the nightly's cases.
    for (const auto& gap : m_.incomplete_nightlies)
      out_ += fmt::format(R"(<p class="hint incomplete" role="alert"><strong>Incomplete nightly:</strong> {} — their )"
                          R"(cases are not in this report.</p>)"
                          "\n",
                          E(NightlyGapText(gap)));
    if (!m_.regressions.empty())
      out_ += fmt::format("<p class=\"regressions\">{} regressions found by bisect --auto, {} with a culprit</p>\n",
                          m_.regressions.size(), m_.RegressionsWithCulprit());
    out_ += "<div class=\"cards\">\n";
    for (const auto& s : m_.summary) {
      // AT-RISK annotates passes: it tints no card.
      const char* cls = s.error ? "error" : s.fail ? "fail" : "pass";
      // Every status the suite's cases have (but pass beside others), so the status filter
      // keeps a suite's card when any of its cases is shown: a suite with errors and
      // failures stays in view under "fail" too.
      std::string status;
      for (auto [n, word] : {std::pair{s.error, "error"}, {s.fail, "fail"}, {s.at_risk, "at-risk"}})
        if (n > 0) status += status.empty() ? word : std::string(" ") + word;
      if (status.empty()) status = "pass";
      // A zero count is neutral grey: only what happened has a status colour.
      auto count = [](const char* badge, int n, const char* word) {
        return fmt::format(R"(<span class="badge {}">{} {}</span>)", n ? badge : "b-zero", n, word);
      };
      std::string shards;
      if (!s.shards.empty()) {
        shards = fmt::format(R"(<div class="meta shards">nightly {} · {} shards:)", E(s.nightly), s.shards.size());
        for (std::size_t i = 0; i < s.shards.size(); ++i)
          shards += fmt::format(R"({} <span title="run {}">{} on {}</span>)", i ? "," : "", s.shards[i].run_id,
                                E(s.shards[i].shard), E(s.shards[i].host));
        shards += "</div>";
      }
      for (const auto& r : s.reruns)
        shards += fmt::format(R"(<div class="meta reruns">shard {} attempt {} (run {} on {}): replaced by a re-run )"
                              R"((run {}), kept as a rerun, not counted</div>)",
                              E(r.shard), r.attempt, r.run_id, E(r.host), r.superseded_by);
      out_ += fmt::format(
          R"(<div class="card {}" data-suite="{}" data-status="{}"><h3>{}</h3><div class="counts">{}{}{}{}{}{}</div>)"
          R"(<div class="meta">run {} at {}<br>stack {} · host {} · case time {:.1f} s<br>{} → {}</div>{}</div>)"
          "\n",
          cls, E(s.suite), status, E(s.suite), count("b-pass", s.pass, "pass"), count("b-risk", s.at_risk, "at-risk (of the passes)"),
          count("b-fail", s.fail - s.regressed, "fail"), count("b-fail", s.regressed, "regressed"), count("b-error", s.error, "error"), count("b-skip", s.skip, "skip"),
          s.run_id, CommitCell(s.commit), E(s.stack), E(s.host), s.case_seconds, E(s.started_at), E(s.finished_at),
          shards);
    }
    out_ += "</div></section>\n";
  }

  void Failures() {
    out_ += fmt::format("<section id=\"failures\"><h2>Failures <span class=\"count\">{} in the latest runs</span></h2>\n",
                        m_.failures.size() + m_.failures_listed.size());
    if (m_.failures.empty()) out_ += "<p class=\"none\">No case failed in the latest run of any suite.</p>\n";
    for (const auto& f : m_.failures) {
      const std::string word(Word(f.status));
      out_ += fmt::format(R"(<article class="item {0}" data-suite="{1}" data-status="{0}"><h3>{2} {3}</h3>)", word,
                          E(f.suite), Badge(StatusBadgeClass(f.status), std::string(Label(f.status))),
                          E(f.case_id));
      const std::string where =
          f.shard.empty() ? "" : fmt::format(" (shard {} on {})", E(f.shard), E(f.host));
      out_ += fmt::format(R"(<div class="since">run {}{} at {}; not passing since {}</div>)", f.run_id, where,
                          CommitCell(f.commit), CommitCell(f.failing_since));
      if (f.culprit) Culprit(*f.culprit);
      out_ += "<pre>" + E(f.message) + "</pre>";
      if (f.ops_against_commit) OpDiff(f);
      out_ += "</article>\n";
    }
    ListedFailures();
    out_ += "</section>\n";
  }

  // The failing cases beyond the report's bounds, one block per suite: ids and statuses.
  void ListedFailures() {
    for (std::size_t i = 0; i < m_.failures_listed.size();) {
      const std::string& suite = m_.failures_listed[i].suite;
      std::string ids;
      std::set<std::string> statuses;
      std::size_t count = 0;
      for (; i < m_.failures_listed.size() && m_.failures_listed[i].suite == suite; ++i, ++count) {
        const ListedFailure& f = m_.failures_listed[i];
        statuses.insert(std::string(Word(f.status)));
        ids += fmt::format("{} {} (run {})\n", Label(f.status), E(f.case_id), f.run_id);
      }
      out_ += fmt::format(
          R"(<details class="item listed" data-suite="{}" data-status="{}"><summary>{} more failing cases of {}, )"
          R"(listed by id (the report shows {} per suite and {} in all in full)</summary><pre>{}</pre></details>)"
          "\n",
          E(suite), fmt::join(statuses, " "), count, E(suite), kMaxFullFailuresPerSuite, kMaxFullFailures, ids);
    }
  }

  void OpDiff(const FailureEntry& f) {
    for (const auto& h : f.ops.stale) out_ += "<div class=\"hint\">" + E(StaleHintText(h)) + "</div>";
    if (f.ops.empty()) {
      out_ += fmt::format("<p class=\"since\">op table unchanged against the last passing run {} at {}</p>",
                          f.ops_against_run, CommitCell(*f.ops_against_commit));
      return;
    }
    out_ += fmt::format(
        "<table class=\"ops\"><caption class=\"since\">op table against the last passing run {} at {}: {} added, {} "
        "removed, {} calls changed</caption><thead><tr><th>change</th><th>op</th><th>input shapes</th><th>calls "
        "before</th><th>calls now</th></tr></thead><tbody>",
        f.ops_against_run, CommitCell(*f.ops_against_commit), f.ops.added.size(), f.ops.removed.size(),
        f.ops.changed.size());
    for (auto [rows, cls] : {std::pair{&f.ops.removed, "removed"}, std::pair{&f.ops.added, "added"},
                             std::pair{&f.ops.changed, "changed"}})
      for (const auto& r : *rows)
        out_ += fmt::format(R"(<tr class="{}"><td>{}</td><td><code>{}</code></td><td><code>{}</code></td>)"
                            R"(<td class="num">{}</td><td class="num">{}</td></tr>)",
                            cls, cls, E(r.op), E(r.input_shapes), r.calls_before, r.calls_after);
    out_ += "</tbody></table>";
  }

  void Trends() {
    out_ += fmt::format("<section id=\"trends\"><h2>Trends <span class=\"count\">{} metric cases</span></h2>\n",
                        m_.trends.size());
    if (m_.trends.empty()) out_ += "<p class=\"none\">No case stored a proportion or tolerance metric.</p>\n";
    else
      out_ += "<p class=\"legend\">One point per run, commits in first-parent order (reruns of a commit side by side); "
              "whiskers: 95% interval; dashed red: gate or bound; amber band: values whose interval straddles the gate "
              "(AT-RISK); black marker: a bisect culprit. Hover a point for its commit, value and verdict.</p>\n";
    for (const auto& t : m_.trends) {
      const auto& last = t.points.back();
      std::string status = AtRisk(last.verdict) ? "at-risk" : std::string(Word(last.status));
      out_ += fmt::format(R"(<article class="item" data-suite="{}" data-status="{}"><h3>{} {} <span class="since">{}</span></h3>)",
                          E(t.suite), status, Badge(VerdictClass(last.verdict), last.verdict),
                          E(t.case_id), E(t.metric));
      out_ += TrendSvg(t, m_.commits, o_.commit_url);
      std::string legend = fmt::format("{} runs", t.points.size());
      if (t.omitted) legend += fmt::format(" (the {} older runs are left out)", t.omitted);
      legend += fmt::format("; newest {} = {:.4f}", t.metric, last.value);
      if (last.low && last.high) legend += fmt::format(" [{:.4f}, {:.4f}]", *last.low, *last.high);
      if (t.gate) legend += fmt::format("; gate {:.4f}", *t.gate);
      if (t.band_low) legend += fmt::format("; at-risk band [{:.4f}, {:.4f}]", *t.band_low, *t.band_high);
      if (t.bound) legend += "; fails above 1 (the whole bound used)";
      out_ += "<p class=\"legend\">" + E(legend) + "</p></article>\n";
    }
    out_ += "</section>\n";
  }

  void Flaky() {
    out_ += fmt::format("<section id=\"flaky\"><h2>Flaky thresholds <span class=\"count\">{}, most likely false "
                        "verdict first</span></h2>\n",
                        E(FlakyCount(m_.flaky)));
    if (m_.flaky.empty()) {
      out_ += "<p class=\"none\">No gate, tolerance near its bound or flipping status in the window.</p>\n</section>\n";
      return;
    }
    out_ += "<p class=\"legend\">Three kinds of row: a <b>gate</b> (a case's accuracy against its gate), a "
            "<b>tolerance</b> (a metric using half its bound or more) and a <b>status</b> (a case whose status "
            "disagreed between runs or went back and forth between commits). Each answers one of four questions and "
            "says which: <b>rerun-noise</b> — will a rerun of the same commit flip the verdict? (from the spread of "
            "stored reruns); <b>true-rate</b> — is the true rate on the verdict's side of the gate? (binomial, only "
            "where no reruns are stored); <b>commit-spread</b> — a tolerance without reruns, spread over recent "
            "commits since the newest known change (a bisect culprit, a paired REGRESSED or IMPROVED); "
            "<b>status-flips</b> — the share of runs whose status disagreed, since that change too. Runs with fault "
            "switches (<code>--fault</code>) are never read here.</p>\n";
    out_ += "<table class=\"flaky\"><thead><tr><th class=\"w-p\">P(false verdict)</th><th class=\"w-case\">case</th>"
            "<th class=\"w-th\">threshold</th><th class=\"w-v\">value</th><th class=\"w-verdict\">verdict</th>"
            "<th>evidence, and what would settle it</th></tr></thead><tbody>\n";
    for (const auto& f : m_.flaky) {
      std::string value = f.kind == FlakyKind::kStatus ? fmt::format("{:.0f} % disagree", 100 * f.value)
                                             : fmt::format("{:.4f} vs {:.4g}", f.value, f.threshold);
      out_ += fmt::format(
          R"(<tr data-suite="{}" data-status="flaky {}"><td class="num"><span class="prob">{}</span><span class="q">{}</span></td>)"
          R"(<td>{}<br><span class="since">{}</span></td><td>{}<br><code>{}</code></td><td class="num">{}</td><td>{}</td>)"
          R"(<td>{}<div class="settle">settle: {}</div></td></tr>)"
          "\n",
          E(f.suite), AtRisk(f.verdict) ? "at-risk" : "", Probability(f.estimate.probability),
          Word(f.estimate.question), E(f.case_id), CommitCell(f.commit), E(Word(f.kind)), E(f.metric), E(value),
          Badge(VerdictClass(f.verdict), f.verdict), E(f.detail), E(f.settle));
    }
    out_ += "</tbody></table></section>\n";
  }

  static std::string Probability(double p) {
    if (p == 0) return "0";
    if (p < 0.001) return fmt::format("{:.1e}", p);
    return fmt::format("{:.3f}", p);
  }

  void Flips() {
    out_ += "<section id=\"flips\"><h2>Per-question flips <span class=\"count\">newest run against its baseline</span></h2>\n";
    if (m_.flips.empty()) out_ += "<p class=\"none\">No case with per-question samples has a baseline in the window.</p>\n";
    for (const auto& s : m_.flips) {
      out_ += fmt::format(
          R"(<article class="item" data-suite="{}" data-status="flip"><h3>{}</h3><div class="since">run {} at {} against )"
          R"(baseline run {} at {}: <span class="flip-lost">{} right → wrong</span>, <span class="flip-gain">{} wrong → right</span>{}</div>)",
          E(s.suite), E(s.case_id), s.run_id, CommitCell(s.commit), s.baseline_run,
          CommitCell(s.baseline_commit), s.losses, s.gains,
          s.omitted ? fmt::format(" ({} more not shown)", s.omitted) : std::string());
      if (s.flips.empty()) {
        out_ += "<p class=\"none\">Every paired question agrees.</p></article>\n";
        continue;
      }
      out_ += "<table><thead><tr><th>question</th><th>flip</th><th>expected</th><th>baseline answer</th>"
              "<th>newest answer</th><th>completions</th></tr></thead><tbody>";
      for (const auto& f : s.flips) {
        out_ += fmt::format(
            R"(<tr><td class="num">{}</td><td class="{}">{}</td><td><code>{}</code></td><td><code>{}</code> ({})</td>)"
            R"(<td><code>{}</code> ({})</td><td><details><summary>both completions</summary><div class="cols">)"
            R"(<div><h4>baseline</h4><pre>{}</pre></div><div><h4>newest</h4><pre>{}</pre></div></div></details></td></tr>)",
            E(f.key), f.lost ? "flip-lost" : "flip-gain", f.lost ? "right → wrong" : "wrong → right", E(f.expected),
            E(f.before_extracted), E(Word(f.before_outcome)), E(f.after_extracted), E(Word(f.after_outcome)),
            E(f.before_completion), E(f.after_completion));
      }
      out_ += "</tbody></table></article>\n";
    }
    out_ += "</section>\n";
  }

  void Bisect() {
    out_ += fmt::format("<section id=\"bisect\"><h2>Bisect sessions <span class=\"count\">{}</span></h2>\n",
                        m_.bisect.size());
    if (m_.bisect.empty()) out_ += "<p class=\"none\">No bisect session is stored.</p>\n";
    for (auto it = m_.bisect.rbegin(); it != m_.bisect.rend(); ++it) {
      const auto& b = *it;
      out_ += fmt::format(
          R"(<article class="item" id="bisect-{}"><h3>session {}: {}</h3><div class="since">{} (good) .. {} (bad), {} → {}; )"
          R"(status <b>{}</b>{}, confidence {:.3f}, {} commands run{}</div>)",
          b.id, b.id, E(b.target), Sha(b.good), Sha(b.bad), E(b.started_at), E(b.finished_at), E(b.status),
          b.culprit.empty() ? std::string() : ", culprit " + Sha(b.culprit), b.confidence, b.runs,
          SessionTiming(b) ? "; " + E(TimingWords(*SessionTiming(b))) : "");
      if (auto c = m_.session_culprits.find(b.id); c != m_.session_culprits.end()) out_ += CulpritList(c->second);
      out_ += fmt::format("<details><summary>{} steps</summary><table><thead><tr><th>step</th><th>commit</th><th>source</th>"
                          "<th>run</th><th>exit</th><th>evidence</th><th>decision</th></tr></thead><tbody>",
                          b.steps.size());
      for (const auto& s : b.steps)
        out_ += fmt::format(R"(<tr><td class="num">{}</td><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td>)"
                            R"(<td><code>{}</code></td><td><code>{}</code></td></tr>)",
                            s.step, Sha(s.sha), E(s.source), s.run_id ? std::to_string(*s.run_id) : "",
                            s.exit_code ? std::to_string(*s.exit_code) : "", E(s.evidence_json), E(s.decision_json));
      out_ += "</tbody></table></details></article>\n";
    }
    out_ += "</section>\n";
  }

  const ReportModel& m_;
  const HtmlOptions& o_;
  std::string out_;
};

}  // namespace

std::string ReportHtml(const ReportModel& m, const HtmlOptions& o) { return Html(m, o).Render(); }

}  // namespace harness::reports
