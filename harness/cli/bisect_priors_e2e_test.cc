// Priors from what a commit changed (docs/bisect.md): `bisect --watch` and a suite table's
// "watch" list, through the real binary on real git histories where only some commits touch
// the watched paths.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
namespace bisect_priors_e2e_test {

using testing_util::RunHarness;
using testing_util::TempDir;

// 32 commits; the check script in kernels/ fails from commit 21 on. Commits 4, 11, 21 and 27 touch
// kernels/, 6 and 15 a directory with a hostile name, 2 (the range's first) head/, 32 (the
// known-bad end) tail/; the rest only file.txt.
constexpr int kCulprit = 21;
const std::string kOddDir = "odd \"dir\" <b>&";

std::vector<std::string> History(const std::filesystem::path& repo) {
  return testing_util::MakeGitRepo(repo, 32, [](int i) {
    std::map<std::string, std::string> f;
    if (i == 1 || i == kCulprit) f["kernels/check.sh"] = i == 1 ? "exit 0\n" : "exit 1\n";
    if (i == 4 || i == 11 || i == kCulprit || i == 27) f["kernels/gmm.cc"] = fmt::format("// v{}\n", i);
    if (i == 6 || i == 15) f[kOddDir + "/notes.md"] = fmt::format("{}\n", i);
    if (i == 2) f["head/notes.md"] = "2\n";
    if (i == 32) f["tail/notes.md"] = "32\n";
    return f;
  });
}

std::vector<std::string> Bisect(const std::vector<std::string>& shas, const std::filesystem::path& dir,
                                const std::string& db, std::vector<std::string> extra) {
  std::vector<std::string> args = {"bisect", "--good", shas[0], "--bad", shas[31], "--case", "x/y_0",
                                   "--repo", (dir / "repo").string(), "--db", (dir / db).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  for (const char* a : {"--", "sh", "{worktree}/kernels/check.sh"}) args.push_back(a);
  return args;
}

TEST(BisectPriorsE2E, AWatchedCulpritIsFoundInFewerStepsAndTheOutputNamesTheWatchedCommits) {
  TempDir dir;
  const auto shas = History(dir / "repo");
  auto plain = RunHarness(Bisect(shas, dir.path(), "plain.db", {"--format", "json"}));
  ASSERT_EQ(plain.exit_code, 0) << plain.err << plain.out;
  const Json p = testing_util::StdoutJson(plain);
  EXPECT_EQ(p["culprit"], shas[kCulprit - 1]) << plain.out;
  EXPECT_EQ(p["priors"], nullptr) << "no watched paths: no priors";

  auto watched = RunHarness(Bisect(shas, dir.path(), "watched.db", {"--watch", "kernels", "--format", "json"}));
  ASSERT_EQ(watched.exit_code, 0) << watched.err << watched.out;
  const Json w = testing_util::StdoutJson(watched);
  EXPECT_EQ(w["culprit"], shas[kCulprit - 1]) << watched.out;
  EXPECT_EQ(w["priors"]["watch"], Json{"kernels"});
  EXPECT_EQ(w["priors"]["watched_commits"], (Json{shas[3], shas[10], shas[kCulprit - 1], shas[26]}));
  EXPECT_EQ(w["priors"]["applied"], true);
  EXPECT_EQ(w["priors"]["watched_prior"], 0.5);
  EXPECT_NEAR(w["priors"]["unwatched_weight"].get<double>(), 4.0 / 27, 1e-12) << "4 watched of 31 hold half";
  EXPECT_LT(w["runs"].get<int>(), p["runs"].get<int>())
      << w["runs"] << " steps with the priors, " << p["runs"] << " without";

  // The priors wrong: the watched commits are 6 and 15, the culprit touches none of them. It
  // is still found; the text names the hostile path as it is.
  auto wrong = RunHarness(Bisect(shas, dir.path(), "wrong.db", {"--watch", kOddDir + "/", "--format", "json"}));
  ASSERT_EQ(wrong.exit_code, 0) << wrong.err << wrong.out;
  const Json x = testing_util::StdoutJson(wrong);
  EXPECT_EQ(x["culprit"], shas[kCulprit - 1]) << wrong.out;
  EXPECT_EQ(x["priors"]["watch"], Json{kOddDir + "/"});
  EXPECT_EQ(x["priors"]["watched_commits"], (Json{shas[5], shas[14]}));
  auto text = RunHarness(Bisect(shas, dir.path(), "text.db", {"--watch", kOddDir}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("priors: 2 of 31 commits touch the watched paths (" + kOddDir +
                          "); together they hold 0.5 of the culprit prior, so each other one weighs 0.069 of one "
                          "that does"),
            std::string::npos)
      << text.out;

  // Watched paths no commit touches leave the prior flat: the same steps as without.
  auto none = RunHarness(Bisect(shas, dir.path(), "none.db", {"--watch", "nothing/here", "--format", "json"}));
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const Json n = testing_util::StdoutJson(none);
  EXPECT_EQ(n["priors"]["applied"], false);
  EXPECT_EQ(n["runs"], p["runs"]);
  std::vector<std::string> a, b;
  for (const auto& s : p["steps"]) a.push_back(s["commit"]);
  for (const auto& s : n["steps"]) b.push_back(s["commit"]);
  EXPECT_EQ(a, b) << "the same commits in the same order";
}

// The range's first commit (after the known-good end) and its last (the known-bad end) are
// candidates like the others: a list only one of them touches weighs that commit alone.
TEST(BisectPriorsE2E, ACommitAtEitherEndOfTheRangeIsWeighedLikeAnyOther) {
  TempDir dir;
  const auto shas = History(dir / "repo");
  const std::pair<std::string, std::string> ends[] = {{"head", shas[1]}, {"tail", shas[31]}};
  for (const auto& [watch, sha] : ends) {
    auto r = RunHarness(Bisect(shas, dir.path(), watch + ".db", {"--watch", watch, "--format", "json"}));
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const Json j = testing_util::StdoutJson(r);
    EXPECT_EQ(j["culprit"], shas[kCulprit - 1]) << r.out;
    EXPECT_EQ(j["priors"]["watched_commits"], Json{sha}) << watch;
    EXPECT_EQ(j["priors"]["applied"], true) << watch;
    EXPECT_NEAR(j["priors"]["unwatched_weight"].get<double>(), 1.0 / 30, 1e-12)
        << watch << ": 1 watched of 31 holds half";
  }
}

// A suite table's "watch" list is what a bisect of its cases watches; the session's log
// records it, and a replay of the log weighs the commits the same way.
TEST(BisectPriorsE2E, ASuitesWatchListIsUsedLoggedAndReplayed) {
  TempDir dir;
  const auto shas = History(dir / "repo");
  std::filesystem::create_directories(dir / "suites");
  testing_util::WriteFile(dir / "suites" / "x.json",
                          R"({"format_version": 2, "suite": "x", "params": {}, "tests": {"y": [{}]},
                              "watch": ["kernels/"]})");
  auto r = RunHarness(Bisect(shas, dir.path(), "h.db", {"--suites-dir", (dir / "suites").string(), "--format", "json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["culprit"], shas[kCulprit - 1]) << r.out;
  EXPECT_EQ(j["priors"]["watch"], Json{"kernels/"});
  EXPECT_EQ(j["priors"]["watched_commits"], (Json{shas[3], shas[10], shas[kCulprit - 1], shas[26]}));

  auto log = RunHarness({"bisect", "log", std::to_string(j["session"].get<int>()), "--db", (dir / "h.db").string()});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_NE(log.out.find(R"("watch":["kernels/"])"), std::string::npos) << log.out;
  testing_util::WriteFile(dir / "session.log", log.out);
  auto replay = RunHarness({"bisect", "replay", (dir / "session.log").string(), "--db", (dir / "h.db").string(),
                            "--format", "json"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const Json rj = testing_util::StdoutJson(replay);
  EXPECT_EQ(rj["culprit"], shas[kCulprit - 1]) << replay.out;
  EXPECT_EQ(rj["priors"], j["priors"]);

  // A hand-edited log's watch entry is input like the flag's.
  std::string edited = log.out;
  edited.replace(edited.find(R"("watch":["kernels/"])"), 20, R"("watch":["../kernels"])");
  testing_util::WriteFile(dir / "edited.log", edited);
  auto bad = RunHarness({"bisect", "replay", (dir / "edited.log").string(), "--db", (dir / "h.db").string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("edited.log:1: watch[0]: '../kernels' holds '..'"), std::string::npos) << bad.err;
}

TEST(BisectPriorsE2E, BadWatchEntriesAreExitTwoNamingWhere) {
  TempDir dir;
  const auto shas = History(dir / "repo");
  std::filesystem::create_directories(dir / "suites");
  const std::vector<std::pair<std::string, std::string>> tables = {
      {R"(["kernels", 7])", "x.json: watch[1]: expected a string (a path prefix), got 7"},
      {R"(["/etc"])", "x.json: watch[0]: '/etc' is absolute"},
      {R"(["kernels/../../etc"])", "x.json: watch[0]: 'kernels/../../etc' holds '..'"},
      {R"("kernels")", "x.json: watch: expected a list of path prefixes"}};
  for (const auto& [watch, message] : tables) {
    testing_util::WriteFile(dir / "suites" / "x.json",
                            R"({"format_version": 2, "suite": "x", "params": {}, "tests": {"y": [{}]}, "watch": )" +
                                watch + "}");
    auto r = RunHarness(Bisect(shas, dir.path(), "h.db", {"--suites-dir", (dir / "suites").string()}));
    EXPECT_EQ(r.exit_code, 2) << watch << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  std::filesystem::remove(dir / "suites" / "x.json");
  auto up = RunHarness(Bisect(shas, dir.path(), "h.db", {"--watch", "../secrets"}));
  EXPECT_EQ(up.exit_code, 2);
  EXPECT_NE(up.err.find("--watch '../secrets': holds '..'"), std::string::npos) << up.err;
  auto no_repo = RunHarness({"bisect", "--good", shas[0], "--bad", shas[31], "--case", "x/y_0", "--db",
                             (dir / "h.db").string(), "--watch", "kernels"});
  EXPECT_EQ(no_repo.exit_code, 2);
  EXPECT_NE(no_repo.err.find("--watch needs --repo"), std::string::npos) << no_repo.err;
  auto automatic = RunHarness({"bisect", "--auto", "--db", (dir / "h.db").string(), "--watch", "kernels"});
  EXPECT_EQ(automatic.exit_code, 2);
  EXPECT_NE(automatic.err.find("leave --watch out"), std::string::npos) << automatic.err;
  auto replay = RunHarness({"bisect", "--watch", "kernels", "replay", (dir / "none.log").string()});
  EXPECT_EQ(replay.exit_code, 2);
  EXPECT_NE(replay.err.find("leave --watch out"), std::string::npos) << replay.err;
}

// A commit whose changed files cannot be read (its tree is missing from a damaged object
// store; rev-list, which reads commits only, still lists it): the bisect with a watch list
// stops before any step with git's words, rather than weighing the range on what it could
// not read, and stores no session as a verdict.
TEST(BisectPriorsE2E, ACommitWhoseChangesCannotBeReadStopsTheBisectBeforeAnyStep) {
  TempDir dir;
  const auto shas = History(dir / "repo");
  const std::string repo = (dir / "repo").string();
  // The packed objects, loose, so that one can go; then commit 11's root tree goes.
  for (const auto& e : std::filesystem::directory_iterator(dir / "repo" / ".git" / "objects" / "pack")) {
    if (e.path().extension() != ".pack") continue;
    const auto moved = dir / "objects.pack";
    std::filesystem::rename(e.path(), moved);
    std::filesystem::remove(std::filesystem::path(e.path()).replace_extension(".idx"));
    auto unpack = RunProcess({"git", "-C", repo, "unpack-objects", "-q"},
                             {.stdin_data = testing_util::ReadFile(moved)});
    ASSERT_TRUE(unpack.ok() && unpack->exit_code == 0) << (unpack.ok() ? unpack->err : "");
  }
  auto tree = RunProcess({"git", "-C", repo, "rev-parse", shas[10] + "^{tree}"});
  ASSERT_TRUE(tree.ok() && tree->exit_code == 0);
  const std::string t = tree->out.substr(0, 40);
  ASSERT_TRUE(std::filesystem::remove(dir / "repo" / ".git" / "objects" / t.substr(0, 2) / t.substr(2))) << t;

  auto r = RunHarness(Bisect(shas, dir.path(), "h.db", {"--watch", "kernels", "--format", "json"}));
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("the files commit " + shas[10].substr(0, 12) + " changed (for --watch): git diff: fatal: "
                       "unable to read tree " + t),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("\"culprit\""), std::string::npos) << "no verdict: " << r.out;
}

}  // namespace bisect_priors_e2e_test
}  // namespace harness
