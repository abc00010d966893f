#include "harness/bisect/slurm_step.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <thread>

#include "harness/testing/slurm_cluster.h"
#include "harness/testing/test_util.h"
#include "harness/util/subprocess.h"

namespace harness::bisect {
namespace slurm_step_test {

using testing_util::SlurmCluster;

TEST(SlurmCommand, OnlySrunAndSbatchAreSlurmSteps) {
  EXPECT_EQ(LauncherOf({"srun", "-n1", "x"}), SlurmLauncher::kSrun);
  EXPECT_EQ(LauncherOf({"/usr/bin/sbatch", "--wait", "x"}), SlurmLauncher::kSbatch);
  EXPECT_EQ(LauncherOf({"/opt/srun-wrapper", "x"}), SlurmLauncher::kNone);
  EXPECT_EQ(LauncherOf({}), SlurmLauncher::kNone);
  // Another command is passed through untouched.
  const std::vector<std::string> plain = {"harness", "run", "--job-name=x"};
  EXPECT_EQ(WithSlurmJobName(plain, "n"), plain);
  EXPECT_TRUE(CheckSlurmCommand(plain).ok());
}

TEST(SlurmCommand, TheHarnessNamesTheJobAndRefusesANameOfTheUsers) {
  const auto named = WithSlurmJobName({"srun", "--gres=gpu:1", "harness", "run"}, "harness-bisect-3-s1-abc");
  EXPECT_EQ(named, (std::vector<std::string>{"srun", "--job-name=harness-bisect-3-s1-abc", "--gres=gpu:1", "harness",
                                             "run"}));
  for (const auto& argv : std::vector<std::vector<std::string>>{{"srun", "-J", "mine", "x"},
                                                                {"srun", "-Jmine", "x"},
                                                                // -l takes no value, -p takes gpu
                                                                {"srun", "-l", "-p", "gpu", "-J", "mine", "x"},
                                                                {"srun", "-p", "gpu", "--job-name", "mine", "x"},
                                                                {"sbatch", "--wait", "--job-name=mine", "x"}}) {
    auto s = CheckSlurmCommand(argv);
    ASSERT_FALSE(s.ok()) << argv[1];
    EXPECT_EQ(s.error().code, ExitCode::kUsage);
    EXPECT_NE(s.error().message.find("job name"), std::string::npos) << s.error().message;
  }
  // A -J of the program srun runs is that program's, not srun's.
  EXPECT_TRUE(CheckSlurmCommand({"srun", "-p", "gpu", "--time", "10", "harness", "run", "-J", "x"}).ok());
  EXPECT_TRUE(CheckSlurmCommand({"srun", "--", "tool", "--job-name=x"}).ok());
}

TEST(SlurmCommand, SbatchMustWait) {
  auto s = CheckSlurmCommand({"sbatch", "-p", "gpu", "job.sh"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("--wait"), std::string::npos);
  EXPECT_TRUE(CheckSlurmCommand({"sbatch", "-W", "job.sh"}).ok());
  EXPECT_TRUE(CheckSlurmCommand({"sbatch", "-p", "gpu", "--wait", "job.sh"}).ok());
  // --wait given to the script, not to sbatch, does not count.
  EXPECT_FALSE(CheckSlurmCommand({"sbatch", "job.sh", "--wait"}).ok());
}

TEST(SlurmCommand, JobNamesTellSessionsSlotsAndCommitsApart) {
  const std::string sha = "0123456789abcdef0123456789abcdef01234567";
  EXPECT_EQ(SlurmJobName("12", 0, sha), "harness-bisect-12-" + std::to_string(getpid()) + "-s0-0123456789ab");
  EXPECT_NE(SlurmJobName("12", 0, sha), SlurmJobName("12", 1, sha));
  EXPECT_NE(SlurmJobName("12", 0, sha), SlurmJobName("13", 0, sha));
  EXPECT_NE(SlurmJobName("12", 0, sha), SlurmJobName("confirm", 0, sha));
  EXPECT_NE(SlurmJobName("12", 0, sha), SlurmJobName("12", 0, "1123456789abcdef"));
}

TEST(SlurmCommand, OnlyAJobThatEndedByItselfLetsTheExitCodeCount) {
  EXPECT_TRUE(SlurmUntestableReason("n", {{"7", "COMPLETED", "None", "0:0"}}) == std::nullopt);
  EXPECT_TRUE(SlurmUntestableReason("n", {{"7", "FAILED", "NonZeroExitCode", "1:0"}}) == std::nullopt);
  EXPECT_NE(SlurmUntestableReason("n", {})->find("no Slurm job named n"), std::string::npos);
  // Still completing (whatever ended it): not known, so never the command's exit.
  for (const std::string completing : {"COMPLETING", "COMPLETING+CANCELLED"})
    EXPECT_NE(SlurmUntestableReason("n", {{"7", completing, "None", "0:15"}})
                  .value_or("(the command's)")
                  .find("Slurm job 7 (n) was still COMPLETING: whether the scheduler or the command ended it"),
              std::string::npos)
        << completing;
  EXPECT_NE(SlurmUntestableReason("n", {{"7", "FAILED", "JobLaunchFailure", "0:1"}})->find("FAILED (JobLaunchFailure)"),
            std::string::npos);
  for (const char* state : {"CANCELLED", "CANCELLED+", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
                            "OUT_OF_MEMORY", "PENDING"}) {
    auto why = SlurmUntestableReason("n", {{"7", "COMPLETED", "None", "0:0"}, {"8", state, "x", "0:15"}});
    ASSERT_TRUE(why.has_value()) << state;
    EXPECT_NE(why->find(std::string("job 8 (n) ended ") + state), std::string::npos) << *why;
  }
}

// A tool of the given name and script first on PATH for as long as this lives (a scheduler
// command that fails as a real one does when its controller is down); PATH is restored after.
class FakeToolFirstOnPath {
 public:
  FakeToolFirstOnPath(const std::string& name, const std::string& script)
      : saved_path_(getenv("PATH") ? getenv("PATH") : "") {
    testing_util::WriteFile(bin_ / name, script);
    std::filesystem::permissions(bin_ / name, std::filesystem::perms::owner_all);
    setenv("PATH", (bin_.path().string() + ":" + saved_path_).c_str(), 1);
  }
  ~FakeToolFirstOnPath() { setenv("PATH", saved_path_.c_str(), 1); }
  FakeToolFirstOnPath(const FakeToolFirstOnPath&) = delete;
  FakeToolFirstOnPath& operator=(const FakeToolFirstOnPath&) = delete;

 private:
  testing_util::TempDir bin_;
  std::string saved_path_;
};

// SettledSlurmJobs with `squeue` replaced by the given script, and the seconds it took.
std::pair<Result<std::vector<SlurmJob>>, double> SettledWithSqueue(const std::string& script) {
  FakeToolFirstOnPath squeue("squeue", script);
  const auto start = std::chrono::steady_clock::now();
  auto jobs = SettledSlurmJobs("harness-bisect-9-s0-999999999999", 20);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {std::move(jobs), waited};
}

// A scheduler that cannot be asked once the step ended (its controller down: here a squeue
// that says so and exits 1) is an error naming squeue and its words, returned at once, not
// waited out and not read as a job list.
TEST(SlurmCommand, AControllerThatCannotBeAskedIsAnErrorNotAJobList) {
  auto [jobs, waited] = SettledWithSqueue(
      "#!/bin/sh\necho 'squeue: error: Unable to contact slurm controller (connect failure)' >&2\nexit 1\n");
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(jobs.error().message.find("squeue failed (exit code 1)"), std::string::npos) << jobs.error().message;
  EXPECT_NE(jobs.error().message.find("Unable to contact slurm controller"), std::string::npos) << jobs.error().message;
  EXPECT_LT(waited, 10.0) << "not waited out";
}

// A cancel that scancel refuses (its controller down: a scancel first on PATH that says so
// and exits 1) is an error naming scancel and its words: the caller must learn the job may
// still be queued.
TEST(SlurmCommand, AScancelThatFailsIsAnErrorNamingIt) {
  const Status cancelled = [] {
    FakeToolFirstOnPath scancel("scancel",
                                "#!/bin/sh\necho 'scancel: error: Unable to contact slurm controller' >&2\nexit 1\n");
    return CancelSlurmJobs("harness-bisect-9-s0-999999999999");
  }();
  ASSERT_FALSE(cancelled.ok());
  EXPECT_NE(cancelled.error().message.find("scancel failed (exit code 1)"), std::string::npos)
      << cancelled.error().message;
  EXPECT_NE(cancelled.error().message.find("Unable to contact slurm controller"), std::string::npos)
      << cancelled.error().message;
}

// A step whose jobs are all gone (squeue lists none of the name) has settled: the empty list
// is returned at once, not after the settle wait meant for a job still COMPLETING.
TEST(SlurmCommand, JobsThatAreNotCompletingAreReturnedAtOnce) {
  auto [jobs, waited] = SettledWithSqueue("#!/bin/sh\nexit 0\n");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  EXPECT_TRUE(jobs->empty());
  EXPECT_LT(waited, 10.0) << "nothing is completing: nothing to wait for";
}

// --- against a real one-node cluster ------------------------------------------------------

class SlurmStep : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    cluster_ = SlurmCluster::Start(&why);
    ASSERT_TRUE(cluster_) << why;
  }
  // srun of a shell line with the harness's job name, as a step runs it (argv, no shell of ours).
  static ProcessResult Srun(const std::string& name, const std::vector<std::string>& flags, const std::string& line,
                            double timeout_s = 60) {
    std::vector<std::string> argv = {"srun"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"/bin/sh", "-c", line});
    ProcessOptions o;
    o.timeout_s = timeout_s;
    auto r = RunProcess(WithSlurmJobName(argv, name), o);
    return r.ok() ? *r : ProcessResult{};
  }
  std::unique_ptr<SlurmCluster> cluster_;
};

TEST_F(SlurmStep, AJobThatRanKeepsItsExitCodeAndGetsItsGpu) {
  auto ok = Srun("harness-bisect-1-s0-aaaaaaaaaaaa", {"--gres=gpu:1"}, "echo gpu=$CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(ok.exit_code, 0) << ok.err << cluster_->Logs();
  EXPECT_NE(ok.out.find("gpu=0"), std::string::npos) << ok.out;
  auto bad = Srun("harness-bisect-1-s1-bbbbbbbbbbbb", {}, "exit 3");
  EXPECT_NE(bad.exit_code, 0);

  // Read as a step reads its job: once no longer COMPLETING (under load that outlasts srun).
  auto jobs = SettledSlurmJobs("harness-bisect-1-s0-aaaaaaaaaaaa", 30);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].state, "COMPLETED");
  EXPECT_EQ((*jobs)[0].exit_code, "0:0");
  EXPECT_EQ(SlurmUntestableReason("harness-bisect-1-s0-aaaaaaaaaaaa", *jobs), std::nullopt);

  auto failed = SettledSlurmJobs("harness-bisect-1-s1-bbbbbbbbbbbb", 30);
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(failed->size(), 1u);
  EXPECT_EQ((*failed)[0].state, "FAILED");
  EXPECT_EQ((*failed)[0].exit_code, "3:0");
  EXPECT_EQ(SlurmUntestableReason("x", *failed), std::nullopt) << "the command's own exit 3 is the command's";
  EXPECT_NE((*jobs)[0].id, (*failed)[0].id);
}

TEST_F(SlurmStep, ASubmissionTheSchedulerRefusesIsUntestable) {
  // Three GPUs on a node that has two: srun fails at submission; the job record says why.
  auto r = Srun("harness-bisect-2-s0-cccccccccccc", {"--gres=gpu:3"}, "true");
  EXPECT_NE(r.exit_code, 0);
  auto jobs = SettledSlurmJobs("harness-bisect-2-s0-cccccccccccc", 30);
  ASSERT_TRUE(jobs.ok());
  auto why = SlurmUntestableReason("harness-bisect-2-s0-cccccccccccc", *jobs);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("ended FAILED (BadConstraints)"), std::string::npos) << *why;
}

TEST_F(SlurmStep, CancellingAStepCancelsItsJobAndNoOther) {
  const std::string mine = "harness-bisect-4-s0-dddddddddddd", others = "someone-elses-step";
  // Another job of ours, of another name, must outlive the cancel: it sleeps longer than the
  // test can take and is cancelled at the end, as the step is on any early way out.
  std::thread other([&] { (void)RunProcess({"srun", "--job-name=" + others, "sleep", "120"}, ProcessOptions{}); });
  std::thread step([&] { (void)RunProcess(WithSlurmJobName({"srun", "sleep", "120"}, mine), ProcessOptions{}); });
  const auto running = [&](const std::string& name) {
    auto jobs = FindSlurmJobs(name);
    return jobs.ok() && !jobs->empty() && (*jobs)[0].state == "RUNNING";
  };
  [&] {
    for (int i = 0; i < 300 && !(running(mine) && running(others)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(running(mine)) << cluster_->Logs();
    ASSERT_TRUE(CancelSlurmJobs(mine).ok());
    step.join();  // srun ends when its job is cancelled
    // As a step reads its job (FinishSlurmJob): once it is no longer COMPLETING, which under
    // load outlasts srun by seconds.
    auto jobs = SettledSlurmJobs(mine, 30);
    ASSERT_TRUE(jobs.ok());
    auto why = SlurmUntestableReason(mine, *jobs);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("CANCELLED"), std::string::npos) << *why;
    EXPECT_TRUE(running(others)) << "scancel reached a job it did not name";
  }();
  for (const std::string& name : {mine, others}) EXPECT_TRUE(CancelSlurmJobs(name).ok());
  for (std::thread* t : {&step, &other})
    if (t->joinable()) t->join();
}

TEST_F(SlurmStep, AJobTheQueueNeverStartsIsCancelledAtTheStartTimeout) {
  const std::string name = "harness-bisect-5-s0-eeeeeeeeeeee";
  std::optional<std::string> cancelled;
  ProcessResult r;
  {
    SlurmStartWatch watch(name, 2);
    // --begin an hour from now: the job waits in the queue (Reason=BeginTime) until cancelled.
    r = Srun(name, {"--begin=now+3600"}, "true", 60);
    cancelled = watch.cancelled();
  }
  ASSERT_TRUE(cancelled.has_value()) << "srun: " << r.err;
  EXPECT_NE(cancelled->find("did not start job " + name + " within 2 s"), std::string::npos) << *cancelled;
  EXPECT_NE(cancelled->find("BeginTime"), std::string::npos) << *cancelled;
  for (const auto& line : cluster_->Queue()) EXPECT_EQ(line.find(name), std::string::npos) << "left queued: " << line;
}

TEST_F(SlurmStep, AStartedJobIsNotCancelledByTheStartWatch) {
  const std::string name = "harness-bisect-6-s0-ffffffffffff";
  std::optional<std::string> cancelled;
  ProcessResult r;
  {
    SlurmStartWatch watch(name, 1);
    r = Srun(name, {}, "sleep 4; echo done");
    cancelled = watch.cancelled();
  }
  EXPECT_EQ(cancelled, std::nullopt);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("done"), std::string::npos);
}

}  // namespace slurm_step_test
}  // namespace harness::bisect
