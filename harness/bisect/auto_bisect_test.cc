#include "harness/bisect/auto_bisect.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "harness/store/store.h"
#include "harness/testing/io_fault_vfs.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"
#include "harness/util/file_lock.h"
#include "harness/util/git.h"
#include "harness/util/paths.h"

namespace harness::bisect {
namespace auto_bisect_test {

// RunAutoBisect's checks of its request, at the library (the CLI checks its flags first, so
// this is what any other caller gets): each number just inside its range is taken and just
// outside it refused by the flag's name, before anything runs or is stored. A store with no
// nightly answers a taken request with an error that names no flag.
TEST(AutoBisectRequest, EachNumberIsTakenAtItsEdgesAndRefusedByNameJustOutside) {
  testing_util::TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  const struct {
    const char* flag;
    std::function<void(AutoBisectRequest&)> set;
    bool taken;
  } table[] = {
      {"--max-runs", [](auto& r) { r.max_runs = 0; }, true},
      {"--max-runs", [](auto& r) { r.max_runs = 10000; }, true},
      {"--max-runs", [](auto& r) { r.max_runs = -1; }, false},
      {"--max-runs", [](auto& r) { r.max_runs = 10001; }, false},
      {"--confirm", [](auto& r) { r.confirm = 0; }, true},
      {"--confirm", [](auto& r) { r.confirm = 10; }, true},
      {"--confirm", [](auto& r) { r.confirm = -1; }, false},
      {"--confirm", [](auto& r) { r.confirm = 11; }, false},
      {"--jobs", [](auto& r) { r.jobs = 1; }, true},
      {"--jobs", [](auto& r) { r.jobs = 64; }, true},
      {"--jobs", [](auto& r) { r.jobs = 0; }, false},
      {"--jobs", [](auto& r) { r.jobs = 65; }, false},
      {"--max-culprits", [](auto& r) { r.max_culprits = 1; }, true},
      {"--max-culprits", [](auto& r) { r.max_culprits = 3; }, true},
      {"--max-culprits", [](auto& r) { r.max_culprits = 0; }, false},
      {"--max-culprits", [](auto& r) { r.max_culprits = 4; }, false},
      {"--confidence", [](auto& r) { r.confidence = 0.501; }, true},
      {"--confidence", [](auto& r) { r.confidence = 0.999; }, true},
      {"--confidence", [](auto& r) { r.confidence = 0.5; }, false},
      {"--confidence", [](auto& r) { r.confidence = 1; }, false},
      {"--timeout", [](auto& r) { r.command_timeout_s = 86400; }, true},
      {"--timeout", [](auto& r) { r.command_timeout_s = 0; }, false},
      {"--step-start-timeout", [](auto& r) { r.step_start_timeout_s = 86401; }, false},
      {"--repo", [](auto& r) { r.command = {"make", "-C", "{worktree}"}; }, false},
  };
  for (const auto& row : table) {
    AutoBisectRequest r;
    r.db = dir / "h.db";
    r.command = {"/bin/true", "{sha}"};
    row.set(r);
    auto out = RunAutoBisect(r, **store);
    ASSERT_FALSE(out.ok()) << row.flag << ": an empty store has no nightly to answer";
    const std::string& message = out.error().message;
    if (row.taken) {
      EXPECT_EQ(message.find(row.flag), std::string::npos) << row.flag << " was refused: " << message;
      continue;
    }
    EXPECT_EQ(out.error().code, ExitCode::kUsage) << message;
    EXPECT_NE(message.find(row.flag), std::string::npos) << row.flag << ": " << message;
  }
  AutoBisectRequest no_command;
  no_command.db = dir / "h.db";
  auto out = RunAutoBisect(no_command, **store);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ExitCode::kUsage);
  EXPECT_NE(out.error().message.find("needs the command"), std::string::npos) << out.error().message;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    const std::string name = e.path().filename();
    EXPECT_TRUE(name == "h.db" || name == "h.db-wal" || name == "h.db-shm") << "no lock file: " << name;
  }
}

// One nightly per status, each of its own commit, each with two cases of two suites that
// have that status.
void StoreNightlies(const std::filesystem::path& repo, const std::filesystem::path& db,
                    const std::vector<CaseStatus>& nights) {
  const auto shas = testing_util::MakeGitRepo(repo, static_cast<int>(nights.size()));
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto& w = (*store)->writer();
  for (std::size_t i = 0; i < nights.size(); ++i) {
    const int64_t commit = *w.UpsertCommit(ReadCommit(repo, shas[i]).value());
    const int64_t run = *w.BeginRun({commit, "refstack", "A", "{}", "host", "0.2.0", "0/1", "n" + std::to_string(i)});
    for (const std::string id : {"selftest/test_outcome_0", "sequence_parallel/test_sp_0"}) {
      const int64_t c = *w.BeginCase(run, id.substr(0, id.find('/')), id, "{}");
      ASSERT_TRUE(w.FinishCase(c, {id, nights[i], 0, "", {}, {}}).ok());
    }
    ASSERT_TRUE(w.FinishRun(run, nights[i] == CaseStatus::kPass ? RunStatus::kPass : RunStatus::kFail).ok());
  }
}

// Two nightlies of two commits, the second failing two cases of two suites that passed the
// night before: two regressions to store.
void StoreTwoNightlies(const std::filesystem::path& repo, const std::filesystem::path& db) {
  StoreNightlies(repo, db, {CaseStatus::kPass, CaseStatus::kFail});
}

// A request that stores what the nightlies say and runs no command (--confirm 0, --max-runs 0).
AutoBisectRequest RunsNothing(const std::filesystem::path& repo, const std::filesystem::path& db) {
  AutoBisectRequest r;
  r.repo = repo;
  r.db = db;
  r.suites_dir = SuitesDir();
  r.command = {"/bin/true", "{sha}"};
  r.confirm = 0;
  r.max_runs = 0;
  return r;
}

// The same with confirming reruns: `confirm` of `command`, within `max_runs` commands.
AutoBisectRequest Reruns(const std::filesystem::path& dir, int confirm, int max_runs,
                         std::vector<std::string> command) {
  AutoBisectRequest r = RunsNothing(dir / "repo", dir / "h.db");
  r.confirm = confirm;
  r.max_runs = max_runs;
  r.command = std::move(command);
  return r;
}

// bisect --auto's answer through a store opened for it; none (and the test fails) on an
// error or an exception.
std::optional<AutoBisectOutcome> Answer(const AutoBisectRequest& r) {
  auto store = Store::Open(r.db);
  EXPECT_TRUE(store.ok()) << store.error().message;
  if (!store.ok()) return std::nullopt;
  std::optional<Result<AutoBisectOutcome>> out;
  EXPECT_NO_THROW(out.emplace(RunAutoBisect(r, **store)));
  if (!out) return std::nullopt;
  EXPECT_TRUE(out->ok()) << out->error().message;
  if (!out->ok()) return std::nullopt;
  return std::move(**out);
}

void ExpectTheSameRegressions(const AutoBisectOutcome& got, const AutoBisectOutcome& clean) {
  ASSERT_EQ(got.regressions.size(), clean.regressions.size());
  for (std::size_t i = 0; i < clean.regressions.size(); ++i) {
    const AutoRegression &g = got.regressions[i], &want = clean.regressions[i];
    EXPECT_EQ(g.target.CaseIds(), want.target.CaseIds()) << i;
    EXPECT_EQ(g.regression_id, want.regression_id) << i;
    EXPECT_EQ(g.confirmation, want.confirmation) << i;
    EXPECT_EQ(g.bisect.has_value(), want.bisect.has_value()) << i;
  }
}

// bisect --auto of that night through a database that fails to read or lock at any point,
// for good or once (its two regressions stored, no command run: --confirm 0, --max-runs 0):
// each outcome is the clean one or an error naming the database, never a throw, another
// answer or fewer regressions.
TEST(AutoBisectStore, AFaultAnywhereIsAnErrorNamingTheDatabaseOrTheCleanAnswer) {
  testing_util::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(StoreTwoNightlies(dir / "repo", dir / "h.db"));
  const auto request = [&](const std::filesystem::path& db) { return RunsNothing(dir / "repo", db); };
  AutoBisectOutcome clean;
  {
    const auto db = testing_util::FreshFaultedCopy(dir.path());  // no fault yet: the clean answer
    auto store = Store::Open(db);
    ASSERT_TRUE(store.ok());
    auto out = RunAutoBisect(request(db), **store);
    ASSERT_TRUE(out.ok()) << out.error().message;
    clean = *out;
  }
  ASSERT_EQ(clean.regressions.size(), 2u);
  for (const AutoRegression& g : clean.regressions) {
    EXPECT_EQ(g.confirmation, Confirmation::kNotTried) << "--confirm 0: no rerun confirmed it";
    EXPECT_TRUE(g.bisect.has_value()) << "--confirm 0: bisected all the same";
  }
  testing_util::IoFaultVfs vfs("faulted.db");
  int errors = 0;
  for (bool once : {false, true})
    for (int64_t budget = 0;; ++budget) {
      ASSERT_LT(budget, 5000) << "kept reading";
      SCOPED_TRACE(fmt::format("{} after {}", once ? "one fault" : "faults", budget));
      const auto db = testing_util::FreshFaultedCopy(dir.path());
      once ? vfs.FailOnceAfter(budget) : vfs.FailAfter(budget);
      auto store = Store::Open(db);
      if (!store) {
        vfs.Off();
        EXPECT_NE(store.error().message.find(db.string()), std::string::npos) << store.error().message;
        continue;
      }
      std::optional<Result<AutoBisectOutcome>> out;
      EXPECT_NO_THROW(out.emplace(RunAutoBisect(request(db), **store)));
      const int64_t refused = vfs.refused();
      vfs.Off();
      if (!out) continue;
      if (!out->ok()) {
        ++errors;
        EXPECT_GT(refused, 0) << "an error with no fault behind it: " << out->error().message;
        EXPECT_EQ(out->error().code, ExitCode::kInfra) << out->error().message;
        EXPECT_NE(out->error().message.find("faulted.db"), std::string::npos) << out->error().message;
        continue;
      }
      ExpectTheSameRegressions(**out, clean);
      if (refused == 0) break;
    }
  EXPECT_GT(errors, 10) << "the sweep reached few of the store's operations";
}

// A nightly another bisect --auto holds: the error names the holder as its lock file says,
// read up to 4 KiB and no further (the file is the other process's, or a stray one): a text
// of 4096 bytes is named whole, one byte more and it is "another process". Spaces and line
// ends after the text are not part of it (spaces before it are, and end nothing).
TEST(AutoBisectLock, AHeldNightlyNamesItsHolderFromAtMostFourKiBOfTheLockFile) {
  testing_util::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(StoreTwoNightlies(dir / "repo", dir / "nights.db"));
  auto store = Store::Open(dir / "nights.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  const std::filesystem::path path = dir / "nights.db.auto-bisect-2.lock";  // the second nightly's run
  auto held = FileLock::Acquire(path, FileLock::Wait::kNo);
  ASSERT_TRUE(held.ok() && *held);
  for (const std::size_t size : {std::size_t{4096}, std::size_t{4097}}) {
    const std::string holder = "process 4242 on <node-7> " + std::string(size - 25, 'x');
    ASSERT_EQ(holder.size(), size);
    testing_util::WriteFile(path, holder);
    auto out = RunAutoBisect(RunsNothing(dir / "repo", dir / "nights.db"), **store);
    ASSERT_FALSE(out.ok()) << size;
    EXPECT_EQ(out.error().code, ExitCode::kInfra) << size;
    const std::string& message = out.error().message;
    EXPECT_NE(message.find("already running in " + (size <= 4096 ? holder : "another process")), std::string::npos)
        << size << ": " << message.substr(0, 200);
  }
  testing_util::WriteFile(path, " process 4242 on <node-7> \n \n");
  auto out = RunAutoBisect(RunsNothing(dir / "repo", dir / "nights.db"), **store);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("already running in  process 4242 on <node-7> (it holds"), std::string::npos)
      << out.error().message;
  EXPECT_TRUE(std::filesystem::exists(path)) << "the holder's lock file is left alone";
}

// A night with nothing to regress from (the first of its identity, even failing) or nothing
// that regressed (two passing nights) runs no command at all: no confirming rerun, no bisect.
TEST(AutoBisectOutcome, ANightWithNoRegressionRunsNothing) {
  for (const auto& nights :
       {std::vector<CaseStatus>{CaseStatus::kFail}, std::vector<CaseStatus>{CaseStatus::kPass, CaseStatus::kPass}}) {
    SCOPED_TRACE(nights.size());
    testing_util::TempDir dir;
    ASSERT_NO_FATAL_FAILURE(StoreNightlies(dir / "repo", dir / "h.db", nights));
    const std::string ran = (dir / "ran").string();
    auto out = Answer(Reruns(dir.path(), 2, 10, {"/bin/sh", "-c", "echo \"$1\" >> \"$0\"", ran, "{sha}"}));
    ASSERT_TRUE(out);
    EXPECT_EQ(out->previous.has_value(), nights.size() == 2);
    EXPECT_TRUE(out->regressions.empty());
    EXPECT_TRUE(out->confirming.empty());
    EXPECT_EQ(out->runs_total, 0);
    EXPECT_FALSE(std::filesystem::exists(ran)) << "the command ran: " << testing_util::ReadFile(ran);
  }
}

// A confirming rerun that stores no result of a status regression answers by its exit code
// (git bisect's convention): 1 reproduces it, 0 does not, 125 could not test it (said why).
// Its environment says it is a confirming rerun ($HARNESS_BISECT, which `harness run` records
// so that no such run is taken for a nightly).
TEST(AutoBisectOutcome, ARerunThatStoresNothingConfirmsAStatusRegressionByItsExitCode) {
  const struct {
    int exit_code;
    Confirmation want;
    bool untestable;
  } table[] = {{1, Confirmation::kConfirmed, false},
               {0, Confirmation::kNotConfirmed, false},
               {125, Confirmation::kNotConfirmed, true}};
  for (const auto& row : table) {
    SCOPED_TRACE(row.exit_code);
    testing_util::TempDir dir;
    ASSERT_NO_FATAL_FAILURE(StoreTwoNightlies(dir / "repo", dir / "h.db"));
    const std::string made_for = (dir / "made_for").string();
    auto out =
        Answer(Reruns(dir.path(), 1, 1,
                      {"/bin/sh", "-c", fmt::format("printf %s \"$HARNESS_BISECT\" > \"$0\"; exit {}", row.exit_code),
                       made_for, "{sha}"}));
    ASSERT_TRUE(out);
    EXPECT_EQ(testing_util::ReadFile(made_for), "confirm");
    ASSERT_EQ(out->confirming.size(), 1u);
    EXPECT_EQ(out->confirming[0].exit_code, row.exit_code);
    ASSERT_EQ(out->regressions.size(), 2u);
    for (const AutoRegression& g : out->regressions) {
      EXPECT_EQ(g.confirmation, row.want) << Word(g.confirmation);
      EXPECT_EQ(g.untestable.empty(), !row.untestable) << g.untestable;
      if (row.untestable) {
        EXPECT_NE(g.untestable.find("125"), std::string::npos) << g.untestable;
      }
      EXPECT_EQ(g.bisect.has_value(), row.want == Confirmation::kConfirmed) << "only a confirmed one is bisected";
    }
  }
}

// A stored answer's untestable reason is read from its confirming reruns' list as written;
// a hand-edited store whose confirm_json is an object of objects shows none, whatever they hold.
TEST(AutoBisectOutcome, AStoredRerunsUntestableReasonIsReadFromItsListAlone) {
  testing_util::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(StoreTwoNightlies(dir / "repo", dir / "h.db"));
  const AutoBisectRequest r = Reruns(dir.path(), 1, 1, {"/bin/sh", "-c", "exit 125", "{sha}"});
  auto answer = [&] {
    std::vector<std::string> reasons;
    if (auto out = Answer(r))
      for (const AutoRegression& g : out->regressions) reasons.push_back(g.untestable);
    return reasons;
  };
  const auto first = answer();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_NE(first[0].find("125"), std::string::npos) << first[0];
  EXPECT_EQ(answer(), first) << "stored as it was answered";
  testing_util::ExecSql(dir / "h.db", R"(UPDATE regressions SET confirm_json = '{"a": {"untestable": "edited"}}')");
  EXPECT_EQ(answer(), (std::vector<std::string>{"", ""}));
}

// A budget that runs out before every confirming rerun confirms nothing, whatever the reruns
// that ran showed: two asked, one allowed, and it reproduced both regressions.
TEST(AutoBisectOutcome, ConfirmingRerunsCutShortByTheBudgetConfirmNothing) {
  testing_util::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(StoreTwoNightlies(dir / "repo", dir / "h.db"));
  auto out = Answer(Reruns(dir.path(), 2, 1, {"/bin/sh", "-c", "exit 1", "{sha}"}));
  ASSERT_TRUE(out);
  ASSERT_EQ(out->confirming.size(), 1u);
  EXPECT_EQ(out->confirming[0].reproduced, (std::vector<std::optional<bool>>{true, true}));
  ASSERT_EQ(out->regressions.size(), 2u);
  for (const AutoRegression& g : out->regressions) {
    EXPECT_EQ(g.confirmation, Confirmation::kNotTried) << Word(g.confirmation);
    EXPECT_FALSE(g.bisect.has_value());
  }
}

// A stored bisection's reason is read only as text: a hand-edited result of another shape
// (a number, a list, no reason at all) shows none, never an exception or another answer.
TEST(AutoBisectOutcome, AStoredBisectionsReasonIsReadOnlyAsText) {
  testing_util::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(StoreTwoNightlies(dir / "repo", dir / "h.db"));
  const AutoBisectRequest r = RunsNothing(dir / "repo", dir / "h.db");
  auto reasons = [&](bool stored) {
    std::vector<std::string> out;
    auto answer = Answer(r);
    if (!answer) return out;
    EXPECT_EQ(answer->stored, stored);
    for (const AutoRegression& g : answer->regressions) out.push_back(g.bisect ? g.bisect->reason : "no bisect");
    return out;
  };
  const auto first = reasons(false);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(reasons(true), first);
  testing_util::ExecSql(dir / "h.db", R"(UPDATE bisect_sessions SET result_json = '{"reason": "<why>"}')");
  EXPECT_EQ(reasons(true), (std::vector<std::string>{"<why>", "<why>"}));
  for (const std::string edited : {R"({"reason": 5})", "[]", R"({"range": []})"}) {
    SCOPED_TRACE(edited);
    testing_util::ExecSql(dir / "h.db", "UPDATE bisect_sessions SET result_json = '" + edited + "'");
    EXPECT_EQ(reasons(true), (std::vector<std::string>{"", ""}));
  }
}

// A stored answer is the nightly's own: with two nights answered (each failing after a
// passing one), the newer's stored answer holds its two regressions and none of the older's.
TEST(AutoBisectOutcome, AStoredAnswerHoldsItsOwnNightlysRegressionsAlone) {
  testing_util::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(StoreNightlies(dir / "repo", dir / "h.db",
                                         {CaseStatus::kPass, CaseStatus::kFail, CaseStatus::kPass, CaseStatus::kFail}));
  auto ids = [&](std::optional<int64_t> run_id, bool stored) {
    AutoBisectRequest r = RunsNothing(dir / "repo", dir / "h.db");
    r.run_id = run_id;
    std::vector<int64_t> out;
    auto answer = Answer(r);
    if (!answer) return out;
    EXPECT_EQ(answer->stored, stored);
    for (const AutoRegression& g : answer->regressions) out.push_back(g.regression_id);
    return out;
  };
  const auto older = ids(2, false);
  const auto newer = ids(std::nullopt, false);
  ASSERT_EQ(older.size(), 2u);
  ASSERT_EQ(newer.size(), 2u);
  EXPECT_NE(older, newer);
  EXPECT_EQ(ids(std::nullopt, true), newer);
  EXPECT_EQ(ids(2, true), older);
}

}  // namespace auto_bisect_test
}  // namespace harness::bisect
