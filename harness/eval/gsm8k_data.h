// The GSM8K data set (golden/gsm8k/*.jsonl, MIT, OpenAI): one JSON object per line with
// the string fields "question" and "answer"; the answer is a worked solution with
// calculator annotations <<expr=result>> and a final line "#### N".
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "harness/util/error.h"

namespace harness {

struct Gsm8kItem {
  std::string question;
  std::string answer;   // the full worked solution, annotations included
  std::string label;    // N from the final "#### N", as written (may hold commas or a sign)
};

// Reads a GSM8K JSONL file, up to its first max_items items (a few-shot prefix needs the
// first k of the 7,473-item train file, not all 4 MB of it). A bad line is reported as
// "FILE:LINE: ..." (or FILE:LINE:COL for a JSON syntax error); an empty file is an error too.
Result<std::vector<Gsm8kItem>> LoadGsm8k(const std::filesystem::path& path,
                                         std::size_t max_items = static_cast<std::size_t>(-1));

// Parses line line_number of file; messages name FILE:LINE(:COL).
Result<Gsm8kItem> ParseGsm8kLine(const std::string& line, const std::string& file, int line_number);

// The solution with every <<...>> calculator annotation removed (the data set's README rule).
std::string RemoveCalculatorAnnotations(std::string_view solution);

// The GSM8K files under golden/ (GoldenDir()/gsm8k/).
std::filesystem::path Gsm8kTestFile();
std::filesystem::path Gsm8kTrainFile();

}  // namespace harness
