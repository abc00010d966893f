#include "reports/junit.h"

#include <map>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/results/metric_names.h"
#include "harness/util/utf8.h"

namespace harness::reports {

std::string XmlEscape(const std::string& raw) {
  return EscapeCodePoints(raw, [](char32_t cp, std::string_view bytes, std::string& out) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case 0xFFFE:
      case 0xFFFF: out += kReplacementCharacter; break;  // not XML characters either
      default:
        if (cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') break;  // not allowed in XML 1.0
        out += bytes;
    }
  });
}

namespace {

std::string Number(double v) { return fmt::format("{:.6g}", v); }

std::string Properties(const std::vector<Metric>& metrics) {
  if (metrics.empty()) return "";
  std::string out = "      <properties>\n";
  auto add = [&](const std::string& name, const std::string& value) {
    out += fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", XmlEscape(name), XmlEscape(value));
  };
  for (const auto& m : metrics) {
    add(m.name, m.label.empty() ? Number(m.value) : m.label);
    if (m.n > 0) add(m.name + ".n", std::to_string(m.n));
    if (m.low && m.high) {
      add(m.name + ".ci95_low", Number(*m.low));
      add(m.name + ".ci95_high", Number(*m.high));
    }
  }
  return out + "      </properties>\n";
}

// "verdict: gate AT-RISK; baseline SAME" when the case stored verdict metrics.
std::string VerdictLine(const CaseResult& c) {
  std::string line;
  for (const auto& [name, word] :
       {std::pair{metric_names::kGateVerdict, "gate"}, std::pair{metric_names::kBaselineVerdict, "baseline"}})
    for (const auto& m : c.metrics)
      if (m.name == name && !m.label.empty()) line += fmt::format("{}{} {}", line.empty() ? "verdict: " : "; ", word, m.label);
  return line;
}

// A case of a suite and its name, the part of its id after the suite.
struct Named {
  std::string name;
  const CaseResult* result;
};

}  // namespace

std::string JunitXml(const std::vector<CaseResult>& cases, const std::map<std::string, std::string>& notes,
                     const NightSummary* night) {
  const NightSummary judged = night ? *night : JudgeNight(cases);
  // Each case id parsed once: its suite groups it, its name names its testcase.
  std::map<std::string, std::vector<Named>> by_suite;
  for (const auto& c : cases) {
    const CaseId id(c.case_id);
    by_suite[id.suite()].push_back({id.name(), &c});
  }
  const StatusCounts all = CountStatuses(cases);
  double time = 0;
  for (const auto& c : cases) time += c.duration_s;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"harness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     cases.size(), all.fail, all.error, all.skip, time);
  out += fmt::format("  <properties>\n    <property name=\"night_verdict\" value=\"{}\"/>\n"
                     "    <property name=\"night\" value=\"{}\"/>\n  </properties>\n",
                     Word(judged.verdict), XmlEscape(judged.Line()));
  for (const auto& [suite, list] : by_suite) {
    StatusCounts n;
    double t = 0;
    for (const Named& c : list) {
      n.Add(c.result->status);
      t += c.result->duration_s;
    }
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       XmlEscape(suite), list.size(), n.fail, n.error, n.skip, t);
    for (const Named& named : list) {
      const std::string& name = named.name;
      const CaseResult* c = named.result;
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", XmlEscape(suite), XmlEscape(name),
                         c->duration_s);
      const std::string first_line = c->message.substr(0, c->message.find('\n'));
      const std::string props = Properties(c->metrics);
      std::string system_out = VerdictLine(*c);
      if (c->status == CaseStatus::kPass && !c->message.empty())
        system_out += (system_out.empty() ? "" : "\n") + c->message;  // a passing case's notes
      if (auto note = notes.find(c->case_id); note != notes.end())
        system_out += (system_out.empty() ? "" : "\n") + note->second;
      if (props.empty() && system_out.empty() && c->status == CaseStatus::kPass) {
        out += "/>\n";
        continue;
      }
      out += ">\n" + props;
      if (c->status != CaseStatus::kPass) {
        const char* tag = c->status == CaseStatus::kFail    ? "failure"
                          : c->status == CaseStatus::kSkip ? "skipped"
                                                           : "error";
        out += fmt::format("      <{} message=\"{}\">{}</{}>\n", tag, XmlEscape(first_line), XmlEscape(c->message), tag);
      }
      if (!system_out.empty()) out += "      <system-out>" + XmlEscape(system_out) + "</system-out>\n";
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace harness::reports
