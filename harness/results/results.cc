#include "harness/results/results.h"

#include <array>
#include <utility>

#include "harness/results/word_table.h"

namespace harness {
namespace {

struct StatusName {
  CaseStatus status;
  std::string_view word, label;
};

// The one table of status words (store, JSON, JUnit, text and HTML all use it).
constexpr std::array<StatusName, 5> kStatusNames{{
    {CaseStatus::kRunning, "running", "RUNNING"},
    {CaseStatus::kPass, "pass", "PASS"},
    {CaseStatus::kFail, "fail", "FAIL"},
    {CaseStatus::kError, "error", "ERROR"},
    {CaseStatus::kSkip, "skip", "SKIP"},
}};

CaseStatus AsCase(RunStatus s) {
  switch (s) {
    case RunStatus::kRunning: return CaseStatus::kRunning;
    case RunStatus::kPass: return CaseStatus::kPass;
    case RunStatus::kFail: return CaseStatus::kFail;
    case RunStatus::kError: return CaseStatus::kError;
  }
  return CaseStatus::kError;
}

const StatusName& NameOf(CaseStatus s) {
  for (const auto& n : kStatusNames)
    if (n.status == s) return n;
  return kStatusNames[3];
}

}  // namespace

std::string_view Word(CaseStatus s) { return NameOf(s).word; }
std::string_view Word(RunStatus s) { return NameOf(AsCase(s)).word; }
std::string_view Label(CaseStatus s) { return NameOf(s).label; }
std::string_view Label(RunStatus s) { return NameOf(AsCase(s)).label; }

std::optional<CaseStatus> ParseCaseStatus(std::string_view word) {
  for (const auto& n : kStatusNames)
    if (n.word == word) return n.status;
  return std::nullopt;
}

std::optional<RunStatus> ParseRunStatus(std::string_view word) {
  for (RunStatus s : {RunStatus::kRunning, RunStatus::kPass, RunStatus::kFail, RunStatus::kError})
    if (Word(s) == word) return s;
  return std::nullopt;
}

namespace {

// The one table of words of each verdict, in enum order.
constexpr WordTable<GateVerdict, 3> kGateVerdictWords{{
    {GateVerdict::kPass, "PASS"},
    {GateVerdict::kAtRisk, "AT-RISK"},
    {GateVerdict::kFail, "FAIL"},
}};
static_assert(IsOneWordPerValue(kGateVerdictWords));
constexpr WordTable<BaselineVerdict, 3> kBaselineVerdictWords{{
    {BaselineVerdict::kSame, "SAME"},
    {BaselineVerdict::kImproved, "IMPROVED"},
    {BaselineVerdict::kRegressed, "REGRESSED"},
}};
static_assert(IsOneWordPerValue(kBaselineVerdictWords));

}  // namespace

std::string_view Word(GateVerdict v) { return WordIn(kGateVerdictWords, v); }
std::string_view Word(BaselineVerdict v) { return WordIn(kBaselineVerdictWords, v); }
std::optional<GateVerdict> ParseGateVerdict(std::string_view word) { return ParseIn(kGateVerdictWords, word); }
std::optional<BaselineVerdict> ParseBaselineVerdict(std::string_view word) {
  return ParseIn(kBaselineVerdictWords, word);
}

namespace {

// The one table of sample outcome words, in enum order.
constexpr WordTable<SampleOutcome, 7> kSampleOutcomeWords{{
    {SampleOutcome::kCorrect, "correct"},
    {SampleOutcome::kWrong, "wrong"},
    {SampleOutcome::kInvalid, "invalid"},
    {SampleOutcome::kTruncated, "truncated"},
    {SampleOutcome::kError, "error"},
    {SampleOutcome::kPass, "pass"},
    {SampleOutcome::kFail, "fail"},
}};
static_assert(IsOneWordPerValue(kSampleOutcomeWords));

}  // namespace

std::string_view Word(SampleOutcome o) { return WordIn(kSampleOutcomeWords, o); }
std::optional<SampleOutcome> ParseSampleOutcome(std::string_view word) { return ParseIn(kSampleOutcomeWords, word); }
std::string SampleOutcomeWords() { return WordsOf(kSampleOutcomeWords); }

bool IsSuccess(SampleOutcome o) { return o == SampleOutcome::kCorrect || o == SampleOutcome::kPass; }

Metric VerdictMetric(const std::string& name, GateVerdict v) {
  return Metric{name, static_cast<double>(v), 0, {}, {}, std::string(Word(v))};
}

Metric VerdictMetric(const std::string& name, BaselineVerdict v) {
  return Metric{name, static_cast<double>(v), 0, {}, {}, std::string(Word(v))};
}

void StatusCounts::Add(CaseStatus s) {
  switch (s) {
    case CaseStatus::kRunning: ++running; break;
    case CaseStatus::kPass: ++pass; break;
    case CaseStatus::kFail: ++fail; break;
    case CaseStatus::kError: ++error; break;
    case CaseStatus::kSkip: ++skip; break;
  }
}

RunStatus StatusCounts::Overall() const {
  if (error > 0) return RunStatus::kError;
  if (fail > 0) return RunStatus::kFail;
  return RunStatus::kPass;
}

StatusCounts CountStatuses(const std::vector<CaseResult>& cases) {
  StatusCounts c;
  for (const auto& r : cases) c.Add(r.status);
  return c;
}

}  // namespace harness
