#include "harness/util/utf8.h"

#include <fmt/format.h>

namespace harness {

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    char32_t cp = 0, min = 0;
    if (b0 < 0x80) len = 1, cp = b0;
    else if ((b0 & 0xE0) == 0xC0) len = 2, cp = b0 & 0x1F, min = 0x80;
    else if ((b0 & 0xF0) == 0xE0) len = 3, cp = b0 & 0x0F, min = 0x800;
    else if ((b0 & 0xF8) == 0xF0) len = 4, cp = b0 & 0x07, min = 0x10000;
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) ok = false;
      else cp = (cp << 6) | (b & 0x3F);
    }
    ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append(kReplacementCharacter);
      ++i;  // resynchronise on the next byte
    }
  }
  return out;
}

std::string TerminalText(std::string_view raw) {
  return EscapeCodePoints(raw, [](char32_t cp, std::string_view bytes, std::string& out) {
    if ((cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7F)
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    else if (cp >= 0x80 && cp <= 0x9F) out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    else out += bytes;
  });
}

std::string_view Utf8Prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  // s[n] is the first byte left out; while it continues a sequence, that sequence would be
  // split, so it goes too (a sequence is at most 4 bytes: at most 3 steps back).
  std::size_t n = max_bytes;
  for (int step = 0; step < 3 && n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80; ++step) --n;
  return s.substr(0, n);
}

}  // namespace harness
