#include "reports/html_escape.h"

#include "harness/util/utf8.h"

namespace harness::reports {

std::string HtmlEscape(std::string_view raw) {
  return EscapeCodePoints(raw, [](char32_t cp, std::string_view bytes, std::string& out) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if ((cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') || cp == 0x7F) out += kReplacementCharacter;
        else out += bytes;
    }
  });
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
