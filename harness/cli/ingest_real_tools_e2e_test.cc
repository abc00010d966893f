// harness ingest on files the real tools write at test time (issue 21): pytest --junitxml
// (Debian's python3-pytest), ctest --output-junit on a CMake project made here, and a
// GoogleTest program (testdata/gtest_report_sample.cc) with --gtest_output=xml and json.
// Every stored case is checked against an independent reading of the same file: Python's
// xml.etree (testdata/junit_facts.py) for XML, nlohmann's parse for GoogleTest's JSON, with
// the documented id rule of each producer written out here. ci/setup.sh installs the tools;
// a missing one fails the test rather than skipping it.
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "harness/results/results.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

namespace fs = std::filesystem;

ProcessResult RunTool(const std::vector<std::string>& argv, const fs::path& cwd) {
  ProcessOptions o;
  o.cwd = cwd;
  o.timeout_s = 300;
  auto r = RunProcess(argv, o);
  EXPECT_TRUE(r.ok()) << argv[0] << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : ProcessResult{};
}

// The python3 that has pytest: the one on PATH, else Debian's (a pyenv or venv python3 on
// PATH may lack it).
std::string PythonWithPytest(const fs::path& cwd) {
  for (const std::string python : {"python3", "/usr/bin/python3"})
    if (RunTool({python, "-c", "import pytest"}, cwd).exit_code == 0) return python;
  return "";
}

// What the independent reading says one case must be: the producer's documented id, the
// worst status of its elements and status words, every message in order (a message the
// element's text repeats once), the captured output for a failure with no text, the times
// added over repeated names.
struct Expected {
  std::string id;
  CaseStatus status = CaseStatus::kPass;
  std::string message;
  double duration_s = 0;
};

int Rank(CaseStatus s) {
  return s == CaseStatus::kError ? 3 : s == CaseStatus::kFail ? 2 : s == CaseStatus::kSkip ? 1 : 0;
}

std::vector<Expected> ExpectedFromFacts(const Json& facts, const std::function<std::string(const Json&)>& id_of) {
  std::vector<Expected> out;
  std::map<std::string, std::size_t> at;
  for (const auto& f : facts["cases"]) {
    Expected e;
    e.id = id_of(f);
    e.duration_s = f["time"].get<double>();
    std::vector<std::string> messages;
    for (const auto& el : f["elements"]) {
      const std::string kind = el["kind"], message = el["message"], text = el["text"];
      const CaseStatus s = kind == "error" ? CaseStatus::kError : kind == "failure" ? CaseStatus::kFail : CaseStatus::kSkip;
      if (Rank(s) > Rank(e.status)) e.status = s;
      std::string m = message;
      if (!text.empty() && text != message) m += (m.empty() ? "" : "\n") + text;
      if (!m.empty()) messages.push_back(m);
    }
    for (const std::string& word : {f["status"].get<std::string>(), f["result"].get<std::string>()})
      if ((word == "disabled" || word == "notrun" || word == "suppressed" || word == "skipped") &&
          Rank(e.status) < Rank(CaseStatus::kSkip))
        e.status = CaseStatus::kSkip;
      else if (word == "fail" && Rank(e.status) < Rank(CaseStatus::kFail))
        e.status = CaseStatus::kFail;
    for (const auto& m : messages) e.message += (e.message.empty() ? "" : "\n") + m;
    const bool broke = e.status == CaseStatus::kFail || e.status == CaseStatus::kError;
    if (broke && e.message.empty()) e.message = std::string(Utf8Prefix(f["output"].get<std::string>(), kMaxStoredCompletionBytes));
    auto [it, fresh] = at.emplace(e.id, out.size());
    if (fresh) {
      out.push_back(e);
      continue;
    }
    Expected& into = out[it->second];
    if (Rank(e.status) > Rank(into.status)) into.status = e.status;
    if (!e.message.empty()) into.message += (into.message.empty() ? "" : "\n") + e.message;
    into.duration_s += e.duration_s;
  }
  return out;
}

struct RealToolsFixture : ::testing::Test {
  TempDir dir;
  std::string db = (dir.path() / "h.db").string();
  std::string python;

  Json Facts(const fs::path& xml) {
    const fs::path script = fs::path(testing_util::kSourceRoot) / "harness/cli/testdata/junit_facts.py";
    auto r = RunTool({"python3", script.string(), xml.string()}, dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto j = ParseJson(r.out, "junit_facts.py");
    EXPECT_TRUE(j.ok()) << r.out;
    return j.ok() ? *j : Json::object();
  }

  // Ingests file at commit sha and returns the stored cases of the new run by id.
  std::map<std::string, StoredCase> Ingest(const std::string& format, const fs::path& file, const std::string& sha) {
    auto r = RunHarness({"ingest", "--format", format, file.string(), "--commit", sha, "--db", db});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto store = Store::OpenReadOnly(db);
    EXPECT_TRUE(store.ok());
    std::map<std::string, StoredCase> out;
    if (!store.ok()) return out;
    auto run = (*store)->reader().Run(0);
    EXPECT_TRUE(run.ok());
    auto cases = (*store)->reader().FinishedCases(run->id);
    EXPECT_TRUE(cases.ok());
    for (auto& c : *cases) out.emplace(c.result.case_id, std::move(c));
    return out;
  }

  // A stored case result's metrics by name.
  std::map<std::string, double> StoredMetrics(int64_t case_result_id) {
    std::map<std::string, double> out;
    auto store = Store::OpenReadOnly(db);
    EXPECT_TRUE(store.ok());
    if (!store.ok()) return out;
    auto metrics = (*store)->reader().Metrics(case_result_id);
    EXPECT_TRUE(metrics.ok()) << metrics.error().message;
    if (metrics.ok())
      for (const Metric& m : *metrics) out[m.name] = m.value;
    return out;
  }

  void CheckAgainst(const std::vector<Expected>& want, const std::map<std::string, StoredCase>& got,
                    const std::string& what) {
    EXPECT_EQ(got.size(), want.size()) << what;
    for (const auto& e : want) {
      auto it = got.find(e.id);
      ASSERT_NE(it, got.end()) << what << ": no stored case " << e.id;
      const CaseResult& r = it->second.result;
      EXPECT_EQ(r.status, e.status) << what << " " << e.id;
      EXPECT_EQ(r.message, std::string(Utf8Prefix(e.message, 4096))) << what << " " << e.id;
      EXPECT_NEAR(r.duration_s, e.duration_s, 1e-9) << what << " " << e.id;
    }
  }
};

constexpr const char* kPytestFile = R"(import sys
import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup exploded")


@pytest.fixture
def broken_teardown():
    yield 1
    raise RuntimeError("teardown exploded")


def test_pass():
    print("hello out")


def test_fail():
    print("captured before the failure")
    assert 1 == 2, "one is not two"


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    pass


def test_fail_and_teardown(broken_teardown):
    assert False, "body failed"


def test_skip():
    pytest.skip("needs 8 GPUs")


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed?")
def test_xpass():
    pass


@pytest.mark.xfail(strict=True, reason="strict")
def test_xpass_strict():
    pass


@pytest.mark.parametrize("x", ["a/b", "日本", "[x]", "α β"])
def test_param(x):
    assert x != "[x]"


class TestGroup:
    def test_inner(self):
        sys.stderr.write("err text\n")
        assert False
)";

TEST_F(RealToolsFixture, PytestJunitXmlMatchesAnIndependentParse) {
  python = PythonWithPytest(dir.path());
  ASSERT_FALSE(python.empty()) << "pytest is not installed: ci/setup.sh installs python3-pytest";
  WriteFile(dir.path() / "test_sample.py", kPytestFile);
  for (const std::string logging : {"no", "all"}) {  // junit_logging=all adds <system-out>/<system-err>
    const fs::path xml = dir.path() / ("pytest-" + logging + ".xml");
    auto r = RunTool({python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_logging=" + logging,
                  "--junitxml=" + xml.string(), "test_sample.py"},
                 dir.path());
    ASSERT_EQ(r.exit_code, 1) << "some tests fail on purpose: " << r.out << r.err;
    const Json facts = Facts(xml);
    ASSERT_EQ(facts["cases"].size(), 15u) << "14 tests, test_fail_and_teardown twice";
    // pytest: <testsuite name="pytest">, id pytest/classname.name.
    const auto want = ExpectedFromFacts(facts, [](const Json& f) {
      return "pytest/" + f["classname"].get<std::string>() + "." + f["name"].get<std::string>();
    });
    const auto got = Ingest("junit", xml, logging == "no" ? std::string(40, 'a') : std::string(40, 'b'));
    CheckAgainst(want, got, "pytest " + logging);
    // What the tests meant, spelled out.
    auto status = [&](const std::string& name) { return got.at("pytest/test_sample." + name).result.status; };
    EXPECT_EQ(status("test_pass"), CaseStatus::kPass);
    EXPECT_EQ(status("test_fail"), CaseStatus::kFail);
    EXPECT_EQ(status("test_setup_error"), CaseStatus::kError);
    EXPECT_EQ(status("test_teardown_error"), CaseStatus::kError);
    EXPECT_EQ(status("test_fail_and_teardown"), CaseStatus::kError);
    const std::string& both = got.at("pytest/test_sample.test_fail_and_teardown").result.message;
    EXPECT_LT(both.find("body failed"), both.find("teardown exploded")) << both;
    EXPECT_EQ(status("test_skip"), CaseStatus::kSkip);
    EXPECT_EQ(status("test_xfail"), CaseStatus::kSkip);
    EXPECT_EQ(status("test_xpass"), CaseStatus::kPass);
    EXPECT_EQ(status("test_xpass_strict"), CaseStatus::kFail);
    EXPECT_EQ(status("test_param[a/b]"), CaseStatus::kPass);
    EXPECT_EQ(status("test_param[[x]]"), CaseStatus::kFail);
    EXPECT_EQ(got.at("pytest/test_sample.TestGroup.test_inner").result.status, CaseStatus::kFail);
    for (const auto& [id, c] : got) EXPECT_EQ(id.rfind("pytest/", 0), 0u) << id;
  }
}

TEST_F(RealToolsFixture, CtestOutputJunitMatchesAnIndependentParse) {
  const fs::path src = dir.path() / "proj", build = dir.path() / "proj-build";
  WriteFile(src / "CMakeLists.txt", R"(cmake_minimum_required(VERSION 3.20)
project(ingest_sample NONE)
enable_testing()
add_test(NAME Basic.Passes COMMAND sh -c "echo all good")
add_test(NAME Basic.Fails COMMAND sh -c "echo 'expected 3 got 4'; exit 1")
add_test(NAME Basic.Disabled COMMAND sh -c "exit 0")
set_tests_properties(Basic.Disabled PROPERTIES DISABLED TRUE)
add_test(NAME Basic.Skips COMMAND sh -c "echo skipping; exit 77")
set_tests_properties(Basic.Skips PROPERTIES SKIP_RETURN_CODE 77)
add_test(NAME Basic.Regex COMMAND sh -c "echo FATAL here")
set_tests_properties(Basic.Regex PROPERTIES FAIL_REGULAR_EXPRESSION "FATAL")
)");
  auto configure = RunTool({"cmake", "-S", src.string(), "-B", build.string()}, dir.path());
  ASSERT_EQ(configure.exit_code, 0) << configure.err;
  const fs::path xml = dir.path() / "ctest.xml";
  auto ctest = RunTool({"ctest", "--test-dir", build.string(), "--output-junit", xml.string()}, dir.path());
  ASSERT_NE(ctest.exit_code, 0) << "two tests fail on purpose";
  const Json facts = Facts(xml);
  ASSERT_EQ(facts["cases"].size(), 5u);
  EXPECT_EQ(facts["root_name"], "(empty)");
  // ctest: the test's name (classname repeats it), suite ctest for its "(empty)".
  const auto want = ExpectedFromFacts(facts, [](const Json& f) { return "ctest/" + f["name"].get<std::string>(); });
  const auto got = Ingest("junit", xml, std::string(40, 'c'));
  CheckAgainst(want, got, "ctest");
  EXPECT_EQ(got.at("ctest/Basic.Passes").result.status, CaseStatus::kPass);
  EXPECT_EQ(got.at("ctest/Basic.Fails").result.status, CaseStatus::kFail);
  EXPECT_EQ(got.at("ctest/Basic.Fails").result.message, "expected 3 got 4\n") << "the reason from <system-out>";
  EXPECT_EQ(got.at("ctest/Basic.Disabled").result.status, CaseStatus::kSkip);
  EXPECT_EQ(got.at("ctest/Basic.Skips").result.status, CaseStatus::kSkip);
  EXPECT_EQ(got.at("ctest/Basic.Regex").result.status, CaseStatus::kFail);
  EXPECT_NE(got.at("ctest/Basic.Regex").result.message.find("Regex=[FATAL]"), std::string::npos);
}

TEST_F(RealToolsFixture, GoogleTestXmlAndJsonMatchAnIndependentParseAndEachOther) {
  const fs::path xml = dir.path() / "gtest.xml", json = dir.path() / "gtest.json";
  for (const auto& out : {"xml:" + xml.string(), "json:" + json.string()}) {
    auto r = RunTool({GTEST_REPORT_SAMPLE, "--gtest_output=" + out}, dir.path());
    ASSERT_EQ(r.exit_code, 1) << "two tests fail on purpose: " << r.out;
  }
  const Json facts = Facts(xml);
  ASSERT_EQ(facts["root_name"], "AllTests");
  ASSERT_EQ(facts["cases"].size(), 8u);
  // GoogleTest: gtest/TestSuite.TestName, parameter suffixes kept (Numbers/Parity.IsEven/1).
  const auto want = ExpectedFromFacts(facts, [](const Json& f) {
    return "gtest/" + f["classname"].get<std::string>() + "." + f["name"].get<std::string>();
  });
  const auto from_xml = Ingest("junit", xml, std::string(40, 'd'));
  CheckAgainst(want, from_xml, "gtest xml");
  const auto& two = from_xml.at("gtest/Basic.TwoFailures").result;
  EXPECT_EQ(two.status, CaseStatus::kFail);
  EXPECT_LT(two.message.find("first"), two.message.find("second")) << "both failures, in order: " << two.message;
  EXPECT_EQ(two.message.find("first", two.message.find("first") + 1), std::string::npos) << "each once: " << two.message;
  EXPECT_EQ(from_xml.at("gtest/Basic.DISABLED_Off").result.status, CaseStatus::kSkip);
  EXPECT_EQ(from_xml.at("gtest/Basic.Skips").result.status, CaseStatus::kSkip);
  EXPECT_EQ(from_xml.at("gtest/Numbers/Parity.IsEven/1").result.status, CaseStatus::kFail);
  EXPECT_EQ(from_xml.at("gtest/Sized/0.HasSize").result.status, CaseStatus::kPass);

  // The JSON report, parsed here: the same ids and statuses as the XML one.
  auto parsed = ParseJson(testing_util::ReadFile(json), "gtest.json");
  ASSERT_TRUE(parsed.ok());
  const auto from_json = Ingest("gtest-json", json, std::string(40, 'e'));
  std::size_t tests = 0;
  for (const auto& suite : (*parsed)["testsuites"])
    for (const auto& t : suite["testsuite"]) {
      ++tests;
      const std::string id = "gtest/" + suite["name"].get<std::string>() + "." + t["name"].get<std::string>();
      ASSERT_TRUE(from_json.count(id)) << id;
      const CaseResult& r = from_json.at(id).result;
      const bool failed = t.contains("failures");
      const bool skipped = t["status"] == "NOTRUN" || t["result"] != "COMPLETED";
      EXPECT_EQ(r.status, failed ? CaseStatus::kFail : skipped ? CaseStatus::kSkip : CaseStatus::kPass) << id;
      if (failed) {
        for (const auto& f : t["failures"]) {
          EXPECT_NE(r.message.find(f["failure"].get<std::string>()), std::string::npos) << id;
        }
      }
      EXPECT_EQ(r.status, from_xml.at(id).result.status) << id;
    }
  EXPECT_EQ(from_json.size(), tests);
  EXPECT_EQ(from_json.size(), from_xml.size());

  // RecordProperty: a number (written as text or as an integer) is a metric by its name; a
  // word is no metric, in either report.
  const std::map<std::string, double> want_metrics = {{"max_abs_err", 0.25}, {"questions", 200}};
  EXPECT_EQ(StoredMetrics(from_xml.at("gtest/Basic.Passes").id), want_metrics) << "xml";
  EXPECT_EQ(StoredMetrics(from_json.at("gtest/Basic.Passes").id), want_metrics) << "json";
}

}  // namespace
}  // namespace harness
