// Bytes from outside (a command's stderr, a model's completion, an ingested file) may
// be any bytes; outputs that promise UTF-8 (XML, HTML, JSON) carry them through ValidUtf8,
// and text meant for a terminal through TerminalText. Every escaper (HTML, XML, terminal)
// is EscapeCodePoints with its own policy, so they share one way of reading bytes.
#pragma once

#include <string>
#include <string_view>

namespace harness {

// s with every invalid UTF-8 sequence (stray continuation bytes, overlong forms,
// surrogates, code points above U+10FFFF, truncated sequences) replaced by U+FFFD.
std::string ValidUtf8(std::string_view s);

// The scanner under every escaper: ValidUtf8(raw) walked one code point at a time, and
// `write(cp, bytes, out)` appends what the output format makes of it (`bytes` is the code
// point's UTF-8 spelling, to copy when it needs no escape).
template <class WriteCodePoint>
std::string EscapeCodePoints(std::string_view raw, WriteCodePoint write);

// ValidUtf8(s) with every control character but newline and tab shown as an escape: C0 and
// DEL as \xNN, C1 (U+0080..U+009F) as \uNNNN. A completion or a stack's stderr in a text
// report then cannot move the cursor, recolour the terminal or retitle its window.
std::string TerminalText(std::string_view s);

// s cut to at most max_bytes, moved back (at most 3 bytes) so that it does not split a
// UTF-8 sequence: a character the cut would split is left out whole.
std::string_view Utf8Prefix(std::string_view s, std::size_t max_bytes);

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

template <class WriteCodePoint>
std::string EscapeCodePoints(std::string_view raw, WriteCodePoint write) {
  const std::string s = ValidUtf8(raw);
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (std::size_t i = 0; i < s.size();) {
    // s is valid UTF-8, so the lead byte gives the length and every sequence is whole.
    const auto b0 = static_cast<unsigned char>(s[i]);
    const std::size_t len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    write(cp, std::string_view(s).substr(i, len), out);
    i += len;
  }
  return out;
}

}  // namespace harness
