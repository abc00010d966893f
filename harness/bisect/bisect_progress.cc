#include "harness/bisect/bisect_progress.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/bisect/step_exit.h"
#include "harness/util/git.h"
#include "harness/util/utf8.h"

namespace harness::bisect {

namespace {

bool IsStart(BisectProgress::Event e) {
  return e == BisectProgress::Event::kStepStart || e == BisectProgress::Event::kConfirmStart;
}

// The step's exit in the words a step's evidence and messages use (step_exit.h). Where the
// verdict came from stored results and the code alone says neither good nor bad (a wrapper
// that exited 2 after `harness run` stored them), the line says which one spoke.
std::string ExitNote(const BisectProgress& p) {
  if (!p.exit_code) return "";
  const bool code_is_a_verdict = *p.exit_code == 0 || *p.exit_code == 1;
  return fmt::format(" ({}{})", p.stored_results && !code_is_a_verdict ? "from its stored results; " : "",
                     ExitWords(*p.exit_code));
}

// What the event is about: the step or rerun, the commit, what ran or what it showed.
std::string Head(const BisectProgress& p, const ProgressLine& paint) {
  const std::string at = ShortSha(p.sha);
  const std::string subject =
      p.subject.empty() ? "" : fmt::format(" \"{}\"", TerminalText(Utf8Prefix(p.subject, 60)));
  switch (p.event) {
    case BisectProgress::Event::kStepStart:
      return fmt::format("bisect step {}: running the command at {}{}", p.step, at, subject);
    case BisectProgress::Event::kStepEnd: {
      const auto colour = p.verdict == StepVerdict::kBad    ? ProgressLine::Colour::kRed
                          : p.verdict == StepVerdict::kGood ? ProgressLine::Colour::kGreen
                                                            : ProgressLine::Colour::kYellow;
      return fmt::format("bisect step {}: {} is {}{}", p.step, at, paint.Paint(Word(p.verdict), colour), ExitNote(p));
    }
    case BisectProgress::Event::kConfirmStart:
      return fmt::format("bisect --auto confirm {}: rerunning the bad commit {}", p.step, at);
    case BisectProgress::Event::kConfirmEnd:
      return fmt::format("bisect --auto confirm {}: {} {}{}", p.step, at, p.reproduced, ExitNote(p));
  }
  return "";
}

}  // namespace

std::string BisectProgressText(const BisectProgress& p, double elapsed_s, std::optional<double> left_s,
                               const ProgressLine& paint) {
  std::string out = Head(p, paint);
  const bool step = p.event == BisectProgress::Event::kStepStart || p.event == BisectProgress::Event::kStepEnd;
  if (step)
    out += p.leading.empty() ? fmt::format(" | leading: no culprit p={:.3f}", p.leading_p)
                             : fmt::format(" | leading: first bad {} p={:.3f}", ShortSha(p.leading), p.leading_p);
  out += fmt::format(" | {}/{} runs, {} questions | {} elapsed", p.runs, p.max_runs, p.questions,
                     DurationWords(elapsed_s));
  out += left_s ? fmt::format(", at most {} left", DurationWords(*left_s)) : ", left unknown";
  return out;
}

BisectProgressPrinter::BisectProgressPrinter(ProgressLine& line)
    : line_(line), start_(std::chrono::steady_clock::now()), command_start_(start_) {}

void BisectProgressPrinter::operator()(const BisectProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  if (IsStart(p.event)) {
    command_start_ = now;
  } else {
    command_seconds_ += std::chrono::duration<double>(now - command_start_).count();
    ++commands_;
  }
  std::optional<double> left;
  if (commands_ > 0) left = command_seconds_ / commands_ * std::max(0, p.max_runs - p.runs);
  line_.Show(BisectProgressText(p, std::chrono::duration<double>(now - start_).count(), left, line_));
}

}  // namespace harness::bisect
