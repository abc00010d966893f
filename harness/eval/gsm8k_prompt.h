// GSM8K prompts in the anchors' common text format (sglang, vLLM, lm-eval):
//   "Question: {q}\nAnswer: {full solution}" shots separated by a blank line, then
//   "Question: {q}\nAnswer:".
// Shots are the first k items of the train split, never test items. In chat mode the
// same text is sent as one user message (the client wraps it).
#pragma once

#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/eval/gsm8k_data.h"

namespace harness {

// The k-shot block (ending in a blank line), from shots[0:k]; k = 0 gives "".
Result<std::string> Gsm8kFewShotPrefix(const std::vector<Gsm8kItem>& shots, int k);

// prefix + "Question: {question}\nAnswer:".
std::string Gsm8kPrompt(const std::string& prefix, const std::string& question);

}  // namespace harness
