#include "reports/junit.h"

#include <map>

#include <fmt/format.h>

#include "harness/util/utf8.h"

namespace harness::reports {

std::string XmlEscape(const std::string& raw) {
  const std::string s = ValidUtf8(raw);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    // U+FFFE and U+FFFF (EF BF BE / EF BF BF) are not XML characters either.
    if (c == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xBE) {
      out += "\xEF\xBF\xBD";
      i += 2;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') break;  // not allowed in XML 1.0
        out += static_cast<char>(c);
    }
  }
  return out;
}

std::string JunitXml(const std::vector<CaseResult>& cases) {
  std::map<std::string, std::vector<const CaseResult*>> by_suite;
  for (const auto& c : cases) by_suite[c.case_id.substr(0, c.case_id.find('/'))].push_back(&c);
  const StatusCounts all = CountStatuses(cases);
  double time = 0;
  for (const auto& c : cases) time += c.duration_s;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"harness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     cases.size(), all.fail, all.error, all.skip, time);
  for (const auto& [suite, list] : by_suite) {
    StatusCounts n;
    double t = 0;
    for (const auto* c : list) {
      n.Add(c->status);
      t += c->duration_s;
    }
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       XmlEscape(suite), list.size(), n.fail, n.error, n.skip, t);
    for (const auto* c : list) {
      std::string name = c->case_id.substr(suite.size() + 1);
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", XmlEscape(suite), XmlEscape(name),
                         c->duration_s);
      std::string first_line = c->message.substr(0, c->message.find('\n'));
      if (c->status == CaseStatus::kPass) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      const char* tag = c->status == CaseStatus::kFail    ? "failure"
                        : c->status == CaseStatus::kSkip ? "skipped"
                                                         : "error";
      out += fmt::format("      <{} message=\"{}\">{}</{}>\n", tag, XmlEscape(first_line), XmlEscape(c->message), tag);
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace harness::reports
