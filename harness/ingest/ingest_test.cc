#include "harness/ingest/ingest.h"

#include <array>
#include <filesystem>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/ingest/gtest_json.h"
#include "harness/ingest/junit_xml.h"
#include "harness/ingest/lm_eval.h"
#include "harness/ingest/sglang_gsm8k.h"
#include "harness/ingest/tensorcast_ingest.h"
#include "harness/testing/test_util.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

using testing_util::TempDir;
using testing_util::WriteFile;

const FinishedCase* Find(const std::vector<FinishedCase>& cases, const std::string& id) {
  for (const auto& c : cases)
    if (c.result.case_id == id) return &c;
  return nullptr;
}

// pytest --junitxml (xunit2): one <testsuite name="pytest"> in <testsuites>.
constexpr const char* kPytestXml = R"(<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="1.2" timestamp="2026-12-01T10:00:00" hostname="ci">
<testcase classname="tests.test_ops" name="test_add" time="0.010"><properties><property name="max_abs_err" value="1.5e-3"/><property name="ticket" value="OPS-12"/></properties></testcase>
<testcase classname="tests.test_ops" name="test_matmul[fp8-64]" time="0.250"><failure message="AssertionError: 0.91 &lt; 0.95">def test_matmul():
&gt;   assert acc &gt;= 0.95
E   AssertionError</failure></testcase>
<testcase classname="tests.test_ops" name="test_setup" time="0.001"><error message="fixture 'gpu' not found">setup failed</error></testcase>
<testcase classname="tests.test_ops" name="test_skip" time="0.000"><skipped type="pytest.skip" message="needs 8 GPUs">/tests/test_ops.py:40: needs 8 GPUs</skipped></testcase>
<testcase classname="tests.test_ünïcode" name="test_日本語"/>
</testsuite></testsuites>
)";

TEST(JunitXml, ReadsPytestStatusesTimesPropertiesAndUnicode) {
  auto cases = ParseJunitXml(kPytestXml, "report.xml", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 5u);
  const auto* add = Find(*cases, "pytest/tests.test_ops.test_add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->suite, "pytest");
  EXPECT_EQ(add->result.status, CaseStatus::kPass);
  EXPECT_DOUBLE_EQ(add->result.duration_s, 0.010);
  ASSERT_EQ(add->result.metrics.size(), 1u);  // the ticket is text, not a metric
  EXPECT_EQ(add->result.metrics[0].name, "max_abs_err");
  EXPECT_DOUBLE_EQ(add->result.metrics[0].value, 1.5e-3);
  const auto* mm = Find(*cases, "pytest/tests.test_ops.test_matmul[fp8-64]");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->result.status, CaseStatus::kFail);
  EXPECT_NE(mm->result.message.find("AssertionError: 0.91 < 0.95"), std::string::npos);
  EXPECT_NE(mm->result.message.find(">   assert acc >= 0.95"), std::string::npos);
  EXPECT_EQ(Find(*cases, "pytest/tests.test_ops.test_setup")->result.status, CaseStatus::kError);
  const auto* skip = Find(*cases, "pytest/tests.test_ops.test_skip");
  EXPECT_EQ(skip->result.status, CaseStatus::kSkip);
  EXPECT_NE(skip->result.message.find("needs 8 GPUs"), std::string::npos);
  const auto* uni = Find(*cases, "pytest/tests.test_ünïcode.test_日本語");
  ASSERT_NE(uni, nullptr);  // missing time: zero, missing children: pass
  EXPECT_EQ(uni->result.status, CaseStatus::kPass);
  EXPECT_EQ(uni->result.duration_s, 0);
}

// Every order of two or three status children: error outranks failure outranks skipped
// (a rerun plugin may write <failure> then <skipped>; the case still failed), and every
// element's message is kept in file order.
TEST(JunitXml, StatusPrecedenceWhateverTheOrderOfTheChildren) {
  const std::map<std::string, std::pair<CaseStatus, int>> kind = {
      {"error", {CaseStatus::kError, 0}}, {"failure", {CaseStatus::kFail, 1}}, {"skipped", {CaseStatus::kSkip, 2}}};
  std::vector<std::vector<std::string>> orders;
  for (const auto& a : kind)
    for (const auto& b : kind) {
      if (a.first == b.first) continue;
      orders.push_back({a.first, b.first});
      for (const auto& c : kind)
        if (c.first != a.first && c.first != b.first) orders.push_back({a.first, b.first, c.first});
    }
  ASSERT_EQ(orders.size(), 12u);  // 6 pairs in both orders, 6 orders of three
  for (const auto& order : orders) {
    std::string children, expected, messages;
    int best = 3;
    for (const auto& k : order) {
      children += fmt::format(R"(<{} message="{} text"/>)", k, k);
      messages += (messages.empty() ? "" : "\n") + k + " text";
      if (kind.at(k).second < best) best = kind.at(k).second, expected = k;
    }
    auto cases = ParseJunitXml("<testsuite name=\"s\"><testcase name=\"t\">" + children + "</testcase></testsuite>",
                               "x.xml", "");
    ASSERT_TRUE(cases.ok()) << cases.error().message;
    ASSERT_EQ(cases->size(), 1u);
    EXPECT_EQ((*cases)[0].result.status, kind.at(expected).first) << children;
    EXPECT_EQ((*cases)[0].result.message, messages) << children;
  }
}

TEST(JunitXml, SuiteOptionNestedSuitesAndNoClassname) {
  const char* xml = R"(<testsuite name="outer"><testsuite name="inner"><testcase name="t1"/></testsuite>
<testcase name="t2" classname="C"/></testsuite>)";
  auto cases = ParseJunitXml(xml, "x.xml", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 2u);
  EXPECT_NE(Find(*cases, "inner/t1"), nullptr);
  EXPECT_NE(Find(*cases, "outer/C.t2"), nullptr);
  auto renamed = ParseJunitXml(xml, "x.xml", "nightly");
  ASSERT_TRUE(renamed.ok());
  EXPECT_NE(Find(*renamed, "nightly/t1"), nullptr);
  EXPECT_EQ(Find(*renamed, "nightly/C.t2")->suite, "nightly");
}

TEST(JunitXml, EmptySuitesHoldNoCases) {
  auto a = ParseJunitXml(R"(<testsuites/>)", "a.xml", "");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_TRUE(a->empty());
  auto b = ParseJunitXml(R"(<testsuites><testsuite name="pytest" tests="0"></testsuite></testsuites>)", "b.xml", "");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->empty());
}

TEST(JunitXml, MalformedInputNamesFileLineAndColumn) {
  auto bad = ParseJunitXml("<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a\">\n</testsuite>\n", "r.xml", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kUsage);
  EXPECT_EQ(bad.error().message.rfind("r.xml:4:", 0), 0u) << bad.error().message;
  auto no_name = ParseJunitXml("<testsuites>\n<testsuite>\n\n<testcase classname=\"c\"/></testsuite></testsuites>", "n.xml", "");
  ASSERT_FALSE(no_name.ok());
  EXPECT_EQ(no_name.error().message, "n.xml:4: <testcase> has no name attribute");
  auto bad_time = ParseJunitXml("<testsuite>\n<testcase name=\"a\" time=\"soon\"/></testsuite>", "t.xml", "");
  ASSERT_FALSE(bad_time.ok());
  EXPECT_EQ(bad_time.error().message.rfind("t.xml:2: <testcase> time=\"soon\"", 0), 0u) << bad_time.error().message;
  auto root = ParseJunitXml("<html/>", "h.xml", "");
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.error().message.find("h.xml:1: expected <testsuites> or <testsuite>"), std::string::npos);
}

// libxml2's message ends in a newline, and some in a space before it: an unclosed CDATA
// section is named with the first 50 bytes of its text, which here end in a space. The
// error ends at the last word, not in whitespace.
TEST(JunitXml, AMalformedFilesMessageEndsAtItsLastWord) {
  const std::string text = "step 1 of 2 ok; step 2 of 2 still running on node ";  // 50 bytes, a space last
  ASSERT_EQ(text.size(), 50u);
  auto bad = ParseJunitXml("<testsuite>\n<testcase name=\"a\"><system-out><![CDATA[" + text + "and more",
                           "c.xml", "");
  ASSERT_FALSE(bad.ok());
  const std::string& message = bad.error().message;
  EXPECT_EQ(message.rfind("c.xml:2:", 0), 0u) << message;
  EXPECT_NE(message.find("CData section not finished"), std::string::npos) << message;
  ASSERT_FALSE(message.empty());
  EXPECT_EQ(message.back(), 'e') << "[" << message << "]";
}

// A malformed case inside a nested suite stops the file as one at the top does, named by its
// line, and nothing of the file is read as if the case were not there.
TEST(JunitXml, AMalformedCaseInANestedSuiteIsNamedByItsLine) {
  auto cases = ParseJunitXml(R"(<testsuites>
<testsuite name="outer"><testcase name="a"/>
<testsuite name="inner">
<testcase name="b"/>
<testcase classname="c"/>
</testsuite></testsuite></testsuites>)",
                             "n.xml", "");
  ASSERT_FALSE(cases.ok());
  EXPECT_EQ(cases.error().message, "n.xml:5: <testcase> has no name attribute");
}

// pytest writes a second <testcase> of the same name when a test's teardown errors, mocha
// repeats titles: one case, the worst status, every message in file order, times added.
TEST(JunitXml, RepeatedNamesAreOneCaseWithTheWorstStatusAndEveryMessage) {
  auto cases = ParseJunitXml(R"(<testsuites><testsuite name="pytest">
<testcase classname="t" name="test_x" time="0.25"><failure message="body failed">assert False</failure></testcase>
<testcase classname="t" name="test_ok" time="0.5"/>
<testcase classname="t" name="test_x" time="0.5"><error message="failed on teardown">RuntimeError</error></testcase>
<testcase classname="t" name="test_ok" time="0.25"><error message="teardown of test_ok"/></testcase>
<testcase classname="t" name="test_s"><skipped message="later"/></testcase>
<testcase classname="t" name="test_s"/>
</testsuite></testsuites>)",
                             "r.xml", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 3u);
  const auto& x = (*cases)[0].result;
  EXPECT_EQ(x.case_id, "pytest/t.test_x");
  EXPECT_EQ(x.status, CaseStatus::kError);
  EXPECT_EQ(x.message, "body failed\nassert False\nfailed on teardown\nRuntimeError");
  EXPECT_DOUBLE_EQ(x.duration_s, 0.75);
  EXPECT_EQ((*cases)[1].result.status, CaseStatus::kError) << "a passing test whose teardown errored";
  EXPECT_EQ((*cases)[2].result.status, CaseStatus::kSkip) << "skip outranks pass";
  EXPECT_EQ(WorseStatus(CaseStatus::kPass, CaseStatus::kSkip), CaseStatus::kSkip);
  EXPECT_EQ(WorseStatus(CaseStatus::kFail, CaseStatus::kSkip), CaseStatus::kFail);
  EXPECT_EQ(WorseStatus(CaseStatus::kFail, CaseStatus::kError), CaseStatus::kError);
}

// Every disabled / not-run convention is a skip, never a pass; status words of failure
// count too (tst writes them without a <failure> body sometimes).
TEST(JunitXml, DisabledAndNotRunTestsAreSkipsNeverPasses) {
  const std::vector<std::pair<std::string, CaseStatus>> kAttributes = {
      {R"(status="notrun" result="suppressed")", CaseStatus::kSkip},  // GoogleTest DISABLED_
      {R"(status="run" result="skipped")", CaseStatus::kSkip},        // GoogleTest GTEST_SKIP
      {R"(status="disabled")", CaseStatus::kSkip},                    // ctest DISABLED, tst
      {R"(status="notrun")", CaseStatus::kSkip},                      // ctest
      {R"(status="Skipped")", CaseStatus::kSkip},
      {R"(status="ignored")", CaseStatus::kSkip},
      {R"(status="failed")", CaseStatus::kFail},                      // tst
      {R"(status="errored")", CaseStatus::kError},                    // tst
      {R"(status="run" result="completed")", CaseStatus::kPass},
      {R"(status="passed")", CaseStatus::kPass},
  };
  for (const auto& [attrs, want] : kAttributes) {
    auto cases = ParseJunitXml("<testsuite name=\"s\"><testcase name=\"a\" " + attrs + "/></testsuite>", "r.xml", "");
    ASSERT_TRUE(cases.ok()) << cases.error().message;
    EXPECT_EQ((*cases)[0].result.status, want) << attrs;
  }
  // A <failure> beside a disabled status is still a failure.
  auto both = ParseJunitXml(R"(<testsuite name="s"><testcase name="a" status="disabled"><failure message="m"/></testcase></testsuite>)",
                            "r.xml", "");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ((*both)[0].result.status, CaseStatus::kFail);
}

// Several <failure> elements (GoogleTest: one per failed assertion) are all kept; a message
// the element's text repeats is stored once; a failure with no text of its own (ctest)
// takes the test's captured output.
TEST(JunitXml, EveryFailureKeptOnceAndABareFailureTakesTheCapturedOutput) {
  auto cases = ParseJunitXml(R"(<testsuites name="AllTests"><testsuite name="Basic">
<testcase name="Two" status="run" result="completed" classname="Basic"><failure message="t.cc:3&#x0A;first" type=""><![CDATA[t.cc:3
first]]></failure><failure message="t.cc:4&#x0A;second" type=""><![CDATA[t.cc:4
second]]></failure></testcase>
</testsuite></testsuites>)",
                             "g.xml", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  EXPECT_EQ((*cases)[0].result.message, "t.cc:3\nfirst\nt.cc:4\nsecond");
  auto ctest = ParseJunitXml(R"x(<testsuite name="(empty)" tests="2">
<testcase name="Basic.Fails" classname="Basic.Fails" time="0.01" status="fail"><failure message=""/><system-out>expected 3 got 4
</system-out></testcase>
<testcase name="Basic.Passes" classname="Basic.Passes" time="0.01" status="run"><system-out>all good</system-out></testcase>
</testsuite>)x",
                             "c.xml", "");
  ASSERT_TRUE(ctest.ok()) << ctest.error().message;
  EXPECT_EQ((*ctest)[0].result.case_id, "ctest/Basic.Fails");
  EXPECT_EQ((*ctest)[0].result.status, CaseStatus::kFail);
  EXPECT_EQ((*ctest)[0].result.message, "expected 3 got 4\n");
  EXPECT_EQ((*ctest)[1].result.message, "") << "a passing test's output is not stored";
  // The output is cut like a stored completion.
  auto big = ParseJunitXml("<testsuite name=\"s\"><testcase name=\"a\"><failure/><system-out>" +
                               std::string(3 * kMaxStoredCompletionBytes, 'x') + "</system-out></testcase></testsuite>",
                           "b.xml", "");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)[0].result.message.size(), kMaxStoredCompletionBytes);
}

// libxml2 takes a length as an int: a report past 2 GiB is refused by its size, never handed
// over as a negative length (2 GiB of memory for a moment; the check comes before any parse).
TEST(JunitXml, AReportPastTwoGigabytesIsRefusedByItsSize) {
  const std::string huge(static_cast<std::size_t>(std::numeric_limits<int>::max()) + 1, ' ');
  auto r = ParseJunitXml(huge, "huge.xml", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "huge.xml: 2147483648 bytes, more than libxml2 reads at once");
}

// One id rule per producer (docs/ingest.md): a suite never holds '/', ids do not double.
TEST(JunitXml, CaseIdsPerProducer) {
  auto gtest = ParseJunitXml(R"(<testsuites name="AllTests"><testsuite name="Nums/P">
<testcase name="Even/1" value_param="3" status="run" result="completed" classname="Nums/P"/></testsuite>
<testsuite name="Typed/0"><testcase name="Works" type_param="int" status="run" result="completed" classname="Typed/0"/></testsuite>
</testsuites>)",
                             "g.xml", "");
  ASSERT_TRUE(gtest.ok()) << gtest.error().message;
  EXPECT_EQ((*gtest)[0].suite, "gtest");
  EXPECT_EQ((*gtest)[0].result.case_id, "gtest/Nums/P.Even/1") << "as gtest-json names it";
  EXPECT_EQ((*gtest)[1].result.case_id, "gtest/Typed/0.Works");
  // jest-junit names its root "jest tests": only "AllTests" is GoogleTest's.
  auto paths = ParseJunitXml(R"(<testsuites name="jest tests"><testsuite name="src/cart.test.js">
<testcase classname="Cart adds" name="Cart adds"/>
<testcase classname="adds one" name="Cart adds one"/>
<testcase classname="x" name="box"/></testsuite></testsuites>)",
                             "j.xml", "");
  ASSERT_TRUE(paths.ok()) << paths.error().message;
  EXPECT_EQ((*paths)[0].suite, "src.cart.test.js");
  EXPECT_EQ((*paths)[0].result.case_id, "src.cart.test.js/Cart adds") << "classname equal to name: once";
  EXPECT_EQ((*paths)[1].result.case_id, "src.cart.test.js/Cart adds one") << "mocha: the name ends with the title";
  EXPECT_EQ((*paths)[2].result.case_id, "src.cart.test.js/x.box") << "'box' ends with 'x' but not after a space";
  auto gtest_json = ParseGtestJson(R"({"testsuites": [{"name": "Nums/P", "testsuite": [{"name": "Even/1"}]}]})", "g.json", "");
  ASSERT_TRUE(gtest_json.ok());
  EXPECT_EQ((*gtest_json)[0].result.case_id, (*gtest)[0].result.case_id);
}

// Only a space ends the first words of a mocha title before its own: a name that ends with
// the classname right after a letter of another script, an accented letter or a tab is a
// name of its own, and the id is classname.name.
TEST(JunitXml, OnlyASpaceBeforeTheClassnameMakesTheNameATitle) {
  auto cases = ParseJunitXml(R"(<testsuites name="mocha"><testsuite name="s">
<testcase classname="adds" name="Cart adds"/>
<testcase classname="adds" name="Caféadds"/>
<testcase classname="adds" name="日本adds"/>
<testcase classname="adds" name="Cart&#9;adds"/>
</testsuite></testsuites>)",
                             "m.xml", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 4u);
  for (const char* id : {"s/Cart adds", "s/adds.Caféadds", "s/adds.日本adds", "s/adds.Cart\tadds"})
    EXPECT_NE(Find(*cases, id), nullptr) << id;
}

// A recorded property becomes a metric by its name; one without a name (a fuzzer's find) is
// refused with the file and the test it is in, never stored as an unnamed metric.
TEST(GtestJson, AnUnnamedPropertyIsRefused) {
  auto named = ParseGtestJson(R"({"testsuites": [{"name": "S", "testsuite": [{"name": "T", "max_ulp": "3"}]}]})",
                              "g.json", "");
  ASSERT_TRUE(named.ok()) << named.error().message;
  ASSERT_EQ((*named)[0].result.metrics.size(), 1u);
  EXPECT_EQ((*named)[0].result.metrics[0].name, "max_ulp");
  auto unnamed = ParseGtestJson(R"({"testsuites": [{"name": "S", "testsuite": [{"name": "T", "": "3"}]}]})",
                                "g.json", "");
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.error().code, ExitCode::kUsage);
  EXPECT_NE(unnamed.error().message.find("g.json"), std::string::npos) << unnamed.error().message;
  EXPECT_NE(unnamed.error().message.find("a recorded property has no name"), std::string::npos)
      << unnamed.error().message;
}

// Reports of other producers (harness/ingest/testdata/, written from their documented
// layouts): every case with the id, status and message its producer meant.
TEST(JunitXml, ReportsOfJestMochaScalatestAndXunit) {
  struct Want {
    std::string id;
    CaseStatus status;
    std::string message_part;  // empty: no message
  };
  const std::vector<std::pair<std::string, std::vector<Want>>> kFiles = {
      {"jest-junit.xml",
       {{"Cart/Cart adds an item", CaseStatus::kPass, ""},
        {"Cart/Cart removes an item", CaseStatus::kFail, "Expected: 0\nReceived: 1"},
        {"Cart/Cart todo: totals with tax", CaseStatus::kSkip, ""},
        {"Cart/Cart prices › in €", CaseStatus::kPass, ""},
        {"src.checkout.test.js/checkout pays", CaseStatus::kPass, ""}}},
      {"mocha-junit-reporter.xml",
       {{"Array #indexOf()/Array #indexOf() returns -1 when absent", CaseStatus::kPass, ""},
        {"Array #indexOf()/Array #indexOf() returns the index", CaseStatus::kFail,
         "expected 2 to equal 1\nAssertionError: expected 2 to equal 1\n    at Context.<anonymous> "
         "(test/array.spec.js:9:28)\nTimeout of 2000ms exceeded.\nError: Timeout of 2000ms exceeded."},
        {"Array #indexOf()/Array #indexOf() handles NaN", CaseStatus::kSkip, ""},
        {"Array #indexOf()/Array #indexOf() is fast", CaseStatus::kPass, ""}}},
      {"scalatest-junitxml.xml",
       {{"org.example.CartSpec/org.example.CartSpec.A Cart should start empty", CaseStatus::kPass, ""},
        {"org.example.CartSpec/org.example.CartSpec.A Cart should sum its items", CaseStatus::kFail,
         "7 did not equal 8\norg.scalatest.exceptions.TestFailedException: 7 did not equal 8"},
        {"org.example.CartSpec/org.example.CartSpec.A Cart should load prices", CaseStatus::kError,
         "connection refused\njava.net.ConnectException: connection refused"},
        {"org.example.CartSpec/org.example.CartSpec.A Cart should apply coupons", CaseStatus::kSkip, ""}}},
      {"xunit-c.xml",
       {{"calc basic test/test_sum_positive", CaseStatus::kPass, ""},
        {"calc basic test/test_sum_negative", CaseStatus::kPass, ""},
        {"calc basic test/test_sum_overflow", CaseStatus::kFail, "Expected 2 Was 0"},
        {"calc basic test/test_sum_wide", CaseStatus::kSkip, ""}}},
  };
  for (const auto& [file, want] : kFiles) {
    const auto path = std::filesystem::path(testing_util::kSourceRoot) / "harness/ingest/testdata" / file;
    auto cases = ParseIngestFile("junit", testing_util::ReadFile(path), file, {});
    ASSERT_TRUE(cases.ok()) << file << ": " << cases.error().message;
    ASSERT_EQ(cases->size(), 1u);
    const auto& got = (*cases)[0].cases;
    ASSERT_EQ(got.size(), want.size()) << file;
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].result.case_id, want[i].id) << file;
      EXPECT_EQ(got[i].result.status, want[i].status) << want[i].id;
      if (want[i].message_part.empty()) {
        EXPECT_EQ(got[i].result.message, "") << want[i].id;
      } else {
        EXPECT_NE(got[i].result.message.find(want[i].message_part), std::string::npos) << got[i].result.message;
      }
    }
  }
}

TEST(JunitXml, RefusesEntityDeclarationsAndReadsNoExternalOne) {
  TempDir dir;
  WriteFile(dir.path() / "secret.txt", "TOP-SECRET-CONTENT");
  const std::string xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE t [<!ENTITY x SYSTEM \"file://" +
                          (dir.path() / "secret.txt").string() +
                          "\">]>\n<testsuite name=\"s\"><testcase name=\"a\"><failure message=\"m\">&x;boom</failure>"
                          "</testcase></testsuite>";
  auto external = ParseJunitXml(xml, "e.xml", "");
  ASSERT_FALSE(external.ok());
  EXPECT_EQ(external.error().code, ExitCode::kUsage);
  EXPECT_EQ(external.error().message.rfind("e.xml:2: <!ENTITY x> refused", 0), 0u) << external.error().message;
  EXPECT_EQ(external.error().message.find("TOP-SECRET"), std::string::npos);
  // Internal amplification: one 5 KB entity referenced 2,000 times would be 10 MB of
  // message text. Refused at the declaration, before any reference is read.
  std::string amplified = "<?xml version=\"1.0\"?>\n<!DOCTYPE t [\n<!ENTITY big \"" + std::string(5000, 'A') +
                          "\">\n]>\n<testsuite name=\"s\"><testcase name=\"a\"><failure>";
  for (int i = 0; i < 2000; ++i) amplified += "&big;";
  amplified += "</failure></testcase></testsuite>\n";
  auto bomb = ParseJunitXml(amplified, "bomb.xml", "");
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.error().message.rfind("bomb.xml:3: <!ENTITY big> refused", 0), 0u) << bomb.error().message;
  // Parameter entities too: no declaration may build on another.
  auto parameter = ParseJunitXml("<!DOCTYPE t [<!ENTITY % p \"x\">]>\n<testsuite/>", "p.xml", "");
  ASSERT_FALSE(parameter.ok());
  EXPECT_EQ(parameter.error().message.rfind("p.xml:1: <!ENTITY p> refused", 0), 0u) << parameter.error().message;
  // A DOCTYPE without declarations, and the predefined entities, are fine.
  auto plain = ParseJunitXml("<!DOCTYPE testsuite>\n<testsuite><testcase name=\"a&amp;b\"/></testsuite>", "d.xml", "");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->at(0).result.case_id, "junit/a&b");
}

TEST(JunitXml, ElementsNestedDeeperThanLibxml2sBoundAreRefused) {
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "<testsuite>\n";
  auto r = ParseJunitXml(deep, "deep.xml", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  EXPECT_EQ(r.error().message.rfind("deep.xml:258:1: Excessive depth in document: 256", 0), 0u) << r.error().message;
}

// GoogleTest 1.12.1 --gtest_output=json, as it writes it.
constexpr const char* kGtestJson = R"({
  "tests": 4, "failures": 1, "disabled": 1, "errors": 0, "timestamp": "2026-12-01T10:00:00Z", "time": "0.035s",
  "name": "AllTests",
  "testsuites": [
    {"name": "MathTest", "tests": 3, "failures": 1, "disabled": 1, "errors": 0, "timestamp": "2026-12-01T10:00:00Z",
     "time": "0.03s",
     "testsuite": [
       {"name": "Adds", "file": "math_test.cc", "line": 10, "status": "RUN", "result": "COMPLETED",
        "timestamp": "2026-12-01T10:00:00Z", "time": "0.01s", "classname": "MathTest", "max_ulp": "3"},
       {"name": "Divides", "file": "math_test.cc", "line": 20, "status": "RUN", "result": "COMPLETED",
        "timestamp": "2026-12-01T10:00:00Z", "time": "0.02s", "classname": "MathTest",
        "failures": [{"failure": "math_test.cc:22\nExpected equality of these values:\n  a\n  b", "type": ""}]},
       {"name": "DISABLED_Slow", "file": "math_test.cc", "line": 30, "status": "NOTRUN", "result": "SUPPRESSED",
        "timestamp": "2026-12-01T10:00:00Z", "time": "0s", "classname": "MathTest"}
     ]},
    {"name": "Param\/P", "tests": 1, "failures": 0, "disabled": 0, "errors": 0, "time": "0s",
     "testsuite": [
       {"name": "Skips\/0", "value_param": "4", "status": "RUN", "result": "SKIPPED", "time": "0s", "classname": "Param\/P"}
     ]},
    {"name": "Empty", "tests": 0, "failures": 0, "disabled": 0, "errors": 0, "time": "0s", "testsuite": []}
  ]
})";

TEST(GtestJson, ReadsStatusesTimesFailuresAndProperties) {
  auto cases = ParseGtestJson(kGtestJson, "g.json", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 4u);
  const auto* adds = Find(*cases, "gtest/MathTest.Adds");
  ASSERT_NE(adds, nullptr);
  EXPECT_EQ(adds->result.status, CaseStatus::kPass);
  EXPECT_DOUBLE_EQ(adds->result.duration_s, 0.01);
  ASSERT_EQ(adds->result.metrics.size(), 1u);
  EXPECT_EQ(adds->result.metrics[0].name, "max_ulp");
  EXPECT_EQ(adds->result.metrics[0].value, 3);
  const auto* div = Find(*cases, "gtest/MathTest.Divides");
  EXPECT_EQ(div->result.status, CaseStatus::kFail);
  EXPECT_NE(div->result.message.find("Expected equality"), std::string::npos);
  EXPECT_EQ(Find(*cases, "gtest/MathTest.DISABLED_Slow")->result.status, CaseStatus::kSkip);
  EXPECT_EQ(Find(*cases, "gtest/Param/P.Skips/0")->result.status, CaseStatus::kSkip);
  // Why each was skipped: a disabled test was not run (NOTRUN, whatever its result says), a
  // skipped one ran and said so.
  EXPECT_EQ(Find(*cases, "gtest/MathTest.DISABLED_Slow")->result.message, "NOTRUN");
  EXPECT_EQ(Find(*cases, "gtest/Param/P.Skips/0")->result.message, "SKIPPED");
  auto named = ParseGtestJson(kGtestJson, "g.json", "kernels");
  ASSERT_TRUE(named.ok());
  EXPECT_NE(Find(*named, "kernels/MathTest.Adds"), nullptr);
}

// A recorded failure is never hidden: with "result": "SKIPPED" beside failures (GoogleTest
// itself writes COMPLETED for a test that failed and then skipped; other writers may not),
// the case failed.
TEST(GtestJson, AFailureWinsOverASkip) {
  auto cases = ParseGtestJson(R"({"testsuites": [{"name": "S", "testsuite": [
      {"name": "t", "status": "RUN", "result": "SKIPPED", "failures": [{"failure": "x.cc:3\nboom"}]}]}]})",
                              "f.json", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ((*cases)[0].result.status, CaseStatus::kFail);
  EXPECT_EQ((*cases)[0].result.message, "x.cc:3\nboom");
}

// A test's own fields are known by name; a RecordProperty may take the name of another
// level's field (GoogleTest reserves only the test's own), and it is a metric like any other.
// A property whose value is no number (a word, a list, null) is no metric.
TEST(GtestJson, APropertyNamedAsAnotherLevelsFieldIsAMetric) {
  auto cases = ParseGtestJson(R"({"testsuites": [{"name": "S", "tests": 1, "testsuite": [
      {"name": "t", "status": "RUN", "result": "COMPLETED", "time": "0.5s", "testsuites": "3", "testsuite": "4",
       "tests": "5", "disabled": "6", "errors": "7", "bound_use": 0.25, "device": "cpu", "ranks": [1, 2],
       "note": null}]}]})",
                              "p.json", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 1u);
  std::map<std::string, double> metrics;
  for (const Metric& m : (*cases)[0].result.metrics) metrics[m.name] = m.value;
  const std::map<std::string, double> want = {{"testsuites", 3}, {"testsuite", 4}, {"tests", 5},
                                              {"disabled", 6},   {"errors", 7},    {"bound_use", 0.25}};
  EXPECT_EQ(metrics, want);
}

TEST(GtestJson, MissingOptionalFieldsAndEmptyReport) {
  auto cases = ParseGtestJson(R"({"testsuites": [{"name": "S", "testsuite": [{"name": "t"}]}, {"name": "E"}]})", "m.json", "");
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ((*cases)[0].result.status, CaseStatus::kPass);
  auto empty = ParseGtestJson(R"({"testsuites": []})", "e.json", "");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(GtestJson, MalformedInputNamesWhere) {
  auto syntax = ParseGtestJson("{\n  \"testsuites\": [\n  {\"name\": }\n]}", "s.json", "");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().message.rfind("s.json:3:", 0), 0u) << syntax.error().message;
  auto no_name = ParseGtestJson(R"({"testsuites": [{"name": "S", "testsuite": [{"time": "1s"}]}]})", "n.json", "");
  ASSERT_FALSE(no_name.ok());
  EXPECT_NE(no_name.error().message.find("n.json: testsuites[0].testsuite[0].name"), std::string::npos)
      << no_name.error().message;
  auto bad_result = ParseGtestJson(R"({"testsuites": [{"name": "S", "testsuite": [{"name": "t", "result": "MAYBE"}]}]})",
                                   "r.json", "");
  ASSERT_FALSE(bad_result.ok());
  EXPECT_NE(bad_result.error().message.find("testsuites[0].testsuite[0].result: 'MAYBE'"), std::string::npos);
  auto bad_time = ParseGtestJson(R"({"testsuites": [{"name": "S", "testsuite": [{"name": "t", "time": "fast"}]}]})",
                                 "t.json", "");
  ASSERT_FALSE(bad_time.ok());
  auto no_suites = ParseGtestJson(R"({"tests": 0})", "x.json", "");
  ASSERT_FALSE(no_suites.ok());
  EXPECT_NE(no_suites.error().message.find("x.json: testsuites: missing field"), std::string::npos)
      << no_suites.error().message;
}

// A field GoogleTest writes as a string, given as a number, a boolean or a list, is refused
// naming its place, never read as its default: each of the test's string fields in turn, in
// the second test of the second suite, beside well-formed ones; the suite's name; and the
// text of a failure, under either of its keys, in the second failure.
TEST(GtestJson, AStringFieldOfAnotherTypeIsRefusedNamingItsPlace) {
  const std::string good = R"({"name": "ok", "time": "0.5s", "status": "RUN", "result": "COMPLETED"})";
  const auto report = [&](const std::string& second_suite_name, const std::string& second_test) {
    return R"({"testsuites": [{"name": "A", "testsuite": [)" + good + R"(]},
               {"name": )" + second_suite_name + R"(, "testsuite": [)" + good + ", " + second_test + "]}]}";
  };
  for (const std::string value : {"7", "true", "[\"0.5s\"]"}) {
    for (const std::string field : {"name", "time", "status", "result"}) {
      SCOPED_TRACE(field + ": " + value);
      std::map<std::string, std::string> fields = {
          {"name", "\"t\""}, {"time", "\"0.5s\""}, {"status", "\"RUN\""}, {"result", "\"COMPLETED\""}};
      fields[field] = value;
      std::string bad;
      for (const auto& [k, v] : fields) bad += (bad.empty() ? "" : ", ") + fmt::format("\"{}\": {}", k, v);
      auto cases = ParseGtestJson(report("\"B\"", "{" + bad + "}"), "w.json", "");
      ASSERT_FALSE(cases.ok());
      EXPECT_EQ(cases.error().message, "w.json: testsuites[1].testsuite[1]." + field + ": expected a string");
    }
    SCOPED_TRACE(value);
    auto suite = ParseGtestJson(report(value, R"({"name": "t"})"), "w.json", "");
    ASSERT_FALSE(suite.ok());
    EXPECT_EQ(suite.error().message, "w.json: testsuites[1].name: expected a string");
    for (const std::string key : {"failure", "message"}) {
      const std::string failures = R"([{")" + key + R"(": "x.cc:1"}, {")" + key + R"(": )" + value + "}]";
      auto failure = ParseGtestJson(report("\"B\"", R"({"name": "t", "failures": )" + failures + "}"), "w.json", "");
      ASSERT_FALSE(failure.ok()) << key;
      EXPECT_EQ(failure.error().message, "w.json: testsuites[1].testsuite[1].failures[1]." + key + ": expected a string");
    }
  }
}

constexpr const char* kLmEvalResults = R"({
  "results": {
    "gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.75, "exact_match_stderr,strict-match": 0.01,
              "exact_match,flexible-extract": 0.8, "exact_match_stderr,flexible-extract": "N/A"}
  },
  "n-samples": {"gsm8k": {"original": 1319, "effective": 4}},
  "configs": {"gsm8k": {"task": "gsm8k", "num_fewshot": 5}},
  "versions": {"gsm8k": 3.0}
})";

constexpr const char* kLmEvalSamples =
    R"({"doc_id": 0, "target": "Janet... #### 18", "filtered_resps": ["18"], "filter": "strict-match", "exact_match": 1.0}
{"doc_id": 0, "target": "Janet... #### 18", "filtered_resps": ["18"], "filter": "flexible-extract", "exact_match": 1.0}
{"doc_id": 1, "target": "#### 3", "filtered_resps": ["[invalid]"], "filter": "strict-match", "exact_match": 0.0}

{"doc_id": 2, "target": "#### 70000", "filtered_resps": [["70000"]], "filter": "strict-match", "exact_match": 1.0}
)";

TEST(LmEval, ReadsMetricsStderrAndSampleCount) {
  auto cases = ParseLmEval(kLmEvalResults, "results.json", "", kDefaultLmEvalFilter, {});
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  ASSERT_EQ(cases->size(), 1u);
  const auto& c = (*cases)[0];
  EXPECT_EQ(c.result.case_id, "lm-eval/gsm8k");
  ASSERT_EQ(c.result.metrics.size(), 3u);  // alias and the stderrs are not metrics; accuracy is strict-match's
  const Metric* strict = nullptr;
  for (const auto& m : c.result.metrics)
    if (m.name == "exact_match,strict-match") strict = &m;
  ASSERT_NE(strict, nullptr);
  EXPECT_DOUBLE_EQ(strict->value, 0.75);
  EXPECT_EQ(strict->n, 4);
  ASSERT_TRUE(strict->low && strict->high);
  EXPECT_NEAR(*strict->low, 0.75 - 0.0196, 1e-12);
  EXPECT_NEAR(*strict->high, 0.75 + 0.0196, 1e-12);
  for (const auto& m : c.result.metrics) {
    if (m.name == "exact_match,flexible-extract") {
      EXPECT_FALSE(m.low.has_value());  // "N/A" stderr
    }
  }
}

// n is the documents the task ran: n-samples' "effective" (what --limit left), else its
// "original" when the file gives no positive effective count, and
// each task reads its own entry.
TEST(LmEval, TheSampleCountIsTheEffectiveOneElseTheOriginal) {
  auto n_of = [](const std::string& n_samples) -> int64_t {
    const std::string results = R"({"results": {"gsm8k": {"exact_match,strict-match": 0.75},
                                               "arc": {"exact_match,strict-match": 0.5}},
                                   "n-samples": )" + n_samples + "}";
    auto cases = ParseLmEval(results, "results.json", "", kDefaultLmEvalFilter, {});
    if (!cases.ok()) return -1;
    for (const auto& c : *cases)
      if (c.result.case_id == "lm-eval/gsm8k")
        for (const auto& m : c.result.metrics)
          if (m.name == "exact_match,strict-match") return m.n;
    return -2;
  };
  EXPECT_EQ(n_of(R"({"gsm8k": {"original": 1319, "effective": 4}, "arc": {"original": 7, "effective": 6}})"), 4);
  EXPECT_EQ(n_of(R"({"arc": {"original": 7, "effective": 6}, "gsm8k": {"original": 1319}})"), 1319);
  EXPECT_EQ(n_of(R"({"gsm8k": {"effective": 0, "original": 1319}})"), 1319);
}

// A task lm-eval wrote results for ran to its end: a passed case, whatever its accuracy
// (the gate reads that, not the status), for each task, with samples or without.
TEST(LmEval, EachTaskWithResultsIsAPassedCaseWhateverItsAccuracy) {
  const char* two = R"({"results": {"gsm8k": {"exact_match,strict-match": 0.0}, "arc": {"acc,none": 0.25}}})";
  const std::vector<LmEvalSamplesFile> none, some = {
      {R"({"doc_id": 0, "filter": "strict-match", "exact_match": 0})", "samples_gsm8k_2026.jsonl"}};
  for (const auto& samples : {none, some}) {
    auto cases = ParseLmEval(two, "r.json", "", kDefaultLmEvalFilter, samples);
    ASSERT_TRUE(cases.ok()) << cases.error().message;
    ASSERT_EQ(cases->size(), 2u);
    for (const char* id : {"lm-eval/gsm8k", "lm-eval/arc"}) {
      ASSERT_NE(Find(*cases, id), nullptr) << id;
      EXPECT_EQ(Find(*cases, id)->result.status, CaseStatus::kPass) << id;
    }
    EXPECT_EQ(Find(*cases, "lm-eval/gsm8k")->samples.size(), samples.size());
  }
}

TEST(LmEval, SamplesKeepTheStrictFilterRowsAsCorrectOrWrong) {
  auto cases = ParseLmEval(kLmEvalResults, "results.json", "", kDefaultLmEvalFilter, {{kLmEvalSamples, "samples_gsm8k_2026.jsonl"}});
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  const auto& s = (*cases)[0].samples;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].key, "0");
  EXPECT_EQ(Word(s[0].outcome), "correct");
  EXPECT_EQ(s[0].expected, "Janet... #### 18");
  EXPECT_EQ(s[0].extracted, "18");
  EXPECT_EQ(s[1].key, "1");
  EXPECT_EQ(Word(s[1].outcome), "wrong");
  EXPECT_EQ(s[1].extracted, "[invalid]");
  EXPECT_EQ(s[2].extracted, "70000");
}

TEST(LmEval, SamplesFileOfSeveralTasksIsMatchedByName) {
  const char* two = R"({"results": {"gsm8k": {"exact_match,none": 0.5}, "gsm8k_cot": {"exact_match,none": 0.6}}})";
  const char* rows = R"({"doc_id": 7, "target": "1", "filtered_resps": ["1"], "exact_match": 1})";
  auto cases = ParseLmEval(two, "r.json", "", kDefaultLmEvalFilter, {{rows, "out/samples_gsm8k_cot_2026-12-01T10.jsonl"}});
  ASSERT_TRUE(cases.ok()) << cases.error().message;
  EXPECT_TRUE(Find(*cases, "lm-eval/gsm8k")->samples.empty());
  ASSERT_EQ(Find(*cases, "lm-eval/gsm8k_cot")->samples.size(), 1u);
  auto unknown = ParseLmEval(two, "r.json", "", kDefaultLmEvalFilter, {{rows, "mine.jsonl"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("mine.jsonl: cannot tell which task"), std::string::npos);
}

// The filter is chosen once: accuracy (value, n, interval), the samples and so the trend
// and the paired verdict all read --filter-name's (default strict-match) rows.
TEST(LmEval, OneFilterForAccuracyIntervalAndSamples) {
  for (const std::string filter : {"strict-match", "flexible-extract"}) {
    auto cases = ParseLmEval(kLmEvalResults, "results.json", "", filter, {{kLmEvalSamples, "samples_gsm8k_2026.jsonl"}});
    ASSERT_TRUE(cases.ok()) << cases.error().message;
    const auto& c = (*cases)[0];
    const Metric* accuracy = nullptr;
    for (const auto& m : c.result.metrics)
      if (m.name == "accuracy") accuracy = &m;
    ASSERT_NE(accuracy, nullptr);
    EXPECT_EQ(accuracy->value, filter == "strict-match" ? 0.75 : 0.8);
    EXPECT_EQ(accuracy->n, 4);
    EXPECT_EQ(accuracy->low.has_value(), filter == "strict-match") << "flexible-extract's stderr is N/A";
    EXPECT_EQ(c.result.message, "accuracy is lm-eval's exact_match," + filter);
    // strict-match keeps docs 0, 1, 2; flexible-extract only doc 0.
    EXPECT_EQ(c.samples.size(), filter == "strict-match" ? 3u : 1u);
  }
  auto none = ParseLmEval(kLmEvalResults, "results.json", "", "get-answer", {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "results.json: results.gsm8k: no filter 'get-answer' among flexible-extract, strict-match: choose one "
            "with --filter-name");
}

// A samples file none of whose several filters is --filter-name's is refused naming each of
// them, never read as a file of no samples; among several, the wanted one's rows are read,
// and a file of one filter is read whatever its name.
TEST(LmEval, SamplesWithoutTheWantedFilterAmongSeveralAreRefusedNamingEach) {
  const std::string rows = R"({"doc_id": 0, "filter": "flexible-extract", "exact_match": 1}
{"doc_id": 0, "filter": "get-answer", "exact_match": 0}
{"doc_id": 1, "filter": "flexible-extract", "exact_match": 0}
)";
  auto missing = ParseLmEvalSamples(rows, "s.jsonl", "strict-match");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "s.jsonl: no filter 'strict-match' among flexible-extract, get-answer: choose one with --filter-name");
  auto wanted = ParseLmEvalSamples(rows, "s.jsonl", "get-answer");
  ASSERT_TRUE(wanted.ok()) << wanted.error().message;
  ASSERT_EQ(wanted->size(), 1u);
  EXPECT_EQ(Word((*wanted)[0].outcome), "wrong");
  auto one = ParseLmEvalSamples(R"({"doc_id": 3, "filter": "get-answer", "exact_match": 1})", "o.jsonl", "strict-match");
  ASSERT_TRUE(one.ok()) << one.error().message;
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].key, "3");
}

// lm-eval 0.3 (acc, no filter, no n-samples) and 0.4.0 (exact_match,get-answer) map to
// accuracy too; group rows are skipped; completions come from resps.
TEST(LmEval, OlderFormatsGroupsAndCompletions) {
  auto v03 = ParseLmEval(R"({"results": {"arc_easy": {"acc": 0.5, "acc_stderr": 0.01, "acc_norm": 0.55}},
                             "versions": {"arc_easy": 0}})",
                         "r.json", "", kDefaultLmEvalFilter,
                         {{R"({"doc_id": 0, "acc": 1, "resps": [["A"]]})"
                           "\n"
                           R"({"doc_id": 1, "acc": 0})",
                           "s.jsonl"}});
  ASSERT_TRUE(v03.ok()) << v03.error().message;
  const auto& arc = (*v03)[0];
  const Metric* accuracy = nullptr;
  for (const auto& m : arc.result.metrics)
    if (m.name == "accuracy") accuracy = &m;
  ASSERT_NE(accuracy, nullptr);
  EXPECT_EQ(accuracy->value, 0.5);
  EXPECT_EQ(accuracy->n, 2) << "no n-samples: the samples say how many ran";
  EXPECT_EQ(arc.result.message, "accuracy is lm-eval's acc");
  ASSERT_EQ(arc.samples.size(), 2u);
  EXPECT_EQ(Word(arc.samples[0].outcome), "correct");
  EXPECT_EQ(arc.samples[0].completion, "A");
  auto v040 = ParseLmEval(R"({"results": {"gsm8k": {"exact_match,get-answer": 0.3125, "exact_match_stderr,get-answer": 0.0128}}})",
                          "r.json", "", kDefaultLmEvalFilter, {});
  ASSERT_TRUE(v040.ok()) << v040.error().message;
  bool found = false;
  for (const auto& m : (*v040)[0].result.metrics) found = found || (m.name == "accuracy" && m.value == 0.3125);
  EXPECT_TRUE(found);
  auto groups = ParseLmEval(R"({"results": {"mmlu": {"acc,none": 0.6, "alias": "mmlu"},
                                            "mmlu_stem": {"acc,none": 0.5, "alias": " - stem"},
                                            "mmlu_algebra": {"acc,none": 0.4, "alias": "  - algebra"}},
                                "groups": {"mmlu": {"acc,none": 0.6}},
                                "group_subtasks": {"mmlu": ["mmlu_stem"], "mmlu_stem": ["mmlu_algebra"], "mmlu_algebra": []}})",
                            "r.json", "", kDefaultLmEvalFilter, {});
  ASSERT_TRUE(groups.ok()) << groups.error().message;
  ASSERT_EQ(groups->size(), 1u) << "mmlu and mmlu_stem are groups";
  EXPECT_EQ((*groups)[0].result.case_id, "lm-eval/mmlu_algebra");
  // A samples file written as one JSON list (0.4.0), with the model's raw answer.
  auto list = ParseLmEvalSamples(
      R"([{"doc_id": 3, "exact_match": 1, "resps": [["The answer is 18.\n#### 18"]], "filtered_resps": ["18"]}])",
      "s.json", kDefaultLmEvalFilter);
  ASSERT_TRUE(list.ok()) << list.error().message;
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].completion, "The answer is 18.\n#### 18");
  EXPECT_EQ((*list)[0].extracted, "18");
}

TEST(LmEval, MalformedInputNamesFileAndLine) {
  auto syntax = ParseLmEvalSamples("{\"doc_id\": 0, \"exact_match\": 1}\n{\"doc_id\": 1, \"exact_match\": }\n", "s.jsonl", kDefaultLmEvalFilter);
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().message.rfind("s.jsonl:2:", 0), 0u) << syntax.error().message;
  auto missing = ParseLmEvalSamples("\n\n{\"doc_id\": 4}\n", "m.jsonl", kDefaultLmEvalFilter);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("m.jsonl:3: exact_match"), std::string::npos) << missing.error().message;
  auto dup = ParseLmEvalSamples("{\"doc_id\": 4, \"exact_match\": 1}\n{\"doc_id\": 4, \"exact_match\": 0}\n", "d.jsonl", kDefaultLmEvalFilter);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().message, "d.jsonl:2: doc_id 4 already given at d.jsonl:1");
  auto no_task = ParseLmEval(R"({"results": {"": {"acc,none": 0.5}}})", "r.json", "", kDefaultLmEvalFilter, {});
  ASSERT_FALSE(no_task.ok());
  EXPECT_NE(no_task.error().message.find("r.json: results.: a task name must not be empty"), std::string::npos) << no_task.error().message;
  auto no_metric = ParseLmEval(R"({"results": {"t": {"": 0.5}}})", "r.json", "", kDefaultLmEvalFilter, {});
  ASSERT_FALSE(no_metric.ok());
  EXPECT_NE(no_metric.error().message.find("r.json: results.t.: a metric name must not be empty"), std::string::npos)
      << no_metric.error().message;
  // A stderr that overflows the interval, or a negative one, gives the metric no interval.
  auto huge = ParseLmEval(R"({"results": {"t": {"acc,none": 0.5, "acc_stderr,none": 1e308, "f,none": 1,
                                              "f_stderr,none": -0.1}}})", "r.json", "", kDefaultLmEvalFilter, {});
  ASSERT_TRUE(huge.ok()) << huge.error().message;
  for (const auto& m : (*huge)[0].result.metrics) EXPECT_FALSE(m.low || m.high) << m.name;
  auto no_results = ParseLmEval(R"({"configs": {}})", "r.json", "", kDefaultLmEvalFilter, {});
  ASSERT_FALSE(no_results.ok());
  EXPECT_NE(no_results.error().message.find("r.json: results"), std::string::npos);
}

// A sample's field or an n-samples count of another type is refused naming its place, never
// read as a default: doc_id, the score and the filter on the second line of a samples file,
// each as three other types, the effective and original counts of the second task, and a
// task's results that are not an object; and a samples file written as one JSON list that
// does not parse is named by line.
TEST(LmEval, AFieldOfAnotherTypeIsRefusedNamingItsPlace) {
  const std::string first = R"({"doc_id": 0, "filter": "strict-match", "exact_match": 1})";
  const std::map<std::string, std::pair<std::string, std::vector<std::string>>> fields = {
      {"doc_id", {"an integer", {"\"1\"", "1.5", "[1]"}}},
      {"exact_match", {"a number", {"\"1\"", "true", "{}"}}},
      {"filter", {"a string", {"7", "false", "[\"strict-match\"]"}}}};
  for (const auto& [field, wrong] : fields) {
    for (const auto& value : wrong.second) {
      SCOPED_TRACE(field + ": " + value);
      std::map<std::string, std::string> row = {{"doc_id", "1"}, {"exact_match", "0"}, {"filter", "\"strict-match\""}};
      row[field] = value;
      std::string second;
      for (const auto& [k, v] : row) second += (second.empty() ? "" : ", ") + fmt::format("\"{}\": {}", k, v);
      auto r = ParseLmEvalSamples(first + "\n{" + second + "}\n", "s.jsonl", kDefaultLmEvalFilter);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().message, "s.jsonl:2: " + field + ": expected " + wrong.first);
    }
  }
  for (const std::string count : {"effective", "original"}) {
    SCOPED_TRACE(count);
    const std::string results = R"({"results": {"gsm8k": {"acc,none": 0.5}, "arc": {"acc,none": 0.25}},
                                   "n-samples": {"gsm8k": {"original": 4}, "arc": {")" + count + R"(": "4"}}})";
    auto r = ParseLmEval(results, "r.json", "", kDefaultLmEvalFilter, {});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "r.json: n-samples.arc." + count + ": expected an integer");
  }
  auto task = ParseLmEval(R"({"results": {"gsm8k": {"acc,none": 0.5}, "arc": 0.25}})", "r.json", "", kDefaultLmEvalFilter, {});
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.error().message, "r.json: results.arc: expected an object");
  auto list = ParseLmEvalSamples("[\n{\"doc_id\": 0, \"exact_match\": 1},\n{\"doc_id\": }\n]", "l.json", kDefaultLmEvalFilter);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message.rfind("l.json:3:", 0), 0u) << list.error().message;
}

TEST(SglangGsm8k, OneRunPerLineWithAccuracyAndItsQuestionCount) {
  const std::string text =
      R"({"task": "gsm8k", "backend": "srt", "num_gpus": 1, "latency": 41.5, "accuracy": 0.925, "invalid": 0.002, "output_throughput": 1830.2, "num_requests": 1319, "other": {"num_questions": 1319, "parallel": 1319}})"
      "\n\n"
      R"({"task": "gsm8k", "backend": "srt", "latency": 40.0, "accuracy": 0.93, "num_requests": 200})"
      "\n";
  auto runs = ParseSglangGsm8k(text, "result.jsonl", "");
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].source, "result.jsonl:1");
  EXPECT_EQ((*runs)[1].source, "result.jsonl:3");
  const auto& c = (*runs)[0].cases.at(0);
  EXPECT_EQ(c.result.case_id, "sglang/gsm8k");
  EXPECT_EQ(c.result.message, "backend srt");
  ASSERT_EQ(c.result.metrics.size(), 4u);
  EXPECT_EQ(c.result.metrics[0].name, "accuracy");
  EXPECT_DOUBLE_EQ(c.result.metrics[0].value, 0.925);
  EXPECT_EQ(c.result.metrics[0].n, 1319);
  EXPECT_EQ(c.result.metrics[1].name, "invalid");
  EXPECT_EQ(c.result.metrics[1].n, 1319) << "a rate over the questions";
  EXPECT_EQ(c.result.metrics[2].name, "latency_s");
  EXPECT_EQ(c.result.metrics[2].n, 0) << "seconds and tokens/s are not counts over questions";
  EXPECT_EQ(c.result.metrics[3].name, "output_throughput");
  EXPECT_EQ(c.result.metrics[3].n, 0);
  EXPECT_DOUBLE_EQ(c.result.duration_s, 41.5) << "the run's latency is the case's duration";
  // Missing optional fields: only accuracy, n from num_requests.
  const auto& second = (*runs)[1].cases.at(0);
  ASSERT_EQ(second.result.metrics.size(), 2u);
  EXPECT_EQ(second.result.metrics[0].n, 200);
  EXPECT_NE((*runs)[0].content, (*runs)[1].content);
}

// Each result line, and a raw-results file, is a benchmark that ran to its end: a passed
// case whatever its accuracy (the gate reads that, not the status).
TEST(SglangGsm8k, EachLineAndEachRawFileIsAPassedCaseWhateverItsAccuracy) {
  auto runs = ParseSglangGsm8k("{\"accuracy\": 0.0, \"task\": \"a\"}\n{\"accuracy\": 1.0, \"task\": \"b\"}\n", "r.jsonl", "");
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 2u);
  for (const auto& run : *runs) {
    ASSERT_EQ(run.cases.size(), 1u);
    EXPECT_EQ(run.cases[0].result.status, CaseStatus::kPass) << run.cases[0].result.case_id;
  }
  auto raw = ParseSglangGsm8kRaw("{\"prompt_id\": 0, \"correct\": false}\n{\"prompt_id\": 1, \"correct\": false}\n",
                                 "raw.jsonl", "");
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  EXPECT_EQ(raw->result.status, CaseStatus::kPass);
  EXPECT_EQ(raw->samples.size(), 2u);
}

// bench_sglang.py --raw-result-file: one object per question (no newline after the last).
constexpr const char* kSglangRaw =
    R"({"prompt_id": 0, "prompt": "Question: ...\nAnswer:", "output": " 18 dollars.", "correct": true}
{"prompt_id": 1, "prompt": "Question: ...\nAnswer:", "output": " 2", "correct": false}
{"prompt_id": 2, "prompt": "Question: ...\nAnswer:", "output": " 70000", "correct": true})";

TEST(SglangGsm8k, RawResultsAreSamplesKeyedByQuestionAndNIsWhatRan) {
  auto alone = ParseIngestFile("sglang-gsm8k-raw", kSglangRaw, "raw.jsonl", {});
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  ASSERT_EQ(alone->size(), 1u);
  const auto& c = (*alone)[0].cases.at(0);
  EXPECT_EQ(c.result.case_id, "sglang/gsm8k");
  ASSERT_EQ(c.samples.size(), 3u);
  EXPECT_EQ(c.samples[1].key, "1");
  EXPECT_EQ(Word(c.samples[1].outcome), "wrong");
  EXPECT_EQ(c.samples[0].completion, " 18 dollars.");
  ASSERT_EQ(c.result.metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(c.result.metrics[0].value, 2.0 / 3.0);
  EXPECT_EQ(c.result.metrics[0].n, 3);
  // --samples on a result file: the raw file belongs to its last line; n is what ran.
  IngestOptions o;
  o.samples = {kSglangRaw};
  o.sample_origins = {"raw.jsonl"};
  const std::string lines = R"({"task": "gsm8k", "accuracy": 0.5, "num_requests": 200})"
                            "\n"
                            R"({"task": "gsm8k", "accuracy": 0.667, "invalid": 0.005, "latency": 12.5, "num_requests": 200, "other": {"num_questions": 200}})"
                            "\n";
  auto with = ParseIngestFile("sglang-gsm8k", lines, "result.jsonl", o);
  ASSERT_TRUE(with.ok()) << with.error().message;
  ASSERT_EQ(with->size(), 2u);
  EXPECT_TRUE((*with)[0].cases[0].samples.empty());
  EXPECT_FALSE((*with)[0].has_samples);
  const auto& last = (*with)[1].cases[0];
  EXPECT_TRUE((*with)[1].has_samples);
  EXPECT_EQ(last.samples.size(), 3u);
  for (const auto& m : last.result.metrics) {
    if (m.name == "accuracy") {
      EXPECT_DOUBLE_EQ(m.value, 2.0 / 3.0);
    }
    if (m.name == "accuracy" || m.name == "invalid") {
      EXPECT_EQ(m.n, 3) << m.name;
    }
  }
  // Only accuracy is recomputed from the rows; the line's other metrics keep their values.
  std::map<std::string, std::pair<double, int64_t>> kept;
  for (const auto& m : last.result.metrics) kept[m.name] = {m.value, m.n};
  EXPECT_EQ(kept, (std::map<std::string, std::pair<double, int64_t>>{
                      {"accuracy", {2.0 / 3.0, 3}}, {"invalid", {0.005, 3}}, {"latency_s", {12.5, 0}}}));
  EXPECT_NE(last.result.message.find("the result line said accuracy 0.667 of 200"), std::string::npos)
      << last.result.message;
  EXPECT_EQ((*with)[1].content, (*ParseIngestFile("sglang-gsm8k", lines, "result.jsonl", {}))[1].content)
      << "the samples are no part of the line's identity: given later, they attach to its run";
  auto dup = ParseSglangRawResults("{\"prompt_id\": 4, \"correct\": true}\n{\"prompt_id\": 4, \"correct\": false}", "r.jsonl");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().message, "r.jsonl:2: prompt_id 4 already given on line 1");
  auto no_correct = ParseSglangRawResults("{\"prompt_id\": 4}", "r.jsonl");
  ASSERT_FALSE(no_correct.ok());
  EXPECT_NE(no_correct.error().message.find("r.jsonl:1: correct"), std::string::npos) << no_correct.error().message;
}

// A run that ended before its first answer: no accuracy of 0 of 0, as the samples or alone.
TEST(SglangGsm8k, RawResultsWithoutARowAreAnError) {
  for (const std::string empty : {"", "\n\n"}) {
    auto rows = ParseSglangRawResults(empty, "r.jsonl");
    ASSERT_FALSE(rows.ok());
    EXPECT_EQ(rows.error().message, "r.jsonl: no raw result in it: the run answered no question");
    auto as_run = ParseSglangGsm8kRaw(empty, "r.jsonl", "");
    ASSERT_FALSE(as_run.ok());
    EXPECT_EQ(as_run.error().message, rows.error().message);
  }
}

TEST(SglangGsm8k, MalformedLinesNameFileAndLine) {
  auto syntax = ParseSglangGsm8k("{\"accuracy\": 0.9}\n{\"accuracy\": 0.9,\n", "r.jsonl", "");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().message.rfind("r.jsonl:2:", 0), 0u) << syntax.error().message;
  auto missing = ParseSglangGsm8k("{\"accuracy\": 0.9}\n{\"latency\": 3}\n", "r.jsonl", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("r.jsonl:2: accuracy"), std::string::npos) << missing.error().message;
  auto range = ParseSglangGsm8k("{\"accuracy\": 92.5, \"backend\": \"srt\"}\n", "r.jsonl", "");
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.error().message, "r.jsonl:1: accuracy: 92.5 is not within [0, 1]");
  auto no_task = ParseSglangGsm8k("{\"accuracy\": 0.9, \"task\": \"\"}\n", "r.jsonl", "");
  ASSERT_FALSE(no_task.ok());
  EXPECT_NE(no_task.error().message.find("r.jsonl:1: task: must not be empty"), std::string::npos) << no_task.error().message;
  auto negative = ParseSglangGsm8k("{\"accuracy\": 0.9, \"latency\": -1.5}\n", "r.jsonl", "");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("r.jsonl:1: latency: -1.5 is negative"), std::string::npos)
      << negative.error().message;
  auto empty = ParseSglangGsm8k("", "r.jsonl", "");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

// A field of another type than sglang writes is refused naming its line and place, never
// read as its default: each optional field of a result line on the second line, and each
// field of a raw-results row on the second row.
TEST(SglangGsm8k, AFieldOfAnotherTypeIsRefusedNamingItsPlace) {
  const std::string first = R"({"accuracy": 0.9, "task": "gsm8k", "backend": "srt", "num_questions": 4})";
  // the field as written, the place named, what it should be
  const std::vector<std::array<std::string, 3>> lines = {
      {R"("task": 7)", "task", "a string"},
      {R"("backend": ["srt"])", "backend", "a string"},
      {R"("other": "many")", "other", "an object"},
      {R"("other": {"num_questions": "4"})", "other.num_questions", "an integer"},
      {R"("num_questions": 4.5)", "num_questions", "an integer"},
      {R"("num_requests": true)", "num_requests", "an integer"},
      {R"("invalid": "0.1")", "invalid", "a number"},
      {R"("latency": null)", "latency", "a number"},
      {R"("output_throughput": {})", "output_throughput", "a number"}};
  for (const auto& [field, place, type] : lines) {
    SCOPED_TRACE(field);
    auto r = ParseSglangGsm8k(first + "\n{\"accuracy\": 0.5, " + field + "}\n", "r.jsonl", "");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "r.jsonl:2: " + place + ": expected " + type);
  }
  const std::string row = R"({"prompt_id": 0, "correct": true, "output": "#### 18"})";
  const std::vector<std::array<std::string, 3>> rows = {
      {R"("prompt_id": "1", "correct": true)", "prompt_id", "an integer"},
      {R"("prompt_id": 1, "correct": 1)", "correct", "true or false"},
      {R"("prompt_id": 1, "correct": false, "output": 3)", "output", "a string"}};
  for (const auto& [fields, place, type] : rows) {
    SCOPED_TRACE(fields);
    auto r = ParseSglangGsm8kRaw(row + "\n{" + fields + "}\n", "raw.jsonl", "");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "raw.jsonl:2: " + place + ": expected " + type);
  }
}

// The question count is the first above 0 of other.num_questions, num_questions and
// num_requests; a negative one read on the way is refused naming its own field (before, a
// negative other.num_questions was passed over for the next count, and a negative
// num_requests was named num_questions).
TEST(SglangGsm8k, TheQuestionCountIsTheFirstAboveZeroAndANegativeOneIsRefusedByName) {
  const std::vector<std::pair<std::string, int64_t>> counted = {
      {R"("other": {"num_questions": 5}, "num_questions": 6, "num_requests": 7)", 5},
      {R"("other": {"num_questions": 1}, "num_questions": 6, "num_requests": 7)", 1},
      {R"("num_questions": 1, "num_requests": 7)", 1},
      {R"("other": {"num_questions": 0}, "num_questions": 6, "num_requests": 7)", 6},
      {R"("num_questions": 0, "num_requests": 7)", 7},
      {R"("other": {}, "num_requests": 7)", 7},
      {R"("num_questions": 6, "num_requests": -7)", 6}};
  for (const auto& [fields, n] : counted) {
    SCOPED_TRACE(fields);
    auto r = ParseSglangGsm8k("{\"accuracy\": 0.5, " + fields + "}\n", "r.jsonl", "");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0].cases[0].result.metrics[0].n, n);
  }
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"("other": {"num_questions": -3}, "num_questions": 200)", "other.num_questions"},
      {R"("num_questions": -1, "num_requests": 200)", "num_questions"},
      {R"("num_questions": 0, "num_requests": -200)", "num_requests"},
      {R"("other": {"num_questions": 0}, "num_requests": -1)", "num_requests"}};
  for (const auto& [fields, place] : refused) {
    SCOPED_TRACE(fields);
    auto r = ParseSglangGsm8k("{\"accuracy\": 0.5, " + fields + "}\n", "r.jsonl", "");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "r.jsonl:1: " + place + ": is negative");
  }
}

// The msmodeling guide's layout: logs before the table, the total line after it.
constexpr const char* kTable = R"(INFO loading model
-----------------------------------------  --------------  ------------  ----------
                   Name                    analytic total  analytic avg  # of Calls
-----------------------------------------  --------------  ------------  ----------
tensor_cast.static_quant_linear.default         884.004ms       1.973ms         448
tensor_cast.all_reduce.default                   10.000ms       5.000ms           2
-----------------------------------------  --------------  ------------  ----------
Total time for analytic: 894.004ms
)";

TEST(TensorCastIngest, TableRowsBecomeOneCasesOpRows) {
  auto c = ParseTensorCastFile(kTable, "out/sp_step.txt", "");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->result.case_id, "tensorcast/sp_step");
  EXPECT_EQ(c->result.status, CaseStatus::kPass);
  ASSERT_EQ(c->result.ops.size(), 2u);
  EXPECT_EQ(c->result.ops[1].op, "tensor_cast.all_reduce.default");
  EXPECT_EQ(c->result.ops[1].calls, 2);
  ASSERT_EQ(c->result.metrics.size(), 1u);
  EXPECT_EQ(c->result.metrics[0].name, "est_total_s");
  EXPECT_DOUBLE_EQ(c->result.metrics[0].value, 0.894004);
  auto bad = ParseTensorCastFile("----  ----\nName  # of Calls\n----  ----\nx     many\n", "b.txt", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("b.txt:", 0), 0u) << bad.error().message;
}

TEST(IngestFile, DispatchesByFormatAndAppliesCaseId) {
  IngestOptions o;
  o.case_id = "gsm8k/test_0";
  auto runs = ParseIngestFile("sglang-gsm8k", "{\"accuracy\": 0.9, \"num_questions\": 10}\n", "r.jsonl", o);
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  EXPECT_EQ(runs->at(0).cases.at(0).result.case_id, "gsm8k/test_0");
  EXPECT_EQ(runs->at(0).cases.at(0).suite, "gsm8k");
  o.suite = "other";
  EXPECT_FALSE(ParseIngestFile("sglang-gsm8k", "{\"accuracy\": 0.9}\n", "r.jsonl", o).ok());
  IngestOptions many;
  many.case_id = "x/y";
  auto two = ParseIngestFile("junit", "<testsuite><testcase name=\"a\"/><testcase name=\"b\"/></testsuite>", "j.xml", many);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().message.find("holds 2"), std::string::npos);
  auto unknown = ParseIngestFile("nunit", "", "f", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("junit, gtest-json, lm-eval, sglang-gsm8k, sglang-gsm8k-raw, tensorcast-table"), std::string::npos);
  IngestOptions with_samples;
  with_samples.samples = {"{}"};
  with_samples.sample_origins = {"s.jsonl"};
  EXPECT_FALSE(ParseIngestFile("junit", "<testsuite/>", "j.xml", with_samples).ok());
}

// 150,000 nested arrays overflowed the stack in the JSON readers' copies (SIGSEGV); now the
// text is refused before it is parsed, naming file:line:column.
TEST(IngestFile, JsonNestedPastTheBoundIsRefusedNamingThePlace) {
  const std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  auto gtest = ParseIngestFile("gtest-json", "{\"testsuites\": " + deep + "}", "g.json", {});
  ASSERT_FALSE(gtest.ok());
  EXPECT_EQ(gtest.error().message, "g.json:1:271: arrays and objects nested deeper than 256 levels");
  auto lm_eval = ParseIngestFile("lm-eval", "{\"results\": {\"t\": {\"acc,none\": 0.5}},\n\"configs\": " + deep + "}",
                                 "r.json", {});
  ASSERT_FALSE(lm_eval.ok());
  EXPECT_EQ(lm_eval.error().message, "r.json:2:267: arrays and objects nested deeper than 256 levels");
  IngestOptions samples;
  samples.samples = {"{\"doc_id\": 0, \"exact_match\": 1}\n{\"doc_id\": 1, \"exact_match\": 1, \"target\": " + deep +
                     "}\n"};
  samples.sample_origins = {"s.jsonl"};
  auto rows = ParseIngestFile("lm-eval", "{\"results\": {\"t\": {\"acc,none\": 0.5}}}", "r.json", samples);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().message, "s.jsonl:2:298: arrays and objects nested deeper than 256 levels");
  auto sglang = ParseIngestFile("sglang-gsm8k", "{\"accuracy\": 0.9}\n{\"accuracy\": 0.9, \"other\": " + deep + "}\n",
                                "r.jsonl", {});
  ASSERT_FALSE(sglang.ok());
  EXPECT_EQ(sglang.error().message, "r.jsonl:2:283: arrays and objects nested deeper than 256 levels");
}

TEST(IngestFile, StoredTextsAreBoundedTextsCutNamesRefused) {
  // A failure of 5,000 two-byte characters: cut at 4096 bytes, between characters.
  std::string e_acute;
  for (int i = 0; i < 5000; ++i) e_acute += "\xc3\xa9";
  auto gtest =
      ParseIngestFile("gtest-json",
                      R"({"testsuites": [{"name": "S", "testsuite": [{"name": "t", "failures": [{"failure": ")" +
                          e_acute + R"("}]}]}]})",
                      "g.json", {});
  ASSERT_TRUE(gtest.ok()) << gtest.error().message;
  const std::string& message = gtest->at(0).cases.at(0).result.message;
  EXPECT_EQ(message.size(), kMaxIngestedTextBytes);
  EXPECT_EQ(ValidUtf8(message), message) << "no character is split";
  auto junit = ParseIngestFile("junit",
                               "<testsuite><testcase name=\"a\"><system-out>" + std::string(20000, 'o') +
                                   "</system-out><error message=\"m\">" + std::string(9000, 'x') +
                                   "</error></testcase></testsuite>",
                               "j.xml", {});
  ASSERT_TRUE(junit.ok()) << junit.error().message;
  EXPECT_EQ(junit->at(0).cases.at(0).result.message, "m\n" + std::string(kMaxIngestedTextBytes - 2, 'x'));
  IngestOptions samples;
  samples.samples = {"{\"doc_id\": 0, \"exact_match\": 1, \"target\": \"" + std::string(10000, 't') +
                     "\", \"filtered_resps\": [\"" + std::string(10000, 'r') + "\"]}\n"};
  samples.sample_origins = {"s.jsonl"};
  auto lm_eval = ParseIngestFile("lm-eval", R"({"results": {"t": {"acc,none": 0.5}}})", "r.json", samples);
  ASSERT_TRUE(lm_eval.ok()) << lm_eval.error().message;
  const Sample& sample = lm_eval->at(0).cases.at(0).samples.at(0);
  EXPECT_EQ(sample.expected.size(), kMaxIngestedTextBytes);
  EXPECT_EQ(sample.extracted.size(), kMaxIngestedTextBytes);
  // A name is refused rather than cut: two cut names could become one.
  const std::string long_name(5000, 'n');
  auto metric = ParseIngestFile("lm-eval", R"({"results": {"t": {")" + long_name + R"(": 0.5}}})", "r.json", {});
  ASSERT_FALSE(metric.ok());
  EXPECT_EQ(metric.error().message, "r.json: metric name '" + long_name.substr(0, 60) +
                                        "...' is 5000 bytes, more than the 4096 a stored name may have");
  auto property = ParseIngestFile("junit",
                                  "<testsuite><testcase name=\"a\"><properties><property name=\"" + long_name +
                                      "\" value=\"1\"/></properties></testcase></testsuite>",
                                  "j.xml", {});
  ASSERT_FALSE(property.ok());
  EXPECT_EQ(property.error().message.rfind("j.xml: metric name 'nnn", 0), 0u) << property.error().message;
}

TEST(IngestFile, EachFormatHasASizeLimit) {
  for (const auto& format : IngestFormats()) EXPECT_GE(MaxIngestFileBytes(format), std::uintmax_t{64} << 20) << format;
  EXPECT_EQ(MaxIngestFileBytes("junit"), std::uintmax_t{256} << 20);
  EXPECT_EQ(MaxIngestFileBytes("nunit"), 0u);
}

TEST(IngestNumbers, ParseNumberTakesWholeNumbersAndSeconds) {
  EXPECT_EQ(ParseNumber("0.25"), 0.25);
  EXPECT_EQ(ParseNumber("0.1s"), 0.1);
  EXPECT_EQ(ParseNumber(" 3 "), 3.0);
  EXPECT_EQ(ParseNumber("1e-3"), 1e-3);
  EXPECT_FALSE(ParseNumber("3 GPUs").has_value());
  EXPECT_FALSE(ParseNumber("").has_value());
  EXPECT_FALSE(ParseNumber("nan").has_value());
  EXPECT_FALSE(ParseNumber("OPS-12").has_value());
}

}  // namespace
}  // namespace harness
