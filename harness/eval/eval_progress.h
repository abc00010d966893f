// The eval loop's progress on stderr, through the one ProgressLine (harness/util/progress_line.h):
// on a terminal one line rewritten in place (at most ten times a second); otherwise a plain
// line every interval, so CI logs stay readable.
//   gsm8k/test_gsm8k_accuracy_1  640/1319  acc 0.925  212.3 req/s  ETA 3s
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/util/progress_line.h"

namespace harness {

class EvalProgress {
 public:
  // already_done: questions finished by an earlier (resumed) run; they count toward
  // done/total but not toward the request rate. A terminal is isatty(out).
  EvalProgress(std::string label, int64_t total, int64_t already_done, std::FILE* out);
  // For tests: the terminal said, and how often a plain line is printed.
  EvalProgress(std::string label, int64_t total, int64_t already_done, std::FILE* out, bool terminal,
               double plain_interval_s = 10);

  void Record(bool answered, bool correct);
  // Prints the final line (and ends the in-place line on a terminal).
  void Finish();

  std::string Render() const;

 private:
  void Print();

  std::string label_;
  int64_t total_, already_done_;
  int64_t done_ = 0, answered_ = 0, correct_ = 0;
  ProgressLine line_;
  double plain_interval_s_;
  std::chrono::steady_clock::time_point start_, last_print_;
};

}  // namespace harness
