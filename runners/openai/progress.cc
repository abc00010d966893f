#include "runners/openai/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace harness::openai {

ProgressLine::ProgressLine(std::string label, int64_t total, int64_t already_done, std::FILE* out, bool terminal,
                           double plain_interval_s)
    : label_(std::move(label)),
      total_(total),
      already_done_(already_done),
      out_(out),
      terminal_(terminal),
      plain_interval_s_(plain_interval_s),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

bool ProgressLine::IsTerminal(std::FILE* out) { return isatty(fileno(out)) == 1; }

void ProgressLine::Record(bool answered, bool correct) {
  ++done_;
  answered_ += answered;
  correct_ += correct;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (since >= (terminal_ ? 0.1 : plain_interval_s_)) Print(false);
}

void ProgressLine::Finish() { Print(true); }

std::string ProgressLine::Render() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  const int64_t remaining = total_ - already_done_ - done_;
  const std::string eta = remaining <= 0 ? std::string("0s")
                          : rate > 0      ? fmt::format("{:.0f}s", static_cast<double>(remaining) / rate)
                                          : std::string("-");
  const std::string accuracy =
      answered_ > 0 ? fmt::format("{:.3f}", static_cast<double>(correct_) / static_cast<double>(answered_)) : "-";
  return fmt::format("{}  {}/{}  acc {}  {:.1f} req/s  ETA {}", label_, already_done_ + done_, total_, accuracy, rate,
                     eta);
}

void ProgressLine::Print(bool final_line) {
  last_print_ = std::chrono::steady_clock::now();
  if (terminal_) {
    fmt::print(out_, "\r{}\033[K{}", Render(), final_line ? "\n" : "");
  } else {
    fmt::print(out_, "{}\n", Render());
  }
  std::fflush(out_);
}

}  // namespace harness::openai
