// One outcome per question: correct, wrong, invalid (no number in the output),
// truncated (finish_reason "length": the model ran out of max_tokens) or error (the
// request failed after its retries). Invalid and truncated count as answered-and-wrong
// for accuracy; error does not count as answered.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace harness {

enum class Outcome { kCorrect, kWrong, kInvalid, kTruncated, kError };

std::string_view OutcomeName(Outcome o);
std::optional<Outcome> ParseOutcome(std::string_view name);

struct ScoredAnswer {
  Outcome outcome = Outcome::kInvalid;
  std::string extracted;   // canonical number, "" when none
};

// Scores a completed response against the label (as written in the data set).
ScoredAnswer ScoreGsm8kResponse(std::string_view text, std::string_view finish_reason,
                                std::string_view label);

}  // namespace harness
