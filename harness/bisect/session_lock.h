// What a live bisect session holds so that the next bisect can clean up after one whose
// process is gone (kill -9, a crash, a lost machine): a file beside the database, flock(2)ed
// for the session's life (the kernel drops the lock when the process dies, however it
// dies), that names the worktrees the session has checked out and the commands running in
// them: one of each per slot, as `--jobs K` runs up to K steps at once, and the cleanup
// checks each entry on its own (`{"pid":P,"slots":[{"slot":0,"repo":..,"worktree":..,
// "command":{..}},..]}`; a lock written before slots names one at its top level).
//
//   DB.bisect-pending-PID-XXXXXX.lock  before the session has a row (XXXXXX: mkstemp's; the
//                                      command may already run at both ends to pick the cases)
//   DB.bisect-ID.lock                  session ID, from its first row on
//   DB.bisect.lock                     held for a moment while a session begins or a bisect
//                                      looks for dead ones, so neither sees the other half done
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "harness/store/bisect_record.h"
#include "harness/util/error.h"
#include "harness/util/subprocess.h"

namespace harness::bisect {

class SessionLock {
 public:
  // A pending lock beside db (an absolute path).
  static Result<std::unique_ptr<SessionLock>> Create(const std::filesystem::path& db);
  ~SessionLock();  // unlinks the file while still holding it
  SessionLock(const SessionLock&) = delete;
  SessionLock& operator=(const SessionLock&) = delete;

  // Stores the session row through begin() and renames the lock to the session's id, both
  // while DB.bisect.lock is held.
  Result<int64_t> Begin(BisectRecord& store, const BisectSessionRow& row);
  // What to undo if this process dies, per slot (the steps running side by side): the
  // worktree of repo (empty: none) and the command started in it (its process group's
  // leader). Setting the worktree forgets the slot's command. Safe from several threads.
  Status SetWorktree(int slot, const std::filesystem::path& repo, const std::filesystem::path& worktree);
  Status SetCommand(int slot, const std::optional<ProcessIdentity>& leader);

 private:
  struct Slot {
    std::filesystem::path repo, worktree;
    std::optional<ProcessIdentity> command;
  };
  SessionLock(int fd, std::filesystem::path db, std::filesystem::path path)
      : fd_(fd), db_(std::move(db)), path_(std::move(path)) {}
  Status Write();
  int fd_;
  std::filesystem::path db_, path_;
  std::mutex mutex_;  // the slots and the file, written by each step's thread
  std::map<int, Slot> slots_;
  std::size_t written_ = 0;
};

// A new temporary folder for one worktree, /tmp/harness-bisect-XXXXXX: the only kind of
// folder the cleanup of a dead session removes whole.
Result<std::filesystem::path> MakeWorktreeFolder();

// Finds the bisect sessions of db whose process is gone: kills the command such a session
// left running (only when its leader is provably the same process), removes its worktree
// (and its registration in the repository), and marks the session interrupted (status
// error). A session marked running without any lock (written by a harness before locks,
// or copied by `harness merge`) is marked too. Returns one line per thing it did.
Result<std::vector<std::string>> RecoverDeadSessions(const std::filesystem::path& db, BisectRecord& store);

}  // namespace harness::bisect
