#include "harness/eval/gsm8k_prompt.h"

#include <fmt/format.h>

namespace harness {

Result<std::string> Gsm8kFewShotPrefix(const std::vector<Gsm8kItem>& shots, int k) {
  if (k < 0 || static_cast<std::size_t>(k) > shots.size())
    return UsageError(fmt::format("shots: {} requested but the shot source has {} items", k, shots.size()));
  std::string prefix;
  for (int i = 0; i < k; ++i)
    prefix += fmt::format("Question: {}\nAnswer: {}\n\n", shots[i].question, shots[i].answer);
  return prefix;
}

std::string Gsm8kPrompt(const std::string& prefix, const std::string& question) {
  return fmt::format("{}Question: {}\nAnswer:", prefix, question);
}

}  // namespace harness
