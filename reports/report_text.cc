#include "reports/report_text.h"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "harness/util/utf8.h"

namespace harness::reports {
namespace {

std::string ShortCommit(const ReportModel& m, std::size_t commit) { return ShortSha(m.commits[commit].sha); }

std::string SummaryText(const ReportModel& m) {
  std::string out = "\nSUMMARY (latest nightly per suite; at-risk counts passes, regressed counts failures)\n";
  for (const auto& gap : m.incomplete_nightlies)
    out += "  WARNING: incomplete " + NightlyGapText(gap) + ": their cases are not in this report\n";
  out += fmt::format("  {:<24} {:>5} {:>7} {:>5} {:>9} {:>5} {:>5}  {:<12}  {}\n", "suite", "pass", "at-risk", "fail",
                     "regressed", "error", "skip", "commit", "run");
  for (const auto& s : m.summary) {
    out += fmt::format("  {:<24} {:>5} {:>7} {:>5} {:>9} {:>5} {:>5}  {:<12}  {} ({}, {:.1f} s)\n", s.suite, s.pass,
                       s.at_risk, s.fail, s.regressed, s.error, s.skip, ShortCommit(m, s.commit), s.run_id, s.stack,
                       s.case_seconds);
    if (!s.shards.empty()) {
      out += fmt::format("    nightly {}, {} shards:", s.nightly, s.shards.size());
      for (std::size_t i = 0; i < s.shards.size(); ++i)
        out += fmt::format("{} {} (run {}, {})", i ? "," : "", s.shards[i].shard, s.shards[i].run_id, s.shards[i].host);
      out += "\n";
    }
    for (const auto& r : s.reruns)
      out += fmt::format("    shard {} attempt {} (run {}, {}): replaced by a re-run (run {}), kept as a rerun, not counted\n",
                         r.shard, r.attempt, r.run_id, r.host, r.superseded_by);
  }
  return out;
}

// What changed since the previous nightly: each case with its finding and culprit, or why none.
std::string ChangesText(const ReportModel& m) {
  std::string out = fmt::format("\nCHANGES SINCE THE PREVIOUS NIGHTLY ({})\n", m.changes.size());
  if (m.changes.empty()) out += "  none: no new failure, no paired regression, no fix\n";
  // Per kind, by its word: the listed-by-id lines come in the words' order.
  std::map<std::string_view, std::size_t> shown;
  std::map<std::string_view, std::string> more;
  for (const auto& c : m.changes) {
    const std::string_view kind = Word(c.kind);
    if (shown[kind]++ >= kMaxFullChangesPerKind) {
      more[kind] += (more[kind].empty() ? "" : ", ") + c.case_id;
      continue;
    }
    out += fmt::format("  {} {} {} at {} (run {})", kind, Label(c.status), c.case_id, ShortCommit(m, c.commit), c.run_id);
    if (c.before_commit)
      out += fmt::format("; previous nightly {} at {} (run {})", Label(c.before_status), ShortCommit(m, *c.before_commit),
                         c.before_run);
    out += "\n";
    if (!c.finding.empty()) out += "    " + c.finding + "\n";
    out += "    " + (c.culprit ? CulpritWords(*c.culprit) : "no culprit: " + c.no_culprit) + "\n";
  }
  for (const auto& [kind, ids] : more)
    out += fmt::format("  {} more {}, by id: {}\n", shown[kind] - kMaxFullChangesPerKind, kind, ids);
  return out;
}

std::string FailureText(const ReportModel& m, const FailureEntry& f) {
  std::string out = fmt::format("  {} {} at {} (run {}{}), not passing since {}\n", Label(f.status), f.case_id,
                                ShortCommit(m, f.commit), f.run_id,
                                f.shard.empty() ? "" : fmt::format(", shard {} on {}", f.shard, f.host),
                                ShortCommit(m, f.failing_since));
  if (f.culprit) out += "    " + CulpritWords(*f.culprit) + "\n";
  out += "    " + FirstLine(f.message) + "\n";
  if (f.ops_against_commit) {
    for (const auto& r : f.ops.removed) out += fmt::format("    - {} {} calls {}\n", r.op, r.input_shapes, r.calls_before);
    for (const auto& r : f.ops.added) out += fmt::format("    + {} {} calls {}\n", r.op, r.input_shapes, r.calls_after);
    for (const auto& r : f.ops.changed)
      out += fmt::format("    ~ {} {} calls {} -> {}\n", r.op, r.input_shapes, r.calls_before, r.calls_after);
    for (const auto& h : f.ops.stale) out += "    hint: " + StaleHintText(h) + "\n";
    if (!f.ops.empty())
      out += fmt::format("    (op table against the last passing run at {})\n", ShortCommit(m, *f.ops_against_commit));
  }
  return out;
}

std::string FailuresText(const ReportModel& m) {
  std::string out;
  if (!m.regressions.empty())
    out += fmt::format("\n{} regressions found by bisect --auto, {} with a culprit\n", m.regressions.size(),
                       m.RegressionsWithCulprit());
  out += fmt::format("\nFAILURES ({})\n", m.failures.size() + m.failures_listed.size());
  if (m.failures.empty()) out += "  none in the latest runs\n";
  for (const auto& f : m.failures) out += FailureText(m, f);
  if (!m.failures_listed.empty())
    out += fmt::format("  {} more, listed by id (the report shows {} per suite and {} in all in full):\n",
                       m.failures_listed.size(), kMaxFullFailuresPerSuite, kMaxFullFailures);
  for (const auto& f : m.failures_listed) out += fmt::format("    {} {} (run {})\n", Label(f.status), f.case_id, f.run_id);
  return out;
}

std::string FlakyText(const ReportModel& m) {
  std::string out = fmt::format("\nFLAKY THRESHOLDS ({}, most likely false verdict first)\n", FlakyCount(m.flaky));
  if (m.flaky.empty()) out += "  none\n";
  for (const auto& f : m.flaky) {
    out += fmt::format("  P={:<9.3g} [{}] {} {} ({}) {}\n", f.estimate.probability, Word(f.estimate.question),
                       f.case_id, f.metric, Word(f.kind), f.verdict);
    out += "    " + f.detail + "\n    settle: " + f.settle + "\n";
  }
  return out;
}

std::string TrendsText(const ReportModel& m) {
  std::string out = fmt::format("\nTRENDS ({})\n", m.trends.size());
  for (const auto& t : m.trends) {
    const auto [lo, hi] = std::minmax_element(t.points.begin(), t.points.end(),
                                              [](const TrendPoint& a, const TrendPoint& b) { return a.value < b.value; });
    out += fmt::format("  {} {}: {} runs, first {:.4f} at {}, newest {:.4f} at {} ({}), min {:.4f}, max {:.4f}", t.case_id,
                       t.metric, t.points.size(), t.points.front().value, ShortCommit(m, t.points.front().commit),
                       t.points.back().value, ShortCommit(m, t.points.back().commit), t.points.back().verdict, lo->value,
                       hi->value);
    if (t.gate) out += fmt::format(", gate {:.4f}", *t.gate);
    for (const auto& c : t.culprits) out += fmt::format(", culprit {}", ShortCommit(m, c.commit));
    out += "\n";
  }
  return out;
}

std::string FlipsText(const ReportModel& m) {
  std::string out = "\nPER-QUESTION FLIPS (newest run against its baseline)\n";
  if (m.flips.empty()) out += "  none\n";
  for (const auto& s : m.flips) {
    out += fmt::format("  {}: {} right->wrong, {} wrong->right at {} against {}\n", s.case_id, s.losses, s.gains,
                       ShortCommit(m, s.commit), ShortCommit(m, s.baseline_commit));
    for (const auto& f : s.flips)
      out += fmt::format("    q{} {}: expected {}, baseline {}, newest {}\n", f.key,
                         f.lost ? "right->wrong" : "wrong->right", f.expected, f.before_extracted, f.after_extracted);
    if (s.omitted) out += fmt::format("    ... {} more\n", s.omitted);
  }
  return out;
}

std::string BisectText(const ReportModel& m) {
  std::string out = fmt::format("\nBISECT SESSIONS ({})\n", m.bisect.size());
  for (const auto& b : m.bisect) {
    const auto timing = SessionTiming(b);
    out += fmt::format("  {}: {} {}..{} -> {}{} (confidence {:.3f}, {} steps{})\n", b.id, b.target, ShortSha(b.good),
                       ShortSha(b.bad), b.status, b.culprit.empty() ? "" : " " + ShortSha(b.culprit), b.confidence,
                       b.steps.size(), timing ? "; " + TimingWords(*timing) : "");
    if (auto c = m.session_culprits.find(b.id); c != m.session_culprits.end()) {
      out += fmt::format("    {} culprits in the range, in first-parent order:\n", c->second.size());
      for (std::size_t i = 0; i < c->second.size(); ++i)
        out += fmt::format("      {}. {}\n", i + 1, CulpritChangeWords(c->second[i]));
    }
  }
  return out;
}

}  // namespace

std::string ReportText(const ReportModel& m) {
  std::string out = fmt::format("{}\nharness report: {} commits ({} .. {}), {} runs\n", m.night.Line(), m.commits.size(),
                                ShortSha(m.commits.front().sha), ShortSha(m.commits.back().sha), m.runs);
  out += ChangesText(m);
  out += FailuresText(m);
  out += SummaryText(m);
  out += FlakyText(m);
  out += TrendsText(m);
  out += FlipsText(m);
  out += BisectText(m);
  return TerminalText(out);
}

}  // namespace harness::reports
