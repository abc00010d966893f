#include "harness/eval/gsm8k_score.h"

#include "harness/eval/answer_extract.h"

namespace harness {

ScoredAnswer ScoreGsm8kResponse(std::string_view text, std::string_view finish_reason,
                                std::string_view label) {
  ScoredAnswer scored;
  const auto extracted = ExtractAnswer(text);
  if (extracted) scored.extracted = extracted->number;
  if (finish_reason == "length") {
    // Cut off by max_tokens: whatever number is there is not the model's final answer.
    scored.outcome = SampleOutcome::kTruncated;
  } else if (!extracted) {
    scored.outcome = SampleOutcome::kInvalid;
  } else {
    const auto expected = CanonicalNumber(label);
    scored.outcome = expected && *expected == extracted->number ? SampleOutcome::kCorrect : SampleOutcome::kWrong;
  }
  return scored;
}

}  // namespace harness
