// harness bisect with {questions} through the real binary (issue 20 §2): each step's
// `harness run --questions {questions}` evaluates only the questions the search chose and is
// stored partial; the search reads it back question by question and counts what it cost.
// One 64-commit stack repository, from commit kCulprit on with fp8-scale-unrepaired in its
// stack.json (about 16 of 1319 GSM8K questions lost at batch 64), under the noisy stand-in
// in-process, under a `serve-sim` each step launches, and under the flaky stand-in (three
// times the borderline questions). The nightlies a bisect starts from are stored first, as
// a nightly would have: four before the range (the questions' flip rates) and the two ends.
#include <signal.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::RunHarness;
using testing_util::TempDir;

constexpr int kCommits = 64;
constexpr int kCulprit = 37;       // 1-based: commit 37 turns the fault on
constexpr int kWholeEval = 1319;   // GSM8K's test questions

std::string StackJson(int commit) {
  return commit >= kCulprit ? R"({"format_version": 1, "faults": ["fp8-scale-unrepaired"]})" : R"({"format_version": 1})";
}

class BisectQuestionsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    shas_ = testing_util::MakeGitRepo(dir_ / "repo", kCommits, [](int i) {
      return std::map<std::string, std::string>{{"stack.json", StackJson(i)}};
    });
  }
  std::string good() const { return shas_[history_]; }
  std::string culprit() const { return shas_[kCulprit - 1]; }

  // The nightlies: commits 1..history (the flip rates' runs), the known-good one after them
  // and the known-bad last one, each `harness run` + extra with its commit's stack.json in a
  // folder of its own (the current directory: a launched server's {worktree} outside a bisect).
  void StoreNightlies(int history, const std::vector<std::string>& extra) {
    history_ = history;
    std::vector<int> commits;
    for (int i = 1; i <= history + 1; ++i) commits.push_back(i);
    commits.push_back(kCommits);
    for (int i : commits) {
      const fs::path checkout = dir_ / fmt::format("nightly-{}", i);
      testing_util::WriteFile(checkout / "stack.json", StackJson(i));
      std::vector<std::string> args = {"run", "--db", db_, "--repo", (dir_ / "repo").string(), "--commit",
                                       shas_[i - 1], "--suite", "gsm8k"};
      args.insert(args.end(), extra.begin(), extra.end());
      auto r = RunHarness(args, {.cwd = checkout});
      ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    }
  }

  ProcessResult Bisect(const std::string& format, const std::vector<std::string>& run_args) {
    std::vector<std::string> args = {"bisect", "--good", good(), "--bad", shas_.back(), "--metric", "gsm8k",
                                     "--repo", (dir_ / "repo").string(), "--db", db_, "--format", format};
    args.insert(args.end(), run_args.begin(), run_args.end());
    return RunHarness(args);
  }

  // The bisect's own flags and the step command: one GSM8K case of the suites table at
  // suites, on the questions the search chose ({questions}).
  static std::vector<std::string> QuestionsCommand(const std::string& suites) {
    return {"--suites-dir", suites, "--", testing_util::kHarnessBinary, "run", "--db", "{db}", "--commit", "{sha}",
            "--repo", "{worktree}", "--suites-dir", suites, "--suite", "gsm8k", "--filter", "gsm8k/*_1",
            "--stack-config", "{worktree}/stack.json", "--questions", "{questions}"};
  }

  // The questions the bisect's own runs evaluated, read from the store: the samples of every
  // run a bisect command made; and how many of those runs were partial.
  std::pair<int64_t, int> StoredQuestions() {
    auto store = std::move(Store::OpenReadOnly(db_)).value();
    int64_t questions = 0;
    int partial = 0;
    const auto runs = store->reader().FinishedRuns();
    for (const RunRow& run : runs.value()) {
      if (ParseJsonOrDiscarded(run.context_json).value("bisect", "").empty()) continue;
      int64_t samples = 0;
      const auto cases = store->reader().Cases(run.id);
      for (const auto& c : cases.value()) samples += static_cast<int64_t>(store->reader().Samples(c.id)->size());
      questions += samples;
      if (run.partial_questions) {
        ++partial;
        EXPECT_EQ(*run.partial_questions, samples) << "a partial run stores the questions it was given, run " << run.id;
      }
    }
    return {questions, partial};
  }

  TempDir dir_;
  std::vector<std::string> shas_;
  int history_ = 0;
  std::string db_ = (dir_ / "h.db").string();
};

// (a) The noisy stand-in in-process: the culprit, for fewer than 3 whole evals' questions in
// all, as the harness counts them and as the store holds them.
TEST_F(BisectQuestionsE2E, ANoisyHistoryIsBisectedForAFewEvalsOfQuestions) {
  const std::string suites = testing_util::WriteGsm8kTableWithProfile(dir_.path(), "sim/noisy.json").string();
  StoreNightlies(4, {"--suites-dir", suites, "--filter", "gsm8k/*_1", "--stack-config", "stack.json"});
  auto r = Bisect("json", QuestionsCommand(suites));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], culprit()) << r.out;
  EXPECT_EQ(j["flip_history_runs"], 4) << "one run per nightly before the range";
  EXPECT_EQ(j["cases"], (Json{"gsm8k/test_gsm8k_accuracy_1"})) << "the case is worse at bad: " << r.out;
  EXPECT_LE(j["runs"].get<int>(), 24) << "plain bisection takes 6 runs, and is usually wrong here: " << r.out;
  const Json& nightly = j["steps"][0]["evidence"]["observations"][0];
  ASSERT_TRUE(nightly.contains("questions")) << "read question by question: " << nightly.dump();
  EXPECT_EQ(nightly["questions"].get<std::string>().size(), static_cast<std::size_t>(kWholeEval));
  const int64_t questions = j["questions_evaluated"].get<int64_t>();
  EXPECT_GT(questions, 0);
  EXPECT_LT(questions, 3 * kWholeEval) << r.out;
  EXPECT_EQ(j["questions_per_eval"], kWholeEval);
  EXPECT_DOUBLE_EQ(j["full_eval_equivalents"].get<double>(), static_cast<double>(questions) / kWholeEval);
  const auto [stored, partial] = StoredQuestions();
  EXPECT_EQ(stored, questions) << "what the harness reports is what its runs stored";
  EXPECT_GT(partial, 0) << "steps evaluated a few questions each";
  EXPECT_GE(j["runs"].get<int>(), partial);
  int64_t per_step = 0;
  for (const auto& step : j["steps"]) per_step += step["evidence"].value("questions_evaluated", int64_t{0});
  EXPECT_EQ(per_step, questions) << "each step says what its run evaluated";
  std::printf("bisect with {questions}: %d runs, %lld questions evaluated (%.2f full evals), %d partial runs\n",
              j["runs"].get<int>(), static_cast<long long>(questions), j["full_eval_equivalents"].get<double>(), partial);
  EXPECT_EQ(testing_util::WorktreeCount(dir_ / "repo"), 1u);

  // A partial run's status is no evidence of the case's status: no gate judged it (it passes
  // wherever it ran, the culprit included). From the store alone only the nightlies speak.
  auto status = RunHarness({"bisect", "--good", good(), "--bad", shas_.back(), "--case", "gsm8k/test_gsm8k_accuracy_1",
                            "--repo", (dir_ / "repo").string(), "--db", db_, "--max-runs", "0", "--format", "json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const Json s = testing_util::StdoutJson(status);
  EXPECT_EQ(s["steps"].size(), 2u) << "the two nightlies, no partial run: " << status.out;
  EXPECT_NE(std::find(s["range"].begin(), s["range"].end(), Json(culprit())), s["range"].end()) << status.out;
}

// (b) The same history through the openai stack: each step's `harness run` launches
// `harness serve-sim` (the noisy stand-in with the commit's stack.json, so its fault, and a
// noise seed of its own: how many servers were launched before it) and stops it. It names
// the culprit too, and no server outlives it.
TEST_F(BisectQuestionsE2E, ALaunchedServerPerCommitNamesItTooAndLeavesNoServer) {
  const fs::path pids = dir_ / "server.pids";
  const std::string profile = (fs::path(testing_util::kSourceRoot) / "golden/sim/noisy.json").string();
  const Json config = {
      {"format_version", 1},
      {"stack", "openai"},
      {"openai",
       {{"model", "refstack-sim"},
        {"launch",
         {{"command", {"sh", "-c",
                       "echo $$ >> \"$4\"; exec \"$0\" serve-sim --port \"$1\" --profile \"$2\" --stack-config \"$3\" "
                       "--seed $(wc -l < \"$4\")",
                       testing_util::kHarnessBinary, "{port}", profile, "{worktree}/stack.json", pids.string()}},
          {"ready_timeout_s", 60},
          {"stop_timeout_s", 5}}}}}};
  const std::string launch = (dir_ / "launch.json").string();
  testing_util::WriteFile(launch, config.dump(2));
  StoreNightlies(4, {"--stack-config", launch});
  auto r = Bisect("json", {"--", testing_util::kHarnessBinary, "run", "--db", "{db}", "--commit", "{sha}", "--repo", "{worktree}",
                           "--suite", "gsm8k", "--stack-config", launch, "--questions", "{questions}"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], culprit()) << r.out;
  EXPECT_EQ(j["cases"], (Json{"gsm8k/test_gsm8k_accuracy_0"})) << "the case an endpoint runs";
  const int64_t questions = j["questions_evaluated"].get<int64_t>();
  EXPECT_EQ(StoredQuestions().first, questions);
  // Every server the runs launched (the nightlies' and the steps') is gone with its group.
  std::vector<pid_t> servers;
  std::istringstream lines(testing_util::ReadFile(pids));
  for (std::string line; std::getline(lines, line);) servers.push_back(static_cast<pid_t>(std::stol(line)));
  EXPECT_EQ(servers.size(), static_cast<std::size_t>(4 + 2 + j["runs"].get<int>()))
      << "a server per run";
  for (pid_t server : servers) {
    const bool alive = ProcessGroupAlive(server);
    EXPECT_FALSE(alive) << "server " << server << " outlived its run";
    if (alive) kill(-server, SIGKILL);
  }
  std::printf("launched servers: %d runs, %lld questions evaluated (%.2f full evals)\n", j["runs"].get<int>(),
              static_cast<long long>(questions), j["full_eval_equivalents"].get<double>());
  EXPECT_EQ(testing_util::WorktreeCount(dir_ / "repo"), 1u);
}

// (c) The flaky stand-in (flaky.json: about 62 questions differ between two reruns, where
// noisy.json has 23), with eight nightlies before the range: the questions the fault moves
// were borderline before it, and the search still names the culprit, for fewer than 3 whole
// evals' questions (tools/bisect_sweep.sh's nine draws of flaky.json: 9 named, 2.42 full
// evals on average; docs/bisect.md, "On the stand-in"). Read in the text output, as a user
// sees it.
TEST_F(BisectQuestionsE2E, AFlakyQuestionHeavyHistoryStillNamesTheCulprit) {
  const std::string suites = testing_util::WriteGsm8kTableWithProfile(dir_.path(), "sim/flaky.json").string();
  StoreNightlies(8, {"--suites-dir", suites, "--filter", "gsm8k/*_1", "--stack-config", "stack.json"});
  auto r = Bisect("text", QuestionsCommand(suites));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("CULPRIT " + culprit() + " commit 37\n"), std::string::npos) << r.out;
  std::smatch cost;
  ASSERT_TRUE(std::regex_search(r.out, cost, std::regex(R"((\d+) runs, (\d+) questions evaluated \(([0-9.]+) full evals of 1319 questions\))")))
      << r.out;
  const int64_t questions = std::stoll(cost[2]);
  EXPECT_EQ(StoredQuestions().first, questions) << r.out;
  EXPECT_NEAR(std::stod(cost[3]), static_cast<double>(questions) / kWholeEval, 0.005);
  EXPECT_LT(questions, 3 * kWholeEval) << r.out;
  std::printf("flaky history: %s runs, %lld questions evaluated (%s full evals)\n", cost[1].str().c_str(),
              static_cast<long long>(questions), cost[3].str().c_str());
}

// The runs at the ends of the range 0..7, question by question: the first `right_at_good`
// right at the known-good end, the first `right_at_bad` at the known-bad one (by default the
// last 20 questions lost).
void StoreEndsQuestionByQuestion(const TempDir& dir, const std::vector<std::string>& shas, const std::string& db,
                                 int right_at_good = 1220, int right_at_bad = 1200) {
  auto store = std::move(Store::Open(db)).value();
  RunWriter& writer = store->writer();
  for (int k : {0, 7}) {
    const int64_t commit = *writer.UpsertCommit(ReadCommit(dir / "repo", shas[k]).value());
    const int64_t run = *writer.BeginRun({commit, "refstack", "id", "{}", "host", "0.2.0"});
    const int64_t cr = *writer.BeginCase(run, "gsm8k", "gsm8k/test_gsm8k_accuracy_1", "{}");
    const int right = k == 0 ? right_at_good : right_at_bad;
    for (int q = 0; q < kWholeEval; ++q) {
      const SampleOutcome outcome = q < right ? SampleOutcome::kCorrect : SampleOutcome::kWrong;
      ASSERT_TRUE(writer.WriteSample(cr, {std::to_string(q), outcome, "", "", 0, 0, ""}).ok());
    }
    const double accuracy = static_cast<double>(right) / kWholeEval;
    ASSERT_TRUE(writer.FinishCase(cr, {"gsm8k/test_gsm8k_accuracy_1", CaseStatus::kPass, 1, "",
                                       {{"accuracy", accuracy, kWholeEval, {}, {}}}, {}}).ok());
    ASSERT_TRUE(writer.FinishRun(run, RunStatus::kPass).ok());
  }
}

// The {questions} file itself, with the command a script that keeps a copy: an absolute
// path, gone after the step; keys chosen by the search inside the range ('*' nowhere), and
// '*' (every question) in every file with --full-evals. The ends' runs are stored first,
// question by question (the last one loses 20 questions). The command stores nothing, so for
// a metric target it cannot test a commit (docs/bisect.md, "What a step's exit means"): the
// first step (inside the range) is skipped, the known-good end is run to vouch for the
// command (a whole eval), cannot be tested either, and the bisect stops: two files.
TEST(BisectQuestionsFileE2E, KeysChosenByTheSearchOrEveryQuestionWithFullEvals) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 8);
  const std::string db = (dir / "h.db").string();
  ASSERT_NO_FATAL_FAILURE(StoreEndsQuestionByQuestion(dir, shas, db));
  // Each step: the path it was handed, then a copy of the file named by the step's sha; exit
  // 0, storing nothing. Each file's first line names the commit it was written for.
  auto bisect = [&](const std::string& copies, std::vector<std::string> flags) {
    fs::create_directories(dir / copies);
    std::vector<std::string> args = {"bisect", "--good", shas[0], "--bad", shas[7], "--metric", "gsm8k", "--repo",
                                     (dir / "repo").string(), "--db", db, "--max-runs", "3", "--format", "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    const std::vector<std::string> command = {
        "--", "sh", "-c", "echo \"$0\" >> \"$1/paths\"; cp \"$0\" \"$1/q-$2-$$\"", "{questions}",
        (dir / copies).string(), "{sha}"};
    args.insert(args.end(), command.begin(), command.end());
    auto r = RunHarness(args);
    EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
    EXPECT_NE(r.err.find("the command is broken, not the commit"), std::string::npos) << r.err;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir / copies)) {
      if (e.path().filename() == "paths") continue;
      files.push_back(testing_util::ReadFile(e.path()));
      const std::string sha = e.path().filename().string().substr(2, 40);
      const std::string first = files.back().substr(0, files.back().find('\n'));
      EXPECT_EQ(first.substr(first.rfind(" at ") + 4), sha) << "the file of the step at " << sha << ": " << first;
    }
    std::istringstream paths(testing_util::ReadFile(dir / copies / "paths"));
    for (std::string path; std::getline(paths, path);) {
      EXPECT_TRUE(fs::path(path).is_absolute()) << path;
      EXPECT_FALSE(fs::exists(path)) << path << " outlived its step";
    }
    EXPECT_EQ(files.size(), 2u) << r.out;
    return files;
  };
  int chosen = 0;
  for (const std::string& file : bisect("chosen", {})) {
    if (file.find("every question at " + shas[0]) != std::string::npos) {  // the known-good end vouching
      EXPECT_NE(file.find("\n*\n"), std::string::npos) << file;
      continue;
    }
    ++chosen;
    EXPECT_EQ(file.find("\n*\n"), std::string::npos) << file;
    const auto keys = std::count(file.begin(), file.end(), '\n') - 1;  // the first line is a comment
    EXPECT_GE(keys, 20) << "the 20 questions the ends disagree on at least: " << file;
    EXPECT_LT(keys, kWholeEval / 2) << file;
  }
  EXPECT_EQ(chosen, 1) << "the step inside the range had its questions chosen";
  for (const std::string& file : bisect("full", {"--full-evals"}))
    EXPECT_NE(file.find("\n*\n"), std::string::npos) << "--full-evals: every question: " << file;
}

// The headline metric's direction comes from its suite table (gsm8k: accuracy, higher is
// better): a case whose accuracy rose from the known-good end to the known-bad one is no case
// to bisect, though a metric of unknown direction would be searched for the way it moved.
TEST(BisectMetricE2E, AHeadlineThatRoseIsNoCaseWorse) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 8);
  const std::string db = (dir / "h.db").string();
  ASSERT_NO_FATAL_FAILURE(StoreEndsQuestionByQuestion(dir, shas, db, 1200, 1220));
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[7], "--metric", "gsm8k", "--repo",
                       (dir / "repo").string(), "--db", db, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "no-culprit") << r.out;
  EXPECT_EQ(j["cases"], Json::array()) << r.out;
  EXPECT_EQ(j["runs"], 0) << r.out;
  EXPECT_EQ(j["reason"],
            fmt::format("no case of gsm8k is worse at {} than at {}", ShortSha(shas[7]), ShortSha(shas[0])));
}

}  // namespace
}  // namespace harness
