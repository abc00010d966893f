// Time to culprit through the real binary: a bisect session records its wall time, steps
// and rounds; `bisect --auto` also the time from the nightly's end to its answer; bisect's
// own output, the report (text, JSON, HTML, Markdown) and JUnit show them (docs/bisect.md,
// "Time to culprit").
#include <sqlite3.h>

#include <ctime>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness {
namespace bisect_time_e2e_test {

using testing_util::RunHarness;
using testing_util::TempDir;

// A stack repository of n commits whose stack.json turns fp8-scale-unrepaired on from commit
// k (1-based), nightlies of it, and bisect --auto over them.
struct TimedHistory {
  TempDir dir;
  std::vector<std::string> shas;
  std::string db = (dir / "h.db").string();
  std::string repo = (dir / "repo").string();

  TimedHistory(int n, int k) {
    shas = testing_util::MakeGitRepo(dir / "repo", n, [&](int i) {
      return std::map<std::string, std::string>{
          {"stack.json", i >= k ? R"({"format_version": 1, "faults": ["fp8-scale-unrepaired"]})"
                                : R"({"format_version": 1})"}};
    });
  }
  ProcessResult Nightly(int i) {
    const auto config = dir / fmt::format("stack-{}.json", i);
    auto show = RunProcess({"git", "-C", repo, "show", fmt::format("{}:stack.json", shas[i - 1])});
    testing_util::WriteFile(config, show.ok() ? show->out : "");
    return RunHarness({"run", "--db", db, "--repo", repo, "--commit", shas[i - 1], "--stack-config", config.string()});
  }
  // bisect's flags, then the command it runs per commit: a nightly of that commit from its
  // worktree (of one suite when given).
  ProcessResult Bisect(std::vector<std::string> args, const std::string& suite = "") {
    for (const std::string& a : {std::string("--"), std::string(testing_util::kHarnessBinary), std::string("run"),
                                 std::string("--db"), std::string("{db}"), std::string("--repo"), repo,
                                 std::string("--commit"), std::string("{sha}"), std::string("--stack-config"),
                                 std::string("{worktree}/stack.json")})
      args.push_back(a);
    if (!suite.empty()) args.insert(args.end(), {"--suite", suite});
    return RunHarness(args);
  }
  // Moves every stored run `hours_ago` back in time, as a nightly that ended while nobody
  // watched: what the time from the nightly's end is measured from.
  void MoveRunsBack(int hours_ago) {
    const std::time_t then = std::time(nullptr) - hours_ago * 3600;
    std::tm tm{};
    gmtime_r(&then, &tm);
    char at[32];
    std::strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    const std::string sql = fmt::format("UPDATE runs SET started_at = '{0}', finished_at = '{0}'", at);
    EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
    sqlite3_close(h);
  }
};

// bisect --auto of a nightly that ended two hours ago: its answer says when, after the
// nightly's end, it named the culprit, and how long the bisect itself took in steps and rounds.
TEST(BisectTimeE2E, AutoBisectSaysHowLongAfterTheNightlyItNamedTheCulprit) {
  TimedHistory h(8, 5);
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(8).exit_code, 1);
  ASSERT_NO_FATAL_FAILURE(h.MoveRunsBack(2));
  auto r = h.Bisect({"bisect", "--auto", "--db", h.db, "--repo", h.repo, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  ASSERT_FALSE(j["regressions"].empty()) << r.out;
  for (const auto& g : j["regressions"]) {
    ASSERT_EQ(g["verdict"], "culprit") << g;
    EXPECT_EQ(g["culprit"], h.shas[4]);
    const Json& t = g["time"];
    ASSERT_TRUE(t.is_object()) << g;
    const double wall = t["wall_seconds"].get<double>();
    EXPECT_GT(wall, 0) << "the session's commands take time";
    EXPECT_LT(wall, 600);
    EXPECT_EQ(t["steps"], g["runs"]) << "every command the session ran is a step";
    EXPECT_EQ(t["rounds"], t["steps"]) << "one step at a time: a round per step";
    const double after = t["seconds_after_nightly"].get<double>();
    EXPECT_GE(after, 7200 - 1) << "the nightly ended two hours ago (stored to the second)";
    EXPECT_LE(after, 7200 + 600);
  }

  // The stored answer reports the same times; the text says them in words.
  auto text = h.Bisect({"bisect", "--auto", "--db", h.db, "--repo", h.repo});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  time: answered 2h00m after the nightly ended; the bisect took "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(fmt::format("{} steps in {} rounds", j["regressions"][0]["runs"].get<int>(),
                                      j["regressions"][0]["runs"].get<int>())),
            std::string::npos)
      << text.out;

  // The report's culprit lines and bisect section, in every format.
  auto md = RunHarness({"report", "--db", h.db, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("answered 2h00m after the nightly ended; the bisect took "), std::string::npos) << md.out;
  const auto bisect_section = md.out.find("### Bisect");
  ASSERT_NE(bisect_section, std::string::npos) << md.out;
  EXPECT_NE(md.out.find("answered 2h00m after the nightly ended", bisect_section), std::string::npos)
      << "Markdown escapes it, so look for its words: " << md.out.substr(bisect_section);
  auto report_text = RunHarness({"report", "--db", h.db, "--format", "text"});
  ASSERT_EQ(report_text.exit_code, 0) << report_text.err;
  EXPECT_NE(report_text.out.find("answered 2h00m after the nightly ended"), std::string::npos) << report_text.out;
  auto report_json = RunHarness({"report", "--db", h.db, "--format", "json"});
  ASSERT_EQ(report_json.exit_code, 0) << report_json.err;
  const Json rj = testing_util::StdoutJson(report_json);
  ASSERT_FALSE(rj["bisect"].empty());
  for (const auto& s : rj["bisect"]) {
    EXPECT_GE(s["time"]["seconds_after_nightly"].get<double>(), 7200 - 1) << s["time"];
    EXPECT_EQ(s["time"]["rounds"], s["runs"]) << s;
  }
  auto html = RunHarness({"report", "--db", h.db, "--out", (h.dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(testing_util::ReadFile(h.dir / "r.html").find("answered 2h00m after the nightly ended"),
            std::string::npos);
}

// A bisect by hand has no nightly: its output gives the session's wall time, steps and
// rounds, and no time since a nightly.
TEST(BisectTimeE2E, ABisectByHandSaysHowLongItTookInStepsAndRounds) {
  TimedHistory h(8, 5);
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(8).exit_code, 1);
  const std::string id = "fp8_scale_layout/test_transposed_scale_matches_bpreshuffle_layout_contract_1";
  auto r = h.Bisect({"bisect", "--db", h.db, "--repo", h.repo, "--good", h.shas[0], "--bad", h.shas[7], "--case", id,
                     "--format", "json"},
                    "fp8_scale_layout");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["verdict"], "culprit") << r.out;
  ASSERT_TRUE(j["time"].is_object()) << r.out;
  EXPECT_GT(j["time"]["wall_seconds"].get<double>(), 0);
  EXPECT_EQ(j["time"]["steps"], j["runs"]);
  EXPECT_EQ(j["time"]["rounds"], j["runs"]);
  EXPECT_TRUE(j["time"]["seconds_after_nightly"].is_null()) << "no nightly: nothing to count from";
  auto text = h.Bisect(
      {"bisect", "--db", h.db, "--repo", h.repo, "--good", h.shas[0], "--bad", h.shas[7], "--case", id, "--format", "text"},
      "fp8_scale_layout");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("time: the bisect took "), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("after the nightly ended"), std::string::npos) << text.out;
}

// bisect --auto --jobs 2: each bisection runs two steps at once (each a `harness run` of its
// commit), names the same culprit, and its rounds are fewer than its steps.
TEST(BisectTimeE2E, AutoBisectWithTwoJobsNamesTheCulpritInFewerRoundsThanSteps) {
  TimedHistory h(16, 11);
  ASSERT_EQ(h.Nightly(1).exit_code, 0);
  ASSERT_EQ(h.Nightly(16).exit_code, 1);
  auto r = h.Bisect({"bisect", "--auto", "--jobs", "2", "--db", h.db, "--repo", h.repo, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  ASSERT_FALSE(j["regressions"].empty()) << r.out;
  int ran = 0;
  for (const auto& g : j["regressions"]) {
    ASSERT_EQ(g["verdict"], "culprit") << g;
    EXPECT_EQ(g["culprit"], h.shas[10]);
    const Json& t = g["time"];
    EXPECT_EQ(t["steps"], g["runs"]);
    // A later target may be answered by the runs an earlier one made: no step, no round.
    if (t["steps"].get<int>() == 0) continue;
    ++ran;
    EXPECT_LT(t["rounds"].get<int>(), t["steps"].get<int>()) << "two steps at once: " << g << r.err;
  }
  EXPECT_GT(ran, 0) << "no bisection ran a step";
}

}  // namespace bisect_time_e2e_test
}  // namespace harness
