// Bytes from outside (a command's stderr, a model's completion, an ingested file) may
// be any bytes; outputs that promise UTF-8 (XML, HTML, JSON) carry them through ValidUtf8,
// and text meant for a terminal through TerminalText.
#pragma once

#include <string>
#include <string_view>

namespace harness {

// s with every invalid UTF-8 sequence (stray continuation bytes, overlong forms,
// surrogates, code points above U+10FFFF, truncated sequences) replaced by U+FFFD.
std::string ValidUtf8(std::string_view s);

// ValidUtf8(s) with every control character but newline and tab shown as an escape: C0 and
// DEL as \xNN, C1 (U+0080..U+009F) as \uNNNN. A completion or a stack's stderr in a text
// report then cannot move the cursor, recolour the terminal or retitle its window.
std::string TerminalText(std::string_view s);

// s cut to at most max_bytes, moved back (at most 3 bytes) so that it does not split a
// UTF-8 sequence: a character the cut would split is left out whole.
std::string_view Utf8Prefix(std::string_view s, std::size_t max_bytes);

}  // namespace harness
