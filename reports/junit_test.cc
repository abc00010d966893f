#include "reports/junit.h"

#include <gtest/gtest.h>

#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness::reports {
namespace {

TEST(Junit, GroupsBySuiteAndEscapesMessages) {
  std::vector<CaseResult> cases = {
      {"gmm/test_q_0", CaseStatus::kPass, 0.5, "", {}, {}},
      {"gmm/test_q_1", CaseStatus::kFail, 0.25, "expected <a & \"b\">\nmore", {}, {}},
      {"sp/test_s_0", CaseStatus::kError, 1, "endpoint down", {}, {}},
      {"sp/test_s_1", CaseStatus::kSkip, 0, "not on this stack", {}, {}},
  };
  std::string xml = JunitXml(cases);
  EXPECT_NE(xml.find("<testsuites name=\"harness\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"gmm\" tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"expected &lt;a &amp; &quot;b&quot;&gt;\">"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"endpoint down\">"), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"not on this stack\">"), std::string::npos);
  EXPECT_EQ(xml.find("<a &"), std::string::npos) << "nothing raw";
}

// What a real parser (python3's xml.etree) reads from the document: per testcase its
// properties, system-out and failure/error message attribute.
Json ParsedByPython(const std::string& xml) {
  const char* script = R"py(
import json, sys, xml.etree.ElementTree as E
root = E.fromstring(sys.stdin.buffer.read())
out = {}
for tc in root.iter('testcase'):
    d = {'properties': {p.get('name'): p.get('value') for p in tc.iter('property')}}
    so = tc.find('system-out')
    if so is not None: d['system_out'] = so.text
    for tag in ('failure', 'error', 'skipped'):
        f = tc.find(tag)
        if f is not None: d[tag] = {'message': f.get('message'), 'text': f.text}
    out[tc.get('classname') + '/' + tc.get('name')] = d
print(json.dumps(out))
)py";
  auto r = RunProcess({"python3", "-c", script}, {.stdin_data = xml});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0) << r->err << xml;
  auto j = ParseJson(r->out, "python3 output");
  EXPECT_TRUE(j.ok());
  return j.ok() ? *j : Json();
}

TEST(Junit, TestcasesCarryMetricsVerdictLinesAndFirstLinesReadByARealParser) {
  std::vector<CaseResult> cases = {
      {"gsm8k/test_acc_0", CaseStatus::kPass, 3, "AT-RISK at gate 0.91: gsm8k accuracy 0.9143 <b>",
       {{"accuracy", 0.914329, 1319, 0.8977, 0.9281}, VerdictMetric("gate_verdict", GateVerdict::kAtRisk),
        VerdictMetric("baseline_verdict", BaselineVerdict::kSame)}, {}},
      {"gsm8k/test_acc_1", CaseStatus::kFail, 3, "gsm8k REGRESSED vs baseline abc\naccuracy 0.90 \"q\" & more",
       {VerdictMetric("gate_verdict", GateVerdict::kPass), VerdictMetric("baseline_verdict", BaselineVerdict::kRegressed)},
       {}},
      {"kernels/test_k_0", CaseStatus::kError, 1, "endpoint down\nretry", {{"gemm_max_bound_use", 0.5, 0, {}, {}}}, {}},
  };
  const Json j = ParsedByPython(JunitXml(cases));
  const Json& risk = j["gsm8k/test_acc_0"];
  EXPECT_EQ(risk["properties"]["accuracy"], "0.914329");
  EXPECT_EQ(risk["properties"]["accuracy.n"], "1319");
  EXPECT_EQ(risk["properties"]["accuracy.ci95_low"], "0.8977");
  EXPECT_EQ(risk["properties"]["gate_verdict"], "AT-RISK");
  EXPECT_EQ(risk["system_out"], "verdict: gate AT-RISK; baseline SAME\nAT-RISK at gate 0.91: gsm8k accuracy 0.9143 <b>");
  EXPECT_FALSE(risk.contains("failure")) << "AT-RISK passes, and says so in system-out";
  const Json& regressed = j["gsm8k/test_acc_1"];
  EXPECT_EQ(regressed["failure"]["message"], "gsm8k REGRESSED vs baseline abc");
  EXPECT_EQ(regressed["failure"]["text"], "gsm8k REGRESSED vs baseline abc\naccuracy 0.90 \"q\" & more");
  EXPECT_EQ(regressed["system_out"], "verdict: gate PASS; baseline REGRESSED");
  const Json& error = j["kernels/test_k_0"];
  EXPECT_EQ(error["error"]["message"], "endpoint down");
  EXPECT_EQ(error["properties"]["gemm_max_bound_use"], "0.5");
  EXPECT_FALSE(error.contains("system_out"));
}

TEST(Junit, DropsControlCharactersXmlCannotCarry) {
  EXPECT_EQ(XmlEscape(std::string("a\x01" "b\tc")), "ab\tc");
}

TEST(Junit, InvalidUtf8BecomesReplacementCharacters) {
  // A command's stderr may hold any bytes; the document must stay well-formed UTF-8.
  EXPECT_EQ(XmlEscape(std::string("ok \xff\xfe \xc3\xa9 \xe2\x82")), "ok \xEF\xBF\xBD\xEF\xBF\xBD \xC3\xA9 \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(XmlEscape(std::string("\xef\xbf\xbe")), "\xEF\xBF\xBD");  // U+FFFE is no XML character
}

}  // namespace
}  // namespace harness::reports
