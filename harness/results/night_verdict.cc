#include "harness/results/night_verdict.h"

#include "harness/results/metric_set.h"

namespace harness {
namespace {

std::string Plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace

std::string_view Word(NightVerdict v) {
  switch (v) {
    case NightVerdict::kPass: return "PASS";
    case NightVerdict::kFail: return "FAIL";
    case NightVerdict::kRegressed: return "REGRESSED";
    case NightVerdict::kIncomplete: break;
  }
  return "INCOMPLETE";
}

bool HasAtRiskGate(const std::vector<Metric>& metrics) { return MetricSet(metrics).Gate() == GateVerdict::kAtRisk; }

bool IsPairedRegressionOnly(CaseStatus status, const std::vector<Metric>& metrics) {
  if (status != CaseStatus::kFail) return false;
  const MetricSet set(metrics);
  return set.Paired() == BaselineVerdict::kRegressed && set.Gate() != GateVerdict::kFail;
}

void NightCounts::Add(CaseStatus status, const std::vector<Metric>& metrics) {
  switch (status) {
    case CaseStatus::kPass:
      ++pass;
      if (HasAtRiskGate(metrics)) ++at_risk;
      break;
    case CaseStatus::kFail: (IsPairedRegressionOnly(status, metrics) ? regressed : fail)++; break;
    case CaseStatus::kSkip: ++skip; break;
    case CaseStatus::kError:
    case CaseStatus::kRunning: ++error; break;  // never finished: it could not run either
  }
}

NightCounts& NightCounts::operator+=(const NightCounts& o) {
  pass += o.pass;
  at_risk += o.at_risk;
  fail += o.fail;
  regressed += o.regressed;
  error += o.error;
  skip += o.skip;
  missing_shards += o.missing_shards;
  not_stored = not_stored || o.not_stored;
  return *this;
}

int NightSummary::ExitCode() const {
  switch (verdict) {
    case NightVerdict::kPass: return 0;
    case NightVerdict::kFail:
    case NightVerdict::kRegressed: return 1;
    case NightVerdict::kIncomplete: break;
  }
  return 3;
}

std::string NightSummary::Line() const {
  const NightCounts& n = counts;
  std::string line = "harness nightly: " + std::string(Word(verdict)) + " - " + std::to_string(n.pass) + " passed";
  if (n.at_risk > 0) line += " (" + std::to_string(n.at_risk) + " AT-RISK)";
  line += ", " + std::to_string(n.fail) + " failed, " + std::to_string(n.regressed) + " regressed, " +
          Plural(n.error, "error", "errors") + ", " + std::to_string(n.skip) + " skipped";
  if (n.missing_shards > 0) line += ", " + Plural(static_cast<int>(n.missing_shards), "shard", "shards") + " missing";
  if (n.not_stored) line += ", results not stored";
  return line;
}

NightSummary JudgeNight(const NightCounts& counts) {
  NightSummary s;
  s.counts = counts;
  if (counts.error > 0 || counts.missing_shards > 0 || counts.not_stored) s.verdict = NightVerdict::kIncomplete;
  else if (counts.fail > 0) s.verdict = NightVerdict::kFail;
  else if (counts.regressed > 0) s.verdict = NightVerdict::kRegressed;
  else s.verdict = NightVerdict::kPass;
  return s;
}

NightSummary JudgeNight(const std::vector<CaseResult>& cases, int64_t missing_shards) {
  NightCounts counts;
  for (const auto& c : cases) counts.Add(c);
  counts.missing_shards = missing_shards;
  return JudgeNight(counts);
}

}  // namespace harness
