#include "reports/junit.h"

#include <map>

#include <fmt/format.h>

namespace harness::reports {

std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
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

std::string JunitXml(const std::vector<CaseSummary>& cases) {
  std::map<std::string, std::vector<const CaseSummary*>> by_suite;
  for (const auto& c : cases) by_suite[c.case_id.substr(0, c.case_id.find('/'))].push_back(&c);
  int failures = 0, errors = 0, skipped = 0;
  double time = 0;
  for (const auto& c : cases) {
    failures += c.status == "fail";
    errors += c.status == "error";
    skipped += c.status == "skip";
    time += c.duration_s;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"harness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     cases.size(), failures, errors, skipped, time);
  for (const auto& [suite, list] : by_suite) {
    int f = 0, e = 0, s = 0;
    double t = 0;
    for (const auto* c : list) {
      f += c->status == "fail";
      e += c->status == "error";
      s += c->status == "skip";
      t += c->duration_s;
    }
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       XmlEscape(suite), list.size(), f, e, s, t);
    for (const auto* c : list) {
      std::string name = c->case_id.substr(suite.size() + 1);
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", XmlEscape(suite), XmlEscape(name),
                         c->duration_s);
      std::string first_line = c->message.substr(0, c->message.find('\n'));
      if (c->status == "pass") {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      const char* tag = c->status == "fail" ? "failure" : c->status == "error" ? "error" : "skipped";
      out += fmt::format("      <{} message=\"{}\">{}</{}>\n", tag, XmlEscape(first_line), XmlEscape(c->message), tag);
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace harness::reports
