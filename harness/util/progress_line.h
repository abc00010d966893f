// Progress of long work on stderr, so stdout stays the answer: on a terminal one line
// rewritten in place (and colour, unless NO_COLOR is set), in a pipe or a log one line per
// event and never an escape sequence.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace harness {

class ProgressLine {
 public:
  enum class Colour { kNone, kGreen, kRed, kYellow };

  // A terminal is isatty(out); colour is a terminal's unless $NO_COLOR is set and not empty
  // (no-color.org).
  explicit ProgressLine(std::FILE* out = stderr);
  // For tests and callers that know better.
  ProgressLine(std::FILE* out, bool terminal, bool colour);
  ~ProgressLine();  // ends a rewritten line, so what follows starts on a line of its own
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // One event: text made safe for a terminal (TerminalText), on a terminal cut to its width.
  void Show(std::string_view text);
  // text in colour on a colour terminal, else as it is; for a word inside Show's text.
  std::string Paint(std::string_view text, Colour colour) const;
  // Ends a rewritten line (a no-op in a pipe); the next Show starts a new one.
  void Finish();
  // Erases a rewritten line (a no-op in a pipe), before the command writes its answer to a
  // stdout that shares the terminal.
  void Clear();

  bool terminal() const { return terminal_; }

 private:
  std::FILE* out_;
  bool terminal_ = false;
  bool colour_ = false;
  bool open_ = false;  // a rewritten line is on the terminal
};

// A duration as a person reads it: "45s", "1m05s", "2h03m".
std::string DurationWords(double seconds);

}  // namespace harness
