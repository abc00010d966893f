#include "harness/compare/compare.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/results/metric_names.h"
#include "harness/store/resolve_commit.h"
#include "harness/util/git.h"

namespace harness {
namespace {

// The proportion whose direction is known (higher is better): what GSM8K cases, sglang's
// lines and lm-eval's results store (docs/ingest.md).
constexpr const char* kUnpairedGatedMetric = metric_names::kAccuracy;

bool Passed(const std::optional<CaseStatus>& s) { return s == CaseStatus::kPass; }
bool Broke(const std::optional<CaseStatus>& s) { return s == CaseStatus::kFail || s == CaseStatus::kError; }

Result<LoadedCase> Load(CompareReads& store, const StoredCase& c) {
  LoadedCase l{c, {}, {}, {}};
  auto metrics = store.Metrics(c.id);
  if (!metrics) return metrics.error();
  auto ops = store.Ops(c.id);
  if (!ops) return ops.error();
  auto samples = store.Samples(c.id);
  if (!samples) return samples.error();
  l.metrics = std::move(*metrics);
  l.ops = std::move(*ops);
  l.samples = std::move(*samples);
  return l;
}

Result<std::vector<StoredCase>> CasesOf(CompareReads& store, const CompareSide& side) {
  return side.run_id ? store.FinishedCases(side.run_id) : store.NewestCasesAt(side.sha);
}

}  // namespace

bool Comparison::regressed() const {
  return std::any_of(cases.begin(), cases.end(), [](const CaseComparison& c) { return c.regressed; });
}

Result<CompareSide> ResolveSide(CompareReads& store, const std::string& spec) {
  if (spec.rfind("run:", 0) == 0) {
    const std::string digits = spec.substr(4);
    int64_t id = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || id < 1)
      return UsageError(fmt::format("'{}': run:ID takes a positive run id, e.g. run:12", spec));
    auto run = store.Run(id);
    if (!run) return run.error();
    return CompareSide{spec, run->sha, run->id};
  }
  auto commit = ResolveCommit(store, spec);
  if (!commit) return commit.error();
  return CompareSide{spec, commit->sha, 0};
}

CaseComparison CompareCase(const std::string& case_id, const std::optional<LoadedCase>& a,
                           const std::optional<LoadedCase>& b) {
  CaseComparison c;
  c.case_id = case_id;
  if (a) {
    c.a = a->stored.result.status;
    c.run_a = a->stored.run_id;
  }
  if (b) {
    c.b = b->stored.result.status;
    c.run_b = b->stored.run_id;
  }
  static const std::vector<OpRow> kNone;
  c.ops = DiffOpTableRows(a ? a->ops : kNone, b ? b->ops : kNone);

  std::map<std::string, MetricDelta> metrics;
  if (a)
    for (const auto& m : a->metrics) metrics[m.name].a = m;
  if (b)
    for (const auto& m : b->metrics) metrics[m.name].b = m;
  for (auto& [name, d] : metrics) {
    d.name = name;
    c.metrics.push_back(d);
  }

  if (a && b && !a->samples.empty() && !b->samples.empty()) {
    c.paired = CompareToBaseline(a->samples, b->samples);
  } else {
    for (const auto& d : c.metrics) {
      if (!d.a || !d.b || d.a->n <= 0 || d.b->n <= 0 || !d.a->label.empty()) continue;
      const auto proportion = [](double v) { return v >= 0 && v <= 1; };
      if (!proportion(d.a->value) || !proportion(d.b->value)) continue;
      ProportionCheck p{d.name, d.a->value, d.b->value, d.a->n, d.b->n, {}, {}, true};
      p.ci_a = WilsonInterval(std::llround(p.a * static_cast<double>(p.n_a)), p.n_a);
      p.ci_b = WilsonInterval(std::llround(p.b * static_cast<double>(p.n_b)), p.n_b);
      p.overlap = p.ci_a.low <= p.ci_b.high && p.ci_b.low <= p.ci_a.high;
      p.regressed = d.name == kUnpairedGatedMetric && !p.overlap && p.ci_b.high < p.ci_a.low;
      c.unpaired.push_back(p);
    }
  }
  c.regressed = (Passed(c.a) && Broke(c.b)) || (c.paired && c.paired->verdict == BaselineVerdict::kRegressed) ||
                std::any_of(c.unpaired.begin(), c.unpaired.end(), [](const ProportionCheck& p) { return p.regressed; });
  return c;
}

Result<Comparison> CompareStored(CompareReads& store, const CompareSide& a, const CompareSide& b, const CompareFilter& f) {
  const CompareReads::ReadSnapshot snapshot(store);
  Comparison out{a, b, {}};
  std::map<std::string, std::pair<std::optional<StoredCase>, std::optional<StoredCase>>> by_case;
  auto keep = [&](const CaseId& id) {
    if (!f.suite.empty() && id.suite() != f.suite) return false;
    return f.case_glob.empty() || fnmatch(f.case_glob.c_str(), id.str().c_str(), 0) == 0;
  };
  for (auto [side, slot] : {std::pair{&a, 0}, {&b, 1}}) {
    auto cases = CasesOf(store, *side);
    if (!cases) return cases.error();
    if (cases->empty())
      return UsageError(fmt::format("'{}' ({}) has no finished case results", side->spec, ShortSha(side->sha)));
    for (auto& c : *cases) {
      if (!keep(CaseId(c.result.case_id))) continue;  // the id parsed where it is read
      auto& entry = by_case[c.result.case_id];
      (slot == 0 ? entry.first : entry.second) = std::move(c);
    }
  }
  if (by_case.empty()) {
    std::string filter = f.suite.empty() ? "" : "--suite " + f.suite;
    if (!f.case_glob.empty()) filter += (filter.empty() ? "" : " ") + ("--case " + f.case_glob);
    return UsageError(fmt::format("no case matches {} on either side", filter));
  }
  for (const auto& [id, pair] : by_case) {
    std::optional<LoadedCase> la, lb;
    if (pair.first) {
      auto l = Load(store, *pair.first);
      if (!l) return l.error();
      la = std::move(*l);
    }
    if (pair.second) {
      auto l = Load(store, *pair.second);
      if (!l) return l.error();
      lb = std::move(*l);
    }
    out.cases.push_back(CompareCase(id, la, lb));
  }
  return out;
}

}  // namespace harness
