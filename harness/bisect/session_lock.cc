#include "harness/bisect/session_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "harness/bisect/worktree_command.h"
#include "harness/store/bisect_evidence.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness::bisect {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWorktreeFolderPrefix = "harness-bisect-";

fs::path Beside(const fs::path& db, const std::string& suffix) {
  fs::path p = db;
  p += suffix;
  return p;
}

int FlockRetrying(int fd, int op) {
  int rc;
  while ((rc = flock(fd, op)) != 0 && errno == EINTR) {}
  return rc;
}

// DB.bisect.lock, held for a moment. It is unlinked on release, so a holder checks that the
// file it locked is still the one at the path (else a process that opened it before the
// unlink and one that made a new file could both hold "the" lock).
class RegistryLock {
 public:
  static Result<RegistryLock> Take(const fs::path& db) {
    const fs::path path = Beside(db, ".bisect.lock");
    for (;;) {
      int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) return InfraError(fmt::format("{}: cannot create: {}", path.string(), std::strerror(errno)));
      if (FlockRetrying(fd, LOCK_EX) != 0) {
        const int e = errno;
        close(fd);
        return InfraError(fmt::format("{}: cannot lock: {}", path.string(), std::strerror(e)));
      }
      struct stat held {}, now {};
      if (fstat(fd, &held) == 0 && stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
          held.st_dev == now.st_dev)
        return RegistryLock(fd, path);
      close(fd);  // unlinked (and perhaps remade) while we waited: lock the file that is there now
    }
  }
  RegistryLock(RegistryLock&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  RegistryLock& operator=(RegistryLock&&) = delete;
  ~RegistryLock() {
    if (fd_ < 0) return;
    unlink(path_.c_str());
    close(fd_);
  }

 private:
  RegistryLock(int fd, fs::path path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  fs::path path_;
};

// Which session a lock beside the database is for, from the KEY of its name DB.bisect-KEY.lock:
// the session id (as Begin names it), 0 for a bisect whose session had not begun
// ("pending-PID-XXXXXX", as Create names it, mkostemps's six letters and digits), or none
// for any other name: a stray file of that shape is not a lock.
std::optional<int64_t> SessionOfLock(std::string_view key) {
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (digits(key) && key.front() != '0' && key.size() < 19) return std::stoll(std::string(key));
  constexpr std::string_view kPending = "pending-";
  if (key.substr(0, kPending.size()) != kPending) return std::nullopt;
  key.remove_prefix(kPending.size());
  const std::size_t dash = key.find('-');
  if (dash == std::string_view::npos || !digits(key.substr(0, dash))) return std::nullopt;
  const std::string_view letters = key.substr(dash + 1);
  const bool made = letters.size() == 6 && std::all_of(letters.begin(), letters.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) != 0;
                    });
  return made ? std::optional<int64_t>(0) : std::nullopt;
}

std::string ReadAll(int fd) {
  std::string text;
  char buf[4096];
  off_t at = 0;
  for (ssize_t n; (n = pread(fd, buf, sizeof buf, at)) > 0; at += n) text.append(buf, static_cast<std::size_t>(n));
  return text;
}

// Fields of a lock file, read without trusting it (a hand-edited or torn file is no crash).
std::string StringField(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}
int64_t IntField(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

// Why the worktree a dead session's lock names is not one this code made, or empty when it
// is: the lock is a file anyone can write or copy, so it is trusted only as far as it is
// checked. Ours is `wt` in a folder MakeWorktreeFolder made, /tmp/harness-bisect-XXXXXX,
// reached with no symbolic link on the way (lstat of each part, and the real path), a
// directory of this user, and registered in the repository's `git worktree list`.
std::string WhyNotOurs(const fs::path& repo, const fs::path& worktree) {
  const fs::path root = "/tmp";
  const fs::path folder = worktree.parent_path();
  const std::string name = folder.filename().string();
  if (!worktree.is_absolute() || worktree.lexically_normal() != worktree || folder.parent_path() != root ||
      name.size() != std::strlen(kWorktreeFolderPrefix) + 6 || name.rfind(kWorktreeFolderPrefix, 0) != 0)
    return fmt::format("not under the harness's worktree root {}/{}XXXXXX", root.string(), kWorktreeFolderPrefix);
  struct stat st {};
  if (lstat(folder.c_str(), &st) != 0) return "its folder is gone";
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return "its folder is not a directory of this user (a symbolic link?)";
  std::error_code ec;
  if (repo.empty()) {  // no worktree: the folder held only the {questions} file
    if (worktree.filename() != kQuestionsFileName) return "the lock names no repository";
    return fs::canonical(folder, ec) != folder || ec ? "its real path is elsewhere" : "";
  }
  if (lstat(worktree.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "it is not a directory (a symbolic link?)";
  if (fs::canonical(worktree, ec) != worktree || ec) return "its real path is elsewhere";
  if (!repo.is_absolute()) return "the lock's repository is not an absolute path";
  auto listed = ListWorktrees(repo);
  if (!listed) return fmt::format("the repository {} does not list it (git: {})", repo.string(), listed.error().message);
  for (const auto& w : *listed)
    if (fs::path(w).lexically_normal() == worktree) return "";
  return fmt::format("the repository {} has no such worktree registered", repo.string());
}

// Why a dead session's lock does not match the session it names, or empty when it does: an
// id lock's session must be a running one of this database, begun with the repository the
// lock names (a lock copied with another database names another session or repository).
// A pending lock (no row yet) names no session: the worktree checks alone decide.
std::string WhyNotTheSession(BisectRecord& store, int64_t id, const fs::path& repo) {
  if (!id) return "";
  auto row = store.BisectSession(id);
  if (!row) return "this database has no such session";
  if (row->status != "running") return fmt::format("the session is {}, not running", row->status);
  auto header = BisectSessionHeaderFromJson(ParseJsonOrDiscarded(row->args_json), fmt::format("bisect session {}", id));
  if (!header) return "its stored header does not read";
  if (fs::path(header->repo) != repo)
    return fmt::format("the session was begun with repository '{}', the lock names '{}'", header->repo, repo.string());
  return "";
}

// Ends what a dead session left, when its lock matches the session and the worktree is one
// this code made: the command (when its leader is still the process that was recorded) and
// the worktree with its temporary folder. Anything else is left alone, with a warning. Lines
// saying what was done.
std::vector<std::string> UndoSlot(BisectRecord& store, int64_t id, const Json& left, const std::string& who) {
  std::vector<std::string> notes;
  const fs::path repo = StringField(left, "repo"), worktree = StringField(left, "worktree");
  const bool command = left.contains("command") && left["command"].is_object();
  if (worktree.empty() && !command) return notes;  // it names nothing to undo
  std::string why_not = WhyNotTheSession(store, id, repo);
  if (why_not.empty() && !worktree.empty()) why_not = WhyNotOurs(repo, worktree);
  if (!why_not.empty()) {
    notes.push_back(fmt::format("warning: {}: its lock is not trusted, so nothing it names was killed or removed "
                                "(worktree '{}'): {}",
                                who, worktree.string(), why_not));
    return notes;
  }
  if (command) {
    const Json& c = left["command"];
    ProcessIdentity leader{IntField(c, "pid"), IntField(c, "start_ticks"), StringField(c, "boot_id")};
    if (leader.pid > 0 && KillProcessGroupOf(leader))
      notes.push_back(fmt::format("{}: killed the command it left running (process group {})", who, leader.pid));
  }
  if (!worktree.empty()) {
    if (!repo.empty()) static_cast<void>(RemoveWorktree(repo, worktree));  // also prunes
    std::error_code ec;
    fs::remove_all(worktree.parent_path(), ec);  // the folder MakeWorktreeFolder made (checked above)
    notes.push_back(fmt::format("{}: removed its worktree {}", who, worktree.string()));
  }
  return notes;
}

// Each slot a dead session's lock names, undone on its own (UndoSlot): one entry's failed
// check leaves the others' to their own. A lock written before slots names one at its top level.
std::vector<std::string> Undo(BisectRecord& store, int64_t id, const Json& left, const std::string& who) {
  if (!left.contains("slots")) return UndoSlot(store, id, left, who);
  std::vector<std::string> notes;
  if (!left["slots"].is_array()) return notes;
  for (const Json& slot : left["slots"]) {
    if (!slot.is_object()) continue;
    for (auto& n : UndoSlot(store, id, slot, who)) notes.push_back(std::move(n));
  }
  return notes;
}

Status MarkInterrupted(BisectRecord& store, int64_t id, const std::string& why) {
  auto row = store.BisectSession(id);
  if (!row) return row.error();
  if (row->status != "running") return OkStatus();
  row->status = "error";
  row->result_json = Json{{"error", "interrupted: " + why}, {"interrupted", true}}.dump();
  return store.FinishBisect(id, *row);
}

}  // namespace

Result<fs::path> MakeWorktreeFolder() {
  std::string tmpl = (fs::path("/tmp") / (std::string(kWorktreeFolderPrefix) + "XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    return InfraError(fmt::format("cannot make a folder for the worktree: {}", std::strerror(errno)));
  return fs::path(tmpl);
}

Result<std::unique_ptr<SessionLock>> SessionLock::Create(const fs::path& db) {
  // Under the registry lock: a bisect looking for dead sessions must not find the file
  // between its creation and its flock, take it for a dead one and unlink it.
  auto registry = RegistryLock::Take(db);
  if (!registry) return registry.error();
  std::string tmpl = Beside(db, fmt::format(".bisect-pending-{}-XXXXXX.lock", getpid())).string();
  int fd = mkostemps(tmpl.data(), 5, O_CLOEXEC);
  if (fd < 0) return InfraError(fmt::format("{}: cannot create the bisect lock: {}", tmpl, std::strerror(errno)));
  if (FlockRetrying(fd, LOCK_EX | LOCK_NB) != 0) {  // nobody else knows the name yet
    const int e = errno;
    unlink(tmpl.c_str());
    close(fd);
    return InfraError(fmt::format("{}: cannot lock: {}", tmpl, std::strerror(e)));
  }
  auto lock = std::unique_ptr<SessionLock>(new SessionLock(fd, db, tmpl));
  if (auto s = lock->Write(); !s) return s.error();
  return lock;
}

SessionLock::~SessionLock() {
  // Unlinked while still held: a bisect looking for dead sessions that opened it just
  // before finds it locked, or finds the session finished.
  unlink(path_.c_str());
  close(fd_);
}

Result<int64_t> SessionLock::Begin(BisectRecord& store, const BisectSessionRow& row) {
  auto registry = RegistryLock::Take(db_);
  if (!registry) return registry.error();
  auto id = store.BeginBisect(row);
  if (!id) return id.error();
  const fs::path named = Beside(db_, fmt::format(".bisect-{}.lock", *id));
  std::error_code ec;
  fs::rename(path_, named, ec);
  if (ec) {
    // The row exists but no lock names it: end it as an error now, so nothing reads it as a
    // session still running (the next bisect would otherwise mark it interrupted).
    Error e = InfraError(fmt::format("{}: cannot rename the bisect lock: {}", named.string(), ec.message()));
    BisectSessionRow failed = row;
    failed.status = "error";
    failed.result_json = Json{{"error", e.message}}.dump();
    static_cast<void>(store.FinishBisect(*id, failed));  // the rename's error is the one to report
    return e;
  }
  path_ = named;
  return *id;
}

Status SessionLock::SetWorktree(int slot, const fs::path& repo, const fs::path& worktree) {
  std::lock_guard<std::mutex> hold(mutex_);
  if (worktree.empty()) slots_.erase(slot);
  else slots_[slot] = Slot{repo, worktree, std::nullopt};
  return Write();
}

Status SessionLock::SetCommand(int slot, const std::optional<ProcessIdentity>& leader) {
  std::lock_guard<std::mutex> hold(mutex_);
  slots_[slot].command = leader;
  return Write();
}

Status SessionLock::Write() {
  Json slots = Json::array();
  for (const auto& [number, s] : slots_) {
    Json j{{"slot", number}, {"repo", s.repo.string()}, {"worktree", s.worktree.string()}};
    if (s.command)
      j["command"] = {{"pid", s.command->pid}, {"start_ticks", s.command->start_ticks}, {"boot_id", s.command->boot_id}};
    slots.push_back(std::move(j));
  }
  Json j{{"pid", getpid()}, {"slots", std::move(slots)}};
  // Padded over what was there instead of truncated first: a process killed between the
  // two writes would leave a file that says nothing.
  std::string text = j.dump() + "\n";
  const std::size_t length = text.size();
  if (text.size() < written_) text.append(written_ - text.size(), ' ');
  if (pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return InfraError(fmt::format("{}: cannot write: {}", path_.string(), std::strerror(errno)));
  written_ = std::max(written_, length);
  return OkStatus();
}

Result<std::vector<std::string>> RecoverDeadSessions(const fs::path& db, BisectRecord& store) {
  auto registry = RegistryLock::Take(db);
  if (!registry) return registry.error();
  std::vector<std::string> notes;
  std::set<int64_t> alive;
  const std::string prefix = db.filename().string() + ".bisect-";
  std::vector<fs::path> files;  // listed first: the loop unlinks some
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(db.parent_path(), ec)) files.push_back(entry.path());
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    if (name.size() <= prefix.size() + 5 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 5, 5, ".lock") != 0)
      continue;
    const std::optional<int64_t> session = SessionOfLock(name.substr(prefix.size(), name.size() - prefix.size() - 5));
    if (!session) continue;  // not a name this file makes: never read, never removed
    const int64_t id = *session;
    int fd = open(file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    if (FlockRetrying(fd, LOCK_EX | LOCK_NB) != 0) {  // its process is alive
      if (id) alive.insert(id);
      close(fd);
      continue;
    }
    Json left = ParseJsonOrDiscarded(ReadAll(fd));
    if (!left.is_object()) left = Json::object();
    const std::string who = id ? fmt::format("bisect session {}", id) : "a bisect that had not begun its session";
    for (auto& n : Undo(store, id, left, who)) notes.push_back(std::move(n));
    if (id) {
      auto row = store.BisectSession(id);
      if (row && row->status == "running") {
        if (auto s = MarkInterrupted(store, id, fmt::format("its process ({}) ended without finishing it",
                                                            IntField(left, "pid")));
            !s)
          return s.error();
        notes.push_back(fmt::format("{}: its process is gone; marked interrupted", who));
      }
    }
    unlink(file.c_str());
    close(fd);
  }
  auto running = store.RunningBisectSessionIds();
  if (!running) return running.error();
  for (int64_t id : *running) {
    if (alive.count(id)) continue;
    if (auto s = MarkInterrupted(store, id, "no process holds it (begun before session locks, or copied by merge)");
        !s)
      return s.error();
    notes.push_back(fmt::format("bisect session {}: no process holds it; marked interrupted", id));
  }
  return notes;
}

}  // namespace harness::bisect
