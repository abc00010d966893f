#include "harness/bisect/worktree_command.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/session_lock.h"
#include "harness/testing/test_util.h"

namespace harness::bisect {
namespace worktree_command_test {

const std::vector<std::string> kPlain = {"/bin/true", "{sha}"};

// What the check said of one request: "" when it was taken, else the usage error's text.
std::string Refusal(const std::vector<std::string>& command, const std::filesystem::path& repo,
                    std::optional<double> timeout_s, std::optional<double> step_start_timeout_s) {
  auto c = CheckStepCommand(command, repo, timeout_s, step_start_timeout_s);
  if (c) return "";
  EXPECT_EQ(c.error().code, ExitCode::kUsage) << c.error().message;
  return c.error().message.empty() ? "(empty message)" : c.error().message;
}

// Each timeout is taken over (0, a day] and refused, by its flag's name, at either side of
// it, and for nan and infinity; no timeout at all is taken. Both flags alike: bisect and
// bisect --auto share this check, and a bound turned round once refused every --timeout.
TEST(StepCommand, EachTimeoutIsTakenInsideItsRangeAndRefusedByNameOutsideIt) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Refusal(kPlain, "", std::nullopt, std::nullopt), "");
  for (double taken : {1e-3, 1.0, 300.0, 86400.0}) {
    EXPECT_EQ(Refusal(kPlain, "", taken, std::nullopt), "") << taken;
    EXPECT_EQ(Refusal(kPlain, "", std::nullopt, taken), "") << taken;
    EXPECT_EQ(Refusal(kPlain, "", taken, taken), "") << taken;
  }
  for (double refused : {0.0, -1.0, 86400.5, 86401.0, nan, inf, -inf}) {
    const std::string timeout = Refusal(kPlain, "", refused, 5.0);
    EXPECT_NE(timeout.find("--timeout"), std::string::npos) << refused << ": " << timeout;
    EXPECT_EQ(timeout.find("--step-start-timeout"), std::string::npos) << timeout;
    const std::string start = Refusal(kPlain, "", 5.0, refused);
    EXPECT_NE(start.find("--step-start-timeout"), std::string::npos) << refused << ": " << start;
  }
}

// {worktree} anywhere inside an argument needs a repository to make the worktree in; every
// other placeholder runs without one.
TEST(StepCommand, AWorktreePlaceholderNeedsARepositoryAndNoOtherDoes) {
  EXPECT_EQ(Refusal({"make", "-C", "{worktree}"}, "", std::nullopt, std::nullopt),
            "{worktree} in the command needs --repo");
  EXPECT_NE(Refusal({"run", "--dir={worktree}/build"}, "", std::nullopt, std::nullopt), "");
  EXPECT_EQ(Refusal({"make", "-C", "{worktree}"}, "/abs/repo", std::nullopt, std::nullopt), "");
  EXPECT_EQ(Refusal({"run", "{sha}", "{db}", "{questions}", "{slot}", "{worktre}"}, "", std::nullopt, std::nullopt),
            "");
}

// Each placeholder is replaced wherever it stands inside an argument, as often as it stands
// there; what a value holds is not read again (a commit's worktree path with "{sha}" in it
// stays as it is); every other character, an unknown placeholder and an empty argument are
// kept as they are.
TEST(StepCommand, EachPlaceholderIsReplacedInsideArgumentsAndNothingElse) {
  const std::map<std::string, std::string> vars = {
      {"{sha}", "abc123"}, {"{worktree}", "/wt/{sha}"}, {"{db}", "/d b/h.db"}, {"{slot}", "1"}};
  const std::vector<std::string> command = {"run", "--db={db}", "{sha}{sha}", "-C", "{worktree}", "x{slot}y",
                                            "{unknown}", "{sha", "", "{"};
  const std::vector<std::string> want = {"run", "--db=/d b/h.db", "abc123abc123", "-C", "/wt/{sha}", "x1y",
                                         "{unknown}", "{sha", "", "{"};
  EXPECT_EQ(SubstituteCommand(command, vars), want);
}

// The Slurm check is part of it: a job name of the user's own, or sbatch without --wait, is
// refused before any step; srun and sbatch --wait are taken.
TEST(StepCommand, ASlurmCommandTheHarnessCannotFollowIsRefused) {
  EXPECT_NE(Refusal({"srun", "-J", "mine", "run"}, "", std::nullopt, std::nullopt).find("job name"),
            std::string::npos);
  EXPECT_NE(Refusal({"sbatch", "run.sh"}, "", std::nullopt, std::nullopt).find("--wait"), std::string::npos);
  EXPECT_EQ(Refusal({"srun", "--gres=gpu:1", "run", "{sha}"}, "", 60.0, 30.0), "");
  EXPECT_EQ(Refusal({"sbatch", "--wait", "run.sh"}, "", std::nullopt, std::nullopt), "");
}

// A worktree git cannot make (a commit the repository does not have) is an error giving
// git's reason, before the command runs (not the command's missing working directory): the
// command never runs and no worktree is left registered.
TEST(StepCommand, AWorktreeGitCannotMakeIsAnErrorAndTheCommandNeverRuns) {
  testing_util::TempDir dir;
  testing_util::MakeGitRepo(dir / "repo", 1);
  const std::filesystem::path repo = std::filesystem::canonical(dir / "repo");
  auto lock = SessionLock::Create(dir / "h.db");
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  const std::filesystem::path ran = dir / "ran";
  WorktreeCommandSpec spec{{"/bin/sh", "-c", "touch \"$0\"", ran.string()}, repo, dir / "h.db", 60.0, "test"};
  const std::string missing(40, 'a');
  auto proc = RunCommandAt(spec, missing, **lock);
  ASSERT_FALSE(proc.ok()) << "a step without its worktree ran";
  EXPECT_NE(proc.error().message.find("git worktree: "), std::string::npos) << "git's reason: " << proc.error().message;
  EXPECT_NE(proc.error().message.find(missing), std::string::npos) << proc.error().message;
  EXPECT_FALSE(std::filesystem::exists(ran)) << proc.error().message;
  EXPECT_EQ(testing_util::WorktreeCount(repo), 1u);
}

}  // namespace worktree_command_test
}  // namespace harness::bisect
