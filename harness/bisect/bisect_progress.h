// What a bisect says while it runs: an event as each command starts and as its step is
// recorded (against a real server a step is a launch plus an eval: minutes to hours), and
// the same for `bisect --auto`'s confirming reruns. The session only reports them;
// bisect_output.h words them and util/progress_line.h prints them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "harness/bisect/bisect_words.h"
#include "harness/util/progress_line.h"

namespace harness::bisect {

struct BisectProgress {
  enum class Event { kStepStart, kStepEnd, kConfirmStart, kConfirmEnd };
  Event event = Event::kStepStart;
  std::string sha, subject;      // the commit the command runs at
  int step = 0;                  // the session's step, from 1 (steps from stored evidence count);
                                 // confirmations: the rerun, from 1
  int runs = 0, max_runs = 0;    // commands run so far (at an end, this one included) and the budget
  int64_t questions = 0;         // questions the commands' runs evaluated so far
  std::string leading;           // the leading hypothesis: its first bad commit, "" for no culprit
  double leading_p = 0;          // its posterior probability
  StepVerdict verdict = StepVerdict::kUnknown;  // a step's end: the step's verdict
  std::string reproduced;        // a confirming rerun's end: what it showed ("reproduced 1 of 2 regressions")
  std::optional<int64_t> exit_code;  // an end: the command's
  // A step's end: the step stored results of the target, which are its evidence whatever
  // the command exited (docs/bisect.md, "What a step's exit means").
  bool stored_results = false;
};

using BisectObserver = std::function<void(const BisectProgress&)>;

// One event in words, with the time since the work began and, when known, an estimate of
// what is left:
//   bisect step 3: running the command at 3f2a9c1d2e4f "subject" | leading: first bad
//   3f2a9c1d2e4f p=0.620 | 2/60 runs, 400 questions | 1m05s elapsed, at most 29m05s left
std::string BisectProgressText(const BisectProgress& p, double elapsed_s, std::optional<double> left_s,
                               const ProgressLine& paint);

// Prints each event on a ProgressLine. What is left is an upper bound: the commands the
// budget still allows at the mean time of the commands so far (the search usually answers
// sooner); unknown before the first command ends.
class BisectProgressPrinter {
 public:
  explicit BisectProgressPrinter(ProgressLine& line);
  void operator()(const BisectProgress& p);
  BisectObserver Observer() {
    return [this](const BisectProgress& p) { (*this)(p); };
  }

 private:
  ProgressLine& line_;
  std::chrono::steady_clock::time_point start_, command_start_;
  double command_seconds_ = 0;
  int commands_ = 0;
};

}  // namespace harness::bisect
