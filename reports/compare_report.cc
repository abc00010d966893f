#include "reports/compare_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/metric_names.h"
#include "harness/util/git.h"
#include "harness/util/utf8.h"
#include "harness/util/versions.h"

namespace harness::reports {
namespace {

std::string StatusWord(const std::optional<CaseStatus>& s) { return s ? std::string(Label(*s)) : "absent"; }

std::string MetricValue(const std::optional<Metric>& m) {
  if (!m) return "-";
  if (!m->label.empty()) return m->label;
  return fmt::format("{:.4g}", m->value);
}

std::string SideName(const CompareSide& s) {
  return s.run_id ? fmt::format("run {} ({})", s.run_id, ShortSha(s.sha)) : ShortSha(s.sha);
}

std::string PairedLine(const BaselineJudgement& j) {
  return fmt::format("paired: {} (b={} lost, c={} gained of {} paired samples, exact McNemar p={:.4g})",
                     Word(j.verdict), j.test.b, j.test.c, j.paired, j.test.p_value);
}

std::string UnpairedLine(const ProportionCheck& p) {
  return fmt::format("unpaired {}: {:.4g} [{:.3g},{:.3g}] n={} vs {:.4g} [{:.3g},{:.3g}] n={}: Wilson 95% intervals {}",
                     p.name, p.a, p.ci_a.low, p.ci_a.high, p.n_a, p.b, p.ci_b.low, p.ci_b.high, p.n_b,
                     p.overlap     ? "overlap (no evidence of a change)"
                     : p.regressed ? "are disjoint, B below A (regressed)"
                                   : "are disjoint (the rates differ)");
}

Json OpChangesJson(const std::vector<OpRowChange>& rows) {
  Json out = Json::array();
  for (const auto& r : rows)
    out.push_back({{"op", r.op}, {"input_shapes", r.input_shapes}, {"calls_a", r.calls_before}, {"calls_b", r.calls_after}});
  return out;
}

Json OptMetricJson(const std::optional<Metric>& m) {
  if (!m) return nullptr;
  Json j{{"value", m->value}, {"n", m->n}};
  if (m->low) j["low"] = *m->low;
  if (m->high) j["high"] = *m->high;
  if (!m->label.empty()) j["verdict"] = m->label;
  return j;
}

}  // namespace

namespace {

// Timing: noise on a shared machine, so compare counts their changes unless asked.
bool IsTiming(const std::string& name) {
  namespace m = metric_names;
  for (const char* t : {m::kLatencyP50Seconds, m::kLatencyP90Seconds, m::kLatencyP99Seconds, m::kOutputTokensPerSecond,
                        m::kSglangLatencySeconds, m::kSglangOutputThroughput})
    if (name == t) return true;
  return false;
}

// What each run stored of its own pairing, against the baseline it chose when it ran (not
// necessarily A): labelled so it is not read as compare's fresh B-against-A pairing.
bool IsStoredPairing(const std::string& name) {
  namespace m = metric_names;
  for (const char* t : {m::kBaselineVerdict, m::kBaselinePaired, m::kMcNemarB, m::kMcNemarC, m::kMcNemarP, m::kMcNemarMidP})
    if (name == t) return true;
  return false;
}

bool MetricChanged(const MetricDelta& m) {
  const bool numeric = m.a && m.b && m.a->label.empty() && m.b->label.empty();
  return numeric ? m.a->value != m.b->value : MetricValue(m.a) != MetricValue(m.b);
}

// Nothing about the case moved: it is counted, not listed.
bool Unchanged(const CaseComparison& cc) {
  if (cc.a != cc.b || cc.regressed || !cc.ops.empty()) return false;
  if (cc.paired && cc.paired->verdict != BaselineVerdict::kSame) return false;
  for (const auto& p : cc.unpaired)
    if (!p.overlap) return false;
  for (const auto& m : cc.metrics)
    if (MetricChanged(m) && !IsTiming(m.name)) return false;
  return true;
}

std::string OpsText(const OpTableDiff& ops) {
  size_t op_width = 2, shape_width = 12;
  for (const auto* rows : {&ops.added, &ops.removed, &ops.changed})
    for (const auto& r : *rows) {
      op_width = std::max(op_width, r.op.size());
      shape_width = std::max(shape_width, r.input_shapes.size());
    }
  std::string out = fmt::format("  {:<8}  {:<{}}  {:<{}}  {:>7}  {:>7}\n", "OPS", "OP", op_width, "INPUT SHAPES",
                                shape_width, "CALLS A", "CALLS B");
  for (const auto& [what, rows] : {std::pair{"removed", &ops.removed}, {"added", &ops.added}, {"changed", &ops.changed}})
    for (const auto& r : *rows)
      out += fmt::format("  {:<8}  {:<{}}  {:<{}}  {:>7}  {:>7}\n", what, r.op, op_width, r.input_shapes, shape_width,
                         r.calls_before, r.calls_after);
  return out;
}

std::string CaseText(const CaseComparison& cc, bool all) {
  const std::string status = cc.a == cc.b ? StatusWord(cc.a) : fmt::format("{} → {}", StatusWord(cc.a), StatusWord(cc.b));
  std::string out = fmt::format("\n{}  {}{}\n", cc.case_id, status, cc.regressed ? "  REGRESSED" : "");
  if (cc.paired) out += "  " + PairedLine(*cc.paired) + ", B against A, computed now\n";
  for (const auto& p : cc.unpaired) out += "  " + UnpairedLine(p) + "\n";
  int timing = 0;
  for (const auto& m : cc.metrics) {
    if (!MetricChanged(m)) continue;  // unchanged metrics are noise in a diff
    if (IsTiming(m.name) && !all) {
      ++timing;
      continue;
    }
    const bool numeric = m.a && m.b && m.a->label.empty() && m.b->label.empty();
    out += fmt::format("  metric {}{}: {} → {}{}\n", m.name,
                       IsStoredPairing(m.name) ? " (stored: each run against its own baseline)" : "", MetricValue(m.a),
                       MetricValue(m.b), numeric ? fmt::format(" ({:+.4g})", m.b->value - m.a->value) : "");
  }
  if (timing) out += fmt::format("  {} latency or throughput metric(s) changed (--all shows them)\n", timing);
  if (!cc.ops.empty()) out += OpsText(cc.ops);
  for (const auto& h : cc.ops.stale) out += "  " + StaleHintText(h) + "\n";
  return out;
}

}  // namespace

std::string CompareText(const Comparison& c, bool all) {
  int regressed = 0;
  for (const auto& cc : c.cases) regressed += cc.regressed;
  std::string out = fmt::format("A = {}  B = {}  {} case(s), {} regressed\n", SideName(c.a), SideName(c.b),
                                c.cases.size(), regressed);
  std::size_t unchanged = 0;
  for (const auto& cc : c.cases) {
    if (!all && Unchanged(cc)) {
      ++unchanged;
      continue;
    }
    out += CaseText(cc, all);
  }
  if (unchanged) out += fmt::format("\n{} unchanged case(s) not listed (--all lists them)\n", unchanged);
  return TerminalText(out);
}

Json CompareJson(const Comparison& c) {
  auto side = [](const CompareSide& s) {
    Json j{{"spec", s.spec}, {"commit", s.sha}};
    j["run_id"] = s.run_id ? Json(s.run_id) : Json(nullptr);
    return j;
  };
  Json j{{"format_version", kCompareFormat}, {"a", side(c.a)}, {"b", side(c.b)}, {"regressed", c.regressed()},
         {"cases", Json::array()}};
  for (const auto& cc : c.cases) {
    Json cj{{"case", cc.case_id}, {"regressed", cc.regressed}};
    cj["status_a"] = cc.a ? Json(Word(*cc.a)) : Json(nullptr);
    cj["status_b"] = cc.b ? Json(Word(*cc.b)) : Json(nullptr);
    cj["run_a"] = cc.a ? Json(cc.run_a) : Json(nullptr);
    cj["run_b"] = cc.b ? Json(cc.run_b) : Json(nullptr);
    if (cc.paired) {
      cj["paired"] = {{"verdict", Word(cc.paired->verdict)}, {"b", cc.paired->test.b}, {"c", cc.paired->test.c},
                      {"paired", cc.paired->paired}, {"p_value", cc.paired->test.p_value},
                      {"accuracy_delta", cc.paired->accuracy_delta}};
    }
    cj["unpaired"] = Json::array();
    for (const auto& p : cc.unpaired)
      cj["unpaired"].push_back({{"metric", p.name}, {"a", p.a}, {"b", p.b}, {"n_a", p.n_a}, {"n_b", p.n_b},
                                {"ci_a", {p.ci_a.low, p.ci_a.high}}, {"ci_b", {p.ci_b.low, p.ci_b.high}},
                                {"overlap", p.overlap}, {"regressed", p.regressed}});
    cj["metrics"] = Json::array();
    for (const auto& m : cc.metrics) cj["metrics"].push_back({{"name", m.name}, {"a", OptMetricJson(m.a)}, {"b", OptMetricJson(m.b)}});
    cj["ops"] = {{"added", OpChangesJson(cc.ops.added)}, {"removed", OpChangesJson(cc.ops.removed)},
                 {"changed", OpChangesJson(cc.ops.changed)}, {"stale", Json::array()}};
    for (const auto& h : cc.ops.stale)
      cj["ops"]["stale"].push_back({{"from", h.from}, {"to", h.to}, {"calls", h.calls}, {"hint", StaleHintText(h)}});
    j["cases"].push_back(cj);
  }
  return j;
}

}  // namespace harness::reports
