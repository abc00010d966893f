// Several culprits in one range (issue 35 §3) through bisect --auto and the real binary: a
// stack repository whose commits change the gsm8k suite's stand-in (its table names a
// profile whose base accuracy the commit sets), so the GSM8K accuracy of real nightlies drops
// 0.6 pp at one commit and 0.8 pp more ten commits later (or drops and is partly given back).
// bisect --auto finds the regression between two nightlies, confirms it with a rerun and
// bisects it with real `harness run` steps in worktrees; every output names what was found.
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/cli/culprit_list_test_util.h"
#include "harness/store/bisect_changes.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness {
namespace auto_bisect_culprits_e2e_test {

using testing_util::ExpectListedInOrder;
using testing_util::HtmlCulpritList;
using testing_util::LinesWith;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;

// git joins a subject's lines (%s): the newline reaches the store as a space.
const std::string kHostile = "fuse <b>norm</b> | `tick` *star* \x1b[31mred\x1b[0m\n<i>second</i>";
const std::string kStoredHostile = "fuse <b>norm</b> | `tick` *star* \x1b[31mred\x1b[0m <i>second</i>";

// A stack repository of n commits, each holding the server the stack is: stack.json, an
// openai stack whose launch starts the stand-in (`harness serve-sim`) from the commit's
// worktree with the commit's profile.json, whose base accuracy is accuracy(i). The launch is
// where and how a run ran, not what it measured, so every nightly pairs with the one before
// (as the server of a real stack's repository would). The commits where the accuracy changes
// have the hostile subject.
struct AccuracyHistory {
  TempDir dir;
  std::vector<std::string> shas;
  std::string db = (dir / "h.db").string();
  std::string repo = (dir / "repo").string();

  AccuracyHistory(int n, const std::function<double(int)>& accuracy) {
    const auto golden = std::filesystem::path(testing_util::kSourceRoot) / "golden" / "sim" / "default.json";
    auto base = ParseJson(ReadFile(golden), golden.string());
    if (!base.ok()) throw std::runtime_error(base.error().message);
    const Json stack = {{"format_version", 1},
                        {"stack", "openai"},
                        {"openai",
                         {{"model", "refstack-sim"},
                          {"chat", false},
                          {"launch",
                           {{"command", {testing_util::kHarnessBinary, "serve-sim", "--port", "{port}", "--profile",
                                         "{worktree}/profile.json"}},
                            {"ready_timeout_s", 60}}}}}};
    shas = testing_util::MakeGitRepo(
        dir / "repo", n,
        [&](int i) {
          Json profile = *base;
          profile["base_accuracy"] = accuracy(i);
          return std::map<std::string, std::string>{{"stack.json", stack.dump(2)}, {"profile.json", profile.dump(2)}};
        },
        [&](int i) {
          return i > 1 && accuracy(i) != accuracy(i - 1) ? kHostile + " " + std::to_string(i) : fmt::format("commit {}", i);
        });
  }
  // A nightly of commit i (1-based), run from a copy of that commit's files ({worktree} is
  // the current directory outside a bisect).
  ProcessResult Nightly(int i) {
    const auto checkout = dir / fmt::format("nightly-{}", i);
    for (const std::string file : {"stack.json", "profile.json"}) {
      auto show = RunProcess({"git", "-C", repo, "show", fmt::format("{}:{}", shas[i - 1], file)});
      testing_util::WriteFile(checkout / file, show.ok() ? show->out : "");
    }
    return RunHarness({"run", "--db", db, "--repo", repo, "--commit", shas[i - 1], "--suite", "gsm8k", "--stack-config",
                       (checkout / "stack.json").string()},
                      ProcessOptions{.cwd = checkout});
  }
  std::vector<std::string> Auto(const std::string& database, int max_culprits, std::vector<std::string> flags) const {
    std::vector<std::string> args = {"bisect", "--auto", "--db", database, "--repo", repo, "--format", "json",
                                     "--max-culprits", std::to_string(max_culprits)};
    args.insert(args.end(), flags.begin(), flags.end());
    for (const std::string a : {"--", testing_util::kHarnessBinary, "run", "--db", "{db}", "--repo", repo.c_str(),
                                "--commit", "{sha}", "--suite", "gsm8k", "--stack-config", "{worktree}/stack.json"})
      args.push_back(a);
    return args;
  }
};

// The GSM8K accuracy the stand-in serves: 0.925 up to commit 4, then 0.919 from commit 5
// (-0.6 pp) and 0.911 from commit 15 (-0.8 pp more): two drops of one metric in one range.
double TwoDrops(int i) { return i >= 15 ? 0.911 : i >= 5 ? 0.919 : 0.925; }
// A drop and a later partial fix: 0.925, 0.912 from commit 5 (-1.3 pp), 0.918 from commit 15.
double DropAndPartialFix(int i) { return i >= 15 ? 0.918 : i >= 5 ? 0.912 : 0.925; }
constexpr int kCommits = 18;

// The nightlies the loop would have: commits 1 and 2 (the good end, with one nightly before
// it, as a nightly loop has: bisect learns which questions flip from the nightlies before the
// range), then commit 18, the bad end.
void RunNightlies(AccuracyHistory& h) {
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(2).exit_code, 0);
  ASSERT_EQ(h.Nightly(kCommits).exit_code, 1) << "the nightly's paired comparison says REGRESSED";
}

// The drop a culprit was measured with, as the report prints it.
std::string Moved(const Json& change) {
  return fmt::format("moved {:.4f} ({:.2f} pp)", change["size"].get<double>(), change["size_pp"].get<double>());
}

// The one regression of the nightly pair, bisected.
Json TheRegression(const ProcessResult& r) {
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["regressions"].size(), 1u) << r.out;
  if (j["regressions"].size() != 1) return Json::object();
  const Json& g = j["regressions"][0];
  EXPECT_EQ(g["kind"], "paired") << g;
  EXPECT_EQ(g["metric"], "accuracy") << g;
  EXPECT_EQ(g["confirmed"], true) << g;
  EXPECT_EQ(g["verdict"], "culprit") << g;
  return g;
}

// The two drops' answer stored: the regression's session names the first culprit and
// carries both; asked again, bisect --auto gives the stored answer, both culprits with it.
void ExpectStoredWithBoth(const AccuracyHistory& h, const Json& g) {
  {
    auto store = Store::OpenReadOnly(h.db);
    ASSERT_TRUE(store.ok());
    auto rows = (*store)->bisect_reader().Regressions();
    ASSERT_TRUE(rows.ok());
    ASSERT_EQ(rows->size(), 1u);
    ASSERT_TRUE(rows->front().session_id.has_value());
    EXPECT_EQ(*rows->front().session_id, g["session"].get<int64_t>());
    auto session = (*store)->bisect_reader().BisectSession(*rows->front().session_id);
    ASSERT_TRUE(session.ok());
    EXPECT_EQ(session->culprit, h.shas[4]);
    auto changes = ChangesFromJson(ParseJsonOrDiscarded(session->result_json), "session");
    ASSERT_TRUE(changes.ok()) << changes.error().message;
    ASSERT_EQ(changes->size(), 2u);
    EXPECT_EQ((*changes)[0].sha, h.shas[4]);
    EXPECT_EQ((*changes)[1].sha, h.shas[14]);
    EXPECT_EQ((*changes)[1].subject, kStoredHostile + " 15");
  }
  // Asked again, the stored answer is the same answer, both culprits with it.
  auto again = RunHarness(h.Auto(h.db, 2, {}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const Json stored = testing_util::StdoutJson(again);
  EXPECT_EQ(stored["stored"], true);
  EXPECT_EQ(stored["regressions"][0]["changes"], g["changes"]) << again.out;
}

// The report's JSON (the session and the failing case each list both) and Markdown (one
// numbered item per culprit, in order, with its own drop, the subject inert).
void ExpectReportJsonAndMarkdownListBoth(const AccuracyHistory& h, const Json& g) {
  const Json& first = g["changes"][0];
  const Json& second = g["changes"][1];
  auto json = RunHarness({"report", "--db", h.db, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const Json rj = testing_util::StdoutJson(json);
  ASSERT_EQ(rj["bisect"].size(), 1u) << json.out;
  EXPECT_EQ(rj["bisect"][0]["culprits"], g["changes"]) << rj["bisect"][0];
  ASSERT_EQ(rj["failures"].size(), 1u) << json.out;
  EXPECT_EQ(rj["failures"][0]["culprit"]["culprits"], g["changes"]) << rj["failures"][0];

  auto md = RunHarness({"report", "--db", h.db, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  const auto items1 = LinesWith(md.out, "1. `" + ShortSha(h.shas[4]) + "`");
  const auto items2 = LinesWith(md.out, "2. `" + ShortSha(h.shas[14]) + "`");
  ASSERT_FALSE(items1.empty()) << md.out;
  ASSERT_EQ(items1.size(), items2.size()) << md.out;
  for (std::size_t i = 0; i < items1.size(); ++i) {
    EXPECT_LT(md.out.find(items1[i]), md.out.find(items2[i]));
    EXPECT_NE(items1[i].find(Moved(first)), std::string::npos) << items1[i];
    EXPECT_NE(items2[i].find(Moved(second)), std::string::npos) << items2[i];
    EXPECT_NE(items2[i].find(R"(\<b\>norm\<\/b\> \| \`tick\` \*star\*)"), std::string::npos) << items2[i];
  }
  EXPECT_EQ(md.out.find('\x1b'), std::string::npos);

}

// The report's text (the list under the culprit, no terminal escape of a subject reaching
// the terminal) and HTML (both in an ordered list, the subject's tags escaped).
void ExpectReportTextAndHtmlListBoth(const AccuracyHistory& h, const Json& g) {
  const Json& first = g["changes"][0];
  const Json& second = g["changes"][1];
  auto text = RunHarness({"report", "--db", h.db, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("2 culprits in the range"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(Moved(second)), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);

  auto html = RunHarness({"report", "--db", h.db, "--out", (h.dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadFile(h.dir / "r.html");
  const std::string items = HtmlCulpritList(page);
  ASSERT_FALSE(items.empty()) << "no list of culprits";
  ASSERT_NO_FATAL_FAILURE(ExpectListedInOrder(items, h.shas[4], h.shas[14]));
  EXPECT_NE(items.find(Moved(first)), std::string::npos) << items;
  EXPECT_NE(items.find(Moved(second)), std::string::npos) << items;
  EXPECT_NE(items.find("fuse &lt;b&gt;norm&lt;/b&gt;"), std::string::npos) << items;
  EXPECT_EQ(page.find("<b>norm"), std::string::npos) << "a subject's tag reached the HTML";
  EXPECT_EQ(page.find('\x1b'), std::string::npos);

}

// JUnit: the failing case's culprit line names both, in order.
void ExpectJunitListsBoth(const std::filesystem::path& junit, const AccuracyHistory& h) {
  const std::string xml = ReadFile(junit);
  const auto line = xml.find("bisect --auto: culprit " + ShortSha(h.shas[4]));
  ASSERT_NE(line, std::string::npos) << xml;
  const std::string rest = xml.substr(line, xml.find('\n', line) - line);
  const auto list1 = rest.find("2 culprits in the range: 1. " + ShortSha(h.shas[4]));
  ASSERT_NE(list1, std::string::npos) << rest;
  EXPECT_NE(rest.find("; 2. " + ShortSha(h.shas[14]), list1), std::string::npos) << rest;
  EXPECT_EQ(xml.find('\x1b'), std::string::npos) << "not a character XML 1.0 allows";
}

// Two drops of one metric, bisect --auto --max-culprits 2: both culprits named, in
// first-parent order, each with its own drop (the size of its own step, not of the whole
// range) and confidence, stored, and listed by every output.
TEST(AutoBisectCulpritsE2E, TwoDropsOfOneMetricAreBothNamedWithTheirOwnDropEverywhere) {
  AccuracyHistory h(kCommits, TwoDrops);
  ASSERT_NO_FATAL_FAILURE(RunNightlies(h));
  const auto junit = h.dir / "junit.xml";
  auto r = RunHarness(h.Auto(h.db, 2, {"--junit", junit.string()}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json g = TheRegression(r);
  ASSERT_EQ(g["changes"].size(), 2u) << g;
  const Json& first = g["changes"][0];
  const Json& second = g["changes"][1];
  EXPECT_EQ(g["culprit"], h.shas[4]) << "the first culprit stays the regression's culprit";
  EXPECT_EQ(first["commit"], h.shas[4]);
  EXPECT_EQ(second["commit"], h.shas[14]);
  EXPECT_EQ(first["subject"], kStoredHostile + " 5");
  EXPECT_EQ(second["subject"], kStoredHostile + " 15");
  // Each its own step: 0.6 and 0.8 pp of base accuracy, a question (0.076 pp) either way.
  EXPECT_NEAR(first["size_pp"].get<double>(), -0.6, 0.1) << first;
  EXPECT_NEAR(second["size_pp"].get<double>(), -0.8, 0.1) << second;
  for (const Json& c : g["changes"]) EXPECT_GE(c["confidence"].get<double>(), 0.95) << c;

  ASSERT_NO_FATAL_FAILURE(ExpectStoredWithBoth(h, g));
  ASSERT_NO_FATAL_FAILURE(ExpectReportJsonAndMarkdownListBoth(h, g));
  ASSERT_NO_FATAL_FAILURE(ExpectReportTextAndHtmlListBoth(h, g));
  ASSERT_NO_FATAL_FAILURE(ExpectJunitListsBoth(junit, h));
}

// The same nightlies with --max-culprits 1 (the default): one search, one culprit, one of the
// two drops (which one depends on where the search's runs fell: docs/bisect.md, "Several
// culprits"), and no list in any output.
TEST(AutoBisectCulpritsE2E, OneCulpritAtMostNamesOneOfTheTwoDropsAndNoList) {
  AccuracyHistory h(kCommits, TwoDrops);
  ASSERT_NO_FATAL_FAILURE(RunNightlies(h));
  auto r = RunHarness(h.Auto(h.db, 1, {}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json g = TheRegression(r);
  ASSERT_EQ(g["changes"].size(), 1u) << g;
  EXPECT_EQ(g["changes"][0]["commit"], g["culprit"]);
  EXPECT_TRUE(g["culprit"] == h.shas[4] || g["culprit"] == h.shas[14]) << g;
  auto text = RunHarness({"report", "--db", h.db, "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("culprits in the range"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("culprit " + ShortSha(g["culprit"].get<std::string>())), std::string::npos) << text.out;
}

// A drop and a later partial fix: the answer is the culprit and never the fix (docs/bisect.md:
// a partial fix is not searched for), with --max-culprits 2 as with 1. Its drop is the level
// of every run from it on against the level before, the fix's runs among them, so it lies
// between the drop the fix left (0.7 pp) and the whole drop (1.3 pp).
TEST(AutoBisectCulpritsE2E, ADropAndALaterPartialFixNameTheCulpritAndNeverTheFix) {
  AccuracyHistory h(kCommits, DropAndPartialFix);
  ASSERT_NO_FATAL_FAILURE(RunNightlies(h));
  auto r = RunHarness(h.Auto(h.db, 2, {}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json g = TheRegression(r);
  EXPECT_EQ(g["culprit"], h.shas[4]) << g;
  ASSERT_EQ(g["changes"].size(), 1u) << "the fix is not named: " << g;
  EXPECT_EQ(g["changes"][0]["commit"], h.shas[4]);
  const double drop = g["changes"][0]["size_pp"].get<double>();
  EXPECT_LE(drop, -0.7 + 0.1) << g;
  EXPECT_GE(drop, -1.3 - 0.1) << g;
  EXPECT_EQ(g["reason"], "") << "the part after the culprit is explained by it: " << g;
}

// Without a nightly before the good end there is nothing to learn the questions' flips from
// (the fixed prior): the check of the part before a culprit the first search named reads
// its 8 dropped questions as borderline ones ("no culprit" 0.36 there, from a prior of 0.2),
// calls the part explained, and the earlier drop may go unnamed (docs/bisect.md, "Several
// culprits": known limit). What is named is right.
TEST(AutoBisectCulpritsE2E, WithNoNightlyBeforeTheRangeEveryCulpritNamedIsATrueOne) {
  AccuracyHistory h(kCommits, [](int i) { return TwoDrops(i + 1); });  // first drop at 4, second at 14
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(kCommits).exit_code, 1);
  auto r = RunHarness(h.Auto(h.db, 2, {}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json g = TheRegression(r);
  ASSERT_FALSE(g["changes"].empty()) << g;
  for (const Json& c : g["changes"]) EXPECT_TRUE(c["commit"] == h.shas[3] || c["commit"] == h.shas[13]) << c;
}

}  // namespace auto_bisect_culprits_e2e_test
}  // namespace harness
