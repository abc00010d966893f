#include "harness/util/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "harness/util/utf8.h"

namespace harness {

namespace {

bool ColourWanted(bool terminal) {
  const char* no_colour = std::getenv("NO_COLOR");
  return terminal && !(no_colour && *no_colour);
}

// The terminal's width, or 0 when it does not say.
std::size_t Width(std::FILE* out) {
  winsize w{};
  if (ioctl(fileno(out), TIOCGWINSZ, &w) != 0) return 0;
  return w.ws_col;
}

// The longest prefix of valid UTF-8 text that fits in columns code points, colour escapes
// not counted; a cut one ends with the colour reset.
std::string FitColumns(std::string_view text, std::size_t columns, bool colour) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b') {
      const std::size_t m = text.find('m', i);
      if (m == std::string_view::npos) break;
      i = m;
      continue;
    }
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && ++seen > columns)
      return std::string(text.substr(0, i)) + (colour ? "\x1b[0m" : "");
  }
  return std::string(text);
}

}  // namespace

ProgressLine::ProgressLine(std::FILE* out) : ProgressLine(out, isatty(fileno(out)) == 1, false) {
  colour_ = ColourWanted(terminal_);
}

ProgressLine::ProgressLine(std::FILE* out, bool terminal, bool colour)
    : out_(out), terminal_(terminal), colour_(colour && terminal) {}

ProgressLine::~ProgressLine() { Finish(); }

void ProgressLine::Show(std::string_view text) {
  // Painted words carry their escapes already; everything else is made safe here.
  std::string safe;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t esc = text.find("\x1b[", at);
    const std::size_t end = esc == std::string_view::npos ? text.size() : esc;
    safe += TerminalText(text.substr(at, end - at));
    if (end == text.size()) break;
    const std::size_t m = text.find('m', end);
    const std::string_view code = text.substr(end, m == std::string_view::npos ? 2 : m - end + 1);
    // Only the colours Paint writes pass through; any other escape is shown as text.
    safe += code == "\x1b[32m" || code == "\x1b[31m" || code == "\x1b[33m" || code == "\x1b[0m"
                ? std::string(code)
                : TerminalText(code);
    at = end + code.size();
  }
  if (!terminal_) {
    std::fprintf(out_, "%s\n", safe.c_str());
    std::fflush(out_);
    return;
  }
  for (char& c : safe)
    if (c == '\n' || c == '\t') c = ' ';
  // A line wider than the terminal wraps, and \r would then rewrite only its last row.
  const std::size_t width = Width(out_);
  const std::string shown = width > 1 ? FitColumns(safe, width - 1, colour_) : safe;
  std::fprintf(out_, "\r\x1b[2K%.*s", static_cast<int>(shown.size()), shown.data());
  std::fflush(out_);
  open_ = true;
}

std::string ProgressLine::Paint(std::string_view text, Colour colour) const {
  if (!colour_ || colour == Colour::kNone) return std::string(text);
  const char* code = colour == Colour::kGreen ? "\x1b[32m" : colour == Colour::kRed ? "\x1b[31m" : "\x1b[33m";
  return std::string(code) + std::string(text) + "\x1b[0m";
}

void ProgressLine::Finish() {
  if (!open_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  open_ = false;
}

std::string DurationWords(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

void ProgressLine::Clear() {
  if (!open_) return;
  std::fputs("\r\x1b[2K", out_);
  std::fflush(out_);
  open_ = false;
}

}  // namespace harness
