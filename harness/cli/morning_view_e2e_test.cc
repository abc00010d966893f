// The morning view through the real binary (issue 34): a clean night reads PASS in every
// output, word for word (stdout's last line, the exit code, JUnit, the Markdown headline,
// the HTML banner, the text report); each catalogued fault's failure states its finding
// first with no build-machine path anywhere; the report opens with what changed since the
// previous nightly, every outside string escaped.
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/stack/catalogue.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"
#include "reports/html_escape.h"
#include "reports/junit.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

std::string LastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') + 1);
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The testsuites-level property of a JUnit file, read by python3's xml.etree.
std::string JunitNight(const fs::path& junit, const std::string& name) {
  auto r = RunProcess({"python3", "-c",
                       "import sys, xml.etree.ElementTree as E\n"
                       "root = E.parse(sys.argv[1]).getroot()\n"
                       "props = root.find('properties')\n"
                       "print(''.join(p.get('value') for p in props.iter('property') if p.get('name') == sys.argv[2]))",
                       junit.string(), name});
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->err : r.error().message);
  return r.ok() ? LastLine(r->out) : "";
}

// Two nightlies of the default (deterministic) stand-in at one commit, AT-RISK cases rerun:
// the second finds four runs of the commit, identical, so another rerun cannot fail the
// gate and the gate says PASS. Every output states the same night line.
TEST(MorningView, ACleanNightIsPassInEveryOutputWordForWord) {
  TempDir dir;
  const auto shas = testing_util::MakeGitRepo(dir / "repo", 1);
  const std::string db = (dir / "h.db").string();
  ProcessResult night;
  for (int i = 1; i <= 2; ++i) {
    night = RunHarness({"run", "--db", db, "--repo", (dir / "repo").string(), "--commit", shas[0], "--suite", "gsm8k",
                        "--rerun-at-risk", "2", "--junit", (dir / "junit.xml").string()});
    ASSERT_EQ(night.exit_code, 0) << night.out << night.err;
  }
  const std::string line = LastLine(night.out);
  EXPECT_EQ(line, "harness nightly: PASS - 2 passed, 0 failed, 0 regressed, 0 errors, 0 skipped") << night.out;
  // The gate's word and its reason agree: the reruns settled it.
  std::smatch m;
  const std::regex gate(R"((gsm8k/test_gsm8k_accuracy_\d)\s+(\S+) at gate 0\.91 \(rerun noise over (\d+) runs)");
  int gates = 0;
  for (std::sregex_iterator it(night.out.begin(), night.out.end(), gate), end; it != end; ++it, ++gates) {
    EXPECT_EQ((*it)[2], "PASS") << night.out;
    EXPECT_GE(std::stoi((*it)[3]), 2);
  }
  EXPECT_EQ(gates, 2) << night.out;
  EXPECT_EQ(JunitNight(dir / "junit.xml", "night"), line);
  EXPECT_EQ(JunitNight(dir / "junit.xml", "night_verdict"), "PASS");

  auto md = RunHarness({"report", "--db", db, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(FirstLine(md.out), "## " + line) << md.out;
  EXPECT_EQ(md.out.find("AT-RISK"), std::string::npos) << "a settled night has no AT-RISK anywhere: " << md.out;
  auto text = RunHarness({"report", "--db", db, "--format", "text"});
  EXPECT_EQ(FirstLine(text.out), line) << text.out;
  auto json = RunHarness({"report", "--db", db, "--format", "json"});
  const Json j = testing_util::StdoutJson(json);
  EXPECT_EQ(j["night"]["line"], line);
  EXPECT_EQ(j["night"]["exit_code"], 0);
  auto html = RunHarness({"report", "--db", db, "--out", (dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadFile(dir / "r.html");
  EXPECT_NE(page.find(R"(<p id="verdict" class="verdict v-pass" role="status">)" + reports::HtmlEscape(line) + "</p>"),
            std::string::npos);
  EXPECT_EQ(page.find("b-fail\">0"), std::string::npos) << "a zero count is neutral, not red";
  EXPECT_NE(page.find("b-zero\">0 fail"), std::string::npos);
}

std::vector<Regression> Catalogue() {
  auto c = LoadCatalogue(fs::path(testing_util::kSourceRoot) / "golden" / "regressions.json");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? *c : std::vector<Regression>{};
}

// Each catalogued fault: its cases' first line (stdout's summary, the JSON message, JUnit's
// message attribute, report.md) is the finding in domain words with the catalogue's words,
// never a source location or GoogleTest's assertion text; locations follow, relative to the
// repository; no output names the source tree's absolute path.
TEST(MorningView, EachFaultsFailureLineIsItsFindingAndNoAbsolutePathAppears) {
  const std::string root = fs::path(testing_util::kSourceRoot).string();
  const std::regex location(R"(^[\w./-]+\.(cc|h|cpp|py):\d+)");
  const auto catalogue = Catalogue();
  ASSERT_FALSE(catalogue.empty());
  for (const auto& fault : catalogue) {
    SCOPED_TRACE(fault.fault);
    TempDir dir;
    const std::string db = (dir / "h.db").string(), junit = (dir / "j.xml").string();
    std::set<std::string> suites;
    for (const auto& c : fault.cases) suites.insert(c.substr(0, c.find('/')));
    std::vector<std::string> args = {"run", "--db", db, "--commit", "fa017000", "--fault", fault.fault, "--junit", junit};
    for (const auto& s : suites) args.insert(args.end(), {"--suite", s});
    auto text = RunHarness(args);
    EXPECT_EQ(text.exit_code, 1) << text.err;
    EXPECT_EQ(LastLine(text.out).rfind("harness nightly: FAIL - ", 0), 0u) << text.out;
    args.insert(args.end(), {"--format", "json"});
    args[2] = (dir / "h2.db").string();
    auto json = RunHarness(args);
    const Json j = testing_util::StdoutJson(json);
    ASSERT_TRUE(j.contains("cases")) << json.out << json.err;
    const std::string xml = ReadFile(junit);
    for (const auto& c : j["cases"]) {
      if (c["status"] == "pass") continue;
      const std::string message = c["message"], first = FirstLine(message);
      EXPECT_FALSE(std::regex_search(first, location)) << first;
      for (const char* framework : {"Value of:", "Expected", "Failed", "  Actual"})
        EXPECT_NE(first.rfind(framework, 0), 0u) << first;
      if (std::find(fault.cases.begin(), fault.cases.end(), c["id"]) != fault.cases.end()) {
        EXPECT_NE(first.find(fault.message), std::string::npos) << "the finding names it: " << message;
        EXPECT_NE(message.find("suites/"), std::string::npos) << "the location follows: " << message;
      }
      // The summary table shows the whole first line, and JUnit's message is that line.
      EXPECT_NE(text.out.find(first), std::string::npos) << first << "\n" << text.out;
      EXPECT_NE(xml.find("message=\"" + reports::XmlEscape(first) + "\""), std::string::npos) << first;
    }
    auto md = RunHarness({"report", "--db", db, "--format", "markdown"});
    auto html = RunHarness({"report", "--db", db, "--out", (dir / "r.html").string()});
    ASSERT_EQ(html.exit_code, 0) << html.err;
    for (const auto& [what, out] : {std::pair{"stdout", text.out}, {"stderr", text.err}, {"json", json.out},
                                    {"junit", xml}, {"markdown", md.out}, {"html", ReadFile(dir / "r.html")}})
      EXPECT_EQ(out.find(root + "/"), std::string::npos) << what << " names the build machine's path " << root;
  }
}

std::string Git(const fs::path& repo, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", repo.string()});
  auto r = RunProcess(args, {.env = {{"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                                     {"GIT_COMMITTER_NAME", "t"}, {"GIT_COMMITTER_EMAIL", "t@example.invalid"}}});
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->err : r.error().message);
  std::string out = r.ok() ? r->out : "";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

constexpr const char* kHostile = R"(<script>alert(1)</script> | *x* [l](javascript:1) @all #1 `c`)";

// A JUnit file of suite "ev": a case with a hostile name and message, fixed_one and still.
std::string HostileJunit(bool hostile_fails, bool other_fails) {
  auto testcase = [](const std::string& n, bool fails, const std::string& message) {
    return "<testcase name=\"" + n + "\">" +
           (fails ? "<failure message=\"" + message + "\">detail</failure>" : std::string()) + "</testcase>";
  };
  return "<?xml version=\"1.0\"?><testsuites><testsuite name=\"ev\">" +
         testcase(R"(t&lt;img src=x onerror=alert(2)&gt;|*n*)", hostile_fails,
                  "boom &lt;script&gt;alert(3)&lt;/script&gt; | [l](javascript:1)") +
         testcase("fixed_one", other_fails, "was broken") + testcase("still", true, "still broken") +
         "</testsuite></testsuites>";
}

// Two commits, the second with a hostile subject, each with a nightly ingested from JUnit:
// the hostile case breaks, fixed_one is fixed, still fails both nights. Returns the db.
std::string IngestTwoHostileNights(const TempDir& dir) {
  const fs::path repo = dir / "repo";
  Git(dir.path(), {"init", "-q", "-b", "main", repo.string()});
  std::vector<std::string> shas;
  for (const std::string& subject : {std::string("first"), std::string("second ") + kHostile}) {
    Git(repo, {"commit", "-q", "--allow-empty", "-m", subject});
    shas.push_back(Git(repo, {"rev-parse", "HEAD"}));
  }
  const std::string db = (dir / "h.db").string();
  for (int i = 0; i < 2; ++i) {
    WriteFile(dir / fmt::format("n{}.xml", i), HostileJunit(i == 1, i == 0));
    auto in = RunHarness({"ingest", "--db", db, "--format", "junit", (dir / fmt::format("n{}.xml", i)).string(),
                          "--repo", repo.string(), "--commit", shas[i]});
    EXPECT_EQ(in.exit_code, 0) << in.err;
  }
  return db;
}

// Hostile case names, messages and commit subject: the report opens with the verdict, then
// the new failure and the fix (each with why it has no culprit), then what still fails;
// nothing hostile is live in HTML or Markdown.
TEST(MorningView, TheReportOpensWithTonightsChangesEscaped) {
  TempDir dir;
  const std::string db = IngestTwoHostileNights(dir);
  auto md = RunHarness({"report", "--db", db, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  const std::string& s = md.out;
  EXPECT_EQ(FirstLine(s), "## harness nightly: FAIL - 1 passed, 2 failed, 0 regressed, 0 errors, 0 skipped") << s;
  const auto changes = s.find("### What changed since the previous nightly (2)");
  ASSERT_NE(changes, std::string::npos) << s;
  EXPECT_LT(changes, s.find("### Still failing (1)")) << s;
  EXPECT_LT(s.find("### Still failing (1)"), s.find("| suite |")) << s;
  EXPECT_NE(s.find("- **new failure** FAIL ev\\/t\\<img src\\=x onerror\\=alert\\(2\\)\\>\\|\\*n\\* at `"), std::string::npos)
      << s;
  EXPECT_NE(s.find(": boom \\<script\\>alert\\(3\\)\\<\\/script\\> \\| \\[l\\]\\(javascript\\:1\\)\n  - no culprit: "
                   "bisect \\-\\-auto has not looked at it"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("- **fixed** PASS ev\\/fixed\\_one at `"), std::string::npos) << s;
  EXPECT_NE(s.find("second \\<script\\>alert\\(1\\)\\<\\/script\\> \\| \\*x\\* \\[l\\]\\(javascript\\:1\\) \\@all \\#1 "
                   "\\`c\\`"),
            std::string::npos)
      << "the commit subject, neutralised: " << s;
  for (std::size_t i = s.find('<'); i != std::string::npos; i = s.find('<', i + 1))
    EXPECT_EQ(s[i - 1], '\\') << "an unescaped '<' opens HTML: " << s.substr(i, 20);

  auto html = RunHarness({"report", "--db", db, "--out", (dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadFile(dir / "r.html");
  for (const char* live : {"<script>alert", "<img src=x", "javascript:1)\"", "href=\"javascript"})
    EXPECT_EQ(page.find(live), std::string::npos) << live;
  EXPECT_NE(page.find("&lt;img src=x onerror=alert(2)&gt;|*n*"), std::string::npos);
  EXPECT_NE(page.find("boom &lt;script&gt;alert(3)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("second &lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // The morning order: verdict, changes, failures, flaky, trends.
  const auto verdict = page.find("id=\"verdict\""), changes_at = page.find("<section id=\"changes\"");
  EXPECT_LT(verdict, changes_at);
  EXPECT_LT(changes_at, page.find("<section id=\"failures\""));
  EXPECT_LT(page.find("<section id=\"failures\""), page.find("<section id=\"flaky\""));
  EXPECT_LT(page.find("<section id=\"flaky\""), page.find("<section id=\"trends\""));
  EXPECT_NE(page.find("data-status=\"fail new\""), std::string::npos);
  EXPECT_NE(page.find("data-status=\"pass fixed\""), std::string::npos);
}

}  // namespace
}  // namespace harness
