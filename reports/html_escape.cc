#include "reports/html_escape.h"

#include "harness/util/utf8.h"

namespace harness::reports {

std::string HtmlEscape(std::string_view raw) {
  const std::string s = ValidUtf8(raw);
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7F) out += "\xEF\xBF\xBD";
        else out += ch;
    }
  }
  return out;
}

std::string UrlEscape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string CommitUrl(std::string_view tmpl, std::string_view sha) {
  std::string out;
  constexpr std::string_view kSlot = "{sha}";
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = tmpl.find(kSlot, pos);
    if (hit == std::string_view::npos) break;
    out.append(tmpl.substr(pos, hit - pos));
    out += UrlEscape(sha);
    pos = hit + kSlot.size();
  }
  out.append(tmpl.substr(pos));
  return out;
}

}  // namespace harness::reports
