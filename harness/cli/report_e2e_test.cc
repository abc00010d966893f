// `harness report` through the real binary: every flag, byte-identical output, the
// formats, bad input; `harness run --rerun-at-risk N` on the noisy stand-in storing every
// rerun so the report answers the rerun question; the JUnit it writes read by a real parser;
// the bound on the failures it shows in full.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/stats/false_verdict.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"
#include "harness/util/paths.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

// Three commits of the selftest suite: _0 always passes with samples and ops; _1 reads its
// outcome from a state file that says fail from the third commit on.
struct SelftestHistory {
  TempDir dir;
  std::vector<std::string> shas;
  std::string db;

  SelftestHistory() {
    shas = testing_util::MakeGitRepo(dir / "repo", 3);
    db = (dir / "h.db").string();
    const std::string state = (dir / "state.json").string();
    WriteFile(dir / "suites/selftest.json",
              SelftestTable(R"({"outcome": "pass", "metric": 0.5, "samples": 4, "ops": 2},
                               {"outcome": "pass", "ops": 3, "state_file": ")" + state + R"("})"));
    for (int i = 0; i < 3; ++i) {
      WriteFile(state, i < 2 ? R"({"outcome": "pass"})" : R"({"outcome": "fail"})");
      auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo",
                           (dir / "repo").string(), "--commit", shas[i]});
      EXPECT_EQ(r.exit_code, i < 2 ? 0 : 1) << r.err;
    }
  }
};

Json ReportJson(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"report", "--format", "json"};
  all.insert(all.end(), args.begin(), args.end());
  auto r = RunHarness(all);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = ParseJson(r.out, "report stdout");
  EXPECT_TRUE(j.ok()) << r.out;
  return j.ok() ? *j : Json::object();
}

TEST(ReportE2E, HtmlIsOneDeterministicFileWithEverySectionAndCommitLinks) {
  SelftestHistory h;
  const fs::path a = h.dir / "a.html", b = h.dir / "b.html";
  for (const auto& out : {a, b}) {
    auto r = RunHarness({"report", "--db", h.db, "--out", out.string(), "--commit-url", "https://git.example/c/{sha}"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string html = ReadFile(a);
  EXPECT_EQ(html, ReadFile(b)) << "the same database and flags give the same bytes";
  for (const char* id : {"summary", "failures", "trends", "flaky", "flips", "bisect"})
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("script-src 'sha256-"), std::string::npos);
  EXPECT_NE(html.find("href=\"https://git.example/c/" + h.shas[2] + "\""), std::string::npos);
  EXPECT_NE(html.find("selftest/test_outcome_1"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "nothing is loaded from the network";

  auto text = RunHarness({"report", "--db", h.db, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("FAIL selftest/test_outcome_1 at " + ShortSha(h.shas[2])), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("not passing since " + ShortSha(h.shas[2])), std::string::npos) << text.out;
  auto text_file = RunHarness({"report", "--db", h.db, "--format", "text", "--out", (h.dir / "r.txt").string()});
  ASSERT_EQ(text_file.exit_code, 0) << text_file.err;
  EXPECT_EQ(ReadFile(h.dir / "r.txt"), text.out);
}

TEST(ReportE2E, JsonIsTheModelAndTheWindowAndFiltersNarrowIt) {
  SelftestHistory h;
  Json all = ReportJson({"--db", h.db});
  EXPECT_EQ(all["format_version"], 5);
  ASSERT_EQ(all["commits"].size(), 3u);
  EXPECT_EQ(all["commits"][0]["sha"], h.shas[0]) << "first-parent order, oldest first";
  ASSERT_EQ(all["failures"].size(), 1u);
  EXPECT_EQ(all["failures"][0]["case"], "selftest/test_outcome_1");
  EXPECT_EQ(all["failures"][0]["failing_since"], h.shas[2]);
  EXPECT_EQ(all["failures"][0]["ops"]["against_commit"], h.shas[1]) << "diffed with the last passing run";
  EXPECT_EQ(all["flips"].size(), 1u) << "the case with samples has a baseline";

  EXPECT_EQ(ReportJson({"--db", h.db, "--last", "1"})["commits"].size(), 1u);
  Json since = ReportJson({"--db", h.db, "--since", h.shas[1].substr(0, 10)});
  ASSERT_EQ(since["commits"].size(), 2u);
  EXPECT_EQ(since["commits"][0]["sha"], h.shas[1]);
  Json one_case = ReportJson({"--db", h.db, "--case", "selftest/*_0"});
  EXPECT_EQ(one_case["failures"].size(), 0u);
  EXPECT_EQ(one_case["summary"][0]["pass"], 1);
  EXPECT_EQ(ReportJson({"--db", h.db, "--suite", "selftest"})["summary"].size(), 1u);
}

// 1240 failing cases with 1 KB messages, ingested from JUnit: a suite of 250 and eleven of
// 90. The report shows the first 100 of each suite in full, 1000 in all (suites in name
// order), and counts and lists every other one by id.
TEST(ReportE2E, FailuresBeyondTheBoundsAreListedById) {
  TempDir dir;
  std::string xml = "<testsuites>";
  auto suite = [&xml](const std::string& name, int cases) {
    xml += "<testsuite name=\"" + name + "\">";
    for (int i = 0; i < cases; ++i)
      xml += fmt::format(R"(<testcase classname="c" name="t{:04}"><failure message="boom {}">{}</failure></testcase>)",
                         i, i, std::string(1000, 'm'));
    xml += "</testsuite>";
  };
  suite("big", 250);
  for (int s = 0; s < 11; ++s) suite(fmt::format("s{:02}", s), 90);
  WriteFile(dir / "junit.xml", xml + "</testsuites>");
  const std::string db = (dir / "h.db").string();
  auto ingest = RunHarness({"ingest", "--format", "junit", (dir / "junit.xml").string(), "--commit", "abc1234",
                            "--db", db});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;

  Json j = ReportJson({"--db", db});
  ASSERT_EQ(j["failures"].size(), 1000u);
  ASSERT_EQ(j["failures_listed"].size(), 2u) << "by suite, run and status";
  std::map<std::string, int> full;
  for (const auto& f : j["failures"]) full[f["case"].get<std::string>().substr(0, 3)]++;
  EXPECT_EQ(full["big"], 100);
  EXPECT_EQ(full["s09"], 90);
  EXPECT_EQ(full.count("s10"), 0u) << "the total was reached";
  const Json& big = j["failures_listed"][0];
  EXPECT_EQ(big["suite"], "big");
  EXPECT_EQ(big["status"], "fail");
  EXPECT_EQ(big["run"], 1);
  ASSERT_EQ(big["cases"].size(), 150u);
  EXPECT_EQ(big["cases"][0], "big/c.t0100");
  ASSERT_EQ(j["failures_listed"][1]["cases"].size(), 90u);
  EXPECT_EQ(j["failures_listed"][1]["cases"][89], "s10/c.t0089");

  auto html = RunHarness({"report", "--db", db, "--out", (dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadFile(dir / "r.html");
  std::size_t articles = 0;  // in the Failures section (the changes above it have their own bound)
  const std::size_t failures_at = page.find("<section id=\"failures\"");
  ASSERT_NE(failures_at, std::string::npos);
  for (auto at = page.find("<article class=\"item fail\"", failures_at); at != std::string::npos;
       at = page.find("<article class=\"item fail\"", at + 1))
    ++articles;
  EXPECT_EQ(articles, 1000u);
  EXPECT_NE(page.find("Failures (1240)"), std::string::npos);
  EXPECT_NE(page.find("150 more failing cases of big"), std::string::npos);
  EXPECT_NE(page.find("90 more failing cases of s10"), std::string::npos);
  EXPECT_NE(page.find("FAIL big/c.t0249"), std::string::npos);
  // Every one is a new failure: the first 100 shown in full under the changes, the rest by id.
  EXPECT_NE(page.find("New failures (1240)"), std::string::npos);
  EXPECT_NE(page.find("1140 more, by id: "), std::string::npos);
  auto text = RunHarness({"report", "--db", db, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("FAILURES (1240)"), std::string::npos);
  EXPECT_NE(text.out.find("240 more, listed by id"), std::string::npos);
  EXPECT_NE(text.out.find("FAIL s10/c.t0089 (run 1)"), std::string::npos);
  EXPECT_NE(text.out.find("1140 more new-failure, by id: "), std::string::npos);
}

TEST(ReportE2E, BadInputIsExitTwoAndWritesNothing) {
  SelftestHistory h;
  const fs::path out = h.dir / "x.html";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--last", "1", "--since", h.shas[0]},
           {"--since", "ffffffff"},
           {"--suite", "nope"},
           {"--case", "nope/*"},
           {"--commit-url", "javascript:alert(1)//{sha}"},
           {"--format", "pdf"},
           {"--last", "0"},
           {"--format", "markdown", "--html-url", "javascript:alert(1)"},
           {"--html-url", "https://ci.example/report.html"}}) {
    std::vector<std::string> all = {"report", "--db", h.db, "--out", out.string()};
    all.insert(all.end(), args.begin(), args.end());
    auto r = RunHarness(all);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << args[0];
  }
  auto onto_db = RunHarness({"report", "--db", h.db, "--out", h.db});
  EXPECT_EQ(onto_db.exit_code, 2) << onto_db.err;
  auto missing = RunHarness({"report", "--db", (h.dir / "none.db").string(), "--out", out.string()});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_FALSE(fs::exists(h.dir / "none.db"));
}

// --also: every format from one model, each file byte-identical to its own --format run;
// bad --also values are exit 2 and write nothing.
TEST(ReportE2E, AlsoWritesEveryFormatFromOneModelAsEachAloneWould) {
  SelftestHistory h;
  const std::vector<std::string> base = {"report", "--db", h.db, "--commit-url", "https://h.example/c/{sha}"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = base;
    all.insert(all.end(), extra.begin(), extra.end());
    return RunHarness(all);
  };
  auto together = with({"--out", (h.dir / "all.html").string(), "--also", "text=" + (h.dir / "all.txt").string(),
                        "--also", "json=" + (h.dir / "all.json").string(), "--also",
                        "markdown=" + (h.dir / "all.md").string(), "--html-url", "https://ci.example/r.html"});
  ASSERT_EQ(together.exit_code, 0) << together.err;
  for (const auto& [format, ext] : std::vector<std::pair<std::string, std::string>>{
           {"html", "html"}, {"text", "txt"}, {"json", "json"}, {"markdown", "md"}}) {
    const fs::path alone = h.dir / ("alone." + ext);
    std::vector<std::string> extra = {"--format", format, "--out", alone.string()};
    if (format == "markdown") extra.insert(extra.end(), {"--html-url", "https://ci.example/r.html"});
    auto r = with(extra);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ReadFile(h.dir / ("all." + ext)), ReadFile(alone)) << format;
    EXPECT_NE(together.err.find("wrote " + (h.dir / ("all." + ext)).string()), std::string::npos) << together.err;
  }
  const fs::path out = h.dir / "x.html";
  for (const auto& also : std::vector<std::string>{"pdf=" + (h.dir / "x.pdf").string(), "text",
                                                   "text=", "=" + (h.dir / "x.txt").string(),
                                                   "text=" + out.string(), "text=" + h.db,
                                                   "text=" + (h.dir / "." / "x.html").string()}) {
    auto r = with({"--out", out.string(), "--also", also});
    EXPECT_EQ(r.exit_code, 2) << also << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << also;
    EXPECT_FALSE(fs::exists(h.dir / "x.pdf"));
    EXPECT_FALSE(fs::exists(h.dir / "x.txt"));
  }
  // --html-url needs a Markdown output somewhere.
  auto no_md = with({"--out", out.string(), "--also", "text=" + (h.dir / "x.txt").string(), "--html-url",
                     "https://ci.example/r.html"});
  EXPECT_EQ(no_md.exit_code, 2) << no_md.err;
  EXPECT_FALSE(fs::exists(out));
}

// The Markdown summary for a CI job page: the suites' counts, a regression, the link to the
// full report, and every outside string escaped (case ids and messages with Markdown, HTML
// and mention syntax, ingested from a JUnit file).
TEST(ReportE2E, MarkdownSummarisesAndEscapesHostileCaseIds) {
  SelftestHistory h;
  WriteFile(h.dir / "evil.xml", R"xml(<?xml version="1.0"?>
<testsuites><testsuite name="evil" tests="2">
<testcase name="t|*x*_`code`_&lt;img src=x onerror=alert(1)&gt;@all #1"><failure message="boom &lt;script&gt;alert(1)&lt;/script&gt; | x | [l](javascript:1)"/></testcase>
<testcase name="fine"/>
</testsuite></testsuites>
)xml");
  auto ingest = RunHarness({"ingest", "--db", h.db, "--format", "junit", (h.dir / "evil.xml").string(), "--commit",
                            h.shas[2], "--repo", (h.dir / "repo").string()});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  auto r = RunHarness({"report", "--db", h.db, "--format", "markdown", "--html-url",
                       "https://ci.example/jobs/9/report (1).html", "--commit-url", "https://git.example/c/{sha}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& md = r.out;
  EXPECT_EQ(md.rfind("## harness nightly: FAIL - 2 passed, 2 failed, 0 regressed, 0 errors, 0 skipped\n", 0), 0u) << md;
  EXPECT_NE(md.find("[Full report](https://ci.example/jobs/9/report%20%281%29.html)"), std::string::npos) << md;
  EXPECT_NE(md.find("| selftest | 1 | 0 | 1 | 0 | 0 | 0 | [`" + ShortSha(h.shas[2]) + "`](https://git.example/c/" +
                    h.shas[2] + ") |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| evil | 1 | 0 | 1 | 0 | 0 | 0 |"), std::string::npos) << md;
  // Both failures are new tonight: the changes since the previous nightly, first.
  EXPECT_NE(md.find("### What changed since the previous nightly (2)"), std::string::npos) << md;
  EXPECT_NE(md.find("- **new failure** FAIL evil\\/t\\|\\*x\\*\\_\\`code\\`\\_\\<img src\\=x onerror\\=alert\\(1\\)\\>\\@all "
                    "\\#1 at [`"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(": boom \\<script\\>alert\\(1\\)\\<\\/script\\> \\| x \\| \\[l\\]\\(javascript\\:1\\)\n"),
            std::string::npos)
      << md;
  for (const char* raw : {"`code`", " @all", "](javascript", "|*x*"})
    EXPECT_EQ(md.find(raw), std::string::npos) << raw << " unescaped in\n" << md;
  for (std::size_t i = md.find('<'); i != std::string::npos; i = md.find('<', i + 1))
    EXPECT_EQ(md[i - 1], '\\') << "an unescaped '<' opens HTML: " << md.substr(i, 20);
  // Deterministic, and --out writes the same bytes.
  auto again = RunHarness({"report", "--db", h.db, "--format", "markdown", "--html-url",
                           "https://ci.example/jobs/9/report (1).html", "--commit-url", "https://git.example/c/{sha}",
                           "--out", (h.dir / "summary.md").string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(h.dir / "summary.md"), md);
}

// "fail_at_risk": true makes the noisy stand-in's AT-RISK gate fail the case (exit 1, the
// verdict in its message); --rerun-at-risk still reruns it: its gate verdict is
// AT-RISK whatever the case's status, and the reruns are what tells noise from a real drop.
TEST(ReportE2E, FailAtRiskFailsTheCaseAndTheCaseIsStillRerun) {
  TempDir dir;
  const auto suites = testing_util::WriteGsm8kTableWithProfile(dir.path(), "sim/noisy.json");
  auto table = ParseJson(ReadFile(suites / "gsm8k.json"), "gsm8k.json");
  ASSERT_TRUE(table.ok()) << table.error().message;
  (*table)["defaults"]["fail_at_risk"] = true;
  WriteFile(suites / "gsm8k.json", table->dump(2));
  auto r = RunHarness({"run", "--suites-dir", suites.string(), "--db", (dir / "h.db").string(), "--commit", "00000001",
                       "--suite", "gsm8k", "--filter", "gsm8k/*_1", "--seed", "1", "--rerun-at-risk", "1",
                       "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto cases = testing_util::RunSummaryCases(r.out);
  ASSERT_EQ(cases.size(), 1u) << r.out;
  EXPECT_EQ(cases.begin()->second.first, "fail");
  EXPECT_EQ(cases.begin()->second.second.rfind("gsm8k AT-RISK at gate 0.91", 0), 0u)
      << "the finding is the message's first line: " << cases.begin()->second.second;
  EXPECT_NE(r.err.find("harness: rerun 1 (run 2) gsm8k/test_gsm8k_accuracy_1: "), std::string::npos) << r.err;
}

// The noisy stand-in's healthy accuracy (about 0.923 at n = 1319) is AT-RISK at the 0.91
// gate. --rerun-at-risk stores each rerun as a run of the same commit and identity, so the
// report answers "will a rerun flip it?" from their spread instead of the binomial question.
TEST(ReportE2E, RerunAtRiskStoresEveryRerunAndTheReportUsesTheirSpread) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 1);
  testing_util::WriteGsm8kTableWithProfile(dir.path(), "sim/noisy.json");
  auto run = [&](const std::string& db, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--suites-dir", (dir / "suites").string(), "--db", (dir / db).string(),
                                     "--repo", (dir / "repo").string(), "--commit", shas[0], "--suite", "gsm8k",
                                     "--filter", "gsm8k/*_1", "--junit", (dir / (db + ".xml")).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args);
  };
  auto once = run("once.db", {"--seed", "1"});
  ASSERT_EQ(once.exit_code, 0) << once.err;
  Json single = ReportJson({"--db", (dir / "once.db").string()});
  ASSERT_EQ(single["flaky"].size(), 1u) << single.dump();
  EXPECT_EQ(single["flaky"][0]["verdict"], "AT-RISK");
  EXPECT_EQ(single["flaky"][0]["question"], "true-rate") << "no reruns: the binomial question, and it says so";

  auto rerun = run("rerun.db", {"--seed", "1", "--rerun-at-risk", "3"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  EXPECT_NE(rerun.err.find("harness: rerun 1 (run 2) gsm8k/test_gsm8k_accuracy_1: PASS, accuracy 0.9"), std::string::npos) << rerun.err;
  Json spread = ReportJson({"--db", (dir / "rerun.db").string()});
  const int64_t runs = spread["runs"].get<int64_t>();
  EXPECT_GE(runs, 2);
  EXPECT_LE(runs, 4) << "at most three reruns";
  ASSERT_EQ(spread["flaky"].size(), 1u);
  const Json& gate = spread["flaky"][0];
  EXPECT_EQ(gate["question"], "rerun-noise");
  EXPECT_EQ(gate["observations"], runs) << "every rerun is stored and counted";
  EXPECT_GT(gate["sigma"].get<double>(), 0) << "the seeds differ, so the reruns do";
  EXPECT_LT(gate["sigma"].get<double>(), 0.01) << "rerun noise is a fraction of a point";
  ASSERT_EQ(spread["trends"].size(), 1u);
  EXPECT_EQ(spread["trends"][0]["points"].size(), static_cast<size_t>(runs));
  // The stop rule, whatever the seed's numbers: every rerun was needed (no earlier two or
  // more results settled the gate) and the last one settled it or used up the budget.
  std::vector<double> accuracies;
  for (const auto& p : spread["trends"][0]["points"]) accuracies.push_back(p["value"].get<double>());
  auto settled = [&](size_t k) {
    if (k < 2) return false;
    const auto e = RerunNoiseEstimate({accuracies.begin(), accuracies.begin() + static_cast<std::ptrdiff_t>(k)},
                                      gate["threshold"].get<double>());
    return e.needed >= 0 && e.needed <= e.observations;
  };
  for (size_t k = 2; k < accuracies.size(); ++k) EXPECT_FALSE(settled(k)) << k << " results settled it already";
  EXPECT_TRUE(settled(accuracies.size()) || accuracies.size() == 4) << "stopped unsettled with reruns left";

  // The nightly run's JUnit, read by a real parser: metrics as properties, the verdict line.
  auto parsed = RunProcess(
      {"python3", "-c",
       "import sys,xml.etree.ElementTree as E\n"
       "tc=next(E.parse(sys.argv[1]).getroot().iter('testcase'))\n"
       "p={x.get('name'):x.get('value') for x in tc.iter('property')}\n"
       "print(p['gate_verdict'], p['accuracy.n'], tc.find('system-out').text.splitlines()[0])",
       (dir / "rerun.db.xml").string()});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->out, "AT-RISK 1319 verdict: gate AT-RISK\n") << parsed->err;
}

}  // namespace
}  // namespace harness
