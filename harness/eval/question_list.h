// The questions a partial run evaluates: `harness run --questions FILE`, the file a bisect
// step's {questions} names (docs/gsm8k.md, "Partial runs"). One question key per line, as
// the store's samples name them (GSM8K: the question's 0-based line in the test file,
// written without leading zeros); blank lines and '#' comments (to the end of a line) are
// ignored; a line `*` alone stands for every question. A file that names every question
// (by `*` or one by one) asks for a whole run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "harness/util/error.h"

namespace harness {

struct QuestionList {
  std::vector<int64_t> indices;  // ascending question indices (every one when whole)
  int64_t total = 0;             // questions in the data set
  bool whole() const { return static_cast<int64_t>(indices.size()) == total; }
};

// Reads FILE against a data set of `total` questions. A missing or unreadable file, no key
// at all, a key that is not a question of the data set, a key listed twice and `*` beside
// keys are usage errors (exit 2) naming FILE, and FILE:LINE where there is a line.
Result<QuestionList> LoadQuestionList(const std::filesystem::path& file, int64_t total);

// The same against the GSM8K test set (Gsm8kTestFile(): 1319 questions).
Result<QuestionList> LoadGsm8kQuestionList(const std::filesystem::path& file);

}  // namespace harness
