#include "harness/eval/gsm8k_score.h"

#include <array>

#include "harness/eval/answer_extract.h"

namespace harness {
namespace {
constexpr std::array<std::string_view, 5> kOutcomeNames = {"correct", "wrong", "invalid", "truncated", "error"};
}

std::string_view OutcomeName(Outcome o) { return kOutcomeNames[static_cast<std::size_t>(o)]; }

std::optional<Outcome> ParseOutcome(std::string_view name) {
  for (std::size_t i = 0; i < kOutcomeNames.size(); ++i)
    if (kOutcomeNames[i] == name) return static_cast<Outcome>(i);
  return std::nullopt;
}

ScoredAnswer ScoreGsm8kResponse(std::string_view text, std::string_view finish_reason,
                                std::string_view label) {
  ScoredAnswer scored;
  const auto extracted = ExtractAnswer(text);
  if (extracted) scored.extracted = extracted->number;
  if (finish_reason == "length") {
    // Cut off by max_tokens: whatever number is there is not the model's final answer.
    scored.outcome = Outcome::kTruncated;
  } else if (!extracted) {
    scored.outcome = Outcome::kInvalid;
  } else {
    const auto expected = CanonicalNumber(label);
    scored.outcome = expected && *expected == extracted->number ? Outcome::kCorrect : Outcome::kWrong;
  }
  return scored;
}

}  // namespace harness
