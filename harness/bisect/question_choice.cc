#include "harness/bisect/question_choice.h"

#include "harness/util/hash.h"

namespace harness::bisect {

bool InControlSet(uint64_t salt, int q, double share) {
  const uint64_t h = SplitMix64(SplitMix64(salt) ^ static_cast<uint64_t>(q));
  return static_cast<double>(h >> 11) * 0x1.0p-53 < share;
}

std::vector<int> ChooseQuestions(int questions, const std::vector<const std::string*>& end_runs,
                                 const FlipRates& rates, uint64_t salt, const QuestionChoice& choice) {
  std::vector<int> out;
  bool any_outcomes = false;
  for (const auto* r : end_runs) any_outcomes = any_outcomes || r->find_first_of("01") != std::string::npos;
  for (int q = 0; q < questions; ++q) {
    bool take = choice.full || !any_outcomes;
    char seen = 0;
    for (const auto* r : end_runs) {
      const char c = q < static_cast<int>(r->size()) ? (*r)[q] : '-';
      if (!IsAnswer(c)) continue;
      if (seen && c != seen) take = true;
      seen = c;
    }
    if (!seen) take = true;  // no end run answered it: nothing is known of it
    if (!rates.empty() && rates.Borderline(q) >= choice.flip_threshold) take = true;
    if (take || InControlSet(salt, q, choice.control_share)) out.push_back(q);
  }
  return out;
}

}  // namespace harness::bisect
