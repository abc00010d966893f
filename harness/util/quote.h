// User data inside a message: a flag's value, a field of a file, a program's output. A
// message reaches a terminal or a CI log, so what it quotes is cut (a 60 MB string is not
// echoed whole) and sanitized (ESC, NUL and other control characters shown as escapes,
// invalid UTF-8 repaired: TerminalText in util/utf8.h), and it says how long the datum was.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace harness {

// How many bytes of a datum a message quotes.
inline constexpr std::size_t kQuotedBytes = 200;
// The longest message the top-level handler prints; longer ones keep their head and tail.
inline constexpr std::size_t kMessageBytes = 8192;

// 'text' with every control character escaped (newline and tab too: a datum never starts
// a line of its own), cut to max_bytes with "... (N bytes)" after the closing quote.
std::string Quote(std::string_view text, std::size_t max_bytes = kQuotedBytes);

// The same without the quotes, for text that is a message's own part (a parser's
// complaint, a field's path): "text... (N bytes)" when cut.
std::string CutText(std::string_view text, std::size_t max_bytes = kQuotedBytes);

// A whole message as the top-level handler prints it: TerminalText (lines and tabs kept)
// and, past max_bytes, its head and tail around "... (N bytes dropped) ...".
std::string SafeMessage(std::string_view message, std::size_t max_bytes = kMessageBytes);

}  // namespace harness
