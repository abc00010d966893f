#include "harness/eval/eval_progress.h"

#include <fmt/format.h>

namespace harness {

EvalProgress::EvalProgress(std::string label, int64_t total, int64_t already_done, std::FILE* out)
    : label_(std::move(label)),
      total_(total),
      already_done_(already_done),
      line_(out),
      plain_interval_s_(10),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

EvalProgress::EvalProgress(std::string label, int64_t total, int64_t already_done, std::FILE* out, bool terminal,
                           double plain_interval_s)
    : label_(std::move(label)),
      total_(total),
      already_done_(already_done),
      line_(out, terminal, /*colour=*/false),
      plain_interval_s_(plain_interval_s),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void EvalProgress::Record(bool answered, bool correct) {
  ++done_;
  answered_ += answered;
  correct_ += correct;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (since >= (line_.terminal() ? 0.1 : plain_interval_s_)) Print();
}

void EvalProgress::Finish() {
  Print();
  line_.Finish();
}

std::string EvalProgress::Render() const {
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

void EvalProgress::Print() {
  last_print_ = std::chrono::steady_clock::now();
  line_.Show(Render());
}

}  // namespace harness
