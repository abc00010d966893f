// harness bisect with steps that go through a real one-node Slurm cluster
// (harness/testing/slurm_cluster.h): each step is a job the harness names, a job the
// scheduler cancels or never starts is an untestable step (never a verdict), and nothing
// is left queued. Through the real binary on tiny git repositories.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <sstream>

#include "harness/testing/slurm_cluster.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
namespace slurm_bisect_e2e {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SlurmCluster;
using testing_util::TempDir;
using testing_util::WriteFile;

class SlurmBisectE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    cluster_ = SlurmCluster::Start(&why);
    ASSERT_TRUE(cluster_) << why;
  }

  // A repository whose commit i (1-based) has test.sh = script(i): the status of case x/y_0
  // in git bisect run's codes. The nightlies at the ends are stored: x/y_0 passes at the
  // first commit and fails at the last.
  void MakeHistory(int n, const std::function<std::string(int)>& script) {
    shas_ = testing_util::MakeGitRepo(dir_ / "repo", n, [&](int i) {
      return std::map<std::string, std::string>{{"test.sh", script(i)}};
    });
    for (auto [pass, sha] : {std::pair{true, shas_.front()}, {false, shas_.back()}}) {
      WriteFile(dir_ / "end.xml",
                std::string(R"(<?xml version="1.0"?><testsuites><testsuite name="x" tests="1"><testcase name="y_0">)") +
                    (pass ? "" : R"(<failure message="broken">broken</failure>)") + "</testcase></testsuite></testsuites>\n");
      auto r = RunHarness({"ingest", "--format", "junit", (dir_ / "end.xml").string(), "--case", "x/y_0", "--commit",
                           sha, "--repo", Repo(), "--db", Db()});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  ProcessResult Bisect(const std::vector<std::string>& srun_flags, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"bisect", "--good", shas_.front(), "--bad", shas_.back(), "--case", "x/y_0",
                                     "--repo", Repo(), "--db", Db(), "--format", "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "srun"});
    args.insert(args.end(), srun_flags.begin(), srun_flags.end());
    args.insert(args.end(), {"sh", "{worktree}/test.sh"});
    return RunHarness(args, ProcessOptions{.timeout_s = 240});
  }

  // The job names the steps wrote into the log, one line each.
  std::vector<std::string> LoggedJobs() const {
    std::vector<std::string> names;
    std::istringstream in(fs::exists(Log()) ? ReadFile(Log()) : "");
    for (std::string line; std::getline(in, line);) names.push_back(line);
    return names;
  }

  std::string Repo() const { return (dir_ / "repo").string(); }
  std::string Db() const { return (dir_ / "h.db").string(); }
  std::string Log() const { return (dir_ / "jobs.log").string(); }
  // A step script's first line: records the job it runs in.
  std::string Record() const { return fmt::format("echo \"$SLURM_JOB_NAME\" >> '{}'\n", Log()); }

  TempDir dir_;
  std::vector<std::string> shas_;
  std::unique_ptr<SlurmCluster> cluster_;
};

TEST_F(SlurmBisectE2E, EachStepIsAJobOfItsOwnAndTheCulpritIsRight) {
  MakeHistory(12, [&](int i) { return Record() + (i >= 8 ? "exit 1\n" : "exit 0\n"); });
  auto r = Bisect({"--partition=harness", "--gres=gpu:1"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out << cluster_->Logs();
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], shas_[7]) << r.out;
  std::vector<std::string> stepped;
  for (const auto& step : j["steps"])
    if (step["source"] == "command") stepped.push_back(step["commit"].get<std::string>());
  const auto jobs = LoggedJobs();
  ASSERT_EQ(jobs.size(), stepped.size()) << "every command step ran as one job";
  for (std::size_t s = 0; s < jobs.size(); ++s) {
    EXPECT_EQ(jobs[s].rfind("harness-bisect-", 0), 0u) << jobs[s];
    EXPECT_NE(jobs[s].find("-s0-" + stepped[s].substr(0, 12)), std::string::npos) << jobs[s] << " at " << stepped[s];
  }
  EXPECT_TRUE(cluster_->Queue().empty());
}

// --jobs 2: two steps are two Slurm jobs at once, each named with its slot (-s0-, -s1-),
// each asked about and cancelled by its own name; the culprit is right and nothing is left
// queued. Each job writes "start|end NAME NANOSECONDS" to the log from inside the job.
TEST_F(SlurmBisectE2E, TwoStepsSideBySideAreTwoJobsAtOnceEachNamedWithItsSlot) {
  const std::string mark = fmt::format("echo \"$1 $SLURM_JOB_NAME $(date +%s%N)\" >> '{}'\n", Log());
  MakeHistory(16, [&](int i) {
    return "set -- start\n" + mark + "sleep 1\nset -- end\n" + mark + (i >= 11 ? "exit 1\n" : "exit 0\n");
  });
  auto r = Bisect({"--partition=harness", "--gres=gpu:1"}, {"--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out << cluster_->Logs();
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["culprit"], shas_[10]) << r.out;
  // One job per step: its name (a step rerun at a commit in the same slot has the same name,
  // one after the other), its start and its end.
  struct Job {
    std::string name;
    int64_t start = 0, end = 0;
  };
  std::vector<Job> jobs;
  for (const auto& line : LoggedJobs()) {
    std::istringstream words(line);
    std::string what, name;
    int64_t ns = 0;
    ASSERT_TRUE(words >> what >> name >> ns) << line;
    if (what == "start") jobs.push_back(Job{name, ns, 0});
    for (auto& job : jobs)
      if (what == "end" && job.name == name && job.end == 0) job.end = ns;
  }
  EXPECT_EQ(jobs.size(), j["runs"].get<size_t>()) << "every command step ran as one job";
  int in_slot[2] = {0, 0}, overlapping = 0;
  for (std::size_t a = 0; a < jobs.size(); ++a) {
    EXPECT_EQ(jobs[a].name.rfind("harness-bisect-", 0), 0u) << jobs[a].name;
    EXPECT_GT(jobs[a].end, 0) << jobs[a].name << " did not end";
    for (int slot : {0, 1})
      if (jobs[a].name.find(fmt::format("-s{}-", slot)) != std::string::npos) ++in_slot[slot];
    for (std::size_t b = a + 1; b < jobs.size(); ++b)
      if (jobs[a].start < jobs[b].end && jobs[b].start < jobs[a].end) ++overlapping;
  }
  EXPECT_GT(in_slot[0], 0);
  EXPECT_GT(in_slot[1], 0);
  EXPECT_GT(overlapping, 0) << "no two jobs ran at once";
  EXPECT_TRUE(cluster_->Queue().empty());
}

// The step's own job is cancelled (as an administrator or a preemption would) at commits 5
// to 8, the middle of the range, where the search looks first: srun's exit says nothing of the commit, the steps are skipped with the job's state
// as the reason, and the culprit is still found.
TEST_F(SlurmBisectE2E, AJobTheSchedulerCancelsIsAnUntestableStepNeverAVerdict) {
  MakeHistory(12, [&](int i) {
    if (i >= 5 && i <= 8) return Record() + "scancel \"$SLURM_JOB_ID\"\nsleep 30\nexit 0\n";
    return Record() + (i >= 10 ? "exit 1\n" : "exit 0\n");
  });
  auto r = Bisect({"--partition=harness"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out << cluster_->Logs();
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], shas_[9]) << r.out;
  int cancelled = 0;
  for (const auto& step : j["steps"]) {
    if (step["source"] != "command" || !step["evidence"].contains("untestable")) continue;
    ++cancelled;
    EXPECT_EQ(step["verdict"], "skip") << step;
    // The job's state once settled; on a loaded machine its cleanup can outlast the settle
    // wait (kSlurmSettleSeconds), and then the reason says it was still COMPLETING: untestable
    // either way, never the command's exit 0 (SlurmStep.CancellingAStepCancelsItsJobAndNoOther
    // reads a cancelled job's settled state on its own).
    const std::string why = step["evidence"]["untestable"].get<std::string>();
    EXPECT_TRUE(why.find("ended CANCELLED") != std::string::npos || why.find("was still COMPLETING") != std::string::npos)
        << step;
  }
  EXPECT_GT(cancelled, 0) << "the search never met a cancelled job: " << r.out;
  EXPECT_TRUE(cluster_->Queue().empty());
}

// A queue that never starts the job (here: --begin an hour away) ends at
// --step-start-timeout; at an end of the range that stops the bisect (exit 3) naming why, and
// no job is left queued.
TEST_F(SlurmBisectE2E, AJobTheQueueNeverStartsEndsAtTheStepStartTimeout) {
  MakeHistory(6, [&](int i) { return Record() + (i >= 4 ? "exit 1\n" : "exit 0\n"); });
  auto r = Bisect({"--begin=now+3600"}, {"--step-start-timeout", "3"});
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_NE(r.err.find("could not test"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did not start job harness-bisect-"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("within 3 s (BeginTime)"), std::string::npos) << r.err;
  EXPECT_TRUE(LoggedJobs().empty()) << "no step ran";
  EXPECT_TRUE(cluster_->Queue().empty()) << cluster_->Queue().front();
}

TEST_F(SlurmBisectE2E, ACommandTheHarnessCannotFollowIsRefusedBeforeAnyJob) {
  MakeHistory(4, [&](int i) { return Record() + (i >= 3 ? "exit 1\n" : "exit 0\n"); });
  for (const auto& flags : std::vector<std::vector<std::string>>{{"-J", "mine"}, {"--job-name=mine"}}) {
    auto r = Bisect(flags);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("leave the job name out"), std::string::npos) << r.err;
  }
  std::vector<std::string> args = {"bisect", "--good", shas_.front(), "--bad", shas_.back(), "--case", "x/y_0", "--repo",
                                   Repo(), "--db", Db(), "--", "sbatch", "{worktree}/test.sh"};
  auto sbatch = RunHarness(args);
  EXPECT_EQ(sbatch.exit_code, 2) << sbatch.err;
  EXPECT_NE(sbatch.err.find("sbatch needs --wait"), std::string::npos) << sbatch.err;
  for (const char* bad : {"0", "-1", "nan", "1e300", "x"}) {
    auto r = Bisect({}, {"--step-start-timeout", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--step-start-timeout"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(LoggedJobs().empty());
  EXPECT_TRUE(cluster_->Queue().empty());
}

}  // namespace slurm_bisect_e2e
}  // namespace harness
