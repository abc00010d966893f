#include "harness/bisect/bisect_words.h"

#include <array>

#include "harness/results/word_table.h"

namespace harness::bisect {
namespace {

constexpr std::array<Verdict, 3> kFinished{Verdict::kCulprit, Verdict::kNoCulprit, Verdict::kAmbiguous};

constexpr WordTable<StepVerdict, 4> kStepVerdictWords{{
    {StepVerdict::kGood, "good"},
    {StepVerdict::kBad, "bad"},
    {StepVerdict::kUnknown, "unknown"},
    {StepVerdict::kSkip, "skip"},
}};
static_assert(IsOneWordPerValue(kStepVerdictWords));

constexpr WordTable<LogLineKind, 2> kLogLineKindWords{{
    {LogLineKind::kSession, "session"},
    {LogLineKind::kStep, "step"},
}};
static_assert(IsOneWordPerValue(kLogLineKindWords));

}  // namespace

std::string_view Word(StepVerdict v) { return WordIn(kStepVerdictWords, v); }
std::string_view Word(LogLineKind k) { return WordIn(kLogLineKindWords, k); }
std::optional<LogLineKind> ParseLogLineKind(std::string_view word) { return ParseIn(kLogLineKindWords, word); }

StepVerdict StepVerdictOf(double p_bad, bool skipped, double confidence) {
  if (skipped) return StepVerdict::kSkip;
  if (p_bad >= confidence) return StepVerdict::kBad;
  if (p_bad <= 1 - confidence) return StepVerdict::kGood;
  return StepVerdict::kUnknown;
}

SessionStatus StatusOf(Verdict v) {
  switch (v) {
    case Verdict::kSearching: return SessionStatus::kRunning;
    case Verdict::kCulprit: return SessionStatus::kCulprit;
    case Verdict::kNoCulprit: return SessionStatus::kNoCulprit;
    case Verdict::kAmbiguous: break;
  }
  return SessionStatus::kAmbiguous;
}

std::optional<Verdict> FinishedVerdict(SessionStatus s) {
  for (Verdict v : kFinished)
    if (StatusOf(v) == s) return v;
  return std::nullopt;
}

}  // namespace harness::bisect
