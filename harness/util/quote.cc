#include "harness/util/quote.h"

#include <fmt/format.h>

#include "harness/util/utf8.h"

namespace harness {
namespace {

// The last bytes of s, moved forward so that it does not start inside a UTF-8 sequence.
std::string_view Utf8Suffix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t from = s.size() - max_bytes;
  for (int step = 0; step < 3 && from < s.size() && (static_cast<unsigned char>(s[from]) & 0xC0) == 0x80; ++step)
    ++from;
  return s.substr(from);
}


// Every control character escaped, newline and tab included.
std::string OneLine(std::string_view text) {
  return EscapeCodePoints(text, [](char32_t cp, std::string_view bytes, std::string& o) {
    if (cp == '\n') o += "\\n";
    else if (cp == '\t') o += "\\t";
    else if (cp < 0x20 || cp == 0x7F) o += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    else if (cp >= 0x80 && cp <= 0x9F) o += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    else o += bytes;
  });
}

}  // namespace

std::string Quote(std::string_view text, std::size_t max_bytes) {
  const std::string_view kept = Utf8Prefix(text, max_bytes);
  std::string out = "'" + OneLine(kept) + "'";
  if (kept.size() < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

std::string CutText(std::string_view text, std::size_t max_bytes) {
  const std::string_view kept = Utf8Prefix(text, max_bytes);
  std::string out = OneLine(kept);
  if (kept.size() < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

std::string SafeMessage(std::string_view message, std::size_t max_bytes) {
  if (message.size() <= max_bytes) return TerminalText(message);
  const std::string_view head = Utf8Prefix(message, max_bytes * 3 / 4);
  const std::string_view tail = Utf8Suffix(message, max_bytes / 4);
  return TerminalText(head) +
         fmt::format("\n... ({} bytes dropped) ...\n", message.size() - head.size() - tail.size()) +
         TerminalText(tail);
}

}  // namespace harness
