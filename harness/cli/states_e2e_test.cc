// States between the common ones (issue 33), through the real binary: a gate going AT-RISK
// to FAIL beside one going PASS to FAIL and a paired REGRESSED (the report's changes, its
// Markdown, bisect --auto's regression kinds); a trend whose points have different n; a
// merged database whose metrics carry those labels read as its source is.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "harness/results/metric_names.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness {
namespace states_e2e {

namespace fs = std::filesystem;
using testing_util::RunHarness;
using testing_util::StdoutJson;
using testing_util::TempDir;

const std::string kHostile = "fell | `tick` <b>x</b> [l](javascript:alert(1)) *s* _u_ #h";

// A gsm8k result judged against a gate of 0.75.
CaseResult GateCase(const std::string& id, CaseStatus status, double accuracy, int64_t n, GateVerdict gate,
                    std::optional<BaselineVerdict> paired = std::nullopt) {
  CaseResult c{id, status, 1.0, status == CaseStatus::kPass ? "" : "accuracy " + kHostile, {}, {}};
  c.metrics.push_back({metric_names::kAccuracy, accuracy, n, accuracy - 0.03, accuracy + 0.03, ""});
  c.metrics.push_back({metric_names::kGate, 0.75, 0, {}, {}, ""});
  c.metrics.push_back(VerdictMetric(metric_names::kGateVerdict, gate));
  if (paired) c.metrics.push_back(VerdictMetric(metric_names::kBaselineVerdict, *paired));
  return c;
}

// A JUnit file's test cases as a real XML parser reads them: name -> (the failure's message,
// the system-out text).
std::map<std::string, std::pair<std::string, std::string>> JunitCases(const std::string& file) {
  auto r = RunProcess({"python3", "-c",
                       "import json, sys, xml.etree.ElementTree as E\n"
                       "out = {}\n"
                       "for c in E.parse(sys.argv[1]).iter('testcase'):\n"
                       "    f, o = c.find('failure'), c.find('system-out')\n"
                       "    out[c.get('name')] = [f.get('message') if f is not None else '', o.text if o is not None else '']\n"
                       "print(json.dumps(out))\n",
                       file});
  std::map<std::string, std::pair<std::string, std::string>> cases;
  if (!r.ok() || r->exit_code != 0) return cases;
  const Json j = ParseJsonOrDiscarded(r->out);
  if (!j.is_object()) return cases;
  for (const auto& [name, v] : j.items()) cases[name] = {v[0].get<std::string>(), v[1].get<std::string>()};
  return cases;
}

// Two nightlies of one identity at the two commits of a git repository: gsm8k/at_risk_0
// goes PASS (gate AT-RISK, n = 1319) to FAIL (gate FAIL, n = 200), gsm8k/pass_0 PASS (gate
// PASS) to FAIL (gate FAIL), gsm8k/paired_0 PASS to FAIL by its paired verdict REGRESSED
// (gate PASS both nights).
struct StatesE2E : ::testing::Test {
  TempDir dir;
  std::string db = (dir / "h.db").string();
  std::string repo = (dir / "repo").string();
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir / "repo", 2);

  void SetUp() override {
    auto store = std::move(Store::Open(db)).value();
    for (int night = 0; night < 2; ++night) {
      CommitInfo commit{shas[night], {}, night, 1767225600 + night, "night " + std::to_string(night) + " " + kHostile};
      NewRun r{*store->writer().UpsertCommit(commit), "openai", "fleet", "{}", "ci", "test"};
      r.nightly = fmt::format("nightly-{}", night);
      const int64_t run = *store->writer().BeginRun(r);
      const bool first = night == 0;
      const std::vector<CaseResult> cases = {
          first ? GateCase("gsm8k/at_risk_0", CaseStatus::kPass, 0.76, 1319, GateVerdict::kAtRisk)
                : GateCase("gsm8k/at_risk_0", CaseStatus::kFail, 0.60, 200, GateVerdict::kFail),
          first ? GateCase("gsm8k/pass_0", CaseStatus::kPass, 0.90, 1319, GateVerdict::kPass)
                : GateCase("gsm8k/pass_0", CaseStatus::kFail, 0.60, 1319, GateVerdict::kFail),
          first ? GateCase("gsm8k/paired_0", CaseStatus::kPass, 0.90, 1319, GateVerdict::kPass)
                : GateCase("gsm8k/paired_0", CaseStatus::kFail, 0.88, 1319, GateVerdict::kPass,
                           BaselineVerdict::kRegressed)};
      for (const auto& c : cases) {
        const int64_t id = *store->writer().BeginCase(run, "gsm8k", c.case_id, "{}");
        ASSERT_TRUE(store->writer().FinishCase(id, c).ok());
      }
      ASSERT_TRUE(store->writer().FinishRun(run, first ? RunStatus::kPass : RunStatus::kFail).ok());
    }
  }
};

// The change of each case against the previous nightly, and bisect --auto's kind of each:
// AT-RISK to FAIL is a gate regression as PASS to FAIL is, so the three are one target.
TEST_F(StatesE2E, AGateGoingAtRiskToFailIsAGateRegressionBesidePassToFail) {
  auto report = RunHarness({"report", "--db", db, "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::map<std::string, std::string> kinds, before;
  const Json changes = StdoutJson(report)["changes"];
  for (const auto& c : changes) {
    kinds[c["case"]] = c["kind"];
    before[c["case"]] = c["before"].is_object() ? c["before"]["status"].get<std::string>() : "(none)";
  }
  EXPECT_EQ(kinds, (std::map<std::string, std::string>{{"gsm8k/at_risk_0", "new-failure"},
                                                       {"gsm8k/paired_0", "paired-regression"},
                                                       {"gsm8k/pass_0", "new-failure"}}))
      << report.out;
  EXPECT_EQ(before["gsm8k/at_risk_0"], "pass");

  auto md = RunHarness({"report", "--db", db, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("### What changed since the previous nightly (3)"), std::string::npos) << md.out;
  const std::string escaped =
      "fell \\| \\`tick\\` \\<b\\>x\\<\\/b\\> \\[l\\]\\(javascript\\:alert\\(1\\)\\) \\*s\\* \\_u\\_ \\#h";
  EXPECT_NE(md.out.find("- **new failure** FAIL gsm8k\\/at\\_risk\\_0 at `" + shas[1].substr(0, 12) + "`: accuracy " +
                        escaped + "\n"),
            std::string::npos)
      << md.out;
  EXPECT_EQ(md.out.find(kHostile), std::string::npos) << "hostile text unescaped: " << md.out;

  // The rerun (`true`) stores nothing: each target is unconfirmed, but its kind is told.
  const std::string junit = (dir / "junit.xml").string();
  auto r = RunHarness({"bisect", "--auto", "--db", db, "--repo", repo, "--confirm", "1", "--junit", junit, "--format",
                       "json", "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json j = StdoutJson(r);
  ASSERT_TRUE(j.is_object()) << r.err << r.out;
  ASSERT_EQ(j["regressions"].size(), 1u) << "one target for the suite's headline metric: " << r.out;
  std::map<std::string, std::string> regressed;
  for (const auto& c : j["regressions"][0]["cases"]) regressed[c["case"]] = c["kind"];
  EXPECT_EQ(regressed, (std::map<std::string, std::string>{{"gsm8k/at_risk_0", "gate"},
                                                           {"gsm8k/paired_0", "paired"},
                                                           {"gsm8k/pass_0", "gate"}}))
      << r.out;
  EXPECT_EQ(j["regressions"][0]["kind"], "paired");
  EXPECT_EQ(j["regressions"][0]["verdict"], "untestable") << r.out;

  // The nightly's JUnit, read by a real XML parser: each case's verdict line with its own
  // words, and the hostile failure message as it was stored.
  const auto cases = JunitCases(junit);
  ASSERT_EQ(cases.size(), 3u) << testing_util::ReadFile(junit);
  EXPECT_EQ(cases.at("at_risk_0").first, "accuracy " + kHostile);
  EXPECT_NE(cases.at("at_risk_0").second.find("verdict: gate FAIL"), std::string::npos) << cases.at("at_risk_0").second;
  EXPECT_NE(cases.at("pass_0").second.find("verdict: gate FAIL"), std::string::npos) << cases.at("pass_0").second;
  EXPECT_NE(cases.at("paired_0").second.find("verdict: gate PASS; baseline REGRESSED"), std::string::npos)
      << cases.at("paired_0").second;
}

// The at-risk band of a trend is that of its newest point's n (200), not the first's (1319):
// its ends are counts out of 200.
TEST_F(StatesE2E, ATrendWhosePointsHaveDifferentNTakesTheNewestN) {
  auto report = RunHarness({"report", "--db", db, "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  Json trend;
  const Json trends = StdoutJson(report)["trends"];
  for (const auto& t : trends)
    if (t["case"] == "gsm8k/at_risk_0") trend = t;
  ASSERT_TRUE(trend.is_object()) << report.out;
  ASSERT_EQ(trend["points"].size(), 2u);
  EXPECT_EQ(trend["points"][0]["n"], 1319);
  EXPECT_EQ(trend["points"][1]["n"], 200);
  EXPECT_EQ(trend["points"][0]["verdict"], "AT-RISK");
  EXPECT_EQ(trend["points"][1]["verdict"], "FAIL");
  ASSERT_TRUE(trend["at_risk_band"].is_array()) << trend;
  const double low = trend["at_risk_band"][0], high = trend["at_risk_band"][1];
  EXPECT_LT(low, 0.75);
  EXPECT_GT(high, 0.75);
  for (double end : {low, high}) EXPECT_NEAR(end * 200, std::round(end * 200), 1e-9) << end << " is no count of 200";
}

// A merged copy of the database says what the source says: the report (every format that
// prints the labels) and compare of the two nights, word for word but for the path.
TEST_F(StatesE2E, AMergedDatabaseReadsAsItsSourceWithEveryLabel) {
  const std::string merged = (dir / "merged.db").string();
  auto m = RunHarness({"merge", merged, db});
  ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
  auto same_words = [&](std::vector<std::string> args) {
    std::vector<std::string> on_source = args, on_merged = args;
    on_source.insert(on_source.end(), {"--db", db});
    on_merged.insert(on_merged.end(), {"--db", merged});
    auto a = RunHarness(on_source);
    auto b = RunHarness(on_merged);
    EXPECT_EQ(a.exit_code, b.exit_code) << args[0];
    std::string text = b.out;
    for (auto at = text.find(merged); at != std::string::npos; at = text.find(merged, at + db.size()))
      text.replace(at, merged.size(), db);
    EXPECT_EQ(a.out, text) << args[0];
    return a.out;
  };
  same_words({"report", "--format", "text"});
  const std::string json = same_words({"report", "--format", "json"});
  for (const char* word : {"\"AT-RISK\"", "\"FAIL\""})
    EXPECT_NE(json.find(word), std::string::npos) << word << " in " << json;
  same_words({"report", "--format", "markdown"});
  const std::string cmp = same_words({"compare", shas[0], shas[1], "--all"});
  EXPECT_NE(cmp.find("AT-RISK → FAIL"), std::string::npos) << cmp;
  EXPECT_NE(cmp.find("REGRESSED"), std::string::npos) << cmp;
}

}  // namespace states_e2e
}  // namespace harness
