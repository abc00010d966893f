#include "harness/bisect/step_exit.h"

#include <fmt/format.h>

#include "harness/util/utf8.h"

namespace harness::bisect {

ExitMeaning MeaningOfExit(int64_t code, bool status_target) {
  if (code < 0 || code >= 128) return ExitMeaning::kAbort;
  if (!status_target) return ExitMeaning::kUntestable;
  if (code == 0) return ExitMeaning::kGood;
  if (code == 125) return ExitMeaning::kSkip;
  if (code == 2 || code == 3 || code == 126 || code == 127) return ExitMeaning::kUntestable;
  return ExitMeaning::kBad;
}

std::string ExitWords(int64_t code) {
  switch (code) {
    case 2: return "exit 2 (the harness's usage error)";
    case 3: return "exit 3 (the harness's infrastructure error)";
    case 125: return "exit 125 (the command cannot test this commit)";
    case 126: return "exit 126 (the command cannot execute)";
    case 127: return "exit 127 (command not found)";
    default: return fmt::format("exit {}", code);
  }
}

std::string StderrTail(std::string_view err) {
  std::string_view tail = err;
  if (tail.size() > kStderrTailBytes) tail = tail.substr(tail.size() - kStderrTailBytes);
  // A cut through a UTF-8 sequence becomes one U+FFFD; the rest reads as written.
  std::string out = ValidUtf8(tail);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace harness::bisect
