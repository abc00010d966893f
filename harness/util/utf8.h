// Bytes from outside (a command's stderr, a model's completion, an ingested file) may
// be any bytes; outputs that promise UTF-8 (XML, HTML, JSON) carry them through this.
#pragma once

#include <string>
#include <string_view>

namespace harness {

// s with every invalid UTF-8 sequence (stray continuation bytes, overlong forms,
// surrogates, code points above U+10FFFF, truncated sequences) replaced by U+FFFD.
std::string ValidUtf8(std::string_view s);

}  // namespace harness
