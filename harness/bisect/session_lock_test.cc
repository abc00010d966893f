#include "harness/bisect/session_lock.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/store/bisect_evidence.h"
#include "harness/store/store.h"
#include "harness/testing/in_a_child.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness::bisect {
namespace session_lock_test {

namespace fs = std::filesystem;
using testing_util::TempDir;
using testing_util::WriteFile;

std::string StatusOf(Store& store, int64_t id) {
  auto s = store.bisect_record().BisectSession(id);
  return s.ok() ? s->status : "";
}

// Three sessions marked running: one whose lock this process holds, one whose lock file
// nobody holds (its process died, leaving a worktree it made), one with no lock at all.
// Only the live one stays running; the dead one's worktree is removed, and each ended one
// says why.
TEST(SessionLock, ADeadSessionIsCleanedUpAndALiveOneLeftAlone) {
  TempDir dir;
  const fs::path db = dir / "h.db";
  auto store = std::move(Store::Open(db)).value();
  const auto shas = testing_util::MakeGitRepo(dir / "repo", 1);
  const fs::path repo = fs::canonical(dir / "repo");
  const BisectSessionRow row{.good = "a", .bad = "b", .target = "t",
                             .args_json = ToJson(BisectSessionHeader{.good = "a", .bad = "b", .repo = repo.string()})
                                              .dump()};

  auto live = SessionLock::Create(db);
  ASSERT_TRUE(live.ok()) << live.error().message;
  auto live_id = (*live)->Begin(store->bisect_record(), row);
  ASSERT_TRUE(live_id.ok());
  EXPECT_TRUE(fs::exists(dir / ("h.db.bisect-" + std::to_string(*live_id) + ".lock")));

  const int64_t dead_id = *store->bisect_record().BeginBisect(row);
  auto folder = MakeWorktreeFolder();
  ASSERT_TRUE(folder.ok());
  const fs::path worktree = *folder / "0123456789ab";
  ASSERT_TRUE(AddWorktree(repo, worktree, shas[0]).ok());
  WriteFile(dir / ("h.db.bisect-" + std::to_string(dead_id) + ".lock"),
            Json{{"pid", 1}, {"repo", repo.string()}, {"worktree", worktree.string()}}.dump() + "\n   ");
  const int64_t lockless_id = *store->bisect_record().BeginBisect(row);

  auto notes = RecoverDeadSessions(db, store->bisect_record());
  ASSERT_TRUE(notes.ok()) << notes.error().message;
  EXPECT_EQ(StatusOf(*store, *live_id), "running");
  EXPECT_EQ(StatusOf(*store, dead_id), "error");
  EXPECT_NE(store->bisect_record().BisectSession(dead_id)->result_json.find("\"interrupted\":true"), std::string::npos);
  EXPECT_EQ(StatusOf(*store, lockless_id), "error");
  EXPECT_FALSE(fs::exists(worktree.parent_path())) << "the worktree's folder is removed";
  EXPECT_FALSE(fs::exists(dir / ("h.db.bisect-" + std::to_string(dead_id) + ".lock")));
  EXPECT_TRUE(fs::exists(dir / ("h.db.bisect-" + std::to_string(*live_id) + ".lock")));
  const std::string all = [&] {
    std::string s;
    for (const auto& n : *notes) s += n + "\n";
    return s;
  }();
  EXPECT_NE(all.find("bisect session " + std::to_string(dead_id) + ": removed its worktree"), std::string::npos) << all;
  EXPECT_NE(all.find("bisect session " + std::to_string(lockless_id) + ": no process holds it"), std::string::npos)
      << all;
  EXPECT_NE(all.find("bisect session " + std::to_string(dead_id) + ": its process is gone; marked interrupted"),
            std::string::npos)
      << all;
  EXPECT_NE(
      store->bisect_record().BisectSession(dead_id)->result_json.find("its process (1) ended without finishing it"),
      std::string::npos)
      << store->bisect_record().BisectSession(dead_id)->result_json;

  live->reset();
  EXPECT_FALSE(fs::exists(dir / ("h.db.bisect-" + std::to_string(*live_id) + ".lock"))) << "unlinked when done";
}

// A process of its own group that runs until killed; reaped by the caller.
pid_t StartSleeper() {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

// Killed (a zombie we have not reaped) or gone, within `seconds`.
bool EndedWithin(pid_t pid, double seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// A running session of a new database, begun with a repository of `commits` commits.
struct BegunSession {
  TempDir dir;
  fs::path db = dir / "h.db";
  std::unique_ptr<Store> store = std::move(Store::Open(db)).value();
  std::vector<std::string> shas;
  fs::path repo;
  int64_t id = 0;
  explicit BegunSession(int commits)
      : shas(testing_util::MakeGitRepo(dir / "repo", commits)), repo(fs::canonical(dir / "repo")) {
    const BisectSessionRow row{.good = "a", .bad = "b", .target = "t",
                               .args_json = ToJson(BisectSessionHeader{.good = "a", .bad = "b", .repo = repo.string()})
                                                .dump()};
    id = *store->bisect_record().BeginBisect(row);
  }
};

// A session that finished (a culprit) but whose process died before it removed its lock:
// its answer stays as stored, nothing is said of it, and the lock goes.
TEST(SessionLock, AFinishedSessionsLeftLockEndsNothing) {
  BegunSession begun(1);
  auto& [dir, db, store, shas, repo, id] = begun;
  BisectSessionRow answer = *store->bisect_record().BisectSession(id);
  answer.status = "culprit";
  answer.culprit = shas[0];
  answer.confidence = 0.99;
  answer.result_json = R"({"verdict":"culprit"})";
  ASSERT_TRUE(store->bisect_record().FinishBisect(id, answer).ok());
  const fs::path lock = dir / ("h.db.bisect-" + std::to_string(id) + ".lock");
  WriteFile(lock, Json{{"pid", 1}}.dump());
  auto notes = RecoverDeadSessions(db, store->bisect_record());
  ASSERT_TRUE(notes.ok()) << notes.error().message;
  EXPECT_TRUE(notes->empty()) << notes->front();
  EXPECT_EQ(StatusOf(*store, id), "culprit") << "a finished answer is never marked interrupted";
  EXPECT_EQ(store->bisect_record().BisectSession(id)->culprit, shas[0]);
  EXPECT_EQ(store->bisect_record().BisectSession(id)->result_json, answer.result_json);
  EXPECT_FALSE(fs::exists(lock));
}

// A dead session that ran two steps side by side (--jobs 2) names two slots, each with its
// worktree and command: both are removed and killed, each after its own checks, and a third
// entry naming a worktree the harness did not make is left alone with its command.
TEST(SessionLock, EachSlotOfADeadSessionIsCheckedAndUndoneOnItsOwn) {
  BegunSession begun(2);
  auto& [dir, db, store, shas, repo, id] = begun;
  Json slots = Json::array();
  std::vector<fs::path> worktrees;
  std::vector<pid_t> commands;
  for (int slot = 0; slot < 3; ++slot) {
    fs::path worktree;
    if (slot < 2) {
      auto folder = MakeWorktreeFolder();
      ASSERT_TRUE(folder.ok());
      worktree = *folder / ShortSha(shas[slot]);
      ASSERT_TRUE(AddWorktree(repo, worktree, shas[slot]).ok());
    } else {
      worktree = dir / "precious" / "wt";  // not one the harness made
      WriteFile(worktree / "file", "x");
    }
    worktrees.push_back(worktree);
    commands.push_back(StartSleeper());
    const auto who = IdentifyProcess(commands.back());
    ASSERT_TRUE(who.has_value());
    slots.push_back({{"slot", slot}, {"repo", repo.string()}, {"worktree", worktree.string()},
                     {"command", {{"pid", who->pid}, {"start_ticks", who->start_ticks}, {"boot_id", who->boot_id}}}});
  }
  WriteFile(dir / ("h.db.bisect-" + std::to_string(id) + ".lock"), Json{{"pid", 1}, {"slots", slots}}.dump());
  auto notes = RecoverDeadSessions(db, store->bisect_record());
  ASSERT_TRUE(notes.ok()) << notes.error().message;
  std::string all;
  for (const auto& n : *notes) all += n + "\n";
  for (int slot = 0; slot < 2; ++slot) {
    EXPECT_FALSE(fs::exists(worktrees[slot].parent_path())) << slot;
    EXPECT_TRUE(EndedWithin(commands[slot], 5)) << "slot " << slot << "'s command still runs";
    EXPECT_NE(all.find("removed its worktree " + worktrees[slot].string()), std::string::npos) << all;
  }
  EXPECT_TRUE(fs::exists(worktrees[2] / "file"));
  EXPECT_FALSE(EndedWithin(commands[2], 0.5)) << "the untrusted entry's command was killed";
  EXPECT_NE(all.find("its lock is not trusted"), std::string::npos) << all;
  EXPECT_EQ(StatusOf(*store, id), "error");
  EXPECT_EQ(testing_util::WorktreeCount(repo), 1u);
  kill(commands[2], SIGKILL);
  waitpid(commands[2], nullptr, 0);
}

// A dead session's lock naming another repository than the one its session was begun with
// (a lock copied beside another database) is not trusted, though the worktree it names is
// one the harness made and that repository lists: the worktree stays and its command runs on.
TEST(SessionLock, ALockNamingAnotherRepositoryThanItsSessionIsNotTrusted) {
  BegunSession begun(1);
  auto& [dir, db, store, shas, repo, id] = begun;
  const auto other_shas = testing_util::MakeGitRepo(dir / "other", 1);
  const fs::path other = fs::canonical(dir / "other");
  auto folder = MakeWorktreeFolder();
  ASSERT_TRUE(folder.ok());
  const fs::path worktree = *folder / ShortSha(other_shas[0]);
  ASSERT_TRUE(AddWorktree(other, worktree, other_shas[0]).ok());
  const pid_t command = StartSleeper();
  const auto who = IdentifyProcess(command);
  ASSERT_TRUE(who.has_value());
  WriteFile(dir / ("h.db.bisect-" + std::to_string(id) + ".lock"),
            Json{{"pid", 1},
                 {"repo", other.string()},
                 {"worktree", worktree.string()},
                 {"command", {{"pid", who->pid}, {"start_ticks", who->start_ticks}, {"boot_id", who->boot_id}}}}
                .dump());
  auto notes = RecoverDeadSessions(db, store->bisect_record());
  std::string all;
  for (const auto& n : notes.ok() ? *notes : std::vector<std::string>{}) all += n + "\n";
  EXPECT_TRUE(notes.ok()) << notes.error().message;
  EXPECT_TRUE(fs::exists(worktree)) << all;
  EXPECT_FALSE(EndedWithin(command, 0.5)) << "the command of an untrusted lock was killed: " << all;
  EXPECT_NE(all.find(fmt::format("its lock is not trusted, so nothing it names was killed or removed (worktree '{}'): "
                                 "the session was begun with repository '{}', the lock names '{}'",
                                 worktree.string(), repo.string(), other.string())),
            std::string::npos)
      << all;
  EXPECT_EQ(StatusOf(*store, id), "error") << "the session is ended all the same";
  kill(command, SIGKILL);
  waitpid(command, nullptr, 0);
  static_cast<void>(RemoveWorktree(other, worktree));
  fs::remove_all(*folder);
}

// A hand-edited or torn lock file is read without trust: wrong types are no crash, and a
// worktree the harness did not make is left alone, with a warning.
TEST(SessionLock, AMalformedLockFileIsNoCrash) {
  TempDir dir;
  const fs::path db = dir / "h.db";
  auto store = std::move(Store::Open(db)).value();
  const fs::path keep = dir / "precious" / "wt";
  WriteFile(keep / "file", "x");
  WriteFile(keep.parent_path() / "sibling", "x");
  WriteFile(dir / "h.db.bisect-pending-1-abcdef.lock",
            Json{{"pid", "x"}, {"command", {{"pid", "y"}}}, {"worktree", keep.string()}}.dump());
  WriteFile(dir / "h.db.bisect-7.lock", "{not json");
  // The longest session id a lock's name holds is 18 digits (any fits an int64); 19 is a
  // stray file of that shape, left alone.
  WriteFile(dir / "h.db.bisect-123456789012345678.lock", "{not json");
  WriteFile(dir / "h.db.bisect-1234567890123456789.lock", "{not json");
  // Not "pending-" but a name that sorts before it, with a pending lock's shape after.
  WriteFile(dir / "h.db.bisect-pendinf-1-abcdef.lock", "{not json");
  auto notes = RecoverDeadSessions(db, store->bisect_record());
  ASSERT_TRUE(notes.ok()) << notes.error().message;
  EXPECT_TRUE(fs::exists(keep / "file")) << "a folder bisect did not make is not removed";
  EXPECT_TRUE(fs::exists(keep.parent_path() / "sibling"));
  ASSERT_EQ(notes->size(), 1u) << "the torn lock names nothing to undo";
  EXPECT_NE(notes->front().find("warning: a bisect that had not begun its session: its lock is not trusted"),
            std::string::npos)
      << notes->front();
  EXPECT_NE(notes->front().find("not under the harness's worktree root"), std::string::npos) << notes->front();
  EXPECT_FALSE(fs::exists(dir / "h.db.bisect-7.lock"));
  EXPECT_FALSE(fs::exists(dir / "h.db.bisect-123456789012345678.lock"));
  EXPECT_TRUE(fs::exists(dir / "h.db.bisect-1234567890123456789.lock"));
  EXPECT_TRUE(fs::exists(dir / "h.db.bisect-pendinf-1-abcdef.lock"));
}

// A dead session's stored status outside bisect's words (past the schema's CHECK: another
// tool, a damaged row) is an error naming it and the session, never read as "not running":
// its worktree is left alone (the lock is not trusted) and so is its lock file.
TEST(SessionLock, AStoredStatusOutsideTheWordsIsAnErrorNamingIt) {
  BegunSession begun(1);
  auto& [dir, db, store, shas, repo, id] = begun;
  auto folder = MakeWorktreeFolder();
  ASSERT_TRUE(folder.ok());
  const fs::path worktree = *folder / "0123456789ab";
  ASSERT_TRUE(AddWorktree(repo, worktree, shas[0]).ok());
  const fs::path lock = dir / ("h.db.bisect-" + std::to_string(id) + ".lock");
  WriteFile(lock, Json{{"pid", 1}, {"repo", repo.string()}, {"worktree", worktree.string()}}.dump());
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  const std::string sql = "PRAGMA ignore_check_constraints = ON; UPDATE bisect_sessions SET status = 'Running'";
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(h);
  sqlite3_close(h);

  auto notes = RecoverDeadSessions(db, store->bisect_record());
  ASSERT_FALSE(notes.ok());
  EXPECT_EQ(notes.error().code, ExitCode::kInfra);
  EXPECT_NE(notes.error().message.find("bisect session " + std::to_string(id) +
                                       ": its status 'Running' is none of culprit, no-culprit, ambiguous, running, error"),
            std::string::npos)
      << notes.error().message;
  EXPECT_TRUE(fs::exists(worktree)) << "an untrusted lock's worktree is left alone";
  EXPECT_TRUE(fs::exists(lock));
  EXPECT_EQ(StatusOf(*store, id), "Running") << "the row is not rewritten";
  static_cast<void>(RemoveWorktree(repo, worktree));
  fs::remove_all(worktree.parent_path());
}

// A lock file that cannot be written (here: a file size limit of 0, as a full disk would) is
// an error naming it, and the file it made is gone: a lock that says nothing would be taken
// for a dead session's by the next bisect. In a child, whose limits end with it.
TEST(SessionLock, ALockThatCannotBeWrittenIsAnErrorAndLeavesNoFile) {
  TempDir dir;
  const fs::path db = dir / "h.db";
  EXPECT_TRUE(testing_util::TrueInAChild([&] {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit none{0, 0};
    setrlimit(RLIMIT_FSIZE, &none);
    auto lock = SessionLock::Create(db);
    return !lock.ok() && lock.error().code == ExitCode::kInfra &&
           lock.error().message.find("cannot write") != std::string::npos;
  })) << "Create must fail naming the write";
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("h.db.bisect-pending-"), std::string::npos) << e.path();
}

// A signal caught while waiting for another bisect's registry lock (the stop signals'
// handler is installed without SA_RESTART, so flock returns EINTR) is no error: the wait goes
// on, and a stop is acted on where the bisect looks for it. Here SIGUSR1, with a handler that
// does nothing, is sent again and again to the waiting thread until the lock is let go.
TEST(SessionLock, ASignalWhileWaitingForTheRegistryLockIsNoError) {
  TempDir dir;
  const fs::path db = dir / "h.db";
  struct sigaction quiet {
  }, old{};
  quiet.sa_handler = [](int) {};
  sigemptyset(&quiet.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &quiet, &old), 0);
  const int held = open((dir / "h.db.bisect.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  std::atomic<bool> returned = false;
  std::string outcome;  // read once the waiter has ended
  std::thread waiter([&] {
    auto lock = SessionLock::Create(db);
    outcome = lock.ok() ? "locked" : lock.error().message;
    returned = true;
  });
  for (int i = 0; i < 20; ++i) {
    pthread_kill(waiter.native_handle(), SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(returned) << "it waits while the registry is held";
  close(held);  // lets go of the lock
  waiter.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(outcome, "locked");
}

}  // namespace session_lock_test
}  // namespace harness::bisect
