// One outcome per question: correct, wrong, invalid (no number in the output),
// truncated (finish_reason "length": the model ran out of max_tokens) or error (the
// request failed after its retries). Invalid and truncated count as answered-and-wrong
// for accuracy; error does not count as answered.
#pragma once

#include <string>
#include <string_view>

#include "harness/results/results.h"

namespace harness {

struct ScoredAnswer {
  SampleOutcome outcome = SampleOutcome::kInvalid;   // never kError, kPass or kFail
  std::string extracted;   // canonical number, "" when none
};

// Scores a completed response against the label (as written in the data set).
ScoredAnswer ScoreGsm8kResponse(std::string_view text, std::string_view finish_reason,
                                std::string_view label);

}  // namespace harness
