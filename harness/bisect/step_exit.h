// What a bisect command's step says when it stored no result of the target: its exit code
// read in git bisect run's convention, with the harness's own error codes and the shell's
// "cannot execute" and "not found" read as "this step could not test the commit" rather
// than as a failing commit (docs/bisect.md, "What a step's exit means"). Shared by the
// bisect and by bisect --auto's confirming reruns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace harness::bisect {

enum class ExitMeaning {
  kGood,        // 0
  kBad,         // 1, 4..124
  kSkip,        // 125: the command says it cannot test the commit
  kUntestable,  // 2, 3 (the harness's usage and infrastructure errors), 126, 127; any code for a metric
  kAbort,       // >= 128 or negative: stop the bisect
};

// status_target: the target is the cases' pass/fail statuses, so an exit code can stand for
// one; a metric target needs a stored value and an exit code alone never is one.
ExitMeaning MeaningOfExit(int64_t code, bool status_target);

// "exit 2 (the harness's usage error)", "exit 127 (command not found)", "exit 1".
std::string ExitWords(int64_t code);

// The last kStderrTailBytes of a command's stderr, valid UTF-8, for a message or a step's
// evidence: what the command said about why it could not run.
inline constexpr std::size_t kStderrTailBytes = 1000;
std::string StderrTail(std::string_view err);

}  // namespace harness::bisect
