// The per-question flips: each case with per-question samples, its newest run against its
// baseline, question by question (the questions it lost first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "reports/sections/section.h"

namespace harness::reports {

inline constexpr std::size_t kMaxFlipsPerCase = 60;   // per case: losses first, then gains
inline constexpr std::size_t kMaxCompletionBytes = 1500;  // of each completion shown

struct FlipEntry {
  std::string key;
  bool lost = true;          // right -> wrong (else wrong -> right)
  std::string expected;
  SampleOutcome before_outcome = SampleOutcome::kError, after_outcome = SampleOutcome::kError;
  std::string before_extracted, after_extracted;
  std::string before_completion, after_completion;  // cut at kMaxCompletionBytes
};

struct FlipSet {
  std::string case_id;
  int64_t run_id = 0, baseline_run = 0;
  std::size_t commit = 0, baseline_commit = 0;
  int64_t losses = 0, gains = 0;
  std::vector<FlipEntry> flips;
  std::size_t omitted = 0;
  std::string suite;         // case_id's suite, parsed once where the model is loaded
};

Status LoadFlips(ReportLoad& load);
void FlipsHtml(HtmlPage& page);
std::string FlipsText(const ReportModel& m);
Json FlipsJson(const ReportModel& m);

}  // namespace harness::reports
